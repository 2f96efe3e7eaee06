"""CoCoA+'s deflated coupling (coupling="deflated"): the local step against a
plain-Python reference with the full coupling matrix, every round an ascent
of the dual with a certificate recomputed here, the serial optimum, resume."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from primaldual import solve
from primaldual.distributed.block import next_sig_rest
from primaldual.distributed.deflation import shared_directions
from primaldual.kernels.deflated import LowRank, deflated_pass
from primaldual.kernels.views import RowsView, StepSpec
from primaldual.losses import make_loss
from primaldual.losses.dispatch import dual_step


def _planted(n=240, d=40, seed=0):
    """Sparse rows plus a planted shared direction (every row carries a large
    multiple of one unit vector), labels from a model orthogonal to it."""
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=0.15, random_state=rng, format="csr").toarray()
    X[X != 0] = rng.standard_normal(np.count_nonzero(X))
    shared = np.abs(rng.standard_normal(d))
    shared /= np.linalg.norm(shared)
    X += rng.uniform(1.0, 2.0, (n, 1)) * shared
    w = rng.standard_normal(d)
    w -= (w @ shared) * shared
    y = np.sign(X @ w + 0.2 * rng.standard_normal(n))
    y[y == 0] = 1.0
    return sp.csr_matrix(X), y


def _neg_conj(loss, alpha, y):
    b = alpha * y
    assert b.min() >= 0.0 and b.max() <= 1.0
    if loss == "hinge":
        return b
    with np.errstate(divide="ignore", invalid="ignore"):
        return -(np.where(b > 0, b * np.log(b), 0.0) + np.where(b < 1, (1 - b) * np.log1p(-b), 0.0))


def _objectives(X, y, loss, lam, alpha):
    n = X.shape[0]
    w = X.T @ alpha / (lam * n)
    primal = make_loss(loss).value(X @ w, y).mean() + lam / 2 * w @ w
    dual = _neg_conj(loss, alpha, y).mean() - lam / 2 * w @ w
    return primal, dual, w


def test_shared_directions_are_orthonormal_and_hold_the_mean_row():
    X, _ = _planted()
    U = shared_directions(X, 5, 0)
    assert U.shape == (X.shape[1], 5)
    np.testing.assert_allclose(U.T @ U, np.eye(5), atol=1e-12)
    m = np.asarray(X.mean(axis=0)).ravel()
    np.testing.assert_allclose(U @ (U.T @ m), m, atol=1e-12)


@pytest.mark.parametrize("loss", ["logistic", "hinge"])
def test_local_pass_matches_plain_python_reference(loss):
    """A local pass equals coordinate maximization of G_k with the coupling
    matrix M = s_rest I + (K - s_rest) U U^T written out in full."""
    X, y = _planted(n=60, d=12, seed=3)
    Xd = X.toarray()
    n, d = Xd.shape
    lam, K, s_rest = 0.02, 4.0, 1.7
    U = shared_directions(X, 3, 1)
    B = np.ascontiguousarray(Xd @ U)
    c = np.random.default_rng(2).uniform(0.5, 2.0, n)
    W = c.sum()
    L = make_loss(loss)
    rng = np.random.default_rng(5)
    alpha0 = y * rng.uniform(0.0, 1.0, n) * (rng.random(n) < 0.5)
    v = Xd.T @ (c * alpha0) / W
    order = rng.permutation(n).astype(np.int64)
    rows = RowsView(X.data, X.indices.astype(np.int64), X.indptr.astype(np.int64),
                    X.indptr.astype(np.int64), (Xd * Xd).sum(1), y, c)
    alpha, u, z = alpha0.copy(), v.copy(), np.zeros(U.shape[1])
    st, _, _ = deflated_pass(rows, StepSpec(L.code, L.param, lam, 0.0, 1.0 / W),
                             LowRank(B, (B * B).sum(1), z), alpha, u, order, 0, n,
                             s_rest, K - s_rest)
    assert st == 0
    M = s_rest * np.eye(d) + (K - s_rest) * U @ U.T
    ref, dv = alpha0.copy(), np.zeros(d)
    for i in order:
        a = Xd[i] @ (v + M @ dv) / lam
        s = c[i] * (Xd[i] @ M @ Xd[i]) / (lam * W)
        delta = dual_step(L.code, L.param, ref[i], y[i], a, s) - ref[i]
        ref[i] += delta
        dv += c[i] * delta / W * Xd[i]
    np.testing.assert_allclose(alpha, ref, rtol=0, atol=1e-12)
    np.testing.assert_allclose((u - v) / s_rest, dv, rtol=0, atol=1e-12)
    np.testing.assert_allclose(z, U.T @ dv, rtol=0, atol=1e-12)


@pytest.mark.parametrize("loss", ["logistic", "hinge"])
def test_every_round_raises_the_dual_and_the_certificate_is_exact(loss):
    """Round by round (each resume runs one more round): the dual of the
    returned alpha, recomputed here, never decreases and rises in every round
    until the gap is tiny; the reported primal, dual and w are those of alpha."""
    X, y = _planted(seed=1)
    lam = 1.0 / X.shape[0]
    kw = dict(loss=loss, lam=lam, solver="cocoa", n_partitions=4, coupling="deflated",
              shared_directions=3, tol=0, random_state=0, n_jobs=1)
    state, duals = None, []
    for t in range(1, 9):
        res = solve(X, y, max_epochs=t, resume=state, **kw)
        state = res.state
        primal, dual, w = _objectives(X, y, loss, lam, res.dual_coef)
        np.testing.assert_allclose(res.coef, w, rtol=0, atol=1e-10)
        assert res.primal == pytest.approx(primal, rel=1e-11)
        assert res.dual == pytest.approx(dual, rel=1e-11, abs=1e-14)
        duals.append(dual)
    steps = np.diff(duals)
    assert (steps > 0).all(), steps
    assert 1.0 <= res.trace[-1]["sigma_rest"] <= 4.0


def test_reaches_the_serial_optimum_and_resumes_exactly():
    X, y = _planted(seed=2)
    lam = 0.2
    ref = solve(X, y, loss="smooth_hinge", lam=lam, solver="sdca", tol=1e-11, max_epochs=500)
    kw = dict(loss="smooth_hinge", lam=lam, solver="cocoa", n_partitions=3,
              coupling="deflated", shared_directions=2, random_state=4)
    res = solve(X, y, tol=1e-9, max_epochs=400, **kw)
    assert res.converged and res.rel_gap <= 1e-9
    assert res.primal == pytest.approx(ref.primal, rel=1e-8)
    full = solve(X, y, tol=0, max_epochs=6, **kw)
    part = solve(X, y, tol=0, max_epochs=2, **kw)
    rest = solve(X, y, tol=0, max_epochs=6, resume=part.state, **kw)
    np.testing.assert_array_equal(full.dual_coef, rest.dual_coef)
    np.testing.assert_array_equal(full.coef, rest.coef)


def test_sig_rest_follows_the_step():
    assert next_sig_rest(1.0, 0.5, 8.0) == 2.0
    assert next_sig_rest(4.0, 1.5, 8.0) == pytest.approx(3.6)
    assert next_sig_rest(1.0, 1.5, 8.0) == 1.0
    assert next_sig_rest(6.0, 0.1, 8.0) == 8.0
    assert next_sig_rest(3.0, 1.0, 8.0) == 3.0


@pytest.mark.parametrize("opts,match", [
    (dict(aggregation="adding"), "line_search"),
    (dict(local_solver="uniform"), "line_search"),
    (dict(coupling="pca"), "coupling"),
    (dict(shared_directions=0), "shared_directions"),
])
def test_bad_options_are_clear_errors(opts, match):
    X, y = _planted(n=40, d=6)
    kw = {"coupling": "deflated", **opts}
    with pytest.raises(ValueError, match=match):
        solve(X, y, solver="cocoa", n_partitions=2, max_epochs=1, **kw)
