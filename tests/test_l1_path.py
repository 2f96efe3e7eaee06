"""The shared-set-up L1 path (primaldual.solvers.sparse.path, ``l1_path`` with
``solver="l1cd"``): screening there never removes a feature of the optimum
(cvxpy/Clarabel reference on 20 values), each point's gap is recomputed by hand
over every column, and the path equals the point-by-point fits to the tolerance
while reading fewer entries with screening than without."""
from __future__ import annotations

import numpy as np
import pytest

from primaldual.regpath import l1_path, lam_max
from primaldual.solvers.sparse import path as pathmod

from test_sparse_models import _by_hand, _data, _reference


@pytest.mark.parametrize("loss,lam_factor", [("logistic", 0.0), ("squared_hinge", 0.02)])
def test_path_screening_keeps_the_optimum_and_gaps_are_exact(loss, lam_factor):
    X, y, c = _data(loss, n=100, d=30, seed=11, weights=True)
    lmax = lam_max(X, y, loss, penalty="l1", sample_weight=c)
    lam = lam_factor * lmax
    p = l1_path(X, y, n_l1s=20, eps=1e-2, loss=loss, lam=lam, sample_weight=c, tol=1e-8)
    np.testing.assert_allclose(p.l1s[0], lmax, rtol=1e-12)
    assert p.converged.all()
    screened_any = 0
    for res, l1 in zip(p.results, p.l1s):
        w_ref, p_ref = _reference(X, y, loss, lam, l1, c)
        support = np.abs(w_ref) > 1e-7 * max(1.0, np.abs(w_ref).max())
        gone = res.extras["screened"]
        assert not np.any(support[gone]), (l1, gone[support[gone]])
        assert not np.any(res.coef[gone])
        screened_any += gone.size
        assert abs(res.primal - p_ref) <= 1e-6 * max(abs(p_ref), 1e-12)
        primal, dual = _by_hand(X, y, loss, lam, l1, c, res.coef, res.dual_coef)
        assert primal == pytest.approx(res.primal, rel=1e-12, abs=1e-14)
        assert dual == pytest.approx(res.dual, rel=1e-12, abs=1e-14)
    assert screened_any > 0


@pytest.mark.parametrize("lam", [0.0, 1e-3])
def test_shared_path_equals_point_by_point_and_reads_less(lam, monkeypatch):
    X, y, _ = _data("logistic", n=300, d=120, seed=4)
    tol = 1e-7
    read = []                      # entries read by the certificates' correlations

    def counted(kernel):
        def run(*args):
            out = kernel(*args)
            read[-1] += out[0]
            return out
        return run

    for name in ("read_unscreened", "read_bounded", "screen_columns"):
        monkeypatch.setattr(pathmod, name, counted(getattr(pathmod, name)))
    read.append(0)
    shared = l1_path(X, y, n_l1s=15, eps=0.3, lam=lam, tol=tol)
    alone = l1_path(X, y, l1s=shared.l1s, lam=lam, tol=tol, share_setup=False)
    read.append(0)
    off = l1_path(X, y, l1s=shared.l1s, lam=lam, tol=tol, screening=False)
    for p in (shared, alone, off):
        assert p.converged.all()
        assert np.all(p.rel_gap <= tol)
    for other in (alone, off):
        # each is certified within tol of the same optimum
        assert np.all(np.abs(shared.primal - other.primal) <= 2 * tol * np.abs(other.primal))
        np.testing.assert_allclose(shared.coefs, other.coefs, atol=1e-3)
    # pure L1: the screened columns are bounded, not read (measured 0.6 of the reads
    # without; the elastic net's unscaled dual point screens too little at this size)
    if lam == 0.0:
        assert 0 < read[0] < 0.7 * read[1]


def test_shared_path_cold_and_errors():
    X, y, _ = _data("logistic", n=80, d=15, seed=1)
    warm = l1_path(X, y, n_l1s=4, eps=1e-1, tol=1e-8)
    cold = l1_path(X, y, l1s=warm.l1s, tol=1e-8, warm_start=False)
    assert not cold.warm_start and cold.converged.all()
    np.testing.assert_allclose(cold.primal, warm.primal, rtol=1e-7)
    with pytest.raises(ValueError, match="n_l1s must be"):
        l1_path(X, y, n_l1s=2.5)
    with pytest.raises(ValueError, match="l1s must be"):
        l1_path(X, y, l1s=[1.0, -1.0])


@pytest.mark.parametrize("lam,refs", [(0.0, 8), (0.0, 2), (1e-3, 2)])
def test_screened_columns_bounds_hold_at_every_check(lam, refs, monkeypatch):
    """At every check of a path, each column the certificate did not read has
    ``|v_j| <= upper_j`` (the bound of kernels/l1bounds.py, from its reference
    and the ring distances), and each column it read holds its exact ``v_j``.
    A ring of 2 references reuses its slots at every other check (the bounds
    moved by the triangle inequality)."""
    monkeypatch.setattr(pathmod.PathSparseCD, "REFS", refs)
    import scipy.sparse as sp
    from primaldual.kernels.l1bounds import SLACK

    X, y, c = _data("logistic", n=200, d=80, seed=7, weights=True)
    Xc = sp.csc_matrix(X)
    checked = {"inexact": 0, "checks": 0}
    orig = pathmod.PathSparseCD._check

    def check(self, full=True):
        cert = orig(self, full)
        b = self._b
        v = -(Xc.T @ self.gu)
        upper = (b.vabs + b.colnorm * b.dist[b.ref_of]) * (1.0 + SLACK)
        inexact = ~b.exact & ~(b.colnorm == 0)
        assert np.all(np.abs(v[inexact]) <= upper[inexact] + 1e-15)
        np.testing.assert_allclose(b.vref[b.exact], v[b.exact], rtol=1e-12, atol=1e-15)
        # the certificate is that of the whole problem, every column read
        s = max(1.0, np.abs(v).max() / self.problem.l1) if lam == 0.0 else 1.0
        assert self._scale == pytest.approx(s, rel=1e-14)
        checked["inexact"] += int(inexact.sum())
        checked["checks"] += 1
        return cert

    monkeypatch.setattr(pathmod.PathSparseCD, "_check", check)
    p = l1_path(X, y, n_l1s=15, eps=1e-2, lam=lam, sample_weight=c, tol=1e-8)
    assert p.converged.all()
    assert checked["checks"] > 15 and checked["inexact"] > 0


def test_cols_to_rows_is_the_working_sets_csr():
    import scipy.sparse as sp
    from primaldual.kernels.l1bounds import cols_to_rows
    from primaldual.kernels.l1cd import ColsView

    X, y, _ = _data("logistic", n=60, d=40, seed=3)
    C = sp.csc_matrix(X)
    C.sort_indices()
    cols = ColsView(C.data, C.indices, C.indptr, y, np.ones(60) / 60)
    ws = np.array([0, 3, 4, 17, 39], dtype=np.int64)
    data, idx, ptr = np.empty(C.nnz), np.empty(C.nnz, np.int32), np.empty(61, np.int64)
    m = cols_to_rows(cols, ws, 60, data, idx, ptr)
    R = C[:, ws].tocsr()
    R.sort_indices()
    assert m == R.nnz
    np.testing.assert_array_equal(ptr, R.indptr)
    np.testing.assert_array_equal(idx[:m], R.indices)
    np.testing.assert_array_equal(data[:m], R.data)
