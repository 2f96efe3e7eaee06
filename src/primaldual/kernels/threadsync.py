"""Spin barriers for kernels that run on several OS threads at once.

The driver starts one Python thread per worker, each calls the same
``nogil`` kernel with its own thread id, and the threads meet at
:func:`barrier` twice per iteration: a ``prange`` region per mini-batch of a
few hundred rows (~100 us of work) would pay the thread pool's fork/join
every iteration (docs/reproducing-minibatch.md).

Numba has no atomics, so two LLVM intrinsics are provided here:
``atomic_load`` (acquire) and ``atomic_store`` (release) on an int64 array
element; the spin loop re-reads memory on every turn (a plain load could be
hoisted out of the loop) and the acquire/release pair orders the data
written before a barrier before the data read after it.

Barrier protocol.  ``flags`` holds one monotonically increasing counter per
thread, each on its own cache line (``flags[tid * STRIDE]``).  To pass
barrier number ``k`` a thread publishes ``k`` in its own slot, then waits until
every other slot is ``>= k``.  Counters only grow, so no reset or sense
reversal is needed.  A waiting thread spins ``SPINS`` turns and then calls
``sched_yield`` on every turn, so a descheduled partner on a busy machine gets
the core back instead of being starved by the spinner.

An abort slot (``flags[nthreads * STRIDE]``) lets the driver (or a thread that
failed) stop the others: :func:`barrier` returns False when it is set.
"""
from __future__ import annotations

from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic

#: int64 slots between two threads' counters (64-byte cache lines)
STRIDE = 8
#: busy turns before a waiting thread starts yielding its core
SPINS = 2000


def _elem_ptr(context, builder, aryty, ary_val, idx):
    ary = context.make_array(aryty)(context, builder, ary_val)
    return cgutils.get_item_pointer(context, builder, aryty, ary, [idx],
                                    wraparound=False, boundscheck=False)


@intrinsic
def atomic_load(typingctx, arr, idx):
    """``arr[idx]`` read with acquire ordering (int64 arrays)."""
    if not (isinstance(arr, types.Array) and arr.dtype == types.int64
            and isinstance(idx, types.Integer)):
        return None
    sig = types.int64(arr, idx)

    def codegen(context, builder, signature, args):
        ptr = _elem_ptr(context, builder, signature.args[0], args[0], args[1])
        return builder.load_atomic(ptr, ordering="acquire", align=8)

    return sig, codegen


@intrinsic
def atomic_store(typingctx, arr, idx, val):
    """``arr[idx] = val`` with release ordering (int64 arrays)."""
    if not (isinstance(arr, types.Array) and arr.dtype == types.int64
            and isinstance(idx, types.Integer) and isinstance(val, types.Integer)):
        return None
    sig = types.void(arr, idx, val)

    def codegen(context, builder, signature, args):
        ptr = _elem_ptr(context, builder, signature.args[0], args[0], args[1])
        v = context.cast(builder, args[2], signature.args[2], types.int64)
        builder.store_atomic(v, ptr, ordering="release", align=8)
        return context.get_dummy_value()

    return sig, codegen


@intrinsic
def sched_yield(typingctx):
    """Give the core away (POSIX ``sched_yield``); returns its int result."""
    sig = types.int32()

    def codegen(context, builder, signature, args):
        fnty = ir.FunctionType(ir.IntType(32), [])
        fn = cgutils.get_or_insert_function(builder.module, fnty, "sched_yield")
        return builder.call(fn, [])

    return sig, codegen


@njit(cache=True, nogil=True)
def barrier(flags, tid, nthreads, k):
    """Pass barrier number ``k`` (1, 2, 3, ... in every thread's own order).

    Returns True once all ``nthreads`` threads have reached barrier ``k``,
    False if the abort slot was set while waiting (or before).
    """
    atomic_store(flags, tid * STRIDE, k)
    abort_slot = nthreads * STRIDE
    for o in range(nthreads):
        if o == tid:
            continue
        turns = 0
        while atomic_load(flags, o * STRIDE) < k:
            if atomic_load(flags, abort_slot) != 0:
                return False
            turns += 1
            if turns > SPINS:
                sched_yield()
    return atomic_load(flags, abort_slot) == 0


@njit(cache=True, nogil=True)
def signal_abort(flags, nthreads):
    """Set the abort slot: every thread waiting in :func:`barrier` returns False."""
    atomic_store(flags, nthreads * STRIDE, 1)


def make_flags(nthreads):
    """A zeroed flag array for ``nthreads`` threads plus the abort slot."""
    import numpy as np
    return np.zeros((nthreads + 1) * STRIDE, dtype=np.int64)
