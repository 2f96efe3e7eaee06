"""Time primaldual.datasets.make_synthetic on the paper-shaped presets.

Usage::

    PYTHONPATH=src python benchmarks/bench_synthetic.py            # rcv1 only
    PYTHONPATH=src python benchmarks/bench_synthetic.py --all      # every preset
    PYTHONPATH=src python benchmarks/bench_synthetic.py news20 CCAT --repeat 3

Prints, for each preset, the best wall time of ``--repeat`` runs, the shape, the
achieved density and the fraction of positive labels.
"""

import argparse
import time

from primaldual.datasets import SYNTHETIC_SHAPES, make_synthetic


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("shapes", nargs="*", default=["rcv1"],
                        help=f"presets to time (default rcv1): {', '.join(SYNTHETIC_SHAPES)}")
    parser.add_argument("--all", action="store_true", help="time every preset")
    parser.add_argument("--repeat", type=int, default=1, help="runs per preset (best is kept)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    names = list(SYNTHETIC_SHAPES) if args.all else args.shapes
    print(f"{'preset':10s} {'time_s':>8s} {'n':>9s} {'d':>9s} {'nnz':>11s} "
          f"{'density':>9s} {'target':>9s} {'pos':>6s}")
    for name in names:
        best = float("inf")
        for _ in range(max(1, args.repeat)):
            t0 = time.perf_counter()
            X, y, _ = make_synthetic(name, random_state=args.seed)
            best = min(best, time.perf_counter() - t0)
        n, d = X.shape
        target = SYNTHETIC_SHAPES[name].density
        print(f"{name:10s} {best:8.2f} {n:9d} {d:9d} {X.nnz:11d} {X.nnz / (n * d):9.5f} "
              f"{target:9.5f} {(y > 0).mean():6.3f}", flush=True)


if __name__ == "__main__":
    main()
