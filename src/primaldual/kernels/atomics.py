"""Atomic floating-point addition for kernels that several threads run at once.

``atomic_add(a, i, x)`` adds ``x`` to ``a[i]`` as one indivisible
read-modify-write (LLVM's ``atomicrmw fadd``; on x86 a ``lock cmpxchg`` loop),
so concurrent additions to the same entry are never lost.  Relaxed
("monotonic") ordering: each addition is atomic, nothing more is ordered, which
is all a sum of updates needs.  Numba has atomics for CUDA only; this is the
CPU counterpart, for a C-contiguous float64 array.
"""
from __future__ import annotations

from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

__all__ = ["atomic_add"]


@intrinsic
def atomic_add(typingctx, arr, index, value):
    """``arr[index] += value`` atomically; returns nothing.  No bounds check."""
    if not (isinstance(arr, types.Array) and arr.dtype == types.float64
            and arr.ndim == 1 and isinstance(index, types.Integer)):
        return None
    sig = types.void(arr, index, types.float64)

    def codegen(context, builder, signature, args):
        aryty, idxty, valty = signature.args
        ary, idx, val = args
        val = context.cast(builder, val, valty, types.float64)
        array = context.make_array(aryty)(context, builder, ary)
        idx = context.cast(builder, idx, idxty, types.intp)
        ptr = cgutils.get_item_pointer(context, builder, aryty, array, [idx],
                                       wraparound=False)
        builder.atomic_rmw("fadd", ptr, val, "monotonic")
        return context.get_dummy_value()

    return sig, codegen
