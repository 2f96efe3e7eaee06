"""Where a 100-value L1 path's time goes, with and without screening
-> benchmarks/results/l1-path-profile.{jsonl,md}.

For each set and loss, ``l1_path(X, y, n_l1s=100, eps=1e-2, loss=...)`` runs
with screening (the default) and with ``screening=False`` (the same shared
set-up, warm starts and working sets, every column read at every check),
alternating, ``--repeat`` times each; the best CPU time (``process_time``,
less sensitive than the wall clock to other jobs on the cores) and the best
wall time are kept, with the CPU time of the run split by phase:

* ``ws_solve``: the working-set solves (Newton steps; the same work with or
  without screening);
* ``check_n``: the checks' per-sample work (margins, loss terms, dual sum);
* ``check_reads``: the checks' column reads (correlations; with screening
  also the bounded reads and the sequential screening's);
* ``bounds``: the screening's bookkeeping kernels (the reference ring and its
  distances);
* ``ws_rows``: the working set's rows for its dense Hessian;
* ``other``: the rest (the Python driver, working-set choice, certificates).

``--label`` tags the rows (e.g. ``before``/``after`` when the script runs on
two versions of the library: ``PYTHONPATH=<src> python ...``; the phases it
finds are timed, those it does not are in ``other``).  ``--table`` writes the
Markdown from the rows.  Usage::

    python benchmarks/bench_l1_path_profile.py --label after [--sets a9a,reuters]
    python benchmarks/bench_l1_path_profile.py --table
"""
from __future__ import annotations

import os

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import argparse  # noqa: E402
import json  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from collections import defaultdict  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_models import load_set  # noqa: E402

from primaldual.regpath import l1_path  # noqa: E402
from primaldual.solvers.sparse import path as path_mod  # noqa: E402
from primaldual.solvers.sparse import solver as solver_mod  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results" / "l1-path-profile.md"
ROWS = RESULTS.with_suffix(".jsonl")
#: phase -> (module, function names) timed as that phase, where the module has them
PHASES = {"ws_solve": (solver_mod, ["ws_solve"]),
          "ws_rows": (solver_mod, ["cols_to_rows", "ws_rows"]),
          "check_n": (path_mod, ["loss_terms", "dual_sum", "margins_of"]),
          "check_reads": (path_mod, ["correlations", "read_unscreened", "read_bounded",
                                     "screen_columns"]),
          "bounds": (path_mod, ["ring_distances", "rebase", "new_reference"])}
SPENT = defaultdict(float)


def _instrument():
    for phase, (mod, names) in PHASES.items():
        for name in names:
            fn = getattr(mod, name, None)
            if fn is None:
                continue

            def timed(*a, _fn=fn, _phase=phase):
                t = time.process_time()
                try:
                    return _fn(*a)
                finally:
                    SPENT[_phase] += time.process_time() - t
            setattr(mod, name, timed)


def measure(name, loss, repeat, label):
    X, y = load_set(name)
    l1_path(X[:200], y[:200], n_l1s=5, eps=1e-2, loss=loss)     # compile / load
    row = {"label": label, "set": name, "loss": loss}
    best = {}
    for _ in range(repeat):
        for config, kw in (("with", {}), ("without", {"screening": False})):
            SPENT.clear()
            t, c = time.perf_counter(), time.process_time()
            p = l1_path(X, y, n_l1s=100, eps=1e-2, loss=loss, **kw)
            c, t = time.process_time() - c, time.perf_counter() - t
            b = best.setdefault(config, {"cpu": np.inf, "wall": np.inf})
            b["wall"] = min(b["wall"], t)
            if c < b["cpu"]:
                parts = {k: round(v, 4) for k, v in SPENT.items()}
                parts["other"] = round(c - sum(SPENT.values()), 4)
                b.update(cpu=c, parts=parts, converged=int(p.converged.sum()),
                         passes=sum(r.feature_accesses for r in p.results) / X.nnz)
    row.update(best, load=os.getloadavg()[0],
               uptime=subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip())
    with ROWS.open("a") as fh:
        fh.write(json.dumps(row) + "\n")
    return row


def table():
    rows = [json.loads(line) for line in ROWS.read_text().splitlines()]
    out = ["# A 100-value L1 path with and without screening: where the time goes", "",
           "`benchmarks/bench_l1_path_profile.py` (module docstring): `l1_path(X, y, "
           "n_l1s=100, eps=1e-2, loss=...)`, `tol=1e-6`, with screening and with "
           "`screening=False` (the same shared set-up, warm starts and working sets), "
           "alternating in one process, best of the repeats; CPU seconds (`process_time`), "
           "wall seconds in brackets; ratio = with / without (CPU).  Each row's `uptime` "
           "is in results/l1-path-profile.jsonl; the load is the 1-minute load average "
           "at the end of the row (2 cores shared with other jobs).", "",
           "| label | set | loss | with | without | ratio (CPU) | ratio (wall) | passes "
           "(with / without) | load |", "|---|---|---|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        w, o = r["with"], r["without"]
        out.append(f"| {r['label']} | {r['set']} | {r['loss']} | {w['cpu']:.2f} "
                   f"({w['wall']:.2f}) | {o['cpu']:.2f} ({o['wall']:.2f}) | "
                   f"{w['cpu'] / o['cpu']:.2f} | {w['wall'] / o['wall']:.2f} | "
                   f"{w['passes']:.0f} / {o['passes']:.0f} | {r['load']:.1f} |")
    phases = ["ws_solve", "check_n", "check_reads", "bounds", "ws_rows", "other"]
    out += ["", "## CPU seconds by phase (with / without screening)", "",
            "| label | set | loss | " + " | ".join(phases)
            + " | share of `without` screening cannot remove |",
            "|---|---|---|" + "---:|" * (len(phases) + 1)]
    for r in rows:
        w, o = r["with"]["parts"], r["without"]["parts"]
        fixed = (o.get("ws_solve", 0.0) + o.get("check_n", 0.0)) / r["without"]["cpu"]
        out.append(f"| {r['label']} | {r['set']} | {r['loss']} | " + " | ".join(
            f"{w.get(k, 0.0):.2f} / {o.get(k, 0.0):.2f}" for k in phases)
            + f" | {fixed:.2f} |")
    out += ["", "The last column is the working-set solves and the checks' per-sample "
                "work of the path without screening, over its time: screening removes "
                "column reads and bookkeeping, not these.", ""]
    RESULTS.write_text("\n".join(out) + "\n")
    print(f"wrote {RESULTS}")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sets", default="a9a,reuters,news20,rcv1-shape")
    ap.add_argument("--losses", default="logistic,squared_hinge")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--label", default="current")
    ap.add_argument("--table", action="store_true", help="only write the Markdown")
    args = ap.parse_args(argv)
    if not args.table:
        _instrument()
        for loss in args.losses.split(","):
            for name in args.sets.split(","):
                print(measure(name, loss, args.repeat, args.label), flush=True)
    table()


if __name__ == "__main__":
    main()
