"""DSO: distributed stochastic saddle-point optimization over the nonzeros
(Matsushima, Yun, Zhang & Vishwanathan, "Distributed Stochastic Optimization of
the Regularized Risk", 2014), run serially with the exact block schedule of
the distributed algorithm.

Problem (docs/conventions.md §1, weights ``c_i``, ``W = sum_i c_i``; ``lam = 0`` allowed when
``l1 > 0``)::

    primal  P(w)     = (1/W) sum_i c_i phi_i(x_i . w) + lam/2 ||w||^2 + l1 ||w||_1
    dual    D(alpha) = (1/W) sum_i c_i (-phi_i*(-alpha_i)) - g*(v),
            v = (1/W) sum_i c_i alpha_i x_i

Saddle-point form (paper eq. 6), over ``Omega = {(i, j): x_ij != 0}`` with
``|Omega_i|`` nonzeros in row ``i`` and ``|Omega-bar_j|`` in column ``j``::

    min_{w in B} max_{alpha in A} f(w, alpha) = sum_{(i,j) in Omega} f_ij(w_j, alpha_i)
    f_ij = r_j(w_j)/|Omega-bar_j| + (c_i/W) H_i(alpha_i)/|Omega_i| - (c_i/W) alpha_i w_j x_ij
    r_j(u) = lam/2 u^2 + l1 |u|,    H_i(a) = -phi*(-a; y_i)

``max_alpha f(w, .) = P(w)`` and ``min_w f(., alpha) = D(alpha)``.

Update (paper eq. 8, Algorithm 1 line 8), for each nonzero ``(i, j)`` of the
active block::

    w_j'    <- Proj_[-R,R]( w_j - eta_w (r_j'(w_j)/|Omega-bar_j| - (c_i/W) alpha_i x_ij) )
    alpha_i <- Proj_A_i ( alpha_i + eta_a (c_i/W)(H_i'(alpha_i)/|Omega_i| - w~_j x_ij) )

with ``w~_j = w_j'`` (``update="sequential"``, the default: the dual step sees the
new primal coordinate, as PDHG's dual step sees the new primal iterate) or ``w~_j =
w_j`` (``update="simultaneous"``: both partial gradients at the current pair, (8)
as printed).

Schedule (Section 3, Algorithm 1): rows are split into ``p = n_workers``
contiguous parts ``I_1..I_p`` (equal counts) and columns into ``p``
contiguous parts ``J_1..J_p`` (equal nonzero counts), inducing blocks
``Omega^(q,r)``.  Epoch ``t`` has ``p`` inner iterations; in inner iteration
``r`` partition ``q`` processes block ``(q, sigma_r(q))``, ``sigma_r(q) =
(q + r) mod p`` (0-based form of the paper's ``((q + r - 2) mod p) + 1``), in an
order drawn uniformly at random by partition ``q``'s own stream
(``np.random.SeedSequence(random_state).spawn(p)``).  Blocks of one inner
iteration share no row and no column, so running them one after the other is
exactly what ``p`` parallel workers compute (Lemma 2); the Dask version calls
the same :func:`dso_block` per worker.

Projections (Appendix A): ``alpha_i y_i`` in ``[0, 1]`` for hinge and in
``[1e-14, 1 - 1e-14]`` for logistic (the dual domain for the other losses);
``w`` in the box ``|w_j| <= R`` with ``R = sqrt(P(0)/lam)`` (= ``1/sqrt(lam)`` for
hinge, ``sqrt(log 2/lam)`` for logistic) and, when ``l1 > 0``, ``R <=
P(0)/l1``.  Both bounds hold for every minimizer: at a saddle point
``lam ||w*||^2 + l1 ||w*||_1 = (1/W) sum_i c_i H_i(alpha*_i) - L(w*) <= P(0)``
(with ``H_i <= phi_i(0)`` and ``L >= 0``), so the box never cuts off the
optimum; with ``lam = 0`` the bound ``P(0)/l1`` is the one that makes the box
finite.

Certificate: ``coef`` is the w iterate (last or averaged, option ``output``);
``dual_coef`` is whichever of two dual-feasible points has the larger exact
``D``: DSO's own alpha (last or averaged) or ``-phi'(X coef)`` (docs/conventions.md §1).
With ``lam = 0`` the dual needs ``||v||_inf <= l1``; each candidate is then
scaled by ``min(1, l1/||v||_inf)``, which keeps it feasible (every dual domain
here is convex and contains 0).  ``primal``, ``dual`` and ``gap`` come from
:meth:`Problem.certificate`.  The trace also reports ``saddle_gap``, Theorem
1's ``eps(w~, alpha~) = max_{alpha in A} f(w~, alpha) - min_{w in B} f(w,
alpha~)`` for the averaged iterates, in closed form::

    eps = P(w~) - (1/W) sum_i c_i H_i(alpha~_i) - sum_j m_j(v_j(alpha~)),
    m_j(v) = min_{|u| <= R} lam/2 u^2 + l1 |u| - v u
           = value at u = clip(soft(v, l1)/lam, -R, R)      (lam > 0)
           = -R max(|v| - l1, 0)                            (lam = 0)

Since ``w* in B``, ``eps >= P(w~) - P*``.

Options
-------
The fields of :class:`DSOOptions`, checked when it is built (a bad value is a
ValueError naming the option); ``solver.opts`` holds them as given.

n_workers : int or None, default None (1; the number of Dask workers with a client)
    ``p``: the number of row partitions and column blocks; fixes the block
    schedule (the Dask version with ``p`` workers gives the same iterates).
step : "adagrad" | "sqrt" | "constant", default "adagrad"
    "adagrad": diagonal AdaGrad per coordinate of ``w`` and ``alpha``,
    ``eta = eta0 / sqrt(sum of squared past (sub)gradients)`` (Appendix A).
    "sqrt": Algorithm 1's ``eta_t = eta0/sqrt(t)``, ``t`` the epoch.
    "constant": ``eta = eta0`` (the usual choice with SVRG).
eta0 : float or None
    None gives ``0.5`` for AdaGrad (a first step of at most 0.5 on ``alpha_i
    y_i``, whose domain has width 1), with each ``w_j``'s steps scaled by ``1 /
    (s_j max_i ||x_i / s||)``, ``s_j = max_i |x_ij|`` (:func:`adagrad_col_factor`:
    ``w_j``'s scale is the inverse of column ``j``'s), and ``min(1/lam, W / (2
    sqrt(max_j |Omega-bar_j|) max|x_ij|))`` for "sqrt" and "constant"
    (:func:`default_eta0`).  A given ``eta0`` is used as it is on both sides.
output : "last" | "average", default "last"
    The iterate returned: the last one, or Theorem 1's averages ``(1/T)
    sum_{s<=T} (w^s, alpha^s)`` of the end-of-epoch iterates (whose saddle gap
    is in the trace either way).
init : "zero" | "dcd", default "zero"
    "zero": ``w = 0``, ``alpha_i = -phi'(0)`` (projected).  "dcd" (Appendix A):
    ``init_passes`` passes of dual coordinate ascent (SDCA/DCD) on each row
    partition's local problem, then ``w`` is the ``W_q/W``-weighted average of
    the local ``w``'s (which equals ``w(alpha)``); L2 only (``l1 = 0``).
init_passes : int, default 20
    The paper's "twenty iterations" of local DCD; counted in ``n_epochs``.
variance_reduction : "svrg" | None, default "svrg"
    SVRG (Johnson & Zhang 2013, used by the paper per Appendix A): snapshot
    and full gradient of ``f`` at the start of every epoch (one extra pass),
    estimator in :mod:`primaldual.solvers.dso.kernels`.  None is Algorithm 1 verbatim.
l1_update : "prox" | "subgradient", default "prox"
    How ``l1 |w_j| / |Omega-bar_j|`` enters the w step: "subgradient" is update
    (8) with ``sign(w_j)`` (the paper's remark after (8)); "prox" takes the
    gradient step on the smooth part and then the proximal map of
    ``eta l1 |.| / |Omega-bar_j|`` (soft-thresholding, FOBOS / prox-SVRG),
    which converges much faster and gives exact zeros.

order : "chunks" | "nonzeros", default "chunks"
    The processing order inside a block, drawn from the partition's stream.
    "nonzeros": a fresh uniform random permutation of the block's nonzeros
    every epoch (the paper's "random order"); reading the nonzeros through it
    is a random gather over the whole block.  "chunks": at the start of the
    fit each block's nonzeros are stored once in a uniformly random order
    (seed ``layout_seed``, drawn from ``random_state`` and kept in
    checkpoints); every epoch then visits the block's chunks of 1,024 stored
    nonzeros in a fresh random order, each chunk sequentially.  Every nonzero
    is updated once per epoch either way; "chunks" reads memory sequentially
    (benchmarks/bench_dso.py; docs/reproducing-dso.md).

restart : "adaptive" | None, default "adaptive"
    "adaptive": at the end of every epoch compare the certified gap ``P(w) -
    D(alpha)`` of the current iterate with that of the average of the
    end-of-epoch iterates since the last restart; restart ``(w, alpha)`` from the
    better one when PDLP's conditions hold (gap below 0.2 of the gap restarted
    from, or below 0.8 of it and rising again, or a window of 36% of all epochs;
    Applegate et al., "Practical large-scale linear programming using
    primal-dual hybrid gradient", 2021).  AdaGrad's sums are kept.  Costs one
    pass over the data per epoch: the iterate's certificate (which also gives
    the next SVRG snapshot its ``X w`` and ``v(alpha)``, and the gap check its
    first candidate); the average's gap comes from the window's sums of ``X w``
    and ``v(alpha)`` (both linear).  On the Dask ring the state is gathered on
    the client at every epoch end and scattered again after a restart.  None: no
    restarts (the paper).
alpha_scale : float or None, default None
    Factor on AdaGrad's ``alpha`` steps.  None gives 8 for the hinge loss with
    the default ``eta0`` (:func:`adagrad_a_scale`: hinge has no curvature in
    ``alpha``) and 1 otherwise.  ``restart=None, alpha_scale=1,
    update="simultaneous", primal_weight=1`` is the paper's AdaGrad + SVRG
    (docs/reproducing-dso.md section 6c).
primal_weight : float, "lam_n", "adaptive" or None, default None
    ``omega``: AdaGrad's ``w`` steps are divided by it and its ``alpha`` steps
    multiplied by it (PDHG's primal weight, ``tau = eta/omega``, ``sigma = eta
    omega``; other values than 1 need ``step="adagrad"``).  None: "adaptive" with
    AdaGrad steps and restarts (the defaults), 1 otherwise.  "lam_n": ``min(1,
    sqrt(lam n / gamma))`` (``gamma = 1 / smoothness`` of the loss, 1 for the
    hinge loss and ``lam = 0``; :func:`spdc_primal_weight`, from SPDC's step ratio
    ``sigma / tau = n lam / gamma``, Zhang & Xiao 2015).  "adaptive" (needs
    ``restart="adaptive"``): PDLP's update at every restart (Applegate et al.,
    "Practical large-scale linear programming using primal-dual hybrid
    gradient", NeurIPS 2021, section 3.3 / Algorithm 3), ``log omega <- theta
    log(dy/dx) + (1 - theta) log omega`` with ``theta = 0.5``, ``dx = ||w -
    w_last||_2`` and ``dy = (sum_i c_i/W (alpha_i - alpha_last,i)^2)^(1/2)`` the
    distances moved since the previous restart; the first window's ``dy/dx`` is
    the unit (``omega = 1`` is the steps of ``primal_weight=1``), since AdaGrad's
    per-coordinate steps have no scalar primal weight of their own.  ``omega``
    moves only at restarts whose certified gap ``P(w) - D(alpha)`` is at most
    ``PW_GATE = 1000`` times ``P(w)``: where the dual iterate is that far from the
    saddle point (unscaled covtype: gaps of 1e5 to 1e7 times ``P``) the distances
    it moved say nothing about the balance of the two sides.  Measured in
    docs/reproducing-dso.md section 6d.
fallback : "best" | None, default "best"
    A safeguard at the restart test (with ``step="adagrad"`` and
    ``restart="adaptive"``; off otherwise).  Every epoch the test has exact
    values ``P`` and ``D`` of the iterate and of the window's average; the solver
    keeps the largest ``D`` seen, ``D_best``, and the point with the smallest
    ``P``, ``(w_best, alpha_best)``.  When the iterate's certified bound on its
    sub-optimality, ``P(w) - D_best``, exceeds ``FALLBACK_RATIO = 4`` times the
    best point's ``P_best - D_best``, the iterate restarts from the best point
    and AdaGrad's sums are multiplied by ``FALLBACK_SHRINK = 4`` (every step
    halved): the steps that took the iterate away from it were too long.  It
    acts only once ``D_best >= P_best / 2`` (``FALLBACK_GATE``), i.e. when the best
    point is certified within a factor 2 of the optimum: before that the bound
    is dominated by the dual's distance, not the iterate's, and early epochs
    swing by design.  Where the iterate's certified gap stays above ``PW_GATE =
    1000`` times ``P(w)`` (no dual bound to read: unscaled covtype, whose gaps
    stay 1e2 to 1e7 times ``P``), the primal alone decides: the iterate restarts
    from the best point, steps kept, when ``P(w)`` exceeds ``PRIMAL_FALLBACK_RATIO
    = 2`` times ``P_best``.  Costs no pass over the data (the restart test's
    values), ``d + n`` floats of memory, and is in the checkpoint.
update : "sequential" | "simultaneous", default "sequential"
    Where the ``alpha_i`` step takes its coupling term ``w_j x_ij``: at the ``w_j``
    just updated ("sequential", Gauss-Seidel order) or at the current pair
    ("simultaneous", update (8) as printed).  Simultaneous gradient steps on the
    bilinear coupling rotate outward when the saddle function has little
    curvature (hinge's linear ``H``, small ``lam``); the sequential order does not
    (docs/reproducing-dso.md section 6d).

client : dask.distributed.Client or None
    Run the p partitions on Dask: rows and alpha stay on their worker, the w
    blocks travel around the ring (:mod:`.ring`); same iterates
    as the serial run.  ``n_workers`` then defaults to the number of workers.
round_timeout, recovery_every, recovery_dir, max_recoveries :
    The Dask engine's options (docs/distributed.md).

Defaults follow the paper's experiments (Appendix A: AdaGrad and SVRG) plus the
restarts, the sequential update, the data-derived step lengths, the adaptive
primal weight and the fallback above; set ``step="sqrt", variance_reduction=None,
restart=None, update="simultaneous"`` for Algorithm 1 exactly as printed, and
``restart=None, alpha_scale=1, update="simultaneous", primal_weight=1`` for the
paper's AdaGrad + SVRG.  An unconverged run returns the ``w`` with the smallest
primal value among its checks and the ``alpha`` with the largest dual value
(:class:`~primaldual.solvers.SolveResult`).

Warm start: a SolveResult (its ``coef`` and ``dual_coef``, projected) or a
coefficient vector.
"""
from __future__ import annotations

import dataclasses
import math
import time
from dataclasses import dataclass

import numpy as np

from ..._util import rng_from_state
from ..._util.clients import check_client
from .blocks import (DSOParams, RowPartition, WBlock, build_layout, dso_block,
                           partition_streams, shuffle_layout, sigma)
from ...kernels.objective import weighted_sum
from .kernels import STEP_ADAGRAD, STEP_SCALAR, ColSide, RowSide, svrg_full_gradient
from ...kernels.status import STATUS_NONFINITE
from ...kernels.sdca import Averaging, SDCAState, Shrinking, sdca_epoch
from ...kernels.views import ProxWork
from .._base import Solver, SolveResult, register
from .._options import CommonOptions, RingOptions, choice, number
from ..._util.clients import ring_workers
from .ring import DSORingDriver
from .saddle import (adagrad_a_scale, adagrad_col_factor, box_radius, default_eta0,
                     dual_bounds, saddle_gap, spdc_primal_weight)

__all__ = ["DSOSolver", "DSOOptions"]


@dataclass(frozen=True)
class DSOOptions(RingOptions, CommonOptions):
    """The options of :class:`DSOSolver` (see the module docstring)."""

    solver_name = "dso"
    n_workers: int | None = number(None, integer=True, low=0.0, also=(None,),
                                   doc="p, the row parts and column blocks; None: 1, or the Dask "
                                       "workers with a client")
    step: str = choice("adagrad", "adagrad", "sqrt", "constant",
                       doc="step sizes: per-coordinate AdaGrad, eta0/sqrt(epoch), or "
                           "eta0")
    eta0: float | None = number(None, low=0.0, also=(None,),
                               doc="base step size; None: chosen from the step rule and "
                                   "the data")
    output: str = choice("last", "average", "last",
                         doc="the iterate returned: the last, or the average of the "
                             "epochs' ends")
    init: str = choice("zero", "zero", "dcd",
                       doc="start at w = 0, or from init_passes of local dual "
                           "coordinate ascent (l1 = 0)")
    init_passes: int = number(20, integer=True, low=0.0,
                              doc="passes of local dual coordinate ascent for init=dcd")
    variance_reduction: str | None = choice("svrg", None, "svrg",
                                            doc="SVRG gradient estimates (one extra pass "
                                                "per epoch), or None")
    l1_update: str = choice("prox", "prox", "subgradient",
                            doc="l1 in the w step: soft-thresholding (exact zeros) or a "
                                "subgradient")
    order: str = choice("chunks", "chunks", "nonzeros",
                        doc="order in a block: shuffled chunks of stored nonzeros, or a "
                            "fresh permutation of them")
    restart: str | None = choice("adaptive", "adaptive", None,
                                 doc="PDLP-style restarts from the better of iterate and "
                                     "average, or None")
    update: str = choice("sequential", "sequential", "simultaneous",
                         doc="the alpha step at the new w_j (Gauss-Seidel), or both at "
                             "the current pair (update (8) as printed)")
    alpha_scale: float | None = number(None, low=0.0, also=(None,),
                                       doc="AdaGrad's alpha-step factor; None: 8 for "
                                           "hinge, 1 otherwise")
    fallback: str | None = choice("best", "best", None,
                                  doc="at the restart test, go back to the best point "
                                      "with halved steps when the iterate's bound quadruples")
    primal_weight: str | float | None = number(
        None, low=0.0, also=(None, "lam_n", "adaptive"),
        doc="omega (w steps / omega, alpha steps * omega); 'lam_n': min(1, sqrt(lam n / "
            "gamma)); 'adaptive': PDLP's")


def _default_primal_weight(opts):
    """``primal_weight=None``: "adaptive" where it applies (AdaGrad steps with
    restarts, the defaults), else 1."""
    return "adaptive" if opts.step == "adagrad" and opts.restart is not None else 1.0


def _json_float(x):
    """A float for the checkpoint's JSON meta: None for +-inf (JSON has no inf)."""
    return float(x) if math.isfinite(x) else None


def _float_or(x, default):
    return default if x is None else float(x)


# ------------------------------------------------------------------ solver
@register
class DSOSolver(DSORingDriver, Solver):
    __doc__ = __doc__
    name = "dso"
    summary = "saddle point over the nonzeros, p x p block schedule (Matsushima et al. 2014)"
    options_class = DSOOptions
    supports_l1 = True
    supports_client = True
    supports_pure_l1 = True
    mixes_best_pair = True

    def _n_workers(self):
        """p: the option, else 1 in process or the client's workers."""
        return ring_workers(self.opts, 1)

    def validate_options(self):
        o = self.opts
        prob = self.problem
        if o.client is not None:
            check_client(o.client)
        k = self._n_workers()
        if k > min(prob.n, prob.d):
            raise ValueError(f"n_workers={k} exceeds min(n_samples, n_features) = "
                             f"{min(prob.n, prob.d)}; DSO needs p <= min(n, d) (every row part "
                             f"and column block non-empty)")
        if o.init == "dcd" and (prob.l1 > 0 or prob.lam == 0):
            raise ValueError("init='dcd' runs local SDCA/DCD, which needs the plain L2 "
                             "penalty (l1=0, lam>0); use init='zero' with l1 > 0")
        if o.init == "dcd" and self.warm_start is not None:
            raise ValueError("init='dcd' and warm_start both set the starting point; "
                             "choose one")
        if o.primal_weight == "adaptive" and o.restart is None:
            raise ValueError("primal_weight='adaptive' updates omega at restarts; it "
                             "needs restart='adaptive'")
        if o.primal_weight not in (None, 1.0) and o.step != "adagrad":
            raise ValueError("primal_weight scales AdaGrad's w and alpha steps; it needs "
                             "step='adagrad'")
        if o.alpha_scale is not None and o.step != "adagrad":
            raise ValueError("alpha_scale multiplies AdaGrad's alpha steps; it needs "
                             "step='adagrad'")

    def setup(self):
        o = self.opts
        prob = self.problem
        self.p = self._n_workers()
        self.resolved_opts = o.replace(n_workers=self.p)
        self.init_passes = o.init_passes
        self.layout = build_layout(prob.rows, self.p)
        if self.layout.nnz == 0:        # the layout keeps the nonzero values only
            raise ValueError("X has no nonzero entries; DSO updates run over the "
                             "nonzeros, so there is nothing to fit")
        self.R = box_radius(prob)
        self.eta0 = (default_eta0(o.step, prob, self.layout) if o.eta0 is None
                     else float(o.eta0))
        data_steps = o.eta0 is None and o.step == "adagrad"
        # the default AdaGrad lengths follow the data: w_j's from column j's scale
        # (adagrad_col_factor), alpha's x 8 for the hinge loss (adagrad_a_scale)
        col_factor = adagrad_col_factor(prob) if data_steps else None
        if o.alpha_scale is not None:
            a_scale = float(o.alpha_scale)
        else:
            a_scale = adagrad_a_scale(prob) if data_steps else 1.0
        self.restart = o.restart
        # the fallback halves AdaGrad's steps: it needs them, and the restart test
        self.fallback = (o.fallback == "best" and o.restart is not None
                         and o.step == "adagrad")
        weight = _default_primal_weight(o) if o.primal_weight is None else o.primal_weight
        self.resolved_opts = self.resolved_opts.replace(primal_weight=weight)
        self.adaptive_weight = weight == "adaptive"
        self.w_scale0, self.a_scale0 = 1.0, a_scale
        if weight == "lam_n":
            omega = spdc_primal_weight(prob)
        else:
            omega = 1.0 if self.adaptive_weight else float(weight)
        self.omega = omega
        w_scale, a_scale = 1.0 / omega, a_scale * omega
        self.a_lo, self.a_hi = dual_bounds(prob.loss, prob.y)
        self.params = DSOParams(
            col_factor=col_factor, extrap=1.0 if o.update == "sequential" else 0.0,
            kind=prob.loss.code, loss_param=prob.loss.param, lam=prob.lam, l1=prob.l1,
            l1_prox=o.l1_update == "prox", R=self.R,
            step_mode=STEP_ADAGRAD if o.step == "adagrad" else STEP_SCALAR,
            eta0=self.eta0, svrg=o.variance_reduction == "svrg",
            chunk_order=o.order == "chunks", w_scale=w_scale, a_scale=a_scale)
        self.cwW = prob.sample_weight / prob.W
        self.perm_buf = np.empty(self.layout.nnz, dtype=self.layout.rows.dtype)
        self._saddle = None
        self._at_iterate = None     # (updates, certificate, X w, v) of the iterate
        self._dual_source = ""
        self._shuffled_with = None

    # ----------------------------------------------------------- state
    @property
    def epochs(self) -> float:
        return self.updates / self.layout.nnz

    def init_state(self, warm_start):
        prob = self.problem
        self.updates = 0
        self.t = 1                  # current DSO epoch (eta_t uses it)
        self.r = 0                  # next inner iteration in the epoch
        self.n_avg = 0
        self.snap_epoch = 0
        self._at_iterate = None
        self.streams = partition_streams(self.random_state, self.rng, self.p)
        self.layout_seed = int(self.rng.integers(2 ** 63 - 1))
        self._shuffle_layout()
        self.w = np.zeros(prob.d)
        self.alpha = np.clip(-prob.loss.derivative(np.zeros(prob.n), prob.y), self.a_lo, self.a_hi)
        if warm_start is not None:
            self._apply_warm_start(warm_start)
        self._allocate()
        if self.opts.init == "dcd":
            self._dcd_init()
        if self.opts.client is not None:
            self._ring_push()

    def _shuffle_layout(self):
        """order="chunks": store each block's nonzeros in a random order, once."""
        if self.params.chunk_order and self._shuffled_with != self.layout_seed:
            if self._shuffled_with is not None:
                self.layout = build_layout(self.problem.rows, self.p)
            shuffle_layout(self.layout, self.layout_seed)
            self._shuffled_with = self.layout_seed

    def _apply_warm_start(self, ws):
        prob = self.problem
        if isinstance(ws, SolveResult):
            w, alpha = ws.coef, ws.dual_coef
        else:
            w, alpha = ws, None
        w = np.array(w, dtype=np.float64).ravel()
        if w.shape != (prob.d,) or not np.isfinite(w).all():
            raise ValueError(f"warm_start coef must be finite with shape ({prob.d},), got "
                             f"shape {w.shape}")
        self.w = np.clip(w, -self.R, self.R)
        if alpha is not None:
            alpha = np.array(alpha, dtype=np.float64).ravel()
            if alpha.shape != (prob.n,) or not np.isfinite(alpha).all():
                raise ValueError(f"warm_start dual_coef must be finite with shape ({prob.n},)")
            self.alpha = np.clip(alpha, self.a_lo, self.a_hi)

    def _allocate(self):
        prob = self.problem
        ada = self.params.step_mode == STEP_ADAGRAD
        svrg = self.params.svrg
        self.Gw = np.zeros(prob.d if ada else 0)
        self.Ga = np.zeros(prob.n if ada else 0)
        self.w_sum = np.zeros(prob.d)
        self.a_sum = np.zeros(prob.n)
        self.w_snap = np.zeros(prob.d if svrg else 0)
        self.a_snap = np.zeros(prob.n if svrg else 0)
        self.Fw = np.zeros(prob.d if svrg else 0)
        self.Fa = np.zeros(prob.n if svrg else 0)
        # restarts: sums of the end-of-epoch iterates since the last restart
        self.rs_w = np.zeros(prob.d if self.restart else 0)
        self.rs_a = np.zeros(prob.n if self.restart else 0)
        self.rs_m = np.zeros(prob.n if self.restart else 0)     # and of their X w
        self.rs_v = np.zeros(prob.d if self.restart else 0)     # and of their v(alpha)
        self.rs_full = True         # rs_m and rs_v hold every iterate of the window
        self.rs_n = 0
        self.rs_gap = None          # gap of the point restarted from (None: not yet)
        self.rs_prev = None         # the last candidate's gap since then
        self.n_restarts = 0
        # primal_weight="adaptive": the point of the last restart and the weight
        self.pw_w = np.zeros(prob.d if self.adaptive_weight else 0)
        self.pw_a = np.zeros(prob.n if self.adaptive_weight else 0)
        self.pw_log_ref = None      # log(dy/dx) of the first window (omega's unit)
        self.pw_log = 0.0           # log omega
        # fallback="best": the point with the smallest primal and the best dual seen
        self.fb_w = np.zeros(prob.d if self.fallback else 0)
        self.fb_a = np.zeros(prob.n if self.fallback else 0)
        self.fb_primal, self.fb_dual = math.inf, -math.inf
        self.n_fallbacks = 0

    _STATE_ARRAYS = ("w", "alpha", "Gw", "Ga", "w_sum", "a_sum", "w_snap", "a_snap", "Fw",
                     "Fa", "rs_w", "rs_a", "rs_m", "rs_v", "pw_w", "pw_a", "fb_w", "fb_a")

    def get_state(self):
        if self._ring is not None:
            self._ring_pull()
        meta = {"updates": int(self.updates), "t": int(self.t), "r": int(self.r),
                "n_avg": int(self.n_avg), "snap_epoch": int(self.snap_epoch),
                "streams": [g.bit_generator.state for g in self.streams],
                "layout_seed": int(self.layout_seed), "rs_n": int(self.rs_n),
                "rs_gap": self.rs_gap, "rs_prev": self.rs_prev, "rs_full": bool(self.rs_full),
                "n_restarts": int(self.n_restarts), "pw_log_ref": self.pw_log_ref,
                "pw_log": float(self.pw_log), "fb_primal": _json_float(self.fb_primal),
                "fb_dual": _json_float(self.fb_dual), "n_fallbacks": int(self.n_fallbacks)}
        arrays = {k: np.array(getattr(self, k)) for k in self._STATE_ARRAYS}
        cached = self._cached_iterate()
        if cached is not None and cached[2] is not None:
            # the restart test's X w and v(alpha), which the next SVRG snapshot reuses
            arrays["iterate_margins"] = np.array(cached[1])
            arrays["iterate_v"] = np.array(cached[2])
        return meta, arrays

    def set_state(self, meta, arrays):
        for k in self._STATE_ARRAYS:
            if k in arrays:
                setattr(self, k, np.array(arrays[k], dtype=np.float64))
        if "rs_w" not in arrays:          # a checkpoint from before restarts
            self.rs_w = np.zeros(self.w.shape[0] if self.restart else 0)
            self.rs_a = np.zeros(self.alpha.shape[0] if self.restart else 0)
        if "rs_m" not in arrays:          # X w and v are linear: the sums of the window
            self.rs_m = (self.problem.rows.matvec(self.rs_w) if self.rs_w.size
                         else np.zeros(0))
            self.rs_v = (self.problem.dual_image(self.rs_a) if self.rs_a.size
                         else np.zeros(0))
        self.rs_full = bool(meta.get("rs_full", True))
        self._at_iterate = None
        if "iterate_margins" in arrays:
            self._at_iterate = (int(meta["updates"]), None,
                                np.array(arrays["iterate_margins"], dtype=np.float64),
                                np.array(arrays["iterate_v"], dtype=np.float64))
        if self.restart and self.rs_w.size == 0:
            raise ValueError("the checkpoint was written with restart=None; resume with "
                             "the same restart option")
        self.rs_n = int(meta.get("rs_n", 0))
        self.rs_gap = meta.get("rs_gap")
        self.rs_prev = meta.get("rs_prev")
        self.n_restarts = int(meta.get("n_restarts", 0))
        if "pw_w" not in arrays:          # a checkpoint from before the primal weight
            self.pw_w = np.zeros(0)
            self.pw_a = np.zeros(0)
        self.pw_log_ref = meta.get("pw_log_ref")
        self.pw_log = float(meta.get("pw_log", 0.0))
        self.fb_primal = _float_or(meta.get("fb_primal"), math.inf)
        self.fb_dual = _float_or(meta.get("fb_dual"), -math.inf)
        if self.fallback and ("fb_w" not in arrays or self.fb_w.shape[0] != self.w.shape[0]):
            # written without fallback="best": its memory of the best point starts here
            self.fb_w = np.zeros(self.w.shape[0])
            self.fb_a = np.zeros(self.alpha.shape[0])
            self.fb_primal, self.fb_dual = math.inf, -math.inf
        self.n_fallbacks = int(meta.get("n_fallbacks", 0))
        if self.adaptive_weight:
            if self.pw_w.shape[0] != self.w.shape[0]:
                raise ValueError("the checkpoint was written without "
                                 "primal_weight='adaptive'; resume with the same option")
            self._set_primal_weight(self.pw_log)
        self.updates = int(meta["updates"])
        self.t = int(meta["t"])
        self.r = int(meta["r"])
        self.n_avg = int(meta["n_avg"])
        self.snap_epoch = int(meta["snap_epoch"])
        self.layout_seed = int(meta.get("layout_seed", 0))
        self._shuffle_layout()
        self.streams = []
        for st in meta["streams"]:
            self.streams.append(rng_from_state(st))
        if len(self.streams) != self.p:
            raise ValueError(f"the checkpoint was written with n_workers="
                             f"{len(self.streams)}; resume with the same n_workers")
        if self.opts.client is not None:
            self._ring_push()

    # ------------------------------------------------------ partitions
    def partitions(self):
        """The p :class:`RowPartition` views of the current state (no copies)."""
        L = self.layout
        prob = self.problem
        out = []
        for q in range(self.p):
            i0, i1 = int(L.row_bounds[q]), int(L.row_bounds[q + 1])
            b0 = int(L.block_ptr[q * self.p])
            b1 = int(L.block_ptr[(q + 1) * self.p])
            sl = slice(i0, i1)
            out.append(RowPartition(
                q=q, p=self.p, row_start=i0,
                block_ptr=L.block_ptr[q * self.p:(q + 1) * self.p + 1] - b0,
                rows=L.rows[b0:b1], cols=L.cols[b0:b1], vals=L.vals[b0:b1],
                perm=self.perm_buf[b0:b1], y=prob.y[sl], cw=self.cwW[sl],
                row_cnt=L.row_cnt[sl], a_lo=self.a_lo[sl], a_hi=self.a_hi[sl],
                alpha=self.alpha[sl], Ga=self.Ga[sl] if self.Ga.size else self.Ga,
                a_snap=self.a_snap[sl] if self.a_snap.size else self.a_snap,
                Fa=self.Fa[sl] if self.Fa.size else self.Fa))
        return out

    def wblocks(self):
        """The p :class:`WBlock` views of w (no copies)."""
        L = self.layout
        out = []
        for r in range(self.p):
            j0, j1 = int(L.col_bounds[r]), int(L.col_bounds[r + 1])
            sl = slice(j0, j1)
            out.append(WBlock(
                r=r, col_start=j0, w=self.w[sl], col_cnt=L.col_cnt[sl],
                Gw=self.Gw[sl] if self.Gw.size else self.Gw,
                w_snap=self.w_snap[sl] if self.w_snap.size else self.w_snap,
                Fw=self.Fw[sl] if self.Fw.size else self.Fw))
        return out

    # --------------------------------------------------------- helpers
    def step_size(self):
        step = self.opts.step
        if step == "sqrt":
            return self.eta0 / math.sqrt(self.t)
        return self.eta0

    def _svrg_snapshot(self):
        prob = self.problem
        self.w_snap[:] = self.w
        self.a_snap[:] = self.alpha
        cached = self._cached_iterate()
        if cached is not None and cached[2] is not None:   # the restart test's pass
            margins, v = cached[1], cached[2]
        else:
            margins = prob.rows.matvec(self.w_snap)
            v = prob.dual_image(self.a_snap)
            self.feature_accesses += 2 * self.layout.nnz
        svrg_full_gradient(
            RowSide(self.alpha, self.a_lo, self.a_hi, prob.y, self.cwW, self.layout.row_cnt,
                    self.Ga, self.a_snap, self.Fa),
            ColSide(self.w, self.layout.col_cnt, self.Gw, self.w_snap, self.Fw),
            margins, v, self.params.spec())
        self.snap_epoch = self.t

    def _dcd_init(self):
        """Local DCD (SDCA) passes on each row part, then w = sum_q (W_q/W) w_q."""
        prob = self.problem
        L = self.layout
        shrunk = np.zeros(prob.n, dtype=np.uint8)
        empty = np.zeros(0)
        empty_i = np.zeros(0, dtype=np.int64)
        rows = prob.rows_view()
        no_shrink = Shrinking(False, np.inf, np.inf)
        no_avg = Averaging(False, empty, empty_i, 0)
        no_prox = ProxWork(empty, empty, empty, empty_i)
        alpha = np.zeros(prob.n)
        w = np.zeros(prob.d)
        for q in range(self.p):
            i0, i1 = int(L.row_bounds[q]), int(L.row_bounds[q + 1])
            Wq = float(prob.sample_weight[i0:i1].sum())
            vq = np.zeros(prob.d)
            rng = self.streams[q]
            for _ in range(self.init_passes):
                order = (i0 + rng.permutation(i1 - i0)).astype(np.int64)
                status, pos, _, acc, _, _ = sdca_epoch(
                    rows, prob.step_spec(inv_W=1.0 / Wq)._replace(l1=0.0),
                    SDCAState(alpha, vq, empty, shrunk), order, 0, order.shape[0], 0, -1,
                    no_shrink, no_avg, no_prox)
                self.feature_accesses += acc
                if status == STATUS_NONFINITE:
                    raise FloatingPointError(
                        f"non-finite value in the DCD initialization at sample "
                        f"{int(order[pos])}; scale the rows or increase lam")
            w += (Wq / prob.W) * vq / prob.lam
        self.alpha[:] = np.clip(alpha, self.a_lo, self.a_hi)
        self.w[:] = np.clip(w, -self.R, self.R)
        self.updates += self.init_passes * L.nnz

    # --------------------------------------------------------- advance
    def advance(self, n_epochs, deadline):
        n_inner = max(1, int(round(n_epochs * self.p)))
        if self._ring is not None:
            if not self.restart:
                self._ring.drive(self._ring.round + n_inner, self._ring_round,
                                 self._ring_restore, self._ring_meta, deadline)
                return
            while n_inner > 0:          # epoch by epoch: the restart test runs on the client
                k = min(n_inner, self.p - self.r)
                self._ring.drive(self._ring.round + k, self._ring_round,
                                 self._ring_restore, self._ring_meta, deadline)
                n_inner -= k
                if self.r != 0:
                    break               # the deadline stopped the epoch
                self._ring_pull()
                if self._restart_check():
                    self._ring_push()
                if deadline is not None and time.perf_counter() >= deadline:
                    break
            return
        parts = self.partitions()
        blocks = self.wblocks()
        sizes = self.layout.block_sizes()
        for _ in range(n_inner):
            if self.r == 0 and self.params.svrg and self.snap_epoch != self.t:
                self._svrg_snapshot()
            eta = self.step_size()
            for q in range(self.p):
                s = sigma(q, self.r, self.p)
                status, pos = dso_block(q, self.r, parts[q], blocks[s], self.streams[q],
                                        self.params, eta)
                self._book_block(status, q, s, sizes[q, s])
            self.r += 1
            if self.r == self.p:              # end of epoch t
                self.r = 0
                self.w_sum += self.w
                self.a_sum += self.alpha
                self.n_avg += 1
                self.t += 1
                if self.restart:
                    self._restart_check()
            if deadline is not None and time.perf_counter() >= deadline:
                break

    def _book_block(self, status, q, s, size):
        """After block ``(q, s)`` of the current inner iteration (here or on the
        ring): a clear error for a non-finite iterate, else count its updates."""
        if status == STATUS_NONFINITE:
            raise FloatingPointError(
                f"DSO produced a non-finite iterate (epoch {self.t}, block ({q}, {s})); "
                f"lower eta0 or use step='adagrad'")
        self.updates += int(size)
        self.feature_accesses += int(size)

    # --------------------------------------------------------- restarts
    #: restart when the candidate's gap is below RESTART_SUFFICIENT times the gap
    #: restarted from, or below RESTART_NECESSARY times it and no longer falling,
    #: or when the window has RESTART_ARTIFICIAL of all epochs (PDLP's rules)
    RESTART_SUFFICIENT, RESTART_NECESSARY, RESTART_ARTIFICIAL = 0.2, 0.8, 0.36

    def _pd_values(self, w, alpha):
        """``(P(w), D(alpha))`` of a pair (alpha made dual-feasible first)."""
        cert = self.problem.certificate(w, self._feasible(alpha))
        return cert.primal, cert.dual

    def _iterate_pass(self):
        """One pass over the data at the current iterate: its certificate (``P(w)``,
        ``D(alpha)``, ``X w``) and ``v(alpha)``, kept for this update count so that
        the next SVRG snapshot and the check reuse them instead of reading X again."""
        prob = self.problem
        alpha = self._feasible(self.alpha)
        cert = prob.certificate(self.w, alpha)
        self.feature_accesses += self.layout.nnz
        v = cert.v if alpha is self.alpha else None     # lam = 0: v of the scaled alpha
        self._at_iterate = (self.updates, cert, cert.margins, v)
        return cert

    def _cached_iterate(self):
        """``(certificate or None, margins, v or None)`` of the current iterate when
        :meth:`_iterate_pass` (or a restart) left them for this update count."""
        c = self._at_iterate
        if c is None or c[0] != self.updates:
            return None
        return c[1:]

    def _average_pd(self, k):
        """``(w_a, alpha_a, P(w_a), D(alpha_a), X w_a, v(alpha_a))`` of the window's
        average from the window's sums of ``X w`` and ``v(alpha)`` (both linear),
        without a pass over the data; exact passes when ``lam = 0`` (the dual needs
        the scaled alpha) or a sum is missing (then ``X w_a`` and ``v`` are None)."""
        prob = self.problem
        wa = self.rs_w / k
        aa = np.clip(self.rs_a / k, self.a_lo, self.a_hi)      # rounding at the bounds
        if prob.lam == 0 or not self.rs_full:
            self.feature_accesses += 2 * self.layout.nnz
            return (wa, aa) + self._pd_values(wa, aa) + (None, None)
        m = self.rs_m / k
        v = self.rs_v / k
        c = prob.sample_weight
        primal = (weighted_sum(c, prob.loss.value(m, prob.y)) / prob.W
                  + prob.penalty.value(wa))
        conj = prob.loss.neg_conjugate(aa, prob.y)
        if not np.isfinite(conj).all():
            return wa, aa, primal, -math.inf, m, v
        dual = weighted_sum(c, conj) / prob.W - prob.penalty.conjugate(v)
        return wa, aa, primal, dual, m, v

    def _restart_check(self):
        """At the end of an epoch (``restart="adaptive"``): the candidate is the
        average of the end-of-epoch iterates since the last restart or the
        current iterate, whichever has the smaller certified gap ``P(w) -
        D(alpha)``; the iterate restarts from it (both ``w`` and ``alpha``;
        AdaGrad's sums are kept) when PDLP's conditions hold (Applegate et al.
        2021, section 3.2, with the duality gap for the normalized gap).

        Cost: one pass (the iterate's certificate, kept for the SVRG snapshot and
        the check); the average's gap comes from the window's sums of ``X w`` and
        ``v(alpha)``.  Returns True when the iterate changed."""
        cert = self._iterate_pass()
        cached = self._at_iterate
        self.rs_w += self.w
        self.rs_a += self.alpha
        if cached[3] is None:
            self.rs_full = False
        if self.rs_full:
            self.rs_m += cached[2]
            self.rs_v += cached[3]
        self.rs_n += 1
        k = self.rs_n
        g_cur = cert.gap
        m_avg = v_avg = None
        g_avg = math.inf                # a window of one epoch: the average is the iterate
        if k > 1:
            wa, aa, p_avg, d_avg, m_avg, v_avg = self._average_pd(k)
            g_avg = p_avg - d_avg
        if self.fallback:
            self._offer_best(self.w, self.alpha, cert.primal, cert.dual)
            if k > 1:
                self._offer_best(wa, aa, p_avg, d_avg)
            kind = self._diverged(cert.primal, cert.dual)
            if kind is not None:
                self._fall_back(halve_steps=kind == "bound")
                return True
        cand, g = ((wa, aa), g_avg) if g_avg <= g_cur else (None, g_cur)
        if not math.isfinite(g):
            g = math.inf
        first = self.rs_gap is None
        if first:                       # the first window: its gap is the reference
            do, cand = True, None
        else:
            ref = self.rs_gap
            prev = math.inf if self.rs_prev is None else self.rs_prev
            do = (g <= self.RESTART_SUFFICIENT * ref
                  or (g <= self.RESTART_NECESSARY * ref and g > prev)
                  or k >= self.RESTART_ARTIFICIAL * self.n_avg)
        if not do:
            self.rs_prev = float(g) if math.isfinite(g) else None
            return False
        changed = cand is not None
        if changed:
            self.w[:] = cand[0]
            self.alpha[:] = cand[1]
            self._at_iterate = (None if m_avg is None else
                                (self.updates, None, m_avg.copy(), v_avg.copy()))
        if not first:
            self.n_restarts += 1        # a new window (from the average or the iterate)
        if self.adaptive_weight:
            informative = g <= self.PW_GATE * abs(cert.primal)
            changed = self._update_primal_weight(first or not informative) or changed
        self._new_window()
        self.rs_gap = float(g) if math.isfinite(g) else None
        return changed

    def _new_window(self):
        """Empty the restart window's sums (a restart or a fallback starts one)."""
        self.rs_w[:] = 0.0
        self.rs_a[:] = 0.0
        self.rs_m[:] = 0.0
        self.rs_v[:] = 0.0
        self.rs_full = True
        self.rs_n = 0
        self.rs_prev = None

    def _offer_best(self, w, alpha, primal, dual):
        """``fallback="best"``: keep the best dual value seen and the point (``w``,
        ``alpha``) with the smallest primal value."""
        if math.isfinite(dual) and dual > self.fb_dual:
            self.fb_dual = float(dual)
        if primal < self.fb_primal:
            self.fb_primal = float(primal)
            self.fb_w[:] = w
            self.fb_a[:] = alpha

    def _diverged(self, primal, dual):
        """Whether the iterate (``P(w) = primal``, ``D(alpha) = dual``) has left the
        best point: "bound" when its certified sub-optimality bound ``P(w) -
        D_best`` exceeds FALLBACK_RATIO times the best point's ``P_best - D_best``,
        once that bound is informative (``D_best >= FALLBACK_GATE P_best``: the best
        point is certified within a factor ``1 / FALLBACK_GATE`` of the optimum);
        "primal" when the iterate's own certified gap is above PW_GATE times
        ``P(w)`` (no dual bound to read: unscaled covtype) and its primal value is
        above PRIMAL_FALLBACK_RATIO times the best; None otherwise."""
        if self.fb_dual >= self.FALLBACK_GATE * self.fb_primal:
            bound = self.fb_primal - self.fb_dual
            if primal - self.fb_dual > self.FALLBACK_RATIO * bound:
                return "bound"
        if (primal - dual > self.PW_GATE * abs(primal)
                and primal > self.PRIMAL_FALLBACK_RATIO * self.fb_primal):
            return "primal"
        return None

    def _fall_back(self, halve_steps=True):
        """Restart from the best point, with AdaGrad's sums times FALLBACK_SHRINK
        (every step length divided by its square root) when ``halve_steps``; a new
        window starts, the gap restarted from is kept."""
        self.w[:] = self.fb_w
        self.alpha[:] = self.fb_a
        self._at_iterate = None
        if halve_steps and self.Gw.size:
            self.Gw *= self.FALLBACK_SHRINK
            self.Ga *= self.FALLBACK_SHRINK
        self._new_window()
        self.n_restarts += 1
        self.n_fallbacks += 1

    #: fall back when the iterate's bound is FALLBACK_RATIO times the best point's;
    #: AdaGrad's sums are then multiplied by FALLBACK_SHRINK (steps halved)
    FALLBACK_RATIO, FALLBACK_SHRINK, FALLBACK_GATE = 4.0, 4.0, 0.5
    #: without an informative gap: fall back when P(w) exceeds this times P_best
    PRIMAL_FALLBACK_RATIO = 2.0

    def _set_primal_weight(self, log_omega):
        """``w`` steps divided by ``omega``, ``alpha`` steps multiplied by it."""
        self.pw_log = float(log_omega)
        omega = math.exp(self.pw_log)
        self.params = dataclasses.replace(self.params, w_scale=self.w_scale0 / omega,
                                          a_scale=self.a_scale0 * omega)

    def _update_primal_weight(self, first):
        """PDLP's primal-weight update at a restart (Applegate et al. 2021,
        Algorithm 3): ``log omega <- theta log(dy/dx) + (1 - theta) log omega``
        with ``dx = ||w - w_last||``, ``dy = ||alpha - alpha_last||_c`` (weights
        ``c_i/W``) the distances from the last restart point, ``theta`` =
        PW_SMOOTHING; ``dy/dx`` is measured relative to the first window's,
        which defines ``omega = 1`` (the default steps).  Returns True when the
        steps changed."""
        dx = float(np.linalg.norm(self.w - self.pw_w))
        da = self.alpha - self.pw_a
        dy = math.sqrt(float(np.dot(self.cwW, da * da)))
        self.pw_w[:] = self.w
        self.pw_a[:] = self.alpha
        if first or not (dx > 0.0 and dy > 0.0 and math.isfinite(dx) and math.isfinite(dy)):
            return False
        log_ratio = math.log(dy / dx)
        if self.pw_log_ref is None:
            self.pw_log_ref = log_ratio
            return False
        th = self.PW_SMOOTHING
        self._set_primal_weight(th * (log_ratio - self.pw_log_ref) + (1 - th) * self.pw_log)
        return True

    #: theta of the primal-weight update (PDLP's value)
    PW_SMOOTHING = 0.5
    PW_GATE = 1000.0

    # ----------------------------------------------------- certificate
    def averaged(self):
        """Theorem 1's averaged iterates (w~, alpha~), or None before epoch 1 ends."""
        if self.n_avg == 0:
            return None
        return self.w_sum / self.n_avg, self.a_sum / self.n_avg

    def _feasible(self, alpha):
        """alpha itself, or scaled into ||v||_inf <= l1 when lam = 0."""
        prob = self.problem
        if prob.lam > 0:
            return alpha
        vmax = float(np.abs(prob.dual_image(alpha)).max(initial=0.0))
        limit = prob.l1 * (1.0 - 1e-12)
        return alpha if vmax <= limit else alpha * (limit / vmax)

    def certificate(self):
        prob = self.problem
        if self._ring is not None:
            self._ring_pull()
        avg = self.averaged()
        if self.opts.output == "average" and avg is not None:
            w_out, a_out = avg
        else:
            w_out, a_out = self.w, self.alpha
        # two dual candidates for one w: the iterate's alpha, and -phi'(X w) from the
        # margins of the first pass (the second pass reads only the rows it needs)
        cached = self._cached_iterate() if w_out is self.w else None
        if cached is not None and cached[0] is not None:    # the restart test's pass
            best = cached[0]
        else:
            best = prob.certificate(w_out, self._feasible(a_out))
        self._dual_source = "iterate"
        alpha = -prob.loss.derivative(best.margins, prob.y)
        cert = prob.certificate(w_out, self._feasible(alpha), margins=best.margins)
        if cert.dual > best.dual:
            best = cert
            self._dual_source = "primal"
        self._saddle = None if avg is None else saddle_gap(prob, avg[0], avg[1], self.R)
        return best

    def trace_extras(self):
        out = {"dso_epoch": int(self.t - 1) + self.r / self.p,
               "dual_source": self._dual_source}
        if self.restart:
            out["restarts"] = int(self.n_restarts)
        if self.fallback:
            out["fallbacks"] = int(self.n_fallbacks)
        if self._saddle is not None:
            out["saddle_gap"] = float(self._saddle)
        if self._ring is not None:
            out.update(self._ring.info())
            out["backend"] = "dask"
        return out
