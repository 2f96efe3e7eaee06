"""``l1cd``'s dual points (best so far, dual extrapolation) at two commits.

Cells: ``solve(X, y, loss=..., lam=0, l1=l1_max/div, tol=1e-6)`` (``solver="auto"``,
which is ``l1cd``, ``random_state=0``) on the sets of bench_models.py's L1 grid
(``--sets``, ``div`` in 10, 100, 1000, logistic and squared hinge), and the
cells of the defect in docs/sparse-models.md: a1a standardized
(``StandardScaler(with_mean=False)``), squared hinge, ``l1 = 1/(100 n)``,
seeds ``--seeds`` (and a8a standardized, logistic, ``l1 = 1/(100 n)``,
seeds ``--a8a-seeds``).  The version at this checkout's ``src`` and the one at
``--base`` (``git archive`` into a temporary folder, its own Numba cache) run
in separate processes, alternating, the order flipping every round; a
process warms up on a small synthetic problem, then runs every cell three
times (its figure: the least CPU time).
Reported: the median over ``--rounds`` of each cell's CPU seconds
(``time.process_time``), the ratio new / base, epochs, the relative gap and
whether it certified.

Run: ``python benchmarks/bench_l1_dual.py --base COMMIT [--rounds 2]``; writes
``benchmarks/results/l1-dual-extrapolation-HHMM.md`` with the load in the header.
"""
from __future__ import annotations

import os

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import argparse  # noqa: E402
import json  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
HERE = Path(__file__).resolve().parent


def _cells(args):
    sys.path.insert(0, str(HERE))
    import scipy.sparse as sp
    from sklearn.preprocessing import StandardScaler

    from bench_models import load_set
    from primaldual.regpath import lam_max
    out = []
    for name in filter(None, args.sets.split(",")):
        data = load_set(name)
        if data is None:
            continue
        X, y = data
        for loss in ("logistic", "squared_hinge"):
            lmax = lam_max(X, y, loss, penalty="l1")
            for div in (10, 100, 1000):
                out.append((f"{name} {loss} /{div}", X, y, loss, lmax / div, 0))
    for name, loss, seeds in (("a8a", "logistic", args.a8a_seeds),
                              ("a1a", "squared_hinge", args.seeds)):
        data = load_set(name)
        if data is None or not seeds:
            continue
        X, y = data
        Xs = sp.csr_matrix(StandardScaler(with_mean=False).fit_transform(X))
        for s in seeds.split(","):
            seed = None if s == "None" else int(s)
            out.append((f"{name} std {loss} C=100 seed {s}", Xs, y, loss,
                        1.0 / (100.0 * Xs.shape[0]), seed))
    return out


def worker(args):
    """One process: every cell once; JSON lines on stdout."""
    import primaldual as pd
    from primaldual.datasets import make_synthetic
    Xw, yw, _ = make_synthetic((300, 200, 0.05), random_state=1)
    for loss in ("logistic", "squared_hinge"):
        pd.solve(Xw, yw, loss=loss, lam=0.0, l1=1e-3, tol=1e-6)
    for name, X, y, loss, l1, seed in _cells(args):
        t = np.inf
        for _ in range(3):              # the least of three calls
            t0 = time.process_time()
            r = pd.solve(X, y, loss=loss, lam=0.0, l1=l1, tol=1e-6, random_state=seed)
            t = min(t, time.process_time() - t0)
        print(json.dumps({"cell": name, "cpu": t, "epochs": r.n_epochs, "gap": r.rel_gap,
                          "ok": bool(r.converged)}), flush=True)


def _run(src, cache, args):
    env = dict(os.environ, PYTHONPATH=str(src), NUMBA_CACHE_DIR=str(cache))
    cmd = [sys.executable, __file__, "--worker", "--sets", args.sets, "--seeds", args.seeds,
           "--a8a-seeds", args.a8a_seeds]
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True)
    return {c["cell"]: c for c in map(json.loads, out.stdout.splitlines())}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--base", default="")
    ap.add_argument("--sets", default="a9a,a1a,reuters,mushrooms")
    ap.add_argument("--seeds", default="0,1,2,3")
    ap.add_argument("--a8a-seeds", default="",
                    help="also a8a standardized, logistic, l1 = 1/(100 n), these seeds")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--worker", action="store_true")
    args = ap.parse_args(argv)
    if args.worker:
        return worker(args)
    start = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    up0 = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    tmp = Path(tempfile.mkdtemp(prefix="l1dual-"))
    subprocess.run(f"git archive {args.base} src | tar -x -C {tmp}", shell=True, check=True,
                   cwd=ROOT)
    versions = {"base": (tmp / "src", tmp / "cache"),
                "new": (ROOT / "src", ROOT / ".numba_cache_bench")}
    runs = {"base": [], "new": []}
    for k in range(args.rounds):
        for v in (("base", "new") if k % 2 == 0 else ("new", "base")):
            runs[v].append(_run(*versions[v], args))
            print(v, k, flush=True)
    up1 = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    lines = [f"# l1cd dual points (best so far, extrapolation): new against {args.base}", "",
             f"Run {start}; `uptime` at the start: {up0}; at the end: {up1}; 2 cores shared "
             f"with other jobs, one thread.  `python benchmarks/bench_l1_dual.py --base "
             f"{args.base} --rounds {args.rounds} --sets {args.sets} --seeds {args.seeds}` "
             "(its docstring says how).  CPU seconds: the median over the rounds.", "",
             "| cell | base s | new s | new / base | base epochs | new epochs | "
             "base gap | new gap | certified base / new |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---|"]
    for cell in runs["new"][0]:
        b = [r[cell] for r in runs["base"]]
        n = [r[cell] for r in runs["new"]]
        tb, tn = np.median([c["cpu"] for c in b]), np.median([c["cpu"] for c in n])
        ratio = np.median([x["cpu"] / max(y["cpu"], 1e-9) for x, y in zip(n, b)])
        lines.append(f"| {cell} | {tb:.3f} | {tn:.3f} | {ratio:.2f} | {b[0]['epochs']:.0f} | "
                     f"{n[0]['epochs']:.0f} | {b[0]['gap']:.1e} | {n[0]['gap']:.1e} | "
                     f"{'/'.join('yes' if c['ok'] else 'NO' for c in (b[0], n[0]))} |")
    out = HERE / "results" / f"l1-dual-extrapolation-{time.strftime('%H%M', time.gmtime())}.md"
    out.write_text("\n".join(lines) + "\n")
    print(out)


if __name__ == "__main__":
    main()
