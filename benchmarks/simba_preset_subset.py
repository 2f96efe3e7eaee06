"""The ``simba-paper`` preset's full configuration, run in parts that fit the machine.

Same grids (Pegasos lam in LAMS, SIMBA nu in NUS), 20 passes, a check every 0.05
pass, tuning and analysis (``simba_summary.{md,json}``, ``figures/simba_fig1.png``)
as ``python -m primaldual bench --preset simba-paper``.

Reuters and real-sim-planted, all seeds in one harness run (news20-planted left out):

    PYTHONPATH=src python benchmarks/simba_preset_subset.py OUT_DIR 0,1,2,3,4,5,6,7,8,9

news20-planted (d = 1,355,191) only, one harness run per seed in ``WORK_DIR/seed-<s>/``
(a seed whose ``runs.json`` exists is skipped, so an interrupted run resumes and two
processes can share the seeds), and after each seed the merge of all finished seeds
into OUT_DIR (``simba_summary.{md,json}``, ``accounting.{md,json}``, ``runs.jsonl``,
``seeds.jsonl``, ``figures/simba_fig1.png``); ``--merge`` only merges:

    PYTHONPATH=src python benchmarks/simba_preset_subset.py --news20 WORK_DIR OUT_DIR 0,2,4
    PYTHONPATH=src python benchmarks/simba_preset_subset.py --news20 --merge WORK_DIR OUT_DIR

``accounting`` gives the accesses each tuned method needs to reach Pegasos' best mean
test error in both accountings of docs/reproducing-simba.md: nonzeros read
(``feature_accesses``) and the paper's dense model (a Pegasos step costs d, a SIMBA
iteration n + d). The checks (400 per run) are most of a news20 seed's cost;
``Problem.primal_certificate`` made them about 40% cheaper without changing a
number. docs/reproducing-simba.md has the profile, the cost per seed and the results.
"""
import argparse
import dataclasses
import json
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import numpy as np

from primaldual.bench.harness import run_bench
from primaldual.bench.presets import simba_paper as S

TRACE_KEYS = ("epoch", "feature_accesses", "iterations", "test_error", "time")


def main(out_dir, seeds):
    cfg = S.build(quick=False)
    exps = [dataclasses.replace(e, datasets=[d for d in e.datasets if d.name != "news20"])
            for e in cfg.experiments]
    cfg = dataclasses.replace(
        cfg, experiments=exps, seeds=seeds,
        description=cfg.description + f" [subset: reuters and real-sim-shaped, seeds {seeds}]")
    t0 = time.time()
    run_bench(cfg, out_dir, quiet=True, figures=S.figures,
              argv=["benchmarks/simba_preset_subset.py", out_dir, ",".join(map(str, seeds))])
    print(f"wall {time.time() - t0:.0f} s")


# --------------------------------------------------------------- news20-planted
def news20_config(seed):
    cfg = S.build(quick=False)
    exps = [dataclasses.replace(e, datasets=[d for d in e.datasets if d.name == "news20"])
            for e in cfg.experiments]
    return dataclasses.replace(
        cfg, experiments=exps, seeds=[seed],
        description=cfg.description + f" [news20-shaped only, seed {seed}]")


def run_news20_seed(work_dir, seed):
    """One seed of the preset on news20-planted; ``runs.json`` marks it finished."""
    sdir = Path(work_dir) / f"seed-{seed}"
    done = sdir / "runs.json"
    if done.exists():
        print(f"seed {seed}: already done", flush=True)
        return
    t0, c0 = time.time(), time.process_time()
    res = run_bench(news20_config(seed), sdir, quiet=True, plots=False,
                    argv=["benchmarks/simba_preset_subset.py", "--news20", str(seed)])
    wall, cpu = time.time() - t0, time.process_time() - c0
    d = res.runs[0].data
    runs = [{"run_id": r.run_id, "dataset": r.dataset, "solver_name": r.solver_name,
             "solver": r.solver, "options": {k: v for k, v in r.options.items() if k != "_"},
             "lam": r.lam, "seed": r.seed, "status": r.status, "n": d["n"], "d": d["d"],
             "nnz": d["nnz"],
             "trace": [{k: rec.get(k) for k in TRACE_KEYS} for rec in r.trace]}
            for r in res.runs]
    tmp = sdir / "runs.json.tmp"
    tmp.write_text(json.dumps({"seed": seed, "wall_seconds": wall, "cpu_seconds": cpu,
                               "runs": runs}))
    tmp.rename(done)
    print(f"seed {seed}: wall {wall:.0f} s, cpu {cpu:.0f} s", flush=True)


def _dense(run):
    """The paper's dense model along a trace: Pegasos d per step, SIMBA n + d."""
    n, d = run.n, run.d
    if run.solver_name == "simba":
        return [rec["iterations"] * (n + d) for rec in run.trace]
    return [round(rec["epoch"] * n) * d for rec in run.trace]


def accounting(analysis, runs):
    """Accesses of each tuned method to Pegasos' best mean, nonzeros read and dense."""
    out = {}
    for ds, e in analysis.items():
        if "pegasos_best" not in e:
            continue
        target = e["pegasos_best"]
        entry = {"pegasos_best": target, "seeds": {}, "nnz": {}, "dense": {}}
        for method, t in e["tuned"].items():
            rs = [r for r in runs if r.dataset == ds
                  and ("SIMBA" if r.solver_name == "simba" else "Pegasos") == method
                  and S._param(r) == (t["param"], t["value"])]
            # the same points as mean_curve: with a test error, accesses > 0
            keep = [[k for k, rec in enumerate(r.trace) if rec.get("test_error") is not None
                     and rec.get("feature_accesses", 0) > 0] for r in rs]
            m = min(len(k) for k in keep)
            nnz = np.mean([[r.trace[k]["feature_accesses"] for k in ks[:m]]
                           for r, ks in zip(rs, keep)], 0)
            dense = np.mean([[_dense(r)[k] for k in ks[:m]] for r, ks in zip(rs, keep)], 0)
            mean = t["curve"][1]
            hit = np.flatnonzero(mean <= target + 1e-12)
            entry["seeds"][method] = len(rs)
            entry["nnz"][method] = float(nnz[hit[0]]) if hit.size else None
            entry["dense"][method] = float(dense[hit[0]]) if hit.size else None
        for acct in ("nnz", "dense"):
            a = entry[acct]
            entry[acct + "_pegasos_over_simba"] = (a["Pegasos"] / a["SIMBA"]
                                                  if a.get("Pegasos") and a.get("SIMBA")
                                                  else None)
        out[ds] = entry
    return out


def _accounting_md(acc):
    lines = []
    for ds, e in acc.items():
        for acct, name in (("nnz", "nonzeros read"), ("dense", "dense model (n + d, d)")):
            a = e[acct]
            f = {m: (f"{v:.3g}" if v else "not reached") for m, v in a.items()}
            ratio = e[acct + "_pegasos_over_simba"]
            lines.append(f"- {ds}, {name}: accesses to Pegasos' best mean "
                         f"{e['pegasos_best']:.4f}: Pegasos {f.get('Pegasos')}, SIMBA "
                         f"{f.get('SIMBA')}" + (f", Pegasos / SIMBA = {ratio:.3g}"
                                                if ratio else ""))
    return "\n".join(lines) + "\n"


def merge(work_dir, out_dir):
    """Summaries and the figure over every finished seed in ``work_dir``."""
    out_dir = Path(out_dir)
    (out_dir / "figures").mkdir(parents=True, exist_ok=True)
    parts = sorted((json.loads(p.read_text()) for p in Path(work_dir).glob("seed-*/runs.json")),
                   key=lambda s: s["seed"])
    if not parts:
        print("no finished seed", flush=True)
        return
    runs = [SimpleNamespace(**r) for p in parts for r in p["runs"]]
    seeds = [p["seed"] for p in parts]
    desc = S.build(quick=False).description + f" [news20-shaped only, seeds {seeds}]"
    result = SimpleNamespace(runs=runs, config=SimpleNamespace(description=desc))
    S.figures(result, out_dir)
    analysis = S.analyse(result)
    acc = accounting(analysis, runs)
    (out_dir / "accounting.json").write_text(json.dumps(acc, indent=1))
    (out_dir / "accounting.md").write_text(_accounting_md(acc))
    with open(out_dir / "seeds.jsonl", "w") as fh:
        for p in parts:
            fh.write(json.dumps({"seed": p["seed"], "wall_seconds": round(p["wall_seconds"], 1),
                                 "cpu_seconds": round(p["cpu_seconds"], 1)}) + "\n")
    with open(out_dir / "runs.jsonl", "w") as fh:      # one line per run, no trace
        for r in runs:
            last = r.trace[-1]
            errs = [rec["test_error"] for rec in r.trace if rec.get("test_error") is not None]
            fh.write(json.dumps({k: v for k, v in vars(r).items() if k != "trace"} | {
                "checks": len(r.trace), "epochs": last["epoch"],
                "feature_accesses": last["feature_accesses"],
                "iterations": last.get("iterations"), "solver_seconds": last["time"],
                "final_test_error": last["test_error"], "best_test_error": min(errs)}) + "\n")
    first = Path(work_dir) / f"seed-{seeds[0]}" / "meta.json"
    if first.exists():                     # the environment, as the harness records it
        meta = json.loads(first.read_text())
        meta.update({"description": desc, "seeds": seeds, "command": ["benchmarks/simba_preset_subset.py",
                                                 "--news20", "WORK_DIR", "OUT_DIR", "SEEDS"],
                     "wall_seconds": None, "seed_seconds": {
                         p["seed"]: {"wall": round(p["wall_seconds"], 1),
                                     "cpu": round(p["cpu_seconds"], 1)} for p in parts}})
        (out_dir / "meta.json").write_text(json.dumps(meta, indent=1, default=str))
    (out_dir / "config.json").write_text(json.dumps({
        "description": desc, "seeds": seeds, "lams": list(S.LAMS), "nus": list(S.NUS),
        "simba_lam": S.SIMBA_LAM, "passes": S.FULL_PASSES, "check_every": S.CHECK_EVERY,
        "data": vars(S.NEWS20) if not dataclasses.is_dataclass(S.NEWS20)
        else dataclasses.asdict(S.NEWS20)}, indent=1, default=str))
    print(f"merged seeds {seeds} into {out_dir}", flush=True)


if __name__ == "__main__":
    ap = argparse.ArgumentParser(usage=__doc__)
    ap.add_argument("--news20", action="store_true")
    ap.add_argument("--merge", action="store_true")
    ap.add_argument("args", nargs="+")
    a = ap.parse_args()
    if not a.news20:
        if len(a.args) != 2:
            sys.exit(__doc__)
        main(a.args[0], [int(s) for s in a.args[1].split(",")])
    elif a.merge:
        merge(*a.args[:2])
    else:
        if len(a.args) != 3:
            sys.exit(__doc__)
        work, out = a.args[0], a.args[1]
        for s in [int(s) for s in a.args[2].split(",")]:
            run_news20_seed(work, s)
            merge(work, out)
