"""The speed table a user feels (issue 12): certified primaldual against its peers, one clock.

For each cell (data set, loss, lam):

- primaldual: wall-clock of the whole public call
  ``primaldual.solve(X, y, loss=loss, lam=lam, solver="auto", tol=1e-6)``
  (Problem construction and every certificate check inside), after a
  warm-up call on a 64-row slice of the same data (Numba compile time is
  reported separately, from fresh subprocesses with an empty and a warm
  ``NUMBA_CACHE_DIR``);
- peers in the same process, each timed on its whole public fit call, its
  own data conversion included, at the loosest of its tolerances whose
  coefficients reach relative primal sub-optimality 1e-6 under our
  objective: LIBLINEAR (``liblinear-official``; both formulations where
  LIBLINEAR has two, the faster is "LIBLINEAR"), Snap ML (``n_jobs=1``),
  scikit-learn SAGA and L-BFGS (logistic), lightning's SDCA when it imports;
- reference ``P*``: the lowest primal value seen by any run, counted only
  when the highest certified dual value is within a relative 1e-9 of it
  (else the cell's sub-optimalities are n/a);
- 5 repetitions of every timed call: median and minimum.

Raw results go to ``benchmarks/results/speed.jsonl`` (one JSON record per
cell, appended as the cell finishes; a rerun skips the cells already there)
and the table to ``benchmarks/results/speed.md`` (``--quick``:
``speed-quick.*``).  Run ``python benchmarks/bench_speed.py --help``.
Details: docs/benchmarks.md.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

import primaldual  # noqa: E402
from primaldual.bench.config import DatasetSpec  # noqa: E402
from primaldual.bench.splits import load_data  # noqa: E402
from primaldual.bench.report import cpu_model  # noqa: E402
from primaldual.bench.speed import (REF_CERT, TARGET, certify_reference,  # noqa: E402
                                    peer_variants, rel_subopt, search_tolerance,
                                    summarize_times, timed)

LOSSES = ("hinge", "squared_hinge", "logistic")
STD_LOSSES = ("squared_hinge", "logistic")      # the standardized sets (issue 12, item 4)
LAMS = (1e-4, 1e-5, 1e-6)
TOL = 1e-6                                       # primaldual's certified relative gap


# -------------------------------------------------------------------- data
def _unit(spec):
    def load():
        d = load_data(spec)
        return d.X, d.y, d.note
    return load


def _digits(n=None):
    def load():
        from sklearn.datasets import load_digits
        from sklearn.preprocessing import StandardScaler
        X, digit = load_digits(return_X_y=True)
        X = StandardScaler().fit_transform(X)
        y = np.where(digit <= 4, 1.0, -1.0)
        if n is not None:
            X, y = X[:n], y[:n]
        return (np.ascontiguousarray(X), y,
                f"scikit-learn digits, {X.shape[0]} rows, StandardScaler on all 64 columns "
                "(dense), digits 0-4 = +1 vs 5-9 = -1, no bias")
    return load


def _covtype_std(n=None):
    def load():
        from sklearn.preprocessing import StandardScaler
        spec = DatasetSpec(name="covtype", n=n, subsample="head" if n else "random",
                           scale="none")
        d = load_data(spec)
        X = StandardScaler().fit_transform(d.X.toarray())
        return (np.ascontiguousarray(X), d.y,
                f"{d.note}; StandardScaler on the 54 columns (dense), no bias")
    return load


def catalog(quick):
    """name -> (label, losses, loader, registry name or None)."""
    if quick:
        return {
            "a9a": ("a9a[:3000]", LOSSES, _unit(DatasetSpec(name="a9a", n=3000)), "a9a"),
            "reuters": ("reuters[:2000]", LOSSES,
                        _unit(DatasetSpec(name="reuters", n=2000)), "reuters"),
            "covtype": ("covtype[:5000]", LOSSES,
                        _unit(DatasetSpec(name="covtype", n=5000)), "covtype"),
            "rcv1": ("rcv1 shape[:2000]", LOSSES,
                     _unit(DatasetSpec(name="rcv1", source="synthetic", n=2000)), None),
            "CCAT": ("CCAT shape[:5000]", LOSSES,
                     _unit(DatasetSpec(name="CCAT", source="synthetic", n=5000)), None),
            "digits-std": ("digits std[:600]", STD_LOSSES, _digits(600), None),
            "covtype-std": ("covtype std[:2000]", STD_LOSSES, _covtype_std(2000), "covtype"),
        }
    return {
        "a9a": ("a9a", LOSSES, _unit(DatasetSpec(name="a9a", subsample="random")), "a9a"),
        "reuters": ("reuters", LOSSES,
                    _unit(DatasetSpec(name="reuters", subsample="random")), "reuters"),
        "covtype": ("covtype", LOSSES,
                    _unit(DatasetSpec(name="covtype", subsample="random")), "covtype"),
        "rcv1": ("rcv1 shape", LOSSES,
                 _unit(DatasetSpec(name="rcv1", source="synthetic")), None),
        "CCAT": ("CCAT shape", LOSSES,
                 _unit(DatasetSpec(name="CCAT", source="synthetic")), None),
        "digits-std": ("digits std", STD_LOSSES, _digits(), None),
        "covtype-std": ("covtype std", STD_LOSSES, _covtype_std(), "covtype"),
    }


# ----------------------------------------------------------------- pieces
def _nnz(X):
    return int(X.nnz) if hasattr(X, "nnz") else int(np.count_nonzero(X))


def user_call(X, y, loss, lam, max_epochs=None):
    """The timed primaldual call: what a user writes (``max_epochs`` only when
    given on the command line; the library default otherwise)."""
    extra = {} if max_epochs is None else {"max_epochs": max_epochs}
    return primaldual.solve(X, y, loss=loss, lam=lam, solver="auto", tol=TOL, **extra)


def small_slice(X, y, rows=64):
    """``rows`` rows of the same data (same format and dtype), both classes."""
    idx = np.concatenate([np.flatnonzero(y > 0)[:rows // 2],
                          np.flatnonzero(y < 0)[:rows // 2]])
    return X[np.sort(idx)], y[np.sort(idx)]


def warm_up(X, y, loss, lam, prob):
    """Compile (or load from cache) the kernels the timed call will use, on a
    64-row slice of the same data (same format and dtype)."""
    Xs, ys = small_slice(X, y)
    names = {"auto"}
    try:
        from primaldual.solvers import resolve_solver
        names.add(resolve_solver("auto", prob))
    except Exception:                 # noqa: BLE001 -- an older or newer signature
        pass
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name in sorted(names):
            primaldual.solve(Xs, ys, loss=loss, lam=lam, solver=name, tol=TOL,
                             max_epochs=5)


class Evaluator:
    """Our objective for a cell; remembers every primal and dual value seen."""

    def __init__(self, prob):
        self.prob = prob
        self.primals, self.duals = {}, {}

    def point(self, name, coef):
        p = self.prob.primal(coef)
        d = self.prob.dual(self.prob.dual_from_primal(coef))
        self.primals[name] = min(p, self.primals.get(name, np.inf))
        self.duals[name] = max(d, self.duals.get(name, -np.inf))
        return p

    def certified(self, name, res):
        self.primals[name] = min(res.primal, self.primals.get(name, np.inf))
        self.duals[name] = max(res.dual, self.duals.get(name, -np.inf))


def reference_runs(X, y, loss, lam, ev, args):
    """primaldual at tol 1e-10 with a large budget, then LIBLINEAR at ``-e 1e-10``
    with each formulation (primal Newton first).  With ``--ref-liblinear auto``
    (the default) a LIBLINEAR run is made only while the reference is not yet
    certified to 1e-9: a certified pair already pins ``P*`` to 1e-9, and no other
    point can move it further."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = primaldual.solve(X, y, loss=loss, lam=lam, solver="auto", tol=1e-10,
                               max_epochs=args.ref_epochs, time_limit=args.ref_time)
    ev.certified("primaldual tol 1e-10", res)
    ev.point("primaldual tol 1e-10 (w)", res.coef)
    runs = {"primaldual": {"solver": res.solver, "epochs": float(res.n_epochs),
                           "rel_gap": res.gap / max(abs(res.primal), 1e-12),
                           "seconds": res.time}}
    if args.ref_liblinear == "auto" and certify_reference(ev.primals, ev.duals)["certified"]:
        return runs
    lib = [v for v in peer_variants(loss) if v.group == "LIBLINEAR" and v.status() is None]
    lib.sort(key=lambda v: v.name not in ("LIBLINEAR -s 0", "LIBLINEAR -s 2"))  # Newton first
    for v in lib:
        (coef, info), secs = timed(v.fit, X, y, loss, lam, 1e-10, 0)
        ev.point(f"{v.name} -e 1e-10", coef)
        runs[v.name] = {"seconds": secs, **info}
        if args.ref_liblinear == "auto" and certify_reference(ev.primals,
                                                              ev.duals)["certified"]:
            break
    return runs


def time_primaldual(X, y, loss, lam, ev, reps, max_epochs=None):
    times, res = [], None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for _ in range(reps):
            res, secs = timed(user_call, X, y, loss, lam, max_epochs)
            times.append(secs)
            if not res.converged:
                break       # ended on its budget: no ratio, one timing says enough
    ev.certified("primaldual tol 1e-6", res)
    summ = summarize_times(times)
    call = (f"solve(X, y, loss={loss!r}, lam={lam:g}, solver='auto', tol={TOL:g}"
            + ("" if max_epochs is None else f", max_epochs={max_epochs:g}") + ")")
    return {**summ, "call": call, "solver": res.solver, "epochs": float(res.n_epochs),
            "ns_per_nnz_epoch": 1e9 * summ["median"] / max(res.n_epochs * _nnz(X), 1),
            "converged": bool(res.converged), "stop_reason": getattr(res, "stop_reason", ""),
            "rel_gap": res.gap / max(abs(res.primal), 1e-12), "primal": res.primal}


def search_peer(v, X, y, loss, lam, ev, ref, cap, deadline=None, give_up_after=None):
    """The tolerance search of one peer variant (its first timed fit)."""
    why = v.status()
    if why is not None:
        return {"status": why}
    if ref is None or not ref["certified"]:
        return {"status": "n/a (reference not certified)"}
    # warm-up: imports and first-call costs of the library stay out of the clock
    v.fit(*small_slice(X, y), loss, lam, v.tolerances[0], 0)

    def run(tol):
        (coef, info), secs = timed(v.fit, X, y, loss, lam, tol, 0)
        return coef, secs, info

    def subopt(coef):
        return rel_subopt(ev.point(v.name, coef), ref)

    found = search_tolerance(run, v.tolerances, subopt, TARGET, cap=cap, stop=v.stop,
                             deadline=deadline, give_up_after=give_up_after)
    out = {"status": "ok", "setting": v.setting, "reached": found["reached"],
           "cut": bool(found.get("cut")),
           "best_subopt": found["best_subopt"], "reason": found["reason"],
           "tried": [{k: t[k] for k in t if k != "coef"} for t in found["tried"]]}
    if found["reached"]:
        out.update(summarize_times([found["seconds"]]), tol=found["tol"],
                   info=found["info"], primal=ev.prob.primal(found["coef"]),
                   at_loosest=found["at_loosest"])
    return out


def repeat_peers(variants, results, X, y, loss, lam, reps, within):
    """Repeat the fit at the chosen tolerance until each peer has ``reps`` timings
    (the search's fit is the first).  A peer whose first timing is more than
    ``within`` times the fastest peer's first timing is not repeated: it cannot
    be the fastest peer, and on the large sets its repetitions would dominate the
    run.  Its single timing is kept and marked (``"repeated": False``)."""
    firsts = [r["min"] for r in results.values() if r.get("reached")]
    if not firsts:
        return
    fastest = min(firsts)
    for v in variants:
        r = results[v.name]
        if not r.get("reached"):
            continue
        if within is not None and r["min"] > within * fastest:
            r["repeated"] = False
            continue
        times = list(r["times"])
        for _ in range(reps - 1):
            _, secs = timed(v.fit, X, y, loss, lam, r["tol"], 0)
            times.append(secs)
        r.update(summarize_times(times), repeated=True)


def run_cell(key, label, X, y, loss, lam, args, deadline=None):
    t_cell = time.perf_counter()
    prob = primaldual.Problem(X, y, loss=loss, lam=lam)
    ev = Evaluator(prob)
    warm_up(X, y, loss, lam, prob)
    ref_runs = reference_runs(X, y, loss, lam, ev, args)
    ref = certify_reference(ev.primals, ev.duals)
    pd_ = time_primaldual(X, y, loss, lam, ev, args.reps, args.max_epochs)
    peers = {}
    variants = peer_variants(loss)
    for v in variants:
        firsts = [p["min"] for p in peers.values() if p.get("reached")]
        give_up = (args.repeat_within * min(firsts)
                   if firsts and args.repeat_within else None)
        peers[v.name] = dict(group=v.group, version=v.version(),
                             **search_peer(v, X, y, loss, lam, ev, ref, args.peer_cap,
                                           deadline, give_up))
        peers[v.name]["slower"] = peers[v.name].get("reason", "").startswith("stopped: its")
    repeat_peers(variants, peers, X, y, loss, lam, args.reps, args.repeat_within)
    # every run's values tighten the reference; recompute the sub-optimalities
    ref = certify_reference(ev.primals, ev.duals)
    pd_["rel_subopt"] = rel_subopt(pd_["primal"], ref)
    for p in peers.values():
        if "primal" in p:
            p["rel_subopt"] = rel_subopt(p["primal"], ref)
    rec = {"kind": "cell", "key": key, "dataset": label, "loss": loss, "lam": lam,
           "n": int(X.shape[0]), "d": int(X.shape[1]), "nnz": _nnz(X),
           "format": "dense" if isinstance(X, np.ndarray) else "csr",
           "reference": ref, "reference_runs": ref_runs, "primaldual": pd_, "peers": peers,
           "cell_seconds": time.perf_counter() - t_cell, "finished_unix": time.time()}
    rec.update(compare(rec))
    rec["cut"] = any(p.get("cut") for p in peers.values())
    return rec


def compare(rec):
    """Fastest peer (by median) among those that reached the target, and the ratio."""
    groups = {}
    for name, p in rec["peers"].items():
        if p.get("reached"):
            g = groups.get(p["group"])
            if g is None or p["median"] < rec["peers"][g]["median"]:
                groups[p["group"]] = name
    if not groups:
        return {"best_of_group": groups, "fastest_peer": None, "ratio": None}
    fastest = min(groups.values(), key=lambda n: rec["peers"][n]["median"])
    pd_ = rec["primaldual"]
    ok = pd_["converged"]
    ratio = pd_["median"] / rec["peers"][fastest]["median"] if ok else None
    return {"best_of_group": groups, "fastest_peer": fastest, "ratio": ratio}


# ----------------------------------------------------------- compile time
_COMPILE_SNIPPET = r"""
import json, time
t0 = time.perf_counter()
import numpy as np, scipy.sparse as sp
import primaldual
t1 = time.perf_counter()
rng = np.random.default_rng(0)
X = sp.random(300, 40, density=0.2, random_state=0, format="csr")
y = np.where(rng.standard_normal(300) > 0, 1.0, -1.0)
def fit():
    s = time.perf_counter()
    for loss in ("hinge", "squared_hinge", "logistic"):
        primaldual.solve(X, y, loss=loss, lam=1e-2, solver="auto", tol=1e-6)
    return time.perf_counter() - s
first = fit(); second = fit()
print(json.dumps({"import": t1 - t0, "first_fit": first, "second_fit": second}))
"""


def compile_times():
    out = {}
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"), OPENBLAS_NUM_THREADS="1",
               OMP_NUM_THREADS="1")
    with tempfile.TemporaryDirectory() as cache:
        env["NUMBA_CACHE_DIR"] = cache
        for label in ("empty cache", "warm cache"):
            r = subprocess.run([sys.executable, "-c", _COMPILE_SNIPPET], env=env,
                               capture_output=True, text=True, check=True)
            out[label] = json.loads(r.stdout.strip().splitlines()[-1])
    return out


# ----------------------------------------------------------------- report
def versions():
    from importlib.metadata import PackageNotFoundError, version
    out = {"python": platform.python_version()}
    for dist in ("primaldual", "numpy", "scipy", "numba", "scikit-learn", "liblinear-official",
                 "snapml", "sklearn-contrib-lightning"):
        try:
            out[dist] = version(dist)
        except PackageNotFoundError:
            out[dist] = "not installed"
    out["primaldual"] = primaldual.__version__
    return out


def _s(x):
    return "—" if x is None else f"{x:.3g}"


def _e(x):
    return "n/a" if x is None else f"{x:.1e}"


def _peer_cell(p):
    st = p.get("status")
    if st != "ok":
        return st
    if not p.get("reached"):
        if p.get("cut"):
            return f"search cut by the budget (best {_e(p['best_subopt'])})"
        if p.get("slower"):
            last = p["tried"][-1]
            return (f"slower: {_s(last['seconds'])} s at tol {last['tol']:.0e} "
                    f"(best {_e(p['best_subopt'])})")
        return f"does not reach (best {_e(p['best_subopt'])})"
    return f"{_s(p['median'])} / {_s(p['min'])} (tol {p['tol']:.0e}){_once(p)}"


def _once(p):
    return (("" if p.get("repeated", True) else ", 1 run")
            + (", loosest tried" if p.get("at_loosest") else ""))


def _group_cell(rec, group):
    names = [n for n, p in rec["peers"].items() if p["group"] == group]
    if not names:
        return "–"
    best = rec.get("best_of_group", {}).get(group)
    if best is not None:
        p = rec["peers"][best]
        tag = f"{best.split(' ', 1)[1]}, " if group == "LIBLINEAR" else ""
        return f"{_s(p['median'])} / {_s(p['min'])} ({tag}tol {p['tol']:.0e}{_once(p)})"
    cells = [_peer_cell(rec["peers"][n]) for n in names]
    if group == "LIBLINEAR" and len(names) > 1:
        return "; ".join(f"{n.split(' ', 1)[1]}: {c}" for n, c in zip(names, cells))
    return cells[0]


GROUPS = ("LIBLINEAR", "Snap ML", "sklearn SAGA", "sklearn L-BFGS", "lightning SDCA")


def render(records, meta, quick):
    latest = {}
    for r in records:                      # the last record of a cell wins
        if r.get("kind") == "cell":
            latest.pop((r["key"], r["loss"], r["lam"]), None)
            latest[(r["key"], r["loss"], r["lam"])] = r
    cells = list(latest.values())
    first = {}
    for r in cells:
        first.setdefault(r["dataset"], len(first))
    cells.sort(key=lambda r: (first[r["dataset"]], LOSSES.index(r["loss"]), -r["lam"]))
    comp = [r for r in records if r.get("kind") == "compile"]
    m = meta
    md = [f"# Speed: certified primaldual against its peers, one clock{' (quick)' if quick else ''}",
          "",
          f"Command: `python benchmarks/bench_speed.py{' --quick' if quick else ''}` "
          f"(cells from several invocations are merged; each record has its finish time).  ",
          f"Machine: {m['cpu']}, {m['cores']} cores (shared with other work), "
          f"{m['platform']}.  ",
          "Versions: " + ", ".join(f"{k} {v}" for k, v in m["versions"].items()) + ".  ",
          "BLAS limited to 1 thread; every solver runs on one thread.", "",
          "Seconds are `median / min` of 5 repetitions of the whole public call "
          f"(\"1 run\": a peer more than {m.get('repeat_within') or 'inf'}x slower than "
          "the fastest peer on its first timing, not repeated). "
          "primaldual: `solve(X, y, loss, lam, solver=\"auto\", tol=1e-6)`, certified "
          "(Problem built inside, every check counted), after a warm-up on 64 rows. "
          "Peers: their whole fit call (data conversion included) at the loosest "
          f"tolerance (shown) reaching relative primal sub-optimality {TARGET:g} under "
          "our objective; LIBLINEAR is the faster of its two formulations where it has "
          "two (named). Reference: lowest primal of all runs, certified by the highest dual "
          f"to a relative gap <= {REF_CERT:g}, else n/a. Ratio: primaldual median / "
          "fastest peer median (> 1: primaldual slower). `auto`: the solver auto picked, "
          "its epochs, its certified relative gap, its actual relative primal sub-optimality "
          "against the reference, and its median wall-clock per epoch and stored nonzero "
          "in ns (the whole call, nothing subtracted).", "",
          "| data | loss | lam | n, nnz | ref gap | primaldual s | auto: solver, ep, gap, sub-opt, ns/nnz/ep |"
          " " + " | ".join(GROUPS) + " | ratio |",
          "|" + "---|" * (8 + len(GROUPS))]
    ratios = []
    for r in cells:
        pd_ = r["primaldual"]
        ref = r["reference"]
        refc = _e(ref["rel_gap"]) if ref["certified"] else f"n/a ({_e(ref['rel_gap'])})"
        pdc = f"{_s(pd_['median'])} / {_s(pd_['min'])}"
        if not pd_["converged"]:
            pdc += f" (not converged: {pd_['stop_reason'] or 'budget'}, 1 run)"
        auto = (f"{pd_['solver']}, {pd_['epochs']:.0f}, {pd_['rel_gap']:.1e}, "
                f"{_e(pd_.get('rel_subopt'))}, {pd_['ns_per_nnz_epoch']:.3g}")
        ratio = r.get("ratio")
        if ratio is not None:
            ratios.append((ratio, r))
        ratio_s = f"**{ratio:.2f}**" if ratio is not None and ratio > 1 else _s(ratio)
        if ratio is None:
            ratio_s = ("n/a (no certified reference)" if not ref["certified"] else
                       "n/a (primaldual did not converge)" if not pd_["converged"] else
                       "no peer reaches it")
        md.append(f"| {r['dataset']} | {r['loss']} | {r['lam']:g} | {r['n']}, {r['nnz']} | "
                  f"{refc} | {pdc} | {auto} | "
                  + " | ".join(_group_cell(r, g) for g in GROUPS) + f" | {ratio_s} |")
    md.append("")
    if ratios:
        worst, wr = max(ratios, key=lambda t: t[0])
        md.append(f"**Worst ratio: {worst:.2f}** ({wr['dataset']}, {wr['loss']}, lam "
                  f"{wr['lam']:g}, fastest peer {wr['fastest_peer']}). "
                  f"Cells at or under the fastest peer: "
                  f"{sum(1 for x, _ in ratios if x <= 1)} of {len(ratios)} with a ratio.")
    calls = sorted({r["primaldual"].get("call", "") for r in cells} - {""})
    if any("max_epochs" in c for c in calls):
        md += ["", "primaldual calls with a `max_epochs` given on the command line: "
               + "; ".join(f"`{c}`" for c in calls if "max_epochs" in c) + "."]
    missing = meta.get("not_run") or []
    if missing:
        md += ["", "Cells not run (time budget of their data set; rerun the script with "
               "a larger `--budget` to add them): " + ", ".join(missing) + "."]
    md += ["", "## Data", ""]
    seen = {}
    for r in cells:
        seen.setdefault(r["dataset"], r.get("note", ""))
    md += [f"- {k}: {v}" for k, v in seen.items()]
    md += ["", "## Peer settings", "",
           "- LIBLINEAR: `-c 1/(lam n) -B -1`, `-e` from 10 down to 1e-10 in half decades; "
           "`-s 3` hinge, `-s 1` (dual, its default) and `-s 2` (primal Newton) squared hinge, "
           "`-s 0` (primal Newton, its default) and `-s 7` (dual) logistic. Its dual solvers "
           "stop after 300 outer iterations; at that cap `-s 1` and `-s 7` rerun with the "
           "primal Newton solver (`-s 2`, `-s 0`), `-s 3` stops.",
           "- Snap ML: `regularizer = lam n`, `n_jobs=1`, `fit_intercept=False`, "
           "`max_iter=1000` (its default), tol from 1 to 1e-10; SupportVectorMachine for "
           "the hinge losses, LogisticRegression(dual=True) for logistic.",
           "- scikit-learn: LogisticRegression(`C = 1/(lam n)`, `fit_intercept=False`, "
           "`max_iter=1000`) with `solver='saga'` (tol 1..1e-10) and `'lbfgs'` "
           "(tol 1e-1..1e-12).",
           "- \"loosest tried\": the first tolerance of the list already reached the "
           "target; a looser one was not tried.",
           "- A search stops at the first tolerance that reaches the target, at an "
           "iteration cap a smaller tolerance cannot lift, or after a fit longer than "
           f"{meta.get('peer_cap', '?')} s (three times that in all), or when the data set's "
           "time budget is spent ('search cut by the budget'); 'does not reach' "
           "gives the best sub-optimality seen."]
    if comp:
        c = comp[-1]["times"]
        md += ["", "## Numba compile time (fresh subprocess, three tiny solves with "
               "`solver=\"auto\"`, one per loss)", "",
               "| NUMBA_CACHE_DIR | import s | first calls s | second calls s | "
               "compile or cache load ≈ first - second |", "|---|---:|---:|---:|---:|"]
        for label, t in c.items():
            md.append(f"| {label} | {t['import']:.2f} | {t['first_fit']:.2f} | "
                      f"{t['second_fit']:.3f} | {t['first_fit'] - t['second_fit']:.2f} |")
    return "\n".join(md) + "\n"


# -------------------------------------------------------------------- main
def _read_jsonl(path):
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _append(path, rec):
    with open(path, "a") as fh:
        fh.write(json.dumps(rec, default=_json_default) + "\n")


def _json_default(o):
    if isinstance(o, (np.floating, np.integer, np.bool_)):
        return o.item()
    if isinstance(o, np.ndarray):
        return o.tolist()
    return str(o)


def _lam_priority(lam, lams):
    """Order of the lams of a budgeted data set: the middle one, then outwards."""
    ordered = sorted(lams, reverse=True)
    mid = len(ordered) // 2
    return sorted(range(len(ordered)), key=lambda i: (abs(i - mid), i)).index(
        ordered.index(lam))


def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true",
                    help="small subsets (about 2 minutes); writes speed-quick.*")
    ap.add_argument("--datasets", default=None,
                    help="comma-separated subset of a9a,reuters,covtype,rcv1,CCAT,"
                         "digits-std,covtype-std (default all)")
    ap.add_argument("--losses", default=None, help="comma-separated (default all)")
    ap.add_argument("--lams", default=None,
                    help="comma-separated (default 1e-4,1e-5,1e-6; quick 1e-4,1e-5)")
    ap.add_argument("--reps", type=int, default=5, help="repetitions of each timed call")
    ap.add_argument("--peer-cap", type=float, default=None,
                    help="seconds: a peer's search stops after a fit longer than this "
                         "(or 3x in all); default 60, quick 5")
    ap.add_argument("--ref-epochs", type=float, default=None,
                    help="epoch budget of the tol-1e-10 reference run (default 2000)")
    ap.add_argument("--ref-time", type=float, default=None,
                    help="time limit (s) of the reference run (default 60, quick 10)")
    ap.add_argument("--budget", action="append", default=[], metavar="NAME=SECONDS",
                    help="time budget of a data set's cells; when spent, its remaining "
                         "cells are not started (default CCAT=900, covtype-std=600)")
    ap.add_argument("--repeat-within", type=float, default=2.0,
                    help="repeat a peer's timed fit only when its first timing is within "
                         "this factor of the fastest peer's (default 2; 0 repeats all)")
    ap.add_argument("--ref-liblinear", choices=("auto", "always"), default="auto",
                    help="run LIBLINEAR at -e 1e-10 for the reference always, or only "
                         "when primaldual's tol-1e-10 run is not certified to 1e-9 "
                         "(default auto)")
    ap.add_argument("--max-epochs", type=float, default=None,
                    help="pass max_epochs to the timed solve call (default: not passed, "
                         "the library default)")
    ap.add_argument("--no-compile", action="store_true", help="skip the compile-time runs")
    ap.add_argument("--report-only", action="store_true",
                    help="rewrite the Markdown table from the jsonl, run nothing")
    ap.add_argument("--fresh", action="store_true",
                    help="start a new jsonl instead of resuming the existing one")
    ap.add_argument("--out", default=None, help="output stem (default "
                    "benchmarks/results/speed or speed-quick)")
    args = ap.parse_args(argv)
    args.peer_cap = args.peer_cap or (5.0 if args.quick else 60.0)
    args.ref_epochs = args.ref_epochs or 2000
    args.ref_time = args.ref_time or (10.0 if args.quick else 60.0)
    if not args.repeat_within:
        args.repeat_within = None
    budgets = {"CCAT": 900.0, "covtype-std": 600.0}
    for item in args.budget:
        name, _, sec = item.partition("=")
        try:
            budgets[name] = float(sec)
        except ValueError:
            ap.error(f"--budget wants NAME=SECONDS, got {item!r}")
    args.budgets = budgets
    return args


def main(argv=None):
    args = parse_args(argv)
    cat = catalog(args.quick)
    names = args.datasets.split(",") if args.datasets else list(cat)
    for nm in names:
        if nm not in cat:
            raise SystemExit(f"unknown data set {nm!r}; choose from {', '.join(cat)}")
    losses = args.losses.split(",") if args.losses else list(LOSSES)
    for ls in losses:
        if ls not in LOSSES:
            raise SystemExit(f"unknown loss {ls!r}; choose from {', '.join(LOSSES)}")
    lams = ([float(x) for x in args.lams.split(",")] if args.lams
            else list(LAMS[:2] if args.quick else LAMS))
    stem = Path(args.out) if args.out else ROOT / "benchmarks" / "results" / (
        "speed-quick" if args.quick else "speed")
    jsonl, mdpath = stem.with_suffix(".jsonl"), stem.with_suffix(".md")
    jsonl.parent.mkdir(parents=True, exist_ok=True)
    if args.fresh and jsonl.exists():
        jsonl.unlink()
    records = _read_jsonl(jsonl)
    # a cell whose peer searches a budget cut short is run again (its new record wins)
    done = {(r["key"], r["loss"], r["lam"]) for r in records
            if r.get("kind") == "cell" and not r.get("cut")}
    meta = {"cpu": cpu_model(), "cores": os.cpu_count(), "platform": platform.platform(),
            "versions": versions(), "peer_cap": args.peer_cap, "not_run": [],
            "repeat_within": args.repeat_within}
    if args.report_only:
        mdpath.write_text(render(records, meta, args.quick))
        print(mdpath.read_text())
        return 0
    if not args.no_compile:
        rec = {"kind": "compile", "times": compile_times(), "finished_unix": time.time()}
        _append(jsonl, rec)
        records.append(rec)
        print("compile:", json.dumps(rec["times"]), file=sys.stderr)
    from primaldual import datasets as D
    have = set(D.available_real())
    for nm in names:
        label, dl, loader, registry = cat[nm]
        todo = [(ls, lam) for ls in losses if ls in dl for lam in lams
                if (nm, ls, lam) not in done]
        budget = args.budgets.get(nm)
        if budget is not None:              # the middle lam of every loss first
            todo.sort(key=lambda c: (_lam_priority(c[1], lams), ("logistic", "hinge",
                                                                 "squared_hinge").index(c[0])))
        if not todo:
            continue
        if registry is not None and registry not in have:
            print(f"skipping {label}: {registry} not found locally", file=sys.stderr)
            continue
        t_data = time.perf_counter()
        X, y, note = loader()
        print(f"{label}: {X.shape}, loaded in {time.perf_counter() - t_data:.1f} s",
              file=sys.stderr)
        t0 = time.perf_counter()
        for ls, lam in todo:
            if budget is not None and time.perf_counter() - t0 > budget:
                meta["not_run"].append(f"{label} {ls} {lam:g}")
                continue
            rec = run_cell(nm, label, X, y, ls, lam, args,
                           deadline=None if budget is None else t0 + budget)
            rec["note"] = note
            _append(jsonl, rec)
            records.append(rec)
            r = rec["ratio"]
            print(f"{label} {ls} {lam:g}: primaldual {rec['primaldual']['median']:.3g} s "
                  f"({rec['primaldual']['solver']}), fastest peer {rec['fastest_peer']}, "
                  f"ratio {'—' if r is None else f'{r:.2f}'} "
                  f"[{rec['cell_seconds']:.0f} s]", file=sys.stderr, flush=True)
            mdpath.write_text(render(records, meta, args.quick))
        del X, y
    mdpath.write_text(render(records, meta, args.quick))
    print(mdpath.read_text())
    return 0


if __name__ == "__main__":
    from threadpoolctl import threadpool_limits
    with threadpool_limits(limits=1):      # one thread for every library's BLAS
        sys.exit(main())
