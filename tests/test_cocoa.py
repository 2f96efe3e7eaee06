"""CoCoA+ with local SDCA (Ma et al. 2015): reduction to mini-batch SDCA, a
plain-Python reference fed the same streams, the optimum, resume and errors."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from conftest import make_classification_data, make_regression_data
from primaldual import solve
from primaldual.distributed import contiguous_partition, spawn_streams
from primaldual.kernels.loss_kernels import dual_step
from primaldual.losses import make_loss


@pytest.mark.parametrize("K", [2, 3, 4])
@pytest.mark.parametrize("loss", ["hinge", "smooth_hinge", "squared"])
def test_h1_reduces_exactly_to_minibatch_sdca(K, loss):
    """b = C, H = 1 (Section 7 of the mini-batch paper): adding (sigma' = K,
    gamma = 1) is mSDCA with v_i = K ||x_i||^2 (eso='cauchy_schwarz'); averaging
    (sigma' = 1, gamma = 1/K) is mSDCA with step='average'."""
    if loss == "squared":
        X, y = make_regression_data(n=90, d=12, seed=K)
    else:
        X, y = make_classification_data(n=90, d=12, seed=K)
    common = dict(loss=loss, lam=1e-2, tol=0, max_epochs=5, random_state=21)
    for agg, msdca in [("adding", dict(step="safe", eso="cauchy_schwarz")),
                       ("averaging", dict(step="average"))]:
        c = solve(X, y, solver="cocoa", n_partitions=K, local_iters=1, aggregation=agg,
                  local_solver="uniform", **common)
        m = solve(X, y, solver="minibatch_sdca", sampling="distributed", batch_size=K,
                  n_partitions=K, **msdca, **common)
        np.testing.assert_allclose(c.dual_coef, m.dual_coef, rtol=0, atol=1e-12)
        np.testing.assert_allclose(c.coef, m.coef, rtol=0, atol=1e-12)
        assert c.n_epochs == m.n_epochs
        assert np.abs(c.dual_coef).max() > 0


def test_h1_differs_from_paper_eso_msdca():
    """With the paper's b = C ESO, (1 + b sigma^2) ||x_i||^2, mSDCA is a
    different (larger-step) method than CoCoA+'s sigma' = K."""
    X, y = make_classification_data(n=90, d=40, density=0.05, seed=1)
    common = dict(loss="smooth_hinge", lam=1e-2, tol=0, max_epochs=3, random_state=2)
    c = solve(X, y, solver="cocoa", n_partitions=4, local_iters=1, local_solver="uniform",
              **common)
    m = solve(X, y, solver="minibatch_sdca", sampling="distributed", batch_size=4,
              n_partitions=4, eso="dense", **common)
    assert np.abs(c.dual_coef - m.dual_coef).max() > 1e-6


def _reference_cocoa(X, y, loss, lam, K, H, agg, seed, n_rounds):
    """Plain Python CoCoA+ (Algorithm 1 + LocalSDCA) with the same streams."""
    X = X.toarray() if sp.issparse(X) else np.asarray(X)
    n, d = X.shape
    L = make_loss(loss)
    gamma, sig = (1.0, float(K)) if agg == "adding" else (1.0 / K, 1.0)
    ptr = contiguous_partition(n, K)
    gens = spawn_streams(seed, K)
    alpha = np.zeros(n)
    v = np.zeros(d)
    for _ in range(n_rounds):
        changes = []
        for k in range(K):
            a0, a1 = ptr[k], ptr[k + 1]
            u = gens[k].random(H)
            dalpha = np.zeros(n)
            dv = np.zeros(d)
            for h in range(H):
                i = a0 + int(u[h] * (a1 - a0))
                a = X[i] @ (v + sig * dv) / lam
                s = sig * (X[i] @ X[i]) / (lam * n)
                cur = alpha[i] + dalpha[i]
                delta = dual_step(L.code, L.param, cur, y[i], a, s) - cur
                dalpha[i] += delta
                dv += delta / n * X[i]
            changes.append((dalpha, dv))
        for dalpha, dv in changes:
            alpha += gamma * dalpha
            v += gamma * dv
    return alpha, v


@pytest.mark.parametrize("agg", ["adding", "averaging"])
@pytest.mark.parametrize("dense", [False, True])
def test_kernel_matches_plain_python_reference(agg, dense):
    X, y = make_classification_data(n=50, d=8, seed=4, dense=dense)
    res = solve(X, y, loss="logistic", lam=0.05, solver="cocoa", n_partitions=3,
                local_iters=7, aggregation=agg, tol=0, max_epochs=2, random_state=9,
                check_every=2, local_solver="uniform")
    rounds = res.trace[-1]["rounds"]
    alpha, v = _reference_cocoa(X, y, "logistic", 0.05, 3, 7, agg, 9, rounds)
    np.testing.assert_allclose(res.dual_coef, alpha, rtol=0, atol=1e-12)
    np.testing.assert_allclose(res.coef, v / 0.05, rtol=0, atol=1e-10)


def _reference_cocoa_perm(X, y, loss, lam, K, H, agg, seed, n_rounds, c=None):
    """Plain Python CoCoA+ whose local solver is SDCA over permutation passes
    (local_solver="sdca"): partition k draws ``rng_k.permutation(n_k)`` per pass."""
    X = X.toarray() if sp.issparse(X) else np.asarray(X)
    n, d = X.shape
    c = np.ones(n) if c is None else c
    W = c.sum()
    L = make_loss(loss)
    gamma, sig = (1.0, float(K)) if agg == "adding" else (1.0 / K, 1.0)
    ptr = contiguous_partition(n, K)
    gens = spawn_streams(seed, K)
    alpha = np.zeros(n)
    v = np.zeros(d)
    for _ in range(n_rounds):
        changes = []
        for k in range(K):
            a0, a1 = ptr[k], ptr[k + 1]
            nk = a1 - a0
            order = np.concatenate([gens[k].permutation(nk)
                                    for _ in range(-(-H // nk))])[:H] + a0
            dalpha = np.zeros(n)
            dv = np.zeros(d)
            for i in order:
                a = X[i] @ (v + sig * dv) / lam
                s = sig * c[i] * (X[i] @ X[i]) / (lam * W)
                cur = alpha[i] + dalpha[i]
                delta = dual_step(L.code, L.param, cur, y[i], a, s) - cur
                dalpha[i] += delta
                dv += c[i] * delta / W * X[i]
            changes.append((dalpha, dv))
        for dalpha, dv in changes:
            alpha += gamma * dalpha
            v += gamma * dv
    return alpha, v


@pytest.mark.parametrize("agg", ["adding", "averaging"])
@pytest.mark.parametrize("loss, H", [("logistic", 7), ("hinge", 40), ("squared_hinge", 16)])
def test_sdca_local_solver_matches_plain_python_reference(agg, loss, H):
    X, y = make_classification_data(n=50, d=8, seed=4)
    c = np.random.default_rng(1).uniform(0.5, 2.0, 50)
    res = solve(X, y, loss=loss, lam=0.05, solver="cocoa", n_partitions=3,
                local_iters=H, aggregation=agg, tol=0, max_epochs=3, random_state=9,
                check_every=3, sample_weight=c)
    rounds = res.trace[-1]["rounds"]
    alpha, v = _reference_cocoa_perm(X, y, loss, 0.05, 3, H, agg, 9, rounds, c=c)
    np.testing.assert_allclose(res.dual_coef, alpha, rtol=0, atol=1e-12)
    np.testing.assert_allclose(res.coef, v / 0.05, rtol=0, atol=1e-10)


def test_threads_give_the_same_iterates():
    """The partitions of a round are independent: n_jobs changes the time, not
    the numbers."""
    X, y = make_classification_data(n=400, d=30, seed=5)
    kw = dict(loss="logistic", lam=1e-2, solver="cocoa", n_partitions=4, tol=1e-9,
              max_epochs=1000, random_state=2)
    one = solve(X, y, n_jobs=1, **kw)
    two = solve(X, y, n_jobs=2, **kw)
    assert one.converged
    np.testing.assert_array_equal(one.dual_coef, two.dual_coef)
    np.testing.assert_array_equal(one.coef, two.coef)


@pytest.mark.parametrize("agg,H", [("adding", None), ("adding", 5), ("averaging", 40)])
def test_reaches_the_sdca_optimum(agg, H):
    X, y = make_classification_data(n=200, d=40, density=0.1, seed=6)
    ref = solve(X, y, loss="smooth_hinge", lam=1e-2, solver="sdca", tol=1e-11,
                max_epochs=500)
    res = solve(X, y, loss="smooth_hinge", lam=1e-2, solver="cocoa", n_partitions=4,
                local_iters=H, aggregation=agg, tol=1e-8, max_epochs=800, random_state=0)
    assert res.converged and res.rel_gap <= 1e-8
    assert res.primal == pytest.approx(ref.primal, rel=1e-7)
    assert res.trace[-1]["rounds"] > 0


def test_adding_beats_averaging_per_round():
    """Ma et al.: adding (sigma' = K) makes more progress per round than averaging."""
    X, y = make_classification_data(n=400, d=200, density=0.02, seed=7)
    kw = dict(loss="smooth_hinge", lam=1e-2, solver="cocoa", n_partitions=8, tol=0,
              max_epochs=10, random_state=0)
    add = solve(X, y, aggregation="adding", **kw)
    avg = solve(X, y, aggregation="averaging", **kw)
    assert add.rel_gap < 0.5 * avg.rel_gap


def test_resume_equals_uninterrupted():
    X, y = make_classification_data(n=130, d=20, seed=8)
    kw = dict(loss="hinge", lam=1e-2, solver="cocoa", n_partitions=3, local_iters=10,
              tol=0, random_state=3)
    full = solve(X, y, max_epochs=5, **kw)
    part = solve(X, y, max_epochs=2, **kw)
    rest = solve(X, y, max_epochs=5, resume=part.state, **kw)
    assert np.array_equal(full.coef, rest.coef)
    assert np.array_equal(full.dual_coef, rest.dual_coef)
    with pytest.raises(ValueError, match="n_partitions"):
        solve(X, y, max_epochs=5, resume=part.state, **{**kw, "n_partitions": 2})


def test_warm_start_from_a_result_is_used():
    X, y = make_classification_data(n=100, d=20, seed=9)
    kw = dict(loss="squared_hinge", lam=1e-2, solver="cocoa", n_partitions=2, tol=1e-6,
              random_state=0)
    first = solve(X, y, max_epochs=300, **kw)
    again = solve(X, y, max_epochs=300, warm_start=first, **kw)
    assert first.converged and again.converged
    assert again.n_epochs <= 2


@pytest.mark.parametrize("opts,match", [
    (dict(aggregation="sum"), "aggregation"),
    (dict(n_partitions=0), "n_partitions"),
    (dict(n_partitions=1000), "larger than n"),
    (dict(local_iters=0), "local_iters"),
    (dict(client="localhost:8786"), "dask.distributed.Client"),
    (dict(round_timeout=-1), "round_timeout"),
    (dict(batch_size=4), "unknown option"),
])
def test_bad_options_are_clear_errors(opts, match):
    X, y = make_classification_data(n=50, d=5, seed=1)
    with pytest.raises(ValueError, match=match):
        solve(X, y, solver="cocoa", max_epochs=1, **opts)


def test_l1_is_refused():
    X, y = make_classification_data(n=50, d=5, seed=1)
    with pytest.raises(ValueError, match="l1"):
        solve(X, y, solver="cocoa", l1=0.1, max_epochs=1)


@pytest.mark.parametrize("agg", ["adding", "averaging"])
def test_iterates_stay_dual_feasible_under_clipping(agg):
    """Local steps that repeatedly hit the box of the hinge dual must leave
    alpha y in [0, 1] exactly (no rounding outside the domain, which would
    make the dual -inf)."""
    X, y = make_classification_data(n=320, d=30, density=0.5, seed=11)
    X = X * 40.0
    res = solve(X, y, loss="hinge", lam=1e-4, solver="cocoa", n_partitions=16,
                aggregation=agg, tol=0, max_epochs=8, random_state=0)
    b = res.dual_coef * y
    assert b.min() >= 0.0 and b.max() <= 1.0
    assert np.isfinite(res.gap)
    assert np.isfinite([t["dual"] for t in res.trace]).all()
    m = solve(X, y, loss="hinge", lam=1e-4, solver="minibatch_sdca", batch_size=64,
              step="average", tol=0, max_epochs=8, random_state=0)
    assert (m.dual_coef * y).min() >= 0.0 and (m.dual_coef * y).max() <= 1.0


@pytest.mark.busy_cores
@pytest.mark.parametrize("loss", ["logistic", "hinge", "squared"])
def test_threads_inside_one_partition_reach_the_optimum(loss, monkeypatch):
    """One partition and n_jobs = 3: the threads run inside its local SDCA
    (asynchronous; each on its own copy of the local image); the run still
    certifies the optimum of the serial solver."""
    import primaldual.distributed.local_sdca as local_sdca
    calls = []
    real = local_sdca._threaded_passes

    def counting(*args):
        calls.append(args[-2])                 # the number of threads
        return real(*args)
    monkeypatch.setattr(local_sdca, "_threaded_passes", counting)
    if loss == "squared":
        X, y = make_regression_data(n=600, d=30, seed=8)
    else:
        X, y = make_classification_data(n=600, d=30, seed=8)
    ref = solve(X, y, loss=loss, lam=1e-2, solver="sdca", tol=1e-11, max_epochs=2000)
    res = solve(X, y, loss=loss, lam=1e-2, solver="cocoa", n_partitions=1, n_jobs=3,
                tol=1e-8, max_epochs=2000, random_state=1)
    assert calls and set(calls) == {3}
    assert res.converged and res.rel_gap <= 1e-8
    assert res.primal == pytest.approx(ref.primal, rel=1e-7)
    # the certificate is that of (w(alpha), alpha), recomputed here
    c = sp.csr_matrix(X).T @ res.dual_coef / X.shape[0]
    np.testing.assert_allclose(res.coef, c / 1e-2, rtol=0, atol=1e-9)
