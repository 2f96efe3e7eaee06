"""Peak memory of a fit relative to the CSR data size (no hidden densification).

For each solver (sdca, spdc, dso if registered, simba) a fresh subprocess
builds the rcv1-shaped synthetic set (``make_synthetic("rcv1")``: 20,242 x
47,236, ~0.16% dense), then fits it under ``tracemalloc`` (numpy allocations
are traced) and reports:

* ``data_MB``: the CSR size, ``data + indices + indptr`` bytes;
* ``traced_peak_MB``: the peak of traced allocations during the fit
  (``tracemalloc.reset_peak()`` just before ``solve``), data excluded;
* ``ratio``: ``traced_peak / data`` (the target is <= 2.5);
* ``RSS``: how much the fit raised the process's peak resident set
  (``ru_maxrss`` after minus ``ru_maxrss`` before; 0 when the fit stayed
  below the peak the data generator already reached), and the resident
  growth above the RSS at the start of the fit (``ru_maxrss`` after minus
  RSS before: an upper bound that includes the generator's earlier peak);
* when the ratio exceeds 2.5, the top allocation sites of a snapshot diff.

Usage::

    PYTHONPATH=src python benchmarks/bench_memory.py [--epochs 2] [--out benchmarks/results/memory.md]
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

LIMIT = 2.5

CHILD = r"""
import json, resource, sys, time, tracemalloc, warnings
warnings.simplefilter("ignore")
import numpy as np
import primaldual
from primaldual.datasets import make_synthetic

solver, epochs = sys.argv[1], float(sys.argv[2])
opts = json.loads(sys.argv[3])
X, y, _ = make_synthetic("rcv1", random_state=0)
X.indices = X.indices.astype(np.int32)
X.indptr = X.indptr.astype(np.int32)
data_bytes = X.data.nbytes + X.indices.nbytes + X.indptr.nbytes
kw = dict(loss="hinge", lam=1e-4, solver=solver, tol=0, max_epochs=epochs, random_state=0)
kw.update(opts)
# warm up the kernels (compile or load from cache) on a slice, outside the measurement
primaldual.solve(X[:300], y[:300], **dict(kw, max_epochs=1))


def rss():
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * resource.getpagesize()


rss0 = rss()
maxrss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
tracemalloc.start(25)
snap0 = tracemalloc.take_snapshot()
tracemalloc.reset_peak()
t = time.perf_counter()
res = primaldual.solve(X, y, **kw)
elapsed = time.perf_counter() - t
cur, peak = tracemalloc.get_traced_memory()
top = []
if peak > 2.5 * data_bytes:
    snap1 = tracemalloc.take_snapshot()
    for st in snap1.compare_to(snap0, "lineno")[:8]:
        top.append(str(st))
tracemalloc.stop()
maxrss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
print(json.dumps({"solver": solver, "data_bytes": data_bytes, "peak": peak,
                  "rss_delta": max(maxrss - rss0, 0),
                  "rss_peak_increase": max(maxrss - maxrss0, 0), "epochs": res.n_epochs,
                  "gap": res.gap, "time": elapsed, "top": top, "n": X.shape[0],
                  "d": X.shape[1], "nnz": int(X.nnz)}))
"""

OPTIONS = {"sdca": {}, "spdc": {"target_accuracy": 1e-6}, "dso": {}, "simba": {"nu": 0.1}}


def measure(solver, epochs):
    proc = subprocess.run([sys.executable, "-c", CHILD, solver, str(epochs),
                           json.dumps(OPTIONS.get(solver, {}))],
                          capture_output=True, text=True, timeout=1800)
    if proc.returncode != 0:
        return {"solver": solver, "error": proc.stderr.strip().splitlines()[-1:]}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--epochs", type=float, default=2.0)
    ap.add_argument("--solvers", nargs="+", default=["sdca", "spdc", "dso", "simba"])
    ap.add_argument("--out", default=str(Path(__file__).parent / "results" / "memory.md"))
    args = ap.parse_args(argv)
    import primaldual
    rows = []
    for s in args.solvers:
        if s not in primaldual.SOLVERS:
            rows.append({"solver": s, "error": ["not registered in this version"]})
            continue
        r = measure(s, args.epochs)
        rows.append(r)
        print(json.dumps({k: v for k, v in r.items() if k != "top"}), flush=True)
    mb = 2.0 ** 20
    lines = ["# Peak memory of a fit (rcv1-shaped synthetic set)", "",
             f"`python benchmarks/bench_memory.py --epochs {args.epochs:g}`: one fresh "
             "subprocess per solver, hinge loss, lam = 1e-4, kernels warmed up on 300 rows "
             "first. `traced peak` is the tracemalloc peak during `solve` (numpy "
             "allocations included, the input data excluded); the target is "
             f"traced peak <= {LIMIT} x CSR size.", ""]
    first = next((r for r in rows if "data_bytes" in r), None)
    if first:
        lines += [f"Data: n = {first['n']}, d = {first['d']}, nnz = {first['nnz']}, CSR "
                  f"(float64 values, int32 indices) = {first['data_bytes'] / mb:.1f} MB.", ""]
    lines += ["| solver | CSR MB | traced peak MB | ratio | within 2.5x | peak RSS raised MB | "
              "RSS bound MB | epochs | fit s |", "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        if "error" in r:
            lines.append(f"| {r['solver']} | - | - | - | - | - | - | - | error: "
                         f"{' '.join(r['error'])[:120]} |")
            continue
        ratio = r["peak"] / r["data_bytes"]
        lines.append(f"| {r['solver']} | {r['data_bytes'] / mb:.1f} | {r['peak'] / mb:.1f} | "
                     f"{ratio:.2f} | {'yes' if ratio <= LIMIT else 'NO'} | "
                     f"{r['rss_peak_increase'] / mb:.1f} | {r['rss_delta'] / mb:.1f} | "
                     f"{r['epochs']:g} | {r['time']:.1f} |")
    for r in rows:
        if r.get("top"):
            lines += ["", f"Top allocation sites for {r['solver']} (snapshot diff):", "",
                      "```", *r["top"], "```"]
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
