"""SVM-SIMBA (Hazan, Koren & Srebro 2011) and the Pegasos baseline.

References used here are independent of the compiled kernels: exact
enumeration and Monte Carlo for the l2-sampling estimate, scipy's linprog for
the PST step, a plain-numpy Algorithm 1 fed the kernels' own draws for the
Variance-MW update, a chi-square test for the sampling trees, SDCA for the
test error, and a plain-Python Pegasos fed SGD's sample order.
"""
from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import linprog
from scipy.stats import chisquare
from sklearn.preprocessing import normalize

import primaldual
from primaldual.kernels import simba as K
from primaldual.kernels.sampling_trees import (min_tree_argmin, min_tree_build,
                                               min_tree_update, sum_tree_build,
                                               sum_tree_sample, sum_tree_update,
                                               tree_size)
from primaldual.solvers import SOLVERS
from primaldual.solvers._base import make_rng
from primaldual.solvers.simba import _column_view, nu_from_lam_solution

from conftest import load_binary, make_classification_data


def _unit_rows(n=60, d=12, density=0.5, seed=0, dense=False):
    X, y = make_classification_data(n=n, d=d, density=density, seed=seed)
    X = normalize(sp.csr_matrix(X))
    return (X.toarray() if dense else X), y


# ---------------------------------------------------------------- estimator
def test_dual_estimate_is_unbiased_before_clipping():
    """E_j[v~(i)] = y_i x_i . w + xi_i + y_i b for j ~ w(j)^2/||w||^2 (line 9)."""
    rng = np.random.default_rng(0)
    X, y = _unit_rows(n=40, d=10, density=0.6, seed=3)
    prob = primaldual.Problem(X, y, loss="hinge", lam=1.0)
    cd, ci, cp, cip = _column_view(prob.rows)
    w = rng.standard_normal(10)
    w[3] = 0.0                              # a zero coordinate is never drawn
    xi = rng.uniform(0, 2, size=40)
    b = -0.7
    exact = y * (X @ w + b) + xi
    wn2 = w @ w
    probs = w ** 2 / wn2
    out = np.empty(40)
    # exact expectation by enumerating j
    mean = np.zeros(40)
    second = np.zeros(40)
    for j in np.flatnonzero(probs > 0):
        K.dual_estimate(cd, ci, cp, cip, y, xi, b, j, wn2 / w[j], out)
        mean += probs[j] * out
        second += probs[j] * out ** 2
    np.testing.assert_allclose(mean, exact, rtol=0, atol=1e-12)
    # Monte Carlo with the same estimator
    m = 20000
    draws = rng.choice(10, size=m, p=probs)
    tot = np.zeros(40)
    for j in draws:
        K.dual_estimate(cd, ci, cp, cip, y, xi, b, j, wn2 / w[j], out)
        tot += out
    sd = np.sqrt(np.maximum(second - mean ** 2, 0.0) / m)
    assert np.all(np.abs(tot / m - exact) <= 5 * sd + 1e-12)
    # w = 0: the estimate of X w is exactly 0
    K.dual_estimate(cd, ci, cp, cip, y, xi, b, -1, 0.0, out)
    np.testing.assert_allclose(out, xi + y * b)


# --------------------------------------------------------------------- PST
@pytest.mark.parametrize("n,nu,seed", [(7, 0.3, 0), (10, 0.5, 1), (25, 0.77, 2),
                                       (9, 1.0, 3), (12, 0.0, 4), (30, 0.05, 5)])
def test_pst_step_equals_linprog(n, nu, seed):
    """xi_t = argmax_{xi in Xi_nu} p . xi, checked against scipy's LP solver."""
    rng = np.random.default_rng(seed)
    logq = rng.standard_normal(n)
    logq[: n // 3] = logq[0]                # ties
    p = np.exp(logq) / np.exp(logq).sum()
    xi = np.empty(n)
    idx = np.empty(n, dtype=np.int64)
    K.pst_slacks(logq, nu * n, idx, xi)
    assert np.all(xi >= 0) and np.all(xi <= 2) and xi.sum() <= nu * n + 1e-12
    lp = linprog(-p, A_ub=np.ones((1, n)), b_ub=[nu * n], bounds=[(0, 2)] * n,
                 method="highs")
    assert lp.status == 0
    assert p @ xi == pytest.approx(-lp.fun, abs=1e-12)
    # canonical tie-break: the slack set is the first entries of (p desc, index asc)
    order = np.lexsort((np.arange(n), -logq))
    k = int(math.floor(nu * n / 2))
    assert set(np.flatnonzero(xi == 2.0)) == set(order[:k])


def test_select_top_is_a_selection():
    rng = np.random.default_rng(1)
    key = rng.integers(0, 5, size=200).astype(float)   # many ties
    order = np.lexsort((np.arange(200), -key))
    for kk in (0, 1, 57, 100, 199):
        idx = np.arange(200, dtype=np.int64)
        K.select_top(idx, key, kk)
        assert idx[kk] == order[kk]
        assert set(idx[:kk]) == set(order[:kk])


# ----------------------------------------------------------- sampling trees
def test_sum_tree_chisquare():
    rng = np.random.default_rng(12345)
    m = 37
    mass = rng.exponential(size=m)
    mass[[4, 20]] = 0.0
    tree = np.zeros(2 * tree_size(m))
    sum_tree_build(tree, np.zeros(m))
    for i in range(m):                       # build by updates
        sum_tree_update(tree, i, mass[i])
    assert tree[1] == pytest.approx(mass.sum(), rel=1e-14)
    draws = np.array([sum_tree_sample(tree, u) for u in rng.random(200000)])
    counts = np.bincount(draws, minlength=m)
    assert counts[4] == 0 and counts[20] == 0
    keep = mass > 0
    expected = mass[keep] / mass.sum() * draws.size
    assert chisquare(counts[keep], expected).pvalue > 1e-3
    # after an update the new distribution is sampled
    sum_tree_update(tree, 7, 50.0)
    mass[7] = 50.0
    draws = np.array([sum_tree_sample(tree, u) for u in rng.random(100000)])
    counts = np.bincount(draws, minlength=m)
    assert chisquare(counts[keep], mass[keep] / mass.sum() * draws.size).pvalue > 1e-3
    assert sum_tree_sample(np.zeros(8), 0.5) == -1


def test_min_tree_argmin_and_ties():
    rng = np.random.default_rng(2)
    m = 21
    keys = rng.integers(0, 4, size=m).astype(float)
    member = rng.random(m) < 0.7
    tree = np.zeros(2 * tree_size(m))
    min_tree_build(tree, keys, member)
    masked = np.where(member, keys, np.inf)
    best = masked.min()
    ties = np.flatnonzero(masked == best)
    assert tree[1] == best
    assert min_tree_argmin(tree, False) == ties[0]
    assert min_tree_argmin(tree, True) == ties[-1]
    min_tree_update(tree, int(ties[0]), np.inf)
    masked[ties[0]] = np.inf
    assert tree[1] == masked.min()


# ------------------------------------------- Algorithm 1, plain reference
def reference_simba(X, y, nu, T, schedule, bias, draws_i, draws_j):
    """Algorithm 1 in plain numpy, fed the draws (i_t, j_t) of the kernel.

    The slack set breaks ties by index.  Ties that are exact in real arithmetic
    can come out differently in floating point when the sparse kernel reaches
    them through its group multipliers (clipping makes different histories
    give equal weights), so the parametrized cases below are ones without
    such a tie at the slack boundary; the dense kernel performs the same
    arithmetic as this reference.
    """
    n, d = X.shape
    logq = np.zeros(n)
    u = np.zeros(d)
    wsum, xisum, bsum = np.zeros(d), np.zeros(n), 0.0
    k = int(math.floor(nu * n / 2))
    r = nu * n - 2 * k
    for t in range(1, len(draws_i) + 1):
        if schedule == "constant":
            eta, c = math.sqrt(math.log(n) / T), 1 / math.sqrt(2 * T)
        elif schedule == "adaptive":
            eta, c = math.sqrt(math.log(n)) / t, 1 / math.sqrt(2 * t)
        else:
            eta, c = math.sqrt(math.log(n) / t), 1 / math.sqrt(2 * t)
        logq = logq - logq.max()            # normalization of p_t, kept in log form
        p = np.exp(logq)
        p /= p.sum()
        order = np.lexsort((np.arange(n), -logq))
        xi = np.zeros(n)
        xi[order[:k]] = 2.0
        if r > 0:
            xi[order[k]] = r
        b = float(np.sign(p @ y)) if bias else 0.0
        i = draws_i[t - 1]
        u = u + c * y[i] * X[i]
        w = u / max(1.0, np.linalg.norm(u))
        j = draws_j[t - 1]
        vt = xi + y * b
        if j >= 0:
            assert w[j] != 0
            vt = vt + y * X[:, j] * (w @ w) / w[j]
        ev = eta * np.clip(vt, -1 / eta, 1 / eta)
        logq = logq + np.log(1 - ev + ev * ev)
        wsum += w
        xisum += xi
        bsum += b
    m = len(draws_i)
    p = np.exp(logq - logq.max())
    return p / p.sum(), wsum / m, xisum / m, bsum / m


def _kernel_p(res):
    a = res.state.arrays
    if "logq" in a:
        lq = a["logq"]
    else:
        lq = a["logbase"] + a["L"][a["group"]]
    p = np.exp(lq - lq.max())
    return p / p.sum()


@pytest.mark.parametrize("impl,schedule,bias", [
    ("dense", "constant", False), ("dense", "constant", True),
    ("dense", "adaptive", True), ("dense", "adaptive_sqrt", False),
    ("sparse", "constant", False), ("sparse", "constant", True),
    ("sparse", "adaptive_sqrt", True)])
@pytest.mark.filterwarnings("ignore:SIMBA. the budget allows")
def test_mw_update_matches_reference(impl, schedule, bias):
    X, y = _unit_rows(n=30, d=8, density=0.5, seed=4)
    T = 60
    res = primaldual.solve(X, y, loss="hinge", lam=0.1, solver="simba", nu=0.37, T=T,
                           schedule=schedule, bias=bias, implementation=impl,
                           max_epochs=1e6, check_every=1e6, record_draws=T,
                           random_state=7)
    assert res.extras["iterations"] == T and res.stop_reason == "max_iter"
    di, dj = res.extras["draws_i"], res.extras["draws_j"]
    p, wbar, xibar, bbar = reference_simba(X.toarray(), y, 0.37, T, schedule, bias, di, dj)
    np.testing.assert_allclose(_kernel_p(res), p, rtol=1e-9, atol=1e-14)
    solver = SOLVERS["simba"](
        primaldual.Problem(X, y, loss="hinge", lam=0.1), tol=0, max_epochs=1e6,
        random_state=7, nu=0.37, T=T, implementation=impl)
    solver.impl = impl
    solver.set_state(res.state.meta, res.state.arrays)
    w_k, xi_k, b_k = solver.averages()
    np.testing.assert_allclose(w_k, wbar, rtol=1e-9, atol=1e-13)
    np.testing.assert_allclose(xi_k, xibar, rtol=1e-12, atol=1e-12)
    assert b_k == pytest.approx(bbar, abs=1e-12)
    # the draws follow the kernels' own p_t only in distribution; here: valid indices
    assert di.min() >= 0 and di.max() < 30 and dj.max() < 8


# ----------------------------------------------------------- whole solver
def test_simba_on_real_data_close_to_sdca():
    """Real sparse text (cocoa-small, 2000 x 9947): SIMBA with nu from the lam
    solution reaches SDCA's test error within one point in 20 passes."""
    Xtr, ytr = load_binary("cocoa-small", n_features=9947)
    Xte, yte = load_binary("cocoa-small.t", n_features=9947)
    Xtr, Xte = normalize(Xtr), normalize(Xte)
    lam = 1e-3
    ref = primaldual.solve(Xtr, ytr, loss="hinge", lam=lam, solver="sdca", tol=1e-6)
    err_sdca = np.mean(np.where(Xte @ ref.coef > 0, 1, -1) != yte)
    nu = nu_from_lam_solution(ref.coef, Xtr, ytr)
    res = primaldual.solve(Xtr, ytr, loss="hinge", lam=lam, solver="simba", nu=nu,
                           schedule="adaptive_sqrt", max_epochs=20, check_every=2.5,
                           eval_set=(Xte, yte), random_state=0)
    err = res.trace[-1]["test_error"]
    assert len(res.trace) == 9 and all("test_error" in r for r in res.trace)
    assert err <= err_sdca + 0.01, (err, err_sdca)
    # the certificate is exact for the rescaled output in the lam problem
    prob = primaldual.Problem(Xtr, ytr, loss="hinge", lam=lam)
    assert res.primal == pytest.approx(prob.primal(res.coef), rel=1e-12)
    assert res.extras["rescaled"] and res.extras["gamma"] > 0
    assert res.gap >= 0 and res.primal >= ref.dual
    # epochs are feature accesses over nnz
    assert res.n_epochs == pytest.approx(res.feature_accesses / Xtr.nnz)
    assert res.n_epochs >= 20


def test_nu_from_lam_solution_lemma_2_1():
    X, y = _unit_rows(n=80, d=10, seed=6)
    ref = primaldual.solve(X, y, loss="hinge", lam=1e-2, solver="sdca", tol=1e-9)
    w = ref.coef
    nu = nu_from_lam_solution(w, X, y)
    hinge = np.maximum(0, 1 - y * (X @ w))
    assert nu == pytest.approx(hinge.mean() / np.linalg.norm(w), rel=1e-14)
    # the Lemma's feasible point (w/||w||, xi/||w||) has value exactly 1/||w||
    nw = np.linalg.norm(w)
    xi_star = hinge / nw
    assert xi_star.sum() == pytest.approx(nu * len(y))
    assert np.min(y * (X @ (w / nw)) + xi_star) == pytest.approx(1 / nw, rel=1e-9)
    with pytest.raises(ValueError, match="w != 0"):
        nu_from_lam_solution(np.zeros(10), X, y)
    # nu=None derives nu from lam the same way
    res = primaldual.solve(X, y, loss="hinge", lam=1e-2, solver="simba",
                           schedule="adaptive_sqrt", max_epochs=1)
    assert res.extras["nu"] == pytest.approx(nu, rel=1e-3)


@pytest.mark.parametrize("impl", ["dense", "sparse"])
def test_resume_equals_uninterrupted(impl):
    X, y = _unit_rows(n=120, d=15, seed=8)
    kw = dict(loss="hinge", lam=1e-2, solver="simba", nu=0.3, schedule="adaptive_sqrt",
              bias=True, implementation=impl, check_every=0.5, random_state=11)
    full = primaldual.solve(X, y, max_epochs=6, **kw)
    part = primaldual.solve(X, y, max_epochs=2.5, **kw)
    rest = primaldual.solve(X, y, max_epochs=6, resume=part.state, **kw)
    np.testing.assert_array_equal(rest.coef, full.coef)
    assert rest.feature_accesses == full.feature_accesses
    assert rest.extras["intercept"] == full.extras["intercept"]


def test_bad_input_is_refused():
    X, y = _unit_rows(n=20, d=5)
    with pytest.raises(ValueError, match="only loss='hinge'"):
        primaldual.solve(X, y, loss="logistic", solver="simba", nu=0.1)
    with pytest.raises(ValueError, match=r"\|\|x_i\|\| <= 1"):
        primaldual.solve(X * 3, y, solver="simba", nu=0.1)
    with pytest.raises(ValueError, match="nu must be in"):
        primaldual.solve(X, y, solver="simba", nu=1.5)
    with pytest.raises(ValueError, match="sample weights"):
        primaldual.solve(X, y, solver="simba", nu=0.1, sample_weight=np.arange(1, 21))
    with pytest.raises(ValueError, match="unknown option"):
        primaldual.solve(X, y, solver="simba", nu=0.1, eta=3)
    with pytest.raises(ValueError, match="schedule"):
        primaldual.solve(X, y, solver="simba", nu=0.1, schedule="fast")


def test_row_norm_check_accepts_float_rounding_of_unit_rows():
    """Rows normalized by scikit-learn in float32 have norms of 1 + a few float32
    ulps; they are unit rows (the check's tolerance), while 1 + 1e-5 is refused."""
    rng = np.random.default_rng(5)
    X32 = normalize(rng.lognormal(0.0, 3.0, (400, 37)).astype(np.float32)
                    * rng.choice([-1, 1], (400, 37)).astype(np.float32))
    norms = np.linalg.norm(X32.astype(np.float64), axis=1)
    assert norms.max() ** 2 > 1.0 + 1e-8          # the rounding the check must accept
    y = np.where(np.arange(400) % 2, 1.0, -1.0)
    for X in (X32, X32.astype(np.float64), sp.csr_matrix(X32)):
        res = primaldual.solve(X, y, solver="simba", nu=0.1, max_epochs=1, random_state=0)
        assert np.isfinite(res.gap)
    from primaldual.solvers.simba import ROW_NORM_TOL, check_unit_rows
    check_unit_rows(np.array([0.5, (1.0 + ROW_NORM_TOL) ** 2]))
    with pytest.raises(ValueError, match=r"largest row norm is 1.00001"):
        check_unit_rows(np.array([0.5, (1.0 + 1e-5) ** 2]))
    with pytest.raises(ValueError, match=r"\|\|x_i\|\| <= 1"):
        check_unit_rows(np.array([np.nan]))


def test_epsilon_sets_T():
    X, y = _unit_rows(n=20, d=5)
    res = primaldual.solve(X, y, solver="simba", nu=0.1, epsilon=200.0, max_epochs=1e6,
                           check_every=1e6)
    assert res.extras["T"] == math.ceil(100 ** 2 / 200.0 ** 2 * math.log(20))
    assert res.extras["iterations"] == res.extras["T"]


# ----------------------------------------------------------------- Pegasos
def reference_pegasos(X, y, lam, orders):
    """Pegasos (Shalev-Shwartz, Singer, Srebro & Cotter 2011, Fig. 1) with projection."""
    w = np.zeros(X.shape[1])
    t = 0
    for order in orders:
        for i in order:
            t += 1
            eta = 1.0 / (lam * t)
            viol = y[i] * (X[i] @ w) < 1.0
            w = (1 - eta * lam) * w
            if viol:
                w = w + eta * y[i] * X[i]
            nrm = np.linalg.norm(w)
            if nrm > 1 / math.sqrt(lam):
                w = w / (nrm * math.sqrt(lam))
    return w


@pytest.mark.parametrize("dense", [False, True])
def test_pegasos_matches_reference(dense):
    X, y = make_classification_data(n=70, d=9, seed=9, dense=dense)
    lam = 0.05
    res = primaldual.solve(X, y, loss="hinge", lam=lam, solver="sgd", project=True,
                           max_epochs=3, random_state=4, check_every=3)
    # one check after the start: the returned pair is the last iterate
    assert "best_epoch" not in res.extras and res.trace[-1]["epoch"] == 3
    rng = make_rng(4)
    orders = [rng.integers(0, 70, size=70, dtype=np.int64) for _ in range(3)]
    Xd = X if dense else X.toarray()
    w = reference_pegasos(Xd, y, lam, orders)
    np.testing.assert_allclose(res.coef, w, rtol=1e-10, atol=1e-12)
    row_nnz = np.full(70, 9) if dense else np.diff(X.indptr)
    assert res.feature_accesses == sum(int(row_nnz[o].sum()) for o in orders)


# ------------------------------------------------ defaults, budget warning, accounting
def _separable_split(n=1200, d=40, seed=3):
    """A separable set with margin 0.1 (unit-norm rows), split 800 / 400."""
    rng = np.random.default_rng(seed)
    w = rng.standard_normal(d)
    w /= np.linalg.norm(w)
    X = normalize(rng.standard_normal((4 * n, d)))
    m = X @ w
    keep = np.abs(m) >= 0.1
    X, m = X[keep][:n], m[keep][:n]
    y = np.where(m > 0, 1.0, -1.0)
    return X[:800], y[:800], X[800:], y[800:]


def test_default_options_learn_a_separable_set():
    """solver='simba' with no options (adaptive_sqrt, nu from lam) learns."""
    Xtr, ytr, Xte, yte = _separable_split()
    res = primaldual.solve(Xtr, ytr, loss="hinge", lam=1e-3, solver="simba",
                           max_epochs=10, eval_set=(Xte, yte), random_state=0)
    assert res.extras["T"] is None          # the any-time default schedule
    err = res.trace[-1]["test_error"]
    assert err <= 0.06, err
    assert 0.0 < res.extras["nu"] <= 1.0


def test_constant_schedule_warns_on_a_starved_budget():
    Xtr, ytr, _, _ = _separable_split()
    with pytest.warns(RuntimeWarning, match=r"budget allows [\d,]+ iterations.*T = 100\^2"):
        primaldual.solve(Xtr, ytr, loss="hinge", lam=1e-3, solver="simba", nu=0.01,
                         schedule="constant", max_epochs=0.5, random_state=0)
    with pytest.warns(RuntimeWarning, match=r"eps = 0\.5 \(epsilon\)"):
        primaldual.solve(Xtr, ytr, loss="hinge", lam=1e-3, solver="simba", nu=0.01,
                         epsilon=0.5, max_epochs=0.5, random_state=0)
    # a budget that covers Theorem 3.1's T does not warn
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        primaldual.solve(Xtr[:50], ytr[:50], loss="hinge", lam=1e-3, solver="simba",
                         nu=0.01, T=int(1e4 / 1.01 ** 2 * math.log(50)) + 1,
                         schedule="constant", max_epochs=1e9, check_every=1e9,
                         random_state=0)


@pytest.mark.parametrize("impl", ["dense", "sparse"])
def test_feature_access_counts_by_hand(impl):
    """3 x 4 matrix, rows with 1, 2, 3 nonzeros and columns with 1, 1, 2, 2:
    one iteration reads nnz(row i_t) + nnz(column j_t) nonzeros, and n + d = 7
    features in the paper's dense model."""
    X = sp.csr_matrix(np.array([[0.0, 0.0, 1.0, 0.0],
                                [0.6, 0.0, 0.0, 0.8],
                                [0.0, 0.48, 0.6, 0.64]]))
    y = np.array([1.0, -1.0, 1.0])
    row_nnz = {0: 1, 1: 2, 2: 3}
    col_nnz = {0: 1, 1: 1, 2: 2, 3: 2}
    T = 5
    res = primaldual.solve(X, y, loss="hinge", lam=1e-2, solver="simba", nu=0.3, T=T,
                           implementation=impl, max_epochs=1e6, check_every=1e6,
                           record_draws=T, random_state=4)
    di, dj = res.extras["draws_i"], res.extras["draws_j"]
    assert res.extras["iterations"] == T
    # the first step has w = 0, so no column is sampled (j = -1): the row only
    expected = sum(row_nnz[int(i)] + (col_nnz[int(j)] if j >= 0 else 0)
                   for i, j in zip(di, dj))
    assert res.feature_accesses == expected
    assert res.extras["dense_feature_accesses"] == T * (3 + 4)
