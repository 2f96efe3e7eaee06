"""Start-up: what a user waits for before the first result, in fresh processes.

Steps, each a new Python process (the median of ``--repeats`` interleaved runs):

* ``python -c pass`` and ``import numpy``: the floor every step stands on;
* ``import primaldual``;
* ``primaldual --help`` (``python -m primaldual --help``);
* the first default fit, ``LinearClassifier().fit(X, y)`` on a seeded
  2,000 x 20 dense array (the loss of ``--loss``), with an EMPTY Numba cache
  (a new ``NUMBA_CACHE_DIR``: every kernel the call uses is compiled) and with
  a WARM one (the same directory, second run: the kernels are loaded from it).
  The process reports its own import and fit times, so the table splits the
  wall time into interpreter start, imports and the fit.

Writes benchmarks/results/startup.md.  The machine may be loaded by other
work: compare the rows with the floor measured in the same run.
"""
from __future__ import annotations

import argparse
import json
import os
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
t1 = time.perf_counter()
rng = np.random.default_rng(0)
X = rng.standard_normal((2000, 20))
y = np.where(X @ rng.standard_normal(20) + 0.5 * rng.standard_normal(2000) > 0, 1, -1)
clf = primaldual.LinearClassifier(loss=LOSS).fit(X, y)
t2 = time.perf_counter()
print(json.dumps({"import": t1 - t0, "fit": t2 - t1, "solver": clf.solver_}))
"""


def _env(cache_dir):
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT / "src") + os.pathsep + env.get("PYTHONPATH", "")
    if cache_dir is not None:
        env["NUMBA_CACHE_DIR"] = str(cache_dir)
    return env


def _run(args, cache_dir=None):
    t = time.perf_counter()
    out = subprocess.run([sys.executable, *args], env=_env(cache_dir), capture_output=True,
                         text=True, check=True)
    wall = time.perf_counter() - t
    inner = {}
    lines = [ln for ln in out.stdout.splitlines() if ln.startswith("{")]
    if lines:
        inner = json.loads(lines[-1])
    return wall, inner


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--loss", action="append", default=None,
                    help="loss of the first fit (repeatable; default hinge and logistic)")
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "startup.md"))
    args = ap.parse_args(argv)
    losses = args.loss or ["hinge", "logistic"]
    steps = {"python -c pass": ["-c", "pass"], "import numpy": ["-c", "import numpy"],
             "import primaldual": ["-c", "import primaldual"],
             "primaldual --help": ["-m", "primaldual", "--help"]}
    walls = {k: [] for k in steps}
    fits = {(loss, c): [] for loss in losses for c in ("empty", "warm")}
    for _ in range(args.repeats):                    # interleaved repeats
        for k, a in steps.items():
            walls[k].append(_run(a)[0])
        for loss in losses:
            with tempfile.TemporaryDirectory() as cache:
                code = FIT.replace("LOSS", repr(loss))
                for c in ("empty", "warm"):
                    wall, inner = _run(["-c", code], cache)
                    fits[(loss, c)].append((wall, inner))
    med = statistics.median
    lines = ["# Start-up", "",
             f"Written by `python benchmarks/bench_startup.py`: each step a fresh process, "
             f"the median of {args.repeats} interleaved runs. The machine was loaded by other "
             f"work (2 shared cores): compare each row with the floor (`python -c pass`, "
             f"`import numpy`) measured in the same run, not with quiet absolute numbers.", "",
             "| step | wall (s) | minus `python -c pass` (s) |", "|---|---|---|"]
    floor = med(walls["python -c pass"])
    for k in steps:
        lines.append(f"| `{k}` | {med(walls[k]):.3f} | {med(walls[k]) - floor:.3f} |")
    lines += ["", "The first default fit, `LinearClassifier(loss=...).fit(X, y)` on 2,000 x 20 "
              "dense data, in a fresh process (`import` and `fit` as the process timed "
              "them):", "",
              "| loss (solver) | Numba cache | wall (s) | import (s) | fit (s) |",
              "|---|---|---|---|---|"]
    for (loss, c), runs in fits.items():
        solver = runs[0][1].get("solver", "?")
        lines.append(f"| {loss} ({solver}) | {c} | {med(r[0] for r in runs):.3f} | "
                     f"{med(r[1]['import'] for r in runs):.3f} | "
                     f"{med(r[1]['fit'] for r in runs):.3f} |")
    Path(args.out).write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
