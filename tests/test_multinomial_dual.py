"""Dual coordinate descent for multinomial logistic regression
(``multinomial_dual_cd``, and Newton-CG started from it; issue 33):
the block subproblem against cvxpy, the optimum against cvxpy with Clarabel,
the gap recomputed by hand, weights, warm starts and checkpoints.
"""
from __future__ import annotations

import numpy as np
import pytest

import primaldual
from primaldual.kernels.multinomial_dual import mn_subproblem

from conftest import optional_import
from test_multiclass import _cvxpy_optimum, blobs, by_hand


def test_block_subproblem_against_cvxpy_and_its_optimality_conditions():
    cp = optional_import("cvxpy", "cvxpy is the reference solver")
    rng = np.random.default_rng(0)
    for a in (0.0, 0.3, 5.0, 400.0):
        K = int(rng.integers(2, 6))
        z = rng.normal(size=K) * 3
        pold = rng.dirichlet(np.ones(K))
        b = z + a * pold
        new, t = np.empty(K), np.empty(K)
        mn_subproblem(a, b, t, new, K)
        assert new.sum() == pytest.approx(1.0, abs=1e-14) and np.all(new > 0)
        # log p_k + a p_k - b_k is the same for every k (the multiplier)
        r = np.log(new) + a * new - b
        assert np.ptp(r) <= 1e-9 * max(1.0, a)
        p = cp.Variable(K)
        cp.Problem(cp.Minimize(-z @ p + a / 2 * cp.sum_squares(p - pold) - cp.sum(cp.entr(p))),
                   [cp.sum(p) == 1]).solve(solver="CLARABEL", tol_gap_abs=1e-10,
                                           tol_gap_rel=1e-10, tol_feas=1e-10)

        def f(q):
            return -z @ q + a / 2 * np.sum((q - pold) ** 2) + np.sum(q * np.log(q))
        ref = np.clip(p.value, 1e-300, None)
        assert f(new) <= f(ref / ref.sum()) + 1e-9       # at least as good as Clarabel's
        np.testing.assert_allclose(new, p.value, atol=1e-5)


@pytest.mark.parametrize("sparse", [False, True])
def test_optimum_matches_cvxpy_with_weights_and_gap_by_hand(sparse):
    X, y = blobs(60, 5, 3, seed=7, sparse=sparse)
    c = np.random.default_rng(8).integers(1, 4, 60).astype(float)
    lam = 0.02
    ref = _cvxpy_optimum(X.toarray() if sparse else X, y, lam, c, "multinomial")
    res = primaldual.solve(X, y, loss="multinomial", lam=lam, sample_weight=c, tol=1e-9,
                           solver="multinomial_dual_cd", max_epochs=20000, random_state=1)
    assert res.converged and res.solver == "multinomial_dual_cd"
    assert abs(res.primal - ref) <= 1e-6 * abs(ref)
    assert res.dual <= ref + 1e-9 * abs(ref)
    P, D = by_hand(X, y, res.coef, res.dual_coef, lam, c, "multinomial")
    assert res.primal == pytest.approx(P, rel=1e-12)
    assert res.dual == pytest.approx(D, rel=1e-10, abs=1e-14)
    # the dual method returns its own iterate: coef = coef(alpha)
    Xd = X.toarray() if sparse else X
    np.testing.assert_allclose(res.coef, Xd.T @ (c[:, None] * res.dual_coef) / c.sum() / lam,
                               atol=1e-10)


def test_newton_started_by_dual_cd_reaches_the_same_optimum_and_resumes(tmp_path):
    X, y = blobs(120, 8, 4, seed=3, sparse=True, scale=3.0)
    lam = 1e-3
    ref = primaldual.solve(X, y, loss="multinomial", lam=lam, tol=1e-12, start="zero")
    res = primaldual.solve(X, y, loss="multinomial", lam=lam, tol=1e-10, start="dual_cd",
                           start_epochs=5, random_state=2)
    assert res.converged and res.options["start"] == "dual_cd"
    assert abs(res.primal - ref.primal) <= 1e-9 * ref.primal
    assert res.trace[1]["epoch"] >= 10             # the five dual epochs count as passes
    # cut inside the dual start, resumed from the checkpoint: the same run
    part = primaldual.solve(X, y, loss="multinomial", lam=lam, tol=1e-10, start="dual_cd",
                            start_epochs=9, random_state=2, checkpoint=tmp_path,
                            max_epochs=4, check_every=1)
    assert part.stop_reason == "max_epochs"
    full = primaldual.solve(X, y, loss="multinomial", lam=lam, tol=1e-10, start="dual_cd",
                            start_epochs=9, random_state=2, resume=tmp_path, check_every=1)
    once = primaldual.solve(X, y, loss="multinomial", lam=lam, tol=1e-10, start="dual_cd",
                            start_epochs=9, random_state=2, check_every=1)
    assert full.converged
    np.testing.assert_allclose(full.coef, once.coef, rtol=1e-9, atol=1e-12)


def test_dual_cd_warm_start_checkpoint_and_errors(tmp_path):
    X, y = blobs(80, 6, 4, seed=9)
    kw = dict(loss="multinomial", solver="multinomial_dual_cd", tol=1e-8, max_epochs=5000,
              random_state=3)
    res = primaldual.solve(X, y, lam=0.01, **kw)
    warm = primaldual.solve(X, y, lam=0.012, warm_start=res, **kw)
    cold = primaldual.solve(X, y, lam=0.012, **kw)
    assert warm.converged and cold.converged
    assert warm.trace[0]["rel_gap"] < 0.5 * cold.trace[0]["rel_gap"]
    assert warm.primal == pytest.approx(cold.primal, rel=1e-7)
    part = primaldual.solve(X, y, lam=0.01, checkpoint=tmp_path, check_every=1,
                            **dict(kw, max_epochs=3))
    assert part.stop_reason == "max_epochs"
    full = primaldual.solve(X, y, lam=0.01, resume=tmp_path, check_every=1, **kw)
    assert full.converged and full.primal == pytest.approx(res.primal, rel=1e-7)
    with pytest.raises(ValueError, match="not dual feasible"):
        primaldual.solve(X, y, lam=0.01, warm_start=np.ones((80, 4)), **kw)
    with pytest.raises(ValueError, match="shape"):
        primaldual.solve(X, y, lam=0.01, warm_start=np.zeros((80, 3)), **kw)
    with pytest.raises(ValueError, match="multinomial"):
        primaldual.solve(X, y, loss="crammer_singer", lam=0.01,
                         solver="multinomial_dual_cd")


def test_linear_classifier_with_the_dual_method_and_class_weights():
    X, y = blobs(90, 5, 3, seed=11)
    kw = dict(loss="multinomial", C=0.5, tol=1e-9, class_weight={0: 2.0}, random_state=0)
    a = primaldual.LinearClassifier(solver="multinomial_dual_cd", max_iter=20000,
                                    **kw).fit(X, y)
    b = primaldual.LinearClassifier(**kw).fit(X, y)
    assert a.solver_ == "multinomial_dual_cd" and a.converged_
    assert b.solver_ == "multinomial_newton" and b.converged_
    assert a.primal_ == pytest.approx(b.primal_, rel=1e-8)
    # a relative gap of 1e-9 puts coef within sqrt(2 gap / lam) of the optimum
    np.testing.assert_allclose(a.coef_, b.coef_, atol=1e-3)
    np.testing.assert_allclose(a.predict_proba(X), b.predict_proba(X), atol=1e-4)
