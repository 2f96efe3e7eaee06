"""Mini-batch SDCA (Takac, Richtarik & Srebro): ESO formulas, sigma^2, the three
step rules of Section 3, a plain-Python reference, multi-core determinism,
resume and the optimum."""
from __future__ import annotations

import itertools

import numpy as np
import pytest
import scipy.sparse as sp

from conftest import make_classification_data
from primaldual import solve
from primaldual.rows import as_rows
from primaldual.validation import check_X
from primaldual.losses.dispatch import dual_step
from primaldual.losses import make_loss
from primaldual.solvers.minibatch import eso_factor, sigma_squared, sparse_eso


# ------------------------------------------------------------ helpers
def _rows(X):
    return as_rows(check_X(X))


def _subsets_standard(n, b):
    return [list(S) for S in itertools.combinations(range(n), b)]


def _subsets_distributed(n, b, C):
    parts = np.array_split(np.arange(n), C)
    per = [list(itertools.combinations(p.tolist(), b // C)) for p in parts]
    return [sum((list(s) for s in combo), []) for combo in itertools.product(*per)]


def _eso_slack(X, v, subsets):
    """min eigenvalue of (b/n) diag(v) - E[P_S X X^T P_S], by enumerating the
    sampling's subsets (all equally likely): ESO (4) holds iff it is >= 0."""
    X = np.asarray(X.toarray() if sp.issparse(X) else X)
    n = X.shape[0]
    G = X @ X.T
    E = np.zeros((n, n))
    for S in subsets:
        idx = np.array(S)
        E[np.ix_(idx, idx)] += G[np.ix_(idx, idx)]
    E /= len(subsets)
    b = len(subsets[0])
    return np.linalg.eigvalsh(b / n * np.diag(v) - E).min() / max(1.0, np.abs(E).max())


def _exact_sigma2(X):
    X = np.asarray(X.toarray() if sp.issparse(X) else X)
    nrm = np.linalg.norm(X, axis=1)
    Z = X[nrm > 0] / nrm[nrm > 0, None]
    return np.linalg.eigvalsh(Z @ Z.T).max() / X.shape[0]


@pytest.fixture(scope="module")
def tiny():
    rng = np.random.default_rng(3)
    X = sp.random(8, 6, density=0.45, random_state=rng, format="csr")
    X.data = rng.standard_normal(X.data.size) + 0.5
    X = X.tolil()
    X[0, 0] = 1.0   # no empty rows
    X[5, 3] = 0.7
    return sp.csr_matrix(X)


# ------------------------------------------------------ ESO formulas
@pytest.mark.parametrize("b", [2, 3, 5])
def test_standard_eso_formulas_satisfy_definition(tiny, b):
    n = tiny.shape[0]
    r = _rows(tiny)
    s2 = _exact_sigma2(tiny)
    subsets = _subsets_standard(n, b)
    dense = eso_factor("standard", "dense", b, n, 1, s2) * r.sqnorm
    assert _eso_slack(tiny, dense, subsets) >= -1e-12
    assert _eso_slack(tiny, sparse_eso(r, b), subsets) >= -1e-12
    # the dense formula of the paper, by hand
    beta = 1 + (b - 1) * (n * s2 - 1) / max(1, n - 1)
    np.testing.assert_allclose(dense, beta * r.sqnorm, rtol=1e-14)
    # it is tight enough to matter: v = ||x_i||^2 (naive) violates ESO here
    assert _eso_slack(tiny, r.sqnorm, subsets) < -1e-3


@pytest.mark.parametrize("b,C", [(2, 2), (4, 2), (4, 4), (6, 2)])
def test_distributed_eso_formulas_satisfy_definition(tiny, b, C):
    n = tiny.shape[0]
    r = _rows(tiny)
    s2 = _exact_sigma2(tiny)
    subsets = _subsets_distributed(n, b, C)
    if b == C or b >= 2 * C:
        beta = eso_factor("distributed", "dense", b, n, C, s2)
        expect = (1 + b * s2) if b == C else b / (b - C) * (1 + (b - C) * (n * s2 - 1) / max(C, n - C))
        assert beta == pytest.approx(expect, rel=1e-14)
        assert _eso_slack(tiny, beta * r.sqnorm, subsets) >= -1e-12
    safe = eso_factor("distributed", "safe", b, n, C, s2)
    assert safe == pytest.approx(2 * (1 + b * s2), rel=1e-14)
    assert _eso_slack(tiny, safe * r.sqnorm, subsets) >= -1e-12
    cs = eso_factor("distributed", "cauchy_schwarz", b, n, C, s2)
    assert _eso_slack(tiny, cs * r.sqnorm, subsets) >= -1e-12


def test_dense_distributed_formula_refuses_c_lt_b_lt_2c():
    with pytest.raises(ValueError, match="eso='safe'"):
        eso_factor("distributed", "dense", 3, 10, 2, 0.1)


def test_paper_printed_sparse_formula_is_not_an_eso():
    """The paper prints ||x_i||_0 where its source has omega_j: two identical
    one-feature rows, b = 2.  The printed weight is ||x_i||^2 (not an ESO);
    the omega_j form gives 2 ||x_i||^2 (exact)."""
    X = sp.csr_matrix(np.array([[1.0], [1.0]]))
    r = _rows(X)
    subsets = _subsets_standard(2, 2)
    printed = r.sqnorm * (1 + (2 - 1) * (r.row_nnz - 1) / (2 - 1))
    assert _eso_slack(X, printed, subsets) < -0.1
    ours = sparse_eso(r, 2)
    np.testing.assert_allclose(ours, [2.0, 2.0])
    assert _eso_slack(X, ours, subsets) >= -1e-12
    # the printed omega bound (max_i ||x_i||_0 / n) is below the true sigma^2 here
    assert 1 / 2 < _exact_sigma2(X)
    assert sigma_squared(r, 2, "bound")[0] >= _exact_sigma2(X) - 1e-15


# --------------------------------------------------------------- sigma
@pytest.mark.parametrize("dense", [False, True])
def test_sigma_power_matches_exact_eigenvalue(dense):
    X, _ = make_classification_data(n=60, d=25, density=0.3, seed=5, zero_rows=2,
                                    dense=dense)
    exact = _exact_sigma2(X)
    ops = _rows(X)
    s2, info = sigma_squared(ops, 60, "power")
    assert s2 >= exact * (1 - 1e-12)
    assert s2 == pytest.approx(exact, rel=2e-4)
    bound, _ = sigma_squared(ops, 60, "bound")
    assert bound >= exact * (1 - 1e-12)
    assert info["omega_bound"] == pytest.approx(bound)


# ----------------------------------------------------------- step rules
def _correlated(n=300, d=20, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal(d) + 0.3 * rng.standard_normal((n, d))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    y = X @ rng.standard_normal(d) + 0.1 * rng.standard_normal(n)
    return X, y


def test_naive_step_diverges_on_correlated_data_where_safe_converges():
    """Section 3: the naive summed update 'might actually be much worse' and
    diverges on correlated rows; the ESO (safe) step converges."""
    X, y = _correlated()
    kw = dict(loss="squared", lam=0.02, solver="minibatch_sdca", batch_size=64, tol=1e-8,
              max_epochs=60, random_state=0)
    with pytest.raises(FloatingPointError, match="diverged"):
        solve(X, y, step="naive", **kw)
    safe = solve(X, y, step="safe", **kw)
    gaps = np.array([t["rel_gap"] for t in safe.trace])
    assert gaps[-1] < 1e-5
    assert (np.diff(gaps) <= 0).all()


def test_naive_step_oscillates_for_bounded_dual():
    """With a bounded dual domain (smoothed hinge) the naive iterates cannot
    blow up; they oscillate and the gap stalls, while the safe gap decreases."""
    X, y = _correlated()
    kw = dict(loss="smooth_hinge", lam=0.02, solver="minibatch_sdca", batch_size=64,
              tol=1e-8, max_epochs=30, random_state=0)
    naive = solve(X, np.sign(y), step="naive", **kw)
    gaps = np.array([t["rel_gap"] for t in naive.trace[1:]])
    assert gaps.min() > 5e-2
    assert (np.diff(gaps) > 0).sum() >= 5          # goes up again and again
    safe = solve(X, np.sign(y), step="safe", **kw)
    sg = np.array([t["rel_gap"] for t in safe.trace[1:]])
    assert (np.diff(sg) <= 0).all() and sg[-1] < 1e-3


def test_average_step_is_much_slower_than_safe_on_spread_data():
    """Section 3: averaging is 'not any better than updating a single dual
    variable'; on well-spread sparse data the ESO step is ~b times faster."""
    X, y = make_classification_data(n=1000, d=3000, density=0.003, seed=2)
    kw = dict(loss="smooth_hinge", lam=1e-3, solver="minibatch_sdca", batch_size=64,
              tol=1e-4, max_epochs=100, random_state=1)
    safe = solve(X, y, step="safe", **kw)
    avg = solve(X, y, step="average", **kw)
    assert safe.converged
    assert not avg.converged or avg.n_epochs >= 5 * safe.n_epochs
    at = min(len(avg.trace), len(safe.trace)) - 1
    assert avg.trace[at]["rel_gap"] > 20 * max(safe.trace[at]["rel_gap"], 1e-4)


# ------------------------------------------------ reference & properties
def _reference_msdca(X, y, loss, lam, b, seed, n_iter, eso_weights, scale):
    """Plain Python Algorithm 1 with standard sampling, fed the same uniforms."""
    X = X.toarray() if sp.issparse(X) else np.asarray(X)
    n = X.shape[0]
    L = make_loss(loss)
    u = np.random.Generator(np.random.PCG64(seed)).random(n_iter * b)
    alpha = np.zeros(n)
    v = np.zeros(X.shape[1])
    for t in range(n_iter):
        perm = list(range(n))
        S = []
        for j in range(b):
            q = j + int(u[t * b + j] * (n - j))
            perm[j], perm[q] = perm[q], perm[j]
            S.append(perm[j])
        deltas = []
        for i in S:
            a = X[i] @ v / lam
            s = eso_weights[i] / (lam * n)
            deltas.append(dual_step(L.code, L.param, alpha[i], y[i], a, s) - alpha[i])
        for i, dl in zip(S, deltas):
            alpha[i] += scale * dl
            v += (scale * dl / n) * X[i]
    return alpha, v


@pytest.mark.parametrize("step", ["safe", "average"])
def test_kernel_matches_plain_python_reference(step):
    X, y = make_classification_data(n=90, d=15, density=0.4, seed=7)
    b = 8
    res = solve(X, y, loss="smooth_hinge", lam=0.05, solver="minibatch_sdca", batch_size=b,
                step=step, tol=0, max_epochs=4, random_state=11, n_jobs=1,
                sigma="bound")
    r = _rows(X)
    if step == "safe":
        s2 = sigma_squared(r, 90, "bound")[0]
        w_eso = eso_factor("standard", "dense", b, 90, 1, s2) * r.sqnorm
        scale = 1.0
    else:
        w_eso, scale = r.sqnorm, 1.0 / b
    n_iter = res.state.meta["steps"] // b
    alpha, v = _reference_msdca(X, y, "smooth_hinge", 0.05, b, 11, n_iter, w_eso, scale)
    np.testing.assert_allclose(res.dual_coef, alpha, rtol=0, atol=1e-12)
    np.testing.assert_allclose(res.coef, v / 0.05, rtol=0, atol=1e-10)


@pytest.mark.parametrize("dense", [False, True])
def test_multicore_is_deterministic_and_equals_single_thread(dense):
    # Each thread owns a column range of w, so an inner product is summed as
    # (range 0) + (range 1) + ...: deterministic for a given thread count, and
    # equal to the single-thread run up to the rounding of that association.
    X, y = make_classification_data(n=500, d=200, density=0.05, seed=4)
    if dense:
        X = X.toarray()
    kw = dict(loss="logistic", lam=1e-3, solver="minibatch_sdca", batch_size=128,
              tol=0, max_epochs=3, random_state=5)
    one = solve(X, y, n_jobs=1, **kw)
    two = solve(X, y, n_jobs=2, **kw)
    again = solve(X, y, n_jobs=2, **kw)
    three = solve(X, y, n_jobs=3, **kw)       # uneven shares of the batch
    assert np.array_equal(two.dual_coef, again.dual_coef)
    assert np.array_equal(two.coef, again.coef)
    for res in (two, three):
        np.testing.assert_allclose(res.dual_coef, one.dual_coef, rtol=0, atol=1e-12)
        np.testing.assert_allclose(res.coef, one.coef, rtol=1e-11, atol=1e-12)
        assert res.n_epochs == one.n_epochs and res.feature_accesses == one.feature_accesses
    assert one.primal == pytest.approx(two.primal, rel=1e-12)


def test_a_check_runs_on_the_threads_asked_for(monkeypatch, certificate_threads):
    """A check's certificate pass reads alpha and w only, so it runs on the
    ``n_jobs`` threads wherever each gets its share of stored entries, and the
    pair it reports is exact: P and D recomputed from scratch on one thread."""
    from primaldual.blocks import sdca_threads
    from primaldual.problem import Problem
    X, y = make_classification_data(n=400, d=60, density=0.2, seed=3)
    monkeypatch.setattr(sdca_threads, "MIN_NNZ_PER_THREAD", 0)
    seen = certificate_threads
    kw = dict(loss="logistic", lam=1e-2, solver="minibatch_sdca", batch_size=32,
              tol=1e-9, max_epochs=2000, random_state=2)
    two = solve(X, y, n_jobs=2, **kw)
    assert set(seen) == {2} and two.converged
    seen.clear()
    one = solve(X, y, n_jobs=1, **kw)
    assert set(seen) == {1} and one.converged
    prob = Problem(X, y, loss="logistic", lam=1e-2)
    for res in (one, two):
        assert res.primal == pytest.approx(prob.primal(res.coef), rel=1e-12)
        assert res.dual == pytest.approx(prob.dual(res.dual_coef), rel=1e-12)
    assert two.primal == pytest.approx(one.primal, rel=2e-9)      # both within the tol
    # under the work floor a check stays on one thread
    monkeypatch.setattr(sdca_threads, "MIN_NNZ_PER_THREAD", X.nnz)
    seen.clear()
    solve(X, y, n_jobs=2, **kw)
    assert set(seen) == {1}


def test_multicore_more_threads_than_columns():
    # d = 2 with 4 threads: some column ranges are empty, results unchanged
    rng = np.random.default_rng(0)
    X = rng.standard_normal((300, 2))
    y = np.sign(X[:, 0] + 0.1 * rng.standard_normal(300))
    kw = dict(loss="smooth_hinge", lam=1e-2, solver="minibatch_sdca", batch_size=32,
              tol=0, max_epochs=2, random_state=1)
    one = solve(X, y, n_jobs=1, **kw)
    four = solve(X, y, n_jobs=4, **kw)
    np.testing.assert_allclose(four.coef, one.coef, rtol=1e-12, atol=1e-14)


def test_multicore_nonfinite_is_reported_like_single_thread():
    # huge features and the naive summed step overflow; both paths name it
    rng = np.random.default_rng(2)
    X = rng.standard_normal((200, 20)) * 1e154
    y = np.sign(rng.standard_normal(200))
    kw = dict(loss="squared", lam=1e-300, solver="minibatch_sdca", batch_size=64,
              tol=0, max_epochs=2, random_state=0)
    errs = []
    for th in (1, 2):
        with pytest.raises((FloatingPointError, ValueError)) as ei:
            solve(X, y, n_jobs=th, **kw)
        errs.append(type(ei.value))
    assert errs[0] is errs[1]


def test_thread_barrier_abort_releases_waiters():
    # a thread waiting for a partner that never comes is released by the abort slot
    import threading

    from primaldual.kernels.threadsync import barrier, make_flags, signal_abort
    flags = make_flags(2)
    out = []
    th = threading.Thread(target=lambda: out.append(barrier(flags, 0, 2, 1)))
    th.start()
    th.join(0.2)
    assert th.is_alive()                          # still waiting for thread 1
    signal_abort(flags, 2)
    th.join(5)
    assert not th.is_alive() and out == [False]
    # and a normal pass: both threads arrive
    flags = make_flags(2)
    res = []
    ts = [threading.Thread(target=lambda t=t: res.append(barrier(flags, t, 2, 1)))
          for t in range(2)]
    for t in ts:
        t.start()
    for t in ts:
        t.join(5)
    assert res == [True, True]


@pytest.mark.parametrize("extra", [dict(batch_size=16),
                                   dict(sampling="distributed", batch_size=8, n_partitions=4)])
def test_resume_equals_uninterrupted(extra):
    X, y = make_classification_data(n=200, d=30, seed=8)
    kw = dict(loss="hinge", lam=1e-2, solver="minibatch_sdca", tol=0, random_state=3, **extra)
    full = solve(X, y, max_epochs=6, **kw)
    part = solve(X, y, max_epochs=3, **kw)
    rest = solve(X, y, max_epochs=6, resume=part.state, **kw)
    assert np.array_equal(full.coef, rest.coef)
    assert np.array_equal(full.dual_coef, rest.dual_coef)


@pytest.mark.parametrize("extra", [dict(sampling="serial", batch_size=1),
                                   dict(batch_size=8, eso="sparse"),
                                   dict(batch_size=32, sigma="bound"),
                                   dict(sampling="distributed", batch_size=32, n_partitions=4),
                                   dict(sampling="distributed", batch_size=8, n_partitions=4,
                                        eso="safe")])
def test_reaches_the_sdca_optimum(extra):
    X, y = make_classification_data(n=240, d=60, density=0.08, seed=9)
    ref = solve(X, y, loss="squared_hinge", lam=1e-2, solver="sdca", tol=1e-10,
                max_epochs=500)
    res = solve(X, y, loss="squared_hinge", lam=1e-2, solver="minibatch_sdca", tol=1e-8,
                max_epochs=500, random_state=0, **extra)
    assert res.converged and res.rel_gap <= 1e-8
    assert res.primal == pytest.approx(ref.primal, rel=2e-8)
    np.testing.assert_allclose(res.coef, ref.coef, atol=1e-3)


def test_dense_and_sparse_input_agree():
    X, y = make_classification_data(n=120, d=20, seed=10)
    kw = dict(loss="logistic", lam=1e-2, solver="minibatch_sdca", batch_size=16, tol=0,
              max_epochs=3, random_state=2)
    a = solve(X, y, **kw)
    b = solve(X.toarray(), y, **kw)
    np.testing.assert_allclose(a.dual_coef, b.dual_coef, atol=1e-12)


def test_sample_weights_equal_duplicated_rows():
    X, y = make_classification_data(n=60, d=10, seed=12)
    c = np.ones(60)
    c[:10] = 2.0
    Xd = sp.vstack([X, X[:10]]).tocsr()
    yd = np.concatenate([y, y[:10]])
    a = solve(X, y, sample_weight=c, loss="squared_hinge", lam=1e-2,
              solver="minibatch_sdca", batch_size=8, tol=1e-9, max_epochs=800)
    b = solve(Xd, yd, loss="squared_hinge", lam=1e-2, solver="minibatch_sdca",
              batch_size=8, tol=1e-9, max_epochs=800)
    assert a.converged and b.converged
    assert a.primal == pytest.approx(b.primal, rel=1e-7)


@pytest.mark.parametrize("opts,match", [
    (dict(sampling="serial", batch_size=4), "batch_size must be 1"),
    (dict(batch_size=0), "batch_size"),
    (dict(batch_size=201), "larger than n"),
    (dict(step="naive", eso="sparse"), "leave eso='auto'"),
    (dict(eso="safe"), "distributed-sampling bound"),
    (dict(sampling="distributed", eso="sparse", n_partitions=2), "standard-sampling"),
    (dict(sampling="distributed", batch_size=10, n_partitions=4), "not a multiple"),
    (dict(n_partitions=2), "sampling='distributed' only"),
    (dict(sigma=2.0), "sigma"),
    (dict(sigma="exact"), "sigma"),
    (dict(bogus=1), "unknown option"),
])
def test_bad_options_are_clear_errors(opts, match):
    X, y = make_classification_data(n=200, d=5, seed=1)
    with pytest.raises(ValueError, match=match):
        solve(X, y, solver="minibatch_sdca", max_epochs=1, **opts)
