"""Inputs and situations a hostile user tries (docs/reliability.md, "Tried as a
hostile user"): each either works and is right, or fails with a message that
names the problem.  One test per promise:

* ``predict`` reads its data with the index base of the training file, which
  the model file records; a model file without it uses the documented rule
  and says so;
* class labels that are not whole numbers, a directory, ``/dev/null`` and a
  feature index past the parser's range are reported with the file (and line);
* L-BFGS that stops by itself reports the gradient evaluations it made;
* ``primaldual solvers`` claims l1 only for solvers that accept it;
* rows whose squared norm overflows warn, weights whose sum overflows are refused;
* atomic writes keep a symlink and the file's mode, and clean up after killed writers;
* a checkpoint of garbage bytes is called what it is;
* Ctrl-C while ``setup`` compiles kernels ends cleanly, without a traceback.
"""
from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
import textwrap
import time
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import dump_svmlight_file

import primaldual
from primaldual import cli
from primaldual._util import atomic_write
from primaldual.model_io import read_model, save_model
from primaldual.solvers import load_state

from conftest import REPO, make_classification_data, sigint_default_in_child


def run_main(capsys, *args):
    code = cli.main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


# ------------------------------------------------------------- index base
@pytest.fixture
def zero_based_pair(tmp_path):
    """Training data written zero-based (scikit-learn's default) whose labels
    depend on feature 0, and a test file in which no row uses feature 0."""
    rng = np.random.default_rng(1)
    w = np.array([3.0, -2.0, 1.0, 0.5, -1.0])
    X = rng.standard_normal((300, 5))
    y = np.sign(X @ w)
    Xt = rng.standard_normal((200, 5))
    Xt[:, 0] = 0.0
    yt = np.sign(Xt @ w)
    dump_svmlight_file(X, y, str(tmp_path / "train.svm"))                # zero-based
    dump_svmlight_file(sp.csr_matrix(Xt), yt, str(tmp_path / "test.svm"))
    return tmp_path / "train.svm", tmp_path / "test.svm", Xt, yt


def test_predict_reads_data_with_the_training_files_index_base(capsys, zero_based_pair,
                                                               tmp_path):
    train, test, Xt, yt = zero_based_pair
    model = tmp_path / "m.npz"
    code, _, err = run_main(capsys, "fit", train, "--model", model, "--quiet", "--lam",
                            "1e-3")
    assert code == 0, err
    m = read_model(model)
    assert m.feature_index_base == 0 and m.n_features == 5
    code, out, err = run_main(capsys, "predict", model, test, "--json")
    assert code == 0, err
    pred = np.array([float(v) for v in out.splitlines()[:-1]])
    # the same predictions as the model applied to the test rows, column for column
    np.testing.assert_array_equal(pred, np.where(Xt @ m.coef[0] > 0, 1.0, -1.0))
    assert json.loads(out.splitlines()[-1])["accuracy"] == float(np.mean(pred == yt))
    assert "note" not in err


def test_model_without_index_base_uses_the_documented_rule_and_says_so(capsys,
                                                                       zero_based_pair,
                                                                       tmp_path):
    train, test, Xt, _ = zero_based_pair
    model = tmp_path / "m.npz"
    run_main(capsys, "fit", train, "--model", model, "--quiet")
    with np.load(model) as z:               # as an older primaldual wrote it
        old = {k: z[k] for k in z.files if k != "feature_index_base"}
    np.savez(tmp_path / "old.npz", **old)
    assert read_model(tmp_path / "old.npz").feature_index_base is None
    code, out, err = run_main(capsys, "predict", tmp_path / "old.npz", test)
    assert code == 0
    assert "does not record the index base" in err and "one-based" in err
    # the rule: no row uses index 0, so the file is read one-based (shifted)
    m = read_model(model)
    shifted = np.hstack([Xt[:, 1:], np.zeros((Xt.shape[0], 1))])
    pred = np.array([float(v) for v in out.splitlines()])
    np.testing.assert_array_equal(pred, np.where(shifted @ m.coef[0] > 0, 1.0, -1.0))


def test_model_file_index_base_is_validated(tmp_path):
    X, y = make_classification_data(n=40, d=4)
    res = primaldual.solve(X, y, max_epochs=2)
    save_model(res, tmp_path / "m.npz", feature_index_base=1)
    assert read_model(tmp_path / "m.npz").feature_index_base == 1
    with pytest.raises(ValueError, match="feature_index_base must be 0 or 1"):
        save_model(res, tmp_path / "bad.npz", feature_index_base=2)
    with np.load(tmp_path / "m.npz") as z:
        d = {k: z[k] for k in z.files}
    d["feature_index_base"] = np.array(0.5)
    np.savez(tmp_path / "bad.npz", **d)
    with pytest.raises(ValueError, match="'feature_index_base' must be an integer"):
        read_model(tmp_path / "bad.npz")


# -------------------------------------------------------------- bad files
def test_float_labels_name_the_file(capsys, tmp_path):
    path = tmp_path / "reg.svm"
    path.write_text("0.5 1:1\n1.5 2:1\n2.25 1:1 2:1\n")
    code, _, err = run_main(capsys, "fit", path)
    assert code == 1
    assert str(path) in err and "not whole numbers" in err and "--loss squared" in err


def test_directory_and_dev_null(capsys, tmp_path):
    code, _, err = run_main(capsys, "fit", tmp_path)
    assert code == 1 and "is a directory, not a data file" in err and "not found" not in err
    code, _, err = run_main(capsys, "info", "/dev/null")
    assert code == 1 and "no samples" in err and "not found" not in err
    code, _, err = run_main(capsys, "fit", tmp_path / "missing.svm")
    assert code == 1 and "data file not found" in err


def test_feature_index_past_the_parser_names_line_1(capsys, tmp_path):
    path = tmp_path / "huge.svm"
    path.write_text("1 1000000000000:1\n-1 1:1\n")
    code, _, err = run_main(capsys, "info", path)
    assert code == 1
    assert f"{path}, line 1: feature index 1000000000000 is too large" in err
    assert "no single bad line" not in err


# ----------------------------------------------------------------- solvers
def test_lbfgs_that_stops_by_itself_reports_its_evaluations():
    X, y = make_classification_data(n=300, d=40, seed=3)
    res = primaldual.solve(X, y, loss="logistic", lam=1e-6, solver="lbfgs", tol=0.0,
                           max_epochs=100_000)
    assert res.stop_reason == "stalled"
    assert res.n_epochs < 1000 and res.n_epochs == res.trace[-1]["epoch"]
    assert res.feature_accesses == 2 * res.n_epochs * X.nnz


def test_solvers_listing_claims_l1_only_where_accepted(capsys):
    code, out, _ = run_main(capsys, "solvers", "--json")
    assert code == 0
    rows = json.loads(out)["solvers"]
    X, y = make_classification_data(n=40, d=4)
    for row in rows:
        name = row["solver"]
        if name not in ("lbfgs", "afg", "sag", "sgd", "newton"):
            continue
        loss = "logistic"
        try:
            primaldual.solve(X, y, loss=loss, solver=name, l1=0.01, max_epochs=1)
            accepted = True
        except ValueError as e:
            assert "l1" in str(e)
            accepted = False
        assert row["l1"] == accepted, name


def test_overflowing_rows_warn_and_overflowing_weights_are_refused():
    X, y = make_classification_data(n=30, d=4, dense=True)
    with pytest.warns(RuntimeWarning, match="squared norm overflows"):
        res = primaldual.solve(X * 1e300, y, max_epochs=1)
    assert res.solver == "sdca"          # auto keeps the overflowing rows off the IPM
    with pytest.warns(RuntimeWarning, match="squared norm overflows"), \
            pytest.raises(FloatingPointError, match="ipm.*overflows.*scale the rows"):
        primaldual.solve(X * 1e300, y, solver="ipm", max_epochs=1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        primaldual.solve(X * 1e150, y, max_epochs=1)            # 1e300: still finite
    with pytest.raises(ValueError, match="sample_weight sums to .* only the ratios"):
        primaldual.solve(X[:3], y[:3], sample_weight=np.full(3, 1e-310), max_epochs=1)
    with pytest.raises(ValueError, match="sample_weight sums to inf"):
        primaldual.solve(X, y, sample_weight=np.full(30, 1e307), max_epochs=1)


# ------------------------------------------------------------------ files
def test_atomic_write_through_a_symlink_keeps_link_and_mode(tmp_path):
    target = tmp_path / "real" / "model.bin"
    target.parent.mkdir()
    target.write_bytes(b"old")
    os.chmod(target, 0o640)
    link = tmp_path / "model.bin"
    link.symlink_to(target)
    with atomic_write(link) as fh:
        fh.write(b"new")
    assert link.is_symlink() and target.read_bytes() == b"new"
    assert stat.S_IMODE(os.stat(target).st_mode) == 0o640
    assert sorted(p.name for p in target.parent.iterdir()) == ["model.bin"]


def test_atomic_write_removes_temporaries_of_killed_writers(tmp_path):
    """A writer SIGKILLed inside the block leaves its temporary file; the next
    write to the same file removes it (its process is gone), not the
    temporary files of live writers."""
    dest = tmp_path / "state.npz"
    code = textwrap.dedent(f"""
        import os, signal, sys
        sys.path.insert(0, {str(REPO / 'src')!r})
        from primaldual._util import atomic_write
        with atomic_write({str(dest)!r}) as fh:
            fh.write(b"partial")
            fh.flush()
            os.kill(os.getpid(), signal.SIGKILL)
    """)
    proc = subprocess.run([sys.executable, "-c", code])
    assert proc.returncode == -signal.SIGKILL
    left = [p.name for p in tmp_path.iterdir()]
    assert len(left) == 1 and left[0].endswith(".tmp") and not dest.exists()
    live = tmp_path / f".state.npz.{os.getpid()}-feedfeedfeed.tmp"     # this process
    live.write_bytes(b"in progress")
    with atomic_write(dest) as fh:
        fh.write(b"complete")
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([dest.name, live.name])
    assert dest.read_bytes() == b"complete"


def test_garbage_checkpoint_is_called_garbage(capsys, tmp_path):
    ck = tmp_path / "ck"
    ck.mkdir()
    (ck / "state.npz").write_bytes(os.urandom(64).replace(b"PK", b"pk"))
    with pytest.raises(ValueError, match="not a primaldual state file: not an .npz"):
        load_state(ck)
    X, y = make_classification_data(n=40, d=4)
    path = tmp_path / "t.svm"
    dump_svmlight_file(X, y, str(path), zero_based=False)
    code, _, err = run_main(capsys, "fit", path, "--checkpoint", ck, "--resume")
    assert code == 1 and "not a primaldual state file" in err
    assert "object arrays" not in err


# ------------------------------------------------------ Ctrl-C in compile
def test_ctrl_c_while_kernels_compile_ends_without_a_traceback(tmp_path):
    """With an empty Numba cache, the first fit of minibatch_sdca compiles its
    kernels in setup and in the first epochs.  A SIGINT then must not surface
    as a traceback from inside the compiler: setup finishes and the fit ends
    with KeyboardInterrupt at a safe point, or the fit has started and ends
    interrupted with a certificate.  (Which one depends on how far the
    compiler got; both are checked.)"""
    script = textwrap.dedent("""
        import sys
        import numpy as np
        sys.path.insert(0, sys.argv[1])
        from conftest import make_classification_data
        from primaldual import solve
        X, y = make_classification_data(n=3000, d=50, density=0.2, seed=1)
        try:
            print("START", flush=True)
            res = solve(X, y, loss="smooth_hinge", lam=1e-6, solver="minibatch_sdca",
                        tol=0.0, max_epochs=10**7)
        except KeyboardInterrupt:
            print("KeyboardInterrupt", flush=True)
            sys.exit(130)
        print(res.stop_reason, res.gap >= 0, flush=True)
    """)
    env = dict(os.environ, PYTHONPATH=str(REPO / "src"),
               NUMBA_CACHE_DIR=str(tmp_path / "cold-cache"))
    proc = subprocess.Popen([sys.executable, "-c", script, str(REPO / "tests")],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env, preexec_fn=sigint_default_in_child)
    assert proc.stdout.readline().strip() == "START"
    # the compiler is at work now (seconds on an empty cache); however far it
    # got, both outcomes below are checked
    time.sleep(0.5)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=600)
    assert "Traceback" not in err and "llvmlite" not in err, err[-3000:]
    assert out.strip() in ("KeyboardInterrupt", "interrupted True"), (out, err[-2000:])
    assert proc.returncode in (0, 130)


def test_ctrl_c_stops_every_class_of_a_one_vs_rest_fit(capsys, tmp_path, monkeypatch,
                                                      default_sigint):
    """One Ctrl-C during a one-vs-rest fit stops the class being fit and every
    class after it (they share one flag), and ``fit`` exits with 130 after
    writing the certified results."""
    import primaldual.solvers.sdca as sdca_mod
    rng = np.random.default_rng(3)
    X = sp.random(600, 30, density=0.3, random_state=rng, format="csr")
    y = rng.integers(0, 3, 600).astype(float)
    path = tmp_path / "three.svm"
    dump_svmlight_file(X, y, str(path), zero_based=False)
    real = sdca_mod.sdca_epoch
    calls = {"n": 0}

    def kernel(*args):
        calls["n"] += 1
        if calls["n"] == 30:                     # during the first class's fit
            signal.raise_signal(signal.SIGINT)
        return real(*args)

    monkeypatch.setattr(sdca_mod, "sdca_epoch", kernel)
    code, out, err = run_main(capsys, "fit", path, "--solver", "sdca", "--option",
                              "shrinking=false", "--lam", "1e-7", "--tol", "0",
                              "--max-epochs", "5000", "--json", "--model",
                              tmp_path / "m.npz")
    assert code == 130 and "interrupted" in err
    s = json.loads(out.splitlines()[-1])
    assert len(s["problems"]) == 3
    assert all(p["epochs"] < 5000 for p in s["problems"]), s["problems"]
    assert read_model(tmp_path / "m.npz").coef.shape == (3, 30)


def test_ctrl_c_stops_cross_validation(capsys, tmp_path, monkeypatch, default_sigint):
    """Ctrl-C during ``cv``: the running fit stops at once and ``cv`` ends with
    code 130 between fits (a partial grid is no cross-validation result)."""
    import primaldual.solvers.sdca as sdca_mod
    X, y = make_classification_data(n=400, d=20, seed=2)
    path = tmp_path / "t.svm"
    dump_svmlight_file(X, y, str(path), zero_based=False)
    real = sdca_mod.sdca_epoch
    calls = {"n": 0}

    def kernel(*args):
        calls["n"] += 1
        if calls["n"] == 10:
            signal.raise_signal(signal.SIGINT)
        return real(*args)

    monkeypatch.setattr(sdca_mod, "sdca_epoch", kernel)
    code, _, err = run_main(capsys, "cv", path, "--solver", "sdca", "--option",
                            "shrinking=false", "--tol", "0", "--max-epochs", "100000",
                            "--n-lams", "3")
    assert code == 130 and "interrupted" in err
    assert calls["n"] < 1000                     # the first fit stopped, no other ran on
