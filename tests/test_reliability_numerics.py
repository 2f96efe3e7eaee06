"""Numerical extremes, one test per case, for every registered solver where the
case applies: the run gives a finite certificate (finite P, D, coef, alpha and
``P - D >= -1e-12 max(1, |P|)``) or raises a clear ValueError /
FloatingPointError.

Cases: the logistic conjugate at 0 and at 1 (and just outside), overflow in
``exp`` (margins of 1e150 and more), lam from 1e-12 to 1e3, n*lam very small
and very large, regression labels of 1e10 and 1e150, float32 rows whose
squared norm exceeds the float32 range.
"""
from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.sparse as sp

from conftest import l1_for, make_classification_data, make_regression_data

import primaldual
from primaldual import SOLVERS, solve
from primaldual.losses import LOSS_NAMES, make_loss

CLEAR = (ValueError, FloatingPointError)

OPTS = {"minibatch_sdca": {"batch_size": 2}, "cocoa": {"n_partitions": 2},
        "psgd": {"n_workers": 2}, "simba": {"nu": 0.3}}


def _accepts(name, loss):
    try:
        y = np.resize([1.0, -1.0], 16)
        SOLVERS[name].create(primaldual.Problem(np.eye(16) / 2, y, loss=loss, lam=1.0,
                                                l1=l1_for(name)),
                             tol=0, max_epochs=1, random_state=0, **OPTS.get(name, {}))
    except ValueError:
        return False
    return True


def _unit(X):
    from sklearn.preprocessing import normalize
    return normalize(X)


#: what a clear error about extreme numbers must point the user to
REMEDY_WORDS = ("lam", "scale", "non-finite", "precision", "overflow")


def outcome(name, X, y, loss, lam, max_epochs=10, extreme=True, **kw):
    """Run; return the result, or None after a clear error.

    Only an ``extreme`` case (numbers beyond what double precision can carry
    through a step) may end in an error, and that error must be a ValueError or
    FloatingPointError whose message names the cause or the remedy; an ordinary
    case must return a finite certificate.  A solver that needs ``l1 > 0`` gets
    ``l1 = 1e-2`` (:func:`conftest.l1_for`)."""
    kw.setdefault("l1", l1_for(name))
    if not extreme:
        res = solve(X, y, loss=loss, lam=lam, solver=name, tol=1e-12,
                    max_epochs=max_epochs, random_state=0, **OPTS.get(name, {}), **kw)
        return _check_certificate(res)
    try:
        res = solve(X, y, loss=loss, lam=lam, solver=name, tol=1e-12, max_epochs=max_epochs,
                    random_state=0, **OPTS.get(name, {}), **kw)
    except CLEAR as err:
        msg = str(err).lower()
        assert any(w in msg for w in REMEDY_WORDS), f"unclear error: {err!r}"
        return None
    return _check_certificate(res)


def _check_certificate(res):
    assert math.isfinite(res.primal) and math.isfinite(res.dual), (res.primal, res.dual)
    assert np.isfinite(res.coef).all() and np.isfinite(res.dual_coef).all()
    assert res.gap >= -1e-12 * max(1.0, abs(res.primal)), (res.gap, res.primal)
    return res


def _first_loss(name, classification):
    for lo in LOSS_NAMES:
        if make_loss(lo).classification == classification and _accepts(name, lo):
            return lo
    return None


ALL = sorted(SOLVERS)


# ------------------------------------------------------ logistic conjugate
def test_logistic_conjugate_at_0_and_1():
    loss = make_loss("logistic")
    # -phi*(-alpha) = -[b log b + (1 - b) log(1 - b)], b = alpha y, at b = 0 and b = 1
    for y in (1.0, -1.0):
        vals = loss.neg_conjugate(np.array([0.0, y, 0.5 * y]), np.full(3, y))
        np.testing.assert_array_equal(vals[:2], [0.0, 0.0])
        assert vals[2] == pytest.approx(math.log(2.0), rel=1e-15)
        tiny = loss.neg_conjugate(np.array([1e-300 * y, (1 - 1e-16) * y]), np.full(2, y))
        assert np.isfinite(tiny).all() and (tiny >= 0).all()
        outside = loss.neg_conjugate(np.array([-1e-300 * y, (1 + 1e-15) * y]), np.full(2, y))
        assert (outside == -np.inf).all()
    # Fenchel-Young equality at the boundary: phi(a) + phi*(-alpha) + alpha a = 0 with
    # alpha = -phi'(a); for a -> +inf alpha -> 0, for a -> -inf alpha y -> 1
    for a in (-800.0, -40.0, 0.0, 40.0, 800.0):
        alpha = -loss.derivative(np.array([a]), np.array([1.0]))
        fy = (loss.value(np.array([a]), np.array([1.0]))
              - loss.neg_conjugate(alpha, np.array([1.0])) + alpha * a)
        assert abs(fy[0]) <= 1e-12 * max(1.0, abs(a)), (a, fy)


def test_logistic_dual_step_stays_inside_the_domain_at_extremes():
    loss = make_loss("logistic")
    for a in (-1e300, -1e6, -50.0, 0.0, 50.0, 1e6, 1e300):
        for s in (1e-300, 1e-12, 1.0, 1e12, 1e300):
            for alpha in (0.0, 1e-300, 0.5, 1 - 1e-16, 1.0):
                new = loss.sdca_dual_step_s(alpha, 1.0, a, s)[0]
                assert math.isfinite(new) and 0.0 <= new <= 1.0, (a, s, alpha, new)


# --------------------------------------------------------- overflow in exp
def test_logistic_value_and_derivative_do_not_overflow():
    loss = make_loss("logistic")
    a = np.array([-1e308, -1e150, -800.0, 800.0, 1e150, 1e308])
    y = np.ones_like(a)
    v = loss.value(a, y)
    np.testing.assert_allclose(v[:3], -a[:3], rtol=1e-15)
    assert (v[3:] >= 0).all() and (v[3:] < 1e-300).all()
    d = loss.derivative(a, y)
    np.testing.assert_allclose(d, [-1, -1, -1, 0, 0, 0], atol=1e-300)


@pytest.mark.parametrize("name", ALL)
def test_huge_margins_logistic(name):
    """Rows scaled to 1e150: margins overflow exp() for every solver's first step."""
    if not _accepts(name, "logistic"):
        pytest.skip(f"{name} does not take the logistic loss (documented refusal)")
    X, y = make_classification_data(n=40, d=6, density=0.5, seed=1)
    outcome(name, X.toarray() * 1e150, y, "logistic", 1e-3)


# ------------------------------------------------------------ lam extremes
@pytest.mark.parametrize("lam", [1e-12, 1e-6, 1.0, 1e3])
@pytest.mark.parametrize("name", ALL)
def test_lam_range(name, lam):
    X, y = make_classification_data(n=40, d=6, density=0.5, seed=2)
    loss = _first_loss(name, True)
    res = outcome(name, _unit(X), y, loss, lam, extreme=lam < 1e-6 or lam > 1.0)
    if res is not None and lam >= 1.0 and name in ("sdca", "lbfgs", "afg"):
        # strongly convex enough to converge in 10 passes: a tiny certified gap
        assert res.rel_gap <= 1e-6, res.rel_gap


@pytest.mark.parametrize("name", ALL)
def test_n_lam_very_small(name):
    """n = 3, lam = 1e-12: n*lam = 3e-12 (the SDCA step 1/(lam n) is 3e11)."""
    X = np.array([[1.0, 0.0], [0.0, 1.0], [0.6, 0.8]])
    y = np.array([1.0, -1.0, 1.0])
    outcome(name, X, y, _first_loss(name, True), 1e-12, max_epochs=20)


@pytest.mark.parametrize("name", ALL)
def test_n_lam_very_large(name):
    """n = 4000, lam = 1e3: n*lam = 4e6; w is tiny and the gap must be tiny too."""
    X, y = make_classification_data(n=4000, d=8, density=0.5, seed=3)
    res = outcome(name, _unit(X), y, _first_loss(name, True), 1e3, max_epochs=3,
                  extreme=False)
    if res is not None and name == "sdca":
        # every coordinate is visited once per pass and each step is almost exact
        assert abs(res.gap) <= 1e-6 * max(1.0, abs(res.primal))


# ---------------------------------------------------- huge regression labels
def _label_params():
    out = []
    for name in ALL:
        for scale in (1e10, 1e150):
            marks = []
            out.append(pytest.param(name, scale, marks=marks, id=f"{name}-{scale:g}"))
    return out


@pytest.mark.parametrize("name,scale", _label_params())
def test_huge_regression_labels(name, scale):
    losses = [lo for lo in ("squared", "absolute", "epsilon_insensitive") if _accepts(name, lo)]
    if not losses:
        pytest.skip(f"{name} takes no regression loss (documented refusal)")
    X, y = make_regression_data(n=40, d=5, seed=4)
    for loss in losses:
        outcome(name, _unit(X), y * scale, loss, 1e-2)


# ---------------------------------------------- float32 overflow of ||x||^2
def test_float32_row_norms_are_accumulated_in_float64():
    X = np.full((3, 1), 3e20, dtype=np.float32)
    prob = primaldual.Problem(X, np.array([1.0, -1.0, 1.0]), loss="hinge", lam=1.0)
    assert np.isfinite(prob.rows.sqnorm).all()
    prob = primaldual.Problem(sp.csr_matrix(X), np.array([1.0, -1.0, 1.0]), loss="hinge",
                              lam=1.0)
    assert np.isfinite(prob.rows.sqnorm).all()


@pytest.mark.parametrize("name", ALL)
def test_float32_rows_near_the_float32_limit(name):
    """float32 values of 3e20 (squares beyond float32): certificate or clear error."""
    X = np.array([[3e20, 0.0], [0.0, -3e20], [3e20, 3e20]], dtype=np.float32)
    y = np.array([1.0, -1.0, 1.0])
    outcome(name, X, y, _first_loss(name, True), 1e-2, max_epochs=5)
