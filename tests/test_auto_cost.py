"""solver="auto"'s cost model decides the order and the hand-over (issue 31,
benchmarks/results/auto-real-cells.md): Newton goes first only when it is
predicted faster than SDCA, and SDCA runs as a cost probe before a costly
interior-point fit, handing over after a bounded share of it when it does not
pay."""
from __future__ import annotations

import numpy as np
import pytest
from sklearn.datasets import load_svmlight_file
from sklearn.preprocessing import StandardScaler

import primaldual
from primaldual import Problem
from primaldual.solvers import resolve_solver, supervisor
from primaldual.solvers.auto import (NEWTON_RATIO_DENSE, SDCA_PROBE_MIN_S, candidates,
                                     conditioning_ratio, epoch_seconds, predicted_seconds)

from conftest import shared_file


def _dense(n, d, seed=0):
    """usps-like dense rows (squared norm about d / 3) with labels from a plane."""
    rng = np.random.default_rng(seed)
    X = rng.random((n, d))
    y = np.where(X @ rng.standard_normal(d) + 0.3 * rng.standard_normal(n) > 0, 1.0, -1.0)
    return X, y


def test_newton_goes_first_only_when_the_cost_model_predicts_it_faster():
    """At lam n = 100 (C = 0.01) the ratio passes the dense threshold while
    SDCA's (1 + r) log(1/tol) epochs cost less than Newton's fit (dna.scale and
    usps: SDCA certified in a fifth of Newton's time): SDCA first, and it
    certifies alone; at lam n = 0.01 (C = 100) Newton."""
    X, y = _dense(1500, 256)
    n = X.shape[0]
    for loss in ("logistic", "squared_hinge"):
        small = Problem(X, y, loss=loss, lam=100.0 / n)
        assert conditioning_ratio(small) >= NEWTON_RATIO_DENSE
        assert predicted_seconds("sdca", small) < predicted_seconds("newton", small)
        assert resolve_solver("auto", small) == "sdca"
        assert candidates(small)[:2] == ["sdca", "newton"]
        large = Problem(X, y, loss=loss, lam=0.01 / n)
        assert resolve_solver("auto", large) == "newton"
        # an explicit Hessian: Newton's 15 passes, no SDCA probe before it
        assert candidates(large)[0] == "newton"
    res = primaldual.solve(X, y, loss="logistic", lam=100.0 / n, random_state=0)
    assert res.converged and [leg["method"] for leg in res.extras["path"]] == ["sdca"]


def _lad(n=15000, d=8, seed=0):
    """A regression with heavy-tailed noise (SDCA is slow on it at C = 100)."""
    rng = np.random.default_rng(seed)
    X = np.hstack([rng.standard_normal((n, d)), np.ones((n, 1))])
    y = X @ rng.standard_normal(d + 1) + rng.standard_t(3, n)
    return X, y


def test_sdca_probes_before_a_costly_interior_point_fit_only():
    """The IPM is the rule's pick for the absolute loss at C = 100; SDCA goes
    first when the IPM's fit is predicted to take at least SDCA_PROBE_MIN_S
    (15,000 rows), not on a small problem (the IPM takes milliseconds)."""
    X, y = _lad()
    big = Problem(X, y, loss="absolute", lam=1.0 / (100 * X.shape[0]))
    assert resolve_solver("auto", big) == "ipm"
    assert predicted_seconds("ipm", big) >= SDCA_PROBE_MIN_S
    assert candidates(big)[:2] == ["sdca", "ipm"]
    small = Problem(X[:300], y[:300], loss="absolute", lam=1.0 / (100 * 300))
    assert predicted_seconds("ipm", small) < SDCA_PROBE_MIN_S
    assert candidates(small)[:2] == ["ipm", "sdca"]


def test_a_cost_probe_that_does_not_pay_hands_over_early_and_keeps_its_pair():
    """SDCA does not reach tol on the heavy-tailed regression at C = 100: the
    probe hands over as slow within a few times its grace (10% of the IPM's
    predicted fit, about 5 epochs), not after the 15% of the budget (150
    epochs) a leg gets otherwise, and the IPM certifies from its point."""
    X, y = _lad()
    prob = Problem(X, y, loss="absolute", lam=1.0 / (100 * X.shape[0]))
    grace = (supervisor.COST_PROBE_SHARE * predicted_seconds("ipm", prob)
             / epoch_seconds("sdca", prob))
    res = primaldual.solve(X, y, loss="absolute", lam=prob.lam, random_state=0)
    path = res.extras["path"]
    assert [leg["method"] for leg in path] == ["sdca", "ipm"], path
    assert path[0]["reason"].startswith("slow") and path[0]["threads"] == 1
    assert path[0]["epochs"] <= 4 * grace + 2
    assert res.converged and path[1]["best_gap"] <= path[0]["best_gap"]


@pytest.mark.realdata
def test_a_cost_probe_that_pays_certifies_alone_on_standardized_cadata():
    """cadata standardized, absolute loss, C = 100: the IPM's 12 iterations took
    4.5 times SDCA's 6 epochs; the probe certifies and the IPM never runs."""
    X, y = load_svmlight_file(str(shared_file("cadata")))
    X = StandardScaler().fit_transform(X.toarray())
    X = np.hstack([X, np.ones((X.shape[0], 1))])
    lam = 1.0 / (100 * X.shape[0])
    assert resolve_solver("auto", Problem(X, y, loss="absolute", lam=lam)) == "ipm"
    res = primaldual.solve(X, y, loss="absolute", lam=lam, random_state=0)
    assert res.converged and [leg["method"] for leg in res.extras["path"]] == ["sdca"]


def test_the_ipm_starts_cold_from_a_far_point_and_warm_from_a_near_one():
    """After a probe that ended far from the optimum (relative gap above
    COLD_FROM["ipm"]) the IPM starts from the caller's warm start (none: cold),
    since a far point costs it iterations; SDCA still gets the best point; and
    near the optimum the IPM is seeded too."""
    from primaldual.solvers._base import SolveResult
    X, y = _dense(200, 6)
    prob = Problem(X, y, loss="hinge", lam=1e-2)
    sup = supervisor._Supervisor(prob, ["sdca", "ipm"], tol=1e-8, max_epochs=1000,
                                 random_state=0, callback=None, eval_set=None,
                                 n_jobs=None, options={})
    zero = {"coef": np.zeros(prob.d), "dual_coef": np.zeros(prob.n), "epoch": 1.0,
            "primal": prob.primal(np.zeros(prob.d)), "dual": 0.0}
    sup.offer(zero)
    assert sup.best_gap() > supervisor.COLD_FROM["ipm"]
    assert sup.seed("ipm") is None
    assert isinstance(sup.seed("sdca"), SolveResult)
    ref = primaldual.solve(X, y, loss="hinge", lam=1e-2, solver="ipm", tol=1e-10)
    sup.offer({"coef": ref.coef, "dual_coef": ref.dual_coef, "epoch": 2.0,
               "primal": ref.primal, "dual": ref.dual})
    seeded = sup.seed("ipm")
    assert isinstance(seeded, SolveResult) and np.allclose(seeded.coef, ref.coef)


def test_sdca_probes_before_newton_on_hessian_vector_products():
    """Text-like rows (d = 8,000: Newton on Hessian-vector products, hundreds
    of passes) at a ratio where SDCA's bound is past its budget: Newton is the
    rule's pick and SDCA probes first (standardized cocoa-small, logistic: SDCA
    certified in 27 epochs where Newton-CG took 75-115 passes)."""
    import scipy.sparse as sp
    from sklearn.preprocessing import normalize
    rng = np.random.default_rng(0)
    X = sp.random(8000, 8000, density=0.005, random_state=1, format="csr")
    X.data[:] = rng.standard_normal(X.nnz)
    X = normalize(X)
    y = np.where(rng.random(8000) < 0.5, 1.0, -1.0)
    prob = Problem(X, y, loss="squared_hinge", lam=1e-6)
    assert resolve_solver("auto", prob) == "newton"
    assert predicted_seconds("newton", prob) >= SDCA_PROBE_MIN_S
    assert candidates(prob)[:2] == ["sdca", "newton"]
