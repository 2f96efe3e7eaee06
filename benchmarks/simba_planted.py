"""SIMBA vs Pegasos in the SIMBA paper's regime (Hazan, Koren & Srebro 2011, Fig. 1),
on learnable planted text sets, with feature accesses counted two ways.

Data: :func:`primaldual.datasets.make_planted_text` (data seed 0), split as in the
paper: news20-like 8,000 train / 11,996 test (d = 1,355,191), real-sim-like
20,000 train / 52,309 test (d = 20,958).

Runs, each for ``--seeds`` solver seeds and ``--passes`` passes of nonzeros:
Pegasos (``solver="sgd", project=True``) for lam in 1e-3, 1e-4, 1e-5; SIMBA with
its defaults (``nu`` from ``lam = 1e-4``, schedule adaptive_sqrt) and with
``nu`` in 1e-2, 3e-3, 1e-3, 3e-4.  Every ``--check`` pass: the test error and

* ``nnz``: the nonzeros actually read (``res.feature_accesses``);
* ``dense``: the paper's dense model, a row costs d and a column n: Pegasos
  ``steps * d``, SIMBA ``iterations * (n + d)``.

For each method the parameter with the lowest final mean test error is kept
(the paper tunes on the test set), and the script reports, under both
accountings, the accesses each tuned method needs to reach Pegasos' best
mean test error and their ratio.  Output: JSON lines as runs finish
(``--out``), then a summary JSON and Markdown table beside it.

    PYTHONPATH=src python benchmarks/simba_planted.py --out benchmarks/results/simba_planted
"""
from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

import primaldual
from primaldual.datasets import make_planted_text

SETS = {"news20-planted": ("news20", 8000), "real-sim-planted": ("real-sim", 20000)}
LAMS = (1e-3, 1e-4, 1e-5)
NUS = (None, 1e-2, 3e-3, 1e-3, 3e-4)
SIMBA_LAM = 1e-4


def run_one(X, y, Xt, yt, method, param, seed, passes, check):
    n, d = X.shape
    if method == "Pegasos":
        res = primaldual.solve(X, y, loss="hinge", lam=param, solver="sgd", project=True,
                               max_epochs=passes, check_every=check, tol=0.0,
                               eval_set=(Xt, yt), random_state=seed)
        dense = [rec["epoch"] * n * d for rec in res.trace]
    else:
        res = primaldual.solve(X, y, loss="hinge", lam=SIMBA_LAM, solver="simba", nu=param,
                               max_epochs=passes, check_every=check, tol=0.0,
                               eval_set=(Xt, yt), random_state=seed)
        dense = [rec["iterations"] * (n + d) for rec in res.trace]
    return {"nnz": [rec["feature_accesses"] for rec in res.trace], "dense": dense,
            "err": [rec["test_error"] for rec in res.trace],
            "nu": res.extras.get("nu")}


def summarize(rows):
    out = {}
    for ds in dict.fromkeys(r["set"] for r in rows):
        groups = {}
        for r in rows:
            if r["set"] == ds:
                groups.setdefault((r["method"], r["param"]), []).append(r)
        curves = {}
        for key, rs in groups.items():
            m = min(len(r["err"]) for r in rs)
            err = np.array([r["err"][1:m] for r in rs])
            curves[key] = {"nnz": np.mean([r["nnz"][1:m] for r in rs], 0),
                           "dense": np.mean([r["dense"][1:m] for r in rs], 0),
                           "mean": err.mean(0), "std": err.std(0), "seeds": len(rs),
                           "nu": float(np.mean([r["nu"] for r in rs])) if key[0] == "SIMBA"
                           else None}
        tuned = {}
        for method in ("Pegasos", "SIMBA"):
            keys = [k for k in curves if k[0] == method]
            tuned[method] = min(keys, key=lambda k: curves[k]["mean"][-1])
        target = float(curves[tuned["Pegasos"]]["mean"].min())
        entry = {"configs": [], "pegasos_best": target, "reach": {}}
        for key, c in curves.items():
            entry["configs"].append({"method": key[0], "param": key[1], "nu": c["nu"],
                                     "seeds": c["seeds"],
                                     "final_mean": float(c["mean"][-1]),
                                     "final_std": float(c["std"][-1]),
                                     "best_mean": float(c["mean"].min()),
                                     "tuned": key == tuned[key[0]]})
        for acct in ("nnz", "dense"):
            reach = {}
            for method, key in tuned.items():
                c = curves[key]
                hit = np.flatnonzero(c["mean"] <= target + 1e-12)
                reach[method] = float(c[acct][hit[0]]) if hit.size else None
            ratio = (reach["Pegasos"] / reach["SIMBA"]
                     if reach["Pegasos"] and reach["SIMBA"] else None)
            entry["reach"][acct] = {"accesses": reach, "pegasos_over_simba": ratio}
        entry["curves"] = {f"{k[0]} {k[1]}": {kk: (v.tolist() if hasattr(v, "tolist") else v)
                                              for kk, v in c.items()}
                           for k, c in curves.items() if k in tuned.values()}
        out[ds] = entry
    return out


def markdown(summary):
    lines = ["| set | method | parameter | final test error (mean ± std) | best mean |",
             "|---|---|---|---|---|"]
    for ds, e in summary.items():
        for c in e["configs"]:
            p = ("lam=%g" % c["param"]) if c["method"] == "Pegasos" else (
                "nu=%g" % c["param"] if c["param"] is not None
                else "default (nu=%.3g from lam 1e-4)" % c["nu"])
            lines.append(f"| {ds} | {c['method']} | {p}{' **(tuned)**' if c['tuned'] else ''}"
                         f" | {c['final_mean']:.4f} ± {c['final_std']:.4f} | "
                         f"{c['best_mean']:.4f} |")
    lines.append("")
    for ds, e in summary.items():
        for acct, r in e["reach"].items():
            a = r["accesses"]
            f = {m: (f"{v:.3g}" if v else "not reached") for m, v in a.items()}
            ratio = r["pegasos_over_simba"]
            lines.append(f"- {ds}, {acct} accounting: accesses to Pegasos' best mean "
                         f"{e['pegasos_best']:.4f}: Pegasos {f['Pegasos']}, SIMBA {f['SIMBA']}"
                         + (f", Pegasos / SIMBA = {ratio:.3g}" if ratio else ""))
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="benchmarks/results/simba_planted")
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--passes", type=float, default=20.0)
    ap.add_argument("--check", type=float, default=0.25)
    ap.add_argument("--sets", default=",".join(SETS))
    ap.add_argument("--nus", default=None,
                    help="comma-separated nu grid for SIMBA (default: the built-in grid)")
    ap.add_argument("--lams", default=None, help="comma-separated lam grid for Pegasos")
    ap.add_argument("--append", action="store_true",
                    help="keep the runs already in OUT.jsonl and add these")
    a = ap.parse_args()
    nus = NUS if a.nus is None else tuple(None if v == "default" else float(v)
                                          for v in a.nus.split(","))
    lams = LAMS if a.lams is None else tuple(float(v) for v in a.lams.split(",") if v)
    out = Path(a.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    log = out.with_suffix(".jsonl")
    rows = []
    if a.append and log.exists():
        rows = [json.loads(line) for line in log.read_text().splitlines() if line.strip()]
    with open(log, "a" if a.append else "w") as fh:
        for ds in a.sets.split(","):
            shape, ntr = SETS[ds]
            X, y, _ = make_planted_text(shape, random_state=0)
            Xtr, ytr, Xte, yte = X[:ntr], y[:ntr], X[ntr:], y[ntr:]
            for method, grid in (("Pegasos", lams), ("SIMBA", nus)):
                for param in grid:
                    for seed in range(a.seeds):
                        t0 = time.perf_counter()
                        r = run_one(Xtr, ytr, Xte, yte, method, param, seed, a.passes, a.check)
                        r.update({"set": ds, "method": method, "param": param, "seed": seed,
                                  "n": ntr, "d": X.shape[1], "nnz_train": int(Xtr.nnz),
                                  "seconds": time.perf_counter() - t0})
                        rows.append(r)
                        fh.write(json.dumps(r) + "\n")
                        fh.flush()
                        print(ds, method, param, seed, f"err {r['err'][-1]:.4f}",
                              f"{r['seconds']:.1f}s", flush=True)
    summary = summarize(rows)
    out.with_suffix(".json").write_text(json.dumps(summary, indent=1))
    out.with_suffix(".md").write_text(markdown(summary))
    print(markdown(summary))


if __name__ == "__main__":
    main()
