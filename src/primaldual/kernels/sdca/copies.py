"""SDCA's thread copies of the dual image: :class:`ThreadCopy` and its sync.

A thread of a threaded SDCA pass steps on its own copy of ``v`` and, every
``copy.every`` updates, publishes the columns it changed and takes the other
threads' (:func:`sync_copy`; a sequential sweep over all ``d`` columns when
they number more than ``d / DENSE_REFRESH``, :func:`_sweep`).  The cost is
proportional to the columns changed, not to ``d``.  docs/solvers.md
("Threads") describes the method.
"""
from __future__ import annotations

from typing import NamedTuple

from numba import njit

from ..atomics import atomic_add
from ..prefetch import prefetch
from ..threadsync import atomic_load, atomic_store


class ThreadCopy(NamedTuple):
    """One thread's side of a step run that shares the dual image with other
    threads (:func:`sdca_epoch` with ``copy``): the thread steps on its own
    copy of the image (the kernel's ``v``) and every ``every`` updates
    :func:`sync_copy` publishes its changes and takes the others', for the
    columns that changed only.

    The image of the run is ``shared + sum_t parts[t]``: ``shared`` (d) is
    read only while the threads run, and ``parts`` (k x d) holds each
    thread's published changes, row ``t`` written by thread ``t`` alone (no
    atomic instruction, no lost update); the driver folds ``parts`` into
    ``shared`` when the threads are done.

    * ``base`` (d): the image's values the copy last took; the thread's own
      unpublished change of column j is ``v[j] - base[j]``.
    * ``mark`` (uint8, d) and ``touched`` (int64, d + 1): the columns the thread
      changed since its last sync.
    * ``logs`` (int64, k x L): row ``t`` is thread ``t``'s change log, a ring
      of the columns it published, so another thread refreshes those only.
    * ``clock`` (int64): at slot ``t * CLOCK_STRIDE`` thread ``t``'s updates
      published so far, at the next slot the entries written to its log (both
      stored with release ordering after what they count).
    * ``seen`` (int64, k): how far this thread has read each log;
      ``counts = [n_touched, updates since the last sync, updates published
      in all, the others' published updates at the last refresh]``.

    With ``sparse`` False the steps list nothing and every sync is one
    sequential sweep over the ``d`` columns (publish and refresh), for data
    where a sync period touches most columns anyway; the sweep advances the
    thread's log head by ``L`` so that a reader refreshes every column.

    Staleness is bounded by work: before each step the thread compares the
    others' published updates with ``counts[3]`` and syncs first when they
    did more than ``limit`` since its last refresh (a thread descheduled for a
    while comes back to this).  A log the thread fell more than ``L -
    max_flush`` entries behind on (its writer may have overwritten it) is
    replaced by a refresh of every column."""
    shared: object
    parts: object
    base: object
    mark: object
    touched: object
    logs: object
    clock: object
    seen: object
    counts: object
    tid: int
    every: int
    limit: int
    max_flush: int
    sparse: bool


#: int64 slots between two threads' entries of ThreadCopy.clock (a cache line)
CLOCK_STRIDE = 8
#: sync_copy refreshes every column (a sequential sweep) instead of the listed
#: ones when they number more than d / DENSE_REFRESH
DENSE_REFRESH = 8
#: sync_copy prefetches the columns this many list entries ahead
PF_SYNC = 8


@njit(cache=True, nogil=True)
def others_synced(copy):
    """Updates the other threads of the run have published."""
    total = 0
    for o in range(copy.parts.shape[0]):
        if o != copy.tid:
            total += atomic_load(copy.clock, o * CLOCK_STRIDE)
    return total


@njit(cache=True, nogil=True)
def _take(v, copy, j):
    """``v[j] = base[j] =`` the run's image at column j."""
    parts = copy.parts
    s = copy.shared[j]
    for o in range(parts.shape[0]):
        s += parts[o, j]
    v[j] = s
    copy.base[j] = s


@njit(cache=True, nogil=True)
def sync_copy(v, copy):
    """Publish the thread's changes and take the others': ``parts[tid, j] +=
    v[j] - base[j]`` for the columns it touched, logged for the others; then
    ``v[j] = base[j] = shared[j] + sum_t parts[t, j]`` for those and for the
    columns in the others' logs since the last sync (every column, in one
    sequential sweep, when those number more than ``d / DENSE_REFRESH`` or a
    log was read too late).  The cost is proportional to the columns changed,
    not to ``d``."""
    parts, base, mark, touched, counts = (copy.parts, copy.base, copy.mark,
                                          copy.touched, copy.counts)
    logs, clock, seen, tid = copy.logs, copy.clock, copy.seen, copy.tid
    K = parts.shape[0]
    L = logs.shape[1]
    nt = counts[0]
    head = atomic_load(clock, tid * CLOCK_STRIDE + 1)
    if not copy.sparse or nt * DENSE_REFRESH > v.shape[0]:
        _sweep(v, copy)
        return
    for q in range(nt):
        if q + PF_SYNC < nt:
            prefetch(base, touched[q + PF_SYNC])
        j = touched[q]
        c = v[j] - base[j]
        if c != 0.0:
            parts[tid, j] += c
        mark[j] = 0
        logs[tid, (head + q) % L] = j
    atomic_store(clock, tid * CLOCK_STRIDE + 1, head + nt)
    counts[2] += counts[1]
    counts[1] = 0
    atomic_store(clock, tid * CLOCK_STRIDE, counts[2])
    counts[0] = 0
    counts[3] = others_synced(copy)
    pending = nt
    full = False
    for o in range(K):
        if o != tid:
            h = atomic_load(clock, o * CLOCK_STRIDE + 1)
            pending += h - seen[o]
            if h + copy.max_flush - seen[o] > L:
                full = True
    if full or pending * DENSE_REFRESH > v.shape[0]:
        for o in range(K):
            if o != tid:
                seen[o] = atomic_load(clock, o * CLOCK_STRIDE + 1)
        _take_all(v, copy)
        return
    for q in range(nt):
        _take(v, copy, touched[q])
    for o in range(K):
        if o == tid:
            continue
        h = atomic_load(clock, o * CLOCK_STRIDE + 1)
        start = seen[o]
        seen[o] = h
        for p in range(start, h):
            if p + PF_SYNC < h:
                jj = logs[o, (p + PF_SYNC) % L]
                for t in range(K):
                    prefetch(parts[t], jj)
            _take(v, copy, logs[o, p % L])
        if atomic_load(clock, o * CLOCK_STRIDE + 1) + copy.max_flush - start > L:
            full = True              # the writer may have overwritten what we read
    if full:
        _take_all(v, copy)


@njit(cache=True, nogil=True)
def _sweep(v, copy):
    """A sync in one sequential pass over all ``d`` columns: publish ``v[j] -
    base[j]`` and take the image; the log head jumps by ``L`` (a reader then
    refreshes every column), the list of touched columns is cleared."""
    shared, parts, base, mark, touched, counts = (copy.shared, copy.parts, copy.base,
                                                  copy.mark, copy.touched, copy.counts)
    clock, seen, tid = copy.clock, copy.seen, copy.tid
    K = parts.shape[0]
    for o in range(K):
        if o != tid:
            seen[o] = atomic_load(clock, o * CLOCK_STRIDE + 1)
    counts[3] = others_synced(copy)
    for j in range(v.shape[0]):
        c = v[j] - base[j]
        if c != 0.0:
            parts[tid, j] += c
        s = shared[j]
        for o in range(K):
            s += parts[o, j]
        v[j] = s
        base[j] = s
    for q in range(counts[0]):
        mark[touched[q]] = 0
    counts[0] = 0
    head = atomic_load(clock, tid * CLOCK_STRIDE + 1)
    atomic_store(clock, tid * CLOCK_STRIDE + 1, head + copy.logs.shape[1])
    counts[2] += counts[1]
    counts[1] = 0
    atomic_store(clock, tid * CLOCK_STRIDE, counts[2])


@njit(cache=True, nogil=True)
def _take_all(v, copy):
    """``v = base =`` the run's image, every column."""
    shared, parts, base = copy.shared, copy.parts, copy.base
    for j in range(v.shape[0]):
        s = shared[j]
        for o in range(parts.shape[0]):
            s += parts[o, j]
        v[j] = s
        base[j] = s


@njit(cache=True, nogil=True)
def start_copy(v, copy):
    """Make ``v`` (and ``base``) a fresh copy of the run's image, with the
    logs read up to now and nothing touched."""
    clock, seen = copy.clock, copy.seen
    for o in range(copy.parts.shape[0]):
        seen[o] = atomic_load(clock, o * CLOCK_STRIDE + 1)
    copy.counts[3] = others_synced(copy)
    for q in range(copy.counts[0]):
        copy.mark[copy.touched[q]] = 0
    copy.counts[0] = 0
    copy.counts[1] = 0
    _take_all(v, copy)


@njit(cache=True, nogil=True)
def sync_hot(v, hot, off, base):
    """Hot-column copies (:class:`primaldual.blocks.sdca_threads.ThreadWork`
    with ``hot``): ``v`` holds the image in ``v[:d]`` and this thread's copy of
    the hot columns at ``v[off:off + len(hot)]`` (``base``: their values at its
    last sync).  Adds the thread's change ``v[off + s] - base[s]`` to
    ``v[hot[s]]`` atomically and takes the column back:
    ``v[off + s] = base[s] = v[hot[s]]``."""
    for s in range(hot.shape[0]):
        j = hot[s]
        c = v[off + s] - base[s]
        if c != 0.0:
            atomic_add(v, j, c)
        x = v[j]
        v[off + s] = x
        base[s] = x


@njit(cache=True, nogil=True)
def renumber(indices, remap, out):
    """``out[k] = remap[indices[k]]`` (a thread's hot columns renumbered to its
    own copy; run on that thread)."""
    for k in range(indices.shape[0]):
        out[k] = remap[indices[k]]
