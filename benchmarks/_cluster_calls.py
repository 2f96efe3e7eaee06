"""The cluster model's check on a real 2-worker LocalCluster, term by term
(``bench_cluster_model.py --validate``; issue 34, item 4).

A distributed Newton-CG or DiSCO fit on Dask is a sequence of calls of
:class:`~primaldual.distributed.newton_rounds.DaskNewtonData`, each a round
trip from the client to every partition's actor, plus (DiSCO with
``preconditioner="first"``) the driver's own work on its copy of partition 0,
which runs on the client while the workers wait.  The model of its wall time
(``result.time``: after the data is placed and the first point evaluated) is

    T = n_eval * t_eval + n_hv * t_hv + n_use * t_use + n_line * t_line
        + n_dual * t_dual + [DiSCO first] n_pre * t_pre + n_point * t_point + t_setup
        + t_client

with the counts from the in-process run with the same partitions (the same
iterates, so the same calls) and every ``t`` measured separately, before the
fit, by micro-benchmarks of the engine's own calls on a *different* sample of
the shape (:func:`engine_call_costs`, :func:`driver_costs`):

* ``t_call(m) = t_call(tiny) + c_call * m``: the call on two partitions of
  ``TINY`` rows (the fixed cost: messages, the ``d``-vectors each way, the
  scheduler's proxy, the client's sum) and on two larger ones; ``c_call`` is
  the slope per stored entry (``evaluate``, ``hess_vec``) or row (``dual``,
  ``line_derivatives``) of the larger partition, as the two workers compute
  at once on this machine (their contention for its 2 cores included);
* ``t_pre``, ``t_point``: partition 0's preconditioner application and its
  evaluation at a new point (with the coarse factorization there), and
  the choice of its coarse columns (once a fit), in this process;
* ``t_client``: the in-process run's time outside the partitions' passes
  (the driver's vector work between calls, which the client does on Dask too).

No constant comes from a validation fit.
"""
from __future__ import annotations

import os
import statistics
import time

import numpy as np

from primaldual import solve
from primaldual.distributed.partition_set import place_problem
from primaldual.distributed.newton_block import NewtonBlock, contiguous_partitions
from primaldual.distributed.newton_rounds import DaskNewtonData
from primaldual.problem import Problem

#: rows of each of the two partitions of the fixed-cost calls
TINY = 250
CALLS = ("evaluate", "hess_vec", "use", "line", "dual")


def _timed_calls(data, d, reps, seed=0):
    """Median seconds of each kind of call of ``data`` (rounds interleaved,
    so a change of the machine's load hits every kind alike)."""
    rng = np.random.default_rng(seed)
    w0 = 0.01 * rng.standard_normal(d)
    w1 = w0 + 0.01 * rng.standard_normal(d)
    v = rng.standard_normal(d)
    data.evaluate(w0, 0)
    data.use(0)
    data.evaluate(w1, 1)
    calls = {"evaluate": lambda: data.evaluate(w1, 1), "hess_vec": lambda: data.hess_vec(v),
             "use": lambda: data.use(0), "line": lambda: data.line_derivatives(0.5),
             "dual": data.dual}
    ts = {k: [] for k in calls}
    for _ in range(reps):
        for k, f in calls.items():
            t = time.perf_counter()
            f()
            ts[k].append(time.perf_counter() - t)
    return {k: statistics.median(v) for k, v in ts.items()}


def _install_timer():
    """On a worker: time every ``NewtonBlock.hess_vec`` (wall and the thread's
    CPU seconds) until :func:`_remove_timer` (a diagnostic of this benchmark)."""
    import builtins
    from primaldual.distributed import newton_block as nb
    builtins._cluster_model_times = []
    if not hasattr(nb.NewtonBlock, "_untimed_hess_vec"):
        nb.NewtonBlock._untimed_hess_vec = nb.NewtonBlock.hess_vec

        def timed(self, v):
            c, t = time.thread_time(), time.perf_counter()
            out = nb.NewtonBlock._untimed_hess_vec(self, v)
            builtins._cluster_model_times.append(
                (int(self.rows.nnz), time.perf_counter() - t, time.thread_time() - c))
            return out
        nb.NewtonBlock.hess_vec = timed
    return True


def _remove_timer():
    import builtins
    from primaldual.distributed import newton_block as nb
    if hasattr(nb.NewtonBlock, "_untimed_hess_vec"):
        nb.NewtonBlock.hess_vec = nb.NewtonBlock._untimed_hess_vec
        del nb.NewtonBlock._untimed_hess_vec
    return getattr(builtins, "_cluster_model_times", [])


def cpu_share(client, data, prob, ptr, reps=7, seed=1):
    """``hess_vec`` in ns per stored entry: wall and CPU on each worker (both
    computing at once), and in this process on the same rows; CPU/wall is the
    share of a core each got."""
    rng = np.random.default_rng(seed)
    client.run(_install_timer)
    try:
        for _ in range(reps):
            data.hess_vec(rng.standard_normal(prob.d))
    finally:
        times = client.run(_remove_timer)
    out = {"worker_wall": [], "worker_cpu": []}
    for rec in times.values():
        out["worker_wall"].append(1e9 * statistics.median(t / m for m, t, _ in rec))
        out["worker_cpu"].append(1e9 * statistics.median(c / m for m, _, c in rec))
    blk = NewtonBlock(prob.rows, prob.y, prob.sample_weight, ptr, prob.loss.code,
                      prob.loss.param, prob.W)
    blk.evaluate(0.01 * rng.standard_normal(prob.d), 0)
    wall, cpu = [], []
    for _ in range(reps):
        v = rng.standard_normal(prob.d)
        c, t = time.thread_time(), time.perf_counter()
        blk.hess_vec(v)
        wall.append(time.perf_counter() - t)
        cpu.append(time.thread_time() - c)
    out["process_wall"] = 1e9 * statistics.median(wall) / prob.nnz
    out["process_cpu"] = 1e9 * statistics.median(cpu) / prob.nnz
    return out


def engine_call_costs(client, X, y, reps=9):
    """Fixed cost and slope of every call of the Dask Newton engine on
    ``client``'s two workers, from partitions of ``X``'s first ``2 TINY`` rows
    and of all of ``X`` (module docstring)."""
    out = {}
    for tag, rows in (("tiny", 2 * TINY), ("big", X.shape[0])):
        prob = Problem(X[:rows], y[:rows], loss="logistic", lam=1.0 / rows)
        ptr = contiguous_partitions(rows, 2)
        pset = place_problem(prob, ptr, client, 600.0)
        data = DaskNewtonData(pset, ptr, prob.d, 0)
        t = _timed_calls(data, prob.d, reps)
        indptr = prob.rows.indptr
        t["nnz"] = max(int(indptr[ptr[k + 1]] - indptr[ptr[k]]) for k in range(2))
        t["rows"] = int(np.diff(ptr).max())
        out[tag] = t
        if tag == "big":
            share = cpu_share(client, data, prob, ptr)
        del data, pset
    tiny, big = out["tiny"], out["big"]
    costs = {"load": os.getloadavg()[0], "d": int(X.shape[1])}
    for k in CALLS:
        size = "nnz" if k in ("evaluate", "hess_vec") else "rows"
        costs[k] = (tiny[k], max(big[k] - tiny[k], 0.0) / (big[size] - tiny[size]))
    costs["raw"] = out
    costs["share"] = share
    return costs


def driver_costs(X, y, reps=5, sweeps=1, coarse=32, seed=0):
    """DiSCO's driver work in this process on a partition of ``X``'s first
    half: seconds per stored entry of an evaluation at a new point together
    with the first preconditioner application there (the coarse
    factorization), and of a further application."""
    n0 = X.shape[0] // 2
    prob = Problem(X[:n0], y[:n0], loss="logistic", lam=1.0 / X.shape[0])
    lam = prob.lam
    rng = np.random.default_rng(seed)
    blk = NewtonBlock(prob.rows, prob.y, prob.sample_weight, [0, n0], prob.loss.code,
                      prob.loss.param, float(X.shape[0]))
    r = rng.standard_normal(X.shape[1])
    blk.evaluate(np.zeros(X.shape[1]), 0)
    blk.use(0)
    t = time.perf_counter()
    blk.precondition(r, 2 * lam, sweeps, coarse)      # the coarse columns, once a fit
    setup = time.perf_counter() - t
    point, apply_ = [], []
    for _ in range(reps):
        w = 0.01 * rng.standard_normal(X.shape[1])
        t = time.perf_counter()
        blk.evaluate(w, 0)
        blk.use(0)
        blk.precondition(r, 2 * lam, sweeps, coarse)
        point.append(time.perf_counter() - t)
        t = time.perf_counter()
        blk.precondition(r, 2 * lam, sweeps, coarse)
        apply_.append(time.perf_counter() - t)
    nnz0 = int(prob.nnz)
    a = statistics.median(apply_)
    return {"point": (statistics.median(point) - a) / nnz0, "apply": a / nnz0,
            "setup": max(setup - statistics.median(point), 0.0) / nnz0,
            "load": os.getloadavg()[0]}


def client_seconds(fit):
    """``(result, seconds)``: ``fit()`` in this process and the seconds of its
    ``result.time`` spent outside the partitions' passes (every
    :class:`NewtonBlock` method timed): the driver's own vector work (CG
    updates, dot products, the certificate's sums), which a Dask fit does on
    the client too."""
    names = ("evaluate", "use", "hess_vec", "precondition", "line_derivatives", "dual",
             "local_newton", "local_sdca")
    spent = [0.0, False]       # seconds, and whether result.time has started
    saved = {k: getattr(NewtonBlock, k) for k in names}

    def timed(f, name):
        def g(*a, **k):
            # result.time starts just before the first certificate (its dual)
            spent[1] = spent[1] or name == "dual"
            t = time.perf_counter()
            try:
                return f(*a, **k)
            finally:
                spent[0] += (time.perf_counter() - t) if spent[1] else 0.0
        return g
    for k, f in saved.items():
        setattr(NewtonBlock, k, timed(f, k))
    try:
        result = fit()
    finally:
        for k, f in saved.items():
            setattr(NewtonBlock, k, f)
    return result, max(float(result.time) - spent[0], 0.0)


def call_counts(result):
    """The calls of a distributed Newton/DiSCO run, by kind, from its trace
    (in process or on Dask: the same iterates make the same calls); without
    the first evaluation and ``use`` (before ``result.time`` starts)."""
    tr = result.trace[-1]
    hv = int(tr["cg_iter"])
    n_eval = int(tr["reductions"]) - hv
    n_dual = len(result.trace)
    n_use = int(tr["newton_iter"]) + 1
    n_line = int(tr["calls"]) - int(tr["reductions"]) - n_dual - n_use
    out = {"evaluate": n_eval - 1, "hess_vec": hv, "use": n_use - 1, "line": n_line,
           "dual": n_dual}
    if "precond_passes" in tr:
        out["precond_passes"] = float(tr["precond_passes"])
        out["points"] = int(tr["newton_iter"])
    return out


def predict_dask(counts, calls, driver, nnz, n, K=2, first_share=None, sweeps=1,
                 coarse=32):
    """``(seconds, terms)``: the model of the module docstring for a fit of
    ``nnz`` entries, ``n`` rows on ``K`` partitions."""
    part_nnz, part_rows = nnz / K, n / K
    terms = {"fixed": 0.0, "workers": 0.0, "driver": 0.0,
             "client": counts.get("client_s", 0.0)}
    for k in CALLS:
        a, b = calls[k]
        size = part_nnz if k in ("evaluate", "hess_vec") else part_rows
        terms["fixed"] += counts[k] * a
        terms["workers"] += counts[k] * b * size
    if first_share is not None and driver is not None:
        per_apply = 2.0 * sweeps + (2.0 if coarse else 0.0)
        n_apply = counts["precond_passes"] / (per_apply * first_share)
        nnz0 = first_share * nnz
        terms["driver"] = (n_apply * driver["apply"] + counts["points"] * driver["point"]
                           + driver["setup"]) * nnz0
    return sum(terms.values()), terms


def _mean_costs(a, b):
    """The average of two cost measurements (before and after a fit)."""
    if a is None:
        return None
    return {k: (tuple((x + y) / 2 for x, y in zip(a[k], b[k])) if isinstance(a[k], tuple)
                else (a[k] + b[k]) / 2 if isinstance(a[k], float) else a[k])
            for k in a if k not in ("raw", "share")}


def validate_one(client, Xv, yv, Xc, yc, lamn, methods, caps, tag):
    """The model against real fits of ``Xv`` (``lam = lamn / rows``) on
    ``client``; the costs measured on ``Xc`` (another sample) just before and
    just after each fit (the machine's load drifts; the prediction uses their
    mean, and the ones from either side bound it)."""
    out = []
    lam = lamn / Xv.shape[0]
    for m in methods:
        kw = dict(loss="logistic", lam=lam, tol=1e-6, solver=m, n_partitions=2,
                  max_epochs=caps[m])
        solve(Xv[:500], yv[:500], **kw, client=client)                # compile
        local, client_s = client_seconds(lambda: solve(Xv, yv, **kw))
        counts = call_counts(local)
        share = (Xv.shape[0] // 2) / Xv.shape[0] if m == "disco" else None
        sides = []
        for when in ("before", "fit", "after"):
            if when == "fit":
                load0 = os.getloadavg()[0]
                dist = solve(Xv, yv, **kw, client=client)
                load1 = os.getloadavg()[0]
                continue
            sides.append((engine_call_costs(client, Xc, yc),
                          driver_costs(Xc, yc) if m == "disco" else None))
        calls = _mean_costs(sides[0][0], sides[1][0])
        driver = _mean_costs(sides[0][1], sides[1][1])
        counts["client_s"] = client_s
        pred, terms = predict_dask(counts, calls, driver, Xv.nnz, Xv.shape[0],
                                   first_share=share)
        either = [predict_dask(counts, c, dr, Xv.nnz, Xv.shape[0], first_share=share)[0]
                  for c, dr in sides]
        tr = dist.trace[-1]
        out.append({"config": tag, "method": m, "lamn": lamn, "rows": Xv.shape[0],
                    "d": Xv.shape[1], "nnz": int(Xv.nnz), "in_process_s": float(local.time),
                    "predicted_s": pred, "predicted_range": [min(either), max(either)],
                    "measured_s": float(dist.time), "ratio": float(dist.time) / pred,
                    "terms": terms, "counts": counts, "calls": int(tr["calls"]),
                    "call_ms": float(tr.get("call_ms", 0.0)),
                    "converged": bool(dist.converged),
                    "same_iterates": bool(np.allclose(local.coef, dist.coef, atol=1e-10)),
                    "load": [sides[0][0]["load"], load0, load1, sides[1][0]["load"]],
                    "costs": {"calls": calls, "driver": driver},
                    "share": [sides[0][0]["share"], sides[1][0]["share"]]})
        print({k: v for k, v in out[-1].items() if k != "costs"}, flush=True)
    return out


def render_checks(checks, command, earlier=()):
    """The results file's section on the check (markdown lines)."""
    lines = ["## The model against a real 2-worker LocalCluster", "",
             "Logistic, certified 1e-6, K = 2 (one partition a worker), the fit's "
             "`result.time` (after the data is placed).  Predicted from the in-process "
             "run's calls (the same iterates make the same calls) and costs measured on "
             "another sample of the shape, on the same LocalCluster, just before and just "
             "after each fit (`benchmarks/_cluster_calls.py`):", "",
             "    T = sum over calls [fixed(call) + slope(call) * (entries or rows of a "
             "partition)]", "        + DiSCO's driver: partition 0's preconditioner "
             "applications, evaluations at new points and coarse set-up, on the client",
             "        + the driver's vector work between calls (CG updates, dot products)",
             "",
             "`fixed`: the calls' cost on 250-row partitions (messages, the d-vectors, "
             "the scheduler's proxy, the client's sums); `workers`: the slopes, the two "
             "workers computing at once (the slower one counts); `driver`: DiSCO's work "
             "on the client while the workers wait; `client`: the in-process run's time "
             "outside the partitions' passes (the driver's vector work, the same on Dask).  "
             "Predicted range: with the costs "
             "from before, and from after, the fit.  Load: the 1-minute load average "
             "before the costs, at the fit's start and end, after the costs.", "",
             f"Rerun on a quiet machine: `{command}`.", "",
             "| configuration | method | calls | in process s | predicted s (range) | fixed | "
             "workers | driver | client | measured s | measured / predicted | load |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for c in checks:
        share = (c["rows"] // 2) / c["rows"] if c["method"] == "disco" else None
        _, t = predict_dask(c["counts"], c["costs"]["calls"], c["costs"]["driver"],
                            c["nnz"], c["rows"], first_share=share)
        lo, hi = c.get("predicted_range", (c["predicted_s"],) * 2)
        load = "-".join(f"{x:.1f}" for x in c["load"])
        lines.append(f"| {c['config']} | {c['method']} | {c['calls']} | "
                     f"{c['in_process_s']:.2f} | {c['predicted_s']:.2f} ({lo:.2f}-{hi:.2f}) | "
                     f"{t['fixed']:.2f} | {t['workers']:.2f} | {t['driver']:.2f} | "
                     f"{t['client']:.2f} | "
                     f"{c['measured_s']:.2f} | **{c['ratio']:.2f}** | {load} |")
    if earlier:
        lines += ["", "Earlier runs of the check while the model was built (the first "
                  "measured the costs once, before each fit, on a half-size sample; in the "
                  "first two the engines sent their calls through the scheduler and "
                  "`direct` was a client made with `direct_to_workers=True`; the first "
                  "three had no `client` term):"]
    for run in earlier:
        lines += ["", "* load " + "-".join(
            f"{x:.1f}" for x in (min(min(c["load"]) for c in run),
                                 max(max(c["load"]) for c in run))) + ", measured / predicted: "
            + "; ".join(f"{c['config']} {c['method']} {c['ratio']:.2f}" for c in run) + "."]
    shares = [s for c in checks for s in c.get("share", [])]
    if shares:
        lines += ["", "Compute of `H v` in ns a stored entry (medians over the checks' "
                  "cost measurements): each worker's wall "
                  f"{statistics.median(x for s in shares for x in s['worker_wall']):.1f} and "
                  f"CPU {statistics.median(x for s in shares for x in s['worker_cpu']):.1f} "
                  "with both computing; this process on the same rows, wall "
                  f"{statistics.median(s['process_wall'] for s in shares):.1f} and CPU "
                  f"{statistics.median(s['process_cpu'] for s in shares):.1f}.  CPU / wall "
                  "is the share of a core each got."]
    return lines + [""]
