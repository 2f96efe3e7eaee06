"""The direct leg of solver="auto" (primaldual.solvers._direct over
primaldual.direct_newton): Newton's method in numpy on small dense smooth
problems, certified by the Problem's own certificate, with a hand-over to the
portfolio when it does not finish."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

import primaldual
import primaldual.direct_newton as dn
from primaldual.problem import Problem
from primaldual.solvers import _blas


def _data(n=240, d=7, seed=0, scale=None):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    if scale is not None:
        X *= scale
    y = np.where(X @ rng.standard_normal(d) + 0.7 * rng.standard_normal(n) > 0, 1.0, -1.0)
    return X, y


@pytest.mark.parametrize("loss", ["squared_hinge", "logistic", "squared",
                                  "squared_epsilon_insensitive"])
def test_auto_runs_the_direct_leg_to_newtons_optimum(loss):
    X, y = _data()
    if not dn.LOSSES[loss]:
        y = X @ np.arange(1.0, 8.0) + 0.1 * np.random.default_rng(1).standard_normal(240)
    c = np.random.default_rng(2).uniform(0.5, 2.0, 240)
    r = primaldual.solve(X, y, loss=loss, lam=1e-3, sample_weight=c)
    assert r.converged and r.extras["direct"] and r.solver == "newton"
    assert [leg["method"] for leg in r.extras["path"]] == ["newton"]
    # the certificate is the Problem's, exactly, for the pair returned
    p = Problem(X, y, loss=loss, lam=1e-3, sample_weight=c)
    assert p.primal(r.coef) == pytest.approx(r.primal, rel=1e-13)
    assert p.dual(r.dual_coef) == pytest.approx(r.dual, rel=1e-13, abs=1e-15)
    np.testing.assert_allclose(r.dual_coef, p.dual_from_primal(r.coef), rtol=1e-12,
                               atol=1e-15)
    ref = primaldual.solve(X, y, loss=loss, lam=1e-3, sample_weight=c, solver="newton",
                           tol=1e-12)
    assert r.rel_gap <= 1e-6 and r.primal - ref.primal <= 1e-6 * ref.primal
    np.testing.assert_allclose(r.coef, ref.coef, rtol=1e-3, atol=1e-4)


def test_the_result_carries_a_newton_state_that_resumes():
    X, y = _data()
    r = primaldual.solve(X, y, loss="logistic", lam=1e-2)
    assert r.extras["direct"] and r.state.solver == "newton"
    again = primaldual.solve(X, y, loss="logistic", lam=1e-2, resume=r)
    assert again.converged and np.array_equal(again.coef, r.coef)


def test_sparse_input_is_densified_and_gives_the_dense_fit():
    X, y = _data()
    X[np.abs(X) < 0.8] = 0.0
    dense = primaldual.solve(X, y, loss="squared_hinge", lam=1e-2)
    sparse = primaldual.solve(sp.csr_matrix(X), y, loss="squared_hinge", lam=1e-2)
    assert dense.extras.get("direct") and sparse.extras.get("direct")
    np.testing.assert_allclose(sparse.coef, dense.coef, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("kw", [dict(max_epochs=50), dict(callback=lambda s: False),
                                dict(eval_set="train"), dict(check_every=2.0),
                                dict(cg_tol=0.05)])
def test_a_call_asking_for_the_machinery_runs_the_portfolio(kw):
    X, y = _data()
    if kw.get("eval_set") == "train":
        kw = dict(eval_set=(X, y))
    r = primaldual.solve(X, y, loss="logistic", lam=1e-2, **kw)
    assert r.converged and not r.extras.get("direct")


def test_an_unfinished_direct_leg_hands_over_warm(monkeypatch):
    monkeypatch.setattr(dn, "MAX_ITERATIONS", 1)
    X, y = _data(scale=np.logspace(0, 3, 7))
    r = primaldual.solve(X, y, loss="logistic", lam=1e-4)
    path = r.extras["path"]
    assert path[0]["direct"] and path[0]["reason"] == "direct: max_iterations"
    assert len(path) >= 2 and r.converged
    # the hand-over kept the direct leg's work and certified progress
    assert r.n_epochs > path[0]["epochs"] and r.rel_gap <= path[0]["best_gap"]


def test_the_cli_core_and_solve_share_the_method():
    X, y = _data()
    own = dn.solve_direct(X, y, loss="logistic", lam=1e-2, tol=1e-6)
    via = primaldual.solve(X, y, loss="logistic", lam=1e-2)
    assert own.converged and own.solver == "direct-newton"
    np.testing.assert_array_equal(own.coef, via.coef)
    assert own.primal == pytest.approx(via.primal, rel=1e-13)


def test_steps_below_the_rounding_of_P_are_judged_by_the_gradient():
    # 0-255 integer features at a small lam: near the optimum P's decrease is
    # below its rounding while the gap ~ ||grad||^2 / (2 lam) is still large
    rng = np.random.default_rng(0)
    X = rng.integers(0, 256, size=(4000, 3)).astype(np.float64)
    r2 = (((X - [180.0, 120.0, 90.0]) / [50.0, 40.0, 35.0]) ** 2).sum(1)
    y = np.where(r2 < 1.0, 1.0, -1.0)
    y[rng.random(4000) < 0.02] *= -1
    res = dn.solve_direct(X, y, loss="logistic", lam=1e-5, tol=1e-9)
    assert res.converged and res.rel_gap <= 1e-9


def test_newton_with_an_explicit_hessian_runs_blas_serially_on_sparse_rows(monkeypatch):
    calls = []
    monkeypatch.setattr("primaldual.solvers.newton.serial_blas_enter",
                        lambda: calls.append("enter"))
    monkeypatch.setattr("primaldual.solvers.newton.serial_blas_exit",
                        lambda: calls.append("exit"))
    X, y = _data()
    X[np.abs(X) < 1.0] = 0.0
    r = primaldual.solve(sp.csr_matrix(X), y, loss="squared_hinge", lam=1e-2,
                         solver="newton", hessian="explicit")
    assert r.converged and calls == ["enter", "exit"]
    assert _blas.serial_blas_enter is not None
