"""Optional extras (docs/conventions.md §8): the library works without Dask,
matplotlib and tqdm, and a feature that needs one of them says which extra to
install.

"Missing" is simulated with ``sys.modules[name] = None``, which makes every
``import name`` raise ImportError, exactly as when the package is absent.
The library-alone check runs in a fresh interpreter so that nothing imported
earlier by the test session hides an import.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import textwrap

import numpy as np
import pytest
import tomllib

import primaldual
from primaldual import _extras, cli
from primaldual._extras import EXTRAS, MissingExtraError, have, require

from conftest import REPO

NUMBA_CACHE = os.environ.get("NUMBA_CACHE_DIR") or os.path.join(
    tempfile.gettempdir(), "primaldual-test-numba-cache")

OPTIONAL = ("dask", "distributed", "matplotlib", "tqdm")


def _block(monkeypatch, *names):
    """Make ``import name`` (and of every loaded submodule) fail for each name."""
    for name in names:
        for mod in [m for m in sys.modules if m == name or m.startswith(name + ".")]:
            monkeypatch.setitem(sys.modules, mod, None)
        monkeypatch.setitem(sys.modules, name, None)


def _data(n=60, d=5, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    y = np.where(X @ rng.normal(size=d) > 0, 1.0, -1.0)
    return X, y


def test_pyproject_declares_the_extras_and_keeps_them_out_of_the_core():
    meta = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    core = " ".join(meta["dependencies"])
    for dist in ("dask", "distributed", "matplotlib", "tqdm"):
        assert dist not in core, f"{dist} is a core dependency"
    extras = meta["optional-dependencies"]
    assert extras["dask"] == ["dask[distributed]>=2024.1"]
    assert extras["plot"] == ["matplotlib>=3.8"]
    assert extras["progress"] == ["tqdm>=4.66"]
    for dev in ("test", "bench", "docs", "all"):      # make test / demo / docs install all
        assert "primaldual[dask,plot,progress]" in extras[dev], dev
    # every extra named by an error message exists
    assert {extra for extra, _ in EXTRAS.values()} <= set(extras)


@pytest.mark.parametrize("module, extra, dist", [
    ("dask", "dask", "dask[distributed]"),
    ("distributed", "dask", "dask[distributed]"),
    ("matplotlib", "plot", "matplotlib"),
    ("tqdm.auto", "progress", "tqdm"),
])
def test_require_names_the_extra(monkeypatch, module, extra, dist):
    _block(monkeypatch, module.partition(".")[0])
    with pytest.raises(MissingExtraError) as info:
        require(module, "the feature")
    msg = str(info.value)
    assert f"pip install 'primaldual[{extra}]'" in msg
    assert msg.startswith(f"the feature needs {dist}, which is not installed")
    assert isinstance(info.value, ImportError)
    assert not have(module)


def test_require_returns_the_module_when_installed():
    import matplotlib
    assert require("matplotlib", "x") is matplotlib
    assert have("tqdm") and have("distributed")
    with pytest.raises(KeyError, match="not an optional dependency"):
        require("numpy", "x")


def test_require_does_not_relabel_another_import_error(monkeypatch):
    """A failure inside the optional package (another module missing) is not
    reported as the optional package itself being absent."""
    real = _extras.importlib.import_module

    def broken(name, *a, **k):
        if name == "matplotlib":
            raise ModuleNotFoundError("No module named 'kiwisolver'", name="kiwisolver")
        return real(name, *a, **k)

    monkeypatch.setattr(_extras.importlib, "import_module", broken)
    with pytest.raises(ModuleNotFoundError) as info:
        require("matplotlib", "--plot")
    assert not isinstance(info.value, MissingExtraError)
    assert info.value.name == "kiwisolver"


def test_progress_true_without_tqdm(monkeypatch):
    X, y = _data()
    _block(monkeypatch, "tqdm")
    with pytest.raises(MissingExtraError, match=r"progress=True needs tqdm.*primaldual\[progress\]"):
        primaldual.solve(X, y, lam=1e-2, progress=True)
    res = primaldual.solve(X, y, lam=1e-2, tol=1e-8)        # progress off: no tqdm needed
    assert res.converged


def test_cli_plot_without_matplotlib_fails_before_fitting(monkeypatch, tmp_path, capsys):
    from sklearn.datasets import dump_svmlight_file
    X, y = _data()
    train = tmp_path / "train.svm"
    dump_svmlight_file(X, y, str(train), zero_based=False)
    _block(monkeypatch, "matplotlib")
    model = tmp_path / "m.npz"
    code = cli.main(["fit", str(train), "--plot", str(tmp_path / "p.png"),
                     "--model", str(model), "--quiet"])
    err = capsys.readouterr().err
    assert code == 1
    assert "--plot needs matplotlib" in err and "pip install 'primaldual[plot]'" in err
    assert not model.exists()                    # refused before any work
    assert not (tmp_path / "p.png").exists()


def test_cli_scheduler_without_dask(monkeypatch, tmp_path, capsys):
    from sklearn.datasets import dump_svmlight_file
    X, y = _data()
    train = tmp_path / "train.svm"
    dump_svmlight_file(X, y, str(train), zero_based=False)
    _block(monkeypatch, "distributed", "dask")
    code = cli.main(["fit", str(train), "--solver", "cocoa", "--scheduler",
                     "tcp://127.0.0.1:1", "--parts-dir", str(tmp_path / "parts"), "--quiet"])
    err = capsys.readouterr().err
    assert code == 1
    assert "--scheduler needs dask[distributed]" in err
    assert "pip install 'primaldual[dask]'" in err


def test_bench_plots_without_matplotlib(monkeypatch):
    from primaldual.bench import plots
    _block(monkeypatch, "matplotlib")
    with pytest.raises(MissingExtraError, match=r"primaldual\[plot\]"):
        plots._plt()


def test_bench_progress_without_tqdm(monkeypatch):
    from primaldual.bench import harness
    _block(monkeypatch, "tqdm")
    bar = harness._progress(3, quiet=True)       # a disabled bar needs no tqdm
    bar.set_postfix_str("x")
    bar.update(1)
    bar.close()


LIBRARY_ALONE = textwrap.dedent("""
    import json, sys
    for name in {optional!r}:
        sys.modules[name] = None
    import numpy as np
    from sklearn.datasets import dump_svmlight_file
    import primaldual
    from primaldual import cli
    rng = np.random.default_rng(0)
    X = rng.normal(size=(80, 6)); X /= np.linalg.norm(X, axis=1, keepdims=True)
    y = np.where(X @ rng.normal(size=6) > 0, 1.0, -1.0)
    res = primaldual.solve(X, y, lam=1e-2, tol=1e-8)
    ref = primaldual.Problem(X, y, lam=1e-2)
    assert res.converged and abs(ref.gap(res.coef, res.dual_coef) - res.gap) < 1e-12
    auto = primaldual.solve(X, y, loss="logistic", lam=1e-2, tol=1e-8, solver="auto")
    assert auto.converged
    clf = primaldual.LinearClassifier(alpha=1e-2).fit(X, y)
    reg = primaldual.LinearRegressor(alpha=1e-2).fit(X, X @ np.arange(6.0))
    primaldual.save_model(clf, {tmp!r} + "/clf.npz")
    back = primaldual.load_model({tmp!r} + "/clf.npz")
    assert (back.predict(X) == clf.predict(X)).all()
    train = {tmp!r} + "/train.svm"
    dump_svmlight_file(X, y, train, zero_based=False)
    assert cli.main(["fit", train, "--model", {tmp!r} + "/m.npz", "--json"]) == 0
    assert cli.main(["predict", {tmp!r} + "/m.npz", train, "--json"]) == 0
    assert cli.main(["info", train, "--json"]) == 0
    assert cli.main(["cv", train, "--folds", "3", "--json"]) == 0
    loaded = sorted(m for m in sys.modules if sys.modules[m] is not None
                    and m.partition(".")[0] in {optional!r})
    print(json.dumps({{"loaded": loaded, "score": clf.score(X, y)}}))
""")


def test_library_alone_needs_no_extra(tmp_path):
    """import primaldual, solve(), the estimators, model files and the CLI's fit,
    predict, info and cv run with Dask, matplotlib and tqdm all missing."""
    code = LIBRARY_ALONE.format(optional=OPTIONAL, tmp=str(tmp_path))
    env = dict(os.environ, PYTHONPATH=str(REPO / "src"), NUMBA_CACHE_DIR=NUMBA_CACHE)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=env, timeout=600, cwd=str(tmp_path))
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["loaded"] == []
    assert out["score"] > 0.8


@pytest.mark.parametrize("command", [["demo", "--quick", "--quiet"],
                                     ["bench", "--preset", "sdca-paper", "--quick"]])
def test_demo_and_bench_without_matplotlib_refuse_before_running(monkeypatch, capsys,
                                                                  tmp_path, command):
    _block(monkeypatch, "matplotlib")
    out = tmp_path / "out"
    code = cli.main([*command, "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 1
    assert f"primaldual {command[0]}: error:" in err
    assert "--no-plots goes without" in err and "pip install 'primaldual[plot]'" in err
    assert not out.exists()
