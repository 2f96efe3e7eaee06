"""The Dask engine on a LocalCluster (2 worker processes, 1 thread each):
Dask == local to 1e-10, part files read on the workers, a worker killed
mid-fit, round timeouts, and the Dask estimator."""
from __future__ import annotations

import time

import numpy as np
import pytest

from conftest import make_classification_data, worker_killer

import distributed

from primaldual import solve  # noqa: E402
from primaldual.distributed import PartitionedProblem, RoundTimeoutError  # noqa: E402
from primaldual.solvers import SOLVERS  # noqa: E402


@pytest.fixture(scope="module")
def data():
    return make_classification_data(n=240, d=60, density=0.1, seed=3)


@pytest.mark.parametrize("solver,opts", [
    ("cocoa", dict(n_partitions=4, local_iters=15)),
    ("cocoa", dict(n_partitions=4, local_iters=15, loss="logistic")),
    ("cocoa", dict(n_partitions=3, local_iters=20, aggregation="line_search",
                   loss="epsilon_insensitive")),
    ("cocoa", dict(n_partitions=3, local_iters=20, aggregation="adding")),
    ("cocoa", dict(n_partitions=3, local_iters=20, aggregation="averaging")),
    ("cocoa", dict(n_partitions=2, local_iters=20, local_solver="uniform")),
    ("minibatch_sdca", dict(sampling="distributed", batch_size=16, n_partitions=2)),
])
def test_dask_equals_local(client, data, solver, opts):
    """Every CoCoA+ aggregation (the default, line_search, with the closed-form
    step, the 1-D search of logistic and epsilon-insensitive, adding,
    averaging) gives the same iterates on Dask as in process."""
    X, y = data
    opts = {"loss": "smooth_hinge", **opts}
    kw = dict(lam=1e-2, solver=solver, tol=0, max_epochs=3, random_state=7, **opts)
    local = solve(X, y, **kw)
    dist = solve(X, y, client=client, **kw)
    np.testing.assert_allclose(dist.dual_coef, local.dual_coef, rtol=0, atol=1e-10)
    np.testing.assert_allclose(dist.coef, local.coef, rtol=0, atol=1e-10)
    assert dist.gap == pytest.approx(local.gap, rel=1e-10, abs=1e-12)
    assert dist.trace[-1]["rounds"] == local.trace[-1]["rounds"]
    assert dist.state.meta["backend"] == "dask"
    assert dist.trace[-1]["round_ms"] > 0


def test_dask_threads_inside_each_worker(client, data):
    """n_jobs with a client: threads inside each worker's local SDCA; the run
    certifies the serial optimum (the iterates are not bitwise those of a
    local run: the local solver is asynchronous)."""
    X, y = data
    ref = solve(X, y, loss="logistic", lam=1e-2, solver="sdca", tol=1e-11,
                max_epochs=2000)
    res = solve(X, y, loss="logistic", lam=1e-2, solver="cocoa", n_partitions=2,
                n_jobs=2, client=client, tol=1e-8, max_epochs=2000, random_state=3,
                round_timeout=600)    # the first round compiles the threaded kernels
    assert res.converged and res.rel_gap <= 1e-8
    assert res.primal == pytest.approx(ref.primal, rel=1e-7)
    assert res.state.meta["backend"] == "dask"


def _write_parts(tmp_path, X, y, sizes):
    from sklearn.datasets import dump_svmlight_file
    paths, a = [], 0
    for k, s in enumerate(sizes):
        p = tmp_path / f"part{k}.svm"
        dump_svmlight_file(X[a:a + s], (y[a:a + s] > 0).astype(int), str(p),
                           zero_based=False)
        paths.append(str(p))
        a += s
    return paths


def test_part_files_are_read_on_the_workers(client, data, tmp_path):
    X, y = data
    paths = _write_parts(tmp_path, X, y, [80, 80, 80])
    pp = PartitionedProblem.from_files(client, paths, loss="logistic", lam=1e-2,
                                       n_features=X.shape[1])
    assert (pp.n, pp.d, pp.n_parts) == (240, 60, 3)
    assert pp.label_map == (0.0, 1.0)
    kw = dict(tol=1e-6, max_epochs=60, random_state=4)
    dist = SOLVERS["cocoa"](pp, local_iters=30, **kw).run()
    # the local reference reads the same values (a LIBSVM file keeps 16 digits,
    # so its values may differ from X in the last bit)
    import scipy.sparse as sp
    from sklearn.datasets import load_svmlight_file
    Xf = sp.vstack([load_svmlight_file(p, n_features=X.shape[1])[0] for p in paths]).tocsr()
    local = solve(Xf, y, loss="logistic", lam=1e-2, solver="cocoa", n_partitions=3,
                  local_iters=30, **kw)
    assert dist.converged
    np.testing.assert_allclose(dist.coef, local.coef, rtol=0, atol=1e-10)
    assert dist.primal == pytest.approx(local.primal, rel=1e-12)
    with pytest.raises(ValueError, match="n_partitions=3"):
        SOLVERS["cocoa"](pp, n_partitions=2, **kw)


@pytest.mark.parametrize("loss", ["logistic", "squared_hinge"])
def test_killed_worker_is_recovered_and_the_fit_converges(own_client, data, tmp_path, loss):
    """aggregation="line_search" (the default): a worker killed mid-fit, the
    replay from the snapshot takes the same steps on the summed update."""
    client = own_client
    X, y = data
    kill_one, killed = worker_killer(client, 2)

    kw = dict(loss=loss, lam=1e-1, solver="cocoa", n_partitions=4, aggregation="line_search",
              local_iters=60, tol=1e-6, max_epochs=100, random_state=5)
    res = solve(X, y, client=client, callback=kill_one, recovery_every=2,
                recovery_dir=str(tmp_path / "rec"), round_timeout=60, **kw)
    assert killed
    assert res.trace[-1]["recoveries"] >= 1
    assert res.converged and res.rel_gap <= 1e-6
    assert (tmp_path / "rec" / "recovery.npz").exists()
    # the replay from the snapshot uses the same streams: same iterates
    local = solve(X, y, **kw)
    np.testing.assert_allclose(res.coef, local.coef, rtol=0, atol=1e-10)


def test_round_timeout_gives_a_clear_error(client, data):
    X, y = data
    with pytest.raises(RoundTimeoutError, match="round_timeout"):
        solve(X, y, loss="hinge", lam=1e-2, solver="cocoa", n_partitions=2,
              client=client, round_timeout=1e-4, max_epochs=5)


def test_standard_sampling_refuses_a_client(client, data):
    X, y = data
    with pytest.raises(ValueError, match="sampling='distributed' only"):
        solve(X, y, solver="minibatch_sdca", client=client, max_epochs=1)


def test_dask_estimator_on_files_arrays_and_dask_arrays(client, data, tmp_path):
    import dask.array as da
    import scipy.sparse as sp

    from primaldual import LinearClassifier as Local
    from primaldual.dask import LinearClassifier

    X, y = data
    opts = {"n_partitions": 3, "local_iters": 30}
    kw = dict(loss="logistic", alpha=1e-2, tol=1e-6, max_iter=80, random_state=4)
    local = Local(solver="cocoa", solver_options=opts, **kw).fit(X, y)
    paths = _write_parts(tmp_path, X, y, [80, 80, 80])
    on_files = LinearClassifier(client=client, solver_options=opts, **kw).fit(paths)
    np.testing.assert_allclose(on_files.coef_, local.coef_, rtol=0, atol=1e-10)
    assert on_files.intercept_[0] == pytest.approx(local.intercept_[0], abs=1e-10)
    assert on_files.converged_.all()
    np.testing.assert_array_equal(on_files.classes_, [0.0, 1.0])
    in_memory = LinearClassifier(client=client, solver_options=opts, **kw).fit(X, y)
    np.testing.assert_allclose(in_memory.coef_, local.coef_, rtol=0, atol=1e-10)
    Xd = da.from_array(X.toarray(), chunks=(80, 60))
    on_dask = LinearClassifier(client=client, solver_options=opts, **kw).fit(
        Xd, da.from_array(y, chunks=80))
    np.testing.assert_allclose(on_dask.coef_, local.coef_, rtol=0, atol=1e-10)
    pred = on_files.predict(sp.csr_matrix(X))
    assert np.mean(pred == (y > 0)) > 0.8
    with pytest.raises(ValueError, match="does not run on Dask"):
        LinearClassifier(client=client, solver="sdca").fit(paths)


def test_dask_estimator_default_strength_is_one_over_n_on_files(client, data, tmp_path):
    # alpha=None on part files: PartitionedProblem(lam=None) takes 1/W once the
    # partitions are read, the same strength as the in-memory estimator
    from primaldual import LinearClassifier as Local
    from primaldual.dask import LinearClassifier

    X, y = data
    opts = {"n_partitions": 3, "local_iters": 30}
    kw = dict(loss="logistic", tol=1e-6, max_iter=80, random_state=4)
    local = Local(solver="cocoa", solver_options=opts, **kw).fit(X, y)
    paths = _write_parts(tmp_path, X, y, [80, 80, 80])
    on_files = LinearClassifier(client=client, solver_options=opts, **kw).fit(paths)
    assert local.lam_ == 1.0 / X.shape[0]
    assert on_files.lam_ == pytest.approx(local.lam_, rel=1e-15)
    np.testing.assert_allclose(on_files.coef_, local.coef_, rtol=0, atol=1e-10)


def test_dask_estimator_takes_C_in_memory_and_refuses_it_on_part_files(client, data,
                                                                       tmp_path):
    """C on in-memory data is the local estimator's lam = 1/(C W); on part files W is
    known only on the workers, so C is refused with the alternative named."""
    from primaldual.dask import LinearClassifier
    X, y = data
    opts = {"n_partitions": 2, "local_iters": 20}
    import warnings
    from sklearn.exceptions import ConvergenceWarning
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)     # 3 rounds: the strength only
        est = LinearClassifier(client=client, C=2.0, max_iter=3, solver_options=opts,
                               random_state=0).fit(X, y)
    assert est.loss == "squared_hinge" and est.lam_ == 1.0 / (2.0 * X.shape[0])
    paths = _write_parts(tmp_path, X, y, [120, 120])
    with pytest.raises(ValueError, match="C is not supported for part files"):
        LinearClassifier(client=client, C=2.0, solver_options=opts).fit(paths)


def test_a_closed_client_raises_worker_lost_naming_it(data):
    """A client whose cluster was closed, and a closed client, make every
    distributed solver and the Dask estimator raise ClientClosedError (a
    WorkerLostError, as docs/distributed.md promises), not KeyError('workers')."""
    from primaldual.dask import LinearClassifier as DaskLinearClassifier
    from primaldual.distributed import WorkerLostError
    from primaldual._util.clients import ClientClosedError, client_workers
    X, y = data
    cluster = distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
                                       dashboard_address=None)
    c = distributed.Client(cluster)
    assert len(client_workers(c)) == 1
    cluster.close()
    try:
        fits = [dict(solver=s) for s in ("cocoa", "newton", "dso", "psgd")]
        fits.append(dict(solver="minibatch_sdca", sampling="distributed", batch_size=8))
        for kw in fits:
            with pytest.raises(WorkerLostError, match="Dask client .* is closed"):
                solve(X, y, loss="squared_hinge", lam=1e-2, client=c, max_epochs=2, **kw)
        with pytest.raises(ClientClosedError, match="create a new Client"):
            DaskLinearClassifier(client=c, alpha=1e-2, max_iter=2).fit(X, y)
    finally:
        c.close()
    with pytest.raises(ClientClosedError, match="is closed"):
        solve(X, y, loss="squared_hinge", lam=1e-2, solver="cocoa", client=c, max_epochs=2)
