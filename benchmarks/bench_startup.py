"""Start-up of the command line: every command on heart_scale, in fresh processes.

Each command runs as a new ``python -m primaldual ...`` process with a warm Numba
cache (one warm-up run first); the table gives the median wall time of
``--repeats`` interleaved runs, its CPU time (user + system, which other work
on the machine inflates less than the wall), and the ratio to the floor every
command stands on (``python -c "import numpy"``), measured in the same run.
Beside them: LIBLINEAR's ``train`` + ``predict`` through its Python binding
(``liblinear-official``), in a fresh process as well.

The target is 0.3 s a command on an idle machine.  The machine may be loaded
by other work: the load average before and after is in the header, and the
ratios to the floor are what carries over between machines.

Writes benchmarks/results/startup.md.
"""
from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = Path(os.environ.get("PRIMALDUAL_SHARED_DATA", ROOT.parent / "shared" / "data"))

LIBLINEAR = ("from liblinear.liblinearutil import svm_read_problem, train, predict\n"
             "y, x = svm_read_problem({path!r}, return_scipy=True)\n"
             "predict(y, x, train(y, x, '-q'))\n")


def commands(tmp):
    """(label, argv after the interpreter) of every measured step."""
    hs = str(DATA / "heart_scale")
    model, npz, out = str(tmp / "hs.model"), str(tmp / "hs.npz"), str(tmp / "out.txt")
    pd = ["-m", "primaldual"]
    return [
        ("python -c pass", ["-c", "pass"]),
        ('python -c "import numpy" (the floor)', ["-c", "import numpy"]),
        ("primaldual --help", pd + ["--help"]),
        ("fit heart_scale --model hs.npz", pd + ["fit", hs, "--model", npz]),
        ("train heart_scale hs.model", pd + ["train", hs, model]),
        ("predict hs.npz heart_scale out (ours)", pd + ["predict", npz, hs, out]),
        ("predict heart_scale hs.model out (LIBLINEAR's order)",
         pd + ["predict", hs, model, out]),
        ("predict -b 1 heart_scale hs0.model out", pd + ["predict", "-b", "1", hs,
                                                          str(tmp / "hs0.model"), out]),
        ("train -v 5 heart_scale", pd + ["train", "-v", "5", hs]),
        ("train -C heart_scale", pd + ["train", "-C", hs]),
        ("cv heart_scale --lam 0.01", pd + ["cv", hs, "--lam", "0.01"]),
        ("info heart_scale", pd + ["info", hs]),
        ("solvers", pd + ["solvers"]),
        ("LIBLINEAR binding: train + predict", ["-c", LIBLINEAR.format(path=hs)]),
    ]


def _env(cache_dir):
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT / "src") + os.pathsep + env.get("PYTHONPATH", "")
    env["NUMBA_CACHE_DIR"] = str(cache_dir)
    return env


def _cpu_children():
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def _run(argv, env, cwd):
    t, c = time.perf_counter(), _cpu_children()
    r = subprocess.run([sys.executable, *argv], env=env, cwd=cwd, capture_output=True,
                       text=True)
    if r.returncode != 0:
        raise RuntimeError(f"{argv} failed ({r.returncode}): {r.stderr[-2000:]}")
    return time.perf_counter() - t, _cpu_children() - c


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--cache", default=str(Path(tempfile.gettempdir())
                                           / "primaldual-startup-numba-cache"),
                    help="the Numba cache directory (warmed by the first run)")
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "startup.md"))
    args = ap.parse_args(argv)
    load_before = os.getloadavg()
    env = _env(args.cache)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        steps = commands(tmp)
        for argv_ in (["-m", "primaldual", "train", "-s", "0", str(DATA / "heart_scale"),
                       str(tmp / "hs0.model")],):
            _run(argv_, env, tmp)
        for _, argv_ in steps:                     # warm-up: caches, models, files
            _run(argv_, env, tmp)
        walls = {label: [] for label, _ in steps}
        cpus = {label: [] for label, _ in steps}
        for _ in range(args.repeats):              # interleaved: the load hits all alike
            for label, argv_ in steps:
                w, c = _run(argv_, env, tmp)
                walls[label].append(w)
                cpus[label].append(c)
    load_after = os.getloadavg()
    floor = statistics.median(walls[steps[1][0]])
    rows = []
    for label, _ in steps:
        w, c = statistics.median(walls[label]), statistics.median(cpus[label])
        rows.append(f"| {label} | {w:.3f} | {c:.3f} | {w / floor:.2f} |")
    text = "\n".join([
        "# Command-line start-up (benchmarks/bench_startup.py)",
        "",
        f"Every command on heart_scale (270 x 13) in a fresh process, warm Numba cache; "
        f"median of {args.repeats} interleaved runs. Python {sys.version.split()[0]}, "
        f"{os.cpu_count()} cores; load average before {load_before[0]:.2f} / "
        f"{load_before[1]:.2f} / {load_before[2]:.2f}, after {load_after[0]:.2f} / "
        f"{load_after[1]:.2f} / {load_after[2]:.2f}.",
        "",
        "| step | wall (s) | CPU (s) | wall / floor |",
        "|---|---:|---:|---:|",
        *rows,
        "",
        "The floor is `python -c \"import numpy\"`: every command needs numpy. A fit on "
        "a problem this small runs `direct-newton` (numpy, no compiled kernel), `cv` "
        "with given values included; data files are parsed by scikit-learn's compiled "
        "svmlight parser loaded on its own (no scikit-learn or SciPy import). On a "
        "loaded machine the wall time is many times the CPU time; on an idle one it is "
        "close to it. `solvers` reads the catalogue the registry writes "
        "(src/primaldual/cli/solver_catalog.json), not the registry: no Numba.",
        "",
    ])
    Path(args.out).write_text(text)
    print(text)


if __name__ == "__main__":
    main()
