"""Run a benchmark grid: references, our solvers and peers, traces on disk.

For every (dataset, loss, lam) of an experiment that wants one, a reference
optimum ``P*`` is computed once (:func:`compute_reference`) and shared by
every solver and peer of every experiment.  Each run's trace is a list of
records ``{epoch, time, primal, dual, gap, rel_gap, subopt, rel_subopt,
dual_subopt, rel_dual_subopt, certified_subopt, test_error}``, all evaluated
with OUR objective (:class:`primaldual.Problem`) on the same data:

- our solvers, with the experiment's ``timing="trace"`` (the default), record
  their exact certificate at every check (``time`` is the solver's wall time,
  exact gap checks included); with ``timing="refit"`` they are timed as the
  peers are: one fresh ``primaldual.solve`` call per epoch budget, ``time`` the
  wall time of that whole call, the test error computed outside it.  Each
  solver first runs once on a 64-row slice of the same data (:func:`warm_up`)
  so that Numba's compile time is not in its first timed run;
- peers are refitted with growing budgets (:mod:`.peers`); their certificate
  uses ``alpha_i = -phi'(x_i . w)`` like every primal method (docs/conventions.md §1), and
  ``time`` is the wall time of the fit that produced the point.

``rel_subopt`` is ``(P(w) - P_ref) / |P_ref|`` against the lowest primal value
seen (an upper bound on ``P*``); ``certified_subopt`` is the relative duality gap
``(P(w) - D_ref) / max(|P(w)|, 1e-12)`` of ``w`` against the highest dual value
``D_ref`` that our certificate computed in any run of the same (dataset, loss,
lam): since ``D_ref <= P*``, it bounds ``(P(w) - P*) / |P(w)|`` from above for
every run, ours and the peers' alike.

A run stops at ``max_epochs``, at ``time_limit``, or when its relative gap
or relative primal sub-optimality falls below the experiment's ``tol``.

Identical runs requested by several experiments are computed once.
"""
from __future__ import annotations

import json
import sys
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

import primaldual

from .._extras import NullBar, have, require
from .config import TIMINGS, BenchConfig, LossSpec, ReferenceSettings, _label_safe
from .splits import BenchData, load_data
from .peers import PEERS, budget_schedule
from . import report
from .plots import plot_experiments

__all__ = ["Reference", "RunResult", "BenchResult", "compute_reference",
           "refine_references", "run_bench", "run_id_for", "warm_up", "certified_subopt"]


@dataclass
class Reference:
    """The reference optimum of one (dataset, loss, lam).

    ``primal`` is the lowest primal value found (an upper bound on ``P*``),
    ``dual`` the highest certified lower bound (the SDCA run's, then any
    run's: :func:`refine_references`), ``method`` which solver produced
    ``primal`` and ``rel_gap`` the certified relative width
    ``(primal - dual) / |primal|``: sub-optimalities below it are not
    resolved.
    """

    dataset: str
    loss: str
    lam: float
    primal: float
    dual: float
    method: str
    rel_gap: float
    epochs: float
    time: float
    candidates: dict = field(default_factory=dict)

    def to_dict(self):
        return {k: getattr(self, k) for k in ("dataset", "loss", "lam", "primal", "dual",
                                              "method", "rel_gap", "epochs", "time",
                                              "candidates")}


@dataclass
class RunResult:
    """One run: its identity, status and trace."""

    run_id: str
    experiment: str
    dataset: str
    loss: str
    loss_name: str
    loss_params: dict
    lam: float
    solver: str
    solver_name: str
    kind: str
    options: dict
    seed: int
    status: str              # "ok", "skipped" (unsupported / not installed) or "error"
    reason: str
    trace: list
    data: dict
    reference: Reference | None

    def summary(self, targets) -> dict:
        return report.summarize_run(self, targets)


@dataclass
class BenchResult:
    """Everything a benchmark produced (also written to ``out_dir``)."""

    config: BenchConfig
    runs: list
    references: dict
    meta: dict
    out_dir: Path
    summaries: list = field(default_factory=list)
    plots: list = field(default_factory=list)

    def runs_of(self, experiment):
        return [r for r in self.runs if r.experiment == experiment]


def run_id_for(exp, dspec, lspec, lam, sspec, seed):
    return _label_safe(f"{exp}__{dspec.display}__{lspec.display}__lam{lam:g}__"
                       f"{sspec.display}__s{seed}")


# --------------------------------------------------------------- reference
def compute_reference(data: BenchData, loss: LossSpec, lam: float,
                      settings: ReferenceSettings) -> Reference:
    """A tight SDCA run (certified) and, when possible, LIBLINEAR; keep the lower primal."""
    t0 = time.perf_counter()
    res = primaldual.solve(data.X, data.y, loss=loss.name, loss_params=loss.params_dict or None,
                           lam=lam, solver="sdca", tol=settings.tol,
                           max_epochs=settings.max_epochs, random_state=0)
    cands = {"sdca": {"primal": res.primal, "dual": res.dual,
                      "rel_gap": res.gap / max(abs(res.primal), 1e-12),
                      "epochs": res.n_epochs, "time": res.time}}
    primal, method = res.primal, "sdca"
    lib = PEERS["liblinear"]
    prob = primaldual.Problem(data.X, data.y, loss=loss.name,
                              loss_params=loss.params_dict or None, lam=lam)
    if (settings.liblinear and lib.status() is None and lib.unsupported(prob.loss) is None
            and cands["sdca"]["rel_gap"] > settings.tol):
        coef, its, secs = lib.train(data.X, data.y, prob.loss, lam, settings.liblinear_eps, 0)
        p_ll = prob.primal(coef)
        cands["liblinear"] = {"primal": p_ll, "eps": settings.liblinear_eps, "iter": its,
                              "time": secs}
        if p_ll < primal:
            primal, method = p_ll, "liblinear"
    rel = (primal - res.dual) / max(abs(primal), 1e-12)
    return Reference(dataset=data.spec.display, loss=loss.display, lam=lam, primal=primal,
                     dual=res.dual, method=method, rel_gap=max(rel, 0.0),
                     epochs=res.n_epochs, time=time.perf_counter() - t0, candidates=cands)


def refine_references(runs):
    """Tighten each reference with what the runs certified; returns the ids of
    the runs whose traces changed.

    The reference run can stop before the optimum (at small lam it hits its
    epoch budget), and then some runs go below its primal value: their
    sub-optimality would be negative and vanish from a log plot.  Every run's
    primal value is an upper bound on ``P*`` and every certified dual value a
    lower bound, so the reference takes the lowest primal and the highest dual
    seen in any run of its (dataset, loss, lam) (``candidates["runs"]``
    names the run that improved the primal); the sub-optimalities of all
    those runs are then recomputed.
    """
    changed = []
    by_ref = {}
    for run in runs:
        if run.reference is not None:
            by_ref.setdefault(id(run.reference), (run.reference, []))[1].append(run)
    for ref, group in by_ref.values():
        best_p, best_d, who = ref.primal, ref.dual, None
        for run in group:
            for rec in run.trace:
                p, d = rec.get("primal"), rec.get("dual")
                if p is not None and np.isfinite(p) and p < best_p:
                    best_p, who = p, run.run_id
                if d is not None and np.isfinite(d) and d > best_d:
                    best_d = d
        if best_p >= ref.primal and best_d <= ref.dual:
            continue
        if who is not None:
            ref.candidates["runs"] = {"primal": best_p, "run_id": who}
        ref.primal, ref.dual = best_p, max(best_d, ref.dual)
        ref.rel_gap = max((ref.primal - ref.dual) / max(abs(ref.primal), 1e-12), 0.0)
        for run in group:
            run.trace = [_enrich(dict(rec), ref) for rec in run.trace]
            changed.append(run.run_id)
    return changed


# -------------------------------------------------------------------- runs
def _enrich(rec, ref):
    if ref is None:
        return rec
    scale = max(abs(ref.primal), 1e-12)
    rec["subopt"] = rec["primal"] - ref.primal
    rec["rel_subopt"] = rec["subopt"] / scale
    rec["dual_subopt"] = ref.primal - rec["dual"]
    rec["rel_dual_subopt"] = rec["dual_subopt"] / scale
    rec["certified_subopt"] = certified_subopt(rec["primal"], ref.dual)
    return rec


def certified_subopt(primal, best_dual):
    """``(P(w) - D) / max(|P(w)|, 1e-12)``: the relative duality gap of ``w`` with the
    best certified dual value ``D`` (``D <= P*``), an upper bound on ``w``'s relative
    sub-optimality ``(P(w) - P*) / |P(w)|``."""
    return (primal - best_dual) / max(abs(primal), 1e-12)


def _done(rec, tol):
    return rec["rel_gap"] <= tol or rec.get("rel_subopt", np.inf) <= tol


#: options that touch files or state outside the run: left out of a warm-up
_NOT_IN_WARM_UP = ("checkpoint", "checkpoint_every", "resume", "warm_start", "progress",
                   "time_limit")
_WARMED: set = set()


def _warm_slice(X, y, rows=64):
    """``rows`` rows of the same data (same format and dtype), both labels
    when it is a classification set."""
    labels = np.unique(y)
    if labels.size == 2 and set(labels.tolist()) <= {-1.0, 1.0}:
        idx = np.sort(np.concatenate([np.flatnonzero(y > 0)[:rows // 2],
                                      np.flatnonzero(y < 0)[:rows // 2]]))
    else:
        idx = np.arange(min(rows, X.shape[0]))
    return X[idx], y[idx]


def warm_up(data, lspec, lam, sspec):
    """Run the solver (or peer) once on a 64-row slice of the same data, so the
    first timed run does not pay Numba's compile time (or a library's first-call
    costs).  Once per solver, loss, options and data format in a process; a
    warm-up that fails is ignored (the real run reports the problem)."""
    X = data.X
    key = (sspec.kind, sspec.name, lspec.name, lspec.params, sspec.options,
           type(X).__name__, str(getattr(X, "dtype", "")))
    if key in _WARMED:
        return
    _WARMED.add(key)
    Xs, ys = _warm_slice(X, data.y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            if sspec.kind == "peer":
                prob = primaldual.Problem(Xs, ys, loss=lspec.name,
                                          loss_params=lspec.params_dict or None, lam=lam)
                for _ in PEERS[sspec.name].trace(Xs, ys, prob.loss, lam, 0, 1):
                    break
            else:
                opts = {k: v for k, v in sspec.options_dict.items()
                        if k not in _NOT_IN_WARM_UP}
                primaldual.solve(Xs, ys, loss=lspec.name,
                                 loss_params=lspec.params_dict or None, lam=lam,
                                 solver=sspec.name, tol=1e-3, max_epochs=2, random_state=0,
                                 **opts)
        except Exception:             # noqa: BLE001 -- see the docstring
            pass


def _run_ours(data, lspec, lam, sspec, seed, exp, ref):
    warm_up(data, lspec, lam, sspec)

    def cb(snap):
        return _done(_enrich(dict(snap), ref), exp.tol)

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = primaldual.solve(
            data.X, data.y, loss=lspec.name, loss_params=lspec.params_dict or None,
            lam=lam, solver=sspec.name, tol=exp.tol, max_epochs=exp.max_epochs,
            random_state=seed, eval_set=data.eval_set, callback=cb,
            check_every=exp.check_every, time_limit=exp.time_limit, **sspec.options_dict)
    trace = []
    for rec in res.trace:
        r = {k: (float(v) if isinstance(v, (int, float, np.floating, np.integer))
                 and not isinstance(v, bool) else v) for k, v in rec.items()}
        trace.append(_enrich(r, ref))
    # solver warnings (e.g. ConvergenceWarning) are kept with the run, not printed
    notes = sorted({str(w.message).splitlines()[0] for w in caught})
    return trace, {"stop_reason": getattr(res, "stop_reason", ""),
                   "options_used": res.options, **({"warnings": notes} if notes else {})}


def _test_score(data, classification, w):
    """{"test_error"} or {"test_rmse"} of ``w`` on the held-out rows (or {})."""
    if data.X_test is None:
        return {}
    score = np.asarray(data.X_test @ w).ravel()
    if classification:
        return {"test_error": float(np.mean(np.where(score > 0, 1.0, -1.0) != data.y_test))}
    return {"test_rmse": float(np.sqrt(np.mean((score - data.y_test) ** 2)))}


def _run_ours_refit(data, lspec, lam, sspec, seed, exp, ref):
    """Our solver timed as the peers are (:meth:`.peers.Peer.trace`): a fresh
    ``primaldual.solve`` call for each budget of :func:`.peers.budget_schedule`,
    ``time`` the wall time of that whole call (the Problem built inside it and the
    solver's own gap checks included; its result's primal, dual and gap are exact
    for the pair it returns), the test error evaluated outside the timing.  Stops
    as a peer's trace does: at the experiment's ``tol``, at ``max_epochs``, when a
    fit ends before its budget (it converged to ``tol`` on its own gap), or once a
    fit took ``time_limit``.  Each fit also gets ``time_limit`` as its own: it
    returns its best certified model when the time is up, where a peer's fit,
    which cannot be stopped, runs on past it."""
    warm_up(data, lspec, lam, sspec)
    classification = primaldual.make_loss(lspec.name, lspec.params_dict or None).classification
    trace, notes, stop_reason, options = [], set(), "", {}
    for budget in budget_schedule(exp.max_epochs):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            t0 = time.perf_counter()
            res = primaldual.solve(
                data.X, data.y, loss=lspec.name, loss_params=lspec.params_dict or None,
                lam=lam, solver=sspec.name, tol=exp.tol, max_epochs=budget,
                random_state=seed, time_limit=exp.time_limit, **sspec.options_dict)
            elapsed = time.perf_counter() - t0
        notes |= {str(w.message).splitlines()[0] for w in caught}
        stop_reason, options = getattr(res, "stop_reason", ""), res.options
        # primal, dual and gap of a SolveResult are exact for the pair it returns
        rec = {"epoch": float(res.n_epochs), "time": elapsed, "primal": float(res.primal),
               "dual": float(res.dual), "gap": float(res.gap),
               "rel_gap": float(res.gap) / max(abs(float(res.primal)), 1e-12),
               "budget": float(budget), **_test_score(data, classification, res.coef)}
        trace.append(_enrich(rec, ref))
        if (_done(rec, exp.tol) or res.n_epochs < budget - 1e-9
                or res.n_epochs >= exp.max_epochs - 1e-9):
            break
        if exp.time_limit is not None and elapsed >= exp.time_limit:
            break
    return trace, {"stop_reason": stop_reason, "options_used": options,
                   **({"warnings": sorted(notes)} if notes else {})}


def _run_peer(data, lspec, lam, sspec, seed, exp, ref):
    peer = PEERS[sspec.name]
    warm_up(data, lspec, lam, sspec)
    prob = primaldual.Problem(data.X, data.y, loss=lspec.name,
                              loss_params=lspec.params_dict or None, lam=lam)
    trace = []
    for pt in peer.trace(data.X, data.y, prob.loss, lam, seed, exp.max_epochs):
        cert = prob.primal_certificate(pt.coef)
        rec = {"epoch": pt.epochs, "time": pt.time, "primal": cert.primal, "dual": cert.dual,
               "gap": cert.gap, "rel_gap": cert.rel_gap}
        if pt.extra:
            rec.update(pt.extra)
        rec.update(_test_score(data, prob.loss.classification, cert.w))
        trace.append(_enrich(rec, ref))
        if _done(rec, exp.tol) or pt.epochs >= exp.max_epochs:
            break
        if exp.time_limit is not None and pt.time >= exp.time_limit:
            break
    return trace, {"peer_version": peer.version()}


def _execute(data, lspec, lam, sspec, seed, exp, ref):
    """(status, reason, trace, extra) of one run; unsupported combinations are skipped."""
    if sspec.kind == "peer":
        peer = PEERS[sspec.name]
        why = peer.status()
        if why:
            return "skipped", why, [], {}
        prob_loss = primaldual.make_loss(lspec.name, lspec.params_dict or None)
        why = peer.unsupported(prob_loss)
        if why:
            return "skipped", why, [], {}
        runner = _run_peer
    else:
        if sspec.name not in primaldual.SOLVERS:
            return "skipped", f"solver {sspec.name!r} is not in this version of primaldual", \
                [], {}
        if exp.timing not in TIMINGS:
            raise ValueError(f"experiment {exp.name!r}: timing must be one of "
                             f"{', '.join(TIMINGS)}, got {exp.timing!r}")
        runner = _run_ours_refit if exp.timing == "refit" else _run_ours
    try:
        trace, extra = runner(data, lspec, lam, sspec, seed, exp, ref)
    except ValueError as e:          # unsupported loss / option / needs a client
        return "skipped", str(e).splitlines()[0], [], {}
    except FloatingPointError as e:
        return "error", str(e).splitlines()[0], [], {}
    return "ok", "", trace, extra


def _signature(dspec, lspec, lam, sspec, seed, exp):
    return (dspec.key(), lspec.name, lspec.params, lam, sspec.kind, sspec.name,
            sspec.options, seed, exp.max_epochs, exp.tol, exp.check_every, exp.time_limit,
            exp.reference, exp.timing)


def _progress(total, quiet):
    disable = quiet or not sys.stderr.isatty()
    if disable and not have("tqdm"):
        return NullBar()
    tqdm = require("tqdm.auto", "the progress bar (--quiet goes without)").tqdm
    return tqdm(total=total, desc="bench", unit="run", file=sys.stderr, disable=disable,
                dynamic_ncols=True, leave=False)


def run_bench(config: BenchConfig, out_dir, *, quiet=False, plots=True, argv=None,
              figures=None, blas_threads=1, admit=None) -> BenchResult:
    """Run every experiment of ``config``, write results to ``out_dir`` and return them.

    Parameters
    ----------
    config : BenchConfig
    out_dir : path
        Receives ``meta.json``, ``config.json``, ``references.json``,
        ``traces/<run_id>.jsonl`` (one JSON record per line, with its
        ``run_id``), ``runs.jsonl``, ``summary.json``, ``summary.md`` and
        ``plots/*.png``.
    quiet : bool
        No progress bar (it is also off when stderr is not a terminal).
    plots : bool
        Draw the experiments' plots (and ``figures``).
    argv : list, optional
        The command line, recorded in ``meta.json``.
    figures : callable, optional
        ``figures(result, out_dir) -> list of paths``: a preset's own figures.
    admit : callable, optional
        ``admit(data, loss_spec, lam, solver_spec) -> None or reason``: a run
        whose call returns a reason is not executed and is recorded as
        ``"skipped"`` with that reason (e.g. a solver whose one iteration is
        unaffordable on that data set).
    blas_threads : int or None
        BLAS threads during the runs (threadpoolctl).  The default 1 compares
        single-threaded solvers fairly and avoids OpenBLAS's thread wake-up
        latency on a loaded machine, which can make a 50k-element dot product
        take tens of milliseconds; None leaves the library default.
    """
    from threadpoolctl import threadpool_limits
    with threadpool_limits(limits=blas_threads):
        return _run_bench(config, out_dir, quiet=quiet, plots=plots, argv=argv,
                          figures=figures, blas_threads=blas_threads, admit=admit)


def _run_bench(config, out_dir, *, quiet, plots, argv, figures, blas_threads, admit):
    out_dir = Path(out_dir)
    (out_dir / "traces").mkdir(parents=True, exist_ok=True)
    started = time.time()
    meta = report.environment(config, argv)
    meta["blas_threads"] = blas_threads
    grid = []
    for exp in config.experiments:
        for dspec in exp.datasets:
            for lspec in exp.losses:
                for lam in exp.lams:
                    for sspec in exp.solvers:
                        for seed in config.seeds:
                            grid.append((exp, dspec, lspec, lam, sspec, seed))
    references: dict = {}
    cache: dict = {}
    runs = []
    bar = _progress(len(grid), quiet)
    try:
        for exp, dspec, lspec, lam, sspec, seed in grid:
            bar.set_postfix_str(f"{exp.name} {dspec.display} {lspec.display} "
                                f"lam={lam:g} {sspec.display}", refresh=False)
            data = load_data(dspec)
            ref = None
            if exp.reference:
                rkey = (dspec.key(), lspec.name, lspec.params, lam)
                if rkey not in references:
                    references[rkey] = compute_reference(data, lspec, lam, config.reference)
                ref = references[rkey]
            sig = _signature(dspec, lspec, lam, sspec, seed, exp)
            if sig not in cache:
                why = admit(data, lspec, lam, sspec) if admit is not None else None
                cache[sig] = (("skipped", why, [], {}) if why else
                              _execute(data, lspec, lam, sspec, seed, exp, ref))
            status, reason, trace, extra = cache[sig]
            rid = run_id_for(exp.name, dspec, lspec, lam, sspec, seed)
            run = RunResult(
                run_id=rid, experiment=exp.name, dataset=dspec.display, loss=lspec.display,
                loss_name=lspec.name, loss_params=lspec.params_dict, lam=lam,
                solver=sspec.display, solver_name=sspec.name, kind=sspec.kind,
                options=dict(sspec.options_dict, **({"_": extra} if extra else {})),
                seed=seed, status=status, reason=reason, trace=[dict(r) for r in trace],
                data=data.describe(), reference=ref)
            runs.append(run)
            with open(out_dir / "traces" / f"{rid}.jsonl", "w") as fh:
                for rec in run.trace:
                    fh.write(json.dumps(dict(rec, run_id=rid), default=_json_default) + "\n")
            bar.update(1)
    finally:
        bar.close()
    for rid in refine_references(runs):
        run = next(r for r in runs if r.run_id == rid)
        with open(out_dir / "traces" / f"{rid}.jsonl", "w") as fh:
            for rec in run.trace:
                fh.write(json.dumps(dict(rec, run_id=rid), default=_json_default) + "\n")
    meta["finished_unix"] = time.time()
    meta["wall_seconds"] = meta["finished_unix"] - started
    result = BenchResult(config=config, runs=runs, references=references, meta=meta,
                         out_dir=out_dir)
    result.summaries = [r.summary(config.targets) for r in runs]
    report.write_outputs(result)
    if plots:
        result.plots = plot_experiments(result)
        if figures is not None:
            result.plots += list(figures(result, out_dir) or [])
    return result


def _json_default(o):
    if isinstance(o, (np.floating, np.integer)):
        return o.item()
    if isinstance(o, np.ndarray):
        return o.tolist()
    return str(o)
