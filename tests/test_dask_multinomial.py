"""Multinomial logistic regression on row partitions and on Dask
(``solver="multinomial_newton"`` with ``n_partitions`` or ``client``):

* partitions in process reach the serial optimum, checked against scipy's
  L-BFGS-B on the exact primal, and the certificate is recomputed by hand;
* the partitions' dual start is CoCoA+ (the joined coef is coef(alpha), the
  dual rises every round);
* Dask equals in process with the same partitions to 1e-12, check by check,
  with CG and with the explicit Hessian, with sample weights;
* a worker SIGKILLed inside a Hessian-vector product is recovered and the
  fit ends at the in-process optimum;
* the Dask estimator fits in-memory arrays, Dask arrays and LIBSVM part
  files read on the workers, and equals the local estimator;
* ``primaldual fit --loss multinomial --scheduler`` trains on part files read
  by the workers and equals the local fit;
* the multiclass methods that need every row in one process refuse
  partitions by name.
"""
from __future__ import annotations

import json

import numpy as np
import pytest
import scipy.optimize
import scipy.sparse as sp

import distributed  # noqa: F401  (the Dask extra; the fixtures need it)

from conftest import assert_same_run, worker_dies_at  # noqa: E402

from primaldual import solve  # noqa: E402
from primaldual.multiclass import MulticlassProblem, logsumexp_rows  # noqa: E402


def _data(n=240, d=30, K=4, seed=3, dense=False):
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=0.3, random_state=seed, format="csr")
    X.data = rng.normal(size=X.nnz)
    W = rng.normal(size=(d, K))
    y = np.argmax(X @ W + 0.5 * rng.gumbel(size=(n, K)), axis=1)
    return (X.toarray() if dense else X), y


def _scipy_optimum(X, y, lam, c):
    """min over coef of the exact weighted multinomial primal by L-BFGS-B (an
    independent reference)."""
    n, d = X.shape
    K = int(y.max()) + 1
    Y = np.eye(K)[y]
    W = c.sum()

    def fg(flat):
        B = flat.reshape(d, K)
        Z = np.asarray(X @ B)
        lse, P = logsumexp_rows(Z)
        f = c @ (lse - Z[np.arange(n), y]) / W + 0.5 * lam * flat @ flat
        g = np.asarray(X.T @ ((P - Y) * c[:, None])) / W + lam * B
        return f, g.ravel()
    r = scipy.optimize.minimize(fg, np.zeros(d * K), jac=True, method="L-BFGS-B",
                                options={"ftol": 0, "gtol": 1e-12, "maxiter": 20000})
    return r.x.reshape(d, K)


def _distance_bound(a, b, lam):
    """lam-strong convexity: ``||coef - coef*||^2 <= 2 gap / lam`` for each
    result, with gaps floored at the rounding of the objective."""
    def radius(r):
        return np.sqrt(2.0 * max(r.gap, 1e-14 * abs(r.primal)) / lam)
    return radius(a) + radius(b)


@pytest.mark.parametrize("K", [1, 2, 3])
def test_partitions_in_process_reach_the_optimum_and_certify(K):
    X, y = _data()
    c = np.random.default_rng(0).uniform(0.5, 2.0, size=X.shape[0])
    kw = dict(loss="multinomial", lam=1e-2, tol=1e-12, random_state=0, sample_weight=c,
              solver="multinomial_newton", start="zero")
    serial = solve(X, y, **kw)
    part = solve(X, y, n_partitions=K, **kw)
    assert part.converged and part.rel_gap <= 1e-12
    if K == 1:                     # one partition is the serial solver from zero
        np.testing.assert_array_equal(part.coef, serial.coef)
    assert np.linalg.norm(part.coef - serial.coef) <= 1e-9 * np.linalg.norm(serial.coef)
    prob = MulticlassProblem(X, y, loss="multinomial", lam=1e-2, sample_weight=c)
    assert part.primal == pytest.approx(prob.primal(part.coef), rel=1e-12)
    assert part.dual == pytest.approx(prob.dual(part.dual_coef), rel=1e-12)
    ref = _scipy_optimum(X, y, 1e-2, c)
    assert np.linalg.norm(part.coef - ref) <= 1e-6 * np.linalg.norm(ref)


def test_partition_start_is_cocoa_and_equals_on_dask_or_in_process():
    """``start="dual_cd"`` on partitions: rounds of CoCoA+ (adding, sigma' = K)
    on the dual; a round's joined coef is coef(alpha) of the joined blocks,
    so the dual of that point rises round by round, and the fit certifies the
    serial optimum."""
    from primaldual.distributed.multinomial_block import MultinomialBlock
    X, y = _data()
    lam = 1e-2
    prob = MulticlassProblem(X, y, loss="multinomial", lam=lam)
    block = MultinomialBlock(X, y, prob.sample_weight, [0, 100, 240], prob.K)
    coef = np.zeros(prob.coef_shape())
    duals = [prob.dual(np.zeros((prob.n, prob.K)))]
    for r in range(4):
        parts = block.dual_start(coef, lam, prob.W, 1, 2.0, 11 + r)
        assert all(status == 0 for status, _ in parts)
        coef = coef + parts[0][1] + parts[1][1]
        alpha = np.concatenate([p.Y - p.Pdual for p in block.parts])
        np.testing.assert_allclose(coef, prob.w_of(alpha), rtol=0, atol=1e-12)
        duals.append(prob.dual(alpha))
    assert all(b > a for a, b in zip(duals, duals[1:]))
    kw = dict(loss="multinomial", lam=lam, tol=1e-10, random_state=0, start="dual_cd",
              start_epochs=5)
    res = solve(X, y, n_partitions=2, **kw)
    serial = solve(X, y, **kw)
    # the first check is at w = 0; the next after the start's 5 rounds (2 passes each)
    assert res.converged and res.trace[1]["epoch"] >= 11 and res.trace[1]["newton_iter"] == 0
    assert np.linalg.norm(res.coef - serial.coef) <= _distance_bound(res, serial, lam)
    with pytest.raises(ValueError, match="n_partitions=300 is larger than n=240"):
        solve(X, y, loss="multinomial", lam=1e-2, n_partitions=300)


@pytest.mark.parametrize("loss, solver", [("crammer_singer", "crammer_singer_dual"),
                                          ("multinomial", "multinomial_dual_cd")])
def test_methods_of_one_process_refuse_partitions(loss, solver):
    X, y = _data(n=60)
    with pytest.raises(ValueError, match="runs in this process only"):
        solve(X, y, loss=loss, lam=1e-2, solver=solver, n_partitions=2)


# --------------------------------------------------------------------- Dask
@pytest.mark.parametrize("opts", [dict(hessian="matvec", K=2),
                                  dict(hessian="matvec", K=3, dense=True),
                                  dict(hessian="explicit", K=2, dense=True),
                                  dict(hessian="matvec", K=2, start="dual_cd")])
def test_dask_equals_in_process(client, opts):
    opts = dict(opts)
    K, dense = opts.pop("K"), opts.pop("dense", False)
    X, y = _data(dense=dense)
    c = np.random.default_rng(1).uniform(0.5, 2.0, size=X.shape[0])
    kw = dict(loss="multinomial", lam=1e-3, tol=1e-11, random_state=0, sample_weight=c,
              n_partitions=K, **opts)
    local = solve(X, y, **kw)
    dist = solve(X, y, client=client, **kw)
    assert dist.converged and dist.rel_gap <= 1e-11
    assert_same_run(dist, local)


def _split_columns(n=240, d=30, seed=5):
    """Sparse rows whose first half uses columns 0..19 and second half columns
    10..29: each of two partitions works on 20 of the 30 columns."""
    X, y = _data(n=n, d=d, seed=seed)
    X = X.tolil()
    X[: n // 2, 20:] = 0
    X[n // 2:, :10] = 0
    return sp.csr_matrix(X), y


@pytest.mark.parametrize("hessian", ["matvec", "explicit"])
def test_partitions_on_their_own_columns(client, hessian):
    """A sparse partition keeps the columns its rows use and is sent and
    returns only those rows of coef, directions and parts: the fit equals the
    serial one (certificate recomputed by hand) and Dask equals in process."""
    from primaldual.distributed.multinomial_block import MultinomialBlock
    X, y = _split_columns()
    X.eliminate_zeros()
    prob = MulticlassProblem(X, y, loss="multinomial", lam=1e-3)
    block = MultinomialBlock(X, y, prob.sample_weight, [0, 120, 240], prob.K)
    assert [c.tolist() for c in block.columns()] == [list(range(20)), list(range(10, 30))]
    kw = dict(loss="multinomial", lam=1e-3, tol=1e-11, random_state=0, hessian=hessian,
              start="dual_cd", start_epochs=3)
    serial = solve(X, y, **kw)
    local = solve(X, y, n_partitions=2, **kw)
    dist = solve(X, y, client=client, n_partitions=2, **kw)
    assert local.converged and dist.converged
    assert local.primal == pytest.approx(prob.primal(local.coef), rel=1e-12)
    assert local.dual == pytest.approx(prob.dual(local.dual_coef), rel=1e-12)
    assert np.linalg.norm(local.coef - serial.coef) <= _distance_bound(local, serial, 1e-3)
    np.testing.assert_allclose(dist.coef, local.coef, rtol=0, atol=1e-12)
    assert [r["primal"] for r in dist.trace] == pytest.approx(
        [r["primal"] for r in local.trace], rel=1e-12)


@pytest.mark.parametrize("method, start", [("hess_vec", "zero"), ("dual_start", "dual_cd")])
def test_worker_killed_mid_fit_is_recovered(own_client, method, start):
    """Killed inside a CG step: the lost worker's partition is re-created, its
    scores recomputed from the client's coef, and the step made again.  Killed
    inside a round of the dual start: its block of alpha comes back at zero
    (a weaker start only).  Either way the fit certifies the in-process
    optimum."""
    client = own_client
    X, y = _data(n=300, d=40, seed=4)
    lam = 1e-3
    kw = dict(loss="multinomial", lam=lam, tol=1e-10, random_state=0, n_partitions=2,
              hessian="matvec", start=start, start_epochs=6)
    addr = sorted(client.scheduler_info()["workers"])[-1]
    client.run(worker_dies_at, "multinomial", 4, method, workers=[addr])
    res = solve(X, y, client=client, round_timeout=60, **kw)
    assert res.trace[-1]["recoveries"] >= 1
    assert res.converged and res.rel_gap <= 1e-10
    local = solve(X, y, **kw)
    assert np.linalg.norm(res.coef - local.coef) <= _distance_bound(res, local, lam)


def test_dask_estimator_fits_multinomial_in_memory(client):
    from primaldual import LinearClassifier as Local
    from primaldual.dask import LinearClassifier
    X, y = _data(n=200, d=20, K=3, seed=6)
    labels = np.array(["a", "b", "c"])[y]
    kw = dict(loss="multinomial", C=10.0, tol=1e-10, random_state=0, solver="newton",
              solver_options={"n_partitions": 2})
    dist = LinearClassifier(client=client, **kw).fit(X, labels)
    local = Local(**kw).fit(X, labels)
    assert list(dist.classes_) == ["a", "b", "c"]
    assert dist.coef_.shape == (3, 20)
    np.testing.assert_allclose(dist.coef_, local.coef_, rtol=0, atol=1e-10)
    np.testing.assert_allclose(dist.predict_proba(X), local.predict_proba(X), atol=1e-10)
    assert (dist.predict(X) == local.predict(X)).all()


def test_dask_estimator_default_solver_for_multiclass_losses(client):
    """Without ``solver``, the Dask estimator runs a multiclass loss on its Dask
    solver (``newton``: multinomial_newton; ``cocoa``: crammer_singer_cocoa) and
    reaches the local estimator's optimum; it used to name ``cocoa`` for every
    loss without an L1 part and refuse the multinomial loss."""
    from primaldual import LinearClassifier as Local
    from primaldual.dask import LinearClassifier
    X, y = _data(n=200, d=20, K=3, seed=6)
    for loss, name, tol in (("multinomial", "multinomial_newton", 1e-10),
                            ("crammer_singer", "crammer_singer_cocoa", 1e-6)):
        dist = LinearClassifier(client=client, loss=loss, C=1.0, tol=tol).fit(X, y)
        local = Local(loss=loss, C=1.0, tol=tol).fit(X, y)
        assert dist.solver_ == name and bool(np.all(dist.converged_))
        assert dist.primal_ == pytest.approx(local.primal_, rel=3 * tol)


def _local_model(X, labels, sample_weight=None, **kw):
    from primaldual import LinearClassifier as Local
    return Local(loss="multinomial", tol=1e-10, **kw).fit(X, labels,
                                                          sample_weight=sample_weight)


def test_dask_arrays_on_the_workers(client):
    """Row chunks of Dask arrays become partitions on the workers (the rows
    never pass through the client); raw labels are mapped in sorted order."""
    import dask.array as da
    from primaldual.dask import LinearClassifier
    X, y = _data(n=210, d=15, K=3, seed=7, dense=True)
    labels = np.array([2.0, 5.0, 9.0])[y]
    c = np.random.default_rng(2).uniform(0.5, 2.0, size=210)
    clf = LinearClassifier(loss="multinomial", solver="newton", client=client, tol=1e-10)
    clf.fit(da.from_array(X, chunks=(70, 15)), da.from_array(labels, chunks=70),
            sample_weight=da.from_array(c, chunks=70))
    assert list(clf.classes_) == [2.0, 5.0, 9.0]
    assert clf.trace_[-1][-1]["partitions"] == 3 and clf.converged_
    # the local estimator on the same rows, weights and intercept column
    ref = _local_model(X, labels, sample_weight=c)
    np.testing.assert_allclose(clf.coef_, ref.coef_, rtol=0, atol=1e-8)
    np.testing.assert_allclose(clf.intercept_, ref.intercept_, rtol=0, atol=1e-8)
    assert clf.dual_coef_.shape == (3, 210)
    assert (clf.predict(X) == ref.predict(X)).all()


def test_part_files_read_on_the_workers(client, tmp_path):
    from sklearn.datasets import dump_svmlight_file
    from primaldual.dask import LinearClassifier
    X, y = _data(n=180, d=12, K=4, seed=8)
    labels = y + 1.0                                    # LIBSVM's 1..K
    paths = []
    for k, (a, b) in enumerate([(0, 100), (100, 180)]):
        p = tmp_path / f"part{k}.svm"
        dump_svmlight_file(X[a:b], labels[a:b], str(p), zero_based=False)
        paths.append(str(p))
    clf = LinearClassifier(loss="multinomial", solver="newton", client=client, tol=1e-10,
                           fit_intercept=False).fit(paths)
    ref = _local_model(X, labels, fit_intercept=False)
    assert list(clf.classes_) == [1.0, 2.0, 3.0, 4.0]
    np.testing.assert_allclose(clf.coef_, ref.coef_, rtol=0, atol=1e-8)
    assert clf.gap_ <= 1e-10 * abs(clf.primal_) + 1e-15
    # without solver, the multinomial loss runs on its Dask solver: the same fit
    default = LinearClassifier(loss="multinomial", client=client, tol=1e-10,
                               fit_intercept=False).fit(paths)
    np.testing.assert_array_equal(default.coef_, clf.coef_)
    with pytest.raises(ValueError, match="set solver='newton'"):
        LinearClassifier(loss="multinomial", solver="cocoa", client=client).fit(paths)
    with pytest.raises(ValueError, match="set solver='cocoa'"):
        LinearClassifier(loss="crammer_singer", solver="newton", client=client).fit(paths)


@pytest.mark.slow
def test_cli_scheduler_fits_multinomial_on_part_files(capsys, tmp_path, cluster, client):
    """``fit --loss multinomial --scheduler``: the workers read the part files
    and multinomial_newton trains one problem; it equals the local fit, and
    the model file predicts as the local one (classes and intercept included)."""
    from sklearn.datasets import dump_svmlight_file
    from primaldual import cli, load_model
    rng = np.random.default_rng(3)
    X = rng.normal(size=(240, 6))
    y = np.argmax(X[:, :3] + 0.3 * rng.normal(size=(240, 3)), axis=1) + 1   # labels 1..3
    path = tmp_path / "three.svm"
    dump_svmlight_file(X, y, str(path), zero_based=False)

    def run_main(capsys, *args):
        code = cli.main([str(a) for a in args])
        return (code, *capsys.readouterr())
    model, local_model = tmp_path / "d.npz", tmp_path / "l.npz"
    common = ["--loss", "multinomial", "--lam", "1e-2", "--bias", "1", "--tol", "1e-10",
              "--json"]
    code, out, err = run_main(capsys, "fit", path, "--scheduler", cluster.scheduler_address,
                              "--partitions", "2", "--parts-dir", tmp_path / "parts",
                              "--model", model, "--test", path, *common)
    assert code == 0, err
    rec = json.loads(out.strip().splitlines()[-1])
    assert rec["solver"] == "multinomial_newton" and rec["partitions"] == 2
    assert rec["converged"] and "3 classes in the parts (1, 2, 3)" in err
    code, out, err = run_main(capsys, "fit", path, "--model", local_model, *common)
    assert code == 0, err
    local = json.loads(out.strip().splitlines()[-1])
    assert rec["primal"] == pytest.approx(local["primal"], rel=1e-9)
    dist, ref = load_model(model), load_model(local_model)
    np.testing.assert_array_equal(dist.classes_, ref.classes_)
    np.testing.assert_allclose(dist.coef_, ref.coef_, atol=1e-7)
    np.testing.assert_allclose(dist.intercept_, ref.intercept_, atol=1e-7)
    assert (dist.predict(X) == ref.predict(X)).all()
    assert rec["test_accuracy"] == pytest.approx(float(np.mean(ref.predict(X) == y)))
    code, out, err = run_main(capsys, "fit", path, "--scheduler", cluster.scheduler_address,
                              "--parts-dir", tmp_path / "p2", "--loss", "multinomial",
                              "--solver", "cocoa")
    assert code == 1 and "with multinomial_newton; --solver cocoa does not run" in err
