"""PSGD: parallelized SGD (Zinkevich, Weimer, Smola & Li, "Parallelized Stochastic
Gradient Descent", NIPS 2010, Algorithm 3 SimuParallelSGD), run locally.

The problem, the updates, the certificate and the options are in
:class:`PSGDSolver`'s docstring.
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from .._util import rng_from_state
from .._util.clients import check_client, ring_workers
from ..distributed.actor_engine import actor_engine
from ..kernels.sgd import SGDOptions, SGDState, sgd_run
from ..kernels.views import RowsView, StepSpec
from ..rows import as_rows
from ..validation import check_X
from ._base import Solver, register
from ._options import CommonOptions, RingOptions, choice, flag, number
from .dso.blocks import partition_streams


@dataclass(frozen=True)
class PSGDOptions(RingOptions, CommonOptions):
    """The options of :class:`PSGDSolver` (documented in its docstring)."""

    solver_name = "psgd"
    n_workers: int | None = number(None, integer=True, low=0.0, also=(None,),
                                   doc="k, the number of parts; None: 2, or the Dask "
                                       "workers with a client")
    sampling: str = choice("uniform", "uniform", "permutation",
                           doc="each part draws rows with replacement, or a fresh "
                               "permutation per local epoch")
    project: bool = flag(False, doc="Pegasos projection onto the ball of radius "
                                    "1/sqrt(lam)")


@register
class PSGDSolver(Solver):
    """PSGD: parallelized SGD (Zinkevich, Weimer, Smola & Li, "Parallelized Stochastic
    Gradient Descent", NIPS 2010, Algorithm 3 SimuParallelSGD), run locally.

    Problem: the primal ``P(w) = (1/W) sum_i c_i phi_i(x_i . w) + lam/2 ||w||^2``.

    The rows are randomly partitioned into ``k = n_workers`` parts ``I_1..I_k``
    (one random permutation from ``random_state``, split into near-equal parts).
    Each part runs plain SGD on its own local objective ``P_q(w) = (1/W_q)
    sum_{i in I_q} c_i phi_i(x_i . w) + lam/2 ||w||^2`` with the update of
    :mod:`primaldual.solvers.sgd` (SDCA paper, Section 8.6)::

        w_q <- (1 - 1/t_q) w_q - (1/(lam t_q)) g_i phi_i'(x_i . w_q) x_i,  g_i = n_q c_i / W_q

    (the very same compiled kernel, :func:`primaldual.kernels.sgd.sgd_run`),
    with ``i`` drawn from ``I_q`` by part ``q``'s own stream
    (``np.random.SeedSequence(random_state).spawn(k)``).  The parts never
    communicate; the output is the average ``w = (1/k) sum_q w_q``
    (Algorithm 3's "aggregate from all computers").  One epoch = every part made
    ``|I_q|`` steps (one pass over the data in total).

    Certificate: PSGD is a primal method; ``alpha_i = -phi_i'(x_i . w)`` (docs/conventions.md §1),
    exact primal, dual and gap for that pair.

    Options
    -------
    The fields of :class:`PSGDOptions`, checked when it is built (a bad value is a
    ValueError naming the option); ``solver.opts`` holds them as given.

    n_workers : int or None, default None (2; the number of Dask workers with a client)
        ``k``, the number of parts (1 gives plain SGD on a single stream).
    sampling : "uniform" | "permutation", default "uniform"
        Local sampling with replacement, or a fresh permutation of the part per
        local epoch (Algorithm 3 shuffles the local data).
    client : dask.distributed.Client or None
        Run each part on its own Dask worker (``PSGDPartActor``); same iterates as
        the local run.  ``n_workers`` then defaults to the number of workers
        (otherwise 2).
    round_timeout, recovery_every, recovery_dir, max_recoveries :
        The Dask engine's options (docs/distributed.md).
    project : bool, default False
        Pegasos projection onto the ball of radius ``1/sqrt(lam)``.
    """
    name = "psgd"
    summary = "parallel SGD with averaging (Zinkevich et al. 2010)"
    options_class = PSGDOptions
    supports_client = True
    _ring = None

    def _n_workers(self):
        """k: the option, else 2 in process or the client's workers."""
        return ring_workers(self.opts, 2)

    def validate_options(self):
        if self.opts.client is not None:
            check_client(self.opts.client)
        k = self._n_workers()
        if k > self.problem.n:
            raise ValueError(f"n_workers={k} exceeds the number of samples "
                             f"{self.problem.n}; every part needs at least one row")

    def setup(self):
        self.k = self._n_workers()
        self.resolved_opts = self.opts.replace(n_workers=self.k)

    # ------------------------------------------------------------ state
    def init_state(self, warm_start):
        prob = self.problem
        if warm_start is not None:
            raise ValueError("psgd does not take a warm_start (Algorithm 3 starts every "
                             "part from w = 0); use resume= to continue a run")
        self.assign = self.rng.permutation(prob.n).astype(np.int64, copy=False)
        self.streams = partition_streams(self.random_state, self.rng, self.k)
        self.U = np.zeros((self.k, prob.d))
        self.scale = np.ones((self.k, 1))
        self.unorm2 = np.zeros((self.k, 1))
        self.t = np.zeros(self.k, dtype=np.int64)
        self._setup()
        if self.opts.client is not None:
            self._ring_push()

    def _setup(self):
        prob = self.problem
        bounds = [(q * prob.n) // self.k for q in range(self.k + 1)]
        self.parts = [np.sort(self.assign[bounds[q]:bounds[q + 1]]) for q in range(self.k)]
        self.grad_w = np.empty(prob.n)
        for idx in self.parts:
            Wq = float(prob.sample_weight[idx].sum())
            self.grad_w[idx] = idx.shape[0] * prob.sample_weight[idx] / Wq

    def get_state(self):
        if self._ring is not None:
            self._ring_pull()
        meta = {"streams": [g.bit_generator.state for g in self.streams]}
        return meta, {"assign": self.assign, "U": self.U.copy(), "scale": self.scale.copy(),
                      "unorm2": self.unorm2.copy(), "t": self.t.copy()}

    def set_state(self, meta, arrays):
        self.assign = np.array(arrays["assign"], dtype=np.int64)
        self.U = np.array(arrays["U"], dtype=np.float64)
        self.scale = np.array(arrays["scale"], dtype=np.float64)
        self.unorm2 = np.array(arrays["unorm2"], dtype=np.float64)
        self.t = np.array(arrays["t"], dtype=np.int64)
        self.streams = []
        for st in meta["streams"]:
            self.streams.append(rng_from_state(st))
        if len(self.streams) != self.k:
            raise ValueError(f"the checkpoint was written with n_workers={len(self.streams)}"
                             f"; resume with the same n_workers")
        self._setup()
        if self.opts.client is not None:
            self._ring_push()

    # ---------------------------------------------------------- advance
    def local_epoch(self, q):
        """One local pass of part q: |I_q| SGD steps (what worker q runs)."""
        prob = self.problem
        pos, n, acc = psgd_local_pass(prob.rows, prob.y, self.grad_w, self.parts[q], self.streams[q],
                                      self.opts.sampling, self.U[q], self.scale[q],
                                      self.unorm2[q], prob.loss.code, prob.loss.param, prob.lam,
                                      int(self.t[q]), bool(self.opts.project))
        self._count(q, pos, n, acc)

    def _count(self, q, pos, n, acc, local=True):
        """Book part q's steps; raise if it stopped early (non-finite margin).
        On Dask (``local=False``) the part's step counter lives on its worker."""
        if local:
            self.t[q] += pos
        self.steps += pos
        self.feature_accesses += acc
        if pos < n:
            raise FloatingPointError(
                f"PSGD part {q} diverged (non-finite margin at its step {int(pos)}); "
                f"lam={self.problem.lam!r} may be too small for SGD steps 1/(lam t)")

    def advance(self, n_epochs, deadline):
        if self._ring is not None:
            self._ring.drive(self._ring.round + max(1, int(round(n_epochs))),
                             self._ring_epoch, self._ring_restore, self._ring_meta, deadline)
            return
        for _ in range(max(1, int(round(n_epochs)))):
            for q in range(self.k):
                self.local_epoch(q)
            if deadline is not None and time.perf_counter() >= deadline:
                break

    def average(self):
        """w = (1/k) sum_q w_q."""
        return (self.U * self.scale).mean(axis=0)

    def certificate(self):
        prob = self.problem
        if self._ring is not None:
            self._ring_pull()
        w = self.average()
        return prob.primal_certificate(w)

    def trace_extras(self):
        if self._ring is None:
            return {}
        return {**self._ring.info(), "backend": "dask"}

    # ------------------------------------------------------------ Dask
    # Part q lives on its worker (PSGDPartActor):
    # its rows, local model and stream.  An epoch is one local pass on every
    # worker with no communication; the client averages at each certificate.
    def _ring_meta(self):
        return {"steps": int(self.steps), "feature_accesses": int(self.feature_accesses)}

    def _ring_restore(self, meta):
        self.steps = int(meta["steps"])
        self.feature_accesses = int(meta["feature_accesses"])

    def _ring_push(self):
        prob = self.problem
        if self._ring is None:
            payloads = [("psgd", prob.X[idx], prob.y[idx], self.grad_w[idx], prob.loss.code,
                         prob.loss.param, prob.lam, bool(self.opts.project),
                         self.opts.sampling) for idx in self.parts]
            self._ring = actor_engine(PSGDPartActor, payloads, self.opts)
        states = [{"U": self.U[q].copy(), "scale": self.scale[q].copy(),
                   "unorm2": self.unorm2[q].copy(), "t": int(self.t[q])}
                  for q in range(self.k)]
        self._ring.push(states, [g.bit_generator.state for g in self.streams],
                        self._ring_meta(), 0)

    def _ring_pull(self):
        states, rngs = self._ring.fetch(self._ring_epoch, self._ring_restore,
                                        self._ring_meta)
        for q, st in enumerate(states):
            self.U[q] = st["U"]
            self.scale[q] = st["scale"]
            self.unorm2[q] = st["unorm2"]
            self.t[q] = int(st["t"])
        self.streams = [rng_from_state(g) for g in rngs]

    def _ring_epoch(self):
        ring = self._ring
        res = ring.pset.wait([a.epoch() for a in ring.pset.actors],
                             f"PSGD local epoch {ring.round}")
        for q, (pos, n, acc, _) in enumerate(res):
            self._count(q, pos, n, acc, local=False)
        ring.time_compute += max(r[3] for r in res)


def psgd_local_pass(rows, y, grad_w, idx, rng, sampling, U, scale, unorm2, kind, loss_param,
                    lam, t, project):
    """One local pass of a part: ``|I_q|`` SGD steps on the rows ``idx`` of ``rows``
    (:func:`~primaldual.kernels.sgd.sgd_run`), sampled from ``rng`` uniformly with
    replacement or as a permutation.  Shared by the serial solver (global rows,
    ``idx = I_q``) and the Dask part actor :class:`PSGDPartActor` (its own rows, ``idx = 0..|I_q|-1``):
    the draws are positions in ``idx``, so both see the same sample sequence.
    Returns ``(steps_done, |I_q|, feature_accesses)``."""
    n = idx.shape[0]
    if sampling == "uniform":
        order = idx[rng.integers(0, n, size=n)]
    else:
        order = rng.permutation(idx)
    res = sgd_run(RowsView(rows.data, rows.indices, rows.indptr, rows.iptr, rows.sqnorm,
                           y, grad_w),
                  StepSpec(kind, loss_param, lam, 0.0, 1.0), SGDOptions(grad_w, bool(project)),
                  SGDState(U, scale, unorm2), order, 0, n, int(t))
    return int(res.pos), int(n), int(res.accesses)


class PSGDPartActor:
    """Part ``q`` of PSGD on its worker: ``source = ("psgd", X_q, y_q, grad_w_q,
    loss_code, loss_param, lam, project, sampling)`` with the part's rows in
    increasing global order."""

    def __init__(self, source):
        _, X, y, gw, self.kind, self.lp, self.lam, self.project, self.sampling = source
        self.rows = as_rows(check_X(X))
        self.y = np.ascontiguousarray(y, dtype=np.float64)
        self.grad_w = np.ascontiguousarray(gw, dtype=np.float64)
        self.idx = np.arange(self.rows.n, dtype=np.int64)

    def describe(self):
        return {"n": int(self.rows.n), "nnz": int(self.rows.nnz)}

    async def ping(self):
        return True

    def set_state(self, st, rng_state, next_actor, timeout):
        self.U = np.array(st["U"], dtype=np.float64)
        self.scale = np.array(st["scale"], dtype=np.float64)
        self.unorm2 = np.array(st["unorm2"], dtype=np.float64)
        self.t = int(st["t"])
        self.rng = rng_from_state(rng_state)
        return True

    def get_state(self, r=0):
        return ({"U": self.U.copy(), "scale": self.scale.copy(),
                 "unorm2": self.unorm2.copy(), "t": self.t},
                self.rng.bit_generator.state)

    def epoch(self):
        """One local pass (|I_q| SGD steps); returns ``(pos, n, accesses, seconds)``."""
        t0 = time.perf_counter()
        pos, n, acc = psgd_local_pass(self.rows, self.y, self.grad_w, self.idx, self.rng,
                                      self.sampling, self.U, self.scale, self.unorm2,
                                      self.kind, self.lp, self.lam, self.t, self.project)
        self.t += pos
        return pos, n, acc, time.perf_counter() - t0
