"""SPDC (Zhang & Xiao 2015): closed-form steps, lazy updates, sampling, convergence."""
from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import minimize_scalar

import primaldual as pd
from primaldual.losses.dispatch import dual_step
from primaldual.kernels.spdc import (SPDCSampling, SPDCSpec, SPDCState, SPDCWork,
                                     alias_draw, build_alias, catch_up_all, expm1_table,
                                     prox_recursion, prox_step, spdc_run)
from primaldual.kernels.views import RowsView
from primaldual.losses import make_loss
from conftest import load_binary, make_classification_data, make_regression_data

LOSSES = [("hinge", None), ("smooth_hinge", {"gamma": 0.5}), ("squared_hinge", None),
          ("logistic", None), ("squared", None), ("absolute", None),
          ("epsilon_insensitive", {"epsilon": 0.2})]


# ------------------------------------------------------------- dual step (5)
@pytest.mark.parametrize("name,params", LOSSES)
def test_dual_step_5_matches_bruteforce(name, params):
    """(5) in our variables: argmax_b b A - phi*(b) - rho/(2 sigma)(b - yt)^2, yt=-alpha,
    with the delta perturbation, solved by dual_step with curvature s + delta."""
    loss = make_loss(name, params)
    rng = np.random.default_rng(1)
    for _ in range(25):
        y = rng.choice([-1.0, 1.0]) if loss.classification else rng.normal()
        lo, hi = loss.dual_domain(y)
        lo_b, hi_b = max(lo, -5.0), min(hi, 5.0)
        alpha = rng.uniform(lo_b, hi_b) if rng.random() < 0.8 else lo_b
        A = rng.normal(scale=2.0)
        s = rng.uniform(0.05, 5.0)
        delta = rng.choice([0.0, rng.uniform(0.01, 1.0)])
        sd = s + delta
        got = dual_step(loss.code, loss.param, s * alpha / sd, y, A, sd)

        def neg_obj(beta):   # paper's objective in b = -beta, negated
            b = -beta
            conj = -loss.neg_conjugate(beta, y)[0]      # phi*(b) = -(-phi*(-beta))
            return -(b * A - conj - delta * b * b / 2 - s * (b + alpha) ** 2 / 2)
        res = minimize_scalar(neg_obj, bounds=(lo_b - 1e-15, hi_b + 1e-15), method="bounded",
                              options={"xatol": 1e-12})
        assert abs(got - res.x) < 1e-6 or neg_obj(got) <= res.fun + 1e-11
        assert loss.in_dual_domain(got, y)[0]


# ------------------------------------------------------ lazy catch-up (O(1))
def test_prox_recursion_equals_repeated_steps():
    rng = np.random.default_rng(0)
    for _ in range(3000):
        tau = 10 ** rng.uniform(-3, 1)
        l2 = 10 ** rng.uniform(-4, 0)
        l1 = 0.0 if rng.random() < 0.2 else 10 ** rng.uniform(-3, 0)
        u = rng.normal(scale=rng.choice([0.01, 1.0]))
        x = rng.normal(scale=rng.choice([0.01, 1.0, 100.0]))
        k = int(rng.integers(0, 400))
        c = 1.0 / (1.0 + tau * l2)
        ref = x
        for _ in range(k):
            ref = prox_step(ref, u, tau, l1, c)
        got = prox_recursion(x, k, u, tau, l1, l2, c, -math.log1p(tau * l2))
        assert abs(got - ref) <= 1e-9 * max(1.0, abs(ref), abs(x)), (x, k, u, tau, l1, l2)


def test_prox_recursion_crosses_all_three_phases():
    # u > l1: fixed point negative; start far positive -> right branch, zero zone, left
    tau, l1, l2, u = 0.5, 0.1, 0.05, 0.3
    c = 1 / (1 + tau * l2)
    x, ref, signs = 3.0, 3.0, set()
    for k in range(1, 700):
        ref = prox_step(ref, u, tau, l1, c)
        signs.add(np.sign(ref))
        got = prox_recursion(x, k, u, tau, l1, l2, c, -math.log1p(tau * l2))
        assert abs(got - ref) <= 1e-10 * max(1, abs(ref))
    assert signs == {-1.0, 0.0, 1.0}
    assert abs(ref - (-(u - l1) / l2)) < 1e-3     # converges to the left fixed point


# ------------------------------------------------------------- alias table
def test_alias_table_is_exact():
    rng = np.random.default_rng(3)
    prob = rng.lognormal(sigma=2.0, size=57)
    prob /= prob.sum()
    ap, ai = np.empty(57), np.empty(57, np.int64)
    build_alias(prob, ap, ai, np.empty(57, np.int64), np.empty(57, np.int64))
    recon = ap.copy()
    for j in range(57):
        recon[ai[j]] += 1.0 - ap[j]
    np.testing.assert_allclose(recon / 57, prob, rtol=1e-12, atol=1e-15)
    draws = np.array([alias_draw(u, ap, ai) for u in rng.random(200000)])
    freq = np.bincount(draws, minlength=57) / draws.size
    assert np.abs(freq - prob).max() < 0.01


# --------------------------------------------- lazy == dense (plain Python)
def _dense_reference(X, y, loss, rho, U, weighted, pn, ap, ai, tau, sigma, theta, l1, l2,
                     delta_dual):
    """Algorithm 1 / 2 verbatim with full d-dimensional vectors, same draws."""
    n, d = X.shape
    m = U.shape[1]
    alpha = np.zeros(n)
    x = np.zeros(d)
    x_prev = x.copy()
    u = np.zeros(d)
    for it in range(U.shape[0]):
        if weighted:
            K = [alias_draw(U[it, 0], ap, ai)]
        else:
            K, chosen = [], set()
            for jj in range(n - m, n):
                r = min(int(U[it, jj - (n - m)] * (jj + 1)), jj)
                if r in chosen:
                    r = jj
                chosen.add(r)
                K.append(r)
        xbar = x + theta * (x - x_prev)
        du = np.zeros(d)
        for k in K:
            A = X[k] @ xbar
            s = rho[k] * pn[k] / sigma if weighted else rho[k] / sigma
            sd = s + delta_dual * rho[k]
            new = dual_step(loss.code, loss.param, s * alpha[k] / sd, y[k], A, sd)
            dy = -(new - alpha[k])
            alpha[k] = new
            du += (rho[k] / pn[k] if weighted else rho[k] / m) * dy * X[k]
        z = x - tau * (u + du)
        x_new = np.sign(z) * np.maximum(np.abs(z) - tau * l1, 0) / (1 + tau * l2)
        u += (pn[K[0]] / n if weighted else m / n) * du
        x_prev, x = x, x_new
    return alpha, x, x_prev


@pytest.mark.parametrize("case", ["l2_m1", "l1l2_m1", "l1l2_m3", "weighted_l1l2",
                                  "hinge_delta", "logistic_m2"])
def test_lazy_equals_dense(case):
    X, y = make_classification_data(n=40, d=25, density=0.15, seed=5)
    X = X.tocsr()
    loss = make_loss("logistic" if "logistic" in case else
                     "hinge" if "hinge" in case else "smooth_hinge")
    n, d = X.shape
    m = {"l1l2_m3": 3, "logistic_m2": 2}.get(case, 1)
    weighted = case.startswith("weighted")
    l1 = 0.0 if case in ("l2_m1", "hinge_delta") else 0.02
    l2 = 0.01
    delta_dual = 0.05 if case == "hinge_delta" else 0.0
    rng = np.random.default_rng(11)
    rho = rng.uniform(0.5, 1.5, n)
    rho *= n / rho.sum()
    norms = np.sqrt(np.asarray(X.multiply(X).sum(1)).ravel())
    prob = 1 / (2 * n) + norms / (2 * norms.sum())
    ap, ai = np.empty(n), np.empty(n, np.int64)
    build_alias(prob, ap, ai, np.empty(n, np.int64), np.empty(n, np.int64))
    pn = prob * n if weighted else np.ones(n)
    tau, sigma, theta = 0.3, 0.7, 0.9
    T = 600
    U = rng.random((T, m))
    a_ref, x_ref, _ = _dense_reference(X.toarray(), y, loss, rho, U, weighted, pn, ap, ai,
                                       tau, sigma, theta, l1, l2, delta_dual)
    alpha = np.zeros(n)
    st = np.zeros((d, 4))
    du, mark, batch = np.zeros(d), np.zeros(n, np.int64), np.zeros(m, np.int64)
    # run in two chunks to exercise resumption of the counter
    t = 0
    em1 = np.empty(30)
    expm1_table(30, -math.log1p(tau * l2), em1)
    for chunk in (U[:250], U[250:]):
        status, it, _ = spdc_run(
            RowsView(X.data, X.indices, X.indptr, X.indptr, np.zeros(n), y, np.ones(n)),
            SPDCSpec(loss.code, loss.param, tau, sigma, theta, l1, l2, delta_dual),
            SPDCSampling(weighted, ap, ai, pn if weighted else np.ones(0), rho),
            SPDCState(alpha, st), SPDCWork(du, mark, batch, em1), chunk, t, chunk.shape[0])
        assert status == 0
        t += it
    assert st[:, 3].min() < t - 5        # some coordinates really were lazy
    x_now = np.empty(d)
    c = 1 / (1 + tau * l2)
    catch_up_all(t, st, tau, l1, l2, c, -math.log1p(tau * l2), x_now)
    np.testing.assert_allclose(alpha, a_ref, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(x_now, x_ref, rtol=1e-9, atol=1e-12)
    assert np.any(x_ref == 0.0) == (l1 > 0)


# ------------------------------------------------------------ convergence
def test_linear_convergence_real_data_matches_sdca(a9a_small):
    X, y = a9a_small
    kw = dict(loss="smooth_hinge", loss_params={"gamma": 1.0}, lam=1e-3)
    res = pd.solve(X, y, solver="spdc", tol=1e-10, max_epochs=300, **kw)
    assert res.converged and res.rel_gap <= 1e-10
    gaps = np.array([t["rel_gap"] for t in res.trace])
    # linear rate: log-gap decreases roughly linearly (every 20 passes at least 10x)
    k = np.arange(len(gaps))
    slope = np.polyfit(k[1:], np.log10(np.maximum(gaps[1:], 1e-16)), 1)[0]
    assert slope < -0.05
    ref = pd.solve(X, y, solver="sdca", tol=1e-13, max_epochs=2000, **kw)
    assert abs(res.primal - ref.primal) <= 2e-10 * abs(ref.primal)
    # ||w - w*||^2 <= 2 gap / lam (strong convexity)
    bound = math.sqrt(2 * (res.gap + ref.gap) / 1e-3)
    assert np.linalg.norm(res.coef - ref.coef) <= bound


@pytest.mark.parametrize("loss", ["logistic", "squared"])
def test_other_smooth_losses_and_minibatch(loss):
    if loss == "squared":
        X, y = make_regression_data(n=300, d=20, seed=2)
    else:
        X, y = make_classification_data(n=300, d=20, seed=2)
    ref = pd.solve(X, y, loss=loss, lam=1e-2, solver="sdca", tol=1e-12, max_epochs=500)
    for m in (1, 7):
        res = pd.solve(X, y, loss=loss, lam=1e-2, solver="spdc", tol=1e-9, max_epochs=500,
                       batch_size=m)
        assert res.converged
        assert abs(res.primal - ref.primal) <= 1e-8 * abs(ref.primal)


def test_weighted_sampling_beats_uniform_on_unnormalized_rows():
    X, y = make_classification_data(n=600, d=40, density=0.3, seed=4)
    rng = np.random.default_rng(4)
    scale = np.exp(rng.normal(scale=1.5, size=X.shape[0]))    # row norms over ~2 decades
    X = sp.diags(scale) @ X
    kw = dict(loss="smooth_hinge", lam=1e-1, tol=1e-6, max_epochs=400)
    uni = [pd.solve(X, y, solver="spdc", random_state=s, **kw).n_epochs for s in (0, 1)]
    wei = [pd.solve(X, y, solver="spdc", sampling="weighted", random_state=s, **kw)
           for s in (0, 1)]
    assert all(r.converged for r in wei)
    # measured: uniform ~355 passes, weighted ~52 passes
    assert max(r.n_epochs for r in wei) < 0.3 * min(uni), (uni, [r.n_epochs for r in wei])


def test_elastic_net_matches_sdca():
    X, y = make_classification_data(n=300, d=50, seed=8)
    kw = dict(loss="logistic", lam=1e-2, l1=5e-3)
    a = pd.solve(X, y, solver="spdc", tol=1e-10, max_epochs=600, **kw)
    b = pd.solve(X, y, solver="sdca", tol=1e-12, max_epochs=600, **kw)
    assert a.converged and b.converged
    assert abs(a.primal - b.primal) <= 2e-10 * b.primal
    np.testing.assert_array_equal(np.abs(b.coef) > 1e-6, np.abs(a.coef) > 1e-6)


# ---------------------------------------------------- perturbation (Sec. 3.1)
def test_hinge_with_perturbation_certificate_exact_and_decreasing():
    X, y = make_classification_data(n=300, d=30, seed=6)
    res = pd.solve(X, y, loss="hinge", lam=1e-2, solver="spdc", perturbation=1e-3,
                   tol=1e-3, max_epochs=300)
    prob = pd.Problem(X, y, loss="hinge", lam=1e-2)
    assert res.trace[-1]["rel_gap"] < 1e-3 * res.trace[0]["rel_gap"]
    assert math.isclose(res.primal, prob.primal(res.coef), rel_tol=1e-12)
    assert math.isclose(res.dual, prob.dual(res.dual_coef), rel_tol=1e-12)
    assert res.gap >= 0 and res.converged


def test_pure_l1_perturbation_finite_certificate_vs_lasso():
    from sklearn.linear_model import Lasso
    X, y = make_regression_data(n=200, d=30, seed=3)
    l1 = 0.05
    res = pd.solve(X, y, loss="squared", lam=0.0, l1=l1, solver="spdc", perturbation=1e-4,
                   tol=1e-5, max_epochs=1500, check_every=10)
    assert np.isfinite(res.dual) and res.gap >= 0
    prob = pd.Problem(X, y, loss="squared", lam=0.0, l1=l1)
    assert np.isfinite(prob.dual(res.dual_coef))
    assert np.abs(prob.dual_image(res.dual_coef)).max() <= l1 * (1 + 1e-12)
    sk = Lasso(alpha=l1, fit_intercept=False, tol=1e-12, max_iter=100000).fit(X.toarray(), y)
    p_sk = prob.primal(sk.coef_)
    assert res.primal - p_sk <= 1e-4 * p_sk           # delta-accurate solution
    assert prob.dual(res.dual_coef) <= p_sk + 1e-12   # weak duality, exact


def test_auto_perturbation_from_target_accuracy():
    X, y = make_classification_data(n=100, d=10, seed=1)
    s = pd.SOLVERS["spdc"](pd.Problem(X, y, loss="hinge", lam=1e-2), tol=1e-3,
                           max_epochs=1, random_state=0, target_accuracy=1e-3)
    assert math.isclose(s.delta, 1e-3)          # eps / G_phi^2 with G_phi = 1
    s = pd.SOLVERS["spdc"](pd.Problem(X, y, loss="logistic", lam=1e-2), tol=1e-3,
                           max_epochs=1, random_state=0)
    assert s.delta == 0.0


# ------------------------------------------------------------- resume, errors
def test_resume_equals_uninterrupted():
    X, y = make_classification_data(n=200, d=30, seed=9)
    kw = dict(loss="smooth_hinge", lam=1e-3, l1=1e-3, solver="spdc", tol=0.0,
              random_state=3, batch_size=2)
    full = pd.solve(X, y, max_epochs=6, **kw)
    part = pd.solve(X, y, max_epochs=3, **kw)
    rest = pd.solve(X, y, max_epochs=6, resume=part.state, **kw)
    np.testing.assert_array_equal(full.coef, rest.coef)
    np.testing.assert_array_equal(full.dual_coef, rest.dual_coef)


def test_clear_errors():
    X, y = make_classification_data(n=50, d=5)
    with pytest.raises(ValueError, match="batch_size=1"):
        pd.solve(X, y, loss="logistic", solver="spdc", sampling="weighted", batch_size=2)
    with pytest.raises(ValueError, match="perturbation=0"):
        pd.solve(X, y, loss="hinge", solver="spdc", perturbation=0.0)
    with pytest.raises(ValueError, match="nothing to perturb"):
        pd.solve(X, y, loss="logistic", solver="spdc", perturbation=0.1)
    with pytest.raises(ValueError, match="unknown option"):
        pd.solve(X, y, loss="logistic", solver="spdc", step=1.0)
    with pytest.raises(ValueError, match="lam must be > 0"):
        pd.solve(X, y, loss="logistic", solver="sdca", lam=0.0, l1=0.1)
    with pytest.raises(ValueError, match="batch_size"):
        pd.solve(X, y, loss="logistic", solver="spdc", batch_size=0)
