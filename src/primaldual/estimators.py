"""scikit-learn estimators over :func:`primaldual.solve` (docs/estimators.md).

Both estimators minimize the problem of docs/conventions.md §1,

    P(w) = (1/W) sum_i c_i phi(x_i . w; y_i) + lam/2 ||w||^2 + l1 ||w||_1,

with ``c_i = sample_weight_i * class_weight[y_i]`` and ``W = sum_i c_i``.  The
strength is ``alpha`` (= ``lam``; never the dual variable, which is ``dual_coef_``)
or LIBLINEAR's ``C`` (``lam = 1/(C W)``), not both; with neither, that of ``C = 1``
(the fitted ``lam_``).

* Intercept: a constant feature of value ``intercept_scaling`` is appended (a
  CSR ``hstack`` for sparse input) and its weight is regularized like the
  others, as in LIBLINEAR; ``intercept_ = intercept_scaling * w_b``.
* Rows of weight 0 are removed before solving (exact); their ``dual_coef_`` is 0.
* ``warm_start=True`` starts from the previous ``dual_coef_`` unscaled (its box
  depends on the loss and labels only: feasible at any new strength and
  weights), a primal method from the previous coefficients.
* ``gap_``, ``rel_gap_``: the certified gap clipped at 0 (rounding can make ``P - D``
  a few ulps negative); the raw values are ``primal_`` and ``dual_``.
"""
from __future__ import annotations

import math
import sys
import warnings

import numpy as np
from scipy.special import expit
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.extmath import safe_sparse_dot
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import _check_sample_weight, check_is_fitted, validate_data

from ._util import encode_pm1
from ._util.interrupts import sigint_as_flag
from ._util.scales import scale_spread_note
from .fitdata import add_intercept_column, combined_weights, spawn_seeds
from .penalties import split_strength
from .probability import PROBABILISTIC_LOSSES, NoProbabilityError, needs_probabilistic_loss
from .losses import LOSS_NAMES, make_loss
from .multiclass import MULTICLASS_LOSSES, is_multiclass_loss
from .estimators_multiclass import fit_multiclass, multinomial_proba
from .solvers import SOLVERS, SolveResult, solve, solver_path, threaded_solvers
from .solvers.ovr import run_problems
from .validation import finite_checked


def _plain(x):
    """A label as a user wrote it: numpy scalars as Python ones (no np.int64(8))."""
    return x.item() if isinstance(x, np.generic) else x


__all__ = ["LinearClassifier", "LinearRegressor", "NoProbabilityError"]

CLASSIFICATION_LOSSES = (tuple(n for n in LOSS_NAMES if make_loss(n).classification)
                         + MULTICLASS_LOSSES)          # the last two: estimators_multiclass
REGRESSION_LOSSES = tuple(n for n in LOSS_NAMES if not make_loss(n).classification)
# ------------------------------------------------------------------ helpers
def _checked_classes(y):
    """``np.unique(y)`` after scikit-learn's ``check_classification_targets(y)``,
    whose generic type detection costs more than a small fit; where its answer
    is known it is not asked: a 1-D array of two distinct booleans, integers or
    whole-number floats is "binary", which it accepts."""
    if isinstance(y, np.ndarray) and y.ndim == 1 and y.dtype.kind in "biuf":
        classes = np.unique(y)
        if not (classes.size == 2 and (y.dtype.kind != "f" or bool(np.all(
                classes == classes.astype(np.int64).astype(classes.dtype))))):
            check_classification_targets(y)
        return classes
    check_classification_targets(y)
    return np.unique(y)


def _check_number(name, value, *, low=0.0, allow_equal=False, integer=False):
    ok = isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool)
    if ok:
        fv = float(value)
        ok = math.isfinite(fv) and (fv > low or (allow_equal and fv == low))
        if integer:
            ok = ok and fv == int(fv)
    if not ok:
        need = f"{'>=' if allow_equal else '>'} {low:g}"
        raise ValueError(f"{name} must be a finite {'integer' if integer else 'number'} "
                         f"{need}, got {value!r}")


def _solve_options(solver_options):
    if solver_options is None:
        return {}
    if not isinstance(solver_options, dict):
        raise ValueError(f"solver_options must be a dict of solver options, got "
                         f"{type(solver_options).__name__}")
    reserved = {"warm_start", "resume", "X", "y", "loss", "lam", "l1", "tol", "max_epochs",
                "random_state", "sample_weight", "loss_params", "solver"}
    clash = sorted(reserved & set(solver_options))
    if clash:
        raise ValueError(f"solver_options must not contain {clash}: set them through the "
                         f"estimator's own parameters (alpha, l1, tol, max_iter, "
                         f"random_state, warm_start, ...)")
    return dict(solver_options)


class _LinearBase(BaseEstimator):
    """Shared fitting machinery; subclasses define ``_loss_family``."""

    _loss_family = ()

    def _validate_params_values(self):
        if not isinstance(self.loss, str) or self.loss not in self._loss_family:
            raise ValueError(f"{type(self).__name__} needs loss in "
                             f"{', '.join(self._loss_family)}; got loss={self.loss!r}")
        if not is_multiclass_loss(self.loss):
            make_loss(self.loss, self.loss_params)      # validates loss_params
        C = getattr(self, "C", None)        # the CV estimators choose alpha, no C
        if self.alpha is not None and C is not None:
            raise ValueError(f"give alpha or C, not both (alpha={self.alpha!r}, C={C!r}): "
                             f"alpha is lam, C is LIBLINEAR's 1/(lam W)")
        if self.alpha is not None:
            _check_number("alpha", self.alpha, allow_equal=True)
        if C is not None:
            _check_number("C", C)
        _check_number("l1", self.l1, allow_equal=True)
        _check_number("tol", self.tol, allow_equal=True)
        if self.max_iter is not None:
            _check_number("max_iter", self.max_iter)
        _check_number("intercept_scaling", self.intercept_scaling)
        if not isinstance(self.verbose, (int, np.integer, bool)) or self.verbose < 0:
            raise ValueError(f"verbose must be an integer >= 0, got {self.verbose!r}")
        return _solve_options(self.solver_options)

    def _strength(self, total_weight):
        """The L2 strength of this fit: ``alpha``, or ``1 / (C W)``, or ``1 / W``
        (``C = 1``) when neither is given, split by ``penalty``
        (:meth:`_penalty_terms`); stored as ``lam_`` and ``l1_``."""
        C = getattr(self, "C", None)
        if self.alpha is not None:
            strength = float(self.alpha)
        else:
            strength = 1.0 / ((1.0 if C is None else float(C)) * total_weight)
        lam, self.l1_ = self._penalty_terms(strength)
        self.lam_ = lam
        return lam

    def _penalty_terms(self, strength):
        """``(lam, l1)`` for ``penalty`` (:func:`~primaldual.penalties.split_strength`)."""
        return split_strength(getattr(self, "penalty", "l2"), strength, self.l1,
                              getattr(self, "l1_ratio", None))

    def _fit_problems(self, Xa, targets, weights, warm, seeds, lam, labels):
        """Solve one problem per entry of ``targets`` (:func:`run_problems`: on
        threads only where they are measured to pay)."""
        opts = self._validate_params_values()
        if self.verbose >= 2 and len(targets) == 1:
            opts.setdefault("progress", True)
        # n_jobs goes to each problem's solver when it takes threads (on Dask, not to
        # one whose threads run only in process: l1_newton, the L1 default there)
        takes = "n_jobs" not in opts and (self.solver == "auto" or (
            self.solver in threaded_solvers() and not (opts.get("client") is not None and getattr(
                SOLVERS.get(self.solver), "threads_in_process_only", False))))

        def one(k, n_jobs):
            opts_k = (dict(opts, n_jobs=n_jobs) if takes and n_jobs not in (None, 1)
                      else dict(opts))
            if warm[k] is not None:
                opts_k["warm_start"] = warm[k]
            return solve(Xa, targets[k], loss=self.loss, lam=lam,
                         solver=self.solver, tol=float(self.tol),
                         max_epochs=None if self.max_iter is None else float(self.max_iter),
                         random_state=seeds[k],
                         sample_weight=weights, l1=float(self.l1_),
                         loss_params=self.loss_params, **opts_k)

        # one Ctrl-C stops every one-vs-rest problem: the solves (on this thread
        # or the pool's) share this block's flag, and each returns its
        # certified point (stop_reason "interrupted")
        # Xa is finite (scikit-learn's check_array, a finite intercept_scaling):
        # the solvers' Problem does not scan it again
        with sigint_as_flag(), finite_checked(Xa):
            results, self.n_jobs_plan_ = run_problems(one, len(targets),
                                                      getattr(self, "n_jobs", None))
        if self.verbose:
            for label, r in zip(labels, results):
                print(f"[{type(self).__name__}] {self._problem_name(label)}: "
                      f"solver={r.solver} epochs={r.n_epochs:g} "
                      f"rel_gap={max(r.rel_gap, 0.0):.3e} converged={r.converged}",
                      file=sys.stderr)
        return results

    def _problem_name(self, label):
        """How ``verbose`` names a problem: ``class 'b'`` (one-vs-rest), ``class 'b' vs 'a'``
        (binary: the +1 class first) or ``regression``."""
        if label is None:
            return "regression"
        if isinstance(label, tuple):
            return f"class {_plain(label[0])!r} vs {_plain(label[1])!r}"
        return f"class {_plain(label)!r}"

    def _set_certificate(self, results):
        """``gap_``/``rel_gap_`` (clipped at 0 for display), ``primal_``/``dual_`` (raw),
        ``converged_``: scalars for one problem, one entry per class otherwise."""
        def pick(values, dtype=np.float64):
            return values[0] if len(values) == 1 else np.array(values, dtype=dtype)

        self.primal_ = pick([float(r.primal) for r in results])
        self.dual_ = pick([float(r.dual) for r in results])
        self.gap_ = pick([max(float(r.gap), 0.0) for r in results])
        self.rel_gap_ = pick([max(float(r.rel_gap), 0.0) for r in results])
        self.converged_ = pick([bool(r.converged) for r in results], dtype=bool)

    def _warn_convergence(self, results, labels, X=None):
        bad = [(lab, r) for lab, r in zip(labels, results) if not r.converged]
        if not bad:
            return
        worst_label, worst = max(bad, key=lambda t: t[1].rel_gap)
        which = "" if worst_label is None or isinstance(worst_label, tuple) else (
            f" ({len(bad)} of {len(results)} one-vs-rest problems; worst: class "
            f"{_plain(worst_label)!r})")
        note = "" if X is None else scale_spread_note(X)
        warnings.warn(
            f"{type(self).__name__} did not converge{which}: achieved relative duality "
            f"gap {worst.rel_gap:.3e} > target tol={float(self.tol):g} after "
            f"{worst.n_epochs:g} epochs (max_iter={self.max_iter}); "
            + (f"{note}; otherwise " if note else "")
            + "increase max_iter, increase tol or increase alpha (decrease C)",
            ConvergenceWarning, stacklevel=3)

    def _split(self, coef_full):
        if self.fit_intercept:
            return coef_full[:-1], float(self.intercept_scaling) * coef_full[-1]
        return coef_full, 0.0

    def _prepare(self, X):
        Xa = add_intercept_column(X, float(self.intercept_scaling)) if self.fit_intercept \
            else X
        return Xa

    def _warm_starts(self, n_problems, n, sel):
        """Each problem's warm start (``None``: cold): the previous fit's dual
        vector (rows ``sel``) and coefficients, for dual and primal methods."""
        if not (self.warm_start and hasattr(self, "dual_coef_")):
            return [None] * n_problems
        prev = np.atleast_2d(self.dual_coef_)
        if prev.shape != (n_problems, n):
            raise ValueError(
                f"warm_start=True needs the same training rows and classes as the previous "
                f"fit: dual_coef_ has shape {np.shape(self.dual_coef_)} but this fit has "
                f"{n} samples and {n_problems} subproblem(s); set warm_start=False or refit "
                f"on the same data")
        coefs = np.atleast_2d(self.coef_)
        if self.fit_intercept:
            b = np.atleast_1d(self.intercept_) / self.intercept_scaling
            coefs = np.hstack([coefs, b[:, None]])
        return [SolveResult(coef=np.array(w, float), dual_coef=a[sel], primal=math.nan,
                            dual=math.nan, gap=math.nan, solver="warm_start", options={},
                            converged=False, n_epochs=0.0, time=0.0, trace=[])
                for w, a in zip(coefs, prev)]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags


# --------------------------------------------------------------- classifier
class LinearClassifier(ClassifierMixin, _LinearBase):
    """Linear classifier (SVM, logistic regression, ...) with a certified fit.

    Minimizes ``(1/W) sum_i c_i phi(y_i x_i . w) + alpha/2 ||w||^2 + l1 ||w||_1``
    with :func:`primaldual.solve`; every fitted model carries its dual
    certificate (``dual_coef_``) and its duality gap (``gap_``).  See the
    module docstring for the intercept, zero weights and warm starts.

    Parameters
    ----------
    loss : {"hinge", "smooth_hinge", "squared_hinge", "logistic"}, default "squared_hinge"
        The default is ``LinearSVC()``'s and LIBLINEAR's (``-s 1``): it has a
        Hessian, so Newton certifies it fast also on ill-conditioned data.
    alpha : float or None, default None
        L2 strength, the ``lam`` of docs/conventions.md §1.  Give ``alpha`` or
        ``C``, not both; with neither, the strength of ``C = 1``.
    C : float or None, default None
        LIBLINEAR's and ``LinearSVC``'s inverse strength: ``lam = 1/(C W)``, ``W``
        the sum of the sample (times class) weights, ``n`` for unit weights.
    l1 : float, default 0.0
        L1 strength (needs a solver that supports it).
    penalty : {"l2", "l1", "elasticnet"}, default "l2"
        As scikit-learn: "l1" fits ``lam = 0``, ``l1 = alpha`` (a sparse model,
        docs/sparse-models.md); "elasticnet" ``lam = alpha (1 - l1_ratio)``,
        ``l1 = alpha l1_ratio``; "l2" ``lam = alpha`` plus the ``l1`` above.
    l1_ratio : float in [0, 1] or None
        The L1 share for ``penalty="elasticnet"``.
    loss_params : dict, optional
        ``{"gamma": ...}`` for smooth_hinge.
    tol : float, default 1e-6
        Target relative duality gap ``(P - D)/|P|``.
    max_iter : int or None, default None
        Maximum epochs (passes over the data) per problem; None: the solver's
        default (1000 for sdca, newton and ipm, 100 for the others).
    fit_intercept : bool, default True
    intercept_scaling : float, default 1.0
        Value of the appended constant feature (regularized intercept, as LIBLINEAR).
    class_weight : dict, "balanced" or None
        Multiplies the weight of every sample of a class (also in one-vs-rest:
        a sample keeps the weight of its own class in every subproblem).
        "balanced" uses ``W / (n_classes * W_k)`` with weighted class totals.
    warm_start : bool, default False
        Start from the previous ``dual_coef_`` (module docstring).
    random_state : int, Generator, RandomState or None
        Seeds the solver; problem ``k`` of one-vs-rest gets the k-th child
        of ``SeedSequence(random_state)``.
    solver : str, default "auto"
        Passed to :func:`primaldual.solve` (:func:`~primaldual.solvers.resolve_solver`).
    solver_options : dict, optional
        Extra keyword options for the solver (e.g. ``{"sampling": "uniform"}``).
    n_jobs : int or None
        Threads (None or 1: one; -1: all cores): one-vs-rest problems run at once
        on up to ``n_jobs`` threads, the threads left over go to each problem's
        solver when it runs on several (:func:`primaldual.solve`).
    verbose : int, default 0
        1 prints one summary line per problem to stderr, naming its class; 2
        also shows a progress bar for a single problem.

    Attributes
    ----------
    classes_ : ndarray (K,)
    coef_ : ndarray (1, d) for two classes, (K, d) otherwise
        Binary: ``classes_[1]`` is the +1 class (as ``LinearSVC``).
    intercept_ : ndarray (1,) or (K,)
    dual_coef_ : ndarray (1, n) or (K, n)
        The dual certificate ``alpha_i`` of each problem (0 for zero-weight rows);
        not the regularization parameter ``alpha``.
    n_iter_ : ndarray of int (1,) or (K,)   epochs run, rounded up
    gap_ : float (binary) or ndarray (K,)   certified duality gap ``P - D`` (>= 0)
    rel_gap_ : float or ndarray (K,)        ``(P - D)/|P|``, compared with ``tol``
    primal_, dual_ : float or ndarray (K,)  ``P`` and ``D`` of the returned pair
    converged_ : bool or ndarray of bool (K,)
    trace_ : list of lists of dicts, one trace per problem
    solver_ : str                            the solver that ran
    solver_path_ : list of dict              the fit's legs (one list per class for OvR)
    lam_ : float                             the L2 strength used (``alpha``, ``1/(C W)`` or ``1/W``)
    n_features_in_ : int
    """

    _loss_family = CLASSIFICATION_LOSSES

    def __init__(self, loss="squared_hinge", *, alpha=None, C=None, l1=0.0,
                 loss_params=None, tol=1e-6, max_iter=None, fit_intercept=True,
                 intercept_scaling=1.0, class_weight=None, warm_start=False,
                 random_state=None, solver="auto", solver_options=None, n_jobs=None,
                 verbose=0, penalty="l2", l1_ratio=None):
        self.penalty = penalty
        self.l1_ratio = l1_ratio
        self.loss = loss
        self.alpha = alpha
        self.C = C
        self.l1 = l1
        self.loss_params = loss_params
        self.tol = tol
        self.max_iter = max_iter
        self.fit_intercept = fit_intercept
        self.intercept_scaling = intercept_scaling
        self.class_weight = class_weight
        self.warm_start = warm_start
        self.random_state = random_state
        self.solver = solver
        self.solver_options = solver_options
        self.n_jobs = n_jobs
        self.verbose = verbose

    def fit(self, X, y, sample_weight=None):
        """Fit the model; returns ``self``.

        Parameters
        ----------
        X : array (n, d) or sparse matrix
        y : array (n,) of labels of any kind (strings, ints, ...)
        sample_weight : array (n,), optional, >= 0
            Rows of weight 0 are removed before solving (module docstring).
        """
        self._validate_params_values()
        X, y = validate_data(self, X, y, accept_sparse="csr",
                             dtype=[np.float64, np.float32], order="C")
        classes = _checked_classes(y)
        if classes.size < 2:
            raise ValueError(f"{type(self).__name__} needs samples of at least 2 classes; "
                             f"y has only one class: {_plain(classes[0])!r}")
        sw = np.ones(X.shape[0]) if sample_weight is None else _check_sample_weight(
            sample_weight, X, dtype=np.float64, ensure_non_negative=True,
            allow_all_zero_weights=True)
        positive = sw > 0
        if not positive.any():
            raise ValueError("every sample weight is zero; give positive weight to "
                             "samples of at least 2 classes")
        self._check_two_classes(y, positive)
        c = combined_weights(y, classes, sw, self.class_weight)
        keep = c > 0
        if not keep.any():
            raise ValueError("every sample weight is zero (sample_weight times "
                             "class_weight); give positive weight to samples of at least "
                             "2 classes")
        self._check_two_classes(y, keep)
        self.classes_ = classes
        n = X.shape[0]
        Xa = self._prepare(X)
        all_kept = bool(keep.all())
        if not all_kept:
            Xa = Xa[keep]
        # sel: a view where every row is kept (the weights and targets handed to
        # the solvers stay copies: a read-only input would compile read-only kernels)
        sel = slice(None) if all_kept else keep
        ck = c[keep]
        weights = None if np.all(ck == 1.0) else ck
        yk = y[sel]
        if is_multiclass_loss(self.loss):           # one (d, K) problem, not one-vs-rest
            return fit_multiclass(self, X, Xa, y[keep], ck, keep, n)
        if classes.size == 2:           # yk holds both classes and no other label
            targets = [encode_pm1(yk, classes[1])]
            labels = [(classes[1], classes[0])]
        else:
            targets = [encode_pm1(yk, cl) for cl in classes]
            labels = list(classes)
        warm = self._warm_starts(len(targets), n, sel)
        seeds = spawn_seeds(self.random_state, len(targets))
        lam = self._strength(float(ck.sum()))
        results = self._fit_problems(Xa, targets, weights, warm, seeds, lam, labels)

        coefs, intercepts = zip(*(self._split(r.coef) for r in results))
        self.coef_ = np.vstack(coefs)
        self.intercept_ = np.array(intercepts, dtype=np.float64)
        dual = np.zeros((len(results), n))
        for k, r in enumerate(results):
            dual[k, sel] = r.dual_coef
        self.dual_coef_ = dual
        self.n_iter_ = np.array([int(math.ceil(r.n_epochs - 1e-9)) for r in results],
                                dtype=np.int64)
        self._set_certificate(results)      # binary: scalars; one-vs-rest: per class
        self.trace_ = [r.trace for r in results]
        self.solver_ = results[0].solver
        self.solver_path_ = [solver_path(r) for r in results] if len(results) > 1 \
            else solver_path(results[0])
        self._warn_convergence(results, labels, X)
        return self

    def _check_two_classes(self, y, kept):
        """At least two classes among the labels ``y[kept]`` (all rows kept: the
        classes of ``y``, at least two, were checked)."""
        if kept.all():
            return
        kept_classes = np.unique(y[kept])
        if kept_classes.size < 2:
            raise ValueError(
                f"after removing the samples of weight 0 only one class remains "
                f"({_plain(kept_classes[0])!r}); {type(self).__name__} needs positive weight on "
                f"samples of at least 2 classes")

    def decision_function(self, X):
        """Scores ``X @ coef_.T + intercept_``; shape (n,) for two classes, else (n, K)."""
        check_is_fitted(self)
        X = validate_data(self, X, accept_sparse="csr", dtype=[np.float64, np.float32],
                          reset=False)
        scores = safe_sparse_dot(X, self.coef_.T, dense_output=True) + self.intercept_
        return scores.ravel() if scores.shape[1] == 1 else scores

    def predict(self, X):
        """``classes_[1]`` where the score is > 0 (binary); argmax of the scores otherwise."""
        scores = self.decision_function(X)
        if scores.ndim == 1:
            return self.classes_[(scores > 0).astype(np.intp)]
        return self.classes_[np.argmax(scores, axis=1)]

    @needs_probabilistic_loss
    def predict_proba(self, X):
        """Class probabilities (loss="logistic", or "multinomial": the softmax).

        Binary: ``[1 - expit(s), expit(s)]`` with the logistic function
        ``expit(s) = 1 / (1 + exp(-s))`` of the decision function ``s``.
        Multiclass: the one-vs-rest ``expit(s_k)`` normalized to sum to 1, as
        ``LogisticRegression(multi_class="ovr")`` did.
        """
        scores = self.decision_function(X)
        if self.loss == "multinomial":
            return multinomial_proba(scores)
        if scores.ndim == 1:
            proba_pos = expit(scores)
            return np.column_stack([1.0 - proba_pos, proba_pos])
        proba = expit(scores)
        proba /= proba.sum(axis=1, keepdims=True)
        return proba

    @needs_probabilistic_loss
    def predict_log_proba(self, X):
        """``log(predict_proba(X))``."""
        return np.log(self.predict_proba(X))


# ---------------------------------------------------------------- regressor
class LinearRegressor(RegressorMixin, _LinearBase):
    """Linear regression (ridge, least absolute deviation, linear SVR) with a certified fit.

    Minimizes ``(1/W) sum_i c_i phi(x_i . w; y_i) + alpha/2 ||w||^2 + l1 ||w||_1``
    with :func:`primaldual.solve`.  The parameters and attributes are those
    of :class:`LinearClassifier` without ``class_weight`` (``n_jobs`` are the
    solver's threads: there is one problem), with ``loss`` in {"squared", "absolute",
    "epsilon_insensitive", "squared_epsilon_insensitive"} (``loss_params={"epsilon":
    ...}``; the last is ``LinearSVR(loss="squared_epsilon_insensitive")`` and
    LIBLINEAR's ``-s 11``/``-s 12``).

    ``loss="squared"`` is ``(x.w - y)^2 / 2``: with ``fit_intercept=False`` it
    is ``Ridge(alpha=alpha * n)`` (the default ``alpha=None``, ``1/n``, is
    ``Ridge()``'s ``alpha = 1``; ``C`` is ``LinearSVR``'s); with the intercept it
    differs from Ridge, whose intercept is not penalized (see the module docstring).
    ``penalty="l1"`` with ``loss="squared"`` is the Lasso (``Lasso(alpha=alpha)``
    without intercept), ``penalty="elasticnet"`` scikit-learn's ElasticNet split.

    Attributes
    ----------
    coef_ : ndarray (d,)
    intercept_ : float
    dual_coef_ : ndarray (n,)
    n_iter_ : int      epochs run, rounded up
    gap_, rel_gap_ : float   certified gaps (>= 0)
    primal_, dual_ : float
    converged_ : bool
    trace_ : list of dicts
    solver_ : str
    solver_path_ : list of dict   the legs of the fit (method, threads, seconds, gap, reason)
    lam_ : float      the L2 strength used (``alpha``, ``1/(C W)`` or ``1/W``)
    n_features_in_ : int
    """

    _loss_family = REGRESSION_LOSSES

    def __init__(self, loss="squared", *, alpha=None, C=None, l1=0.0, loss_params=None,
                 tol=1e-6, max_iter=None, fit_intercept=True, intercept_scaling=1.0,
                 warm_start=False, random_state=None, solver="auto", solver_options=None,
                 n_jobs=None, verbose=0, penalty="l2", l1_ratio=None):
        self.penalty = penalty
        self.l1_ratio = l1_ratio
        self.loss = loss
        self.alpha = alpha
        self.C = C
        self.l1 = l1
        self.loss_params = loss_params
        self.tol = tol
        self.max_iter = max_iter
        self.fit_intercept = fit_intercept
        self.intercept_scaling = intercept_scaling
        self.warm_start = warm_start
        self.random_state = random_state
        self.solver = solver
        self.solver_options = solver_options
        self.n_jobs = n_jobs
        self.verbose = verbose

    def fit(self, X, y, sample_weight=None):
        """Fit the model; returns ``self``.  Rows of weight 0 are removed first."""
        self._validate_params_values()
        X, y = validate_data(self, X, y, accept_sparse="csr",
                             dtype=[np.float64, np.float32], order="C", y_numeric=True)
        y = np.asarray(y, dtype=np.float64)
        sw = np.ones(X.shape[0]) if sample_weight is None else _check_sample_weight(
            sample_weight, X, dtype=np.float64, ensure_non_negative=True,
            allow_all_zero_weights=True)
        keep = sw > 0
        if not keep.any():
            raise ValueError("every sample weight is zero; give at least one sample "
                             "a positive weight")
        n = X.shape[0]
        Xa = self._prepare(X)
        sel = slice(None) if keep.all() else keep     # a view where every row is kept
        if not keep.all():
            Xa = Xa[keep]
        swk = sw[keep]
        weights = None if np.all(swk == 1.0) else swk
        warm = self._warm_starts(1, n, sel)
        seeds = spawn_seeds(self.random_state, 1)
        lam = self._strength(float(swk.sum()))
        (res,) = self._fit_problems(Xa, [y[keep]], weights, warm, seeds, lam, [None])
        self.coef_, self.intercept_ = self._split(res.coef)
        self.coef_ = np.array(self.coef_)
        dual = np.zeros(n)
        dual[sel] = res.dual_coef
        self.dual_coef_ = dual
        self.n_iter_ = int(math.ceil(res.n_epochs - 1e-9))
        self._set_certificate([res])
        self.trace_ = res.trace
        self.solver_ = res.solver
        self.solver_path_ = solver_path(res)
        self._warn_convergence([res], [None], X)
        return self

    def predict(self, X):
        """``X @ coef_ + intercept_``."""
        check_is_fitted(self)
        X = validate_data(self, X, accept_sparse="csr", dtype=[np.float64, np.float32],
                          reset=False)
        return np.asarray(safe_sparse_dot(X, self.coef_), dtype=np.float64).ravel() \
            + self.intercept_
