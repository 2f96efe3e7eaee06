"""Model files: a fitted linear model as a pickle-free ``.npz``, or LIBLINEAR's text.

An ``.npz`` model holds plain numeric and string arrays only (it loads with
``numpy.load(path, allow_pickle=False)``): ``format_version`` (1; 2 when it
holds a column scaling), ``kind``, ``coef`` (K, d), ``intercept`` (K,),
``classes``, ``loss``, ``loss_params``, ``lam``, ``l1``, ``fit_intercept``,
``intercept_scaling``, ``normalize_rows``, optionally ``feature_index_base``,
the certificate ``primal``/``dual``/``gap`` and ``column_scale``/
``column_offset`` (``fit --scale``).  docs/cli.md ("Model files") gives each
entry's meaning.  LIBLINEAR's text model files (:mod:`primaldual.liblinear_format`)
are read by the same functions, recognised by content.

:func:`save_model` writes atomically (never creating directories);
:func:`read_model` validates a file and returns the :class:`LinearModel` view
that ``primaldual predict`` uses; :func:`load_model` returns a fitted
``LinearClassifier`` / ``LinearRegressor``.  Data with more features than the
model are read as LIBLINEAR reads a test file: the extra features are ignored
(:meth:`LinearModel.predict` and the loaded estimators).  Files with object
(pickle) payloads, an unknown ``format_version``, missing keys or inconsistent
shapes are refused with a :class:`ModelFileError` that says what is wrong.
"""
from __future__ import annotations

import dataclasses
import json
import math
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ._util import atomic_write
from ._util.lazy import lazy_attr, lazy_module
from . import liblinear_format

__all__ = ["FORMAT_VERSION", "LinearModel", "save_model", "load_model", "read_model",
           "ModelFileError"]

FORMAT_VERSION = 1
#: the version written when the file holds a column scaling (readers of 1 lack it)
SCALED_FORMAT_VERSION = 2

_REQUIRED = ("format_version", "kind", "coef", "intercept", "classes", "loss",
             "loss_params", "lam", "l1", "fit_intercept", "intercept_scaling")
_CERTIFICATE = ("primal", "dual", "gap")


class ModelFileError(ValueError):
    """A model file is not a valid primaldual model (the message says why)."""


# ------------------------------------------------------------------ the view
@dataclass
class LinearModel:
    """A fitted linear model as stored in a model file.

    ``decision_function(X) = X @ coef.T + intercept``; a binary classifier
    predicts ``classes[1]`` where the score is > 0 and ``classes[0]``
    elsewhere, one-vs-rest predicts the class of the largest score, and a
    regressor predicts the score.
    """

    kind: str
    coef: np.ndarray                 # (K, d)
    intercept: np.ndarray            # (K,)
    classes: np.ndarray              # label values (float64)
    loss: str
    loss_params: dict = field(default_factory=dict)
    lam: float = 0.0
    l1: float = 0.0
    fit_intercept: bool = False
    intercept_scaling: float = 1.0
    normalize_rows: bool = False
    #: 0 or 1: the index base of the training file; None when not recorded
    feature_index_base: int | None = None
    primal: float | None = None
    dual: float | None = None
    gap: float | None = None
    #: x_j -> x_j * column_scale_j + column_offset_j before the scores (fit --scale)
    column_scale: np.ndarray | None = None
    column_offset: np.ndarray | None = None
    #: read from a LIBLINEAR text file: its ``-s`` number and label order
    liblinear_solver_type: int | None = None
    label_order: np.ndarray | None = None

    @property
    def n_features(self) -> int:
        return int(self.coef.shape[1])

    def folded(self):
        """``(coef, intercept)`` acting on the raw columns: the column scaling
        folded in (``(x s + o) . w + b = x . (s w) + (o . w + b)``)."""
        if self.column_scale is None:
            return self.coef, self.intercept
        return (self.coef * self.column_scale,
                self.intercept + self.coef @ self.column_offset)

    def _prepare(self, X):
        """``X`` validated, cut or padded to the model's features (features the
        training data never had are ignored, as LIBLINEAR does), rows scaled
        to unit norm for a ``normalize_rows`` model."""
        import scipy.sparse as sp

        X = to_width(lazy_attr("primaldual.validation", "check_X")(X), self.n_features)
        if self.normalize_rows:
            norms = (np.sqrt(np.asarray(X.multiply(X).sum(axis=1)).ravel())
                     if sp.issparse(X) else np.linalg.norm(X, axis=1))
            norms = np.where(norms > 0, norms, 1.0)      # zero rows stay zero
            if sp.issparse(X):
                X = sp.csr_matrix((X.data / np.repeat(norms, np.diff(X.indptr)),
                                   X.indices, X.indptr), shape=X.shape)
            else:
                X = X / norms[:, None]
        return X

    def decision_function(self, X):
        """Scores: (n,) for binary classification and regression, (n, K) for one-vs-rest."""
        X = self._prepare(X)
        coef, intercept = self.folded()
        return self.finish_scores(np.asarray(X @ coef.T, dtype=np.float64) + intercept)

    @staticmethod
    def finish_scores(scores):
        """(n,) for one column of scores, (n, K) otherwise."""
        return scores[:, 0] if scores.shape[1] == 1 else scores

    def labels_of(self, scores):
        """Predictions from :meth:`decision_function`'s scores."""
        if self.kind == "regressor":
            return scores
        if scores.ndim == 1:
            return np.where(scores > 0, self.classes[1], self.classes[0])
        return self.classes[np.argmax(scores, axis=1)]

    def predict(self, X):
        """Labels (original values) for a classifier, values for a regressor."""
        return self.labels_of(self.decision_function(X))


def to_width(X, d):
    """``X`` (dense or CSR) with exactly ``d`` columns: columns beyond ``d`` (features
    the training data never had) are dropped, missing ones are zero."""
    import scipy.sparse as sp

    if X.shape[1] > d:
        return sp.csr_matrix(X[:, :d]) if sp.issparse(X) else X[:, :d]
    if X.shape[1] < d:
        if sp.issparse(X):
            return sp.csr_matrix((X.data, X.indices, X.indptr), shape=(X.shape[0], d))
        return np.hstack([X, np.zeros((X.shape[0], d - X.shape[1]), dtype=X.dtype)])
    return X


# ------------------------------------------------------------------ writing
def _model_from(obj, *, classes, loss_params, normalize_rows):
    if isinstance(obj, LinearModel):
        return obj
    SolveResult = lazy_attr("primaldual.solvers", "SolveResult")
    make_loss = lazy_attr("primaldual.losses", "make_loss")
    if isinstance(obj, SolveResult):
        if not obj.loss:
            raise ValueError("the SolveResult does not name its loss; cannot tell a "
                             "classifier from a regressor")
        if loss_params is None and obj.state is not None:
            loss_params = obj.state.meta.get("problem", {}).get("loss_params")
        loss = make_loss(obj.loss, loss_params or None)
        coef = np.asarray(obj.coef, dtype=np.float64).reshape(1, -1)
        if loss.classification:
            kind = "classifier"
            classes = np.array([-1.0, 1.0]) if classes is None else classes
        else:
            kind = "regressor"
            if classes is not None and np.size(classes):
                raise ValueError(f"classes given for a regression loss ({obj.loss!r})")
            classes = np.zeros(0)
        return LinearModel(kind=kind, coef=coef, intercept=np.zeros(1),
                           classes=_numeric_classes(classes), loss=loss.name,
                           loss_params=loss.params, lam=float(obj.lam), l1=float(obj.l1),
                           fit_intercept=False, intercept_scaling=1.0,
                           normalize_rows=bool(normalize_rows), primal=float(obj.primal),
                           dual=float(obj.dual), gap=float(obj.gap))
    # a fitted estimator from primaldual.estimators (duck-typed on its attributes)
    missing = [a for a in ("coef_", "intercept_", "loss", "alpha") if not hasattr(obj, a)]
    if missing:
        raise ValueError(f"save_model needs a SolveResult or a fitted primaldual "
                         f"estimator; {type(obj).__name__} lacks {', '.join(missing)} "
                         f"(call fit first)")
    loss_name = obj.loss if isinstance(obj.loss, str) else getattr(obj.loss, "name", None)
    lp = getattr(obj, "loss_params", None)
    loss = make_loss(loss_name, dict(lp) if lp else None)
    coef = np.asarray(obj.coef_, dtype=np.float64)
    intercept = np.atleast_1d(np.asarray(obj.intercept_, dtype=np.float64)).ravel()
    if loss.classification:
        kind = "classifier"
        if not hasattr(obj, "classes_"):
            raise ValueError(f"{type(obj).__name__} has no classes_; fit it first")
        cls = _numeric_classes(obj.classes_)
        coef = coef.reshape(-1, coef.shape[-1]) if coef.ndim else coef
    else:
        kind = "regressor"
        cls = np.zeros(0)
        coef = coef.reshape(1, -1)
    cert = {k: getattr(obj, a, None) for k, a in
            (("primal", "primal_"), ("dual", "dual_"), ("gap", "gap_"))}
    # one certificate per file: kept for single problems (binary, regression)
    cert = {k: (float(np.ravel(v)[0]) if v is not None and np.size(v) == 1 else None)
            for k, v in cert.items()}
    return LinearModel(kind=kind, coef=coef, intercept=intercept, classes=cls,
                       loss=loss.name, loss_params=loss.params, lam=_strength(obj),
                       l1=float(getattr(obj, "l1_", getattr(obj, "l1", 0.0)) or 0.0),
                       fit_intercept=bool(getattr(obj, "fit_intercept", False)),
                       intercept_scaling=float(getattr(obj, "intercept_scaling", 1.0)),
                       normalize_rows=bool(normalize_rows), **cert)


def _numeric_classes(classes):
    arr = np.asarray(classes)
    if not (np.issubdtype(arr.dtype, np.number) or arr.dtype == np.bool_):
        raise ValueError(f"model files store numeric class labels only, got "
                         f"classes of dtype {arr.dtype} ({arr[:3].tolist()}...); "
                         f"encode the labels as numbers before fitting")
    return arr.astype(np.float64).ravel()


def _check_model(m: LinearModel, where, validate_loss=True):
    def bad(msg):
        raise ModelFileError(f"{where}: {msg}")

    if m.kind not in ("classifier", "regressor"):
        bad(f"kind must be 'classifier' or 'regressor', got {m.kind!r}")
    if m.coef.ndim != 2 or m.coef.shape[0] < 1 or m.coef.shape[1] < 1:
        bad(f"coef must be a non-empty 2-D array (K, d), got shape {m.coef.shape}")
    K = m.coef.shape[0]
    if m.intercept.shape != (K,):
        bad(f"intercept has shape {m.intercept.shape}; coef has {K} row(s), so "
            f"intercept must have shape ({K},)")
    for name in ("coef", "intercept", "classes"):
        if not np.isfinite(getattr(m, name)).all():
            bad(f"{name} contains NaN or inf values")
    if m.kind == "classifier":
        need = 2 if K == 1 else K
        if m.classes.shape != (need,):
            bad(f"a classifier with {K} coefficient row(s) needs {need} classes, got "
                f"classes of shape {m.classes.shape}")
        if np.unique(m.classes).size != need:
            bad(f"classes must be distinct, got {m.classes.tolist()}")
    elif K != 1:
        bad(f"a regressor has one coefficient row, got {K}")
    if validate_loss and m.liblinear_solver_type is None:
        try:
            loss = lazy_attr("primaldual.losses", "make_loss")(m.loss, m.loss_params or None)
        except ValueError as e:
            bad(f"invalid loss: {e}")
        if loss.classification != (m.kind == "classifier"):
            bad(f"loss={m.loss!r} does not fit kind={m.kind!r}")
    if (m.column_scale is None) != (m.column_offset is None):
        bad("column_scale and column_offset go together")
    for name in ("column_scale", "column_offset"):
        v = getattr(m, name)
        if v is not None and (v.shape != (m.n_features,) or not np.isfinite(v).all()):
            bad(f"{name} must hold {m.n_features} finite numbers, got shape {v.shape}")
    for name in ("lam", "l1", "intercept_scaling"):
        val = getattr(m, name)
        if not math.isfinite(val) or val < 0:
            bad(f"{name} must be a finite number >= 0, got {val!r}")
    if m.feature_index_base not in (None, 0, 1):
        bad(f"feature_index_base must be 0 or 1, got {m.feature_index_base!r}")


def save_model(obj, path, *, classes=None, loss_params=None, normalize_rows=False,
               feature_index_base=None, validate_loss=True):
    """Write a fitted model to ``path`` (``.npz``), atomically and without pickle.

    Parameters
    ----------
    obj : SolveResult, fitted LinearClassifier/LinearRegressor, or LinearModel
        A SolveResult is stored as one coefficient row without intercept; its
        kind follows the loss (classification losses give a classifier).
    path : str or path-like
        Destination; ``.npz`` is appended when missing (as ``numpy.savez`` does).
    classes : array-like of 2 numbers, optional
        For a SolveResult of a classification loss: the original label values
        ``[negative, positive]`` that were mapped to -1/+1 (default ``[-1, 1]``).
    loss_params : dict, optional
        For a SolveResult: the loss parameters (default: read from its state).
    normalize_rows : bool
        Record that rows must be scaled to unit norm before prediction.
    feature_index_base : {0, 1} or None
        The index base of the LIBSVM file the model was trained on, for
        ``primaldual predict`` (None: not recorded).
    validate_loss : bool
        Check the loss name against the loss registry (the command line has
        checked it already and skips the registry's import).

    Returns the :class:`pathlib.Path` written.
    """
    m = _model_from(obj, classes=classes, loss_params=loss_params,
                    normalize_rows=normalize_rows)
    if feature_index_base is not None:
        m = dataclasses.replace(m, feature_index_base=feature_index_base)
    path = Path(path)
    if path.suffix != ".npz":
        path = path.with_name(path.name + ".npz")
    _check_model(m, f"cannot save model to {path}", validate_loss)
    scaled = m.column_scale is not None
    payload = {
        "format_version": np.array(SCALED_FORMAT_VERSION if scaled else FORMAT_VERSION,
                                   dtype=np.int64),
        "kind": np.array(m.kind),
        "coef": np.ascontiguousarray(m.coef, dtype=np.float64),
        "intercept": np.ascontiguousarray(m.intercept, dtype=np.float64),
        "classes": np.ascontiguousarray(m.classes, dtype=np.float64),
        "loss": np.array(m.loss),
        "loss_params": np.array(json.dumps(m.loss_params or {}, sort_keys=True)),
        "lam": np.array(float(m.lam)),
        "l1": np.array(float(m.l1)),
        "fit_intercept": np.array(bool(m.fit_intercept)),
        "intercept_scaling": np.array(float(m.intercept_scaling)),
        "normalize_rows": np.array(bool(m.normalize_rows)),
    }
    if m.feature_index_base is not None:
        payload["feature_index_base"] = np.array(int(m.feature_index_base), dtype=np.int64)
    for k in _CERTIFICATE:
        v = getattr(m, k)
        if v is not None:
            payload[k] = np.array(float(v))
    if scaled:
        payload["column_scale"] = np.ascontiguousarray(m.column_scale, dtype=np.float64)
        payload["column_offset"] = np.ascontiguousarray(m.column_offset, dtype=np.float64)
    with atomic_write(path, make_dirs=False) as fh:
        np.savez(fh, **payload)
    return path


# ------------------------------------------------------------------ reading
def _scalar(z, key, kind, where):
    arr = z[key]
    if arr.shape != ():
        raise ModelFileError(f"{where}: {key!r} must be a scalar, got shape {arr.shape}")
    if kind is str:
        if arr.dtype.kind != "U":
            raise ModelFileError(f"{where}: {key!r} must be a string, got dtype {arr.dtype}")
        return str(arr)
    if kind is bool:
        if arr.dtype != np.bool_:
            raise ModelFileError(f"{where}: {key!r} must be a bool, got dtype {arr.dtype}")
        return bool(arr)
    if not np.issubdtype(arr.dtype, np.number):
        raise ModelFileError(f"{where}: {key!r} must be a number, got dtype {arr.dtype}")
    return kind(arr)


def _float_array(z, key, ndim, where):
    arr = z[key]
    if not np.issubdtype(arr.dtype, np.floating) and not np.issubdtype(arr.dtype,
                                                                       np.integer):
        raise ModelFileError(f"{where}: {key!r} must be a float array, got dtype "
                             f"{arr.dtype}")
    if arr.ndim != ndim:
        raise ModelFileError(f"{where}: {key!r} must be {ndim}-D, got shape {arr.shape}")
    return np.ascontiguousarray(arr, dtype=np.float64)


def _index_base(z, where):
    arr = z["feature_index_base"]
    if arr.shape != () or not np.issubdtype(arr.dtype, np.integer):
        raise ModelFileError(f"{where}: 'feature_index_base' must be an integer scalar "
                             f"(0 or 1), got {arr!r}")
    return int(arr)


def read_model(path, *, validate_loss=True) -> LinearModel:
    """Read and validate a model file; return the :class:`LinearModel` view.

    An ``.npz`` file is opened with ``allow_pickle=False``: an entry holding
    Python objects is refused before anything is unpickled.  A LIBLINEAR text
    model file (it starts with ``solver_type``) is read by
    :mod:`primaldual.liblinear_format`.  ``validate_loss=False`` skips the
    check of the loss name against the loss registry (the scores need only
    the coefficients; the command line's ``predict`` skips it to stay fast).

    Raises
    ------
    FileNotFoundError
        No file at ``path``.
    ModelFileError (a ValueError)
        Not an ``.npz`` archive, object/pickle payload, missing or unsupported
        ``format_version``, missing keys, wrong types or inconsistent shapes.
    """
    path = Path(path)
    where = f"model file {path}"
    if not path.is_file():
        raise FileNotFoundError(f"model file not found: {path}")
    with open(path, "rb") as fh:
        magic = fh.read(12)
    if magic == b"solver_type ":
        ll = liblinear_format.read_liblinear(path)
        try:
            m = liblinear_format.to_linear_model(ll, LinearModel)
        except ValueError as e:
            raise ModelFileError(f"{where}: {e}") from None
        _check_model(m, where, validate_loss=False)
        return m
    magic = magic[:6]
    if magic[:4] not in (b"PK\x03\x04", b"PK\x05\x06") and magic != b"\x93NUMPY":
        raise ModelFileError(f"{where} is not an .npz archive (it starts with "
                             f"{magic!r}); write it with primaldual.save_model or "
                             f"'primaldual fit --model OUT.npz'")
    try:
        z = np.load(path, allow_pickle=False)
    except ValueError as e:
        raise ModelFileError(f"{where} holds a pickled Python object ({e}); refusing to "
                             f"load it. Model files contain plain arrays only: re-save "
                             f"the model with primaldual.save_model") from None
    except (OSError, EOFError, zipfile.BadZipFile) as e:
        raise ModelFileError(f"{where} is not a readable .npz archive ({e}); write it "
                             f"with primaldual.save_model or 'primaldual fit --model'") \
            from None
    if not isinstance(z, np.lib.npyio.NpzFile):
        raise ModelFileError(f"{where} is a single .npy array, not an .npz model archive; "
                             f"write it with primaldual.save_model")
    with z:
        try:
            return _read_npz(z, where, validate_loss)
        except ValueError as e:
            if isinstance(e, ModelFileError):
                raise
            # numpy refuses object arrays with allow_pickle=False: never unpickled
            raise ModelFileError(f"{where} contains an object (pickle) array ({e}); "
                                 f"refusing to load it. Model files contain plain "
                                 f"numeric and string arrays only") from None
        except (zipfile.BadZipFile, OSError, EOFError) as e:
            raise ModelFileError(f"{where} is corrupt ({e}); write it again") from None


def _read_npz(z, where, validate_loss=True) -> LinearModel:
    files = set(z.files)
    # read every entry first: numpy refuses object (pickle) arrays here, before any
    # other check, and members that are not .npy arrays are named
    for key in sorted(files):
        arr = z[key]
        if not isinstance(arr, np.ndarray):
            raise ModelFileError(f"{where}: member {key!r} is not a numpy array; the "
                                 f"archive was not written by primaldual.save_model")
    if "format_version" not in files:
        raise ModelFileError(f"{where} has no 'format_version'; it was not written by "
                             f"primaldual.save_model (or is from an unknown tool)")
    fv = z["format_version"]
    if fv.shape != () or not np.issubdtype(fv.dtype, np.integer):
        raise ModelFileError(f"{where}: 'format_version' must be an integer scalar, got "
                             f"{fv!r}")
    if int(fv) not in (FORMAT_VERSION, SCALED_FORMAT_VERSION):
        raise ModelFileError(f"{where} has format_version {int(fv)}, but this primaldual "
                             f"reads format_version {FORMAT_VERSION} and "
                             f"{SCALED_FORMAT_VERSION}; re-save the model with this "
                             f"version")
    missing = [k for k in _REQUIRED if k not in files]
    if missing:
        raise ModelFileError(f"{where} is missing key(s) {missing}; re-save the model "
                             f"with primaldual.save_model")
    lp_text = _scalar(z, "loss_params", str, where)
    try:
        loss_params = json.loads(lp_text)
    except json.JSONDecodeError as e:
        raise ModelFileError(f"{where}: 'loss_params' is not valid JSON ({e})") from None
    if not isinstance(loss_params, dict):
        raise ModelFileError(f"{where}: 'loss_params' must be a JSON object, got "
                             f"{lp_text!r}")
    cert = {k: (_scalar(z, k, float, where) if k in files else None) for k in _CERTIFICATE}
    m = LinearModel(
        kind=_scalar(z, "kind", str, where),
        coef=_float_array(z, "coef", 2, where),
        intercept=_float_array(z, "intercept", 1, where),
        classes=_float_array(z, "classes", 1, where),
        loss=_scalar(z, "loss", str, where),
        loss_params=loss_params,
        lam=_scalar(z, "lam", float, where),
        l1=_scalar(z, "l1", float, where),
        fit_intercept=_scalar(z, "fit_intercept", bool, where),
        intercept_scaling=_scalar(z, "intercept_scaling", float, where),
        normalize_rows=(_scalar(z, "normalize_rows", bool, where)
                        if "normalize_rows" in files else False),
        feature_index_base=(_index_base(z, where) if "feature_index_base" in files
                            else None),
        column_scale=(_float_array(z, "column_scale", 1, where)
                      if "column_scale" in files else None),
        column_offset=(_float_array(z, "column_offset", 1, where)
                       if "column_offset" in files else None),
        **cert)
    _check_model(m, where, validate_loss)
    return m


def load_model(path):
    """Load a model file as a fitted scikit-learn style estimator.

    Returns a :class:`primaldual.LinearClassifier` or
    :class:`primaldual.LinearRegressor` with ``coef_``, ``intercept_``,
    ``classes_`` (classifier) and ``n_features_in_`` set, so ``predict``,
    ``decision_function`` and ``score`` work.  A model saved with
    ``normalize_rows=True`` (``primaldual fit --normalize``) comes back as a
    :class:`sklearn.pipeline.Pipeline` of a :class:`~sklearn.preprocessing.Normalizer`
    and the estimator, so predictions see the same row scaling as the fit.
    The file is validated by :func:`read_model` first.
    """
    m = read_model(path)
    return to_estimator(m)


def to_estimator(m: LinearModel):
    """The fitted estimator (or Normalizer pipeline) equivalent to ``m``."""
    import inspect

    cls = __getattr__("LoadedLinearClassifier" if m.kind == "classifier"
                      else "LoadedLinearRegressor")
    coef, intercept = m.folded()
    wanted = {"loss": m.loss, "alpha": m.lam, "l1": m.l1,
              "loss_params": dict(m.loss_params) or None,
              "fit_intercept": m.fit_intercept, "intercept_scaling": m.intercept_scaling}
    accepted = inspect.signature(cls.__init__).parameters
    est = cls(**{k: v for k, v in wanted.items() if k in accepted})
    for k, v in wanted.items():     # parameters the constructor does not take
        if k not in accepted:
            setattr(est, k, v)
    est.lam_ = float(m.lam)
    if m.kind == "classifier":
        est.coef_ = coef.copy()
        est.intercept_ = np.array(intercept, dtype=np.float64)
        est.classes_ = m.classes.copy()
    else:
        est.coef_ = coef[0].copy()
        est.intercept_ = float(intercept[0])
    est.n_features_in_ = m.n_features
    if m.gap is not None:      # the estimators' shape: (1,) for a classifier, float else
        est.gap_ = np.array([m.gap]) if m.kind == "classifier" else float(m.gap)
    if not m.normalize_rows:
        return est
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import Normalizer
    norm = Normalizer(norm="l2").fit(np.zeros((1, m.n_features)))
    return make_pipeline(norm, est)


def _strength(est) -> float:
    """The L2 strength a fitted estimator used: ``lam_`` (``alpha``, or ``1/W`` for
    the default ``alpha=None``), else ``alpha``."""
    lam = getattr(est, "lam_", None)
    if lam is None:
        if est.alpha is None:
            raise ValueError(f"{type(est).__name__} has alpha=None and no lam_; fit it first")
        lam = est.alpha
    return float(lam)


def _loaded_class(name):
    """``LoadedLinearClassifier`` / ``LoadedLinearRegressor``: the estimator of a
    model file, reading data as LIBLINEAR does (features beyond the model's are
    ignored; a file that never uses the last features is padded with zeros)."""
    estimators = lazy_module("primaldual.estimators")
    base = getattr(estimators, name[len("Loaded"):])

    def _window(self, X):
        if hasattr(X, "shape") and len(X.shape) == 2 and X.shape[1] != self.n_features_in_:
            X = to_width(lazy_attr("primaldual.validation", "check_X")(X),
                         self.n_features_in_)
        return X

    methods = {"__module__": __name__, "__doc__": _loaded_class.__doc__,
               "_window": _window}
    for meth in ("decision_function", "predict", "predict_proba", "score"):
        if hasattr(base, meth):
            methods[meth] = _windowed(getattr(base, meth))
    cls = type(name, (base,), methods)
    cls.__qualname__ = name
    return cls


def _windowed(method):
    def call(self, X, *args, **kwargs):
        return method(self, self._window(X), *args, **kwargs)
    call.__name__, call.__doc__ = method.__name__, method.__doc__
    return call


def __getattr__(name):
    if name in ("LoadedLinearClassifier", "LoadedLinearRegressor"):
        globals()[name] = _loaded_class(name)        # built once, then a module name
        return globals()[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
