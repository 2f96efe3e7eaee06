"""SDCA epoch against lightning's SDCAClassifier, hinge loss, same run.

Both run 5 passes with tol=0 and no shrinking at lam=1e-4 on unit-norm rows;
primaldual's time excludes its two exact-gap checks (measured separately).
Needs lightning: `make bench-peers`.  Run: `python benchmarks/bench_sdca_epoch.py`.
"""
import time, warnings, numpy as np
from sklearn.preprocessing import normalize
import primaldual as pd
from primaldual.datasets import make_synthetic, load_svmlight
from primaldual.kernels.sdca import sdca_epoch
from lightning.classification import SDCAClassifier
sets = {}
X, y, _ = make_synthetic("rcv1"); sets["rcv1-shaped"] = (X, y)
for name, f in [("a9a", "/work/shared/data/a9a"), ("covtype", "/work/shared/data/covtype.libsvm.binary.bz2"), ("reuters", "/work/shared/data/reuters.bz2")]:
    X, yr = load_svmlight(f); sets[name] = (normalize(X).tocsr(), np.where(yr == yr.max(), 1.0, -1.0))
print("| data | primaldual SDCA epoch (ns/nnz) | lightning SDCA epoch (ns/nnz) | ratio |")
print("|---|---:|---:|---:|")
for name, (X, y) in sets.items():
    n = X.shape[0]; lam = 1e-4
    res = pd.solve(X, y, loss="hinge", lam=lam, max_epochs=1, tol=0, shrinking=False)  # warm up
    best = np.inf
    for rep in range(3):
        r = pd.solve(X, y, loss="hinge", lam=lam, max_epochs=5, tol=0, shrinking=False, check_every=5, random_state=rep)
        # kernel time only: subtract the two certificate passes measured separately
        t = time.perf_counter(); pd.Problem(X, y, "hinge", lam).certificate(r.coef, r.dual_coef); tc = time.perf_counter() - t
        best = min(best, (r.time - 2 * tc) / (5 * X.nnz) * 1e9)
    bl = np.inf
    for rep in range(3):
        est = SDCAClassifier(alpha=lam, l1_ratio=0.0, loss="hinge", max_iter=5, tol=0.0, random_state=rep)
        t = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore"); est.fit(X, y)
        bl = min(bl, (time.perf_counter() - t) / (5 * X.nnz) * 1e9)
    print(f"| {name} | {best:.1f} | {bl:.1f} | {best/bl:.2f} |", flush=True)
