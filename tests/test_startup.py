"""Start-up structure: ``import primaldual``, building the command-line parser
and ``primaldual --help`` load none of the heavy modules (issue 24, item 5).

Each check runs in a fresh interpreter and reads ``sys.modules``: it is about
what is imported, not how long it takes (the times are in
benchmarks/bench_startup.py and benchmarks/results/startup.md).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"

#: module prefixes that must stay unloaded: scikit-learn, Dask, matplotlib,
#: Numba, SciPy, and the package's own compiled kernels, losses (their compiled
#: modules all import losses._scalar; the names in losses.registry are light) and solvers
HEAVY = ("sklearn", "dask", "distributed", "matplotlib", "numba", "scipy",
         "primaldual.kernels", "primaldual.solvers", "primaldual.losses.loss",
         "primaldual.losses.dispatch", "primaldual.losses._scalar", "primaldual.estimators")


def loaded_after(code: str) -> list:
    """The heavy modules in ``sys.modules`` after running ``code`` in a fresh
    interpreter with this tree's ``src`` first on the path."""
    probe = (code + "\nimport json, sys\n"
             f"print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in "
             f"{sorted({h.split('.')[0] for h in HEAVY})!r})))\n")
    env = dict(os.environ)
    env["PYTHONPATH"] = str(SRC) + os.pathsep + env.get("PYTHONPATH", "")
    out = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    mods = json.loads(out.stdout.strip().splitlines()[-1])
    return [m for m in mods if any(m == h or m.startswith(h + ".") for h in HEAVY)]


def test_import_primaldual_loads_no_heavy_module():
    assert loaded_after("import primaldual") == []


def test_building_the_parser_loads_no_heavy_module():
    code = ("from primaldual.cli import build_parser\n"
            "p = build_parser()\n"
            "p.format_help()\n"
            "sub = next(a for a in p._actions if a.choices)\n"
            "for s in sub.choices.values():\n"
            "    s.format_help()\n"
            "p.parse_args(['fit', 'train.txt'])\n")
    assert loaded_after(code) == []


def test_help_loads_no_heavy_module():
    code = ("import contextlib, io\n"
            "from primaldual.cli import main\n"
            "with contextlib.redirect_stdout(io.StringIO()) as out:\n"
            "    assert main(['--help']) == 0\n"
            "    assert main(['fit', '--help']) == 0\n"
            "assert 'usage' in out.getvalue()\n")
    assert loaded_after(code) == []


def test_the_probe_sees_a_heavy_import():
    # the check above can fail: importing a solver shows up in the list
    assert "primaldual.kernels.objective" in loaded_after("import primaldual.problem")


def test_every_subcommand_has_a_command_function():
    from primaldual import cli

    parser = cli.build_parser()
    sub = next(a for a in parser._actions if a.choices)
    names = set(sub.choices) - {"bench", "demo"}     # those two dispatch by name
    assert names == set(cli._COMMAND_MODULES)
    for name in names:
        assert callable(cli._command(name))


@pytest.mark.parametrize("name", ["read_libsvm", "encode_binary_labels", "split_libsvm",
                                  "write_trace_csv"])
def test_file_helpers_are_still_exported(name):
    from primaldual import cli
    from primaldual.cli import files

    assert getattr(cli, name) is getattr(files, name)


def test_an_l1_free_sdca_fit_compiles_no_elastic_net_step():
    # only what the call uses is compiled: with l1 = 0 the epoch kernel gets
    # prox=None, Numba prunes the prox-SDCA branch, and its walk never compiles
    code = ("import numpy as np, scipy.sparse as sp, primaldual\n"
            "from numba import types\n"
            "from primaldual.kernels.sdca import epoch, passes, prox as prox_mod\n"
            "X = sp.random(300, 40, density=0.2, format='csr', random_state=0)\n"
            "y = np.where(np.arange(300) % 2, 1.0, -1.0)\n"
            "primaldual.solve(X, y, loss='hinge', lam=1e-2, solver='sdca', max_epochs=3)\n"
            "prox = ([s[10] for s in passes.sdca_passes.signatures]\n"
            "        + [s[10] for s in epoch.sdca_epoch.signatures])\n"
            "assert prox and all(t == types.none for t in prox), prox\n"
            "assert prox_mod._walk.signatures == [], prox_mod._walk.signatures\n")
    assert loaded_after(code) is not None        # the probe's assertions ran


def test_prox_work_is_none_without_l1():
    import numpy as np

    from primaldual import Problem
    from primaldual.kernels.sdca import prox_work_arrays

    X = np.arange(12.0).reshape(4, 3)
    prob = Problem(X, np.array([1.0, -1.0, 1.0, -1.0]), loss="hinge", lam=0.1)
    assert prox_work_arrays(prob.rows, 0.0) is None
    work = prox_work_arrays(prob.rows, 0.1)
    assert work.keys.shape == (6,) and work.heap.dtype == np.int64


COMPILED = """
import json, sys
import numpy as np
from numba.core import event
import primaldual

top = []
class Record(event.Listener):
    depth = 0
    def on_start(self, ev):
        if self.depth == 0:
            f = ev.data["dispatcher"].py_func
            top.append(f.__module__ + "." + f.__qualname__)
        self.depth += 1
    def on_end(self, ev):
        self.depth -= 1
event.register("numba:compile", Record())
rng = np.random.default_rng(0)
X = rng.standard_normal((400, 6))
y = np.where(X @ rng.standard_normal(6) > 0, 1.0, -1.0)
CALL
print(json.dumps({"compiled": top, "sklearn": "sklearn" in sys.modules}))
"""


def compiled_by(call: str, cache_dir) -> dict:
    """What a fresh interpreter with an empty Numba cache compiles for ``call``."""
    env = dict(os.environ)
    env["PYTHONPATH"] = str(SRC) + os.pathsep + env.get("PYTHONPATH", "")
    env["NUMBA_CACHE_DIR"] = str(cache_dir)
    out = subprocess.run([sys.executable, "-c", COMPILED.replace("CALL", call)], env=env,
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_a_default_solve_compiles_only_the_ipm_and_certificate_kernels_and_loads_no_sklearn(tmp_path):
    # standardized dense data, the hinge: auto picks the interior-point method,
    # which needs the row norms, the certificate pass, the loss values of its
    # primal point and its own elementwise loops (kernels/ipm.py), nothing else
    # (a cold cache compiles these once, about 1.3 s more than numpy loops cost)
    got = compiled_by("r = primaldual.solve(X, y)\nassert r.solver == 'ipm'", tmp_path)
    assert got["compiled"] == ["primaldual.kernels.objective.row_sqnorms",
                               "primaldual.kernels.objective.certificate_pass",
                               "primaldual.losses.loss._vec_value",
                               "primaldual.kernels.ipm.kkt_parts",
                               "primaldual.kernels.ipm.scale_rows",
                               "primaldual.kernels.ipm.newton_rhs",
                               "primaldual.kernels.ipm.block_step",
                               "primaldual.kernels.ipm.slack_steps",
                               "primaldual.kernels.ipm.longest_step"]
    assert got["sklearn"] is False


def test_a_default_logistic_fit_compiles_the_certificate_only(tmp_path):
    # a problem this small is solved by Newton's method in numpy (the direct leg
    # of auto, primaldual.solvers._direct); only its certificate is compiled
    got = compiled_by("e = primaldual.LinearClassifier(loss='logistic').fit(X, y)\n"
                      "assert e.solver_ == 'newton' and e.solver_path_[0]['direct']",
                      tmp_path)
    assert sorted(got["compiled"]) == ["primaldual.kernels.objective.certificate_pass",
                                       "primaldual.kernels.objective.row_sqnorms"]


#: what the commands on a small file may not load: the scikit-learn package
#: (its compiled svmlight parser is loaded on its own), SciPy, Numba (a small fit
#: runs direct-newton in numpy), Dask, matplotlib, the solvers and kernels
COMMAND_HEAVY = ("sklearn", "scipy", "numba", "dask", "distributed", "matplotlib",
                 "pandas", "primaldual.kernels", "primaldual.solvers",
                 "primaldual.losses.loss", "primaldual.losses.dispatch",
                 "primaldual.losses._scalar", "primaldual.estimators")


@pytest.mark.parametrize("argv", [
    ["fit", "{data}", "--model", "{tmp}/m.npz"],
    ["fit", "{data}", "--test", "{data}", "--loss", "logistic", "--scale", "--json"],
    ["train", "{data}", "{tmp}/m.model"],
    ["train", "-s", "0", "-v", "3", "{data}"],
    ["train", "-C", "{data}"],
    ["predict", "{tmp}/m.model", "{data}", "{tmp}/o.txt"],
    ["predict", "-b", "1", "{data}", "{tmp}/m0.model", "{tmp}/o.txt"],
    ["predict", "{tmp}/m.npz", "{data}"],
    ["info", "{data}"],
])
def test_small_commands_load_no_heavy_module(argv, tmp_path):
    """fit, train, predict (both orders) and info on a small dense file run on
    numpy alone: the structure behind an instant command line (the times are
    in benchmarks/results/startup.md)."""
    data = tmp_path / "d.svm"
    rng = __import__("random").Random(0)
    data.write_text("".join(f"{rng.choice([-1, 1])} " + " ".join(
        f"{j}:{rng.uniform(-1, 1):.4f}" for j in range(1, 6)) + "\n" for _ in range(80)))
    from primaldual import cli
    assert cli.main(["fit", str(data), "--model", str(tmp_path / "m.npz"), "--quiet"]) == 0
    assert cli.main(["train", "-q", str(data), str(tmp_path / "m.model")]) == 0
    assert cli.main(["train", "-q", "-s", "0", str(data), str(tmp_path / "m0.model")]) == 0
    args = [a.format(data=data, tmp=tmp_path) for a in argv]
    code = ("import contextlib, io, sys\nfrom primaldual import cli\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            f"    assert cli.main({args!r}) == 0\n"
            "mods = [m for m in sys.modules if m not in ('sklearn._cyutility', "
            "'sklearn.datasets._svmlight_format_fast')]\n"
            f"heavy = {COMMAND_HEAVY!r}\n"
            "bad = sorted(m for m in mods if any(m == h or m.startswith(h + '.') "
            "for h in heavy))\n"
            "print('BAD', bad)\n")
    env = dict(os.environ)
    env["PYTHONPATH"] = str(SRC) + os.pathsep + env.get("PYTHONPATH", "")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().splitlines()[-1] == "BAD []"
