"""Preset ``sdca-paper``: the structure of Figs. 1-8 of Shalev-Shwartz & Zhang (2013).

Paper: *Stochastic Dual Coordinate Ascent Methods for Regularized Loss
Minimization*, JMLR 14 (``../shared/papers/000_726af24ea2e5093e.txt``),
Section 8.  Loss: the smoothed hinge ``phi_gamma`` of eq. (7) with
``gamma in {0 (= hinge), 0.01, 0.1, 1}``; ``lam in {1e-3, 1e-4, 1e-5, 1e-6}``;
data astro-ph, CCAT and cov1; SDCA exactly as the paper runs it
(``shrinking=False``): "SDCA" = uniform sampling with replacement,
"SDCA-Perm" = a fresh permutation per epoch, "Cyclic" = one random order kept;
"SGD" = the update of Section 8.6 (``solver="sgd"``).

Data (see docs/reproducing-sdca.md):

- astro-ph and CCAT: the seeded synthetic shapes of
  :func:`primaldual.datasets.make_synthetic` (the originals are not public);
  test rows (5,000) come from the same planted model.  The full preset uses
  all 29,882 astro-ph rows but only 30,000 of CCAT's 781,265 (d and density
  kept), and 25 epochs per run, so that it finishes in about 10 minutes on
  two cores.
- cov1: the real covtype (``covtype.libsvm.binary.bz2`` from the shared data
  folder), split at random into 522,911 training and 58,101 test rows as in
  the paper's table, then 50,000 training rows drawn at random; features
  divided by their largest absolute value, rows scaled to unit norm (the
  paper's theorems assume ``||x_i|| <= 1``).  The LIBSVM binary covtype is
  "Lodgepole Pine vs rest"; the paper's cov1 is "class 1 vs rest".  Only the
  binary file is available here; with no bias term, swapping which class is
  +1 changes nothing (``w -> -w``), but the class split itself differs.
  cov1 is left out when the file is not found.

Runs per (data set, lam): SDCA, SDCA-Perm and SGD on gamma = 1 and on the
hinge (Figs. 1, 2, 4, 6, 7, 8), SDCA on gamma = 0.01 and 0.1 (Fig. 3), the
cyclic order on gamma = 1 (Fig. 5).
"""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from ..config import BenchConfig, DatasetSpec, Experiment, LossSpec, ReferenceSettings, \
    SolverSpec
from ... import datasets as D
from ..plots import line_style, panel_grid, save_figure

NAME = "sdca-paper"
DESCRIPTION = ("SDCA paper Figs. 1-8: smoothed hinge gamma in {0,0.01,0.1,1}, lam 1e-3..1e-6, "
               "astro-ph / CCAT (synthetic shapes) / cov1 (covtype)")

LAMS = (1e-3, 1e-4, 1e-5, 1e-6)
GAMMAS = (0.0, 0.01, 0.1, 1.0)
#: the paper's test-error figures stop SDCA at this duality gap
TEST_GAP_STOP = 1e-5


def loss_spec(gamma):
    """gamma = 0 is the hinge itself (the smoothed hinge's limit)."""
    if gamma == 0:
        return LossSpec(name="hinge", label="hinge (γ=0)")
    return LossSpec(name="smooth_hinge", params=(("gamma", float(gamma)),),
                    label=f"γ={gamma:g}")


SDCA = SolverSpec(name="sdca", options=(("sampling", "uniform"), ("shrinking", False)),
                  label="SDCA")
SDCA_PERM = SolverSpec(name="sdca", options=(("sampling", "permutation"), ("shrinking", False)),
                       label="SDCA-Perm")
SDCA_CYCLIC = SolverSpec(name="sdca", options=(("sampling", "cyclic"), ("shrinking", False)),
                         label="Cyclic")
SGD = SolverSpec(name="sgd", options=(("sampling", "uniform"),), label="SGD")


def datasets(quick):
    """The three data sets (cov1 only when covtype is found locally)."""
    if quick:
        out = [DatasetSpec(name="astro-ph", source="synthetic", n=2000, n_test=1000,
                           label="astro-ph"),
               DatasetSpec(name="CCAT", source="synthetic", n=2000, n_test=1000, label="CCAT")]
        cov = DatasetSpec(name="covtype", n=3000, subsample="head", test_fraction=0.1,
                          scale="maxabs+unit", label="cov1")
    else:
        out = [DatasetSpec(name="astro-ph", source="synthetic", n=None, n_test=5000,
                           label="astro-ph"),
               DatasetSpec(name="CCAT", source="synthetic", n=30000, n_test=5000,
                           label="CCAT")]
        cov = DatasetSpec(name="covtype", n=50000, subsample="random",
                          test_fraction=58101 / 581012, scale="maxabs+unit", label="cov1")
    if "covtype" in D.available_real():
        out.append(cov)
    return out


def build(quick: bool = False) -> BenchConfig:
    data = datasets(quick)
    epochs = 12 if quick else 25
    common = dict(datasets=data, lams=list(LAMS), max_epochs=epochs, tol=1e-10, plots=[])
    experiments = [
        Experiment(name="sdca-vs-sgd", losses=[loss_spec(1.0), loss_spec(0.0)],
                   solvers=[SDCA, SDCA_PERM, SGD], reference=True,
                   title="SDCA, SDCA-Perm and SGD (Figs. 1, 2, 4, 6-8)", **common),
        Experiment(name="smoothness", losses=[loss_spec(0.01), loss_spec(0.1)],
                   solvers=[SDCA], reference=False, title="gamma (Fig. 3)", **common),
        Experiment(name="cyclic", losses=[loss_spec(1.0)], solvers=[SDCA_CYCLIC],
                   reference=True, title="cyclic order (Fig. 5)", **common),
    ]
    ref = ReferenceSettings(tol=1e-12, max_epochs=150 if quick else 300, liblinear=True,
                            liblinear_eps=1e-8)
    return BenchConfig(name=NAME, experiments=experiments, seeds=[0], reference=ref,
                       description=DESCRIPTION + (" (quick: small n)" if quick else ""))


# ----------------------------------------------------------------- bounds
def smooth_bound(epochs, n, lam, gamma):
    """Theorem 2: E[P(w^T) - D(alpha^T)] <= (n + 1/(lam gamma)) exp(-T / (n + 1/(lam gamma))).

    Obtained by solving the theorem's ``T >= (n + 1/(lam gamma)) log((n + 1/(lam gamma))
    / eps)`` for ``eps`` at ``T = epochs * n`` steps.
    """
    k = n + 1.0 / (lam * gamma)
    return k * np.exp(-np.asarray(epochs, dtype=float) * n / k)


def hinge_bound(epochs, n, lam):
    """Theorem 1 with Remark 2 (hinge, L = 1): the averaged output's expected gap after
    ``T = epochs * n`` steps, ``eps = 5 / (lam (T - n - max(0, ceil(n log(lam n / 2)))))``,
    defined once ``T`` exceeds the warm-up ``n + max(0, ceil(n log(lam n / 2)))``."""
    T = np.asarray(epochs, dtype=float) * n
    warm = n + max(0.0, math.ceil(n * math.log(0.5 * lam * n)))
    with np.errstate(divide="ignore"):
        out = np.where(T > warm, 5.0 / (lam * np.maximum(T - warm, 1e-300)), np.inf)
    return out


# ---------------------------------------------------------------- figures
def _pick(runs, *, loss=None, solver=None, experiment=None):
    out = [r for r in runs if r.status == "ok" and r.trace]
    if loss is not None:
        out = [r for r in out if r.loss == loss]
    if solver is not None:
        out = [r for r in out if r.solver == solver]
    if experiment is not None:
        out = [r for r in out if r.experiment == experiment]
    return out


def _xy(trace, key, *, until_gap=None):
    xs, ys = [], []
    for rec in trace:
        v = rec.get(key)
        if v is not None and np.isfinite(v) and (key == "test_error" or v > 0):
            xs.append(rec["epoch"])
            ys.append(v)
        if until_gap is not None and rec["gap"] <= until_gap:
            break
    return np.asarray(xs), np.asarray(ys)


def _figure(result, path, title, lines, *, log=True, ylabel=""):
    """``lines``: list of (label, fn(run_dataset, lam) -> (x, y) or None)."""
    runs = [r for r in result.runs if r.status == "ok"]
    dsets = list(dict.fromkeys(r.dataset for r in runs))
    lams = sorted({r.lam for r in runs}, reverse=True)
    fig, axes = panel_grid(len(lams), len(dsets), col_labels=dsets,
                           row_labels=[f"λ = {lam:g}" for lam in lams], title=title,
                           width=3.1, height=2.2)
    handles = {}
    for i, lam in enumerate(lams):
        for j, ds in enumerate(dsets):
            ax = axes[i, j]
            for k, (label, fn) in enumerate(lines):
                xy = fn(ds, lam)
                if xy is None or len(xy[0]) == 0:
                    continue
                style = line_style(k)
                if label == "bound":
                    style.update(color="0.35", linestyle="--", marker=None)
                (h,) = ax.plot(xy[0], xy[1], label=label, **style)
                handles.setdefault(label, h)
            if log:
                ax.set_yscale("log")
                ys = np.concatenate([ln.get_ydata() for ln in ax.lines
                                     if ln.get_label() != "bound"] or [np.ones(1)])
                ys = ys[np.isfinite(ys) & (ys > 0)]
                if ys.size:
                    ax.set_ylim(max(ys.min() / 3, 1e-14), ys.max() * 30)
            ax.grid(True, alpha=0.3)
            ax.tick_params(labelsize=7)
            if i == len(lams) - 1:
                ax.set_xlabel("epochs", fontsize=8)
            if j == 0 and ylabel:
                ax.set_ylabel(ylabel, fontsize=8)
    labels = [lab for lab, _ in lines if lab in handles]
    return save_figure(fig, path, handles=[handles[k] for k in labels], labels=labels,
                       dpi=72)


def _one(result, ds, lam, *, loss, solver, experiment=None):
    rs = [r for r in _pick(result.runs, loss=loss, solver=solver, experiment=experiment)
          if r.dataset == ds and r.lam == lam and r.seed == result.config.seeds[0]]
    return rs[0] if rs else None


def figures(result, out_dir):
    """Figs. 1-8 of the paper, written to ``out_dir/figures/sdca_figN.png``."""
    out_dir = Path(out_dir) / "figures"
    made = []
    g1, g0 = loss_spec(1.0).label, loss_spec(0.0).label

    def metric(loss, solver, key, until_gap=None, experiment=None):
        def fn(ds, lam):
            r = _one(result, ds, lam, loss=loss, solver=solver, experiment=experiment)
            return None if r is None else _xy(r.trace, key, until_gap=until_gap)
        return fn

    def bound(kind):
        def fn(ds, lam):
            r = _one(result, ds, lam, loss=g1 if kind == "smooth" else g0, solver="SDCA")
            if r is None:
                return None
            e = np.linspace(0, r.trace[-1]["epoch"], 200)
            n = r.data["n"]
            y = smooth_bound(e, n, lam, 1.0) if kind == "smooth" else hinge_bound(e, n, lam)
            keep = np.isfinite(y)
            return e[keep], y[keep]
        return fn

    for num, loss, kind, what in ((1, g1, "smooth", "smoothed hinge (γ=1)"),
                                  (2, g0, "hinge", "hinge (non-smooth)")):
        lines = [("primal sub-optimality", metric(loss, "SDCA", "subopt")),
                 ("dual sub-optimality", metric(loss, "SDCA", "dual_subopt")),
                 ("duality gap", metric(loss, "SDCA", "gap")),
                 ("bound", bound(kind))]
        made.append(_figure(result, out_dir / f"sdca_fig{num}.png",
                            f"Fig. {num}: SDCA on the {what}", lines))
    lines = [(loss_spec(g).label, metric(loss_spec(g).label, "SDCA", "gap"))
             for g in GAMMAS]
    made.append(_figure(result, out_dir / "sdca_fig3.png",
                        "Fig. 3: duality gap for different γ (SDCA)", lines,
                        ylabel="duality gap"))
    lines = [(f"SDCA {lab}", metric(lab, "SDCA", "test_error", TEST_GAP_STOP))
             for lab in (g1, g0)]
    made.append(_figure(result, out_dir / "sdca_fig4.png",
                        "Fig. 4: test error, γ=1 vs hinge (SDCA stopped at gap 1e-5)",
                        lines, log=False, ylabel="test error"))
    lines = [(s, metric(g1, s, "gap")) for s in ("SDCA", "SDCA-Perm", "Cyclic")]
    made.append(_figure(result, out_dir / "sdca_fig5.png",
                        "Fig. 5: uniform vs permutation vs cyclic (γ=1)", lines,
                        ylabel="duality gap"))
    for num, loss in ((6, g1), (7, g0)):
        lines = [(s, metric(loss, s, "subopt")) for s in ("SDCA", "SDCA-Perm", "SGD")]
        made.append(_figure(result, out_dir / f"sdca_fig{num}.png",
                            f"Fig. {num}: primal sub-optimality, SDCA vs SGD ({loss})", lines,
                            ylabel="primal sub-optimality"))
    lines = [(f"SDCA {g1}", metric(g1, "SDCA", "test_error", TEST_GAP_STOP)),
             (f"SGD {g0}", metric(g0, "SGD", "test_error"))]
    made.append(_figure(result, out_dir / "sdca_fig8.png",
                        "Fig. 8: test error, SDCA (γ=1) vs SGD (hinge)", lines, log=False,
                        ylabel="test error"))
    return made
