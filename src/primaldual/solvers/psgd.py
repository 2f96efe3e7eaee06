"""PSGD: parallelized SGD (Zinkevich, Weimer, Smola & Li, "Parallelized Stochastic
Gradient Descent", NIPS 2010, Algorithm 3 SimuParallelSGD), run locally.

Problem: the primal ``P(w) = (1/W) sum_i c_i phi_i(x_i . w) + lam/2 ||w||^2``.

The rows are randomly partitioned into ``k = n_workers`` parts ``I_1..I_k``
(one random permutation from ``random_state``, split into near-equal parts).
Each part runs plain SGD on its own local objective ``P_q(w) = (1/W_q)
sum_{i in I_q} c_i phi_i(x_i . w) + lam/2 ||w||^2`` with the update of
:mod:`primaldual.solvers.sgd` (SDCA paper, Section 8.6)::

    w_q <- (1 - 1/t_q) w_q - (1/(lam t_q)) g_i phi_i'(x_i . w_q) x_i,  g_i = n_q c_i / W_q

(the very same compiled kernel, :func:`primaldual.kernels.sgd.sgd_epoch`),
with ``i`` drawn from ``I_q`` by part ``q``'s own stream
(``np.random.SeedSequence(random_state).spawn(k)``).  The parts never
communicate; the output is the average ``w = (1/k) sum_q w_q``
(Algorithm 3's "aggregate from all computers").  One epoch = every part made
``|I_q|`` steps (one pass over the data in total).

Certificate: PSGD is a primal method; ``alpha_i = -phi_i'(x_i . w)`` (GUIDE §1),
exact primal, dual and gap for that pair.

Options
-------
n_workers : int, default 2
    ``k``, the number of parts (1 gives plain SGD on a single stream).
sampling : "uniform" | "permutation", default "uniform"
    Local sampling with replacement, or a fresh permutation of the part per
    local epoch (Algorithm 3 shuffles the local data).
project : bool, default False
    Pegasos projection onto the ball of radius ``1/sqrt(lam)``.
"""
from __future__ import annotations

import time

import numpy as np

from ..kernels.sgd import sgd_epoch
from ._base import Solver, _check_choice, _positive, register
from .dso import partition_streams


@register
class PSGDSolver(Solver):
    __doc__ = __doc__
    name = "psgd"
    options = {"n_workers": 2, "sampling": "uniform", "project": False}
    dual_method = False

    def validate_options(self):
        self.k = _positive("n_workers", self.opts["n_workers"], integer=True)
        _check_choice("sampling", self.opts["sampling"], ("uniform", "permutation"))
        _check_choice("project", self.opts["project"], (True, False))
        if self.k > self.problem.n:
            raise ValueError(f"n_workers={self.k} exceeds the number of samples "
                             f"{self.problem.n}; every part needs at least one row")

    # ------------------------------------------------------------ state
    def init_state(self, warm_start):
        p = self.problem
        if warm_start is not None:
            raise ValueError("psgd does not take a warm_start (Algorithm 3 starts every "
                             "part from w = 0); use resume= to continue a run")
        self.assign = self.rng.permutation(p.n).astype(np.int64)
        self.streams = partition_streams(self.random_state, self.rng, self.k)
        self.U = np.zeros((self.k, p.d))
        self.scale = np.ones((self.k, 1))
        self.unorm2 = np.zeros((self.k, 1))
        self.t = np.zeros(self.k, dtype=np.int64)
        self._setup()

    def _setup(self):
        p = self.problem
        bounds = [(q * p.n) // self.k for q in range(self.k + 1)]
        self.parts = [np.sort(self.assign[bounds[q]:bounds[q + 1]]) for q in range(self.k)]
        self.grad_w = np.empty(p.n)
        for idx in self.parts:
            Wq = float(p.sample_weight[idx].sum())
            self.grad_w[idx] = idx.shape[0] * p.sample_weight[idx] / Wq

    def get_state(self):
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
            g = np.random.Generator(np.random.PCG64())
            g.bit_generator.state = st
            self.streams.append(g)
        if len(self.streams) != self.k:
            raise ValueError(f"the checkpoint was written with n_workers={len(self.streams)}"
                             f"; resume with the same n_workers")
        self._setup()

    # ---------------------------------------------------------- advance
    def local_epoch(self, q):
        """One local pass of part q: |I_q| SGD steps (what worker q runs)."""
        p = self.problem
        r = p.rows
        idx = self.parts[q]
        rng = self.streams[q]
        if self.opts["sampling"] == "uniform":
            order = idx[rng.integers(0, idx.shape[0], size=idx.shape[0])]
        else:
            order = rng.permutation(idx)
        status, pos, acc = sgd_epoch(
            r.data, r.indices, r.indptr, r.iptr, p.y, self.grad_w, order, 0,
            order.shape[0], self.U[q], self.scale[q], p.loss.code, p.loss.param, p.lam,
            int(self.t[q]), bool(self.opts["project"]), self.unorm2[q])
        self.t[q] += pos
        self.steps += pos
        self.feature_accesses += acc
        if pos < order.shape[0]:
            raise FloatingPointError(
                f"PSGD part {q} diverged (non-finite margin at sample {int(order[pos])}); "
                f"lam={p.lam!r} may be too small for SGD steps 1/(lam t)")

    def advance(self, n_epochs, deadline):
        for _ in range(max(1, int(round(n_epochs)))):
            for q in range(self.k):
                self.local_epoch(q)
            if deadline is not None and time.perf_counter() >= deadline:
                break

    def average(self):
        """w = (1/k) sum_q w_q."""
        return (self.U * self.scale).mean(axis=0)

    def certificate(self):
        p = self.problem
        w = self.average()
        return p.certificate(w, p.dual_from_primal(w))
