"""The regularized problem of docs/conventions.md §1 and its exact certificate.

Primal::

    P(w) = (1/W) sum_i c_i phi(x_i . w; y_i) + lam/2 ||w||^2 + l1 ||w||_1

Dual (SDCA convention)::

    D(alpha) = (1/W) sum_i c_i (-phi*(-alpha_i; y_i)) - g*(v),
    v = (1/W) sum_i c_i alpha_i x_i,    w(alpha) = grad g*(v)

with ``g*(v) = sum_j max(|v_j| - l1, 0)^2 / (2 lam)`` and
``w(alpha) = soft_threshold(v, l1) / lam``.  Weak duality
``P(w) >= D(alpha)`` holds for every ``w`` and every dual-feasible ``alpha``;
the duality gap ``P(w) - D(alpha)`` therefore certifies how far ``w`` is from
optimal.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._util.interrupts import sigint_as_flag
from ._util.threads import run_threads, sum_rows
from .rows import as_rows
from .validation import (check_binary_labels, check_sample_weight, check_Xy,
                         warn_extreme_rows)
from .kernels.objective import certificate_pass, weighted_sum
from .kernels.views import RowsView, StepSpec
from .losses import Loss, make_loss
from .penalties import ElasticNet, make_penalty

__all__ = ["Problem", "Certificate", "relative_gap"]


def relative_gap(primal, dual):
    """(P - D) / max(|P|, 1e-12): the quantity ``tol`` is compared with."""
    return (primal - dual) / max(abs(primal), 1e-12)


@dataclass
class Certificate:
    """An exact (primal, dual) evaluation of a pair (w, alpha)."""

    w: np.ndarray
    alpha: np.ndarray
    primal: float
    dual: float
    v: np.ndarray          # (1/W) sum_i c_i alpha_i x_i, freshly computed
    margins: np.ndarray    # X @ w

    @property
    def gap(self) -> float:
        return self.primal - self.dual

    @property
    def rel_gap(self) -> float:
        return relative_gap(self.primal, self.dual)


class Problem:
    """A regularized linear problem: data, loss, penalty and sample weights.

    Parameters
    ----------
    X : array (n, d) or sparse matrix
        Rows ``x_i``.  Dense float32/float64 C-ordered arrays and CSR matrices
        are used without copying.
    y : array (n,)
        Labels; -1/+1 for classification losses.
    loss : str or Loss
    lam : float
        L2 strength (> 0 unless ``allow_pure_l1``).
    l1 : float
        L1 strength (>= 0).
    sample_weight : array (n,), optional
        Weights ``c_i > 0``; the losses are averaged with weights ``c_i / W``.
    loss_params : dict, optional
        ``{"gamma": ...}`` for smooth_hinge, ``{"epsilon": ...}`` for
        epsilon_insensitive and squared_epsilon_insensitive.
    n_threads : int
        Threads for the one-off passes over large data when the problem is
        built (the finite check, the rows' norms); the results do not depend
        on it.
    """

    def __init__(self, X, y, loss="hinge", lam=1e-4, *, l1=0.0, sample_weight=None,
                 loss_params=None, allow_pure_l1=True, n_threads=1):
        self.loss: Loss = make_loss(loss, loss_params)
        self.penalty: ElasticNet = make_penalty(lam, l1, allow_pure_l1=allow_pure_l1)
        X, y = check_Xy(X, y, n_threads=n_threads)
        if self.loss.classification:
            check_binary_labels(y, self.loss.name)
        # as_rows runs (and the first time compiles) a kernel: Ctrl-C there
        # must not raise inside it; it is raised after, at a safe point
        with sigint_as_flag() as interrupt:
            before = interrupt.count
            self.rows = as_rows(X, n_threads)
        if interrupt.count > before:
            raise KeyboardInterrupt
        warn_extreme_rows(self.rows.sqnorm)
        self.X = self.rows.X
        self.y = y
        self.sample_weight = check_sample_weight(sample_weight, X.shape[0])
        self.W = float(self.sample_weight.sum())

    # ------------------------------------------------------------ basics
    def rows_view(self) -> RowsView:
        """The data as the kernels read it (:class:`~primaldual.kernels.views.RowsView`)."""
        r = self.rows
        return RowsView(r.data, r.indices, r.indptr, r.iptr, r.sqnorm, self.y,
                        self.sample_weight)

    def step_spec(self, lam=None, inv_W=None) -> StepSpec:
        """The coordinate problem for the kernels; ``lam`` and ``inv_W`` default to
        the problem's (ASDCA's inner problem and a partition's weight differ)."""
        return StepSpec(int(self.loss.code), float(self.loss.param),
                        float(self.lam if lam is None else lam), float(self.l1),
                        float(1.0 / self.W if inv_W is None else inv_W))

    @property
    def n(self) -> int:
        return self.rows.n

    @property
    def d(self) -> int:
        return self.rows.d

    @property
    def nnz(self) -> int:
        return self.rows.nnz

    @property
    def lam(self) -> float:
        return self.penalty.lam

    @property
    def l1(self) -> float:
        return self.penalty.l1

    def _w(self, w):
        w = np.asarray(w, dtype=np.float64).ravel()
        if w.shape != (self.d,):
            raise ValueError(f"w has shape {w.shape} but the problem has {self.d} features")
        return w

    def _alpha(self, alpha):
        alpha = np.asarray(alpha, dtype=np.float64).ravel()
        if alpha.shape != (self.n,):
            raise ValueError(f"alpha has shape {alpha.shape} but the problem has "
                             f"{self.n} samples")
        return alpha

    # -------------------------------------------------------- objectives
    def primal(self, w) -> float:
        """P(w)."""
        w = self._w(w)
        a = self.rows.matvec(w)
        losses = self.loss.value(a, self.y)
        return weighted_sum(self.sample_weight, losses) / self.W + self.penalty.value(w)

    def dual_image(self, alpha):
        """v = (1/W) sum_i c_i alpha_i x_i."""
        alpha = self._alpha(alpha)
        return self.rows.rmatvec(self.sample_weight * alpha) / self.W

    def w_of(self, alpha):
        """The primal point w(alpha) = soft_threshold(v, l1) / lam."""
        return self.penalty.grad_conjugate(self.dual_image(alpha))

    def dual(self, alpha) -> float:
        """D(alpha); -inf when alpha is not dual feasible."""
        alpha = self._alpha(alpha)
        conj = self.loss.neg_conjugate(alpha, self.y)
        if not np.isfinite(conj).all():
            return -np.inf
        return (weighted_sum(self.sample_weight, conj) / self.W
                - self.penalty.conjugate(self.dual_image(alpha)))

    def gap(self, w, alpha) -> float:
        """P(w) - D(alpha) (>= 0 by weak duality)."""
        return self.primal(w) - self.dual(alpha)

    def is_dual_feasible(self, alpha) -> bool:
        return bool(self.loss.in_dual_domain(self._alpha(alpha), self.y).all())

    def dual_from_primal(self, w):
        """The dual point alpha_i = -phi'(x_i . w) used by primal methods (docs/conventions.md §1)."""
        return -self.loss.derivative(self.rows.matvec(self._w(w)), self.y)

    def l1_feasible(self, alpha):
        """Pure L1 (``lam = 0``): ``alpha / max(1, ||v(alpha)||_inf / l1)``, inside
        the domain of ``g*`` (the indicator of ``||v||_inf <= l1``; Fercoq, Gramfort
        & Salmon 2015).  The scaled point stays in every loss's dual domain."""
        alpha = self._alpha(alpha)
        vmax = float(np.abs(self.dual_image(alpha)).max(initial=0.0))
        return alpha * (self.l1 / vmax) if vmax > self.l1 else alpha

    # ------------------------------------------------------- certificate
    def primal_certificate(self, w) -> Certificate:
        """``certificate(w, dual_from_primal(w))``, the check of the primal methods,
        with one product ``X @ w`` instead of two; with ``lam = 0`` the dual point
        is scaled into the domain of ``g*`` (:meth:`l1_feasible`).

        On CSR rows ``dual_from_primal``'s product and the certificate pass's dot
        products add the same terms in the same order, so the pass reuses the
        margins and reads only the rows with ``alpha_i != 0``; the result is
        bitwise that of the two-product form.  Dense rows (whose product goes
        through BLAS, with its own order of summation) keep the two-product form."""
        w = np.ascontiguousarray(self._w(w), dtype=np.float64)
        margins = self.rows.matvec(w)
        alpha = -self.loss.derivative(margins, self.y)
        if self.lam == 0.0:
            alpha = self.l1_feasible(alpha)
        if not self.rows.is_sparse:
            return self.certificate(w, alpha)
        return self.certificate(w, alpha, margins=margins)

    def certificate(self, w, alpha, n_threads=1, margins=None) -> Certificate:
        """Exact P(w), D(alpha), the fresh dual image v(alpha) and X @ w, in one pass.

        ``n_threads > 1``: the rows are cut into that many contiguous ranges,
        one pass each at once (the kernel releases the GIL); the partial sums
        and images are added in range order, so the result differs from one
        thread's only by the association of the sums.

        ``margins``: ``X @ w`` when the caller already has it (one thread only);
        the pass then skips the dot products and reads only the rows with
        ``alpha_i != 0``.  The margins are trusted, not recomputed."""
        r = self.rows
        w = np.ascontiguousarray(w, dtype=np.float64)
        alpha = np.ascontiguousarray(alpha, dtype=np.float64)
        v = np.empty(self.d)
        given = margins is not None and n_threads <= 1
        if given:
            margins = np.ascontiguousarray(margins, dtype=np.float64)
            if margins.shape != (self.n,):
                raise ValueError(f"margins has shape {margins.shape} but the problem has "
                                 f"{self.n} samples")
        else:
            margins = np.empty(self.n)
        if not (w.any() or alpha.any()):
            # the cold start (w, alpha) = (0, 0): margins and v are zero, no pass needed
            v[:] = 0.0
            margins[:] = 0.0
            loss_sum = weighted_sum(self.sample_weight, self.loss.value(margins, self.y))
            conj_sum = weighted_sum(self.sample_weight,
                                    self.loss.neg_conjugate(alpha, self.y))
        elif n_threads > 1 and self.n >= 2 * n_threads:
            loss_sum, conj_sum = self._certificate_threads(w, alpha, v, margins,
                                                           int(n_threads))
            v /= self.W
        else:
            loss_sum, conj_sum = self.loss.kernel(certificate_pass)(
                r.data, r.indices, r.indptr, r.iptr, self.y, self.sample_weight, alpha, w,
                self.loss.code, self.loss.param, v, margins, given)
            v /= self.W
        primal = loss_sum / self.W + self.penalty.value(w)
        dual = conj_sum / self.W - self.penalty.conjugate(v) if np.isfinite(conj_sum) \
            else -np.inf
        return Certificate(w=w, alpha=alpha, primal=float(primal), dual=float(dual),
                           v=v, margins=margins)

    def _certificate_threads(self, w, alpha, v, margins, K):
        r = self.rows
        cuts = np.linspace(0, self.n, K + 1).round().astype(np.int64)
        parts = np.empty((K, self.d))

        def task(k, stop):
            a, b = int(cuts[k]), int(cuts[k + 1])
            return self.loss.kernel(certificate_pass)(r.data, r.indices, r.indptr[a:b + 1], r.iptr[a:b + 1],
                                    self.y[a:b], self.sample_weight[a:b], alpha[a:b], w,
                                    self.loss.code, self.loss.param, parts[k],
                                    margins[a:b])

        results, interrupted = run_threads(task, K)
        if interrupted:
            raise KeyboardInterrupt
        if sum_rows(parts, v, K):        # column blocks on the threads, in row order
            raise KeyboardInterrupt
        return sum(ls for ls, _ in results), sum(cs for _, cs in results)

    def coordinate_gaps(self, margins, alpha, idx=None):
        """c_i (phi(a_i) + phi*(-alpha_i) + alpha_i a_i) / W >= 0 (Fenchel-Young).

        With ``l1 = 0`` and ``w = w(alpha)`` these sum to the duality gap.
        ``idx`` restricts the computation to some coordinates.
        """
        c, y = self.sample_weight, self.y
        if idx is not None:
            margins, alpha, c, y = margins[idx], alpha[idx], c[idx], y[idx]
        g = self.loss.value(margins, y) - self.loss.neg_conjugate(alpha, y) + alpha * margins
        return c * np.maximum(g, 0.0) / self.W

    def fingerprint(self) -> dict:
        """A cheap identity of the data, stored in checkpoints to refuse a mismatch."""
        import hashlib
        h = hashlib.sha256()
        h.update(np.ascontiguousarray(self.y).tobytes())
        h.update(np.ascontiguousarray(self.rows.indptr).tobytes())
        h.update(np.ascontiguousarray(self.rows.data[:4096]).tobytes())
        h.update(np.ascontiguousarray(self.sample_weight).tobytes())
        return {"n": self.n, "d": self.d, "nnz": self.nnz, "sha256": h.hexdigest(),
                "loss": self.loss.name, "loss_params": self.loss.params,
                "lam": self.lam, "l1": self.l1}
