"""The trust-region / line-search Newton solver and the auto rule that picks it."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import minimize

import primaldual
from conftest import load_binary
from primaldual import Problem
from primaldual.solvers import resolve_solver

SMOOTH = ("logistic", "squared_hinge", "squared", "smooth_hinge")


def _standardized(n=300, d=12, seed=0, sparse_zeros=True):
    """Correlated, standardized features (rows far from unit norm)."""
    rng = np.random.default_rng(seed)
    Z = rng.standard_normal((n, d)) @ rng.standard_normal((d, d)) + rng.standard_normal(d)
    Z = (Z - Z.mean(0)) / Z.std(0)
    if sparse_zeros:                       # some exact zeros so CSR differs from dense
        Z[rng.random(Z.shape) < 0.2] = 0.0
    w = rng.standard_normal(d)
    y = np.where(Z @ w + 0.5 * rng.standard_normal(n) > 0, 1.0, -1.0)
    return np.ascontiguousarray(Z), y, rng


def _targets(loss, y, X, rng):
    if loss == "squared":
        return X @ rng.standard_normal(X.shape[1]) + 0.1 * rng.standard_normal(X.shape[0])
    return y


def _np_loss(loss, a, y, gamma=1.0):
    """phi and phi' written independently of the package (docs/conventions.md §2)."""
    if loss == "logistic":
        z = -y * a
        return np.logaddexp(0.0, z), -y / (1.0 + np.exp(-z))
    if loss == "squared_hinge":
        m = np.maximum(1.0 - y * a, 0.0)
        return m * m, -2.0 * y * m
    if loss == "squared":
        return 0.5 * (a - y) ** 2, a - y
    m = 1.0 - y * a
    val = np.where(m <= 0, 0.0, np.where(m >= gamma, m - gamma / 2, m * m / (2 * gamma)))
    der = np.where(m <= 0, 0.0, np.where(m >= gamma, -y, -y * m / gamma))
    return val, der


def _reference(X, y, loss, lam, c):
    """scipy L-BFGS-B on the weighted primal, to gradient norm 1e-13."""
    Xd = X.toarray() if sp.issparse(X) else X
    W = c.sum()

    def fg(w):
        val, der = _np_loss(loss, Xd @ w, y)
        return (c @ val / W + 0.5 * lam * w @ w,
                Xd.T @ (c * der) / W + lam * w)

    r = minimize(fg, np.zeros(X.shape[1]), jac=True, method="L-BFGS-B",
                 options={"maxiter": 100_000, "maxfun": 100_000, "gtol": 1e-13,
                          "ftol": 0.0, "maxcor": 50})
    return r.x


@pytest.mark.parametrize("loss", SMOOTH)
@pytest.mark.parametrize("hessian", ["explicit", "matvec"])
@pytest.mark.parametrize("kind", ["dense", "csr"])
def test_optimum_matches_lbfgs_with_weights(loss, hessian, kind):
    X, y, rng = _standardized()
    t = _targets(loss, y, X, rng)
    c = rng.uniform(0.2, 3.0, X.shape[0])
    lam = 1e-3
    Xk = sp.csr_matrix(X) if kind == "csr" else X
    r = primaldual.solve(Xk, t, loss=loss, lam=lam, solver="newton", tol=1e-13,
                         max_epochs=5000, sample_weight=c, hessian=hessian)
    assert r.converged and r.solver == "newton"
    w_ref = _reference(X, t, loss, lam, c)
    p = Problem(X, t, loss=loss, lam=lam, sample_weight=c)
    assert abs(p.primal(r.coef) - p.primal(w_ref)) <= 1e-12 * p.primal(w_ref)
    assert np.linalg.norm(r.coef - w_ref) <= 1e-7 * np.linalg.norm(w_ref)


@pytest.mark.parametrize("loss,s", [("logistic", 0), ("squared_hinge", 2)])
def test_optimum_matches_liblinear(loss, s):
    L = pytest.importorskip("liblinear.liblinearutil")
    X, y, _ = _standardized(n=400, d=10, seed=3)
    lam = 1e-3
    n = X.shape[0]
    for Xk in (X, sp.csr_matrix(X)):
        r = primaldual.solve(Xk, y, loss=loss, lam=lam, solver="newton", tol=1e-13,
                             max_epochs=5000)
        assert r.converged
        m = L.train(L.problem(y, sp.csr_matrix(X)),
                    L.parameter(f"-s {s} -c {1.0 / (lam * n)!r} -e 1e-12 -B -1 -q"))
        w = np.array([m.w[j] for j in range(X.shape[1])])
        if m.get_labels()[0] != 1:
            w = -w
        assert np.linalg.norm(r.coef - w) <= 1e-7 * np.linalg.norm(w)


def test_integer_weights_equal_repeated_rows():
    X, y, rng = _standardized(n=120, d=6, seed=5)
    k = rng.integers(1, 4, X.shape[0])
    r1 = primaldual.solve(X, y, loss="logistic", lam=1e-3, solver="newton", tol=1e-13,
                          sample_weight=k.astype(float))
    r2 = primaldual.solve(np.repeat(X, k, axis=0), np.repeat(y, k), loss="logistic",
                          lam=1e-3, solver="newton", tol=1e-13)
    assert np.linalg.norm(r1.coef - r2.coef) <= 1e-9 * np.linalg.norm(r2.coef)


@pytest.mark.parametrize("loss", SMOOTH)
def test_certificate_is_exact(loss):
    X, y, rng = _standardized(seed=7)
    t = _targets(loss, y, X, rng)
    c = rng.uniform(0.5, 2.0, X.shape[0])
    lam = 1e-4
    for tol in (1e-2, 1e-9):
        r = primaldual.solve(sp.csr_matrix(X), t, loss=loss, lam=lam, solver="newton",
                             tol=tol, sample_weight=c)
        W = c.sum()
        # independent numpy evaluation of P(w) and D(alpha) (docs/conventions.md §1)
        val, der = _np_loss(loss, X @ r.coef, t)
        P = c @ val / W + 0.5 * lam * r.coef @ r.coef
        a = r.dual_coef
        np.testing.assert_allclose(a, -der, rtol=1e-12, atol=1e-15)
        b = a * t
        if loss == "logistic":
            with np.errstate(divide="ignore", invalid="ignore"):
                conj = -(np.where(b > 0, b * np.log(b), 0.0)
                         + np.where(b < 1, (1 - b) * np.log1p(-b), 0.0))
        elif loss == "squared_hinge":
            conj = b - b * b / 4
        elif loss == "squared":
            conj = a * t - a * a / 2
        else:
            conj = b - 0.5 * b * b
        v = X.T @ (c * a) / W
        D = c @ conj / W - v @ v / (2 * lam)
        assert abs(r.primal - P) <= 1e-12 * abs(P)
        assert abs(r.dual - D) <= 1e-12 * abs(P)
        assert r.gap >= -1e-15 and abs(r.gap - (P - D)) <= 1e-12 * abs(P)
        assert (r.rel_gap <= tol) == r.converged


@pytest.mark.parametrize("loss", ["hinge", "absolute", "epsilon_insensitive"])
def test_refuses_nonsmooth_losses(loss):
    X, y, _ = _standardized(n=50, d=4)
    with pytest.raises(ValueError, match=rf"solver='newton' does not support loss='{loss}'"
                                         r".*Hessian"):
        primaldual.solve(X, y, loss=loss, lam=1e-3, solver="newton")


def test_refuses_l1_and_bad_options():
    X, y, _ = _standardized(n=50, d=4)
    with pytest.raises(ValueError, match=r"solver='newton' does not support l1 > 0"):
        primaldual.solve(X, y, loss="logistic", lam=1e-3, l1=1e-3, solver="newton")
    with pytest.raises(ValueError, match="cg_tol"):
        primaldual.solve(X, y, loss="logistic", solver="newton", cg_tol=1.5)
    with pytest.raises(ValueError, match="hessian"):
        primaldual.solve(X, y, loss="logistic", solver="newton", hessian="full")
    with pytest.raises(ValueError, match="globalization"):
        primaldual.solve(X, y, loss="logistic", solver="newton", globalization="dogleg")
    with pytest.raises(ValueError, match="unknown option"):
        primaldual.solve(X, y, loss="logistic", solver="newton", step=1.0)


@pytest.mark.parametrize("globalization", ["line_search", "trust_region"])
@pytest.mark.parametrize("hessian", ["explicit", "matvec"])
def test_resume_equals_uninterrupted(globalization, hessian, tmp_path):
    X, y, _ = _standardized(n=400, d=15, seed=2)
    kw = dict(loss="squared_hinge", lam=1e-5, solver="newton", tol=1e-12,
              globalization=globalization, hessian=hessian)
    full = primaldual.solve(X, y, max_epochs=60, **kw)
    part = primaldual.solve(X, y, max_epochs=12, checkpoint=tmp_path, **kw)
    assert part.n_epochs < full.n_epochs
    rest = primaldual.solve(X, y, max_epochs=60, resume=tmp_path, **kw)
    np.testing.assert_array_equal(rest.coef, full.coef)
    assert rest.n_epochs == full.n_epochs and rest.primal == full.primal


def test_warm_start_from_result_coef_and_dual():
    X, y, _ = _standardized(n=300, d=10, seed=4)
    cold = primaldual.solve(X, y, loss="logistic", lam=1e-4, solver="newton", tol=1e-6)
    for ws in (cold, cold.coef):
        warm = primaldual.solve(X, y, loss="logistic", lam=1e-4, solver="newton",
                                tol=1e-6, warm_start=ws)
        assert warm.converged
        assert warm.n_epochs <= 1.0 < cold.n_epochs      # converged at the first check
        np.testing.assert_array_equal(warm.coef, cold.coef)
    # a dual point (n,) starts from w(alpha) = v / lam
    warm = primaldual.solve(X, y, loss="logistic", lam=1e-4, solver="newton", tol=1e-6,
                            max_epochs=1, warm_start=cold.dual_coef)
    p = Problem(X, y, loss="logistic", lam=1e-4)
    np.testing.assert_allclose(warm.coef, p.w_of(cold.dual_coef), rtol=1e-12)
    with pytest.raises(ValueError, match="warm_start"):
        primaldual.solve(X, y, loss="logistic", lam=1e-4, solver="newton",
                         warm_start=np.ones(3))


def test_trust_region_and_line_search_reach_the_same_optimum():
    X, y, _ = _standardized(n=500, d=20, seed=8)
    rs = [primaldual.solve(X, y, loss=loss, lam=1e-5, solver="newton", tol=1e-12,
                           max_epochs=20_000, globalization=g)
          for loss in ("logistic", "smooth_hinge") for g in ("line_search", "trust_region")]
    for a, b in ((rs[0], rs[1]), (rs[2], rs[3])):
        assert a.converged and b.converged
        assert np.linalg.norm(a.coef - b.coef) <= 1e-6 * np.linalg.norm(a.coef)


def test_passes_counted():
    X, y, _ = _standardized(n=300, d=10, seed=9)
    r = primaldual.solve(X, y, loss="logistic", lam=1e-4, solver="newton", tol=1e-10,
                         hessian="matvec")
    last = r.trace[-1]
    # one pass at the start, per iteration one trial pass plus one per CG product
    # (line searches add passes only when the full step is refused)
    assert r.n_epochs >= 1 + last["newton_iter"] + last["cg_iter"]
    assert r.feature_accesses == int(r.n_epochs) * X.size
    r = primaldual.solve(X, y, loss="logistic", lam=1e-4, solver="newton", tol=1e-10,
                         hessian="explicit")
    last = r.trace[-1]
    assert last["cg_iter"] == 0
    assert r.n_epochs >= 1 + 2 * last["newton_iter"]


def test_float32_input():
    X, y, _ = _standardized(n=300, d=10, seed=10)
    r64 = primaldual.solve(X.astype(np.float32).astype(np.float64), y, loss="logistic",
                           lam=1e-4, solver="newton", tol=1e-12)
    for Xk in (X.astype(np.float32), sp.csr_matrix(X.astype(np.float32))):
        r32 = primaldual.solve(Xk, y, loss="logistic", lam=1e-4, solver="newton",
                               tol=1e-12)
        assert np.linalg.norm(r32.coef - r64.coef) <= 1e-9 * np.linalg.norm(r64.coef)


# ------------------------------------------------------------------ auto
def _digits_standardized():
    from sklearn.datasets import load_digits
    from sklearn.preprocessing import StandardScaler
    X, y = load_digits(return_X_y=True)
    return StandardScaler().fit_transform(X), y


def test_auto_picks_newton_on_standardized_digits():
    X, y = _digits_standardized()
    yy = np.where(y == 3, 1.0, -1.0)
    for loss in ("logistic", "squared_hinge"):
        assert resolve_solver("auto", Problem(X, yy, loss=loss, lam=1e-4)) == "newton"
    # the hinge goes to the interior-point method (tests/test_ipm.py), elastic net to
    # the sparse-model solver (docs/sparse-models.md)
    assert resolve_solver("auto", Problem(X, yy, loss="hinge", lam=1e-4)) == "ipm"
    assert resolve_solver("auto", Problem(X, yy, loss="logistic", lam=1e-4,
                                          l1=1e-4)) == "l1cd"


def test_auto_picks_sdca_on_unit_norm_sparse_data():
    """Text-like data (unit rows, d = 20,000, Hessian-vector products): SDCA
    while lam n is not tiny; Newton only once the ratio passes 30."""
    from sklearn.preprocessing import normalize
    rng = np.random.default_rng(0)
    n, d = 8000, 8000
    X = sp.random(n, d, density=0.005, random_state=1, format="csr")
    X.data[:] = rng.standard_normal(X.nnz)
    X = normalize(X)
    y = np.where(rng.random(n) < 0.5, 1.0, -1.0)
    for loss, lams in (("logistic", (1e-4, 1e-5)), ("squared_hinge", (1e-4, 1e-5))):
        for lam in lams:
            assert resolve_solver("auto", Problem(X, y, loss=loss, lam=lam)) == "sdca"
    # ratio 2 / (1e-6 * 8000) = 250: the regime where Newton-CG wins on reuters
    assert resolve_solver("auto", Problem(X, y, loss="squared_hinge", lam=1e-6)) == "newton"


def test_auto_on_unit_norm_a9a():
    """Sparse rows with an explicit Hessian (a9a: d = 123): SDCA while the
    cost model predicts its (1 + r) log(1/tol) epochs cheaper than Newton's
    fit, although the ratio r passes 0.5 (logistic at lam 1e-5, r = 0.77:
    SDCA 0.069 s, Newton 0.078 s; squared hinge at 1e-4, r = 0.61: 0.038 s
    and 0.045 s); Newton at r = 6 (0.15 s and 0.056 s; benchmarks/results/
    auto-real-cells.md)."""
    from sklearn.preprocessing import normalize
    X, y = load_binary("a9a", n_features=123)
    X = normalize(X)
    assert resolve_solver("auto", Problem(X, y, loss="logistic", lam=1e-4)) == "sdca"
    assert resolve_solver("auto", Problem(X, y, loss="logistic", lam=1e-5)) == "sdca"
    assert resolve_solver("auto", Problem(X, y, loss="squared_hinge", lam=1e-4)) == "sdca"
    assert resolve_solver("auto", Problem(X, y, loss="squared_hinge", lam=1e-5)) == "newton"
    assert resolve_solver("auto", Problem(X, y, loss="hinge", lam=1e-6)) == "sdca"


def test_auto_result_names_the_solver_that_ran():
    X, y = _digits_standardized()
    r = primaldual.solve(X, np.where(y == 3, 1.0, -1.0), loss="logistic", lam=1e-4,
                         solver="auto", tol=1e-8)
    assert r.solver == "newton" and r.converged


def test_linear_classifier_converges_on_standardized_digits():
    X, y = _digits_standardized()
    with warnings.catch_warnings():
        warnings.simplefilter("error")         # no ConvergenceWarning
        clf = primaldual.LinearClassifier(loss="logistic", alpha=1e-4).fit(X, y)
    assert clf.solver_ == "newton"
    assert clf.converged_.all() and clf.converged_.shape == (10,)
    assert (clf.rel_gap_ <= clf.tol).all()
    assert clf.score(X, y) > 0.95


def test_hessian_from_the_rows_of_nonzero_curvature_is_the_full_product():
    """Dense data: where at most half a partition's rows have curvature (squared
    hinge near the optimum), its H part is formed from those rows; the parts
    equal X_k^T diag(curv) X_k / W."""
    from primaldual.distributed.newton_block import NewtonBlock

    X, y, rng = _standardized(n=200, d=6, seed=2, sparse_zeros=False)
    c = rng.uniform(0.5, 2.0, X.shape[0])
    prob = Problem(X, y, loss="squared_hinge", lam=1e-2, sample_weight=c)
    for part_ptr in ([0, 200], [0, 70, 200]):
        block = NewtonBlock(prob.rows, y, c, np.array(part_ptr), prob.loss.code,
                            prob.loss.param, prob.W)
        for active in (0.0, 0.1, 0.5, 0.9):
            curv = np.where(rng.random(X.shape[0]) < active,
                            rng.uniform(0.5, 2.0, X.shape[0]), 0.0)
            block.curv[block.current][:] = curv
            parts = block.hessian()
            for H, a, b in zip(parts, part_ptr[:-1], part_ptr[1:]):
                ref = X[a:b].T @ (curv[a:b, None] * X[a:b]) / c.sum()
                np.testing.assert_allclose(H, ref, rtol=1e-12, atol=1e-14)


def test_dense_squared_hinge_certificate_is_exact():
    X, y, rng = _standardized(seed=9, sparse_zeros=False)
    lam = 1e-3
    r = primaldual.solve(X, y, loss="squared_hinge", lam=lam, solver="newton", tol=1e-10)
    m = np.maximum(0.0, 1.0 - y * (X @ r.coef))
    P = np.mean(m * m) + 0.5 * lam * r.coef @ r.coef
    b = r.dual_coef * y
    v = X.T @ r.dual_coef / X.shape[0]
    D = np.mean(b - b * b / 4) - v @ v / (2 * lam)
    np.testing.assert_allclose(r.dual_coef, 2 * y * m, rtol=1e-12, atol=1e-15)
    assert abs(r.primal - P) <= 1e-12 * P and abs(r.dual - D) <= 1e-12 * P
    assert r.converged and (P - D) / P <= 1e-10
