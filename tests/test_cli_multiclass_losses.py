"""The true multiclass losses on the command line: ``fit --loss multinomial``
and ``--loss crammer_singer`` equal ``primaldual.solve`` on the same data,
``predict --proba`` gives the softmax of a multinomial model (as the loaded
model's ``predict_proba``), and LIBLINEAR's ``train -s 4`` trains Crammer and
Singer's model and agrees in accuracy with the LIBLINEAR binding."""
from __future__ import annotations

import json

import numpy as np
import pytest
from sklearn.datasets import dump_svmlight_file, load_svmlight_file

import primaldual
from primaldual import cli

from conftest import optional_import, shared_file


def run_main(capsys, *args):
    code = cli.main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def three_class(tmp_path):
    rng = np.random.default_rng(3)
    X = rng.normal(size=(240, 6))
    y = np.argmax(X[:, :3] + 0.3 * rng.normal(size=(240, 3)), axis=1) + 1   # labels 1..3
    path = tmp_path / "three.svm"
    dump_svmlight_file(X, y, str(path), zero_based=False)
    return path, X, y


@pytest.mark.parametrize("loss", ["multinomial", "crammer_singer"])
def test_fit_equals_solve(capsys, tmp_path, three_class, loss):
    path, X, y = three_class
    model = tmp_path / "m.npz"
    code, out, err = run_main(capsys, "fit", path, "--loss", loss, "--lam", "1e-2",
                              "--model", model, "--json")
    assert code == 0, err
    rec = json.loads(out.strip().splitlines()[-1])
    assert rec["converged"] and rec["loss"] == loss
    ref = primaldual.solve(X, (y - 1).astype(float), loss=loss, lam=1e-2, tol=1e-6)
    assert rec["primal"] == pytest.approx(ref.primal, rel=1e-5)
    loaded = primaldual.load_model(model)
    np.testing.assert_allclose(loaded.coef_, np.asarray(ref.coef).T, atol=1e-3)
    assert np.mean(loaded.predict(X) == y) > 0.8


def test_predict_proba_is_the_softmax(capsys, tmp_path, three_class):
    path, X, y = three_class
    model, out_file = tmp_path / "m.npz", tmp_path / "out.txt"
    assert run_main(capsys, "fit", path, "--loss", "multinomial", "--model", model)[0] == 0
    code, _, err = run_main(capsys, "predict", model, path, out_file, "--proba")
    assert code == 0, err
    lines = out_file.read_text().splitlines()
    assert lines[0] == "labels 1 2 3"
    table = np.array([[float(v) for v in line.split()] for line in lines[1:]])
    proba = primaldual.load_model(model).predict_proba(X)
    np.testing.assert_allclose(table[:, 1:], proba, atol=1e-12)
    np.testing.assert_allclose(table[:, 1:].sum(axis=1), 1.0, atol=1e-12)
    np.testing.assert_array_equal(table[:, 0], [1.0, 2.0, 3.0][0] + np.argmax(proba, 1))


def test_proba_of_crammer_singer_names_the_losses(capsys, tmp_path, three_class):
    path, _, _ = three_class
    model = tmp_path / "m.npz"
    assert run_main(capsys, "fit", path, "--loss", "crammer_singer", "--model",
                    model)[0] == 0
    code, _, err = run_main(capsys, "predict", model, path, "--proba")
    assert code == 1 and "logistic or multinomial" in err


@pytest.mark.realdata
def test_train_s4_agrees_with_liblinear(capsys, tmp_path, monkeypatch):
    train, test = shared_file("dna.scale"), shared_file("dna.scale.t")
    monkeypatch.chdir(tmp_path)
    code, out, err = run_main(capsys, "train", "-s", "4", "-q", train)
    assert code == 0, err
    assert (tmp_path / "dna.scale.model").is_file()
    code, out, err = run_main(capsys, "predict", test, "dna.scale.model", "out")
    assert code == 0, err
    ours = float(out.split("=")[1].split("%")[0])
    ll = optional_import("liblinear.liblinearutil", "the LIBLINEAR binding")
    Xtr, ytr = load_svmlight_file(str(train), n_features=180)
    Xte, yte = load_svmlight_file(str(test), n_features=180)
    m = ll.train(ytr, Xtr, "-s 4 -q")
    _, (acc, _, _), _ = ll.predict(yte, Xte, m, "-q")
    assert abs(ours - acc) <= 1.0


def test_fit_reports_the_legs_of_auto(capsys, tmp_path, three_class, monkeypatch):
    """``--json`` carries ``path``, the legs of ``solver="auto"``; the text report
    names each leg and why it ended when the supervisor handed over."""
    path, X, y = three_class
    data = tmp_path / "bin.svm"
    dump_svmlight_file(X, np.where(y == 1, 1, -1), str(data), zero_based=False)
    code, out, err = run_main(capsys, "fit", data, "--loss", "hinge", "--json")
    assert code == 0, err
    rec = json.loads(out.strip().splitlines()[-1])
    assert rec["path"] and rec["path"][-1]["method"] == rec["solver"]

    from primaldual.cli import core
    real = core.solve_one

    def two_legs(*args, **kwargs):
        res = real(*args, **kwargs)
        first = dict(res.extras["path"][-1], method="sdca", reason="stalled", seconds=0.5)
        res.extras["path"] = [first] + res.extras["path"]
        return res

    monkeypatch.setattr(core, "solve_one", two_legs)
    code, out, err = run_main(capsys, "fit", data, "--loss", "hinge")
    assert code == 0, err
    line = next(s for s in out.splitlines() if s.startswith("path"))
    assert line.startswith("path      sdca (stalled, 0.5 s) -> ")
