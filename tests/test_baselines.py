"""Baselines of Zhang & Xiao (2015), Section 5: AFG, L-BFGS, SAG, ASDCA; and the
paper's main finding on small real data."""
from __future__ import annotations

import bz2
import io
import itertools
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

import primaldual as pd
from primaldual.kernels.sag import SAGState
from primaldual.kernels.views import RowsView, StepSpec
from conftest import make_classification_data, make_regression_data, shared_file

BASELINES = ["afg", "lbfgs", "sag", "asdca"]


@pytest.fixture(scope="module")
def a9a_2000():
    from conftest import load_binary
    return load_binary("a9a", n_features=123, max_rows=2000)


@pytest.mark.parametrize("solver", BASELINES)
def test_baseline_reaches_sdca_optimum(solver, a9a_2000):
    X, y = a9a_2000
    kw = dict(loss="smooth_hinge", lam=1e-3)
    ref = pd.solve(X, y, solver="sdca", tol=1e-13, max_epochs=2000, **kw)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)     # asdca: lam too large
        res = pd.solve(X, y, solver=solver, tol=1e-8, max_epochs=1500, check_every=5, **kw)
    assert res.converged, (solver, res.rel_gap)
    prob = pd.Problem(X, y, **kw)
    assert np.isclose(res.primal, prob.primal(res.coef), rtol=1e-12)
    assert np.isclose(res.dual, prob.dual(res.dual_coef), rtol=1e-12)
    assert abs(res.primal - ref.primal) <= 1e-8 * ref.primal
    # passes are counted: one pass = n rows, or one full gradient for batch methods
    assert res.trace[-1]["epoch"] == res.n_epochs > 0


@pytest.mark.parametrize("loss", ["logistic", "squared"])
def test_batch_methods_other_losses(loss):
    if loss == "squared":
        X, y = make_regression_data(n=200, d=20, seed=1)
    else:
        X, y = make_classification_data(n=200, d=20, seed=1)
    ref = pd.solve(X, y, loss=loss, lam=1e-2, solver="sdca", tol=1e-13, max_epochs=1000)
    for solver in BASELINES:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            res = pd.solve(X, y, loss=loss, lam=1e-2, solver=solver, tol=1e-9,
                           max_epochs=2000, check_every=5)
        assert res.converged, solver
        assert abs(res.primal - ref.primal) <= 1e-8 * abs(ref.primal)


def test_lbfgs_counts_function_gradient_evaluations():
    X, y = make_classification_data(n=150, d=10, seed=2)
    calls = []
    res = pd.solve(X, y, loss="logistic", lam=1e-2, solver="lbfgs", tol=1e-10,
                   max_epochs=200, callback=lambda s: calls.append(s["epoch"]) and False)
    assert res.converged
    epochs = [t["epoch"] for t in res.trace]
    assert epochs == sorted(epochs) and all(float(e).is_integer() for e in epochs)
    assert res.n_epochs == epochs[-1]


def test_asdca_warns_when_condition_fails_and_not_when_it_holds():
    X, y = make_classification_data(n=200, d=10, seed=3)
    with pytest.warns(UserWarning, match=r"lam <= R\^2/\(10 gamma n\)"):
        pd.solve(X, y, loss="logistic", lam=1.0, solver="asdca", max_epochs=2)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        pd.solve(X, y, loss="logistic", lam=1e-6, solver="asdca", max_epochs=2)


@pytest.mark.parametrize("solver", BASELINES)
def test_resume_equals_uninterrupted(solver):
    X, y = make_classification_data(n=150, d=20, seed=5)
    kw = dict(loss="logistic", lam=1e-4, solver=solver, tol=0.0, random_state=2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        full = pd.solve(X, y, max_epochs=8, **kw)
        part = pd.solve(X, y, max_epochs=4, **kw)
        rest = pd.solve(X, y, max_epochs=8, resume=part.state, **kw)
    np.testing.assert_array_equal(full.coef, rest.coef)
    assert full.n_epochs == rest.n_epochs


def test_sag_lazy_updates_equal_dense_sag():
    """The just-in-time sparse SAG equals SAG with full vectors fed the same draws."""
    from primaldual.kernels.sag import sag_current_w, sag_run
    from primaldual.losses import make_loss
    X, y = make_classification_data(n=60, d=30, density=0.1, seed=7)
    loss = make_loss("logistic")
    n, d = X.shape
    lam, eta = 1e-2, 0.5
    order = np.random.default_rng(0).integers(0, n, 500).astype(np.int64)
    cw = np.ones(n)
    grad, w, dsum, last = np.zeros(n), np.zeros(d), np.zeros(d), np.zeros(d, np.int64)
    sag_run(RowsView(X.data, X.indices, X.indptr, X.indptr, np.zeros(n), y, cw),
            StepSpec(loss.code, loss.param, lam, 0.0, 1.0 / n), eta,
            SAGState(grad, w, dsum, last), order, 0)
    w_now = np.empty(d)
    sag_current_w(w, dsum, last, 500, eta, lam, w_now)
    Xd = X.toarray()
    g_ref, w_ref, d_ref = np.zeros(n), np.zeros(d), np.zeros(d)
    for i in order:
        g = loss.derivative(Xd[i] @ w_ref, y[i])[0]
        d_ref += (g - g_ref[i]) * Xd[i] / n
        g_ref[i] = g
        w_ref = (1 - eta * lam) * w_ref - eta * d_ref
    np.testing.assert_allclose(w_now, w_ref, rtol=1e-10, atol=1e-13)


def test_unsupported_combinations_rejected():
    X, y = make_classification_data(n=50, d=5)
    for solver in BASELINES:
        with pytest.raises(ValueError, match="smooth loss"):
            pd.solve(X, y, loss="hinge", solver=solver)
    with pytest.raises(ValueError, match="differentiable"):
        pd.solve(X, y, loss="logistic", solver="lbfgs", l1=0.1)
    with pytest.raises(ValueError, match="lam must be > 0"):
        pd.solve(X, y, loss="logistic", solver="afg", lam=0.0, l1=0.1)
    with pytest.raises(ValueError, match="step"):
        pd.solve(X, y, loss="logistic", solver="sag", step="big")


# ---------------------------------------------------- the paper's main finding
def _covtype_head(n_rows=2000):
    """First rows of the real Covtype set, rows scaled to unit norm (read lazily)."""
    from sklearn.datasets import load_svmlight_file
    path = shared_file("covtype.libsvm.binary.bz2")
    with bz2.open(path, "rb") as fh:
        buf = b"".join(itertools.islice(fh, n_rows))
    X, y = load_svmlight_file(io.BytesIO(buf), n_features=54)
    y = np.where(y == 2, 1.0, -1.0)
    norms = np.sqrt(np.asarray(X.multiply(X).sum(1)).ravel())
    return sp.csr_matrix(sp.diags(1.0 / norms) @ X), y


def test_accelerated_methods_need_fewer_passes_at_small_lam():
    """Zhang & Xiao Fig. 2: at lam = 1e-7 SPDC and ASDCA reach a relative optimality
    gap (P - P*)/P* <= 1e-6 in far fewer passes than SDCA and SAG (smoothed hinge,
    gamma = 1, 2000 Covtype rows)."""
    X, y = _covtype_head()
    kw = dict(loss="smooth_hinge", loss_params={"gamma": 1.0}, lam=1e-7)
    ref = pd.solve(X, y, solver="lbfgs", tol=1e-11, max_epochs=20000, check_every=500, **kw)
    p_star = ref.primal - ref.gap          # lower bound: the certified dual value
    budget = 1000

    def passes_to(solver, **o):
        res = pd.solve(X, y, solver=solver, tol=0.0, max_epochs=budget, check_every=20,
                       **kw, **o)
        hit = [t["epoch"] for t in res.trace if (t["primal"] - p_star) <= 1e-6 * p_star]
        return hit[0] if hit else np.inf

    spdc = passes_to("spdc")
    asdca = passes_to("asdca")
    sdca = passes_to("sdca", shrinking=False)      # the paper's SDCA
    sag = passes_to("sag")
    # measured: SPDC ~700, ASDCA ~460; SDCA and SAG far from 1e-6 after 1000 passes
    assert max(spdc, asdca) <= budget
    assert min(sdca, sag) >= 1.4 * max(spdc, asdca), (spdc, asdca, sdca, sag)
