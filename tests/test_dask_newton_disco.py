"""Newton-CG preconditioned by the partitions' local Hessians (``solver="disco"``,
issue 34, item 3): in process over K partitions and on a LocalCluster.

* K = 1, 2, 4 partitions (both preconditioners) certify the optimum that
  scipy's L-BFGS-B finds on the exact primal, and the serial Newton's;
* the preconditioner is a fixed symmetric positive definite map between
  ``H_k^{-1}`` and ``I / lam'`` (checked column by column against a dense
  solve), and with its coarse columns it clusters the spectrum of ``M H``
  near 1 where the sweeps alone leave an outlier;
* preconditioned CG (averaged over 2 partitions) reduces the error as the
  dense eigen-decomposition of ``M H`` predicts (the Chebyshev bound of its
  condition number);
* on text the preconditioned run needs fewer CG steps than plain Newton-CG;
* Dask equals in process (same partitions) to 1e-12, for the PCG and for
  GIANT's averaged local directions (``direction="giant"``).
"""
from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.linalg

from conftest import make_classification_data, make_regression_data

import distributed  # noqa: F401  (the Dask extra; the client fixture needs it)

from primaldual import Problem, solve  # noqa: E402
from primaldual.datasets.regimes import make_shared_vocab_text  # noqa: E402
from primaldual.distributed.newton_block import (NewtonBlock,  # noqa: E402
                                                 contiguous_partitions, weighted_mean)
from test_dask_newton import _scipy_optimum  # noqa: E402


def _data(loss):
    if loss == "squared":
        return make_regression_data(n=150, d=25, seed=5)
    return make_classification_data(n=150, d=25, density=0.3, seed=5)


@pytest.mark.parametrize("loss,K,pre", [("logistic", 1, "average"), ("logistic", 2, "first"),
                                        ("logistic", 4, "average"),
                                        ("squared_hinge", 2, "average"),
                                        ("squared", 4, "first")])
def test_disco_certifies_the_serial_optimum(loss, K, pre):
    X, y = _data(loss)
    lam = 1e-2
    res = solve(X, y, loss=loss, lam=lam, solver="disco", tol=1e-12, n_partitions=K,
                preconditioner=pre, precond_coarse=4)
    assert res.converged and res.rel_gap <= 1e-12
    prob = Problem(X, y, loss=loss, lam=lam)
    assert res.primal == pytest.approx(prob.primal(res.coef), rel=1e-12)
    assert res.dual == pytest.approx(prob.dual(res.dual_coef), rel=1e-12, abs=1e-14)
    ref = _scipy_optimum(X, y, loss, lam)
    assert np.linalg.norm(res.coef - ref) <= 1e-6 * np.linalg.norm(ref)
    newton = solve(X, y, loss=loss, lam=lam, solver="newton", tol=1e-12, hessian="matvec")
    # lam-strong convexity: ||w - w*||^2 <= 2 gap / lam for each certified point
    bound = sum(math.sqrt(2 * max(r.primal - r.dual, 0.0) / lam) for r in (res, newton))
    assert np.linalg.norm(res.coef - newton.coef) <= bound + 1e-12
    tr = res.trace[-1]
    assert tr["partitions"] == K and tr["precond_passes"] > 0


def _block_at_random_point(n=600, d=150, K=1):
    X, y = make_shared_vocab_text(n_samples=n, n_features=d, random_state=0)
    lam = 3.0 / n
    prob = Problem(X, y, loss="logistic", lam=lam)
    b = NewtonBlock(prob.rows, prob.y, prob.sample_weight, contiguous_partitions(n, K),
                    prob.loss.code, prob.loss.param, prob.W, loss=prob.loss)
    w = np.random.default_rng(0).normal(size=d) * 0.3
    b.evaluate(w, 0)
    b.use(0)
    Xd = X.toarray()
    H = Xd.T @ (b.curv[0][:, None] * Xd) / prob.W + lam * np.eye(d)
    return b, H, lam


def _matrix(b, lam_mu, sweeps, coarse, d):
    return np.column_stack([b.precondition(e, lam_mu, sweeps, coarse)[0][1]
                            for e in np.eye(d)])


def test_preconditioner_is_spd_between_the_inverse_and_the_prior():
    b, H, lam = _block_at_random_point()
    d = H.shape[0]
    for coarse in (0, 8):
        M = _matrix(b, lam, 1, coarse, d)
        np.testing.assert_allclose(M, M.T, atol=1e-12 * abs(M).max())
        # H^{-1} <= M <= I / lam in the Loewner order (one partition: H_1 = H)
        assert np.linalg.eigvalsh(M - np.linalg.inv(H)).min() >= -1e-9 * abs(M).max()
        assert np.linalg.eigvalsh(np.eye(d) / lam - M).min() >= -1e-9 / lam
    # more sweeps: closer to the dense inverse
    errs = [np.linalg.norm(_matrix(b, lam, s, 0, d) @ H - np.eye(d), 2) for s in (1, 4)]
    assert errs[1] < errs[0]


def test_coarse_columns_remove_the_shared_direction_outlier():
    b, H, lam = _block_at_random_point()
    d = H.shape[0]
    ev0 = np.linalg.eigvals(_matrix(b, lam, 1, 0, d) @ H).real
    ev8 = np.linalg.eigvals(_matrix(b, lam, 1, 8, d) @ H).real
    assert ev0.min() > 1 - 1e-9 and ev8.min() > 1 - 1e-9
    assert ev0.max() > 5.0            # the sweeps alone: the shared direction
    assert ev8.max() < 1.5            # with the coarse solve: clustered near 1


def test_pcg_residual_follows_the_dense_prediction():
    """PCG with M on H s = -g reduces the M-energy error at least as the
    Chebyshev bound of cond(M H) (from a dense eigen-solve) says."""
    b, H, lam = _block_at_random_point(K=2)
    d = H.shape[0]
    M = np.column_stack([weighted_mean(b.precondition(e, lam, 1, 8)) for e in np.eye(d)])
    ev = np.linalg.eigvals(M @ H).real
    kappa = ev.max() / ev.min()
    g = np.random.default_rng(1).normal(size=d)
    s_star = -np.linalg.solve(H, g)
    # PCG by hand with the block's map (independent of the solver's code)
    s, r = np.zeros(d), -g.copy()
    z = M @ r
    p, rz = z.copy(), r @ z
    e0 = math.sqrt((s - s_star) @ H @ (s - s_star))
    q = (math.sqrt(kappa) - 1) / (math.sqrt(kappa) + 1)
    for k in range(1, 6):
        Hp = H @ p
        a = rz / (p @ Hp)
        s += a * p
        r -= a * Hp
        z = M @ r
        rz, rz_old = r @ z, rz
        p = z + (rz / rz_old) * p
        ek = math.sqrt((s - s_star) @ H @ (s - s_star))
        assert ek <= 2 * q ** k * e0 * (1 + 1e-8) + 1e-14
    # five steps reach the dense solve to 1e-3 (M H's spectrum is tight)
    sol = scipy.linalg.solve(H, -g)
    assert np.linalg.norm(s - sol) <= 1e-3 * np.linalg.norm(sol)


def test_fewer_cg_steps_than_plain_newton():
    X, y = make_shared_vocab_text(n_samples=3000, n_features=1000, random_state=0)
    lam = 3.0 / 3000
    kw = dict(loss="logistic", lam=lam, tol=1e-8)
    newton = solve(X, y, solver="newton", hessian="matvec", cg_tol=0.1, **kw)
    disco = solve(X, y, solver="disco", n_partitions=2, **kw)
    assert disco.converged and newton.converged
    assert disco.trace[-1]["cg_iter"] < newton.trace[-1]["cg_iter"]


@pytest.mark.parametrize("pre", ["average", "first"])
def test_dask_equals_in_process(client, pre):
    X, y = _data("logistic")
    kw = dict(loss="logistic", lam=1e-2, solver="disco", tol=1e-12, n_partitions=2,
              preconditioner=pre, precond_coarse=4)
    local = solve(X, y, **kw)
    dist = solve(X, y, client=client, **kw)
    assert dist.converged and dist.rel_gap <= 1e-12
    np.testing.assert_allclose(dist.coef, local.coef, rtol=0, atol=1e-12)
    assert dist.trace[-1]["reductions"] == local.trace[-1]["reductions"]
    assert dist.n_epochs == local.n_epochs


def test_part_files_worker_zero_preconditions(client, tmp_path):
    """Partitioned input: no rows on the client, so partition 0's worker
    applies DiSCO's preconditioner (one call, not a reduction); the fit equals
    the in-process run over the same partitions."""
    from sklearn.datasets import dump_svmlight_file, load_svmlight_file
    import scipy.sparse as sp
    from primaldual.distributed import PartitionedProblem
    from primaldual.solvers import SOLVERS
    X, y = make_classification_data(n=120, d=30, density=0.2, seed=2)
    paths = []
    for k, (a, b) in enumerate([(0, 60), (60, 120)]):
        p = tmp_path / f"part{k}.svm"
        dump_svmlight_file(X[a:b], (y[a:b] > 0).astype(int), str(p), zero_based=False)
        paths.append(str(p))
    pp = PartitionedProblem.from_files(client, paths, loss="logistic", lam=1e-2,
                                       n_features=X.shape[1])
    dist = SOLVERS["disco"](pp, tol=1e-12, max_epochs=None, precond_coarse=4,
                            random_state=0).run()
    Xf = sp.vstack([load_svmlight_file(p, n_features=X.shape[1])[0] for p in paths]).tocsr()
    local = solve(Xf, y, loss="logistic", lam=1e-2, solver="disco", n_partitions=2,
                  tol=1e-12, precond_coarse=4)
    assert dist.converged
    np.testing.assert_allclose(dist.coef, local.coef, rtol=0, atol=1e-12)
    tr, tl = dist.trace[-1], local.trace[-1]
    assert tr["reductions"] == tl["reductions"]
    # every preconditioner application was one call to worker 0
    assert tr["calls"] > tl["calls"]


@pytest.mark.parametrize("local_solver", ["cg", "sdca"])
def test_giant_on_dask_equals_in_process(client, local_solver):
    """direction="giant" (tests/test_disco_giant.py), its first round included,
    with either local solver."""
    X, y = make_classification_data(n=150, d=25, density=0.3, seed=5)
    kw = dict(loss="logistic", lam=1e-1, solver="disco", direction="giant", tol=1e-12,
              n_partitions=2, precond_coarse=4, random_state=0, local_solver=local_solver)
    local = solve(X, y, **kw)
    dist = solve(X, y, client=client, **kw)
    assert dist.converged and dist.rel_gap <= 1e-12
    np.testing.assert_allclose(dist.coef, local.coef, rtol=0, atol=1e-12)
    assert dist.trace[-1]["reductions"] == local.trace[-1]["reductions"]
    assert dist.n_epochs == local.n_epochs
