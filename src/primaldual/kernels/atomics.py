"""Atomic floating-point addition for kernels that several threads run at once.

``atomic_add(a, i, x)`` adds ``x`` to ``a[i]`` as one indivisible
read-modify-write (LLVM's ``atomicrmw fadd``; on x86 a ``lock cmpxchg`` loop),
so concurrent additions to the same entry are never lost.  Relaxed
("monotonic") ordering: each addition is atomic, nothing more is ordered, which
is all a sum of updates needs.  Numba has atomics for CUDA only; this is the
CPU counterpart, for a C-contiguous float64 array.
"""
from __future__ import annotations

import numpy as np
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic, overload

__all__ = ["add_entry", "any_atomic", "atomic_add"]


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


def add_entry(a, i, x, atomic):
    """``a[i] += x``: atomically where ``atomic`` says so, plainly elsewhere.
    ``atomic`` is a bool (every entry alike) or a uint8 mask over ``a``'s
    entries (1: atomic), so that a kernel takes atomic additions on the few
    entries that threads often write at once and plain ones on the rest.
    Called from Python (one thread), it adds plainly; compiled, it is the
    overload below."""
    a[i] += x


@overload(add_entry, inline="always")
def _add_entry(a, i, x, atomic):
    if isinstance(atomic, types.Boolean):
        def impl(a, i, x, atomic):
            if atomic:
                atomic_add(a, i, x)
            else:
                a[i] += x
        return impl
    if isinstance(atomic, types.Array):
        def impl(a, i, x, atomic):
            if atomic[i]:
                atomic_add(a, i, x)
            else:
                a[i] += x
        return impl
    return None


def any_atomic(atomic):
    """True where :func:`add_entry` may add atomically: a True bool, or a
    non-empty mask."""
    return bool(atomic) if isinstance(atomic, (bool, np.bool_)) else atomic.shape[0] > 0


@overload(any_atomic, inline="always")
def _any_atomic(atomic):
    if isinstance(atomic, types.Boolean):
        return lambda atomic: atomic
    if isinstance(atomic, types.Array):
        return lambda atomic: atomic.shape[0] > 0
    return None
