"""The options of :class:`~primaldual.solvers.dso.DSOSolver`: :class:`DSOOptions`,
checked when built (a bad value is a ValueError naming the option), and their
documentation, which is the second half of the solver's docstring."""
from __future__ import annotations

from dataclasses import dataclass

from .._options import CommonOptions, RingOptions, choice, number

__all__ = ["DSOOptions", "OPTIONS_DOC", "default_primal_weight"]

OPTIONS_DOC = """Options
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
    saddle point the distances it moved say nothing about the balance of the two
    sides (docs/reproducing-dso.md section 6d).
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
    1000`` times ``P(w)`` (no dual bound to read), the primal alone decides: the iterate restarts
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


@dataclass(frozen=True)
class DSOOptions(RingOptions, CommonOptions):
    __doc__ = OPTIONS_DOC

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


def default_primal_weight(opts):
    """``primal_weight=None``: "adaptive" where it applies (AdaGrad steps with
    restarts, the defaults), else 1."""
    return "adaptive" if opts.step == "adagrad" and opts.restart is not None else 1.0
