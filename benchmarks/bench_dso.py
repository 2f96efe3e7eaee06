"""DSO speed: one serial epoch in ns per nonzero next to an SDCA epoch, and the
time per epoch against p fitted to Section 3.1's model |Omega| T_u / p + T_c.

Data: ``primaldual.datasets.make_synthetic("rcv1")`` (20,242 x 47,236, ~0.16%
dense, unit rows).  Serially, the p blocks of an inner iteration run one after
the other; the time p workers would need (without communication) is the
critical path ``sum_r max_q time(q, sigma_r(q))``, measured block by block.
The two points p = 1, 2 determine ``|Omega| T_u`` and ``T_c`` exactly (here
T_c is the serial per-inner-iteration overhead, not the Dask ring, which is
measured by the distributed benchmark).

``--dask``: the same data on a LocalCluster of 2 worker processes (1 thread
each), DSO with ``client=`` and p = 2: per inner iteration, the wall time of
the bulk-synchronous step (client -> both actors -> block pushed to the next
owner -> barrier), the compute (slowest partition's ``dso_block``) and the
ring push (slowest ``next.receive(block)`` call, worker to worker), next to a
bare actor round trip.

Run:  PYTHONPATH=src python benchmarks/bench_dso.py [--epochs 5] [--dask]
"""
from __future__ import annotations

import argparse
import time

import numpy as np

from primaldual.datasets import make_synthetic
from primaldual.kernels.sdca import Averaging, SDCAState, Shrinking, sdca_epoch
from primaldual.kernels.views import ProxWork
from primaldual.problem import Problem
from primaldual.solvers import SOLVERS
from primaldual.solvers.dso import dso_block, sigma


def dso_epoch_times(prob, p, epochs, **opts):
    s = SOLVERS["dso"](prob, tol=0.0, max_epochs=epochs + 1, random_state=0, n_workers=p,
                       **opts)
    s.init_state(None)
    s.advance(1, None)                          # warm-up (JIT already compiled)
    parts, blocks = s.partitions(), s.wblocks()
    serial, critical = [], []
    for _ in range(epochs):
        if s.params.svrg:
            s._svrg_snapshot()
        t_ep = time.perf_counter()
        crit = 0.0
        for r in range(p):
            worst = 0.0
            for q in range(p):
                t0 = time.perf_counter()
                dso_block(q, r, parts[q], blocks[sigma(q, r, p)], s.streams[q], s.params,
                          s.step_size())
                worst = max(worst, time.perf_counter() - t0)
            crit += worst
        serial.append(time.perf_counter() - t_ep)
        critical.append(crit)
        s.t += 1
    return float(np.median(serial)), float(np.median(critical)), s.layout.nnz


def dso_full_epoch_time(prob, epochs, **opts):
    """Median time of ``advance(1)`` (one whole epoch as fit() runs it: the SVRG
    snapshot and full gradient included, no certificate)."""
    s = SOLVERS["dso"](prob, tol=0.0, max_epochs=epochs + 2, random_state=0, **opts)
    s.init_state(None)
    s.advance(1, None)                          # warm-up
    times = []
    for _ in range(epochs):
        t0 = time.perf_counter()
        s.advance(1, None)
        times.append(time.perf_counter() - t0)
    return float(np.median(times)), s.layout.nnz


def sdca_epoch_time(prob, epochs):
    n = prob.n
    state = SDCAState(np.zeros(n), np.zeros(prob.d), np.zeros(0), np.zeros(n, dtype=np.uint8))
    e, ei = np.zeros(0), np.zeros(0, dtype=np.int64)
    rows, spec = prob.rows_view(), prob.step_spec()
    no_shrink, no_avg = Shrinking(False, np.inf, np.inf), Averaging(False, e, ei, 0)
    no_prox = ProxWork(e, e, e, ei)
    rng = np.random.default_rng(0)
    times = []
    for _ in range(epochs + 1):
        order = rng.permutation(n).astype(np.int64)
        t0 = time.perf_counter()
        sdca_epoch(rows, spec, state, order, 0, n, 0, -1, no_shrink, no_avg, no_prox)
        times.append(time.perf_counter() - t0)
    return float(np.median(times[1:]))


def ring_overhead(X, y, loss, epochs, client, p=2, **opts):
    """Per inner iteration on the Dask ring: (wall, compute, send, block bytes) in
    ms/ms/ms/bytes, from a fit after a warm-up fit (worker JIT cache loads)."""
    from primaldual import solve
    kw = dict(loss=loss, lam=1e-5, solver="dso", tol=0.0, n_workers=p, random_state=0,
              client=client, **opts)
    solve(X, y, max_epochs=1, **kw)
    t0 = time.perf_counter()
    res = solve(X, y, max_epochs=epochs, check_every=epochs, **kw)
    total = time.perf_counter() - t0
    last = res.trace[-1]
    d_block = X.shape[1] / p
    arrays = 1 + (opts.get("step", "adagrad") == "adagrad") + 2 * (
        opts.get("variance_reduction", "svrg") == "svrg")
    return (last["round_ms"], last["round_compute_ms"], last["round_send_ms"],
            8 * d_block * arrays, total)


def actor_ping_ms(client, repeats=50):
    from primaldual.solvers.dso.ring import DSOPartitionActor  # noqa: F401 (import check)

    class Echo:
        def echo(self, x):
            return x

    workers = sorted(client.scheduler_info()["workers"])
    actors = [client.submit(Echo, actor=True, workers=[w]).result() for w in workers]
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for f in [a.echo(0) for a in actors]:
            f.result()
        times.append(time.perf_counter() - t0)
    return 1e3 * float(np.median(times))


def dask_section(X, y, loss, epochs):
    from distributed import Client, LocalCluster
    cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                           dashboard_address=None)
    client = Client(cluster)
    try:
        client.wait_for_workers(2, timeout=60)
        print(f"\nDask ring, LocalCluster 2 workers x 1 thread, p = 2 "
              f"(bare actor round trip to both workers: {actor_ping_ms(client):.2f} ms)")
        for label, opts in [("adagrad", dict(variance_reduction=None, restart=None)),
                            ("adagrad+svrg", dict(restart=None)),
                            ("sqrt", dict(step="sqrt", variance_reduction=None,
                                          restart=None))]:
            wall, comp, send, nbytes, total = ring_overhead(X, y, loss, epochs, client,
                                                            **opts)
            print(f"  {label:13s} per inner iteration: wall {wall:7.1f} ms = compute "
                  f"{comp:6.1f} + communication/overhead {wall - comp:6.1f} ms (of which "
                  f"ring push {send:5.1f} ms for a {nbytes / 1e3:.0f} kB block); "
                  f"{epochs} epochs {total:.2f} s")
    finally:
        client.close()
        cluster.close()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--epochs", type=int, default=5)
    ap.add_argument("--loss", default="hinge")
    ap.add_argument("--dask", action="store_true", help="also measure the Dask ring")
    ap.add_argument("--dask-only", action="store_true", help="only the Dask ring")
    args = ap.parse_args()
    if args.dask_only:
        X, y, _ = make_synthetic("rcv1", random_state=0)
        dask_section(X, y, args.loss, args.epochs)
        return
    t0 = time.perf_counter()
    X, y, _ = make_synthetic("rcv1", random_state=0)
    print(f"data: rcv1-shaped synthetic {X.shape}, nnz={X.nnz} "
          f"({time.perf_counter() - t0:.1f}s to generate)")
    prob = Problem(X, y, loss=args.loss, lam=1e-5)
    # compile time (first call of every kernel, including the cache load)
    t0 = time.perf_counter()
    small = Problem(X[:200], y[:200], loss=args.loss, lam=1e-3)
    SOLVERS["dso"](small, tol=0.0, max_epochs=1, random_state=0).run()
    print(f"first DSO run incl. JIT compile/cache load: {time.perf_counter() - t0:.2f}s")
    nnz = X.nnz
    t_sdca = sdca_epoch_time(prob, args.epochs)
    print(f"SDCA epoch: {t_sdca * 1e3:.1f} ms = {t_sdca / nnz * 1e9:.1f} ns/nnz")
    rows = []
    # the epoch cost without the restart test (one extra pass per epoch), so the
    # rows keep their meaning; the defaults row with it comes first
    for label, opts in [("defaults: adagrad+svrg+restart test, order=chunks", dict()),
                        ("adagrad+svrg, order=chunks", dict(restart=None)),
                        ("adagrad, order=chunks", dict(variance_reduction=None)),
                        ("adagrad+svrg, order=nonzeros", dict(order="nonzeros")),
                        ("adagrad, order=nonzeros", dict(order="nonzeros",
                                                         variance_reduction=None)),
                        ("sqrt, order=chunks", dict(step="sqrt", variance_reduction=None))]:
        if label.startswith("defaults"):
            ser, omega = dso_full_epoch_time(prob, args.epochs, **opts)
        else:
            ser, omega = dso_full_epoch_time(prob, args.epochs, **{"restart": None, **opts})
        print(f"DSO epoch ({label}, p=1): {ser * 1e3:.1f} ms = {ser / omega * 1e9:.1f} "
              f"ns/nnz (whole epoch, SVRG snapshot included) = "
              f"{ser / t_sdca:.1f} x SDCA")
        rows.append((label, ser))
    meas = {}
    for p in (1, 2):
        ser, crit, omega = dso_epoch_times(prob, p, args.epochs, variance_reduction=None,
                                           restart=None)
        meas[p] = (ser, crit)
        print(f"p={p}: serial epoch {ser * 1e3:.1f} ms, critical path (p workers, no "
              f"communication) {crit * 1e3:.1f} ms")
    # |Omega| T_u / p + T_c through the two critical-path points
    c1, c2 = meas[1][1], meas[2][1]
    omega_tu = 2 * (c1 - c2)
    tc = c1 - omega_tu
    print(f"fit: |Omega| T_u = {omega_tu * 1e3:.1f} ms (T_u = {omega_tu / omega * 1e9:.1f} "
          f"ns), T_c = {tc * 1e3:.2f} ms")
    for p in (1, 2, 4, 8):
        print(f"  predicted epoch time p={p}: {(omega_tu / p + tc) * 1e3:.1f} ms")
    if args.dask:
        dask_section(X, y, args.loss, args.epochs)


if __name__ == "__main__":
    main()
