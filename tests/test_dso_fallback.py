"""DSO's default safeguards: the adaptive primal weight where it applies, and the
fallback to the best point seen (``fallback="best"``) with halved AdaGrad steps."""
from __future__ import annotations

import math

import numpy as np
import pytest

import primaldual
from primaldual.datasets import make_synthetic
from primaldual.problem import Problem
from primaldual.solvers import SOLVERS

DSO = SOLVERS["dso"]


def _binary(n, seed):
    """Binary w8a-shaped rows (make_synthetic's shape, every stored value 1)."""
    X, y, _ = make_synthetic((n, 300, 0.04), random_state=seed)
    X = X.copy()
    X.data[:] = 1.0
    return X, y


def test_default_primal_weight_is_adaptive_where_it_applies():
    X, y = _binary(300, 1)
    prob = Problem(X, y, loss="hinge", lam=1e-3)
    mk = dict(tol=0.0, max_epochs=1, random_state=0)
    assert DSO(prob, **mk).resolved_opts.primal_weight == "adaptive"
    assert DSO(prob, **mk).opts.primal_weight is None                 # as given
    for other in (dict(step="sqrt"), dict(restart=None), dict(step="constant", eta0=1.0)):
        s = DSO(prob, **mk, **other)
        assert s.resolved_opts.primal_weight == 1.0 and not s.adaptive_weight
    assert DSO(prob, primal_weight=2.0, **mk).resolved_opts.primal_weight == 2.0
    # the fallback needs AdaGrad's steps and the restart test
    assert DSO(prob, **mk).fallback
    assert not DSO(prob, fallback=None, **mk).fallback
    assert not DSO(prob, step="sqrt", **mk).fallback
    assert not DSO(prob, restart=None, **mk).fallback
    with pytest.raises(ValueError, match="fallback"):
        DSO(prob, fallback="worst", **mk)


def _solver_after(epochs, **opts):
    X, y = _binary(400, 2)
    prob = Problem(X, y, loss="logistic", lam=1e-2)        # lam n = 4: certified fast
    s = DSO(prob, tol=0.0, max_epochs=epochs + 5, random_state=3, **opts)
    s.init_state(None)
    s.advance(epochs, None)
    return s


def test_fallback_returns_to_the_best_point_with_halved_steps():
    s = _solver_after(30)
    prob = s.problem
    assert s.fb_dual >= s.FALLBACK_GATE * s.fb_primal          # the bound is informative
    best_w, best_a = s.fb_w.copy(), s.fb_a.copy()
    assert prob.primal(best_w) == pytest.approx(s.fb_primal, rel=1e-12)
    Gw, Ga, n_fb, n_rs = s.Gw.copy(), s.Ga.copy(), s.n_fallbacks, s.n_restarts
    s.w[:] = 3.0 * s.w + 0.5                       # far from the optimum: P(w) - D_best
    assert prob.primal(s.w) - s.fb_dual > 4.0 * (s.fb_primal - s.fb_dual)     # quadrupled
    assert s._restart_check() is True
    np.testing.assert_array_equal(s.w, best_w)
    np.testing.assert_array_equal(s.alpha, best_a)
    np.testing.assert_array_equal(s.Gw, 4.0 * Gw)  # every AdaGrad step / 2
    np.testing.assert_array_equal(s.Ga, 4.0 * Ga)
    assert s.n_fallbacks == n_fb + 1 and s.n_restarts == n_rs + 1
    assert s.rs_n == 0                              # a new window
    assert s.trace_extras()["fallbacks"] == n_fb + 1
    # a modest move (less than four times the best point's bound) is not a fallback
    s2 = _solver_after(30)
    w_before = s2.w.copy()
    assert s2.problem.primal(s2.w) - s2.fb_dual <= 4.0 * (s2.fb_primal - s2.fb_dual)
    n2 = s2.n_fallbacks
    s2._restart_check()
    assert s2.n_fallbacks == n2 and not np.array_equal(s2.fb_w, np.zeros_like(w_before))


def test_fallback_waits_for_an_informative_bound():
    """While the best dual value is below FALLBACK_GATE times the best primal, no
    fallback, whatever the iterate does (early epochs: D is far below P)."""
    s = _solver_after(30)
    s.fb_dual = 0.4 * s.fb_primal                   # pretend the dual is still poor
    s.FALLBACK_GATE = 0.5
    d_good = 0.9 * 1e6                              # an iterate gap below PW_GATE P
    assert s._diverged(1e6, d_good) is None
    s.fb_dual = 0.6 * s.fb_primal
    assert s._diverged(1e6, d_good) == "bound"
    assert s._diverged(s.fb_primal, s.fb_dual) is None


def test_primal_fallback_where_no_gap_can_be_read():
    """An iterate whose certified gap is above PW_GATE times its primal (the dual
    says nothing) falls back when its primal doubles the best one, steps kept."""
    s = _solver_after(30)
    s.fb_dual = -1e9                                # no informative dual bound
    p_best = s.fb_primal
    d_bad = -2e3 * 3.0 * p_best                     # gap 2001 x P: uninformative
    assert s._diverged(3.0 * p_best, d_bad) == "primal"
    assert s._diverged(1.5 * p_best, d_bad) is None                  # not doubled
    assert s._diverged(3.0 * p_best, 2.0 * p_best) is None           # gap readable
    best_w = s.fb_w.copy()
    Gw = s.Gw.copy()
    s.w[:] = 50.0 * s.w + 5.0                       # P(w) far above 2 P_best
    assert s.problem.primal(s.w) > 2 * p_best
    s.PW_GATE = 0.0                                 # any gap counts as unreadable here
    s.FALLBACK_GATE = 2.0                           # and no dual bound is trusted
    n_fb = s.n_fallbacks
    assert s._restart_check() is True and s.n_fallbacks == n_fb + 1
    np.testing.assert_array_equal(s.w, best_w)
    np.testing.assert_array_equal(s.Gw, Gw)         # steps kept


def test_best_dual_and_point_track_the_checks():
    """fb_dual is the largest D of the iterates and window averages seen and fb_w the
    point with the smallest P, each certified by an exact evaluation."""
    s = _solver_after(12)
    prob = s.problem
    d_now = prob.dual(s.alpha)
    p_now = prob.primal(s.w)
    s._restart_check()
    assert s.fb_dual >= d_now - 1e-12 and s.fb_primal <= p_now + 1e-12
    assert prob.primal(s.fb_w) == pytest.approx(s.fb_primal, rel=1e-12)
    assert s.fb_dual <= prob.dual(s.alpha) or math.isfinite(s.fb_dual)


@pytest.mark.parametrize("n_workers", [1, 2])
def test_fallbacks_survive_resume(monkeypatch, n_workers):
    """The best point, the best dual value and the fallback count are in the
    checkpoint: a run with fallbacks on both sides of the cut, resumed, is bitwise
    the uninterrupted run (a ratio just above 1 makes fallbacks frequent)."""
    monkeypatch.setattr(DSO, "FALLBACK_RATIO", 1.0 + 1e-9)
    X, y = _binary(500, 4)
    kw = dict(loss="hinge", lam=1e-2, solver="dso", random_state=5, tol=0.0,
              n_workers=n_workers)
    full = primaldual.solve(X, y, max_epochs=40, check_every=1, **kw)
    cut = 25
    part = primaldual.solve(X, y, max_epochs=cut, check_every=1, **kw)
    rest = primaldual.solve(X, y, max_epochs=40, check_every=1, resume=part.state, **kw)
    np.testing.assert_array_equal(rest.coef, full.coef)
    np.testing.assert_array_equal(rest.dual_coef, full.dual_coef)
    assert 0 < part.trace[-1]["fallbacks"] < full.trace[-1]["fallbacks"]
    assert rest.trace[-1]["fallbacks"] == full.trace[-1]["fallbacks"]


def test_primal_weight_waits_for_an_informative_gap(monkeypatch):
    """omega moves only at restarts whose gap is at most PW_GATE times P(w): with
    the gate at 0 it never moves, with the default it does."""
    X, y = _binary(500, 6)
    kw = dict(loss="hinge", lam=1e-3, solver="dso", random_state=1, tol=0.0,
              max_epochs=25, check_every=5)
    moved = DSO(Problem(X, y, loss="hinge", lam=1e-3), tol=0.0, max_epochs=25,
                random_state=1)
    moved.run()
    assert moved.pw_log != 0.0
    monkeypatch.setattr(DSO, "PW_GATE", 0.0)
    still = DSO(Problem(X, y, loss="hinge", lam=1e-3), tol=0.0, max_epochs=25,
                random_state=1)
    still.run()
    assert still.pw_log == 0.0 and still.n_restarts > 0
    fixed = primaldual.solve(X, y, primal_weight=1.0, **kw)
    gated = primaldual.solve(X, y, **kw)
    np.testing.assert_array_equal(gated.coef, fixed.coef)      # the same run as omega = 1
