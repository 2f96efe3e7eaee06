"""The dual start of multinomial Newton-CG
(:class:`~primaldual.solvers.multinomial.MultinomialNewton`): epochs of exact
dual coordinate descent from ``alpha = 0`` (Yu, Huang & Lin 2011), or on
partitions rounds of CoCoA+ (adding, ``sigma' = K``; Ma et al. 2015), then the
Newton state at ``coef(alpha)``.
"""
from __future__ import annotations

import math
import time

import numpy as np

from .._util.cg import flat_dot
from ..kernels.multinomial_dual import MNRows, MNWork, mn_epochs
from ..kernels.status import STATUS_OK

__all__ = ["dual_cd_start", "partition_start"]


def partition_start(solver, deadline):
    """The start of ``solver`` (a :class:`~primaldual.solvers.multinomial.MultinomialNewton`)
    with partitions: rounds of CoCoA+ (adding, ``sigma' = K``) on the
    dual, one local epoch each (:meth:`MultinomialBlock.dual_start`; each
    ~ two passes), then the Newton state at ``coef(alpha)``."""
    prob = solver.problem
    coef = solver.coef                 # coef(alpha) of the workers' dual blocks
    while solver.cd_left > 0:
        status, dcoef = solver.data.dual_start(coef, prob.lam, prob.W, 1,
                                             float(solver.n_partitions),
                                             int(solver.rng.integers(2 ** 62)))
        if status != STATUS_OK:
            raise FloatingPointError(f"{solver.name}: a non-finite dual step; scale "
                                     f"the features")
        coef = coef + dcoef
        solver.cd_left -= 1
        solver.passes += 2.0
        if deadline is not None and time.perf_counter() >= deadline:
            break
    solver._evaluate_at(coef)
    solver.g0norm = math.sqrt(flat_dot(solver.g, solver.g))

def dual_cd_start(solver, deadline):
    """The start of ``solver`` (a :class:`~primaldual.solvers.multinomial.MultinomialNewton`):
    its epochs of dual coordinate descent (each ~ two passes),
    then the Newton state at coef(alpha)."""
    if solver.n_partitions is not None:
        return partition_start(solver, deadline)
    prob = solver.problem
    C = prob.sample_weight / (prob.W * prob.lam)
    r = prob.rows
    view = MNRows(r.data, r.indices, r.indptr, r.iptr, r.sqnorm, prob.y, C)
    work = MNWork(*(np.empty(prob.K) for _ in range(6)))
    order = np.flatnonzero(C > 0.0).astype(np.int64)
    Y = solver._one_hot()
    coef = np.ascontiguousarray(prob.rmat((Y - solver.Pcd) * C[:, None]))
    while solver.cd_left > 0:
        k = min(solver.cd_left, 4)
        status, done, _ = mn_epochs(view, order, solver.Pcd, coef, work,
                                    solver.rng.random((k, order.shape[0])))
        if status != STATUS_OK:
            raise FloatingPointError(f"{solver.name}: a non-finite dual step; scale "
                                     f"the features")
        solver.cd_left -= k
        solver.passes += 2.0 * k
        if deadline is not None and time.perf_counter() >= deadline:
            break
    coef = np.ascontiguousarray(prob.rmat((Y - solver.Pcd) * C[:, None]))
    if solver.cd_left == 0:
        solver.Pcd = None
    solver._evaluate_at(coef)
    solver.g0norm = math.sqrt(flat_dot(solver.g, solver.g))
