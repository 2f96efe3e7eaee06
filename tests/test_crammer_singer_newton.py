"""Projected Newton on the Crammer-Singer dual (solvers/crammer_singer_newton.py):
its optimum against cvxpy with Clarabel, its certificate by hand, the face's
projections, the warm start from the dual method, resume, and
``solver="auto"``'s hand-over where the IPM does not fit
(docs/multiclass-models.md)."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

import primaldual
from primaldual.kernels.cs_face import cs_face_project, cs_project_rows

from test_multiclass import _cvxpy_optimum, blobs, by_hand

KW = dict(loss="crammer_singer", solver="crammer_singer_newton")


def correlated(n=150, d=12, K=4, seed=0):
    """Rows near one common direction (a shared offset much larger than the
    class signal): the dual coordinate method crawls at a small ``lam``."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, K, n)
    X = 3.0 * rng.normal(size=(1, d)) + 0.3 * rng.normal(size=(K, d))[y] \
        + 0.3 * rng.normal(size=(n, d))
    return X, y


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("lam", [0.02, 1e-3])
def test_optimum_matches_cvxpy_and_gap_by_hand(sparse, lam):
    X, y = blobs(60, 5, 3, seed=7, sparse=sparse)
    c = np.random.default_rng(8).integers(1, 4, 60).astype(float)
    ref = _cvxpy_optimum(X.toarray() if sparse else X, y, lam, c, "crammer_singer")
    res = primaldual.solve(X, y, lam=lam, sample_weight=c, tol=1e-9, **KW)
    assert res.converged and res.solver == "crammer_singer_newton"
    assert abs(res.primal - ref) <= 1e-7 * abs(ref)
    assert res.dual <= ref + 1e-9 * abs(ref)
    P, D = by_hand(X, y, res.coef, res.dual_coef, lam, c, "crammer_singer")
    assert res.primal == pytest.approx(P, rel=1e-12)
    assert res.dual == pytest.approx(D, rel=1e-10, abs=1e-14)
    assert res.gap == pytest.approx(P - D, abs=1e-12) and res.gap >= 0
    p = -res.dual_coef                     # e_y - alpha on the simplex
    p[np.arange(60), y] += 1.0
    assert p.min() >= -1e-12 and np.allclose(p.sum(1), 1.0, atol=1e-12)


def test_face_projection_and_row_projection_by_hand():
    rng = np.random.default_rng(1)
    v = rng.normal(size=(3, 4))
    free = np.array([[True, True, False, True], [True, False, False, False],
                     [True, True, True, True]])
    scale = np.array([2.0, 1.0, 0.5])
    out = v.copy()
    cs_face_project(out, free, scale)
    for r in range(3):
        f = free[r]
        want = np.where(f, (v[r] - v[r, f].mean()) * scale[r], 0.0)
        np.testing.assert_allclose(out[r], want, atol=1e-15)
    # the projection onto {sum b = 0, b <= C e_y} against the KKT conditions
    K, n = 5, 40
    y = rng.integers(0, K, n)
    C = rng.uniform(0.5, 2.0, n)
    beta = np.zeros((n, K))
    d = 3.0 * rng.normal(size=(n, K))
    rows = np.arange(n, dtype=np.int64)
    new = np.empty((n, K))
    work = tuple(np.empty(K) for _ in range(4))
    assert cs_project_rows(beta, rows, d, 1.0, C, y, new, *work) == 0
    cap = np.zeros((n, K))
    cap[rows, y] = C
    assert np.abs(new.sum(1)).max() <= 1e-12 and (new <= cap).all()
    # b = min(cap, v + theta): one theta per row
    theta = (new - d)[new < cap]
    for i in range(n):
        m = new[i] < cap[i]
        th = (new[i] - d[i])[m]
        np.testing.assert_allclose(th, th[0], atol=1e-12)
        assert ((d[i] + th[0])[~m] >= cap[i][~m] - 1e-12).all()
    assert theta.size


def test_warm_start_from_a_few_dual_epochs_and_resume_is_bitwise(tmp_path):
    X, y = correlated()
    lam = 1e-3
    few = primaldual.solve(X, y, loss="crammer_singer", lam=lam, max_epochs=5,
                           solver="crammer_singer_dual")
    assert not few.converged
    res = primaldual.solve(X, y, lam=lam, tol=1e-9, warm_start=few, **KW)
    assert res.converged and res.trace[0]["dual"] == pytest.approx(few.dual, rel=1e-9)
    duals = [r["dual"] for r in res.trace]
    assert all(b >= a - 1e-12 * abs(a) for a, b in zip(duals, duals[1:]))
    # stopped after 3 iterations at a checkpoint and resumed: the same iterates
    full = primaldual.solve(X, y, lam=lam, tol=1e-9, random_state=4, **KW)
    part = primaldual.solve(X, y, lam=lam, tol=1e-9, random_state=4, max_epochs=3,
                            checkpoint=tmp_path, **KW)
    assert part.stop_reason == "max_epochs"
    back = primaldual.solve(X, y, lam=lam, tol=1e-9, random_state=4, resume=tmp_path, **KW)
    assert back.n_epochs == full.n_epochs and back.converged
    assert np.array_equal(back.coef, full.coef)
    assert np.array_equal(back.dual_coef, full.dual_coef)
    with pytest.raises(ValueError, match="shape"):
        primaldual.solve(X, y, lam=lam, warm_start=np.zeros((3, 4)), **KW)
    with pytest.raises(ValueError, match="does not fit loss='multinomial'"):
        primaldual.solve(X, y, loss="multinomial", lam=lam, solver="crammer_singer_newton")


def test_rows_of_zeros_and_csr_equal_dense():
    X, y = blobs(50, 6, 3, seed=2)
    X[[3, 17]] = 0.0
    lam = 5e-3
    dense = primaldual.solve(X, y, lam=lam, tol=1e-9, **KW)
    csr = primaldual.solve(sp.csr_matrix(X), y, lam=lam, tol=1e-9, **KW)
    assert dense.converged and csr.converged
    assert csr.primal == pytest.approx(dense.primal, rel=1e-8)


def test_auto_hands_the_crawling_dual_method_over_and_certifies(monkeypatch):
    """Where the IPM does not fit, the dual method stopped at its epoch cap
    far from the target hands over to the Newton method, warm, which certifies."""
    from primaldual.solvers import _multiclass
    from primaldual.solvers.crammer_singer import CrammerSingerDual
    X, y = correlated(200, 12, 4, seed=3)
    lam = 1e-4
    monkeypatch.setattr(_multiclass, "ipm_fits", lambda problem: False)
    monkeypatch.setattr(CrammerSingerDual, "default_max_epochs", 200)
    crawl = primaldual.solve(X, y, loss="crammer_singer", lam=lam, tol=1e-6,
                             solver="crammer_singer_dual", max_epochs=200)
    assert not crawl.converged and crawl.rel_gap > 1e-3
    res = primaldual.solve(X, y, loss="crammer_singer", lam=lam, tol=1e-6)
    legs = res.extras["path"]
    assert legs[0]["method"] == "crammer_singer_dual"
    assert legs[-1]["method"] == "crammer_singer_newton" == res.solver
    assert res.converged and res.rel_gap <= 1e-6
    P, D = by_hand(X, y, res.coef, res.dual_coef, lam, np.ones(len(y)), "crammer_singer")
    assert P - D == pytest.approx(res.gap, rel=1e-6, abs=1e-14)


def test_stalls_when_the_lowest_gap_stops_halving():
    """With ``tol=0`` the gap reaches rounding and stops halving: the run ends
    ``stalled`` (STALL_WINDOW iterations after the last halving), certified."""
    from primaldual.solvers.crammer_singer_newton import STALL_START, STALL_WINDOW
    X, y = correlated(80, 10, 3, seed=5)
    res = primaldual.solve(X, y, lam=1e-3, tol=0.0, **KW)
    assert res.stop_reason == "stalled" and res.extras["stall"] == "no_progress"
    assert res.n_epochs >= max(STALL_START, STALL_WINDOW)
    gaps = [r["rel_gap"] for r in res.trace]       # a check at every iteration
    assert min(gaps[-STALL_WINDOW:]) > 0.5 * min(gaps[:-STALL_WINDOW])   # no halving
    assert res.rel_gap < 1e-9
