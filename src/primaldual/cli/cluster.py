"""``fit --scheduler``: a fit on a running Dask cluster from LIBSVM part files.

TRAIN (a LIBSVM file, split into part files beside it or in ``--parts-dir``,
or a directory of part files) is read by the workers themselves;
``cocoa`` or ``minibatch_sdca`` trains on one partition per part file
(``l1_newton`` with ``--penalty l1`` or ``--l1``), and ``--loss multinomial``
(``--loss crammer_singer``) trains every class in one problem with
``multinomial_newton`` (``crammer_singer_cocoa``).  The
outcome is a :class:`.core.Fitted` like every other fit, so :mod:`.report`
describes and saves it the same way.
"""
from __future__ import annotations

import time
from pathlib import Path

import numpy as np

from .._extras import require
from .._util.lazy import lazy_attr
from .output import format_label, note
from .prepare import split_bias

_DASK_SOLVERS = ("cocoa", "minibatch_sdca", "l1_newton")
#: the multiclass losses' solver on the cluster and the --solver values meaning it
_MULTICLASS = {"multinomial": ("multinomial_newton", ("auto", "newton", "multinomial_newton")),
               "crammer_singer": ("crammer_singer_cocoa",
                                  ("auto", "cocoa", "crammer_singer_cocoa"))}
_MULTICLASS_SOLVERS = tuple(v[0] for v in _MULTICLASS.values())


def _part_files(req):
    """``(parts, existing)``: the part files of a directory TRAIN, or None to split."""
    train = Path(req.train)
    if not train.is_dir():
        if not train.is_file():
            raise FileNotFoundError(f"data file not found: {train}")
        return None
    if req.normalize:
        raise ValueError(f"--normalize cannot rescale the existing part files in "
                         f"{train}; give the LIBSVM file instead of the directory")
    parts = sorted(f for f in train.iterdir() if f.is_file() and not f.name.startswith("."))
    if not parts:
        raise ValueError(f"{train} is a directory without part files")
    if req.partitions is not None and req.partitions != len(parts):
        raise ValueError(f"{train} holds {len(parts)} part files but --partitions "
                         f"{req.partitions} was given; drop --partitions")
    return parts


def _check(req):
    if req.loss_name in _MULTICLASS:
        solver, accepted = _MULTICLASS[req.loss_name]
        if req.solver not in accepted:
            raise ValueError(f"--scheduler trains --loss {req.loss_name} with "
                             f"{solver}; --solver {req.solver} does not run on Dask")
    else:
        solver = req.solver if req.solver != "auto" else \
            "l1_newton" if req.penalty == "l1" or req.l1 > 0 else "cocoa"
    if req.penalty == "l1" and req.lam is None:
        raise ValueError("--penalty l1 with --scheduler takes its strength from --lam "
                         "(-c needs the sample count, which the workers hold)")
    if solver not in _DASK_SOLVERS + _MULTICLASS_SOLVERS:
        raise ValueError(f"--scheduler trains with {' or '.join(_DASK_SOLVERS)}; "
                         f"--solver {req.solver} does not run on Dask")
    for flag, bad in (("--class-weight", req.class_weight is not None),
                      ("--checkpoint", req.checkpoint is not None)):
        if bad:
            raise ValueError(f"{flag} is not available with --scheduler (the rows stay on "
                             f"the workers); train locally to use it")
    return solver


def _connect(req, opts):
    Client = require("distributed", "--scheduler").Client
    try:
        return Client(req.scheduler, timeout=opts.pop("connect_timeout", 30))
    except (OSError, TimeoutError) as e:
        raise OSError(f"--scheduler {req.scheduler}: cannot connect to the Dask scheduler "
                      f"({e}); start one with 'dask scheduler' and workers with "
                      f"'dask worker {req.scheduler}'") from None


def _problem(req, client, parts, n_features, opts):
    paths = [str(path.resolve()) for path in parts]
    timeout = float(opts.get("round_timeout", 120.0))
    if req.loss_name in _MULTICLASS:
        return lazy_attr("primaldual.distributed.partitioned",
                         "PartitionedMulticlassProblem").from_files(
            client, paths, loss=req.loss_name, lam=req.lam, n_features=n_features,
            intercept_scaling=req.bias, round_timeout=timeout)
    PartitionedProblem = lazy_attr("primaldual.distributed.partitioned", "PartitionedProblem")
    lam, l1 = (0.0, req.lam) if req.penalty == "l1" else (req.lam, req.l1)
    try:
        return PartitionedProblem.from_files(
            client, paths, loss=req.loss_name, lam=lam, l1=l1,
            loss_params=req.solve_loss_params, n_features=n_features,
            intercept_scaling=req.bias, round_timeout=timeout)
    except ValueError as e:
        if "more than two label values" in str(e) or "parts hold the labels" in str(e):
            raise ValueError(f"{req.train}: more than two label values; --scheduler "
                             f"trains binary classification and regression. Train "
                             f"one-vs-rest locally (drop --scheduler)") from None
        raise


def fit_on_cluster(req):
    """The :class:`.core.Fitted` of a fit on the cluster at ``req.scheduler``."""
    solver = _check(req)
    parts = _part_files(req)
    opts = dict(req.options)
    client = _connect(req, opts)
    t0 = time.perf_counter()
    index_base = n_features = None
    try:
        n_workers = len(client.scheduler_info()["workers"])
        if n_workers == 0:
            raise ValueError(f"the Dask scheduler {req.scheduler} has no workers")
        if parts is None:
            train = Path(req.train)
            k = req.partitions or n_workers
            out_dir = Path(req.parts_dir) if req.parts_dir else \
                train.with_name(train.name + ".parts")
            parts, n_features, index_base = lazy_attr("primaldual.cli.files", "split_libsvm")(
                train, k, out_dir, normalize=req.normalize, with_base=True)
            note(req, f"{k} part files written to {out_dir}")
        if solver == "minibatch_sdca":
            opts.setdefault("sampling", "distributed")
        if req.time_limit is not None:
            opts["time_limit"] = req.time_limit
        pp = _problem(req, client, parts, n_features, opts)
        opts.setdefault("n_partitions", pp.n_parts)
        registry = (lazy_attr("primaldual.solvers._multiclass", "MULTICLASS_SOLVERS")
                    if solver in _MULTICLASS_SOLVERS else
                    lazy_attr("primaldual.solvers", "SOLVERS"))
        res = registry[solver].create(pp, tol=req.tol, max_epochs=req.max_epochs,
                                      random_state=req.seed, **opts).run()
    finally:
        client.close()
    if solver in _MULTICLASS_SOLVERS:
        return _multiclass_fitted(req, pp, res, t0, index_base)
    classes = np.array(pp.label_map) if pp.label_map is not None else None
    if classes is not None:
        note(req, f"labels: {format_label(classes[0])} -> -1, "
                  f"{format_label(classes[1])} -> +1")
    coef, intercept = split_bias(res.coef, req.bias)
    Fitted = lazy_attr("primaldual.cli.core", "Fitted")
    return Fitted(kind="classifier" if classes is not None else "regressor",
                  classes=classes, coef=coef.reshape(1, -1), intercept=np.array([intercept]),
                  results=[res], labels=[None],
                  lams=[float(pp.l1 if req.penalty == "l1" else res.lam)],
                  weight_totals=[float(pp.n)], n=int(pp.n), d=int(pp.n_data_features),
                  nnz=int(pp.nnz - (pp.n if req.bias is not None else 0)),
                  time_s=time.perf_counter() - t0, storage=None,
                  index_base=index_base,
                  extra={"partitions": int(pp.n_parts), "scheduler": req.scheduler})


def _multiclass_fitted(req, pp, res, t0, index_base):
    """The :class:`.core.Fitted` of a multiclass fit on the cluster: one
    problem, a row of ``coef`` per class (the classes sorted)."""
    note(req, f"{pp.K} classes in the parts ({', '.join(format_label(v) for v in pp.classes[:10])}"
              f"{', ...' if pp.K > 10 else ''}): one {req.loss_name} problem")
    pairs = [split_bias(row, req.bias) for row in np.asarray(res.coef).T]
    Fitted = lazy_attr("primaldual.cli.core", "Fitted")
    return Fitted(kind="classifier", classes=pp.classes.copy(),
                  coef=np.vstack([c for c, _ in pairs]),
                  intercept=np.array([b for _, b in pairs]), results=[res],
                  labels=list(pp.classes), lams=[float(pp.lam)], weight_totals=[pp.W],
                  n=int(pp.n), d=int(pp.n_data_features),
                  nnz=int(pp.nnz - (pp.n if req.bias is not None else 0)),
                  time_s=time.perf_counter() - t0, storage=None, index_base=index_base,
                  extra={"partitions": int(pp.n_parts), "scheduler": req.scheduler})


def test_data(req, fitted):
    """The :class:`.prepare.TrainingData` a cluster fit is reported with: no
    training rows (they stay on the workers), the --test rows if given."""
    TrainingData = lazy_attr("primaldual.cli.prepare", "TrainingData")
    Xt = yt = None
    if req.test:
        read_files = lazy_attr("primaldual.cli.libsvm", "read_files")
        (test,) = read_files([req.test], base=fitted.index_base, n_features=fitted.d)
        Xt, yt = test.matrix(dense=False), test.y
        if req.normalize:
            Xt = lazy_attr("primaldual.cli.prepare", "normalize_rows")(Xt)
        if fitted.classes is not None:
            unknown = np.setdiff1d(np.unique(yt), fitted.classes)
            if unknown.size:
                raise ValueError(f"{req.test}: labels {[format_label(v) for v in unknown[:5]]}"
                                 f" do not occur in the training parts")
    return TrainingData(None, None, Xt, yt, fitted.index_base, fitted.nnz)
