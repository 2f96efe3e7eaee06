"""Cross-validated estimators: ``LinearClassifierCV`` and ``LinearRegressorCV``.

Both run a decreasing path of strengths on every training fold of
``sklearn.model_selection.check_cv``, score every point on the held-out fold,
pick the best mean score (ties go to the larger strength, the smaller ``C``)
and, with ``refit=True``, refit on all the data (docs/estimators.md).

The strength is ``alpha`` or LIBLINEAR's ``C`` (``alpha = 1/(C W)``, ``W`` the
training fold's total weight) and is split by ``penalty`` exactly as in
:class:`~primaldual.LinearClassifier` (:func:`~primaldual.penalties.split_strength`):
"l2", "l1" (``lam = 0``, ``l1 = alpha``) or "elasticnet" with ``l1_ratio``.

* An L1 term (``penalty`` "l1" or "elasticnet", or ``l1 > 0``) with a smooth
  loss and ``solver`` "auto" or "l1cd" runs each fold's path with the sparse
  solver: pure L1 through
  :func:`~primaldual.regpath.l1_path` (one solver set-up per fold and class,
  each point warm-started from the previous ``coef`` and screened with the
  previous point's certificate, Gap Safe rules), an L1 term with an L2 one
  point by point from the previous ``coef``.  With ``n_jobs > 1`` the folds
  run on threads when a measured first batch of folds reads stored entries
  faster than the first fold did alone (``cv_n_jobs_plan_``); the
  one-vs-rest problems of a fold run one after the other.
* Otherwise each point is a fit of the base estimator warm-started from the
  previous ``dual_coef_``.

Every fit is certified: ``cv_gaps_`` / ``cv_rel_gaps_`` hold the gap of each
(fold, point), the largest over the one-vs-rest problems.
"""
from __future__ import annotations

import warnings
from dataclasses import replace

import numpy as np
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning
from sklearn.metrics import check_scoring
from sklearn.model_selection import check_cv
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import _check_sample_weight, validate_data

from ._util import encode_pm1
from .estimators import LinearClassifier, LinearRegressor, _check_number
from .fitdata import combined_weights, spawn_seeds
from .losses import make_loss
from .multiclass import is_multiclass_loss
from .penalties import split_strength
from .regpath import l1_path, lam_grid, lam_max
from .solvers import SOLVERS, solve
from .solvers.ovr import run_problems

__all__ = ["LinearClassifierCV", "LinearRegressorCV"]


class _CVMixin:
    """``fit`` of the CV estimators (the base estimator supplies everything else)."""

    _base = None          # LinearClassifier or LinearRegressor
    _is_classifier = False

    def _base_params(self):
        names = self._base._get_param_names()
        # the CV searches the strength, given as alpha or C: neither is passed on
        return {k: getattr(self, k) for k in names
                if k not in ("alpha", "C", "warm_start") and hasattr(self, k)}

    def _check_grid_params(self):
        split_strength(self.penalty, 1.0, self.l1, self.l1_ratio)   # penalty, l1_ratio
        if self.alphas is not None and self.Cs is not None:
            raise ValueError(f"give alphas or Cs, not both (alphas={self.alphas!r}, "
                             f"Cs={self.Cs!r}): alpha is lam, C is LIBLINEAR's 1/(lam W)")
        if not isinstance(self.refit, (bool, np.bool_)):
            raise ValueError(f"refit must be True or False, got {self.refit!r}")
        _check_number("n_alphas", self.n_alphas, integer=True)

    def _grid(self, X, y, c):
        """``(alphas, Cs)``: the alpha grid (decreasing), or the C grid
        (increasing) with ``alphas`` None."""
        if self.Cs is not None:
            if isinstance(self.Cs, (int, np.integer)) and not isinstance(self.Cs, bool):
                _check_number("Cs", self.Cs, integer=True)
                return None, np.logspace(-4, 4, int(self.Cs))   # scikit-learn's grid
            Cs = np.asarray(self.Cs, dtype=np.float64).ravel()
            if Cs.size == 0 or not np.all(np.isfinite(Cs)) or np.any(Cs <= 0):
                raise ValueError(f"Cs must be an integer or a non-empty array of finite "
                                 f"values > 0, got {self.Cs!r}")
            return None, np.sort(Cs)
        if self.alphas is not None:
            alphas = np.asarray(self.alphas, dtype=np.float64).ravel()
            if alphas.size == 0 or not np.all(np.isfinite(alphas)) or np.any(alphas <= 0):
                raise ValueError(f"alphas must be a non-empty array of finite values > 0, "
                                 f"got {self.alphas!r}")
            return np.sort(alphas)[::-1], None
        return lam_grid(self._alpha_max(X, y, c), self.n_alphas, self.eps), None

    def _alpha_grid(self, X, y, c):
        """The alpha grid (``Cs`` unset; the command line's ``cv`` uses it)."""
        return self._grid(X, y, c)[0]

    def _alpha_max(self, X, y, c):
        """The largest useful alpha: ``lam_max`` of the penalty's L1 share (``w = 0``
        above it, exactly), or the L2 ``lam_max`` when there is no L1 share."""
        ratio = {"l2": 0.0, "l1": 1.0}.get(self.penalty, self.l1_ratio)
        keep = c > 0
        X, y, c = X[keep], y[keep], c[keep]
        kw = dict(sample_weight=None if np.all(c == 1) else c, loss_params=self.loss_params,
                  fit_intercept=self.fit_intercept, intercept_scaling=self.intercept_scaling,
                  penalty="l1" if ratio > 0 else "l2")
        if self._is_classifier:
            classes = np.unique(y)
            pos = classes[1:] if classes.size == 2 else classes
            lmax = max(lam_max(X, encode_pm1(y, k), self.loss, **kw) for k in pos)
        else:
            lmax = lam_max(X, y, self.loss, **kw)
        return lmax / ratio if ratio > 0 else lmax

    def _objective_weights(self, y, sw):
        """The weights of the objective: ``sample_weight`` times ``class_weight``."""
        if self._is_classifier:
            return combined_weights(y, np.unique(y), sw, self.class_weight)
        return sw

    def _sparse_route(self):
        """Whether the folds run on the sparse solver's path (module docstring)."""
        if self.solver not in ("auto", "l1cd") or is_multiclass_loss(self.loss):
            return False
        _, l1 = split_strength(self.penalty, 1.0, self.l1, self.l1_ratio)
        return l1 > 0 and make_loss(self.loss, self.loss_params).smooth

    def fit(self, X, y, sample_weight=None):
        """Choose the strength by k-fold CV along a warm-started path, then refit."""
        for k in [k for k in vars(self) if k.endswith("_") and not k.startswith("_")]:
            delattr(self, k)            # no attribute of an earlier fit survives this one
        X, y = validate_data(self, X, y, accept_sparse="csr",
                             dtype=[np.float64, np.float32], order="C",
                             y_numeric=not self._is_classifier)
        if self._is_classifier:
            check_classification_targets(y)
            if np.unique(y).size < 2:
                raise ValueError(f"{type(self).__name__} needs samples of at least 2 "
                                 f"classes; y has only one class: {y[0]!r}")
        sw = _check_sample_weight(sample_weight, X, dtype=np.float64,
                                  ensure_non_negative=True, allow_all_zero_weights=True)
        if not np.any(sw > 0):
            raise ValueError("every sample weight is zero; give at least one sample a "
                             "positive weight")
        base = self._base(**self._base_params())
        base._validate_params_values()
        self._check_grid_params()
        c = self._objective_weights(y, sw)
        alphas, Cs = self._grid(X, y, c)
        cv = check_cv(self.cv, y, classifier=self._is_classifier)
        scorer = check_scoring(base, scoring=self.scoring)
        # held-out folds are scored with the objective's weights (None when all 1)
        score_w = None if np.all(c == 1.0) else c
        splits = list(cv.split(X, y))
        if self._sparse_route():
            folds = self._sparse_folds(base, X, y, sw, splits, alphas, Cs, scorer, score_w)
        else:
            self.cv_n_jobs_plan_ = {"workers": 1, "reason": "serial: the folds run one "
                                    "after the other, each fit with the estimator's n_jobs"}
            folds = [self._score_fold(self._fold_generic(base, X[train], y[train], sw[train],
                                                         alphas, Cs),
                                      scorer, X[test], y[test], score_w, test)
                     for train, test in splits]
        self._warn_unconverged(folds)
        self._set_cv_results(folds, alphas, Cs, float(c.sum()), y)
        return self._final_fit(base, X, y, sample_weight, Cs, folds)

    def _score_fold(self, points, scorer, X_test, y_test, score_w, test):
        """``(scores, gaps, models)`` of one fold's path points on its held-out
        rows (``models``: the points' ``(coef_, intercept_)`` with
        ``refit=False``, else empty)."""
        kw = {} if score_w is None else {"sample_weight": score_w[test]}
        scores, gaps, models = [], [], []
        for est, gap in points:
            scores.append(scorer(est, X_test, y_test, **kw))
            gaps.append(gap)
            if not self.refit:
                models.append((np.copy(est.coef_), np.copy(est.intercept_)))
        return scores, gaps, models

    def _warn_unconverged(self, folds):
        flags = np.array([[g[2] for g in gaps] for _, gaps, _ in folds])
        n_bad = int((~flags).sum())
        if n_bad:
            warnings.warn(f"{type(self).__name__}: {n_bad} of {flags.size} fits along "
                          f"the cross-validation path did not reach tol={self.tol:g} "
                          f"within max_iter={self.max_iter} epochs"
                          + (" (the solver's default budget)" if self.max_iter is None else "")
                          + "; increase max_iter",
                          ConvergenceWarning, stacklevel=3)

    def _set_cv_results(self, folds, alphas, Cs, W, y):
        self.cv_scores_ = np.array([s for s, _, _ in folds], dtype=np.float64)
        gaps = np.array([g for _, g, _ in folds], dtype=np.float64)
        self.cv_gaps_, self.cv_rel_gaps_ = gaps[..., 0], gaps[..., 1]
        self.best_index_ = int(np.argmax(self.cv_scores_.mean(axis=0)))  # first: largest alpha
        if Cs is None:
            self.alphas_, self.Cs_ = alphas, 1.0 / (alphas * W)
        else:
            self.Cs_, self.alphas_ = Cs, 1.0 / (Cs * W)
        self.alpha_ = float(self.alphas_[self.best_index_])
        self.C_ = float(self.Cs_[self.best_index_])
        if self._is_classifier:
            classes = np.unique(y)
            self.scores_ = {k: self.cv_scores_ for k in
                            (classes[1:] if classes.size == 2 else classes)}

    def _final_fit(self, base, X, y, sample_weight, Cs, folds):
        if not self.refit:      # scikit-learn's refit=False: the folds' mean model
            best = self.best_index_
            self.coef_ = np.mean([f[2][best][0] for f in folds], axis=0)
            self.intercept_ = np.mean([f[2][best][1] for f in folds], axis=0)
            if self._is_classifier:
                self.classes_ = np.unique(y)
            return self
        strength = {"alpha": self.alpha_} if Cs is None else {"C": self.C_}
        final = clone(base).set_params(**strength).fit(X, y, sample_weight=sample_weight)
        for k, v in vars(final).items():
            if k.endswith("_") and not k.startswith("_"):
                setattr(self, k, v)
        return self

    # ---------------------------------------------------------------- folds
    def _fold_generic(self, base, X, y, sw, alphas, Cs):
        """Fits of ``base`` along the grid, each from the previous ``dual_coef_``:
        yields ``(estimator, (gap, rel_gap, converged))`` per point (the same
        estimator, refitted: use it before the next one)."""
        est = clone(base).set_params(warm_start=True)
        for value in (alphas if Cs is None else Cs):
            est.set_params(**({"alpha": float(value)} if Cs is None else {"C": float(value)}))
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ConvergenceWarning)  # counted in fit
                est.fit(X, y, sample_weight=sw)
            yield est, (float(np.max(est.gap_)), float(np.max(est.rel_gap_)),
                        bool(np.all(est.converged_)))

    def _sparse_folds(self, base, X, y, sw, splits, alphas, Cs, scorer, score_w):
        """Every fold's sparse path (module docstring), scored as
        :meth:`_score_fold`; the folds run on ``n_jobs`` threads where a
        measured first batch pays (:func:`~primaldual.solvers.ovr.run_problems`;
        the paths, and so every score, are the same however the folds are
        scheduled).  ``cv_n_jobs_plan_`` says what ran."""
        def one(k, _n_jobs):
            train, test = splits[k]
            classes, paths = self._fold_sparse_paths(base, X[train], y[train], sw[train],
                                                     alphas, Cs)
            folds[k] = self._score_fold(self._sparse_points(base, X.shape[1], classes,
                                                            paths),
                                        scorer, X[test], y[test], score_w, test)
            # for run_problems' accounting only: the fits without their vectors
            return [replace(r, coef=r.coef[:0], dual_coef=r.dual_coef[:0], state=None)
                    for path in paths for r in path]

        folds = [None] * len(splits)
        _, self.cv_n_jobs_plan_ = run_problems(one, len(splits), self.n_jobs,
                                               min_batches=1)
        return folds

    def _fold_sparse_paths(self, base, X, y, sw, alphas, Cs):
        """The sparse solver's path on one training fold, each problem prepared
        as ``base.fit`` prepares it: ``(classes, paths)`` (classes None for a
        regressor; one path of results per one-vs-rest problem)."""
        if self._is_classifier:
            classes = np.unique(y)
            if classes.size < 2:
                base.fit(X, y, sample_weight=sw)        # raises base's error
            c = combined_weights(y, classes, sw, self.class_weight)
        else:
            classes, c = None, sw
        keep = c > 0
        Xa, yk, ck = base._prepare(X[keep] if not keep.all() else X), y[keep], c[keep]
        weights = None if np.all(ck == 1.0) else ck
        if classes is None:
            targets = [np.asarray(yk, dtype=np.float64)]
        elif classes.size == 2:
            targets = [encode_pm1(yk, classes[1])]
        else:
            targets = [encode_pm1(yk, k) for k in classes]
        W = float(ck.sum())
        grid = alphas if Cs is None else 1.0 / (Cs * W)
        terms = [split_strength(self.penalty, float(a), self.l1, self.l1_ratio) for a in grid]
        seeds = spawn_seeds(self.random_state, len(targets))
        return classes, [self._sparse_path(Xa, t, weights, terms, s)
                         for t, s in zip(targets, seeds)]

    def _sparse_points(self, base, n_features, classes, paths):
        """One fold's path points as :meth:`_fold_generic` yields them (a new
        estimator per point)."""
        for j in range(len(paths[0])):
            est = clone(base)
            rows = [base._split(p[j].coef) for p in paths]
            if classes is None:
                est.coef_, est.intercept_ = np.array(rows[0][0]), rows[0][1]
            else:
                est.classes_ = classes
                est.coef_ = np.vstack([r[0] for r in rows])
                est.intercept_ = np.array([r[1] for r in rows], dtype=np.float64)
            est.n_features_in_ = n_features
            res = [p[j] for p in paths]
            yield est, (max(max(float(r.gap), 0.0) for r in res),
                        max(max(float(r.rel_gap), 0.0) for r in res),
                        all(bool(r.converged) for r in res))

    def _sparse_path(self, Xa, t, weights, terms, seed):
        """The fits of one problem at the ``(lam, l1)`` of ``terms``, in order."""
        opts = dict(self.solver_options or {})
        max_epochs = (SOLVERS["l1cd"].default_max_epochs if self.max_iter is None
                      else float(self.max_iter))
        common = dict(loss=self.loss, loss_params=self.loss_params, sample_weight=weights,
                      tol=float(self.tol), max_epochs=max_epochs)
        lams = {lam for lam, _ in terms}
        if lams == {0.0}:                           # pure L1: one solver for the path
            return l1_path(Xa, t, l1s=[l1 for _, l1 in terms], lam=0.0, solver="l1cd",
                           random_state=seed, **common, **opts).results
        out, prev = [], None
        for lam, l1 in terms:                       # elastic net: from the previous coef
            kw = dict(opts) if prev is None else dict(opts, warm_start=prev.coef)
            prev = solve(Xa, t, lam=lam, l1=l1, solver="l1cd", random_state=seed,
                         **common, **kw)
            prev.state = None
            out.append(prev)
        return out


_CV_DOC = """Cross-validated {base}: chooses the strength on a warm-started path.

    The grid is ``Cs`` (LIBLINEAR's and scikit-learn's ``C``, sorted
    increasingly; an integer ``k`` is ``np.logspace(-4, 4, k)`` as in
    ``LogisticRegressionCV``; on a fold ``alpha = 1/(C W)`` with ``W`` that
    fold's total weight, as ``{base}(C=C)`` fitted on it), or ``alphas``
    (sorted decreasingly), or by default ``n_alphas`` geometric values from
    :func:`~primaldual.regpath.lam_max` (computed on the whole training set,
    intercept column included; for one-vs-rest the largest over the classes;
    for an L1 share ``r`` of the penalty, ``lam_max(penalty="l1") / r``, above
    which ``w = 0``) down to ``eps`` times it.  ``penalty`` and ``l1_ratio``
    split every strength as in {base}.  On every fold of ``check_cv(cv)`` the
    grid is fitted from the largest strength down (module docstring: the
    sparse solver's screened path for L1 penalties) and scored on the held-out
    fold with ``scoring`` (default: the estimator's ``score``, weighted by the
    objective's weights).  The best mean score wins (ties: the larger alpha);
    ``refit=True`` refits on all the data at that ``alpha`` (or ``C``).

    Parameters
    ----------
    Cs : int or array, optional            (give ``Cs`` or ``alphas``, not both)
    alphas : array, optional
    n_alphas : int, default 20
    eps : float, default 1e-3
    cv : int, splitter or iterable, default None (5-fold{strat})
    scoring : str or callable, optional
    penalty : {{"l2", "l1", "elasticnet"}}, default "l2"
    l1_ratio : float in [0, 1], needed for "elasticnet"
    refit : bool, default True
        False: no final fit; ``coef_`` and ``intercept_`` are the mean over
        the folds of the models at the best point (as scikit-learn), and carry
        no certificate of their own.
    Other parameters: as {base} (without ``alpha``, ``C`` and ``warm_start``).

    Attributes
    ----------
    alpha_, C_ : float      the chosen strength (``C_ = 1/(alpha_ W)``, W: all the data)
    alphas_, Cs_ : ndarray  the grid (``alphas_`` decreasing, ``Cs_`` increasing)
    cv_scores_ : ndarray (n_folds, n_points)
    cv_gaps_, cv_rel_gaps_ : ndarray (n_folds, n_points)
        The certified (relative) duality gap of each fold's fit, the largest
        over its one-vs-rest problems.
    best_index_ : int
    {scores}and (``refit=True``) every fitted attribute of {base} from the final fit.
    """


def _store_params(est, params):
    """Each ``__init__`` argument stored unchanged under its own name
    (scikit-learn's estimator contract: no validation in ``__init__``)."""
    for name, value in params.items():
        if name != "self":
            setattr(est, name, value)


class LinearClassifierCV(_CVMixin, LinearClassifier):
    __doc__ = _CV_DOC.format(base="LinearClassifier", strat=", stratified", scores=(
        "scores_ : dict   ``cv_scores_`` for each class key (scikit-learn's\n"
        "        ``LogisticRegressionCV``; one ``C`` is chosen for all classes)\n    "))
    _base = LinearClassifier
    _is_classifier = True

    def __init__(self, loss="squared_hinge", *, Cs=None, alphas=None, n_alphas=20, eps=1e-3,
                 cv=None, scoring=None, penalty="l2", l1_ratio=None, refit=True, l1=0.0,
                 loss_params=None, tol=1e-6, max_iter=None, fit_intercept=True,
                 intercept_scaling=1.0, class_weight=None, random_state=None,
                 solver="auto", solver_options=None, n_jobs=None, verbose=0):
        _store_params(self, locals())


class LinearRegressorCV(_CVMixin, LinearRegressor):
    __doc__ = _CV_DOC.format(base="LinearRegressor", strat="", scores="")
    _base = LinearRegressor
    _is_classifier = False

    def __init__(self, loss="squared", *, Cs=None, alphas=None, n_alphas=20, eps=1e-3,
                 cv=None, scoring=None, penalty="l2", l1_ratio=None, refit=True, l1=0.0,
                 loss_params=None, tol=1e-6, max_iter=None, fit_intercept=True,
                 intercept_scaling=1.0, random_state=None, solver="auto",
                 solver_options=None, n_jobs=None, verbose=0):
        _store_params(self, locals())
