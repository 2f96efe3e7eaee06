"""``solver="auto"`` on partitions: distributed Newton-CG or CoCoA+.

The local rule (:func:`primaldual.solvers.auto.resolve_solver`) puts ``newton``
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
distributed time of one pass or epoch.  The local rule's model of serial
Newton's time over serial SDCA's is ``r0 / r`` (``r0`` the local threshold
for the same Hessian mode: explicit on dense data, explicit on sparse data,
Hessian-vector products); it is capped at :data:`NEWTON_SLOWDOWN_MAX`, the
largest measured, because SDCA's epochs do not fall below a few whatever
``r``: at ``r`` = 0.03 and 0.08 (the CCAT shape and the shared-vocabulary
text, logistic, lam 1e-5) ``r0 / r`` says 940 and 360 where serial Newton
took 2.6 and 7.4 times serial SDCA's time.  Newton is picked when its
predicted time is at most CoCoA+'s::

    min(r0 / r, NEWTON_SLOWDOWN_MAX) * s_cocoa / s_newton <= 1

(without the cap: ``r >= r0 * s_cocoa / s_newton``, the local rule's
threshold moved by the two speed-ups, as the local rule moves it by SDCA's
speed-up on threads).  The constants
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
#: serial Newton's time over serial SDCA's, at most (measured with
#: benchmarks/bench_dask_newton.py: 2.6 on the CCAT shape, 7.4 on the
#: shared-vocabulary text, logistic, lam 1e-5, certified 1e-6)
NEWTON_SLOWDOWN_MAX = 10.0


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
    slowdown = newton_slowdown(ratio, limit)
    predicted = slowdown * s_cocoa / s_newton
    where = "on a cluster" if on_cluster else "in process"
    pick = "newton" if predicted <= 1.0 else "cocoa"
    reason = (f"{K} partitions {where}: predicted Newton / CoCoA+ time {predicted:.3g} "
              f"{'<=' if pick == 'newton' else '>'} 1 = serial Newton / SDCA "
              f"{slowdown:.3g} (min(local threshold {limit:g} / conditioning ratio "
              f"{ratio:.3g}, {NEWTON_SLOWDOWN_MAX:g})) x CoCoA+ speed-up {s_cocoa:.3g} / "
              f"Newton speed-up {s_newton:.3g}")
    return pick, reason


def newton_slowdown(ratio, limit):
    """Serial Newton's time over serial SDCA's as the local rule models it,
    ``limit / ratio``, capped at :data:`NEWTON_SLOWDOWN_MAX`."""
    if math.isinf(ratio):
        return 0.0                      # the local rule picks Newton for any limit
    if not ratio > 0:
        return NEWTON_SLOWDOWN_MAX      # no rows with entries (or NaN): the cap
    return min(limit / ratio, NEWTON_SLOWDOWN_MAX)
