"""``LinearClassifierCV(penalty=...)``: the L1 folds on the screened path.

The cross-validated choice and scores equal an independent loop of
``LinearClassifier(penalty="l1", C=c)`` fits over the same folds (each a
separate certified solve from zero), the refit equals a direct fit at ``C_``,
and bad penalty parameters are refused with a message naming them.
"""
import numpy as np
import pytest
from sklearn.datasets import make_classification
from sklearn.model_selection import StratifiedKFold

from primaldual import LinearClassifier, LinearClassifierCV, LinearRegressor, LinearRegressorCV
from primaldual.problem import Problem

KW = dict(loss="logistic", tol=1e-10, random_state=0)


def _data(n_classes):
    return make_classification(n_samples=150, n_features=20, n_informative=5,
                               n_classes=n_classes, random_state=n_classes)


@pytest.mark.parametrize("n_classes", [2, 3])
def test_l1_cv_equals_a_loop_of_independent_fits(n_classes):
    X, y = _data(n_classes)
    Cs = [0.03, 0.1, 0.3, 1.0]
    cv = StratifiedKFold(3)
    est = LinearClassifierCV(Cs=Cs[::-1], cv=cv, penalty="l1", **KW).fit(X, y)
    np.testing.assert_array_equal(est.Cs_, Cs)
    manual, coefs = [], []
    for tr, te in cv.split(X, y):
        fits = [LinearClassifier(penalty="l1", C=c, **KW).fit(X[tr], y[tr]) for c in Cs]
        manual.append([f.score(X[te], y[te]) for f in fits])
        coefs.append([f.coef_ for f in fits])
    np.testing.assert_array_equal(est.cv_scores_, manual)
    assert est.C_ == Cs[int(np.argmax(np.mean(manual, axis=0)))]
    assert est.cv_rel_gaps_.shape == (3, 4) and est.cv_rel_gaps_.max() <= 1e-10
    assert np.all(est.cv_gaps_ >= 0)
    ref = LinearClassifier(penalty="l1", C=est.C_, **KW).fit(X, y)
    np.testing.assert_allclose(est.coef_, ref.coef_, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(est.intercept_, ref.intercept_, rtol=1e-6, atol=1e-8)
    assert est.rel_gap_ is not None and np.all(np.asarray(est.rel_gap_) <= 1e-10)
    assert np.count_nonzero(est.coef_) < est.coef_.size        # a sparse model
    assert set(est.scores_) == set(est.classes_[1:] if n_classes == 2 else est.classes_)


def test_l1_cv_fold_models_are_the_certified_optima():
    """refit=False: coef_ is the mean over the folds of the path's models at the best
    C; each equals an independent solve, and its gap is recomputed by Problem."""
    X, y = _data(2)
    cv = StratifiedKFold(3)
    est = LinearClassifierCV(Cs=[0.1, 1.0], cv=cv, penalty="l1", refit=False,
                             **KW).fit(X, y)
    fits = [LinearClassifier(penalty="l1", C=est.C_, **KW).fit(X[tr], y[tr])
            for tr, _ in cv.split(X, y)]
    np.testing.assert_allclose(est.coef_, np.mean([f.coef_ for f in fits], axis=0),
                               rtol=1e-6, atol=1e-8)
    assert not hasattr(est, "dual_coef_")
    est.set_params(refit=True).fit(X, y)
    assert hasattr(est, "dual_coef_")
    est.set_params(refit=False).fit(X, y)         # nothing of the refit survives
    assert not hasattr(est, "dual_coef_") and not hasattr(est, "gap_")
    f = fits[0]
    tr = next(cv.split(X, y))[0]
    Xa = np.hstack([X[tr], np.ones((tr.size, 1))])
    prob = Problem(Xa, np.where(y[tr] == 1, 1.0, -1.0), loss="logistic", lam=0.0,
                   l1=1.0 / (est.C_ * tr.size))
    w = np.append(f.coef_.ravel(), f.intercept_[0])
    assert prob.primal(w) == pytest.approx(f.primal_, rel=1e-12)


def test_default_l1_grid_starts_where_w_is_zero_and_elasticnet_runs():
    X, y = _data(2)
    est = LinearClassifierCV(penalty="l1", n_alphas=4, eps=1e-2, cv=3, **KW).fit(X, y)
    # the grid starts at lam_max(penalty="l1") of all the data, where w = 0
    assert np.all(np.diff(est.alphas_) < 0) and est.alpha_ < est.alphas_[0]
    at_max = LinearClassifier(penalty="l1", alpha=est.alphas_[0], **KW).fit(X, y)
    assert not np.any(at_max.coef_) and at_max.intercept_[0] == 0
    en = LinearClassifierCV(penalty="elasticnet", l1_ratio=0.5, alphas=est.alphas_[1:],
                            cv=3, **KW).fit(X, y)
    ref = LinearClassifier(penalty="elasticnet", l1_ratio=0.5, alpha=en.alpha_,
                           **KW).fit(X, y)
    np.testing.assert_allclose(en.coef_, ref.coef_, rtol=1e-6, atol=1e-8)
    assert en.cv_rel_gaps_.max() <= 1e-10


def test_lasso_cv_equals_independent_fits():
    X, y = _data(2)
    y = X[:, :3] @ [1.0, -2.0, 0.5] + 0.1 * np.random.default_rng(0).normal(size=150)
    kw = dict(tol=1e-10, random_state=0)
    est = LinearRegressorCV(penalty="l1", alphas=[0.1, 0.03, 0.01], cv=3, **kw).fit(X, y)
    assert est.cv_rel_gaps_.max() <= 1e-10
    ref = LinearRegressor(penalty="l1", alpha=est.alpha_, **kw).fit(X, y)
    np.testing.assert_allclose(est.coef_, ref.coef_, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("params, match", [
    (dict(penalty="elasticnet"), "l1_ratio"),
    (dict(penalty="elasticnet", l1_ratio=1.5), "l1_ratio"),
    (dict(penalty="elasticnet", l1_ratio=-0.1), "l1_ratio"),
    (dict(penalty="l3"), "penalty"),
    (dict(penalty="l1", l1=0.1), "l1=0"),
    (dict(Cs=[1.0], alphas=[1.0]), "alphas or Cs"),
    (dict(Cs=[1.0, -1.0]), "Cs must be"),
    (dict(refit="yes"), "refit"),
])
def test_bad_penalty_parameters_are_refused(params, match):
    X, y = _data(2)
    with pytest.raises(ValueError, match=match):
        LinearClassifierCV(cv=2, **params).fit(X, y)


def test_l1_cv_with_weights_equals_the_weighted_loop():
    """Sample weights (some 0) and class_weight="balanced": each fold's problem
    is weighted as LinearClassifier weighs it on that fold, and the held-out
    scores use the objective's weights."""
    from primaldual.fitdata import combined_weights
    X, y = _data(3)
    sw = np.random.default_rng(1).uniform(0.5, 2.0, size=y.size)
    sw[::17] = 0.0
    Cs = [0.1, 1.0]
    cv = StratifiedKFold(3)
    kw = dict(KW, class_weight="balanced")
    est = LinearClassifierCV(Cs=Cs, cv=cv, penalty="l1", **kw).fit(X, y, sample_weight=sw)
    c = combined_weights(y, np.unique(y), sw, "balanced")
    manual = [[LinearClassifier(penalty="l1", C=C, **kw).fit(X[tr], y[tr], sample_weight=sw[tr])
               .score(X[te], y[te], sample_weight=c[te]) for C in Cs]
              for tr, te in cv.split(X, y)]
    np.testing.assert_allclose(est.cv_scores_, manual, rtol=1e-12)
    ref = LinearClassifier(penalty="l1", C=est.C_, **kw).fit(X, y, sample_weight=sw)
    np.testing.assert_allclose(est.coef_, ref.coef_, rtol=1e-6, atol=1e-8)


def test_l2_cv_with_cs_reports_every_fits_gap():
    X, y = _data(2)
    cv = StratifiedKFold(3)
    est = LinearClassifierCV(Cs=[0.1, 1.0], cv=cv, **KW).fit(X, y)
    manual = [[LinearClassifier(C=C, **KW).fit(X[tr], y[tr]).score(X[te], y[te])
               for C in (0.1, 1.0)] for tr, te in cv.split(X, y)]
    np.testing.assert_array_equal(est.cv_scores_, manual)
    assert est.cv_rel_gaps_.shape == (3, 2) and est.cv_rel_gaps_.max() <= 1e-10
    np.testing.assert_allclose(est.alphas_, 1.0 / (est.Cs_ * y.size))


def test_l2_penalty_with_an_l1_term_runs_on_the_sparse_solver():
    """penalty="l2" plus l1 > 0 (the elastic net spelled with l1) goes to the sparse
    solver, warm-started from the previous coef (a dual warm start would not fit it)."""
    X, y = _data(2)
    est = LinearClassifierCV(l1=0.01, alphas=[0.1, 0.01], cv=3, **KW).fit(X, y)
    ref = LinearClassifier(l1=0.01, alpha=est.alpha_, **KW).fit(X, y)
    assert ref.solver_ == "l1cd" and est.cv_rel_gaps_.max() <= 1e-10
    np.testing.assert_allclose(est.coef_, ref.coef_, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("n_classes,refit", [(2, False), (3, True)])
def test_l1_cv_folds_on_threads_equal_the_serial_folds(monkeypatch, n_classes, refit):
    """n_jobs=2 on the sparse route: with the trial told to keep the threads, the
    folds after the first run two at a time (cv_n_jobs_plan_), and every score, gap
    and model is bitwise the serial one; told to refuse them, they run serially."""
    from primaldual.solvers import ovr
    X, y = _data(n_classes)
    kw = dict(Cs=[0.1, 0.3, 1.0], cv=StratifiedKFold(5), penalty="l1", refit=refit, **KW)
    one = LinearClassifierCV(**kw).fit(X, y)
    assert one.cv_n_jobs_plan_["workers"] == 1
    monkeypatch.setattr(ovr, "MIN_PROBLEM_S", 0.0)
    monkeypatch.setattr(ovr, "KEEP_SPEEDUP", 0.0)
    two = LinearClassifierCV(n_jobs=2, **kw).fit(X, y)
    assert two.cv_n_jobs_plan_["workers"] == 2, two.cv_n_jobs_plan_
    assert two.cv_n_jobs_plan_["reason"].startswith("threads")
    for name in ("cv_scores_", "cv_gaps_", "cv_rel_gaps_", "coef_", "intercept_"):
        np.testing.assert_array_equal(getattr(two, name), getattr(one, name), err_msg=name)
    assert two.C_ == one.C_
    monkeypatch.setattr(ovr, "KEEP_SPEEDUP", np.inf)
    refused = LinearClassifierCV(n_jobs=2, **kw).fit(X, y)
    assert refused.cv_n_jobs_plan_["workers"] == 1
    assert "serial" in refused.cv_n_jobs_plan_["reason"]
    np.testing.assert_array_equal(refused.cv_scores_, one.cv_scores_)
