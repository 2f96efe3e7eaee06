"""First fit: what a Python user waits for before the first result, in fresh processes.

Steps, each a new Python process (the median of ``--repeats`` interleaved runs):

* ``python -c pass`` and ``import numpy``: the floor every step stands on;
* ``import primaldual``;
* ``primaldual --help`` (``python -m primaldual --help``);
* the first default fit, ``LinearClassifier().fit(X, y)`` (and ``solve(X, y)``) on a seeded
  2,000 x 20 dense array (the loss of ``--loss``), with an EMPTY Numba cache
  (a new ``NUMBA_CACHE_DIR``: every kernel the call uses is compiled) and with
  a WARM one (the same directory, second run: the kernels are loaded from it).
  The process reports its own import and fit times, so the table splits the
  wall time into interpreter start, imports and the fit; its CPU time (user +
  system) is given beside the wall time;
* what the first fit compiles: every function Numba compiles for the call
  (recorded from Numba's ``numba:compile`` events inside the process) with its
  compile time, so that a kernel compiled for nothing shows up;
* with ``--baseline DIR``: the same first fits with another source tree (e.g.
  ``git archive main src | tar -x -C DIR``), interleaved, as ratios.

Writes benchmarks/results/first_fit.md (the command line: bench_startup.py).
The machine may be loaded by other work: compare the rows with the floor
measured in the same run.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

FIT = r"""
import json, time
t0 = time.perf_counter()
import numpy as np
import primaldual
from numba.core import event

compiles = []          # (function, wall, cpu) of every compile the call starts


class Compiles(event.Listener):
    def __init__(self):
        self.open = []

    def on_start(self, ev):
        self.open.append((time.perf_counter(), time.process_time()))

    def on_end(self, ev):
        w, c = self.open.pop()
        if not self.open:             # nested compiles are inside their caller's time
            f = ev.data["dispatcher"].py_func
            compiles.append((f.__module__.replace("primaldual.", "") + "." + f.__qualname__,
                             time.perf_counter() - w, time.process_time() - c))


event.register("numba:compile", Compiles())
rng = np.random.default_rng(0)
X = rng.standard_normal((2000, 20))
y = np.where(X @ rng.standard_normal(20) + 0.5 * rng.standard_normal(2000) > 0, 1, -1)
t1 = time.perf_counter()
if LOSS is None:
    entry = primaldual.solve
    t2 = time.perf_counter()
    solver = entry(X, y).solver
else:
    entry = primaldual.LinearClassifier       # imports scikit-learn and the solvers
    t2 = time.perf_counter()
    solver = entry(loss=LOSS).fit(X, y).solver_
t3 = time.perf_counter()
print(json.dumps({"import": t1 - t0, "entry": t2 - t1, "fit": t3 - t2, "solver": solver,
                  "compiles": compiles}))
"""


def _env(cache_dir, src=None):
    env = dict(os.environ)
    env["PYTHONPATH"] = str(src or ROOT / "src") + os.pathsep + env.get("PYTHONPATH", "")
    if cache_dir is not None:
        env["NUMBA_CACHE_DIR"] = str(cache_dir)
    return env


def _cpu_children():
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def _run(args, cache_dir=None, src=None):
    """``(wall, inner)`` of one fresh process; ``inner["cpu"]`` is its CPU time
    (user + system), which other work on the machine inflates less than the wall."""
    t, c = time.perf_counter(), _cpu_children()
    out = subprocess.run([sys.executable, *args], env=_env(cache_dir, src), capture_output=True,
                         text=True, check=True)
    wall = time.perf_counter() - t
    inner = {"cpu": _cpu_children() - c}
    lines = [ln for ln in out.stdout.splitlines() if ln.startswith("{")]
    if lines:
        inner.update(json.loads(lines[-1]))
    return wall, inner


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--loss", action="append", default=None,
                    help="loss of the first fit, or solve() for solve(X, y) (repeatable; default hinge, logistic and solve())")
    ap.add_argument("--baseline", help="another source tree (its src/ folder): its first "
                    "fits run interleaved with this tree's, as a side-by-side comparison")
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "first_fit.md"))
    args = ap.parse_args(argv)
    losses = args.loss or ["hinge", "logistic", "solve()"]
    load_before = os.getloadavg()
    steps = {"python -c pass": ["-c", "pass"], "import numpy": ["-c", "import numpy"],
             "import primaldual": ["-c", "import primaldual"],
             "primaldual --help": ["-m", "primaldual", "--help"]}
    walls = {k: [] for k in steps}
    cpus = {k: [] for k in steps}
    fits = {(loss, c): [] for loss in losses for c in ("empty", "warm")}
    base = {(loss, c): [] for loss in losses for c in ("empty", "warm")}
    for _ in range(args.repeats):                    # interleaved repeats
        for k, a in steps.items():
            wall, inner = _run(a)
            walls[k].append(wall)
            cpus[k].append(inner["cpu"])
        for loss in losses:
            with tempfile.TemporaryDirectory() as cache:
                code = FIT.replace("LOSS", "None" if loss == "solve()" else repr(loss))
                for c in ("empty", "warm"):
                    wall, inner = _run(["-c", code], cache)
                    fits[(loss, c)].append((wall, inner))
            if args.baseline:
                with tempfile.TemporaryDirectory() as cache:
                    for c in ("empty", "warm"):
                        wall, inner = _run(["-c", code], cache, args.baseline)
                        base[(loss, c)].append((wall, inner))
    load_after = os.getloadavg()
    med = statistics.median
    lines = ["# Start-up", "",
             f"Written by `python benchmarks/bench_first_fit.py`: each step a fresh process, "
             f"the median of {args.repeats} interleaved runs. The machine was loaded by other "
             f"work (2 shared cores): compare each row with the floor (`python -c pass`, "
             f"`import numpy`) measured in the same run, not with quiet absolute numbers. "
             f"Load average (1 min) {load_before[0]:.1f} at the start and "
             f"{load_after[0]:.1f} at the end. CPU is the process's user + system time, "
             f"which the other work inflates less than the wall time.", "",
             "| step | wall (s) | minus `python -c pass` (s) | CPU (s) |", "|---|---|---|---|"]
    floor = med(walls["python -c pass"])
    for k in steps:
        lines.append(f"| `{k}` | {med(walls[k]):.3f} | {med(walls[k]) - floor:.3f} | "
                     f"{med(cpus[k]):.3f} |")
    lines += ["", "The first default fit, `LinearClassifier(loss=...).fit(X, y)` (and "
              "`solve(X, y)` with its defaults) on 2,000 x 20 dense data, in a fresh process. "
              "The process times its own steps: `import numpy` and `primaldual` (import), "
              "the first use of `LinearClassifier` or `solve` (entry: loads scikit-learn "
              "for the estimator, the solvers and Numba), and the fit (compiles, or loads "
              "from the cache, the kernels the call uses):", "",
              "| call (solver) | Numba cache | wall (s) | CPU (s) | import (s) | entry (s) | fit (s) |",
              "|---|---|---|---|---|---|---|"]
    for (loss, c), runs in fits.items():
        solver = runs[0][1].get("solver", "?")
        lines.append(f"| {loss} ({solver}) | {c} | {med(r[0] for r in runs):.3f} | "
                     f"{med(r[1]['cpu'] for r in runs):.3f} | "
                     f"{med(r[1]['import'] for r in runs):.3f} | "
                     f"{med(r[1]['entry'] for r in runs):.3f} | "
                     f"{med(r[1]['fit'] for r in runs):.3f} |")
    if args.baseline:
        lines += ["", f"The same first fits with the source tree `{args.baseline}` "
                  "(the baseline), run interleaved with the rows above; the ratio is this "
                  "tree's over the baseline's (below 1: faster).", "",
                  "| call | Numba cache | baseline wall (s) | baseline CPU (s) | "
                  "wall ratio | CPU ratio |", "|---|---|---|---|---|---|"]
        for (loss, c), runs in base.items():
            bw, bc = med(r[0] for r in runs), med(r[1]["cpu"] for r in runs)
            ow = med(r[0] for r in fits[(loss, c)])
            oc = med(r[1]["cpu"] for r in fits[(loss, c)])
            lines.append(f"| {loss} | {c} | {bw:.3f} | {bc:.3f} | {ow / bw:.2f} | "
                         f"{oc / bc:.2f} |")
    lines += ["", "What the first fit compiles with the empty cache: every function Numba "
              "compiles for the call (the functions it calls are compiled inside it and "
              "counted in its time), the median over the runs of its compile time, wall and "
              "CPU. The rest of the fit column above is Numba's own first-use set-up (about "
              "a third of a second of CPU, paid with a warm cache too), the data checks and "
              "the solver's work.", "",
              "| call | compiled function | wall (s) | CPU (s) |", "|---|---|---|---|"]
    for loss in losses:
        runs = [r[1].get("compiles", []) for r in fits[(loss, "empty")]]
        names = list(dict.fromkeys(c[0] for run in runs for c in run))
        total_w, total_c = [], []
        for run in runs:
            total_w.append(sum(c[1] for c in run))
            total_c.append(sum(c[2] for c in run))
        for name in names:
            ws = [c[1] for run in runs for c in run if c[0] == name]
            cs = [c[2] for run in runs for c in run if c[0] == name]
            lines.append(f"| {loss} | `{name}` | {med(ws):.3f} | {med(cs):.3f} |")
        lines.append(f"| {loss} | all ({len(names)} functions) | {med(total_w):.3f} | "
                     f"{med(total_c):.3f} |")
    warm = {loss: [len(r[1].get("compiles", [])) for r in fits[(loss, "warm")]]
            for loss in losses}
    lines += ["", "Functions compiled with the warm cache (the most in one run): "
              + ", ".join(f"{k} {max(v)}" for k, v in warm.items())
              + " (0: every kernel loaded from the cache)."]
    Path(args.out).write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
