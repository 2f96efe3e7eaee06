"""CoCoA+ with local SDCA (Ma et al. 2015): reduction to mini-batch SDCA, a
plain-Python reference fed the same streams, the optimum, resume and errors."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from conftest import make_classification_data, make_regression_data
from primaldual import solve
from primaldual.distributed import contiguous_partition, spawn_streams
from primaldual.losses.dispatch import dual_step
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


# ------------------------------------------------- the step on the summed update
def _neg_conj(loss, a, y):
    """-phi*(-a) in plain numpy (docs/conventions.md §2), -inf outside the domain."""
    b = a * y
    with np.errstate(divide="ignore", invalid="ignore"):
        if loss == "hinge":
            val, ok = b, (b >= 0) & (b <= 1)
        elif loss == "smooth_hinge":
            val, ok = b - 0.5 * b * b, (b >= 0) & (b <= 1)
        elif loss == "squared_hinge":
            val, ok = b - 0.25 * b * b, b >= 0
        elif loss == "squared":
            val, ok = a * y - 0.5 * a * a, np.isfinite(a)
        elif loss == "logistic":
            ent = np.where(b > 0, b * np.log(np.where(b > 0, b, 1)), 0.0) + \
                np.where(b < 1, (1 - b) * np.log(np.where(b < 1, 1 - b, 1)), 0.0)
            val, ok = -ent, (b >= 0) & (b <= 1)
        elif loss == "absolute":
            val, ok = a * y, np.abs(a) <= 1
        else:
            raise AssertionError(loss)
    return np.where(ok, val, -np.inf)


def _dual(X, y, c, loss, lam, alpha):
    W = c.sum()
    v = X.T @ (c * alpha) / W
    return float(c @ _neg_conj(loss, alpha, y)) / W - float(v @ v) / (2 * lam)


def _best_step(X, y, c, loss, lam, alpha, da):
    """Brute force: the largest feasible theta by bisection, then a bounded 1-D
    maximization of the dual over [0, tmax] (scipy), polished on a fine grid."""
    from scipy.optimize import minimize_scalar

    def D(t):
        return _dual(X, y, c, loss, lam, alpha + t * da)
    lo, hi = 0.0, 1.0
    while np.isfinite(D(hi)) and hi < 1e6:
        lo, hi = hi, 2 * hi
    if hi < 1e6:
        for _ in range(200):
            mid = 0.5 * (lo + hi)
            lo, hi = (mid, hi) if np.isfinite(D(mid)) else (lo, mid)
    tmax = lo
    r = minimize_scalar(lambda t: -D(min(t, tmax)), bounds=(0.0, tmax), method="bounded",
                        options={"xatol": 1e-13 * max(1.0, tmax)})
    cands = [0.0, tmax, r.x] + list(np.linspace(max(0, r.x - 1e-6), min(tmax, r.x + 1e-6), 201))
    return max(cands, key=D)


def _block_and_direction(loss, seed, scale):
    """A block of 3 partitions with a feasible alpha and a feasible direction."""
    from primaldual.distributed import PartitionBlock
    if loss == "squared":
        X, y = make_regression_data(n=60, d=9, seed=seed)
    else:
        X, y = make_classification_data(n=60, d=9, density=0.5, seed=seed)
    X = sp.csr_matrix(X)
    rng = np.random.default_rng(seed)
    c = rng.uniform(0.5, 2.0, 60)
    L = make_loss(loss)
    lo, hi = {"squared_hinge": (0, 3), "squared": (-2, 2), "absolute": (-1, 1)}.get(loss, (0, 1))
    box = loss not in ("squared", "absolute")
    def point():
        t = rng.uniform(lo, hi, 60)
        if loss == "logistic":
            t = np.clip(t, 1e-3, 1 - 1e-3)
        t[rng.random(60) < 0.2] = hi if loss != "squared_hinge" else 0.0   # at the box
        return t * y if box else t
    alpha, target = point(), point()
    da = scale * (target - alpha)
    da[rng.random(60) < 0.3] = 0.0
    blk = PartitionBlock.from_arrays(X, y, c, np.array([0, 20, 40, 60]), L.code, L.param,
                                     0.05, c.sum())
    v = X.T @ (c * alpha) / c.sum()
    blk.set_state(alpha, v, [g.bit_generator.state for g in spawn_streams(0, 3)])
    blk.step_dalpha[:] = da
    assert np.isfinite(_dual(X, y, c, loss, 0.05, alpha))
    return blk, X, y, c, alpha, da


@pytest.mark.parametrize("loss", ["hinge", "smooth_hinge", "squared_hinge", "squared",
                                  "absolute", "logistic"])
@pytest.mark.parametrize("scale", [0.05, 1.0, 30.0])
@pytest.mark.parametrize("seed", [0, 1])
def test_summed_step_equals_brute_force_line_maximization(loss, scale, seed):
    """The driver's step (closed form on the box for the quadratic duals, a 1-D
    search for logistic) maximizes D(alpha + theta Delta alpha) over the feasible
    theta: equal to a brute-force bounded maximization of the dual written in numpy."""
    from primaldual.distributed.line_step import sum_terms, summed_step
    blk, X, y, c, alpha, da = _block_and_direction(loss, seed, scale)
    W, lam = c.sum(), 0.05
    changes = [(np.arange(X.shape[1]), X[a:b].T @ (c[a:b] * da[a:b]) / W)
               for a, b in [(0, 20), (20, 40), (40, 60)]]
    theta, _ = summed_step(lambda ts: [sum_terms(p) for p in blk.line_terms(ts)], blk.v, changes, lam, W)
    ref = _best_step(X, y, c, loss, lam, alpha, da)
    D = lambda t: _dual(X, y, c, loss, lam, alpha + t * da)   # noqa: E731
    assert theta >= 0.0 and np.isfinite(D(theta))
    assert D(theta) >= D(ref) - 1e-12 * abs(D(ref))
    assert theta == pytest.approx(ref, rel=1e-5, abs=1e-7)
    blk.apply_step(theta)
    assert np.isfinite(_dual(X, y, c, loss, lam, blk.alpha))
    np.testing.assert_allclose(blk.alpha, alpha + theta * da, rtol=0, atol=1e-15)


def test_summed_step_stops_at_the_box():
    """Small changes along a hinge direction: the unconstrained maximizer is
    beyond the box, so the step is the largest feasible theta, exactly."""
    from primaldual.distributed.line_step import sum_terms, summed_step
    blk, X, y, c, alpha, da = _block_and_direction("hinge", 3, 0.01)
    changes = [(np.arange(X.shape[1]), X.T @ (c * da) / c.sum())]
    theta, _ = summed_step(lambda ts: [sum_terms(p) for p in blk.line_terms(ts)], blk.v, changes, 0.05,
                           c.sum())
    tmax = sum_terms(blk.line_terms((0.0,))[0])[3]
    assert theta == tmax and theta < _best_step(X, y, c, "hinge", 0.05, alpha, da) * 1.01
    blk.apply_step(theta)
    b = blk.alpha * y
    assert b.min() >= 0.0 and b.max() <= 1.0
    moved = da != 0
    assert ((b[moved] == 0.0) | (b[moved] == 1.0)).any()     # one coordinate at its bound


@pytest.mark.parametrize("agg", ["line_search", "adding", "averaging"])
@pytest.mark.parametrize("loss", ["hinge", "logistic", "squared", "epsilon_insensitive"])
def test_certificate_is_exact_for_every_aggregation(agg, loss):
    """The reported primal, dual and w are those of the returned alpha,
    recomputed here from scratch, for every aggregation."""
    if loss in ("squared", "epsilon_insensitive"):
        X, y = make_regression_data(n=150, d=20, seed=2)
    else:
        X, y = make_classification_data(n=150, d=20, seed=2)
    lam = 1e-3
    res = solve(X, y, loss=loss, lam=lam, solver="cocoa", n_partitions=4,
                aggregation=agg, tol=0, max_epochs=6, random_state=1)
    Xd = sp.csr_matrix(X)
    n = X.shape[0]
    w = Xd.T @ res.dual_coef / (lam * n)
    np.testing.assert_allclose(res.coef, w, rtol=0, atol=1e-12)
    L = make_loss(loss)
    primal = L.value(Xd @ w, y).mean() + lam / 2 * w @ w
    if loss == "epsilon_insensitive":
        a = res.dual_coef
        assert np.abs(a).max() <= 1.0
        nc = a * y - L.param * np.abs(a)
    else:
        nc = _neg_conj(loss, res.dual_coef, y)
    dual = nc.mean() - lam / 2 * w @ w
    assert res.primal == pytest.approx(primal, rel=1e-12)
    assert res.dual == pytest.approx(dual, rel=1e-12)
    assert res.gap >= -1e-12


@pytest.mark.parametrize("loss", ["hinge", "logistic"])
def test_line_search_beats_adding_per_epoch(loss):
    """Each partition as if alone plus the driver's step: a smaller certified
    gap after the same epochs than CoCoA+'s safe sigma' = K, on rows that share
    a direction (non-negative features, the damping's worst case)."""
    X, y = make_classification_data(n=800, d=60, density=0.3, seed=12)
    X = abs(X)
    kw = dict(loss=loss, lam=1e-2, solver="cocoa", n_partitions=8, tol=0,
              max_epochs=30, random_state=0)
    ls = solve(X, y, aggregation="line_search", **kw)
    add = solve(X, y, aggregation="adding", **kw)
    assert ls.rel_gap < 0.75 * add.rel_gap


def test_h1_differs_from_paper_eso_msdca():
    """With the paper's b = C ESO, (1 + b sigma^2) ||x_i||^2, mSDCA is a
    different (larger-step) method than CoCoA+'s sigma' = K."""
    X, y = make_classification_data(n=90, d=40, density=0.05, seed=1)
    common = dict(loss="smooth_hinge", lam=1e-2, tol=0, max_epochs=3, random_state=2)
    c = solve(X, y, solver="cocoa", n_partitions=4, local_iters=1, local_solver="uniform",
              aggregation="adding", **common)
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
    gamma, sig = {"adding": (1.0, float(K)), "averaging": (1.0 / K, 1.0),
                  "line_search": (None, 1.0)}[agg]
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
        if agg == "line_search":
            # every partition as if alone (sig = 1), then the exact step on the
            # summed update (the maximizer of the dual along the line, by brute force)
            da = sum(ch[0] for ch in changes)
            theta = _best_step(X, y, c, loss, lam, alpha, da)
            alpha = alpha + theta * da
            v = X.T @ (c * alpha) / W
            continue
        for dalpha, dv in changes:
            alpha += gamma * dalpha
            v += gamma * dv
    return alpha, v


@pytest.mark.parametrize("agg", ["adding", "averaging", "line_search"])
@pytest.mark.parametrize("loss, H", [("logistic", 7), ("hinge", 40), ("squared_hinge", 16)])
def test_sdca_local_solver_matches_plain_python_reference(agg, loss, H):
    X, y = make_classification_data(n=50, d=8, seed=4)
    c = np.random.default_rng(1).uniform(0.5, 2.0, 50)
    res = solve(X, y, loss=loss, lam=0.05, solver="cocoa", n_partitions=3,
                local_iters=H, aggregation=agg, tol=0, max_epochs=3, random_state=9,
                check_every=3, sample_weight=c)
    rounds = res.trace[-1]["rounds"]
    alpha, v = _reference_cocoa_perm(X, y, loss, 0.05, 3, H, agg, 9, rounds, c=c)
    # the brute-force step of the line-search reference is good to ~1e-8
    atol = 1e-12 if agg != "line_search" else 1e-6
    np.testing.assert_allclose(res.dual_coef, alpha, rtol=0, atol=atol)
    np.testing.assert_allclose(res.coef, v / 0.05, rtol=0, atol=atol * 100)


def _count_run_threads(monkeypatch, module):
    """The ``(n_tasks, n_threads)`` of each ``module.run_threads`` call (a spy)."""
    calls = []
    real = module.run_threads

    def counting(task, n_tasks, n_threads=None):
        calls.append((n_tasks, n_threads))
        return real(task, n_tasks, n_threads)

    monkeypatch.setattr(module, "run_threads", counting)
    return calls


def test_threads_give_the_same_iterates(part_thread_calls, monkeypatch):
    """The partitions of a round are independent: n_jobs changes the time, not
    the numbers.  Below a million stored entries a thread they stay on one."""
    from primaldual.distributed import block as block_mod
    X, y = make_classification_data(n=400, d=30, seed=5)
    kw = dict(loss="logistic", lam=1e-2, solver="cocoa", n_partitions=4, tol=1e-9,
              max_epochs=1000, random_state=2)
    rounds = _count_run_threads(monkeypatch, block_mod)
    one = solve(X, y, n_jobs=1, **kw)
    assert rounds == [] and part_thread_calls == []
    two = solve(X, y, n_jobs=2, **kw)
    assert rounds and set(rounds) == {(4, 2)} and set(part_thread_calls) == {(4, 2)}
    assert one.converged
    np.testing.assert_array_equal(one.dual_coef, two.dual_coef)
    np.testing.assert_array_equal(one.coef, two.coef)


def test_a_checks_partition_passes_run_on_the_threads(monkeypatch):
    """A check's certificate passes, one per partition, are independent: with
    ``n_jobs > 1`` they run on the threads, and the parts are the same numbers;
    below a million stored entries a thread, on one."""
    from primaldual._util import threads as threads_util
    from primaldual.distributed import block as block_mod
    from primaldual.problem import Problem
    X, y = make_classification_data(n=300, d=40, seed=8)
    prob = Problem(X, y, loss="logistic", lam=1e-2)
    blk = block_mod.PartitionBlock(prob.rows, prob.y, prob.sample_weight,
                                   contiguous_partition(prob.n, 3), prob.loss.code,
                                   prob.loss.param, prob.lam, prob.W)
    rng = np.random.default_rng(0)
    blk.alpha[:] = prob.y * rng.uniform(0.05, 0.95, prob.n)       # inside the domain
    w = rng.standard_normal(prob.d)
    calls = _count_run_threads(monkeypatch, threads_util)
    one = blk.certificate_parts(w)
    assert calls == []
    blk.n_jobs = 2
    assert blk.part_threads() == 1                  # 300 rows: under the floor
    blk.certificate_parts(w)
    assert calls == []
    monkeypatch.setattr(threads_util, "MIN_VALUES_PER_THREAD", 1)
    two = blk.certificate_parts(w)
    assert calls == [(3, 2)]
    for a, b in zip(one, two):
        assert a[:2] == b[:2]
        np.testing.assert_array_equal(a[2], b[2])
        np.testing.assert_array_equal(a[3], b[3])
    assert sum(p[0] for p in one) == pytest.approx(
        float(prob.sample_weight @ prob.loss.value(X @ w, prob.y)), rel=1e-12)


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


@pytest.mark.parametrize("agg", ["line_search", "adding", "averaging"])
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
