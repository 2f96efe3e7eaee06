"""``primaldual demo`` (``make demo``): the main job on the data the project ships or generates.

It needs no data folder:

- the rcv1-shaped synthetic set, generated on the fly
  (:func:`primaldual.datasets.make_synthetic`);
- scikit-learn's bundled breast-cancer set (part of the installed package,
  never downloaded);
- every real LIBSVM set that :mod:`primaldual.datasets` finds locally
  (``$PRIMALDUAL_DATA``, ``../shared/data``, the cache), the first 5,000
  rows (and 2,500 test rows) of the big ones.

On each, for the hinge and the logistic loss at one ``lam``, it runs every
registered solver that works without a Dask client and supports the loss
against every installed peer (LIBLINEAR, scikit-learn, lightning), all
measured with the same objective, reference optimum and certificate
(:mod:`primaldual.bench`).  It prints the table and writes ``demo/``:
``report.md``, plots, traces (JSON lines), ``summary.md`` and ``meta.json``.

Each run is capped at 1 s of wall time (0.5 s with ``--quick``), so that the
whole demo stays within about 3 minutes however many solvers are registered.

``--quick`` (used by CI) keeps the synthetic set, breast-cancer and the two
smallest local LIBSVM sets, with fewer rows and epochs.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

__all__ = ["main", "build_config", "demo_datasets"]

LAM = 1e-4
LOSSES = ("hinge", "logistic")
#: wall-time cap of one run (so that slow solvers cannot stretch the demo past ~3 min;
#: capped runs show their progress so far, and their epochs depend on the machine)
RUN_SECONDS = 1.0
RUN_SECONDS_QUICK = 0.5


def demo_datasets(quick: bool, max_rows=None):
    """The demo's data sets (DatasetSpec list) and the real sets left out, with why."""
    from . import datasets as D
    from .bench.config import DatasetSpec
    rows = max_rows or (1000 if quick else 5000)
    n_syn = max_rows if max_rows else (2000 if quick else None)
    specs = [DatasetSpec(name="rcv1", source="synthetic", n=n_syn,
                         n_test=500 if quick else 4000, label="rcv1 (synthetic)"),
             DatasetSpec(name="breast_cancer", source="sklearn", scale="maxabs+unit",
                         test_fraction=0.25, label="breast_cancer (sklearn)")]
    found, seen = [], set()
    for name in D.available_real():
        try:
            path = D.find(name)
        except (FileNotFoundError, ValueError):
            continue
        if path in seen:                    # two registry names for one file
            continue
        seen.add(path)
        found.append((path.stat().st_size, name))
    found.sort()
    skipped = []
    if quick:
        skipped = [(name, "left out by --quick") for _, name in found[2:]]
        found = found[:2]
    for _, name in found:
        has_test = D.REGISTRY[name].test is not None
        specs.append(DatasetSpec(name=name, n=rows, subsample="head",
                                 n_test=(rows // 2 if has_test else None),
                                 test_fraction=None if has_test else 0.2,
                                 scale="maxabs+unit", label=name))
    return specs, skipped


def demo_solvers():
    """Our solvers that run without a client (SolverSpec list, sdca first), then peers."""
    import primaldual
    from .bench.config import SolverSpec
    from .bench.peers import PEERS
    ours, left_out = [], []
    for name in sorted(primaldual.SOLVERS, key=lambda s: (s != "sdca", s)):
        cls = primaldual.SOLVERS[name]
        if getattr(cls, "requires_client", False):
            left_out.append((name, "needs a Dask client"))
            continue
        ours.append(SolverSpec(name=name, label=name))
    peers = [SolverSpec(name=p, kind="peer", label=PEERS[p].label) for p in PEERS]
    return ours + peers, left_out


def build_config(quick=False, max_rows=None, max_epochs=None):
    """The demo as a :class:`~primaldual.bench.config.BenchConfig`."""
    from .bench.config import BenchConfig, Experiment, LossSpec, ReferenceSettings
    data, skipped = demo_datasets(quick, max_rows)
    solvers, left_out = demo_solvers()
    epochs = max_epochs or (15 if quick else 25)
    exps = [Experiment(name=loss, datasets=data, losses=[LossSpec(name=loss)], lams=[LAM],
                       solvers=solvers, max_epochs=epochs, tol=1e-8,
                       time_limit=RUN_SECONDS_QUICK if quick else RUN_SECONDS,
                       plots=["subopt-epochs", "subopt-time", "gap-epochs",
                              "test_error-epochs"],
                       title=f"{loss} loss")
            for loss in LOSSES]
    cfg = BenchConfig(name="demo", experiments=exps, seeds=[0],
                      reference=ReferenceSettings(tol=1e-12,
                                                  max_epochs=300),
                      description=f"primaldual demo{' (quick)' if quick else ''}: "
                                  f"hinge and logistic at lam={LAM:g}")
    return cfg, skipped, left_out


def _report(result, skipped, left_out, elapsed):
    """demo/report.md: what ran, the main table, the plots."""
    from .bench.report import markdown_table
    cfg = result.config
    meta = result.meta
    lines = ["# primaldual demo", "",
             f"{cfg.description}. Every solver and peer is scored with primaldual's own "
             f"objective against one reference optimum per (data set, loss) "
             f"(see `summary.md` for the references and how each data set was cut).", "",
             f"Machine: {meta['machine']['cpu_model']} ({meta['machine']['cpu_count']} CPUs); "
             f"versions: " + ", ".join(f"{k} {v}" for k, v in meta["versions"].items())
             + f"; total {elapsed:.1f} s.", ""]
    not_ok = sorted({(s["solver"], s["reason"]) for s in result.summaries
                     if s["status"] != "ok" and "not installed" in s["reason"]})
    if not_ok or left_out or skipped:
        lines += ["Left out:", ""]
        lines += [f"- {name}: {why}" for name, why in not_ok]
        lines += [f"- solver {name}: {why}" for name, why in left_out]
        lines += [f"- data set {name}: {why}" for name, why in skipped]
        lines.append("")
    ok = [s for s in result.summaries if s["status"] == "ok"]
    lines += ["## Results", "",
              "`seconds/epochs` to reach a relative duality gap (`gap`) or relative primal "
              "sub-optimality (`subopt`) target; `—` not reached within the budget.", "",
              markdown_table(ok, cfg.targets), ""]
    lines += ["## Plots", ""]
    for p in result.plots:
        rel = Path(p).relative_to(result.out_dir)
        lines += [f"![{rel.stem}]({rel.as_posix()})", ""]
    (result.out_dir / "report.md").write_text("\n".join(lines))


def main(argv=None) -> int:
    """Entry point of ``primaldual demo``; returns the exit code."""
    p = argparse.ArgumentParser(prog="primaldual demo", description=__doc__.split("\n")[0])
    p.add_argument("--quick", action="store_true",
                   help="small version for CI: fewer data sets, rows and epochs")
    p.add_argument("--out", default="demo", help="output directory (default: demo/)")
    p.add_argument("--quiet", action="store_true", help="no progress bar and no table")
    p.add_argument("--max-rows", type=int, default=None,
                   help="rows taken from each real data set and the synthetic one "
                        "(default: 5000 real / full synthetic; quick 1000 / 2000)")
    p.add_argument("--max-epochs", type=float, default=None,
                   help="epoch budget per run (default 25, quick 15)")
    p.add_argument("--no-plots", action="store_true", help="skip the plots")
    args = p.parse_args(sys.argv[1:] if argv is None else argv)
    if args.max_rows is not None and args.max_rows < 10:
        print("primaldual demo: error: --max-rows must be >= 10", file=sys.stderr)
        return 2
    if args.max_epochs is not None and not args.max_epochs > 0:
        print("primaldual demo: error: --max-epochs must be > 0", file=sys.stderr)
        return 2
    from .bench.harness import run_bench
    from .bench.report import markdown_table
    t0 = time.perf_counter()
    cfg, skipped, left_out = build_config(args.quick, args.max_rows, args.max_epochs)
    out = Path(args.out)
    if not args.quiet:
        n_data = len(cfg.experiments[0].datasets)
        print(f"primaldual demo: {n_data} data sets x {len(LOSSES)} losses x "
              f"{len(cfg.experiments[0].solvers)} solvers/peers -> {out}/", file=sys.stderr)
    result = run_bench(cfg, out, quiet=args.quiet, plots=not args.no_plots,
                       argv=["primaldual", "demo", *(argv or [])])
    elapsed = time.perf_counter() - t0
    _report(result, skipped, left_out, elapsed)
    if not args.quiet:
        ok = [s for s in result.summaries if s["status"] == "ok"]
        print(markdown_table(ok, cfg.targets, columns=("subopt",)))
        print(f"\nwrote {out}/report.md ({len(result.plots)} plots) in {elapsed:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
