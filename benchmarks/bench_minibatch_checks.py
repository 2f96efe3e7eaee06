"""Mini-batch SDCA's checks on the threads ``n_jobs`` asks for, against checks on
one thread: the same threaded steps in both, only the certificate pass differs.
The two run alternately in one process on the orthogonal text regime
(``bench_regimes``' ``orthogonal_text``, 250,000 x 200,000), logistic,
``lam = 1e-5``, ``batch_size = 256``, ``n_jobs = 2``, ``tol = 1e-3``.

    python benchmarks/bench_minibatch_checks.py [--reps 3]

Prints each fit (wall seconds, seconds in certificate passes, checks, epochs,
gap) and the medians.
"""
from __future__ import annotations

import argparse
import time

import numpy as np

import primaldual
from primaldual.datasets.regimes import make_regime
from primaldual.problem import Problem
from primaldual.solvers.minibatch import MinibatchSDCASolver


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=3)
    args = ap.parse_args(argv)
    X, y = make_regime("orthogonal_text", random_state=0)
    real_setup, real_cert, cert_s = MinibatchSDCASolver.setup, Problem.certificate, []

    def one_thread_checks(self):
        real_setup(self)
        self.cert_threads = 1

    def timed(self, *a, **k):
        t = time.perf_counter()
        out = real_cert(self, *a, **k)
        cert_s.append(time.perf_counter() - t)
        return out

    Problem.certificate = timed
    kw = dict(loss="logistic", lam=1e-5, solver="minibatch_sdca", batch_size=256, n_jobs=2,
              tol=1e-3, random_state=0)
    out = {"checks on n_jobs threads": [], "checks on one thread": []}
    for _ in range(args.reps):
        for mode, setup in zip(out, (real_setup, one_thread_checks)):
            MinibatchSDCASolver.setup = setup
            cert_s.clear()
            t = time.perf_counter()
            r = primaldual.solve(X, y, **kw)
            el = time.perf_counter() - t
            out[mode].append((el, sum(cert_s)))
            print(f"{mode}: {el:.3f} s, certificate passes {sum(cert_s):.3f} s in "
                  f"{len(cert_s)} checks, {r.n_epochs:g} epochs, gap {r.rel_gap:.1e}", flush=True)
    MinibatchSDCASolver.setup = real_setup
    for mode, v in out.items():
        print(f"{mode}: median {np.median([a[0] for a in v]):.3f} s, certificate passes "
              f"{np.median([a[1] for a in v]):.3f} s")


if __name__ == "__main__":
    main()
