"""lam_max, the warm-started path and the cross-validated estimators."""
import warnings

import numpy as np
import pytest
from sklearn.model_selection import KFold, StratifiedKFold

from conftest import load_binary, make_classification_data, make_regression_data
from primaldual import (LinearClassifier, LinearClassifierCV, LinearRegressor,
                        LinearRegressorCV, Problem, lam_max, path)
import primaldual
from primaldual.regpath import lam_grid


def test_lam_max_l1_is_exact_breakpoint():
    X, y = make_classification_data(n=150, d=20, seed=4)
    for loss in ("logistic", "squared_hinge", "hinge"):
        lmax = lam_max(X, y, loss, penalty="l1")
        # at l1 = lam_max, w = 0 with alpha0 = -phi'(0) has zero gap for any lam
        prob = Problem(X, y, loss=loss, lam=0.3, l1=lmax)
        alpha0 = prob.dual_from_primal(np.zeros(20))
        assert abs(prob.gap(np.zeros(20), alpha0)) <= 1e-14
        # just below it the same pair is no longer optimal
        prob2 = Problem(X, y, loss=loss, lam=0.3, l1=lmax * (1 - 1e-3))
        assert prob2.gap(np.zeros(20), alpha0) > 0


def test_lam_max_l2_hinge_solution_is_closed_form_above_it():
    X, y = load_binary("heart_scale")
    lmax = lam_max(X, y, "hinge", fit_intercept=True)
    from primaldual.estimators import add_intercept_column
    Xa = add_intercept_column(X, 1.0)
    for lam in (lmax, 3 * lmax):
        prob = Problem(Xa, y, loss="hinge", lam=lam)
        alpha0 = y.copy()                                  # every alpha_i at its bound
        w = prob.w_of(alpha0)                              # = g / lam
        assert prob.gap(w, alpha0) <= 1e-14 * prob.primal(w)   # exactly optimal
    # well below lam_max the closed form is not optimal any more
    prob = Problem(Xa, y, loss="hinge", lam=lmax / 100)
    assert prob.gap(prob.w_of(y), y) > 1e-3


def test_lam_max_errors():
    X, y = make_regression_data(n=30, d=4)
    with pytest.raises(ValueError, match="lam_max is 0"):
        lam_max(X, np.zeros(30), "squared")
    with pytest.raises(ValueError, match="penalty must be"):
        lam_max(X, y, "squared", penalty="l3")
    with pytest.raises(ValueError, match="eps must be in"):
        lam_grid(1.0, 5, eps=2.0)


def test_path_grid_and_warm_start_saves_epochs():
    X, y = load_binary("a9a", n_features=123, max_rows=2000)
    kw = dict(loss="logistic", n_lams=20, eps=1e-4, tol=1e-8, max_epochs=2000,
              random_state=0, solver="sdca")
    warm = path(X, y, **kw)
    cold = path(X, y, warm_start=False, **kw)
    lmax = lam_max(X, y, "logistic")
    np.testing.assert_allclose(warm.lams, lmax * np.geomspace(1, 1e-4, 20))
    assert warm.coefs.shape == (20, 123) and warm.dual_coefs.shape == (20, 2000)
    assert warm.converged.all() and cold.converged.all()
    # same optima (both certified to 1e-8 relative gap)
    np.testing.assert_allclose(warm.primal, cold.primal, rtol=2e-8)
    assert warm.total_epochs < 0.8 * cold.total_epochs, (warm.total_epochs,
                                                         cold.total_epochs)
    # every point's certificate is exact for what is stored
    prob = Problem(X, y, loss="logistic", lam=warm.lams[7])
    assert prob.primal(warm.coefs[7]) == pytest.approx(warm.primal[7], rel=1e-12)
    assert prob.dual(warm.dual_coefs[7]) == pytest.approx(warm.dual[7], rel=1e-12)


def test_path_with_intercept_and_given_lams():
    X, y = make_regression_data(n=100, d=6, seed=3)
    res = path(X, y, lams=[1.0, 0.1, 0.01], loss="squared", fit_intercept=True,
               intercept_scaling=2.0, tol=1e-10, max_epochs=5000, random_state=0)
    for k, lam in enumerate([1.0, 0.1, 0.01]):
        est = LinearRegressor(alpha=lam, intercept_scaling=2.0, tol=1e-10, max_iter=5000,
                              random_state=0).fit(X, y)
        np.testing.assert_allclose(res.coefs[k], est.coef_, rtol=1e-4, atol=1e-6)
        assert res.intercepts[k] == pytest.approx(est.intercept_, rel=1e-4, abs=1e-6)
    with pytest.raises(ValueError, match="lams must be"):
        path(X, y, lams=[1.0, -1.0], loss="squared")


def test_classifier_cv_matches_manual_cross_validation():
    X, y = make_classification_data(n=160, d=10, seed=8)
    labels = np.where(y > 0, "b", "a")
    kw = dict(loss="logistic", tol=1e-10, max_iter=3000, random_state=0)
    cv = StratifiedKFold(3)
    est = LinearClassifierCV(n_alphas=5, eps=1e-3, cv=cv, **kw).fit(X, labels)
    assert est.alphas_.shape == (5,) and np.all(np.diff(est.alphas_) < 0)
    assert est.cv_scores_.shape == (3, 5)
    manual = np.array([[LinearClassifier(alpha=a, **kw).fit(X[tr], labels[tr])
                        .score(X[te], labels[te]) for a in est.alphas_]
                       for tr, te in cv.split(X, labels)])
    np.testing.assert_allclose(est.cv_scores_, manual)
    assert est.alpha_ == est.alphas_[np.argmax(manual.mean(axis=0))]
    ref = LinearClassifier(alpha=est.alpha_, **kw).fit(X, labels)
    np.testing.assert_allclose(est.coef_, ref.coef_, rtol=1e-12)
    np.testing.assert_array_equal(est.predict(X), ref.predict(X))
    assert est.predict_proba(X).shape == (160, 2)


def test_regressor_cv_picks_sensible_alpha():
    X, y = make_regression_data(n=200, d=10, seed=9)
    est = LinearRegressorCV(n_alphas=6, eps=1e-5, cv=KFold(4), tol=1e-10, max_iter=3000,
                            random_state=0).fit(X, y)
    assert est.cv_scores_.shape == (4, 6)
    # the data are nearly noiseless: the smallest alphas fit best
    assert est.alpha_ <= est.alphas_[3] and est.score(X, y) > 0.95
    assert est.alpha_ in est.alphas_


def test_cv_reports_unconverged_fits_once():
    X, y = load_binary("a9a", n_features=123, max_rows=1000)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        LinearClassifierCV(n_alphas=3, eps=1e-3, cv=2, tol=1e-12, max_iter=1,
                           random_state=0).fit(X, y)
    msgs = [str(w.message) for w in caught if "cross-validation path" in str(w.message)]
    assert len(msgs) == 1 and "of 6 fits" in msgs[0]


def test_primaldual_path_is_the_function():
    import primaldual.regpath as module
    assert primaldual.path is module.path and callable(primaldual.path)
