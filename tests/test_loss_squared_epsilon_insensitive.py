"""The squared epsilon-insensitive loss (LIBLINEAR's L2-loss SVR, ``-s 11``/``-s 12``).

``phi(a; y) = max(0, |a - y| - eps)^2``, ``-phi*(-alpha) = alpha y - eps |alpha|
- alpha^2 / 4`` (alpha free), checked against independent references: the
formulas written out here, Fenchel-Young, finite differences, the SDCA step
against a fine grid and a bounded Brent search, the certified optimum against
L-BFGS on the primal and scikit-learn's ``LinearSVR``, and the command line
against the ``liblinear-official`` binding at a tight ``-e`` (its model, its
``Mean squared error`` / ``Squared correlation coefficient`` lines, and model
files moving both ways).  The losses' parametrized tests (tests/test_losses.py)
run on it too.
"""
from __future__ import annotations

import re

import numpy as np
import pytest
from scipy.optimize import minimize, minimize_scalar

from primaldual import cli, solve
from primaldual.liblinear_format import read_liblinear
from primaldual.losses import make_loss

from conftest import optional_import, shared_file

NAME = "squared_epsilon_insensitive"


def _phi(a, y, eps):
    return np.maximum(np.abs(a - y) - eps, 0.0) ** 2


def test_value_conjugate_and_fenchel_young_against_the_formulas():
    rng = np.random.default_rng(0)
    for eps in (0.0, 0.25):
        loss = make_loss(NAME, {"epsilon": eps})
        a, y = rng.normal(scale=2.0, size=500), rng.normal(scale=2.0, size=500)
        np.testing.assert_allclose(loss.value(a, y), _phi(a, y, eps), rtol=1e-15)
        alpha = rng.normal(scale=3.0, size=500)
        np.testing.assert_allclose(loss.neg_conjugate(alpha, y),
                                   alpha * y - eps * np.abs(alpha) - alpha ** 2 / 4,
                                   rtol=1e-14, atol=1e-14)
        # Fenchel-Young: equality at alpha = -phi'(a), inequality elsewhere
        g = -loss.derivative(a, y)
        np.testing.assert_allclose(loss.value(a, y) - loss.neg_conjugate(g, y) + g * a, 0.0,
                                   atol=1e-12)
        assert (loss.value(a, y) - loss.neg_conjugate(alpha, y) + alpha * a >= -1e-12).all()
        assert loss.in_dual_domain(np.array([-1e300, 0.0, 1e300]), np.zeros(3)).all()


def test_derivatives_against_central_differences():
    rng = np.random.default_rng(1)
    loss = make_loss(NAME, {"epsilon": 0.3})
    a, y = rng.normal(scale=2.0, size=400), rng.normal(scale=2.0, size=400)
    far = np.minimum(np.abs(a - y - 0.3), np.abs(a - y + 0.3)) > 1e-3   # off the kinks
    a, y, h = a[far], y[far], 1e-6
    fd = (loss.value(a + h, y) - loss.value(a - h, y)) / (2 * h)
    np.testing.assert_allclose(loss.derivative(a, y), fd, rtol=1e-6, atol=1e-8)
    fd2 = (loss.derivative(a + h, y) - loss.derivative(a - h, y)) / (2 * h)
    np.testing.assert_allclose(loss.second_derivative(a, y), fd2, atol=1e-6)
    assert set(loss.second_derivative(a, y)) == {0.0, 2.0}


def test_dual_step_is_the_maximum_on_a_fine_grid_and_by_brent():
    """The coordinate problem ``max_b -phi*(-b) - a (b - alpha) - s/2 (b - alpha)^2``;
    the kink at 0 holds the maximizer on a whole interval of ``a``."""
    rng = np.random.default_rng(2)
    loss = make_loss(NAME, {"epsilon": 0.5})
    at_kink = 0
    for _ in range(30):
        alpha, y, a = rng.normal(scale=2.0, size=3)
        s = 10 ** rng.uniform(-2, 1.5)
        f = lambda b: (loss.neg_conjugate(b, y)[0] - a * (b - alpha)  # noqa: E731
                       - 0.5 * s * (b - alpha) ** 2)
        got = loss.sdca_dual_step_s(alpha, y, a, s)[0]
        grid = np.linspace(-30.0, 30.0, 300001)
        vals = (y * grid - 0.5 * np.abs(grid) - grid ** 2 / 4 - a * (grid - alpha)
                - 0.5 * s * (grid - alpha) ** 2)
        assert abs(got - grid[np.argmax(vals)]) <= 2e-4
        brent = minimize_scalar(lambda b: -f(b), bounds=(-30, 30), method="bounded",
                                options={"xatol": 1e-12})
        assert f(got) >= max(f(brent.x), vals.max()) - 1e-12
        at_kink += got == 0.0
    assert 0 < at_kink < 30
    # a row of zeros (s = 0): alpha = -phi'(0)
    for y in (-2.0, 0.2, 3.0):
        assert loss.sdca_dual_step_s(1.0, y, 0.0, 0.0)[0] == \
            pytest.approx(-loss.derivative(0.0, y)[0], abs=1e-15)


def _regression(n=120, d=8, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = X @ rng.normal(size=d) + 0.5 * rng.normal(size=n)
    return X, y


def _lbfgs_reference(X, y, lam, eps):
    """argmin (1/n) sum phi(x_i . w; y_i) + lam/2 ||w||^2 by L-BFGS (phi is C^1)."""
    n = X.shape[0]

    def fg(w):
        r = X @ w - y
        z = np.sign(r) * np.maximum(np.abs(r) - eps, 0.0)
        return float(z @ z) / n + 0.5 * lam * float(w @ w), X.T @ (2.0 * z) / n + lam * w

    res = minimize(fg, np.zeros(X.shape[1]), jac=True, method="L-BFGS-B",
                   options={"gtol": 1e-13, "ftol": 1e-16, "maxiter": 20000})
    return res.x, res.fun


@pytest.mark.parametrize("solver, opts, tol", [
    ("sdca", {}, 1e-12), ("sdca", {"shrinking": True}, 1e-12), ("newton", {}, 1e-12),
    ("auto", {}, 1e-12), ("cocoa", {"n_partitions": 3, "max_epochs": 2000}, 1e-6)])
def test_certified_optimum_equals_lbfgs(solver, opts, tol):
    """The certificate brackets L-BFGS's optimum (weak duality) and bounds the
    distance to it (strong convexity: ||w - w*||^2 <= 2 gap / lam)."""
    X, y = _regression()
    lam, eps = 1e-2, 0.4
    w_ref, p_ref = _lbfgs_reference(X, y, lam, eps)
    res = solve(X, y, loss=NAME, lam=lam, loss_params={"epsilon": eps}, solver=solver,
                tol=tol, **opts)
    assert res.converged and abs(res.gap) <= tol * abs(res.primal) + 1e-15
    assert res.dual <= p_ref + 1e-12 and res.primal >= p_ref - 1e-10
    gap = max(res.gap, 0.0) + 1e-13
    assert np.linalg.norm(res.coef - w_ref) <= np.sqrt(2.0 * gap / lam) + 1e-6
    if tol <= 1e-12:
        np.testing.assert_allclose(res.coef, w_ref, atol=1e-6)


def test_direct_newton_numpy_formulas_equal_the_compiled_loss():
    """The command line's numpy Newton (no compiled kernels) has the registry's
    default epsilon, and its own certificate equals the Problem's."""
    import primaldual.direct_newton as dn
    from primaldual.problem import Problem
    assert dn.PARAMS[NAME] == ("epsilon", make_loss(NAME).param)
    X, y = _regression(seed=4)
    res = dn.solve_direct(X, y, loss=NAME, lam=1e-2, tol=1e-12, param=0.3)
    prob = Problem(X, y, loss=NAME, lam=1e-2, loss_params={"epsilon": 0.3})
    assert res.converged and res.primal == pytest.approx(prob.primal(res.coef), rel=1e-13)
    assert res.dual == pytest.approx(prob.dual(res.dual_coef), rel=1e-13)
    w_ref, p_ref = _lbfgs_reference(X, y, 1e-2, 0.3)
    np.testing.assert_allclose(res.coef, w_ref, atol=1e-6)


def test_sparse_model_with_l1_matches_the_optimality_conditions():
    """l1 > 0 (the working-set proximal Newton): the certified gap is tight and
    the KKT conditions of ``P + l1 ||w||_1`` hold."""
    X, y = _regression(seed=1)
    lam, l1, eps = 1e-3, 0.5, 0.2
    res = solve(X, y, loss=NAME, lam=lam, l1=l1, loss_params={"epsilon": eps}, tol=1e-10)
    assert res.converged and res.rel_gap <= 1e-10
    w = res.coef
    r = X @ w - y
    grad = X.T @ (2.0 * np.sign(r) * np.maximum(np.abs(r) - eps, 0.0)) / X.shape[0] + lam * w
    on = w != 0
    assert 0 < on.sum() < w.size
    np.testing.assert_allclose(grad[on], -l1 * np.sign(w[on]), atol=1e-5)
    assert (np.abs(grad[~on]) <= l1 + 1e-5).all()


def test_estimator_equals_sklearn_linear_svr():
    """LinearRegressor(C=...) and scikit-learn's LinearSVR (LIBLINEAR -s 12 inside)."""
    from sklearn.svm import LinearSVR

    from primaldual import LinearRegressor
    X, y = _regression(seed=2)
    ours = LinearRegressor(loss=NAME, C=2.0, loss_params={"epsilon": 0.3},
                           fit_intercept=False, tol=1e-12).fit(X, y)
    ref = LinearSVR(loss=NAME, epsilon=0.3, C=2.0, fit_intercept=False, dual=True,
                    tol=1e-10, max_iter=100000).fit(X, y)
    np.testing.assert_allclose(ours.coef_, ref.coef_, rtol=1e-8, atol=1e-8)


# ------------------------------------------------------------------ LIBLINEAR
@pytest.fixture(scope="module")
def ll():
    return optional_import("liblinear.liblinearutil", "liblinear-official")


def _run(capsys, *args):
    code = cli.main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def _mse_lines(out):
    m = re.search(r"Mean squared error = (\S+) \(regression\)\n"
                  r"Squared correlation coefficient = (\S+) \(regression\)", out)
    assert m, out
    return float(m.group(1)), float(m.group(2))


@pytest.mark.parametrize("stype, flags", [(11, []), (12, ["-p", "0.1", "-c", "2"])])
def test_train_gives_liblinears_model_and_output_lines(ll, capsys, tmp_path, stype, flags):
    path = shared_file("housing_scale")
    model = tmp_path / "ours.model"
    code, out, err = _run(capsys, "train", "-s", stype, *flags, "-e", "1e-10", path, model)
    assert code == 0, err
    ours = read_liblinear(model)
    assert ours.solver_type.number == stype and ours.label is None
    y, x = ll.svm_read_problem(str(path), return_scipy=True)
    ref = ll.train(y, x, f"-s {stype} {' '.join(flags)} -e 1e-10 -q")
    w_ref = np.array([ref.w[j] for j in range(ours.nr_feature)])
    np.testing.assert_allclose(ours.w[:, 0], w_ref, rtol=1e-6, atol=1e-6)
    code, out, err = _run(capsys, "predict", path, model, tmp_path / "out.txt")
    assert code == 0, err
    _, (_, mse, scc), _ = ll.predict(y, x, ref, "-q")
    assert _mse_lines(out) == pytest.approx((mse, scc), rel=2e-6)


def test_model_files_move_both_ways(ll, capsys, tmp_path):
    path = shared_file("housing_scale")
    y, x = ll.svm_read_problem(str(path), return_scipy=True)
    theirs = tmp_path / "theirs.model"
    ll.save_model(str(theirs), ll.train(y, x, "-s 11 -B 1 -e 1e-8 -q"))
    pred_ll, _, _ = ll.predict(y, x, ll.load_model(str(theirs)), "-q")
    code, out, err = _run(capsys, "predict", path, theirs, tmp_path / "a.txt")
    assert code == 0, err
    np.testing.assert_allclose(np.loadtxt(tmp_path / "a.txt"), pred_ll, rtol=1e-12)
    ours = tmp_path / "ours.model"
    code, out, err = _run(capsys, "train", "-s", 11, "-B", 1, "-e", "1e-8", path, ours)
    assert code == 0, err
    code, out, err = _run(capsys, "predict", path, ours, tmp_path / "b.txt")
    pred_ours = np.loadtxt(tmp_path / "b.txt")
    pred_back, _, _ = ll.predict(y, x, ll.load_model(str(ours)), "-q")
    np.testing.assert_allclose(pred_back, pred_ours, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(pred_ours, pred_ll, rtol=1e-5, atol=1e-5)


def test_parameter_search_over_c_and_p(capsys, tmp_path):
    """``train -C -s 11``: LIBLINEAR's search of C (for each p of its grid, from
    ``-p`` down) ranked by the cross-validated mean squared error."""
    from sklearn.datasets import dump_svmlight_file
    X, y = _regression(n=40, d=3, seed=3)
    path = tmp_path / "reg.svm"
    dump_svmlight_file(X, y, str(path), zero_based=False)
    p = 2.5 * np.abs(y).max() / 20          # the grid 0, max|y|/20, 2 max|y|/20
    code, out, err = _run(capsys, "train", "-s", 11, "-C", "-v", 3, "-c", 0.25, "-p", p,
                          path)
    assert code == 0, err
    rows = re.findall(r"log2c=\s*(\S+)\tp=\s*(\S+)\tMean squared error=(\S+)", out)
    ps = sorted({float(r[1]) for r in rows})
    assert len(ps) == 3 and ps[0] == 0.0 and all(float(r[0]) >= -2 for r in rows)
    best = min(rows, key=lambda r: float(r[2]))
    last = out.strip().splitlines()[-1]
    m = re.fullmatch(r"Best C = (\S+) Best p = (\S+)  CV MSE = (\S+)", last)
    assert m and float(m.group(1)) == 2.0 ** float(best[0])
    assert float(m.group(3)) == pytest.approx(float(best[2]), rel=1e-5)
