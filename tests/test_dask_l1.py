"""L1 and elastic-net models on row partitions and on Dask
(``solver="l1_newton"``, what ``solver="auto"`` runs for ``l1 > 0`` with
``n_partitions`` or ``client``):

* the partitions' optimum equals the serial ``l1cd`` optimum and cvxpy's
  (scikit-learn's Lasso for the squared loss) to 1e-6 relative objective,
  and the reported primal and dual are recomputed by hand;
* Dask equals in process with the same partitions to 1e-12, check by check;
* a worker SIGKILLed inside a Gram call is recovered and the fit certifies;
* the Dask estimator (``penalty="l1"``) on in-memory arrays, part files and
  Dask arrays,
  the CLI ``fit --penalty l1 --scheduler``, warm starts and checkpoints;
* the refusals name the alternative.
"""
from __future__ import annotations

import json

import numpy as np
import pytest
import scipy.sparse as sp

import distributed  # noqa: F401  (the Dask extra; the fixtures need it)

from conftest import assert_same_run, worker_dies_at  # noqa: E402

from primaldual import solve  # noqa: E402


def _data(n=240, d=60, seed=3, regression=False):
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=0.25, random_state=seed, format="csr")
    X.data = rng.normal(size=X.nnz)
    w = np.zeros(d)
    w[:6] = 2.0 * rng.normal(size=6)
    score = X @ w + 0.3 * rng.normal(size=n)
    if regression:
        return X, score
    y = np.where(score > 0, 1.0, -1.0)
    return X, y


def _by_hand(X, y, c, w, alpha, lam, l1, loss):
    """Primal and dual of docs/conventions.md §1 written out for the
    logistic and squared losses (no library objective used)."""
    cw = c / c.sum()
    m = np.asarray(X @ w).ravel()
    if loss == "logistic":
        phi = np.logaddexp(0.0, -y * m)
        a = alpha * y
        assert (a >= 0).all() and (a <= 1).all()
        ent = np.where(a > 0, a * np.log(np.where(a > 0, a, 1)), 0.0) + \
            np.where(a < 1, (1 - a) * np.log(np.where(a < 1, 1 - a, 1)), 0.0)
        conj = -ent
    else:
        phi = 0.5 * (m - y) ** 2
        conj = alpha * y - 0.5 * alpha ** 2
    primal = cw @ phi + 0.5 * lam * w @ w + l1 * np.abs(w).sum()
    v = np.asarray(X.T @ (cw * alpha)).ravel()
    if lam == 0:
        assert np.abs(v).max() <= l1 * (1 + 1e-12)
        gstar = 0.0
    else:
        gstar = (np.maximum(np.abs(v) - l1, 0.0) ** 2).sum() / (2 * lam)
    return primal, cw @ conj - gstar


def _cvxpy_logistic(X, y, c, lam, l1):
    cp = pytest.importorskip("cvxpy")
    cw = c / c.sum()
    w = cp.Variable(X.shape[1])
    obj = cw @ cp.logistic(-cp.multiply(y, X.toarray() @ w)) + lam / 2 * cp.sum_squares(w) \
        + l1 * cp.norm1(w)
    cp.Problem(cp.Minimize(obj)).solve(solver="CLARABEL", tol_gap_abs=1e-12,
                                       tol_gap_rel=1e-12, tol_feas=1e-12)
    return float(obj.value)


@pytest.mark.parametrize("K, lam", [(1, 0.0), (3, 0.0), (3, 1e-3)])
def test_partitions_reach_the_optimum_and_certify(K, lam):
    X, y = _data()
    c = np.random.default_rng(0).uniform(0.5, 2.0, size=X.shape[0])
    l1 = 0.02
    res = solve(X, y, loss="logistic", lam=lam, l1=l1, solver="l1_newton", n_partitions=K,
                tol=1e-10, sample_weight=c)
    assert res.solver == "l1_newton" and res.converged and res.rel_gap <= 1e-10
    primal, dual = _by_hand(X, y, c, res.coef, res.dual_coef, lam, l1, "logistic")
    assert res.primal == pytest.approx(primal, rel=1e-12)
    assert res.dual == pytest.approx(dual, rel=1e-11)
    serial = solve(X, y, loss="logistic", lam=lam, l1=l1, solver="l1cd", tol=1e-10,
                   sample_weight=c)
    assert res.primal == pytest.approx(serial.primal, rel=1e-9)
    assert res.primal == pytest.approx(_cvxpy_logistic(X, y, c, lam, l1), rel=1e-6)
    assert 0 < np.count_nonzero(res.coef) < X.shape[1]


def test_lasso_on_partitions_equals_scikit_learn():
    from sklearn.linear_model import Lasso
    X, y = _data(regression=True)
    l1 = 0.05
    res = solve(X, y, loss="squared", lam=0.0, l1=l1, n_partitions=2, tol=1e-12)
    assert res.solver == "l1_newton" and res.converged     # auto with partitions
    ref = Lasso(alpha=l1, fit_intercept=False, tol=1e-14, max_iter=100000).fit(X, y)
    primal, dual = _by_hand(X, y, np.ones(X.shape[0]), res.coef, res.dual_coef, 0.0, l1,
                            "squared")
    assert res.primal == pytest.approx(primal, rel=1e-12)
    assert res.dual == pytest.approx(dual, rel=1e-11)
    m = X @ ref.coef_ - y
    ref_primal = 0.5 * np.mean(m ** 2) + l1 * np.abs(ref.coef_).sum()
    assert res.primal == pytest.approx(ref_primal, rel=1e-6)
    assert res.primal <= ref_primal * (1 + 1e-12)


def test_warm_start_checkpoint_and_the_squared_hinge(tmp_path):
    X, y = _data(seed=5)
    kw = dict(loss="squared_hinge", lam=0.0, l1=0.02, solver="l1_newton", n_partitions=2,
              tol=1e-10)
    full = solve(X, y, **kw)
    assert full.converged
    again = solve(X, y, warm_start=full.coef, **kw)
    assert again.converged and again.trace[-1]["newton_iter"] == 0
    first = solve(X, y, max_epochs=3, checkpoint=str(tmp_path), checkpoint_every=1, **kw)
    assert not first.converged
    resumed = solve(X, y, resume=str(tmp_path), **kw)
    assert resumed.converged
    assert resumed.primal == pytest.approx(full.primal, rel=1e-9)


def test_smoothed_hinge_from_zero_curvature():
    """The smoothed hinge with gamma = 1 has zero curvature on every row at w = 0:
    the model's curvature floor lets the first step move, and the fit certifies
    (Problem recomputes primal and dual)."""
    from primaldual import Problem
    X, y = _data(n=200, d=40, seed=1)
    kw = dict(loss="smooth_hinge", loss_params={"gamma": 1.0}, lam=0.0, l1=0.02)
    res = solve(X, y, n_partitions=2, tol=1e-9, **kw)
    assert res.converged and np.count_nonzero(res.coef) > 0
    prob = Problem(X, y, **kw)
    assert res.primal == pytest.approx(prob.primal(res.coef), rel=1e-12)
    assert res.dual == pytest.approx(prob.dual(res.dual_coef), rel=1e-11)


def test_refusals_name_the_alternative():
    X, y = _data(n=60)
    with pytest.raises(ValueError, match="l1_newton"):
        solve(X, y, loss="logistic", lam=0.0, l1=0.01, solver="cocoa", n_partitions=2)
    with pytest.raises(ValueError, match="smooth"):
        solve(X, y, loss="hinge", lam=1e-2, l1=0.01, solver="l1_newton", n_partitions=2)
    with pytest.raises(ValueError, match="non-smooth loss 'hinge' has no method on row"):
        solve(X, y, loss="hinge", lam=0.0, l1=0.01, n_partitions=2)
    with pytest.raises(ValueError, match="n_partitions=70 is larger than n=60"):
        solve(X, y, loss="logistic", lam=0.0, l1=0.01, n_partitions=70)


@pytest.mark.parametrize("loss, lam", [("logistic", 0.0), ("squared", 1e-3)])
def test_partitions_on_threads_are_the_same_numbers(part_thread_calls, monkeypatch, loss, lam):
    """``n_jobs=2`` alone splits the rows into 2 partitions and runs their
    calls on 2 threads: the run of ``n_partitions=2`` on one thread, number for
    number, and its certificate is exact."""
    from primaldual._util import threads as threads_util
    X, y = _data(seed=4, regression=loss == "squared")
    c = np.random.default_rng(2).uniform(0.5, 2.0, size=X.shape[0])
    kw = dict(loss=loss, lam=lam, l1=0.01, tol=1e-10, sample_weight=c, solver="l1_newton")
    one = solve(X, y, n_partitions=2, **kw)
    assert part_thread_calls == [] and one.trace[-1]["threads"] == 1
    two = solve(X, y, n_jobs=2, **kw)
    assert two.options["n_partitions"] == 2 and two.trace[-1]["threads"] == 2
    assert two.extras["threads_reason"].startswith("threads on: 2 partitions on 2 threads")
    assert one.extras["threads_reason"] == "one thread: n_jobs is 1"
    assert part_thread_calls and set(part_thread_calls) == {(2, 2)}
    assert two.converged and len(two.trace) == len(one.trace)
    np.testing.assert_array_equal(two.coef, one.coef)
    np.testing.assert_array_equal(two.dual_coef, one.dual_coef)
    assert [t["rel_gap"] for t in two.trace] == [t["rel_gap"] for t in one.trace]
    primal, dual = _by_hand(X, y, c, two.coef, two.dual_coef, lam, 0.01, loss)
    assert two.primal == pytest.approx(primal, rel=1e-12)
    assert two.dual == pytest.approx(dual, rel=1e-11)
    # below a million stored entries per thread (the real floor): one thread
    monkeypatch.setattr(threads_util, "MIN_VALUES_PER_THREAD", 1_000_000)
    small = solve(X, y, n_jobs=2, **kw)
    assert small.trace[-1]["threads"] == 1
    assert "under 1,000,000 for each of 2 threads" in small.extras["threads_reason"]
    np.testing.assert_array_equal(small.coef, one.coef)


# --------------------------------------------------------------------- Dask
def test_threads_with_a_client_are_refused(client):
    """Named with a client, l1_newton refuses n_jobs > 1; auto, and the Dask
    estimator (l1_newton by default for L1), take n_jobs as a permission."""
    from primaldual.dask import LinearClassifier as DaskLinearClassifier
    X, y = _data(n=60)
    res = solve(X, y, loss="logistic", lam=0.0, l1=0.01, client=client, n_jobs=2, tol=1e-8)
    assert res.solver == "l1_newton" and res.converged and res.extras["threads"] == 1
    assert res.extras["threads_reason"] == "one thread: each partition is a Dask actor"
    est = DaskLinearClassifier(client=client, loss="logistic", penalty="l1", C=1.0,
                               n_jobs=2).fit(X, y)
    assert bool(np.all(est.converged_)) and est.coef_.shape == (1, X.shape[1])
    with pytest.raises(ValueError, match="n_jobs=2 runs the partitions of an in-process "
                                         "l1_newton fit on threads.*leave n_jobs at 1 with "
                                         "client="):
        solve(X, y, loss="logistic", lam=0.0, l1=0.01, solver="l1_newton", client=client,
              n_jobs=2)


@pytest.mark.parametrize("loss, lam", [("logistic", 0.0), ("squared_hinge", 1e-3)])
def test_dask_equals_in_process(client, loss, lam):
    X, y = _data()
    c = np.random.default_rng(1).uniform(0.5, 2.0, size=X.shape[0])
    kw = dict(loss=loss, lam=lam, l1=0.01, tol=1e-11, sample_weight=c, n_partitions=2,
              random_state=0)
    local = solve(X, y, **kw)
    dist = solve(X, y, client=client, **kw)
    assert dist.solver == "l1_newton" and "l1 = 0.01 > 0" in dist.extras["solver_reason"]
    assert dist.converged and dist.rel_gap <= 1e-11
    assert_same_run(dist, local)


def test_worker_killed_mid_fit_is_recovered(own_client):
    client = own_client
    X, y = _data(n=300, seed=4)
    kw = dict(loss="logistic", lam=0.0, l1=0.01, tol=1e-10, n_partitions=2)
    addr = sorted(client.scheduler_info()["workers"])[-1]
    client.run(worker_dies_at, "l1", 3, "gram", workers=[addr])
    res = solve(X, y, client=client, round_timeout=60, **kw)
    assert res.trace[-1]["recoveries"] >= 1
    assert res.converged and res.rel_gap <= 1e-10
    local = solve(X, y, **kw)
    assert res.primal == pytest.approx(local.primal, rel=1e-9)


def test_dask_estimator_l1_in_memory_and_on_part_files(client, tmp_path):
    from sklearn.datasets import dump_svmlight_file
    from primaldual import LinearClassifier as Local
    from primaldual.dask import LinearClassifier
    X, y = _data(n=200, d=40, seed=6)
    labels = np.where(y > 0, "b", "a")
    kw = dict(penalty="l1", C=5.0, tol=1e-10, loss="logistic", random_state=0,
              solver_options={"n_partitions": 2})
    dist = LinearClassifier(client=client, **kw).fit(X, labels)
    assert dist.solver_ == "l1_newton" and dist.lam_ == 0.0 and dist.converged_
    local = Local(solver="l1_newton", **kw).fit(X, labels)
    np.testing.assert_allclose(dist.coef_, local.coef_, rtol=0, atol=1e-12)
    serial = Local(penalty="l1", C=5.0, tol=1e-10, loss="logistic").fit(X, labels)
    assert dist.primal_ == pytest.approx(serial.primal_, rel=1e-8)
    assert (dist.predict(X) == local.predict(X)).all()
    # part files read on the workers (alpha: the strength, W known on the workers only)
    paths = []
    for k, (a, b) in enumerate([(0, 100), (100, 200)]):
        p = tmp_path / f"part{k}.svm"
        dump_svmlight_file(X[a:b], y[a:b], str(p), zero_based=False)
        paths.append(str(p))
    alpha = 1.0 / (5.0 * X.shape[0])
    on_files = LinearClassifier(client=client, penalty="l1", alpha=alpha, tol=1e-10,
                                loss="logistic").fit(paths)
    assert on_files.l1_ == pytest.approx(alpha) and on_files.lam_ == 0.0
    np.testing.assert_allclose(on_files.coef_, dist.coef_, rtol=0, atol=1e-7)
    import dask.array as da
    on_dask = LinearClassifier(client=client, penalty="l1", alpha=alpha, tol=1e-10,
                               loss="logistic").fit(da.from_array(X.toarray(), chunks=(100, 40)),
                                                    da.from_array(y, chunks=100))
    np.testing.assert_allclose(on_dask.coef_, on_files.coef_, rtol=0, atol=1e-7)
    with pytest.raises(ValueError, match="needs alpha"):
        LinearClassifier(client=client, penalty="l1", loss="logistic").fit(paths)


def test_cli_scheduler_fits_l1(capsys, tmp_path, cluster, client):
    from sklearn.datasets import dump_svmlight_file
    from primaldual import cli
    X, y = _data(n=200, d=30, seed=8)
    path = tmp_path / "train.svm"
    dump_svmlight_file(X, y, str(path), zero_based=False)

    def run_main(*args):
        code = cli.main([str(a) for a in args])
        return (code, *capsys.readouterr())
    common = ["--loss", "logistic", "--penalty", "l1", "--lam", "0.01", "--tol", "1e-10",
              "--json"]
    code, out, err = run_main("fit", path, "--scheduler", cluster.scheduler_address,
                              "--partitions", "2", "--parts-dir", tmp_path / "parts", *common)
    assert code == 0, err
    rec = json.loads(out.strip().splitlines()[-1])
    assert rec["solver"] == "l1_newton" and rec["converged"] and rec["partitions"] == 2
    code, out, err = run_main("fit", path, *common)
    assert code == 0, err
    local = json.loads(out.strip().splitlines()[-1])
    assert rec["primal"] == pytest.approx(local["primal"], rel=1e-9)
    code, out, err = run_main("fit", path, "--scheduler", cluster.scheduler_address,
                              "--parts-dir", tmp_path / "p2", "--loss", "logistic",
                              "--penalty", "l1")
    assert code == 1 and "takes its strength from --lam" in err
