"""scikit-learn's estimator checks on every primaldual estimator.

The instances use a tight ``tol`` and a moderate ``alpha`` so that each tiny
fit converges in a few epochs: checks such as sample-weight equivalence
compare two fits of the same strongly convex problem, which agree only when
both are solved accurately (a loose ``tol`` would leave them apart by the
solver's accuracy, not by a bug).
"""
import pytest
from sklearn.utils.estimator_checks import parametrize_with_checks

from primaldual import LinearClassifier, LinearClassifierCV, LinearRegressor, LinearRegressorCV

FAST = dict(alpha=1e-3, tol=1e-10, max_iter=2000, random_state=0)
FAST_CV = dict(n_alphas=3, cv=3, tol=1e-8, max_iter=500, random_state=0)

ESTIMATORS = [
    LinearClassifier(loss="hinge", **FAST),
    LinearClassifier(loss="logistic", **FAST),
    LinearClassifier(loss="squared_hinge", class_weight="balanced", **FAST),
    LinearRegressor(loss="squared", **FAST),
    LinearRegressor(loss="epsilon_insensitive", loss_params={"epsilon": 0.01}, **FAST),
    LinearClassifierCV(loss="logistic", **FAST_CV),
    LinearRegressorCV(loss="squared", **FAST_CV),
]


def expected_failed_checks(estimator):
    return {}


@parametrize_with_checks(ESTIMATORS, expected_failed_checks=expected_failed_checks)
def test_sklearn_compatible(estimator, check):
    check(estimator)
