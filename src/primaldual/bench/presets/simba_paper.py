"""Preset ``simba-paper``: Figure 1 of Hazan, Koren & Srebro, "Beating SGD:
Learning SVMs in Sublinear Time" (NIPS 2011), Section 6
(``../shared/papers/004_3474525138a58ec3.txt``): test error against *feature
accesses*, averaged over seeds, SVM-SIMBA against Pegasos, each with its
trade-off parameter tuned for the lowest test error.

Runs: **Pegasos** is ``solver="sgd", project=True`` for every ``lam`` in
:data:`LAMS` (a row method counts the nonzeros of each row it reads); **SIMBA**
is ``solver="simba", schedule="adaptive_sqrt"`` for every ``nu`` in :data:`NUS`
(nu is tuned directly, as the paper does; the grid brackets Lemma 2.1's values
for Pegasos' lam grid on reuters, and :data:`SIMBA_LAM` only sets the objective
the rescaled output's certificate is reported in).  Both run ``max_epochs``
passes (``feature_accesses = max_epochs * nnz``), checked every 0.05 pass,
``tol = 0``.  :func:`figures` keeps, per data set and method, the parameter with
the lowest *final* mean test error; every curve's best point is in
``simba_summary.json``.

Data (rows scaled to unit L2 norm, as Algorithm 1 needs ``||x_i|| <= 1``): the
real **reuters** (7,770 train / 3,299 test; left out of the full preset when
absent, required by ``quick``), and the planted **news20** and **real-sim**
shapes (``planted:news20``, 8,000 train / 11,996 test; ``planted:real-sim``,
20,000 / 52,309), which keep the originals' n, d and sparsity and take their
labels from a sparse model on mid-frequency features, learnable from the
paper's training sizes (docs/reproducing-simba.md).  ``quick=True`` runs reuters
only, with 3 seeds and 5 passes.
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from ... import datasets as D
from ..config import BenchConfig, DatasetSpec, Experiment, LossSpec, ReferenceSettings, \
    SolverSpec
from ..plots import _plt, line_style

NAME = "simba-paper"
DESCRIPTION = ("SIMBA paper Fig. 1: test error vs feature accesses (log), mean ± std over "
               "10 seeds, SIMBA vs Pegasos tuned over nu / lam; reuters, news20- and "
               "real-sim-shaped data")

#: Pegasos' lam grid
LAMS = (1e-3, 1e-4, 1e-5)
#: SIMBA's nu grid (brackets Lemma 2.1's nu for LAMS on reuters)
NUS = (3e-2, 1e-2, 3e-3, 1e-3, 3e-4, 1e-4)
#: the lam in which SIMBA's certificate is reported (it does not change its iterates)
SIMBA_LAM = 1e-4
#: checks (trace points) every this many passes
CHECK_EVERY = 0.05
FULL_SEEDS = tuple(range(10))
QUICK_SEEDS = (0, 1, 2)
FULL_PASSES = 20.0
QUICK_PASSES = 5.0

HINGE = LossSpec(name="hinge", label="hinge")
PEGASOS = SolverSpec(name="sgd", options=(("project", True),), label="Pegasos")


def simba_spec(nu):
    """SIMBA with slack budget ``nu`` and the adaptive sqrt schedule."""
    return SolverSpec(name="simba", options=(("nu", float(nu)), ("schedule", "adaptive_sqrt")),
                      label=f"SIMBA nu={nu:g}")


REUTERS = DatasetSpec(name="reuters", label="reuters")
NEWS20 = DatasetSpec(name="news20", source="planted", n=8000, n_test=11996,
                     label="news20-shaped")
REAL_SIM = DatasetSpec(name="real-sim", source="planted", n=20000, n_test=52309,
                       label="real-sim-shaped")


def datasets(quick):
    """reuters (when its files are found) and the two planted shapes; ``quick``:
    reuters only, and a ValueError if it is missing."""
    have = "reuters" in D.available_real()
    if quick:
        if not have:
            raise ValueError("--preset simba-paper --quick runs on the real reuters set, "
                             "but reuters.bz2 / reuters.t.bz2 were not found in the data "
                             "folders (primaldual.datasets.search_path()); put them there "
                             "or run the full preset, which uses the planted shapes")
        return [REUTERS]
    return ([REUTERS] if have else []) + [NEWS20, REAL_SIM]


def build(quick: bool = False) -> BenchConfig:
    data = datasets(quick)
    common = dict(datasets=data, losses=[HINGE], max_epochs=QUICK_PASSES if quick
                  else FULL_PASSES, tol=0.0, check_every=CHECK_EVERY, reference=False,
                  plots=[])
    experiments = [
        Experiment(name="pegasos", lams=list(LAMS), solvers=[PEGASOS],
                   title="Pegasos (sgd, project=True), lam grid", **common),
        Experiment(name="simba", lams=[SIMBA_LAM], solvers=[simba_spec(nu) for nu in NUS],
                   title="SIMBA (adaptive_sqrt), nu grid", **common),
    ]
    seeds = list(QUICK_SEEDS if quick else FULL_SEEDS)
    what = (f" (quick: reuters, {len(seeds)} seeds, {QUICK_PASSES:g} passes)" if quick
            else f" ({len(seeds)} seeds, {FULL_PASSES:g} passes)")
    return BenchConfig(name=NAME, experiments=experiments, seeds=seeds,
                       reference=ReferenceSettings(liblinear=False),
                       description=DESCRIPTION + what)


# ----------------------------------------------------------------- analysis
def _param(run):
    """('lam', value) for Pegasos, ('nu', value) for SIMBA."""
    if run.solver_name == "simba":
        return "nu", float(run.options["nu"])
    return "lam", float(run.lam)


def mean_curve(runs):
    """(accesses, mean, std, n_seeds) over the runs' traces, point by point.

    Every run checks on the same grid of passes, so the k-th trace points line
    up. The x value is the mean feature-access count at point k, which differs
    between seeds only by SIMBA's last-iteration overshoot. Points without a
    test error and the access-0 start (off a log axis) are dropped.
    """
    series = []
    for r in runs:
        pts = [(rec["feature_accesses"], rec["test_error"]) for rec in r.trace
               if rec.get("test_error") is not None and rec.get("feature_accesses", 0) > 0]
        if pts:
            series.append(np.asarray(pts, dtype=float))
    if not series:
        return None
    m = min(len(s) for s in series)
    stack = np.stack([s[:m] for s in series])            # (seeds, points, 2)
    return stack[:, :, 0].mean(0), stack[:, :, 1].mean(0), stack[:, :, 1].std(0), \
        len(series)


def analyse(result):
    """Per data set: every (method, parameter) curve, the tuned one of each method,
    and the feature accesses each tuned method needs to reach Pegasos' best mean
    test error (the paper's comparison)."""
    runs = [r for r in result.runs if r.status == "ok" and r.trace]
    out = {}
    for ds in dict.fromkeys(r.dataset for r in runs):
        groups = {}
        for r in runs:
            if r.dataset != ds:
                continue
            method = "SIMBA" if r.solver_name == "simba" else "Pegasos"
            groups.setdefault((method,) + _param(r), []).append(r)
        curves = {}
        for key, rs in groups.items():
            c = mean_curve(rs)
            if c is not None:
                curves[key] = c
        entry = {"configs": [], "tuned": {}}
        for (method, pname, pval), (acc, mean, sd, k) in sorted(curves.items()):
            entry["configs"].append({
                "method": method, pname: pval, "seeds": k,
                "final_mean": float(mean[-1]), "final_std": float(sd[-1]),
                "best_mean": float(mean.min()), "best_at_accesses": float(acc[mean.argmin()]),
                "final_accesses": float(acc[-1])})
        for method in ("Pegasos", "SIMBA"):
            keys = [k for k in curves if k[0] == method]
            if keys:
                best = min(keys, key=lambda k: curves[k][1][-1])
                entry["tuned"][method] = {"param": best[1], "value": best[2],
                                          "curve": curves[best]}
        if "Pegasos" in entry["tuned"]:
            target = float(entry["tuned"]["Pegasos"]["curve"][1].min())
            entry["pegasos_best"] = target
            reach = {}
            for method, t in entry["tuned"].items():
                acc, mean = t["curve"][0], t["curve"][1]
                hit = np.flatnonzero(mean <= target + 1e-12)
                reach[method] = float(acc[hit[0]]) if hit.size else None
            entry["accesses_to_pegasos_best"] = reach
            if reach.get("SIMBA") and reach.get("Pegasos"):
                entry["pegasos_over_simba"] = reach["Pegasos"] / reach["SIMBA"]
        out[ds] = entry
    return out


def _jsonable(analysis):
    out = {}
    for ds, e in analysis.items():
        d = {k: v for k, v in e.items() if k != "tuned"}
        d["tuned"] = {}
        for method, t in e["tuned"].items():
            acc, mean, sd, k = t["curve"]
            d["tuned"][method] = {t["param"]: t["value"], "seeds": k,
                                  "accesses": acc.tolist(), "mean": mean.tolist(),
                                  "std": sd.tolist()}
        out[ds] = d
    return out


# ----------------------------------------------------------------- figures
def figure(analysis, path, title):
    """One panel per data set: tuned Pegasos and tuned SIMBA, mean ± std test error
    against feature accesses (log x), with Pegasos' best mean as a dotted line."""
    plt = _plt()
    names = list(analysis)
    cols = max(len(names), 1)
    fig, axes = plt.subplots(1, cols, figsize=(max(4.2 * cols, 5.6), 3.6), squeeze=False)
    for ax, ds in zip(axes[0], names):
        e = analysis[ds]
        for k, method in enumerate(("Pegasos", "SIMBA")):
            t = e["tuned"].get(method)
            if t is None:
                continue
            acc, mean, sd, n_seeds = t["curve"]
            style = line_style(k)
            sym = "λ" if t["param"] == "lam" else "ν"
            ax.errorbar(acc, mean, yerr=sd, color=style["color"], linewidth=1.2,
                        elinewidth=0.7, capsize=1.5, errorevery=max(1, len(acc) // 25),
                        label=f"{method} ({sym}={t['value']:g})")
        if "pegasos_best" in e:
            ax.axhline(e["pegasos_best"], color="0.4", linestyle=":", linewidth=0.9,
                       label="Pegasos' best mean")
        ax.set_xscale("log")
        ax.set_xlabel("feature accesses", fontsize=8)
        ax.set_ylabel("test error", fontsize=8)
        seeds = max((t["curve"][3] for t in e["tuned"].values()), default=0)
        ax.set_title(f"{ds} (mean ± std, {seeds} seeds)", fontsize=9)
        ax.tick_params(labelsize=7)
        ax.grid(True, which="both", alpha=0.25)
        ax.legend(fontsize=7)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=80)
    plt.close(fig)
    return path


def _markdown(analysis):
    lines = ["| data set | method | parameter | final test error (mean ± std) | best mean "
             "| at accesses |", "|---|---|---|---|---|---|"]
    for ds, e in analysis.items():
        tuned = {(m, t["value"]) for m, t in e["tuned"].items()}
        for c in e["configs"]:
            pname = "lam" if "lam" in c else "nu"
            mark = " **(tuned)**" if (c["method"], c[pname]) in tuned else ""
            lines.append(f"| {ds} | {c['method']} | {pname}={c[pname]:g}{mark} | "
                         f"{c['final_mean']:.4f} ± {c['final_std']:.4f} | "
                         f"{c['best_mean']:.4f} | {c['best_at_accesses']:.3g} |")
    lines.append("")
    for ds, e in analysis.items():
        if "pegasos_best" not in e:
            continue
        reach = e["accesses_to_pegasos_best"]
        fmt = {m: (f"{v:.3g}" if v is not None else "not reached") for m, v in reach.items()}
        ratio = e.get("pegasos_over_simba")
        lines.append(f"- {ds}: Pegasos' best mean test error {e['pegasos_best']:.4f}; feature "
                     f"accesses to reach it: " + ", ".join(f"{m} {v}" for m, v in fmt.items())
                     + (f" (Pegasos / SIMBA = {ratio:.3g})" if ratio else ""))
    return "\n".join(lines) + "\n"


def figures(result, out_dir):
    """Fig. 1 as ``out_dir/figures/simba_fig1.png``; the tuning table and the
    accesses-to-Pegasos'-best comparison in ``out_dir/simba_summary.{json,md}``."""
    out_dir = Path(out_dir)
    analysis = analyse(result)
    (out_dir / "simba_summary.json").write_text(json.dumps(_jsonable(analysis), indent=1))
    (out_dir / "simba_summary.md").write_text(_markdown(analysis))
    quick = "(quick" in result.config.description
    title = ("Fig. 1: test error vs feature accesses\nSIMBA vs Pegasos, each tuned"
             + (" [quick]" if quick else ""))
    return [figure(analysis, out_dir / "figures" / "simba_fig1.png", title)]
