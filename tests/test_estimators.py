"""LinearClassifier / LinearRegressor: parity with LIBLINEAR (scikit-learn) on
the same objective, weights, warm starts, one-vs-rest and warnings.

Parity: our objective is ``(1/n) sum loss + alpha/2 ||w||^2`` with the
intercept a regularized constant feature; LIBLINEAR minimizes
``1/2 ||w||^2 + C sum loss`` with the same intercept handling, so
``C = 1/(alpha n)``.  Both coefficient vectors are evaluated on OUR objective
with ``primaldual.Problem`` on the augmented data; LIBLINEAR runs with a tiny
tol and a large max_iter.
"""
import warnings

import primaldual

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression, Ridge
from sklearn.multiclass import OneVsRestClassifier
from sklearn.svm import LinearSVC, LinearSVR

from conftest import load_binary, make_classification_data, make_regression_data
from primaldual import LinearClassifier, LinearRegressor, Problem
from primaldual.fitdata import add_intercept_column

TIGHT = dict(tol=1e-12, max_iter=100000, random_state=0)


def _objective(X, y, loss, alpha, coef, intercept, scaling=1.0, loss_params=None):
    Xa = add_intercept_column(X, scaling)
    w = np.r_[np.ravel(coef), np.ravel(intercept) / scaling]
    return Problem(Xa, y, loss=loss, lam=alpha, loss_params=loss_params).primal(w)


def _liblinear(make):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)   # LIBLINEAR may warn at tol=1e-10 (below 1e-10 its shrinking stalls)
        return make()


DATASETS = [("heart_scale", None, None, 1e-2), ("a9a", 123, 1000, 1e-3),
            ("mushrooms", None, 600, 1e-3)]


@pytest.mark.parametrize("name,nf,rows,alpha", DATASETS)
@pytest.mark.parametrize("loss", ["hinge", "squared_hinge", "logistic"])
def test_classifier_parity_with_liblinear(name, nf, rows, alpha, loss):
    X, y = load_binary(name, n_features=nf, max_rows=rows)
    n = X.shape[0]
    C = 1.0 / (alpha * n)
    scaling = 2.0 if name == "heart_scale" else 1.0
    if loss == "logistic":
        ref = LogisticRegression(solver="liblinear", C=C, tol=1e-10, max_iter=100000,
                                 intercept_scaling=scaling)
    else:
        ref = LinearSVC(loss=loss, dual=True, C=C, tol=1e-10, max_iter=1000000,
                        intercept_scaling=scaling)
    ref = _liblinear(lambda: ref.fit(X, y))
    ours = LinearClassifier(loss=loss, alpha=alpha, intercept_scaling=scaling,
                            **TIGHT).fit(X, y)
    assert ours.converged_ and ours.rel_gap_ <= 1e-12
    assert ours.coef_.shape == (1, X.shape[1]) and ours.intercept_.shape == (1,)
    p_ours = _objective(X, y, loss, alpha, ours.coef_, ours.intercept_, scaling)
    p_ref = _objective(X, y, loss, alpha, ref.coef_, ref.intercept_, scaling)
    assert abs(p_ours - p_ref) <= 1e-7 * p_ref
    # our certificate: the dual value bounds both from below
    assert p_ref >= p_ours - ours.gap_ - 1e-12
    np.testing.assert_array_equal(ours.predict(X), ref.predict(X))


def _regression_data():
    """heart_scale: predict the first (scaled age) column from the other 12."""
    X, _ = load_binary("heart_scale")
    X = X.toarray()
    return np.ascontiguousarray(X[:, 1:]), X[:, 0].copy()


def test_ridge_parity():
    X, y = _regression_data()
    n, alpha = X.shape[0], 1e-2
    ours = LinearRegressor(loss="squared", alpha=alpha, **TIGHT).fit(X, y)
    # Ridge does not penalize its intercept: give it our regularized constant column
    Xa = add_intercept_column(X, 1.0)
    ref = Ridge(alpha=alpha * n, fit_intercept=False, solver="cholesky").fit(Xa, y)
    p_ours = _objective(X, y, "squared", alpha, ours.coef_, ours.intercept_)
    p_ref = _objective(X, y, "squared", alpha, ref.coef_[:-1], ref.coef_[-1])
    assert abs(p_ours - p_ref) <= 1e-7 * p_ref
    np.testing.assert_allclose(np.r_[ours.coef_, ours.intercept_], ref.coef_, atol=1e-5)
    # without intercept it is exactly Ridge(alpha * n)
    ours0 = LinearRegressor(loss="squared", alpha=alpha, fit_intercept=False,
                            **TIGHT).fit(X, y)
    ref0 = Ridge(alpha=alpha * n, fit_intercept=False, solver="cholesky").fit(X, y)
    assert ours0.intercept_ == 0.0
    p0 = Problem(X, y, loss="squared", lam=alpha)
    assert abs(p0.primal(ours0.coef_) - p0.primal(ref0.coef_)) <= 1e-7 * p0.primal(ref0.coef_)
    np.testing.assert_allclose(ours0.predict(X), ref0.predict(X), rtol=0, atol=1e-5)


def test_linear_svr_parity():
    X, y = _regression_data()
    n, alpha, eps = X.shape[0], 1e-2, 0.1
    ours = LinearRegressor(loss="epsilon_insensitive", loss_params={"epsilon": eps},
                           alpha=alpha, **TIGHT).fit(X, y)
    ref = _liblinear(lambda: LinearSVR(loss="epsilon_insensitive", epsilon=eps, dual=True,
                                       C=1.0 / (alpha * n), tol=1e-10,
                                       max_iter=1000000).fit(X, y))
    lp = {"epsilon": eps}
    p_ours = _objective(X, y, "epsilon_insensitive", alpha, ours.coef_, ours.intercept_,
                        loss_params=lp)
    p_ref = _objective(X, y, "epsilon_insensitive", alpha, ref.coef_, ref.intercept_,
                       loss_params=lp)
    assert abs(p_ours - p_ref) <= 1e-7 * p_ref
    np.testing.assert_allclose(ours.predict(X), ref.predict(X), rtol=0, atol=1e-4)


def test_multiclass_ovr_matches_liblinear_and_is_thread_deterministic():
    from sklearn.datasets import load_iris
    X, y = load_iris(return_X_y=True)
    labels = np.array(["setosa", "versicolor", "virginica"])[y]
    alpha, n = 1e-2, X.shape[0]
    one = LinearClassifier(loss="squared_hinge", alpha=alpha, n_jobs=1, **TIGHT).fit(X, labels)
    par = LinearClassifier(loss="squared_hinge", alpha=alpha, n_jobs=3, **TIGHT).fit(X, labels)
    np.testing.assert_array_equal(one.coef_, par.coef_)     # threads change nothing
    assert one.coef_.shape == (3, 4) and one.dual_coef_.shape == (3, n)
    ref = _liblinear(lambda: LinearSVC(C=1 / (alpha * n), tol=1e-10, max_iter=1000000,
                                       dual=True).fit(X, labels))
    for k, cls in enumerate(one.classes_):
        yk = np.where(labels == cls, 1.0, -1.0)
        pk = _objective(X, yk, "squared_hinge", alpha, one.coef_[k], one.intercept_[k])
        rk = _objective(X, yk, "squared_hinge", alpha, ref.coef_[k], ref.intercept_[k])
        assert abs(pk - rk) <= 1e-7 * rk
    np.testing.assert_array_equal(one.predict(X), ref.predict(X))


def test_binary_label_mapping_and_strings():
    X, y = make_classification_data(n=120, d=10, seed=3)
    labels = np.where(y > 0, "spam", "ham")          # classes_ = [ham, spam]
    clf = LinearClassifier(alpha=1e-2, **TIGHT).fit(X, labels)
    assert list(clf.classes_) == ["ham", "spam"]
    s = clf.decision_function(X)
    np.testing.assert_array_equal(clf.predict(X), np.where(s > 0, "spam", "ham"))
    # identical to fitting the -1/+1 problem directly (larger label is +1)
    clf_pm = LinearClassifier(alpha=1e-2, **TIGHT).fit(X, y)
    np.testing.assert_array_equal(clf.coef_, clf_pm.coef_)


def test_predict_proba_logistic_only():
    from sklearn.datasets import load_iris
    X, y = load_iris(return_X_y=True)
    alpha, n = 1e-2, X.shape[0]
    clf = LinearClassifier(loss="logistic", alpha=alpha, **TIGHT).fit(X, y)
    ref = _liblinear(lambda: OneVsRestClassifier(LogisticRegression(
        solver="liblinear", C=1 / (alpha * n), tol=1e-10, max_iter=100000)).fit(X, y))
    np.testing.assert_allclose(clf.predict_proba(X), ref.predict_proba(X), atol=1e-6)
    np.testing.assert_allclose(clf.predict_proba(X).sum(axis=1), 1.0)
    np.testing.assert_allclose(clf.predict_log_proba(X), np.log(clf.predict_proba(X)))
    hinge = LinearClassifier(loss="hinge", alpha=alpha).fit(X, y)
    assert not hasattr(hinge, "predict_proba")
    assert not hasattr(hinge, "predict_log_proba")
    # an AttributeError (for hasattr) whose message names the loss that gives them
    with pytest.raises(primaldual.estimators.NoProbabilityError,
                       match=r"predict_proba needs a loss that models probabilities: "
                             r"loss='logistic'; this LinearClassifier has loss='hinge'"):
        hinge.predict_proba(X)
    assert issubclass(primaldual.estimators.NoProbabilityError, AttributeError)


def test_integer_weights_equal_repeated_rows_and_zero_weights_drop_rows():
    X, y = make_classification_data(n=80, d=12, seed=5)
    rng = np.random.default_rng(0)
    sw = rng.integers(0, 4, size=80).astype(float)
    weighted = LinearClassifier(loss="logistic", alpha=1e-2, **TIGHT).fit(X, y, sample_weight=sw)
    rep = np.repeat(np.arange(80), sw.astype(int))
    repeated = LinearClassifier(loss="logistic", alpha=1e-2, **TIGHT).fit(X[rep], y[rep])
    # same objective: both certified optima agree to the certified gaps
    Xa, keep = add_intercept_column(X, 1.0), sw > 0
    prob = Problem(Xa[keep], y[keep], loss="logistic", lam=1e-2, sample_weight=sw[keep])
    pw = prob.primal(np.r_[weighted.coef_[0], weighted.intercept_])
    pr = prob.primal(np.r_[repeated.coef_[0], repeated.intercept_])
    assert abs(pw - pr) <= 2e-12 * pw
    assert np.all(weighted.dual_coef_[0][~keep] == 0.0)
    # zero weights are the same as removing the rows: identical runs
    dropped = LinearClassifier(loss="logistic", alpha=1e-2, **TIGHT).fit(
        X[keep], y[keep], sample_weight=sw[keep])
    np.testing.assert_array_equal(weighted.coef_, dropped.coef_)


def test_class_weight_balanced_equals_sample_weights():
    X, y = make_classification_data(n=150, d=10, seed=7)
    y[:40] = -1.0                                      # unbalanced
    a = LinearClassifier(alpha=1e-2, class_weight="balanced", **TIGHT).fit(X, y)
    n_pos, n_neg = (y > 0).sum(), (y < 0).sum()
    cw = {1.0: len(y) / (2 * n_pos), -1.0: len(y) / (2 * n_neg)}
    b = LinearClassifier(alpha=1e-2, class_weight=cw, **TIGHT).fit(X, y)
    c = LinearClassifier(alpha=1e-2, **TIGHT).fit(X, y, sample_weight=np.vectorize(cw.get)(y))
    np.testing.assert_allclose(a.coef_, b.coef_, rtol=1e-12)
    np.testing.assert_allclose(a.coef_, c.coef_, rtol=1e-12)


# Smooth losses: SDCA converges linearly and the warm start saves the early
# epochs.  (For hinge at tol=1e-8 the run is dominated by SDCA's slow
# non-smooth tail, so the start matters little; the path benchmark measures it
# at a practical tol.)
@pytest.mark.parametrize("loss", ["squared_hinge", "logistic", "squared"])
def test_warm_start_fewer_epochs_same_optimum(loss):
    X, y = load_binary("a9a", n_features=123, max_rows=2000)
    Est = LinearRegressor if loss == "squared" else LinearClassifier
    # SDCA pinned: auto picks Newton here for some losses, which solves the
    # squared loss in one step from any start
    kw = dict(loss=loss, tol=1e-8, max_iter=5000, random_state=0, solver="sdca")
    warm = Est(alpha=1e-3, warm_start=True, **kw).fit(X, y)
    warm.set_params(alpha=5e-4).fit(X, y)
    cold = Est(alpha=5e-4, **kw).fit(X, y)
    assert np.all(warm.n_iter_ < cold.n_iter_), (warm.n_iter_, cold.n_iter_)
    assert np.all(warm.converged_) and np.all(cold.converged_)
    Xa = add_intercept_column(X, 1.0)
    prob = Problem(Xa, y, loss=loss, lam=5e-4)
    pw = prob.primal(np.r_[np.ravel(warm.coef_), warm.intercept_])
    pc = prob.primal(np.r_[np.ravel(cold.coef_), cold.intercept_])
    assert abs(pw - pc) <= 2e-8 * pc


def test_warm_start_with_new_sample_weights_is_feasible():
    X, y = make_classification_data(n=100, d=8, seed=2)
    clf = LinearClassifier(loss="hinge", alpha=1e-2, warm_start=True, **TIGHT).fit(X, y)
    sw = np.linspace(0.5, 2.0, 100)
    clf.fit(X, y, sample_weight=sw)           # previous alpha reused as is
    cold = LinearClassifier(loss="hinge", alpha=1e-2, **TIGHT).fit(X, y, sample_weight=sw)
    prob = Problem(add_intercept_column(X, 1.0), y, loss="hinge", lam=1e-2, sample_weight=sw)
    pw = prob.primal(np.r_[clf.coef_[0], clf.intercept_])
    pc = prob.primal(np.r_[cold.coef_[0], cold.intercept_])
    assert clf.converged_ and abs(pw - pc) <= 2e-12 * pc
    with pytest.raises(ValueError, match="same training rows"):
        clf.fit(X[:50], y[:50])


@pytest.mark.parametrize("loss", ["logistic", "squared_hinge"])
def test_warm_start_of_an_l1_model_starts_from_its_coefficients(loss):
    """A pure L1 model has no ``w(alpha)``: refitted with warm_start=True it
    was handed its ``dual_coef_`` alone, which l1cd refuses (unless n = d).
    The warm start now carries the coefficients too; the refit is certified at
    the new C and its objective equals a cold fit's."""
    X, y = make_classification_data(n=120, d=20, seed=4)
    kw = dict(loss=loss, penalty="l1", tol=1e-10, random_state=0)
    warm = LinearClassifier(C=0.5, warm_start=True, **kw).fit(X, y)
    warm.set_params(C=2.0).fit(X, y)
    cold = LinearClassifier(C=2.0, **kw).fit(X, y)
    assert warm.converged_ and cold.converged_
    Xa = add_intercept_column(X, 1.0)
    prob = Problem(Xa, y, loss=loss, lam=0.0, l1=1.0 / (2.0 * X.shape[0]))
    pw = prob.primal(np.r_[warm.coef_[0], warm.intercept_])
    pc = prob.primal(np.r_[cold.coef_[0], cold.intercept_])
    assert abs(pw - pc) <= 1e-9 * pc


def test_convergence_warning_states_gap_and_tol():
    X, y = load_binary("a9a", n_features=123, max_rows=2000)
    with pytest.warns(ConvergenceWarning, match=r"relative duality gap \d\.\d+e[-+]\d+ > "
                                                r"target tol=1e-12 after 2 epochs"):
        clf = LinearClassifier(loss="hinge", alpha=1e-5, tol=1e-12, max_iter=2, random_state=0).fit(X, y)
    assert not clf.converged_ and clf.n_iter_[0] == 2
    assert clf.rel_gap_ > 1e-12 and clf.gap_ > 0


def test_sparse_intercept_column_stays_sparse_and_dense_agrees():
    X, y = make_regression_data(n=120, d=15, seed=1)
    Xa = add_intercept_column(X, 3.0)
    assert sp.issparse(Xa) and Xa.format == "csr" and Xa.nnz == X.nnz + X.shape[0]
    np.testing.assert_array_equal(Xa.toarray()[:, -1], 3.0)
    # the same iterates on both: checks at fixed epochs (the adaptive schedule
    # reads the gaps, whose last bits differ between dense and sparse sums)
    kw = dict(alpha=1e-2, intercept_scaling=3.0, solver="sdca",
              solver_options={"check_every": 1}, **TIGHT)
    s = LinearRegressor(**kw).fit(X, y)
    d = LinearRegressor(**kw).fit(X.toarray(), y)
    np.testing.assert_allclose(s.coef_, d.coef_, rtol=1e-9, atol=1e-12)
    # a dual method's coef is w(dual_coef); intercept_ = intercept_scaling * w_last
    np.testing.assert_allclose(s.intercept_, 3.0 * s.dual_coef_ @ (np.full(120, 3.0))
                               / (1e-2 * 120), rtol=1e-9)


def test_bad_parameters_are_clear_errors():
    X, y = make_classification_data(n=40, d=5)
    with pytest.raises(ValueError, match="needs loss in hinge"):
        LinearClassifier(loss="squared").fit(X, y)
    with pytest.raises(ValueError, match="needs loss in squared"):
        LinearRegressor(loss="hinge").fit(X, y)
    with pytest.raises(ValueError, match="only one class"):
        LinearClassifier().fit(X, np.ones(40))
    with pytest.raises(ValueError, match="solver_options must not contain"):
        LinearClassifier(solver_options={"tol": 1}).fit(X, y)
    with pytest.raises(ValueError, match="unknown option"):
        LinearClassifier(solver_options={"bogus": 1}).fit(X, y)
    with pytest.raises(ValueError, match="intercept_scaling must be"):
        LinearClassifier(intercept_scaling=0).fit(X, y)
    with pytest.raises(ValueError, match="only one class remains"):
        LinearClassifier().fit(X, y, sample_weight=(y > 0).astype(float))


def test_binary_model_reports_scalars_and_multiclass_arrays():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((90, 4))
    y2 = np.where(X[:, 0] > 0, 8, 3)
    clf = primaldual.LinearClassifier(loss="logistic", alpha=1e-2).fit(X, y2)
    assert isinstance(clf.gap_, float) and isinstance(clf.rel_gap_, float)
    assert isinstance(clf.converged_, bool) and clf.converged_
    y3 = np.digitize(X[:, 0], [-0.5, 0.5])
    clf3 = primaldual.LinearClassifier(loss="logistic", alpha=1e-2).fit(X, y3)
    assert clf3.gap_.shape == (3,) and clf3.converged_.shape == (3,)


def test_messages_carry_no_numpy_reprs():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((60, 3))
    y = np.digitize(X[:, 0], [-0.5, 0.5]).astype(np.int64) + 6
    with pytest.warns(ConvergenceWarning) as rec:
        primaldual.LinearClassifier(loss="hinge", alpha=1e-6, max_iter=1,
                                    solver="sdca").fit(X, y)
    msg = str(rec[0].message)
    assert "worst: class " in msg and "np." not in msg
    with pytest.raises(ValueError) as e:
        primaldual.LinearClassifier().fit(X, np.full(60, np.int64(8)))
    assert "np." not in str(e.value) and "8" in str(e.value)


@pytest.mark.parametrize("name,points_to", [("C", "lam"), ("max_iter", "max_epochs"),
                                            ("alpha", "lam")])
def test_solve_points_estimator_names_to_its_own(name, points_to):
    X = np.eye(4)
    y = np.array([1.0, -1.0, 1.0, -1.0])
    with pytest.raises(ValueError, match=f"takes {points_to}"):
        primaldual.solve(X, y, **{name: 5})


def test_convergence_warning_names_the_scale_spread_and_its_remedy():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((300, 3)) * np.array([1.0, 1e4, 1e-2])
    y = np.where(X[:, 0] + 0.3 * rng.standard_normal(300) > 0, 1, -1)
    with pytest.warns(ConvergenceWarning) as rec:
        primaldual.LinearClassifier(loss="hinge", max_iter=2, solver="sdca").fit(X, y)
    msg = str(rec[0].message)
    assert "scales differ" in msg and "StandardScaler" in msg and "never rescales" in msg
    # scaled data: the warning (if any) does not blame the scales, and nothing is rescaled
    Xs = X / np.abs(X).max(0)
    with warnings.catch_warnings(record=True) as rec2:
        warnings.simplefilter("always")
        primaldual.LinearClassifier(loss="hinge", max_iter=2, solver="sdca").fit(Xs, y)
    assert all("scales differ" not in str(w.message) for w in rec2)


# ------------------------------------------------------- the default strength
def test_default_alpha_is_one_over_the_total_weight():
    X, y = make_classification_data(n=120, d=6, seed=3)
    assert LinearClassifier().alpha is None and LinearRegressor().alpha is None
    est = LinearClassifier(loss="squared_hinge", random_state=0).fit(X, y)
    assert est.lam_ == 1.0 / X.shape[0]
    sw = np.random.default_rng(0).uniform(0.5, 2.0, X.shape[0])
    sw[:5] = 0.0                                    # zero weights are removed
    est = LinearClassifier(loss="squared_hinge", random_state=0).fit(X, y, sample_weight=sw)
    assert est.lam_ == pytest.approx(1.0 / sw.sum(), rel=1e-12)
    fixed = LinearClassifier(loss="squared_hinge", alpha=0.25, random_state=0).fit(X, y)
    assert fixed.lam_ == 0.25
    Xr, yr = make_regression_data(n=80, d=4, seed=1)
    assert LinearRegressor(random_state=0).fit(Xr, yr).lam_ == 1.0 / Xr.shape[0]


@pytest.mark.parametrize("loss", ["hinge", "squared_hinge"])
def test_default_fit_solves_the_problem_of_linearsvc_defaults(loss):
    # alpha=None is LIBLINEAR's C = 1: our default fit and LinearSVC(C=1) solved
    # tightly reach the same objective value, certified by our gap at lam = 1/n
    X, y = make_classification_data(n=150, d=5, seed=7)
    n = X.shape[0]
    ours = LinearClassifier(loss=loss, tol=1e-10, random_state=0).fit(X, y)
    ref = _liblinear(lambda: LinearSVC(loss=loss, C=1.0, tol=1e-10,
                                       max_iter=1000000).fit(X, y))
    p_ours = _objective(X, y, loss, 1.0 / n, ours.coef_, ours.intercept_)
    p_ref = _objective(X, y, loss, 1.0 / n, ref.coef_, ref.intercept_)
    assert ours.converged_
    assert p_ref >= p_ours - ours.gap_ - 1e-12
    assert abs(p_ours - p_ref) <= 1e-6 * p_ref


def test_default_alpha_with_class_weight_counts_the_combined_weights():
    X, y = make_classification_data(n=100, d=4, seed=5)
    est = LinearClassifier(loss="logistic", class_weight={-1: 2.0, 1: 1.0},
                           random_state=0).fit(X, y)
    labels = np.asarray(y)
    W = float(np.sum(np.where(labels == est.classes_[0], 2.0, 1.0)))
    assert est.lam_ == pytest.approx(1.0 / W, rel=1e-12)


# ------------------------------------------------- scikit-learn conventions
def test_default_loss_is_the_squared_hinge_of_linearsvc():
    assert LinearClassifier().loss == "squared_hinge" == LinearSVC().loss
    assert primaldual.LinearClassifierCV().loss == "squared_hinge"


@pytest.mark.parametrize("C", [0.01, 1.0, 100.0])
def test_C_is_liblinear_c_on_the_same_problem(C):
    """``C`` is LinearSVC's: lam = 1/(C W); the certified optimum of ours and
    LinearSVC(C) tightly solved reach the same objective value."""
    X, y = make_classification_data(n=150, d=5, seed=7)
    sw = np.random.default_rng(1).uniform(0.5, 2.0, X.shape[0])
    ours = LinearClassifier(C=C, tol=1e-10, random_state=0).fit(X, y, sample_weight=sw)
    assert ours.lam_ == pytest.approx(1.0 / (C * sw.sum()), rel=1e-14)
    assert ours.alpha is None and ours.converged_
    ref = _liblinear(lambda: LinearSVC(C=C, tol=1e-12, max_iter=1000000).fit(
        X, y, sample_weight=sw))
    prob = Problem(add_intercept_column(X, 1.0), np.where(y == ours.classes_[1], 1.0, -1.0),
                   loss="squared_hinge", lam=ours.lam_, sample_weight=sw)
    p_ours = prob.primal(np.r_[ours.coef_.ravel(), ours.intercept_])
    p_ref = prob.primal(np.r_[ref.coef_.ravel(), ref.intercept_])
    assert p_ref >= p_ours - ours.gap_ - 1e-12
    assert abs(p_ours - p_ref) <= 1e-6 * p_ref
    same = LinearClassifier(alpha=1.0 / (C * sw.sum()), tol=1e-10, random_state=0).fit(
        X, y, sample_weight=sw)
    np.testing.assert_allclose(same.coef_, ours.coef_, rtol=1e-9, atol=1e-12)


def test_C_regressor_and_exclusive_with_alpha():
    Xr, yr = make_regression_data(n=80, d=4, seed=1)
    reg = LinearRegressor(C=4.0, random_state=0).fit(Xr, yr)
    assert reg.lam_ == pytest.approx(1.0 / (4.0 * Xr.shape[0]), rel=1e-14)
    with pytest.raises(ValueError, match="give alpha or C, not both"):
        LinearRegressor(C=1.0, alpha=1e-3).fit(Xr, yr)
    X, y = make_classification_data(n=60, d=4, seed=2)
    with pytest.raises(ValueError, match="give alpha or C, not both"):
        LinearClassifier(C=1.0, alpha=1e-3).fit(X, y)
    for bad in (0, -1.0, float("inf"), "1"):
        with pytest.raises(ValueError, match="C must be a finite number > 0"):
            LinearClassifier(C=bad).fit(X, y)


class _Result:
    """A SolveResult-shaped stand-in carrying a rounding-negative gap."""

    def __init__(self, primal, dual):
        self.primal, self.dual, self.gap = primal, dual, primal - dual
        self.rel_gap = (primal - dual) / abs(primal)
        self.converged = True


def test_displayed_gaps_are_never_negative_and_raw_values_are_kept():
    est = LinearClassifier()
    est._set_certificate([_Result(0.5, 0.5 + 6.8e-13)])
    assert est.gap_ == 0.0 and est.rel_gap_ == 0.0
    assert est.primal_ - est.dual_ == pytest.approx(-6.8e-13, abs=1e-15)
    est._set_certificate([_Result(0.5, 0.5 + 1e-16), _Result(1.0, 0.9)])
    np.testing.assert_array_equal(est.gap_ >= 0, True)
    np.testing.assert_allclose(est.gap_, [0.0, 0.1])
    assert est.converged_.dtype == bool and est.primal_.shape == (2,)
    # a real fit: the attributes are the clipped certificate of the returned pair
    X, y = make_classification_data(n=80, d=5, seed=3)
    fit = LinearClassifier(alpha=1e-2, tol=1e-14, max_iter=3000, random_state=0).fit(X, y)
    assert fit.gap_ == max(fit.primal_ - fit.dual_, 0.0) and fit.gap_ >= 0.0


def test_verbose_names_the_class(capsys):
    X, y = make_classification_data(n=90, d=4, seed=4, dense=True)
    labels = np.array(["a", "b", "c"])[np.arange(90) % 3]
    LinearClassifier(alpha=1e-2, verbose=1, random_state=0).fit(X, labels)
    err = capsys.readouterr().err
    assert "problem 0" not in err
    for c in "abc":
        assert f"[LinearClassifier] class '{c}': solver=" in err
    LinearClassifier(alpha=1e-2, verbose=1, random_state=0).fit(X, labels == "b")
    assert "[LinearClassifier] class True vs False: solver=" in capsys.readouterr().err


def test_solve_result_displays_a_clipped_gap_and_keeps_the_raw_one():
    import dataclasses
    X, y = make_classification_data(n=60, d=4, seed=8)
    res = primaldual.solve(X, y, loss="logistic", lam=1e-1, random_state=0)
    shown = dataclasses.replace(res, gap=-6.8e-13)
    assert shown.gap == -6.8e-13                      # the raw value is kept
    assert "gap=0.0," in repr(shown) and "-6.8e-13" not in repr(shown)
    assert shown.summary()["gap"] == 0.0 and shown.summary()["rel_gap"] >= 0.0
