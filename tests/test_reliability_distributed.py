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
  an empty part file is refused with a ValueError naming the file;
* a part file changed during the fit (truncated, or rewritten with the same
  counts) and its worker lost: refused by its content digest, naming the file.

See docs/reliability.md for the behaviour in each case.
"""
from __future__ import annotations

import os
import signal
import time

import numpy as np
import pytest

from conftest import make_classification_data, worker_dies_at, worker_killer

import distributed

from primaldual import solve  # noqa: E402
from primaldual.distributed import PartitionedProblem, RoundTimeoutError  # noqa: E402


@pytest.fixture(scope="module")
def data():
    return make_classification_data(n=200, d=40, density=0.15, seed=21)


def test_killed_worker_minibatch_sdca(own_client, data, tmp_path):
    client = own_client
    X, y = data
    kill_one, killed = worker_killer(client, 1, last=True)

    kw = dict(loss="smooth_hinge", lam=1e-1, solver="minibatch_sdca", sampling="distributed",
              batch_size=20, n_partitions=2, tol=0, max_epochs=4, random_state=9)
    res = solve(X, y, client=client, callback=kill_one, recovery_every=3,
                recovery_dir=str(tmp_path / "rec"), round_timeout=60, **kw)
    assert killed
    assert res.trace[-1]["recoveries"] >= 1
    local = solve(X, y, **kw)
    np.testing.assert_allclose(res.coef, local.coef, rtol=0, atol=1e-10)
    np.testing.assert_allclose(res.dual_coef, local.dual_coef, rtol=0, atol=1e-10)


def test_worker_killed_during_a_certificate_replays_to_the_lost_round(own_client, data):
    """The worker dies inside the certificate call at the third check: the
    engine rolls back to the snapshot of the second check and replays the
    rounds since, so every check of the fit (primal, dual, epochs) and its end
    are those of the local run -- not the snapshot's state reported as one
    epoch later."""
    client = own_client
    X, y = data
    kw = dict(loss="hinge", lam=1e-2, solver="cocoa", n_partitions=2, local_iters=10,
              tol=0, max_epochs=5, check_every=1, random_state=4)
    addr = sorted(client.scheduler_info()["workers"])[-1]
    client.run(worker_dies_at, "certificate", 3, workers=[addr])
    res = solve(X, y, client=client, round_timeout=60, **kw)
    assert res.trace[-1]["recoveries"] >= 1
    local = solve(X, y, **kw)
    assert [r["epoch"] for r in res.trace] == [r["epoch"] for r in local.trace]
    for a, b in zip(res.trace, local.trace):
        assert a["primal"] == pytest.approx(b["primal"], rel=1e-10, abs=1e-12)
        assert a["dual"] == pytest.approx(b["dual"], rel=1e-10, abs=1e-12)
    np.testing.assert_allclose(res.coef, local.coef, rtol=0, atol=1e-10)
    np.testing.assert_allclose(res.dual_coef, local.dual_coef, rtol=0, atol=1e-10)


def _truncate(text):
    return text[:len(text) // 2]


def _flip_labels(text):
    return [("0" if line.startswith("1") else "1") + line[1:] for line in text]


def _double_values(text):
    out = []
    for line in text:
        label, *pairs = line.split()
        pairs = [f"{p.split(':')[0]}:{2 * float(p.split(':')[1])!r}" for p in pairs]
        out.append(" ".join([label, *pairs]) + "\n")
    return out


@pytest.mark.parametrize("rewrite", [_truncate, _flip_labels, _double_values],
                         ids=["truncated", "labels-flipped", "values-doubled"])
def test_rewritten_part_file_and_a_killed_worker_name_the_file(own_client, data, tmp_path,
                                                               rewrite):
    """A part file changed during the fit (cut short, or rewritten with the same
    rows and nonzeros but other labels or values), then its worker killed:
    reloading the partition finds other content (its digest differs), and the
    fit stops with a ValueError naming the file (not a shape error from deep
    inside, not a timeout, and never a fit on the changed rows).  The timeouts
    only bound the wait for the replacement worker, which on a loaded machine
    took over 60 s to start."""
    from sklearn.datasets import dump_svmlight_file
    client = own_client
    X, y = data
    paths = [tmp_path / "part0.svm", tmp_path / "part1.svm"]
    for p, rows in zip(paths, (slice(0, 100), slice(100, 200))):
        dump_svmlight_file(X[rows], (y[rows] > 0).astype(int), str(p), zero_based=False)
    pp = PartitionedProblem.from_files(client, [str(p) for p in paths], loss="hinge",
                                       lam=1e-2, n_features=X.shape[1], round_timeout=300)
    holder = pp.pset.addresses[1]
    done = {}

    def change_and_kill(snapshot):
        if snapshot["epoch"] >= 1 and not done:
            text = paths[1].read_text().splitlines(keepends=True)
            paths[1].write_text("".join(rewrite(text)))
            pid = client.run(os.getpid, workers=[holder])[holder]
            os.kill(pid, signal.SIGKILL)
            done["killed"] = pid
        return False

    from primaldual.solvers import SOLVERS
    with pytest.raises(ValueError, match=r"part file .*part1\.svm.*changed"):
        SOLVERS["cocoa"](pp, tol=0, max_epochs=4, check_every=1, random_state=0,
                         callback=change_and_kill).run()
    assert done


def test_content_digest_tells_equal_counts_apart(data):
    """The digest that identifies a part: equal for equal content (CSR or dense
    alike only within a format), different for one flipped label, one changed
    value or one changed weight at the same counts."""
    import scipy.sparse as sp
    from primaldual.distributed.worker import content_digest
    X, y = data
    X = sp.csr_matrix(X)
    c = np.ones(X.shape[0])
    d0 = content_digest(X, y, c)
    assert d0 == content_digest(X.copy(), y.copy(), c.copy())
    y2 = y.copy()
    y2[7] = -y2[7]
    X2 = X.copy()
    X2.data[3] *= 2
    c2 = c.copy()
    c2[0] = 2.0
    assert len({d0, content_digest(X, y2, c), content_digest(X2, y, c),
                content_digest(X, y, c2)}) == 4


def _slow_rounds(seconds):
    """Run on a worker: make every PartitionActor round sleep first, for
    ``seconds`` or until :func:`_restore_rounds` releases it."""
    import threading

    from primaldual.distributed import worker as W
    if not hasattr(W.PartitionActor, "_orig_round"):
        W.PartitionActor._orig_round = W.PartitionActor.round

    W._slow_rounds_finished = 0
    W._slow_release = release = threading.Event()

    def slow(self, *args):
        release.wait(seconds)
        W._slow_rounds_finished += 1
        return W.PartitionActor._orig_round(self, *args)
    W.PartitionActor.round = slow


def _slow_rounds_finished():
    from primaldual.distributed import worker as W
    return W._slow_rounds_finished


def _restore_rounds():
    from primaldual.distributed import worker as W
    if hasattr(W, "_slow_release"):
        W._slow_release.set()          # a round still sleeping goes on now
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
    # the released call still occupies that worker's actor thread: let it finish
    for _ in range(20 * (int(SLOW) + 60)):
        if client.run(_slow_rounds_finished, workers=[addr])[addr] > 0:
            break
        time.sleep(0.05)


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


def test_a_cluster_without_workers_waits_then_names_the_problem(data):
    """No worker at all: the engine waits up to round_timeout for one (a cluster
    still starting, a worker being restarted), then raises WorkerLostError; a
    worker that arrives in time is used."""
    from primaldual.distributed import WorkerLostError
    X, y = data
    with distributed.LocalCluster(n_workers=0, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cl, distributed.Client(cl) as c:
        with pytest.raises(WorkerLostError, match=r"no workers \(waited round_timeout=1.0s\)"):
            solve(X, y, loss="hinge", lam=1e-2, solver="cocoa", n_partitions=2, client=c,
                  round_timeout=1.0, max_epochs=2)
        cl.scale(1)                        # starts one; the fit waits for it
        res = solve(X, y, loss="hinge", lam=1e-2, solver="cocoa", n_partitions=2,
                    client=c, round_timeout=120.0, max_epochs=2)
        assert res.n_epochs == 2 and "round_compute_ms" in res.trace[-1]     # ran on Dask
        assert len(c.scheduler_info()["workers"]) == 1
