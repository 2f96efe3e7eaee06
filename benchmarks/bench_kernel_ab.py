"""A/B timing of the kernels at two commits: did narrowing their arguments cost speed?

Times one epoch (``Solver.advance(1.0)``: the kernel calls of one pass and the
driver around them, identical in both versions; sparse SIMBA: a twentieth of
an epoch, ``check_every=0.05``, with ``nu = 1e-3`` (with a larger ``nu`` it spends
its time in up to ``nu n / 2`` slack swaps per iteration on this data)) of each
kernel in the list
below, at the working tree (``--cur``, default: this checkout's ``src``) and at
a base commit (``--base``, checked out with ``git worktree add`` into a
temporary folder).  Each version runs in its own subprocess (its own Numba
cache folder); the versions alternate, ``--rounds`` times, the order flipping
every round.  A subprocess builds each case from the same saved synthetic
data, makes one warm-up epoch (Numba compile or cache load excluded), then
times ``--reps`` epochs; a round's figure is the best of those, and the table
shows the median over rounds of wall-clock / feature accesses (ns per
nonzero read; for SIMBA the kernel's own count, rows plus the column read for
the dual estimate).  Both versions make bitwise the same iterates, so the
epochs timed do the same work.

Data: ``sparse`` 200,000 x 50,000, 50 nonzeros per row (uniform columns,
normal values), ``dense`` 20,000 x 500; rows scaled to unit norm, labels
``sign(x . w + noise)``.

Run: ``python benchmarks/bench_kernel_ab.py [--base COMMIT] [--after COMMIT]
[--rounds 5]``;
the table is printed and written to ``benchmarks/results/kernel-ab.md`` (``--out``
names another file).  An A/B run answers one question about one change; its table
is not kept in the repository once the change is decided (git has the old ones).
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]

#: (case, data set, solver, loss, lam, l1, options)
CASES = [
    ("simba_sparse_run", "sparse", "simba", "hinge", 1e-4, 0.0,
     {"implementation": "sparse", "nu": 1e-3, "check_every": 0.05}),
    ("simba_dense_run", "dense", "simba", "hinge", 1e-4, 0.0,
     {"implementation": "dense", "nu": 0.1}),
    ("spdc_run (m=1)", "sparse", "spdc", "logistic", 1e-5, 0.0, {}),
    ("spdc_run (m=1)", "dense", "spdc", "logistic", 1e-5, 0.0, {}),
    ("spdc_run (m=8)", "sparse", "spdc", "smooth_hinge", 1e-5, 0.0, {"batch_size": 8}),
    ("msdca_serial", "sparse", "minibatch_sdca", "hinge", 1e-5, 0.0, {"batch_size": 64}),
    ("sgd_run", "sparse", "sgd", "hinge", 1e-5, 0.0, {}),
    ("sag_run", "sparse", "sag", "logistic", 1e-5, 0.0, {}),
    ("sdca_epoch", "sparse", "sdca", "hinge", 1e-5, 0.0, {}),
    ("sdca_epoch (elastic net: prox_dual_step)", "sparse", "sdca", "logistic", 1e-5, 1e-5, {}),
    ("dso_block_kernel + svrg_full_gradient", "sparse", "dso", "logistic", 1e-5, 0.0,
     {"restart": None}),
    ("dso_block_kernel + svrg_full_gradient (hinge)", "sparse", "dso", "hinge", 1e-5, 0.0,
     {"restart": None, "alpha_scale": 1.0}),
]

#: options a tree may not know yet (older trees run without them): the DSO cases time
#: the kernels, not the restart test that the default restart="adaptive" adds, and
#: the hinge case the plain AdaGrad steps (alpha_scale=1), so both trees make the same
#: iterates
OPTIONAL = {"restart", "alpha_scale"}


def make_data(folder):
    """Write ``sparse.npz`` and ``dense.npy`` (and labels) into ``folder``."""
    import scipy.sparse as sp
    rng = np.random.default_rng(0)
    n, d, k = 200_000, 50_000, 50
    cols = rng.integers(0, d, size=(n, k))
    rows = np.repeat(np.arange(n), k)
    X = sp.csr_matrix((rng.standard_normal(n * k), (rows, cols.ravel())), shape=(n, d))
    X.sum_duplicates()
    X.sort_indices()
    nrm = np.sqrt(np.asarray(X.multiply(X).sum(1)).ravel())
    X = sp.diags(1.0 / np.maximum(nrm, 1e-12)) @ X
    X = X.tocsr()
    w = rng.standard_normal(d)
    y = np.where(X @ w + 0.3 * rng.standard_normal(n) > 0, 1.0, -1.0)
    sp.save_npz(folder / "sparse.npz", X, compressed=False)
    np.save(folder / "sparse_y.npy", y)
    Xd = rng.standard_normal((20_000, 500))
    Xd /= np.linalg.norm(Xd, axis=1, keepdims=True)
    wd = rng.standard_normal(500)
    yd = np.where(Xd @ wd + 0.3 * rng.standard_normal(20_000) > 0, 1.0, -1.0)
    np.save(folder / "dense.npy", Xd)
    np.save(folder / "dense_y.npy", yd)


def worker(src, data_dir, reps, cases=None):
    """In a subprocess: import primaldual from ``src`` and time every case."""
    sys.path.insert(0, str(src))
    import scipy.sparse as sp
    import primaldual
    from primaldual.problem import Problem
    from primaldual.solvers import SOLVERS
    assert Path(primaldual.__file__).resolve().is_relative_to(Path(src).resolve()), \
        primaldual.__file__
    data_dir = Path(data_dir)
    sets = {"sparse": (sp.load_npz(data_dir / "sparse.npz").tocsr(),
                       np.load(data_dir / "sparse_y.npy")),
            "dense": (np.load(data_dir / "dense.npy"), np.load(data_dir / "dense_y.npy"))}
    out = {}
    for case, dset, solver, loss, lam, l1, opts in CASES:
        if cases and not any(case.startswith(c) for c in cases.split(",")):
            continue
        X, y = sets[dset]
        prob = Problem(X, y, loss=loss, lam=lam, l1=l1)
        cls = SOLVERS[solver]
        known = (set(cls.options) if isinstance(getattr(cls, "options", None), dict)
                 else {f.name for f in dataclasses.fields(cls.options_class)})
        opts = {k: v for k, v in opts.items() if k in known or k not in OPTIONAL}
        s = cls.create(prob, tol=0.0, max_epochs=1000, random_state=0, **opts)
        s.init_state(None)
        s.advance(1.0, None)                      # warm-up: compile / cache load
        best = np.inf
        for _ in range(reps):
            a0 = s.feature_accesses
            t0 = time.perf_counter()
            s.advance(1.0, None)
            dt = time.perf_counter() - t0
            best = min(best, dt * 1e9 / max(1, s.feature_accesses - a0))
        out[f"{case} | {dset}"] = best
    print(json.dumps(out))


def git(*args):
    return subprocess.run(["git", "-C", str(ROOT), *args], check=True, capture_output=True,
                          text=True).stdout.strip()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--base", default=None,
                    help="the commit to compare against (default: merge-base of HEAD and main)")
    ap.add_argument("--after", default=None,
                    help="the commit of the new version (default: this working tree's src)")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "kernel-ab.md"))
    ap.add_argument("--cases", default=None,
                    help="comma-separated prefixes of the kernels to time (default: all)")
    ap.add_argument("--data-dir", default=None,
                    help="keep the synthetic data here and reuse it (default: a temporary folder)")
    ap.add_argument("--machine", default="shared with other jobs",
                    help="how loaded the machine was, for the table's header")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--src", help=argparse.SUPPRESS)
    ap.add_argument("--data", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.worker:
        return worker(a.src, a.data, a.reps, a.cases)
    base = a.base or git("merge-base", "HEAD", "main")
    base_full = git("rev-parse", base)
    cur_desc = (git("rev-parse", a.after)[:10] if a.after
                else git("describe", "--always", "--dirty") + ", working tree")
    with tempfile.TemporaryDirectory(prefix="kernel-ab-") as tmp:
        tmp = Path(tmp)
        prev = tmp / "prev"
        git("worktree", "add", "--detach", str(prev), base_full)
        cur = ROOT / "src"
        if a.after:
            git("worktree", "add", "--detach", str(tmp / "after"), git("rev-parse", a.after))
            cur = tmp / "after" / "src"
        try:
            data = Path(a.data_dir) if a.data_dir else tmp
            if not (data / "dense_y.npy").exists():
                print("making data ...", file=sys.stderr)
                data.mkdir(parents=True, exist_ok=True)
                make_data(data)
            versions = {"before": prev / "src", "after": cur}
            res = {"before": [], "after": []}
            for r in range(a.rounds):
                order = ["before", "after"] if r % 2 == 0 else ["after", "before"]
                for v in order:
                    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp / f"numba-{v}"))
                    env.pop("PYTHONPATH", None)
                    p = subprocess.run([sys.executable, __file__, "--worker", "--src",
                                        str(versions[v]), "--data", str(data),
                                        "--reps", str(a.reps)]
                                       + (["--cases", a.cases] if a.cases else []),
                                       env=env, capture_output=True, text=True, cwd=tmp)
                    if p.returncode:
                        sys.exit(f"worker {v} failed:\n{p.stderr}")
                    res[v].append(json.loads(p.stdout.strip().splitlines()[-1]))
                    print(f"round {r + 1} {v}: done", file=sys.stderr)
        finally:
            git("worktree", "remove", "--force", str(prev))
            if a.after:
                git("worktree", "remove", "--force", str(tmp / "after"))
    keys = list(res["before"][0])
    lines = ["# Kernel A/B: ns per feature access, one epoch, before vs after", "",
             f"before: `{base_full[:10]}`; after: `{cur_desc}`. "
             f"Median over {a.rounds} alternating rounds (one subprocess per version "
             f"and round) of the best of {a.reps} epochs after a warm-up epoch; "
             f"`python benchmarks/bench_kernel_ab.py`. "
             f"Machine: {os.cpu_count()} cores, {a.machine}.", "",
             "| kernel | data | before (ns/access) | after (ns/access) | after/before | "
             "rounds before (min-max) | rounds after (min-max) |",
             "|---|---|---:|---:|---:|---|---|"]
    for k in keys:
        b = [r[k] for r in res["before"]]
        c = [r[k] for r in res["after"]]
        mb, mc = statistics.median(b), statistics.median(c)
        case, dset = k.split(" | ")
        lines.append(f"| {case} | {dset} | {mb:.2f} | {mc:.2f} | {mc / mb:.3f} | "
                     f"{min(b):.2f}-{max(b):.2f} | {min(c):.2f}-{max(c):.2f} |")
    text = "\n".join(lines) + "\n"
    print(text)
    Path(a.out).write_text(text)


if __name__ == "__main__":
    main()
