"""A check's certificate pass on the threads ``n_jobs`` asks for, against the
same check on one thread, for the solvers whose steps run on threads:
mini-batch SDCA (its certificate pass on row ranges) and in-process CoCoA+
(the partitions' passes, one per thread).  Both modes take the same steps; only
the check differs.  They run alternately in one process on the orthogonal text
regime (``bench_regimes``' ``orthogonal_text``, 250,000 x 200,000), logistic,
``lam = 1e-5``, ``n_jobs = 2``.

    python benchmarks/bench_check_threads.py [--solver minibatch_sdca|cocoa] [--reps 3]

Prints each fit (wall seconds, seconds in certificate passes, checks, epochs,
gap) and the medians.
"""
from __future__ import annotations

import argparse
import time

import numpy as np

import primaldual
from primaldual.datasets.regimes import make_regime
from primaldual.distributed.block import PartitionBlock
from primaldual.problem import Problem
from primaldual.solvers.minibatch import MinibatchSDCASolver

FITS = {
    "minibatch_sdca": dict(solver="minibatch_sdca", batch_size=256, tol=1e-3),
    "cocoa": dict(solver="cocoa", n_partitions=2, tol=1e-3, max_epochs=20),
}


def one_thread_checks(solver):
    """Patches that keep the check on one thread; returns the undo."""
    if solver == "minibatch_sdca":
        real = MinibatchSDCASolver.setup

        def setup(self):
            real(self)
            self.cert_threads = 1

        MinibatchSDCASolver.setup = setup
        return lambda: setattr(MinibatchSDCASolver, "setup", real)
    real_parts = PartitionBlock.certificate_parts

    def parts(self, w):
        n_jobs, self.n_jobs = self.n_jobs, 1
        try:
            return real_parts(self, w)
        finally:
            self.n_jobs = n_jobs

    PartitionBlock.certificate_parts = parts
    return lambda: setattr(PartitionBlock, "certificate_parts", real_parts)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--solver", choices=sorted(FITS), default="minibatch_sdca")
    ap.add_argument("--reps", type=int, default=3)
    args = ap.parse_args(argv)
    X, y = make_regime("orthogonal_text", random_state=0)
    cert_s, timed_fn = [], PartitionBlock.certificate_parts if args.solver == "cocoa" \
        else Problem.certificate
    owner = PartitionBlock if args.solver == "cocoa" else Problem
    name = timed_fn.__name__

    def timed(self, *a, **k):
        t = time.perf_counter()
        out = getattr(timed, "inner")(self, *a, **k)
        cert_s.append(time.perf_counter() - t)
        return out

    kw = dict(loss="logistic", lam=1e-5, n_jobs=2, random_state=0, **FITS[args.solver])
    out = {"checks on n_jobs threads": [], "checks on one thread": []}
    for _ in range(args.reps):
        for mode in out:
            undo = one_thread_checks(args.solver) if mode == "checks on one thread" \
                else (lambda: None)
            timed.inner = getattr(owner, name)
            setattr(owner, name, timed)
            cert_s.clear()
            t = time.perf_counter()
            try:
                r = primaldual.solve(X, y, **kw)
            finally:
                setattr(owner, name, timed.inner)
                undo()
            el = time.perf_counter() - t
            out[mode].append((el, sum(cert_s)))
            print(f"{args.solver}, {mode}: {el:.3f} s, certificate passes {sum(cert_s):.3f} s "
                  f"in {len(cert_s)} checks, {r.n_epochs:g} epochs, gap {r.rel_gap:.1e}",
                  flush=True)
    for mode, v in out.items():
        print(f"{args.solver}, {mode}: median {np.median([a[0] for a in v]):.3f} s, "
              f"certificate passes {np.median([a[1] for a in v]):.3f} s")


if __name__ == "__main__":
    main()
