"""Model families against their peers (issue 33) -> benchmarks/results/models.md.

One section per family, selected with ``--family``; each family writes only its
own section of the results file (between ``<!-- family:NAME -->`` markers), so
families are run and rerun independently.  A family is a function
``run_<name>(args) -> list of Markdown lines`` registered in ``FAMILIES``.

Family ``l1`` (sparse models, docs/sparse-models.md): L1 logistic and L1 squared
hinge with ``lam = 0`` at ``l1 = l1_max/10, /100, /1000``.

* ours (``solver="auto"``, which is ``l1cd``) runs to a certified relative gap
  of 1e-6;
* the target: ``P(w) <= D* + 1e-6 |D*|`` with ``D*`` our best dual bound (a run
  to 1e-9): each peer runs with tighter and tighter tolerances until its ``w``
  meets it, and the time of the first run that does is reported (peers are
  timed to a primal sub-optimality that our dual bound certifies; ours to
  the certificate itself);
* peers: celer and skglm (logistic only: neither has the squared hinge) and
  LIBLINEAR ``-s 6`` / ``-s 5`` (liblinear-official), one thread each;
* times: best of ``--repeat`` runs, wall clock of the call, after a warm-up;
* a path of ``--path-points`` values (``l1_max`` to ``l1_max/100``), for each
  of ``--path-losses``, with
  screening (the default) and without (``screening=False``; and without
  working sets either), on the shared set-up of ``sparse_path``, and point by
  point through ``solve()`` (``share_setup=False``) for comparison.

Usage::

    python benchmarks/bench_models.py --family l1 [--quick] [--sets a9a,reuters]
"""
from __future__ import annotations

import os

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import argparse  # noqa: E402
import json  # noqa: E402
import re  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import scipy.sparse as sp  # noqa: E402
from sklearn.preprocessing import normalize  # noqa: E402

import primaldual as pd  # noqa: E402
from primaldual.datasets import load_svmlight, make_synthetic  # noqa: E402
from primaldual.regpath import l1_path, lam_max  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import shared_file  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results" / "models.md"
#: the measured cells of family l1, one JSON object a line (a rerun skips them; --fresh)
CELLS = RESULTS.with_name("models-l1.jsonl")
PATHS = RESULTS.with_name("models-l1-paths.jsonl")
TARGET = 1e-6


# ----------------------------------------------------------------- data
def _commit():
    """The last commit that changed the library (the solver a cell measured)."""
    here = Path(__file__).resolve().parent
    out = subprocess.run(["git", "log", "-1", "--format=%h", "--", str(here.parent / "src")],
                         capture_output=True, text=True, cwd=here)
    return out.stdout.strip() or "unknown"


def _binary(path, normalize_rows=False, split=None):
    X, yr = load_svmlight(path)
    X = sp.csr_matrix(X, dtype=np.float64)
    if normalize_rows:
        X = normalize(X).tocsr()
    y = np.where(yr > (np.median(np.unique(yr)) if split == "half" else yr.min()), 1.0, -1.0)
    return X, y


#: name -> (file, how) for the sparse binary sets of ../shared/data; news20 is
#: made binary (classes 1-10 against 11-20) with unit-norm rows, as news20.binary
SPARSE_SETS = {"a9a": ("a9a", {}), "a8a": ("a8a", {}), "a1a": ("a1a", {}),
               "mushrooms": ("mushrooms", {}), "agaricus": ("agaricus", {}),
               "reuters": ("reuters.bz2", {}), "cocoa-small": ("cocoa-small", {}),
               "news20": ("news20.bz2", {"normalize_rows": True, "split": "half"})}


def load_set(name):
    if name == "rcv1-shape":
        X, y, _ = make_synthetic("rcv1", random_state=0)
        return sp.csr_matrix(X), np.asarray(y, dtype=np.float64)
    fname, how = SPARSE_SETS[name]
    path = shared_file(fname)
    if path is None:
        return None
    return _binary(path, **how)


# ---------------------------------------------------------------- peers
def _timed(fn):
    t = time.perf_counter()
    out = fn()
    return time.perf_counter() - t, out


def ours(X, y, loss, l1, tol):
    """The public call with its defaults (``solver="auto"``, its own epoch
    budget): a ``max_epochs`` given here would shorten the supervisor's windows
    and change the path it takes (rcv1-shape, squared hinge, ``l1_max/1000``:
    with ``max_epochs=5000`` l1cd hands over to l1_ipm and the fit takes 33 s,
    against 7 s with the defaults)."""
    return pd.solve(X, y, loss=loss, lam=0.0, l1=l1, tol=tol)


def liblinear_fit(X, y, loss, l1, eps):
    from liblinear.liblinearutil import parameter, problem, train
    s = 6 if loss == "logistic" else 5
    prob = problem(y, X)
    m = train(prob, parameter(f"-s {s} -c {1.0 / (l1 * X.shape[0])} -e {eps} -q"))
    return np.array([m.w[j] for j in range(X.shape[1])])


def celer_fit(X, y, loss, l1, tol):
    import celer
    m = celer.LogisticRegression(C=1.0 / (l1 * X.shape[0]), fit_intercept=False, tol=tol,
                                 max_iter=100, max_epochs=100000)
    return m.fit(X, y).coef_.ravel()


def skglm_fit(X, y, loss, l1, tol):
    from skglm import SparseLogisticRegression
    m = SparseLogisticRegression(alpha=l1, fit_intercept=False, tol=tol, max_iter=200)
    return m.fit(X, y).coef_.ravel()


PEERS = {"LIBLINEAR": (liblinear_fit, [1e-2, 1e-3, 1e-4, 1e-5, 1e-6, 1e-7, 1e-8]),
         "celer": (celer_fit, [1e-4, 1e-5, 1e-6, 1e-7, 1e-8, 1e-9, 1e-10]),
         "skglm": (skglm_fit, [1e-4, 1e-5, 1e-6, 1e-7, 1e-8, 1e-9, 1e-10])}


def peer_time(fit, tols, X, y, loss, l1, prob, target, budget, repeat):
    """Seconds of the first tolerance whose model meets ``target`` (best of
    ``repeat``), the tolerance, and the reached sub-optimality bound."""
    for tol in tols:
        t, w = _timed(lambda: fit(X, y, loss, l1, tol))
        p = prob.primal(w)
        if p <= target:
            for _ in range(repeat - 1):
                t = min(t, _timed(lambda: fit(X, y, loss, l1, tol))[0])
            return t, tol, p
        if t > budget:
            break
    return None, tol, p


# ------------------------------------------------------------ family l1
def run_l1(args):
    lines = []
    cells = []
    sets = args.sets.split(",") if args.sets else list(SPARSE_SETS) + ["rcv1-shape"]
    losses = ("logistic", "squared_hinge")
    divs = (10, 100, 1000)
    # warm-up: compile ours, skglm's numba code, load the bindings
    Xw, yw, _ = make_synthetic((300, 200, 0.05), random_state=1)
    ours(Xw, yw, "logistic", 1e-3, 1e-6)
    ours(Xw, yw, "squared_hinge", 1e-3, 1e-6)
    for name, (fit, tols) in ({} if args.paths_only else PEERS).items():
        fit(sp.csr_matrix(Xw), yw, "logistic", 1e-3, 1e-4)
    done = {}
    if CELLS.exists() and not args.fresh:
        for line in CELLS.read_text().splitlines():
            c = json.loads(line)
            done[(c["set"], c["loss"], c["div"])] = c
    elif args.fresh and CELLS.exists():
        CELLS.unlink()
    if args.redo:                          # measure these sets again, keep the others
        for k in [k for k in done if k[0] in args.redo.split(",")]:
            del done[k]
        CELLS.write_text("".join(json.dumps(c) + "\n" for c in done.values()))
    for name in sets:
        keys = [(name, loss, div) for loss in losses for div in divs]
        if all(k in done for k in keys) or args.no_new_cells or args.paths_only:
            cells += [done[k] for k in keys if k in done]
            continue
        data = load_set(name)
        if data is None:
            print(f"skip {name}: not in ../shared/data", flush=True)
            continue
        X, y = data
        for loss in losses:
            lmax = lam_max(X, y, loss, penalty="l1")
            for div in divs:
                if (name, loss, div) in done:
                    cells.append(done[(name, loss, div)])
                    continue
                cells.append(_l1_cell(name, X, y, loss, lmax / div, div, args))
                cells[-1]["load"] = os.getloadavg()[0]
                cells[-1]["commit"] = _commit()
                with CELLS.open("a") as fh:         # kept as measured: a run can resume
                    fh.write(json.dumps(cells[-1]) + "\n")
                print(cells[-1], flush=True)
    lines += _l1_table(cells)
    missing = [f"{n} {lo} /{dv}" for n in sets for lo in losses for dv in divs
               if not any(c["set"] == n and c["loss"] == lo and c["div"] == dv for c in cells)]
    if missing:
        lines += [f"Not measured (the run was stopped for time): {', '.join(missing)}.", ""]
    if not args.no_paths:
        lines += _l1_paths(args, sets)
    return lines


def _l1_cell(name, X, y, loss, l1, div, args):
    prob = pd.Problem(X, y, loss=loss, lam=0.0, l1=l1)
    best = ours(X, y, loss, l1, 1e-9)                     # the dual bound D*
    t, res = _timed(lambda: ours(X, y, loss, l1, TARGET))
    for _ in range(args.repeat - 1):
        t = min(t, _timed(lambda: ours(X, y, loss, l1, TARGET))[0])
    dstar = max(best.dual, res.dual)
    target = dstar + TARGET * abs(dstar)
    cell = {"set": name, "loss": loss, "div": div, "n": X.shape[0], "d": X.shape[1],
            "ours": t, "ours_gap": res.rel_gap, "ours_ok": res.converged,
            "support": int(np.count_nonzero(res.coef)), "ours_epochs": res.n_epochs}
    for peer, (fit, tols) in PEERS.items():
        if peer in ("celer", "skglm") and loss != "logistic":
            continue
        pt, tol, p = peer_time(fit, tols, X, y, loss, l1, prob, target, args.budget,
                               args.repeat)
        cell[peer] = pt
        cell[peer + "_tol"] = tol
        cell[peer + "_sub"] = (p - dstar) / abs(dstar)
    return cell


def _fmt(t):
    return "—" if t is None else f"{t:.3f}"


def _l1_table(cells):
    out = ["### Time to the same sub-optimality (seconds; ratio = ours / fastest peer)", "",
           "| set | n x d | loss | l1_max/ | support | ours (gap) | LIBLINEAR (-e) | "
           "celer (tol) | skglm (tol) | ratio | load |",
           "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    ratios = []
    for c in cells:
        peers = [c.get(p) for p in PEERS if c.get(p) is not None]
        ratio = c["ours"] / min(peers) if peers else None
        if ratio is not None:
            ratios.append(ratio)

        def peer(p):
            if p not in c:
                return "n/a"
            return f"{_fmt(c[p])} ({c[p + '_tol']:g})" if c[p] is not None else \
                f"not reached ({c[p + '_sub']:.1e})"
        out.append(f"| {c['set']} | {c['n']} x {c['d']} | {c['loss']} | {c['div']} | "
                   f"{c['support']} | {c['ours']:.3f} ({c['ours_gap']:.1e}"
                   f"{'' if c['ours_ok'] else ', NOT converged'}) | {peer('LIBLINEAR')} | "
                   f"{peer('celer')} | {peer('skglm')} | "
                   f"{'—' if ratio is None else f'{ratio:.2f}'} | "
                   f"{c.get('load', float('nan')):.0f} |")
    commits = sorted({c.get("commit", "before 5f44ae6") for c in cells})
    if commits:
        out += ["", "Rows by the commit of the solver they measured: " + "; ".join(
            f"{k}: " + ", ".join(sorted({c['set'] for c in cells
                                        if c.get('commit', 'before 5f44ae6') == k}))
            for k in commits) + "."]
    if ratios:
        r = np.array(ratios)
        out += ["", f"Ratio ours / fastest peer over {r.size} cells: median {np.median(r):.2f}, "
                    f"max {r.max():.2f}; at most 1.0 in {int((r <= 1.0).sum())} of {r.size}.",
                ""]
    return out


#: the configurations of a path row: (label, l1_path keywords); the first two are
#: the target's pair (the same shared set-up and warm starts, screening on / off)
PATH_CONFIGS = (("with screening", {}),
                ("screening=False", {"screening": False}),
                ("no screening, no working set", {"screening": False, "working_set": False}),
                ("solve() a point, with screening", {"share_setup": False}),
                ("solve() a point, screening=False", {"share_setup": False, "screening": False}))
#: the target: the path with screening at most this share of the time without
PATH_TARGET = 0.5


def _l1_paths(args, sets):
    out = [f"### L1 paths: {args.path_points} values, l1_max to l1_max/100, "
           f"tol 1e-6 (seconds, best of {args.repeat})", "",
           "One `l1_path` (`solver=\"l1cd\"`) per column, all in the same minutes: the "
           "first three share the set-up across the points (`sparse_path`), the last two "
           "call `solve()` at every point.  The ratio is with / without screening on the "
           f"shared path (`screening=False`: the same set-up, warm starts and working "
           f"sets, every column read at every check); the target is at most "
           f"{PATH_TARGET}.", "",
           "| set | loss | " + " | ".join(c for c, _ in PATH_CONFIGS)
           + " | ratio (with / without) | target 0.5 | passes (with / without) "
           "| points converged | load | commit |",
           "|---|---|" + "---:|" * (len(PATH_CONFIGS) + 6)]
    done = {}
    if PATHS.exists() and not (args.fresh or args.fresh_paths):
        for line in PATHS.read_text().splitlines():
            r = json.loads(line)
            if len(r["times"]) == len(PATH_CONFIGS):     # rows of this layout only
                done[(r["set"], r.get("loss", "logistic"), r["points"])] = r
    for loss in args.path_losses.split(","):
        for name in args.path_sets.split(","):
            row = done.get((name, loss, args.path_points))
            if row is None and not args.no_new_cells:
                row = _l1_path_row(name, loss, args)
            if row is None:
                continue
            t = row["times"]
            ratio = t[0] / t[1]
            ps = row.get("passes")
            passes = "—" if ps is None else f"{ps[0]:.0f} / {ps[1]:.0f}"
            out.append(f"| {name} | {loss} | " + " | ".join(f"{x:.2f}" for x in t)
                       + f" | {ratio:.2f} | {'met' if ratio <= PATH_TARGET else 'not met'} | "
                       f"{passes} | {row['converged']}/{row['points']} | "
                       f"{row.get('load', float('nan')):.1f} | {row.get('commit', '?')} |")
    return out + ["", "Passes: the entries the path read (`feature_accesses`), over the "
                      "entries of the data; exact counts, independent of the load.", ""]


def _l1_path_row(name, loss, args):
    data = load_set(name)
    if data is None:
        return None
    X, y = data
    l1_path(X[:200], y[:200], n_l1s=5, eps=1e-2, loss=loss)   # compile / load the kernels
    times, conv = [np.inf] * len(PATH_CONFIGS), None
    passes = [0.0] * len(PATH_CONFIGS)
    for _ in range(args.repeat):
        for k, (label, kw) in enumerate(PATH_CONFIGS):
            t, p = _timed(lambda: l1_path(X, y, n_l1s=args.path_points, eps=1e-2,
                                          loss=loss, **kw))
            times[k] = min(times[k], t)
            passes[k] = sum(r.feature_accesses for r in p.results) / X.nnz
            c = int(p.converged.sum())
            conv = c if conv is None else min(conv, c)
            print(name, loss, label, f"{t:.2f}", flush=True)
    row = {"set": name, "loss": loss, "points": args.path_points, "times": times,
           "passes": passes, "converged": conv,
           "configs": [c for c, _ in PATH_CONFIGS], "load": os.getloadavg()[0],
           "commit": _commit()}
    with PATHS.open("a") as fh:
        fh.write(json.dumps(row) + "\n")
    return row


FAMILIES = {"l1": run_l1}


# --------------------------------------------------------------- output
def _header():
    load = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    return [f"Written {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; `uptime` then: "
            f"{load}; {os.cpu_count()} cores shared with other jobs; one thread per "
            f"solver; library at commit {_commit()}.  Rows are kept from the run that "
            f"measured them (results/models-l1*.jsonl, with their commit); the load "
            f"column is the 1-minute load average then: with other jobs on the cores "
            f"every time is inflated and noisy, and only the ratios (peers timed in the "
            f"same minutes) are meaningful.",
            ""]


def write_section(family, lines):
    """Replace the section of ``family`` in the results file (others are kept)."""
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    text = RESULTS.read_text() if RESULTS.exists() else (
        "# Model families against their peers (benchmarks/bench_models.py)\n")
    begin, end = f"<!-- family:{family} -->", f"<!-- /family:{family} -->"
    block = "\n".join([begin] + lines + [end])
    pattern = re.compile(re.escape(begin) + ".*?" + re.escape(end), re.S)
    text = pattern.sub(lambda _m: block, text) if pattern.search(text) \
        else text.rstrip("\n") + "\n\n" + block + "\n"
    RESULTS.write_text(text)
    print(f"wrote {RESULTS}")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--family", choices=sorted(FAMILIES), required=True)
    ap.add_argument("--sets", default=None, help="comma-separated set names")
    ap.add_argument("--path-sets", default="a9a,reuters,rcv1-shape,news20")
    ap.add_argument("--path-points", type=int, default=100)
    ap.add_argument("--path-losses", default="logistic,squared_hinge")
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--budget", type=float, default=60.0,
                    help="seconds after which a peer's tolerance sweep stops")
    ap.add_argument("--quick", action="store_true", help="a9a and reuters, 20-point paths")
    ap.add_argument("--fresh", action="store_true",
                    help="measure every cell again (default: reuse results/models-l1.jsonl)")
    ap.add_argument("--redo", default="",
                    help="comma-separated sets whose cells are measured again")
    ap.add_argument("--no-paths", action="store_true", help="skip the path section")
    ap.add_argument("--fresh-paths", action="store_true",
                    help="measure the path rows again (the cells are kept)")
    ap.add_argument("--paths-only", action="store_true",
                    help="measure only the path rows (tabulate the cells already measured)")
    ap.add_argument("--no-new-cells", action="store_true",
                    help="tabulate the cells already measured, measure none")
    args = ap.parse_args(argv)
    if args.quick:
        args.sets = args.sets or "a9a,reuters"
        args.path_sets, args.path_points, args.repeat = "a9a,reuters", 20, 1
    head = _header()
    lines = FAMILIES[args.family](args)
    title = {"l1": "## Sparse models: L1 logistic and L1 squared hinge (lam = 0)"}
    write_section(args.family, [title.get(args.family, f"## {args.family}"), ""] + head
                  + lines)


if __name__ == "__main__":
    main()
