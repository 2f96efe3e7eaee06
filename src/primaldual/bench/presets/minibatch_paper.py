"""Preset ``minibatch-paper``: the structure of Fig. 1 of Takac, Richtarik &
Srebro, "Distributed Mini-Batch SDCA" (``../shared/papers/001_654b8d95643c57a6.txt``).

Top row: epochs (data accesses) needed to reach a fixed duality gap as the
mini-batch size ``b`` grows, for standard sampling (``C = 1``) and
``(C, b)``-distributed sampling with ``C in {2, 4, 8, 16}`` (safe ESO steps,
``sigma="power"``); the harness tables give epochs-to-gap per run, and the
ratio to ``b = 1`` is the paper's y-axis.  Bottom row: mSDCA against CoCoA+
(adding) with ``H in {1, b/C, n/C}`` for ``C = 4`` and ``C = 16`` (``b = 16 C``),
gap against epochs and against rounds (``rounds`` is in every trace record).

Data: reuters and covtype (real, shared data folder; covtype subsampled,
max-abs scaled, unit rows) and the seeded rcv1- and news20-shaped synthetic
sets.  Loss: hinge (the paper solves the SVM dual), ``lam = 1e-4``.  All
partitions are simulated on one machine (the local engine gives the same
iterates as the Dask engine, see ``docs/distributed.md``).
"""
from __future__ import annotations

from ..config import BenchConfig, DatasetSpec, Experiment, LossSpec, ReferenceSettings, \
    SolverSpec

NAME = "minibatch-paper"
DESCRIPTION = ("Mini-batch SDCA paper Fig. 1: epochs to a gap vs b and C (standard vs "
               "distributed sampling); mSDCA vs CoCoA+ with H in {1, b/C, n/C}")

LAM = 1e-4
CS = (1, 2, 4, 8, 16)


def _msdca(b, C):
    if b == 1:
        return SolverSpec(name="minibatch_sdca",
                          options=(("batch_size", 1), ("sampling", "serial")), label="b=1")
    if C == 1:
        return SolverSpec(name="minibatch_sdca",
                          options=(("batch_size", b), ("sampling", "standard")),
                          label=f"b={b} standard")
    return SolverSpec(name="minibatch_sdca",
                      options=(("batch_size", b), ("n_partitions", C),
                               ("sampling", "distributed")), label=f"b={b} C={C}")


def _cocoa(C, H, label):
    return SolverSpec(name="cocoa", options=(("local_iters", H), ("n_partitions", C)),
                      label=label)


def datasets(quick):
    from ... import datasets as D
    n = 2000 if quick else None
    out = [DatasetSpec(name="rcv1", source="synthetic", n=n or 20242, label="rcv1-like"),
           DatasetSpec(name="news20", source="synthetic", n=n or 19996, label="news20-like")]
    real = D.available_real()
    if "reuters" in real:
        out.append(DatasetSpec(name="reuters", n=n, label="reuters"))
    if "covtype" in real:
        out.append(DatasetSpec(name="covtype", n=3000 if quick else 50000,
                               subsample="random", scale="maxabs+unit", label="covtype"))
    return out


def build(quick: bool = False) -> BenchConfig:
    data = datasets(quick)
    hinge = LossSpec(name="hinge", label="hinge")
    bs = (16, 256) if quick else (16, 128, 1024, 8192)
    top = [_msdca(1, 1)] + [_msdca(b, C) for b in bs for C in CS if b % C == 0]
    epochs = 10 if quick else 60
    n_ref = 2000 if quick else 20000
    bottom = []
    for C in (4, 16):
        b = 16 * C
        bottom += [_msdca(b, C), _cocoa(C, 1, f"CoCoA+ C={C} H=1"),
                   _cocoa(C, b // C, f"CoCoA+ C={C} H=b/C"),
                   _cocoa(C, n_ref // C, f"CoCoA+ C={C} H=n/C")]
    experiments = [
        Experiment(name="b-and-C", datasets=data, losses=[hinge], lams=[LAM], solvers=top,
                   max_epochs=epochs, tol=1e-4, reference=False, plots=[],
                   title="epochs to gap vs b and C (Fig. 1, top)"),
        Experiment(name="msdca-vs-cocoa", datasets=data, losses=[hinge], lams=[LAM],
                   solvers=bottom, max_epochs=epochs, tol=1e-6, reference=False,
                   title="mSDCA vs CoCoA+ (Fig. 1, bottom)"),
    ]
    return BenchConfig(name=NAME, experiments=experiments, seeds=[0],
                       reference=ReferenceSettings(liblinear=False),
                       description=DESCRIPTION + (" (quick: n = 2000)" if quick else ""))
