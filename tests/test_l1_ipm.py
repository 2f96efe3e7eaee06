"""``l1_ipm``, the log-barrier interior-point method for L1 and elastic-net
models: its optimum against an independent conic solver (cvxpy with Clarabel),
its certificate recomputed from the formulas of docs/conventions.md §1 (the
squared hinge through its QP, the other losses through the primal barrier),
its working set, its rounding to exact zeros, its state, its refusals, and
``solver="auto"`` handing a crawling ``l1cd`` leg over to it."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

import primaldual
from primaldual.solvers.sparse import barrier

from conftest import optional_import


def _data(n=120, d=15, seed=0, sparse=False):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d)) * rng.uniform(0.2, 3.0, d)
    y = np.where(X @ rng.standard_normal(d) + 0.7 * rng.standard_normal(n) > 0, 1.0, -1.0)
    if sparse:
        X[np.abs(X) < 0.6] = 0.0
        return sp.csr_matrix(X), y
    return X, y


def _cvxpy_value(X, y, loss, lam, l1, c):
    cp = optional_import("cvxpy", "cvxpy is the independent conic reference")
    X = X.toarray() if sp.issparse(X) else X
    w = cp.Variable(X.shape[1])
    m = cp.multiply(y, X @ w)
    if loss == "logistic":
        phi = cp.logistic(-m)
    elif loss == "squared_hinge":
        phi = cp.square(cp.pos(1 - m))
    else:
        phi = cp.square(X @ w - y) / 2
    obj = c @ phi / c.sum() + lam / 2 * cp.sum_squares(w) + l1 * cp.norm1(w)
    prob = cp.Problem(cp.Minimize(obj))
    prob.solve(solver="CLARABEL", tol_gap_abs=1e-12, tol_gap_rel=1e-12, tol_feas=1e-12)
    return float(prob.value)


def _by_hand(X, y, loss, lam, l1, w, alpha, c):
    """P(w) and D(alpha) from docs/conventions.md §1, written out per loss."""
    X = X.toarray() if sp.issparse(X) else X
    W = c.sum()
    z = X @ w
    if loss == "logistic":
        phi = np.logaddexp(0.0, -y * z)
        b = alpha * y                                   # in [0, 1]
        with np.errstate(divide="ignore", invalid="ignore"):
            ent = np.where(b > 0, b * np.log(b), 0.0) + np.where(b < 1, (1 - b) * np.log1p(-b), 0.0)
        neg_conj = -ent
    elif loss == "squared_hinge":
        phi = np.maximum(0.0, 1 - y * z) ** 2
        b = alpha * y                                   # >= 0
        neg_conj = b - b * b / 4
    else:
        phi = (z - y) ** 2 / 2
        neg_conj = alpha * y - alpha * alpha / 2
    P = c @ phi / W + lam / 2 * w @ w + l1 * np.abs(w).sum()
    v = X.T @ (c * alpha) / W
    if lam == 0:
        # inside the ball, up to the conjugate's rounding slack (penalties.py)
        assert np.abs(v).max() <= l1 + 1e-12 * max(1.0, l1)
        pen = 0.0
    else:
        pen = np.sum(np.maximum(np.abs(v) - l1, 0.0) ** 2) / (2 * lam)
    return P, c @ neg_conj / W - pen


@pytest.mark.parametrize("loss", ["logistic", "squared_hinge", "squared"])
@pytest.mark.parametrize("lam,C", [(0.0, 1.0), (0.0, 100.0), (1e-3, 10.0)])
@pytest.mark.parametrize("sparse", [False, True])
def test_optimum_matches_cvxpy_and_the_gap_by_hand(loss, lam, C, sparse):
    X, y = _data(sparse=sparse)
    c = np.random.default_rng(2).uniform(0.5, 2.0, len(y))
    l1 = 1.0 / (C * len(y))
    r = primaldual.solve(X, y, loss=loss, lam=lam, l1=l1, sample_weight=c,
                         solver="l1_ipm", tol=1e-9)
    assert r.converged and r.solver == "l1_ipm"
    P, D = _by_hand(X, y, loss, lam, l1, r.coef, r.dual_coef, c)
    assert P == pytest.approx(r.primal, rel=1e-10, abs=1e-14)
    assert D == pytest.approx(r.dual, rel=1e-9, abs=1e-14)
    assert P - D <= 1e-9 * abs(P) * (1 + 1e-6)
    ref = _cvxpy_value(X, y, loss, lam, l1, c)
    assert r.primal == pytest.approx(ref, rel=1e-7)
    assert D <= ref * (1 + 1e-9) + 1e-14               # weak duality against Clarabel


@pytest.fixture
def growing(monkeypatch):
    """The working set grows from a part of the features and never switches to
    the whole screened set (``GROW_START`` out of reach)."""
    monkeypatch.setattr(barrier, "GROW_START", 10 ** 9)


def test_a_working_set_smaller_than_the_features_reaches_the_same_optimum(growing):
    """``max_ws`` well below ``d``: features join the working set and leave it, and
    the optimum and its certificate are those of the whole problem."""
    X, y = _data(n=200, d=60, seed=3, sparse=True)
    kw = dict(loss="logistic", lam=0.0, l1=0.08, tol=1e-9)
    small = primaldual.solve(X, y, solver="l1_ipm", max_ws=24, **kw)
    ref = primaldual.solve(X, y, solver="l1cd", **kw)
    assert small.converged and small.extras["working_set"] <= 24
    assert np.count_nonzero(ref.coef) < 24 < X.shape[1]
    assert small.primal == pytest.approx(ref.primal, rel=1e-8)
    np.testing.assert_array_equal(small.coef != 0, ref.coef != 0)
    P, D = _by_hand(X, y, "logistic", 0.0, 0.08, small.coef, small.dual_coef, np.ones(len(y)))
    assert (P - D) <= 1e-9 * P * (1 + 1e-6)


@pytest.mark.parametrize("loss", ["logistic", "squared_hinge"])
def test_more_features_than_rows_solve_by_rows_on_every_feature(loss):
    """``n < d`` with ``n <= max_ws``: the Newton matrix is the rows' ``n x n``
    one (Sherman-Morrison-Woodbury), the working set holds every screened
    feature (more than ``max_ws``), and the optimum is Clarabel's."""
    rng = np.random.default_rng(11)
    n, d = 40, 160
    X = rng.standard_normal((n, d))
    y = np.where(X[:, :5] @ rng.standard_normal(5) > 0, 1.0, -1.0)
    l1 = 1.0 / (100.0 * n)                        # C = 100: separable, pure L1
    r = primaldual.solve(X, y, loss=loss, lam=0.0, l1=l1, solver="l1_ipm", tol=1e-9,
                         max_ws=n)
    assert r.converged and r.extras["working_set"] > n
    P, D = _by_hand(X, y, loss, 0.0, l1, r.coef, r.dual_coef, np.ones(n))
    assert P - D <= 1e-9 * P * (1 + 1e-6)
    assert r.primal == pytest.approx(_cvxpy_value(X, y, loss, 0.0, l1, np.ones(n)), rel=1e-7)


@pytest.mark.parametrize("loss", ["logistic", "squared_hinge"])
def test_a_growing_set_that_stalls_switches_to_the_whole_set(loss, monkeypatch, tmp_path):
    """With the stall rule of the growing set made eager (no halving in one
    iteration, after two), the run switches to every screened feature on a new
    central path, reaches Clarabel's optimum, and a checkpoint taken across the
    switch resumes bitwise."""
    monkeypatch.setattr(barrier, "GROW_START", 2)
    monkeypatch.setattr(barrier, "GROW_WINDOW", 1)
    X, y = _data(n=200, d=60, seed=3, sparse=True)
    kw = dict(loss=loss, lam=0.0, l1=0.01, solver="l1_ipm", tol=1e-9, max_ws=24)
    r = primaldual.solve(X, y, **kw)
    assert r.converged and r.extras["working_set"] > 24
    c = np.ones(len(y))
    assert r.primal == pytest.approx(_cvxpy_value(X, y, loss, 0.0, 0.01, c), rel=1e-7)
    P, D = _by_hand(X, y, loss, 0.0, 0.01, r.coef, r.dual_coef, c)
    assert P - D <= 1e-9 * P * (1 + 1e-6)
    switched = min(t["epoch"] for t in r.trace if t["working_set"] > 24)
    part = primaldual.solve(X, y, max_epochs=switched + 1, checkpoint=tmp_path, **kw)
    assert part.extras["working_set"] > 24 and part.n_epochs < r.n_epochs
    rest = primaldual.solve(X, y, resume=tmp_path, **kw)
    np.testing.assert_array_equal(rest.coef, r.coef)
    assert (rest.primal, rest.dual) == (r.primal, r.dual)


def test_the_stall_rule_starts_again_on_the_whole_set():
    """news20 (class 12 against the rest, squared hinge, C = 100): the growing
    set reached 0.1 in 24 iterations and the whole set restarted near 0.9 on
    its new central path; at iteration 50 its best, 4.6e-2, had not halved the
    growing set's best, and the run was ended as stalled where it would have
    certified.  The rule counts from the switch (``gaps_from``)."""
    from types import SimpleNamespace
    growing = list(np.geomspace(1.0, 0.1, 24))
    whole = list(np.geomspace(0.9, 0.06, 27))       # 0.06 > 0.1 / 2
    for start, stalled in ((0, True), (24, False)):
        s = SimpleNamespace(gaps=[], n_iter=0, stall="", gaps_from=start,
                            stall_start=barrier.L1BarrierSolver.stall_start,
                            stall_window=barrier.L1BarrierSolver.stall_window)
        for g in growing + whole:
            barrier.L1BarrierSolver._note_gap(s, g)
            s.n_iter += 1
        assert len(s.gaps) == 51 and bool(s.stall) is stalled


def test_a_pure_l1_dual_point_stays_in_the_ball_despite_rounding():
    """Columns spanning seven orders of magnitude (as default_cc as given) at
    C = 100: the image ``v`` of the rescaled dual point is computed with an
    absolute error above the ball's 1e-12 slack, and one rescaling left it
    outside (``D = -inf``: the fit raised at epoch 19).  The rescaling is
    repeated until the certificate's own ``v`` is inside, and the fit
    certifies with a dual value recomputed by hand."""
    rng = np.random.default_rng(0)
    n, d = 3000, 20
    X = rng.standard_normal((n, d)) * 10 ** rng.uniform(0, 7.0, d)
    y = np.where(X @ (rng.standard_normal(d) / np.abs(X).mean(0))
                 + rng.standard_normal(n) > 0, 1.0, -1.0)
    X = sp.csr_matrix(X)
    l1 = 1.0 / (100.0 * n)
    r = primaldual.solve(X, y, loss="logistic", lam=0.0, l1=l1, solver="l1_ipm", tol=1e-6)
    assert r.converged and np.isfinite(r.dual)
    P, D = _by_hand(X, y, "logistic", 0.0, l1, r.coef, r.dual_coef, np.ones(n))
    assert P == pytest.approx(r.primal, rel=1e-9)
    assert P - D <= 1e-6 * P * (1 + 1e-3)


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("by_rows", [False, True])
def test_the_newton_system_solves_in_either_form(sparse, by_rows):
    """:class:`NewtonSystem` against a dense solve, both forms, with ``e``
    spanning 24 orders of magnitude as it does near a pure L1 optimum (tiny
    on the nonzero coefficients, huge on the zeros) and rows of no curvature."""
    from primaldual.solvers.sparse.barrier_system import NewtonSystem
    rng = np.random.default_rng(5)
    n, m = 30, 50
    X = rng.standard_normal((n, m)) * (rng.uniform(size=(n, m)) < 0.3)
    cols = sp.csc_matrix(X) if sparse else np.asfortranarray(X)
    system = NewtonSystem(cols)
    assert system.by_rows                          # n < m: the rows cost less
    system.by_rows = by_rows
    system._rows = sp.csr_matrix(X) if sparse else None
    h = rng.uniform(0.0, 2.0, n)
    h[:5] = 0.0
    e = 10.0 ** rng.uniform(-12, 12, m)
    b = rng.standard_normal(m)
    x = system.factor(h, e)(b)
    exact = np.linalg.solve(X.T @ (h[:, None] * X) + np.diag(e), b)
    # by rows without refinement: 2e-5 (the identity's cancellation)
    assert np.abs(x - exact).max() <= 1e-10 * np.abs(exact).max()


@pytest.mark.parametrize("sparse", [False, True])
def test_the_cg_system_solves_to_its_residual_tolerance(sparse, monkeypatch):
    """:class:`CGNewtonSystem` (no matrix formed) against a dense solve, with
    ``e`` spanning 12 orders of magnitude and rows of no curvature: with the
    diagonal alone as preconditioner (``CG_BLOCK = 0``) and with the exact
    block of the features whose curvature outweighs ``e``.  Both meet
    ``CG_RTOL``; the block takes fewer products."""
    from primaldual.solvers.sparse import barrier_system as bs
    monkeypatch.setattr(bs, "CG_MAX_ITER", 2000)
    rng = np.random.default_rng(8)
    n, m = 90, 70
    X = rng.standard_normal((n, m)) * (rng.uniform(size=(n, m)) < 0.3)
    cols = sp.csc_matrix(X) if sparse else np.asfortranarray(X)
    h = rng.uniform(0.0, 2.0, n)
    h[:5] = 0.0
    e = 10.0 ** rng.uniform(-6, 6, m)
    b = rng.standard_normal(m)
    A = X.T @ (h[:, None] * X) + np.diag(e)
    exact = np.linalg.solve(A, b)
    free = int(np.sum(np.asarray((X * X).T @ h) > e))
    counts = {}
    for block in (0, 2000):
        monkeypatch.setattr(bs, "CG_BLOCK", block)
        system = bs.CGNewtonSystem(cols)
        x = system.factor(h, e)(b)
        assert np.linalg.norm(A @ x - b) <= bs.CG_RTOL * np.linalg.norm(b) * (1 + 1e-6)
        assert np.abs(x - exact).max() <= 1e-5 * np.abs(exact).max()
        assert system.block_size == min(block, free)
        counts[block] = system.cg_iterations
    assert 0 < free < m and 0 < counts[2000] < counts[0]


@pytest.mark.parametrize("loss", ["logistic", "squared_hinge"])
def test_every_system_by_cg_reaches_the_same_optimum(loss, monkeypatch):
    """Every Newton system solved by CG (``FULL_FLOPS = 0``, as on a working set
    too large for either matrix): the optimum is Clarabel's and the gap, recomputed
    by hand, is certified, on a pure L1 model at C = 100."""
    monkeypatch.setattr(barrier, "FULL_FLOPS", 0.0)
    X, y = _data(n=200, d=60, seed=3, sparse=True)
    l1 = 1.0 / (100.0 * len(y))
    r = primaldual.solve(X, y, loss=loss, lam=0.0, l1=l1, solver="l1_ipm", tol=1e-9)
    assert r.converged and r.extras["cg_iterations"] > 0
    c = np.ones(len(y))
    assert r.primal == pytest.approx(_cvxpy_value(X, y, loss, 0.0, l1, c), rel=1e-7)
    P, D = _by_hand(X, y, loss, 0.0, l1, r.coef, r.dual_coef, c)
    assert P - D <= 1e-9 * P * (1 + 1e-6)


def test_the_model_is_rounded_to_exact_zeros():
    """An interior point has no zero coefficient; the returned one has the
    optimum's zeros (here those of a tightly converged ``l1cd``)."""
    X, y = _data(n=300, d=40, seed=4)
    kw = dict(loss="logistic", lam=0.0, l1=0.01)
    r = primaldual.solve(X, y, solver="l1_ipm", tol=1e-8, **kw)
    ref = primaldual.solve(X, y, solver="l1cd", tol=1e-12, **kw)
    assert r.converged
    np.testing.assert_array_equal(r.coef != 0, ref.coef != 0)
    assert 0 < np.count_nonzero(r.coef) < X.shape[1]


def test_resume_equals_uninterrupted(tmp_path):
    X, y = _data(n=150, d=30, seed=5, sparse=True)
    kw = dict(loss="squared_hinge", lam=0.0, l1=1e-3, solver="l1_ipm", tol=1e-10)
    full = primaldual.solve(X, y, max_epochs=60, **kw)
    assert full.converged
    part = primaldual.solve(X, y, max_epochs=6, checkpoint=tmp_path, **kw)
    assert part.n_epochs < full.n_epochs
    rest = primaldual.solve(X, y, max_epochs=60, resume=tmp_path, **kw)
    np.testing.assert_array_equal(rest.coef, full.coef)
    assert (rest.primal, rest.dual) == (full.primal, full.dual)


def test_refusals_name_the_problem():
    X, y = _data()
    with pytest.raises(ValueError, match="needs l1 > 0"):
        primaldual.solve(X, y, loss="logistic", lam=1e-2, solver="l1_ipm")
    with pytest.raises(ValueError, match="l1_ipm.*hinge"):
        primaldual.solve(X, y, loss="hinge", lam=0.0, l1=1e-2, solver="l1_ipm")


@pytest.mark.parametrize("loss", ["logistic", "squared_hinge"])
def test_a_start_with_more_nonzeros_than_the_working_set_is_cut_to_its_largest(loss, growing):
    X, y = _data(seed=6)
    kw = dict(loss=loss, lam=0.0, l1=0.05, tol=1e-8)
    ref = primaldual.solve(X, y, solver="l1cd", **kw)
    assert 0 < np.count_nonzero(ref.coef) <= 12
    w0 = np.linspace(1.0, 2.0, X.shape[1])           # 15 nonzeros, max_ws 13
    r = primaldual.solve(X, y, solver="l1_ipm", max_ws=13, warm_start=w0, **kw)
    assert r.converged and r.extras["working_set"] <= 13
    assert r.primal == pytest.approx(ref.primal, rel=1e-7)


def test_auto_hands_a_crawling_l1cd_over_and_certifies():
    """Standardized one-hot data at a tiny pure L1 (a1a at C = 100): ``l1cd``
    crawls along X's null space; ``auto`` hands over to ``l1_ipm`` and the fit
    certifies.  (Its optimum is not unique here: X has a null space, and the
    interior point is rounded only as far as the certificate allows.)"""
    from test_l1_dual import _one_hot_standardized
    X, y = _one_hot_standardized(3)
    n = X.shape[0]
    r = primaldual.solve(X, y, loss="squared_hinge", lam=0.0, l1=1.0 / (100.0 * n),
                         tol=1e-6, random_state=0)
    assert r.converged and r.rel_gap <= 1e-6
    methods = [leg["method"] for leg in r.extras["path"]]
    assert methods[0] == "l1cd" and methods[-1] == "l1_ipm"
    assert r.extras["path"][-2]["reason"].startswith("slow")
