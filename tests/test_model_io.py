"""Model files: format, round trips (SolveResult, estimators), atomic writes,
and refusal of pickle payloads, unknown versions and malformed files."""
from __future__ import annotations

import json
import os
import zipfile

import numpy as np
import pytest

import primaldual
from primaldual.model_io import (FORMAT_VERSION, LinearModel, ModelFileError, load_model,
                                 read_model, save_model)

from conftest import make_classification_data, make_regression_data


@pytest.fixture(scope="module")
def clf_result():
    X, y = make_classification_data(n=150, d=12, seed=1)
    res = primaldual.solve(X, y, loss="smooth_hinge", loss_params={"gamma": 0.5},
                           lam=1e-2, tol=1e-10, max_epochs=200)
    return X, y, res


def test_file_layout_loads_without_pickle(tmp_path, clf_result):
    X, y, res = clf_result
    path = save_model(res, tmp_path / "model", classes=[0.0, 3.0])
    assert path == tmp_path / "model.npz"
    with np.load(path, allow_pickle=False) as z:
        keys = set(z.files)
        assert {"format_version", "kind", "coef", "intercept", "classes", "loss",
                "loss_params", "lam", "l1", "fit_intercept", "intercept_scaling",
                "primal", "dual", "gap"} <= keys
        assert int(z["format_version"]) == FORMAT_VERSION == 1
        assert str(z["kind"]) == "classifier" and str(z["loss"]) == "smooth_hinge"
        assert z["coef"].dtype == np.float64 and z["coef"].shape == (1, 12)
        np.testing.assert_array_equal(z["coef"][0], res.coef)
        assert z["intercept"].tolist() == [0.0] and z["classes"].tolist() == [0.0, 3.0]
        assert json.loads(str(z["loss_params"])) == {"gamma": 0.5}
        assert float(z["lam"]) == 1e-2 and float(z["l1"]) == 0.0
        assert float(z["primal"]) == res.primal and float(z["gap"]) == res.gap
        assert not bool(z["fit_intercept"])
        for k in z.files:
            assert not z[k].dtype.hasobject


def test_solve_result_round_trip(tmp_path, clf_result):
    X, y, res = clf_result
    m = read_model(save_model(res, tmp_path / "m.npz", classes=[0.0, 3.0]))
    assert m.kind == "classifier" and m.loss_params == {"gamma": 0.5}
    score = X @ res.coef
    np.testing.assert_array_equal(m.decision_function(X), score)
    np.testing.assert_array_equal(m.predict(X), np.where(score > 0, 3.0, 0.0))
    assert (m.primal, m.dual, m.gap) == (res.primal, res.dual, res.gap)

    Xr, yr = make_regression_data(n=80, d=6, seed=2)
    rr = primaldual.solve(Xr, yr, loss="epsilon_insensitive",
                          loss_params={"epsilon": 0.05}, lam=1e-2, max_epochs=20)
    mr = read_model(save_model(rr, tmp_path / "r.npz"))
    assert mr.kind == "regressor" and mr.classes.shape == (0,)
    assert mr.loss_params == {"epsilon": 0.05}
    np.testing.assert_array_equal(mr.predict(Xr), Xr @ rr.coef)
    # data narrower or wider than the model: read as LIBLINEAR reads a test file
    # (features the training data never had are ignored, missing ones are zero)
    Xd = Xr.toarray() if hasattr(Xr, "toarray") else np.asarray(Xr)
    wide = np.hstack([Xd, np.full((Xd.shape[0], 3), 7.0)])
    np.testing.assert_allclose(mr.predict(wide), Xd @ rr.coef, rtol=1e-13)
    np.testing.assert_allclose(mr.predict(Xd[:, :5]), Xd[:, :5] @ rr.coef[:5], rtol=1e-13)


def test_normalized_rows_are_applied_at_prediction(tmp_path):
    from sklearn.preprocessing import normalize
    Xr, yr = make_regression_data(n=60, d=5, seed=3)
    Xn = normalize(Xr)
    rr = primaldual.solve(Xn, yr, loss="squared", lam=1e-2)
    path = save_model(rr, tmp_path / "n.npz", normalize_rows=True)
    m = read_model(path)
    assert m.normalize_rows
    np.testing.assert_allclose(m.predict(Xr), np.asarray(Xn @ rr.coef).ravel(), rtol=1e-13)
    pipe = load_model(path)
    np.testing.assert_allclose(pipe.predict(Xr), m.predict(Xr), rtol=0, atol=1e-13)


def test_write_is_atomic(tmp_path, clf_result, monkeypatch):
    X, y, res = clf_result
    path = save_model(res, tmp_path / "m.npz")
    before = path.read_bytes()

    def broken(fh, **kw):
        fh.write(b"partial")
        raise OSError("disk full")

    monkeypatch.setattr(np, "savez", broken)
    with pytest.raises(OSError, match="disk full"):
        save_model(res, path, classes=[1.0, 2.0])
    assert path.read_bytes() == before                # the old file is intact
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.npz"]   # no temp file left


def test_pickle_payload_is_refused_without_running_it(tmp_path, clf_result):
    """An npz carrying an object array (a pickle that would call os.mkdir when
    unpickled) is refused, and the payload never runs."""
    X, y, res = clf_result
    marker = tmp_path / "payload-ran"

    class Payload:
        def __reduce__(self):
            return (os.mkdir, (str(marker),))

    good = save_model(res, tmp_path / "good.npz")
    with np.load(good, allow_pickle=False) as z:
        entries = {k: z[k] for k in z.files}
    entries["coef"] = np.array([Payload()], dtype=object)
    evil = tmp_path / "evil.npz"
    np.savez(evil, **entries)                          # savez pickles object arrays

    with pytest.raises(ModelFileError, match="pickle") as exc:
        read_model(evil)
    assert "refusing" in str(exc.value) and str(evil) in str(exc.value)
    with pytest.raises(ValueError, match="pickle"):
        load_model(evil)
    assert not marker.exists()
    # the payload is live: loading it the unsafe way does run it
    with np.load(evil, allow_pickle=True) as z:
        z["coef"]
    assert marker.exists()

    # a bare pickle file and a single .npy with objects are refused too
    marker.rmdir()
    import pickle
    pkl = tmp_path / "model.pkl"
    pkl.write_bytes(pickle.dumps(Payload()))
    with pytest.raises(ModelFileError, match="not an .npz archive"):
        read_model(pkl)
    npy = tmp_path / "obj.npy"
    np.save(npy, np.array([Payload()], dtype=object), allow_pickle=True)
    with pytest.raises(ModelFileError, match="pickle"):
        read_model(npy)
    assert not marker.exists()


def _rewrite(src, dst, drop=(), **changes):
    with np.load(src, allow_pickle=False) as z:
        entries = {k: z[k] for k in z.files if k not in drop}
    entries.update(changes)
    np.savez(dst, **entries)
    return dst


@pytest.mark.parametrize("change, message", [
    (dict(format_version=np.array(3)), "format_version 3, but this primaldual reads "
                                       "format_version 1 and 2"),
    (dict(column_scale=np.ones(3)), "column_scale and column_offset go together"),
    (dict(format_version=np.array("1")), "'format_version' must be an integer"),
    ("drop:format_version", "has no 'format_version'"),
    ("drop:coef", r"missing key\(s\) \['coef'\]"),
    (dict(intercept=np.zeros(2)), r"intercept has shape \(2,\); coef has 1 row"),
    (dict(classes=np.array([1.0, 1.0])), "classes must be distinct"),
    (dict(classes=np.array([1.0, 2.0, 3.0])), "needs 2 classes"),
    (dict(kind=np.array("ranker")), "kind must be 'classifier' or 'regressor'"),
    (dict(loss=np.array("squared"), loss_params=np.array("{}")),
     "does not fit kind='classifier'"),
    (dict(loss=np.array("squared")), "unknown loss_params \\['gamma'\\] for loss='squared'"),
    (dict(loss=np.array("hingee")), "unknown loss 'hingee'"),
    (dict(loss_params=np.array("{gamma")), "'loss_params' is not valid JSON"),
    (dict(coef=np.array([[np.nan, 1.0]])), "coef contains NaN or inf"),
    (dict(lam=np.array(-1.0)), "lam must be a finite number >= 0"),
    (dict(fit_intercept=np.array(1)), "'fit_intercept' must be a bool"),
])
def test_malformed_files_are_refused(tmp_path, clf_result, change, message):
    X, y, res = clf_result
    good = save_model(res, tmp_path / "good.npz")
    if isinstance(change, str):
        bad = _rewrite(good, tmp_path / "bad.npz", drop=(change.split(":")[1],))
    else:
        bad = _rewrite(good, tmp_path / "bad.npz", **change)
    with pytest.raises(ModelFileError, match=message):
        read_model(bad)


def test_unreadable_files(tmp_path):
    with pytest.raises(FileNotFoundError, match="model file not found"):
        read_model(tmp_path / "nope.npz")
    txt = tmp_path / "m.npz"
    txt.write_text("hello")
    with pytest.raises(ModelFileError, match="not an .npz archive"):
        read_model(txt)
    trunc = tmp_path / "t.npz"
    trunc.write_bytes(b"PK\x03\x04" + b"\0" * 20)
    with pytest.raises(ModelFileError, match="npz|corrupt"):
        read_model(trunc)
    arr = tmp_path / "a.npy"
    np.save(arr, np.zeros(3))
    with pytest.raises(ModelFileError, match="single .npy array"):
        read_model(arr)
    with zipfile.ZipFile(tmp_path / "z.npz", "w") as zf:
        zf.writestr("readme.txt", "not numpy")
    with pytest.raises(ModelFileError, match="member 'readme.txt' is not a numpy array"):
        read_model(tmp_path / "z.npz")
    np.savez(tmp_path / "other.npz", weights=np.ones(3))
    with pytest.raises(ModelFileError, match="has no 'format_version'"):
        read_model(tmp_path / "other.npz")


def test_save_rejects_what_it_cannot_store(tmp_path, clf_result):
    X, y, res = clf_result
    with pytest.raises(ValueError, match="SolveResult or a fitted primaldual estimator"):
        save_model(object(), tmp_path / "x.npz")
    with pytest.raises(ValueError, match="numeric class labels only"):
        save_model(res, tmp_path / "x.npz", classes=np.array(["no", "yes"]))
    Xr, yr = make_regression_data(n=30, d=4)
    rr = primaldual.solve(Xr, yr, loss="squared", lam=1e-1, max_epochs=3)
    with pytest.raises(ValueError, match="classes given for a regression loss"):
        save_model(rr, tmp_path / "x.npz", classes=[0, 1])
    assert not any(tmp_path.iterdir())


def test_linear_model_multiclass_view():
    coef = np.array([[1.0, 0.0], [0.0, 1.0], [-1.0, -1.0]])
    m = LinearModel(kind="classifier", coef=coef, intercept=np.array([0.0, 0.5, 0.0]),
                    classes=np.array([10.0, 20.0, 30.0]), loss="logistic")
    X = np.array([[2.0, 0.0], [0.0, 2.0], [-3.0, -3.0], [0.2, 0.0]])
    np.testing.assert_array_equal(m.predict(X), [10.0, 20.0, 30.0, 20.0])
    assert m.decision_function(X).shape == (4, 3)


# ----------------------------------------------------------------- estimators
@pytest.fixture(scope="module")
def estimators():
    import primaldual.estimators
    return primaldual.estimators


@pytest.mark.parametrize("n_classes, fit_intercept", [(2, True), (3, True), (2, False)])
def test_classifier_round_trip(tmp_path, estimators, n_classes, fit_intercept):
    rng = np.random.default_rng(n_classes)
    X = rng.standard_normal((120, 5))
    y = np.array([5.0, 7.0, 9.0])[rng.integers(0, n_classes, 120)]
    y[:n_classes] = [5.0, 7.0, 9.0][:n_classes]
    est = estimators.LinearClassifier(loss="logistic", alpha=1e-2, tol=1e-8,
                                      fit_intercept=fit_intercept, intercept_scaling=2.0,
                                      max_iter=300).fit(X, y)
    path = save_model(est, tmp_path / "c.npz")
    back = load_model(path)
    assert isinstance(back, estimators.LinearClassifier)
    assert back.alpha == 1e-2 and back.loss == "logistic"
    assert back.fit_intercept == fit_intercept and back.intercept_scaling == 2.0
    np.testing.assert_array_equal(back.coef_, est.coef_)
    np.testing.assert_array_equal(back.intercept_, est.intercept_)
    np.testing.assert_array_equal(back.classes_, est.classes_)
    np.testing.assert_array_equal(back.predict(X), est.predict(X))
    np.testing.assert_array_equal(back.decision_function(X), est.decision_function(X))
    np.testing.assert_array_equal(back.predict_proba(X), est.predict_proba(X))
    np.testing.assert_array_equal(read_model(path).predict(X), est.predict(X))
    assert back.score(X, y) == est.score(X, y)


def test_regressor_round_trip(tmp_path, estimators):
    Xr, yr = make_regression_data(n=100, d=6, seed=5, dense=True)
    est = estimators.LinearRegressor(loss="squared", alpha=1e-3, fit_intercept=True,
                                     tol=1e-10, max_iter=500).fit(Xr, yr + 3.0)
    back = load_model(save_model(est, tmp_path / "r.npz"))
    assert isinstance(back, estimators.LinearRegressor)
    np.testing.assert_array_equal(back.coef_, est.coef_)
    assert back.intercept_ == est.intercept_ and back.gap_ == est.gap_
    np.testing.assert_array_equal(back.predict(Xr), est.predict(Xr))


def test_solve_result_loads_as_estimator(tmp_path, clf_result, estimators):
    X, y, res = clf_result
    est = load_model(save_model(res, tmp_path / "m.npz", classes=[-1.0, 1.0]))
    assert isinstance(est, estimators.LinearClassifier)
    assert est.loss == "smooth_hinge" and est.loss_params == {"gamma": 0.5}
    np.testing.assert_array_equal(est.decision_function(X), X @ res.coef)
    np.testing.assert_array_equal(est.predict(X), np.where(X @ res.coef > 0, 1.0, -1.0))


def test_default_strength_is_saved_as_the_lam_the_fit_used(tmp_path, estimators):
    # alpha=None is 1/n: the file stores that number, and the loaded estimator
    # carries it as its alpha
    rng = np.random.default_rng(4)
    X = rng.standard_normal((80, 3))
    y = np.where(X[:, 0] > 0, 1.0, -1.0)
    est = estimators.LinearClassifier(loss="squared_hinge").fit(X, y)
    back = load_model(save_model(est, tmp_path / "d.npz"))
    assert back.alpha == est.lam_ == 1.0 / 80
    np.testing.assert_array_equal(back.predict(X), est.predict(X))
