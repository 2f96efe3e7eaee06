"""What a threaded SDCA pass costs in CPU time per stored entry, by design.

For each text regime (:mod:`primaldual.datasets.regimes`) and loss, in one
process: passes of the serial kernel, then passes on two threads
(:func:`primaldual.blocks.sdca_threads.threaded_pass`) with each way of
sharing the dual image -- full copies with sweeping syncs every 8,192
updates, full copies with sparse syncs every 1,024, one shared ``v`` with
plain or atomic additions, and hot-column copies (the plan's hot columns) --
each from ``alpha = 0``, a fresh permutation per pass.  Reported: the
process's CPU seconds per stored entry (all threads summed; the median over
the passes after the first), and over one thread's.

CPU time, unlike the clock, says what the steps cost when the machine is
shared: on two idle cores two threads run about ``2 / (this ratio)`` times
faster per entry than one, before the epochs asynchrony adds.  It does not
see what only concurrent threads pay (two cores writing one cache line), so
a quiet machine's run (``benchmarks/bench_threads.py --quick``) remains the
judge.  Writes ``benchmarks/results/threads-cpu.md``; the load average is
recorded in its header.  Run ``python benchmarks/bench_thread_cpu.py``.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from primaldual import Problem  # noqa: E402
from primaldual.blocks import sdca_threads as st  # noqa: E402
from primaldual.datasets.regimes import make_regime  # noqa: E402
from primaldual.kernels.sdca import (Averaging, SDCAState, Shrinking,  # noqa: E402
                                     prox_work_arrays, sdca_epoch)

#: (label, sync_every, sparse, atomic, hot)
DESIGNS = [("full copies, sweeping syncs every 8192", 8192, False, True, False),
           ("full copies, sparse syncs every 1024", 1024, True, True, False),
           ("one shared v, plain additions", 0, True, False, False),
           ("one shared v, atomic additions", 0, True, True, False),
           ("hot-column copies", 1, True, True, True)]


def cpu_per_entry(prob, design, passes, rng):
    rows, spec = prob.rows_view(), prob.step_spec()
    n, d = prob.n, prob.d
    logit = np.full(n, np.nan) if prob.loss.name == "logistic" else np.zeros(0)
    state = SDCAState(np.zeros(n), np.zeros(d), logit, np.zeros(n, np.uint8))
    shrink = Shrinking(False, np.inf, np.inf)
    prox = [prox_work_arrays(prob.rows, 0.0) for _ in range(2)]
    work = None
    if design is not None:
        _, S, sparse, atomic, hot = design
        hot_cols = st._ThreadModel(prob.rows, st.measured_thread_costs()).hot()[0]
        work = st.ThreadWork(d, 2, S, atomic, int(prob.rows.row_nnz.max()), sparse,
                             hot_cols if hot else None)
        st.warm_threads(rows, spec, state, work, prox)
    out = []
    for _ in range(passes):
        order = rng.permutation(n).astype(np.int64)
        c0 = time.process_time()
        if work is None:
            sdca_epoch(rows, spec, state, order, 0, n, 0, -1, shrink,
                       Averaging(False, np.zeros(0), np.zeros(0, np.int64), 0), prox[0])
        else:
            st.threaded_pass(rows, spec, state, order, 0, n, work, prob.nnz, shrink, prox)
        out.append((time.process_time() - c0) / prob.nnz)
    return float(np.median(out[1:] if len(out) > 1 else out))


def load_note():
    return (f"{time.strftime('%H:%M', time.gmtime())} UTC, load average "
            + " / ".join(f"{x:.2f}" for x in os.getloadavg()))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sets", default="shared_vocab_text,orthogonal_text")
    ap.add_argument("--losses", default="logistic")
    ap.add_argument("--passes", type=int, default=3)
    ap.add_argument("--scale", type=float, default=1.0)
    ap.add_argument("--name", default="threads-cpu")
    args = ap.parse_args(argv)
    start = load_note()
    rows_md = []
    for name in args.sets.split(","):
        X, y = make_regime(name, scale=args.scale, random_state=0)
        for loss in args.losses.split(","):
            prob = Problem(X, y, loss=loss, lam=1e-5)
            rng = np.random.default_rng(0)
            model = st._ThreadModel(prob.rows, st.measured_thread_costs())
            hot, share = model.hot()
            one = cpu_per_entry(prob, None, args.passes, rng)
            print(f"{name} {loss}: one thread {1e9 * one:.2f} ns", flush=True)
            for design in DESIGNS:
                two = cpu_per_entry(prob, design, args.passes, rng)
                print(f"  {design[0]}: {1e9 * two:.2f} ns ({two / one:.2f}x)", flush=True)
                rows_md.append(f"| {name} | {X.nnz / 1e6:.1f}M | {model.overlap:.3f} | "
                               f"{hot.shape[0]} ({100 * share:.0f}%) | {loss} | "
                               f"{1e9 * one:.2f} | {design[0]} | {1e9 * two:.2f} | "
                               f"{two / one:.2f} |")
    path = ROOT / "benchmarks" / "results" / f"{args.name}.md"
    path.write_text("\n".join([
        "# CPU time per stored entry of a threaded SDCA pass (benchmarks/bench_thread_cpu.py)",
        "", f"Two threads against one, lam = 1e-5, from alpha = 0, the median of passes "
        f"2-{args.passes} (a fresh permutation each), the process's CPU time summed over "
        f"its threads.  Started {start}; ended {load_note()} (1, 5, 15 min; 2 cores "
        "shared with other jobs: the clock would say nothing about speed-up, CPU time "
        "says what the steps cost).  Column overlap: the sampled share of rows holding "
        "a random entry's column; hot columns: the plan's (their share of the entries).",
        "", "| set | nnz | column overlap | hot columns | loss | one thread ns | design "
        "(2 threads) | 2 threads ns (summed) | / one |",
        "|---|---|---|---|---|---|---|---|---|", *rows_md]) + "\n")
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
