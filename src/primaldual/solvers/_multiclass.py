"""The multiclass models' solvers and the part of :func:`primaldual.solve` that
runs them (``loss="multinomial"`` or ``"crammer_singer"``; docs/multiclass-models.md).

They are kept apart from :data:`~primaldual.solvers.SOLVERS`, whose solvers fit
the binary and regression losses of one coefficient vector: a multiclass
solver takes a :class:`~primaldual.multiclass.MulticlassProblem` and returns a
``coef`` of shape (d, K) and a ``dual_coef`` of shape (n, K).
"""
from __future__ import annotations

import math
import time

from ..multiclass import MULTICLASS_LOSSES, MulticlassProblem, is_multiclass_loss
from .._util.threads import resolve_n_jobs
from .crammer_singer import CrammerSingerDual
from .crammer_singer_cocoa import CrammerSingerCoCoA
from .crammer_singer_ipm import CrammerSingerIPM, ipm_fits, ipm_iteration_flops
from .crammer_singer_newton import CrammerSingerNewton
from .multinomial import MultinomialNewton
from .multinomial_trust import f_resolution
from .multinomial_dual import MultinomialDualCD

__all__ = ["MULTICLASS_SOLVERS", "DEFAULT_SOLVER", "solve_multiclass",
           "is_multiclass_loss", "multiclass_solver_for"]

#: name -> solver class
MULTICLASS_SOLVERS = {cls.name: cls for cls in (MultinomialNewton, MultinomialDualCD,
                                               CrammerSingerDual, CrammerSingerIPM,
                                               CrammerSingerCoCoA, CrammerSingerNewton)}

#: the solver ``solver="auto"`` runs for each loss
DEFAULT_SOLVER = {"multinomial": MultinomialNewton.name,
                  "crammer_singer": CrammerSingerDual.name}

#: the binary solvers' names that mean the same method here
_ALIASES = {("multinomial", "newton"): MultinomialNewton.name,
            ("crammer_singer", "sdca"): CrammerSingerDual.name,
            ("crammer_singer", "cocoa"): CrammerSingerCoCoA.name}


def multiclass_solver_for(loss_name, solver) -> str:
    """The concrete solver name for ``loss_name`` (``auto``, a name from
    :data:`MULTICLASS_SOLVERS`, or the alias ``newton`` / ``sdca``)."""
    if loss_name not in MULTICLASS_LOSSES:
        raise ValueError(f"{loss_name!r} is not a multiclass loss")
    if solver == "auto":
        return DEFAULT_SOLVER[loss_name]
    name = _ALIASES.get((loss_name, solver), solver)
    if name in MULTICLASS_SOLVERS and loss_name in MULTICLASS_SOLVERS[name].loss_names:
        return name
    ok = sorted({"auto"} | {k for k, c in MULTICLASS_SOLVERS.items()
                            if loss_name in c.loss_names}
                | {a for (lo, a) in _ALIASES if lo == loss_name})
    raise ValueError(f"solver={solver!r} does not fit loss={loss_name!r}; choose one of "
                     f"{', '.join(ok)}")


def _takes_jobs(name) -> bool:
    """Whether the multiclass solver ``name`` has the option ``n_jobs``."""
    cls = MULTICLASS_SOLVERS.get(name)
    return cls is not None and "n_jobs" in cls.options_class.names()


def solve_multiclass(X, y, loss, lam, solver, tol, max_epochs, random_state,
                     sample_weight, l1, loss_params, callback, eval_set, client, n_jobs,
                     **solver_options):
    """:func:`primaldual.solve` for a multiclass loss (same arguments)."""
    threads = resolve_n_jobs(n_jobs) if n_jobs is not None else 1
    problem = MulticlassProblem(X, y, loss=loss, lam=lam, sample_weight=sample_weight,
                                loss_params=loss_params, l1=l1)
    name = multiclass_solver_for(problem.loss.name, solver)
    if threads > 1 and solver != "auto" and not _takes_jobs(name):
        raise ValueError(f"solver={solver!r} runs on one thread; n_jobs={n_jobs!r} does "
                         f"not apply to it (crammer_singer_cocoa runs its row partitions "
                         f"on n_jobs threads in this process)")
    spread = client is not None or solver_options.get("n_partitions") is not None
    if spread and solver == "auto" and name == CrammerSingerDual.name:
        name = CrammerSingerCoCoA.name           # partitions or Dask: CoCoA+ rounds
    cls = MULTICLASS_SOLVERS[name]
    if spread:
        if not getattr(cls, "supports_client", False):
            on = {"multinomial": "multinomial_newton", "crammer_singer": "crammer_singer_cocoa"}
            raise ValueError(f"solver={name!r} (loss={problem.loss.name!r}) runs in this "
                             f"process only; drop client / n_partitions, or use "
                             f"{on[problem.loss.name]}, which runs on partitions and Dask")
        if client is not None:
            solver_options["client"] = client
    # auto takes n_jobs as a permission; a solver named takes it as asked (and
    # crammer_singer_cocoa refuses threads with a client)
    if _takes_jobs(name) and n_jobs is not None and (client is None or solver != "auto"):
        solver_options["n_jobs"] = n_jobs
    kw = dict(tol=tol, max_epochs=max_epochs, random_state=random_state, callback=callback,
              eval_set=eval_set)
    if solver == "auto" and name == CrammerSingerDual.name \
            and set(solver_options) <= {"time_limit"}:
        if ipm_fits(problem):
            res = _crammer_singer_auto(problem, kw, solver_options.get("time_limit"))
        else:
            res = _crammer_singer_face(problem, kw, solver_options.get("time_limit"))
    elif solver == "auto" and not spread and set(solver_options) <= {"time_limit"}:
        res = _in_legs(cls, problem, kw, solver_options.get("time_limit"), "Newton-CG",
                       descent=name == MultinomialNewton.name)
    else:
        res = cls(problem, **kw, **solver_options).run()
    res.extras["n_classes"] = problem.K
    return res


#: solver="auto" for crammer_singer, where the interior-point method fits
#: (crammer_singer_ipm.ipm_fits): its predicted time is IPM_ITERS iterations of
#: flops / IPM_FLOPS_PER_S + n K IPM_ROW_S seconds (measured on one core: digits
#: 0.045 s, dna.scale 0.050, letter.scale 0.18, shuttle 0.096 per iteration; 39
#: to 124 iterations to 1e-6), at least AUTO_MIN_S
IPM_ITERS = 60
IPM_FLOPS_PER_S = 2e10
IPM_ROW_S = 2.5e-7
AUTO_MIN_S = 0.5
#: ... and hands over early, once this share of that time is spent, when its rate
#: already predicts more than the IPM's time
WATCH_SHARE = 0.25


def _crammer_singer_auto(problem, kw, time_limit):
    """The dual method for the IPM's predicted time ``T`` (or until, past
    ``WATCH_SHARE T``, its rate predicts more than ``T``, or its epoch cap).
    If it has not converged, its measured rate (the log of the relative gap
    against seconds over the second half of its checks) predicts the time it
    still needs: more than ``T`` or than the time it has run (or a stall,
    or the cap of a ``max_epochs`` the caller gave) hands over to the IPM (a
    cold start), else the dual method goes on from where it is, once; the
    IPM follows if that leg does not converge either.  ``extras["path"]``
    lists the legs."""
    t0 = time.perf_counter()
    n, K = problem.n, problem.K
    predicted = max(AUTO_MIN_S, IPM_ITERS * (ipm_iteration_flops(problem) / IPM_FLOPS_PER_S
                                             + n * K * IPM_ROW_S))
    first = predicted if time_limit is None else min(predicted, time_limit)
    seen, user = [], kw["callback"]

    def watch(snap):
        if user is not None and user(snap):
            return True
        seen.append({"time": snap["time"], "rel_gap": snap["rel_gap"]})
        return snap["time"] >= WATCH_SHARE * predicted and \
            _time_to(seen, kw["tol"]) > predicted
    res = CrammerSingerDual(problem, **dict(kw, callback=watch), time_limit=first).run()
    path = [_leg(res, "start: the dual method for the IPM's predicted "
                      f"{predicted:.2g} s")]
    while not res.converged and len(path) < 3:
        left = None if time_limit is None else time_limit - (time.perf_counter() - t0)
        capped = res.stop_reason in ("max_epochs", "stalled")
        handover = capped or res.stop_reason == "time_limit" or \
            (res.stop_reason == "callback" and len(seen) == len(res.trace))
        if not handover or (left is not None and left <= 0):
            break
        # the dual method at the cap of a given max_epochs, or stalled, cannot go on
        final = res.stop_reason == "stalled" or (capped and kw["max_epochs"] is not None)
        need = math.inf if final else _time_to(res.trace, kw["tol"])
        if need > min(predicted, res.time) or len(path) == 2:
            res2 = CrammerSingerIPM(problem, **kw, time_limit=left).run()
            path.append(_leg(res2, f"the dual method's rate predicts {need:.3g} s more; "
                                   f"the IPM {predicted:.2g} s"))
        else:
            seen = []
            res2 = CrammerSingerDual(problem, **kw, time_limit=left, warm_start=res).run()
            path.append(_leg(res2, f"the dual method's rate predicts {need:.3g} s more"))
        res = _joined(res, res2)
        if res2.solver == CrammerSingerIPM.name:
            break
    res.time = time.perf_counter() - t0
    res.extras["path"] = path
    return res


#: where the IPM does not fit, the dual method's watch judges its rate after
#: WATCH_EPOCHS epochs of a leg: a rate that predicts more than LEGS times the
#: leg's time so far hands over to the Newton method on the face
WATCH_EPOCHS = 1000


def _crammer_singer_face(problem, kw, time_limit):
    """The dual method in legs (:func:`_in_legs`), then, where it stops short
    of ``tol`` at its default epoch cap, stalled, or cut by its watch (past
    ``WATCH_EPOCHS`` epochs of a leg its rate, :func:`_time_to`, predicts
    more than ``LEGS`` times the leg's time so far: sublinear convergence,
    news20 at ``C = 100``), the projected Newton method on the face of the
    dual (:class:`CrammerSingerNewton`), warm from the best point.
    ``extras["path"]`` lists the legs."""
    t0 = time.perf_counter()
    seen, user, crawled = [], kw["callback"], [False]

    def watch(snap):
        if user is not None and user(snap):
            return True
        if seen and snap["time"] < seen[-1]["time"]:     # a new leg
            seen.clear()
        seen.append({"time": snap["time"], "rel_gap": snap["rel_gap"]})
        crawled[0] = snap["epoch"] >= WATCH_EPOCHS and \
            _time_to(seen, kw["tol"]) > LEGS * snap["time"]
        return crawled[0]
    res = _in_legs(CrammerSingerDual, problem, dict(kw, callback=watch), time_limit,
                   "the dual method (the IPM does not fit)")
    path = res.extras["path"]
    left = None if time_limit is None else time_limit - (time.perf_counter() - t0)
    short = crawled[0] or res.stop_reason in ("max_epochs", "stalled")
    if res.converged or not short or kw["max_epochs"] is not None or \
            (left is not None and left <= 0):
        return res
    res2 = CrammerSingerNewton(problem, **kw, time_limit=left, warm_start=res).run()
    path.append(_leg(res2, "the dual method converges too slowly: Newton on the face, "
                           "from its point"))
    res = _joined(res, res2)
    res.time = time.perf_counter() - t0
    res.extras["path"] = path
    return res


#: solver="auto" runs the dual Crammer-Singer method where the IPM does not fit,
#: and Newton-CG for the multinomial model, for at most this many legs of
#: their default epoch cap (LIBLINEAR's -s 4 allows 100,000 iterations), each
#: from the point the last one reached, while each at least halves the gap and
#: the rate of the last one predicts the target within the legs left
LEGS = 10


def _in_legs(cls, problem, kw, time_limit, what, descent=False):
    """``cls`` run on from its point at its default epoch cap (``LEGS``),
    while each leg at least halves the lowest gap certified so far and the
    rate of the last one predicts the target within the legs left (both on
    the lowest gap so far, :func:`_lowest`).  With ``descent`` (Newton, whose
    objective falls at every step) a leg whose objective fell beyond rounding
    goes on as well, from its own point: on news20 at ``C = 100`` the gap
    hovered near 1e-2 through a leg of 1,000 passes that closed most of the
    distance to the optimum, and fell to 6e-4 in the next; near the end a leg
    of two Newton steps (1,000 CG products) lowers the objective by less than
    ``tol |P|`` while its gap falls from 1e-5 towards the target.  Its legs
    double (1,000, 2,000, 4,000 passes, ..., at most ``LEGS`` default legs in
    all): a late Newton step needs more CG products than a leg of 1,000 passes
    holds (news20 at ``C = 100``: five legs of one truncated step each moved
    the gap from 1.4e-5 to 2.7e-6 only), and CG starts afresh in each leg.
    ``extras["path"]`` lists the legs."""
    t0 = time.perf_counter()
    res = last = cls(problem, **kw, time_limit=time_limit).run()
    path = [_leg(res, f"start: {what}")]
    trace, secs = _lowest(res.trace), res.time   # the last leg's
    moving = descent
    while not res.converged and last.stop_reason == "max_epochs" and \
            kw["max_epochs"] is None and len(path) < LEGS:
        left = None if time_limit is None else time_limit - (time.perf_counter() - t0)
        if (left is not None and left <= 0) or (
                not moving and _time_to(trace, kw["tol"]) > (LEGS - len(path)) * secs):
            break
        leg_kw = kw
        if descent:     # twice the last leg's passes, within LEGS default legs in all
            room = LEGS * cls.default_max_epochs - sum(leg["epochs"] for leg in path)
            if room < 1.0:
                break
            leg_kw = dict(kw, max_epochs=min(2.0 * path[-1]["epochs"], room))
        res2 = cls(problem, **leg_kw, time_limit=left, warm_start=last).run()
        trace2, secs = _lowest(res2.trace), res2.time
        path.append(_leg(res2, f"{what} at its epoch cap: on from its point"))
        halved = trace2[-1]["rel_gap"] <= 0.5 * trace[-1]["rel_gap"]
        moving = descent and res2.primal < last.primal - f_resolution(last.primal, problem.n)
        trace, last = trace2, res2
        res = _joined(res, res2, take=descent)
        if not (halved or moving):
            break
    res.time = time.perf_counter() - t0
    res.extras["path"] = path
    return res


def _joined(res, res2, take=False):
    """``res2`` after ``res`` (traces and epochs joined) when it is better or
    converged (or ``take``: a descent method's lower objective), else ``res``."""
    if not (res2.rel_gap <= res.rel_gap or res2.converged or take):
        return res
    res2.trace = res.trace + [dict(r, time=r["time"] + res.time) for r in res2.trace]
    res2.n_epochs += res.n_epochs
    res2.time += res.time
    return res2


def _leg(res, reason):
    return {"method": res.solver, "threads": 1, "n_jobs": 1, "seconds": res.time,
            "epochs": res.n_epochs, "gap": res.rel_gap, "reason": reason}


def _lowest(trace):
    """The trace with each check's ``rel_gap`` the lowest so far: a primal
    method's certified gap, ``||grad||^2 / (2 lam)`` for Newton, rises and
    falls from step to step while its objective falls (news20: 0.04, 0.22,
    0.03 at three steps), and a leg is judged by the best gap it certified."""
    out, low = [], math.inf
    for r in trace:
        low = min(low, r.get("rel_gap", math.inf))
        out.append(dict(r, rel_gap=low))
    return out


def _time_to(trace, tol):
    """Seconds a run would need from its last check to a relative gap of
    ``tol`` at the rate of the second half of its checks (inf without progress)."""
    pts = [(r["time"], r["rel_gap"]) for r in trace
           if 0 < r.get("rel_gap", 0) < math.inf]
    if len(pts) < 2:
        return math.inf
    (t1, g1), (t2, g2) = pts[len(pts) // 2], pts[-1]
    if len(pts) // 2 == len(pts) - 1:
        (t1, g1) = pts[0]
    if not (g2 < g1 and t2 > t1):
        return math.inf
    rate = (math.log(g1) - math.log(g2)) / (t2 - t1)
    return max(0.0, math.log(g2 / tol) / rate)
