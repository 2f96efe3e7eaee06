"""DSO (Matsushima et al.): block kernel vs a plain-Python reference, the block
layout and schedule, the closed-form saddle gap, convergence to the SDCA
optimum, pure L1 against LIBLINEAR, resume, errors."""
from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.sparse as sp

import primaldual
from primaldual.datasets import make_synthetic
from primaldual.losses.registry import CODES
from primaldual.solvers.dso.kernels import (PA_STRIDE, PW_STRIDE, STEP_ADAGRAD, STEP_SCALAR, ColSide,
                                    DSOSpec, Nonzeros, RowSide, dso_block_kernel, pack_block,
                                    packed_kernel, unpack_block)
from primaldual.problem import Problem
from primaldual.solvers import SOLVERS
from primaldual.solvers.dso import (adagrad_a_scale, adagrad_col_factor, adagrad_w_scale,
                                    box_radius, build_layout, dual_bounds, saddle_gap, sigma,
                                    spdc_primal_weight)

from conftest import load_binary, make_classification_data

DSO = SOLVERS["dso"]


def run_dso(X, y, loss="hinge", lam=1e-3, l1=0.0, max_epochs=10, **opts):
    prob = Problem(X, y, loss=loss, lam=lam, l1=l1)
    return DSO(prob, tol=opts.pop("tol", 0.0), max_epochs=max_epochs,
               random_state=opts.pop("random_state", 0), **opts).run()


# ------------------------------------------------- plain-Python reference
def _ref_hgrad(kind, a, y):
    if kind == CODES["hinge"]:
        return y
    b = a * y
    return y * (math.log1p(-b) - math.log(b))


def _ref_rgrad(lam, l1, w):
    return lam * w + (l1 if w > 0 else (-l1 if w < 0 else 0.0))


def ref_block(rows, cols, vals, perm, alpha, a_lo, a_hi, y, cw, rc, w, cc, R, kind, lam,
              l1, prox, mode, eta, eta0, Ga, Gw, svrg, a_snap, w_snap, Fa, Fw, a_scale=1.0,
              extrap=0.0, w_len=None):
    """Update (8) written out in plain Python, one nonzero at a time: the w step,
    then the alpha step with its coupling at ``w_j + extrap (new w_j - w_j)``
    (0: the current pair, as printed in the paper; 1: the new ``w_j``)."""
    for e in perm:
        i, j, x = int(rows[e]), int(cols[e]), float(vals[e])
        wj, ai = w[j], alpha[i]
        l1g = 0.0 if prox else l1
        gw = _ref_rgrad(lam, l1g, wj) / cc[j] - cw[i] * ai * x
        if svrg:
            gw -= _ref_rgrad(lam, l1g, w_snap[j]) / cc[j] - cw[i] * a_snap[i] * x
            gw += Fw[j] / cc[j]
        if mode == STEP_ADAGRAD:
            Gw[j] += gw * gw
            ew = eta0 * (1.0 if w_len is None else w_len[j]) / math.sqrt(Gw[j])
        else:
            ew = eta
        nw = wj - ew * gw
        if prox:
            thr = ew * l1 / cc[j]
            nw = nw - thr if nw > thr else (nw + thr if nw < -thr else 0.0)
        nw = min(max(nw, -R), R)
        wt = wj + extrap * (nw - wj)
        ga = cw[i] * (_ref_hgrad(kind, ai, y[i]) / rc[i] - wt * x)
        if svrg:
            ga -= cw[i] * (_ref_hgrad(kind, a_snap[i], y[i]) / rc[i] - w_snap[j] * x)
            ga += Fa[i] / rc[i]
        if mode == STEP_ADAGRAD:
            Ga[i] += ga * ga
            ea = a_scale * eta0 / math.sqrt(Ga[i])
        else:
            ea = eta
        w[j] = nw
        alpha[i] = min(max(ai + ea * ga, a_lo[i]), a_hi[i])


@pytest.mark.parametrize("kind", [CODES["hinge"], CODES["logistic"]])
@pytest.mark.parametrize("mode", [STEP_ADAGRAD, STEP_SCALAR])
@pytest.mark.parametrize("svrg", [False, True])
@pytest.mark.parametrize("l1,prox", [(0.0, False), (0.01, False), (0.01, True)])
@pytest.mark.parametrize("extrap", [0.0, 1.0])
def test_block_kernel_matches_python_reference(kind, mode, svrg, l1, prox, extrap):
    rng = np.random.default_rng(kind * 100 + mode * 10 + svrg)
    nr, nc, m = 7, 5, 25
    rows = rng.integers(0, nr, m).astype(np.int32)
    cols = rng.integers(0, nc, m).astype(np.int32)
    vals = rng.standard_normal(m)
    perm = rng.permutation(m).astype(np.int32)
    y = rng.choice([-1.0, 1.0], nr)
    lo, hi = (np.where(y > 0, 1e-14, -(1 - 1e-14)), np.where(y > 0, 1 - 1e-14, -1e-14)) \
        if kind == CODES["logistic"] else (np.where(y > 0, 0.0, -1.0), np.where(y > 0, 1.0, 0.0))
    alpha = y * rng.uniform(0.1, 0.9, nr)
    w = rng.standard_normal(nc)
    cw = rng.uniform(0.5, 2.0, nr) / 10.0
    rc = rng.integers(1, 4, nr).astype(float)
    cc = rng.integers(1, 4, nc).astype(float)
    Ga, Gw = rng.uniform(0, 0.1, nr), rng.uniform(0, 0.1, nc)
    a_snap = y * rng.uniform(0.1, 0.9, nr)
    w_snap, Fa, Fw = rng.standard_normal(nc), rng.standard_normal(nr), rng.standard_normal(nc)
    args = dict(R=2.0, lam=0.3, eta=0.7, eta0=0.4)
    w_len = rng.uniform(0.5, 2.0, nc)
    a1, w1, Ga1, Gw1 = alpha.copy(), w.copy(), Ga.copy(), Gw.copy()
    status, pos = dso_block_kernel(
        Nonzeros(rows, cols, vals), perm, 0, m,
        RowSide(a1, lo, hi, y, cw, rc, Ga1, a_snap, Fa),
        ColSide(w1, cc, Gw1, w_snap, Fw, w_len),
        DSOSpec(kind, 0.0, args["lam"], l1, prox, args["R"], mode, args["eta"], args["eta0"],
                svrg, 1.0, 3.0, extrap))
    assert status == 0 and pos == m
    a2, w2, Ga2, Gw2 = alpha.copy(), w.copy(), Ga.copy(), Gw.copy()
    ref_block(rows, cols, vals, perm, a2, lo, hi, y, cw, rc, w2, cc, args["R"], kind,
              args["lam"], l1, prox, mode, args["eta"], args["eta0"], Ga2, Gw2, svrg,
              a_snap, w_snap, Fa, Fw, a_scale=3.0 if mode == STEP_ADAGRAD else 1.0,
              extrap=extrap, w_len=w_len)
    np.testing.assert_allclose(a1, a2, rtol=0, atol=1e-12)
    np.testing.assert_allclose(w1, w2, rtol=0, atol=1e-12)
    np.testing.assert_allclose(Gw1, Gw2, rtol=1e-12, atol=0)
    assert not np.allclose(w1, w)          # something happened
    # the packed kernel the solver runs (the loop picked for this spec), same tolerance
    spec = DSOSpec(kind, 0.0, args["lam"], l1, prox, args["R"], mode, args["eta"],
                   args["eta0"], svrg, 1.0, 3.0, extrap)
    PA, PW = np.empty((nr, PA_STRIDE)), np.empty((nc, PW_STRIDE))
    a3, w3, Ga3, Gw3 = alpha.copy(), w.copy(), Ga.copy(), Gw.copy()
    pack_block(RowSide(a3, lo, hi, y, cw, rc, Ga3, a_snap, Fa),
               ColSide(w3, cc, Gw3, w_snap, Fw, w_len), mode == STEP_ADAGRAD, svrg, PA, PW,
               spec)
    assert tuple(packed_kernel(spec)(Nonzeros(rows, cols, vals), perm, 0, m, PA, PW,
                                     spec)) == (0, m)
    unpack_block(PA, PW, a3, Ga3, w3, Gw3, mode == STEP_ADAGRAD)
    np.testing.assert_allclose(a3, a2, rtol=0, atol=1e-12)
    np.testing.assert_allclose(w3, w2, rtol=0, atol=1e-12)
    np.testing.assert_allclose(Gw3, Gw2, rtol=1e-12, atol=0)


@pytest.mark.parametrize("default_form", [True, False])
@pytest.mark.parametrize("chunked", [False, True])
def test_packed_kernel_stops_at_a_non_finite_update(default_form, chunked):
    """A NaN value at one nonzero: the kernel returns (STATUS_NONFINITE, its position
    along the processing order) and leaves w and alpha as after the nonzeros before
    it."""
    from primaldual.solvers.dso.kernels import (CHUNK, PA_STRIDE, PW_STRIDE, chunks_kernel,
                                        is_default_form, pack_block, packed_kernel,
                                        unpack_block)
    from primaldual.kernels.status import STATUS_NONFINITE
    rng = np.random.default_rng(3)
    n, d, m = 40, 15, 2 * CHUNK + 100
    rows = rng.integers(0, n, m).astype(np.int32)
    cols = rng.integers(0, d, m).astype(np.int32)
    vals = rng.standard_normal(m)
    y = np.where(rng.random(n) < 0.5, -1.0, 1.0)
    lo, hi = np.minimum(0, y), np.maximum(0, y)
    rc = np.maximum(np.bincount(rows, minlength=n), 1).astype(float)
    cc = np.maximum(np.bincount(cols, minlength=d), 1).astype(float)
    spec = DSOSpec(CODES["hinge"], 0.0, 1e-2, 0.0, False, 3.0, STEP_ADAGRAD, 0.1, 0.5, True, 1.0,
                   2.5, 1.0 if default_form else 0.0)
    assert is_default_form(spec) == default_form
    chunks = np.array([1, 2, 0], dtype=np.int64)
    order = np.concatenate([np.arange(CHUNK, 2 * CHUNK), np.arange(2 * CHUNK, m),
                            np.arange(CHUNK)]) if chunked else rng.permutation(m)
    bad = 1500                         # a position along the processing order
    vals[order[bad]] = np.nan

    def run(stop):
        a, w = 0.3 * y, np.zeros(d)
        Ga, Gw = np.ones(n), np.ones(d)
        PA, PW = np.empty((n, PA_STRIDE)), np.empty((d, PW_STRIDE))
        pack_block(RowSide(a, lo, hi, y, np.full(n, 1 / n), rc, Ga, 0.5 * y, np.zeros(n)),
                   ColSide(w, cc, Gw, np.zeros(d), np.zeros(d)), True, True, PA, PW, spec)
        if chunked and stop == m:
            res = chunks_kernel(spec)(Nonzeros(rows, cols, vals), chunks, 3, PA, PW, spec)
        else:
            res = packed_kernel(spec)(Nonzeros(rows, cols, vals), order, 0, stop, PA, PW,
                                      spec)
        unpack_block(PA, PW, a, Ga, w, Gw, True)
        return tuple(res), a, w

    res, a, w = run(m)
    assert res == (STATUS_NONFINITE, bad)
    res_before, a_before, w_before = run(bad)
    assert res_before == (0, bad)
    assert not np.array_equal(a_before, 0.3 * y)        # the updates before it happened
    np.testing.assert_array_equal(a, a_before)
    np.testing.assert_array_equal(w, w_before)


# ------------------------------------------------------ layout, schedule
@pytest.mark.parametrize("p", [1, 2, 3])
def test_layout_partitions_omega_and_schedule_covers_every_block(p):
    X, y = make_classification_data(n=40, d=11, density=0.3, seed=p)
    X = X.tolil()
    X[3, 4] = 0.0                                 # an explicit stored zero is not in Omega
    X = sp.csr_matrix(X)
    X.data[X.indptr[3]] = 0.0
    prob = Problem(X, y, loss="hinge", lam=0.1)
    L = build_layout(prob.rows, p)
    Xc = sp.coo_matrix(X)
    nz = {(i, j): v for i, j, v in zip(Xc.row, Xc.col, Xc.data) if v != 0}
    seen = {}
    for q in range(p):
        for r in range(p):
            sl = L.block(q, r)
            for i, j, v in zip(L.rows[sl] + L.row_bounds[q], L.cols[sl] + L.col_bounds[r],
                               L.vals[sl]):
                assert L.row_bounds[q] <= i < L.row_bounds[q + 1]
                assert L.col_bounds[r] <= j < L.col_bounds[r + 1]
                seen[(int(i), int(j))] = v
    assert seen == nz and L.nnz == len(nz)
    np.testing.assert_array_equal(L.row_cnt, np.bincount([i for i, _ in nz], minlength=40))
    # each inner iteration: p blocks sharing no row part and no column block;
    # each epoch: every block exactly once
    visited = set()
    for r in range(p):
        owners = [sigma(q, r, p) for q in range(p)]
        assert sorted(owners) == list(range(p))
        visited |= {(q, sigma(q, r, p)) for q in range(p)}
    assert visited == {(q, r) for q in range(p) for r in range(p)}


def test_dense_and_sparse_give_identical_iterates():
    X, y = make_classification_data(n=60, d=12, density=0.4, seed=3)
    a = run_dso(X, y, loss="logistic", max_epochs=4, n_workers=2)
    b = run_dso(X.toarray(), y, loss="logistic", max_epochs=4, n_workers=2)
    # same Omega, same blocks, same draws; only the SVRG full-gradient products
    # (BLAS vs sparse) round differently
    np.testing.assert_allclose(a.coef, b.coef, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(a.dual_coef, b.dual_coef, rtol=1e-12, atol=1e-12)


# ------------------------------------------------------------ saddle gap
@pytest.mark.parametrize("lam,l1", [(0.05, 0.0), (0.05, 0.02), (0.0, 0.05)])
def test_saddle_gap_closed_form_matches_brute_force(lam, l1):
    from scipy.optimize import minimize_scalar
    X, y = make_classification_data(n=12, d=4, density=0.8, seed=1)
    prob = Problem(X, y, loss="logistic", lam=lam, l1=l1)
    rng = np.random.default_rng(0)
    w = rng.standard_normal(4)
    alpha = y * rng.uniform(0.05, 0.95, 12)
    R = box_radius(prob)
    # max over alpha of f(w, .) per sample, brute force in b = alpha y
    Xd = X.toarray()
    margins = Xd @ w
    best = 0.0
    for i in range(12):
        r = minimize_scalar(lambda b: -(-(b * math.log(b) + (1 - b) * math.log(1 - b))
                                        - b * y[i] * margins[i]),
                            bounds=(1e-12, 1 - 1e-12), method="bounded",
                            options={"xatol": 1e-12})
        best += -r.fun / 12
    max_f = best + prob.penalty.value(w)
    v = Xd.T @ alpha / 12
    min_f = float(np.mean(prob.loss.neg_conjugate(alpha, y)))
    for j in range(4):
        grid = np.linspace(-R, R, 200001)
        min_f += (0.5 * lam * grid ** 2 + l1 * np.abs(grid) - v[j] * grid).min()
    assert saddle_gap(prob, w, alpha, R) == pytest.approx(max_f - min_f, abs=1e-6)
    assert R == pytest.approx(min([math.sqrt(math.log(2) / lam)] if lam else [math.inf]
                                  + ([math.log(2) / l1] if l1 else [])))


def test_box_contains_the_optimum_and_dual_bounds_follow_appendix_a():
    X, y = load_binary("a9a", n_features=123, max_rows=500)
    ref = primaldual.solve(X, y, loss="hinge", lam=1e-2, solver="sdca", tol=1e-10,
                           max_epochs=500)
    prob = Problem(X, y, loss="hinge", lam=1e-2)
    assert box_radius(prob) == pytest.approx(1 / math.sqrt(1e-2))
    assert np.abs(ref.coef).max() <= box_radius(prob)
    lo, hi = dual_bounds(prob.loss, y)
    np.testing.assert_array_equal(lo * y >= 0, True)
    lo, hi = dual_bounds(primaldual.make_loss("logistic"), y)
    assert np.all((lo * y).clip(None, hi * y) >= 1e-14 - 1e-30)
    assert np.all(np.maximum(lo * y, hi * y) <= 1 - 1e-14)


# ------------------------------------------------------------ convergence
@pytest.fixture(scope="module")
def a9a_2000():
    return load_binary("a9a", n_features=123, max_rows=2000)


@pytest.fixture(scope="module")
def sdca_optima(a9a_2000):
    X, y = a9a_2000
    return {loss: primaldual.solve(X, y, loss=loss, lam=1e-3, solver="sdca", tol=1e-11,
                                   max_epochs=2000).primal
            for loss in ("hinge", "logistic")}


@pytest.mark.parametrize("loss,epochs", [("hinge", 300), ("logistic", 150)])
@pytest.mark.parametrize("p", [1, 2])
def test_reaches_sdca_optimum(a9a_2000, sdca_optima, loss, epochs, p):
    X, y = a9a_2000
    res = run_dso(X, y, loss=loss, lam=1e-3, max_epochs=epochs, n_workers=p,
                  check_every=50)
    opt = sdca_optima[loss]
    assert abs(res.primal - opt) / opt <= 1e-3
    prob = Problem(X, y, loss=loss, lam=1e-3)
    assert res.primal == pytest.approx(prob.primal(res.coef), rel=1e-12)
    assert res.dual == pytest.approx(prob.dual(res.dual_coef), rel=1e-10)
    assert 0 <= res.gap and res.dual <= opt + 1e-12
    assert res.trace[-1]["saddle_gap"] >= res.primal - opt - 1e-12


def _slope(trace, key):
    ep = np.array([r["dso_epoch"] for r in trace if r["dso_epoch"] >= 8])
    g = np.array([r[key] for r in trace if r["dso_epoch"] >= 8])
    return np.polyfit(np.log(ep), np.log(g), 1)[0]


@pytest.mark.parametrize("loss", ["hinge", "logistic"])
def test_gap_shrinks_at_least_like_one_over_sqrt_T(a9a_2000, loss):
    """Default configuration (AdaGrad + SVRG, Appendix A): the saddle gap of
    the averaged iterates (Theorem 1) and the certified duality gap of the last
    iterate both fall at least as fast as T^-1/2 (fitted log-log slope)."""
    X, y = a9a_2000
    res = run_dso(X, y, loss=loss, lam=1e-3, max_epochs=128, step="adagrad",
                  variance_reduction="svrg", check_every=8)
    s_saddle, s_gap = _slope(res.trace, "saddle_gap"), _slope(res.trace, "gap")
    print(f"{loss}: log-log slope saddle_gap {s_saddle:.2f}, duality gap {s_gap:.2f}")
    assert s_saddle <= -0.5
    assert s_gap <= -0.5


def test_pure_l1_logistic_matches_liblinear(a9a_2000):
    import warnings
    from sklearn.linear_model import LogisticRegression
    X, y = a9a_2000
    l1 = 3e-3
    n = X.shape[0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sk = LogisticRegression(penalty="l1", solver="liblinear", C=1.0 / (l1 * n),
                                fit_intercept=False, tol=1e-10, max_iter=10000).fit(X, y)
    prob = Problem(X, y, loss="logistic", lam=0.0, l1=l1)
    p_sk = prob.primal(sk.coef_.ravel())
    assert np.count_nonzero(sk.coef_) < 123           # really the L1 problem
    res = run_dso(X, y, loss="logistic", lam=0.0, l1=l1, max_epochs=100, check_every=25)
    assert abs(res.primal - p_sk) / p_sk <= 1e-3
    assert np.isfinite(res.dual) and res.gap >= 0
    assert res.rel_gap <= 1e-2                        # certified


def test_dcd_init_and_plain_algorithm_1(a9a_2000, sdca_optima):
    X, y = a9a_2000
    opt = sdca_optima["logistic"]
    res = run_dso(X, y, loss="logistic", lam=1e-3, max_epochs=22, init="dcd", n_workers=2,
                  init_passes=20)
    first = res.trace[0]
    assert first["epoch"] == pytest.approx(20.0)          # the DCD passes are counted
    assert (first["primal"] - opt) / opt < 0.05           # averaged local DCD is close
    plain = run_dso(X, y, loss="logistic", lam=1e-3, max_epochs=100, step="sqrt",
                    variance_reduction=None, output="average", n_workers=2, check_every=25)
    assert plain.trace[-1]["saddle_gap"] < plain.trace[1]["saddle_gap"]
    assert plain.primal < plain.trace[0]["primal"]


# ------------------------------------------------------------ resume, errors
@pytest.mark.parametrize("opts", [dict(n_workers=2), dict(n_workers=2, step="sqrt",
                                                          output="average")])
def test_resume_equals_uninterrupted(opts):
    X, y = make_classification_data(n=80, d=15, density=0.3, seed=5)
    prob = Problem(X, y, loss="logistic", lam=1e-2)
    full = DSO(prob, tol=0.0, max_epochs=6, random_state=3, **opts).run()
    part = DSO(prob, tol=0.0, max_epochs=2.5, random_state=3, check_every=0.5, **opts).run()
    rest = DSO(prob, tol=0.0, max_epochs=6, random_state=3, resume=part.state, **opts).run()
    np.testing.assert_array_equal(full.coef, rest.coef)
    np.testing.assert_array_equal(full.dual_coef, rest.dual_coef)


def test_bad_options_are_errors():
    X, y = make_classification_data(n=30, d=5, seed=0)
    with pytest.raises(ValueError, match="n_workers"):
        run_dso(X, y, n_workers=6)
    with pytest.raises(ValueError, match="init='dcd'"):
        run_dso(X, y, l1=0.1, init="dcd")
    with pytest.raises(ValueError, match="step"):
        run_dso(X, y, step="fast")
    with pytest.raises(ValueError, match="eta0"):
        run_dso(X, y, eta0=-1.0)
    with pytest.raises(ValueError, match="unknown option"):
        run_dso(X, y, blocks=3)
    with pytest.raises(ValueError, match="no nonzero"):
        run_dso(sp.csr_matrix((30, 5)), y)


# ------------------------------------------------- packed kernel, chunk order, held-out set
@pytest.mark.parametrize("svrg", [False, True])
@pytest.mark.parametrize("mode", [STEP_ADAGRAD, STEP_SCALAR])
@pytest.mark.parametrize("kind", [CODES["hinge"], CODES["logistic"], CODES["smooth_hinge"]])
@pytest.mark.parametrize("extrap", [0.0, 1.0])
def test_packed_kernel_matches_the_array_kernel(svrg, mode, kind, extrap):
    """The packed kernel (in a given order, and in the "chunks" order without a
    written-out order) gives the array kernel's iterates; the loop picked for the
    spec (:func:`chunks_kernel`, :func:`packed_kernel`: compiled without option
    branches for the default form, AdaGrad + SVRG + sequential, with the loss fixed
    for hinge and logistic) gives the generic loop's iterates bit for bit."""
    from primaldual.solvers.dso.kernels import (CHUNK, PA_STRIDE, PW_STRIDE, chunks_kernel,
                                        dso_block_kernel_chunks, dso_block_kernel_packed,
                                        fill_chunk_order, is_default_form, pack_block,
                                        packed_kernel, unpack_block)
    rng = np.random.default_rng(5)
    n, d, m = 30, 20, 200
    rows = rng.integers(0, n, m).astype(np.int32)
    cols = rng.integers(0, d, m).astype(np.int32)
    vals = rng.standard_normal(m)
    perm = rng.permutation(m).astype(np.int32)
    y = np.where(rng.random(n) < 0.5, -1.0, 1.0)
    lo, hi = np.minimum(0, y), np.maximum(0, y)
    if kind == CODES["logistic"]:
        lo, hi = lo + 1e-14 * np.abs(y), hi - 1e-14 * np.abs(y)
    rc = np.bincount(rows, minlength=n).astype(float)
    cc = np.bincount(cols, minlength=d).astype(float)
    cw = np.full(n, 1.0 / n)
    alpha, w = np.clip(0.3 * y, lo, hi), 0.1 * rng.standard_normal(d)
    Ga, Gw = rng.random(n), rng.random(d)
    a_s, w_s, Fa, Fw = 0.5 * y, 0.1 * rng.standard_normal(d), rng.standard_normal(n), \
        rng.standard_normal(d)
    w_len = rng.uniform(0.5, 2.0, d)
    spec = DSOSpec(kind, 0.5, 1e-2, 0.0, False, 3.0, mode, 0.1, 0.5, svrg, 1.0, 2.5, extrap)
    assert is_default_form(spec) == (svrg and mode == STEP_ADAGRAD and extrap == 1.0)
    nz = Nonzeros(rows, cols, vals)
    for chunked in (False, True):
        if chunked:     # 3 chunks, the last one partial, in the order 2, 0, 1
            m = 2 * CHUNK + 37
            rows = rng.integers(0, n, m).astype(np.int32)
            cols = rng.integers(0, d, m).astype(np.int32)
            vals = rng.standard_normal(m)
            nz = Nonzeros(rows, cols, vals)
            rc = np.maximum(np.bincount(rows, minlength=n), 1).astype(float)
            cc = np.maximum(np.bincount(cols, minlength=d), 1).astype(float)
            chunks = np.array([2, 0, 1], dtype=np.int64)
            perm = np.empty(m, dtype=np.int64)
            assert fill_chunk_order(chunks, 3, m, perm) == m
        a1, w1, Ga1, Gw1 = alpha.copy(), w.copy(), Ga.copy(), Gw.copy()
        dso_block_kernel(nz, perm, 0, m, RowSide(a1, lo, hi, y, cw, rc, Ga1, a_s, Fa),
                         ColSide(w1, cc, Gw1, w_s, Fw, w_len), spec)
        out = []
        generic = dso_block_kernel_chunks if chunked else dso_block_kernel_packed
        picked = chunks_kernel(spec) if chunked else packed_kernel(spec)
        assert (picked is generic) == (not is_default_form(spec))
        for kernel in (generic, picked):
            PA, PW = np.empty((n, PA_STRIDE)), np.empty((d, PW_STRIDE))
            a2, w2, Ga2, Gw2 = alpha.copy(), w.copy(), Ga.copy(), Gw.copy()
            pack_block(RowSide(a2, lo, hi, y, cw, rc, Ga2, a_s, Fa),
                       ColSide(w2, cc, Gw2, w_s, Fw, w_len), mode == STEP_ADAGRAD, svrg, PA,
                       PW, spec)
            if chunked:
                assert tuple(kernel(nz, chunks, 3, PA, PW, spec)) == (0, m)
            else:
                assert tuple(kernel(nz, perm, 0, m, PA, PW, spec)) == (0, m)
            unpack_block(PA, PW, a2, Ga2, w2, Gw2, mode == STEP_ADAGRAD)
            # the packed kernel folds the snapshot's fixed terms per row and column
            # (a different rounding), and with extrap = 1 takes the new w_j itself
            # where the array kernel computes w_j + 1 (w_j' - w_j)
            np.testing.assert_allclose(a2, a1, rtol=1e-12, atol=1e-14)
            np.testing.assert_allclose(w2, w1, rtol=1e-12, atol=1e-14)
            assert not np.allclose(w1, w)
            out.append((a2, w2, Ga2, Gw2))
        for u, v in zip(*out):
            np.testing.assert_array_equal(u, v)


def test_chunk_order_visits_every_nonzero_once():
    from primaldual.solvers.dso.kernels import CHUNK, fill_chunk_order
    m = 3 * CHUNK + 17
    chunks = np.array([2, 0, 3, 1], dtype=np.int64)
    out = np.full(m, -1, dtype=np.int64)
    assert fill_chunk_order(chunks, 4, m, out) == m
    np.testing.assert_array_equal(np.sort(out), np.arange(m))
    np.testing.assert_array_equal(out[:CHUNK], np.arange(2 * CHUNK, 3 * CHUNK))
    np.testing.assert_array_equal(out[CHUNK:2 * CHUNK], np.arange(CHUNK))
    np.testing.assert_array_equal(out[2 * CHUNK:2 * CHUNK + 17], np.arange(3 * CHUNK, m))


@pytest.mark.parametrize("loss", ["hinge", "logistic"])
def test_defaults_meet_1e_3_on_a_held_out_w8a_shaped_set(loss):
    """A w8a-shaped synthetic set (300 features, ~12 nonzeros per row, unit rows;
    4,000 rows, seed 11, never used for tuning): DSO with its defaults is within
    1e-3 relative of the SDCA optimum after 200 epochs at lam = 1e-4."""
    from primaldual.datasets import make_synthetic
    X, y, _ = make_synthetic((4000, 300, 0.04), random_state=11)
    opt = primaldual.solve(X, y, loss=loss, lam=1e-4, solver="sdca", tol=1e-10,
                           max_epochs=5000).primal
    res = primaldual.solve(X, y, loss=loss, lam=1e-4, solver="dso", max_epochs=200,
                           check_every=200, tol=0.0, random_state=0)
    assert (res.primal - opt) / opt <= 1e-3, (res.primal - opt) / opt
    assert res.gap >= 0 and res.dual <= opt * (1 + 1e-12)


def _binary_w8a_shaped(n, seed):
    """make_synthetic's w8a shape with every stored value set to 1 (binary rows, as
    the real w8a; row norms sqrt(|Omega_i|), ~3.3 on average, up to ~12)."""
    X, y, _ = make_synthetic((n, 300, 0.04), random_state=seed)
    X = X.copy()
    X.data[:] = 1.0
    return X, y


def test_default_adagrad_w_step_follows_the_row_scale():
    """Rows scaled by c at lam are the unscaled problem at lam / c^2 with w -> w / c;
    with the default eta0 (w steps times 1 / max_i ||x_i||) DSO takes the same steps
    on both, so c * coef(c X, lam) = coef(X, lam / c^2).  With one eta0 on both
    sides (the old default) the two runs differ."""
    X, y = _binary_w8a_shaped(400, 5)
    c, lam = 0.25, 1e-3
    kw = dict(loss="hinge", solver="dso", max_epochs=6, check_every=6, tol=0.0,
              random_state=0)
    a = primaldual.solve(c * X, y, lam=lam, **kw)
    b = primaldual.solve(X, y, lam=lam / c ** 2, **kw)
    np.testing.assert_allclose(c * a.coef, b.coef, rtol=1e-9, atol=1e-12)
    assert a.primal == pytest.approx(b.primal, rel=1e-9)
    prob = Problem(X, y, loss="hinge", lam=lam)
    assert adagrad_w_scale(prob) == pytest.approx(1 / np.sqrt(X.multiply(X).sum(1).max()))
    # binary rows: every column has scale 1, so the per-column rule is the row rule
    np.testing.assert_allclose(adagrad_col_factor(prob), adagrad_w_scale(prob), rtol=1e-15)
    mk = dict(tol=0.0, max_epochs=1, random_state=0)
    s = DSO(prob, **mk)
    np.testing.assert_array_equal(s.params.col_factor, adagrad_col_factor(prob))
    assert DSO(prob, eta0=0.5, **mk).params.col_factor is None    # a given eta0 as it is
    assert DSO(prob, step="sqrt", **mk).params.col_factor is None
    old_a = primaldual.solve(c * X, y, lam=lam, eta0=0.5, **kw)
    old_b = primaldual.solve(X, y, lam=lam / c ** 2, eta0=0.5, **kw)
    assert np.abs(c * old_a.coef - old_b.coef).max() > 1e-3 * np.abs(old_b.coef).max()


def test_defaults_on_a_held_out_unnormalized_binary_set():
    """Binary, unnormalized w8a-shaped rows (5,000 rows, seed 21, not used to choose
    any rule), lam = 1e-3 (lam n = 5, as for the 50,000-row sets at lam = 1e-4 of
    docs/reproducing-dso.md section 6c), 200 epochs, defaults, against SDCA to a
    certified 1e-10 relative gap: both losses within 1e-3.  Measured: hinge 3.6e-5
    (the paper's plain AdaGrad, ``restart=None, alpha_scale=1``: 5.4e-4), logistic
    2.0e-8."""
    X, y = _binary_w8a_shaped(5000, 21)
    kw = dict(lam=1e-3, solver="dso", max_epochs=200, check_every=200, tol=0.0,
              random_state=0)
    for loss in ("logistic", "hinge"):
        ref = primaldual.solve(X, y, loss=loss, lam=1e-3, solver="sdca", tol=1e-10,
                               max_epochs=20000)
        assert ref.rel_gap <= 1e-10
        res = primaldual.solve(X, y, loss=loss, **kw)
        sub = (res.primal - ref.primal) / ref.primal
        assert -1e-9 <= sub <= 1e-3, (loss, sub)
        assert res.gap >= 0
    plain = primaldual.solve(X, y, loss="hinge", restart=None, alpha_scale=1.0,
                             update="simultaneous", primal_weight=1.0, **kw)
    assert (plain.primal - ref.primal) / ref.primal > 3 * sub


@pytest.mark.parametrize("loss,primal,dual,l1norm,wmax", [
    ("hinge", 0.34378821680093574, -0.951321150151398, 111.44558975121873,
     1.4037724936290985),
    ("logistic", 0.3747503920561093, 0.23750067063527747, 114.198006005402,
     1.587714236065122)])
def test_plain_option_reproduces_the_old_iterates(loss, primal, dual, l1norm, wmax):
    """``restart=None, alpha_scale=1`` is the solver before the hinge changes (the
    numbers were printed by that version: same data, p = 2, 8 epochs)."""
    X, y = _binary_w8a_shaped(400, 5)
    r = primaldual.solve(X, y, loss=loss, lam=1e-3, solver="dso", max_epochs=8,
                         check_every=8, tol=0.0, random_state=0, n_workers=2,
                         restart=None, alpha_scale=1.0, update="simultaneous",
                         primal_weight=1.0)
    assert r.primal == pytest.approx(primal, rel=1e-11)
    assert r.dual == pytest.approx(dual, rel=1e-11, abs=1e-12)
    assert float(np.abs(r.coef).sum()) == pytest.approx(l1norm, rel=1e-11)
    assert float(r.coef[np.argmax(np.abs(r.coef))]) == pytest.approx(wmax, rel=1e-11)
    if loss == "logistic":          # restarts on, alpha factor 1: the default for logistic
        d = primaldual.solve(X, y, loss=loss, lam=1e-3, solver="dso", max_epochs=8,
                             check_every=8, tol=0.0, random_state=0, n_workers=2,
                             restart=None, update="simultaneous", primal_weight=1.0)
        np.testing.assert_array_equal(d.coef, r.coef)


def test_alpha_scale_default_and_errors():
    X, y = _binary_w8a_shaped(400, 5)
    mk = dict(tol=0.0, max_epochs=1, random_state=0, primal_weight=1.0)
    assert DSO(Problem(X, y, loss="hinge", lam=1e-3), **mk).params.a_scale == 8.0
    assert DSO(Problem(X, y, loss="logistic", lam=1e-3), **mk).params.a_scale == 1.0
    assert DSO(Problem(X, y, loss="hinge", lam=1e-3), eta0=0.5, **mk).params.a_scale == 1.0
    assert DSO(Problem(X, y, loss="hinge", lam=1e-3), alpha_scale=2.0,
               **mk).params.a_scale == 2.0
    with pytest.raises(ValueError, match="alpha_scale"):
        DSO(Problem(X, y, loss="hinge", lam=1e-3), step="sqrt", alpha_scale=2.0, **mk)
    with pytest.raises(ValueError, match="restart"):
        DSO(Problem(X, y, loss="hinge", lam=1e-3), restart="always", **mk)


@pytest.mark.parametrize("n_workers", [1, 2])
def test_restarts_survive_resume(n_workers):
    """The restart bookkeeping (window start, reference gap, last candidate) is in
    the checkpoint: a run cut at epoch 7 and resumed ends bitwise where the
    uninterrupted run ends, with restarts on both sides of the cut."""
    X, y = _binary_w8a_shaped(600, 8)
    kw = dict(loss="hinge", lam=1e-3, solver="dso", random_state=2, tol=0.0,
              n_workers=n_workers)
    full = primaldual.solve(X, y, max_epochs=20, check_every=1, **kw)
    part = primaldual.solve(X, y, max_epochs=7, check_every=1, **kw)
    rest = primaldual.solve(X, y, max_epochs=20, check_every=1, resume=part.state, **kw)
    np.testing.assert_array_equal(rest.coef, full.coef)
    np.testing.assert_array_equal(rest.dual_coef, full.dual_coef)
    n_part = part.trace[-1]["restarts"]
    assert 0 < n_part < full.trace[-1]["restarts"] == rest.trace[-1]["restarts"]


def test_chunk_order_resume_equals_uninterrupted():
    X, y = make_classification_data(n=300, d=40, density=0.3, seed=3)
    kw = dict(loss="hinge", lam=1e-3, solver="dso", check_every=1, random_state=4, tol=0.0)
    full = primaldual.solve(X, y, max_epochs=6, **kw)
    part = primaldual.solve(X, y, max_epochs=3, **kw)
    rest = primaldual.solve(X, y, max_epochs=6, resume=part.state, **kw)
    np.testing.assert_array_equal(rest.coef, full.coef)


# ---------------------------------------------------------- primal weight
def test_fixed_primal_weight_divides_w_steps_and_multiplies_alpha_steps():
    X, y = _binary_w8a_shaped(400, 5)
    prob = Problem(X, y, loss="hinge", lam=1e-3)
    mk = dict(tol=0.0, max_epochs=1, random_state=0)
    base = DSO(prob, **mk).params
    heavy = DSO(prob, primal_weight=4.0, **mk).params
    assert heavy.w_scale == base.w_scale / 4.0 and heavy.a_scale == base.a_scale * 4.0
    with pytest.raises(ValueError, match="primal_weight"):
        DSO(prob, primal_weight=0.0, **mk)
    with pytest.raises(ValueError, match="restart"):
        DSO(prob, primal_weight="adaptive", restart=None, **mk)
    with pytest.raises(ValueError, match="primal_weight"):
        DSO(prob, primal_weight=2.0, step="sqrt", **mk)


def test_adaptive_primal_weight_follows_pdlp_update():
    """One restart's update against PDLP's formula written out (Algorithm 3,
    theta = 0.5), relative to the first window's dy/dx."""
    X, y = _binary_w8a_shaped(300, 4)
    prob = Problem(X, y, loss="hinge", lam=1e-3)
    s = DSO(prob, tol=0.0, max_epochs=1, random_state=0, primal_weight="adaptive")
    s.init_state(None)
    rng = np.random.default_rng(0)
    c = prob.sample_weight / prob.sample_weight.sum()

    def move():
        s.w[:] = rng.normal(size=prob.d)
        s.alpha[:] = rng.uniform(0, 1, size=prob.n)

    def ratio(w0, a0):
        return math.sqrt(np.sum(c * (s.alpha - a0) ** 2)) / np.linalg.norm(s.w - w0)

    w_scale0, a_scale0 = s.params.w_scale, s.params.a_scale
    move()
    assert s._update_primal_weight(first=True) is False         # only sets the point
    w0, a0 = s.w.copy(), s.alpha.copy()
    move()
    ref = ratio(w0, a0)
    assert s._update_primal_weight(first=False) is False        # the unit of omega
    assert s.params.w_scale == w_scale0
    w0, a0 = s.w.copy(), s.alpha.copy()
    move()
    omega = math.exp(0.5 * math.log(ratio(w0, a0) / ref))
    assert s._update_primal_weight(first=False) is True
    assert s.params.w_scale == pytest.approx(w_scale0 / omega, rel=1e-12)
    assert s.params.a_scale == pytest.approx(a_scale0 * omega, rel=1e-12)
    w0, a0 = s.w.copy(), s.alpha.copy()
    move()
    omega = math.exp(0.5 * math.log(ratio(w0, a0) / ref) + 0.5 * math.log(omega))
    s._update_primal_weight(first=False)
    assert s.params.a_scale == pytest.approx(a_scale0 * omega, rel=1e-12)


@pytest.mark.parametrize("n_workers", [1, 2])
def test_adaptive_primal_weight_survives_resume(n_workers):
    """omega and the last restart point are in the checkpoint: cut at epoch 7,
    resumed, bitwise the uninterrupted run; the run differs from the fixed weight's."""
    X, y = _binary_w8a_shaped(600, 8)
    kw = dict(loss="hinge", lam=1e-3, solver="dso", random_state=2, tol=0.0,
              n_workers=n_workers, primal_weight="adaptive")
    full = primaldual.solve(X, y, max_epochs=20, check_every=1, **kw)
    part = primaldual.solve(X, y, max_epochs=7, check_every=1, **kw)
    rest = primaldual.solve(X, y, max_epochs=20, check_every=1, resume=part.state, **kw)
    np.testing.assert_array_equal(rest.coef, full.coef)
    np.testing.assert_array_equal(rest.dual_coef, full.dual_coef)
    plain = primaldual.solve(X, y, max_epochs=20, check_every=1,
                             **{**kw, "primal_weight": 1.0})
    assert not np.array_equal(plain.coef, full.coef)             # the weight did move


# ------------------------------------------------------- steps from the data
def test_column_factor_is_the_row_rule_in_column_units():
    """adagrad_col_factor = 1 / (s_j max_i ||x_i / s||), s_j = max_i |x_ij|, written out
    with numpy on unscaled columns; scaling one column by c divides its factor by c
    and leaves the others; scaling the rows by c divides every factor by c."""
    rng = np.random.default_rng(3)
    X = sp.random(300, 12, density=0.4, random_state=4, format="csr")
    X = X @ sp.diags(10.0 ** rng.uniform(-2, 3, 12))          # columns of very different scales
    X = sp.csr_matrix(X)
    y = np.where(rng.random(300) < 0.5, -1.0, 1.0)
    prob = Problem(X, y, loss="logistic", lam=1e-3)
    s = np.abs(X).max(axis=0).toarray().ravel()
    s[s == 0] = 1.0
    Z = X @ sp.diags(1.0 / s)
    zmax = np.sqrt(Z.multiply(Z).sum(axis=1).max())
    f = adagrad_col_factor(prob)
    np.testing.assert_allclose(f, 1.0 / (s * zmax), rtol=1e-13)
    D = np.ones(12)
    D[5] = 1e3
    g = adagrad_col_factor(Problem(sp.csr_matrix(X @ sp.diags(D)), y, loss="logistic",
                                   lam=1e-3))
    np.testing.assert_allclose(g, f / D, rtol=1e-13)
    np.testing.assert_allclose(adagrad_col_factor(Problem(0.5 * X, y, loss="logistic",
                                                          lam=1e-3)), f / 0.5, rtol=1e-13)
    # the rule's w lengths differ from the row rule's where the columns differ
    assert f.max() / f.min() > 100 and adagrad_w_scale(prob) < f.max()


@pytest.mark.parametrize("loss", ["logistic", "squared"])
def test_lam_n_primal_weight_follows_its_rule_and_stays_in_its_bounds(loss):
    """primal_weight="lam_n": omega = min(1, sqrt(lam n / gamma)) (gamma = 1 /
    smoothness: logistic 4, squared 1); in (0, 1]; increasing in lam; 1 once lam n
    >= gamma; the solver's AdaGrad lengths are w / omega and alpha * omega (the
    column factors unchanged); 1 for the hinge loss (no dual curvature) and for lam
    = 0; the default weight is 1."""
    rng = np.random.default_rng(7)
    X = sp.random(2000, 60, density=0.2, random_state=8, format="csr")
    y = np.where(rng.random(2000) < 0.5, -1.0, 1.0)
    gamma = {"logistic": 4.0, "squared": 1.0}[loss]
    mk = dict(tol=0.0, max_epochs=1, random_state=0)
    prev = 0.0
    for lam in (1e-7, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2):
        prob = Problem(X, y, loss=loss, lam=lam)
        expect = min(1.0, math.sqrt(lam * 2000 / gamma))
        omega = spdc_primal_weight(prob)
        assert omega == pytest.approx(expect, rel=1e-14)
        assert 0.0 < omega <= 1.0 and omega >= prev
        prev = omega
        sv = DSO(prob, primal_weight="lam_n", **mk)
        assert sv.params.w_scale == pytest.approx(1.0 / omega, rel=1e-15)
        assert sv.params.a_scale == pytest.approx(adagrad_a_scale(prob) * omega, rel=1e-15)
        np.testing.assert_array_equal(sv.params.col_factor, adagrad_col_factor(prob))
        assert DSO(prob, **mk).params.w_scale == 1.0
        hinge = Problem(X, y, loss="hinge", lam=lam)
        assert spdc_primal_weight(hinge) == 1.0
        assert DSO(hinge, primal_weight="lam_n", **mk).params.a_scale == 8.0
    assert prev == 1.0                               # lam n = 20 >= gamma: the cap
    assert spdc_primal_weight(Problem(X, y, loss=loss, lam=0.0, l1=1e-3)) == 1.0
