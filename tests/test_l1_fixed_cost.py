"""The per-call shortcuts of ``l1cd`` (docs/sparse-models.md, "Fixed cost of a
call"): a working set starts from the loss terms its check left only while
they are those of the current margins."""
from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.sparse as sp

from primaldual.datasets import make_synthetic
from primaldual.kernels.l1cd import loss_terms, margins_of
from primaldual.kernels.status import STATUS_OK
from primaldual.problem import Problem
from primaldual.regpath import lam_max
from primaldual.solvers import SOLVERS
from primaldual.solvers.sparse import solver as sparse_solver


@pytest.fixture
def reuses(monkeypatch):
    """Every ws_solve call handed the loss terms (``f_loss0`` not NaN) is checked
    against terms computed afresh from ``w``; the list says, per such call,
    whether they were the current ones."""
    real = sparse_solver.ws_solve
    seen = []

    def checked(spec, cols, ws, w, margins, work, *args):
        f0 = args[-1]
        if not math.isnan(f0):
            m, gu, hu = np.empty_like(margins), np.empty_like(work.gu), np.empty_like(work.hu)
            margins_of(cols, w, m)
            f = loss_terms(spec, cols, m, gu, hu)
            seen.append(bool(f == f0 and np.array_equal(m, margins)
                             and np.array_equal(gu, work.gu) and np.array_equal(hu, work.hu)))
        return real(spec, cols, ws, w, margins, work, *args)

    monkeypatch.setattr(sparse_solver, "ws_solve", checked)
    return seen


def _fitted(loss):
    X, y, _ = make_synthetic((300, 200, 0.05), random_state=0)
    X = sp.csr_matrix(X)
    prob = Problem(X, y, loss=loss, lam=0.0, l1=lam_max(X, y, loss, penalty="l1") / 10)
    s = SOLVERS["l1cd"].create(prob, tol=1e-10, max_epochs=1000, random_state=0)
    res = s.run()
    return s, res


@pytest.mark.parametrize("loss", ["logistic", "squared_hinge"])
def test_loss_terms_reused_only_at_their_margins(reuses, loss):
    """A fit reuses its checks' terms; a coefficient zeroed after the check (as
    screening does) makes the working set compute them again."""
    s, res = _fitted(loss)
    assert res.converged and reuses and all(reuses)
    support = np.flatnonzero(s.w)
    s._check(full=True)
    s.w[support[0]] = 0.0
    n = len(reuses)
    s._solve_ws(support, -1.0, 10 ** 9)
    assert all(reuses) and len(reuses) == n         # computed afresh, not handed over


def test_loss_terms_not_reused_after_a_working_set(reuses, monkeypatch):
    """After a working set the terms are not handed over again, even where ``w``
    did not move: its line search may leave a rejected trial's terms in gu, hu
    (simulated here by a working set that scribbles on them and moves nothing)."""
    s, _ = _fitted("logistic")
    support = np.flatnonzero(s.w)
    s._check(full=True)
    real = sparse_solver.ws_solve

    def rejected(spec, cols, ws, w, margins, work, *args):
        work.gu[:] += 1e-3
        work.hu[:] *= 2.0
        return STATUS_OK, 0, 0, math.inf, 0

    monkeypatch.setattr(sparse_solver, "ws_solve", rejected)
    s._solve_ws(support, -1.0, 10 ** 9)
    monkeypatch.setattr(sparse_solver, "ws_solve", real)
    checked_calls = []
    monkeypatch.setattr(sparse_solver, "ws_solve", lambda *a: (
        checked_calls.append(a[-1]), real(*a))[1])
    s._solve_ws(support, -1.0, 10 ** 9)
    assert len(checked_calls) >= 1 and math.isnan(checked_calls[0])


def test_screening_loops_are_the_masks():
    """The compiled screening of a check (``screen_features``, ``unsure_screened``)
    screens, zeroes and bounds exactly the features of the NumPy masks
    (``gap_safe_mask`` and the bound test of ``_confirm``), ties at the limit,
    empty columns, infinite bounds and features screened before included."""
    from primaldual.kernels.l1bounds import SLACK, screen_features, unsure_screened
    from primaldual.solvers.sparse.screening import gap_safe_mask, gap_safe_radius

    rng = np.random.default_rng(0)
    d, gap, smooth, l1 = 400, 2e-4, 0.25, 0.1
    v = rng.normal(scale=0.1, size=d)
    colnorm = rng.random(d)
    colnorm[:5] = 0.0
    r = gap_safe_radius(gap, smooth) * (1.0 + SLACK)
    lim = l1 * (1.0 - SLACK)
    v[5:8] = lim - r * colnorm[5:8]                 # exactly at the limit: kept
    screened = rng.random(d) < 0.2
    w = rng.normal(size=d)
    bound = np.where(screened, rng.random(d) * 0.2, 0.0)
    bound[::37] = np.inf
    new = gap_safe_mask(v, colnorm, gap, smooth, l1) & ~screened
    w_ref, bound_ref = w.copy(), bound.copy()
    w_ref[new] = 0.0
    bound_ref[new] = np.abs(v[new]) * (1.0 + SLACK) + r * colnorm[new]
    got = screened.copy()
    assert screen_features(v, colnorm, r, lim, got, w, bound) == new.sum() > 0
    np.testing.assert_array_equal(got, screened | new)
    np.testing.assert_array_equal(w, w_ref)
    np.testing.assert_array_equal(bound, bound_ref)
    out = np.empty(d, dtype=np.int64)
    k = unsure_screened(got, bound, colnorm, r, lim, out)
    np.testing.assert_array_equal(out[:k], np.flatnonzero(got & (bound + r * colnorm >= lim)))
    assert 0 < k < got.sum()


def test_partial_check_completed_only_with_its_loss_terms(monkeypatch):
    """A partial check (screened columns not read) is completed at its own dual
    point: after a working set that moved nothing but left other terms in gu
    (a rejected line search; simulated), the full check reads the screened
    columns at the dual point it kept, not at the new gu, so its certificate
    is exact for its pair."""
    s, _ = _fitted("logistic")
    prob = s.problem
    s.screened[:] = False
    s.bound[:] = 0.0
    s._check(full=True)
    s._screen(s._cert)
    assert s.screened.any()
    s.bound[s.screened] = np.inf               # every screened column must be read
    s._check(full=False)                       # partial: unscreened columns only
    assert s._last is not s._cert

    def rejected(spec, cols, ws, w, margins, work, *args):
        work.gu[:] *= 2.0
        return STATUS_OK, 0, 0, math.inf, 0

    monkeypatch.setattr(sparse_solver, "ws_solve", rejected)
    s._solve_ws(np.flatnonzero(s.w), -1.0, 10 ** 9)
    cert = s.certificate()
    assert cert.primal == pytest.approx(prob.primal(cert.w), rel=1e-12)
    assert cert.dual == pytest.approx(prob.dual(cert.alpha), rel=1e-12, abs=1e-15)
