"""The staleness guard of threaded SDCA with copies of ``v``: a shorter sync
period when the certified gap stops falling, named in ``threads_reason``, the
thread work rebuilt for it, and kept across a checkpoint."""
from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pytest

from primaldual.blocks import sdca_staleness as S
from primaldual.blocks.sdca_threads import ThreadWork


def _solver(sync_every, n_threads=2):
    rows = SimpleNamespace(row_nnz=np.array([3, 5, 2]))
    prob = SimpleNamespace(d=10, rows=rows)
    return SimpleNamespace(n_threads=n_threads, sync_every=sync_every, atomic=False,
                           sparse_sync=True, plan=SimpleNamespace(hot=None), problem=prob,
                           threads_reason="threads on", epochs=12.0,
                           thread_work=ThreadWork(10, n_threads, sync_every, False, 5))


def _check(solver, rel_gap):
    S.guard_staleness(solver, SimpleNamespace(rel_gap=rel_gap))


def test_a_falling_gap_keeps_the_period():
    s = _solver(32768)
    for gap in (1e-1, 5e-2, 1e-2, 5e-3, 1e-3, 1e-4):
        _check(s, gap)
    assert s.sync_every == 32768 and s.threads_reason == "threads on"


def test_a_hovering_gap_shrinks_the_period_to_the_floor():
    s = _solver(32768)
    _check(s, 1e-2)
    _check(s, 3e-3)                      # a new best
    _check(s, 2.8e-3)                    # within PROGRESS of the best: no progress
    assert s.sync_every == 32768
    _check(s, 2e-2)
    assert s.sync_every == 32768 // S.SHRINK
    assert s.thread_work.sync_every == 32768 // S.SHRINK
    assert s.thread_work.limit == 2 * (s.n_threads - 1) * s.sync_every
    assert "sync_every 32768 -> 8192 at epoch 12" in s.threads_reason
    for _ in range(40):
        _check(s, 2e-2)
    assert s.sync_every == S.FLOOR


@pytest.mark.parametrize("sync_every,n_threads", [(0, 2), (4096, 1)])
def test_shared_v_and_one_thread_are_left_alone(sync_every, n_threads):
    s = _solver(sync_every, n_threads)
    for gap in (1e-2, 1e-2, 1e-2, 1e-2, 1e-2):
        _check(s, gap)
    assert s.sync_every == sync_every and not hasattr(s, "staleness")


def test_the_period_and_the_guard_survive_a_checkpoint():
    s = _solver(32768)
    for gap in (1e-2, 2e-2, 3e-2):
        _check(s, gap)
    meta = S.staleness_meta(s)
    assert meta["sync_every"] == 8192
    back = _solver(32768)
    S.restore_staleness(back, meta)
    assert back.sync_every == 8192
    assert (back.staleness.best, back.staleness.since) == (s.staleness.best, s.staleness.since)
    fresh = S.staleness_meta(_solver(512))           # no check yet: best is infinite
    S.restore_staleness(back, fresh)
    assert back.sync_every == 512 and math.isinf(back.staleness.best)


def test_the_threaded_solver_keeps_its_period_in_its_state(monkeypatch):
    """End to end, on tiny data with threads allowed: a threaded SDCA run's state
    carries the period it runs with, and a run resumed from it takes it back."""
    import primaldual
    from primaldual.blocks import sdca_threads
    from conftest import make_classification_data
    monkeypatch.setattr(sdca_threads, "MIN_NNZ_PER_THREAD", 0)
    X, y = make_classification_data(n=400, d=50, density=0.2, seed=4)
    kw = dict(loss="hinge", lam=1e-2, solver="sdca", n_jobs=2, threads="on",
              sync_every=256, tol=0.0)
    r = primaldual.solve(X, y, max_epochs=3, **kw)
    assert r.extras["threads"] == 2
    assert r.state.meta["sync_every"] in (256, 256 // S.SHRINK, S.FLOOR)
    meta = dict(r.state.meta, sync_every=128, staleness=[0.5, 1])
    r.state.meta.update(meta)
    again = primaldual.solve(X, y, max_epochs=4, resume=r, **kw)
    assert again.state.meta["sync_every"] in (128, S.FLOOR)
