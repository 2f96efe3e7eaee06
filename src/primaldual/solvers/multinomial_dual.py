"""Multinomial logistic regression by dual coordinate descent on the maximum
entropy dual (Yu, Huang & Lin 2011), certified by its own dual iterate
(docs/multiclass-models.md).
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from ..kernels.multinomial_dual import MNRows, MNWork, mn_epochs
from ..kernels.status import STATUS_OK
from ._multiclass_base import MulticlassDualSolver
from ._options import CommonOptions
from .multinomial import _multiclass_eval

__all__ = ["MultinomialDualOptions", "MultinomialDualCD"]

#: epochs per kernel call (the deadline is checked between calls)
EPOCHS_PER_CALL = 8


@dataclass(frozen=True)
class MultinomialDualOptions(CommonOptions):
    """The options of :class:`MultinomialDualCD` (the common ones)."""

    solver_name = "multinomial_dual_cd"


class MultinomialDualCD(MulticlassDualSolver):
    """Exact block coordinate descent on the dual of multinomial logistic
    regression; a dual method.

    Problem (docs/multiclass-models.md): with labels ``y_i`` in ``0..K-1`` and
    ``coef`` (d x K), minimize::

        f(coef) = (1/W) sum_i c_i (logsumexp(x_i coef) - x_i coef_{:, y_i})
                  + lam/2 ||coef||_F^2

    through its dual (Yu, Huang & Lin, Machine Learning 85 (2011), eq. (5.3),
    in LIBLINEAR's scaling ``C_i = c_i / (W lam)``, ``p_i = e_{y_i} - alpha_i``)::

        min_P  1/2 ||sum_i C_i x_i^T (e_{y_i} - p_i)||_F^2 - sum_i C_i entropy(p_i)
        s.t.   p_i on the probability simplex

    Each epoch visits the rows in a random order (from ``random_state``) and
    minimizes exactly over one row's ``p_i``: Newton on the multiplier of
    ``sum_k p_k = 1``, each ``log p_k`` the root of a scalar equation
    (:func:`primaldual.kernels.multinomial_dual.mn_subproblem`), keeping
    ``coef = sum_i C_i x_i^T alpha_i`` up to date.  It starts from ``alpha =
    0`` (``coef = 0``).  A step costs two passes over the row's entries with
    K columns and O(K) exponentials, independent of the conditioning of the
    primal Hessian (raw term counts, large ``C``), which makes it the method
    for large sparse data.  The certificate is the iterate itself, with
    ``coef(alpha)`` recomputed at each check.

    Options: the common ones.  ``warm_start``: a SolveResult or a dual point
    alpha (n, K) (feasible for any ``lam``: warm starts along a path).
    """

    name = "multinomial_dual_cd"
    summary = ("multinomial logistic: exact dual coordinate descent on the maximum "
               "entropy dual (Yu, Huang & Lin 2011)")
    options_class = MultinomialDualOptions
    default_max_epochs = 1000
    loss_names = ("multinomial",)

    def setup(self):
        prob = self.problem
        r = prob.rows
        self.C = self.row_bounds()
        self.view = MNRows(r.data, r.indices, r.indptr, r.iptr, r.sqnorm, prob.y, self.C)
        K = prob.K
        self.work = MNWork(*(np.empty(K) for _ in range(6)))
        #: the rows the method visits (rows of weight 0 keep alpha_i = 0)
        self.visit = np.flatnonzero(self.C > 0.0).astype(np.int64)
        self.Y = np.zeros((prob.n, K))
        self.Y[np.arange(prob.n), prob.y] = 1.0

    # -------------------------------------------------------------- state
    def init_state(self, warm_start):
        prob = self.problem
        alpha = self._warm_alpha(warm_start)
        self.P = np.array(self.Y if alpha is None else self.Y - alpha, order="C")
        self.coef = self._coef_of()
        self.n_epochs_done = 0
        self.order = self.visit.copy()

    def _coef_of(self):
        return np.ascontiguousarray(self.problem.rmat((self.Y - self.P) * self.C[:, None]))

    def get_state(self):
        return ({"n_epochs_done": int(self.n_epochs_done)},
                {"P": self.P.copy(), "coef": self.coef.copy(), "order": self.order.copy()})

    def set_state(self, meta, arrays):
        self.P = np.ascontiguousarray(arrays["P"], dtype=np.float64)
        self.coef = np.ascontiguousarray(arrays["coef"], dtype=np.float64)
        self.order = np.ascontiguousarray(arrays["order"], dtype=np.int64)
        self.n_epochs_done = int(meta["n_epochs_done"])

    @property
    def epochs(self):
        return float(self.n_epochs_done)

    # ------------------------------------------------------------- epochs
    def advance(self, n_epochs, deadline):
        m = self.order.shape[0]
        left = max(1, int(round(n_epochs)))
        while left > 0 and self.n_epochs_done < self.max_epochs:
            k = min(left, EPOCHS_PER_CALL, int(self.max_epochs - self.n_epochs_done))
            uniforms = self.rng.random((k, m))
            status, done, reads = mn_epochs(self.view, self.order, self.P, self.coef,
                                            self.work, uniforms)
            self.n_epochs_done += int(done)
            self.feature_accesses += int(reads)
            if status != STATUS_OK:
                raise FloatingPointError(f"{self.name}: a non-finite step at epoch "
                                         f"{self.n_epochs_done}; scale the features")
            left -= k
            if deadline is not None and time.perf_counter() >= deadline:
                break
        self.steps = self.n_epochs_done * m

    # -------------------------------------------------------- certificate
    def certificate(self):
        """``alpha = e_y - P`` and ``coef(alpha)`` recomputed from it (the
        incremental ``coef`` is refreshed too, dropping its rounding drift);
        ``V = lam coef``, so the check makes two products."""
        prob = self.problem
        self.coef = self._coef_of()
        return prob.certificate(self.coef, self.Y - self.P, V=prob.lam * self.coef)

    def _evaluate(self, w):
        return _multiclass_eval(self, w)
