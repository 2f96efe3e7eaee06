"""``primaldual fit``: read, fit, report and save, in that order.

The request is parsed and checked (:mod:`.request`), TRAIN and TEST are read
once (:mod:`.prepare`), the model is fitted by the one fit core
(:func:`.core.fit_model`: two labels, one-vs-rest, regression, or a Dask
cluster with ``--scheduler``), and :func:`.report.finish` writes the model,
trace and plot and prints the summary.
"""
from __future__ import annotations

from .._util.lazy import lazy_attr
from .core import fit_model
from .prepare import read_training_data
from .report import finish


def cmd_fit(req) -> int:
    if req.scheduler is not None:
        fitted = fit_model(req, None)
        data = lazy_attr("primaldual.cli.cluster", "test_data")(req, fitted)
    else:
        data = read_training_data(req)
        fitted = fit_model(req, data)
    return finish(req, fitted, data)
