"""The command line at LIBLINEAR's level: one-vs-rest multiclass ``fit`` and
``predict``, ``--bias``, ``--class-weight``, ``--jobs``, ``cv`` and training on a
Dask cluster with ``--scheduler``.

Every result is checked against the Python API run in this process on the
same data, parsed independently with scikit-learn's ``load_svmlight_file``:
the multiclass CLI must equal :class:`primaldual.LinearClassifier`, ``cv`` must
equal :class:`primaldual.LinearClassifierCV` on the same folds, and a
cluster fit must equal the local ``cocoa`` solver on the same partitions.
"""
from __future__ import annotations

import json
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import dump_svmlight_file, load_svmlight_file
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import StratifiedKFold
from sklearn.preprocessing import normalize

import primaldual
from primaldual import cli
from primaldual.estimators import add_intercept_column
from primaldual.model_io import read_model
from primaldual import LinearClassifierCV


def run_main(capsys, *args):
    code = cli.main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def last_json(out):
    return json.loads(out.strip().splitlines()[-1])


def _blobs(n, d, k, seed):
    """k well separated clusters in d sparse-ish dimensions, labels 1..k (not 0-based)."""
    rng = np.random.default_rng(seed)
    centers = rng.standard_normal((k, d)) * 2.0
    lab = rng.integers(0, k, n)
    X = centers[lab] + rng.standard_normal((n, d))
    X[rng.random((n, d)) < 0.3] = 0.0
    return sp.csr_matrix(X), (lab + 1).astype(float)


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    root = tmp_path_factory.mktemp("cli_mc")
    X, y = _blobs(420, 12, 4, seed=3)
    dump_svmlight_file(X[:300], y[:300], str(root / "train.svm"), zero_based=False)
    dump_svmlight_file(X[300:], y[300:], str(root / "test.svm"), zero_based=False)
    yb = np.where(y == 2, 7.0, 3.0)          # binary, raw labels 3 / 7
    dump_svmlight_file(X[:300], yb[:300], str(root / "bin.svm"), zero_based=False)
    return root


def _load(path, d=None):
    """The file as the CLI reads it: a dense array at density >= 0.5 (docs/cli.md)."""
    X, y = load_svmlight_file(str(path), n_features=d)
    if X.nnz >= 0.5 * X.shape[0] * X.shape[1]:
        return X.toarray(), y
    return sp.csr_matrix(X), y


# ------------------------------------------------------------- multiclass
def test_multiclass_fit_predict_equals_linear_classifier(files, tmp_path, capsys):
    model = tmp_path / "m.npz"
    code, out, err = run_main(capsys, "fit", files / "train.svm", "--test", files / "test.svm",
                              "--loss", "logistic", "--lam", "1e-3", "--bias", "2",
                              "--normalize", "--tol", "1e-10", "--max-epochs", "300",
                              "--seed", "5", "--model", model, "--json")
    assert code == 0, err
    assert "4 classes" in err and "one-vs-rest" in err
    s = last_json(out)
    assert s["classes"] == ["1", "2", "3", "4"] and len(s["problems"]) == 4

    X, y = _load(files / "train.svm")
    Xt, yt = _load(files / "test.svm", X.shape[1])
    X, Xt = normalize(X), normalize(Xt)
    est = primaldual.LinearClassifier(loss="logistic", alpha=1e-3, fit_intercept=True,
                                      intercept_scaling=2.0, tol=1e-10, max_iter=300,
                                      random_state=5).fit(X, y)
    assert est.converged_.all()
    m = read_model(model)
    assert m.kind == "classifier" and m.coef.shape == (4, X.shape[1])
    np.testing.assert_array_equal(m.classes, est.classes_)
    # same seeds, same problems: identical numbers, not merely close
    np.testing.assert_array_equal(m.coef, est.coef_)
    np.testing.assert_array_equal(m.intercept, est.intercept_)
    assert m.normalize_rows and m.fit_intercept and m.intercept_scaling == 2.0
    for k, p in enumerate(s["problems"]):
        assert p["gap"] == est.gap_[k] and p["converged"]
        assert p["primal"] - p["dual"] == pytest.approx(p["gap"], rel=1e-9, abs=1e-15)
    assert s["gap"] == pytest.approx(float(np.sum(est.gap_)), rel=1e-12)
    pred_api = est.predict(Xt)
    assert s["test_accuracy"] == pytest.approx(float(np.mean(pred_api == yt)), abs=0)
    assert s["test_accuracy"] > 0.8

    code, out, err = run_main(capsys, "predict", model, files / "test.svm", "--json")
    assert code == 0, err
    lines = out.strip().splitlines()
    pred_cli = np.array([float(v) for v in lines[:-1]])
    np.testing.assert_array_equal(pred_cli, pred_api)
    assert last_json(out)["accuracy"] == s["test_accuracy"]


def test_multiclass_trace_plot_and_text_report(files, tmp_path, capsys):
    trace, plot = tmp_path / "t.csv", tmp_path / "p.png"
    code, out, err = run_main(capsys, "fit", files / "train.svm", "--normalize",
                              "--lam", "1e-2", "--trace", trace, "--plot", plot,
                              "--class-weight", "balanced")
    assert code == 0, err
    assert "one-vs-rest" in out and out.count("yes") == 4
    rows = trace.read_text().splitlines()
    assert rows[0].startswith("class,") and {r.split(",")[0] for r in rows[1:]} == \
        {"1", "2", "3", "4"}
    assert plot.stat().st_size > 10_000


# ----------------------------------------------------------- bias, weights
def test_bias_and_class_weight_binary_equal_solve(files, tmp_path, capsys):
    model = tmp_path / "b.npz"
    code, out, err = run_main(capsys, "fit", files / "bin.svm", "--lam", "1e-3",
                              "--loss", "hinge", "--bias", "1.5", "--class-weight", "7:4,3:0.5", "--normalize",
                              "--seed", "2", "--tol", "1e-9", "--model", model, "--json")
    assert code == 0, err
    assert "3 -> -1, 7 -> +1" in err and "class weights: 3 -> 0.5, 7 -> 4" in err
    s = last_json(out)
    X, y_raw = _load(files / "bin.svm")
    X = normalize(X)
    y = np.where(y_raw == 7, 1.0, -1.0)
    c = np.where(y_raw == 7, 4.0, 0.5)
    ref = primaldual.solve(add_intercept_column(X, 1.5), y, loss="hinge", lam=1e-3,
                           solver="auto", tol=1e-9, random_state=2, sample_weight=c)
    assert s["primal"] == ref.primal and s["dual"] == ref.dual and s["converged"]
    m = read_model(model)
    np.testing.assert_array_equal(m.coef[0], ref.coef[:-1])
    assert m.intercept[0] == 1.5 * ref.coef[-1] and m.intercept[0] != 0.0
    np.testing.assert_array_equal(m.classes, [3.0, 7.0])
    # the same optimum as the estimator with the same weights (different seed stream)
    est = primaldual.LinearClassifier(loss="hinge", alpha=1e-3, intercept_scaling=1.5,
                                      tol=1e-9,
                                      class_weight={7.0: 4.0, 3.0: 0.5},
                                      random_state=0).fit(X, y_raw)
    np.testing.assert_allclose(m.coef[0], est.coef_[0], atol=1e-4)
    np.testing.assert_allclose(m.intercept, est.intercept_, atol=1e-4)


# --------------------------------------------------------------------- cv
def test_cv_equals_linear_classifier_cv(files, capsys):
    code, out, err = run_main(capsys, "cv", files / "train.svm", "--folds", "3",
                              "--loss", "hinge", "--n-lams", "4", "--lam-ratio", "1e-3", "--bias", "1",
                              "--normalize", "--seed", "4", "--tol", "1e-8", "--json")
    assert code == 0, err
    assert "lam grid: 4 values" in err and "fold 3/3" in err
    r = last_json(out)
    X, y = _load(files / "train.svm")
    X = normalize(X)
    ref = LinearClassifierCV(loss="hinge", n_alphas=4, eps=1e-3, tol=1e-8,
                             intercept_scaling=1.0,
                             cv=StratifiedKFold(3, shuffle=True, random_state=4),
                             random_state=4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        ref.fit(X, y)
    np.testing.assert_allclose(r["lams"], ref.alphas_, rtol=1e-15)
    np.testing.assert_array_equal(np.array(r["scores"]), ref.cv_scores_)
    assert r["best_lam"] == ref.alpha_
    assert r["metric"] == "accuracy" and r["folds"] == 3 and len(r["mean"]) == 4
    assert max(r["mean"]) == r["best_score"] > 0.8

    code, out, err = run_main(capsys, "cv", files / "bin.svm", "--lam", "1e-2",
                              "--folds", "4", "--normalize", "--loss", "logistic")
    assert code == 0, err
    assert "4-fold cross-validation" in out and "<- best" in out
    assert out.count("\n") == 4           # title, header, one lam, best line


def test_cv_regression_reports_mse(tmp_path, capsys):
    rng = np.random.default_rng(0)
    X = rng.standard_normal((120, 5))
    y = X @ rng.standard_normal(5) + 0.1 * rng.standard_normal(120)
    dump_svmlight_file(X, y, str(tmp_path / "r.svm"), zero_based=False)
    code, out, err = run_main(capsys, "cv", tmp_path / "r.svm", "--loss", "squared",
                              "--lams", "1e-1,1e-3", "--folds", "3", "--json")
    assert code == 0, err
    r = last_json(out)
    assert r["metric"] == "mse" and r["lams"] == [1e-1, 1e-3]
    assert r["best_lam"] == 1e-3 and r["best_score"] < 0.1


# ----------------------------------------------------------------- errors
@pytest.mark.parametrize("args, message", [
    (["--jobs", "0"], "n_jobs=0 means no thread"),
    (["--bias", "0"], "--bias must be a finite number > 0"),
    (["--bias", "nan"], "--bias must be a finite number > 0"),
    (["--class-weight", "1=3"], "--class-weight expects 'balanced' or LABEL:W"),
    (["--class-weight", "1:-2"], "the weight of label 1 must be a finite number > 0"),
    (["--class-weight", "1:2,1:3"], "names label 1 twice"),
    (["--class-weight", "9:2"], "names label 9, which does not occur in"),
    (["--class-weight", "balanced", "--loss", "squared"], "--class-weight needs a "
                                                           "classification loss"),
    (["--partitions", "2"], "--partitions is used with --scheduler ADDRESS"),
    (["--parts-dir", "x"], "--parts-dir is used with --scheduler ADDRESS"),
    (["--option", "n_jobs=2"], "--option n_jobs is not accepted here: use --jobs"),
    (["--option", "client=x"], "--option client is not accepted here: use --scheduler"),
    (["--checkpoint", "ck"], "--checkpoint/--resume hold one solver state"),
    (["--scheduler", "tcp://127.0.0.1:1", "--solver", "sdca"], "--scheduler trains with "
                                                               "cocoa or minibatch_sdca"),
    (["--scheduler", "tcp://127.0.0.1:1", "--class-weight", "1:2"],
     "--class-weight is not available with --scheduler"),
    (["--scheduler", "tcp://127.0.0.1:1", "--partitions", "0"], "--partitions must be >= 1"),
])
def test_fit_flag_errors(files, tmp_path, capsys, monkeypatch, args, message):
    monkeypatch.chdir(tmp_path)
    code, out, err = run_main(capsys, "fit", files / "train.svm", *args)
    assert code == 1 and message in err, err
    assert err.startswith("primaldual fit: error:")


def test_fit_with_threads(files, capsys):
    # --jobs 2 runs SDCA on two threads (a binary problem gets all of them); a
    # solver that runs on one thread refuses it
    code, out, err = run_main(capsys, "fit", files / "bin.svm", "--solver", "sdca",
                              "--jobs", "2", "--tol", "1e-8", "--json")
    assert code == 0, err
    one = last_json(out)
    code, out, err = run_main(capsys, "fit", files / "bin.svm", "--solver", "sdca",
                              "--tol", "1e-8", "--json")
    assert code == 0, err
    assert one["converged"] and one["rel_gap"] <= 1e-8
    assert abs(one["primal"] - last_json(out)["primal"]) <= 1e-7 * abs(one["primal"])
    code, out, err = run_main(capsys, "fit", files / "bin.svm", "--solver", "spdc",
                              "--jobs", "2")
    assert code == 1 and "runs on one thread" in err, err


def test_scheduler_unreachable_is_a_clear_error(files, capsys):
    code, out, err = run_main(capsys, "fit", files / "bin.svm", "--scheduler",
                              "tcp://127.0.0.1:9", "--option", "connect_timeout=2")
    assert code == 1 and "cannot connect to the Dask scheduler" in err, err


@pytest.mark.parametrize("args, message", [
    (["--folds", "1"], "--folds must be >= 2"),
    (["--folds", "1000"], "is larger than the 300 samples"),
    (["--lam", "1e-2", "--lams", "1,2"], "give either --lam X"),
    (["--lams", "1,x"], "--lams expects numbers separated by commas"),
    (["--lams", "1,-1"], "every lam must be a finite number > 0"),
    (["--lams", "1,1"], "--lams has repeated values"),
    (["--n-lams", "0"], "--n-lams must be >= 1"),
    (["--lam-ratio", "2"], "--lam-ratio must be in (0, 1)"),
    (["--jobs", "0"], "n_jobs=0 means no thread"),
    (["--class-weight", "5:1"], "names label 5, which does not occur"),
])
def test_cv_flag_errors(files, capsys, args, message):
    code, out, err = run_main(capsys, "cv", files / "train.svm", *args)
    assert code == 1 and message in err, err
    assert err.startswith("primaldual cv: error:")


def test_cv_too_few_samples_of_a_class(tmp_path, capsys):
    X = np.eye(7)
    y = np.array([1, 1, 1, 2, 2, 2, 3.0])
    dump_svmlight_file(X, y, str(tmp_path / "few.svm"), zero_based=False)
    code, out, err = run_main(capsys, "cv", tmp_path / "few.svm", "--folds", "3")
    assert code == 1 and "class 3 has 1 samples, fewer than --folds 3" in err


# ------------------------------------------------------------------ Dask
@pytest.mark.slow
def test_scheduler_fit_equals_local_cocoa(files, tmp_path, capsys, cluster, client):
    parts = tmp_path / "parts"
    model = tmp_path / "d.npz"
    code, out, err = run_main(capsys, "fit", files / "bin.svm", "--scheduler",
                              cluster.scheduler_address, "--partitions", "3",
                              "--parts-dir", parts, "--bias", "1", "--lam", "1e-2",
                              "--loss", "logistic", "--normalize",
                              "--tol", "1e-8", "--max-epochs", "200", "--seed", "1",
                              "--test", files / "bin.svm", "--model", model, "--json")
    assert code == 0, err
    assert "3 part files written to" in err
    s = last_json(out)
    assert s["solver"] == "cocoa" and s["partitions"] == 3 and s["converged"]
    written = sorted(p.name for p in parts.iterdir())
    assert written == [f"part-0000{k}-of-00003.svm" for k in range(3)]

    X, y_raw = load_svmlight_file(str(files / "bin.svm"))
    X = normalize(sp.csr_matrix(X))          # the workers read the part files as CSR
    y = np.where(y_raw == 7, 1.0, -1.0)
    ref = primaldual.solve(add_intercept_column(X, 1.0), y, loss="logistic", lam=1e-2,
                           solver="cocoa", n_partitions=3, tol=1e-8, max_epochs=200,
                           random_state=1)
    assert s["n"] == X.shape[0] and s["d"] == X.shape[1] and s["nnz"] == X.nnz
    assert s["primal"] == pytest.approx(ref.primal, rel=1e-12)
    assert s["dual"] == pytest.approx(ref.dual, rel=1e-12)
    assert s["epochs"] == ref.n_epochs
    m = read_model(model)
    np.testing.assert_allclose(m.coef[0], ref.coef[:-1], rtol=1e-10, atol=1e-13)
    np.testing.assert_array_equal(m.classes, [3.0, 7.0])
    pred = np.where(X @ ref.coef[:-1] + ref.coef[-1] > 0, 7.0, 3.0)
    assert s["test_accuracy"] == float(np.mean(pred == y_raw))

    # existing part files: TRAIN may be the directory; the workers read them again
    code, out, err = run_main(capsys, "fit", parts, "--scheduler", cluster.scheduler_address,
                              "--bias", "1", "--lam", "1e-2", "--tol", "1e-8", "--loss", "logistic",
                              "--max-epochs", "200", "--seed", "1", "--json")
    assert code == 0, err
    assert last_json(out)["primal"] == s["primal"]
    code, out, err = run_main(capsys, "fit", parts, "--scheduler", cluster.scheduler_address,
                              "--partitions", "2")
    assert code == 1 and "holds 3 part files but --partitions 2" in err
    code, out, err = run_main(capsys, "fit", files / "train.svm", "--scheduler",
                              cluster.scheduler_address, "--parts-dir", tmp_path / "mc")
    assert code == 1 and "more than two label values" in err
    code, out, err = run_main(capsys, "fit", parts, "--scheduler", cluster.scheduler_address,
                              "--normalize")
    assert code == 1 and "--normalize cannot rescale the existing part files" in err


def test_bias_regression_model_predicts_with_intercept(tmp_path, capsys):
    rng = np.random.default_rng(1)
    X = rng.standard_normal((150, 6))
    y = X @ rng.standard_normal(6) + 4.0 + 0.05 * rng.standard_normal(150)
    dump_svmlight_file(X, y, str(tmp_path / "r.svm"), zero_based=False)
    model = tmp_path / "r.npz"
    code, out, err = run_main(capsys, "fit", tmp_path / "r.svm", "--loss", "squared",
                              "--lam", "1e-4", "--bias", "3", "--tol", "1e-9",
                              "--max-epochs", "1000", "--model", model, "--json")
    assert code == 0, err
    Xs, ys = _load(tmp_path / "r.svm")
    ref = primaldual.solve(add_intercept_column(Xs, 3.0), ys, loss="squared", lam=1e-4,
                           solver="auto", tol=1e-9, max_epochs=1000, random_state=0)
    s = last_json(out)
    assert s["primal"] == ref.primal and s["converged"]
    m = read_model(model)
    assert m.kind == "regressor" and m.intercept[0] == pytest.approx(4.0, abs=0.05)
    code, out, err = run_main(capsys, "predict", model, tmp_path / "r.svm")
    pred = np.array([float(v) for v in out.split()])
    np.testing.assert_allclose(pred, Xs @ ref.coef[:-1] + 3.0 * ref.coef[-1], rtol=1e-12)


@pytest.mark.slow
def test_scheduler_regression_equals_local_cocoa(tmp_path, capsys, cluster, client):
    rng = np.random.default_rng(2)
    X = normalize(rng.standard_normal((90, 5)))
    y = X @ rng.standard_normal(5) + 0.1 * rng.standard_normal(90)
    dump_svmlight_file(X, y, str(tmp_path / "r.svm"), zero_based=False)
    code, out, err = run_main(capsys, "fit", tmp_path / "r.svm", "--scheduler",
                              cluster.scheduler_address, "--loss", "squared", "--lam",
                              "1e-2", "--tol", "1e-9", "--max-epochs", "300", "--json")
    assert code == 0, err
    s = last_json(out)
    assert s["partitions"] == 2                       # default: one per worker
    assert (tmp_path / "r.svm.parts").is_dir()
    Xs, ys = load_svmlight_file(str(tmp_path / "r.svm"))   # the workers read CSR parts
    ref = primaldual.solve(Xs, ys, loss="squared", lam=1e-2, solver="cocoa",
                           n_partitions=2, tol=1e-9, max_epochs=300, random_state=0)
    assert s["primal"] == pytest.approx(ref.primal, rel=1e-12)
    assert s["epochs"] == ref.n_epochs and s["converged"] == ref.converged
