"""Distributed truncated Newton-CG (issue 23, item 2): on K row partitions in
process and on a LocalCluster (2 worker processes, 1 thread each).

* the partitioned runs reach the serial Newton's optimum (w to 1e-8
  relative, certified gap <= tol) for every loss Newton takes, K = 1, 2, 3,
  and the optimum is checked against scipy's L-BFGS-B on the exact primal;
* Dask equals in process (same partitions) to 1e-12, check by check;
* a worker SIGKILLed mid-fit, and one SIGKILLed inside a Hessian-vector
  product, is recovered and the fit ends where the in-process one does;
* part files read on the workers;
* ``solver="auto"`` with a client or partitions picks newton or cocoa by the
  cost model of :mod:`primaldual.solvers._distributed_auto` (its choice and
  reason asserted, nothing timed).
"""
from __future__ import annotations


import numpy as np
import pytest
import scipy.optimize

from conftest import (assert_same_run, make_classification_data, make_regression_data,
                      worker_dies_at, worker_killer)

import distributed  # noqa: F401  (the Dask extra; the fixtures need it)

from primaldual import Problem, solve  # noqa: E402
from primaldual.distributed import PartitionedProblem  # noqa: E402
from primaldual.solvers import SOLVERS, conditioning_ratio, resolve_distributed_solver  # noqa: E402
from primaldual.solvers import _distributed_auto as dauto  # noqa: E402

LOSSES = ["logistic", "squared", "squared_hinge", "smooth_hinge"]


def _data(loss, dense=False):
    if loss == "squared":
        return make_regression_data(n=150, d=25, seed=5, dense=dense)
    return make_classification_data(n=150, d=25, density=0.3, seed=5, dense=dense)


def _scipy_optimum(X, y, loss, lam):
    """min_w P(w) by L-BFGS-B on the exact primal and its gradient (an
    independent reference)."""
    prob = Problem(X, y, loss=loss, lam=lam)

    def fg(w):
        a = prob.rows.matvec(w)
        f = np.mean(prob.loss.value(a, y)) + 0.5 * lam * w @ w
        g = prob.rows.rmatvec(prob.loss.derivative(a, y)) / prob.n + lam * w
        return f, g
    r = scipy.optimize.minimize(fg, np.zeros(X.shape[1]), jac=True, method="L-BFGS-B",
                                options={"ftol": 0, "gtol": 1e-13, "maxiter": 20000})
    return r.x


@pytest.mark.parametrize("loss", LOSSES)
@pytest.mark.parametrize("K", [1, 2, 3])
def test_partitions_in_process_reach_the_serial_optimum(loss, K):
    X, y = _data(loss)
    kw = dict(loss=loss, lam=1e-2, solver="newton", tol=1e-12, random_state=0,
              hessian="matvec")
    serial = solve(X, y, **kw)
    part = solve(X, y, n_partitions=K, **kw)
    assert part.converged and part.rel_gap <= 1e-12
    assert part.trace[-1]["partitions"] == K
    assert np.linalg.norm(part.coef - serial.coef) <= 1e-8 * np.linalg.norm(serial.coef)
    # the certificate is exact for what is returned
    prob = Problem(X, y, loss=loss, lam=1e-2)
    assert part.primal == pytest.approx(prob.primal(part.coef), rel=1e-12)
    assert part.dual == pytest.approx(prob.dual(part.dual_coef), rel=1e-12, abs=1e-14)
    ref = _scipy_optimum(X, y, loss, 1e-2)
    assert np.linalg.norm(part.coef - ref) <= 1e-6 * np.linalg.norm(ref)


@pytest.mark.parametrize("opts", [dict(hessian="explicit"),
                                  dict(globalization="trust_region", hessian="matvec"),
                                  dict(hessian="explicit", dense=True)])
def test_partitions_in_process_other_modes(opts):
    opts = dict(opts)
    X, y = _data("logistic", dense=opts.pop("dense", False))
    kw = dict(loss="logistic", lam=1e-3, solver="newton", tol=1e-11, random_state=0, **opts)
    serial = solve(X, y, **kw)
    part = solve(X, y, n_partitions=3, **kw)
    assert part.converged
    assert np.linalg.norm(part.coef - serial.coef) <= 1e-8 * np.linalg.norm(serial.coef)


def test_one_partition_is_the_serial_solver():
    """K = 1 adds one part to zero: the very iterates of the serial run."""
    X, y = _data("squared_hinge")
    kw = dict(loss="squared_hinge", lam=1e-3, solver="newton", tol=1e-10, random_state=0)
    serial = solve(X, y, **kw)
    one = solve(X, y, n_partitions=1, **kw)
    np.testing.assert_array_equal(one.coef, serial.coef)
    assert [r["primal"] for r in one.trace] == [r["primal"] for r in serial.trace]


def test_bad_partition_counts_are_refused():
    X, y = _data("logistic")
    with pytest.raises(ValueError, match="larger than n"):
        solve(X, y, loss="logistic", solver="newton", n_partitions=151)
    with pytest.raises(ValueError, match="n_partitions"):
        solve(X, y, loss="logistic", solver="newton", n_partitions=0)


# --------------------------------------------------------------------- Dask
@pytest.mark.parametrize("loss", LOSSES)
@pytest.mark.parametrize("K", [1, 2, 3])
def test_dask_equals_in_process(client, loss, K):
    X, y = _data(loss)
    kw = dict(loss=loss, lam=1e-2, solver="newton", tol=1e-12, random_state=0,
              n_partitions=K, hessian="matvec")
    local = solve(X, y, **kw)
    dist = solve(X, y, client=client, **kw)
    assert dist.converged and dist.rel_gap <= 1e-12
    assert_same_run(dist, local)
    assert dist.trace[-1]["reductions"] == local.trace[-1]["reductions"]
    assert dist.trace[-1]["recoveries"] == 0


def test_actor_calls_go_straight_to_the_workers_unless_the_client_says_not(cluster, client):
    """The partitions' actors are called straight on their workers (not through
    the scheduler), except from a client made with ``direct_to_workers=False``;
    both routes give the same fit."""
    from primaldual.distributed.partition_set import place_problem
    X, y = _data("logistic")
    prob = Problem(X, y, loss="logistic", lam=1e-2)
    ptr = np.array([0, 75, 150])
    assert [type(a).__name__ for a in place_problem(prob, ptr, client, 60.0).actors] \
        == ["DirectActor"] * 2
    kw = dict(loss="logistic", lam=1e-2, solver="newton", tol=1e-10, n_partitions=2)
    with distributed.Client(cluster, direct_to_workers=False) as routed:
        assert [type(a).__name__ for a in place_problem(prob, ptr, routed, 60.0).actors] \
            == ["Actor"] * 2
        through = solve(X, y, client=routed, **kw)
    straight = solve(X, y, client=client, **kw)
    assert straight.converged
    np.testing.assert_array_equal(straight.coef, through.coef)


def test_dask_explicit_hessian_equals_in_process(client):
    X, y = _data("logistic", dense=True)
    kw = dict(loss="logistic", lam=1e-3, solver="newton", tol=1e-11, random_state=0,
              n_partitions=2, hessian="explicit")
    local = solve(X, y, **kw)
    dist = solve(X, y, client=client, **kw)
    np.testing.assert_allclose(dist.coef, local.coef, rtol=0, atol=1e-12)


def test_killed_worker_mid_fit_is_recovered(own_client):
    client = own_client
    X, y = make_classification_data(n=300, d=200, density=0.1, seed=8)
    kill_one, killed = worker_killer(client, 3, last=True)

    kw = dict(loss="logistic", lam=1e-4, solver="newton", tol=1e-10, random_state=0,
              n_partitions=3, hessian="matvec")
    res = solve(X, y, client=client, callback=kill_one, round_timeout=60, **kw)
    assert killed
    assert res.trace[-1]["recoveries"] >= 1
    assert res.converged and res.rel_gap <= 1e-10
    local = solve(X, y, **kw)
    np.testing.assert_allclose(res.coef, local.coef, rtol=0, atol=1e-12)
    assert [r["primal"] for r in res.trace] == pytest.approx(
        [r["primal"] for r in local.trace], rel=1e-12)


def test_worker_killed_inside_a_cg_step_is_recovered(own_client):
    """The lost worker's partitions are re-created, recompute the current
    and trial points from the client's w, and the CG step is made again:
    every check equals the in-process run's."""
    client = own_client
    X, y = make_classification_data(n=300, d=200, density=0.1, seed=9)
    kw = dict(loss="squared_hinge", lam=1e-4, solver="newton", tol=1e-10,
              random_state=0, n_partitions=2, hessian="matvec")
    addr = sorted(client.scheduler_info()["workers"])[-1]
    client.run(worker_dies_at, "newton", 4, "hess_vec", workers=[addr])
    res = solve(X, y, client=client, round_timeout=60, **kw)
    assert res.trace[-1]["recoveries"] >= 1
    local = solve(X, y, **kw)
    assert [r["epoch"] for r in res.trace] == [r["epoch"] for r in local.trace]
    np.testing.assert_allclose(res.coef, local.coef, rtol=0, atol=1e-12)
    np.testing.assert_allclose(res.dual_coef, local.dual_coef, rtol=0, atol=1e-12)


def test_part_files_on_the_workers(client, tmp_path):
    from sklearn.datasets import dump_svmlight_file, load_svmlight_file
    import scipy.sparse as sp
    X, y = make_classification_data(n=120, d=30, density=0.2, seed=2)
    paths = []
    for k, (a, b) in enumerate([(0, 40), (40, 80), (80, 120)]):
        p = tmp_path / f"part{k}.svm"
        dump_svmlight_file(X[a:b], (y[a:b] > 0).astype(int), str(p), zero_based=False)
        paths.append(str(p))
    pp = PartitionedProblem.from_files(client, paths, loss="logistic", lam=1e-2,
                                       n_features=X.shape[1])
    dist = SOLVERS["newton"](pp, tol=1e-12, max_epochs=None, random_state=0).run()
    Xf = sp.vstack([load_svmlight_file(p, n_features=X.shape[1])[0] for p in paths]).tocsr()
    local = solve(Xf, y, loss="logistic", lam=1e-2, solver="newton", n_partitions=3,
                  tol=1e-12, random_state=0, hessian="explicit")
    assert dist.converged
    # d = 30 <= 300: hessian="auto" forms H explicitly on partitioned input
    assert dist.options["hessian"] == "auto" and dist.trace[-1]["cg_iter"] == 0
    np.testing.assert_allclose(dist.coef, local.coef, rtol=0, atol=1e-12)
    with pytest.raises(ValueError, match="n_partitions=3"):
        SOLVERS["newton"](pp, n_partitions=2, tol=1e-6, max_epochs=None, random_state=0)


# --------------------------------------------------------------------- auto
def _expected(X, y, loss, lam, K, on_cluster):
    """The rule of _distributed_auto written out: Newton when min(r0 / r, cap)
    * s_cocoa / s_newton <= 1."""
    from primaldual.solvers.auto import _newton_limit
    prob = Problem(X, y, loss=loss, lam=lam)
    s_newton, s_cocoa = dauto.speedups(prob, K, on_cluster, loss)
    r = conditioning_ratio(prob)
    slowdown = min(_newton_limit(prob) / r, dauto.NEWTON_SLOWDOWN_MAX)
    return ("newton" if slowdown * s_cocoa / s_newton <= 1 else "cocoa"), slowdown


def test_auto_with_a_client_picks_newton_for_a_smooth_loss(client):
    rng = np.random.default_rng(0)
    X = rng.standard_normal((400, 20))
    y = np.sign(X[:, 0] + 0.5 * rng.standard_normal(400))
    pick, slowdown = _expected(X, y, "logistic", 1e-5, 2, True)
    assert pick == "newton"
    res = solve(X, y, loss="logistic", lam=1e-5, solver="auto", client=client, tol=1e-8)
    assert res.solver == "newton" and res.converged
    assert res.options["n_partitions"] == 2          # one partition per worker
    assert f"{slowdown:.3g}" in res.extras["solver_reason"]
    assert "on a cluster" in res.extras["solver_reason"]


def test_auto_with_a_client_picks_cocoa_for_hinge(client):
    X, y = make_classification_data(n=300, d=30, density=0.2, seed=4)
    res = solve(X, y, loss="hinge", lam=1e-2, solver="auto", client=client, tol=1e-4)
    assert res.solver == "cocoa"
    assert "smooth loss" in res.extras["solver_reason"]


def test_auto_rule_arithmetic():
    """The choice follows the predicted times: CoCoA+ when serial Newton is
    modelled slower than CoCoA+'s epoch growth makes it (few partitions in
    process, a well-conditioned problem), Newton otherwise."""
    X, y = make_classification_data(n=2000, d=50, density=0.1, seed=4)
    prob = Problem(X, y, loss="logistic", lam=1e-1)
    r = conditioning_ratio(prob)
    assert dauto.newton_slowdown(r, 30.0) == dauto.NEWTON_SLOWDOWN_MAX
    assert dauto.newton_slowdown(float("inf"), 30.0) == 0.0
    assert dauto.newton_slowdown(1e4, 30.0) == pytest.approx(30.0 / 1e4)
    # in process the partitions run one after another: Newton's speed-up is 1,
    # CoCoA+'s 1 / F(K); Newton when min(r0 / r, cap) <= F(K)
    s_newton, s_cocoa = dauto.speedups(prob, 3, False, "logistic")
    assert s_newton == 1.0
    assert s_cocoa == pytest.approx(1.0 / dauto.cocoa_epoch_factor(3))
    old = dauto.COCOA_EPOCH_FACTOR_K2
    try:
        dauto.COCOA_EPOCH_FACTOR_K2 = 2.0          # F(2) = 2 < the cap: CoCoA+
        assert dauto.distributed_choice(prob, r, 30.0, 2, False)[0] == "cocoa"
        assert dauto.distributed_choice(prob, 1e3, 30.0, 2, False)[0] == "newton"
    finally:
        dauto.COCOA_EPOCH_FACTOR_K2 = old
    assert dauto.distributed_choice(prob, r, 30.0, 2, False)[0] == "newton"


def test_auto_on_partitions_in_process_and_by_loss():
    X, y = _data("logistic")
    # a loss without a Hessian: CoCoA+, whatever the conditioning
    name, reason = resolve_distributed_solver(Problem(X, y, loss="hinge", lam=1e-6),
                                              {"n_partitions": 2})
    assert name == "cocoa" and "smooth loss" in reason
    prob = Problem(X, y, loss="logistic", lam=1e-4)
    res = solve(X, y, loss="logistic", lam=1e-4, solver="auto", n_partitions=3, tol=1e-8)
    pick, _ = _expected(X, y, "logistic", 1e-4, 3, False)
    assert res.solver == pick
    assert "3 partitions in process" in res.extras["solver_reason"]
    # an option only CoCoA+ takes picks CoCoA+
    name, reason = resolve_distributed_solver(prob, {"n_partitions": 3, "local_iters": 10})
    assert name == "cocoa" and "local_iters" in reason


def test_auto_with_a_bad_partition_count_gives_the_solvers_error():
    X, y = _data("logistic")
    with pytest.raises(ValueError, match="n_partitions"):
        solve(X, y, loss="logistic", lam=1e-4, solver="auto", n_partitions=0)


def test_dask_estimator_with_newton(client, tmp_path):
    """primaldual.dask.LinearClassifier(solver="newton"): part files read on the
    workers and in-memory arrays give the same certified model as the local
    estimator."""
    from sklearn.datasets import dump_svmlight_file
    from primaldual import LinearClassifier as Local
    from primaldual.dask import LinearClassifier
    X, y = make_classification_data(n=120, d=30, density=0.2, seed=6)
    paths = []
    for k, (a, b) in enumerate([(0, 60), (60, 120)]):
        p = tmp_path / f"part{k}.svm"
        dump_svmlight_file(X[a:b], (y[a:b] > 0).astype(int), str(p), zero_based=False)
        paths.append(str(p))
    kw = dict(loss="logistic", alpha=1e-2, tol=1e-10, solver="newton", random_state=0)
    files = LinearClassifier(client=client, **kw).fit(paths)
    arrays = LinearClassifier(client=client, **kw).fit(X, y)
    local = Local(**kw).fit(X, y)
    assert np.all(files.converged_) and np.all(arrays.converged_)
    assert files.solver_ == "newton"
    np.testing.assert_allclose(files.coef_, local.coef_, rtol=0, atol=1e-6)
    np.testing.assert_allclose(arrays.coef_, local.coef_, rtol=0, atol=1e-6)


def test_partitioned_run_resumes_exactly(tmp_path):
    """A run on partitions stopped by max_epochs and resumed from its
    checkpoint ends where the uninterrupted run does (the state is w and the
    counters; the partitions recompute their margins at w)."""
    X, y = _data("logistic")
    kw = dict(loss="logistic", lam=1e-3, solver="newton", tol=1e-12, random_state=0,
              n_partitions=3, hessian="matvec", check_every=1)
    full = solve(X, y, **kw)
    part = solve(X, y, max_epochs=6, checkpoint=str(tmp_path / "ck"), **kw)
    assert not part.converged
    resumed = solve(X, y, resume=str(tmp_path / "ck"), **kw)
    np.testing.assert_array_equal(resumed.coef, full.coef)
    assert resumed.n_epochs == full.n_epochs
