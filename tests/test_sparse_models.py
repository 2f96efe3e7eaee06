"""Sparse models (issue 33 item 1; docs/sparse-models.md): the solver ``l1cd`` for
L1 and elastic-net problems with ``lam >= 0``.

* the optimum equals cvxpy/Clarabel's to 1e-6 relative objective (logistic,
  squared hinge, squared; pure L1 and elastic net; sample weights);
* the reported primal, dual and gap are recomputed here from the formulas of
  docs/conventions.md §1 in plain numpy;
* Gap Safe screening never removes a feature that is nonzero at the reference
  optimum, along a path of 20 values (dynamic, inside the solver, and sequential,
  from the previous point of the path);
* LIBLINEAR -s 5 / -s 6 (liblinear-official) and ours agree in accuracy on real sets;
* the surfaces: ``solver="auto"``, ``penalty="l1"``, ``--penalty l1``, resume.
"""
from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest
import scipy.sparse as sp

import primaldual as pd
from primaldual import Problem
from primaldual.regpath import lam_max
from primaldual.solvers.sparse import gap_safe_mask

from conftest import load_binary, make_classification_data, optional_import, shared_file

LOSSES = ("logistic", "squared_hinge", "squared")


def _data(loss, n=120, d=25, seed=0, weights=False):
    X, y = make_classification_data(n=n, d=d, density=0.3, seed=seed)
    if loss == "squared":
        rng = np.random.default_rng(seed + 1)
        y = X @ rng.standard_normal(d) + 0.3 * rng.standard_normal(n)
    c = np.random.default_rng(seed + 2).uniform(0.2, 3.0, n) if weights else None
    return X, y, c


def _reference(X, y, loss, lam, l1, c=None):
    """The optimum by cvxpy with Clarabel (an interior-point conic solver)."""
    cp = optional_import("cvxpy", "cvxpy is in the test extra")
    optional_import("clarabel", "clarabel is in the test extra")
    n, d = X.shape
    cw = np.ones(n) / n if c is None else c / c.sum()
    Xd = X.toarray() if sp.issparse(X) else np.asarray(X)
    w = cp.Variable(d)
    a = Xd @ w
    if loss == "logistic":
        data = cw @ cp.logistic(-cp.multiply(y, a))
    elif loss == "squared_hinge":
        data = cw @ cp.square(cp.pos(1 - cp.multiply(y, a)))
    elif loss == "smooth_hinge":
        # the smoothed hinge (gamma = 1) is the Moreau envelope of the hinge:
        # min_u max(0, 1 - u) + (u - y a)^2 / 2
        u = cp.Variable(n)
        data = cw @ (cp.pos(1 - u) + cp.square(u - cp.multiply(y, a)) / 2)
    else:
        data = cw @ cp.square(a - y) / 2
    obj = data + l1 * cp.norm1(w) + (lam / 2) * cp.sum_squares(w)
    prob = cp.Problem(cp.Minimize(obj))
    prob.solve(solver="CLARABEL", tol_gap_abs=1e-11, tol_gap_rel=1e-11, tol_feas=1e-11,
               max_iter=500)
    return np.asarray(w.value), float(prob.value)


def _by_hand(X, y, loss, lam, l1, c, w, alpha):
    """P(w) and D(alpha) from the table of docs/conventions.md §1, in numpy."""
    n = X.shape[0]
    c = np.ones(n) if c is None else c
    W = c.sum()
    a = np.asarray(X @ w).ravel()
    if loss == "logistic":
        phi = np.logaddexp(0.0, -y * a)
        b = alpha * y
        assert np.all((b >= 0) & (b <= 1))
        with np.errstate(divide="ignore", invalid="ignore"):
            ent = -(np.where(b > 0, b * np.log(b), 0.0)
                    + np.where(b < 1, (1 - b) * np.log(1 - b), 0.0))
        conj = ent
    elif loss == "squared_hinge":
        phi = np.maximum(0.0, 1 - y * a) ** 2
        assert np.all(alpha * y >= 0)
        conj = alpha * y - alpha ** 2 / 4
    else:
        phi = (a - y) ** 2 / 2
        conj = alpha * y - alpha ** 2 / 2
    primal = c @ phi / W + lam / 2 * w @ w + l1 * np.abs(w).sum()
    v = np.asarray(X.T @ (c * alpha)).ravel() / W
    if lam == 0:
        assert np.abs(v).max() <= l1 * (1 + 1e-12)      # inside the indicator's domain
        gstar = 0.0
    else:
        gstar = np.sum(np.maximum(np.abs(v) - l1, 0.0) ** 2) / (2 * lam)
    return primal, c @ conj / W - gstar


@pytest.mark.parametrize("loss", LOSSES)
@pytest.mark.parametrize("lam_factor", [0.0, 0.05])
@pytest.mark.parametrize("weights", [False, True])
def test_optimum_equals_cvxpy_and_gap_is_exact(loss, lam_factor, weights):
    X, y, c = _data(loss, weights=weights, seed=3)
    lmax = lam_max(X, y, loss, penalty="l1", sample_weight=c)
    l1 = lmax / 8
    lam = lam_factor * lmax
    res = pd.solve(X, y, loss=loss, lam=lam, l1=l1, solver="l1cd", tol=1e-9,
                   sample_weight=c)
    assert res.converged and res.solver == "l1cd"
    _, p_ref = _reference(X, y, loss, lam, l1, c)
    assert abs(res.primal - p_ref) <= 1e-6 * abs(p_ref)
    assert res.dual <= p_ref + 1e-9 * abs(p_ref)          # weak duality against the reference
    primal, dual = _by_hand(X, y, loss, lam, l1, c, res.coef, res.dual_coef)
    assert primal == pytest.approx(res.primal, rel=1e-12, abs=1e-14)
    assert dual == pytest.approx(res.dual, rel=1e-12, abs=1e-14)
    assert res.gap == pytest.approx(primal - dual, rel=1e-6, abs=1e-14)
    assert (res.gap) / res.primal <= 1e-9


@pytest.mark.realdata
@pytest.mark.parametrize("loss", ["logistic", "squared_hinge"])
def test_heart_scale_matches_cvxpy(loss):
    X, y = load_binary("heart_scale")
    l1 = lam_max(X, y, loss, penalty="l1") / 20
    res = pd.solve(X, y, loss=loss, lam=0.0, l1=l1, tol=1e-9)
    assert res.solver == "l1cd" and res.converged
    _, p_ref = _reference(X, y, loss, 0.0, l1)
    assert abs(res.primal - p_ref) <= 1e-6 * abs(p_ref)
    primal, dual = _by_hand(X, y, loss, 0.0, l1, None, res.coef, res.dual_coef)
    assert primal == pytest.approx(res.primal, rel=1e-12)
    assert dual == pytest.approx(res.dual, rel=1e-12)


def test_lasso_matches_scikit_learn():
    """loss="squared", lam=0 is scikit-learn's Lasso without intercept."""
    from sklearn.linear_model import Lasso
    X, y, _ = _data("squared", n=150, d=40, seed=5)
    l1 = lam_max(X, y, "squared", penalty="l1") / 30
    res = pd.solve(X, y, loss="squared", lam=0.0, l1=l1, tol=1e-10)
    sk = Lasso(alpha=l1, fit_intercept=False, tol=1e-14, max_iter=100000).fit(X.toarray(), y)
    prob = Problem(X, y, loss="squared", lam=0.0, l1=l1)
    assert abs(res.primal - prob.primal(sk.coef_)) <= 1e-9 * res.primal
    np.testing.assert_allclose(res.coef, sk.coef_, atol=1e-5)


@pytest.mark.parametrize("loss", LOSSES)
def test_screening_keeps_every_feature_of_the_optimum_along_a_path(loss):
    """20 values from l1_max down to l1_max/100: the features the solver screened
    (dynamic) and those the previous point screens at the next value
    (sequential) are all zero in the reference optimum."""
    X, y, c = _data(loss, n=100, d=30, seed=11, weights=True)
    lmax = lam_max(X, y, loss, penalty="l1", sample_weight=c)
    prev = None
    screened_any = 0
    for l1 in lmax * np.geomspace(1.0, 1e-2, 20):
        w_ref, _ = _reference(X, y, loss, 0.0, l1, c)
        support = np.abs(w_ref) > 1e-7 * max(1.0, np.abs(w_ref).max())
        if prev is not None:                       # sequential: previous optimum, new l1
            prob = Problem(X, y, loss=loss, lam=0.0, l1=l1, sample_weight=c)
            cert = prob.primal_certificate(prev.coef)
            colnorm = np.sqrt(np.asarray(X.multiply(X).T @ (c / c.sum())).ravel())
            seq = gap_safe_mask(cert.v, colnorm, cert.gap, prob.loss.smoothness, l1)
            assert not np.any(seq & support), (l1, np.flatnonzero(seq & support))
            screened_any += int(seq.sum())
        res = pd.solve(X, y, loss=loss, lam=0.0, l1=l1, solver="l1cd", tol=1e-8,
                       sample_weight=c, warm_start=prev)
        dyn = res.state.arrays["screened"]
        assert not np.any(dyn & support), (l1, np.flatnonzero(dyn & support))
        assert not np.any(res.coef[dyn])
        prev = res
    assert screened_any > 0                        # the rule does remove features


def test_screening_changes_nothing_but_the_work():
    X, y, _ = _data("logistic", n=200, d=60, seed=2)
    l1 = lam_max(X, y, "logistic", penalty="l1") / 5
    on = pd.solve(X, y, loss="logistic", lam=0.0, l1=l1, tol=1e-9)
    off = pd.solve(X, y, loss="logistic", lam=0.0, l1=l1, tol=1e-9, screening=False,
                   working_set=False)
    assert on.state.arrays["screened"].sum() > 0
    assert abs(on.primal - off.primal) <= 2e-9 * on.primal
    np.testing.assert_array_equal(on.coef != 0, off.coef != 0)


def test_whole_problem_certificate_bounds_the_screened_columns_and_stays_exact():
    """The certificate of the whole problem reads a screened column only when
    the bound recorded at its screening, widened by the Gap Safe radius of the
    current gap, does not put it inside the box: here none is read at the end,
    every recorded bound holds at cvxpy's optimum, and the reported dual,
    recomputed by hand over every column, is exact."""
    from primaldual.solvers.sparse import SparseCDSolver
    X, y, _ = _data("logistic", n=150, d=200, seed=7)
    l1 = lam_max(X, y, "logistic", penalty="l1") / 4
    prob = Problem(X, y, loss="logistic", lam=0.0, l1=l1)
    solver = SparseCDSolver.create(prob, tol=1e-9, max_epochs=1000, random_state=0)
    res = solver.run()
    assert res.converged
    screened, bound = res.state.arrays["screened"], res.state.arrays["bound"]
    assert screened.sum() > 100
    solver._check(full=False)                  # the restricted problem's certificate
    before = solver.feature_accesses
    cert = solver.certificate()                # made the whole problem's
    assert solver.feature_accesses == before   # no column read
    primal, dual = _by_hand(X, y, "logistic", 0.0, l1, None, cert.w, cert.alpha)
    assert primal == pytest.approx(cert.primal, rel=1e-12)
    assert dual == pytest.approx(cert.dual, rel=1e-12)
    w_ref, _ = _reference(X, y, "logistic", 0.0, l1)
    a = np.asarray(X @ w_ref).ravel()
    v_ref = np.asarray(X.T @ (y / (1 + np.exp(y * a)))).ravel() / X.shape[0]
    assert np.all(np.abs(v_ref[screened]) <= bound[screened] + 1e-6 * l1)
    assert np.all(bound[screened] < l1)


def test_working_set_rows_filtered_from_x_equal_those_transposed_from_its_columns():
    """The two constructions of the working set by rows (filtered from the rows
    of X, transposed from its columns) give the same arrays, local indices
    increasing along each row."""
    from primaldual.kernels.l1bounds import cols_to_rows, filter_rows
    from primaldual.solvers.sparse.solver import csc_columns
    X, y, _ = _data("logistic", n=80, d=30, seed=9)
    X = sp.csr_matrix(X)
    prob = Problem(X, y, loss="logistic", lam=0.0, l1=0.01)
    ws = np.array([0, 3, 4, 10, 17, 29], dtype=np.int64)
    local = np.full(prob.d, -1, dtype=np.int64)
    local[ws] = np.arange(ws.size)
    a = (np.zeros(prob.nnz), np.zeros(prob.nnz, np.int32), np.zeros(prob.n + 1, np.int64))
    b = (np.zeros(prob.nnz), np.zeros(prob.nnz, np.int32), np.zeros(prob.n + 1, np.int64))
    assert filter_rows(X.data, X.indices, X.indptr, local, *a) == X.nnz
    cols_to_rows(csc_columns(prob), ws, prob.n, *b)
    np.testing.assert_array_equal(a[2], b[2])
    m = a[2][-1]
    assert m == np.isin(X.indices, ws).sum()
    np.testing.assert_array_equal(a[0][:m], b[0][:m])
    np.testing.assert_array_equal(a[1][:m], b[1][:m])
    dense = X[:, ws].toarray()
    for i in range(prob.n):
        k = a[1][a[2][i]:a[2][i + 1]]
        assert np.all(np.diff(k) > 0)
        np.testing.assert_array_equal(dense[i, k], a[0][a[2][i]:a[2][i + 1]])


def test_columns_and_norms_from_csr_equal_scipys_transpose_and_numpys_norms():
    """The one-pass transposition of a CSR matrix (with empty rows and columns,
    sample weights) gives scipy's CSC arrays exactly and the weighted column
    norms ``sqrt(sum_i c_i x_ij^2 / W)`` computed in numpy; dense input, which
    scipy transposes, gives the same."""
    from primaldual.solvers.sparse.solver import columns_and_norms
    rng = np.random.default_rng(4)
    X = sp.random(60, 40, density=0.15, format="csr", random_state=5)
    X = sp.csr_matrix(X.multiply(rng.standard_normal(X.shape)) + X)
    empty = (np.arange(60)[:, None] % 7 == 0) | (np.arange(40)[None, :] == 11)
    X = sp.csr_matrix(np.where(empty, 0.0, X.toarray()))
    y = np.where(rng.random(60) < 0.5, -1.0, 1.0)
    c = rng.uniform(0.5, 2.0, 60)
    ref = X.tocsc()
    ref.sort_indices()
    want = np.sqrt(np.asarray(ref.multiply(ref).T @ c).ravel() / c.sum())
    assert want[11] == 0.0 and np.diff(X.indptr).min() == 0
    for data in (X, X.toarray()):
        prob = Problem(data, y, loss="logistic", lam=0.0, l1=0.01, sample_weight=c)
        assert sp.issparse(prob.X) == (data is X)
        cols, norm = columns_and_norms(prob)
        np.testing.assert_array_equal(cols.indptr, ref.indptr)
        np.testing.assert_array_equal(cols.indices, ref.indices)
        np.testing.assert_array_equal(cols.data, ref.data)
        np.testing.assert_allclose(norm, want, rtol=1e-14, atol=0)


def test_auto_takes_lam_zero_and_l1():
    X, y, _ = _data("logistic")
    res = pd.solve(X, y, loss="logistic", lam=0.0, l1=0.01)
    assert res.solver == "l1cd" and res.converged
    res = pd.solve(X, y, loss="hinge", lam=0.0, l1=0.01, max_epochs=5)
    assert res.solver == "spdc"
    with pytest.raises(ValueError, match="lam must be > 0 for solver='sdca'.*l1cd"):
        pd.solve(X, y, loss="logistic", lam=0.0, l1=0.01, solver="sdca")
    with pytest.raises(ValueError, match="does not support loss='hinge'"):
        pd.solve(X, y, loss="hinge", lam=0.0, l1=0.01, solver="l1cd")


def test_problem_primal_certificate_is_feasible_for_pure_l1():
    X, y, _ = _data("logistic")
    prob = Problem(X, y, loss="logistic", lam=0.0, l1=0.01)
    w = np.random.default_rng(0).standard_normal(X.shape[1])
    cert = prob.primal_certificate(w)
    assert np.isfinite(cert.dual) and cert.gap >= 0
    assert np.abs(prob.dual_image(cert.alpha)).max() <= 0.01 * (1 + 1e-12)
    assert cert.dual == pytest.approx(prob.dual(cert.alpha), rel=1e-12)


def test_warm_start_and_resume_reproduce_the_run(tmp_path):
    X, y, _ = _data("squared_hinge", n=150, d=40, seed=4)
    l1 = lam_max(X, y, "squared_hinge", penalty="l1") / 20
    kw = dict(loss="squared_hinge", lam=0.0, l1=l1, solver="l1cd", tol=1e-9, p0=5)
    full = pd.solve(X, y, **kw)
    part = pd.solve(X, y, **kw, max_epochs=max(1.0, full.n_epochs / 2))
    assert not part.converged
    resumed = pd.solve(X, y, **kw, resume=part)
    # (bitwise equality of a checkpointed run and the uninterrupted one is
    # tests/test_reliability_resume.py's; here the first run's max_epochs cut a solve)
    assert resumed.converged and resumed.n_epochs > part.n_epochs
    assert abs(resumed.primal - full.primal) <= 1e-9 * full.primal
    warm = pd.solve(X, y, **kw, warm_start=full)
    assert warm.converged and warm.n_epochs <= 2.0 + 1e-9


def test_estimator_penalty_l1_is_the_pure_l1_problem():
    X, y, _ = _data("logistic", n=150, d=20, seed=6)
    est = pd.LinearClassifier(loss="logistic", penalty="l1", alpha=0.02,
                              fit_intercept=False, tol=1e-9).fit(X, y)
    assert est.lam_ == 0.0 and est.l1_ == 0.02 and est.solver_ == "l1cd"
    res = pd.solve(X, y, loss="logistic", lam=0.0, l1=0.02, tol=1e-9)
    np.testing.assert_allclose(est.coef_.ravel(), res.coef, atol=1e-6)
    en = pd.LinearClassifier(loss="logistic", penalty="elasticnet", l1_ratio=0.25,
                             alpha=0.02, fit_intercept=False, tol=1e-9).fit(X, y)
    assert en.lam_ == pytest.approx(0.015) and en.l1_ == pytest.approx(0.005)
    with pytest.raises(ValueError, match="l1_ratio"):
        pd.LinearClassifier(loss="logistic", penalty="elasticnet").fit(X, y)
    with pytest.raises(ValueError, match="penalty must be"):
        pd.LinearClassifier(loss="logistic", penalty="l3").fit(X, y)
    lasso = pd.LinearRegressor(penalty="l1", alpha=0.05, fit_intercept=False, tol=1e-9)
    Xr, yr, _ = _data("squared", seed=7)
    assert np.count_nonzero(lasso.fit(Xr, yr).coef_) < Xr.shape[1]


@pytest.mark.realdata
@pytest.mark.parametrize("loss,s", [("logistic", 6), ("squared_hinge", 5)])
@pytest.mark.parametrize("name", ["heart_scale", "a9a"])
def test_liblinear_s5_s6_agree_in_accuracy(loss, s, name):
    ll = optional_import("liblinear.liblinearutil", "liblinear-official is in the bench extra")
    X, y = load_binary(name, max_rows=4000)
    shared_file(name)
    n = X.shape[0]
    l1 = lam_max(X, y, loss, penalty="l1") / 50
    res = pd.solve(X, y, loss=loss, lam=0.0, l1=l1, tol=1e-8)
    m = ll.train(ll.problem(y, X), ll.parameter(f"-s {s} -c {1.0 / (l1 * n)} -e 1e-6 -q"))
    w = np.array([m.w[j] for j in range(X.shape[1])])
    ours = np.mean(np.sign(X @ res.coef) == y)
    theirs = np.mean(np.sign(X @ w) == y)
    assert abs(ours - theirs) <= 0.005
    # and LIBLINEAR's model is no better than our certified optimum
    assert Problem(X, y, loss=loss, lam=0.0, l1=l1).primal(w) >= res.dual - 1e-12


def test_cli_penalty_l1(tmp_path):
    X, y, _ = _data("logistic", n=80, d=10, seed=9)
    from sklearn.datasets import dump_svmlight_file
    f = tmp_path / "train.svm"
    dump_svmlight_file(X, y, str(f))
    out = subprocess.run([sys.executable, "-m", "primaldual", "fit", str(f), "--loss",
                          "logistic", "--penalty", "l1", "-c", "2", "--json",
                          "--model", str(tmp_path / "m.npz")],
                         capture_output=True, text=True, check=True)
    rec = json.loads(out.stdout.strip().splitlines()[-1])
    assert rec["solver"] == "l1cd" and rec["lam"] == 0.0
    assert rec["l1"] == pytest.approx(1.0 / (2 * 80)) and rec["converged"]
    with np.load(tmp_path / "m.npz", allow_pickle=False) as z:
        assert float(z["l1"]) == pytest.approx(1.0 / 160) and float(z["lam"]) == 0.0
    bad = subprocess.run([sys.executable, "-m", "primaldual", "fit", str(f), "--penalty",
                          "l1", "--l1", "0.1"], capture_output=True, text=True)
    assert bad.returncode != 0 and "--penalty l1 takes its strength" in bad.stderr


def _cg_case(scale):
    """A Newton model on a working set of 15 features (9 with ``w_j != 0``,
    magnitudes ``scale``) and ``cg_refine`` run on it from ``d = 0``."""
    from primaldual.kernels import l1cd as K
    from primaldual.solvers.sparse import csc_columns
    X, y, _ = _data("logistic", n=80, d=30, seed=5)
    lam, l1 = 0.01, 0.002
    prob = Problem(X, y, loss="logistic", lam=lam, l1=l1)
    cols = csc_columns(prob)
    rng = np.random.default_rng(0)
    ws = np.arange(0, 30, 2, dtype=np.int64)                 # 15 features
    w = np.zeros(30)
    w[ws[:9]] = scale * rng.standard_normal(9)               # 9 nonzero, 6 zero
    n, k = X.shape[0], ws.size
    hu = rng.uniform(0.01, 1.0, n)
    grad = rng.standard_normal(k)
    work = K.NewtonWork(np.zeros(n), hu, np.zeros(n), grad, np.empty(k), np.zeros(k),
                        np.zeros(k, bool), np.zeros(k), np.arange(k), np.ones(1, np.uint64))
    Xd = X.toarray()
    work.hdiag[:] = (Xd[:, ws] ** 2).T @ hu + K._NU
    cg = K.CgWork(np.empty(k, np.int64), *(np.empty(k) for _ in range(5)),
                  np.empty(n), np.empty(n))
    spec = K.L1Spec(int(prob.loss.code), float(prob.loss.param), lam, l1)
    K.cg_refine(spec, cols, ws, w, work, cg, 200, 1e-13)
    F = ws[:9]
    H = Xd[:, F].T @ (hu[:, None] * Xd[:, F]) + (lam + K._NU) * np.eye(9)
    d_ref = np.linalg.solve(H, -(grad[:9] + lam * w[F] + l1 * np.sign(w[F])))
    np.testing.assert_array_equal(work.delta[9:], 0.0)
    np.testing.assert_allclose(work.xdelta, Xd[:, ws] @ work.delta, atol=1e-10)

    def model(d):                                            # the model minus its value at 0
        xd = Xd[:, ws] @ d
        z = w[ws] + d
        return (grad @ d + xd @ (hu * xd) / 2 + (lam + K._NU) * d @ d / 2
                + lam * w[ws] @ d + l1 * (np.abs(z).sum() - np.abs(w[ws]).sum()))
    return w, ws, work.delta.copy(), d_ref, model


def test_cg_refine_solves_the_newton_system_on_the_support():
    """``cg_refine`` from ``d = 0`` with ``w`` far from zero (no step reaches the
    orthant's boundary): ``d`` solves ``(X_F' diag(hu) X_F + lam + nu) d =
    -(grad + lam w + l1 sign w)_F`` (numpy's dense solve), ``d = 0`` off ``F``
    and ``xdelta = X d``."""
    w, ws, d, d_ref, _ = _cg_case(scale=100.0)
    np.testing.assert_allclose(d[:9], d_ref, rtol=1e-8, atol=1e-10)


def test_cg_refine_stays_in_the_orthant_and_lowers_the_model():
    """With ``w`` near zero the unconstrained Newton step leaves the orthant of
    ``w``: ``cg_refine`` cuts its steps at the boundary, so ``w + d`` keeps the
    signs of ``w`` (or is 0), and the model's value is below its value at
    ``d = 0`` and no larger than at the dense solve put back in the orthant."""
    w, ws, d, d_ref, model = _cg_case(scale=0.1)
    z0 = np.sign(w[ws[:9]])
    assert np.any(np.sign(w[ws[:9]] + d_ref) != z0)           # the case it is for
    z = w[ws] + d
    assert np.all(z[:9] * z0 >= 0) and np.all(z[9:] == 0)
    clipped = np.zeros(15)
    clipped[:9] = np.where((w[ws[:9]] + d_ref) * z0 > 0, d_ref, -w[ws[:9]])
    assert model(d) < 0.0
    assert model(d) <= model(clipped) + 1e-12


def test_ill_conditioned_pure_l1_matches_cvxpy():
    """l1_max/1000 on wide sparse data (many correlated features, no dense
    Hessian): the coordinate-descent directions refined by conjugate gradients
    reach the reference optimum and a certified gap of 1e-9."""
    X, y = make_classification_data(n=200, d=150, density=0.1, seed=7)
    X = sp.hstack([X, X[:, :40] * 1.01 + X[:, 40:80] * 0.5]).tocsr()   # correlated columns
    loss = "logistic"
    l1 = lam_max(X, y, loss, penalty="l1") / 1000
    res = pd.solve(X, y, loss=loss, lam=0.0, l1=l1, solver="l1cd", tol=1e-9)
    assert res.converged
    _, p_ref = _reference(X, y, loss, 0.0, l1)
    assert abs(res.primal - p_ref) <= 1e-6 * abs(p_ref)
    primal, dual = _by_hand(X, y, loss, 0.0, l1, None, res.coef, res.dual_coef)
    assert res.gap == pytest.approx(primal - dual, rel=1e-6, abs=1e-14)


def test_coordinate_order_is_a_seeded_permutation_and_the_optimum_does_not_depend_on_it():
    """Coordinate descent visits the working set in a random order drawn from
    ``random_state``: ``shuffle`` permutes (every coordinate once), a state gives
    one order and a new state; two fits with one seed are identical, and fits
    with other seeds reach the same cvxpy optimum (1e-6) with exact gaps."""
    from primaldual.kernels import l1cd as K
    orders = []
    for seed in (1, 1, 2):
        order, state = np.arange(50), np.array([seed], np.uint64)
        K.shuffle(order, state)
        assert sorted(order) == list(range(50)) and int(state[0]) not in (0, seed)
        orders.append(order)
    assert np.array_equal(orders[0], orders[1]) and not np.array_equal(orders[0], orders[2])
    X, y, _ = _data("logistic", n=150, d=60, seed=3)
    l1 = lam_max(X, y, "logistic", penalty="l1") / 100
    fits = [pd.solve(X, y, loss="logistic", lam=0.0, l1=l1, solver="l1cd", tol=1e-9,
                     random_state=rs) for rs in (0, 0, 7)]
    np.testing.assert_array_equal(fits[0].coef, fits[1].coef)
    _, p_ref = _reference(X, y, "logistic", 0.0, l1)
    for res in fits:
        assert res.converged and abs(res.primal - p_ref) <= 1e-6 * abs(p_ref)
        primal, dual = _by_hand(X, y, "logistic", 0.0, l1, None, res.coef, res.dual_coef)
        assert res.gap == pytest.approx(primal - dual, rel=1e-6, abs=1e-14)


@pytest.mark.parametrize("gram_first", [0.0, np.inf])
def test_directions_by_columns_switch_to_the_dense_hessian_and_reach_the_optimum(
        monkeypatch, gram_first):
    """A working set whose dense Hessian is cheap takes its directions from it from
    the first Newton step (``GRAM_FIRST`` large) or by columns until one takes
    ``_GRAM_PASSES`` passes (``GRAM_FIRST = 0``), then from it; the next working
    set starts where the last ended.  Both reach cvxpy's optimum (1e-6) with a
    gap recomputed by hand, and the columns-first run does switch."""
    from primaldual.solvers.sparse import solver as S
    used = []
    kernel = S.ws_solve

    def recording(*args):
        out = kernel(*args)
        used.append((args[6].H.shape[0] > 0, bool(args[16]), bool(out[4])))
        built.append((args[6].indptr.shape[0] > 1, int(out[4])))
        return out
    built = []
    monkeypatch.setattr(S, "ws_solve", recording)
    monkeypatch.setattr(S.SparseCDSolver, "GRAM_FIRST", gram_first)
    X, y = make_classification_data(n=600, d=15, density=0.4, seed=11)
    l1 = lam_max(X, y, "logistic", penalty="l1") / 1000
    res = pd.solve(X, y, loss="logistic", lam=0.0, l1=l1, solver="l1cd", tol=1e-9)
    assert res.converged
    assert all(has for has, _, _ in used)                    # a dense Hessian each time
    if gram_first == 0.0:
        assert not used[0][1]                                # by columns first
        switched = [i for i, (_, _, end) in enumerate(used) if end]
        assert switched                                      # then on the dense Hessian
        assert all(first for _, first, _ in used[switched[0] + 1:])   # and later sets
        # the rows are built only when the switch asks for them (the kernel returns
        # 2) and the solve goes on with them
        assert built[0] == (False, 2) and built[1][0]
    else:
        assert all(first and end for _, first, end in used)
    _, p_ref = _reference(X, y, "logistic", 0.0, l1)
    assert abs(res.primal - p_ref) <= 1e-6 * abs(p_ref)
    primal, dual = _by_hand(X, y, "logistic", 0.0, l1, None, res.coef, res.dual_coef)
    assert primal == pytest.approx(res.primal, rel=1e-12)
    assert dual == pytest.approx(res.dual, rel=1e-12)
    assert res.gap == pytest.approx(primal - dual, rel=1e-6, abs=1e-14)


def test_near_separable_squared_hinge_certifies_with_the_defaults():
    """The squared hinge at ``l1_max/1000`` on wide text-like data (d = 2n, a
    support of ~200 features with about as many rows inside the margin: the
    generalized Hessian on the support is nearly singular, the unconstrained
    Newton step leaves the orthant far, and the support moves by a feature or
    two per step). A default call (solver auto, default ``max_epochs``)
    certifies 1e-6, at cvxpy's optimum (1e-6) with the gap recomputed by hand."""
    from primaldual.datasets import make_synthetic
    X, y, _ = make_synthetic((300, 600, 0.02), random_state=0)
    loss = "squared_hinge"
    l1 = lam_max(X, y, loss, penalty="l1") / 1000
    res = pd.solve(X, y, loss=loss, lam=0.0, l1=l1)
    # l1cd, or l1_ipm after it when l1cd is judged slow against l1_ipm's predicted fit
    assert res.solver in ("l1cd", "l1_ipm") and res.converged and res.rel_gap <= 1e-6
    assert res.extras["path"][0]["method"] == "l1cd"
    _, p_ref = _reference(X, y, loss, 0.0, l1)
    assert abs(res.primal - p_ref) <= 1e-6 * abs(p_ref)
    primal, dual = _by_hand(X, y, loss, 0.0, l1, None, res.coef, res.dual_coef)
    assert res.gap == pytest.approx(primal - dual, rel=1e-6, abs=1e-14)


def test_smoothed_hinge_pure_l1_leaves_zero_and_certifies_with_the_defaults():
    """The smoothed hinge has no curvature on any row at ``w = 0``: the model's
    curvature floor lets the default fit leave zero (it stalled there, at a
    relative gap of 0.9) and reach cvxpy's optimum."""
    X, y, _ = _data("logistic", seed=5)
    l1 = lam_max(X, y, "smooth_hinge", penalty="l1") / 8
    res = pd.solve(X, y, loss="smooth_hinge", lam=0, l1=l1, tol=1e-8)
    assert res.solver == "l1cd" and res.converged and res.rel_gap <= 1e-8
    assert np.count_nonzero(res.coef) > 0
    _, p_ref = _reference(X, y, "smooth_hinge", 0.0, l1)
    assert abs(res.primal - p_ref) <= 1e-6 * abs(p_ref)
    assert res.dual <= p_ref + 1e-9 * abs(p_ref)
