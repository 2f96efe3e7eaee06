"""The fixed cost of a small certified L1 fit, at two commits.

``solve(X, y, loss=..., lam=0, l1=l1_max/div, tol=1e-6)`` (``solver="auto"``) and
``LinearClassifier(penalty="l1", C=...).fit`` on the small sparse sets of
``../shared/data``, at this checkout's ``src`` and at ``--base`` (``git
archive`` of that commit into a temporary folder, its own Numba cache).  Each
version runs in its own processes (two versions' kernels loaded in one
process slow each other's calls down 2x: measured, so they never share one);
the versions alternate, ``--rounds`` processes each, the order flipping every
round.  A process makes 5 warm-up calls a cell, then ``--calls`` timed ones;
its figure is the median CPU time of a call (``time.thread_time``).  The
table gives the median over the rounds of each version's figure and the
median over the rounds of the ratio new / base of the two processes of the
round.  Both versions must return the same model bit for bit (checked).

Then the split of the current version's call (the median of ``--calls``
calls, perf_counter, in one process): the compiled kernels the L1 path
calls, timed by wrappers around them, and the rest (validation,
``Problem``, the supervisor, the options, the solver's Python driver, the
result); and the first call in a fresh process (the import, then the first
``solve``, with the Numba cache warm), for both versions, the median of
``--fresh`` processes.

Run: ``python benchmarks/bench_l1_overhead.py --base COMMIT [--rounds 5]``;
writes ``benchmarks/results/models-l1-overhead-HHMM.md`` with the load in the
header.
"""
from __future__ import annotations

import os

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import argparse  # noqa: E402
import importlib  # noqa: E402
import json  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import scipy.sparse as sp  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import shared_file, write_result  # noqa: E402

SETS = ("a1a", "mushrooms", "agaricus", "cocoa-small")
CELLS = [(s, loss, div) for s in SETS for loss in ("logistic", "squared_hinge")
         for div in (10, 100)]


def base_tree(rev, where):
    """``src`` at ``rev``, extracted into ``where`` (returns the ``src`` folder)."""
    tar = subprocess.run(["git", "archive", rev, "src/primaldual"], cwd=ROOT, check=True,
                         capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", where], input=tar, check=True)
    return Path(where) / "src"


def load(name):
    from primaldual.datasets import load_svmlight
    X, yr = load_svmlight(shared_file(name))
    X = sp.csr_matrix(X, dtype=np.float64)
    return X, yr, np.where(yr > yr.min(), 1.0, -1.0)


def worker(calls):
    """One process's figures: ``{cell: [median CPU s of a call, passes, hash]}``."""
    import hashlib

    import primaldual as pd
    from primaldual.regpath import lam_max
    out = {}

    def timed(key, f, n):
        for _ in range(5):
            r = f()
        ts = []
        for _ in range(n):
            t = time.thread_time()
            f()
            ts.append(time.thread_time() - t)
        coef = r.coef if hasattr(r, "coef") else r.coef_
        ep = r.n_epochs if hasattr(r, "n_epochs") else float(r.n_iter_[0])
        out[key] = [float(np.median(ts)), float(ep),
                    hashlib.sha1(np.ascontiguousarray(coef).tobytes()).hexdigest()[:12]]

    for name in SETS:
        X, yr, y = load(name)
        Xa = sp.hstack([X, np.ones((X.shape[0], 1))], format="csr")
        for loss in ("logistic", "squared_hinge"):
            for div in (10, 100):
                l1 = lam_max(X, y, loss, penalty="l1") / div
                timed(f"solve|{name}|{loss}|{div}", lambda: pd.solve(
                    X, y, loss=loss, lam=0.0, l1=l1, tol=1e-6), calls)
                if div == 10:
                    C = div / (lam_max(Xa, y, loss, penalty="l1") * X.shape[0])
                    timed(f"fit|{name}|{loss}|{div}", lambda: pd.LinearClassifier(
                        penalty="l1", C=C, loss=loss, random_state=0).fit(X, yr),
                        max(calls // 2, 10))
    print(json.dumps(out))


def ab_rows(rounds, calls, env_base, env_new):
    """``[(call, set, loss, div, passes, base s, new s, ratio, same model)]``."""
    runs = {"base": [], "new": []}
    for k in range(rounds):
        order = (("base", env_base), ("new", env_new))
        for which, env in (order if k % 2 == 0 else order[::-1]):
            out = subprocess.run([sys.executable, __file__, "--worker", "--calls", str(calls)],
                                 env=env, capture_output=True, text=True, check=True)
            runs[which].append(json.loads(out.stdout.strip().splitlines()[-1]))
            print(which, k, flush=True)
    rows = []
    for key in runs["new"][0]:
        call, name, loss, div = key.split("|")
        b = [r[key][0] for r in runs["base"]]
        n = [r[key][0] for r in runs["new"]]
        same = len({r[key][2] for r in runs["base"] + runs["new"]}) == 1
        rows.append((call, name, loss, int(div), runs["new"][0][key][1],
                     float(np.median(b)), float(np.median(n)),
                     float(np.median(np.array(n) / np.array(b))), same))
    return rows


#: the compiled kernels of the L1 path, by the module that calls them
KERNELS = {"primaldual.solvers.sparse.solver": (
    "ws_solve", "csr_columns", "filter_rows", "cols_to_rows", "row_counts", "margins_of",
    "loss_terms", "correlations", "dual_sum", "screen_features", "unsure_screened"),
    "primaldual.rows": ("row_sqnorms",)}


def split_rows(calls):  # noqa: C901
    """``(cell, median ms of a call, median ms in the kernels)`` of this checkout."""
    import primaldual as new
    from primaldual.regpath import lam_max
    spent = [0.0]

    def timed(f):
        def w(*a, **k):
            t = time.perf_counter()
            try:
                return f(*a, **k)
            finally:
                spent[0] += time.perf_counter() - t
        return w

    for mod, names in KERNELS.items():
        m = importlib.import_module(mod)
        for n in names:
            setattr(m, n, timed(getattr(m, n)))
    out = []
    for name in SETS:
        X, _, y = load(name)
        for loss in ("logistic", "squared_hinge"):
            for div in (10, 100):
                l1 = lam_max(X, y, loss, penalty="l1") / div
                f = lambda: new.solve(X, y, loss=loss, lam=0.0, l1=l1, tol=1e-6)  # noqa: E731
                for _ in range(5):
                    f()
                tot, ker = [], []
                for _ in range(calls):
                    spent[0] = 0.0
                    t = time.perf_counter()
                    f()
                    tot.append(time.perf_counter() - t)
                    ker.append(spent[0])
                out.append(((name, loss, div), 1e3 * float(np.median(tot)),
                            1e3 * float(np.median(ker)),
                            1e3 * float(np.median(np.array(tot) - np.array(ker)))))
    return out


FRESH = """
import time, os
t0 = time.perf_counter()
import primaldual as pd
t1 = time.perf_counter()
import numpy as np, scipy.sparse as sp
from primaldual.datasets import load_svmlight
from primaldual.regpath import lam_max
X, yr = load_svmlight({path!r}); X = sp.csr_matrix(X, dtype=np.float64)
y = np.where(yr > yr.min(), 1.0, -1.0); l1 = lam_max(X, y, "logistic", penalty="l1") / 10
t2 = time.perf_counter()
pd.solve(X, y, loss="logistic", lam=0.0, l1=l1, tol=1e-6)
t3 = time.perf_counter()
pd.solve(X, y, loss="logistic", lam=0.0, l1=l1, tol=1e-6)
t4 = time.perf_counter()
print(t1 - t0, t3 - t2, t4 - t3)
"""


def fresh_rows(n, env_base, env_new):
    """Median seconds (import, first call, second call) in fresh processes, the
    versions alternating; a1a, logistic, ``l1_max/10``."""
    res = {"base": [], "new": []}
    path = str(shared_file("a1a"))
    for k in range(n + 1):          # the first round fills each version's Numba cache
        for which, env in (("base", env_base), ("new", env_new)):
            out = subprocess.run([sys.executable, "-c", FRESH.format(path=path)],
                                 env=env, capture_output=True, text=True, check=True)
            if k:
                res[which].append([float(v) for v in out.stdout.split()])
    return {k: np.median(np.array(v), axis=0) for k, v in res.items()}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--base", help="the commit to compare with")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--calls", type=int, default=50)
    ap.add_argument("--fresh", type=int, default=5)
    ap.add_argument("--out", default=None)
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        return worker(args.calls)
    if not args.base:
        ap.error("--base is required")
    start = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    uptime = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    head = subprocess.run(["git", "log", "-1", "--format=%h"], cwd=ROOT, capture_output=True,
                          text=True).stdout.strip()
    tmp = tempfile.mkdtemp(prefix="l1-overhead-")
    src = base_tree(args.base, tmp)
    env_new = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    env_base = dict(os.environ, PYTHONPATH=str(src),
                    NUMBA_CACHE_DIR=str(Path(tmp) / "numba_cache"))
    fresh = fresh_rows(args.fresh, env_base, env_new)
    rows = ab_rows(args.rounds, args.calls, env_base, env_new)
    split = split_rows(4 * args.calls)
    uptime_end = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    lines = [f"# The fixed cost of a small certified L1 fit: {head} against {args.base}", "",
             f"Run {start}; `uptime` at the start: {uptime}; at the end: {uptime_end}; "
             f"2 cores shared with other jobs, one thread.  "
             f"`python benchmarks/bench_l1_overhead.py --base {args.base} --rounds "
             f"{args.rounds} --calls {args.calls}` (its docstring says how: the versions "
             f"in alternating processes, CPU time of a call).", "",
             "## A/B: CPU ms per call (median over the rounds of each process's "
             "median), new / base (median over the rounds)", "",
             "| call | set | loss | l1_max/ | passes | base | new | new / base | same model |",
             "|---|---|---|---:|---:|---:|---:|---:|---|"]
    for call, name, loss, div, ep, tb, tn, r, same in rows:
        lines.append(f"| {call} | {name} | {loss} | {div} | {ep:.1f} | {1e3 * tb:.3f} | "
                     f"{1e3 * tn:.3f} | {r:.3f} | {'yes' if same else 'NO'} |")
    ratios = np.array([r[7] for r in rows if r[0] == "solve"])
    fits = np.array([r[7] for r in rows if r[0] == "fit"])
    lines += ["", f"Geometric mean of new / base: `solve` {np.exp(np.log(ratios).mean()):.3f} "
                  f"over {ratios.size} cells, `fit` {np.exp(np.log(fits).mean()):.3f} over "
                  f"{fits.size}.", "",
              "## Where a call of this checkout goes (wall ms, median of the calls)", "",
              "| set | loss | l1_max/ | call | compiled kernels | the rest |",
              "|---|---|---:|---:|---:|---:|"]
    for (name, loss, div), tot, ker, rest in split:
        lines.append(f"| {name} | {loss} | {div} | {tot:.3f} | {ker:.3f} | {rest:.3f} |")
    b, n = fresh["base"], fresh["new"]
    lines += ["", "The kernels: " + ", ".join(sorted({k for v in KERNELS.values() for k in v}))
              + " (wrapped where the L1 path calls them; a wrapper costs about a "
                "microsecond).", "",
              f"## First call in a fresh process (a1a, logistic, `l1_max/10`; median of "
              f"{args.fresh} processes, the Numba cache warm)", "",
              "| version | import | first call | second call |", "|---|---:|---:|---:|",
              f"| base | {b[0]:.3f} s | {1e3 * b[1]:.1f} ms | {1e3 * b[2]:.2f} ms |",
              f"| new | {n[0]:.3f} s | {1e3 * n[1]:.1f} ms | {1e3 * n[2]:.2f} ms |", ""]
    out = args.out or ROOT / "benchmarks" / "results" / \
        f"models-l1-overhead-{time.strftime('%H%M', time.gmtime())}.md"
    write_result(out, lines)
    print("\n".join(lines))
    print(json.dumps({"fresh": {k: v.tolist() for k, v in fresh.items()}}))


if __name__ == "__main__":
    main()
