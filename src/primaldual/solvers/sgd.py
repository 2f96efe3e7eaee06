"""SGD baseline (SDCA paper, Section 8.6; Pegasos with ``project=True``).

The problem, the updates, the certificate and the options are in
:class:`SGDSolver`'s docstring.
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from ..kernels.status import STATUS_NONFINITE
from ..kernels.sgd import SGDOptions as SGDStepArgs, SGDState, sgd_run
from ._base import Solver, SolveResult, register
from ._options import CommonOptions, choice, flag, number


@dataclass(frozen=True)
class SGDOptions(CommonOptions):
    """The options of :class:`SGDSolver` (documented in its docstring)."""

    solver_name = "sgd"
    sampling: str = choice("uniform", "uniform", "permutation",
                           doc="rows drawn with replacement, or a fresh permutation per "
                               "epoch")
    project: bool = flag(False, doc="Pegasos projection onto the ball of radius "
                                    "1/sqrt(lam)")
    t0: int = number(1, integer=True, low=0.0, doc="index of the first step")


@register
class SGDSolver(Solver):
    """SGD baseline (SDCA paper, Section 8.6; Pegasos with ``project=True``).

    Problem: the primal ``P(w) = (1/W) sum_i c_i phi_i(x_i . w) + lam/2 ||w||^2``.

    Update, with ``i`` drawn uniformly (or by a per-epoch permutation)::

        w^{(t+1)} = (1 - 1/t) w^{(t)} - (1/(lam t)) g_i phi_i'(x_i . w^{(t)}) x_i,
        g_i = n c_i / W   (1 without sample weights)

    ``project=True`` adds Pegasos' projection onto the ball of radius
    ``1/sqrt(lam)`` (Shalev-Shwartz, Singer & Srebro 2007), which contains the
    optimum for losses bounded by 1 at 0.

    Certificate: SGD is a primal method, so its dual point is
    ``alpha_i = -phi_i'(x_i . w)`` (a subgradient chosen inside the dual domain,
    docs/conventions.md §1); primal, dual and gap are exact for that pair.

    Options
    -------
    The fields of :class:`SGDOptions`, checked when it is built (a bad value is a
    ValueError naming the option); ``solver.opts`` holds them as given.

    sampling : "uniform" | "permutation", default "uniform"
    project : bool, default False
    t0 : int, default 1
        Index of the first step (``w`` is scaled by ``1 - 1/t``, so with
        ``t0 = 1`` the first step discards the starting point).
    Warm start: a SolveResult of this solver (continues its step counter) or a
    coefficient vector (d,) together with ``t0 > 1``.
    """
    name = "sgd"
    summary = "SGD of the SDCA paper's Section 8.6; Pegasos with project=True"
    options_class = SGDOptions

    def setup(self):
        self.t0 = self.opts.t0

    def init_state(self, warm_start):
        prob = self.problem
        self.u = np.zeros(prob.d)
        self.scale = np.ones(1)
        self.unorm2 = np.zeros(1)
        self.t = self.t0 - 1
        self.order = np.zeros(0, dtype=np.int64)
        self.pos = 0
        w = self.warm_start_coef()
        if w is not None:
            if (isinstance(warm_start, SolveResult) and warm_start.solver == self.name
                    and warm_start.state is not None):
                self.t = max(self.t, int(warm_start.state.meta.get("t", 0)))
            if self.t < 1:
                raise ValueError("warm_start coef with t0=1 would be erased by the first "
                                 "step (w is scaled by 1 - 1/t = 0); pass t0 > 1")
            self.u[:] = w
            self.unorm2[0] = float(w @ w)
        gw = prob.n * prob.sample_weight / prob.W
        self.grad_w = gw

    def get_state(self):
        meta = {"t": int(self.t), "pos": int(self.pos), "scale": float(self.scale[0]),
                "unorm2": float(self.unorm2[0])}
        return meta, {"u": self.u.copy(), "order": self.order.copy()}

    def set_state(self, meta, arrays):
        prob = self.problem
        self.u = np.array(arrays["u"], dtype=np.float64)
        self.order = np.array(arrays["order"], dtype=np.int64)
        self.t = int(meta["t"])
        self.pos = int(meta["pos"])
        self.scale = np.array([meta["scale"]])
        self.unorm2 = np.array([meta["unorm2"]])
        self.grad_w = prob.n * prob.sample_weight / prob.W

    def _new_pass(self):
        n = self.problem.n
        if self.opts.sampling == "uniform":
            self.order = self.rng.integers(0, n, size=n, dtype=np.int64)
        else:
            self.order = self.rng.permutation(n).astype(np.int64, copy=False)
        self.pos = 0

    def advance(self, n_epochs, deadline):
        prob = self.problem
        target = self.steps + max(1, int(round(n_epochs * prob.n)))
        rows, spec = prob.rows_view(), prob.step_spec()
        opts = SGDStepArgs(self.grad_w, bool(self.opts.project))
        state = SGDState(self.u, self.scale, self.unorm2)
        while self.steps < target:
            if self.pos >= self.order.shape[0]:
                self._new_pass()
            stop = min(self.order.shape[0], self.pos + (target - self.steps))
            status, pos, acc = sgd_run(rows, spec, opts, state, self.order, int(self.pos),
                                       int(stop), int(self.t))
            self.feature_accesses += acc
            self.steps += pos - self.pos
            self.t += pos - self.pos
            self.pos = pos
            if status == STATUS_NONFINITE:
                raise FloatingPointError(
                    f"SGD diverged (non-finite margin at sample {int(self.order[pos])}); "
                    f"lam={prob.lam!r} may be too small for plain SGD steps 1/(lam t)")
            if deadline is not None and time.perf_counter() >= deadline:
                break

    def certificate(self):
        prob = self.problem
        w = self.u * self.scale[0]
        return prob.primal_certificate(w)
