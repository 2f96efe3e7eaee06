"""Preset ``spdc-paper``: Figs. 1 and 2 of Zhang & Xiao (ICML 2015), Section 5.

Paper: *Stochastic Primal-Dual Coordinate Method for Regularized Empirical
Risk Minimization* (``../shared/papers/002_9d6c3ba41d14d699.txt``).  Loss: the
smoothed hinge with gamma = 1 (the paper's ``phi_i``), L2 penalty,
``lam in {1e-4, 1e-5, 1e-6, 1e-7, 1e-8}``; y-axis ``log(P(x^t) - P*)``
against passes over the data.

- Fig. 1: SPDC (Algorithm 1, m = 1, Theorem 1's parameters) vs AFG
  (Nesterov 2013 line search) and L-BFGS (memory 30).
- Fig. 2: SPDC vs SAG, SDCA (as the paper runs it: no shrinking) and ASDCA
  (Shalev-Shwartz & Zhang 2014).  The paper ran ASDCA only where
  ``lam <= R^2/(10 n)``; here it runs everywhere and warns where the
  condition fails.

Data: real Covtype (``covtype.libsvm.binary.bz2`` from the shared folder;
features divided by their largest absolute value, rows at unit norm) and the
RCV1- and News20-shaped synthetic sets of
:func:`primaldual.datasets.make_synthetic` (the originals are not shipped).
The full preset uses all of RCV1's shape (20,242 rows), 100,000 Covtype rows
and 10,000 News20 rows (d = 1.36M kept), so that it finishes in tens of
minutes on two cores; ``quick`` uses 2,000 rows each and lam down to 1e-6.
"""
from __future__ import annotations

from pathlib import Path

from ..config import BenchConfig, DatasetSpec, Experiment, LossSpec, ReferenceSettings, \
    SolverSpec
from ... import datasets as D
from .sdca_paper import _figure, _one, _xy

NAME = "spdc-paper"
DESCRIPTION = ("SPDC paper Figs. 1-2: smoothed hinge (gamma=1), lam 1e-4..1e-8, SPDC vs "
               "AFG/L-BFGS and vs SAG/SDCA/ASDCA on Covtype, RCV1- and News20-shaped data")

LAMS = (1e-4, 1e-5, 1e-6, 1e-7, 1e-8)
LOSS = LossSpec(name="smooth_hinge", params=(("gamma", 1.0),), label="smoothed hinge γ=1")

SPDC = SolverSpec(name="spdc", label="SPDC")
AFG = SolverSpec(name="afg", label="AFG")
LBFGS = SolverSpec(name="lbfgs", label="L-BFGS")
SAG = SolverSpec(name="sag", label="SAG")
SDCA = SolverSpec(name="sdca", options=(("shrinking", False),), label="SDCA")
ASDCA = SolverSpec(name="asdca", label="ASDCA")


def datasets(quick):
    n_cov, n_rcv, n_news = (2000, 2000, 2000) if quick else (100000, None, 10000)
    out = []
    if "covtype" in D.available_real():
        out.append(DatasetSpec(name="covtype", n=n_cov, subsample="random" if not quick
                               else "head", scale="maxabs+unit", label="Covtype"))
    out.append(DatasetSpec(name="rcv1", source="synthetic", n=n_rcv, label="RCV1-shaped"))
    out.append(DatasetSpec(name="news20", source="synthetic", n=n_news,
                           label="News20-shaped"))
    return out


def build(quick: bool = False) -> BenchConfig:
    data = datasets(quick)
    lams = [lam for lam in LAMS if lam >= 1e-6] if quick else list(LAMS)
    common = dict(datasets=data, losses=[LOSS], lams=lams,
                  max_epochs=20 if quick else 100, tol=1e-12, check_every=1.0,
                  plots=["subopt-epochs"], reference=True)
    experiments = [
        Experiment(name="batch", solvers=[SPDC, AFG, LBFGS],
                   title="Fig. 1: SPDC vs AFG and L-BFGS", **common),
        Experiment(name="stochastic", solvers=[SPDC, SAG, SDCA, ASDCA],
                   title="Fig. 2: SPDC vs SAG, SDCA and ASDCA", **common),
    ]
    ref = ReferenceSettings(tol=1e-12, max_epochs=300 if quick else 3000, liblinear=False)
    return BenchConfig(name=NAME, experiments=experiments, seeds=[0], reference=ref,
                       description=DESCRIPTION + (" (quick: 2000 rows)" if quick else ""))


def figures(result, out_dir):
    """Figs. 1 and 2: log optimality gap P - P* against passes, a panel per
    (lam, data set), written to ``out_dir/figures/spdc_fig{1,2}.png``."""
    out_dir = Path(out_dir) / "figures"

    def metric(solver, experiment):
        def fn(ds, lam):
            r = _one(result, ds, lam, loss=LOSS.label, solver=solver, experiment=experiment)
            return None if r is None else _xy(r.trace, "subopt")
        return fn

    made = []
    for num, exp, solvers in ((1, "batch", ("SPDC", "AFG", "L-BFGS")),
                              (2, "stochastic", ("SPDC", "SAG", "SDCA", "ASDCA"))):
        lines = [(s, metric(s, exp)) for s in solvers]
        made.append(_figure(result, out_dir / f"spdc_fig{num}.png",
                            f"Fig. {num}: log optimality gap vs passes ({', '.join(solvers)})",
                            lines, ylabel="P(w) - P*"))
    return made
