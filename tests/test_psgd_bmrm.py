"""PSGD (Zinkevich et al. 2010) and BMRM (Teo et al. 2010): optimum, exact
certificates, the master QP against an independent solver, resume."""
from __future__ import annotations

import numpy as np
import pytest

import primaldual
from primaldual.kernels.sgd import SGDOptions, SGDState, sgd_run
from primaldual.kernels.views import StepSpec
from primaldual.problem import Problem
from primaldual.solvers import SOLVERS
from primaldual.solvers.bmrm import solve_simplex_qp

from conftest import load_binary, make_classification_data

BMRM = SOLVERS["bmrm"]
PSGD = SOLVERS["psgd"]


@pytest.fixture(scope="module")
def a9a_2000():
    return load_binary("a9a", n_features=123, max_rows=2000)


# ------------------------------------------------------------------ BMRM
@pytest.mark.parametrize("loss,iters", [("hinge", 400), ("logistic", 250)])
def test_bmrm_matches_sdca_optimum(a9a_2000, loss, iters):
    X, y = a9a_2000
    ref = primaldual.solve(X, y, loss=loss, lam=1e-3, solver="sdca", tol=1e-11,
                           max_epochs=2000)
    prob = Problem(X, y, loss=loss, lam=1e-3)
    res = BMRM(prob, tol=1e-7, max_epochs=iters, random_state=0, check_every=25).run()
    assert res.converged, res.rel_gap
    assert abs(res.primal - ref.primal) / ref.primal <= 1e-6
    # exact certificate for the returned pair
    assert res.primal == pytest.approx(prob.primal(res.coef), rel=1e-12)
    assert res.dual == pytest.approx(prob.dual(res.dual_coef), rel=1e-10)
    assert res.dual <= ref.primal + 1e-12
    last = res.trace[-1]
    assert last["master_fw_gap"] <= 1e-9
    assert res.gap <= last["bmrm_gap"] + 1e-12      # the certificate is at least as tight


def _brute_simplex_qp(H, b):
    """Independent reference: trust-constr from several starts, best value."""
    from scipy.optimize import LinearConstraint, minimize
    t = b.shape[0]
    best = np.inf
    rng = np.random.default_rng(0)
    for _ in range(5):
        x0 = rng.dirichlet(np.ones(t))
        r = minimize(lambda x: 0.5 * x @ H @ x - b @ x, x0, jac=lambda x: H @ x - b,
                     method="trust-constr", bounds=[(0, None)] * t,
                     constraints=[LinearConstraint(np.ones((1, t)), 1, 1)],
                     options={"gtol": 1e-12, "xtol": 1e-14, "maxiter": 5000})
        x = np.clip(r.x, 0, None)
        x /= x.sum()
        best = min(best, 0.5 * x @ H @ x - b @ x)
    return best


@pytest.mark.parametrize("seed,t,rank", [(0, 6, 6), (1, 12, 4), (2, 30, 8)])
def test_master_qp_is_solved_exactly(seed, t, rank):
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((rank, t))          # rank-deficient Gram: dependent planes
    H = A.T @ A
    b = rng.standard_normal(t)
    beta, fw = solve_simplex_qp(H, b)
    assert beta.min() >= 0 and beta.sum() == pytest.approx(1.0, abs=1e-14)
    val = 0.5 * beta @ H @ beta - b @ beta
    g = H @ beta - b
    assert g @ beta - g.min() <= 1e-10 and fw <= 1e-10      # KKT / Frank-Wolfe gap
    assert val <= _brute_simplex_qp(H, b) + 1e-9
    # warm start from a perturbed point gives the same optimum
    beta2, _ = solve_simplex_qp(H, b, beta0=rng.dirichlet(np.ones(t)))
    assert 0.5 * beta2 @ H @ beta2 - b @ beta2 == pytest.approx(val, abs=1e-11)


# ------------------------------------------------------------------ PSGD
def test_psgd_local_models_are_the_sgd_kernel_and_output_is_their_average():
    X, y = make_classification_data(n=90, d=10, density=0.5, seed=2)
    prob = Problem(X, y, loss="logistic", lam=1e-2)
    s = PSGD(prob, tol=0.0, max_epochs=1, random_state=4, n_workers=3,
             sampling="permutation")
    s.init_state(None)
    # replay part 1's first local epoch with the same draws through the kernel
    rng = np.random.Generator(np.random.PCG64())
    rng.bit_generator.state = s.streams[1].bit_generator.state
    order = rng.permutation(s.parts[1])
    u, scale, un = np.zeros(10), np.ones(1), np.zeros(1)
    r = prob.rows
    sgd_run(prob.rows_view(), StepSpec(prob.loss.code, 0.0, prob.lam, 0.0, 1.0),
            SGDOptions(s.grad_w, False), SGDState(u, scale, un), order, 0,
            order.shape[0], 0)
    s.advance(1, None)
    np.testing.assert_allclose(s.U[1] * s.scale[1], u * scale, rtol=1e-13, atol=1e-15)
    # parts are a partition of the rows; the output is the plain average
    assert sorted(np.concatenate(s.parts).tolist()) == list(range(90))
    np.testing.assert_allclose(s.average(), np.mean(s.U * s.scale, axis=0))
    assert s.epochs == pytest.approx(1.0)


def test_psgd_gets_close_to_the_optimum(a9a_2000):
    X, y = a9a_2000
    ref = primaldual.solve(X, y, loss="logistic", lam=1e-2, solver="sdca", tol=1e-11,
                           max_epochs=500)
    prob = Problem(X, y, loss="logistic", lam=1e-2)
    res = PSGD(prob, tol=0.0, max_epochs=30, random_state=0, n_workers=2,
               check_every=10).run()
    assert (res.primal - ref.primal) / ref.primal < 5e-3
    assert res.primal == pytest.approx(prob.primal(res.coef), rel=1e-12)
    assert res.dual == pytest.approx(prob.dual(res.dual_coef), rel=1e-10)


# --------------------------------------------------------- resume, errors
@pytest.mark.parametrize("name,opts", [("psgd", dict(n_workers=3)), ("bmrm", {})])
def test_resume_equals_uninterrupted(name, opts):
    X, y = make_classification_data(n=80, d=15, density=0.3, seed=5)
    prob = Problem(X, y, loss="hinge", lam=1e-2)
    cls = SOLVERS[name]
    full = cls(prob, tol=0.0, max_epochs=8, random_state=3, **opts).run()
    part = cls(prob, tol=0.0, max_epochs=3, random_state=3, **opts).run()
    rest = cls(prob, tol=0.0, max_epochs=8, random_state=3, resume=part.state, **opts).run()
    np.testing.assert_array_equal(full.coef, rest.coef)
    np.testing.assert_array_equal(full.dual_coef, rest.dual_coef)


def test_errors():
    X, y = make_classification_data(n=20, d=5, seed=0)
    prob = Problem(X, y, loss="hinge", lam=1e-2)
    with pytest.raises(ValueError, match="n_workers"):
        PSGD(prob, tol=0, max_epochs=1, random_state=0, n_workers=50)
    with pytest.raises(ValueError, match="unknown option"):
        BMRM(prob, tol=0, max_epochs=1, random_state=0, planes=3)
    with pytest.raises(ValueError, match="l1"):
        BMRM(Problem(X, y, loss="hinge", lam=1e-2, l1=0.1), tol=0, max_epochs=1,
             random_state=0)
