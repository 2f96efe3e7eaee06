"""Distributed faults on one LocalCluster (2 worker processes), extending
tests/test_distributed.py (which covers a killed worker for CoCoA+ and a
round timeout from a too-small ``round_timeout``):

* a worker SIGKILLed mid-fit of ``minibatch_sdca`` (distributed sampling):
  recovered from the snapshot, same iterates as the local run;
* a worker slowed past ``round_timeout`` (its actor's round sleeps):
  ``RoundTimeoutError`` naming the partition and worker, well before any hang;
* the client disconnecting mid-fit: a clear error, no hang, and the solver
  checkpoint written before the disconnect resumes (locally) to the same
  coefficients as an uninterrupted run;
* empty partitions: more partitions than rows is refused with a ValueError;
  an empty part file is refused with a ValueError naming the file.

See docs/reliability.md for the behaviour in each case.
"""
from __future__ import annotations

import os
import signal
import time

import numpy as np
import pytest

from conftest import make_classification_data

import distributed

from primaldual import solve  # noqa: E402
from primaldual.distributed import PartitionedProblem, RoundTimeoutError  # noqa: E402


@pytest.fixture(scope="module")
def data():
    return make_classification_data(n=200, d=40, density=0.15, seed=21)


def test_killed_worker_minibatch_sdca(client, data, tmp_path):
    X, y = data
    killed = {}

    def kill_one(snapshot):
        if snapshot["epoch"] >= 1 and not killed:
            pids = client.run(os.getpid)
            addr = sorted(pids)[-1]
            os.kill(pids[addr], signal.SIGKILL)
            killed[addr] = pids[addr]
        return False

    kw = dict(loss="smooth_hinge", lam=1e-1, solver="minibatch_sdca", sampling="distributed",
              batch_size=20, n_partitions=2, tol=0, max_epochs=4, random_state=9)
    res = solve(X, y, client=client, callback=kill_one, recovery_every=3,
                recovery_dir=str(tmp_path / "rec"), round_timeout=60, **kw)
    assert killed
    assert res.trace[-1]["recoveries"] >= 1
    local = solve(X, y, **kw)
    np.testing.assert_allclose(res.coef, local.coef, rtol=0, atol=1e-10)
    np.testing.assert_allclose(res.dual_coef, local.dual_coef, rtol=0, atol=1e-10)
    client.wait_for_workers(2, timeout=60)


def _slow_rounds(seconds):
    """Run on a worker: make every PartitionActor round sleep first."""
    from primaldual.distributed import worker as W
    if not hasattr(W.PartitionActor, "_orig_round"):
        W.PartitionActor._orig_round = W.PartitionActor.round

    W._slow_rounds_finished = 0

    def slow(self, *args):
        time.sleep(seconds)
        W._slow_rounds_finished += 1
        return W.PartitionActor._orig_round(self, *args)
    W.PartitionActor.round = slow


def _slow_rounds_finished():
    from primaldual.distributed import worker as W
    return W._slow_rounds_finished


def _restore_rounds():
    from primaldual.distributed import worker as W
    if hasattr(W.PartitionActor, "_orig_round"):
        W.PartitionActor.round = W.PartitionActor._orig_round
        del W.PartitionActor._orig_round


#: how long a slowed round sleeps, and the round_timeout that must cut it short;
#: the margin between them (and the warm-up fit, which compiles the kernels in the
#: workers and loads their modules) keeps placement on a busy machine well inside
#: the timeout, so the error comes from the slow round and not from setup
SLOW = 20.0
TIMEOUT = 5.0


def test_slow_worker_past_the_timeout(client, data):
    X, y = data
    kw = dict(loss="hinge", lam=1e-2, solver="cocoa", n_partitions=2, local_iters=10,
              max_epochs=5)
    solve(X, y, client=client, round_timeout=120.0, **kw)          # warm-up
    addr = sorted(client.scheduler_info()["workers"])[0]
    client.run(_slow_rounds, SLOW, workers=[addr])
    try:
        with pytest.raises(RoundTimeoutError, match=rf"round_timeout={TIMEOUT}s.*partition "
                                                    rf"\d+ on worker"):
            solve(X, y, client=client, round_timeout=TIMEOUT, **kw)
        # raised while the slow round was still sleeping (told by state, not a clock)
        assert client.run(_slow_rounds_finished, workers=[addr])[addr] == 0
    finally:
        client.run(_restore_rounds)
    # the sleeping call still occupies that worker's actor thread: let it finish
    for _ in range(int(SLOW) + 60):
        if client.run(_slow_rounds_finished, workers=[addr])[addr] > 0:
            break
        time.sleep(1.0)


def test_client_disconnect_mid_fit_then_resume(cluster, data, tmp_path):
    X, y = data
    kw = dict(loss="logistic", lam=5e-2, solver="cocoa", n_partitions=2, local_iters=50,
              tol=0, random_state=3)
    c2 = distributed.Client(cluster)
    ck = tmp_path / "ck"

    def disconnect(snapshot):
        if snapshot["epoch"] >= 2:
            c2.close()
        return False

    with pytest.raises(Exception) as ei:
        solve(X, y, client=c2, callback=disconnect, checkpoint=str(ck), round_timeout=20,
              max_epochs=6, **kw)
    err = ei.value
    assert str(err) and not isinstance(err, (AssertionError, KeyboardInterrupt))
    # what the solver wrote at the last check resumes, here without Dask
    resumed = solve(X, y, resume=str(ck), max_epochs=6, **kw)
    full = solve(X, y, max_epochs=6, **kw)
    np.testing.assert_allclose(resumed.coef, full.coef, rtol=0, atol=1e-10)
    assert resumed.n_epochs == full.n_epochs


def test_more_partitions_than_rows(client):
    X = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    y = np.array([1.0, -1.0, 1.0])
    for opts in (dict(solver="cocoa", n_partitions=4),
                 dict(solver="minibatch_sdca", sampling="distributed", batch_size=4,
                      n_partitions=4)):
        with pytest.raises(ValueError, match="partition|larger than n"):
            solve(X, y, loss="hinge", lam=0.1, client=client, max_epochs=2, **opts)
        with pytest.raises(ValueError, match="partition|larger than n"):
            solve(X, y, loss="hinge", lam=0.1, max_epochs=2, **opts)


def test_empty_part_file(client, data, tmp_path):
    from sklearn.datasets import dump_svmlight_file
    X, y = data
    p0 = tmp_path / "part0.svm"
    dump_svmlight_file(X[:100], (y[:100] > 0).astype(int), str(p0), zero_based=False)
    p1 = tmp_path / "part1.svm"
    p1.write_text("")
    with pytest.raises(ValueError, match="part1.svm"):
        pp = PartitionedProblem.from_files(client, [str(p0), str(p1)], loss="hinge",
                                           lam=1e-2, n_features=X.shape[1])
        solve_pp(pp)


def solve_pp(pp):
    from primaldual.solvers import SOLVERS
    return SOLVERS["cocoa"](pp, tol=0, max_epochs=2, random_state=0).run()
