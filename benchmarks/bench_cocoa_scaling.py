"""CoCoA+ scaling measured in process (issues 23 and 34).

For K partitions (``--ks``, default 1, 2, 4, 8, 16) run in one process (the partitions of a
round one after another: epochs do not depend on where they run), the epochs
CoCoA+ needs to a certified relative gap of 1e-6 for each aggregation
(``line_search``: each partition as if alone plus the driver's step on the
summed update; ``adding``: sigma' = K; ``averaging``: gamma = 1/K), against
serial SDCA's epochs, for hinge and logistic at lam = 1e-5 on

- the CCAT shape (``make_synthetic("CCAT")``, fewer rows than the 781k of
  CCAT: see ``--ccat-rows``);
- the shared-vocabulary text (``make_shared_vocab_text``, mean row cosine
  about 0.5; fewer rows than its 300k: ``--text-rows``);
- covtype (``/work/shared/data``; rows scaled to unit norm; a seeded subset
  of ``--covtype-rows`` rows);
- a9a and reuters (``/work/shared/data``, as given).

The variant ``deflated r=8`` is ``coupling="deflated"`` with 8 shared
directions (line_search, the factor K on the mean row and 7 singular vectors,
an adapted factor on the rest); ``subspace m=3`` / ``m=8`` are
``aggregation="subspace"`` with ``memory`` 3 / 8 (the step searched on the
span of the K local changes and the last m steps).

An epoch is n coordinate steps, local or serial.  A run stops at ``--cap``
epochs (the relative gap then is recorded); with ``--skip-after-cap`` the
larger K of an aggregation that hit the cap are not run.

Writes ``benchmarks/results/cocoa-scaling.jsonl`` (one line a run, as it goes)
and ``cocoa-scaling.md``.  The machine is shared: the times recorded are
loaded-machine times and the table reports epochs, which do not depend on load.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from primaldual import solve  # noqa: E402
from primaldual.datasets import make_synthetic  # noqa: E402
from primaldual.datasets.regimes import load_shared_regime, make_shared_vocab_text  # noqa: E402

OUT = ROOT / "benchmarks" / "results"
KS = (1, 2, 4, 8, 16, 32, 64)
AGGS = ("line_search", "adding", "averaging")
#: a variant: line_search with H = n_k / 8 (8 rounds of communication an epoch)
VARIANTS = {"line_search": {}, "adding": {}, "averaging": {},
            "line_search, H=n_k/8": {"aggregation": "line_search", "rounds_per_epoch": 8},
            "deflated r=8": {"aggregation": "line_search", "coupling": "deflated",
                             "shared_directions": 8},
            "deflated r=8, H=n_k/8": {"aggregation": "line_search", "coupling": "deflated",
                                      "shared_directions": 8, "rounds_per_epoch": 8},
            "subspace m=3": {"aggregation": "subspace", "memory": 3},
            "subspace m=8": {"aggregation": "subspace", "memory": 8}}
LAM = 1e-5
TOL = 1e-6


def datasets(args):
    if "ccat" in args.sets:
        X, y, _ = make_synthetic("CCAT", n_samples=args.ccat_rows, random_state=0)
        yield f"CCAT shape ({X.shape[0]} x {X.shape[1]})", X, y
    if "text" in args.sets:
        X, y = make_shared_vocab_text(n_samples=args.text_rows, random_state=0)
        yield f"shared-vocabulary text ({X.shape[0]} x {X.shape[1]})", X, y
    if "covtype" in args.sets:
        try:
            X, y = load_shared_regime("covtype")
        except Exception as e:        # no shared data on this machine
            print(f"covtype skipped: {e}", flush=True)
            return
        import scipy.sparse as sp
        X = sp.csr_matrix(X, dtype=np.float64)
        norms = np.sqrt(np.asarray(X.multiply(X).sum(axis=1)).ravel())
        X = sp.diags(1.0 / np.where(norms > 0, norms, 1.0)) @ X
        if args.covtype_rows < X.shape[0]:
            keep = np.random.default_rng(0).choice(X.shape[0], args.covtype_rows, replace=False)
            X, y = X[np.sort(keep)], y[np.sort(keep)]
        yield f"covtype, unit rows ({X.shape[0]} x {X.shape[1]})", sp.csr_matrix(X), y
    for name in ("a9a", "reuters"):
        if name in args.sets:
            try:
                X, y = load_shared_regime(name)
            except Exception as e:    # no shared data on this machine
                print(f"{name} skipped: {e}", flush=True)
                continue
            yield f"{name} ({X.shape[0]} x {X.shape[1]})", X, y


def run(X, y, loss, cap, lam=LAM, **opts):
    t = time.perf_counter()
    r = solve(X, y, loss=loss, lam=lam, tol=TOL, max_epochs=cap, random_state=0, **opts)
    return {"epochs": float(r.n_epochs), "converged": bool(r.converged),
            "rel_gap": float(r.rel_gap), "seconds": time.perf_counter() - t,
            "mean_step": r.trace[-1].get("mean_step"),
            "sigma_rest": r.trace[-1].get("sigma_rest"), "load": os.getloadavg()[0]}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ccat-rows", type=int, default=100_000)
    ap.add_argument("--text-rows", type=int, default=100_000)
    ap.add_argument("--covtype-rows", type=int, default=100_000)
    ap.add_argument("--cap", type=float, default=60)
    ap.add_argument("--sets", nargs="+", default=["ccat", "text", "covtype"])
    ap.add_argument("--losses", nargs="+", default=["logistic", "hinge"])
    ap.add_argument("--aggregations", nargs="+", default=list(VARIANTS))
    ap.add_argument("--lam", type=float, default=LAM)
    ap.add_argument("--ks", nargs="+", type=int, default=[1, 2, 4, 8, 16])
    ap.add_argument("--skip-after-cap", action="store_true")
    ap.add_argument("--out", default=str(OUT / "cocoa-scaling.jsonl"))
    args = ap.parse_args()
    out = Path(args.out)
    with out.open("a") as fh:
        for name, X, y in datasets(args):
            for loss in args.losses:
                def emit(row):
                    row.update(set=name, loss=loss, lam=args.lam, tol=TOL, cap=args.cap)
                    fh.write(json.dumps(row) + "\n")
                    fh.flush()
                    print(row, flush=True)
                emit({"solver": "sdca", "K": 1, "aggregation": None,
                      **run(X, y, loss, args.cap, lam=args.lam, solver="sdca")})
                capped = set()
                for K in args.ks:
                    for agg in args.aggregations:
                        if agg in capped:
                            continue
                        spec = dict(VARIANTS[agg])
                        per = spec.pop("rounds_per_epoch", 1)
                        spec.setdefault("aggregation", agg)
                        H = max(1, X.shape[0] // K // per)
                        res = run(X, y, loss, args.cap, lam=args.lam, solver="cocoa",
                                  n_partitions=K,
                                  n_jobs=1, local_iters=H, **spec)
                        emit({"solver": "cocoa", "K": K, "aggregation": agg, **res})
                        if not res["converged"] and args.skip_after_cap:
                            capped.add(agg)
    render(out, OUT / "cocoa-scaling.md")


def render(jsonl, md):
    rows = [json.loads(line) for line in Path(jsonl).read_text().splitlines() if line]
    lines = ["# CoCoA+ scaling in process: epochs to a certified 1e-6",
             "",
             "`benchmarks/bench_cocoa_scaling.py`.  lam as in each heading (1e-5 unless said), relative gap 1e-6, "
             "random_state 0.  Epochs (n coordinate steps each) until the certificate "
             "holds, in brackets the ratio to serial SDCA's epochs; `>cap (gap g)` did not "
             "certify within the cap (relative gap g then); `(not run)`: a smaller K "
             "already hit the cap.  The partitions run one "
             "after another in one process: the epochs are those of K machines.  The "
             "machine was shared with other work while this ran, so the seconds in the "
             "JSONL file are loaded-machine times; the epochs do not depend on load.",
             ""]
    loads = [r["load"] for r in rows if "load" in r]
    if loads:
        lines += [f"Load average (1 min) during the runs that record it: {min(loads):.1f} to "
                  f"{max(loads):.1f} on 2 cores.", ""]
    notes = Path(md).with_name(Path(md).stem + "-notes.md")
    if notes.exists():
        lines += [notes.read_text().rstrip(), ""]
    keyset = []
    for r in rows:
        k = (r["set"], r["loss"], r.get("lam", LAM))
        if k not in keyset:
            keyset.append(k)
    for s, loss, lam in keyset:
        rs = [r for r in rows if r["set"] == s and r["loss"] == loss
              and r.get("lam", LAM) == lam]
        serial = [r for r in rs if r["solver"] == "sdca"]
        if not serial:
            continue
        base = serial[-1]
        aggs = [a for a in VARIANTS if any(r.get("aggregation") == a for r in rs)]

        def cell(r, agg):
            if r is None:
                done = [x for x in rs if x["aggregation"] == agg]
                if not done:
                    return "not run"
                return f">{done[-1]['cap']:g} (not run)"
            if not r["converged"]:
                return f">{r['epochs']:.0f} (gap {r['rel_gap']:.0e})"
            if base["converged"]:
                return f"{r['epochs']:.0f} ({r['epochs'] / base['epochs']:.2f}x)"
            return f"{r['epochs']:.0f}"
        n_rows = int(s.split("(")[1].split(" x")[0]) if "(" in s else 0
        lines += [f"## {s}, {loss}, lam = {lam:g} (lam n = {lam * n_rows:.3g})", "",
                  f"serial SDCA: {base['epochs']:.1f} epochs"
                  + ("" if base["converged"] else " (not certified)"), "",
                  "| K | " + " | ".join(aggs) + " | mean step (line_search) |",
                  "|---|" + "---|" * (len(aggs) + 1)]
        for K in [k for k in KS if any(r["K"] == k and r["solver"] == "cocoa" for r in rs)]:
            cells = []
            step = ""
            for agg in aggs:
                m = [r for r in rs if r["K"] == K and r["aggregation"] == agg]
                cells.append(cell(m[-1] if m else None, agg))
                if agg == "line_search" and m and m[-1]["mean_step"] is not None:
                    step = f"{m[-1]['mean_step']:.3f}"
            lines.append(f"| {K} | " + " | ".join(cells) + f" | {step} |")
        lines.append("")
    Path(md).write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--render"]:
        render(OUT / "cocoa-scaling.jsonl", OUT / "cocoa-scaling.md")
    else:
        main()
