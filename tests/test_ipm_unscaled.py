"""The interior-point method on data as users give it: unscaled columns (the
hinge), and the L1 regression losses (absolute, epsilon_insensitive) checked
against an independent QP solver (cvxpy with Clarabel)."""
from __future__ import annotations

import numpy as np
import pytest
from sklearn.datasets import load_svmlight_file

import primaldual
from primaldual import Problem

from conftest import optional_import, shared_file


def _five_orders(n=3000, d=6, seed=0):
    """Correlated columns scaled 1e-2 ... 1e3 with offsets of their own size (raw
    measurements); labels from a planted model on the standardized columns."""
    rng = np.random.default_rng(seed)
    Z = rng.standard_normal((n, d)) @ (np.eye(d) + 0.3 * rng.standard_normal((d, d)))
    scales = rng.permutation(np.geomspace(1e-2, 1e3, d))
    X = np.ascontiguousarray(Z * scales + scales * rng.uniform(-2.0, 2.0, d))
    y = np.where(Z @ rng.standard_normal(d) + 0.3 * rng.standard_normal(n) > 0, 1.0, -1.0)
    return X, y


def _independent_gap(X, y, loss, lam, coef, alpha, eps=0.0):
    """(P, D) recomputed from the formulas of docs/conventions.md §1."""
    n = X.shape[0]
    a = X @ coef
    if loss == "hinge":
        phi, conj = np.maximum(0.0, 1.0 - y * a), alpha * y
    else:
        phi = np.maximum(0.0, np.abs(a - y) - eps)
        conj = alpha * y - eps * np.abs(alpha)
    v = X.T @ alpha / n
    return phi.mean() + lam / 2 * coef @ coef, conj.mean() - v @ v / (2 * lam)


@pytest.mark.parametrize("C", [0.01, 1.0, 100.0])
def test_hinge_certifies_columns_five_orders_apart(C):
    X, y = _five_orders()
    assert X.std(0).max() / X.std(0).min() > 1e4
    lam = 1.0 / (C * X.shape[0])
    r = primaldual.solve(X, y, loss="hinge", lam=lam, solver="ipm", tol=1e-8)
    assert r.converged and r.stop_reason == "converged"
    assert r.n_epochs <= 40           # iterations of the problem, not of its scales
    assert Problem(X, y, loss="hinge", lam=lam).is_dual_feasible(r.dual_coef)
    P, D = _independent_gap(X, y, "hinge", lam, r.coef, r.dual_coef)
    assert P == pytest.approx(r.primal, rel=1e-10) and D == pytest.approx(r.dual, rel=1e-9)
    assert (P - D) / P <= 1e-8


def test_rescaling_a_column_keeps_the_iteration_count():
    """Multiplying a column by 1e-3 or 1e3 changes the problem (the L2 penalty
    is not scale invariant), not how hard the method finds it: each certifies
    in about as many iterations as the original."""
    X, y = _five_orders(n=2000, seed=1)
    lam = 1e-4
    base = primaldual.solve(X, y, loss="hinge", lam=lam, solver="ipm", tol=1e-9)
    for s in (1e-3, 1e3):
        Xs = X.copy()
        Xs[:, 0] *= s
        r = primaldual.solve(Xs, y, loss="hinge", lam=lam, solver="ipm", tol=1e-9)
        assert r.converged and r.n_epochs <= base.n_epochs + 15


def test_stall_is_reported_not_disguised_as_max_epochs(monkeypatch):
    """A collapsed step ends the run with stop_reason "stalled", the iterations
    it made as n_epochs, and extras naming the cause."""
    import primaldual.solvers.ipm as ipm_mod
    monkeypatch.setattr(ipm_mod, "MIN_STEP", 2.0)     # every step 'collapses'
    X, y = _five_orders(n=300)
    r = primaldual.solve(X, y, loss="hinge", lam=1e-3, solver="ipm", max_epochs=1000)
    assert r.stop_reason == "stalled" and r.n_epochs == 0
    assert r.extras["stall"] == "step_collapse"
    assert "after 0 iterations" in r.extras["stall_detail"]


@pytest.mark.realdata
def test_breast_cancer_as_given_certifies():
    """Column 1 is a sample ID near 1e6-1e7 beside scores 1-10 (hinge, C = 1)."""
    X, y = load_svmlight_file(str(shared_file("breast-cancer")))
    X = X.toarray()
    y = np.where(y == y.max(), 1.0, -1.0)
    assert X[:, 0].max() > 1e6
    lam = 1.0 / X.shape[0]
    r = primaldual.solve(X, y, loss="hinge", lam=lam, solver="ipm", tol=1e-6)
    assert r.converged and r.stop_reason == "converged" and r.n_epochs < 60
    P, D = _independent_gap(X, y, "hinge", lam, r.coef, r.dual_coef)
    assert (P - D) / P <= 1e-6


# ------------------------------------------------------- L1 regression losses
def _cvxpy_optimum(X, y, lam, eps):
    cp = optional_import("cvxpy", "cvxpy is the independent QP reference")
    w = cp.Variable(X.shape[1])
    r = X @ w - y
    loss = cp.abs(r) if eps == 0 else cp.pos(cp.abs(r) - eps)
    prob = cp.Problem(cp.Minimize(cp.sum(loss) / X.shape[0] + lam / 2 * cp.sum_squares(w)))
    prob.solve(solver="CLARABEL", tol_gap_abs=1e-12, tol_gap_rel=1e-12, tol_feas=1e-12)
    return float(prob.value), np.asarray(w.value)


def _cpu_like(n=800, d=12, seed=0, top=1e5):
    """Unscaled regression: lognormal counts whose scales span 1 ... ``top`` and a
    target of 0-100 (a CPU-activity-like set)."""
    rng = np.random.default_rng(seed)
    scales = np.geomspace(1.0, top, d)
    X = np.exp(rng.standard_normal((n, d))) * scales
    t = np.log1p(X / scales) @ rng.uniform(-1, 1, d)
    y = np.clip(60 + 10 * t + 3 * rng.standard_normal(n), 0, 100)
    return np.ascontiguousarray(X), y


@pytest.mark.parametrize("loss,eps", [("absolute", 0.0), ("epsilon_insensitive", 0.5),
                                      ("epsilon_insensitive", 0.0)])
@pytest.mark.parametrize("lam", [1e-2, 1e-5])
@pytest.mark.parametrize("shape", [(400, 6), (40, 80)])
def test_l1_regression_matches_an_independent_qp(loss, eps, lam, shape):
    """Both linear-algebra routes (d <= n, columns 1 ... 1e5; the kernel form for
    n < d, columns 1 ... 1e3, where every residual is 0 at the optimum and every
    dual variable is free)."""
    X, y = _cpu_like(*shape, top=1e5 if shape[0] > shape[1] else 1e3)
    # interpolating (n < d) at lam = 1e-5, P is ~1e-8 of the data's scale, and
    # the certificate's rounding floor (|x_i . w - y_i| to eps |y_i|) is ~1e-8 of P
    tol = 1e-9 if shape[0] > shape[1] or lam > 1e-3 else 1e-7
    params = {"epsilon": eps} if loss == "epsilon_insensitive" else None
    r = primaldual.solve(X, y, loss=loss, loss_params=params, lam=lam, solver="ipm", tol=tol)
    assert r.converged
    ref, _ = _cvxpy_optimum(X, y, lam, eps)
    assert r.primal == pytest.approx(ref, rel=1e-6)
    P, D = _independent_gap(X, y, loss, lam, r.coef, r.dual_coef, eps)
    assert P == pytest.approx(r.primal, rel=1e-10)
    assert D <= ref * (1 + 1e-9) and (P - D) / P <= 1.01 * tol
    assert np.all(np.abs(r.dual_coef) < 1.0)


@pytest.mark.parametrize("loss", ["absolute", "epsilon_insensitive"])
def test_l1_regression_certifies_unscaled_8k_by_12(loss):
    """The shape of the issue's CPU-activity set, where SDCA ended at gap 1.0."""
    X, y = _cpu_like(n=8000, d=12, seed=1)
    r = primaldual.solve(X, y, loss=loss, lam=1.0 / X.shape[0], solver="ipm", tol=1e-6)
    assert r.converged and r.stop_reason == "converged" and r.n_epochs < 60


def test_l1_regression_warm_start_from_a_result():
    X, y = _cpu_like(n=500, d=5, seed=2)
    kw = dict(loss="absolute", lam=1e-3, solver="ipm")
    first = primaldual.solve(X, y, tol=1e-3, **kw)
    again = primaldual.solve(X, y, tol=1e-9, warm_start=first, **kw)
    assert again.converged
    assert again.primal == pytest.approx(primaldual.solve(X, y, tol=1e-9, **kw).primal,
                                         rel=1e-8)


@pytest.mark.realdata
@pytest.mark.parametrize("name", ["cadata", "abalone"])
@pytest.mark.parametrize("loss", ["absolute", "epsilon_insensitive"])
def test_l1_regression_certifies_real_sets_as_given(name, loss):
    X, y = load_svmlight_file(str(shared_file(name)))
    X = X.toarray()
    r = primaldual.solve(X, y, loss=loss, lam=1.0 / X.shape[0], solver="ipm", tol=1e-6)
    assert r.converged and r.stop_reason == "converged" and r.n_epochs < 60


def test_auto_sends_unscaled_l1_regression_to_the_ipm():
    from primaldual.solvers import resolve_solver
    X, y = _cpu_like(n=2000, d=8, seed=3)
    for loss in ("absolute", "epsilon_insensitive"):
        assert resolve_solver("auto", Problem(X, y, loss=loss, lam=1.0 / 2000)) == "ipm"
        Xn = X / np.linalg.norm(X, axis=1, keepdims=True)
        assert resolve_solver("auto", Problem(Xn, y, loss=loss, lam=1e-2)) == "sdca"
