"""CoCoA+'s step on a subspace of dual changes (aggregation="subspace"): the
partitions' terms against finite differences and a plain-Python sum, every
round at least adding's dual (the same local solves) and an ascent, the
certificate recomputed here, the serial optimum for several losses, resume."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from primaldual import solve
from primaldual.kernels.subspace_step import apply_subspace_step, subspace_terms
from primaldual.losses import make_loss


def _shared(n=240, d=40, seed=0):
    """Sparse rows plus a shared direction every row carries (coherent rows,
    where CoCoA+'s adding shrinks every block's change)."""
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=0.15, random_state=rng, format="csr").toarray()
    X[X != 0] = rng.standard_normal(np.count_nonzero(X))
    shared = np.abs(rng.standard_normal(d))
    X += rng.uniform(0.5, 1.0, (n, 1)) * shared / np.linalg.norm(shared)
    w = rng.standard_normal(d)
    y = np.sign(X @ w + 0.2 * rng.standard_normal(n))
    y[y == 0] = 1.0
    return sp.csr_matrix(X), y


def _neg_conj_logistic(alpha, y):
    b = alpha * y
    with np.errstate(divide="ignore", invalid="ignore"):
        return -(np.where(b > 0, b * np.log(b), 0.0)
                 + np.where(b < 1, (1 - b) * np.log1p(-b), 0.0))


def test_partition_terms_match_finite_differences_and_a_plain_sum():
    rng = np.random.default_rng(3)
    n, p = 50, 4
    loss = make_loss("logistic")
    y = np.where(rng.random(n) < 0.5, -1.0, 1.0)
    cw = rng.uniform(0.5, 2.0, n)
    alpha = y * rng.uniform(0.2, 0.8, n)
    U = 0.05 * rng.standard_normal((p, n))
    U[:, :5] = 0.0                                   # rows that do not move
    coef = np.array([0.7, -0.3, 0.5, 0.2])

    def terms(c):
        g, H = np.zeros(p), np.zeros((p, p))
        e, ok = subspace_terms(loss.code, loss.param, y, cw, alpha, U, 0, n, c, g, H)
        assert ok
        return e, g, H

    e, g, H = terms(coef)
    a = alpha + coef @ U
    ref_e = (cw * (_neg_conj_logistic(a, y) - _neg_conj_logistic(alpha, y))).sum()
    assert e == pytest.approx(ref_e, rel=1e-12)
    h = 1e-6
    for j in range(p):
        step = np.zeros(p)
        step[j] = h
        ep, gp, _ = terms(coef + step)
        em, gm, _ = terms(coef - step)
        assert g[j] == pytest.approx((ep - em) / (2 * h), rel=1e-6)
        np.testing.assert_allclose(-H[:, j], (gp - gm) / (2 * h), rtol=1e-5, atol=1e-9)
    np.testing.assert_allclose(H, H.T)
    assert np.all(np.linalg.eigvalsh(H) >= -1e-12)   # -h'' >= 0: H is a Gram matrix
    # out of the domain: refused
    g0, H0 = np.zeros(p), np.zeros((p, p))
    _, ok = subspace_terms(loss.code, loss.param, y, cw, alpha, U, 0, n, 100 * coef, g0, H0)
    assert not ok
    change = np.zeros(n)
    moved = alpha.copy()
    apply_subspace_step(loss.code, loss.param, y, moved, U, 0, n, coef, change)
    np.testing.assert_allclose(moved, a, rtol=0, atol=1e-15)
    np.testing.assert_allclose(change, a - alpha, rtol=0, atol=1e-15)


@pytest.mark.parametrize("loss", ["logistic", "hinge", "squared_hinge"])
def test_every_round_is_an_ascent_at_least_as_high_as_adding(loss):
    """Round by round (each resume runs one more round): the dual of the
    returned alpha, recomputed here, rises in every round; after the first
    round (the same local solves, sigma' = K) it is at least adding's; the
    reported primal, dual and w are those of alpha."""
    X, y = _shared(seed=1)
    n = X.shape[0]
    lam = 1.0 / n
    kw = dict(loss=loss, lam=lam, solver="cocoa", n_partitions=4, tol=0,
              random_state=0, n_jobs=1)
    obj = make_loss(loss)
    adding = solve(X, y, max_epochs=1, aggregation="adding", **kw)
    state, duals = None, []
    for t in range(1, 7):
        res = solve(X, y, max_epochs=t, resume=state, aggregation="subspace", **kw)
        state = res.state
        w = X.T @ res.dual_coef / (lam * n)
        np.testing.assert_allclose(res.coef, w, rtol=0, atol=1e-10)
        primal = obj.value(X @ w, y).mean() + lam / 2 * w @ w
        dual = obj.neg_conjugate(res.dual_coef, y).mean() - lam / 2 * w @ w
        assert res.primal == pytest.approx(primal, rel=1e-11)
        assert res.dual == pytest.approx(dual, rel=1e-11, abs=1e-14)
        duals.append(dual)
        if t == 1:
            assert dual >= adding.dual - 1e-14 * abs(adding.dual)
    assert (np.diff(duals) > 0).all(), duals


@pytest.mark.parametrize("loss,memory", [("logistic", 3), ("squared", 0),
                                         ("smooth_hinge", 8)])
def test_reaches_the_serial_optimum_and_resumes_exactly(loss, memory):
    X, y = _shared(seed=2)
    if loss == "squared":
        y = X @ np.linspace(-1, 1, X.shape[1]) + 0.1 * y
    lam = 0.01
    ref = solve(X, y, loss=loss, lam=lam, solver="sdca", tol=1e-12, max_epochs=3000)
    kw = dict(loss=loss, lam=lam, solver="cocoa", n_partitions=3, aggregation="subspace",
              memory=memory, random_state=4)
    res = solve(X, y, tol=1e-10, max_epochs=600, **kw)
    assert res.converged and res.rel_gap <= 1e-10
    assert res.primal == pytest.approx(ref.primal, rel=1e-9)
    np.testing.assert_allclose(res.coef, ref.coef, rtol=0, atol=1e-4 * np.abs(ref.coef).max())
    full = solve(X, y, tol=0, max_epochs=6, **kw)
    part = solve(X, y, tol=0, max_epochs=2, **kw)
    rest = solve(X, y, tol=0, max_epochs=6, resume=part.state, **kw)
    np.testing.assert_array_equal(full.dual_coef, rest.dual_coef)
    np.testing.assert_array_equal(full.coef, rest.coef)


def test_fewer_rounds_than_adding_on_coherent_rows():
    """The reason for the option: on rows that share a direction, at lam n = 1,
    the search reaches a gap adding does not reach in the same rounds."""
    X, y = _shared(n=400, seed=5)
    kw = dict(loss="logistic", lam=1.0 / X.shape[0], solver="cocoa", n_partitions=8,
              tol=0, max_epochs=15, random_state=0)
    sub = solve(X, y, aggregation="subspace", **kw)
    add = solve(X, y, aggregation="adding", **kw)
    assert sub.rel_gap < 0.1 * add.rel_gap, (sub.rel_gap, add.rel_gap)


@pytest.mark.parametrize("opts,match", [
    (dict(memory=-1), "memory"),
    (dict(coupling="deflated"), "line_search"),
])
def test_bad_options_are_refused_by_name(opts, match):
    X, y = _shared(n=40, d=6)
    with pytest.raises(ValueError, match=match):
        solve(X, y, solver="cocoa", n_partitions=2, aggregation="subspace", max_epochs=1,
              **opts)
