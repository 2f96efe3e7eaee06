"""Full-gradient (batch) baselines of Zhang & Xiao (2015), Section 5: AFG and L-BFGS.

Both minimize the primal of docs/conventions.md §1::

    P(w) = f(w) + Psi(w),  f(w) = (1/W) sum_i c_i phi_i(x_i . w),
    Psi(w) = lam/2 ||w||^2 + l1 ||w||_1

with full gradients ``grad f(w) = (1/W) X^T (c * phi'(X w))``.  One pass over
the data is one evaluation of ``f`` and ``grad f`` (a product with ``X`` and
one with ``X^T``), which is how the paper's figures count passes for batch
methods.  Both are primal methods: the certificate uses
``alpha_i = -phi'(x_i . w)`` (docs/conventions.md §1).
"""
from __future__ import annotations

import math
import threading
from dataclasses import dataclass

import numpy as np

from ._base import Solver, register
from ._options import CommonOptions, number


class _Smooth:
    """f, grad f of the data term (counts evaluations = passes)."""

    def __init__(self, problem):
        self.prob = problem
        self.evals = 0

    def value_grad(self, w):
        prob = self.prob
        a = prob.rows.matvec(w)
        c = prob.sample_weight
        f = float(c @ prob.loss.value(a, prob.y)) / prob.W
        g = prob.rows.rmatvec(c * prob.loss.derivative(a, prob.y)) / prob.W
        self.evals += 1
        return f, g


@dataclass(frozen=True)
class AFGOptions(CommonOptions):
    """The options of :class:`AFGSolver` (see its docstring)."""

    solver_name = "afg"
    L0: float | None = number(None, low=0.0, also=(None,),
                              doc="initial Lipschitz estimate; None: trace / d")
    gamma_u: float = number(2.0, low=1.0, strict=False, doc="L is multiplied by it when a trial step fails")
    gamma_d: float = number(2.0, low=1.0, strict=False, doc="L is divided by it after an accepted step")


@register
class AFGSolver(Solver):
    """AFG: Nesterov's accelerated method with adaptive line search.

    Problem: ``min_w f(w) + Psi(w)`` (module docstring), ``f`` smooth,
    ``Psi`` the elastic net, ``mu = lam`` its strong convexity.

    Update: method (4.9) of Nesterov, "Gradient methods for minimizing
    composite functions" (Math. Program. 140, 2013), the accelerated method
    A(x0, L0, mu).  With ``psi_0(x) = ||x - x0||^2/2``, ``A_0 = 0``, at
    iteration k and trial constant L: ``a`` solves
    ``a^2/(A_k + a) = 2 (1 + mu A_k)/L``, ``y = (A_k x_k + a v_k)/(A_k + a)``,
    ``T = T_L(y) = prox_{Psi/L}(y - grad f(y)/L)``; the trial is accepted when
    ``<phi'(T), y - T> >= ||phi'(T)||^2 / L`` with
    ``phi'(T) = grad f(T) - grad f(y) + L (y - T)`` (a subgradient of
    ``f + Psi`` at T), otherwise ``L <- gamma_u L``.  Then ``x_{k+1} = T``,
    ``A_{k+1} = A_k + a``, ``L_{k+1} = L/gamma_d`` and
    ``v_{k+1} = argmin psi_{k+1} = prox_{A_{k+1} Psi}(x0 - sum_i a_i grad f(x_i))``.

    Passes: each trial evaluates ``grad f`` at ``y`` and at ``T`` (2 passes).

    Options
    -------
    The fields of :class:`AFGOptions` (checked when it is built).

    L0 : float or None
        Initial Lipschitz estimate (default: the smoothness of the loss times
        the mean of ``c_i ||x_i||^2 / W`` over features, i.e. trace/d, a lower
        bound of the true constant).
    gamma_u, gamma_d : float, default 2, 2
        Line-search factors (the paper's choice).
    """

    name = "afg"
    summary = "accelerated full gradient with adaptive line search (Nesterov 2013)"
    requires = ("smooth",)
    options_class = AFGOptions
    supports_l1 = True

    def init_state(self, warm_start):
        prob = self.problem
        x0 = self.warm_start_coef()
        if x0 is None:
            x0 = np.zeros(prob.d)
        if self.opts.L0 is not None:
            L0 = float(self.opts.L0)
        else:
            L0 = (prob.loss.smoothness * float(prob.sample_weight @ prob.rows.sqnorm)
                  / (prob.W * prob.d))
            L0 = max(L0, 1e-12)
        self.x0 = x0.copy()
        self.x = x0.copy()
        self.v = x0.copy()
        self.S = np.zeros(prob.d)      # sum_i a_i grad f(x_i)
        self.A = 0.0
        self.L = L0
        self.evals = 0

    def get_state(self):
        meta = {"A": self.A, "L": self.L, "evals": int(self.evals)}
        return meta, {"x0": self.x0.copy(), "x": self.x.copy(), "v": self.v.copy(),
                      "S": self.S.copy()}

    def set_state(self, meta, arrays):
        for k in ("x0", "x", "v", "S"):
            setattr(self, k, np.array(arrays[k], dtype=np.float64))
        self.A = float(meta["A"])
        self.L = float(meta["L"])
        self.evals = int(meta["evals"])

    @property
    def epochs(self):
        return float(self.evals)

    def advance(self, n_epochs, deadline):
        import time
        prob = self.problem
        fg = _Smooth(prob)
        mu = prob.lam
        gu, gd = float(self.opts.gamma_u), float(self.opts.gamma_d)
        target = self.evals + max(1.0, n_epochs)
        while self.evals < target - 1e-9:
            L = self.L
            while True:
                q = 2.0 * (1.0 + mu * self.A) / L      # a^2 = q (A + a)
                a = 0.5 * (q + math.sqrt(q * q + 4.0 * q * self.A))
                y = (self.A * self.x + a * self.v) / (self.A + a)
                _, gy = fg.value_grad(y)
                T = prob.penalty.prox(y - gy / L, 1.0 / L)
                _, gT = fg.value_grad(T)
                phi = gT - gy + L * (y - T)
                if float(phi @ (y - T)) >= float(phi @ phi) / L * (1 - 1e-12) \
                        or not np.isfinite(L) or L > 1e300:
                    break
                L *= gu
            if not (np.isfinite(T).all() and np.isfinite(gT).all() and np.isfinite(L)):
                raise FloatingPointError(
                    f"AFG produced a non-finite iterate after {self.evals} gradient "
                    f"evaluations (Lipschitz estimate L={L:.3g}); the data is too extreme "
                    f"for double precision: scale the rows (e.g. --normalize)")
            self.x = T
            self.A += a
            self.S += a * gT
            self.L = L / gd
            self.v = prob.penalty.prox(self.x0 - self.S, self.A)
            self.evals += fg.evals
            self.feature_accesses += 2 * fg.evals * prob.nnz
            fg.evals = 0
            if deadline is not None and time.perf_counter() >= deadline:
                break
        self.steps = int(self.evals * prob.n)

    def certificate(self):
        prob = self.problem
        return prob.primal_certificate(self.x)

    def trace_extras(self):
        return {"L": float(self.L)}


class _Stop(Exception):
    pass


@dataclass(frozen=True)
class LBFGSOptions(CommonOptions):
    """The options of :class:`LBFGSSolver` (see its docstring)."""

    solver_name = "lbfgs"
    maxcor: int = number(30, integer=True, low=0.0, doc="L-BFGS memory (scipy's maxcor)")


@register
class LBFGSSolver(Solver):
    """L-BFGS baseline: scipy.optimize L-BFGS-B with memory 30 (Nocedal & Wright).

    Problem: ``min_w P(w) = (1/W) sum_i c_i phi_i(x_i . w) + lam/2 ||w||^2``
    (smooth losses, ``l1 = 0`` only: L-BFGS needs a differentiable objective).

    Update: ``scipy.optimize.minimize(method="L-BFGS-B", jac=True,
    options={"maxcor": 30})``; the paper uses memory 30 as Nocedal & Wright
    suggest.  Passes are counted as function+gradient evaluations.  The
    solver's check loop runs scipy in a worker thread that pauses at the
    first iteration boundary (scipy callback) after the requested number of
    evaluations, so the shared trace, callbacks and checkpoints apply.

    Resume: L-BFGS memory lives inside scipy, so a resumed run replays the
    (deterministic) iterations from the stored starting point up to the stored
    evaluation count; the result equals an uninterrupted run.

    Options
    -------
    The fields of :class:`LBFGSOptions` (checked when it is built).

    maxcor : int, default 30
    """

    name = "lbfgs"
    summary = "scipy's L-BFGS-B, memory 30"
    requires = ("smooth",)
    options_class = LBFGSOptions
    supports_l1 = False
    why_no_l1 = ("L-BFGS needs a differentiable objective; use solver='afg' (composite "
                 "prox), 'spdc' or 'sdca' for the elastic net")

    def setup(self):
        self.maxcor = self.opts.maxcor

    def init_state(self, warm_start):
        prob = self.problem
        x0 = self.warm_start_coef()
        if x0 is None:
            x0 = np.zeros(prob.d)
        self.x0 = x0
        self.x = x0.copy()
        self.evals = 0
        self.finished = False
        self._thread = None

    def get_state(self):
        return ({"evals": int(self.evals), "finished": bool(self.finished)},
                {"x0": self.x0.copy(), "x": self.x.copy()})

    def set_state(self, meta, arrays):
        self.x0 = np.array(arrays["x0"], dtype=np.float64)
        self.x = np.array(arrays["x"], dtype=np.float64)
        self.evals = 0
        self.finished = False
        self._thread = None
        self._replay_to = int(meta["evals"])

    @property
    def epochs(self):
        return float(self.evals)

    # -------------------------------------------------- worker thread
    def _start(self):
        prob = self.problem
        self._go = threading.Semaphore(0)
        self._paused = threading.Semaphore(0)
        self._target = 0
        self._abort = False
        self._count = 0

        def fun(w):
            a = prob.rows.matvec(w)
            c = prob.sample_weight
            f = float(c @ prob.loss.value(a, prob.y)) / prob.W + 0.5 * prob.lam * float(w @ w)
            g = prob.rows.rmatvec(c * prob.loss.derivative(a, prob.y)) / prob.W + prob.lam * w
            self._count += 1
            return f, g

        def callback(intermediate_result):
            self._xcur = np.array(intermediate_result.x)
            if self._count >= self._target:
                self._paused.release()
                self._go.acquire()
                if self._abort:
                    raise _Stop

        def work():
            from scipy.optimize import minimize
            self._go.acquire()
            try:
                minimize(fun, self.x0, jac=True, method="L-BFGS-B", callback=callback,
                         options={"maxcor": self.maxcor, "maxiter": 10 ** 9,
                                  "maxfun": 10 ** 9, "ftol": 0.0, "gtol": 0.0})
            except _Stop:
                return
            except Exception as e:    # surfaced in the main thread
                self._error = e
            self._done = True
            self._paused.release()

        self._xcur = self.x0.copy()
        self._done = False
        self._error = None
        self._thread = threading.Thread(target=work, daemon=True)
        self._thread.start()

    def _run_until(self, target):
        self._target = target
        self._go.release()
        self._paused.acquire()
        if self._error is not None:
            raise self._error
        self.x = self._xcur.copy()
        self.evals = self._count
        self.finished = self._done

    def advance(self, n_epochs, deadline):
        if self.finished:           # scipy stopped: nothing more to do
            return
        if self._thread is None:
            self._start()
            replay = getattr(self, "_replay_to", 0)
            if replay:
                self._run_until(replay)
                self._replay_to = 0
        self._run_until(self.evals + max(1, int(round(n_epochs))))
        self.steps = int(self.evals * self.problem.n)
        self.feature_accesses = 2 * self.evals * self.problem.nnz

    @property
    def stalled(self):
        """scipy's L-BFGS-B stopped by itself (no further progress in floating
        point): the run ends with stop_reason "stalled" and the true number
        of gradient evaluations as its epochs."""
        return self.finished

    def shutdown(self):
        if self._thread is not None and self._thread.is_alive() and not self._done:
            self._abort = True
            self._go.release()
            self._thread.join()
        self._thread = None

    def run(self):
        try:
            return super().run()
        finally:
            self.shutdown()

    def certificate(self):
        prob = self.problem
        return prob.primal_certificate(self.x)
