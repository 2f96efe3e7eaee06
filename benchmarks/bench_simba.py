"""Wall-clock per SIMBA iteration against the cost model (Hazan, Koren & Srebro,
Theorem 4.3: O(n + d) per iteration; Section 4 "The sparse case": about
O((nnz(x_i) + nnz(column j)) log n) with sampling trees).

For each (implementation, data kind, n, d) the solver runs a fixed number of
iterations (``schedule="adaptive_sqrt"``, ``nu=0.1``) after a warm-up that
compiles the kernels; the time of ``advance`` alone is measured (no
certificates).  Fits by least squares:

* dense implementation:   sec/iter = a + b n + c d
* sparse implementation:  sec/iter = a + b * (accesses/iter) + c * (swaps/iter) * log2 n

Usage::

    PYTHONPATH=src python benchmarks/bench_simba.py [--quick]
    PYTHONPATH=src python benchmarks/bench_simba.py --compare reuters --plot simba.png
"""
from __future__ import annotations

import argparse
import time

import numpy as np
import scipy.sparse as sp
from sklearn.preprocessing import normalize

from primaldual import Problem
from primaldual.solvers import SOLVERS


def make_data(n, d, density, seed):
    rng = np.random.default_rng(seed)
    if density >= 1.0:
        X = rng.standard_normal((n, d))
        X /= np.linalg.norm(X, axis=1, keepdims=True)
    else:
        X = sp.random(n, d, density=density, random_state=rng, format="csr")
        X.data = rng.exponential(size=X.data.size)
        X = normalize(X)
    w = rng.standard_normal(d)
    y = np.sign(X @ w + 0.1 * rng.standard_normal(n))
    y[y == 0] = 1
    return X, y


def time_iterations(X, y, impl, iters, seed=0):
    cls = SOLVERS["simba"]
    s = cls(Problem(X, y, loss="hinge", lam=1e-4), tol=0, max_epochs=1e12,
            random_state=seed, nu=0.1, schedule="adaptive_sqrt", T=iters,
            implementation=impl, check_every=1e12)
    s.init_state(None)
    t0 = time.perf_counter()
    s.advance(1e12, None)
    el = time.perf_counter() - t0
    return el / s.t, s.feature_accesses / s.t, s.swaps / s.t


def fit(A, t):
    coef, *_ = np.linalg.lstsq(A, t, rcond=None)
    pred = A @ coef
    r2 = 1 - np.sum((t - pred) ** 2) / np.sum((t - t.mean()) ** 2)
    return coef, r2


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--compare", default=None,
                    help="reuters | news20 | real-sim: SIMBA vs Pegasos test error")
    ap.add_argument("--plot", default=None)
    args = ap.parse_args()
    if args.compare:
        compare(args.compare, out=args.plot)
        return
    iters = 300 if args.quick else 1500

    # compile time (first call of each kernel, from the on-disk cache if present)
    X, y = make_data(50, 20, 1.0, 0)
    for impl in ("dense", "sparse"):
        t0 = time.perf_counter()
        time_iterations(X, y, impl, 5)
        print(f"first call (compile or cache load) {impl}: {time.perf_counter() - t0:.2f} s")

    print("\n== dense implementation (Algorithm 1 as written), dense data")
    rows = []
    grid = [(1000, 100), (1000, 2000), (4000, 100), (4000, 2000), (2000, 1000),
            (8000, 500), (500, 8000)]
    if args.quick:
        grid = grid[:4]
    for n, d in grid:
        X, y = make_data(n, d, 1.0, 1)
        sec, acc, _ = time_iterations(X, y, "dense", iters)
        rows.append((n, d, sec))
        print(f"n={n:6d} d={d:6d}  {sec * 1e6:9.1f} us/iter  accesses/iter={acc:9.0f} "
              f"(n+d={n + d})")
    R = np.array(rows, dtype=float)
    coef, r2 = fit(np.c_[np.ones(len(R)), R[:, 0], R[:, 1]], R[:, 2])
    print(f"fit sec/iter = {coef[0] * 1e6:.2f}us + {coef[1] * 1e9:.2f}ns * n + "
          f"{coef[2] * 1e9:.2f}ns * d   (R^2 = {r2:.4f})")

    print("\n== sparse data (density 0.1%-1%): dense vs sparse implementation")
    rows = []
    grid = [(2000, 5000, 0.01), (8000, 5000, 0.01), (8000, 20000, 0.003),
            (32000, 20000, 0.003), (32000, 80000, 0.001), (8000, 80000, 0.001)]
    if args.quick:
        grid = grid[:3]
    for n, d, dens in grid:
        X, y = make_data(n, d, dens, 2)
        sec_d, acc_d, _ = time_iterations(X, y, "dense", max(100, iters // 5))
        sec_s, acc_s, sw = time_iterations(X, y, "sparse", iters)
        rows.append((n, d, acc_s, sw, sec_s, sec_d))
        print(f"n={n:6d} d={d:6d} nnz={X.nnz:8d}  dense impl {sec_d * 1e6:8.1f} us/iter | "
              f"sparse impl {sec_s * 1e6:7.1f} us/iter, accesses/iter={acc_s:7.1f}, "
              f"swaps/iter={sw:5.2f}  speed-up x{sec_d / sec_s:.1f}")
    R = np.array(rows, dtype=float)
    coef, r2 = fit(np.c_[np.ones(len(R)), R[:, 0], R[:, 1]], R[:, 5])
    print(f"dense impl fit: {coef[0] * 1e6:.2f}us + {coef[1] * 1e9:.2f}ns*n + "
          f"{coef[2] * 1e9:.2f}ns*d  (R^2 = {r2:.4f})")
    logn = np.log2(R[:, 0])
    A = np.c_[np.ones(len(R)), R[:, 2] * logn, R[:, 3] * logn]
    coef, r2 = fit(A, R[:, 4])
    print(f"sparse impl fit: {coef[0] * 1e6:.2f}us + {coef[1] * 1e9:.2f}ns*accesses*log2(n) + "
          f"{coef[2] * 1e9:.2f}ns*swaps*log2(n)  (R^2 = {r2:.4f})")
    coef2, r2b = fit(np.c_[np.ones(len(R)), R[:, 0], R[:, 1]], R[:, 4])
    print(f"sparse impl against n + d: R^2 = {r2b:.4f} (n coef {coef2[1] * 1e9:.2f}ns, "
          f"d coef {coef2[2] * 1e9:.2f}ns)")


# ------------------------------------------------ SIMBA vs Pegasos (Section 6)
def compare(data="reuters", seeds=(0, 1, 2), max_epochs=20.0, check_every=0.05,
            lams=(1e-3, 1e-4, 1e-5), out=None):
    """Test error vs feature accesses, SIMBA vs Pegasos, each tuned over ``lams``
    (SIMBA through ``nu = nu_from_lam_solution(w_lam)``) for the lowest final
    mean test error; prints the accesses each needs to reach Pegasos' best."""
    import primaldual
    from primaldual.solvers.simba import nu_from_lam_solution
    from primaldual.datasets import load_svmlight_files, shared_data_dirs
    if data == "reuters":
        base = next(p for p in shared_data_dirs() if (p / "reuters.bz2").exists())
        Xtr, ytr, Xte, yte = load_svmlight_files([str(base / "reuters.bz2"),
                                                  str(base / "reuters.t.bz2")],
                                                 n_features=8315)
    else:
        from primaldual.datasets import make_synthetic
        n_train = {"news20": 8000, "real-sim": 20000}[data]
        X, y, _ = make_synthetic(data, n_samples=n_train + 12000, random_state=0)
        Xtr, ytr, Xte, yte = X[:n_train], y[:n_train], X[n_train:], y[n_train:]
    ytr = np.where(ytr == ytr.max(), 1.0, -1.0)
    yte = np.where(yte == yte.max(), 1.0, -1.0)
    Xtr, Xte = normalize(Xtr), normalize(Xte)
    curves = {}
    for lam in lams:
        ref = primaldual.solve(Xtr, ytr, loss="hinge", lam=lam, solver="sdca", tol=1e-5,
                               max_epochs=300)
        nu = nu_from_lam_solution(ref.coef, Xtr, ytr)
        for name, kw in (("pegasos", dict(solver="sgd", project=True)),
                         ("simba", dict(solver="simba", nu=min(nu, 1.0),
                                        schedule="adaptive_sqrt"))):
            runs = []
            for seed in seeds:
                res = primaldual.solve(Xtr, ytr, loss="hinge", lam=lam, tol=0,
                                       max_epochs=max_epochs, check_every=check_every,
                                       eval_set=(Xte, yte), random_state=seed, **kw)
                runs.append([(r["feature_accesses"], r["test_error"]) for r in res.trace])
            m = min(len(r) for r in runs)
            acc = np.array([[r[k][0] for k in range(m)] for r in runs]).mean(0)
            err = np.array([[r[k][1] for k in range(m)] for r in runs])
            curves[(name, lam)] = (acc, err.mean(0), err.std(0), nu)
            print(f"{data} {name:8s} lam={lam:g} nu={nu:.4g}: final test error "
                  f"{err.mean(0)[-1]:.4f} +- {err.std(0)[-1]:.4f}, best {err.mean(0).min():.4f}")
    best = {}
    for name in ("pegasos", "simba"):
        lam = min((l for l in lams), key=lambda l: curves[(name, l)][1][-1])
        best[name] = (lam, curves[(name, lam)])
    target = best["pegasos"][1][1].min()
    print(f"tuned: pegasos lam={best['pegasos'][0]:g}, simba lam={best['simba'][0]:g} "
          f"(nu={best['simba'][1][3]:.4g}); Pegasos' best mean test error {target:.4f}")
    for name in ("pegasos", "simba"):
        acc, mean, sd, _ = best[name][1]
        hit = np.flatnonzero(mean <= target + 1e-12)
        where = f"{acc[hit[0]]:.3g}" if hit.size else "not reached"
        print(f"  {name}: feature accesses to reach {target:.4f}: {where}; "
              f"final {mean[-1]:.4f} +- {sd[-1]:.4f} at {acc[-1]:.3g} accesses")
    if out:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        fig, ax = plt.subplots(figsize=(5, 3.5))
        for name in ("pegasos", "simba"):
            acc, mean, sd, _ = best[name][1]
            ax.errorbar(np.maximum(acc, 1), mean, yerr=sd, label=name, capsize=2,
                        errorevery=max(1, len(acc) // 20))
        ax.set_xscale("log")
        ax.set_xlabel("feature accesses")
        ax.set_ylabel("test error")
        ax.set_title(data)
        ax.legend()
        fig.tight_layout()
        fig.savefig(out, dpi=120)
    return curves


if __name__ == "__main__":
    main()
