"""Multinomial Newton-CG in a trust region (docs/multiclass-models.md): news20
at ``C = 100`` (raw counts, ``lam = 6e-7``) did not certify by default
because the line search cut each Newton direction, found by hundreds of CG
products, to ``2^-14`` of its length.  Here: Steihaug's CG and TRON's radius
rules against their definitions, the optimum and the certificate against
cvxpy and the formulas by hand, a checkpoint resumed, and a small count data
set on which the line search shows the same failure.
"""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
import scipy.sparse as sp

import primaldual
from primaldual.solvers._multiclass import _in_legs
from primaldual.multiclass import MulticlassProblem
from primaldual.solvers.multinomial_trust import (ETA0, ETA1, ETA2, SIGMA1, SIGMA3, metric_floor,
                                                  new_radius, steihaug_cg)

from test_multiclass import _cvxpy_optimum, blobs, by_hand


def _spd(m=30, seed=0):
    rng = np.random.default_rng(seed)
    A = rng.normal(size=(m, m)) * np.logspace(0, 2, m)
    H = A.T @ A / m + 1e-3 * np.eye(m)
    return H, rng.normal(size=m), rng.random(m) + 0.5


def test_steihaug_cg_solves_inside_and_stops_on_the_boundary():
    H, g, mdiag = _spd()
    hv = lambda v: H @ v                                            # noqa: E731
    pre = lambda r: r / mdiag                                       # noqa: E731
    s, r, it, edge = steihaug_cg(hv, g, pre, mdiag, 1e12, 1e-10, 500)
    assert not edge
    np.testing.assert_allclose(s, np.linalg.solve(H, -g), rtol=1e-7)
    np.testing.assert_allclose(r, -g - H @ s, atol=1e-9)
    model = lambda v: g @ v + 0.5 * v @ H @ v                       # noqa: E731
    for delta in (1e-3, 0.1, 0.5 * np.sqrt(s @ (mdiag * s))):
        sb, rb, _, edge = steihaug_cg(hv, g, pre, mdiag, delta, 1e-10, 500)
        assert edge and np.sqrt(sb @ (mdiag * sb)) == pytest.approx(delta, rel=1e-10)
        np.testing.assert_allclose(rb, -g - H @ sb, atol=1e-9)
        assert -(g @ sb - sb @ rb) / 2 == pytest.approx(-model(sb), rel=1e-9)
        # at least the decrease of the Cauchy point along -M^{-1} g
        d = -g / mdiag
        t = min(-(g @ d) / (d @ H @ d), delta / np.sqrt(d @ (mdiag * d)))
        assert model(sb) <= model(t * d) + 1e-12


def test_new_radius_follows_trons_rules():
    delta, snorm, gs = 2.0, 1.0, -1.0
    # a good model on the boundary: four times the radius
    assert new_radius(delta, snorm, gs, 0.9, 1.0, True) == SIGMA3 * delta
    assert new_radius(delta, snorm, gs, 0.9, 1.0, False) >= delta
    # a step whose actual decrease is below ETA0 of the prediction shrinks it
    bad = new_radius(delta, snorm, gs, 0.5 * ETA0, 1.0, True)
    assert bad <= 0.5 * delta
    # increase of f: alpha from the quadratic through f, g.s and f_new
    worse = new_radius(delta, snorm, gs, -3.0, 1.0, True)
    assert worse == pytest.approx(max(SIGMA1, 0.5 / 2.0) * snorm)
    mid = new_radius(delta, snorm, gs, 0.5 * (ETA1 + ETA2), 1.0, True)
    assert SIGMA1 * delta <= mid <= SIGMA3 * delta


@pytest.mark.parametrize("sparse,floor", [(False, 0.01), (True, 0.01), (True, 0.0), (True, 1.0)])
def test_trust_region_reaches_the_cvxpy_optimum_with_an_exact_certificate(sparse, floor):
    X, y = blobs(70, 6, 4, seed=5, sparse=sparse, scale=3.0)
    c = np.random.default_rng(6).integers(1, 4, 70).astype(float)
    lam = 1e-3
    ref = _cvxpy_optimum(X.toarray() if sparse else X, y, lam, c, "multinomial")
    res = primaldual.solve(X, y, loss="multinomial", lam=lam, sample_weight=c, tol=1e-10,
                           globalization="trust_region", trust_floor=floor)
    assert res.converged and "trust_radius" in res.trace[-1]
    assert_optimum_by_hand(X, y, res, lam, c, ref)


def assert_optimum_by_hand(X, y, res, lam, c, ref):
    """``res`` at cvxpy's optimum ``ref``, its primal and dual recomputed by
    hand, its gap certified to 1e-10."""
    assert abs(res.primal - ref) <= 1e-7 * ref
    P, D = by_hand(X, y, res.coef, res.dual_coef, lam, c, "multinomial")
    assert P == pytest.approx(res.primal, rel=1e-12)
    assert D == pytest.approx(res.dual, rel=1e-10, abs=1e-14)
    assert P - D <= 1e-10 * P


def test_trust_region_resumes_from_a_checkpoint_with_its_radius(tmp_path):
    X, y = _counts(n=80, d=600, K=4)
    kw = dict(loss="multinomial", lam=1e-2, tol=1e-10, globalization="trust_region", start="zero",
              check_every=1)
    once = primaldual.solve(X, y, **kw)
    # cut where the CG budget ends a step early: the radius goes on from the file
    part = primaldual.solve(X, y, checkpoint=tmp_path, max_epochs=6, **kw)
    radius = part.trace[-1]["trust_radius"]
    assert part.stop_reason == "max_epochs" and radius > 0
    full = primaldual.solve(X, y, resume=tmp_path, **kw)
    n = len(part.trace)
    assert [r["trust_radius"] for r in full.trace[:n]] == [r["trust_radius"] for r in part.trace]
    # the first step after the cut starts from the kept radius (TRON's factors)
    assert SIGMA1 * radius <= full.trace[n]["trust_radius"] <= SIGMA3 * radius
    assert once.converged and full.converged
    assert full.primal == pytest.approx(once.primal, rel=1e-10)


def _counts(n=300, d=5000, K=20, seed=0, scale=200.0, spread=1.5, signal=0.3):
    """Raw term counts as in news20: Zipf words, log-normal document lengths
    (a few documents of thousands of words), each class more likely to use
    its own 1/K of the words."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, K, n)
    base = 1.0 / np.arange(1, d + 1)
    own = (np.arange(d) * 7)[None, :] % K == np.arange(K)[:, None]
    rows = np.zeros((n, d))
    for i in range(n):
        w = base * (1.0 + signal * own[y[i]])
        rows[i] = rng.multinomial(int(rng.lognormal(np.log(scale), spread)) + 1, w / w.sum())
    return sp.csr_matrix(rows), y


def test_on_raw_counts_at_small_lam_the_default_step_is_the_trust_region():
    # the mechanism of news20 at C = 100: after the dual start, CG solves for a
    # Newton direction that the line search cuts to a tiny fraction; in the same
    # passes the trust region certifies a gap four orders of magnitude lower
    X, y = _counts()
    lam = 1.0 / (1e4 * X.shape[0])
    line = primaldual.solve(X, y, loss="multinomial", lam=lam, max_epochs=400,
                            globalization="line_search")
    auto = primaldual.solve(X, y, loss="multinomial", lam=lam, max_epochs=400)
    assert line.n_epochs <= 402 and auto.n_epochs <= 402      # CG keeps to the budget
    assert "trust_radius" in auto.trace[-1]
    # (before: one line-search step in 476 passes, at a primal of 0.21 and a gap
    # of 2e+8; the line search, now kept to the budget: 3.7e-4 and 2e+6)
    assert auto.primal < 0.7 * line.primal
    assert auto.rel_gap < 1e-4 * line.rel_gap


@pytest.mark.parametrize("sparse", [False, True])
def test_metric_floor_is_the_diagonal_of_a_hessian_of_constant_row_curvature(sparse):
    X, y = blobs(40, 7, 3, seed=2, sparse=sparse, scale=2.0)
    c = np.random.default_rng(3).integers(1, 4, 40).astype(float)
    prob = MulticlassProblem(X, y, "multinomial", 1e-3, sample_weight=c)
    Xd = X.toarray() if sparse else X
    # the explicit Hessian's diagonal with p_ik (1 - p_ik) = 0.01 on every row
    by_hand = np.array([sum(c[i] * 0.01 * Xd[i, j] ** 2 for i in range(40)) / c.sum() + 1e-3
                        for j in range(7)])
    np.testing.assert_allclose(metric_floor(prob, 0.01), by_hand, rtol=1e-13)
    assert metric_floor(prob, 0.0) is None


def test_on_standardized_counts_the_floored_metric_takes_the_steps_the_diagonal_turns_down():
    # the mechanism of news20 standardized at C = 100: rare words take values of
    # ~sqrt(n); in H's diagonal metric a saturated row's scores may move far
    # where its loss is exponential, so half the steps are turned down and the
    # radius stays small; floored, the region keeps every row's scores near
    X, y = _counts(n=200, d=3000, K=10)
    X = sp.csr_matrix(X.multiply(1.0 / np.sqrt(np.asarray(X.multiply(X).mean(0)).ravel()
                                                - np.square(np.asarray(X.mean(0)).ravel())
                                                + 1e-300)))
    kw = dict(loss="multinomial", lam=1.0 / (100 * 200), max_epochs=400, start="zero",
              solver="multinomial_newton", globalization="trust_region")
    plain = primaldual.solve(X, y, trust_floor=0.0, **kw)
    floored = primaldual.solve(X, y, **kw)
    # (measured: 34 of 66 steps turned down and a gap of 0.09 after 400 passes;
    # floored, 5 of 22 and certified after 181)
    assert floored.converged and not plain.converged
    assert floored.n_epochs < 0.7 * plain.n_epochs
    assert floored.trace[-1]["rejected_steps"] < 0.5 * plain.trace[-1]["rejected_steps"]
    assert floored.primal < plain.primal
    P, D = by_hand(X, y, floored.coef, floored.dual_coef, kw["lam"], np.ones(200), "multinomial")
    assert P - D <= 1e-6 * P


class _Scripted:
    """A stand-in solver class for ``_in_legs``: each run returns the next of
    ``legs`` (primal, gaps at its checks, converged) and records its warm
    start and pass budget."""

    legs, starts, budgets = [], [], []
    default_max_epochs = 100

    def __init__(self, problem, warm_start=None, max_epochs=None, **kw):
        self.warm = warm_start
        self.budgets.append(max_epochs)


    def run(self):
        primal, gaps, ok = self.legs[len(self.starts)]
        self.starts.append(self.warm)
        trace = [{"time": float(t), "rel_gap": g} for t, g in enumerate(gaps, 1)]
        return SimpleNamespace(primal=primal, rel_gap=gaps[-1], converged=ok, trace=trace,
                               stop_reason="converged" if ok else "max_epochs", time=1.0,
                               n_epochs=100.0, solver="scripted", extras={})


@pytest.mark.parametrize("descent", [False, True])
def test_legs_of_a_descent_method_go_on_while_its_objective_falls(descent):
    # news20 at C = 100: the certified gap of Newton hovers (1e-2, 2e-2, 9e-3)
    # through a leg whose objective falls; near the end a leg lowers the
    # objective by less than tol |P| (but beyond rounding) and its gap by less
    # than half, and the next reaches the target
    _Scripted.legs = [(1.0, [1e2, 1e-2], False), (0.99, [2e-2, 9e-3], False),
                      (0.99 - 1e-9, [8e-3, 7e-3], False), (0.99 - 2e-9, [1e-4, 5e-7], True)]
    _Scripted.starts, _Scripted.budgets = [], []
    kw = dict(tol=1e-6, max_epochs=None)
    res = _in_legs(_Scripted, SimpleNamespace(n=1000), kw, None, "scripted", descent=descent)
    assert len(res.extras["path"]) == (4 if descent else 2)
    assert res.converged == descent
    # each leg goes on from the last leg's point, even where its gap was higher
    assert _Scripted.starts[1] is not None
    if descent:
        assert _Scripted.starts[2].primal == 0.99
        assert res.n_epochs == 400.0
        # the legs after the first twice the last one's passes (its n_epochs: 100)
        assert _Scripted.budgets == [None, 200.0, 200.0, 200.0]
