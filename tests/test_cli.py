"""The command line (docs/conventions.md §6): fit / predict / info end to end, trace, plot,
checkpoint and resume (including a SIGKILL mid-run), bench/demo dispatch.

Values printed by the CLI are checked against ``primaldual.solve`` run in this
process on the same file, loaded independently with scikit-learn's parser
(``conftest.load_binary``): same seed, so primal, dual and epochs must be
identical.  Subprocesses share one Numba cache directory so that the compiled
kernels are reused between them.
"""
from __future__ import annotations

import csv
import json
import os
import signal
import subprocess
import sys
import tempfile
import time

import numpy as np
import pytest

import primaldual
from primaldual import cli
from primaldual.solvers import load_state

from conftest import REPO, load_binary, shared_file

NUMBA_CACHE = os.environ.get("NUMBA_CACHE_DIR") or os.path.join(
    tempfile.gettempdir(), "primaldual-test-numba-cache")

TRACE_KEYS = {"epoch", "time", "primal", "dual", "gap", "feature_accesses"}
JSON_KEYS = {"solver", "loss", "lam", "l1", "n", "d", "nnz", "epochs", "time_s", "primal",
             "dual", "gap", "converged"}


def run_cli(*args, timeout=240):
    env = dict(os.environ, PYTHONPATH=str(REPO / "src"), NUMBA_CACHE_DIR=NUMBA_CACHE)
    return subprocess.run([sys.executable, "-m", "primaldual", *map(str, args)],
                          capture_output=True, text=True, env=env, timeout=timeout,
                          cwd=str(REPO))


def last_json(stdout):
    return json.loads(stdout.strip().splitlines()[-1])


def run_main(capsys, *args):
    code = cli.main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


# ------------------------------------------------------------------ parsing
@pytest.mark.parametrize("text, value", [
    ("3", 3), ("-2", -2), ("0.5", 0.5), ("1e-3", 1e-3), ("true", True), ("False", False),
    ("none", None), ("uniform", "uniform"), ("nan", float("nan"))])
def test_parse_value(text, value):
    got = cli.parse_value(text)
    if isinstance(value, float) and np.isnan(value):
        assert isinstance(got, float) and np.isnan(got)
    else:
        assert got == value and type(got) is type(value)


def test_options_reach_the_solver(monkeypatch, capsys):
    path = shared_file("heart_scale")
    seen = {}
    real = primaldual.solve

    def spy(*a, **kw):
        seen.update(kw)
        return real(*a, **kw)

    monkeypatch.setattr(primaldual, "solve", spy)
    code, out, err = run_main(capsys, "fit", path, "--solver", "sdca",
                              "--option", "sampling=uniform",
                              "--option", "output=average", "--option", "T0=2",
                              "--loss", "smooth_hinge", "--loss-param", "gamma=0.5",
                              "--max-epochs", "4", "--time-limit", "100", "--json")
    assert code == 0, err
    assert seen["sampling"] == "uniform" and seen["output"] == "average"
    assert seen["T0"] == 2 and type(seen["T0"]) is int
    assert seen["loss_params"] == {"gamma": 0.5} and seen["time_limit"] == 100.0
    assert seen["progress"] is False           # stdout is not a terminal here
    assert "checkpoint" not in seen and "resume" not in seen


def test_progress_bar_only_on_a_terminal(monkeypatch, capsys):
    path = shared_file("heart_scale")
    seen = []
    real = primaldual.solve

    def spy(*a, **kw):
        seen.append(kw["progress"])
        return real(*a, **kw)

    monkeypatch.setattr(primaldual, "solve", spy)
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True)
    code, _, err = run_main(capsys, "fit", path, "--max-epochs", "3", "--tol", "0",
                            "--solver", "sdca")
    assert code == 0 and seen == [True]
    assert "sdca" in err and "epochs" in err          # tqdm wrote its bar to stderr
    code, _, err = run_main(capsys, "fit", path, "--max-epochs", "3", "--quiet")
    assert code == 0 and seen == [True, False]
    assert err == ""                                  # --quiet: nothing on stderr


# --------------------------------------------------------- fit end to end
def test_fit_subprocess_matches_solve(tmp_path):
    """fit --test --json --model --trace --plot on a1a/a1a.t vs solve() in process."""
    train, test = shared_file("a1a"), shared_file("a1a.t")
    model, trace, plot = tmp_path / "m.npz", tmp_path / "t.csv", tmp_path / "p.png"
    r = run_cli("fit", train, "--test", test, "--loss", "logistic", "--lam", "1e-3",
                "--solver", "sdca", "--tol", "1e-8", "--max-epochs", "40", "--seed", "3",
                "--model", model, "--trace", trace, "--plot", plot, "--json")
    assert r.returncode == 0, r.stderr
    s = last_json(r.stdout)
    assert JSON_KEYS | {"test_accuracy"} <= set(s)
    assert "-1 -> -1, 1 -> +1" in r.stderr           # the label mapping is announced

    # the model has a1a's 119 features; a1a.t's features 120-123 are ignored,
    # as LIBLINEAR reads a test file
    X, y = load_binary("a1a", n_features=119)
    Xt, yt = load_binary("a1a.t", n_features=123)
    Xt = Xt[:, :119]
    res = primaldual.solve(X, y, loss="logistic", lam=1e-3, solver="sdca", tol=1e-8,
                           max_epochs=40, random_state=3, eval_set=(Xt, yt))
    assert (s["solver"], s["loss"], s["lam"], s["l1"]) == ("sdca", "logistic", 1e-3, 0.0)
    assert (s["n"], s["d"], s["nnz"]) == (X.shape[0], 119, X.nnz)
    assert "a1a.t uses features beyond the last one of" in r.stderr
    assert s["epochs"] == res.n_epochs and s["converged"] == res.converged
    assert s["primal"] == res.primal and s["dual"] == res.dual and s["gap"] == res.gap
    acc = np.mean(np.where(Xt @ res.coef > 0, 1.0, -1.0) == yt)
    assert s["test_accuracy"] == acc == 1.0 - res.trace[-1]["test_error"]
    assert s["time_s"] > 0

    with open(trace, newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == len(res.trace)
    assert TRACE_KEYS | {"test_error"} <= set(rows[0])
    for row, rec in zip(rows, res.trace):
        for k in ("epoch", "primal", "dual", "gap", "feature_accesses", "test_error"):
            assert float(row[k]) == rec[k]

    from matplotlib.image import imread
    img = imread(plot)
    assert img.shape[1] > 2 * img.shape[0] * 0.9     # two panels side by side
    assert img[..., :3].std() > 0.05                 # not a blank image

    from primaldual.model_io import read_model
    m = read_model(model)
    np.testing.assert_array_equal(m.coef[0], res.coef)
    assert m.classes.tolist() == [-1.0, 1.0] and m.primal == res.primal

    # predict with the model file: labels one per line, then the JSON line
    p = run_cli("predict", model, test, "--json")
    assert p.returncode == 0, p.stderr
    lines = p.stdout.strip().splitlines()
    pj = json.loads(lines[-1])
    assert pj["n"] == Xt.shape[0] == len(lines) - 1
    assert pj["accuracy"] == acc
    expected = np.where(Xt @ res.coef > 0, 1, -1)
    assert lines[:-1] == [str(v) for v in expected]


def test_fit_in_process_labels_regression_and_normalize(tmp_path, capsys):
    """Label mapping 2/4 -> -1/+1 with original labels back from predict; a
    regression loss keeps y; --normalize scales rows to unit norm."""
    from sklearn.datasets import load_svmlight_file
    from sklearn.preprocessing import normalize

    path = shared_file("breast-cancer")
    model = tmp_path / "bc.npz"
    code, out, err = run_main(capsys, "fit", path, "--loss", "hinge", "--normalize",
                              "--lam", "1e-2", "--max-epochs", "30", "--model", model,
                              "--json")
    assert code == 0, err
    assert "2 -> -1, 4 -> +1" in err
    s = last_json(out)
    X, y_raw = load_svmlight_file(str(path))
    X = X.toarray()            # a dense file (density 1): the CLI reads it dense
    Xn = normalize(X)
    y = np.where(y_raw == 4, 1.0, -1.0)
    res = primaldual.solve(Xn, y, lam=1e-2, max_epochs=30, random_state=0)
    assert s["primal"] == res.primal and s["epochs"] == res.n_epochs

    code, out, err = run_main(capsys, "predict", model, path, "--json")
    assert code == 0, err
    lines = out.strip().splitlines()
    pred = np.where(Xn @ res.coef > 0, 4, 2)
    assert lines[:-1] == [str(v) for v in pred]
    assert json.loads(lines[-1])["accuracy"] == np.mean(pred == y_raw)

    # regression: y is used as is (heart_scale labels -1/+1 as real targets)
    hs = shared_file("heart_scale")
    code, out, err = run_main(capsys, "fit", hs, "--loss", "squared", "--lam", "1e-2",
                              "--test", hs, "--json", "--model", tmp_path / "r.npz")
    assert code == 0, err
    assert "->" not in err                           # no label mapping for regression
    s = last_json(out)
    Xh, yh = load_svmlight_file(str(hs))
    Xh = Xh.toarray()          # density 0.96: the CLI reads it dense
    # the CLI's auto solves a problem this small in numpy (direct-newton): the
    # same optimum as the library's solvers, with its own exact certificate
    assert s["solver"] == "direct-newton"
    from primaldual.direct_newton import solve_direct
    res = solve_direct(Xh, yh, loss="squared", lam=1e-2, tol=1e-6)
    ref = primaldual.solve(Xh, yh, loss="squared", lam=1e-2, tol=1e-12, random_state=0)
    assert s["primal"] == res.primal and s["converged"] == res.converged is True
    assert res.primal == pytest.approx(ref.primal, rel=1e-9)
    assert res.dual <= ref.primal + 1e-15 and res.gap <= 1e-6 * res.primal
    assert s["test_rmse"] == np.sqrt(np.mean((Xh @ res.coef - yh) ** 2))
    assert "test_accuracy" not in s
    code, out, err = run_main(capsys, "predict", tmp_path / "r.npz", hs, "--json")
    vals = np.array([float(v) for v in out.strip().splitlines()[:-1]])
    np.testing.assert_allclose(vals, Xh @ res.coef, rtol=1e-13, atol=1e-15)
    assert json.loads(out.strip().splitlines()[-1])["rmse"] == s["test_rmse"]

    # the human summary (no --json)
    code, out, err = run_main(capsys, "fit", hs, "--max-epochs", "5", "--quiet")
    assert code == 0 and "primal" in out and "gap" in out and not out.startswith("{")


def test_info(tmp_path, capsys):
    path = shared_file("heart_scale")
    code, out, _ = run_main(capsys, "info", path, "--json")
    assert code == 0
    s = json.loads(out)
    from sklearn.datasets import load_svmlight_file
    X, y = load_svmlight_file(str(path))
    norms = np.sqrt(np.asarray(X.multiply(X).sum(axis=1)).ravel())
    assert (s["n"], s["d"], s["nnz"]) == (270, 13, X.nnz)
    assert s["density"] == X.nnz / (270 * 13)
    assert s["labels"] == {"-1": 150, "1": 120} and s["zero_rows"] == 0
    assert s["min_row_norm"] == norms.min() and s["max_row_norm"] == norms.max()

    # zero rows (a label with no features, or explicit zeros only) are counted
    f = tmp_path / "z.svm"
    f.write_text("1 1:0.5 3:2\n-1\n1 2:0\n-1 1:-1.5\n")
    code, out, _ = run_main(capsys, "info", f, "--json")
    s = json.loads(out)
    assert s["zero_rows"] == 2 and s["n"] == 4 and s["nnz"] == 3
    assert s["min_row_norm"] == 0.0 and s["max_row_norm"] == np.hypot(0.5, 2.0)
    code, out, _ = run_main(capsys, "info", f)
    assert "zero rows     2" in out


# ------------------------------------------------------ checkpoint / resume
def _fit_args(path, *extra):
    # hinge shrinks, and shrinking re-activates coordinates at checks: a run
    # continued with a larger --max-epochs equals one long run when both check at
    # the same epochs, so the check interval is fixed here
    return ["fit", path, "--loss", "hinge", "--lam", "1e-4", "--tol", "1e-12", "--solver", "sdca",
            "--seed", "7", "--json", "--quiet", "--option", "check_every=1", *extra]


def test_checkpoint_then_resume_equals_uninterrupted(tmp_path, capsys):
    path = shared_file("a1a")
    ck = tmp_path / "ck"
    code, out, err = run_main(capsys, *_fit_args(path, "--max-epochs", 3, "--checkpoint", ck,
                                                 "--checkpoint-every", 2))
    assert code == 0, err
    assert sorted(p.name for p in ck.iterdir()) == ["state.npz"]      # no temp files left
    assert load_state(ck).epoch == 3
    code, out, err = run_main(capsys, *_fit_args(path, "--max-epochs", 10, "--checkpoint",
                                                 ck, "--resume", "--model", tmp_path / "a.npz"))
    assert code == 0, err
    resumed = last_json(out)
    code, out, err = run_main(capsys, *_fit_args(path, "--max-epochs", 10,
                                                 "--model", tmp_path / "b.npz"))
    full = last_json(out)
    assert resumed["epochs"] == full["epochs"] == 10
    assert resumed["primal"] == full["primal"] and resumed["dual"] == full["dual"]
    from primaldual.model_io import read_model
    np.testing.assert_array_equal(read_model(tmp_path / "a.npz").coef,
                                  read_model(tmp_path / "b.npz").coef)

    # --resume without a checkpoint is an error that says what to do
    code, _, err = run_main(capsys, *_fit_args(path, "--resume"))
    assert code == 1 and "--resume needs --checkpoint DIR" in err
    code, _, err = run_main(capsys, *_fit_args(path, "--resume", "--checkpoint",
                                               tmp_path / "none"))
    assert code == 1 and "no checkpoint" in err and "without --resume" in err
    # a checkpoint of another problem is refused
    code, _, err = run_main(capsys, *_fit_args(path, "--lam", "1e-2", "--resume",
                                               "--checkpoint", ck))
    assert code == 1 and "different problem" in err and "lam" in err


def test_sigkill_then_resume_equals_uninterrupted(tmp_path):
    """A real interruption: SIGKILL the process once a checkpoint exists, resume.
    SDCA is named: under ``auto`` the uninterrupted run hands over to the IPM (at
    its rate SDCA would not reach tol in the budget), which a resumed run, that
    continues the checkpoint's solver, does not."""
    path = shared_file("a9a")
    ck = tmp_path / "ck"
    args = ["fit", path, "--loss", "hinge", "--lam", "1e-5", "--tol", "1e-12", "--seed", "11",
            "--max-epochs", "120", "--json", "--quiet", "--checkpoint", ck,
            "--checkpoint-every", "5", "--solver", "sdca"]
    env = dict(os.environ, PYTHONPATH=str(REPO / "src"), NUMBA_CACHE_DIR=NUMBA_CACHE)
    proc = subprocess.Popen([sys.executable, "-m", "primaldual", *map(str, args)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                            cwd=str(REPO))
    state = ck / "state.npz"
    deadline = time.monotonic() + 180

    def past_start():          # a checkpoint after the one of the first check (epoch 0)
        return state.exists() and load_state(ck).epoch > 0

    while not past_start() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    proc.send_signal(signal.SIGKILL)
    proc.communicate()
    assert proc.returncode == -signal.SIGKILL, "the run ended before it could be killed"
    killed_at = load_state(ck).epoch
    assert 0 < killed_at < 120

    r = run_cli(*args, "--resume", "--model", tmp_path / "resumed.npz")
    assert r.returncode == 0, r.stderr
    s = last_json(r.stdout)

    X, y = load_binary("a9a")
    # the uninterrupted run of the same command (its checkpoints set its checks)
    res = primaldual.solve(X, y, loss="hinge", lam=1e-5, tol=1e-12, random_state=11,
                           max_epochs=120, checkpoint=tmp_path / "ref", checkpoint_every=5,
                           solver="sdca")
    assert s["epochs"] == res.n_epochs == 120
    assert s["primal"] == res.primal and s["dual"] == res.dual
    from primaldual.model_io import read_model
    np.testing.assert_array_equal(read_model(tmp_path / "resumed.npz").coef[0], res.coef)


# ------------------------------------------------------------ bench / demo
@pytest.mark.parametrize("command, module", [("bench", "primaldual.bench.cli"),
                                             ("demo", "primaldual.demo")])
def test_bench_and_demo_dispatch(monkeypatch, command, module):
    import types
    calls = []
    fake = types.ModuleType(module)
    fake.main = lambda argv: calls.append(argv) or 5
    monkeypatch.setitem(sys.modules, module, fake)
    assert cli.main([command, "--preset", "x", "-k", "3"]) == 5
    assert calls == [["--preset", "x", "-k", "3"]]


def test_usage_errors_exit_2(capsys):
    code, _, err = run_main(capsys)
    assert code == 2 and "COMMAND" in err
    code, _, err = run_main(capsys, "fit")
    assert code == 2 and "TRAIN" in err
    code, _, err = run_main(capsys, "fit", "x", "--lam", "abc")
    assert code == 2 and "--lam" in err


# ------------------------------------------------------------------ solvers
def test_solvers_lists_every_registered_solver(capsys):
    from primaldual.solvers import SOLVERS
    from primaldual.solvers._multiclass import MULTICLASS_SOLVERS
    assert cli.main(["solvers"]) == 0
    out = capsys.readouterr().out
    names = [line.split()[0] for line in out.splitlines() if line and not line.startswith(
        "primaldual")]
    assert names == sorted(set(SOLVERS) | set(MULTICLASS_SOLVERS)) + ["auto"]
    assert "[smooth losses, l1]" in out.splitlines()[names.index("asdca")]
    assert "[loss crammer_singer]" in out.splitlines()[names.index("crammer_singer_dual")]
    assert cli.main(["solvers", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["solvers"]
    assert {r["solver"] for r in rows} == set(SOLVERS) | set(MULTICLASS_SOLVERS)
    assert {r["solver"] for r in rows if r["multiclass"]} == set(MULTICLASS_SOLVERS)
    assert all(r["summary"] for r in rows)
    assert {r["solver"] for r in rows if r["dask"]} == {"cocoa", "minibatch_sdca", "dso", "disco",
                                                         "psgd", "newton",
                                                         "multinomial_newton",
                                                         "crammer_singer_cocoa", "l1_newton"}
    assert "[hinge, smooth_hinge, absolute, epsilon_insensitive]" in \
        out.splitlines()[names.index("ipm")]


def test_solver_catalog_file_matches_the_registry():
    """``primaldual solvers`` reads solver_catalog.json (no Numba import); it must
    say what the registry says (rewrite it with python -m primaldual.cli.describe)."""
    from primaldual.cli import describe
    assert describe.load_catalog() == json.loads(json.dumps(describe.build_catalog())), \
        "stale src/primaldual/cli/solver_catalog.json: run python -m primaldual.cli.describe"


def test_solvers_command_does_not_import_numba():
    import subprocess
    import sys
    code = ("import sys\nfrom primaldual import cli\ncli.main(['solvers'])\n"
            "cli.main(['solvers', 'sdca'])\nassert 'numba' not in sys.modules\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


def test_multiclass_solver_names_are_accepted_where_they_fit(capsys, tmp_path):
    import numpy as np
    from sklearn.datasets import dump_svmlight_file
    import primaldual
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 4))
    y = np.argmax(X[:, :3], axis=1).astype(float)
    path = str(tmp_path / "three.svm")
    dump_svmlight_file(X, y, path, zero_based=False)
    assert cli.main(["fit", path, "--loss", "multinomial", "--solver",
                     "multinomial_dual_cd", "--lam", "0.01", "--json", "--quiet"]) == 0
    assert json.loads(capsys.readouterr().out.splitlines()[-1])["converged"]
    with pytest.raises(ValueError, match="fits loss=multinomial only, not loss='hinge'"):
        primaldual.solve(X, np.where(y == 0, 1.0, -1.0), solver="multinomial_newton")
    assert cli.main(["solvers", "crammer_singer_dual"]) == 0
    assert capsys.readouterr().out.startswith("crammer_singer_dual: ")


@pytest.mark.parametrize("solver", ["sdca", "dso", "simba", "minibatch_sdca", "cocoa",
                                    "newton", "spdc"])
def test_solvers_name_lists_the_option_keys_that_option_accepts(solver, capsys):
    """Every key listed without a flag of its own is accepted by --option, with its
    default written back as text (a round trip through the field's type)."""
    from primaldual.solvers import SOLVERS
    assert cli.main(["solvers", solver, "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["options"]
    keys = [r["option"] for r in rows]
    oc = SOLVERS[solver].options_class
    assert set(keys) == set(oc.names()) - {"warm_start"}
    for r in rows:
        if r["flag"]:
            continue
        default = getattr(oc(), r["option"])
        assert cli.parse_option(solver, r["option"], str(default)) == default
    assert cli.main(["solvers", solver]) == 0
    text = capsys.readouterr().out
    assert text.startswith(f"{solver}: ")
    assert "set with --time-limit" in text


def test_solvers_sdca_names_the_choices(capsys):
    assert cli.main(["solvers", "sdca"]) == 0
    out = capsys.readouterr().out
    line = next(l for l in out.splitlines() if l.strip().startswith("sampling"))
    assert "default 'permutation'" in line and "'uniform', 'permutation', 'cyclic'" in line


def test_solvers_unknown_name_is_an_error(capsys):
    assert cli.main(["solvers", "sdcaa"]) == 1
    err = capsys.readouterr().err
    assert "unknown solver 'sdcaa'" in err and "sdca" in err
    assert cli.main(["solvers", "auto"]) == 1
    assert "runs the solvers above under supervision" in capsys.readouterr().err
