"""DSOSolver: the serial run of DSO's distributed block schedule (the problem,
the saddle function, the updates and the certificate are in its docstring; the
options in :mod:`.options`; restarts, primal weight and fallback in
:mod:`.restarts`; the same rounds on Dask in :mod:`.ring`).
"""
from __future__ import annotations

import math
import time

import numpy as np

from ..._util import rng_from_state
from ..._util.clients import check_client, ring_workers
from ...kernels.sdca import Averaging, SDCAState, Shrinking, sdca_epoch
from ...kernels.status import STATUS_NONFINITE
from ...kernels.views import ProxWork
from .._base import Solver, SolveResult, register
from .blocks import (DSOParams, RowPartition, WBlock, build_layout, dso_block,
                     partition_streams, shuffle_layout, sigma, snapshot_partials)
from .kernels import STEP_ADAGRAD, STEP_SCALAR, ColSide, RowSide, svrg_full_gradient
from .options import OPTIONS_DOC, DSOOptions, default_primal_weight
from .restarts import RestartMixin
from .ring import DSORingDriver
from .saddle import (adagrad_a_scale, adagrad_col_factor, box_radius, default_eta0,
                     dual_bounds, saddle_gap, spdc_primal_weight)

__all__ = ["DSOSolver", "DSOOptions"]

METHOD_DOC = """DSO: distributed stochastic saddle-point optimization over the nonzeros
(Matsushima, Yun, Zhang & Vishwanathan, "Distributed Stochastic Optimization of
the Regularized Risk", 2014), run serially with the exact block schedule of
the distributed algorithm.

Problem (docs/conventions.md §1, weights ``c_i``, ``W = sum_i c_i``; ``lam = 0`` allowed when
``l1 > 0``)::

    primal  P(w)     = (1/W) sum_i c_i phi_i(x_i . w) + lam/2 ||w||^2 + l1 ||w||_1
    dual    D(alpha) = (1/W) sum_i c_i (-phi_i*(-alpha_i)) - g*(v),
            v = (1/W) sum_i c_i alpha_i x_i

Saddle-point form (paper eq. 6), over ``Omega = {(i, j): x_ij != 0}`` with
``|Omega_i|`` nonzeros in row ``i`` and ``|Omega-bar_j|`` in column ``j``::

    min_{w in B} max_{alpha in A} f(w, alpha) = sum_{(i,j) in Omega} f_ij(w_j, alpha_i)
    f_ij = r_j(w_j)/|Omega-bar_j| + (c_i/W) H_i(alpha_i)/|Omega_i| - (c_i/W) alpha_i w_j x_ij
    r_j(u) = lam/2 u^2 + l1 |u|,    H_i(a) = -phi*(-a; y_i)

``max_alpha f(w, .) = P(w)`` and ``min_w f(., alpha) = D(alpha)``.

Update (paper eq. 8, Algorithm 1 line 8), for each nonzero ``(i, j)`` of the
active block::

    w_j'    <- Proj_[-R,R]( w_j - eta_w (r_j'(w_j)/|Omega-bar_j| - (c_i/W) alpha_i x_ij) )
    alpha_i <- Proj_A_i ( alpha_i + eta_a (c_i/W)(H_i'(alpha_i)/|Omega_i| - w~_j x_ij) )

with ``w~_j = w_j'`` (``update="sequential"``, the default: the dual step sees the
new primal coordinate, as PDHG's dual step sees the new primal iterate) or ``w~_j =
w_j`` (``update="simultaneous"``: both partial gradients at the current pair, (8)
as printed).

Schedule (Section 3, Algorithm 1): rows are split into ``p = n_workers``
contiguous parts ``I_1..I_p`` (equal counts) and columns into ``p``
contiguous parts ``J_1..J_p`` (equal nonzero counts), inducing blocks
``Omega^(q,r)``.  Epoch ``t`` has ``p`` inner iterations; in inner iteration
``r`` partition ``q`` processes block ``(q, sigma_r(q))``, ``sigma_r(q) =
(q + r) mod p`` (0-based form of the paper's ``((q + r - 2) mod p) + 1``), in an
order drawn uniformly at random by partition ``q``'s own stream
(``np.random.SeedSequence(random_state).spawn(p)``).  Blocks of one inner
iteration share no row and no column, so running them one after the other is
exactly what ``p`` parallel workers compute (Lemma 2); the Dask version calls
the same :func:`dso_block` per worker.

Projections (Appendix A): ``alpha_i y_i`` in ``[0, 1]`` for hinge and in
``[1e-14, 1 - 1e-14]`` for logistic (the dual domain for the other losses);
``w`` in the box ``|w_j| <= R`` with ``R = sqrt(P(0)/lam)`` (= ``1/sqrt(lam)`` for
hinge, ``sqrt(log 2/lam)`` for logistic) and, when ``l1 > 0``, ``R <=
P(0)/l1``.  Both bounds hold for every minimizer: at a saddle point
``lam ||w*||^2 + l1 ||w*||_1 = (1/W) sum_i c_i H_i(alpha*_i) - L(w*) <= P(0)``
(with ``H_i <= phi_i(0)`` and ``L >= 0``), so the box never cuts off the
optimum; with ``lam = 0`` the bound ``P(0)/l1`` is the one that makes the box
finite.

Certificate: ``coef`` is the w iterate (last or averaged, option ``output``);
``dual_coef`` is whichever of two dual-feasible points has the larger exact
``D``: DSO's own alpha (last or averaged) or ``-phi'(X coef)`` (docs/conventions.md §1).
With ``lam = 0`` the dual needs ``||v||_inf <= l1``; each candidate is then
scaled by ``min(1, l1/||v||_inf)``, which keeps it feasible (every dual domain
here is convex and contains 0).  ``primal``, ``dual`` and ``gap`` come from
:meth:`Problem.certificate`.  The trace also reports ``saddle_gap``, Theorem
1's ``eps(w~, alpha~) = max_{alpha in A} f(w~, alpha) - min_{w in B} f(w,
alpha~)`` for the averaged iterates, in closed form::

    eps = P(w~) - (1/W) sum_i c_i H_i(alpha~_i) - sum_j m_j(v_j(alpha~)),
    m_j(v) = min_{|u| <= R} lam/2 u^2 + l1 |u| - v u
           = value at u = clip(soft(v, l1)/lam, -R, R)      (lam > 0)
           = -R max(|v| - l1, 0)                            (lam = 0)

Since ``w* in B``, ``eps >= P(w~) - P*``.
"""


# ------------------------------------------------------------------ solver
@register
class DSOSolver(RestartMixin, DSORingDriver, Solver):
    __doc__ = METHOD_DOC + "\n" + OPTIONS_DOC
    name = "dso"
    summary = "saddle point over the nonzeros, p x p block schedule (Matsushima et al. 2014)"
    options_class = DSOOptions
    supports_l1 = True
    supports_client = True
    supports_pure_l1 = True
    mixes_best_pair = True

    def _n_workers(self):
        """p: the option, else 1 in process or the client's workers."""
        return ring_workers(self.opts, 1)

    def validate_options(self):
        o = self.opts
        prob = self.problem
        if o.client is not None:
            check_client(o.client)
        k = self._n_workers()
        if k > min(prob.n, prob.d):
            raise ValueError(f"n_workers={k} exceeds min(n_samples, n_features) = "
                             f"{min(prob.n, prob.d)}; DSO needs p <= min(n, d) (every row part "
                             f"and column block non-empty)")
        if o.init == "dcd" and (prob.l1 > 0 or prob.lam == 0):
            raise ValueError("init='dcd' runs local SDCA/DCD, which needs the plain L2 "
                             "penalty (l1=0, lam>0); use init='zero' with l1 > 0")
        if o.init == "dcd" and self.warm_start is not None:
            raise ValueError("init='dcd' and warm_start both set the starting point; "
                             "choose one")
        if o.primal_weight == "adaptive" and o.restart is None:
            raise ValueError("primal_weight='adaptive' updates omega at restarts; it "
                             "needs restart='adaptive'")
        if o.primal_weight not in (None, 1.0) and o.step != "adagrad":
            raise ValueError("primal_weight scales AdaGrad's w and alpha steps; it needs "
                             "step='adagrad'")
        if o.alpha_scale is not None and o.step != "adagrad":
            raise ValueError("alpha_scale multiplies AdaGrad's alpha steps; it needs "
                             "step='adagrad'")

    def setup(self):
        o = self.opts
        prob = self.problem
        self.p = self._n_workers()
        self.resolved_opts = o.replace(n_workers=self.p)
        self.init_passes = o.init_passes
        self.layout = build_layout(prob.rows, self.p)
        if self.layout.nnz == 0:        # the layout keeps the nonzero values only
            raise ValueError("X has no nonzero entries; DSO updates run over the "
                             "nonzeros, so there is nothing to fit")
        self.R = box_radius(prob)
        self.eta0 = (default_eta0(o.step, prob, self.layout) if o.eta0 is None
                     else float(o.eta0))
        data_steps = o.eta0 is None and o.step == "adagrad"
        # the default AdaGrad lengths follow the data: w_j's from column j's scale
        # (adagrad_col_factor), alpha's x 8 for the hinge loss (adagrad_a_scale)
        col_factor = adagrad_col_factor(prob) if data_steps else None
        if o.alpha_scale is not None:
            a_scale = float(o.alpha_scale)
        else:
            a_scale = adagrad_a_scale(prob) if data_steps else 1.0
        self.restart = o.restart
        # the fallback halves AdaGrad's steps: it needs them, and the restart test
        self.fallback = (o.fallback == "best" and o.restart is not None
                         and o.step == "adagrad")
        weight = default_primal_weight(o) if o.primal_weight is None else o.primal_weight
        self.resolved_opts = self.resolved_opts.replace(primal_weight=weight)
        self.adaptive_weight = weight == "adaptive"
        self.w_scale0, self.a_scale0 = 1.0, a_scale
        if weight == "lam_n":
            omega = spdc_primal_weight(prob)
        else:
            omega = 1.0 if self.adaptive_weight else float(weight)
        self.omega = omega
        w_scale, a_scale = 1.0 / omega, a_scale * omega
        self.a_lo, self.a_hi = dual_bounds(prob.loss, prob.y)
        self.params = DSOParams(
            col_factor=col_factor, extrap=1.0 if o.update == "sequential" else 0.0,
            kind=prob.loss.code, loss_param=prob.loss.param, lam=prob.lam, l1=prob.l1,
            l1_prox=o.l1_update == "prox", R=self.R,
            step_mode=STEP_ADAGRAD if o.step == "adagrad" else STEP_SCALAR,
            eta0=self.eta0, svrg=o.variance_reduction == "svrg",
            chunk_order=o.order == "chunks", w_scale=w_scale, a_scale=a_scale)
        self.cwW = prob.sample_weight / prob.W
        self.perm_buf = np.empty(self.layout.nnz, dtype=self.layout.rows.dtype)
        self._saddle = None
        self._at_iterate = None     # (updates, certificate, X w, v) of the iterate
        self._dual_source = ""
        self._shuffled_with = None

    # ----------------------------------------------------------- state
    @property
    def epochs(self) -> float:
        return self.updates / self.layout.nnz

    def init_state(self, warm_start):
        prob = self.problem
        self.updates = 0
        self.t = 1                  # current DSO epoch (eta_t uses it)
        self.r = 0                  # next inner iteration in the epoch
        self.n_avg = 0
        self.snap_epoch = 0
        self._at_iterate = None
        self.streams = partition_streams(self.random_state, self.rng, self.p)
        self.layout_seed = int(self.rng.integers(2 ** 63 - 1))
        self._shuffle_layout()
        self.w = np.zeros(prob.d)
        self.alpha = np.clip(-prob.loss.derivative(np.zeros(prob.n), prob.y), self.a_lo, self.a_hi)
        if warm_start is not None:
            self._apply_warm_start(warm_start)
        self._allocate()
        if self.opts.init == "dcd":
            self._dcd_init()
        if self.opts.client is not None:
            self._ring_push()

    def _shuffle_layout(self):
        """order="chunks": store each block's nonzeros in a random order, once."""
        if self.params.chunk_order and self._shuffled_with != self.layout_seed:
            if self._shuffled_with is not None:
                self.layout = build_layout(self.problem.rows, self.p)
            shuffle_layout(self.layout, self.layout_seed)
            self._shuffled_with = self.layout_seed

    def _apply_warm_start(self, ws):
        prob = self.problem
        if isinstance(ws, SolveResult):
            w, alpha = ws.coef, ws.dual_coef
        else:
            w, alpha = ws, None
        w = np.array(w, dtype=np.float64).ravel()
        if w.shape != (prob.d,) or not np.isfinite(w).all():
            raise ValueError(f"warm_start coef must be finite with shape ({prob.d},), got "
                             f"shape {w.shape}")
        self.w = np.clip(w, -self.R, self.R)
        if alpha is not None:
            alpha = np.array(alpha, dtype=np.float64).ravel()
            if alpha.shape != (prob.n,) or not np.isfinite(alpha).all():
                raise ValueError(f"warm_start dual_coef must be finite with shape ({prob.n},)")
            self.alpha = np.clip(alpha, self.a_lo, self.a_hi)

    def _allocate(self):
        prob = self.problem
        ada = self.params.step_mode == STEP_ADAGRAD
        svrg = self.params.svrg
        self.Gw = np.zeros(prob.d if ada else 0)
        self.Ga = np.zeros(prob.n if ada else 0)
        self.w_sum = np.zeros(prob.d)
        self.a_sum = np.zeros(prob.n)
        self.w_snap = np.zeros(prob.d if svrg else 0)
        self.a_snap = np.zeros(prob.n if svrg else 0)
        self.Fw = np.zeros(prob.d if svrg else 0)
        self.Fa = np.zeros(prob.n if svrg else 0)
        self._allocate_restarts()

    _STATE_ARRAYS = ("w", "alpha", "Gw", "Ga", "w_sum", "a_sum", "w_snap", "a_snap", "Fw",
                     "Fa") + RestartMixin.RESTART_ARRAYS

    def get_state(self):
        if self._ring is not None:
            self._ring_pull()
        meta = {"updates": int(self.updates), "t": int(self.t), "r": int(self.r),
                "n_avg": int(self.n_avg), "snap_epoch": int(self.snap_epoch),
                "streams": [g.bit_generator.state for g in self.streams],
                "layout_seed": int(self.layout_seed), **self._restart_meta()}
        arrays = {k: np.array(getattr(self, k)) for k in self._STATE_ARRAYS}
        cached = self._cached_iterate()
        if cached is not None and cached[2] is not None:
            # the restart test's X w and v(alpha), which the next SVRG snapshot reuses
            arrays["iterate_margins"] = np.array(cached[1])
            arrays["iterate_v"] = np.array(cached[2])
        return meta, arrays

    def set_state(self, meta, arrays):
        for k in self._STATE_ARRAYS:
            if k in arrays:
                setattr(self, k, np.array(arrays[k], dtype=np.float64))
        self._set_restart_state(meta, arrays)
        self.updates = int(meta["updates"])
        self.t = int(meta["t"])
        self.r = int(meta["r"])
        self.n_avg = int(meta["n_avg"])
        self.snap_epoch = int(meta["snap_epoch"])
        self.layout_seed = int(meta.get("layout_seed", 0))
        self._shuffle_layout()
        self.streams = []
        for st in meta["streams"]:
            self.streams.append(rng_from_state(st))
        if len(self.streams) != self.p:
            raise ValueError(f"the checkpoint was written with n_workers="
                             f"{len(self.streams)}; resume with the same n_workers")
        if self.opts.client is not None:
            self._ring_push()

    # ------------------------------------------------------ partitions
    def partitions(self):
        """The p :class:`RowPartition` views of the current state (no copies)."""
        L = self.layout
        prob = self.problem
        out = []
        for q in range(self.p):
            i0, i1 = int(L.row_bounds[q]), int(L.row_bounds[q + 1])
            b0 = int(L.block_ptr[q * self.p])
            b1 = int(L.block_ptr[(q + 1) * self.p])
            sl = slice(i0, i1)
            out.append(RowPartition(
                q=q, p=self.p, row_start=i0,
                block_ptr=L.block_ptr[q * self.p:(q + 1) * self.p + 1] - b0,
                rows=L.rows[b0:b1], cols=L.cols[b0:b1], vals=L.vals[b0:b1],
                perm=self.perm_buf[b0:b1], y=prob.y[sl], cw=self.cwW[sl],
                row_cnt=L.row_cnt[sl], a_lo=self.a_lo[sl], a_hi=self.a_hi[sl],
                alpha=self.alpha[sl], Ga=self.Ga[sl] if self.Ga.size else self.Ga,
                a_snap=self.a_snap[sl] if self.a_snap.size else self.a_snap,
                Fa=self.Fa[sl] if self.Fa.size else self.Fa))
        return out

    def wblocks(self):
        """The p :class:`WBlock` views of w (no copies)."""
        L = self.layout
        out = []
        for r in range(self.p):
            j0, j1 = int(L.col_bounds[r]), int(L.col_bounds[r + 1])
            sl = slice(j0, j1)
            out.append(WBlock(
                r=r, col_start=j0, w=self.w[sl], col_cnt=L.col_cnt[sl],
                Gw=self.Gw[sl] if self.Gw.size else self.Gw,
                w_snap=self.w_snap[sl] if self.w_snap.size else self.w_snap,
                Fw=self.Fw[sl] if self.Fw.size else self.Fw))
        return out

    # --------------------------------------------------------- helpers
    def step_size(self):
        step = self.opts.step
        if step == "sqrt":
            return self.eta0 / math.sqrt(self.t)
        return self.eta0

    def _svrg_snapshot(self):
        prob = self.problem
        self.w_snap[:] = self.w
        self.a_snap[:] = self.alpha
        cached = self._cached_iterate()
        if cached is not None and cached[2] is not None:   # the restart test's pass
            margins, v = cached[1], cached[2]
        else:       # partition by partition, in the ring's order (snapshot_partials)
            L = self.layout
            margins = np.empty(prob.n)
            v = np.zeros(prob.d)
            for q, part in enumerate(self.partitions()):
                m_q, v_q = snapshot_partials(part, L.col_bounds, self.w_snap)
                margins[int(L.row_bounds[q]):int(L.row_bounds[q + 1])] = m_q
                v += v_q
            self.feature_accesses += 2 * L.nnz
        svrg_full_gradient(
            RowSide(self.alpha, self.a_lo, self.a_hi, prob.y, self.cwW, self.layout.row_cnt,
                    self.Ga, self.a_snap, self.Fa),
            ColSide(self.w, self.layout.col_cnt, self.Gw, self.w_snap, self.Fw),
            margins, v, self.params.spec())
        self.snap_epoch = self.t

    def _dcd_init(self):
        """Local DCD (SDCA) passes on each row part, then w = sum_q (W_q/W) w_q."""
        prob = self.problem
        L = self.layout
        shrunk = np.zeros(prob.n, dtype=np.uint8)
        empty = np.zeros(0)
        empty_i = np.zeros(0, dtype=np.int64)
        rows = prob.rows_view()
        no_shrink = Shrinking(False, np.inf, np.inf)
        no_avg = Averaging(False, empty, empty_i, 0)
        no_prox = ProxWork(empty, empty, empty, empty_i)
        alpha = np.zeros(prob.n)
        w = np.zeros(prob.d)
        for q in range(self.p):
            i0, i1 = int(L.row_bounds[q]), int(L.row_bounds[q + 1])
            Wq = float(prob.sample_weight[i0:i1].sum())
            vq = np.zeros(prob.d)
            rng = self.streams[q]
            for _ in range(self.init_passes):
                order = (i0 + rng.permutation(i1 - i0)).astype(np.int64, copy=False)
                status, pos, _, acc, _, _ = sdca_epoch(
                    rows, prob.step_spec(inv_W=1.0 / Wq)._replace(l1=0.0),
                    SDCAState(alpha, vq, empty, shrunk), order, 0, order.shape[0], 0, -1,
                    no_shrink, no_avg, no_prox)
                self.feature_accesses += acc
                if status == STATUS_NONFINITE:
                    raise FloatingPointError(
                        f"non-finite value in the DCD initialization at sample "
                        f"{int(order[pos])}; scale the rows or increase lam")
            w += (Wq / prob.W) * vq / prob.lam
        self.alpha[:] = np.clip(alpha, self.a_lo, self.a_hi)
        self.w[:] = np.clip(w, -self.R, self.R)
        self.updates += self.init_passes * L.nnz

    # --------------------------------------------------------- advance
    def advance(self, n_epochs, deadline):
        n_inner = max(1, int(round(n_epochs * self.p)))
        if self._ring is not None:
            if not self.restart:
                self._ring.drive(self._ring.round + n_inner, self._ring_round,
                                 self._ring_restore, self._ring_meta, deadline)
                return
            while n_inner > 0:          # epoch by epoch: the restart test runs on the client
                k = min(n_inner, self.p - self.r)
                self._ring.drive(self._ring.round + k, self._ring_round,
                                 self._ring_restore, self._ring_meta, deadline)
                n_inner -= k
                if self.r != 0:
                    break               # the deadline stopped the epoch
                self._ring_pull()
                if self._restart_check():
                    self._ring_push()
                if deadline is not None and time.perf_counter() >= deadline:
                    break
            return
        parts = self.partitions()
        blocks = self.wblocks()
        sizes = self.layout.block_sizes()
        for _ in range(n_inner):
            if self.r == 0 and self.params.svrg and self.snap_epoch != self.t:
                self._svrg_snapshot()
            eta = self.step_size()
            for q in range(self.p):
                s = sigma(q, self.r, self.p)
                status, pos = dso_block(q, self.r, parts[q], blocks[s], self.streams[q],
                                        self.params, eta)
                self._book_block(status, q, s, sizes[q, s])
            self.r += 1
            if self.r == self.p:              # end of epoch t
                self.r = 0
                self.w_sum += self.w
                self.a_sum += self.alpha
                self.n_avg += 1
                self.t += 1
                if self.restart:
                    self._restart_check()
            if deadline is not None and time.perf_counter() >= deadline:
                break

    def _book_block(self, status, q, s, size):
        """After block ``(q, s)`` of the current inner iteration (here or on the
        ring): a clear error for a non-finite iterate, else count its updates."""
        if status == STATUS_NONFINITE:
            raise FloatingPointError(
                f"DSO produced a non-finite iterate (epoch {self.t}, block ({q}, {s})); "
                f"lower eta0 or use step='adagrad'")
        self.updates += int(size)
        self.feature_accesses += int(size)

    # ----------------------------------------------------- certificate
    def averaged(self):
        """Theorem 1's averaged iterates (w~, alpha~), or None before epoch 1 ends."""
        if self.n_avg == 0:
            return None
        return self.w_sum / self.n_avg, self.a_sum / self.n_avg

    def _feasible(self, alpha):
        """alpha itself, or scaled into ||v||_inf <= l1 when lam = 0."""
        prob = self.problem
        if prob.lam > 0:
            return alpha
        vmax = float(np.abs(prob.dual_image(alpha)).max(initial=0.0))
        limit = prob.l1 * (1.0 - 1e-12)
        return alpha if vmax <= limit else alpha * (limit / vmax)

    def certificate(self):
        prob = self.problem
        if self._ring is not None:
            self._ring_pull()
        avg = self.averaged()
        if self.opts.output == "average" and avg is not None:
            w_out, a_out = avg
        else:
            w_out, a_out = self.w, self.alpha
        # two dual candidates for one w: the iterate's alpha, and -phi'(X w) from the
        # margins of the first pass (the second pass reads only the rows it needs)
        cached = self._cached_iterate() if w_out is self.w else None
        if cached is not None and cached[0] is not None:    # the restart test's pass
            best = cached[0]
        else:
            best = prob.certificate(w_out, self._feasible(a_out))
        self._dual_source = "iterate"
        alpha = -prob.loss.derivative(best.margins, prob.y)
        cert = prob.certificate(w_out, self._feasible(alpha), margins=best.margins)
        if cert.dual > best.dual:
            best = cert
            self._dual_source = "primal"
        self._saddle = None if avg is None else saddle_gap(prob, avg[0], avg[1], self.R)
        return best

    def trace_extras(self):
        out = {"dso_epoch": int(self.t - 1) + self.r / self.p,
               "dual_source": self._dual_source}
        if self.restart:
            out["restarts"] = int(self.n_restarts)
        if self.fallback:
            out["fallbacks"] = int(self.n_fallbacks)
        if self._saddle is not None:
            out["saddle_gap"] = float(self._saddle)
        if self._ring is not None:
            out.update(self._ring.info())
            out["backend"] = "dask"
        return out
