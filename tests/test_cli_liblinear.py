"""The command line a LIBLINEAR user expects: ``-c C`` (checked against
LIBLINEAR's own optimum), negative labels in ``--class-weight`` and ``-wi``,
``predict`` writing an output file and ``-b 1``-style probabilities, dense
LIBSVM files read dense, ``cv`` warning at the edge of its grid, one line of
meaning per solver option, and the one request object the commands read."""
from __future__ import annotations

import ast
import dataclasses
import json

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import dump_svmlight_file, load_svmlight_file

import primaldual
from primaldual import cli
from primaldual.cli.files import DENSE_MIN_DENSITY, read_libsvm
from primaldual.cli.parser import parse_args
from primaldual.cli.request import FitRequest, make_request

from conftest import REPO, optional_import


def run_main(capsys, *args):
    code = cli.main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def last_json(out):
    return json.loads(out.strip().splitlines()[-1])


def write_binary(path, n=120, d=6, density=1.0, seed=0, labels=(-1, 1)):
    """A LIBSVM file with a planted linear model and label noise."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * (rng.random((n, d)) < density)
    X[np.arange(n), rng.integers(0, d, n)] = rng.normal(size=n) + 3.0  # no empty row
    w = rng.normal(size=d)
    y = np.where(X @ w + 0.5 * rng.normal(size=n) > 0, labels[1], labels[0])
    dump_svmlight_file(sp.csr_matrix(X), y, str(path), zero_based=False)
    return path


# -------------------------------------------------------------- parsing
@pytest.mark.parametrize("argv, spec", [
    (["--class-weight", "-1:5"], ["-1:5"]),
    (["--class-weight", "-1:5,+1:1"], ["-1:5,+1:1"]),
    (["--class-weight=-1:5"], ["-1:5"]),
    (["-w-1", "5"], ["-1:5"]),
    (["-w-1", "5", "-w+1", "2"], ["-1:5", "+1:2"]),
    (["-w1", "0.5", "--class-weight", "-1:5"], ["1:0.5", "-1:5"]),
])
def test_class_weight_with_a_negative_label_parses(argv, spec):
    args = parse_args(["fit", "train.svm", *argv])
    assert args.class_weight == spec and args.train == "train.svm"
    req = make_request(args)
    want = {float(k): float(v) for k, v in (item.split(":") for item in
                                            ",".join(spec).split(","))}
    assert req.class_weight == want


def test_class_weight_flag_value_reaches_the_fit(tmp_path, capsys):
    path = write_binary(tmp_path / "b.svm")
    code, out, err = run_main(capsys, "fit", path, "--class-weight", "-1:5", "--json",
                              "--max-epochs", "3")
    assert code == 0, err
    assert "class weights: -1 -> 5, 1 -> 1" in err
    code2, out2, _ = run_main(capsys, "fit", path, "-w-1", "5", "--json",
                              "--max-epochs", "3")
    assert code2 == 0
    assert last_json(out)["primal"] == last_json(out2)["primal"]


def test_the_request_is_one_frozen_object(tmp_path):
    req = make_request(parse_args(["fit", "t.svm", "--lam", "0.01", "--option",
                                   "sampling=uniform", "--solver", "sdca"]))
    assert isinstance(req, FitRequest) and req.lam == 0.01 and req.C is None
    with pytest.raises(dataclasses.FrozenInstanceError):
        req.lam = 1.0
    with pytest.raises(TypeError):
        req.options["sampling"] = "cyclic"             # read-only mapping
    assert req.options["sampling"] == "uniform"


def test_cli_modules_import_no_underscore_name_of_each_other():
    """Shared helpers are public names of one module; no cli module reaches into
    another's private ones."""
    pkg = REPO / "src" / "primaldual" / "cli"
    offenders = []
    for f in sorted(pkg.glob("*.py")):
        for node in ast.walk(ast.parse(f.read_text())):
            if isinstance(node, ast.ImportFrom) and node.level == 1:
                offenders += [f"{f.name}: {node.module}.{a.name}" for a in node.names
                              if a.name.startswith("_")]
    assert offenders == []


# ------------------------------------------------------------------- -c C
def test_c_is_lam_one_over_c_n(tmp_path, capsys):
    path = write_binary(tmp_path / "b.svm", n=150)
    C = 0.7
    code, out, err = run_main(capsys, "fit", path, "-c", C, "--loss", "logistic",
                              "--tol", "1e-10", "--json")
    assert code == 0, err
    s = last_json(out)
    assert s["lam"] == 1.0 / (C * 150) and s["C"] == pytest.approx(C, rel=1e-15)
    assert {"solver", "loss", "lam", "l1", "n", "d", "nnz", "epochs", "time_s", "primal",
            "dual", "gap", "converged"} <= set(s)
    assert "lam = 1/(C W) = 1/(0.7 * 150)" in err
    code, out, _ = run_main(capsys, "fit", path, "--lam", repr(1.0 / (C * 150)),
                            "--loss", "logistic", "--tol", "1e-10", "--json")
    t = last_json(out)
    assert t["primal"] == s["primal"] and t["dual"] == s["dual"]
    code, out, _ = run_main(capsys, "fit", path, "--C", C, "--loss", "logistic", "--quiet")
    assert code == 0 and "(C=0.7)" in out          # the human summary names C too


def test_c_with_class_weights_matches_liblinear(tmp_path, capsys):
    """``-c C -w-1 5`` reaches LIBLINEAR's ``-s 0 -c C -w-1 5`` optimum: the same
    w (to the certified gap's accuracy) and, under our objective with
    lam = 1/(C W), the same primal value."""
    liblinear = optional_import("liblinear.liblinearutil", "liblinear-official")
    path = write_binary(tmp_path / "b.svm", n=200, d=8, seed=3)
    C = 2.0
    model = tmp_path / "m.npz"
    code, out, err = run_main(capsys, "fit", path, "-c", C, "-w-1", "5", "--loss",
                              "logistic", "--tol", "1e-13", "--model", model, "--json")
    assert code == 0, err
    s = last_json(out)
    X, y = load_svmlight_file(str(path))
    W = 5.0 * np.sum(y == -1) + np.sum(y == 1)
    assert s["weight_total"] == W and s["lam"] == pytest.approx(1.0 / (C * W), rel=1e-15)
    m = liblinear.train(y, X, f"-s 0 -c {C} -w-1 5 -e 1e-12 -q")
    sign = 1.0 if m.get_labels()[0] == 1 else -1.0     # LIBLINEAR's first label is +
    w_ll = sign * np.array([m.w[j] for j in range(X.shape[1])])
    w = np.load(model, allow_pickle=False)["coef"][0]
    np.testing.assert_allclose(w, w_ll, rtol=1e-5, atol=1e-6)
    c = np.where(y == -1, 5.0, 1.0)
    prob = primaldual.Problem(X, np.where(y == 1, 1.0, -1.0), loss="logistic",
                              lam=s["lam"], sample_weight=c)
    assert prob.primal(w_ll) == pytest.approx(s["primal"], rel=1e-9)
    assert s["dual"] <= prob.primal(w_ll) + 1e-15    # LIBLINEAR's w obeys our certificate


def test_c_and_lam_together_are_a_clear_error(tmp_path, capsys):
    path = write_binary(tmp_path / "b.svm")
    code, _, err = run_main(capsys, "fit", path, "-c", "1", "--lam", "0.1")
    assert code == 1 and "either --lam 0.1 or -c 1" in err
    code, _, err = run_main(capsys, "fit", path, "-c", "0")
    assert code == 1 and "-c/--C must be a finite number > 0" in err
    code, _, err = run_main(capsys, "cv", path, "-c", "1", "--lams", "0.1,0.2")
    assert code == 1 and "not both --lams and -c" in err


# --------------------------------------------------------------- predict
def test_predict_writes_its_output_file(tmp_path, capsys):
    path = write_binary(tmp_path / "b.svm", labels=(2, 4))
    model = tmp_path / "m.npz"
    assert run_main(capsys, "fit", path, "--model", model, "--quiet")[0] == 0
    out_file = tmp_path / "pred.txt"
    code, out, err = run_main(capsys, "predict", model, path, out_file)
    assert code == 0, err
    X, y = load_svmlight_file(str(path))
    z = np.load(model, allow_pickle=False)
    score = X @ z["coef"][0] + z["intercept"][0]
    want = np.where(score > 0, 4, 2)
    assert out_file.read_text().splitlines() == [str(v) for v in want]
    hits = int(np.sum(want == y))
    assert out.strip() == f"Accuracy = {100 * hits / len(y):g}% ({hits}/{len(y)})"
    # without OUTPUT, the predictions go to stdout as before
    code, out, _ = run_main(capsys, "predict", model, path)
    assert out.splitlines() == [str(v) for v in want]


def test_predict_proba_binary_is_the_logistic_of_the_score(tmp_path, capsys):
    path = write_binary(tmp_path / "b.svm", labels=(-1, 1))
    model = tmp_path / "m.npz"
    assert run_main(capsys, "fit", path, "--loss", "logistic", "--bias", "1", "--model",
                    model, "--quiet")[0] == 0
    out_file = tmp_path / "proba.txt"
    code, out, err = run_main(capsys, "predict", model, path, out_file, "--proba", "--json")
    assert code == 0, err
    lines = out_file.read_text().splitlines()
    assert lines[0] == "labels -1 1"
    rows = np.array([[float(t) for t in line.split()] for line in lines[1:]])
    X, y = load_svmlight_file(str(path))
    z = np.load(model, allow_pickle=False)
    p_pos = 1.0 / (1.0 + np.exp(-(X @ z["coef"][0] + z["intercept"][0])))
    np.testing.assert_allclose(rows[:, 2], p_pos, rtol=1e-12)
    np.testing.assert_allclose(rows[:, 1] + rows[:, 2], 1.0, rtol=1e-12)
    np.testing.assert_array_equal(rows[:, 0], np.where(p_pos > 0.5, 1.0, -1.0))
    s = last_json(out)
    assert s["n"] == len(y) and s["output"] == str(out_file)


def test_predict_proba_multiclass_matches_the_estimator(tmp_path, capsys):
    rng = np.random.default_rng(5)
    X = rng.normal(size=(150, 4))
    y = np.argmax(X[:, :3] + 0.3 * rng.normal(size=(150, 3)), axis=1) + 1
    path = tmp_path / "m3.svm"
    dump_svmlight_file(X, y, str(path), zero_based=False)
    model = tmp_path / "m.npz"
    assert run_main(capsys, "fit", path, "--loss", "logistic", "--model", model,
                    "--quiet")[0] == 0
    code, out, err = run_main(capsys, "predict", model, path, "--proba")
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0] == "labels 1 2 3"
    rows = np.array([[float(t) for t in line.split()] for line in lines[1:]])
    est = primaldual.load_model(model)
    np.testing.assert_allclose(rows[:, 1:], est.predict_proba(X), rtol=1e-12)
    np.testing.assert_allclose(rows[:, 1:].sum(axis=1), 1.0, rtol=1e-12)
    np.testing.assert_array_equal(rows[:, 0], est.predict(X))


def test_predict_proba_needs_a_logistic_model(tmp_path, capsys):
    path = write_binary(tmp_path / "b.svm")
    model = tmp_path / "m.npz"
    assert run_main(capsys, "fit", path, "--model", model, "--quiet")[0] == 0
    out_file = tmp_path / "p.txt"
    code, out, err = run_main(capsys, "predict", model, path, out_file, "--proba")
    assert code == 1 and "--proba needs a model fit with --loss logistic" in err
    assert "loss='squared_hinge'" in err and not out_file.exists()


# ----------------------------------------------------------------- dense
def test_a_dense_file_is_read_dense_and_a_sparse_one_stays_sparse(tmp_path):
    dense = write_binary(tmp_path / "dense.svm", n=100, d=10, density=1.0)
    sparse = write_binary(tmp_path / "sparse.svm", n=100, d=40, density=0.1)
    ((Xd, yd),) = read_libsvm([dense])
    ((Xs, ys),) = read_libsvm([sparse])
    assert isinstance(Xd, np.ndarray) and sp.issparse(Xs)
    ref, _ = load_svmlight_file(str(dense))
    assert ref.nnz / (100 * 10) >= DENSE_MIN_DENSITY
    np.testing.assert_array_equal(Xd, ref.toarray())
    ((Xf, _),) = read_libsvm([dense], dense=False)
    assert sp.issparse(Xf)


def test_fit_on_a_dense_file_equals_the_sparse_fit(tmp_path, capsys):
    path = write_binary(tmp_path / "dense.svm", n=300, d=12, density=0.9, seed=4)
    code, out, err = run_main(capsys, "fit", path, "--loss", "logistic", "--lam", "1e-3",
                              "--solver", "sdca", "--tol", "1e-12", "--json")
    assert code == 0, err
    s = last_json(out)
    assert s["storage"] == "dense"
    X, y = load_svmlight_file(str(path))
    y = np.where(y == 1, 1.0, -1.0)
    kw = dict(loss="logistic", lam=1e-3, solver="sdca", tol=1e-12, random_state=0)
    dense = primaldual.solve(X.toarray(), y, **kw)
    assert s["primal"] == dense.primal and s["epochs"] == dense.n_epochs
    csr = primaldual.solve(X, y, **kw)
    assert s["primal"] == pytest.approx(csr.primal, rel=1e-11)
    code, out, _ = run_main(capsys, "fit", path, "--quiet", "--max-epochs", "2")
    assert "dense (density 0.9" in out


# -------------------------------------------------------------------- cv
def _regression_file(path, n, d, noise, seed, planted=True):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = (X @ rng.normal(size=d) if planted else 0.0) + noise * rng.normal(size=n)
    dump_svmlight_file(X, y, str(path), zero_based=False)
    return path


def test_cv_warns_when_the_best_lam_is_at_an_edge(tmp_path, capsys):
    # a planted model with little noise: the least regularization wins
    path = _regression_file(tmp_path / "r.svm", 120, 5, 0.05, 0)
    code, out, err = run_main(capsys, "cv", path, "--loss", "squared", "--lams",
                              "10,1,0.1,0.01", "--json")
    assert code == 0, err
    s = last_json(out)
    assert s["best_lam"] == 0.01 and s["best_at_edge"] == "smallest_lam"
    assert "the best lam 0.01 is the smallest of the grid" in err and "--lams" in err
    # pure noise with many features: the most regularization wins
    path = _regression_file(tmp_path / "noise.svm", 60, 40, 1.0, 1, planted=False)
    code, out, err = run_main(capsys, "cv", path, "--loss", "squared", "--lams",
                              "100,0.001", "--json")
    s = last_json(out)
    assert s["best_lam"] == 100 and s["best_at_edge"] == "largest_lam"
    assert "the best lam 100 is the largest of the grid" in err
    # one value is not a grid: no warning
    code, out, err = run_main(capsys, "cv", path, "--loss", "squared", "--lam", "1",
                              "--json")
    assert last_json(out)["best_at_edge"] is None and "edge" not in err


def test_cv_c_grid_fits_each_fold_with_its_own_lam(tmp_path, capsys):
    """``--Cs`` is LIBLINEAR's C: fold f fits lam = 1/(C n_f); the scores equal
    LinearRegressor fits on the same folds, and the largest C winning is an edge."""
    from sklearn.model_selection import KFold

    path = _regression_file(tmp_path / "r.svm", 100, 5, 0.05, 2)
    Cs = (0.01, 1.0, 100.0)
    code, out, err = run_main(capsys, "cv", path, "--loss", "squared", "--Cs",
                              ",".join(map(str, Cs)), "--folds", "4", "--tol", "1e-10",
                              "--json")
    assert code == 0, err
    s = last_json(out)
    assert s["grid"] == "C" and s["Cs"] == list(Cs)
    assert s["lams"] == [1.0 / (C * 100) for C in Cs]
    X, y = load_svmlight_file(str(path))
    for j, C in enumerate(Cs):
        mse = []
        for tr, te in KFold(4, shuffle=True, random_state=0).split(X):
            est = primaldual.LinearRegressor(loss="squared", alpha=1.0 / (C * tr.size),
                                             fit_intercept=False,
                                             tol=1e-12).fit(X[tr], y[tr])
            mse.append(np.mean((est.predict(X[te]) - y[te]) ** 2))
        assert s["mean"][j] == pytest.approx(np.mean(mse), rel=1e-6)
    assert s["best_C"] == 100.0 and s["best_at_edge"] == "smallest_lam"
    assert "the best C 100 is the largest of the grid" in err


# --------------------------------------------------------------- solvers
def test_every_solver_option_has_one_line_of_meaning(capsys):
    from primaldual.solvers import SOLVERS

    for name, cls in SOLVERS.items():
        for f in dataclasses.fields(cls.options_class):
            doc = f.metadata.get("doc", "")
            assert doc and "\n" not in doc and len(doc.split()) >= 3, (name, f.name, doc)
            assert len(doc) <= 110, (name, f.name, len(doc))
        assert cli.main(["solvers", name]) == 0
        out = capsys.readouterr().out
        for f in dataclasses.fields(cls.options_class):
            if f.name == "warm_start":
                continue                           # Python only, not listed
            line = next(l for l in out.splitlines() if l.split() and
                        l.split()[0] == f.name)
            assert line.split(None, 1)[1].startswith(f.metadata["doc"] + " (default "), line
