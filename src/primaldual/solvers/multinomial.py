"""Multinomial (softmax) logistic regression by a preconditioned truncated
Newton-CG method on the primal, certified by the dual point that the softmax
probabilities give (docs/multiclass-models.md).
"""
from __future__ import annotations

import math
import time

import numpy as np
import scipy.linalg
import scipy.sparse as sp

from ..distributed.multinomial_block import BlockMultinomialData, dense_rows_pay
from ..distributed.multinomial_rounds import DaskMultinomialData, place_multiclass
from ..distributed.newton_block import contiguous_partitions
from .._util.cg import flat_dot
from ..problem import Certificate
from ._base import SolveResult
from ._multiclass_base import MulticlassSolver
from ._partitions import PartitionCount
from ._blas import serial_blas
from .multinomial_options import MultinomialNewtonOptions
from .multinomial_rows import ROWS_CHECK, ROWS_MAX_ENTRIES, RowSpaceSystem, kept_rows
from .multinomial_start import dual_cd_start
from .multinomial_trust import forcing, kept_radius, metric_floor, trust_step

__all__ = ["MultinomialNewtonOptions", "MultinomialNewton"]

#: Armijo constant of the backtracking line search
ARMIJO = 1e-4
#: the (dK x dK) Hessian is formed only when dK is at most this and the rows
#: G_i (n x dK) hold at most EXPLICIT_MAX_ENTRIES values
EXPLICIT_MAX_DK = 2000
EXPLICIT_MAX_ENTRIES = 5e7
#: hessian="auto" switches to the explicit Hessian once a Newton step's CG
#: iterations exceed its estimated cost in passes: its flops (n (dK)^2 / 2 +
#: (dK)^3 / 3) over a pass's (4 nnz K + 20 n K), times this factor (measured on
#: digits, dna, letter and shuttle: 0.3-2 on dense rows; CSR passes cost ~4x
#: more per flop, hence the factor EXPLICIT_SPARSE on sparse input)
EXPLICIT_PASS_FACTOR = 0.7
EXPLICIT_SPARSE = 0.25
#: ... and starts with it when that cost is below this many passes (a Newton
#: step takes more CG iterations than that; shuttle: 4)
EXPLICIT_AT_ONCE = 10.0
#: start="auto" runs dual coordinate descent first: START_EPOCHS on sparse
#: input whose Hessian is not formed (news20: Newton-CG from zero stalls on raw
#: counts), SHORT_START_EPOCHS where the Hessian is not formed at once and rows
#: hold at least K entries (digits, dna, usps: 10-30% less time to 1e-6), none
#: where it is (shuttle) or on short rows (letter)
START_EPOCHS = 40
SHORT_START_EPOCHS = 3
#: on K > 1 partitions the start is rounds of CoCoA+ (sigma' = K), each worth
#: less than a serial epoch: min(K + 1, this) times as many (news20, K = 2: 40
#: rounds left Newton at a gap of 1.8e-6 after 1,100 passes; 120 certified 1e-6
#: in 586, serial 516)
PARTITION_START_FACTOR = 5
#: where the explicit Hessian is never formed (dK > EXPLICIT_MAX_DK: usps.t),
#: CG is preconditioned by the class blocks of H (Cholesky-factored K d x d
#: blocks) instead of its diagonal once a step's CG iterations exceed
#: BLOCK_PASS_FACTOR times the blocks' cost in passes (K n d^2 flops over a
#: pass's), where K d^2 <= BLOCK_MAX_ENTRIES and the rows fit dense
BLOCK_PASS_FACTOR = 1.0
BLOCK_MAX_ENTRIES = 2e7
#: CG never solves beyond this fraction of the gradient norm that certifies
#: the target (gap = ||g||^2 / (2 lam) <= tol |f|)
CG_FLOOR = 0.5
#: newton_system="auto": a step in the rows (:mod:`.multinomial_rows`) is tried
#: once a step in the features took this many products.  A row solve costs
#: 150-400 products on news20: at C = 100 feature steps take hundreds to 1,000+
#: near the optimum (the rows certify there), while at C = 1 as given and
#: C = 0.01 standardized a last feature step of 115-141 products finishes
#: the fit, where a threshold of 100 made the rows cost 43-58% more passes
#: (benchmarks/results/multinomial-news20-rows.md)
ROWS_TRY = 200
#: a row-space solve may take at most this many products, or twice the last
#: step's in the features if more
ROWS_CAP = 400


class MultinomialNewton(PartitionCount, MulticlassSolver):
    """Preconditioned truncated Newton-CG with a backtracking line search for
    multinomial logistic regression; a primal method.

    Problem (docs/multiclass-models.md): with labels ``y_i`` in ``0..K-1`` and
    ``coef`` (d x K), minimize::

        f(coef) = (1/W) sum_i c_i (logsumexp(x_i coef) - x_i coef_{:, y_i})
                  + lam/2 ||coef||_F^2

    whose gradient and Hessian-vector product are, with ``P`` the softmax
    probabilities (n x K) and ``Y`` the one-hot labels::

        grad f   = (1/W) X^T (c * (P - Y)) + lam coef
        H(D)     = (1/W) X^T (c * (P * XD - P * rowsum(P * XD))) + lam D

    (two sparse/dense BLAS products per Hessian-vector product).  Each step
    solves ``H s = -grad f`` by conjugate gradients preconditioned with the
    diagonal of ``H`` (as LIBLINEAR's Newton method, Hsia, Chiang & Lin,
    ACML 2018) to the forcing term ``eta ||g||``, ``eta = min(cg_tol,
    sqrt(||g|| / ||g_0||))`` (superlinear, Nocedal & Wright Thm. 7.2), then
    backtracks (Armijo) along ``s``: ``X s`` is formed once and every trial
    costs O(nK).  The certificate is ``alpha = Y - P`` at the current point
    (``e_y - alpha`` is on the simplex); its dual image is ``lam coef - grad
    f``, so a check costs no pass over the data, and the gap equals
    ``||grad f||^2 / (2 lam)``.

    CG stops at the latest where ``||r||`` is half the gradient norm that
    certifies ``tol``.  With ``start="dual_cd"`` (``auto``: unless the Hessian
    is formed at once or rows hold fewer than K entries) the first point is
    ``coef(alpha)`` after ``start_epochs`` epochs of exact dual coordinate
    descent from ``alpha = 0`` (:mod:`primaldual.kernels.multinomial_dual`;
    two passes each; 40 on sparse input whose Hessian is never formed, 3
    otherwise).

    The sums over rows run on :mod:`primaldual.distributed.multinomial_block`:
    with ``n_partitions=K`` over ``K`` contiguous row partitions whose parts
    are added in order, and with a Dask ``client`` on the workers
    (:mod:`primaldual.distributed.multinomial_rounds`, one partition per
    worker unless ``n_partitions`` says otherwise), with the same numbers;
    on ``K > 1`` partitions the dual start is rounds of CoCoA+ (adding,
    ``sigma' = K``, one local epoch each; Ma et al. 2015), ``min(K + 1, 5)``
    times as many as the serial start's epochs.

    With ``globalization="trust_region"`` (``auto``: on sparse rows whose
    Hessian is never formed) a CG step is taken in a trust region in the norm
    of H's diagonal, floored by ``trust_floor``: CG stops on its boundary (Steihaug 1983),
    the step is taken when the loss falls by at least 1e-4 of the model's
    prediction, the radius follows TRON's rules (Lin, Weng & Keerthi, JMLR
    2008; :mod:`~primaldual.solvers.multinomial_trust`) and the forcing term
    is Eisenstat & Walker's (1996, choice 2).  CG stops at the pass budget.

    With ``newton_system="rows"`` (``auto``: in process, rows fewer than
    features, once a feature step took ROWS_TRY products, while the solves
    converge) ``H s = -g`` is solved in the rows by the Woodbury identity,
    ``s = -(g - B u) / lam`` with ``(lam I + B^T B) u = B^T g``, ``H = lam I +
    B B^T`` (:mod:`~primaldual.solvers.multinomial_rows`), and the step takes
    the line search.
    Options: ``cg_tol``, ``max_cg_iter``, ``hessian``, ``globalization``, ``trust_floor``,
    ``newton_system``,
    ``start``, ``start_epochs``, ``n_partitions``, ``client``, ``round_timeout``,
    ``max_recoveries`` (:class:`MultinomialNewtonOptions`).
    ``max_epochs`` counts passes (a product with ``X`` and one with ``X^T``).
    ``warm_start``: a SolveResult, a coef (d, K) or a dual point alpha (n, K).
    """

    name = "multinomial_newton"
    summary = ("multinomial logistic: preconditioned Newton-CG on the primal, "
               "dual from the softmax probabilities")
    options_class = MultinomialNewtonOptions
    default_max_epochs = 1000
    loss_names = ("multinomial",)
    supports_client = True
    supports_partitioned = True
    #: the deadline of the current advance (CG checks it between products)
    _deadline = None

    def validate_options(self):
        self.check_partitions(warm_start_on_workers=False)

    def setup(self):
        prob = self.problem
        n, d, K = prob.n, prob.d, prob.K
        self.n_partitions = self._partitions()
        if self.n_partitions is not None:
            self.resolved_opts = self.resolved_opts.replace(n_partitions=self.n_partitions)
        o = self.opts
        sparse = self.partitioned or sp.issparse(prob.X)
        dense = prob.dense if self.partitioned else dense_rows_pay(n, d, prob.nnz, sparse)
        part_ptr = contiguous_partitions(n, self.n_partitions or 1)
        if self.partitioned:
            prob.pset.timeout = float(o.round_timeout)
            self.data = DaskMultinomialData(prob.pset, prob.part_ptr, d, K, o.max_recoveries)
        elif o.client is None:
            self.data = BlockMultinomialData(prob, part_ptr, dense)
        else:
            self.data = DaskMultinomialData(
                place_multiclass(prob, part_ptr, o.client, o.round_timeout, dense),
                part_ptr, d, K, o.max_recoveries)
        mode = o.hessian
        dk = d * K
        fits = dk <= EXPLICIT_MAX_DK and n * dk <= EXPLICIT_MAX_ENTRIES
        if mode == "explicit" and not fits:
            raise ValueError(f"hessian='explicit' forms a {dk} x {dk} Hessian from "
                             f"{n} x {dk} rows: more than dK = {EXPLICIT_MAX_DK} or "
                             f"{EXPLICIT_MAX_ENTRIES:g} values; use hessian='matvec'")
        flops = n * dk * dk / 2.0 + dk ** 3 / 3.0
        per_pass = 4.0 * max(prob.nnz, 1) * K + 20.0 * n * K
        sparse_rows = sparse and not dense
        factor = EXPLICIT_PASS_FACTOR * (EXPLICIT_SPARSE if sparse_rows else 1.0)
        #: CG iterations per step beyond which the explicit Hessian is cheaper
        self.explicit_passes = (0.0 if mode == "explicit" else
                                math.inf if mode == "matvec" or not fits
                                else factor * flops / per_pass)
        blocks_fit = K * d * d <= BLOCK_MAX_ENTRIES and n * d <= EXPLICIT_MAX_ENTRIES
        if o.preconditioner == "blocks" and not blocks_fit:
            raise ValueError(f"preconditioner='blocks' forms {K} blocks {d} x {d} from "
                             f"{n} x {d} dense rows: more than {BLOCK_MAX_ENTRIES:g} or "
                             f"{EXPLICIT_MAX_ENTRIES:g} values; use 'diagonal'")
        #: CG iterations per step beyond which the class blocks precondition CG
        # (auto: only where the explicit Hessian is never formed)
        self.block_passes = (0.0 if o.preconditioner == "blocks" else
                             math.inf if o.preconditioner == "diagonal" or not blocks_fit
                             or self.explicit_passes < math.inf
                             else BLOCK_PASS_FACTOR * K * n * d * d / per_pass)
        #: the data's slot holding the current point (the other takes trials)
        self.slot = 0
        start = o.start
        long_start = sparse_rows and self.explicit_passes == math.inf
        # a dual epoch solves K scalar equations per row: worth it on rows of at
        # least K entries (letter: 16 entries, 26 classes, it is not)
        self.cd_start = start == "dual_cd" or (start == "auto" and (long_start or (
            self.explicit_passes > EXPLICIT_AT_ONCE and prob.nnz >= prob.n * K)))
        #: steps in a trust region (``globalization``; auto: text, as news20 needs)
        self.trust = o.globalization == "trust_region" or (
            o.globalization == "auto" and long_start)
        #: the least of the trust region's metric per feature (None: H's diagonal)
        self.floor = (metric_floor(prob, o.trust_floor) if self.trust and not self.partitioned
                      else None)
        rows_fit = (not self.partitioned and o.client is None and self.n_partitions is None
                    and n * K * K <= ROWS_MAX_ENTRIES)
        if o.newton_system == "rows" and not rows_fit:
            raise ValueError(f"newton_system='rows' needs the rows in this process, one "
                             f"partition and n K^2 <= {ROWS_MAX_ENTRIES:g} (n = {n}, K = "
                             f"{K}); use newton_system='features'")
        #: Newton steps in the rows (multinomial_rows): possible here, and
        #: chosen (auto: rows fewer than features, on the CG path of text)
        self.rows_ok = rows_fit and (o.newton_system == "rows" or (
            o.newton_system == "auto" and n < d and self.explicit_passes == math.inf))
        self.XT = None
        self.start_epochs = (o.start_epochs if o.start_epochs is not None
                             else START_EPOCHS if long_start else SHORT_START_EPOCHS)
        if o.start_epochs is None and (self.n_partitions or 1) > 1:
            self.start_epochs *= min(self.n_partitions + 1, PARTITION_START_FACTOR)

    # -------------------------------------------------------------- state
    def init_state(self, warm_start):
        prob = self.problem
        self.coef = np.zeros(prob.coef_shape()) if warm_start is None else \
            self._warm_point(warm_start)
        #: the dual coordinate descent start: its P (n, K) and epochs left
        self.cd_left = self.start_epochs if self.cd_start and warm_start is None else 0
        self.Pcd = self._one_hot() if self.cd_left and self.n_partitions is None else None
        self.passes = 0.0
        self.n_iter = 0
        self.cg_iter = 0
        self.finished = False
        # hessian="explicit", or auto with a Hessian cheaper than a typical CG solve
        self.last_cg = 0 if self.explicit_passes > EXPLICIT_AT_ONCE else 2**62
        self._deadline = None
        self.n_explicit = 0
        self.n_blocks = 0
        self.blocks_on = self.block_passes == 0.0
        #: the trust region's radius (None: from the first gradient; negative:
        #: that radius, not yet cut to the first step's length) and the steps
        #: it turned down
        self.delta = kept_radius(warm_start)
        self.n_rejected = 0
        #: row-space steps: in use, the feature-step products that try them
        #: again, the last solve's products, and how many were taken
        self.rows_on = self.opts.newton_system == "rows"
        self.rows_next, self.rows_last, self.n_rows = ROWS_TRY, 0, 0
        if self.rows_ok and (kept := kept_rows(warm_start)) is not None:
            on, self.rows_next, self.rows_last = kept
            self.rows_on = self.rows_on or on
        #: the forcing term's memory: ||g|| before the last step taken, and eta
        self.g_prev = None
        self.eta = self.opts.cg_tol
        self._evaluate_at(self.coef)
        self.g0norm = math.sqrt(flat_dot(self.g, self.g))

    def _one_hot(self):
        prob = self.problem
        Y = np.zeros((prob.n, prob.K))
        Y[np.arange(prob.n), prob.y] = 1.0
        return Y

    def _warm_point(self, ws):
        prob = self.problem
        arr = ws.coef if isinstance(ws, SolveResult) else ws
        arr = np.asarray(arr, dtype=np.float64)
        if arr.shape == (prob.n, prob.K) and arr.shape != prob.coef_shape():
            if not prob.in_dual_domain(arr).all():
                raise ValueError("warm_start alpha (n, K) is not dual feasible: every "
                                 "row of e_y - alpha must lie on the simplex")
            return prob.w_of(arr)
        if not np.isfinite(arr).all():
            raise ValueError("warm_start contains NaN or inf")
        return prob.check_coef(arr, "warm_start coef").copy()

    def _take(self, coef, loss_sum, grad_part):
        """The current point: ``coef``, f and grad f from the data's sums."""
        prob = self.problem
        self.coef = coef
        self.f = loss_sum / prob.W + 0.5 * prob.lam * flat_dot(coef, coef)
        self.g = grad_part / prob.W + prob.lam * coef
        self.passes += 1.0

    def _evaluate_at(self, coef):
        """f and grad f at coef (one pass)."""
        self._take(coef, *self.data.evaluate(coef, self.slot))
        self.data.use(self.slot)

    def get_state(self):
        return ({"passes": float(self.passes), "n_iter": int(self.n_iter),
                 "cg_iter": int(self.cg_iter), "finished": bool(self.finished),
                 "g0norm": float(self.g0norm), "last_cg": int(self.last_cg),
                 "n_explicit": int(self.n_explicit), "cd_left": int(self.cd_left),
                 "blocks_on": bool(self.blocks_on), "n_blocks": int(self.n_blocks),
                 "delta": 0.0 if self.delta is None else float(self.delta),
                 "n_rejected": int(self.n_rejected), "eta": float(self.eta),
                 "rows_on": bool(self.rows_on), "rows_next": int(self.rows_next),
                 "n_rows": int(self.n_rows), "rows_last": int(self.rows_last),
                 "g_prev": -1.0 if self.g_prev is None else float(self.g_prev)},
                {"coef": self.coef.copy(),
                 **({} if self.Pcd is None else {"Pcd": self.Pcd.copy()})})

    def set_state(self, meta, arrays):
        self.n_iter = int(meta["n_iter"])
        self.cg_iter = int(meta["cg_iter"])
        self.finished = bool(meta["finished"])
        self.last_cg = int(meta["last_cg"])
        self.n_explicit = int(meta["n_explicit"])
        self.blocks_on = bool(meta.get("blocks_on", self.block_passes == 0.0))
        self.n_blocks = int(meta.get("n_blocks", 0))
        delta = float(meta.get("delta", 0.0))
        self.delta = None if delta == 0.0 else delta
        self.n_rejected = int(meta.get("n_rejected", 0))
        self.rows_on = bool(meta.get("rows_on", self.opts.newton_system == "rows"))
        self.rows_next = int(meta.get("rows_next", ROWS_TRY))
        self.n_rows = int(meta.get("n_rows", 0))
        self.rows_last = int(meta.get("rows_last", 0))
        self.eta = float(meta.get("eta", self.opts.cg_tol))
        g_prev = float(meta.get("g_prev", -1.0))
        self.g_prev = None if g_prev < 0.0 else g_prev
        # with partitions the dual blocks of the start live on the workers, not
        # in the checkpoint: Newton continues from the saved coef
        self.cd_left = int(meta.get("cd_left", 0)) if self.n_partitions is None else 0
        self.Pcd = (np.array(arrays["Pcd"], dtype=np.float64) if "Pcd" in arrays
                    else self._one_hot() if self.cd_left and self.n_partitions is None
                    else None)
        self.passes = 0.0
        self._evaluate_at(np.array(arrays["coef"], dtype=np.float64))
        self.passes = float(meta["passes"])
        self.g0norm = float(meta["g0norm"])

    @property
    def epochs(self):
        if self.finished:
            return max(float(self.passes), float(self.max_epochs))
        return float(self.passes)

    # -------------------------------------------------------- Newton step
    def _hv(self, D):
        """H(D) at the current point (one pass)."""
        self.passes += 1.0
        return self.data.hess_vec(D) / self.problem.W + self.problem.lam * D

    def _newton_direct(self):
        """H s = -g by Cholesky on the explicit Hessian (one pass to form it):
        ``(1/W) [blockdiag_k X^T diag(c p_k) X - G^T G] + lam I`` with the rows
        ``G_i = sqrt(c_i) (x_i kron p_i)`` (coef flattened row-major)."""
        prob = self.problem
        H = self.data.hessian()
        H /= prob.W
        H[np.diag_indices_from(H)] += prob.lam
        self.passes += 1.0
        try:
            cf = scipy.linalg.cho_factor(H, lower=False, check_finite=False)
            s = scipy.linalg.cho_solve(cf, -self.g.ravel(), check_finite=False)
        except (np.linalg.LinAlgError, ValueError):
            return self._cg(0.1)
        if not np.isfinite(s).all():
            return self._cg(0.1)
        return s.reshape(prob.d, prob.K)

    def _diag(self):
        """The diagonal of H (one pass over X squared)."""
        return self.data.diagonal() / self.problem.W + self.problem.lam

    def _blocks(self):
        """``z = M^{-1} r`` with ``M`` the class blocks of H, ``(1/W) X^T diag(c
        p_k (1 - p_k)) X + lam I`` for each class k, Cholesky-factored (one
        pass to form them); None when one cannot be factored."""
        prob = self.problem
        B = self.data.class_blocks()
        B /= prob.W
        idx = np.arange(prob.d)
        B[:, idx, idx] += prob.lam
        self.passes += 1.0
        self.n_blocks += 1
        try:
            fs = [scipy.linalg.cho_factor(B[k], lower=False, check_finite=False)
                  for k in range(prob.K)]
        except (np.linalg.LinAlgError, ValueError):
            return None

        def solve(r):
            z = np.empty_like(r)
            for k, f in enumerate(fs):
                z[:, k] = scipy.linalg.cho_solve(f, r[:, k], check_finite=False)
            return z
        return solve

    def _preconditioner(self, M=None):
        """``r -> M^{-1} r``: the class blocks once a step's CG iterations
        exceed their cost (then for good), else the diagonal of H (``M``
        when given)."""
        if not self.blocks_on and self.last_cg >= self.block_passes:
            self.blocks_on = True
        solve = self._blocks() if self.blocks_on else None
        if solve is None:
            M = self._diag() if M is None else M
            return lambda r: r / M
        return solve

    def _cg_limits(self, eta):
        """CG's stop, ``eta ||g||`` but no further than the gradient norm
        that certifies the target, and its iteration cap: ``max_cg_iter``,
        and the passes left of ``max_epochs`` (a CG iterate is a descent
        direction; the step itself takes one more pass)."""
        prob = self.problem
        stop = max(eta * math.sqrt(flat_dot(self.g, self.g)),
                   CG_FLOOR * math.sqrt(2.0 * prob.lam * self.tol * abs(self.f)))
        cap = self.opts.max_cg_iter or max(50, 2 * prob.d * prob.K)
        return stop, max(1, min(cap, int(self.max_epochs - self.passes) - 1))

    def _cg(self, eta):
        """Preconditioned CG on H s = -g to ||r|| <= eta ||g||."""
        g = self.g
        precond = self._preconditioner()
        s = np.zeros_like(g)
        r = -g
        z = precond(r)
        dvec = z.copy()
        rz = flat_dot(r, z)
        stop, max_it = self._cg_limits(eta)
        it = 0
        while it < max_it and math.sqrt(flat_dot(r, r)) > stop:
            if self._deadline is not None and time.perf_counter() >= self._deadline:
                break                         # a CG iterate is a descent direction
            Hd = self._hv(dvec)
            it += 1
            dHd = flat_dot(dvec, Hd)
            if not dHd > 0.0:                 # H is lam-strongly convex: rounding only
                break
            a = rz / dHd
            s += a * dvec
            r -= a * Hd
            z = precond(r)
            rz_new = flat_dot(r, z)
            dvec = z + (rz_new / rz) * dvec
            rz = rz_new
        self.cg_iter += it
        self.last_cg = it
        return s

    def _iterate(self):
        gnorm = math.sqrt(flat_dot(self.g, self.g))
        if gnorm == 0.0:
            self.finished = True
            return
        s = (self._rows_step() if self.rows_ok and (
            self.rows_on or self.last_cg >= self.rows_next) else None)
        if s is None and self.last_cg >= self.explicit_passes:
            s = self._newton_direct()
            self.n_explicit += 1
        elif s is None:
            if self.trust:
                self.eta = forcing(gnorm, self.g_prev, self.eta, self.opts.cg_tol)
                return trust_step(self, self.eta)
            s = self._cg(min(self.opts.cg_tol, math.sqrt(gnorm / max(self.g0norm, 1e-300))))
        gs = flat_dot(self.g, s)
        if not gs < 0.0:
            self.finished = True
            return
        data, lam, W = self.data, self.problem.lam, self.problem.W
        data.direction(s)
        t = 1.0
        for _ in range(40):
            coef_t = self.coef + t * s
            f_t = data.line_loss(t) / W + 0.5 * lam * flat_dot(coef_t, coef_t)
            if f_t <= self.f + ARMIJO * t * gs:
                trial = 1 - self.slot
                self._take(coef_t, *data.evaluate_step(t, trial, coef_t))
                data.use(trial)
                self.slot = trial
                self.n_iter += 1
                return
            t *= 0.5
        self.finished = True                  # no decrease representable along s

    def _rows_step(self):
        """A Newton step solved in the rows (:class:`RowSpaceSystem`), or
        None: with the row-space steps off until a feature step costs twice
        as much, when it does not converge within its cap or its residual in
        the features (one product) exceeds ROWS_CHECK; as they were, when the
        pass budget left is below a solve's products or the deadline cuts it
        (a partial row solve is no direction; a feature step uses the rest)."""
        prob = self.problem
        # twice the last solve's products (a warm-started leg: the last leg's)
        cap = max(ROWS_CAP, 2 * self.last_cg, 2 * self.rows_last * self.rows_on)
        if self.opts.max_cg_iter:
            cap = min(cap, int(self.opts.max_cg_iter))
        left = int(self.max_epochs - self.passes) - 3
        if left < 1 or (self.rows_on and left < min(cap, self.rows_last)):
            return None             # the budget's end: a feature step takes the rest
        if self.XT is None:
            self.XT = prob.X.T.tocsr() if sp.issparse(prob.X) else prob.X.T
        P = self._one_hot() - self.data.dual()
        system = RowSpaceSystem(prob.X, self.XT, prob.rows.sqnorm, P, prob.sample_weight,
                                prob.W, prob.lam)
        deadline = self._deadline
        late = None if deadline is None else (lambda: time.perf_counter() >= deadline)
        s, it, converged = system.solve(self.g, min(cap, left), late)
        self.passes += 1.0 + it
        self.cg_iter += it
        if not converged and (left < cap or (late is not None and late())):
            return None             # cut by the budget or the deadline: rows as they were
        r = self._hv(s) + self.g
        if converged and flat_dot(r, r) <= ROWS_CHECK ** 2 * flat_dot(self.g, self.g):
            self.rows_on, self.last_cg, self.rows_last = True, it, it
            self.n_rows += 1
            return s
        self.rows_on = False
        self.rows_next = 2 * max(self.rows_next, it)
        return None

    def advance(self, n_epochs, deadline):
        self._deadline = deadline
        if self.cd_left > 0:
            dual_cd_start(self, deadline)
            return
        target = self.passes + max(1.0, n_epochs)
        while self.passes < target - 1e-9 and not self.finished \
                and self.passes < self.max_epochs - 1e-9:
            self._iterate()
            if not math.isfinite(self.f):
                raise FloatingPointError(
                    f"{self.name} produced a non-finite objective after {self.passes:g} "
                    f"passes; scale the features")
            if deadline is not None and time.perf_counter() >= deadline:
                break
        self.steps = self.n_iter
        self.feature_accesses = int(self.passes * self.problem.nnz)

    # -------------------------------------------------------- certificate
    def certificate(self):
        """``alpha = Y - P`` at the current point: ``D = (1/W) sum_i c_i
        entropy(p_i) - ||V||^2 / (2 lam)`` with ``V = lam coef - grad f``,
        from the current point's probabilities (no pass)."""
        prob = self.problem
        V = prob.lam * self.coef - self.g
        dual = self.data.entropy() / prob.W - flat_dot(V, V) / (2.0 * prob.lam)
        return Certificate(w=self.coef.copy(), alpha=self.data.dual(), primal=float(self.f),
                           dual=dual, v=V, margins=self.data.scores())

    def _evaluate(self, w):
        return _multiclass_eval(self, w)

    def run(self):
        """The shared loop with BLAS on one thread (the solver is serial)."""
        with serial_blas():
            return super().run()

    def trace_extras(self):
        out = {"newton_iter": int(self.n_iter), "cg_iter": int(self.cg_iter),
               "explicit_steps": int(self.n_explicit), "block_steps": int(self.n_blocks)}
        if self.rows_ok:
            out.update(rows_steps=int(self.n_rows), rows_on=int(self.rows_on),
                       rows_next=int(self.rows_next), rows_last=int(self.rows_last))
        if self.trust:
            out["trust_radius"] = abs(float(self.delta or 0.0))
            out["rejected_steps"] = int(self.n_rejected)
        if self.n_partitions is not None:
            out["partitions"] = int(self.n_partitions)
            out.update(self.data.info())
        return out


def _multiclass_eval(solver, coef):
    """``test_error`` on the eval set: argmax of the scores."""
    if solver.eval_set is None:
        return {}
    Xt, yt = solver.eval_set
    pred = np.argmax(np.asarray(Xt @ coef), axis=1)
    return {"test_error": float(np.mean(pred != yt))}
