"""SDCA speed benchmark (issue 2, "Speed"): seconds to relative primal sub-optimality 1e-6.

For hinge, squared hinge and logistic at lam in {1e-4, 1e-5, 1e-6}, on the
rcv1-shaped synthetic set and on a9a, covtype.libsvm.binary.bz2 and
reuters.bz2 from ../shared/data (rows scaled to unit norm, no bias):

- primaldual SDCA with shrinking (hinge and squared hinge; shrinking needs a
  box dual domain, so logistic has none) and without it (the paper's SDCA,
  ``sampling="permutation"``);
- LIBLINEAR through ``liblinear-official`` (``-s 3``, ``-s 1``, ``-s 7`` with
  ``C = 1/(lam n)``, ``-B -1``): refitted with ``-e 10^-k/2`` until its ``w``
  reaches the target; its time is the fit that got there (data conversion
  excluded);
- lightning's ``SDCAClassifier`` when it imports (recorded as not installed
  otherwise).

The reference ``P*`` of a cell is the lower of a LIBLINEAR run at
``-e 1e-10`` and our SDCA run to relative gap 1e-12 (or its epoch/time
budget); the table says which, with SDCA's certified gap.

SDCA's time to the target is its solve time without the exact duality-gap
checks (each check is a full pass computing P, D and the gap; it is timed
and subtracted); the time with checks is shown too.  Also reported: SDCA's
time per epoch in nanoseconds per stored nonzero (no shrinking, no checks)
and the Numba compile time of a first fit, measured in fresh subprocesses
with an empty cache and with the on-disk cache.

    python benchmarks/bench_sdca.py            # full, several minutes; writes benchmarks/results/sdca.md
    python benchmarks/bench_sdca.py --quick    # small subsets; writes benchmarks/results/sdca-quick.md
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

import primaldual  # noqa: E402
from primaldual.bench.config import DatasetSpec  # noqa: E402
from primaldual.bench.data import load_data  # noqa: E402
from primaldual.bench.peers import PEERS  # noqa: E402
from primaldual.bench.report import cpu_model  # noqa: E402
from primaldual.solvers import SOLVERS  # noqa: E402

TARGET = 1e-6
LOSSES = ("hinge", "squared_hinge", "logistic")
LAMS = (1e-4, 1e-5, 1e-6)


def datasets(quick):
    if quick:
        return [DatasetSpec(name="rcv1", source="synthetic", n=3000, label="rcv1 (synthetic)"),
                DatasetSpec(name="a9a", n=5000, subsample="head", label="a9a[:5000]"),
                DatasetSpec(name="covtype", n=20000, subsample="head",
                            label="covtype[:20000]"),
                DatasetSpec(name="reuters", label="reuters")]
    return [DatasetSpec(name="rcv1", source="synthetic", label="rcv1 (synthetic)"),
            DatasetSpec(name="a9a", subsample="random", label="a9a"),
            DatasetSpec(name="covtype", subsample="random", label="covtype"),
            DatasetSpec(name="reuters", subsample="random", label="reuters")]


# --------------------------------------------------------------- reference
def reference(data, loss, lam, budget_epochs, time_limit):
    prob = primaldual.Problem(data.X, data.y, loss=loss, lam=lam)
    res = primaldual.solve(data.X, data.y, loss=loss, lam=lam, tol=1e-12,
                           max_epochs=budget_epochs, time_limit=time_limit, random_state=0)
    best, how = res.primal, "sdca"
    lib = PEERS["liblinear"]
    if lib.status() is None:
        coef, _, _ = lib.train(data.X, data.y, prob.loss, lam, 1e-10, 0)
        p = prob.primal(coef)
        if p < best:
            best, how = p, "liblinear"
    return {"primal": best, "method": how,
            "sdca_rel_gap": res.gap / abs(res.primal), "dual": res.dual}


# -------------------------------------------------------------------- SDCA
def time_sdca(data, loss, lam, pstar, shrinking, max_epochs, time_limit):
    """Time to the target with the exact-gap checks subtracted (and with them)."""
    prob = primaldual.Problem(data.X, data.y, loss=loss, lam=lam)
    hit = {}
    cert_time = [0.0]

    def cb(snap):
        if (snap["primal"] - pstar) <= TARGET * abs(pstar):
            hit.update(epoch=snap["epoch"], with_checks=snap["time"],
                       solve=snap["time"] - cert_time[0])
            return True
        return False

    runner = SOLVERS["sdca"](prob, tol=1e-9, max_epochs=max_epochs, random_state=0,
                             callback=cb, time_limit=time_limit, shrinking=shrinking)
    certificate = runner.certificate

    def timed_certificate():
        t0 = time.perf_counter()
        c = certificate()
        cert_time[0] += time.perf_counter() - t0
        return c

    runner.certificate = timed_certificate
    res = runner.run()
    if not hit and res.primal - pstar <= TARGET * abs(pstar):
        last = res.trace[-1]
        hit.update(epoch=last["epoch"], with_checks=last["time"],
                   solve=last["time"] - cert_time[0])
    solve_time = res.time - cert_time[0]
    return {"hit": hit or None, "epochs": res.n_epochs, "solve_time": solve_time,
            "ns_per_nnz": 1e9 * solve_time / max(res.n_epochs * data.X.nnz, 1)}


def time_liblinear(data, loss, lam, pstar, seconds_cap):
    lib = PEERS["liblinear"]
    prob = primaldual.Problem(data.X, data.y, loss=loss, lam=lam)
    for pt in lib.trace(data.X, data.y, prob.loss, lam, 0, 10 ** 6):
        if prob.primal(pt.coef) - pstar <= TARGET * abs(pstar):
            return {"time": pt.time, "iter": pt.epochs, "eps": pt.extra["eps"]}
        if pt.time > seconds_cap:
            break
    return None


def time_lightning(data, loss, lam, pstar, max_epochs, seconds_cap):
    peer = PEERS["lightning-sdca"]
    if peer.status() is not None:
        return peer.status()
    if loss not in peer.losses:
        return f"n/a (no {loss} loss)"
    prob = primaldual.Problem(data.X, data.y, loss=loss, lam=lam)
    for pt in peer.trace(data.X, data.y, prob.loss, lam, 0, max_epochs):
        if prob.primal(pt.coef) - pstar <= TARGET * abs(pstar):
            return {"time": pt.time, "iter": pt.epochs}
        if pt.time > seconds_cap:
            break
    return None


def lightning_epoch_ns(data, lam, epochs=5):
    """lightning's SDCA epoch (hinge, ``epochs`` passes, tol=0) in ns per nonzero,
    best of 3, or None when lightning is not importable."""
    if PEERS["lightning-sdca"].status() is not None:
        return None
    from lightning.classification import SDCAClassifier
    best = np.inf
    for rep in range(3):
        est = SDCAClassifier(alpha=lam, l1_ratio=0.0, loss="hinge", max_iter=epochs,
                             tol=0.0, random_state=rep)
        t = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est.fit(data.X, data.y)
        best = min(best, time.perf_counter() - t)
    return best / (epochs * data.X.nnz) * 1e9


# ----------------------------------------------------------- compile time
_COMPILE_SNIPPET = r"""
import json, time
t0 = time.perf_counter()
import numpy as np, scipy.sparse as sp
import primaldual
t1 = time.perf_counter()
rng = np.random.default_rng(0)
X = sp.random(200, 50, density=0.2, random_state=0, format="csr")
y = np.where(rng.standard_normal(200) > 0, 1.0, -1.0)
def fit():
    s = time.perf_counter()
    primaldual.solve(X, y, loss="hinge", lam=1e-2, max_epochs=2, tol=0)
    return time.perf_counter() - s
first = fit(); second = fit()
print(json.dumps({"import": t1 - t0, "first_fit": first, "second_fit": second}))
"""


def compile_times():
    out = {}
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"), OPENBLAS_NUM_THREADS="1")
    with tempfile.TemporaryDirectory() as cold:
        for label, cache in (("cold cache", cold), ("warm cache", cold)):
            env["NUMBA_CACHE_DIR"] = cache
            r = subprocess.run([sys.executable, "-c", _COMPILE_SNIPPET], env=env,
                               capture_output=True, text=True, check=True)
            out[label] = json.loads(r.stdout.strip().splitlines()[-1])
    return out


# ------------------------------------------------------------------ table
def fmt_hit(h):
    if h is None:
        return "not reached"
    return f"{h['solve']:.3g} ({h['with_checks']:.3g}) / {h['epoch']:.0f} ep"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="small subsets, short budgets")
    ap.add_argument("--out", help="Markdown output (default benchmarks/results/sdca[-quick].md)")
    ap.add_argument("--time-limit", type=float, default=None,
                    help="seconds per solver run (default 120, quick 20)")
    args = ap.parse_args(argv)
    limit = args.time_limit or (20.0 if args.quick else 120.0)
    ref_epochs = 300 if args.quick else 1000
    out = Path(args.out) if args.out else ROOT / "benchmarks" / "results" / (
        "sdca-quick.md" if args.quick else "sdca.md")
    t_start = time.perf_counter()
    comp = compile_times()
    rows, speed, lightning_speed = [], {}, {}
    from primaldual import datasets as D
    have = set(D.available_real())
    for spec in datasets(args.quick):
        if spec.source == "registry" and spec.name not in have:
            print(f"skipping {spec.display}: not found locally", file=sys.stderr)
            continue
        data = load_data(spec)
        for loss in LOSSES:
            for lam in LAMS:
                t0 = time.perf_counter()
                ref = reference(data, loss, lam, ref_epochs, 2 * limit)
                pstar = ref["primal"]
                box = loss != "logistic"
                shr = time_sdca(data, loss, lam, pstar, True, 1000, limit) if box else None
                plain = time_sdca(data, loss, lam, pstar, False, 1000, limit)
                speed.setdefault(spec.display, []).append(plain["ns_per_nnz"])
                if loss == "hinge" and lam == LAMS[0]:
                    lightning_speed[spec.display] = lightning_epoch_ns(data, lam)
                ll = time_liblinear(data, loss, lam, pstar, limit)
                lt = time_lightning(data, loss, lam, pstar, 320, limit)
                best = min([h["hit"]["solve"] for h in (shr, plain) if h and h["hit"]],
                           default=None)
                ratio = (f"{best / ll['time']:.2f}" if best is not None and ll else "—")
                rows.append([spec.display, loss, f"{lam:g}", str(data.X.shape[0]),
                             str(data.X.nnz),
                             f"{ref['method']} (SDCA gap {ref['sdca_rel_gap']:.0e})",
                             fmt_hit(shr["hit"]) if shr else "n/a (no box dual)",
                             fmt_hit(plain["hit"]),
                             f"{ll['time']:.3g} / {ll['iter']:.0f} it" if ll else "not reached",
                             lt if isinstance(lt, str) else (
                                 f"{lt['time']:.3g} / {lt['iter']:.0f} ep" if lt
                                 else "not reached"),
                             ratio])
                print(" | ".join(rows[-1]), f"[{time.perf_counter() - t0:.1f}s]",
                      file=sys.stderr)
    head = ["data", "loss", "lam", "n", "nnz", "reference P*", "SDCA+shrinking s (with checks) / ep",
            "SDCA s (with checks) / ep", "LIBLINEAR s / iter", "lightning SDCA", "best SDCA / LIBLINEAR"]
    md = [f"# SDCA speed: seconds to relative primal sub-optimality {TARGET:g}", "",
          f"Command: `python benchmarks/bench_sdca.py{' --quick' if args.quick else ''}`  ",
          f"Machine: {cpu_model()}, {os.cpu_count()} CPUs (shared); numpy {np.__version__}, "
          f"numba {__import__('numba').__version__}, liblinear-official "
          f"{PEERS['liblinear'].version()}, lightning: {PEERS['lightning-sdca'].status() or 'ok'}  ",
          f"BLAS limited to 1 thread. Per-run time limit {limit:g} s; total wall time "
          f"{time.perf_counter() - t_start:.0f} s.", "",
          "SDCA seconds exclude the exact duality-gap checks (one per epoch; shown in "
          "parentheses with them). LIBLINEAR seconds are the fit at the loosest `-e` "
          "whose `w` reaches the target. Rows scaled to unit norm, no bias.", "",
          "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    md += ["| " + " | ".join(r) + " |" for r in rows]
    md += ["", "## SDCA time per epoch (no shrinking, checks excluded)", "",
           "| data | ns per nonzero (median over cells) | min | max | lightning SDCA epoch, hinge (ns/nnz) |",
           "|---|---:|---:|---:|---:|"]
    for name, v in speed.items():
        lt = lightning_speed.get(name)
        md.append(f"| {name} | {np.median(v):.1f} | {np.min(v):.1f} | {np.max(v):.1f} | "
                  f"{'not installed' if lt is None else f'{lt:.1f}'} |")
    md += ["", "## Numba compile time of a first fit (fresh subprocess)", "",
           "| cache | import s | first fit s | second fit s | compile ≈ first - second |",
           "|---|---:|---:|---:|---:|"]
    for label, c in comp.items():
        md.append(f"| {label} | {c['import']:.2f} | {c['first_fit']:.2f} | "
                  f"{c['second_fit']:.3f} | {c['first_fit'] - c['second_fit']:.2f} |")
    text = "\n".join(md) + "\n"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    from threadpoolctl import threadpool_limits
    with threadpool_limits(limits=1):      # single-threaded, like LIBLINEAR; see docs
        sys.exit(main())
