"""One-vs-rest problems on threads (primaldual.solvers.ovr): threads only where
measured to pay, with the slowness of one side injected (no timing assertion),
and the same models whichever way the problems were scheduled."""
from __future__ import annotations

import threading
import time

import numpy as np
import pytest

import primaldual
from primaldual import LinearClassifier
from primaldual.solvers import ovr

K = 8          # problems: problem 0, a batch of 2, then 5 more (>= MIN_BATCHES batches)


def _problems(seed=0, n=60, d=5):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    labels = rng.integers(0, K, n)
    return X, [np.where(labels == k, 1.0, -1.0) for k in range(K)]


def _one(X, targets, solver, delay):
    """``one(k, n_jobs)`` of run_problems; ``delay(k, n_jobs)`` seconds of sleep
    first (the injected slowness), and where each problem ran."""
    where = {}

    def one(k, n_jobs):
        where[k] = (n_jobs, threading.current_thread() is threading.main_thread())
        time.sleep(delay(k, n_jobs))
        return primaldual.solve(X, targets[k], loss="squared_hinge", lam=1e-2, solver=solver,
                                tol=1e-10, random_state=k)
    return one, where


@pytest.fixture
def no_floor(monkeypatch):
    monkeypatch.setattr(ovr, "MIN_PROBLEM_S", 0.0)


def test_a_slower_parallel_batch_falls_back_to_serial(no_floor):
    X, targets = _problems()
    ref = [primaldual.solve(X, t, loss="squared_hinge", lam=1e-2, solver="sdca", tol=1e-10,
                            random_state=k) for k, t in enumerate(targets)]
    # the batch's problems (n_jobs=1 on a pool thread) each sleep 0.5 s
    one, where = _one(X, targets, "sdca", lambda k, j: 0.5 if j == 1 else 0.0)
    results, plan = ovr.run_problems(one, K, 2)
    assert plan["workers"] == 1 and plan["reason"].startswith("serial: 2 problems at a time")
    assert [where[k][1] for k in range(K)] == [True, False, False] + [True] * (K - 3)
    for r, q in zip(results, ref):
        np.testing.assert_array_equal(r.coef, q.coef)
        assert r.converged


def test_a_faster_parallel_batch_keeps_the_threads(no_floor):
    X, targets = _problems()
    # problem 0 (alone) sleeps 0.5 s: the batch reads far more entries per second
    one, where = _one(X, targets, "sdca", lambda k, j: 0.5 if k == 0 else 0.0)
    results, plan = ovr.run_problems(one, K, 2)
    assert plan["workers"] == 2 and plan["reason"].startswith("threads")
    assert [where[k] for k in range(1, K)] == [(1, False)] * (K - 1)
    assert all(r.converged for r in results)


def test_gil_bound_methods_and_tiny_problems_run_serially(no_floor, monkeypatch):
    X, targets = _problems()
    one, where = _one(X, targets, "newton", lambda k, j: 0.0)
    _, plan = ovr.run_problems(one, K, 2)
    assert plan["workers"] == 1 and "holds the GIL" in plan["reason"]
    assert all(where[k] == (2, True) for k in range(K))
    monkeypatch.setattr(ovr, "MIN_PROBLEM_S", 1e9)
    one, where = _one(X, targets, "sdca", lambda k, j: 0.0)
    _, plan = ovr.run_problems(one, K, 2)
    assert plan["workers"] == 1 and "ms, under" in plan["reason"]
    assert all(w[1] for w in where.values())          # no thread spawned
    one, where = _one(X, targets, "sdca", lambda k, j: 0.0)
    _, plan = ovr.run_problems(one, 4, 2)             # 3 problems after the first
    assert plan["workers"] == 1 and "fewer than" in plan["reason"]


def test_estimator_models_do_not_depend_on_n_jobs(no_floor):
    X, targets = _problems(seed=1, n=120)
    labels = np.argmax(np.array(targets), axis=0)
    kw = dict(loss="hinge", alpha=1e-2, solver="sdca", tol=1e-9, random_state=3)
    one = LinearClassifier(n_jobs=1, **kw).fit(X, labels)
    two = LinearClassifier(n_jobs=2, **kw).fit(X, labels)
    np.testing.assert_array_equal(one.coef_, two.coef_)
    assert two.n_jobs_plan_["reason"] and np.all(two.converged_)
