"""scikit-learn's estimator checks on every primaldual estimator.

The instances use ``alpha=1e-2`` (or ``C``) and a tight ``tol`` so that each tiny
fit converges to (nearly) machine precision in a few dozen epochs.  The default
classifier (squared hinge, strength of ``C``) is among them.  The Dask estimator
(``primaldual.dask.LinearClassifier``) is not: it needs a live ``client``, which
``clone`` cannot copy; tests/test_distributed.py checks it against the local one.
"""
from sklearn.utils.estimator_checks import parametrize_with_checks

from primaldual import LinearClassifier, LinearClassifierCV, LinearRegressor, LinearRegressorCV

FAST = dict(alpha=1e-2, tol=1e-14, max_iter=3000, random_state=0)
FAST_CV = dict(n_alphas=3, eps=1e-2, cv=3, tol=1e-10, max_iter=1000, random_state=0)

ESTIMATORS = [
    LinearClassifier(C=10.0, tol=1e-14, max_iter=3000, random_state=0),
    LinearClassifier(loss="hinge", **FAST),
    LinearClassifier(loss="logistic", class_weight="balanced", **FAST),
    LinearRegressor(loss="squared", **FAST),
    LinearRegressor(C=10.0, tol=1e-14, max_iter=3000, random_state=0),
    LinearRegressor(loss="epsilon_insensitive", loss_params={"epsilon": 0.01},
                    **dict(FAST, tol=1e-10, max_iter=500)),
    LinearClassifierCV(loss="logistic", **FAST_CV),
    LinearClassifierCV(loss="logistic", penalty="l1", Cs=[0.1, 10.0], cv=3, tol=1e-10,
                       random_state=0),
    LinearRegressorCV(loss="squared", **FAST_CV),
]

# The sample-weight equivalence checks compare a fit with integer weights and a
# fit on repeated rows with assert_allclose(rtol=1e-7), elementwise.  With
# solver="auto" these small smooth problems go to Newton, whose solution does not
# depend on a row order and is resolved to ~1e-15, so they pass.  (With SDCA the
# two runs visit the rows in different random orders and agree only to the
# solver's accuracy, ||w - w*|| <= sqrt(2 gap / lam) ~ 1e-8: pass
# solver="sdca" and they would be expected failures.)


# check_class_weight_classifiers asserts that class_weight={0: 1000, 1: 1e-4}
# makes more than 87% of the test predictions class 0 on a very noisy blob set.
# That holds for a fixed alpha (LinearClassifier passes it), but
# LinearClassifierCV chooses alpha by the class-weighted held-out accuracy,
# which is ~1.0 for every alpha that gets class 0 right; the smallest such
# alpha also predicts class 1 where class 0 is absent (measured: 80% class-0
# predictions at a held-out weighted accuracy of 0.99999).  The CV estimator
# does what it is asked to do; the check's premise is for fixed-alpha models.
_CW_CV = ("CV picks the alpha with the best class-weighted held-out accuracy, "
          "which need not predict class 0 on 87% of the test set")


# check_regressors_train sets alpha=0.01 on every regressor that has an alpha
# parameter; on an instance given C, that makes alpha and C both set, which the
# estimators refuse by design ("give alpha or C, not both", GUIDE section 3).
_ALPHA_AND_C = ("the check sets alpha=0.01 on an instance given C: both strengths set, "
                "refused by design")


def expected_failed_checks(estimator):
    failed = {}
    if isinstance(estimator, LinearClassifierCV) and estimator.penalty == "l2":
        failed["check_class_weight_classifiers"] = _CW_CV
    if isinstance(estimator, LinearRegressor) and getattr(estimator, "C", None) is not None:
        failed["check_regressors_train"] = _ALPHA_AND_C
    return failed


@parametrize_with_checks(ESTIMATORS, expected_failed_checks=expected_failed_checks)
def test_sklearn_compatible(estimator, check):
    check(estimator)
