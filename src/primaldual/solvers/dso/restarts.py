"""Adaptive restarts, the primal weight and the fallback of DSO: a mixin of
:class:`~primaldual.solvers.dso.DSOSolver`.

At the end of every epoch (``restart="adaptive"``) the iterate and the average
of the end-of-epoch iterates since the last restart are compared by their
certified gap ``P(w) - D(alpha)``; the iterate restarts from the better one
under PDLP's conditions (Applegate et al., "Practical large-scale linear
programming using primal-dual hybrid gradient", NeurIPS 2021, sections 3.2 and
3.3).  At a restart the primal weight ``omega`` may move (PDLP's Algorithm 3),
and ``fallback="best"`` returns to the best point seen, with shorter steps,
when the iterate's certified bound says it has left it.  The options are
documented in :mod:`.options`.

The mixin reads the solver's ``problem``, ``w``, ``alpha``, AdaGrad sums
``Gw``/``Ga``, ``params``, ``layout``, ``cwW``, ``a_lo``/``a_hi``, ``updates``
and ``n_avg``, and its ``_feasible`` (the dual point made feasible).
"""
from __future__ import annotations

import dataclasses
import math

import numpy as np

from ...kernels.objective import weighted_sum

__all__ = ["RestartMixin"]


def _json_float(x):
    """A float for the checkpoint's JSON meta: None for +-inf (JSON has no inf)."""
    return float(x) if math.isfinite(x) else None


def _float_or(x, default):
    return default if x is None else float(x)


class RestartMixin:
    """The restart window, the primal weight and the fallback (module docstring)."""

    def _allocate_restarts(self):
        """The restart window, the primal weight's last point and the fallback's
        best point (empty arrays for the parts that are off)."""
        prob = self.problem
        d_r, n_r = (prob.d, prob.n) if self.restart else (0, 0)
        # restarts: sums of the end-of-epoch iterates since the last restart
        self.rs_w = np.zeros(d_r)
        self.rs_a = np.zeros(n_r)
        self.rs_m = np.zeros(n_r)   # and of their X w
        self.rs_v = np.zeros(d_r)   # and of their v(alpha)
        self.rs_full = True         # rs_m and rs_v hold every iterate of the window
        self.rs_n = 0
        self.rs_gap = None          # gap of the point restarted from (None: not yet)
        self.rs_prev = None         # the last candidate's gap since then
        self.n_restarts = 0
        # primal_weight="adaptive": the point of the last restart and the weight
        self.pw_w = np.zeros(prob.d if self.adaptive_weight else 0)
        self.pw_a = np.zeros(prob.n if self.adaptive_weight else 0)
        self.pw_log_ref = None      # log(dy/dx) of the first window (omega's unit)
        self.pw_log = 0.0           # log omega
        # fallback="best": the point with the smallest primal and the best dual seen
        self.fb_w = np.zeros(prob.d if self.fallback else 0)
        self.fb_a = np.zeros(prob.n if self.fallback else 0)
        self.fb_primal, self.fb_dual = math.inf, -math.inf
        self.n_fallbacks = 0

    RESTART_ARRAYS = ("rs_w", "rs_a", "rs_m", "rs_v", "pw_w", "pw_a", "fb_w", "fb_a")

    def _restart_meta(self):
        """The checkpoint's scalars of the restarts, the primal weight and the fallback."""
        return {"rs_n": int(self.rs_n), "rs_gap": self.rs_gap, "rs_prev": self.rs_prev,
                "rs_full": bool(self.rs_full), "n_restarts": int(self.n_restarts),
                "pw_log_ref": self.pw_log_ref, "pw_log": float(self.pw_log),
                "fb_primal": _json_float(self.fb_primal),
                "fb_dual": _json_float(self.fb_dual), "n_fallbacks": int(self.n_fallbacks)}

    def _set_restart_state(self, meta, arrays):
        """Restore :meth:`_restart_meta` and the restart arrays (already set from
        ``arrays``) from a checkpoint; a checkpoint without some of them starts
        those parts afresh."""
        if "rs_w" not in arrays:          # a checkpoint without the window
            self.rs_w = np.zeros(self.w.shape[0] if self.restart else 0)
            self.rs_a = np.zeros(self.alpha.shape[0] if self.restart else 0)
        if "rs_m" not in arrays:          # X w and v are linear: the sums of the window
            self.rs_m = (self.problem.rows.matvec(self.rs_w) if self.rs_w.size
                         else np.zeros(0))
            self.rs_v = (self.problem.dual_image(self.rs_a) if self.rs_a.size
                         else np.zeros(0))
        self.rs_full = bool(meta.get("rs_full", True))
        self._at_iterate = None
        if "iterate_margins" in arrays:
            self._at_iterate = (int(meta["updates"]), None,
                                np.array(arrays["iterate_margins"], dtype=np.float64),
                                np.array(arrays["iterate_v"], dtype=np.float64))
        if self.restart and self.rs_w.size == 0:
            raise ValueError("the checkpoint was written with restart=None; resume with "
                             "the same restart option")
        self.rs_n = int(meta.get("rs_n", 0))
        self.rs_gap = meta.get("rs_gap")
        self.rs_prev = meta.get("rs_prev")
        self.n_restarts = int(meta.get("n_restarts", 0))
        if "pw_w" not in arrays:          # a checkpoint without the primal weight
            self.pw_w = np.zeros(0)
            self.pw_a = np.zeros(0)
        self.pw_log_ref = meta.get("pw_log_ref")
        self.pw_log = float(meta.get("pw_log", 0.0))
        self.fb_primal = _float_or(meta.get("fb_primal"), math.inf)
        self.fb_dual = _float_or(meta.get("fb_dual"), -math.inf)
        if self.fallback and ("fb_w" not in arrays or self.fb_w.shape[0] != self.w.shape[0]):
            # written without fallback="best": its memory of the best point starts here
            self.fb_w = np.zeros(self.w.shape[0])
            self.fb_a = np.zeros(self.alpha.shape[0])
            self.fb_primal, self.fb_dual = math.inf, -math.inf
        self.n_fallbacks = int(meta.get("n_fallbacks", 0))
        if self.adaptive_weight:
            if self.pw_w.shape[0] != self.w.shape[0]:
                raise ValueError("the checkpoint was written without "
                                 "primal_weight='adaptive'; resume with the same option")
            self._set_primal_weight(self.pw_log)

    #: restart when the candidate's gap is below RESTART_SUFFICIENT times the gap
    #: restarted from, or below RESTART_NECESSARY times it and no longer falling,
    #: or when the window has RESTART_ARTIFICIAL of all epochs (PDLP's rules)
    RESTART_SUFFICIENT, RESTART_NECESSARY, RESTART_ARTIFICIAL = 0.2, 0.8, 0.36

    def _pd_values(self, w, alpha):
        """``(P(w), D(alpha))`` of a pair (alpha made dual-feasible first)."""
        cert = self.problem.certificate(w, self._feasible(alpha))
        return cert.primal, cert.dual

    def _iterate_pass(self):
        """One pass over the data at the current iterate: its certificate (``P(w)``,
        ``D(alpha)``, ``X w``) and ``v(alpha)``, kept for this update count so that
        the next SVRG snapshot and the check reuse them instead of reading X again."""
        prob = self.problem
        alpha = self._feasible(self.alpha)
        cert = prob.certificate(self.w, alpha)
        self.feature_accesses += self.layout.nnz
        v = cert.v if alpha is self.alpha else None     # lam = 0: v of the scaled alpha
        self._at_iterate = (self.updates, cert, cert.margins, v)
        return cert

    def _cached_iterate(self):
        """``(certificate or None, margins, v or None)`` of the current iterate when
        :meth:`_iterate_pass` (or a restart) left them for this update count."""
        c = self._at_iterate
        if c is None or c[0] != self.updates:
            return None
        return c[1:]

    def _average_pd(self, k):
        """``(w_a, alpha_a, P(w_a), D(alpha_a), X w_a, v(alpha_a))`` of the window's
        average from the window's sums of ``X w`` and ``v(alpha)`` (both linear),
        without a pass over the data; exact passes when ``lam = 0`` (the dual needs
        the scaled alpha) or a sum is missing (then ``X w_a`` and ``v`` are None)."""
        prob = self.problem
        wa = self.rs_w / k
        aa = np.clip(self.rs_a / k, self.a_lo, self.a_hi)      # rounding at the bounds
        if prob.lam == 0 or not self.rs_full:
            self.feature_accesses += 2 * self.layout.nnz
            return (wa, aa) + self._pd_values(wa, aa) + (None, None)
        m = self.rs_m / k
        v = self.rs_v / k
        c = prob.sample_weight
        primal = (weighted_sum(c, prob.loss.value(m, prob.y)) / prob.W
                  + prob.penalty.value(wa))
        conj = prob.loss.neg_conjugate(aa, prob.y)
        if not np.isfinite(conj).all():
            return wa, aa, primal, -math.inf, m, v
        dual = weighted_sum(c, conj) / prob.W - prob.penalty.conjugate(v)
        return wa, aa, primal, dual, m, v

    def _restart_check(self):
        """At the end of an epoch (``restart="adaptive"``): the candidate is the
        average of the end-of-epoch iterates since the last restart or the
        current iterate, whichever has the smaller certified gap ``P(w) -
        D(alpha)``; the iterate restarts from it (both ``w`` and ``alpha``;
        AdaGrad's sums are kept) when PDLP's conditions hold (Applegate et al.
        2021, section 3.2, with the duality gap for the normalized gap).

        Cost: one pass (the iterate's certificate, kept for the SVRG snapshot and
        the check); the average's gap comes from the window's sums of ``X w`` and
        ``v(alpha)``.  Returns True when the iterate changed."""
        cert = self._iterate_pass()
        cached = self._at_iterate
        self.rs_w += self.w
        self.rs_a += self.alpha
        if cached[3] is None:
            self.rs_full = False
        if self.rs_full:
            self.rs_m += cached[2]
            self.rs_v += cached[3]
        self.rs_n += 1
        k = self.rs_n
        g_cur = cert.gap
        m_avg = v_avg = None
        g_avg = math.inf                # a window of one epoch: the average is the iterate
        if k > 1:
            wa, aa, p_avg, d_avg, m_avg, v_avg = self._average_pd(k)
            g_avg = p_avg - d_avg
        if self.fallback:
            self._offer_best(self.w, self.alpha, cert.primal, cert.dual)
            if k > 1:
                self._offer_best(wa, aa, p_avg, d_avg)
            kind = self._diverged(cert.primal, cert.dual)
            if kind is not None:
                self._fall_back(halve_steps=kind == "bound")
                return True
        cand, g = ((wa, aa), g_avg) if g_avg <= g_cur else (None, g_cur)
        if not math.isfinite(g):
            g = math.inf
        first = self.rs_gap is None
        if first:                       # the first window: its gap is the reference
            do, cand = True, None
        else:
            ref = self.rs_gap
            prev = math.inf if self.rs_prev is None else self.rs_prev
            do = (g <= self.RESTART_SUFFICIENT * ref
                  or (g <= self.RESTART_NECESSARY * ref and g > prev)
                  or k >= self.RESTART_ARTIFICIAL * self.n_avg)
        if not do:
            self.rs_prev = float(g) if math.isfinite(g) else None
            return False
        changed = cand is not None
        if changed:
            self.w[:] = cand[0]
            self.alpha[:] = cand[1]
            self._at_iterate = (None if m_avg is None else
                                (self.updates, None, m_avg.copy(), v_avg.copy()))
        if not first:
            self.n_restarts += 1        # a new window (from the average or the iterate)
        if self.adaptive_weight:
            informative = g <= self.PW_GATE * abs(cert.primal)
            changed = self._update_primal_weight(first or not informative) or changed
        self._new_window()
        self.rs_gap = float(g) if math.isfinite(g) else None
        return changed

    def _new_window(self):
        """Empty the restart window's sums (a restart or a fallback starts one)."""
        self.rs_w[:] = 0.0
        self.rs_a[:] = 0.0
        self.rs_m[:] = 0.0
        self.rs_v[:] = 0.0
        self.rs_full = True
        self.rs_n = 0
        self.rs_prev = None

    def _offer_best(self, w, alpha, primal, dual):
        """``fallback="best"``: keep the best dual value seen and the point (``w``,
        ``alpha``) with the smallest primal value."""
        if math.isfinite(dual) and dual > self.fb_dual:
            self.fb_dual = float(dual)
        if primal < self.fb_primal:
            self.fb_primal = float(primal)
            self.fb_w[:] = w
            self.fb_a[:] = alpha

    def _diverged(self, primal, dual):
        """Whether the iterate (``P(w) = primal``, ``D(alpha) = dual``) has left the
        best point: "bound" when its certified sub-optimality bound ``P(w) -
        D_best`` exceeds FALLBACK_RATIO times the best point's ``P_best - D_best``,
        once that bound is informative (``D_best >= FALLBACK_GATE P_best``: the best
        point is certified within a factor ``1 / FALLBACK_GATE`` of the optimum);
        "primal" when the iterate's own certified gap is above PW_GATE times
        ``P(w)`` (no dual bound to read: unscaled covtype) and its primal value is
        above PRIMAL_FALLBACK_RATIO times the best; None otherwise."""
        if self.fb_dual >= self.FALLBACK_GATE * self.fb_primal:
            bound = self.fb_primal - self.fb_dual
            if primal - self.fb_dual > self.FALLBACK_RATIO * bound:
                return "bound"
        if (primal - dual > self.PW_GATE * abs(primal)
                and primal > self.PRIMAL_FALLBACK_RATIO * self.fb_primal):
            return "primal"
        return None

    def _fall_back(self, halve_steps=True):
        """Restart from the best point, with AdaGrad's sums times FALLBACK_SHRINK
        (every step length divided by its square root) when ``halve_steps``; a new
        window starts, the gap restarted from is kept."""
        self.w[:] = self.fb_w
        self.alpha[:] = self.fb_a
        self._at_iterate = None
        if halve_steps and self.Gw.size:
            self.Gw *= self.FALLBACK_SHRINK
            self.Ga *= self.FALLBACK_SHRINK
        self._new_window()
        self.n_restarts += 1
        self.n_fallbacks += 1

    #: fall back when the iterate's bound is FALLBACK_RATIO times the best point's;
    #: AdaGrad's sums are then multiplied by FALLBACK_SHRINK (steps halved)
    FALLBACK_RATIO, FALLBACK_SHRINK, FALLBACK_GATE = 4.0, 4.0, 0.5
    #: without an informative gap: fall back when P(w) exceeds this times P_best
    PRIMAL_FALLBACK_RATIO = 2.0

    def _set_primal_weight(self, log_omega):
        """``w`` steps divided by ``omega``, ``alpha`` steps multiplied by it."""
        self.pw_log = float(log_omega)
        omega = math.exp(self.pw_log)
        self.params = dataclasses.replace(self.params, w_scale=self.w_scale0 / omega,
                                          a_scale=self.a_scale0 * omega)

    def _update_primal_weight(self, first):
        """PDLP's primal-weight update at a restart (Applegate et al. 2021,
        Algorithm 3): ``log omega <- theta log(dy/dx) + (1 - theta) log omega``
        with ``dx = ||w - w_last||``, ``dy = ||alpha - alpha_last||_c`` (weights
        ``c_i/W``) the distances from the last restart point, ``theta`` =
        PW_SMOOTHING; ``dy/dx`` is measured relative to the first window's,
        which defines ``omega = 1`` (the default steps).  Returns True when the
        steps changed."""
        dx = float(np.linalg.norm(self.w - self.pw_w))
        da = self.alpha - self.pw_a
        dy = math.sqrt(float(np.dot(self.cwW, da * da)))
        self.pw_w[:] = self.w
        self.pw_a[:] = self.alpha
        if first or not (dx > 0.0 and dy > 0.0 and math.isfinite(dx) and math.isfinite(dy)):
            return False
        log_ratio = math.log(dy / dx)
        if self.pw_log_ref is None:
            self.pw_log_ref = log_ratio
            return False
        th = self.PW_SMOOTHING
        self._set_primal_weight(th * (log_ratio - self.pw_log_ref) + (1 - th) * self.pw_log)
        return True

    #: theta of the primal-weight update (PDLP's value)
    PW_SMOOTHING = 0.5
    PW_GATE = 1000.0
