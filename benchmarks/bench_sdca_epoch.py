"""Cost of an SDCA epoch per stored nonzero, hinge, against lightning's SDCA.

Each figure is the wall-clock of the whole public call divided by
``epochs x nnz``, nothing subtracted:

- primaldual: ``solve(X, y, loss="hinge", lam=1e-4, solver="sdca", max_epochs=5,
  tol=0, shrinking=False, check_every=5)`` -- the Problem built inside the
  call and its one exact certificate check (after epoch 5) included;
- lightning: ``SDCAClassifier(alpha=1e-4, l1_ratio=0, loss="hinge", max_iter=5,
  tol=0).fit(X, y)`` when lightning imports (``make bench-peers``).

Best of 3, after a warm-up call (Numba compile time excluded).  Rows scaled to
unit norm.  Run: ``python benchmarks/bench_sdca_epoch.py``; the table is printed
and written to ``benchmarks/results/sdca-epoch.md``.
"""
import sys
import time
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

import primaldual  # noqa: E402
from primaldual.bench.config import DatasetSpec  # noqa: E402
from primaldual.bench.splits import load_data  # noqa: E402
from primaldual.bench.peers import PEERS  # noqa: E402
from primaldual.bench.report import cpu_model  # noqa: E402

LAM, EPOCHS = 1e-4, 5


def main():
    specs = [DatasetSpec(name="rcv1", source="synthetic", label="rcv1 shape")]
    from primaldual import datasets
    have = set(datasets.available_real())
    for name in ("a9a", "covtype", "reuters"):
        if name in have:
            specs.append(DatasetSpec(name=name, subsample="random", label=name))
        else:
            print(f"skipping {name}: not found locally", file=sys.stderr)
    lightning = PEERS["lightning-sdca"].status()
    lines = [f"# SDCA epoch per nonzero, hinge, lam {LAM:g}, {EPOCHS} epochs, whole call", "",
             f"Machine: {cpu_model()}; lightning: {lightning or 'ok'}. "
             "Wall-clock of the whole public call / (epochs x nnz), best of 3, "
             "nothing subtracted (primaldual: Problem construction and one exact "
             "certificate check inside).", "",
             "| data | nnz | primaldual SDCA (ns/nnz) | lightning SDCA (ns/nnz) | ratio |",
             "|---|---:|---:|---:|---:|"]
    for spec in specs:
        d = load_data(spec)
        X, y = d.X, d.y
        call = dict(loss="hinge", lam=LAM, solver="sdca", max_epochs=EPOCHS, tol=0.0,
                    shrinking=False, check_every=EPOCHS)
        primaldual.solve(X[:200], y[:200], **call)            # warm-up (compile)
        best = np.inf
        for rep in range(3):
            t = time.perf_counter()
            res = primaldual.solve(X, y, random_state=rep, **call)
            secs = time.perf_counter() - t
            best = min(best, secs / (res.n_epochs * X.nnz) * 1e9)
        bl = None
        if lightning is None:
            from lightning.classification import SDCAClassifier
            bl = np.inf
            for rep in range(3):
                est = SDCAClassifier(alpha=LAM, l1_ratio=0.0, loss="hinge", max_iter=EPOCHS,
                                     tol=0.0, random_state=rep)
                t = time.perf_counter()
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    est.fit(X, y)
                bl = min(bl, (time.perf_counter() - t) / (EPOCHS * X.nnz) * 1e9)
        lines.append(f"| {spec.display} | {X.nnz} | {best:.1f} | "
                     f"{'—' if bl is None else f'{bl:.1f}'} | "
                     f"{'—' if bl is None else f'{best / bl:.2f}'} |")
        print(lines[-1], file=sys.stderr, flush=True)
    text = "\n".join(lines) + "\n"
    out = ROOT / "benchmarks" / "results" / "sdca-epoch.md"
    out.write_text(text)
    print(text)


if __name__ == "__main__":
    from threadpoolctl import threadpool_limits
    with threadpool_limits(limits=1):
        main()
