"""The ``simba-paper`` preset's full configuration on reuters and real-sim-planted only.

Same grids (Pegasos lam in LAMS, SIMBA nu in NUS), 20 passes, a check every 0.05
pass, tuning and analysis (``simba_summary.{md,json}``, ``figures/simba_fig1.png``)
as ``python -m primaldual bench --preset simba-paper``; news20-planted is left out.
At the preset's check density one SIMBA run on news20-planted (d = 1,355,191) had
not finished after nine and a half minutes on the shared 2-core machine (a run with
a check every 0.25 pass took ~16 s in benchmarks/simba_planted.py, so the 400
checks seem to be the cost; not profiled), so a news20 seed costs about an hour. docs/reproducing-simba.md has the results.

    PYTHONPATH=src python benchmarks/simba_preset_subset.py OUT_DIR 0,1,2,3,4,5,6,7,8,9
"""
import dataclasses
import sys
import time

from primaldual.bench.harness import run_bench
from primaldual.bench.presets import simba_paper as S


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


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], [int(s) for s in sys.argv[2].split(",")])
