"""``primaldual bench``: run a named preset or a TOML config and print the summary.

::

    primaldual bench --preset sdca-paper [--quick] [--out DIR] [--seeds 0 1 2]
    primaldual bench --config my.toml [--out DIR] [--quiet] [--no-plots]
    primaldual bench --list
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .._extras import require
from .presets import get_preset, presets
from .config import load_config
from .harness import run_bench
from .report import markdown_table

__all__ = ["main", "build_parser"]


def build_parser():
    p = argparse.ArgumentParser(
        prog="primaldual bench",
        description="Run solvers and peers side by side on a grid of datasets x losses x "
                    "lam x solvers x seeds; write traces (JSON lines), a summary table, "
                    "meta.json and plots.")
    src = p.add_mutually_exclusive_group()
    src.add_argument("--preset", help="a named preset (see --list)")
    src.add_argument("--config", help="a TOML benchmark description")
    src.add_argument("--list", action="store_true", help="list the presets and exit")
    p.add_argument("--out", help="output directory (default: bench-out/<name>)")
    p.add_argument("--quick", action="store_true",
                   help="the preset's reduced version (small data, few epochs)")
    p.add_argument("--seeds", type=int, nargs="+", help="override the seeds")
    p.add_argument("--quiet", action="store_true", help="no progress bar, no table")
    p.add_argument("--no-plots", action="store_true", help="skip the figures")
    return p


def main(argv=None) -> int:
    """Entry point of ``primaldual bench``; returns the exit code."""
    argv = list(sys.argv[1:] if argv is None else argv)
    args = build_parser().parse_args(argv)
    if args.list:
        for name, mod in sorted(presets().items()):
            print(f"{name:20s} {getattr(mod, 'DESCRIPTION', '')}")
        return 0
    if not args.preset and not args.config:
        print("primaldual bench: give --preset NAME or --config FILE.toml (--list shows "
              "the presets)", file=sys.stderr)
        return 2
    try:
        figures = None
        if args.preset:
            mod = get_preset(args.preset)
            config = mod.build(quick=args.quick)
            figures = getattr(mod, "figures", None)
        else:
            if args.quick:
                raise ValueError("--quick applies to presets only; shrink the TOML config "
                                 "instead")
            config = load_config(args.config)
        if args.seeds is not None:
            if any(s < 0 for s in args.seeds):
                raise ValueError(f"--seeds must be integers >= 0, got {args.seeds}")
            config.seeds = list(args.seeds)
        out = Path(args.out) if args.out else Path("bench-out") / (
            config.name + ("-quick" if args.quick else ""))
        if not args.no_plots:
            require("matplotlib", "the figures (--no-plots goes without)")
        result = run_bench(config, out, quiet=args.quiet, plots=not args.no_plots,
                           argv=["primaldual", "bench", *argv], figures=figures)
    except (ValueError, FileNotFoundError) as e:
        print(f"primaldual bench: error: {e}", file=sys.stderr)
        return 2
    if not args.quiet:
        print(markdown_table(result.summaries, config.targets))
        print(f"\nwrote {out}/summary.md, meta.json, traces/ ({len(result.runs)} runs)"
              + (f", {len(result.plots)} plots" if result.plots else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
