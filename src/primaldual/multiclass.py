"""Multiclass models: the multinomial (softmax) and Crammer-Singer losses, their
problem and its exact certificate (docs/multiclass-models.md).

With labels ``y_i`` in ``{0, ..., K-1}``, a weight matrix ``coef`` (d x K),
scores ``z_i = x_i coef`` (a K-vector) and weights ``c_i`` summing to ``W``::

    P(coef)  = (1/W) sum_i c_i phi(z_i; y_i) + lam/2 ||coef||_F^2
    D(alpha) = (1/W) sum_i c_i (-phi*(-alpha_i; y_i)) - ||V||_F^2 / (2 lam),
    V = (1/W) sum_i c_i x_i^T alpha_i,     coef(alpha) = V / lam

``alpha`` is (n, K); in both models ``p_i = e_{y_i} - alpha_i`` lies on the
probability simplex (so every row of ``alpha`` sums to 0):

multinomial      phi = logsumexp(z) - z_y;  -phi*(-alpha) = entropy(p);
                 the primal certificate is alpha = e_y - softmax(z)
crammer_singer   phi = max_k (1[k != y] + z_k - z_y);  -phi*(-alpha) = alpha_y;
                 the primal certificate is alpha = e_y - e_k for the first
                 maximizer k (alpha = 0 when y attains the maximum)

Weak duality ``P(coef) >= D(alpha)`` holds for every coef and feasible alpha.
"""
from __future__ import annotations

import hashlib

import numpy as np

from ._util.interrupts import sigint_as_flag
from .losses import make_loss
from .problem import Certificate, relative_gap
from .rows import as_rows
from .validation import check_sample_weight, check_Xy, warn_extreme_rows

__all__ = ["MULTICLASS_LOSSES", "is_multiclass_loss", "MulticlassLoss", "make_any_loss",
           "MulticlassProblem", "check_class_labels", "softmax", "logsumexp_rows",
           "multinomial_neg_conjugate", "crammer_singer_value", "relative_gap"]

MULTICLASS_LOSSES = ("multinomial", "crammer_singer")

#: a row of alpha is feasible when p = e_y - alpha has entries >= -FEAS_TOL
#: and sums to 1 within FEAS_TOL (probabilities computed in floating point)
FEAS_TOL = 1e-9


def is_multiclass_loss(loss) -> bool:
    """True for the names (or loss objects) of the multiclass losses."""
    name = getattr(loss, "name", loss)
    return isinstance(name, str) and name in MULTICLASS_LOSSES


class MulticlassLoss:
    """The name and flags of a multiclass loss (the maths is in the problem)."""

    classification = True
    multiclass = True
    # no capability of the binary losses' registry applies to these losses
    generalized_hessian = False
    # a loss of this library (its solvers are the multiclass ones), not a module
    # outside the registry
    builtin = True

    def __init__(self, name):
        if name not in MULTICLASS_LOSSES:
            raise ValueError(f"unknown multiclass loss {name!r}; choose one of "
                             f"{', '.join(MULTICLASS_LOSSES)}")
        self.name = name
        self.params = {}
        # Lipschitz constant of the gradient (multinomial: 1/2 in the Euclidean
        # norm of z); Crammer-Singer is not smooth
        self.smoothness = 0.5 if name == "multinomial" else np.inf

    def __repr__(self):
        return f"MulticlassLoss({self.name!r})"


def make_any_loss(name, params=None):
    """:func:`primaldual.losses.make_loss`, or a :class:`MulticlassLoss` for the
    multiclass names (whose only parameter is ``n_classes``)."""
    if not is_multiclass_loss(name):
        return make_loss(name, params)
    extra = set(params or {}) - {"n_classes"}
    if extra:
        raise ValueError(f"loss={name!r} takes only the parameter n_classes; got "
                         f"{sorted(extra)}")
    return MulticlassLoss(getattr(name, "name", name))


def check_class_labels(y, n_classes=None):
    """``y`` (validated, float64) as int64 class indices in ``0..K-1``, and K.

    Labels must be whole numbers >= 0; K is ``max(y) + 1`` unless
    ``n_classes`` is given (it must exceed every label)."""
    if not np.all(y == np.floor(y)) or (y < 0).any():
        bad = y[(y != np.floor(y)) | (y < 0)][:5]
        raise ValueError(f"multiclass losses need integer class labels 0..K-1; found "
                         f"{bad.tolist()}. Encode the classes first (LinearClassifier "
                         f"does this for you; sklearn.preprocessing.LabelEncoder)")
    yi = y.astype(np.int64)
    top = int(yi.max()) + 1
    K = top if n_classes is None else int(n_classes)
    if K < top:
        raise ValueError(f"n_classes={n_classes} but y has the label {top - 1}")
    if K < 2:
        raise ValueError(f"a multiclass loss needs at least 2 classes; y has only the "
                         f"label 0 (K = {K})")
    return yi, K


def logsumexp_rows(Z):
    """log sum_k exp(Z[i, k]) per row, and the shifted exponentials (n, K)."""
    m = Z.max(axis=1)
    E = np.exp(Z - m[:, None])
    s = E.sum(axis=1)
    return m + np.log(s), E / s[:, None]


def softmax(Z):
    """Row-wise softmax probabilities of scores Z (n, K)."""
    return logsumexp_rows(Z)[1]


def _entropy(P):
    """-sum_k p_k log p_k per row (0 log 0 = 0)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where(P > 0, P * np.log(np.where(P > 0, P, 1.0)), 0.0)
    return -t.sum(axis=1)


def _feasible_rows(alpha, y):
    """Rows whose p = e_y - alpha is on the simplex (to FEAS_TOL)."""
    P = -alpha
    P[np.arange(y.shape[0]), y] += 1.0
    ok = (P >= -FEAS_TOL).all(axis=1) & (np.abs(P.sum(axis=1) - 1.0) <= FEAS_TOL)
    return ok, P


def multinomial_neg_conjugate(alpha, y):
    """-phi*(-alpha_i; y_i) = entropy(e_y - alpha_i) per row; -inf off the simplex."""
    ok, P = _feasible_rows(alpha, y)
    out = _entropy(np.clip(P, 0.0, 1.0))
    out[~ok] = -np.inf
    return out


def crammer_singer_value(Z, y):
    """phi(z_i; y_i) = max_k (1[k != y_i] + z_ik - z_iy) per row, and the
    maximizer k (y_i itself when the loss is 0)."""
    n = Z.shape[0]
    idx = np.arange(n)
    M = Z - Z[idx, y][:, None] + 1.0
    M[idx, y] = 0.0
    k = np.argmax(M, axis=1)
    val = M[idx, k]
    k = np.where(val > 0.0, k, y)
    return np.maximum(val, 0.0), k


def crammer_singer_neg_conjugate(alpha, y):
    """-phi*(-alpha_i; y_i) = alpha_{i, y_i} per row; -inf off the simplex."""
    ok, _ = _feasible_rows(alpha, y)
    out = alpha[np.arange(y.shape[0]), y].copy()
    out[~ok] = -np.inf
    return out


class MulticlassProblem:
    """A multiclass problem (module docstring): data, labels 0..K-1, loss,
    ``lam > 0`` and sample weights; objectives, gap and certificates.

    It answers what the shared solver loop asks of a problem (``n``, ``d``,
    ``nnz``, ``lam``, ``l1``, ``loss``, ``fingerprint``)."""

    def __init__(self, X, y, loss="multinomial", lam=1e-4, *, sample_weight=None,
                 loss_params=None, l1=0.0):
        name = getattr(loss, "name", loss)
        self.loss = MulticlassLoss(name)
        params = dict(loss_params or {})
        n_classes = params.pop("n_classes", None)
        if params:
            raise ValueError(f"loss={name!r} takes only the parameter n_classes; got "
                             f"{sorted(params)}")
        lam = float(lam)
        if not (np.isfinite(lam) and lam > 0):
            raise ValueError(f"lam must be > 0 and finite for loss={name!r}, got {lam!r}")
        if float(l1) != 0.0:
            raise ValueError(f"loss={name!r} supports only the L2 penalty; got l1={l1!r} "
                             f"(set l1=0)")
        X, yf = check_Xy(X, y)
        self.y, self.K = check_class_labels(yf, n_classes)
        with sigint_as_flag() as interrupt:
            before = interrupt.count
            self.rows = as_rows(X)
        if interrupt.count > before:
            raise KeyboardInterrupt
        warn_extreme_rows(self.rows.sqnorm)
        self.X = self.rows.X
        self.lam = lam
        self.l1 = 0.0
        self.sample_weight = check_sample_weight(sample_weight, X.shape[0])
        self.W = float(self.sample_weight.sum())

    n = property(lambda self: self.rows.n)
    d = property(lambda self: self.rows.d)
    nnz = property(lambda self: self.rows.nnz)

    # ------------------------------------------------------------ helpers
    def coef_shape(self):
        return (self.d, self.K)

    def check_coef(self, coef, name="coef"):
        coef = np.asarray(coef, dtype=np.float64)
        if coef.shape != (self.d, self.K):
            raise ValueError(f"{name} has shape {coef.shape}, expected (d, K) = "
                             f"({self.d}, {self.K})")
        return np.ascontiguousarray(coef)

    def check_alpha(self, alpha, name="alpha"):
        alpha = np.asarray(alpha, dtype=np.float64)
        if alpha.shape != (self.n, self.K):
            raise ValueError(f"{name} has shape {alpha.shape}, expected (n, K) = "
                             f"({self.n}, {self.K})")
        return np.ascontiguousarray(alpha)

    def scores(self, coef):
        """Z = X @ coef, (n, K) float64."""
        return np.asarray(self.X @ coef, dtype=np.float64)

    def rmat(self, R):
        """X^T @ R, (d, K) float64."""
        return np.asarray(self.X.T @ R, dtype=np.float64)

    def losses(self, Z):
        """phi(z_i; y_i) per row."""
        if self.loss.name == "multinomial":
            lse, _ = logsumexp_rows(Z)
            return lse - Z[np.arange(self.n), self.y]
        return crammer_singer_value(Z, self.y)[0]

    def neg_conjugates(self, alpha):
        if self.loss.name == "multinomial":
            return multinomial_neg_conjugate(alpha, self.y)
        return crammer_singer_neg_conjugate(alpha, self.y)

    def in_dual_domain(self, alpha):
        return _feasible_rows(self.check_alpha(alpha), self.y)[0]

    # --------------------------------------------------------- objectives
    def primal(self, coef) -> float:
        coef = self.check_coef(coef)
        lv = self.losses(self.scores(coef))
        return float(self.sample_weight @ lv) / self.W + 0.5 * self.lam * _sq(coef)

    def dual_image(self, alpha):
        """V = (1/W) sum_i c_i x_i^T alpha_i (d, K)."""
        alpha = self.check_alpha(alpha)
        return self.rmat(self.sample_weight[:, None] * alpha) / self.W

    def w_of(self, alpha):
        """coef(alpha) = V / lam."""
        return self.dual_image(alpha) / self.lam

    def dual(self, alpha) -> float:
        alpha = self.check_alpha(alpha)
        conj = self.neg_conjugates(alpha)
        if not np.isfinite(conj).all():
            return -np.inf
        V = self.dual_image(alpha)
        return float(self.sample_weight @ conj) / self.W - _sq(V) / (2.0 * self.lam)

    def gap(self, coef, alpha) -> float:
        return self.primal(coef) - self.dual(alpha)

    def dual_from_scores(self, Z):
        """alpha = -grad phi(z) (multinomial) or a subgradient (Crammer-Singer)."""
        idx = np.arange(self.n)
        if self.loss.name == "multinomial":
            A = -softmax(Z)
        else:
            _, k = crammer_singer_value(Z, self.y)
            A = np.zeros_like(Z)
            A[idx, k] = -1.0
        A[idx, self.y] += 1.0
        return A

    def dual_from_primal(self, coef):
        return self.dual_from_scores(self.scores(self.check_coef(coef)))

    # ------------------------------------------------------- certificates
    def certificate(self, coef, alpha, Z=None, V=None) -> Certificate:
        """Exact P(coef), D(alpha) with the fresh image V; ``Z``: X @ coef and
        ``V``: the image of alpha, when the caller has them."""
        coef = self.check_coef(coef)
        alpha = self.check_alpha(alpha)
        Z = self.scores(coef) if Z is None else Z
        c = self.sample_weight
        primal = float(c @ self.losses(Z)) / self.W + 0.5 * self.lam * _sq(coef)
        conj = self.neg_conjugates(alpha)
        if V is None:
            V = self.rmat(c[:, None] * alpha) / self.W
        dual = (float(c @ conj) / self.W - _sq(V) / (2.0 * self.lam)
                if np.isfinite(conj).all() else -np.inf)
        return Certificate(w=coef, alpha=alpha, primal=primal, dual=float(dual), v=V,
                           margins=Z)

    def primal_certificate(self, coef) -> Certificate:
        """``certificate(coef, dual_from_primal(coef))`` with one product X @ coef."""
        coef = self.check_coef(coef)
        Z = self.scores(coef)
        return self.certificate(coef, self.dual_from_scores(Z), Z=Z)

    def dual_certificate(self, alpha) -> Certificate:
        """``certificate(w_of(alpha), alpha)``: the pair of a dual method."""
        alpha = self.check_alpha(alpha)
        return self.certificate(self.w_of(alpha), alpha)

    def fingerprint(self) -> dict:
        h = hashlib.sha256()
        h.update(np.ascontiguousarray(self.y).tobytes())
        h.update(np.ascontiguousarray(self.rows.indptr).tobytes())
        h.update(np.ascontiguousarray(self.rows.data[:4096]).tobytes())
        h.update(np.ascontiguousarray(self.sample_weight).tobytes())
        return {"n": self.n, "d": self.d, "nnz": self.nnz, "sha256": h.hexdigest(),
                "loss": self.loss.name, "loss_params": {"n_classes": self.K},
                "lam": self.lam, "l1": 0.0}


def _sq(A):
    """||A||_F^2 (einsum: numpy's own loop, no multithreaded BLAS)."""
    a = np.ascontiguousarray(A).ravel()
    return float(np.einsum("i,i->", a, a))
