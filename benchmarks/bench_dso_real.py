"""DSO with its defaults on real LIBSVM sets: accuracy after 200 epochs and the cost
of an epoch next to an SDCA epoch, side by side.

For each set, loss (hinge, logistic) and ``lam`` (1e-4, 1e-5):

* the reference optimum ``P*``, certified by a duality gap (``compute_reference``):
  Newton for logistic; SDCA to a certified 1e-10 for hinge, and where SDCA does not
  certify it (unscaled covtype) the interior-point method and Newton on the
  smoothed hinge, its ``w`` and dual
  point certified on the hinge problem (column ``ref``: the source and its relative
  gap).  The values are kept in ``--reference-cache`` (``bench-out/``, outside the
  repository) and reused;
* DSO with the defaults (``n_workers=1``), ``max_epochs=200``, ``tol=0``, the gap
  checked every 10 epochs: the relative sub-optimality ``(P(w) - P*)/P*`` after 200
  epochs and the first checked epoch at which it is <= 1e-3;
* the epoch cost: ``advance(1)`` of DSO (the SVRG snapshot, the updates and the
  restart test: one whole epoch as ``fit`` runs it, without the gap check) and one
  SDCA epoch without shrinking (``sdca_epoch`` over a random permutation), timed
  alternately, ``--repeats`` times each; the ratio of the medians.  The gap check
  (every ``check_every`` epochs) reuses the restart test's pass over the data.

Run:  PYTHONPATH=src python benchmarks/bench_dso_real.py [--sets a9a,covtype,reuters]
      [--out benchmarks/results/dso-real.md]
      (or per cell with --accuracy-only / --timing-only --jsonl FILE, then
      --from-jsonl FILES... to write the table from the collected rows)
"""
from __future__ import annotations

import argparse
import json
import os
import time

import numpy as np

from primaldual.datasets import load
from primaldual.kernels.sdca import Averaging, SDCAState, Shrinking, sdca_epoch
from primaldual.kernels.views import ProxWork
from primaldual.problem import Problem
from primaldual.solvers import SOLVERS, solve

from _common import write_result  # benchmarks/, the script's folder

TARGET = 1e-3


def reference(X, y, loss, lam, cache, key, sdca_epochs):
    """(P*, lower bound, source): kept in ``cache`` (a JSON file) under ``key``."""
    known = json.load(open(cache)) if os.path.exists(cache) else {}
    if key in known and "d_best" in known[key]:
        k = known[key]
        return k["p_star"], k["d_best"], k["ref"]
    p_star, d_best, src = compute_reference(X, y, loss, lam, sdca_epochs)
    known[key] = {"p_star": p_star, "d_best": d_best, "ref": src}
    os.makedirs(os.path.dirname(cache) or ".", exist_ok=True)
    with open(cache, "w") as f:
        json.dump(known, f, indent=1, sort_keys=True)
    return p_star, d_best, src


def compute_reference(X, y, loss, lam, sdca_epochs):
    """(P*, best certified lower bound, source), certified by a duality gap.

    Logistic: truncated Newton (``solver="newton"``) to a relative gap of 1e-12.
    Hinge: SDCA to a certified 1e-10; where SDCA does not certify it within its
    epoch budget (unscaled covtype), the interior-point method (``O(n d^2)`` per
    iteration: small ``d`` only), then Newton (trust region) on the smoothed hinge
    (``gamma`` = 1e-2, 1e-3) and its ``w`` and dual point, which is feasible for
    the hinge dual (same box), certified on the hinge problem itself; the smallest
    primal and the largest dual are kept."""
    if loss == "logistic":
        r = solve(X, y, loss=loss, lam=lam, solver="newton", tol=1e-12, max_epochs=500)
        return r.primal, r.dual, "newton"
    r = solve(X, y, loss=loss, lam=lam, solver="sdca", tol=1e-10, max_epochs=sdca_epochs)
    best, dual, src = r.primal, r.dual, "sdca"
    hinge = Problem(X, y, loss=loss, lam=lam)
    if (best - dual) / abs(best) > 1e-7 and X.shape[1] <= 2000:
        r = solve(X, y, loss=loss, lam=lam, solver="ipm", tol=1e-10, max_epochs=500)
        if r.primal < best:
            best, src = r.primal, "ipm"
        dual = max(dual, r.dual)
    for gamma in (1e-2, 1e-3):
        if (best - dual) / abs(best) <= 1e-7:
            break
        r = solve(X, y, loss="smooth_hinge", loss_params={"gamma": gamma}, lam=lam,
                  solver="newton", globalization="trust_region", tol=1e-13,
                  max_epochs=300)
        c = hinge.certificate(r.coef, np.clip(r.dual_coef, *hinge.loss.dual_bounds(hinge.y)))
        if c.primal < best:
            best, src = c.primal, f"newton, smooth hinge {gamma:g}"
        dual = max(dual, c.dual)
    return best, dual, src


def sdca_epochs(prob, state, orders, parts):
    """Time ``len(orders)`` SDCA epochs back to back; seconds per epoch."""
    rows, spec, no_shrink, no_avg, no_prox = parts
    t0 = time.perf_counter()
    for order in orders:
        sdca_epoch(rows, spec, state, order, 0, prob.n, 0, -1, no_shrink, no_avg, no_prox)
    return (time.perf_counter() - t0) / len(orders)


def epoch_cost_ratio(prob, repeats):
    """Median DSO ``advance(1)`` time and median SDCA epoch time, timed alternately.

    Each SDCA sample runs as many epochs back to back as take about one DSO epoch
    (at least one), so that both samples span the same wall time: on a loaded
    machine a short sample is less likely to be preempted than a long one."""
    s = SOLVERS["dso"](prob, tol=0.0, max_epochs=repeats + 4, random_state=0)
    s.init_state(None)
    s.advance(1, None)                     # warm-up; the restart test has a window
    s.advance(1, None)
    n = prob.n
    e, ei = np.zeros(0), np.zeros(0, dtype=np.int64)
    state = SDCAState(np.zeros(n), np.zeros(prob.d), e, np.zeros(n, dtype=np.uint8))
    parts = (prob.rows_view(), prob.step_spec(), Shrinking(False, np.inf, np.inf),
             Averaging(False, e, ei, 0), ProxWork(e, e, e, ei))
    rng = np.random.default_rng(0)
    t0 = time.perf_counter()
    s.advance(1, None)
    t_first = time.perf_counter() - t0
    t_one = sdca_epochs(prob, state, [rng.permutation(n).astype(np.int64)], parts)
    m = max(1, int(round(t_first / max(t_one, 1e-9))))
    orders = [rng.permutation(n).astype(np.int64) for _ in range(m)]
    t_dso, t_sdca = [], []
    for _ in range(repeats):
        t0 = time.perf_counter()
        s.advance(1, None)
        t_dso.append(time.perf_counter() - t0)
        t_sdca.append(sdca_epochs(prob, state, orders, parts))
    return float(np.median(t_dso)), float(np.median(t_sdca))


def data_sets(args):
    """(name, X, y) of ``--sets`` or, with ``--regimes``, of every synthetic regime
    and every real set of the shared folder (loaded one at a time)."""
    if not args.regimes:
        for name in args.sets.split(","):
            yield (name,) + tuple(load(name, download=False, parsed_cache=True))
        return
    from primaldual.datasets import REGIMES, load_shared_regime, make_regime, shared_regimes
    for name in REGIMES:
        X, y = make_regime(name, random_state=0)[:2]
        yield name, X, y
    for name in sorted(shared_regimes()):
        X, y = load_shared_regime(name)[:2]
        yield name, X, y


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sets", default="a9a,covtype,reuters")
    ap.add_argument("--losses", default="hinge,logistic")
    ap.add_argument("--lams", default="1e-4,1e-5")
    ap.add_argument("--epochs", type=int, default=200)
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--out", default="benchmarks/results/dso-real.md")
    ap.add_argument("--reference-cache", default="bench-out/dso-real-reference.json",
                    help="P* per set/loss/lam, computed once per machine (not kept in "
                         "the repository)")
    ap.add_argument("--reference-only", action="store_true")
    ap.add_argument("--timing-only", action="store_true",
                    help="only the epoch costs (rows merged over earlier ones by --from-jsonl)")
    ap.add_argument("--primal-weight", default=None,
                    help="DSO's primal_weight: a number, 'lam_n' or 'adaptive' (default: "
                         "the solver's default)")
    ap.add_argument("--accuracy-only", action="store_true",
                    help="skip the epoch-cost timing (accuracy is deterministic)")
    ap.add_argument("--random-state", type=int, default=0, help="DSO's random_state")
    ap.add_argument("--n-workers", type=int, default=1,
                    help="DSO's n_workers (p: the block schedule; run in process)")
    ap.add_argument("--regimes", action="store_true",
                    help="with --timing-only: every regime of primaldual.datasets.REGIMES "
                         "(full size) and every real set of ../shared/data as given, "
                         "instead of --sets")
    ap.add_argument("--jsonl", default=None, help="also append each row to this file")
    ap.add_argument("--from-jsonl", nargs="*", default=None,
                    help="write --out from rows collected by earlier runs (no runs)")
    args = ap.parse_args()
    if args.from_jsonl is not None:
        merged = {}              # later files' fields (a timing-only run's) win
        for path in args.from_jsonl:
            for line in open(path):
                r = json.loads(line)
                key = (r["set"], r["loss"], r["lam"])
                if key in merged:
                    both = merged[key]["load"] + r["load"]
                    merged[key].update(r)
                    merged[key]["load"] = both
                else:
                    merged[key] = r
        order = {name: k for k, name in enumerate(args.sets.split(","))}
        rows = sorted((r for r in merged.values() if "sub_at" in r),
                      key=lambda r: (order.get(r["set"], len(order)), r["loss"], -r["lam"]))
        for r in rows:
            r["sub_at"] = {int(k): v for k, v in r["sub_at"].items()}
        write(args, rows)
        return
    pw = ({} if args.primal_weight is None else
          {"primal_weight": args.primal_weight if args.primal_weight in ("adaptive", "lam_n")
           else float(args.primal_weight)})
    rows = []
    for name, X, y in data_sets(args):
        for loss in args.losses.split(","):
            for lam in (float(v) for v in args.lams.split(",")):
                load_start = os.getloadavg()[0]
                if args.timing_only:
                    prob = Problem(X, y, loss=loss, lam=lam)
                    t_dso, t_sdca = epoch_cost_ratio(prob, args.repeats)
                    row = dict(set=name, loss=loss, lam=lam, t_dso=t_dso, t_sdca=t_sdca,
                               ratio=t_dso / t_sdca, load=[load_start, os.getloadavg()[0]])
                    print(f"{name} {loss} lam={lam:g}: cost {row['ratio']:.2f} (dso "
                          f"{t_dso * 1e3:.1f} ms, sdca {t_sdca * 1e3:.1f} ms)", flush=True)
                    row.update(n=X.shape[0], d=X.shape[1], nnz=int(X.nnz) if hasattr(X, "nnz")
                               else int(np.count_nonzero(X)))
                    rows.append(row)
                    if args.jsonl:
                        with open(args.jsonl, "a") as f:
                            f.write(json.dumps(row) + "\n")
                    continue
                t0 = time.perf_counter()
                p_star, d_best, src = reference(X, y, loss, lam, args.reference_cache,
                                                f"{name}/{loss}/{lam:g}",
                                                2000 if X.nnz < 2e6 else 100)
                t_ref = time.perf_counter() - t0
                if args.reference_only:
                    print(f"{name} {loss} lam={lam:g}: P*={p_star!r} ({src}, {t_ref:.0f}s)",
                          flush=True)
                    continue
                r = solve(X, y, loss=loss, lam=lam, solver="dso", tol=0.0,
                          max_epochs=args.epochs, check_every=10,
                          random_state=args.random_state, n_workers=args.n_workers,
                          **pw)
                sub = [(t["epoch"], (t["primal"] - p_star) / abs(p_star)) for t in r.trace]
                first = next((ep for ep, v in sub if v <= TARGET), None)
                prob = Problem(X, y, loss=loss, lam=lam)
                t_dso, t_sdca = ((float("nan"), float("nan")) if args.accuracy_only
                                 else epoch_cost_ratio(prob, args.repeats))
                row = dict(set=name, primal_weight=args.primal_weight, n=X.shape[0],
                           nnz=X.nnz, loss=loss, lam=lam,
                           lam_n=lam * X.shape[0], p_star=p_star, ref=src,
                           ref_gap=(p_star - d_best) / abs(p_star),
                           sub200=sub[-1][1], gap200=r.rel_gap, first=first,
                           sub_out=(r.primal - p_star) / abs(p_star),
                           restarts=r.trace[-1].get("restarts"),
                           t_dso=t_dso, t_sdca=t_sdca, ratio=t_dso / t_sdca,
                           sub_at={int(ep): v for ep, v in sub},
                           load=[load_start, os.getloadavg()[0]])
                rows.append(row)
                if args.jsonl:
                    with open(args.jsonl, "a") as f:
                        f.write(json.dumps(row) + "\n")
                print(f"{name} {loss} lam={lam:g}: sub200={row['sub200']:.1e} "
                      f"first<=1e-3 at {first} ratio={row['ratio']:.2f} "
                      f"(dso {t_dso * 1e3:.1f} ms, sdca {t_sdca * 1e3:.1f} ms) "
                      f"ref {src} {t_ref:.0f}s", flush=True)
    if rows:
        (write_timing if args.timing_only else write)(args, rows)


def write_timing(args, rows):
    """``--timing-only``: the epoch costs alone (``--regimes``: every regime and
    shared set)."""
    loads = [v for r in rows for v in r["load"]]
    met = sum(r["ratio"] <= 6.0 for r in rows)
    lines = [
        "# DSO epoch cost next to an SDCA epoch" + (", every regime and shared set"
                                                     if args.regimes else ""),
        "",
        "Written by `benchmarks/bench_dso_real.py --timing-only"
        + (" --regimes" if args.regimes else "") + "` (serial DSO, `n_workers=1`, the "
        "solver's defaults): `advance(1)` of DSO (the SVRG snapshot, the block updates, "
        "the restart test) against SDCA epochs without shrinking, timed alternately in "
        f"one process, {args.repeats} repeats, medians; `cost` is their ratio (target "
        f"<= 6). Machine: {os.cpu_count()} cores, 1-minute load average "
        f"{min(loads):.1f} to {max(loads):.1f} during the runs. Regimes at full size "
        "(`make_regime(name, random_state=0)`), shared sets as given.",
        "",
        "| set | n | d | nnz | loss | lam | DSO epoch ms | SDCA epoch ms | cost |",
        "|---|---:|---:|---:|---|---|---:|---:|---:|",
    ]
    for r in rows:
        cost = f"{r['ratio']:.2f}" if r["ratio"] <= 6.0 else f"**{r['ratio']:.2f}**"
        lines.append(f"| {r['set']} | {r.get('n', '-')} | {r.get('d', '-')} | "
                     f"{r.get('nnz', '-')} | {r['loss']} | {r['lam']:g} | "
                     f"{r['t_dso'] * 1e3:.2f} | {r['t_sdca'] * 1e3:.2f} | {cost} |")
    lines += ["", f"At most 6 in {met} of {len(rows)} cells (over 6 in bold)."]
    write_result(args.out, lines)


def write_accuracy(args, rows):
    """``--accuracy-only``: the accuracy columns, with the returned point's."""
    loads = [v for r in rows for v in r["load"]]
    lines = [
        f"# DSO on real data: accuracy after {args.epochs} epochs, "
        f"primal_weight={args.primal_weight}, random_state={args.random_state}, "
        f"n_workers={args.n_workers}",
        "",
        "Written by `benchmarks/bench_dso_real.py --accuracy-only` (serial DSO, "
        f"`n_workers={args.n_workers}`, `random_state={args.random_state}`, the defaults but "
        "`primal_weight`; the gap "
        "checked every 10 epochs; accuracy does not depend on the machine's load "
        f"(1-minute load average {min(loads):.1f} to {max(loads):.1f})).",
        "",
        "`last`: relative sub-optimality `(P(w) - P*)/P*` of the iterate at epoch "
        f"{args.epochs}; `returned`: of the `w` `solve` returns (the smallest "
        "primal among the checks); `epochs to 1e-3`: the first check whose iterate is at or "
        "below 1e-3.",
        "",
        "| set | loss | lam | lam n | last | returned | DSO gap (returned) | "
        "epochs to 1e-3 | restarts | at 50 / 100 / 150 / 200 |",
        "|---|---|---|---:|---:|---:|---:|---:|---:|---|",
    ]
    for r in rows:
        s = r["sub_at"]
        lines.append(
            f"| {r['set']} | {r['loss']} | {r['lam']:g} | {r['lam_n']:.3g} | "
            f"{r['sub200']:.1e} | {r['sub_out']:.1e} | {r['gap200']:.1e} | "
            f"{'-' if r['first'] is None else int(r['first'])} | {r['restarts']} | "
            + " / ".join(f"{s[e]:.1e}" if e in s else "-" for e in (50, 100, 150, 200))
            + " |")
    write_result(args.out, lines)


def write(args, rows):
    if getattr(args, "accuracy_only", False):
        return write_accuracy(args, rows)
    loads = [v for r in rows for v in r["load"]]
    lines = [
        "# DSO on real data: defaults, 200 epochs, epoch cost next to SDCA",
        "",
        "Written by `benchmarks/bench_dso_real.py` (serial DSO, `n_workers=1`, "
        "`random_state=0`, the solver's defaults; the gap checked every 10 epochs). "
        "Accuracy does not depend on the machine's load; the epoch costs do.",
        "",
        f"Machine: {os.cpu_count()} cores, 1-minute load average between "
        f"{min(loads):.1f} and {max(loads):.1f} during the runs "
        + ("(nothing else running: the benchmark's own process is the load); "
           if max(loads) < 2.0 else
           "(other work running beside the benchmark: the epoch times are loaded times, "
           "and on a loaded machine the ratio of one setting moves by up to 1.5x between "
           "runs); ")
        + f"the epoch costs are the ratio of the two medians, measured alternately in "
          f"the same process ({args.repeats} repeats).",
        "",
        "`sub200`: relative sub-optimality `(P(w) - P*)/P*` of DSO's iterate after "
        f"{args.epochs} epochs; `returned`: of the `w` that `solve` returns (the "
        "smallest primal among the checks; target <= 1e-3); `epochs to 1e-3`: the first checked "
        "epoch at or below 1e-3; `cost`: DSO epoch (`advance(1)`: SVRG snapshot, "
        "updates, restart test) / SDCA epoch without shrinking (target <= 6); "
        "`DSO gap200`: DSO's own certified relative duality gap after 200 epochs (an "
        "upper bound on its relative sub-optimality, whatever the reference). Every "
        "reference is certified by a duality gap (`ref`: its source and relative gap; "
        "`compute_reference`).",
        "",
        "| set | n | nnz | loss | lam | lam n | P* | ref (its relative gap) | sub200 | "
        "returned | DSO gap200 | epochs to 1e-3 | restarts | DSO epoch ms | SDCA epoch ms "
        "| cost |",
        "|---|---:|---:|---|---|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(
            f"| {r['set']} | {r['n']} | {r['nnz']} | {r['loss']} | {r['lam']:g} | "
            f"{r['lam_n']:.3g} | {r['p_star']:.10g} | {r['ref']} ({r['ref_gap']:.0e}) | "
            f"{r['sub200']:.1e} | "
            f"{'-' if r.get('sub_out') is None else format(r['sub_out'], '.1e')} | "
            f"{'-' if r.get('gap200') is None else format(r['gap200'], '.1e')} | "
            f"{'-' if r['first'] is None else int(r['first'])} | {r['restarts']} | "
            f"{r['t_dso'] * 1e3:.1f} | {r['t_sdca'] * 1e3:.1f} | {r['ratio']:.2f} |")
    lines += ["", "Relative sub-optimality at epochs 50 / 100 / 150 / 200:", ""]
    for r in rows:
        s = r["sub_at"]
        lines.append(f"* {r['set']} {r['loss']} lam={r['lam']:g}: " + " / ".join(
            f"{s[e]:.1e}" if e in s else "-" for e in (50, 100, 150, 200)))
    write_result(args.out, lines)


if __name__ == "__main__":
    main()
