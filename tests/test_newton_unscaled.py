"""Newton on data as users give it: logistic on 0-255 integer features at a
small lam (certified, with an honest stop reason when it cannot be), and the
squared loss by the normal equations."""
from __future__ import annotations

import numpy as np
import pytest

import primaldual
from primaldual.solvers.newton import NewtonSolver


def _skin_like(n=100_000, seed=0):
    """3 columns of 0-255 integers (colour values), the positive class a
    compact blob, 2% of labels flipped, rows sorted by class (as the skin set)."""
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 256, size=(n, 3)).astype(np.float64)
    r2 = (((X - [180.0, 120.0, 90.0]) / [50.0, 40.0, 35.0]) ** 2).sum(1)
    y = np.where(r2 < 1.0, 1.0, -1.0)
    y[rng.random(n) < 0.02] *= -1
    order = np.argsort(-y, kind="stable")
    return np.ascontiguousarray(X[order]), y[order]


def _covtype_like(n=20_000, seed=0):
    """Unscaled integers as covtype's: elevation 1,800-3,900, distances 0-7,000,
    angles 0-360, hillshades 0-255 and 0/1 indicators; a nonlinear label."""
    rng = np.random.default_rng(seed)
    cols = [rng.integers(1800, 3900, n), rng.integers(0, 360, n), rng.integers(0, 60, n),
            rng.integers(0, 1400, n), rng.integers(-170, 600, n), rng.integers(0, 7000, n),
            rng.integers(0, 255, n), rng.integers(0, 255, n), rng.integers(0, 7000, n)]
    X = np.column_stack(cols + [rng.random((n, 6)) < 0.2]).astype(np.float64)
    f = (X[:, 0] - 2900) / 300 + np.sin(X[:, 1] / 60) - X[:, 5] / 3000 + 0.5 * X[:, 9]
    y = np.where(f + 0.5 * rng.standard_normal(n) > 0, 1.0, -1.0)
    return X, y


def _independent_rel_gap(X, y, lam, coef, alpha):
    m = y * (X @ coef)
    P = np.logaddexp(0.0, -m).mean() + lam / 2 * coef @ coef
    b = alpha * y
    ent = -(b * np.log(b) + (1 - b) * np.log1p(-b))
    v = X.T @ alpha / X.shape[0]
    return (P - (ent.mean() - v @ v / (2 * lam))) / P


@pytest.mark.parametrize("lam", [1e-5, 1e-6])
def test_logistic_certifies_on_0_255_integer_features(lam):
    X, y = _skin_like()
    r = primaldual.solve(X, y, loss="logistic", lam=lam, solver="newton", tol=1e-9)
    assert r.converged and r.stop_reason == "converged"
    assert r.n_epochs <= 40 and r.trace[-1]["epoch"] == r.n_epochs
    assert _independent_rel_gap(X, y, lam, r.coef, r.dual_coef) <= 1e-9


@pytest.mark.parametrize("lam", [1e-5, 1e-7])
def test_logistic_certifies_on_covtype_like_integers(lam):
    X, y = _covtype_like()
    r = primaldual.solve(X, y, loss="logistic", lam=lam, solver="newton", tol=1e-8)
    assert r.converged and r.stop_reason == "converged"
    assert _independent_rel_gap(X, y, lam, r.coef, r.dual_coef) <= 1e-8


def test_steps_below_the_resolution_of_f_are_judged_by_slopes(monkeypatch):
    """f read to only 11 significant digits (a coarse stand-in for the rounding
    of f's n-term sums): near the optimum every decrease is invisible in f, yet
    the certificate's gap ||grad f||^2 / (2 lam) is far from tol.  The steps are
    then judged by the gradient, or accepted on the slopes along the step
    (approximate Wolfe), both from the margins, and the run certifies."""
    X, y = _skin_like(n=20_000, seed=1)
    orig = NewtonSolver._pass_fg

    def coarse(self, w, slot):
        f, g = orig(self, w, slot)
        return float(f"{f:.10e}"), g
    monkeypatch.setattr(NewtonSolver, "_pass_fg", coarse)
    monkeypatch.setattr(NewtonSolver, "_f_resolution", lambda self: 1e-13 * abs(self.f))
    r = primaldual.solve(X, y, loss="logistic", lam=1e-5, solver="newton", tol=1e-12)
    assert r.converged and r.stop_reason == "converged"


def test_a_failed_line_search_stalls_with_the_passes_it_made(monkeypatch):
    """A step along which f only rises (an injected ascent direction): the run
    says "stalled" and why, and counts the passes it made (not max_epochs)."""
    X, y = _skin_like(n=20_000, seed=2)

    def ascent(self):
        return 1e-3 * self.g, -1e-3 * float(self.g @ self.g), 0
    monkeypatch.setattr(NewtonSolver, "_subproblem", ascent)
    r = primaldual.solve(X, y, loss="logistic", lam=1e-5, solver="newton", tol=1e-9,
                         max_epochs=1000)
    assert not r.converged
    assert r.stop_reason == "stalled" and r.n_epochs < 20
    assert r.trace[-1]["epoch"] == r.n_epochs
    assert r.extras["stall"] == "line_search"
    assert r.extras["stall_detail"].endswith("after 1 Newton iterations")


def test_squared_loss_solves_the_normal_equations():
    """Unscaled columns (1 ... 1e5) and weights: the first step is the exact
    optimum, certified after two passes."""
    rng = np.random.default_rng(3)
    n, d = 8000, 12
    X = rng.standard_normal((n, d)) * np.geomspace(1.0, 1e5, d) + 10.0 ** rng.uniform(0, 5, d)
    y = X @ rng.standard_normal(d) / 1e3 + rng.standard_normal(n)
    c = rng.uniform(0.5, 2.0, n)
    lam = 1.0 / n
    r = primaldual.solve(X, y, loss="squared", lam=lam, solver="newton", tol=1e-10,
                         sample_weight=c)
    assert r.converged and r.n_epochs == 2 and r.trace[0]["newton_iter"] == 1
    W = c.sum()
    ref = np.linalg.solve(X.T @ (c[:, None] * X) / W + lam * np.eye(d), X.T @ (c * y) / W)
    np.testing.assert_allclose(r.coef, ref, rtol=1e-7, atol=1e-12 * np.abs(ref).max())
    np.testing.assert_allclose(r.dual_coef, y - X @ r.coef, rtol=1e-12, atol=1e-9)


def _with_an_id_column(n=700, seed=4):
    """Scores 1-10 beside a sample-ID column near 1e6 (breast-cancer's shape)."""
    rng = np.random.default_rng(seed)
    S = rng.integers(1, 11, size=(n, 9)).astype(np.float64)
    ids = np.sort(rng.integers(60_000, 1_400_000, n)).astype(np.float64)
    y = np.where(S @ rng.uniform(0.2, 1.0, 9) + rng.normal(0, 2, n) > 27, 1.0, -1.0)
    return np.column_stack([ids, S]), y


@pytest.mark.parametrize("gamma", [1.0, 0.1])
def test_smooth_hinge_from_a_kink_on_an_id_column(gamma):
    """At w = 0 every margin sits on the smoothed hinge's kink (gamma = 1), where
    the generalized Hessian is lam I: the first step overshoots by ~1e12 and
    the line search must shrink t that far instead of giving up."""
    X, y = _with_an_id_column()
    kw = dict(loss="smooth_hinge", loss_params={"gamma": gamma}, lam=1.0 / X.shape[0])
    r = primaldual.solve(X, y, solver="newton", tol=1e-8, **kw)
    assert r.converged and r.stop_reason == "converged"
    ref = primaldual.solve(X, y, solver="ipm", tol=1e-10, **kw)
    assert r.primal == pytest.approx(ref.primal, rel=1e-7)


@pytest.mark.realdata
def test_breast_cancer_as_given_smooth_hinge():
    from sklearn.datasets import load_svmlight_file
    from conftest import shared_file
    X, y = load_svmlight_file(str(shared_file("breast-cancer")))
    X, y = X.toarray(), np.where(y == y.max(), 1.0, -1.0)
    r = primaldual.solve(X, y, loss="smooth_hinge", lam=1.0 / X.shape[0], solver="newton",
                         tol=1e-8)
    assert r.converged and r.stop_reason == "converged"


def test_normal_equations_read_float32_rows_in_float64():
    rng = np.random.default_rng(5)
    X = (rng.standard_normal((3000, 10)) * np.geomspace(1.0, 1e4, 10)).astype(np.float32)
    y = X.astype(np.float64) @ rng.standard_normal(10) / 1e3 + rng.standard_normal(3000)
    r = primaldual.solve(X, y, loss="squared", lam=1e-4, solver="newton", tol=1e-10)
    assert r.converged and r.n_epochs == 2
