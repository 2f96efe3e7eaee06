"""scikit-learn estimators over :func:`primaldual.solve` (docs/conventions.md §5).

Both estimators minimize the problem of docs/conventions.md §1,

    P(w) = (1/W) sum_i c_i phi(x_i . w; y_i) + alpha/2 ||w||^2 + l1 ||w||_1,

with ``alpha`` the same number as ``lam`` and ``c_i`` the product of
``sample_weight`` and (classifier) the class weight of ``y_i``.  In
LIBLINEAR's scaling (``1/2 ||w||^2 + C sum_i c_i loss_i``) this is
``C = 1 / (alpha W)`` (``1 / (alpha n)`` for unit weights).

Default strength
----------------
``alpha=None`` (the default) is ``alpha = 1/W``: the problem of LIBLINEAR's,
``LinearSVC``'s and ``LinearSVR``'s default ``C = 1`` and of ``Ridge``'s
default ``alpha = 1`` (without intercept), so that a user who swaps one of
them for these estimators solves the same problem.  The strength a fit used
is the attribute ``lam_``.  (Measured against a fixed ``alpha = 1e-4`` on the
sets of benchmarks/bench_defaults.py: docs/estimators.md.)

Names
-----
The estimators' parameter ``alpha`` is the L2 strength, as in scikit-learn's
``SGDClassifier``, ``Ridge`` and ``ElasticNet``; it is passed to
:func:`primaldual.solve` as ``lam``.  It is never the dual variable: the dual
certificate (``alpha_i`` in docs/conventions.md §1) is the attribute
``dual_coef_``.  Below, ``alpha_i`` is the dual variable and ``lam`` the
strength.

Intercept
---------
With ``fit_intercept=True`` a constant feature of value
``intercept_scaling`` is appended to every row (a CSR ``hstack`` for sparse
input, which is never densified) and its weight ``w_b`` is **regularized like
every other weight**, exactly as LIBLINEAR and ``LinearSVC`` do.  The model
reports ``intercept_ = intercept_scaling * w_b``.  A larger
``intercept_scaling`` weakens the penalty on the intercept (the penalty on
``intercept_`` is ``alpha / (2 intercept_scaling^2) intercept_^2``).

Zero sample weights
-------------------
:func:`primaldual.solve` requires ``c_i > 0``.  Rows whose combined weight
is 0 are removed before solving, which is exactly equivalent (a zero-weight
row adds nothing to ``P`` or ``D``); their entries of ``dual_coef_`` are 0.

Warm start
----------
``warm_start=True`` starts each fit from the previous ``dual_coef_``.  In the
SDCA dual of docs/conventions.md §1 the primal point is
``w(alpha) = (1/(lam W)) sum_i c_i alpha_i x_i`` and the constraint on each
``alpha_i`` is ``-alpha_i in dom phi*(.; y_i)``: a set fixed by the loss and the
label alone, independent of ``lam``, of the weights ``c_i`` and of ``W``.  A
previous ``dual_coef_`` is therefore dual feasible for any new strength
``alpha`` (``lam``) and any new sample/class weights, and the right
"rescaling" is the identity.
(LIBLINEAR's variables are ``C c_i y_i alpha_i`` in ``[0, C c_i]``; rescaling
them by ``C_new / C_old`` there is the same map.)  Keeping ``dual_coef_`` rather
than ``coef_`` is also the better start: the optimal dual ``alpha_i* = -phi'(x_i . w*)``
moves continuously with ``lam``, while ``w* = v(alpha*)/lam`` changes
with its scale.  A warm start needs the same training rows and classes as
the previous fit; otherwise it is refused with a ValueError.
"""
from __future__ import annotations

import math
import sys
import warnings
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import scipy.sparse as sp
from scipy.special import expit
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.class_weight import compute_class_weight
from sklearn.utils.extmath import safe_sparse_dot
from sklearn.utils.metaestimators import available_if
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import _check_sample_weight, check_is_fitted, validate_data

from ._util import encode_pm1, seed_entropy
from ._util import spawn_seeds as _spawn_seeds
from .penalties import split_strength
from .losses import LOSS_NAMES, make_loss
from .solvers import solve, threaded_solvers
from ._util.interrupts import sigint_as_flag
from ._util.threads import resolve_n_jobs
from ._util.scales import scale_spread_note


def _plain(x):
    """A label as a user wrote it: numpy scalars as Python ones (no np.int64(8))."""
    return x.item() if isinstance(x, np.generic) else x

__all__ = ["LinearClassifier", "LinearRegressor"]

CLASSIFICATION_LOSSES = tuple(n for n in LOSS_NAMES if make_loss(n).classification)
REGRESSION_LOSSES = tuple(n for n in LOSS_NAMES if not make_loss(n).classification)


# ------------------------------------------------------------------ helpers
def add_intercept_column(X, intercept_scaling):
    """``[X, intercept_scaling * 1]``: CSR stays CSR (no densifying)."""
    n = X.shape[0]
    if sp.issparse(X):
        col = sp.csr_matrix(np.full((n, 1), intercept_scaling, dtype=X.dtype))
        return sp.hstack([X, col], format="csr")
    return np.hstack([X, np.full((n, 1), intercept_scaling, dtype=X.dtype)])


def spawn_seeds(random_state, k):
    """``k`` independent integer seeds from one ``random_state``.

    The children of ``SeedSequence(entropy)`` are used, so the seed of each
    one-vs-rest problem depends only on ``random_state`` and the class
    index, never on thread scheduling.
    """
    return _spawn_seeds(seed_entropy(random_state), k)


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


def combined_weights(y, classes, sample_weight, class_weight):
    """``c_i = sample_weight_i * class_weight[y_i]`` (``classes`` sorted, as np.unique).

    "balanced" is ``W / (K W_k)`` computed over the samples of positive
    ``sample_weight`` (``W_k`` their weighted count in class k, K the number
    of classes among them), so that zero weights mean "absent".
    """
    if class_weight is None:
        return sample_weight
    if isinstance(class_weight, str) and class_weight == "balanced":
        pos = sample_weight > 0
        present = np.unique(y[pos])
        cw = np.zeros(classes.size)
        cw[np.searchsorted(classes, present)] = compute_class_weight(
            "balanced", classes=present, y=y[pos], sample_weight=sample_weight[pos])
    else:
        cw = compute_class_weight(class_weight, classes=classes, y=y)
    cw = np.asarray(cw, dtype=np.float64)
    if np.any(cw < 0) or not np.all(np.isfinite(cw)):
        raise ValueError(f"class_weight values must be finite and >= 0, got "
                         f"{cw.tolist()} for classes {classes.tolist()}")
    return sample_weight * cw[np.searchsorted(classes, y)]


class _LinearBase(BaseEstimator):
    """Shared fitting machinery; subclasses define ``_loss_family``."""

    _loss_family = ()

    def _validate_params_values(self):
        if not isinstance(self.loss, str) or self.loss not in self._loss_family:
            raise ValueError(f"{type(self).__name__} needs loss in "
                             f"{', '.join(self._loss_family)}; got loss={self.loss!r}")
        make_loss(self.loss, self.loss_params)          # validates loss_params
        if self.alpha is not None:
            _check_number("alpha", self.alpha, allow_equal=True)
        _check_number("l1", self.l1, allow_equal=True)
        _check_number("tol", self.tol, allow_equal=True)
        if self.max_iter is not None:
            _check_number("max_iter", self.max_iter)
        _check_number("intercept_scaling", self.intercept_scaling)
        if not isinstance(self.verbose, (int, np.integer, bool)) or self.verbose < 0:
            raise ValueError(f"verbose must be an integer >= 0, got {self.verbose!r}")
        return _solve_options(self.solver_options)

    def _strength(self, total_weight):
        """The L2 strength of this fit: ``alpha``, or ``1 / W`` for ``alpha=None``
        (LIBLINEAR's ``C = 1``), split by ``penalty`` (:meth:`_penalty_terms`);
        stored as ``lam_`` and ``l1_``."""
        strength = 1.0 / total_weight if self.alpha is None else float(self.alpha)
        lam, self.l1_ = self._penalty_terms(strength)
        self.lam_ = lam
        return lam

    def _penalty_terms(self, strength):
        """``(lam, l1)`` for ``penalty`` (:func:`~primaldual.penalties.split_strength`)."""
        return split_strength(getattr(self, "penalty", "l2"), strength, self.l1,
                              getattr(self, "l1_ratio", None))

    def _fit_problems(self, Xa, targets, weights, warm, seeds, lam):
        """Solve one problem per entry of ``targets`` (threads when several)."""
        opts = self._validate_params_values()
        if self.verbose >= 2 and len(targets) == 1:
            opts.setdefault("progress", True)

        def one(k):
            if warm[k] is not None:
                opts_k = dict(opts, warm_start=warm[k])
            else:
                opts_k = opts
            return solve(Xa, targets[k], loss=self.loss, lam=lam,
                         solver=self.solver, tol=float(self.tol),
                         max_epochs=None if self.max_iter is None else float(self.max_iter),
                         random_state=seeds[k],
                         sample_weight=weights, l1=float(self.l1_),
                         loss_params=self.loss_params, **opts_k)

        k_total = len(targets)
        threads = resolve_n_jobs(getattr(self, "n_jobs", None))
        workers = min(k_total, threads)
        # the threads left over go to each problem's solver, when it takes them
        per_problem = max(1, threads // workers)
        if per_problem > 1 and "n_jobs" not in opts and (
                self.solver == "auto" or self.solver in threaded_solvers()):
            opts = dict(opts, n_jobs=per_problem)
        # one Ctrl-C stops every one-vs-rest problem: the solves (on this thread
        # or the pool's) share this block's flag, and each returns its
        # certified point (stop_reason "interrupted")
        with sigint_as_flag():
            if workers > 1:
                with ThreadPoolExecutor(max_workers=workers) as pool:
                    results = list(pool.map(one, range(k_total)))
            else:
                results = [one(k) for k in range(k_total)]
        if self.verbose:
            for k, r in enumerate(results):
                print(f"[{type(self).__name__}] problem {k}: solver={r.solver} "
                      f"epochs={r.n_epochs:g} rel_gap={r.rel_gap:.3e} "
                      f"converged={r.converged}", file=sys.stderr)
        return results

    def _warn_convergence(self, results, labels, X=None):
        bad = [(lab, r) for lab, r in zip(labels, results) if not r.converged]
        if not bad:
            return
        worst_label, worst = max(bad, key=lambda t: t[1].rel_gap)
        which = "" if worst_label is None else (
            f" ({len(bad)} of {len(results)} one-vs-rest problems; worst: class "
            f"{_plain(worst_label)!r})")
        note = "" if X is None else scale_spread_note(X)
        warnings.warn(
            f"{type(self).__name__} did not converge{which}: achieved relative duality "
            f"gap {worst.rel_gap:.3e} > target tol={float(self.tol):g} after "
            f"{worst.n_epochs:g} epochs (max_iter={self.max_iter}); "
            + (f"{note}; otherwise " if note else "")
            + "increase max_iter, increase tol or increase alpha",
            ConvergenceWarning, stacklevel=3)

    def _split(self, coef_full):
        if self.fit_intercept:
            return coef_full[:-1], float(self.intercept_scaling) * coef_full[-1]
        return coef_full, 0.0

    def _prepare(self, X):
        Xa = add_intercept_column(X, float(self.intercept_scaling)) if self.fit_intercept \
            else X
        return Xa

    def _previous_dual_coef(self, n_problems, n):
        """The dual point to warm start from, or ``[None]*n_problems``."""
        if not (self.warm_start and hasattr(self, "dual_coef_")):
            return None
        prev = np.atleast_2d(self.dual_coef_)
        if prev.shape != (n_problems, n):
            raise ValueError(
                f"warm_start=True needs the same training rows and classes as the previous "
                f"fit: dual_coef_ has shape {np.shape(self.dual_coef_)} but this fit has "
                f"{n} samples and {n_problems} subproblem(s); set warm_start=False or refit "
                f"on the same data")
        return prev

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
    loss : {"hinge", "smooth_hinge", "squared_hinge", "logistic"}, default "hinge"
    alpha : float or None, default None
        L2 strength, the ``lam`` of docs/conventions.md §1 (``C = 1/(alpha n)`` in
        LIBLINEAR terms).  None: ``1/W`` (``1/n`` for unit weights), the problem of
        ``LinearSVC()``'s and LIBLINEAR's default ``C = 1``.
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
        Start from the previous ``dual_coef_`` (no rescaling is needed, see
        the module docstring).
    random_state : int, Generator, RandomState or None
        Seeds the solver; problem ``k`` of one-vs-rest gets the k-th child
        of ``SeedSequence(random_state)``.
    solver : str, default "auto"
        Passed to :func:`primaldual.solve` ("auto" resolves with
        :func:`primaldual.solvers.resolve_solver`; SDCA by default).
    solver_options : dict, optional
        Extra keyword options for the solver (e.g. ``{"sampling": "uniform"}``).
    n_jobs : int or None
        Threads (None or 1: one; -1: all cores).  One-vs-rest problems run at
        once on up to ``n_jobs`` threads (the kernels release the GIL); the
        threads left over go to each problem's solver when it runs on several
        (``sdca``, ``minibatch_sdca``; see :func:`primaldual.solve`), so a
        binary problem gets all of them.
    verbose : int, default 0
        1 prints one summary line per problem to stderr; 2 also shows a
        progress bar for a single problem.

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
    gap_ : float (binary) or ndarray (K,)   exact duality gap ``P - D``
    rel_gap_ : float or ndarray (K,)        ``(P - D)/|P|``, compared with ``tol``
    converged_ : bool or ndarray of bool (K,)
    trace_ : list of lists of dicts, one trace per problem
    solver_ : str                            the solver that ran
    lam_ : float                             the L2 strength used (``alpha``, or ``1/W``)
    n_features_in_ : int
    """

    _loss_family = CLASSIFICATION_LOSSES

    def __init__(self, loss="hinge", *, alpha=None, l1=0.0, loss_params=None, tol=1e-6,
                 max_iter=None, fit_intercept=True, intercept_scaling=1.0,
                 class_weight=None, warm_start=False, random_state=None, solver="auto",
                 solver_options=None, n_jobs=None, verbose=0, penalty="l2", l1_ratio=None):
        self.penalty = penalty
        self.l1_ratio = l1_ratio
        self.loss = loss
        self.alpha = alpha
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
        check_classification_targets(y)
        classes = np.unique(y)
        if classes.size < 2:
            raise ValueError(f"{type(self).__name__} needs samples of at least 2 classes; "
                             f"y has only one class: {_plain(classes[0])!r}")
        sw = _check_sample_weight(sample_weight, X, dtype=np.float64,
                                  ensure_non_negative=True, allow_all_zero_weights=True)
        positive = sw > 0
        if not positive.any():
            raise ValueError("every sample weight is zero; give positive weight to "
                             "samples of at least 2 classes")
        self._check_two_classes(y[positive])
        c = combined_weights(y, classes, sw, self.class_weight)
        keep = c > 0
        if not keep.any():
            raise ValueError("every sample weight is zero (sample_weight times "
                             "class_weight); give positive weight to samples of at least "
                             "2 classes")
        self._check_two_classes(y[keep])
        self.classes_ = classes
        n = X.shape[0]
        Xa = self._prepare(X)
        all_kept = bool(keep.all())
        if not all_kept:
            Xa = Xa[keep]
        ck = c[keep]
        weights = None if np.all(ck == 1.0) else ck
        yk = y[keep]
        if classes.size == 2:
            targets = [encode_pm1(yk, classes[1], classes[0])]
            labels = [None]
        else:
            targets = [encode_pm1(yk, cl) for cl in classes]
            labels = list(classes)
        prev = self._previous_dual_coef(len(targets), n)
        warm = [None] * len(targets) if prev is None else [a[keep] for a in prev]
        seeds = spawn_seeds(self.random_state, len(targets))
        lam = self._strength(float(ck.sum()))
        results = self._fit_problems(Xa, targets, weights, warm, seeds, lam)

        coefs, intercepts = zip(*(self._split(r.coef) for r in results))
        self.coef_ = np.vstack(coefs)
        self.intercept_ = np.array(intercepts, dtype=np.float64)
        dual = np.zeros((len(results), n))
        for k, r in enumerate(results):
            dual[k, keep] = r.dual_coef
        self.dual_coef_ = dual
        self.n_iter_ = np.array([int(math.ceil(r.n_epochs - 1e-9)) for r in results],
                                dtype=np.int64)
        if len(results) == 1:           # binary: one problem, scalars (as LinearRegressor)
            self.gap_ = float(results[0].gap)
            self.rel_gap_ = float(results[0].rel_gap)
            self.converged_ = bool(results[0].converged)
        else:                           # one-vs-rest: one entry per class
            self.gap_ = np.array([r.gap for r in results])
            self.rel_gap_ = np.array([r.rel_gap for r in results])
            self.converged_ = np.array([r.converged for r in results], dtype=bool)
        self.trace_ = [r.trace for r in results]
        self.solver_ = results[0].solver
        self._warn_convergence(results, labels, X)
        return self

    def _check_two_classes(self, y_kept):
        kept_classes = np.unique(y_kept)
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

    def _has_proba(self):
        if self.loss != "logistic":
            raise AttributeError(f"predict_proba is available for loss='logistic' only "
                                 f"(loss={self.loss!r})")
        return True

    @available_if(_has_proba)
    def predict_proba(self, X):
        """Class probabilities (loss="logistic").

        Binary: ``[1 - expit(s), expit(s)]`` with the logistic function
        ``expit(s) = 1 / (1 + exp(-s))`` of the decision function ``s``.
        Multiclass: the one-vs-rest ``expit(s_k)`` normalized to sum to 1, as
        ``LogisticRegression(multi_class="ovr")`` did.
        """
        scores = self.decision_function(X)
        if scores.ndim == 1:
            proba_pos = expit(scores)
            return np.column_stack([1.0 - proba_pos, proba_pos])
        proba = expit(scores)
        proba /= proba.sum(axis=1, keepdims=True)
        return proba

    @available_if(_has_proba)
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
    "epsilon_insensitive"} (``loss_params={"epsilon": ...}``).

    ``loss="squared"`` is ``(x.w - y)^2 / 2``: with ``fit_intercept=False`` it
    is ``Ridge(alpha=alpha * n)`` (the default ``alpha=None``, ``1/n``, is
    ``Ridge()``'s ``alpha = 1``); with the intercept it differs from Ridge,
    whose intercept is not penalized (see the module docstring).
    ``penalty="l1"`` with ``loss="squared"`` is the Lasso (``Lasso(alpha=alpha)``
    without intercept), ``penalty="elasticnet"`` scikit-learn's ElasticNet split.

    Attributes
    ----------
    coef_ : ndarray (d,)
    intercept_ : float
    dual_coef_ : ndarray (n,)
    n_iter_ : int      epochs run, rounded up
    gap_, rel_gap_ : float
    converged_ : bool
    trace_ : list of dicts
    solver_ : str
    lam_ : float      the L2 strength used (``alpha``, or ``1/W``)
    n_features_in_ : int
    """

    _loss_family = REGRESSION_LOSSES

    def __init__(self, loss="squared", *, alpha=None, l1=0.0, loss_params=None, tol=1e-6,
                 max_iter=None, fit_intercept=True, intercept_scaling=1.0,
                 warm_start=False, random_state=None, solver="auto", solver_options=None,
                 n_jobs=None, verbose=0, penalty="l2", l1_ratio=None):
        self.penalty = penalty
        self.l1_ratio = l1_ratio
        self.loss = loss
        self.alpha = alpha
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
        sw = _check_sample_weight(sample_weight, X, dtype=np.float64,
                                  ensure_non_negative=True, allow_all_zero_weights=True)
        keep = sw > 0
        if not keep.any():
            raise ValueError("every sample weight is zero; give at least one sample "
                             "a positive weight")
        n = X.shape[0]
        Xa = self._prepare(X)
        if not keep.all():
            Xa = Xa[keep]
        swk = sw[keep]
        weights = None if np.all(swk == 1.0) else swk
        prev = self._previous_dual_coef(1, n)
        warm = [None] if prev is None else [prev[0][keep]]
        seeds = spawn_seeds(self.random_state, 1)
        lam = self._strength(float(swk.sum()))
        (res,) = self._fit_problems(Xa, [y[keep]], weights, warm, seeds, lam)
        self.coef_, self.intercept_ = self._split(res.coef)
        self.coef_ = np.array(self.coef_)
        dual = np.zeros(n)
        dual[keep] = res.dual_coef
        self.dual_coef_ = dual
        self.n_iter_ = int(math.ceil(res.n_epochs - 1e-9))
        self.gap_ = float(res.gap)
        self.rel_gap_ = float(res.rel_gap)
        self.converged_ = bool(res.converged)
        self.trace_ = res.trace
        self.solver_ = res.solver
        self._warn_convergence([res], [None], X)
        return self

    def predict(self, X):
        """``X @ coef_ + intercept_``."""
        check_is_fitted(self)
        X = validate_data(self, X, accept_sparse="csr", dtype=[np.float64, np.float32],
                          reset=False)
        return np.asarray(safe_sparse_dot(X, self.coef_), dtype=np.float64).ravel() \
            + self.intercept_
