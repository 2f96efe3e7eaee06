"""Loss layer: every formula against an independent reference.

- Fenchel-Young: phi(a) + phi*(-alpha) = -alpha a at alpha = -phi'(a), and >= elsewhere;
- the conjugate against a numerical sup_a (u a - phi(a));
- derivatives against central finite differences;
- the closed-form (and Newton) SDCA dual step against brute-force 1-D maximization,
  with ||x||^2 and with a per-coordinate curvature v_i.
"""
import numpy as np
import pytest
from scipy.optimize import minimize_scalar

from primaldual.losses import LOSS_NAMES, make_loss

PARAMS = {"smooth_hinge": [{"gamma": 1.0}, {"gamma": 0.1}, {"gamma": 0.01}],
          "epsilon_insensitive": [{"epsilon": 0.0}, {"epsilon": 0.3}],
          "squared_epsilon_insensitive": [{"epsilon": 0.0}, {"epsilon": 0.3}]}
CASES = [(name, p) for name in LOSS_NAMES for p in PARAMS.get(name, [{}])]
IDS = [f"{n}-{list(p.values())[0] if p else ''}" for n, p in CASES]


def _labels(loss, rng, k):
    if loss.classification:
        return rng.choice([-1.0, 1.0], size=k)
    return rng.normal(scale=2.0, size=k)


def _random_feasible_alpha(loss, y, rng):
    out = np.empty_like(y)
    for i, yi in enumerate(y):
        lo, hi = loss.dual_domain(yi)
        lo = max(lo, -5.0)
        hi = min(hi, 5.0)
        out[i] = rng.uniform(lo, hi)
        if loss.name == "logistic":
            out[i] = yi * rng.uniform(1e-6, 1 - 1e-6)
    return out


def _numeric_conjugate(loss, u, y):
    """phi*(u) = sup_a u a - phi(a) by bounded scalar maximization."""
    f = lambda a: -(u * a - loss.value(a, y)[0])  # noqa: E731
    best = np.inf
    for lo, hi in ((-60, 60), (-8, 8)):
        r = minimize_scalar(f, bounds=(lo, hi), method="bounded",
                            options={"xatol": 1e-12, "maxiter": 2000})
        best = min(best, r.fun)
    return -best


@pytest.mark.parametrize("name,params", CASES, ids=IDS)
def test_fenchel_young_equality_and_inequality(name, params):
    loss = make_loss(name, params)
    rng = np.random.default_rng(0)
    a = rng.normal(scale=2.0, size=400)
    y = _labels(loss, rng, 400)
    alpha = -loss.derivative(a, y)
    assert loss.in_dual_domain(alpha, y).all()
    # phi(a) + phi*(-alpha) = -alpha a  <=>  phi(a) - negconj(alpha) + alpha a = 0
    fy = loss.value(a, y) - loss.neg_conjugate(alpha, y) + alpha * a
    np.testing.assert_allclose(fy, 0.0, atol=1e-12)
    # inequality at arbitrary feasible points
    alpha2 = _random_feasible_alpha(loss, y, rng)
    fy2 = loss.value(a, y) - loss.neg_conjugate(alpha2, y) + alpha2 * a
    assert (fy2 >= -1e-12).all()


@pytest.mark.parametrize("name,params", CASES, ids=IDS)
def test_conjugate_matches_numerical_sup(name, params):
    loss = make_loss(name, params)
    rng = np.random.default_rng(1)
    y = _labels(loss, rng, 12)
    alpha = _random_feasible_alpha(loss, y, rng)
    if loss.name == "squared_hinge":
        alpha = np.clip(alpha, -3, 3)
    for ai, yi in zip(alpha, y):
        want = _numeric_conjugate(loss, -ai, yi)
        got = -loss.neg_conjugate(ai, yi)[0]
        assert got == pytest.approx(want, abs=1e-7), (ai, yi)


@pytest.mark.parametrize("name,params", CASES, ids=IDS)
def test_outside_domain_is_minus_infinity(name, params):
    loss = make_loss(name, params)
    y = 1.0
    lo, hi = loss.dual_domain(y)
    if np.isfinite(hi):
        assert loss.neg_conjugate(hi + 1e-3, y)[0] == -np.inf
    if np.isfinite(lo):
        assert loss.neg_conjugate(lo - 1e-3, y)[0] == -np.inf


@pytest.mark.parametrize("name,params", CASES, ids=IDS)
def test_derivative_matches_central_differences(name, params):
    loss = make_loss(name, params)
    rng = np.random.default_rng(2)
    a = rng.normal(scale=2.0, size=300)
    y = _labels(loss, rng, 300)
    h = 1e-6
    # stay away from kinks (|1 - ya| for margin losses, |a - y| +- eps for regression)
    if loss.classification:
        kinks = [1.0 - y * a]
        if name == "smooth_hinge":
            kinks.append(1.0 - y * a - params["gamma"])
    else:
        e = params.get("epsilon", 0.0)
        kinks = [a - y - e, a - y + e]
    ok = np.all([np.abs(k) > 1e-3 for k in kinks], axis=0)
    a, y = a[ok], y[ok]
    fd = (loss.value(a + h, y) - loss.value(a - h, y)) / (2 * h)
    np.testing.assert_allclose(loss.derivative(a, y), fd, rtol=1e-6, atol=1e-7)


def _brute_force_step(loss, alpha, y, a, s):
    """argmax over beta in the domain of -phi*(-beta) - a(beta-alpha) - s/2 (beta-alpha)^2.

    Independent of the closed forms: a bounded Brent search on the objective
    value, then (function values alone only locate a maximum to ~sqrt(eps))
    bisection on a central-difference derivative of the same objective.
    """
    lo, hi = loss.dual_domain(y)
    if loss.name == "logistic":
        lo, hi = (1e-15, 1 - 1e-15) if y > 0 else (-1 + 1e-15, -1e-15)
    span = 50.0 + 10.0 * abs(alpha)
    lo = max(lo, alpha - span)
    hi = min(hi, alpha + span)

    def f(b):
        return loss.neg_conjugate(b, y)[0] - a * (b - alpha) - 0.5 * s * (b - alpha) ** 2

    r = minimize_scalar(lambda b: -f(b), bounds=(lo, hi), method="bounded",
                        options={"xatol": 1e-14, "maxiter": 5000})
    cands = [r.x] + [b for b in (lo, hi, 0.0) if lo <= b <= hi]
    x = max(cands, key=f)
    # refine: bisection on the sign of the central-difference slope near x
    # (central differences are exact on the quadratic pieces, so h can be
    # large enough that rounding in f does not matter)
    h = 1e-5
    left, right = max(lo, x - 1e-4), min(hi, x + 1e-4)

    def slope(b):
        hb = h
        if loss.name == "logistic":  # entropy: keep truncation error small near 0, 1
            hb = min(h, 1e-5 * min(abs(b), 1 - abs(b)))
        bl, br = max(lo, b - hb), min(hi, b + hb)
        return (f(br) - f(bl)) / (br - bl)

    if slope(left) > 0 and slope(right) < 0:
        for _ in range(200):
            mid = 0.5 * (left + right)
            if slope(mid) > 0:
                left = mid
            else:
                right = mid
        x = 0.5 * (left + right)
    # a maximum at a kink or bound is found exactly among the candidates
    x = max([x] + cands[1:], key=f)
    return x, f(x)


@pytest.mark.parametrize("name,params", CASES, ids=IDS)
def test_dual_step_equals_brute_force(name, params):
    loss = make_loss(name, params)
    rng = np.random.default_rng(3)
    for _ in range(60):
        y = _labels(loss, rng, 1)[0]
        alpha = _random_feasible_alpha(loss, np.array([y]), rng)[0]
        a = rng.normal(scale=2.0)
        s = 10 ** rng.uniform(-2, 1.5)
        got = loss.sdca_dual_step_s(alpha, y, a, s)[0]
        want, fwant = _brute_force_step(loss, alpha, y, a, s)
        fgot = loss.neg_conjugate(got, y)[0] - a * (got - alpha) - 0.5 * s * (got - alpha) ** 2
        # the maximizer is unique (strictly concave in beta): compare both argmax and value
        assert got == pytest.approx(want, abs=1e-9 * max(1.0, abs(want))), (alpha, y, a, s)
        assert fgot >= fwant - 1e-12


@pytest.mark.parametrize("name,params", CASES, ids=IDS)
def test_dual_step_with_curvature_is_update_2_of_minibatch_sdca(name, params):
    """dual_step(..., curvature=v_i) maximizes with v_i in place of ||x_i||^2."""
    loss = make_loss(name, params)
    rng = np.random.default_rng(4)
    y = _labels(loss, rng, 20)
    alpha = _random_feasible_alpha(loss, y, rng)
    a = rng.normal(size=20)
    sqnorm = rng.uniform(0.1, 2.0, size=20)
    v = sqnorm * rng.uniform(1.0, 5.0, size=20)   # ESO weights are >= ||x_i||^2
    lam_n = 7.0
    got = loss.dual_step(alpha, y, a, sqnorm, lam_n, curvature=v)
    for i in range(20):
        want, _ = _brute_force_step(loss, alpha[i], y[i], a[i], v[i] / lam_n)
        assert got[i] == pytest.approx(want, abs=1e-9 * max(1.0, abs(want)))
    # and without curvature it uses ||x_i||^2
    plain = loss.dual_step(alpha, y, a, sqnorm, lam_n)
    np.testing.assert_allclose(plain, loss.sdca_dual_step_s(alpha, y, a, sqnorm / lam_n))


@pytest.mark.parametrize("name,params", CASES, ids=IDS)
def test_zero_row_step_is_minus_derivative_at_zero(name, params):
    """A row of zeros has s = 0 and a = 0: the maximizer is alpha = -phi'(0)."""
    loss = make_loss(name, params)
    for y in ([-1.0, 1.0] if loss.classification else [-2.0, 0.7, 3.0]):
        got = loss.sdca_dual_step_s(0.0, y, 0.0, 0.0)[0]
        assert got == pytest.approx(-loss.derivative(0.0, y)[0], abs=1e-12)


@pytest.mark.parametrize("a,s", [(1e6, 1e-8), (-1e6, 1e-8), (50.0, 1e8), (-50.0, 1e8),
                                 (0.0, 1e-300), (700.0, 1.0), (-700.0, 1.0)])
@pytest.mark.parametrize("alpha", [1e-300, 0.5, 1 - 1e-16])
def test_logistic_step_never_leaves_open_interval(a, s, alpha):
    loss = make_loss("logistic")
    for y in (-1.0, 1.0):
        b = loss.sdca_dual_step_s(alpha * y, y, a, s)[0] * y
        assert 0.0 < b < 1.0
        assert np.isfinite(loss.neg_conjugate(b * y, y)[0])


def test_logistic_step_converges_to_1e12():
    """The Newton iterate satisfies the optimality condition to ~1e-12."""
    loss = make_loss("logistic")
    rng = np.random.default_rng(5)
    for _ in range(200):
        y = rng.choice([-1.0, 1.0])
        b0 = rng.uniform(0.01, 0.99)
        a = rng.normal(scale=3)
        s = 10 ** rng.uniform(-3, 3)
        b = loss.sdca_dual_step_s(b0 * y, y, a, s)[0] * y
        resid = np.log((1 - b) / b) - a * y - s * (b - b0)
        assert abs(resid) < 1e-9 * max(1.0, s)


def test_capability_flags_and_constants():
    L = {n: make_loss(n) for n in LOSS_NAMES}
    assert not L["hinge"].smooth and L["hinge"].lipschitz == 1.0 and L["hinge"].box_dual
    assert L["smooth_hinge"].smoothness == 1.0
    assert make_loss("smooth_hinge", {"gamma": 0.1}).smoothness == pytest.approx(10.0)
    assert L["squared_hinge"].smoothness == 2.0 and L["squared_hinge"].lipschitz is None
    assert L["logistic"].smoothness == 0.25 and not L["logistic"].box_dual
    assert L["squared"].smoothness == 1.0 and not L["squared"].classification
    assert L["absolute"].lipschitz == 1.0 and not L["absolute"].smooth
    assert L["epsilon_insensitive"].box_dual
    sq = L["squared_epsilon_insensitive"]
    assert sq.smoothness == 2.0 and sq.lipschitz is None and sq.generalized_hessian
    assert sq.box_dual and not sq.quadratic_dual and not sq.classification
    # the dual a quadratic over a box (the interior-point solver's problem)
    assert {n for n, l in L.items() if l.box_qp_dual} == {"hinge", "smooth_hinge", "absolute",
                                                          "epsilon_insensitive"}


@pytest.mark.parametrize("bad", [{"gamma": 0.0}, {"gamma": -1}, {"gamma": "x"},
                                 {"epsilon": 1.0}])
def test_bad_loss_params_are_named(bad):
    with pytest.raises(ValueError, match="loss_params"):
        make_loss("smooth_hinge", bad)


def test_unknown_loss_lists_choices():
    with pytest.raises(ValueError, match="unknown loss 'hingee'.*hinge"):
        make_loss("hingee")
