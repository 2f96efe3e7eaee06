"""Software prefetch for the epoch kernels.

Row-sampling methods visit rows in random order, so the hardware prefetcher
cannot guess where the next row starts and every row begins with a cache miss.
The kernels know the next row (``order[pos + 1]``): :func:`prefetch` asks the
CPU to start loading it (LLVM's ``llvm.prefetch``, a hint with no effect on
results) while the current row is processed.
"""
from __future__ import annotations

from llvmlite import ir
from numba.core import cgutils, types
from numba import njit
from numba.extending import intrinsic


def _prefetch_codegen(rw):
    """The typing and code of ``llvm.prefetch`` of ``arr[idx]``: ``rw`` 0 to
    read, 1 to write (the line fetched for ownership); locality 3 (keep in all
    caches), data cache."""
    def typer(typingctx, arr, idx):
        if not isinstance(arr, types.Array) or not isinstance(idx, types.Integer):
            return None

        def codegen(context, builder, signature, args):
            aryty, _ = signature.args
            ary = context.make_array(aryty)(context, builder, args[0])
            ptr = cgutils.get_item_pointer(context, builder, aryty, ary, [args[1]],
                                           wraparound=False, boundscheck=False)
            i8p = ir.IntType(8).as_pointer()
            i32 = ir.IntType(32)
            fnty = ir.FunctionType(ir.VoidType(), [i8p, i32, i32, i32])
            fn = cgutils.get_or_insert_function(builder.module, fnty, "llvm.prefetch.p0")
            builder.call(fn, [builder.bitcast(ptr, i8p), i32(rw), i32(3), i32(1)])
            return context.get_dummy_value()

        return types.void(arr, idx), codegen
    return typer


@intrinsic
def prefetch(typingctx, arr, idx):
    """Hint that ``arr[idx]`` will be read soon (no-op semantically)."""
    return _prefetch_codegen(0)(typingctx, arr, idx)


@intrinsic
def prefetch_write(typingctx, arr, idx):
    """Hint that ``arr[idx]`` will be written soon: the line is fetched for
    ownership (no-op semantically)."""
    return _prefetch_codegen(1)(typingctx, arr, idx)


@njit(cache=True, nogil=True, inline="always")
def prefetch_columns(v, indices, indptr, iptr, i):
    """Prefetch, for writing, the entries of ``v`` in row ``i``'s columns
    (its column indices should be in cache already)."""
    rs = indptr[i]
    off = iptr[i] - rs
    for k in range(rs + off, indptr[i + 1] + off):
        prefetch_write(v, indices[k])


@njit(cache=True, nogil=True, inline="always")
def prefetch_row(data, indices, indptr, iptr, i):
    """Prefetch every cache line of row ``i``'s values and column indices."""
    rs = indptr[i]
    re = indptr[i + 1]
    off = iptr[i] - rs
    step_d = max(1, 64 // data.itemsize)
    step_i = max(1, 64 // indices.itemsize)
    for k in range(rs, re, step_d):
        prefetch(data, k)
    for k in range(rs + off, re + off, step_i):
        prefetch(indices, k)
