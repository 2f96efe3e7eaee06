"""CoCoA+'s step on a subspace (aggregation="subspace") on a 2-worker
LocalCluster: the same iterates as in process (rounds, resume from a
checkpoint, part files read on the workers), and a worker killed mid-fit
recovered to where the uninterrupted run ends."""
from __future__ import annotations


import numpy as np
import pytest

from conftest import make_classification_data, worker_killer

pytest.importorskip("distributed")

from primaldual import solve  # noqa: E402
from primaldual.distributed import PartitionedProblem  # noqa: E402
from primaldual.solvers import SOLVERS  # noqa: E402


@pytest.fixture(scope="module")
def data():
    return make_classification_data(n=240, d=60, density=0.1, seed=3)


def _same(a, b):
    np.testing.assert_allclose(a.dual_coef, b.dual_coef, rtol=0, atol=1e-12)
    np.testing.assert_allclose(a.coef, b.coef, rtol=0, atol=1e-12)
    assert a.gap == pytest.approx(b.gap, rel=1e-10, abs=1e-14)


@pytest.mark.parametrize("loss,memory", [("logistic", 8), ("logistic", 0), ("hinge", 3)])
def test_dask_equals_local_and_resumes_exactly(client, data, loss, memory):
    """The same rounds and steps as in process, the memory of steps included;
    a run split in two by a checkpoint (its memory gathered from the workers and
    sent back) ends where the whole run ends."""
    X, y = data
    kw = dict(loss=loss, lam=1e-2, solver="cocoa", aggregation="subspace", memory=memory,
              n_partitions=3, local_iters=20, tol=0, random_state=7)
    local = solve(X, y, max_epochs=3, **kw)
    dist = solve(X, y, client=client, max_epochs=3, **kw)
    _same(dist, local)
    assert dist.state.meta["backend"] == "dask"
    assert dist.trace[-1]["rounds"] == local.trace[-1]["rounds"]
    part = solve(X, y, client=client, max_epochs=1, **kw)
    if memory:
        used = min(memory, part.trace[-1]["rounds"])
        assert part.state.arrays["subspace_dalpha"].shape == (used, X.shape[0])
        assert np.abs(part.state.arrays["subspace_dalpha"]).max() > 0
    rest = solve(X, y, client=client, max_epochs=3, resume=part.state, **kw)
    _same(rest, local)


def test_part_files_on_the_workers(client, data, tmp_path):
    from sklearn.datasets import dump_svmlight_file, load_svmlight_file
    import scipy.sparse as sp
    X, y = data
    paths = []
    for k, (a, b) in enumerate([(0, 120), (120, 240)]):
        p = tmp_path / f"part{k}.svm"
        dump_svmlight_file(X[a:b], (y[a:b] > 0).astype(int), str(p), zero_based=False)
        paths.append(str(p))
    pp = PartitionedProblem.from_files(client, paths, loss="logistic", lam=1e-1,
                                       n_features=X.shape[1])
    kw = dict(aggregation="subspace", local_iters=60, tol=1e-8, max_epochs=40,
              random_state=2)
    dist = SOLVERS["cocoa"](pp, **kw).run()
    Xf = sp.vstack([load_svmlight_file(p, n_features=X.shape[1])[0] for p in paths]).tocsr()
    # the same contiguous partitions of 120 rows as the files
    local = solve(Xf, y, loss="logistic", lam=1e-1, solver="cocoa", n_partitions=2, **kw)
    assert dist.converged and dist.rel_gap <= 1e-8
    assert dist.trace[-1]["rounds"] == local.trace[-1]["rounds"]
    np.testing.assert_allclose(dist.coef, local.coef, rtol=0, atol=1e-10)


def test_killed_worker_is_recovered_to_the_uninterrupted_run(own_client, data, tmp_path):
    """A worker SIGKILLed mid-fit: the snapshot (the workers' remembered
    changes and the client's images with alpha, v and the streams) is
    restored and the rounds since are replayed with the same steps."""
    client = own_client
    X, y = data
    kill_one, killed = worker_killer(client, 2)

    kw = dict(loss="logistic", lam=1e-1, solver="cocoa", aggregation="subspace",
              n_partitions=2, local_iters=40, tol=1e-9, max_epochs=40, random_state=5)
    res = solve(X, y, client=client, callback=kill_one, recovery_every=2,
                round_timeout=120, **kw)
    assert killed and res.trace[-1]["recoveries"] >= 1
    assert res.converged
    local = solve(X, y, **kw)
    np.testing.assert_allclose(res.coef, local.coef, rtol=0, atol=1e-10)
    np.testing.assert_allclose(res.dual_coef, local.dual_coef, rtol=0, atol=1e-10)
