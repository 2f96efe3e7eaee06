"""The interior-point solver on the box dual (hinge, smooth_hinge) and the auto
rule that picks it where SDCA's rate is hopeless."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

import primaldual
from primaldual import Problem
from primaldual.solvers import resolve_solver
from primaldual.solvers.ipm import IPMSolver


def _standardized(n, d, seed=0):
    """Dense Gaussian features of mixed scales, standardized; noisy labels."""
    rng = np.random.default_rng(seed)
    Z = rng.standard_normal((n, d)) * rng.uniform(0.1, 10.0, d) + 3.0 * rng.standard_normal(d)
    Z = (Z - Z.mean(0)) / Z.std(0)
    w = rng.standard_normal(d) / np.sqrt(d)
    y = np.where(rng.random(n) < 1.0 / (1.0 + np.exp(-0.5 * Z @ w)), 1.0, -1.0)
    return np.ascontiguousarray(Z), y


def test_auto_certifies_standardized_2000x500_at_default_tol():
    """The regime of the issue: R^2 / (lam n) = 500 / (1e-4 * 2000) = 2,500 (the
    estimators' default strength 1/n gives 500 here: the same regime, easier)."""
    X, y = _standardized(2000, 500)
    lam = 1e-4
    r = primaldual.solve(X, y, loss="hinge", lam=lam)
    assert r.solver == "ipm"
    assert r.converged and r.rel_gap <= r.tol
    # the certificate, recomputed independently of the solver
    prob = Problem(X, y, loss="hinge", lam=lam)
    assert prob.is_dual_feasible(r.dual_coef)
    P = np.mean(np.maximum(0.0, 1.0 - y * (X @ r.coef))) + lam / 2 * r.coef @ r.coef
    v = X.T @ r.dual_coef / X.shape[0]
    D = np.mean(r.dual_coef * y) - v @ v / (2 * lam)
    assert P == pytest.approx(r.primal, rel=1e-10)
    assert D == pytest.approx(r.dual, rel=1e-10)
    assert (P - D) / P <= r.tol


def test_optimum_matches_liblinear():
    """The hinge optimum of LIBLINEAR -s 3 (dual coordinate descent, eps 1e-12)."""
    L = pytest.importorskip("liblinear.liblinearutil")
    X, y = _standardized(300, 8, seed=3)
    lam = 0.1                # well conditioned: LIBLINEAR converges within its 1,000 iterations
    n = X.shape[0]
    m = L.train(L.problem(y, sp.csr_matrix(X)),
                L.parameter(f"-s 3 -c {1.0 / (lam * n)!r} -e 1e-12 -B -1 -q"))
    w = np.array([m.w[j] for j in range(X.shape[1])])
    if m.get_labels()[0] != 1:
        w = -w
    for Xk in (X, sp.csr_matrix(X)):
        r = primaldual.solve(Xk, y, loss="hinge", lam=lam, solver="ipm", tol=1e-11)
        assert r.converged
        assert np.linalg.norm(r.coef - w) <= 1e-6 * np.linalg.norm(w)


def test_smooth_hinge_matches_newton():
    X, y = _standardized(400, 10, seed=1)
    kw = dict(loss="smooth_hinge", loss_params={"gamma": 0.5}, lam=1e-3, tol=1e-12)
    a = primaldual.solve(X, y, solver="ipm", **kw)
    b = primaldual.solve(X, y, solver="newton", **kw)
    assert a.converged and b.converged
    np.testing.assert_allclose(a.coef, b.coef, rtol=0, atol=1e-6 * np.abs(b.coef).max())


def test_newton_direction_equals_a_direct_solve():
    """Both linear-algebra routes (the equilibrated d x d system for d <= n, the
    n x n kernel form for n < d) give the dw of (lam I + X^T E X) dw = -r_w +
    X^T rho to a backward error of rounding, on columns five orders apart, and
    agree with a dense direct solve where the system is well conditioned."""
    rng = np.random.default_rng(4)
    for n, d in ((60, 7), (7, 60)):
        X = rng.standard_normal((n, d)) * 10.0 ** rng.uniform(-2, 3, d)
        y = np.where(rng.random(n) < 0.5, 1.0, -1.0)
        lam = 1e-2
        for Xk in (X, sp.csr_matrix(X)):
            s = IPMSolver(Problem(Xk, y, loss="hinge", lam=lam), tol=1e-6, max_epochs=None,
                          random_state=0)
            E = 10.0 ** rng.uniform(-2, 2, n)
            r_w, rho = rng.standard_normal(d), rng.standard_normal(n)
            A = lam * np.eye(d) + X.T @ (E[:, None] * X)
            b = X.T @ rho - r_w
            dw, dg = s._reduced_solver(E)(r_w, rho)
            if dg is not None:      # the kernel form's dg: (X X^T / lam + 1/E) dg = rho/E + X r_w/lam
                A2 = X @ X.T / lam + np.diag(1.0 / E)
                b2 = rho / E + X @ r_w / lam
                assert np.linalg.norm(A2 @ dg - b2) <= 1e-13 * np.linalg.norm(A2, 2) \
                    * np.linalg.norm(dg) + 1e-13 * np.linalg.norm(b2)
            assert np.linalg.norm(A @ dw - b) <= 1e-13 * np.linalg.norm(A, 2) \
                * np.linalg.norm(dw) + 1e-13 * np.linalg.norm(b)
            if n > d:
                np.testing.assert_allclose(dw, np.linalg.solve(A, b), rtol=1e-8)


def test_integer_weights_equal_repeated_rows():
    X, y = _standardized(120, 6, seed=5)
    c = np.random.default_rng(0).integers(1, 4, 120)
    a = primaldual.solve(X, y, loss="hinge", lam=1e-3, solver="ipm", tol=1e-11,
                         sample_weight=c.astype(float))
    b = primaldual.solve(np.repeat(X, c, axis=0), np.repeat(y, c), loss="hinge", lam=1e-3,
                         solver="ipm", tol=1e-11)
    np.testing.assert_allclose(a.coef, b.coef, atol=1e-6 * np.abs(b.coef).max())


def test_resume_equals_uninterrupted(tmp_path):
    X, y = _standardized(300, 20, seed=2)
    kw = dict(loss="hinge", lam=1e-4, solver="ipm", tol=1e-12)
    full = primaldual.solve(X, y, max_epochs=40, **kw)
    part = primaldual.solve(X, y, max_epochs=6, checkpoint=tmp_path, **kw)
    assert part.n_epochs < full.n_epochs
    rest = primaldual.solve(X, y, max_epochs=40, resume=tmp_path, **kw)
    np.testing.assert_array_equal(rest.coef, full.coef)
    assert rest.primal == full.primal


def test_refuses_a_dense_system_too_large_to_form(monkeypatch):
    import primaldual.solvers.ipm as ipm_mod
    monkeypatch.setattr(ipm_mod, "MAX_SYSTEM_SIZE", 30)
    X, y = _standardized(50, 40)
    with pytest.raises(ValueError, match=r"dense 40 x 40 matrix .* min\(n, d\) <= 30"):
        primaldual.solve(X, y, loss="hinge", lam=1e-3, solver="ipm")
    X, y = _standardized(50, 30)
    assert primaldual.solve(X, y, loss="hinge", lam=1e-3, solver="ipm").converged


def test_refuses_other_losses_and_l1():
    X, y = _standardized(50, 4)
    with pytest.raises(ValueError, match="dual is a quadratic over a box: hinge, smooth_hinge"):
        primaldual.solve(X, y, loss="logistic", lam=1e-3, solver="ipm")
    with pytest.raises(ValueError, match="l1"):
        primaldual.solve(X, y, loss="hinge", lam=1e-3, l1=1e-3, solver="ipm")


def test_auto_keeps_sdca_on_unit_norm_rows():
    X, y = _standardized(2000, 50)
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    prob = Problem(X, y, loss="hinge", lam=1e-4)     # ratio 1 / (lam n) = 5
    assert resolve_solver("auto", prob) == "sdca"
    assert resolve_solver("auto", Problem(X * 10, y, loss="hinge", lam=1e-4)) == "ipm"


def test_solution_satisfies_the_hinge_kkt_conditions():
    """At the optimum beta_i = alpha_i y_i is 1 where y_i x_i.w < 1 and 0 where
    y_i x_i.w > 1 (the subgradient condition of the hinge), and w = w(alpha)."""
    X, y = _standardized(300, 6, seed=7)
    r = primaldual.solve(X, y, loss="hinge", lam=1e-2, solver="ipm", tol=1e-12)
    assert r.converged
    m = y * (X @ r.coef)
    beta = r.dual_coef * y
    assert np.all(beta[m < 1 - 1e-5] > 1 - 1e-5)
    assert np.all(beta[m > 1 + 1e-5] < 1e-5)
    np.testing.assert_allclose(r.coef, X.T @ r.dual_coef / (1e-2 * X.shape[0]),
                               rtol=1e-10, atol=1e-12)


def test_products_on_dense_copy_and_on_sparse_rows_agree_with_the_matrix():
    """X m and X^T v read the dense copy of dense-enough CSR data, or the CSR
    rows (one transpose view) of sparse data: both are the products of X."""
    rng = np.random.default_rng(8)
    n, d = 300, 40
    y = np.where(rng.random(n) < 0.5, 1.0, -1.0)
    for density in (0.5, 0.02):                  # densified, and kept sparse
        X = sp.random(n, d, density=density, random_state=rng, format="csr")
        s = IPMSolver(Problem(X, y, loss="hinge", lam=1e-2), tol=1e-6, max_epochs=None,
                      random_state=0)
        s.setup()
        assert (s._dense is not None) == (density == 0.5)
        m, v = rng.standard_normal(d), rng.standard_normal(n)
        Xd = X.toarray()
        np.testing.assert_allclose(s._x(m), Xd @ m, rtol=1e-13, atol=1e-13)
        np.testing.assert_allclose(s._xt(v), Xd.T @ v, rtol=1e-13, atol=1e-13)
