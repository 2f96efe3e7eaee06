"""Penalties g(w) = lam/2 ||w||^2 + l1 ||w||_1 and their conjugates.

The penalty is separable, ``g(w) = sum_j g_j(w_j)``.  Everything a solver
needs is expressed per coordinate so that per-coordinate regularizers (DSO's
``phi_j``) and elastic-net steps (SPDC, prox-SDCA) share one definition:

* ``value(w)``             g(w)
* ``conjugate(v)``         g*(v) = sum_j (max(|v_j| - l1, 0))^2 / (2 lam)
* ``grad_conjugate(v)``    w(v) = soft_threshold(v, l1) / lam, the primal
                           point matched to the dual image ``v`` (docs/conventions.md §1)
* ``prox(u, t)``           argmin_w g(w) + ||w - u||^2 / (2 t)

Pure L1 (``lam = 0``, ``l1 > 0``) makes ``g*`` the indicator of
``||v||_inf <= l1``; it is represented here (``conjugate`` returns +inf
outside the box) but only solvers that declare support accept it.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .kernels.objective import sum_abs, sum_squares, sum_squares_excess


def soft_threshold(v, t):
    """sign(v) * max(|v| - t, 0), elementwise."""
    v = np.asarray(v, dtype=np.float64)
    if t == 0.0:
        return v.copy()
    return np.sign(v) * np.maximum(np.abs(v) - t, 0.0)


@dataclass(frozen=True)
class ElasticNet:
    """g(w) = lam/2 ||w||^2 + l1 ||w||_1 with ``lam >= 0``, ``l1 >= 0``.

    ``lam = 0`` with ``l1 = 0`` is not a valid penalty (the dual would be
    unbounded) and is refused by :func:`make_penalty`.
    """

    lam: float
    l1: float = 0.0

    @property
    def strongly_convex(self) -> bool:
        return self.lam > 0.0

    def value(self, w) -> float:
        w = np.ascontiguousarray(w, dtype=np.float64)
        out = 0.5 * self.lam * sum_squares(w)
        if self.l1:
            out += self.l1 * sum_abs(w)
        return out

    def conjugate(self, v) -> float:
        v = np.ascontiguousarray(v, dtype=np.float64)
        if self.lam == 0.0:
            # indicator of the l_inf ball of radius l1 (tiny rounding slack)
            excess = np.abs(v).max(initial=0.0) - self.l1
            return 0.0 if excess <= 1e-12 * max(1.0, self.l1) else np.inf
        if self.l1:
            return sum_squares_excess(v, self.l1) / (2.0 * self.lam)
        return sum_squares(v) / (2.0 * self.lam)

    def grad_conjugate(self, v):
        """w(v): the primal point for dual image v (docs/conventions.md §1)."""
        if self.lam == 0.0:
            raise ValueError(
                "pure L1 (lam=0) has no unique primal point w(alpha); solvers "
                "that support lam=0 return their own primal iterate")
        return soft_threshold(v, self.l1) / self.lam

    def prox(self, u, t):
        """argmin_w g(w) + ||w - u||^2/(2 t)."""
        return soft_threshold(u, t * self.l1) / (1.0 + t * self.lam)


def make_penalty(lam, l1=0.0, *, allow_pure_l1=False) -> ElasticNet:
    """Validate ``lam`` and ``l1`` and build the penalty.

    Raises
    ------
    ValueError
        ``lam`` or ``l1`` not finite, negative, or ``lam = 0`` where pure L1
        is not supported by the solver.
    """
    for name, val in (("lam", lam), ("l1", l1)):
        try:
            fv = float(val)
        except (TypeError, ValueError):
            raise ValueError(f"{name} must be a real number, got {val!r}") from None
        if not np.isfinite(fv):
            raise ValueError(f"{name} must be finite, got {val!r}; pass a finite "
                             f"number such as {'1e-4' if name == 'lam' else '0'}")
    lam = float(lam)
    l1 = float(l1)
    if l1 < 0:
        raise ValueError(f"l1 must be >= 0, got l1={l1!r}; use l1=0 for no L1 term")
    if lam < 0:
        raise ValueError(f"lam must be > 0, got lam={lam!r}; use a positive "
                         "L2 strength such as 1e-4")
    if lam == 0:
        if l1 == 0:
            raise ValueError("lam must be > 0, got lam=0 (and l1=0): the problem "
                             "has no regularization; use a positive lam such as 1e-4")
        if not allow_pure_l1:
            raise ValueError(
                "lam must be > 0 for this solver, got lam=0 with l1>0 (pure L1). "
                "Pure L1 is supported by solver='auto', 'l1cd', 'spdc' (with "
                "perturbation) and 'dso'; otherwise set lam > 0")
    return ElasticNet(lam=lam, l1=l1)


def split_strength(penalty, strength, l1=0.0, l1_ratio=None):
    """``(lam, l1)`` of scikit-learn's ``penalty`` with total strength ``strength``:
    "l2" ``(strength, l1)``, "l1" ``(0, strength)``, "elasticnet"
    ``(strength (1 - l1_ratio), strength l1_ratio)`` (docs/sparse-models.md)."""
    if penalty not in ("l2", "l1", "elasticnet"):
        raise ValueError(f"penalty must be 'l2', 'l1' or 'elasticnet', got {penalty!r}")
    if penalty == "l2":
        return strength, float(l1)
    if float(l1) != 0.0:
        raise ValueError(f"penalty={penalty!r} takes its L1 strength from alpha (or C); "
                         f"leave l1=0, got l1={l1!r}")
    if penalty == "l1":
        return 0.0, strength
    r = l1_ratio
    if r is None or isinstance(r, bool) or not 0.0 <= float(r) <= 1.0:
        raise ValueError(f"penalty='elasticnet' needs l1_ratio in [0, 1], got {r!r}")
    return strength * (1.0 - float(r)), strength * float(r)
