"""``primaldual train`` / ``predict`` run LIBLINEAR's command lines unchanged.

The command lines of LIBLINEAR's README "Examples" section run through
``primaldual`` and are compared with the ``liblinear-official`` binding on the
same files (LIBLINEAR stops at its own tolerance, we at a certified relative
gap, so accuracies are compared to within a sample or two, cross-validation
folds -- drawn differently -- to within a few points).  Model files move both
ways: LIBLINEAR's load and predict the same labels in primaldual, ours load
in LIBLINEAR.  Test files with features the training file never had are read
as LIBLINEAR reads them (a1a / a1a.t).
"""
from __future__ import annotations

import re

import numpy as np
import pytest

from primaldual import cli
from primaldual.liblinear_format import read_liblinear
from primaldual.model_io import load_model, read_model

from conftest import optional_import, shared_file


@pytest.fixture(scope="module")
def ll():
    return optional_import("liblinear.liblinearutil", "liblinear-official")


def run(capsys, *args):
    code = cli.main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def accuracy_line(out):
    m = re.search(r"Accuracy = ([0-9.]+)% \((\d+)/(\d+)\)", out)
    assert m, out
    return float(m.group(1)), int(m.group(2)), int(m.group(3))


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    """heart_scale (two classes), a two-class file labelled 2/3, and a
    four-class file (the letters 1-4 of letter.scale)."""
    root = tmp_path_factory.mktemp("train")
    heart = shared_file("heart_scale")
    text = heart.read_text()
    (root / "data_file").write_text(text)
    (root / "two_class_data_file").write_text(
        "".join(("3" if line.startswith("+1") or line.startswith("1 ") else "2")
                + line[line.index(" "):] + "\n" for line in text.splitlines() if line))
    letters = [line for line in shared_file("letter.scale").read_text().splitlines()
               if line.split(" ", 1)[0] in ("1", "2", "3", "4")]
    (root / "four_class_data_file").write_text("\n".join(letters[:1200]) + "\n")
    (root / "test_file").write_text(text)
    return root


def ll_train_accuracy(ll, path, options):
    """LIBLINEAR's training accuracy and model at a tight tolerance.

    At its default ``-e`` LIBLINEAR's dual solvers stop early at a point that
    depends on C's process-global ``rand()`` state, so on a 270-row file the
    answer moves with whichever tests ran before; ``-e 1e-5`` pins it to the
    optimum that our certified fit reaches."""
    y, x = ll.svm_read_problem(str(path), return_scipy=True)
    m = ll.train(y, x, options + " -e 0.00001 -q")
    return ll.predict(y, x, m, "-q")[1][0], m


def our_train_accuracy(capsys, path, model):
    code, out, err = run(capsys, "predict", path, model, str(model) + ".out")
    assert code == 0, err
    return accuracy_line(out)[0]


@pytest.mark.parametrize("args", [[], ["-s", "0"]])
def test_readme_train_data_file(ll, data, capsys, monkeypatch, args):
    """``train data_file`` and ``train -s 0 data_file``: data_file.model in the
    current directory, LIBLINEAR's format, LIBLINEAR's accuracy."""
    monkeypatch.chdir(data)
    code, out, err = run(capsys, "train", *args, "data_file")
    assert code == 0, err
    m = read_liblinear(data / "data_file.model")
    assert m.solver_type.name == ("L2R_LR" if args else "L2R_L2LOSS_SVC_DUAL")
    assert m.label == [1, -1] and m.nr_feature == 13 and m.bias == -1
    ours = our_train_accuracy(capsys, data / "data_file", data / "data_file.model")
    theirs, _ = ll_train_accuracy(ll, data / "data_file", " ".join(args))
    assert abs(ours - theirs) <= 100.0 / 270 + 1e-9


def test_readme_cross_validation(ll, data, capsys, monkeypatch):
    """``train -v 5 -e 0.001 data_file``: LIBLINEAR's line, no model file."""
    monkeypatch.chdir(data)
    (data / "data_file.model").unlink(missing_ok=True)
    code, out, err = run(capsys, "train", "-v", "5", "-e", "0.001", "data_file")
    assert code == 0, err
    m = re.fullmatch(r"Cross Validation Accuracy = ([0-9.]+)%\n", out)
    assert m, out
    y, x = ll.svm_read_problem(str(data / "data_file"), return_scipy=True)
    theirs = ll.train(y, x, "-v 5 -e 0.001 -q")
    assert abs(float(m.group(1)) - theirs) <= 5.0        # different random folds
    assert not (data / "data_file.model").exists()


@pytest.mark.parametrize("args, ll_args", [
    (["-C"], "-C"),
    (["-C", "-s", "0", "-v", "3", "-c", "0.5", "-e", "0.0001"],
     "-C -s 0 -v 3 -c 0.5 -e 0.0001"),
])
def test_readme_parameter_search(ll, data, capsys, monkeypatch, args, ll_args):
    monkeypatch.chdir(data)
    code, out, err = run(capsys, "train", *args, "data_file")
    assert code == 0, err
    folds = 3 if "-v" in args else 5
    assert out.startswith(f"Doing parameter search with {folds}-fold cross validation.\n")
    assert "log2c=" in out and "\trate=" in out
    m = re.search(r"Best C = ([0-9.e+-]+)  CV accuracy = ([0-9.]+)%", out)
    assert m, out
    if "-c" in args:                        # the search starts at -c
        assert re.search(r"log2c=  -1.00\trate=", out)
    y, x = ll.svm_read_problem(str(data / "data_file"), return_scipy=True)
    best_c, _, best_rate = ll.train(y, x, ll_args + " -q")
    assert abs(float(m.group(2)) - 100 * best_rate) <= 5.0
    assert float(m.group(1)) > 0 and best_c > 0


def test_readme_four_class_weights(ll, data, capsys, monkeypatch):
    """``train -c 10 -w1 2 -w2 5 -w3 2 four_class_data_file``: one-vs-rest with
    LIBLINEAR's weights (each problem weighs its own class)."""
    monkeypatch.chdir(data)
    code, out, err = run(capsys, "train", "-c", "10", "-w1", "2", "-w2", "5", "-w3", "2",
                         "four_class_data_file")
    assert code == 0, err
    m = read_liblinear(data / "four_class_data_file.model")
    assert m.nr_class == 4 and m.w.shape == (16, 4)
    theirs, llm = ll_train_accuracy(ll, data / "four_class_data_file",
                                    "-c 10 -w1 2 -w2 5 -w3 2")
    assert m.label == llm.get_labels()           # LIBLINEAR's label order
    ours = our_train_accuracy(capsys, data / "four_class_data_file",
                              data / "four_class_data_file.model")
    assert abs(ours - theirs) <= 0.5


def test_readme_two_class_weights(ll, data, capsys, monkeypatch):
    """``train -c 10 -w3 1 -w2 5 two_class_data_file``: C is 10 for class 3
    and 50 for class 2, one model."""
    monkeypatch.chdir(data)
    code, out, err = run(capsys, "train", "-c", "10", "-w3", "1", "-w2", "5",
                         "two_class_data_file")
    assert code == 0, err
    m = read_liblinear(data / "two_class_data_file.model")
    assert m.nr_class == 2 and m.w.shape == (13, 1)
    theirs, llm = ll_train_accuracy(ll, data / "two_class_data_file", "-c 10 -w3 1 -w2 5")
    assert m.label == llm.get_labels()
    ours = our_train_accuracy(capsys, data / "two_class_data_file",
                              data / "two_class_data_file.model")
    assert abs(ours - theirs) <= 100.0 / 270 + 1e-9
    # the same optimum: LIBLINEAR's w agrees with ours to its own tolerance
    w_ll = np.array([llm.w[j] for j in range(13)])
    assert np.corrcoef(w_ll, m.w[:, 0])[0, 1] > 0.999


def test_readme_predict_probabilities(ll, data, capsys, monkeypatch):
    """``predict -b 1 test_file data_file.model output_file`` (LIBLINEAR's
    order): LIBLINEAR's header, labels and probabilities."""
    monkeypatch.chdir(data)
    assert run(capsys, "train", "-s", "0", "-q", "data_file")[0] == 0
    code, out, err = run(capsys, "predict", "-b", "1", "test_file", "data_file.model",
                         "output_file")
    assert code == 0, err
    acc, hits, total = accuracy_line(out)
    lines = (data / "output_file").read_text().splitlines()
    assert lines[0] == "labels 1 -1" and len(lines) == 271
    y, x = ll.svm_read_problem(str(data / "test_file"), return_scipy=True)
    m = ll.load_model(str(data / "data_file.model"))        # ours, read by LIBLINEAR
    labels, (ll_acc, _, _), probs = ll.predict(y, x, m, "-b 1 -q")
    ours = np.array([[float(v) for v in line.split()] for line in lines[1:]])
    np.testing.assert_array_equal(ours[:, 0], labels)
    np.testing.assert_allclose(ours[:, 1:], probs, rtol=1e-5, atol=1e-6)   # %g text
    assert acc == pytest.approx(ll_acc, abs=1e-4) and total == 270
    # -q: no accuracy line
    code, out, _ = run(capsys, "predict", "-b", "1", "-q", "test_file", "data_file.model",
                       "output_file")
    assert code == 0 and out == ""


@pytest.mark.parametrize("options", ["-s 1", "-s 0 -B 1", "-s 2 -c 4", "-s 7"])
def test_liblinear_models_load_and_predict_the_same_labels(ll, data, options, tmp_path):
    """A model written by the binding: load_model(...).predict and read_model give
    LIBLINEAR's labels (binary with and without bias, one-vs-rest)."""
    for name in ("data_file", "four_class_data_file"):
        y, x = ll.svm_read_problem(str(data / name), return_scipy=True)
        m = ll.train(y, x, options + " -q")
        path = tmp_path / f"{name}.model"
        ll.save_model(str(path), m)
        want = np.array(ll.predict(y, x, m, "-q")[0])
        np.testing.assert_array_equal(read_model(path).predict(x), want)
        np.testing.assert_array_equal(load_model(path).predict(x), want)


def test_our_models_load_in_liblinear(ll, data, capsys, tmp_path):
    for name, args in (("data_file", ["-B", "1"]), ("four_class_data_file", ["-s", "0"])):
        model = tmp_path / f"{name}.model"
        assert run(capsys, "train", *args, data / name, model)[0] == 0
        code, out, err = run(capsys, "predict", data / name, model, tmp_path / "o.txt")
        ours = np.array([float(v) for v in (tmp_path / "o.txt").read_text().split()])
        y, x = ll.svm_read_problem(str(data / name), return_scipy=True)
        theirs = np.array(ll.predict(y, x, ll.load_model(str(model)), "-q")[0])
        np.testing.assert_array_equal(ours, theirs)


def test_a1a_test_file_with_new_features(ll, capsys, tmp_path, monkeypatch):
    """a1a.t uses features a1a never did: predicted as LIBLINEAR does, in both
    argument orders and through load_model."""
    train, test = shared_file("a1a"), shared_file("a1a.t")
    monkeypatch.chdir(tmp_path)
    assert run(capsys, "train", train)[0] == 0
    code, out, err = run(capsys, "predict", test, "a1a.model", "out.txt")
    assert code == 0, err
    acc, hits, total = accuracy_line(out)
    y, x = ll.svm_read_problem(str(train), return_scipy=True)
    yt, xt = ll.svm_read_problem(str(test), return_scipy=True)
    m = ll.train(y, x, "-q")
    labels, (ll_acc, _, _), _ = ll.predict(yt, xt, m, "-q")
    assert total == 30956 and abs(acc - ll_acc) <= 0.1
    code, out2, err = run(capsys, "predict", "a1a.model", test, "out2.txt")
    assert code == 0 and accuracy_line(out2) == (acc, hits, total)
    pred = load_model(tmp_path / "a1a.model").predict(xt)     # 123 columns, model 119
    assert np.mean(pred == yt) * 100 == pytest.approx(acc, abs=1e-4)


@pytest.mark.parametrize("args, message", [
    (["-s", "21"], "-s 21 (one-class support vector machine (dual))"),
    (["-s", "9"], "-s 9 is not a LIBLINEAR solver type"),
    (["-x", "1"], "unknown option: -x"),
    (["-B", "x"], "-B expects a number"),
    (["-c", "abc"], "-c expects a number"),
    (["-C", "-s", "1"], "Warm-start parameter search only available for -s 0, -s 2"),
    (["-v", "1"], "n-fold cross validation: n must >= 2"),
])
def test_train_usage_errors(data, capsys, args, message):
    code, out, err = run(capsys, "train", *args, data / "data_file")
    assert code in (1, 2) and message in err and "Traceback" not in err


@pytest.mark.parametrize("stype, nearest", [(4, 1), (5, 2), (6, 0)])
def test_types_built_elsewhere_work_or_name_the_nearest(data, capsys, tmp_path, stype,
                                                        nearest):
    """-s 4, 5, 6 train when this primaldual has their loss and solver;
    otherwise one line names the nearest type it has (-s 11 and 12:
    tests/test_loss_squared_epsilon_insensitive.py)."""
    model = tmp_path / "m.model"
    code, out, err = run(capsys, "train", "-s", stype, data / "data_file", model)
    if code == 0:
        assert read_liblinear(model).solver_type.number == stype
    else:
        assert code == 1 and len(err.strip().splitlines()) == 1
        assert f"-s {stype} (" in err and f"nearest type available is -s {nearest} " in err


def test_regression_type_13(capsys, tmp_path):
    """-s 13 (L1-loss SVR): LIBLINEAR's regression model and output lines."""
    path = shared_file("housing_scale")
    model = tmp_path / "h.model"
    code, out, err = run(capsys, "train", "-s", "13", "-p", "0.5", "-e", "1e-3", path,
                         model)
    assert code == 0, err
    m = read_liblinear(model)
    assert m.label is None and m.solver_type.name == "L2R_L1LOSS_SVR_DUAL"
    code, out, err = run(capsys, "predict", path, model, tmp_path / "o.txt")
    assert code == 0 and out.startswith("Mean squared error = ")
    assert "Squared correlation coefficient = " in out


def test_weight_of_an_absent_label_warns_as_liblinear(data, capsys, tmp_path):
    code, out, err = run(capsys, "train", "-w7", "2", "-q", data / "data_file",
                         tmp_path / "m.model")
    assert code == 0 and "WARNING: class label 7 specified in weight is not found" in err
    assert out == ""                                  # -q: no solver line


def test_bias_zero_keeps_liblinears_bias_feature(data, capsys, tmp_path):
    """-B 0: a bias feature of value 0 (its weight stays 0), as LIBLINEAR writes it."""
    model = tmp_path / "m.model"
    assert run(capsys, "train", "-B", "0", data / "data_file", model)[0] == 0
    m = read_liblinear(model)
    assert m.bias == 0 and m.w.shape == (14, 1) and m.w[13, 0] == 0
    code, out, err = run(capsys, "predict", data / "test_file", model, tmp_path / "o")
    assert code == 0 and accuracy_line(out)[2] == 270
