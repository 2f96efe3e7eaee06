"""SGD baseline (SDCA paper Section 8.6): exact kernel, certificate, convergence."""
import numpy as np
import pytest

from primaldual import Problem, make_loss, solve
from primaldual.solvers._base import make_rng

from conftest import load_binary, make_classification_data


def reference_sgd(X, y, loss, lam, epochs, seed, sampling="uniform", project=False):
    Xd = X.toarray()
    n, d = Xd.shape
    rng = make_rng(seed)
    w = np.zeros(d)
    t = 0
    for _ in range(epochs):
        order = (rng.integers(0, n, size=n, dtype=np.int64) if sampling == "uniform"
                 else rng.permutation(n))
        for i in order:
            t += 1
            g = loss.derivative(Xd[i] @ w, y[i])[0]
            w = (1 - 1 / t) * w - g / (lam * t) * Xd[i]
            if project:
                nrm = np.linalg.norm(w)
                if nrm * np.sqrt(lam) > 1:
                    w *= 1 / (np.sqrt(lam) * nrm)
    return w


@pytest.mark.parametrize("sampling", ["uniform", "permutation"])
@pytest.mark.parametrize("project", [False, True])
@pytest.mark.parametrize("loss_name", ["hinge", "logistic"])
def test_kernel_matches_plain_python_reference(sampling, project, loss_name):
    X, y = make_classification_data(n=50, d=9, seed=1)
    res = solve(X, y, loss=loss_name, lam=0.05, solver="sgd", sampling=sampling,
                project=project, max_epochs=4, tol=0, random_state=3, check_every=4)
    w = reference_sgd(X, y, make_loss(loss_name), 0.05, 4, 3, sampling, project)
    # one check after the start: the returned pair is the last iterate (an
    # unconverged run returns its best check, here the last one)
    assert "best_epoch" not in res.extras and res.trace[-1]["epoch"] == 4
    np.testing.assert_allclose(res.coef, w, rtol=1e-10, atol=1e-12)


def test_certificate_uses_minus_derivative_as_dual_point():
    X, y = make_classification_data(n=80, d=9, seed=2)
    res = solve(X, y, loss="logistic", lam=0.01, solver="sgd", max_epochs=3, tol=0)
    p = Problem(X, y, "logistic", 0.01)
    np.testing.assert_allclose(res.dual_coef, -p.loss.derivative(X @ res.coef, y))
    assert res.gap == pytest.approx(p.gap(res.coef, res.dual_coef), abs=1e-13)
    assert res.gap >= 0


def test_sgd_approaches_the_sdca_optimum():
    X, y = load_binary("a9a", n_features=123, max_rows=2000)
    opt = solve(X, y, loss="logistic", lam=1e-2, tol=1e-10, max_epochs=1000)
    sgd = solve(X, y, loss="logistic", lam=1e-2, solver="sgd", max_epochs=30, tol=0)
    subs = [(r["primal"] - opt.primal) / opt.primal for r in sgd.trace]
    assert subs[-1] < 3e-3    # O(1/t): 1.2e-3 after 30 epochs here
    assert subs[-1] < subs[1] / 10
    assert min(subs) >= -1e-12   # never below the certified optimum


def test_resume_equals_uninterrupted():
    X, y = make_classification_data(n=70, d=9, seed=4)
    kw = dict(loss="hinge", lam=0.01, solver="sgd", tol=0, random_state=1)
    full = solve(X, y, max_epochs=6, **kw)
    part = solve(X, y, max_epochs=2, **kw)
    res = solve(X, y, max_epochs=6, resume=part, **kw)
    np.testing.assert_array_equal(res.coef, full.coef)


def test_warm_start_coef_needs_t0():
    X, y = make_classification_data(n=40, d=5, seed=5)
    with pytest.raises(ValueError, match="t0 > 1"):
        solve(X, y, solver="sgd", warm_start=np.ones(5))
    res = solve(X, y, solver="sgd", warm_start=np.ones(5), t0=100, max_epochs=1, tol=0)
    assert np.isfinite(res.primal)
