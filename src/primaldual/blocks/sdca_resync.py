"""The threaded SDCA's certificate at ``w(alpha)`` when its ``v`` drifted.

A check's certificate pass (:meth:`primaldual.problem.Problem.certificate`)
takes the threads' ``w = w(v)`` and ``alpha`` and returns the exact primal at
that ``w``, the exact dual at ``alpha`` and the fresh image ``v(alpha)``.  Where
the threads lost updates (``sync_every=0`` with plain additions, or a
coordinate drawn into two chunks), ``v`` and ``v(alpha)`` differ, in the few
columns where two threads collided.  :func:`resync_certificate` then moves the
primal point to ``w`` of ``v`` with those columns (every column off by more
than ``tol`` of the image's largest entry) taken from ``v(alpha)``, and brings
the pass's margins there through those columns only
(:func:`~primaldual.kernels.objective.add_masked_product`, on the threads): the
primal is exact at the point returned, the dual is the pass's, and the point
is ``w(alpha)`` up to ``tol`` relative, as it is when nothing drifted.
"""
from __future__ import annotations

import numpy as np

from ..kernels.objective import add_masked_product, weighted_sum
from ..problem import Certificate
from .._util.threads import run_threads

__all__ = ["RESYNC_DRIFT", "resync_at_check", "resync_certificate"]

#: relative drift of the threads' dual image from v(alpha) above which a column
#: of the certificate's primal point is taken from v(alpha) (rounding: ~1e-16
#: sqrt(steps))
RESYNC_DRIFT = 1e-11


def resync_at_check(problem, cert, v, may_end, n_threads=1):
    """The pair a threaded check returns.  ``cert`` is exact at ``(w(v), alpha)``
    (the threads' ``v``).  A check that may end the run (``may_end``: its gap
    near the tolerance, or the budget spent) returns :func:`resync_certificate`'s
    pair, ``w(alpha)`` up to ``RESYNC_DRIFT`` relative, as a converged run
    promises.  An earlier check returns ``cert`` as it is: its primal and dual
    are exact, so its gap is certified for the ``w`` it reports, and the masked
    pass over every row (about a third of a certificate pass) is saved; a run
    that ends on it unconverged returns its best primal point and its best dual
    point, which are not a ``(w(alpha), alpha)`` pair anyway
    (:func:`primaldual.solvers._base.pick_pair`)."""
    if not may_end:
        return cert
    return resync_certificate(problem, cert, v, RESYNC_DRIFT, n_threads)[0]


def resync_certificate(problem, cert, v, tol, n_threads=1):
    """``(certificate, drift)``: ``cert`` (exact at ``(w(v), alpha)``) moved to
    the primal point of ``v`` with its columns off ``cert.v`` by more than
    ``tol * max |cert.v|`` replaced (``cert`` itself when there are none), and
    ``drift``, the largest difference relative to ``max |cert.v|``."""
    fresh = cert.v
    scale = max(float(np.abs(fresh).max(initial=0.0)), 1e-300)
    diff = np.abs(fresh - v)
    drift = float(diff.max(initial=0.0)) / scale
    if drift <= tol:
        return cert, drift
    mask = (diff > tol * scale).view(np.uint8)
    cols = np.flatnonzero(mask)
    v_new = np.array(v, dtype=np.float64)
    v_new[cols] = fresh[cols]
    w = (problem.penalty.grad_conjugate(v_new) if problem.l1 > 0
         else v_new / problem.lam)
    dw = np.zeros(problem.d)
    dw[cols] = w[cols] - cert.w[cols]
    margins = np.array(cert.margins)
    r = problem.rows
    cuts = np.linspace(0, problem.n, max(int(n_threads), 1) + 1).round().astype(np.int64)

    def task(k, stop):
        a, b = int(cuts[k]), int(cuts[k + 1])
        return add_masked_product(r.data, r.indices, r.indptr[a:b + 1], r.iptr[a:b + 1],
                                  mask, dw, margins[a:b])

    _, interrupted = run_threads(task, cuts.shape[0] - 1)
    if interrupted:
        raise KeyboardInterrupt
    losses = problem.loss.value(margins, problem.y)
    primal = (weighted_sum(problem.sample_weight, losses) / problem.W
              + problem.penalty.value(w))
    return Certificate(w=w, alpha=cert.alpha, primal=float(primal), dual=cert.dual,
                       v=fresh, margins=margins), drift
