"""Elastic net: the exact Prox-SDCA coordinate step, and optima against
scikit-learn / scipy references."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import minimize, minimize_scalar

import primaldual as pd
from primaldual.kernels.sdca.prox import prox_dual_step
from primaldual.kernels.views import ProxWork, RowsView, StepSpec
from primaldual.losses import make_loss
from conftest import load_binary, make_classification_data, make_regression_data

LOSSES = [("hinge", None), ("smooth_hinge", {"gamma": 0.7}), ("squared_hinge", None),
          ("logistic", None), ("squared", None), ("absolute", None),
          ("epsilon_insensitive", {"epsilon": 0.1})]


def _gstar(v, l1, lam):
    r = np.maximum(np.abs(v) - l1, 0.0)
    return float(r @ r) / (2 * lam)


@pytest.mark.parametrize("name,params", LOSSES)
def test_prox_step_matches_bruteforce(name, params):
    """The breakpoint walk maximizes -phi*(-(a+d)) - (W/c) g*(v + (c/W) d x) exactly."""
    loss = make_loss(name, params)
    rng = np.random.default_rng(7)
    nnz = 9
    work = ProxWork(np.empty(2 * nnz), np.empty(2 * nnz), np.empty(2 * nnz),
                    np.empty(2 * nnz, dtype=np.int64))
    indptr = np.array([0, nnz], dtype=np.int64)
    for trial in range(40):
        x = rng.normal(size=nnz) * rng.choice([0.1, 1.0, 5.0])
        if trial % 5 == 0:
            x[0] = 0.0                                  # explicit zero entry
        idx = np.arange(nnz, dtype=np.int64)
        v = rng.normal(scale=0.3, size=nnz)
        l1 = rng.uniform(0.01, 0.4)
        lam = 10 ** rng.uniform(-3, 0)
        kappa = rng.uniform(0.001, 0.5)
        y = rng.choice([-1.0, 1.0]) if loss.classification else rng.normal()
        lo, hi = loss.dual_domain(y)
        alpha = rng.uniform(max(lo, -3), min(hi, 3))
        # one row x (CSR-shaped, iptr = indptr) with label y and weight c = kappa, W = 1
        row = RowsView(x, idx, indptr, indptr, np.array([x @ x]), np.array([y]),
                       np.array([kappa]))
        got = prox_dual_step(row, StepSpec(loss.code, loss.param, lam, l1, 1.0), 0, alpha,
                             v, work)

        def H(beta):
            nc = loss.neg_conjugate(beta, y)[0]
            return nc - _gstar(v + kappa * (beta - alpha) * x, l1, lam) / kappa

        span = 50.0
        res = minimize_scalar(lambda b: -H(b), method="bounded",
                              bounds=(max(lo, alpha - span), min(hi, alpha + span)),
                              options={"xatol": 1e-13, "maxiter": 5000})
        assert loss.in_dual_domain(got, y)[0]
        # objective at our point is at least the brute-force optimum (to 1e-9)
        assert H(got) >= H(res.x) - 1e-9 * max(1.0, abs(H(res.x)))
        if loss.smooth:   # strictly concave: maximizers agree
            assert abs(got - res.x) <= 1e-6 * max(1.0, abs(got))


def test_sdca_elastic_net_matches_sklearn_elasticnet():
    from sklearn.linear_model import ElasticNet
    X, y = make_regression_data(n=300, d=40, seed=1)
    a, r = 0.05, 0.5
    # sklearn: 1/(2n)||y - Xw||^2 + a r ||w||_1 + a (1-r)/2 ||w||^2  ==  our squared loss
    res = pd.solve(X, y, loss="squared", lam=a * (1 - r), l1=a * r, solver="sdca",
                   tol=1e-13, max_epochs=2000)
    assert res.converged
    sk = ElasticNet(alpha=a, l1_ratio=r, fit_intercept=False, tol=1e-14,
                    max_iter=100000).fit(X.toarray(), y)
    np.testing.assert_allclose(res.coef, sk.coef_, atol=2e-6)
    np.testing.assert_array_equal(res.coef == 0.0, sk.coef_ == 0.0)
    prob = pd.Problem(X, y, loss="squared", lam=a * (1 - r), l1=a * r)
    assert abs(prob.primal(sk.coef_) - res.primal) <= 1e-11 * res.primal


def _scipy_elastic_net(X, y, loss, lam, l1):
    """Reference optimum: w = p - q, p, q >= 0, smooth objective, L-BFGS-B to 1e-15."""
    X = sp.csr_matrix(X)
    n, d = X.shape
    prob = pd.Problem(X, y, loss=loss, lam=lam)

    def fg(z):
        w = z[:d] - z[d:]
        a = X @ w
        f = prob.loss.value(a, y).mean() + 0.5 * lam * w @ w + l1 * z.sum()
        g = X.T @ prob.loss.derivative(a, y) / n + lam * w
        return f, np.concatenate([g + l1, -g + l1])
    res = minimize(fg, np.zeros(2 * d), jac=True, method="L-BFGS-B",
                   bounds=[(0, None)] * (2 * d),
                   options={"ftol": 1e-16, "gtol": 1e-12, "maxiter": 20000, "maxcor": 30})
    return res.x[:d] - res.x[d:], res.fun


@pytest.mark.parametrize("loss", ["logistic", "smooth_hinge"])
def test_sdca_spdc_afg_elastic_net_match_scipy(loss, a9a_small):
    X, y = a9a_small
    X, y = X[:600], y[:600]
    lam, l1 = 1e-3, 2e-3
    w_ref, f_ref = _scipy_elastic_net(X, y, loss, lam, l1)
    for solver, extra in (("sdca", {}), ("spdc", {}), ("afg", {})):
        res = pd.solve(X, y, loss=loss, lam=lam, l1=l1, solver=solver, tol=1e-10,
                       max_epochs=3000, check_every=5, **extra)
        assert res.converged, (solver, res.rel_gap)
        # scipy's point obeys weak duality against our certificate, and the two optima
        # agree to the certified gap (1e-10) and scipy's own precision
        assert res.dual <= f_ref + 1e-13
        assert abs(res.primal - f_ref) <= 1e-9 * f_ref
        np.testing.assert_allclose(res.coef, w_ref, atol=1e-4)


def test_sgdclassifier_elasticnet_scaling_agrees():
    """SGDClassifier(penalty='elasticnet') minimizes the same objective (log loss,
    alpha (1-r)/2 ||w||^2 + alpha r ||w||_1) but only approximately; its objective
    value must not beat our certified optimum, and it must come close."""
    from sklearn.linear_model import SGDClassifier
    X, y = make_classification_data(n=400, d=20, density=0.5, seed=3)
    a, r = 1e-2, 0.3
    res = pd.solve(X, y, loss="logistic", lam=a * (1 - r), l1=a * r, solver="sdca",
                   tol=1e-12, max_epochs=1000)
    sgd = SGDClassifier(loss="log_loss", penalty="elasticnet", alpha=a, l1_ratio=r,
                        fit_intercept=False, max_iter=3000, tol=None, random_state=0,
                        learning_rate="optimal").fit(X, y)
    prob = pd.Problem(X, y, loss="logistic", lam=a * (1 - r), l1=a * r)
    p_sgd = prob.primal(sgd.coef_.ravel())
    assert p_sgd >= res.dual - 1e-12                  # weak duality, exact
    assert p_sgd - res.primal <= 1e-6 * res.primal    # measured: 1.3e-7
    np.testing.assert_allclose(sgd.coef_.ravel(), res.coef, atol=5e-3)


def test_elastic_net_resume_and_output_options():
    X, y = make_classification_data(n=200, d=30, seed=4)
    kw = dict(loss="smooth_hinge", lam=1e-2, l1=1e-2, solver="sdca", tol=0.0,
              random_state=1, check_every=1)   # shrinking: checks at the same epochs
    full = pd.solve(X, y, max_epochs=6, **kw)
    part = pd.solve(X, y, max_epochs=3, **kw)
    rest = pd.solve(X, y, max_epochs=6, resume=part.state, **kw)
    np.testing.assert_array_equal(full.coef, rest.coef)
    avg = pd.solve(X, y, max_epochs=20, output="average", **kw)
    prob = pd.Problem(X, y, loss="smooth_hinge", lam=1e-2, l1=1e-2)
    assert np.isclose(avg.dual, prob.dual(avg.dual_coef), rtol=1e-12)
    np.testing.assert_allclose(avg.coef, prob.w_of(avg.dual_coef), rtol=1e-12, atol=1e-15)


def test_elastic_net_errors():
    X, y = make_classification_data(n=50, d=5)
    with pytest.raises(ValueError, match="init='sgd'"):
        pd.solve(X, y, loss="hinge", l1=0.1, solver="sdca", init="sgd")
    with pytest.raises(ValueError, match="l1 > 0"):
        pd.solve(X, y, loss="logistic", l1=0.1, solver="lbfgs")
    with pytest.raises(ValueError, match="does not support l1"):
        pd.solve(X, y, loss="logistic", l1=0.1, solver="sag")
