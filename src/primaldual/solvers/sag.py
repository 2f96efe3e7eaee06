"""SAG: stochastic average gradient (Le Roux, Schmidt & Bach, NIPS 2012).

The problem, the updates, the certificate and the options are in
:class:`SAGSolver`'s docstring.
"""
from __future__ import annotations

import math
import time

import numpy as np

from ..kernels.sag import SAGState, sag_current_w, sag_run
from ..kernels.status import STATUS_NONFINITE
from dataclasses import dataclass

from ._base import Solver, register
from ._options import CommonOptions, number


@dataclass(frozen=True)
class SAGOptions(CommonOptions):
    """The options of :class:`SAGSolver` (documented in its docstring)."""

    solver_name = "sag"
    step: str | float = number("1/L", low=0.0, also=("1/L", "theory"),
                              doc="step size: 1/L, the theory's 1/(16 L), or a number")


@register
class SAGSolver(Solver):
    """SAG: stochastic average gradient (Le Roux, Schmidt & Bach, NIPS 2012).

    Problem: the primal ``P(w) = (1/W) sum_i c_i phi_i(x_i . w) + lam/2 ||w||^2``
    (smooth losses, ``l1 = 0``).

    Update (iteration t, ``i`` uniform with replacement)::

        g_i <- phi_i'(x_i . w),   d = (1/W) sum_k c_k g_k x_k   (kept incrementally)
        w   <- (1 - eta lam) w - eta d

    with lazy (just-in-time) updates of the coordinates outside ``x_i``
    (:mod:`primaldual.kernels.sag`), so a step costs O(nnz(x_i)).  The stored
    derivatives start at 0 (the paper's initialization ``y_i = 0``).

    Step size ``eta``: ``1/L`` with ``L = max_i (n c_i/W) ||x_i||^2 * smoothness
    + lam``, the constant step of the paper's experiments (Le Roux et al. 2012,
    Section 5; Schmidt et al. 2017 recommend it in practice), or
    ``step="theory"``: ``1/(16 L)`` of Schmidt, Le Roux & Bach (2017), Theorem 1.

    Certificate: a primal method, ``alpha_i = -phi'(x_i . w)`` (docs/conventions.md §1).
    One pass = n iterations.

    Options
    -------
    The fields of :class:`SAGOptions`, checked when it is built (a bad value is a
    ValueError naming the option); ``solver.opts`` holds them as given.

    step : "1/L" | "theory" | float, default "1/L"
    """
    name = "sag"
    summary = "stochastic average gradient with just-in-time sparse updates (Le Roux et al. 2012)"
    requires = ("smooth",)
    options_class = SAGOptions

    def validate_options(self):
        s = self.opts.step
        if not isinstance(s, str) and s * self.problem.lam >= 1.0:
            raise ValueError(f"step={s!r} is too large: step * lam must be < 1")

    def setup(self):
        prob = self.problem
        L = (prob.loss.smoothness * float((prob.n * prob.sample_weight / prob.W * prob.rows.sqnorm).max())
             + prob.lam)
        s = self.opts.step
        if s == "1/L":
            self.eta = 1.0 / L
        elif s == "theory":
            self.eta = 1.0 / (16.0 * L)
        else:
            self.eta = float(s)
        if isinstance(s, str):
            # eta lam = lam / L < 1 exactly; it rounds to 1 when the data term of L is
            # below the resolution of lam (tiny or zero rows): step just below 1/lam
            while self.eta * prob.lam >= 1.0:
                self.eta = math.nextafter(self.eta, 0.0)
        self.L = L

    def init_state(self, warm_start):
        prob = self.problem
        w0 = self.warm_start_coef()
        self.w = np.zeros(prob.d) if w0 is None else w0
        self.grad = np.zeros(prob.n)
        self.d = np.zeros(prob.d)
        self.last = np.zeros(prob.d, dtype=np.int64)
        self.t = 0

    def get_state(self):
        return {"t": int(self.t)}, {"w": self.w.copy(), "grad": self.grad.copy(),
                                   "d": self.d.copy(), "last": self.last.copy()}

    def set_state(self, meta, arrays):
        for k in ("w", "grad", "d"):
            setattr(self, k, np.array(arrays[k], dtype=np.float64))
        self.last = np.array(arrays["last"], dtype=np.int64)
        self.t = int(meta["t"])

    def advance(self, n_epochs, deadline):
        prob = self.problem
        total = max(1, int(round(n_epochs * prob.n)))
        rows, spec = prob.rows_view(), prob.step_spec()
        state = SAGState(self.grad, self.w, self.d, self.last)
        done = 0
        while done < total:
            k = min(prob.n, total - done)
            order = self.rng.integers(0, prob.n, size=k, dtype=np.int64)
            status, it, acc = sag_run(rows, spec, float(self.eta), state, order, int(self.t))
            self.t += it
            self.steps += it
            self.feature_accesses += acc
            done += it
            if status == STATUS_NONFINITE:
                raise FloatingPointError(f"SAG diverged at iteration {self.t}; use a "
                                         f"smaller step (step='theory')")
            if deadline is not None and time.perf_counter() >= deadline:
                break

    def current_w(self):
        out = np.empty(self.problem.d)
        sag_current_w(self.w, self.d, self.last, self.t, self.eta, self.problem.lam, out)
        return out

    def certificate(self):
        prob = self.problem
        w = self.current_w()
        return prob.primal_certificate(w)
