"""``cv`` with given values on a small problem fits through the one fit core
(direct-newton) on scikit-learn's folds, computed without importing it: the
folds are scikit-learn's exactly, and the scores are those of the estimators
on the same folds."""
from __future__ import annotations

import json

import numpy as np
import pytest
from sklearn.model_selection import KFold, StratifiedKFold

import primaldual
from primaldual import cli
from primaldual.cli.cv import kfolds, stratified_folds

from conftest import shared_file


@pytest.mark.parametrize("k, seed", [(2, 0), (3, 4), (5, 11), (10, 1)])
def test_folds_are_scikit_learns(k, seed):
    rng = np.random.default_rng(seed)
    y = rng.choice([1.0, 2.0, 5.0], size=97, p=[0.5, 0.3, 0.2])
    ours = stratified_folds(y, k, seed)
    theirs = [te for _, te in StratifiedKFold(k, shuffle=True, random_state=seed).split(y, y)]
    assert all(np.array_equal(a, b) for a, b in zip(ours, theirs)) and len(ours) == k
    ours = kfolds(97, k, seed)
    theirs = [te for _, te in KFold(k, shuffle=True, random_state=seed).split(y)]
    assert all(np.array_equal(a, b) for a, b in zip(ours, theirs))


@pytest.mark.parametrize("args", [["-c", "1"], ["--lams", "0.1,0.01"],
                                  ["--Cs", "0.5,4", "--loss", "logistic"]])
def test_cv_with_given_values_equals_the_estimators(args, capsys):
    path = shared_file("heart_scale")
    code = cli.main(["cv", str(path), "--folds", "4", "--tol", "1e-10", "--json", *args])
    out, err = capsys.readouterr()
    assert code == 0, err
    s = json.loads(out.strip().splitlines()[-1])
    from sklearn.datasets import load_svmlight_file
    X, y = load_svmlight_file(str(path))
    X = X.toarray()
    loss = "logistic" if "logistic" in args else "squared_hinge"
    folds = list(StratifiedKFold(4, shuffle=True, random_state=0).split(X, y))
    for j, lam in enumerate(s["lams"]):
        accs = []
        for tr, te in folds:
            alpha = lam if "--lams" in args else 1.0 / (s["Cs"][j] * tr.size)
            est = primaldual.LinearClassifier(loss=loss, alpha=alpha, fit_intercept=False,
                                              tol=1e-12).fit(X[tr], y[tr])
            accs.append(np.mean(est.predict(X[te]) == y[te]))
        assert s["scores"] and np.allclose([row[j] for row in s["scores"]], accs)
    assert "direct-newton" not in err and s["unconverged_fits"] == 0
