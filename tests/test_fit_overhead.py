"""The shortcuts that cut a default fit's fixed cost compute what the general
code computes: the CSR intercept column, the binary-target check, the IPM's
compiled step length and row scaling, and the direct Newton leg's certificate."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

import primaldual
import primaldual.direct_newton as dn
import primaldual.estimators as est_mod
from primaldual.fitdata import add_intercept_column
from primaldual.kernels.ipm import longest_step, scale_rows
from primaldual.problem import Problem


@pytest.mark.parametrize("itype", [np.int32, np.int64])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_the_csr_intercept_column_is_scipys_hstack(itype, dtype):
    X = sp.random(60, 9, density=0.2, format="csr", random_state=0, dtype=dtype)
    X = sp.csr_matrix((X.data, X.indices.astype(itype), X.indptr.astype(itype)),
                      shape=X.shape)
    unsorted = sp.csr_matrix((np.array([1.0, 2.0, 3.0], dtype=dtype), np.array([3, 1, 0]),
                              np.array([0, 2, 2, 3])), shape=(3, 5))   # an empty row too
    for A in (X, unsorted):
        ref = sp.hstack([A, sp.csr_matrix(np.full((A.shape[0], 1), 2.5, dtype=dtype))],
                        format="csr")
        got = add_intercept_column(A, 2.5)
        assert got.shape == ref.shape and got.dtype == ref.dtype
        for a, b in ((got.indptr, ref.indptr), (got.indices, ref.indices),
                     (got.data, ref.data)):
            assert a.dtype == b.dtype and np.array_equal(a, b)


def test_binary_targets_skip_scikit_learns_type_check_and_others_do_not(monkeypatch):
    calls = []
    real = est_mod.check_classification_targets
    monkeypatch.setattr(est_mod, "check_classification_targets",
                        lambda y: (calls.append(1), real(y)))
    for y in (np.array([0, 1, 1, 0]), np.array([-1.0, 1.0, 1.0]), np.array([True, False])):
        assert list(est_mod._checked_classes(y)) == sorted(set(y.tolist()))
    assert calls == []
    for y in (np.array([0, 1, 2]), np.array(["a", "b"]), np.array([0.5, 1.0])):
        if y.dtype.kind == "f":
            with pytest.raises(ValueError, match="Unknown label type: continuous"):
                est_mod._checked_classes(y)
        else:
            est_mod._checked_classes(y)
    assert len(calls) == 3
    X = np.random.default_rng(0).standard_normal((20, 3))
    with pytest.raises(ValueError, match="continuous"):
        primaldual.LinearClassifier().fit(X, np.linspace(0.1, 0.9, 20))


def _numpy_longest_step(pl, ph, s, t, dp, ds, dt):
    def bound(x, dx):
        neg = dx < 0
        return 1.0 if not neg.any() else min(1.0, float(np.min(-x[neg] / dx[neg])))
    return min(bound(pl, dp), bound(ph, -dp), bound(s, ds), bound(t, dt))


def test_the_compiled_ipm_loops_give_numpys_values():
    rng = np.random.default_rng(3)
    for scale in (1e-3, 1.0, 1e3):
        pl, ph, s, t = (rng.random(500) + 1e-3 for _ in range(4))
        dp, ds, dt = (scale * rng.standard_normal(500) for _ in range(3))
        assert longest_step(pl, ph, s, t, dp, ds, dt) == \
            _numpy_longest_step(pl, ph, s, t, dp, ds, dt)
    ones = np.ones(4)
    assert longest_step(ones, ones, ones, ones, 0 * ones, ones, ones) == 1.0
    X = rng.standard_normal((50, 7)).astype(np.float32)
    r = rng.random(50)
    out = np.empty((50, 7))
    scale_rows(X, r, out)
    assert np.array_equal(out, X * r[:, None])


def test_the_direct_leg_returns_the_problems_certificate_of_its_point():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((300, 6))
    y = np.where(X @ rng.standard_normal(6) + 0.5 * rng.standard_normal(300) > 0, 1.0, -1.0)
    p = Problem(X, y, loss="squared_hinge", lam=1e-3)
    seen = []

    def certify(w, margins, alpha):
        cert = p.certificate(w, alpha, margins=margins)
        seen.append((w.copy(), cert.primal, cert.dual))
        return cert.primal, cert.dual

    res = dn.solve_direct(X, y, loss="squared_hinge", lam=1e-3, tol=1e-8, certify=certify)
    assert res.converged and 1 <= len(seen) < res.n_iter + 1
    w, primal, dual = seen[-1]
    assert np.array_equal(res.coef, w) and (res.primal, res.dual) == (primal, dual)
    assert res.trace[-1]["primal"] == primal and res.rel_gap <= 1e-8


def test_a_finite_check_is_skipped_only_for_the_object_the_caller_checked(monkeypatch):
    from primaldual import validation

    scans = []
    real = validation._check_finite
    monkeypatch.setattr(validation, "_check_finite",
                        lambda a, n, *rest: (scans.append(n), real(a, n, *rest)))
    X = np.random.default_rng(0).standard_normal((30, 3))
    y = np.where(X[:, 0] > 0, 1.0, -1.0)
    with validation.finite_checked(X):
        with validation.finite_checked(X):          # nested: still registered after
            Problem(X, y, loss="hinge", lam=0.1)
        Problem(X, y, loss="hinge", lam=0.1)
        bad = X.copy()
        bad[3, 1] = np.nan
        with pytest.raises(ValueError, match="X contains NaN"):
            Problem(bad, y, loss="hinge", lam=0.1)
    assert scans == ["y", "y", "X"] and not validation._FINITE
    Problem(X, y, loss="hinge", lam=0.1)
    assert scans[-2:] == ["X", "y"]
    Xn = X.copy()
    Xn[0, 0] = np.inf
    with pytest.raises(ValueError, match="inf|infinity"):
        primaldual.LinearClassifier().fit(Xn, y)


@pytest.mark.parametrize("K", [1, 2])
def test_the_compiled_ipm_iteration_parts_are_the_numpy_expressions(K):
    from primaldual.kernels.ipm import block_step, kkt_parts, newton_rhs, slack_steps

    rng = np.random.default_rng(K)
    n = 257
    sig, b, qd, p, s, t, rs, rt = (rng.standard_normal((K, n)) for _ in range(8))
    pl, ph = rng.random((K, n)) + 0.01, rng.random((K, n)) + 0.01
    xw, xdw = rng.standard_normal(n), rng.standard_normal(n)
    r, D, E = np.empty((K, n)), np.empty((K, n)), np.empty(n)
    kkt_parts(sig, xw, b, qd, p, s, t, pl, ph, r, D, E)
    assert np.array_equal(r, sig * xw + b + qd * p - s + t)
    assert np.array_equal(D, qd + s / pl + t / ph)
    assert np.array_equal(E, (1.0 / D).sum(0))
    h, rho = np.empty((K, n)), np.empty(n)
    newton_rhs(r, rs, rt, pl, ph, sig, D, h, rho)
    assert np.array_equal(h, -r - rs / pl + rt / ph)
    assert np.array_equal(rho, (sig * h / D).sum(0))
    dp, ds, dt = np.empty((K, n)), np.empty((K, n)), np.empty((K, n))
    block_step(h, sig, xdw, D, dp)
    assert np.array_equal(dp, (h - sig * xdw) / D)
    slack_steps(rs, rt, s, t, dp, pl, ph, ds, dt)
    assert np.array_equal(ds, -(rs + s * dp) / pl)
    assert np.array_equal(dt, -(rt - t * dp) / ph)
