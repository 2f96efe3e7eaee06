"""The end-to-end speed table (``benchmarks/bench_speed.py``): one clock for everyone.

What is timed, for each cell (data set, loss, lam):

- primaldual: the wall-clock of the whole public call
  ``primaldual.solve(X, y, loss=..., lam=..., solver="auto", tol=1e-6)``
  (the :class:`~primaldual.Problem` built inside it, every exact
  certificate check, everything), after a warm-up call on a small slice of
  the same data so that Numba compile time is not in it;
- each peer variant (:func:`peer_variants`): the wall-clock of its whole
  public fit call, its own data conversion included, at the *loosest* of
  its tolerances whose coefficients reach relative primal sub-optimality
  ``TARGET`` under OUR objective (:func:`search_tolerance`).

A cell's reference ``P*`` is the lowest primal value seen by any run
(the reference runs, the timed runs, every peer fit of the search), and
it counts only when the highest certified dual value seen is within a
relative ``REF_CERT`` of it (:func:`certify_reference`).  Otherwise the
sub-optimalities of the cell are n/a and no peer tolerance is chosen.
"""
from __future__ import annotations

import math
import re
import time
import warnings
from dataclasses import dataclass, field

import numpy as np

import primaldual

from .peers import LIBLINEAR_SOLVERS, PEERS, snapml_coef, snapml_estimator

__all__ = ["TARGET", "REF_CERT", "Variant", "peer_variants", "certify_reference",
           "rel_subopt", "search_tolerance", "timed", "summarize_times", "decades"]

#: relative primal sub-optimality every timed run must reach
TARGET = 1e-6
#: a reference counts only when certified to this relative gap
REF_CERT = 1e-9


def decades(hi, lo, per_decade=2):
    """``hi, hi 10^(-1/per_decade), ..., lo``: tolerances, loosest first."""
    k_hi, k_lo = math.log10(hi), math.log10(lo)
    steps = int(round((k_hi - k_lo) * per_decade))
    return tuple(float(10.0 ** (k_hi - i / per_decade)) for i in range(steps + 1))


def timed(fn, *args, **kwargs):
    """(fn(*args, **kwargs), wall seconds)."""
    t0 = time.perf_counter()
    out = fn(*args, **kwargs)
    return out, time.perf_counter() - t0


def summarize_times(times):
    """{"times", "median", "min"} of a list of seconds."""
    t = [float(x) for x in times]
    return {"times": t, "median": float(np.median(t)), "min": float(np.min(t))}


# ---------------------------------------------------------------- reference
def certify_reference(primals, duals, threshold=REF_CERT):
    """The reference of a cell from every primal and dual value seen.

    ``primals`` and ``duals`` map a run's name to its value (non-finite
    values are ignored).  The reference is the lowest primal (an upper bound
    on ``P*``) and the highest dual (a lower bound); it is ``certified``
    when ``(primal - dual) / |primal| <= threshold``.
    """
    P = {k: float(v) for k, v in primals.items() if v is not None and np.isfinite(v)}
    D = {k: float(v) for k, v in duals.items() if v is not None and np.isfinite(v)}
    if not P or not D:
        return {"primal": None, "dual": None, "primal_from": None, "dual_from": None,
                "rel_gap": None, "certified": False, "threshold": threshold}
    p_from = min(P, key=P.get)
    d_from = max(D, key=D.get)
    p, d = P[p_from], D[d_from]
    rel = max((p - d) / max(abs(p), 1e-300), 0.0)
    return {"primal": p, "dual": d, "primal_from": p_from, "dual_from": d_from,
            "rel_gap": rel, "certified": bool(rel <= threshold), "threshold": threshold}


def rel_subopt(primal, ref):
    """``(primal - P*) / |P*|``, or None when the reference is not certified."""
    if ref is None or not ref.get("certified"):
        return None
    return (float(primal) - ref["primal"]) / abs(ref["primal"])


# --------------------------------------------------------- tolerance search
def search_tolerance(run, tolerances, subopt, target=TARGET, cap=None, stop=None,
                     deadline=None, give_up_after=None):
    """Find the loosest tolerance whose fit reaches ``subopt <= target``.

    ``run(tol) -> (coef, seconds, info)`` is one complete timed fit;
    ``subopt(coef)`` its relative primal sub-optimality.  Tolerances are
    tried in the order given (loosest first) and the search stops at the
    first that reaches the target.  It gives up when a fit took more than
    ``cap`` seconds or all fits together more than ``3 cap``, or when
    ``stop(info)`` returns a reason (e.g. an iteration cap that a smaller
    tolerance cannot lift), or when ``time.perf_counter()`` has passed
    ``deadline`` before a fit (a time budget; ``"cut"`` is then True), or
    when the last fit took longer than ``give_up_after`` seconds (a tighter
    tolerance takes at least as long, so the peer cannot beat the time that
    number stands for).

    Returns ``{"reached", "tol", "seconds", "rel_subopt", "best_subopt",
    "tried", "reason", "coef", "info", "at_loosest"}``: on success ``tol``,
    ``seconds`` (the fit at that tolerance), ``rel_subopt`` and ``info``
    describe the chosen fit, and ``at_loosest`` says the first tolerance of
    the list already reached it (a looser one, not tried, might too);
    ``tried`` lists every fit.
    """
    tried, best, spent = [], np.inf, 0.0
    reason = "no tolerance in the list reaches it"
    for tol in tolerances:
        if deadline is not None and tried and time.perf_counter() > deadline:
            return {"reached": False, "tol": None, "seconds": None, "rel_subopt": None,
                    "best_subopt": best, "tried": tried, "coef": None, "info": {},
                    "at_loosest": False, "cut": True,
                    "reason": "search cut: the data set's time budget is spent"}
        coef, secs, info = run(tol)
        s = float(subopt(coef))
        tried.append({"tol": tol, "seconds": secs, "rel_subopt": s, **(info or {})})
        best = min(best, s)
        spent += secs
        if s <= target:
            return {"reached": True, "tol": tol, "seconds": secs, "rel_subopt": s,
                    "best_subopt": best, "tried": tried, "reason": "", "coef": coef,
                    "info": info or {}, "at_loosest": len(tried) == 1}
        why = stop(info) if stop is not None else None
        if why:
            reason = why
            break
        if give_up_after is not None and secs > give_up_after:
            reason = (f"stopped: its fit took {secs:.3g} s, over {give_up_after:.3g} s "
                      "(the repeat factor times the fastest peer so far)")
            break
        if cap is not None and (secs > cap or spent > 3 * cap):
            reason = f"search stopped at the time cap ({cap:g} s per fit, {3 * cap:g} s in all)"
            break
    return {"reached": False, "tol": None, "seconds": None, "rel_subopt": None,
            "best_subopt": best, "tried": tried, "reason": reason, "coef": None, "info": {},
            "at_loosest": False}


# ------------------------------------------------------------ peer variants
@dataclass
class Variant:
    """One peer solver: ``fit(X, y, loss, lam, tol, seed) -> (coef, info)`` is
    the whole public call (the caller times it)."""

    group: str                 # the peer as named in the table ("LIBLINEAR", ...)
    name: str                  # this variant ("LIBLINEAR -s 1", ...)
    losses: tuple
    tolerances: tuple
    fit: object
    status: object = None      # callable -> None or the reason it cannot run
    stop: object = None        # callable(info) -> reason to stop the search, or None
    setting: str = ""          # how lam and tol map to the library, for the report
    version: object = None
    extra: dict = field(default_factory=dict)


def _loss_obj(loss_name):
    return primaldual.make_loss(loss_name)


_TRON_RE = re.compile(r"^iter\s+(\d+)", re.MULTILINE)


def _liblinear_fit(s):
    def fit(X, y, loss, lam, tol, seed):
        log = []
        coef, its, _ = PEERS["liblinear"].train(X, y, _loss_obj(loss), lam, tol, seed, s=s,
                                                log=log)
        text = "".join(log)
        info = {"iter": its}
        newton = [int(m) for m in _TRON_RE.findall(text)]
        if newton:                      # primal Newton iterations (-s 0, -s 2, fallback)
            info["newton_iter"] = newton[-1]
        if "Switching to use" in text:
            info["fallback"] = text.split("Switching to use", 1)[1].split("\n")[0].strip()
        if "reaching max number of iterations" in text:
            info["capped"] = True
        return coef, info
    return fit


def _liblinear_stop(info):
    if info.get("capped") and "fallback" not in info:
        return (f"hit LIBLINEAR's cap of {PEERS['liblinear'].max_iter} outer iterations "
                "(a smaller -e cannot go further)")
    return None


def _snapml_fit(X, y, loss, lam, tol, seed):
    est = snapml_estimator(loss, lam, X.shape[0], tol=tol, max_iter=SNAPML_MAX_ITER,
                           seed=seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(X, y)
    n_iter = getattr(est, "n_iter_", None)
    info = {} if n_iter is None else {"iter": int(np.max(np.atleast_1d(n_iter)))}
    if info.get("iter", 0) >= SNAPML_MAX_ITER:
        info["capped"] = True
    return snapml_coef(est), info


def _sklearn_logistic(solver, max_iter):
    def fit(X, y, loss, lam, tol, seed):
        from sklearn.exceptions import ConvergenceWarning
        from sklearn.linear_model import LogisticRegression
        est = LogisticRegression(solver=solver, C=1.0 / (lam * X.shape[0]),
                                 fit_intercept=False, tol=tol, max_iter=max_iter,
                                 random_state=seed)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            est.fit(X, y)
        its = int(np.max(np.atleast_1d(est.n_iter_)))
        return (np.asarray(est.coef_, dtype=np.float64).ravel().copy(),
                {"iter": its, **({"capped": True} if its >= max_iter else {})})
    return fit


def _lightning_fit(X, y, loss, lam, tol, seed):
    from lightning.classification import SDCAClassifier
    est = SDCAClassifier(alpha=lam, l1_ratio=0.0, loss=loss, max_iter=ITER_CAP, tol=tol,
                         random_state=seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(X, y)
    return np.asarray(est.coef_, dtype=np.float64).ravel().copy(), {}


def _capped(info):
    if info.get("capped"):
        return f"reached its max_iter={ITER_CAP}"
    return None


#: iteration cap given to the peers whose cap is a parameter (Snap ML's default)
ITER_CAP = 1000
SNAPML_MAX_ITER = ITER_CAP


def peer_variants(loss_name):
    """The peer solvers timed for ``loss_name``, in table order."""
    ll = PEERS["liblinear"]
    out = []
    for s in LIBLINEAR_SOLVERS.get(loss_name, ()):
        out.append(Variant(
            group="LIBLINEAR", name=f"LIBLINEAR -s {s}", losses=(loss_name,),
            tolerances=decades(10.0, 1e-10), fit=_liblinear_fit(s), status=ll.status,
            stop=_liblinear_stop, version=ll.version,
            setting=f"-s {s} -c 1/(lam n) -B -1 -e tol"))
    sn = PEERS["snapml"]
    if loss_name in sn.losses:
        est = "LogisticRegression(dual=True)" if loss_name == "logistic" else \
            f"SupportVectorMachine(loss={loss_name!r})"
        out.append(Variant(
            group="Snap ML", name="Snap ML", losses=(loss_name,),
            tolerances=decades(1.0, 1e-10), fit=_snapml_fit, status=sn.status,
            stop=_capped, version=sn.version,
            setting=f"{est}, regularizer=lam n, n_jobs=1, fit_intercept=False, "
                    f"max_iter={SNAPML_MAX_ITER}, tol"))
    if loss_name == "logistic":
        sk = PEERS["sklearn-saga"]
        out.append(Variant(
            group="sklearn L-BFGS", name="sklearn L-BFGS", losses=("logistic",),
            tolerances=decades(1e-1, 1e-12), fit=_sklearn_logistic("lbfgs", ITER_CAP),
            status=sk.status, stop=_capped, version=sk.version,
            setting=f"LogisticRegression(solver='lbfgs', C=1/(lam n), fit_intercept=False, "
                    f"max_iter={ITER_CAP}, tol)"))
        out.append(Variant(
            group="sklearn SAGA", name="sklearn SAGA", losses=("logistic",),
            tolerances=decades(1.0, 1e-10), fit=_sklearn_logistic("saga", ITER_CAP),
            status=sk.status, stop=_capped, version=sk.version,
            setting=f"LogisticRegression(solver='saga', C=1/(lam n), fit_intercept=False, "
                    f"max_iter={ITER_CAP}, tol)"))
    lt = PEERS["lightning-sdca"]
    if loss_name in ("hinge", "squared_hinge"):
        out.append(Variant(
            group="lightning SDCA", name="lightning SDCA", losses=(loss_name,),
            tolerances=decades(1.0, 1e-10), fit=_lightning_fit, status=lt.status,
            version=lt.version,
            setting=f"SDCAClassifier(alpha=lam, l1_ratio=0, max_iter={ITER_CAP}, tol)"))
    return out
