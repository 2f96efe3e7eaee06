"""The prior of ``solver="auto"``: which methods may run, in which order, and
how long each is predicted to take.

:func:`candidates` orders the methods the registry offers for a problem
(those whose capabilities, L1 support and options fit it); the first is the
one today's measured rule picks (:func:`resolve_solver`).  The order is a
prior, not a verdict: :mod:`primaldual.solvers.supervisor` runs the first,
watches its certified gap, and hands over to the next when it stalls or
fails.  :func:`predicted_seconds` is the cost model the supervisor's stall
window uses: a leg that does not cut its gap tenfold in the time the next
candidate is predicted to need for the whole fit hands over.

A registered solver class with ``auto_candidate = True`` joins the portfolio
after the built-in :data:`AUTO_CANDIDATES`.

The thresholds are measured (benchmarks/bench_auto.py, benchmarks/results/
auto.md, docs/solvers.md "How auto chooses").
"""
from __future__ import annotations

import math

from .._util.clients import client_workers
from ..blocks.sdca_threads import thread_plan
from ..kernels.newton import row_nnz_squares
from ..kernels.objective import weighted_sum
from ..losses import check_capabilities
from ._base import SOLVERS
from ._multiclass import MULTICLASS_SOLVERS
from ._distributed_auto import distributed_choice
from .ipm import densifies
from .newton import explicit_hessian_pays
from .box_newton import suits as box_newton_suits
from .sparse.barrier import ITERATIONS as L1_IPM_ITERS, MAX_WS as L1_IPM_MAX_WS
from .sparse.barrier_system import dense_flops

__all__ = ["AUTO_CANDIDATES", "candidates", "resolve_solver", "predicted_seconds",
           "predicted_epochs", "epoch_seconds",
           "conditioning_ratio", "row_norm_ratio", "ipm_pays", "accepts_options",
           "resolve_distributed_solver", "option_classes", "threaded_solvers"]

#: the methods ``solver="auto"`` runs, in the fallback order after the rule's pick
AUTO_CANDIDATES = ("sdca", "newton", "ipm", "box_newton", "l1cd", "l1_ipm")

#: auto puts Newton first when the conditioning ratio mean_i ||x_i||^2 / (lam gamma n)
#: reaches this value on dense data whose Hessian is formed through BLAS (d <= 300),
NEWTON_RATIO_DENSE = 0.03
#: this value on sparse data whose Hessian is formed explicitly (sum nnz_i^2 small),
NEWTON_RATIO_EXPLICIT = 0.5
#: or this value when Newton runs on Hessian-vector products (large d)
NEWTON_RATIO_MATVEC = 30.0

#: the losses auto puts the IPM first for in that regime (not smooth: no Newton)
IPM_LOSSES = ("hinge", "absolute", "epsilon_insensitive")
#: auto puts the interior-point method first for them when the row-norm ratio
#: mean_i ||x_i||^2 / (lam n) reaches this value on dense data,
IPM_RATIO_DENSE = 10.0
#: this value on sparse (CSR) data, where SDCA's epochs are cheap,
IPM_RATIO_SPARSE = 50.0
#: and one iteration costs at most this many passes' worth of flops
#: (min(n, d) on dense data, sum_i nnz_i^2 / nnz on sparse data) ...
IPM_MAX_COST = 1000.0
#: ... with the linear systems at most this size (min(n, d))
IPM_MAX_SIZE = 2000

#: SDCA runs first, as a probe, before an IPM fit predicted to take this long
#: (10 times a leg's fixed cost, ``primaldual.solvers._direct.PORTFOLIO_S``)
SDCA_PROBE_MIN_S = 0.02

#: the cost model of :func:`predicted_seconds`: seconds per stored entry of a
#: pass, per sample of a pass, per flop of compiled sparse linear algebra on
#: one thread,
PASS_ENTRY_S = 4e-9
PASS_ROW_S = 3e-8
FLOP_S = 1e-9
#: per multiply-add of dense BLAS-3 (measured 4e-11 to 1.5e-10: Newton's
#: Hessian on usps, the IPM's normal equations on dna.scale and gisette),
BLAS_FLOP_S = 1e-10
#: and an interior-point iteration's vector work per sample and fixed cost
#: (measured: 3.3 ms an iteration on cadata, 15,480 x 9; 0.33 ms on heart)
IPM_ROW_S = 2e-7
IPM_ITER_S = 3e-4
#: epochs (passes) of a Newton fit with an explicit Hessian (measured 11-15
#: on a9a, dna.scale, usps at C = 0.01 to 1; 26 on shuttle); iterations and CG
#: passes per iteration on Hessian-vector products; interior-point iterations
#: (measured 11-14 on heart_scale, cadata, dna.scale, gisette; 24-57 at large C)
NEWTON_EXPLICIT_EPOCHS = 15
NEWTON_ITERS = 20
NEWTON_CG_PASSES = 10
IPM_ITERS = 15
#: iterations of a box_newton fit from a dual coordinate method's point and the
#: passes' worth of work of one (a sweep, and CG on the face: measured on
#: standardized reuters, hinge C = 0.01-100, 12-56 iterations)
BOX_NEWTON_ITERS = 40
BOX_NEWTON_PASSES = 20
#: the passes a default ``l1cd`` fit of an L1 problem is predicted to take: the
#: work after which its leg is judged against ``l1_ipm``'s predicted fit.  Most
#: default L1 fits on the shared sets certify within it (those that do not
#: crawl for thousands, benchmarks/results/l1-defaults-*.md) and keep l1cd's
#: exact zeros (an interior point is rounded to zeros only as far as its
#: certificate allows; with 200, and an earlier rounding, a1a's fits were
#: handed over with 10-25% more nonzeros)
L1CD_PASSES = 1000


def conditioning_ratio(problem) -> float:
    """``(sum_i c_i ||x_i||^2 / W) / (lam gamma n)``, gamma = 1 / smoothness.

    SDCA's epochs to a fixed accuracy grow like ``1 + R^2 / (lam gamma n)``
    (Shalev-Shwartz & Zhang 2013, Theorem 1 with the row norms of the data);
    this is that ratio with the weighted mean squared row norm for ``R^2``."""
    return _mean_sq_norm(problem) * problem.loss.smoothness / (problem.lam * problem.n)


def row_norm_ratio(problem) -> float:
    """``(sum_i c_i ||x_i||^2 / W) / (lam n)``: the ``R^2 / (lam n)`` that SDCA's
    epochs grow with on a Lipschitz loss (Shalev-Shwartz & Zhang 2013, Theorem 2)."""
    return _mean_sq_norm(problem) / (problem.lam * problem.n)


def _mean_sq_norm(problem) -> float:
    """``sum_i c_i ||x_i||^2 / W`` by a compiled loop (BLAS ``ddot`` wakes its
    threads for long vectors: 10-20 ms of a 2 ms fit on a loaded 2-core machine)."""
    return float(weighted_sum(problem.sample_weight, problem.rows.sqnorm)) / problem.W


def ipm_pays(problem) -> bool:
    """An interior-point iteration is affordable: ``min(n, d) <= IPM_MAX_SIZE``
    and its cost is at most ``IPM_MAX_COST`` passes' worth of flops."""
    n, d = problem.n, problem.d
    m = min(n, d)
    if m > IPM_MAX_SIZE or problem.nnz == 0:
        return False
    if problem.rows.is_sparse and not densifies(problem) and d <= n:
        cost = float(row_nnz_squares(problem.rows.indptr)) / problem.nnz
    else:
        cost = float(m)
    return cost <= IPM_MAX_COST


def accepts_options(name, options) -> bool:
    """Solver ``name`` takes every option in ``options`` (``client`` aside)."""
    if not options:
        return True
    extra = set(options) - {"client"}
    return extra <= set(SOLVERS[name].options_class.names())


def _capable(name, problem, options) -> bool:
    """Solver ``name`` is registered and can run this problem with these options."""
    cls = SOLVERS.get(name)
    if cls is None or not accepts_options(name, options):
        return False
    try:
        check_capabilities(problem.loss, name, cls.requires)
    except ValueError:
        return False
    if problem.l1 > 0 and not cls.supports_l1:
        return False
    if problem.lam == 0 and not cls.supports_pure_l1:
        return False
    if name == "ipm":
        ratio = row_norm_ratio(problem)
        return math.isfinite(ratio) and ipm_pays(problem)
    if name == "box_newton":
        return box_newton_suits(problem)
    if name == "l1_ipm":
        return problem.l1 > 0        # the barrier is on |w_j| < u_j
    return True


def candidates(problem, options=None, n_jobs=1, tol=1e-6) -> list:
    """The methods ``solver="auto"`` may run on ``problem``, first the rule's pick
    (:func:`resolve_solver`), then the others in :data:`AUTO_CANDIDATES` order,
    then the registered classes marked ``auto_candidate``.

    When the pick is the IPM or Newton on Hessian-vector products (a fit of
    hundreds of passes, each as costly as an SDCA epoch), its fit is predicted
    to take at least
    :data:`SDCA_PROBE_MIN_S`, and SDCA's predicted epochs reach its budget,
    SDCA goes first, as a probe: its prediction is a worst-case bound that
    says nothing of this data (6 epochs on standardized cadata, absolute loss,
    C = 100, where ``r / tol`` is the whole budget; 27 on standardized
    cocoa-small, logistic, where ``(1 + r) log(1/tol)`` is 24,000), so the
    supervisor runs it for a share of the pick's predicted time and lets its
    measured rate decide (:mod:`primaldual.solvers.supervisor`)."""
    names = list(AUTO_CANDIDATES) + sorted(
        k for k, c in SOLVERS.items()
        if getattr(c, "auto_candidate", False) and k not in AUTO_CANDIDATES)
    fit = [k for k in names if _capable(k, problem, options)]
    first = resolve_solver("auto", problem, options, n_jobs, tol)
    if first in fit:
        fit.remove(first)
        probed = first == "ipm" or (first == "newton" and not explicit_hessian_pays(problem))
        if probed and "sdca" in fit and _sdca_bound_is_budget(problem, tol) \
                and predicted_seconds(first, problem, tol) >= SDCA_PROBE_MIN_S:
            fit.remove("sdca")
            return ["sdca", first] + fit
        return [first] + fit
    # nothing fits: the rule's pick runs alone and says why it cannot (lam = 0, ...)
    return fit or [first]


def _sdca_bound_is_budget(problem, tol) -> bool:
    """SDCA's predicted epochs (a worst-case bound) reach its default budget:
    they say nothing of when it ends on this data."""
    return predicted_epochs("sdca", problem, tol, math.inf) >= SOLVERS["sdca"].default_max_epochs


def resolve_solver(solver: str, problem, options=None, n_jobs=1, tol=1e-6) -> str:
    """The first candidate of ``solver="auto"`` (``solver`` itself otherwise).

    ``options`` are the solver options the caller gave: a method that does not
    take them is skipped, so ``solve(..., shrinking=False)`` starts with SDCA.

    * ``newton`` for a loss with a (generalized) Hessian, ``l1 = 0``, and a
      problem ill-conditioned for SDCA: :func:`conditioning_ratio` at least
      0.03 on dense data whose Hessian is formed explicitly (``d <= 300``),
      0.5 on sparse data whose Hessian is formed explicitly, 30 when Newton
      runs on Hessian-vector products, and the cost model predicts Newton's
      fit to ``tol`` faster than SDCA's (:func:`predicted_seconds`: at C =
      0.01 on dna.scale and usps SDCA's ``(1 + r) log(1/tol)`` epochs cost a
      fifth of Newton's fit);
    * ``ipm`` for the hinge, ``absolute`` and ``epsilon_insensitive`` with ``l1 = 0``
      when :func:`row_norm_ratio` is at
      least 10 on dense data (50 on sparse data) and an iteration is
      affordable (:func:`ipm_pays`);
    * ``l1cd`` (:mod:`primaldual.solvers.sparse`) for ``l1 > 0`` with a smooth
      loss, ``lam = 0`` included (``l1_ipm``, the interior-point method, is
      the next candidate: the supervisor hands over to it when ``l1cd``
      crawls); ``spdc`` for ``lam = 0`` with a non-smooth loss;
    * ``sdca`` otherwise.

    With ``n_jobs = k > 1`` each threshold is multiplied by SDCA's predicted
    speed-up on ``k`` threads (:func:`primaldual.blocks.sdca_threads.thread_plan`):
    SDCA's epochs grow linearly in the ratio, so the break-even ratio moves by it.
    """
    if solver != "auto":
        return solver
    loss = problem.loss
    if problem.l1 > 0 and loss.smooth and "l1cd" in SOLVERS \
            and accepts_options("l1cd", options):
        return "l1cd"           # sparse models, lam >= 0 (docs/sparse-models.md)
    if problem.lam == 0:
        return "spdc"           # pure L1 with a non-smooth loss
    if "newton" in SOLVERS and loss.generalized_hessian and problem.l1 == 0 \
            and problem.lam > 0:
        ratio, speedup = conditioning_ratio(problem), _sdca_speedup(problem, n_jobs)
        if ratio >= _newton_limit(problem) * speedup and accepts_options("newton", options) \
                and predicted_seconds("newton", problem, tol) \
                < predicted_seconds("sdca", problem, tol) / speedup:
            return "newton"
    if "ipm" in SOLVERS and loss.name in IPM_LOSSES and problem.l1 == 0 and problem.lam > 0:
        limit = IPM_RATIO_SPARSE if problem.rows.is_sparse else IPM_RATIO_DENSE
        ratio = row_norm_ratio(problem)
        # an overflowing row norm (ratio inf) stays with SDCA, which reports it
        if math.isfinite(ratio) and ratio >= limit * _sdca_speedup(problem, n_jobs) \
                and ipm_pays(problem) and accepts_options("ipm", options):
            return "ipm"
    return "sdca"


def _newton_limit(problem) -> float:
    """The conditioning ratio from which Newton beats serial SDCA, by how
    Newton forms its Hessian on this problem."""
    if not explicit_hessian_pays(problem):
        return NEWTON_RATIO_MATVEC
    if problem.rows.is_sparse:
        return NEWTON_RATIO_EXPLICIT
    return NEWTON_RATIO_DENSE


def _sdca_speedup(problem, n_jobs) -> float:
    """SDCA's predicted speed-up on ``n_jobs`` threads (1 when it would run serially)."""
    if n_jobs is None or int(n_jobs) <= 1:
        return 1.0
    plan = thread_plan(problem.rows, n_jobs)
    return plan.speedup if plan.threads > 1 else 1.0


def epoch_seconds(name, problem) -> float:
    """The cost model's seconds for one epoch (as the solver counts them) of
    solver ``name``: a pass costs ``PASS_ENTRY_S nnz + PASS_ROW_S n``; a Newton
    pass also carries its share of an explicitly formed Hessian (``n d^2 +
    d^3 / 3`` BLAS flops on dense data, ``sum_i nnz_i^2`` compiled flops on
    sparse data, over the about 3 passes of an iteration); an interior-point
    epoch is one iteration (:func:`_ipm_iteration_seconds`); a ``box_newton``
    epoch is one iteration, ``BOX_NEWTON_PASSES`` passes."""
    n, d, nnz = problem.n, problem.d, max(problem.nnz, 1)
    pass_s = PASS_ENTRY_S * nnz + PASS_ROW_S * n
    if name == "newton" and explicit_hessian_pays(problem):
        if problem.rows.is_sparse:
            flops = float(row_nnz_squares(problem.rows.indptr)) + d ** 3 / 3.0
            return pass_s + FLOP_S * flops / 3.0
        return pass_s + BLAS_FLOP_S * (float(n) * d * d + d ** 3 / 3.0) / 3.0
    if name == "ipm":
        return _ipm_iteration_seconds(problem, pass_s)
    if name == "box_newton":
        return BOX_NEWTON_PASSES * pass_s
    if name == "l1_ipm":
        return _l1_ipm_iteration_seconds(problem, pass_s)
    return pass_s


def _l1_ipm_iteration_seconds(problem, pass_s) -> float:
    """One ``l1_ipm`` iteration: on every feature when its matrix's dimension
    ``min(n, d)`` is at most ``max_ws``, else on a working set of ``max_ws``
    (the whole screened set a stalled one may switch to is not priced); the
    matrix (``min(n m^2, n^2 m)`` BLAS flops on dense rows, at most ``sum_i
    nnz_i^2`` compiled flops on sparse rows), its factorization and about 6
    passes (gradient, certificates, line search)."""
    n, d = problem.n, problem.d
    cols = d if min(n, d) <= L1_IPM_MAX_WS else min(d, L1_IPM_MAX_WS)
    if problem.rows.is_sparse:
        m = float(min(n, cols))
        flops = BLAS_FLOP_S * m ** 3 / 3.0 + FLOP_S * float(row_nnz_squares(problem.rows.indptr))
    else:
        flops = BLAS_FLOP_S * dense_flops(n, cols)
    return flops + 6.0 * pass_s


def _ipm_iteration_seconds(problem, pass_s) -> float:
    """One interior-point iteration: on dense (or densified) rows ``n d m +
    m^3 / 3`` BLAS flops (``m = min(n, d)``), ``IPM_ROW_S`` per sample and
    ``IPM_ITER_S``; on sparse rows with ``d <= n`` the normal equations'
    ``sum_i nnz_i^2`` compiled flops, ``d^3 / 3`` BLAS flops and about 10 passes;
    with ``d > n`` the kernel ``X X^T`` (``sum_j nnz_j^2`` compiled flops over
    the columns, formed once: its share of ``IPM_ITERS``), ``n^3 / 3`` BLAS
    flops and about 10 passes (gisette, 750 x 5,000: 4-6 s for 13 iterations)."""
    n, d = problem.n, problem.d
    m = min(n, d)
    if not problem.rows.is_sparse or densifies(problem):
        return BLAS_FLOP_S * (float(n) * d * m + m ** 3 / 3.0) + IPM_ROW_S * n + IPM_ITER_S
    vector = BLAS_FLOP_S * m ** 3 / 3.0 + 10 * pass_s
    if d <= n:
        return vector + FLOP_S * float(row_nnz_squares(problem.rows.indptr))
    counts = problem.rows.column_counts()
    return vector + FLOP_S * float(counts @ counts) / IPM_ITERS


def predicted_epochs(name, problem, tol=1e-6, max_epochs=1000.0) -> float:
    """The epochs a whole fit by ``name`` is predicted to take: SDCA ``(1 + r)
    log(1/tol)`` on a smooth loss (``r`` the conditioning ratio) and ``r / tol``
    on a Lipschitz one; Newton ``NEWTON_EXPLICIT_EPOCHS`` with an explicit
    Hessian, ``NEWTON_ITERS`` iterations of ``2 + NEWTON_CG_PASSES`` passes on
    Hessian-vector products; the IPM ``IPM_ITERS`` iterations; ``box_newton``
    ``BOX_NEWTON_ITERS``; ``l1_ipm`` ``L1_IPM_ITERS``; ``l1cd`` on an L1
    problem ``L1CD_PASSES``; others
    ``max_epochs``; at most ``max_epochs``."""
    eps = max(float(tol), 1e-16)
    if name == "newton":
        epochs = (float(NEWTON_EXPLICIT_EPOCHS) if explicit_hessian_pays(problem)
                  else NEWTON_ITERS * (2.0 + NEWTON_CG_PASSES))
    elif name == "ipm":
        epochs = float(IPM_ITERS)
    elif name == "box_newton":
        epochs = float(BOX_NEWTON_ITERS)
    elif name == "l1_ipm":
        epochs = float(L1_IPM_ITERS)
    elif name == "l1cd" and problem.l1 > 0:
        epochs = float(L1CD_PASSES)
    elif name == "sdca" and problem.lam > 0:
        epochs = ((1.0 + conditioning_ratio(problem)) * math.log(1.0 / eps)
                  if problem.loss.smooth else row_norm_ratio(problem) / eps)
    else:
        epochs = float(max_epochs)
    return min(epochs, float(max_epochs))


def predicted_seconds(name, problem, tol=1e-6, max_epochs=1000.0) -> float:
    """The cost model's seconds for a whole fit by ``name``:
    :func:`predicted_epochs` times :func:`epoch_seconds`.  Only the order of
    magnitude matters: the supervisor sizes with it the window in which a leg
    must make progress, and counts a leg's work with :func:`epoch_seconds`, so
    that both sides of the comparison are in the same units and a fit does
    not depend on the machine's load."""
    return predicted_epochs(name, problem, tol, max_epochs) * epoch_seconds(name, problem)


def resolve_distributed_solver(problem, options=None, client=None):
    """``(solver, reason)`` for ``solver="auto"`` on partitions (with ``client``,
    or ``n_partitions`` in ``options``): ``l1_newton`` for ``l1 > 0`` with a
    smooth loss, else the distributed ``newton`` or ``cocoa``.

    ``newton`` needs a loss with a (generalized) Hessian and ``l1 = 0``; then
    the local rule of :func:`resolve_solver` decides, with its threshold moved
    by the two methods' speed-ups on the partitions, per-round communication
    included (:mod:`primaldual.solvers._distributed_auto`).  Options that only
    one of the two takes (``local_iters``, ``aggregation``; ``cg_tol``,
    ``hessian``) pick that one."""
    options = dict(options or {})
    K = options.get("n_partitions")
    if K is None:
        K = max(1, len(client_workers(client))) if client is not None else 1
    loss = problem.loss
    if problem.l1 > 0 and "l1_newton" in SOLVERS:
        if not loss.smooth:
            raise ValueError(f"l1 > 0 with the non-smooth loss {loss.name!r} has no method "
                             f"on row partitions: l1_newton needs a smooth loss (e.g. "
                             f"squared_hinge); on Dask solver='dso' takes it (its ring "
                             f"of workers)")
        return "l1_newton", (f"l1 = {problem.l1:g} > 0 with the smooth loss "
                             f"{loss.name!r}: the L1 proximal Newton method on partitions")
    if not (loss.generalized_hessian and problem.l1 == 0 and problem.lam > 0):
        return "cocoa", (f"loss={loss.name!r}" + (" with l1 > 0" if problem.l1 else "")
                         + ": Newton needs a smooth loss and l1 = 0; CoCoA+")
    # a bad K is refused by the solver that runs; the cost model takes at least 1
    K = max(1, int(K)) if isinstance(K, (int, float)) and not isinstance(K, bool) else 1
    pick, reason = distributed_choice(problem, conditioning_ratio(problem),
                                      _newton_limit(problem), K, client is not None)
    other = "cocoa" if pick == "newton" else "newton"
    if not accepts_options(pick, options) and accepts_options(other, options):
        return other, f"the options {sorted(options)} are {other}'s ({reason})"
    return pick, reason


def threaded_solvers() -> list:
    """The solvers that take ``n_jobs`` (run on several threads)."""
    return sorted(k for k, c in SOLVERS.items() if "n_jobs" in c.options_class.names())


def option_classes(solver) -> list:
    """The options classes that may apply to ``solver``: its own, or for
    ``"auto"`` those of :data:`AUTO_CANDIDATES` (an option is read by the
    first that has it)."""
    names = AUTO_CANDIDATES if solver == "auto" else (solver,)
    if solver in MULTICLASS_SOLVERS:        # --loss multinomial | crammer_singer
        return [MULTICLASS_SOLVERS[solver].options_class]
    return [SOLVERS[n].options_class for n in names if n in SOLVERS]
