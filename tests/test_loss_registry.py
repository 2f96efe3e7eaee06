"""A loss defined here, outside the package, runs through the whole stack.

The toy loss is the Huber loss of the residual with threshold ``delta``::

    phi(a; y) = r^2 / 2 for |r| <= delta, delta (|r| - delta/2) otherwise,  r = a - y
    -phi*(-alpha; y) = alpha y - alpha^2 / 2 on |alpha| <= delta

It is not in :data:`primaldual.losses.registry.BUILTIN_NAMES`: :class:`Loss` takes the
module, the kernels are compiled for it, and SDCA, Newton and the certificate
(``Problem``'s primal, dual and gap, Fenchel-Young) are checked against
independent references (a brute-force 1-D maximization, scipy's L-BFGS on the
primal).
"""
from __future__ import annotations

import math
import types

import numpy as np
import pytest
import scipy.sparse as sp
from numba import njit
from scipy.optimize import minimize, minimize_scalar

import primaldual
from primaldual import Problem
from primaldual.losses import Loss, make_loss
from primaldual.losses.registry import ATTRIBUTES, CODES, NAMES
from primaldual.losses.dispatch import BUILTIN, OPS

scalar = njit(nogil=True)


def _toy_module():
    m = types.ModuleType("toy_huber")
    m.NAME = "toy_huber"
    m.PARAM = ("delta", 1.0, False)
    m.CLASSIFICATION = False
    m.BOX_DUAL = True
    m.BOX_QP_DUAL = False
    m.QUADRATIC_DUAL = True
    m.STEP_CACHE = False
    m.smoothness = lambda p: 1.0
    m.lipschitz = lambda p: p

    @scalar
    def value(p, a, y):
        r = abs(a - y)
        return 0.5 * r * r if r <= p else p * (r - 0.5 * p)

    @scalar
    def derivative(p, a, y):
        r = a - y
        return min(max(r, -p), p)

    @scalar
    def second_derivative(p, a, y):
        return 1.0 if abs(a - y) < p else 0.0

    @scalar
    def box(p):
        return -p, p, False

    @scalar
    def interior(p):
        return -p, p

    @scalar
    def neg_conjugate(p, alpha, y):
        return alpha * y - 0.5 * alpha * alpha

    @scalar
    def neg_conjugate_grad(p, alpha, y):
        return y - alpha

    @scalar
    def dual_step(p, alpha, y, a, s):
        b = (y - a + s * alpha) / (1.0 + s)
        return min(max(b, -p), p)

    @scalar
    def dual_slopes(p, alpha, y, a):
        g = y - alpha - a
        gp = -math.inf if alpha >= p else g
        gm = math.inf if alpha <= -p else g
        return gp, gm

    @scalar
    def line_terms(p, alpha, y, d, c):
        return c * (y - alpha) * d, c * d * d

    for f in (value, derivative, second_derivative, box, interior, neg_conjugate,
              neg_conjugate_grad, dual_step, dual_slopes, line_terms):
        setattr(m, f.py_func.__name__, f)
    return m


TOY = _toy_module()
DELTA = 0.3


def _data(n=300, d=25, seed=0):
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=0.3, random_state=seed, format="csr")
    w = rng.standard_normal(d)
    y = X @ w + 0.5 * rng.standard_t(2, size=n)        # heavy tails: some |r| > delta
    return X, y


def _primal_optimum(X, y, lam):
    Xd = X.toarray()

    def f(w):
        r = Xd @ w - y
        a = np.abs(r)
        val = np.where(a <= DELTA, 0.5 * r * r, DELTA * (a - 0.5 * DELTA))
        g = np.clip(r, -DELTA, DELTA)
        return val.mean() + 0.5 * lam * w @ w, Xd.T @ g / len(y) + lam * w

    res = minimize(f, np.zeros(X.shape[1]), jac=True, method="L-BFGS-B",
                   options={"gtol": 1e-12, "ftol": 1e-15, "maxiter": 10000})
    return res.x, res.fun


def test_every_registered_module_meets_the_contract():
    assert NAMES == primaldual.losses.LOSS_NAMES
    for k, m in enumerate(BUILTIN):
        assert CODES[m.NAME] == k
        for a in ATTRIBUTES + tuple(OPS):
            name = "neg_conjugate" if a == "neg_conjugate_inside" else a
            assert hasattr(m, name) or (name == "cached_dual_step" and not m.STEP_CACHE), \
                (m.NAME, name)
        assert make_loss(m.NAME).builtin and make_loss(m.NAME).module is m


def test_toy_loss_is_a_loss_outside_the_registry():
    loss = Loss(TOY, DELTA)
    assert not loss.builtin and loss.code == -1 and loss.name == "toy_huber"
    assert loss.params == {"delta": DELTA} and loss.smooth and loss.lipschitz == DELTA
    assert loss == Loss(TOY, DELTA) and loss != Loss(TOY, 2 * DELTA)
    lo, hi = loss.dual_bounds(np.array([1.0, -2.0]))
    np.testing.assert_array_equal(lo, [-DELTA, -DELTA])
    np.testing.assert_array_equal(hi, [DELTA, DELTA])


def test_toy_fenchel_young_and_domain():
    loss = Loss(TOY, DELTA)
    rng = np.random.default_rng(1)
    a, y = rng.normal(size=200) * 2, rng.normal(size=200)
    alpha = -loss.derivative(a, y)
    assert loss.in_dual_domain(alpha, y).all()
    # equality at alpha = -phi'(a): phi(a) - (-phi*(-alpha)) = -alpha a
    np.testing.assert_allclose(loss.value(a, y) - loss.neg_conjugate(alpha, y), -alpha * a,
                               rtol=0, atol=1e-12)
    other = rng.uniform(-DELTA, DELTA, 200)
    assert (loss.value(a, y) - loss.neg_conjugate(other, y) >= -other * a - 1e-12).all()
    assert np.isneginf(loss.neg_conjugate(np.array([2 * DELTA]), np.array([0.0]))).all()
    assert not loss.in_dual_domain(np.array([-1.01 * DELTA]), np.array([0.0]))[0]


@pytest.mark.parametrize("s", [0.0, 0.3, 5.0])
def test_toy_dual_step_is_the_brute_force_maximizer(s):
    loss = Loss(TOY, DELTA)
    rng = np.random.default_rng(2)
    for _ in range(20):
        alpha, y, a = rng.uniform(-DELTA, DELTA), rng.normal(), rng.normal()
        got = loss.sdca_dual_step_s(alpha, y, a, s)[0]

        def neg(b):
            return -(b * y - 0.5 * b * b - a * (b - alpha) - 0.5 * s * (b - alpha) ** 2)
        ref = minimize_scalar(neg, bounds=(-DELTA, DELTA), method="bounded",
                              options={"xatol": 1e-12}).x
        assert abs(got - ref) < 1e-6


@pytest.mark.parametrize("solver,options", [("sdca", {}), ("sdca", {"shrinking": True}),
                                            ("newton", {})])
def test_toy_loss_solves_to_the_reference_optimum(solver, options):
    X, y = _data()
    lam = 1e-2
    w_ref, p_ref = _primal_optimum(X, y, lam)
    loss = Loss(TOY, DELTA)
    res = primaldual.solve(X, y, loss=loss, lam=lam, solver=solver, tol=1e-10,
                           max_epochs=500, random_state=0, **options)
    assert res.converged and res.solver == solver
    prob = Problem(X, y, loss=loss, lam=lam)
    # the certificate is exact for what is returned
    assert abs(prob.primal(res.coef) - res.primal) <= 1e-12 * max(1.0, abs(res.primal))
    assert abs(prob.dual(res.dual_coef) - res.dual) <= 1e-12 * max(1.0, abs(res.dual))
    assert 0.0 <= prob.gap(res.coef, res.dual_coef) <= 1e-9 * abs(res.primal)
    assert loss.in_dual_domain(res.dual_coef, y).all()
    assert abs(res.primal - p_ref) <= 1e-8 * abs(p_ref)
    np.testing.assert_allclose(res.coef, w_ref, atol=1e-4)


def test_solvers_without_external_losses_refuse_the_toy_loss():
    X, y = _data(n=50)
    with pytest.raises(ValueError, match="registered losses"):
        primaldual.solve(X, y, loss=Loss(TOY, DELTA), lam=1e-2, solver="cocoa")
