"""Dask estimators: :class:`LinearClassifier` with the local estimator's
parameters plus ``client``.

``fit`` accepts

* a list of LIBSVM/svmlight part files: each worker reads its own part with
  :func:`sklearn.datasets.load_svmlight_file` (the data never passes through
  the client); one part is one partition;
* Dask arrays ``X`` (n, d) and ``y`` (n,): each row chunk is computed on a
  worker and becomes a partition there;
* in-memory arrays (NumPy / SciPy): split into ``n_partitions`` contiguous
  blocks and sent once to the workers.

The solver is ``"cocoa"`` (the default for an L2 penalty),
``"minibatch_sdca"`` (with ``sampling="distributed"``), ``"newton"`` (the
distributed Newton-CG, for the smooth losses) or ``"l1_newton"`` (the default
for ``penalty="l1"``, ``"elasticnet"`` or ``l1 > 0``: the L1 proximal Newton
method, :mod:`primaldual.solvers.sparse.partitioned`); all run on the shared Dask engine
(:mod:`primaldual.distributed`) and return the same certified result
(``coef_``, ``dual_coef_``, ``gap_``) as the local estimator would with the
same partitioning and seed.  With a binary loss, part files and Dask arrays
are binary problems (two label values, the larger becomes the positive class,
as the CLI does), and in-memory arrays of more classes run one-vs-rest on the
client, each subproblem distributed.  ``loss="multinomial"`` with
``solver="newton"`` runs one distributed multinomial Newton-CG on any of the
three inputs (:mod:`primaldual.distributed.multinomial_rounds`), and
``loss="crammer_singer"`` with ``solver="cocoa"`` (the default) CoCoA+ over
its dual (:mod:`primaldual.distributed.cs_rounds`).  The
intercept is, as in the local estimator, a constant feature of value
``intercept_scaling`` with a regularized weight; for part files and Dask
arrays the workers append it.
"""
from __future__ import annotations

import math
import numbers
import os

import numpy as np

from ._extras import require
from .estimators import LinearClassifier as _LocalLinearClassifier
from .estimators_multiclass import store_result
from .fitdata import spawn_seeds
from .solvers import SOLVERS
from .solvers._multiclass import MULTICLASS_SOLVERS
from .distributed.partitioned import PartitionedMulticlassProblem, PartitionedProblem

__all__ = ["LinearClassifier"]

_DIST_SOLVERS = ("cocoa", "minibatch_sdca", "newton", "l1_newton")
#: the multiclass losses' solver on part files and Dask arrays
_MULTICLASS_DASK = {"multinomial": "multinomial_newton",
                    "crammer_singer": "crammer_singer_cocoa"}
#: ... and the name the estimator gives it (``solver=``; its default)
_MULTICLASS_NAMED = {"multinomial": "newton", "crammer_singer": "cocoa"}


def _is_file_list(X):
    return isinstance(X, (list, tuple)) and len(X) > 0 and all(
        isinstance(p, (str, os.PathLike)) for p in X)


def _is_dask_array(X):
    try:
        import dask.array as da
    except ImportError:            # pragma: no cover - dask is a dependency
        return False
    return isinstance(X, da.Array)


class LinearClassifier(_LocalLinearClassifier):
    """Distributed linear classifier (see the module docstring).

    Parameters
    ----------
    client : dask.distributed.Client
        Where the partitions live.
    solver : {"cocoa", "minibatch_sdca", "newton", "l1_newton"} or None
        None (default): ``"newton"`` for ``loss="multinomial"`` and ``"cocoa"``
        for ``"crammer_singer"`` (``multinomial_newton``,
        ``crammer_singer_cocoa``); ``"l1_newton"`` when the penalty has an L1
        part (``penalty="l1"`` or ``"elasticnet"``, or ``l1 > 0``), else ``"cocoa"``.
    penalty, l1_ratio : as :class:`primaldual.LinearClassifier`; on part files
        and Dask arrays an L1 penalty needs ``alpha`` (its strength).
    solver_options : dict, optional
        e.g. ``{"n_partitions": 8, "local_iters": 1000}``,
        ``{"batch_size": 64}``, ``{"round_timeout": 60, "recovery_every": 10}``.
    Other parameters: as :class:`primaldual.LinearClassifier`.
    """

    def __init__(self, loss="squared_hinge", *, client=None, alpha=None, C=None, l1=0.0,
                 loss_params=None, tol=1e-6, max_iter=None, fit_intercept=True,
                 intercept_scaling=1.0, class_weight=None, warm_start=False,
                 random_state=None, solver=None, solver_options=None, n_jobs=None,
                 verbose=0, penalty="l2", l1_ratio=None):
        super().__init__(loss=loss, alpha=alpha, C=C, l1=l1, loss_params=loss_params, tol=tol,
                         max_iter=max_iter, fit_intercept=fit_intercept,
                         intercept_scaling=intercept_scaling, class_weight=class_weight,
                         warm_start=warm_start, random_state=random_state, solver=solver,
                         solver_options=solver_options, n_jobs=n_jobs, verbose=verbose,
                         penalty=penalty, l1_ratio=l1_ratio)
        self.client = client

    def _dist_solver(self):
        """The solver that runs: ``solver``, or by default ``newton`` for the
        multinomial loss and ``cocoa`` for Crammer-Singer (the names that map
        to ``multinomial_newton`` and ``crammer_singer_cocoa``), ``l1_newton``
        for a penalty with an L1 part and ``cocoa`` otherwise."""
        if self.solver is not None:
            return self.solver
        if self.loss in _MULTICLASS_DASK:
            return _MULTICLASS_NAMED[self.loss]
        sparse = self.penalty in ("l1", "elasticnet") or (
            isinstance(self.l1, numbers.Real) and self.l1 > 0)
        return "l1_newton" if sparse else "cocoa"

    def _check_dist(self):
        Client = require("distributed", "primaldual.dask").Client
        if not isinstance(self.client, Client):
            raise ValueError(f"client must be a dask.distributed.Client, got "
                             f"{type(self.client).__name__}")
        solver = self._dist_solver()
        if solver not in _DIST_SOLVERS:
            raise ValueError(f"solver={solver!r} does not run on Dask; choose one of "
                             f"{', '.join(_DIST_SOLVERS)}")
        opts = dict(self.solver_options or {})
        if solver == "minibatch_sdca":
            if opts.setdefault("sampling", "distributed") != "distributed":
                raise ValueError("minibatch_sdca on Dask needs sampling='distributed'")
        return opts

    def fit(self, X, y=None, sample_weight=None):
        """Fit on part files, Dask arrays or in-memory arrays; returns ``self``."""
        opts = self._check_dist()
        if _is_file_list(X) or _is_dask_array(X):
            return self._fit_partitioned(X, y, sample_weight, opts)
        if y is None:
            raise ValueError("y is required for in-memory X (only part files carry labels)")
        saved = self.solver_options, self.solver
        self.solver_options = {**opts, "client": self.client}
        self.solver = self._dist_solver()
        try:
            return super().fit(X, y, sample_weight=sample_weight)
        finally:
            self.solver_options, self.solver = saved

    def _fit_partitioned(self, X, y, sample_weight, opts):
        self._validate_params_values()
        multiclass = self.loss in _MULTICLASS_DASK
        method = _MULTICLASS_NAMED.get(self.loss)
        if multiclass and self._dist_solver() != method:
            raise ValueError(f"loss={self.loss!r} on part files or Dask arrays runs "
                             f"{_MULTICLASS_DASK[self.loss]}: set solver={method!r} (got "
                             f"solver={self._dist_solver()!r})")
        if self.class_weight is not None:
            raise ValueError("class_weight is not supported for part files or Dask arrays "
                             "(the labels stay on the workers); pass sample weights in a "
                             "Dask array or use in-memory data")
        if self.warm_start and hasattr(self, "dual_coef_"):
            raise ValueError("warm_start is not supported for part files or Dask arrays")
        if self.C is not None:
            raise ValueError("C is not supported for part files or Dask arrays (the total "
                             "weight W of lam = 1/(C W) is known only once the workers "
                             "have read their parts); pass alpha = 1/(C W) instead, or "
                             "neither for the strength of C = 1")
        icpt = float(self.intercept_scaling) if self.fit_intercept else None
        lam, l1 = None if self.alpha is None else float(self.alpha), float(self.l1)
        if self.penalty != "l2":
            if self.alpha is None:
                raise ValueError(f"penalty={self.penalty!r} on part files or Dask arrays "
                                 f"needs alpha, its strength (C = 1's 1/W is known only "
                                 f"once the workers have read their parts)")
            lam, l1 = self._penalty_terms(float(self.alpha))
        common = dict(loss=self.loss, lam=lam, round_timeout=opts.get("round_timeout", 120.0),
                      intercept_scaling=icpt)
        if multiclass:
            if l1 != 0.0:
                raise ValueError(f"loss={self.loss!r} supports only the L2 penalty; set l1=0")
            kind = PartitionedMulticlassProblem
        else:
            kind = PartitionedProblem
            common.update(l1=l1, loss_params=self.loss_params)
        if _is_file_list(X):
            if y is not None or sample_weight is not None:
                raise ValueError("with part files the labels come from the files; "
                                 "pass y=None and no sample_weight")
            pp = kind.from_files(self.client, X, **common)
        else:
            if y is None:
                raise ValueError("y is required with a Dask array X")
            pp = kind.from_dask(self.client, X, y, sample_weight, **common)
        opts = dict(opts)
        opts.setdefault("n_partitions", pp.n_parts)
        if multiclass:
            return self._fit_multinomial(pp, opts)
        cls = SOLVERS[self._dist_solver()]
        res = cls.create(pp, tol=float(self.tol),
                         max_epochs=None if self.max_iter is None else float(self.max_iter),
                         random_state=spawn_seeds(self.random_state, 1)[0], **opts).run()
        self.classes_ = np.array(pp.label_map if pp.label_map is not None else (-1.0, 1.0))
        coef, intercept = self._split(res.coef)
        self.coef_ = coef[None, :]
        self.intercept_ = np.array([intercept])
        self.dual_coef_ = res.dual_coef[None, :]
        self.n_iter_ = np.array([int(math.ceil(res.n_epochs - 1e-9))], dtype=np.int64)
        self.gap_ = np.array([max(res.gap, 0.0)])          # shown >= 0; raw: primal_ - dual_
        self.rel_gap_ = np.array([max(res.rel_gap, 0.0)])
        self.primal_ = np.array([res.primal])
        self.dual_ = np.array([res.dual])
        self.converged_ = np.array([res.converged])
        self.trace_ = [res.trace]
        self.solver_ = res.solver
        self.lam_, self.l1_ = float(pp.lam), float(pp.l1)
        self.n_features_in_ = pp.n_data_features
        self._warn_convergence([res], [None])
        return self

    def _fit_multinomial(self, pp, opts):
        """One multiclass fit of rows on the workers (multinomial Newton-CG, or
        CoCoA+ for Crammer-Singer): ``coef_`` (K, d) and ``intercept_`` (K,),
        the raw labels sorted as ``classes_``; ``dual_coef_`` (K, n) in the
        partitions' row order."""
        res = MULTICLASS_SOLVERS[_MULTICLASS_DASK[self.loss]](
            pp, tol=float(self.tol),
            max_epochs=None if self.max_iter is None else float(self.max_iter),
            random_state=spawn_seeds(self.random_state, 1)[0], **opts).run()
        self.classes_ = pp.classes.copy()
        store_result(self, res, pp.K, np.ascontiguousarray(res.dual_coef.T))
        self.lam_ = float(pp.lam)
        self.n_features_in_ = pp.n_data_features
        self._warn_convergence([res], [None])
        return self
