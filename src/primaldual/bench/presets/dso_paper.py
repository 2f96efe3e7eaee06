"""Preset ``dso-paper``: the structure of Figs. 2-5 of Matsushima, Yun, Zhang &
Vishwanathan, "Distributed Stochastic Optimization of the Regularized Risk"
(``../shared/papers/003_90d94d27682507e5.txt``).

* Fig. 2 (drawn by :func:`figures`, measured directly on a larger real-sim-like
  set, 20,000 rows in quick mode, the full 72,309 otherwise): time per DSO epoch
  against ``p`` on the Dask ring (LocalCluster with 2 worker processes, so
  ``p = 1, 2`` here), fitted to Section 3.1's ``|Omega| T_u / p + T_c``;
  predicted against measured, with the compute-only critical path.
* Fig. 3 (harness experiment ``fig3``): test error against iterations for
  DSO, SGD and BMRM, hinge loss, ``lam in {1e-5, 1e-6}`` on a real-sim-shaped
  set with learnable labels (``make_planted_text("real-sim")``, data source
  ``planted:real-sim``; ``make_synthetic``'s dense planted model leaves every
  method near 0.4 test error, so the curves compared nothing).
* Fig. 4 (experiment ``fig4``): logistic regression, test error against time.
* Fig. 5 (drawn by :func:`figures`): PSGD, BMRM and DSO with ``p = 2`` Dask
  workers (DSO's ring and PSGD's parts on the workers, ``client=``), test
  error against time; if no LocalCluster can be started, the local
  simulation (same iterates) is used and the figure says so.

DSO runs with its defaults (AdaGrad + SVRG, Appendix A), SGD is Pegasos-style
SGD (``solvers/sgd.py``), BMRM the exact bundle method (one iteration = one
pass over the data).  ``quick=True``: 3000 training rows, a few epochs; the
whole preset then runs in well under a minute.
"""
from __future__ import annotations

import time
from pathlib import Path

import numpy as np

from ... import datasets as D
from ...solvers import solve
from ..config import BenchConfig, DatasetSpec, Experiment, LossSpec, ReferenceSettings, \
    SolverSpec

NAME = "dso-paper"
DESCRIPTION = ("DSO paper Figs. 2-5: epoch time vs p with the |Omega| T_u/p + T_c fit; test "
               "error vs iterations/time for DSO, SGD, BMRM; PSGD/BMRM/DSO on 2 Dask workers")

LAMS = (1e-5, 1e-6)
SOLVERS = (SolverSpec(name="dso", label="DSO"), SolverSpec(name="sgd", label="SGD"),
           SolverSpec(name="bmrm", label="BMRM"))


def _sizes(quick):
    return (3000, 1000) if quick else (40000, 10000)


def datasets(quick):
    n, n_test = _sizes(quick)
    return [DatasetSpec(name="real-sim", source="planted", n=n, n_test=n_test,
                        label="real-sim-like")]


def build(quick: bool = False) -> BenchConfig:
    data = datasets(quick)
    epochs = 8 if quick else 60
    experiments = [
        Experiment(name="fig3", datasets=data, losses=[LossSpec(name="hinge", label="hinge")],
                   lams=list(LAMS), solvers=list(SOLVERS), max_epochs=epochs, tol=0.0,
                   reference=False, plots=["test_error-epochs"],
                   title="Fig. 3: SVM test error vs iterations (DSO, SGD, BMRM)"),
        Experiment(name="fig4", datasets=data,
                   losses=[LossSpec(name="logistic", label="logistic")], lams=[LAMS[0]],
                   solvers=list(SOLVERS), max_epochs=epochs, tol=0.0, reference=False,
                   plots=["test_error-epochs"],
                   title="Fig. 4: logistic regression test error vs time"),
    ]
    return BenchConfig(name=NAME, experiments=experiments, seeds=[0],
                       reference=ReferenceSettings(liblinear=False),
                       description=DESCRIPTION + (" (quick: n = 3000)" if quick else ""))


# ---------------------------------------------------------------- figures
def _runs(result, experiment):
    return [r for r in result.runs if r.experiment == experiment and r.status == "ok"
            and r.trace]


def _quick(result):
    return "(quick" in result.config.description


def _save(fig, path):
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=80, bbox_inches="tight")
    import matplotlib.pyplot as plt
    plt.close(fig)
    return path


def _curves(ax, runs, xkey, label_of=lambda r: r.solver):
    for r in runs:
        xs = [rec[xkey] for rec in r.trace if rec.get("test_error") is not None]
        ys = [rec["test_error"] for rec in r.trace if rec.get("test_error") is not None]
        ax.plot(xs, ys, marker=".", label=label_of(r))
    ax.grid(True, alpha=0.3)
    ax.set_ylabel("test error")


def fig3(result, path):
    import matplotlib.pyplot as plt
    runs = _runs(result, "fig3")
    lams = sorted({r.lam for r in runs}, reverse=True)
    fig, axes = plt.subplots(1, len(lams), figsize=(4.2 * len(lams), 3.2), squeeze=False)
    for ax, lam in zip(axes[0], lams):
        _curves(ax, [r for r in runs if r.lam == lam], "epoch")
        ax.set_xlabel("iterations (epochs / BMRM iterations)")
        ax.set_title(f"hinge, λ = {lam:g}", fontsize=9)
        ax.legend(fontsize=7)
    fig.suptitle("Fig. 3: test error vs iterations (real-sim-like)", fontsize=10)
    return _save(fig, path)


def fig4(result, path):
    import matplotlib.pyplot as plt
    runs = _runs(result, "fig4")
    fig, ax = plt.subplots(figsize=(4.6, 3.2))
    _curves(ax, runs, "time")
    ax.set_xscale("log")
    ax.set_xlabel("seconds")
    ax.set_title(f"Fig. 4: logistic, λ = {LAMS[0]:g}, test error vs time", fontsize=9)
    ax.legend(fontsize=7)
    return _save(fig, path)


def _data(quick):
    """Fig. 5's data: the harness's (same generator, seed and split)."""
    n, n_test = _sizes(quick)
    X, y, _ = D.make_planted_text("real-sim", n_samples=n + n_test, random_state=0)
    return X[:n], y[:n], X[n:], y[n:]


def _cluster():
    try:
        from distributed import Client, LocalCluster
        cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                               dashboard_address=None)
        client = Client(cluster)
        client.wait_for_workers(2, timeout=60)
        return cluster, client
    except Exception as e:                      # no Dask here: simulate locally
        return None, repr(e)


def epoch_time_vs_p(X, y, client, epochs):
    """Measured seconds per DSO epoch on the ring for p = 1, 2 (wall, updates only:
    no SVRG so that an epoch is the p inner iterations of Algorithm 1), the
    compute-only critical path, and the fit |Omega| T_u / p + T_c."""
    out = {}
    for p in (1, 2):
        kw = dict(loss="hinge", lam=1e-5, solver="dso", n_workers=p, tol=0.0,
                  random_state=0, variance_reduction=None, restart=None)
        if client is not None:
            kw["client"] = client
        solve(X, y, max_epochs=1, **kw)                        # warm-up (JIT cache)
        t0 = time.perf_counter()
        res = solve(X, y, max_epochs=epochs, check_every=epochs, **kw)
        if client is not None:
            last = res.trace[-1]
            out[p] = (p * last["round_ms"] / 1e3, p * last["round_compute_ms"] / 1e3)
        else:
            t = (time.perf_counter() - t0) / epochs
            out[p] = (t, t)
    nnz = X.nnz
    m1, m2 = out[1][0], out[2][0]
    omega_tu = 2 * (m1 - m2)                    # exact through the two points
    tc = m1 - omega_tu
    return {"measured": {p: out[p][0] for p in out}, "compute": {p: out[p][1] for p in out},
            "omega_Tu": omega_tu, "T_u": omega_tu / nnz, "T_c": tc, "nnz": nnz}


def fig2(fit, path, backend):
    import matplotlib.pyplot as plt
    ps = np.arange(1, 9)
    fig, ax = plt.subplots(figsize=(4.6, 3.2))
    ax.plot(ps, 1e3 * (fit["omega_Tu"] / ps + fit["T_c"]), "--", color="0.4",
            label=f"model |Ω|T_u/p + T_c (T_u={fit['T_u'] * 1e9:.0f} ns, "
                  f"T_c={fit['T_c'] * 1e3:.0f} ms)")
    mp = sorted(fit["measured"])
    ax.plot(mp, [1e3 * fit["measured"][p] for p in mp], "o", ms=7, label=f"measured ({backend})")
    ax.plot(mp, [1e3 * fit["compute"][p] for p in mp], "s", ms=5,
            label="compute only (critical path)")
    ax.set_xlabel("p (workers)")
    ax.set_ylabel("ms per epoch")
    ax.set_title("Fig. 2: time per epoch vs p", fontsize=9)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=6)
    return _save(fig, path)


def fig5_runs(X, y, Xt, yt, client, epochs):
    """PSGD, BMRM and DSO with p = 2 (Dask when ``client`` is a Client)."""
    out = {}
    for name, opts in (("PSGD", dict(solver="psgd", n_workers=2)),
                       ("BMRM", dict(solver="bmrm")),
                       ("DSO", dict(solver="dso", n_workers=2))):
        kw = dict(loss="hinge", lam=1e-5, tol=0.0, random_state=0, max_epochs=epochs,
                  eval_set=(Xt, yt), **opts)
        if client is not None and name != "BMRM":
            kw["client"] = client
        res = solve(X, y, **kw)
        out[name] = [(rec["time"], rec["test_error"]) for rec in res.trace
                     if rec.get("test_error") is not None]
    return out


def fig5(curves, path, backend):
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(4.6, 3.2))
    for name, pts in curves.items():
        ax.plot([t for t, _ in pts], [e for _, e in pts], marker=".", label=name)
    ax.set_xscale("log")
    ax.set_xlabel("seconds")
    ax.set_ylabel("test error")
    ax.set_title(f"Fig. 5: hinge, λ = 1e-5, p = 2 ({backend})", fontsize=9)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=7)
    return _save(fig, path)


def figures(result, out_dir):
    """Figs. 2-5 as ``out_dir/figures/dso_figN.png``; the Fig. 2 fit and the Fig. 5
    curves are also written to ``out_dir/dso_measurements.json``."""
    import json
    out = Path(out_dir) / "figures"
    quick = _quick(result)
    made = [fig3(result, out / "dso_fig3.png"), fig4(result, out / "dso_fig4.png")]
    X, y, Xt, yt = _data(quick)
    cluster, client = _cluster()
    backend = "Dask LocalCluster, 2 workers" if cluster is not None else \
        "local simulation (no Dask cluster)"
    try:
        cl = client if cluster is not None else None
        X2, y2, _ = D.make_synthetic("real-sim", n_samples=20000 if quick else 72309,
                                     random_state=1)
        fit = epoch_time_vs_p(X2, y2, cl, 3 if quick else 10)
        made.append(fig2(fit, out / "dso_fig2.png", backend))
        curves = fig5_runs(X, y, Xt, yt, cl, 6 if quick else 40)
        made.append(fig5(curves, out / "dso_fig5.png", backend))
    finally:
        if cluster is not None:
            client.close()
            cluster.close()
    (Path(out_dir) / "dso_measurements.json").write_text(json.dumps(
        {"backend": backend, "fig2": {k: (v if not isinstance(v, dict) else
                                          {str(p): t for p, t in v.items()})
                                      for k, v in fit.items()},
         "fig5": curves}, indent=1))
    return made
