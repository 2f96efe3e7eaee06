"""``solver="auto"`` on partitions: distributed Newton-CG or CoCoA+.

The local rule (:func:`primaldual.solvers.resolve_solver`) picks ``newton``
over SDCA when the conditioning ratio ``r`` (:func:`conditioning_ratio`)
reaches a measured threshold ``r0``, and moves ``r0`` by SDCA's speed-up when
SDCA runs on threads: SDCA's epochs grow linearly in ``r``, so the ratio at
which the two take the same time is ``r0`` times the speed-up of the SDCA
side over the Newton side.

On ``K`` partitions the same rule holds with both sides' speed-ups over their
serial runs (one partition per worker, ``K`` workers)::

    Newton   a pass       t_p nnz  ->  t_p nnz / P + L + 16 d K / B
             (one reduction of a d-vector per pass: every CG step, every
             evaluation of f and grad f; Zhuang et al. 2015; the passes do
             not depend on K)
    CoCoA+   an epoch     t_s nnz  ->  F(K) * (t_s nnz / P + R (L + 16 d K / B))
             (one round of one local pass, R round trips in it; F(K) the
             growth of its epochs over serial SDCA's)

with ``P = K`` on a cluster (the partitions run at once) and ``P = 1``, ``L =
0``, ``B = inf`` in one process (they run one after another, nothing is
sent).  ``s_newton`` and ``s_cocoa`` are the serial time over the
distributed time of one pass or epoch; Newton is picked when::

    r >= r0 * s_cocoa / s_newton

``r0`` is the local threshold for the same Hessian mode (explicit on dense
data, explicit on sparse data, Hessian-vector products).  The constants
below are the measured ones of docs/distributed.md (per-entry costs of the
kernels, LocalCluster round trips, CoCoA+'s epochs at ``K = 2``);
``benchmarks/bench_dask_newton.py`` measures both methods against the rule's
choice.
"""
from __future__ import annotations

import math

#: ns per stored entry of one Newton pass (fun_grad / hess_vec) on one core
NEWTON_PASS_NS = 2.5
#: ns per stored entry of one SDCA epoch (local pass of CoCoA+) on one core
SDCA_EPOCH_NS = 7.5
#: seconds of latency of one round trip to the workers (LocalCluster: 4-20 ms)
ROUND_LATENCY = 0.005
#: bytes per second into the client (10 Gbit/s)
BANDWIDTH = 1.25e9
#: round trips in a CoCoA+ round with aggregation="line_search": the round, the
#: scalar reductions of the search (5-9 for logistic, 1 for the quadratic
#: duals) and the step
COCOA_ROUND_TRIPS = {"logistic": 9, "epsilon_insensitive": 9}
COCOA_ROUND_TRIPS_QUADRATIC = 3
#: CoCoA+'s epochs to a certified 1e-6 over serial SDCA's at K = 2 (measured:
#: 92 against 5.9 on a 100,000-row CCAT slice, line_search, LocalCluster);
#: the projection of docs/distributed.md grows it linearly in K
COCOA_EPOCH_FACTOR_K2 = 15.6


def cocoa_epoch_factor(K: int) -> float:
    """F(K): CoCoA+'s epochs over serial SDCA's on ``K`` partitions."""
    return 1.0 if K <= 1 else COCOA_EPOCH_FACTOR_K2 * K / 2.0


def speedups(problem, K: int, on_cluster: bool, loss_name: str):
    """``(s_newton, s_cocoa)``: serial over distributed time of one Newton pass
    and of one CoCoA+ epoch (module docstring)."""
    nnz, d = float(problem.nnz), float(problem.d)
    if on_cluster:
        P, send = float(K), ROUND_LATENCY + 16.0 * d * K / BANDWIDTH
    else:
        P, send = 1.0, 0.0
    t_pass = NEWTON_PASS_NS * 1e-9 * nnz
    t_epoch = SDCA_EPOCH_NS * 1e-9 * nnz
    trips = COCOA_ROUND_TRIPS.get(loss_name, COCOA_ROUND_TRIPS_QUADRATIC)
    s_newton = t_pass / (t_pass / P + send) if t_pass > 0 else 1.0
    s_cocoa = (t_epoch / (cocoa_epoch_factor(K) * (t_epoch / P + trips * send))
               if t_epoch > 0 else 1.0)
    return s_newton, s_cocoa


def distributed_choice(problem, ratio, limit, K, on_cluster):
    """``(solver, reason)`` between ``"newton"`` and ``"cocoa"`` for a loss
    the Newton solver takes; ``ratio`` the conditioning ratio, ``limit`` the
    local threshold ``r0``."""
    s_newton, s_cocoa = speedups(problem, K, on_cluster, problem.loss.name)
    threshold = limit * s_cocoa / s_newton
    where = "on a cluster" if on_cluster else "in process"
    pick = "newton" if math.isfinite(ratio) and ratio >= threshold else "cocoa"
    reason = (f"{K} partitions {where}: conditioning ratio {ratio:.3g} "
              f"{'>=' if pick == 'newton' else '<'} {threshold:.3g} = local threshold "
              f"{limit:g} x CoCoA+ speed-up {s_cocoa:.3g} / Newton speed-up "
              f"{s_newton:.3g}")
    return pick, reason
