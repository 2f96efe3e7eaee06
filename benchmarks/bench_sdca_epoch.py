"""Cost of an SDCA epoch per stored nonzero, hinge, against lightning's SDCA.

Each figure is the wall-clock of the whole public call divided by
``epochs x nnz``, nothing subtracted:

- primaldual: ``solve(X, y, loss="hinge", lam=1e-4, solver="sdca", max_epochs=5,
  tol=0, shrinking=False, check_every=5)`` -- the Problem built inside the
  call and its one exact certificate check (after epoch 5) included;
- lightning: ``SDCAClassifier(alpha=1e-4, l1_ratio=0, loss="hinge", max_iter=5,
  tol=0).fit(X, y)`` when lightning imports (``make bench-peers``).

Best of 3, after a warm-up call (Numba compile time excluded).  Rows scaled to
unit norm.  Run: ``python benchmarks/bench_sdca_epoch.py``; the table is printed
and written to ``benchmarks/results/sdca-epoch.md``.

``--baseline DIR`` compares this source tree with another one (e.g.
``git archive <commit> | tar -x -C DIR``) instead, each measurement in a fresh
process, the two trees interleaved: the epoch cost above (best of ``--repeats``
processes of 3 calls each, each tree on its own warm Numba cache) and the
compile time -- the first ``solve`` (hinge, then logistic, SDCA defaults) in a
process with an EMPTY Numba cache, median of ``--repeats``.  The machine load
(``uptime``) before and after is in the header; the section is written to
``benchmarks/results/sdca-epoch-ab.md``.
"""
import sys
import time
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

import primaldual  # noqa: E402
from primaldual.bench.config import DatasetSpec  # noqa: E402
from primaldual.bench.splits import load_data  # noqa: E402
from primaldual.bench.peers import PEERS  # noqa: E402
from primaldual.bench.report import cpu_model  # noqa: E402

LAM, EPOCHS = 1e-4, 5


def main():
    specs = [DatasetSpec(name="rcv1", source="synthetic", label="rcv1 shape")]
    from primaldual import datasets
    have = set(datasets.available_real())
    for name in ("a9a", "covtype", "reuters"):
        if name in have:
            specs.append(DatasetSpec(name=name, subsample="random", label=name))
        else:
            print(f"skipping {name}: not found locally", file=sys.stderr)
    lightning = PEERS["lightning-sdca"].status()
    lines = [f"# SDCA epoch per nonzero, hinge, lam {LAM:g}, {EPOCHS} epochs, whole call", "",
             f"Machine: {cpu_model()}; lightning: {lightning or 'ok'}. "
             "Wall-clock of the whole public call / (epochs x nnz), best of 3, "
             "nothing subtracted (primaldual: Problem construction and one exact "
             "certificate check inside).", "",
             "| data | nnz | primaldual SDCA (ns/nnz) | lightning SDCA (ns/nnz) | ratio |",
             "|---|---:|---:|---:|---:|"]
    for spec in specs:
        d = load_data(spec)
        X, y = d.X, d.y
        call = dict(loss="hinge", lam=LAM, solver="sdca", max_epochs=EPOCHS, tol=0.0,
                    shrinking=False, check_every=EPOCHS)
        primaldual.solve(X[:200], y[:200], **call)            # warm-up (compile)
        best = np.inf
        for rep in range(3):
            t = time.perf_counter()
            res = primaldual.solve(X, y, random_state=rep, **call)
            secs = time.perf_counter() - t
            best = min(best, secs / (res.n_epochs * X.nnz) * 1e9)
        bl = None
        if lightning is None:
            from lightning.classification import SDCAClassifier
            bl = np.inf
            for rep in range(3):
                est = SDCAClassifier(alpha=LAM, l1_ratio=0.0, loss="hinge", max_iter=EPOCHS,
                                     tol=0.0, random_state=rep)
                t = time.perf_counter()
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    est.fit(X, y)
                bl = min(bl, (time.perf_counter() - t) / (EPOCHS * X.nnz) * 1e9)
        lines.append(f"| {spec.display} | {X.nnz} | {best:.1f} | "
                     f"{'—' if bl is None else f'{bl:.1f}'} | "
                     f"{'—' if bl is None else f'{best / bl:.2f}'} |")
        print(lines[-1], file=sys.stderr, flush=True)
    text = "\n".join(lines) + "\n"
    out = ROOT / "benchmarks" / "results" / "sdca-epoch.md"
    out.write_text(text)
    print(text)


EPOCH_PROBE = r"""
import sys, time, json
sys.path.insert(0, sys.argv[1] + "/src")
sys.path.insert(0, sys.argv[1] + "/benchmarks")
import numpy as np, primaldual
from primaldual.bench.config import DatasetSpec
from primaldual.bench.splits import load_data
name = sys.argv[2]
spec = (DatasetSpec(name="rcv1", source="synthetic", label="rcv1 shape") if name == "rcv1"
        else DatasetSpec(name=name, subsample="random", label=name))
d = load_data(spec)
X, y = d.X, d.y
call = dict(loss="hinge", lam=%r, solver="sdca", max_epochs=%d, tol=0.0, shrinking=False,
            check_every=%d)
primaldual.solve(X[:200], y[:200], **call)
best = best_cpu = np.inf
for rep in range(3):
    t, c = time.perf_counter(), time.process_time()
    res = primaldual.solve(X, y, random_state=rep, **call)
    best = min(best, (time.perf_counter() - t) / (res.n_epochs * X.nnz) * 1e9)
    best_cpu = min(best_cpu, (time.process_time() - c) / (res.n_epochs * X.nnz) * 1e9)
print(json.dumps({"ns": best, "cpu": best_cpu, "nnz": int(X.nnz)}))
""" % (LAM, EPOCHS, EPOCHS)

COMPILE_PROBE = r"""
import sys, time, json
sys.path.insert(0, sys.argv[1] + "/src")
t0 = time.perf_counter()
import numpy as np, scipy.sparse as sp, primaldual
t1 = time.perf_counter()
X = sp.random(400, 50, density=0.2, format="csr", random_state=0)
y = np.where(np.arange(400) % 3 == 0, 1.0, -1.0)
out = {"import": t1 - t0}
for loss in ("hinge", "logistic"):
    t, c = time.perf_counter(), time.process_time()
    primaldual.solve(X, y, loss=loss, lam=1e-2, solver="sdca", max_epochs=3)
    out[loss] = time.perf_counter() - t
    out[loss + "_cpu"] = time.process_time() - c
print(json.dumps(out))
"""


def _probe(code, tree, *args, cache=None):
    import json
    import os
    import subprocess
    env = dict(os.environ, NUMBA_CACHE_DIR=cache or str(Path(tree) / ".numba_cache_bench"),
               OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    env.pop("PYTHONPATH", None)
    out = subprocess.run([sys.executable, "-c", code, str(tree), *args], env=env,
                         capture_output=True, text=True, check=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def compare(baseline, repeats):
    """This tree against ``baseline``: epoch cost and cold compile time (module docstring)."""
    import statistics
    import subprocess
    import tempfile
    trees = {"before": Path(baseline).resolve(), "after": ROOT}
    up0 = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    from primaldual import datasets
    have = set(datasets.available_real())
    names = ["rcv1"] + [n for n in ("a9a", "covtype", "reuters") if n in have]
    epoch = {(t, n): [] for t in trees for n in names}
    epoch_cpu = {(t, n): [] for t in trees for n in names}
    nnz = {}
    comp = {t: [] for t in trees}
    for rep in range(repeats):
        for t, tree in (list(trees.items()) if rep % 2 == 0 else list(trees.items())[::-1]):
            with tempfile.TemporaryDirectory() as cache:
                comp[t].append(_probe(COMPILE_PROBE, tree, cache=cache))
            for n in names:
                r = _probe(EPOCH_PROBE, tree, n)
                epoch[(t, n)].append(r["ns"])
                epoch_cpu[(t, n)].append(r["cpu"])
                nnz[n] = r["nnz"]
            print(rep, t, comp[t][-1], {n: epoch[(t, n)][-1] for n in names},
                  file=sys.stderr, flush=True)
    up1 = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    lines = ["# SDCA before/after: epoch cost and cold compile time", "",
             f"Machine: {cpu_model()}. Load (uptime) at start: `{up0}`; at end: `{up1}`. "
             f"Trees: before = `{trees['before']}`, after = this tree, interleaved, "
             f"{repeats} fresh processes each.", "",
             "Epoch cost: hinge, lam 1e-4, 5 epochs, no shrinking, the whole `solve` call "
             "per epoch and stored entry, best over the processes (3 calls each, warm cache); "
             "wall clock and the process's CPU time.",
             "", "| data | nnz | before (ns/nnz) | after (ns/nnz) | after / before | "
             "before CPU | after CPU | CPU after / before |",
             "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for n in names:
        b, a = min(epoch[("before", n)]), min(epoch[("after", n)])
        bc, ac = min(epoch_cpu[("before", n)]), min(epoch_cpu[("after", n)])
        lines.append(f"| {n} | {nnz[n]} | {b:.2f} | {a:.2f} | {a / b:.3f} | {bc:.2f} | "
                     f"{ac:.2f} | {ac / bc:.3f} |")
    lines += ["", "Compile time: the first `solve` in a process with an empty Numba cache "
              "(SDCA defaults, 400 x 50 sparse), median over the processes, seconds; the "
              "process's CPU time is the figure the load disturbs least.", "",
              "| step | before (s) | after (s) | after / before |", "|---|---:|---:|---:|"]
    for key, label in (("import", "import primaldual (wall)"),
                       ("hinge", "first fit, hinge (wall)"),
                       ("hinge_cpu", "first fit, hinge (CPU)"),
                       ("logistic", "then logistic (wall)"),
                       ("logistic_cpu", "then logistic (CPU)")):
        b = statistics.median(c[key] for c in comp["before"])
        a = statistics.median(c[key] for c in comp["after"])
        lines.append(f"| {label} | {b:.2f} | {a:.2f} | {a / b:.3f} |")
    text = "\n".join(lines) + "\n"
    (ROOT / "benchmarks" / "results" / "sdca-epoch-ab.md").write_text(text)
    print(text)


if __name__ == "__main__":
    import argparse
    ap = argparse.ArgumentParser()
    ap.add_argument("--baseline", help="another source tree to compare with")
    ap.add_argument("--repeats", type=int, default=4)
    args = ap.parse_args()
    if args.baseline:
        compare(args.baseline, args.repeats)
    else:
        from threadpoolctl import threadpool_limits
        with threadpool_limits(limits=1):
            main()
