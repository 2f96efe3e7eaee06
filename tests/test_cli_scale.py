"""``fit --scale``: columns scaled as svm-scale does, the scaling kept in the
model and applied by ``predict``; the hint of an unconverged fit recommends it
(never row normalization) and numbers features from 1, as the file does.

breast-cancer's first column is a sample ID near 1e7: scaling the columns
keeps (and improves) the accuracy, normalizing the rows destroys it.
"""
from __future__ import annotations

import json

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import dump_svmlight_file, load_svmlight_file

import primaldual
from primaldual import cli
from primaldual.model_io import read_model

from conftest import shared_file


def run(capsys, *args):
    code = cli.main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def last_json(out):
    return json.loads(out.strip().splitlines()[-1])


def test_breast_cancer_scaled_columns(capsys, tmp_path):
    path = shared_file("breast-cancer")
    accuracy = {}
    for flag in ("--scale", "--normalize", None):
        extra = [flag] if flag else []
        model = tmp_path / f"bc{flag or ''}.npz"
        code, out, err = run(capsys, "fit", path, "--test", path, *extra, "--model", model,
                             "--json")
        assert code == 0, err
        accuracy[flag] = last_json(out)["test_accuracy"]
        if flag == "--scale":
            m = read_model(model)
            code, out, err = run(capsys, "predict", model, path, tmp_path / "p.txt")
            assert code == 0 and f"Accuracy = {100 * accuracy[flag]:g}%" in out
    assert accuracy["--scale"] >= 0.97 > accuracy[None] > accuracy["--normalize"]
    # svm-scale's map of a dense file: each column's [min, max] onto [-1, 1]
    X, _ = load_svmlight_file(str(path))
    X = X.toarray()
    lo, hi = X.min(axis=0), X.max(axis=0)
    np.testing.assert_allclose(lo * m.column_scale + m.column_offset, -1.0, atol=1e-12)
    np.testing.assert_allclose(hi * m.column_scale + m.column_offset, 1.0, atol=1e-12)
    # the model applies the scaling itself: raw rows in, the fit's predictions out
    scaled = tmp_path / "bc--scale.npz"
    np.testing.assert_array_equal(m.predict(X), primaldual.load_model(scaled).predict(X))
    assert np.mean(m.predict(X) == load_svmlight_file(str(path))[1]) == accuracy["--scale"]


def test_sparse_scaling_keeps_zeros_and_equals_the_scaled_fit(capsys, tmp_path):
    rng = np.random.default_rng(1)
    X = sp.random(300, 40, density=0.1, random_state=rng, format="csr")
    X.data = rng.standard_normal(X.data.size) * np.repeat(
        10.0 ** rng.integers(-2, 4, 40), 1)[X.indices]
    y = np.where(X @ rng.standard_normal(40) > 0, 1, -1)
    path = tmp_path / "s.svm"
    dump_svmlight_file(X, y, str(path), zero_based=False)
    model = tmp_path / "s.npz"
    code, out, err = run(capsys, "fit", path, "--scale", "--model", model, "--json")
    assert code == 0, err
    s = last_json(out)
    Xr, yr = load_svmlight_file(str(path), n_features=40)
    top = np.asarray(abs(Xr).max(axis=0).todense()).ravel()
    m = read_model(model)
    np.testing.assert_allclose(m.column_scale, np.where(top > 0, 1 / np.where(top > 0, top, 1), 0))
    assert not m.column_offset.any()                      # zeros stay zeros
    Xs = sp.csr_matrix(Xr @ sp.diags(m.column_scale))
    ref = primaldual.solve(Xs, np.where(yr > 0, 1.0, -1.0), loss="squared_hinge",
                           lam=1 / 300, tol=1e-12, random_state=0)
    assert s["primal"] == pytest.approx(ref.primal, rel=1e-9)


def test_the_hint_recommends_scale_with_one_based_features(capsys):
    path = shared_file("breast-cancer")
    code, out, err = run(capsys, "fit", path, "--solver", "sdca", "--max-epochs", "2")
    assert code == 0
    assert "--scale" in err and "--normalize" not in err
    assert "feature 1 reaches 1.345e+07" in err          # the ID column, as numbered


def test_scale_and_normalize_together_are_refused(capsys):
    path = shared_file("breast-cancer")
    code, out, err = run(capsys, "fit", path, "--scale", "--normalize")
    assert code == 1 and "give --scale" in err and "not both" in err
