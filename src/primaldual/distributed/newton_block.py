"""The passes of truncated Newton-CG on contiguous row partitions.

The Newton driver (:class:`~primaldual.solvers.newton.NewtonSolver`) needs
from the data only sums over rows at a point ``w`` (Lin, Weng & Keerthi 2008;
distributed as in MPI-LIBLINEAR, Zhuang, Chin, Juan & Lin 2015)::

    evaluate(w)        sum_i c_i phi(x_i . w),  sum_i c_i phi'(x_i . w) x_i
                       (and keeps the margins and D_i = c_i phi''(x_i . w))
    hess_vec(v)        sum_i D_i (x_i . v) x_i
    hessian()          sum_i D_i x_i x_i^T / W
    line_derivatives(t)  slope and curvature of f along the last step
    dual()             alpha_i = -phi'(x_i . w) and sum_i c_i (-phi*(-alpha_i))

Each sum splits over row partitions: partition ``k`` computes its part from
its own rows, and the parts are added in partition order.  A
:class:`NewtonBlock` holds the rows of one or several partitions and returns
one part per partition; :class:`BlockNewtonData` adds them up for a driver
in this process (the serial solver is one partition), and a Dask actor holds
one block of one partition (:mod:`primaldual.distributed.newton_rounds`), so
in process and on Dask the same kernels run on the same rows and the parts
are added in the same order: the same numbers.

The block keeps two *slots* of margins and curvatures: the current point and
a trial point.  ``evaluate(w, slot)`` fills one, ``use(slot)`` makes it
current; both are idempotent, so a call repeated after a lost worker leaves
every partition in the same state.
"""
from __future__ import annotations

import numpy as np
import scipy.linalg

from .._util.seeding import partition_stream
from ..kernels.newton import (fun_grad, hess_sparse, hess_vec, line_derivatives,
                              primal_dual_point, row_nnz_squares)
from ..kernels.objective import weighted_sum
from ..kernels.sdca import STATUS_OK
from ..kernels.views import RowsView, StepSpec
from ..losses.dispatch import BUILTIN
from .local_precond import LocalSolve, dual_cd_solve
from .local_sdca import local_sdca_round

__all__ = ["NewtonBlock", "BlockNewtonData", "add_parts", "add_pairs", "join_duals",
           "average_directions", "join_local_sdca",
           "weighted_mean",
           "explicit_hessian_pays", "contiguous_partitions", "dot", "normal_equations"]

#: hessian="auto" forms H explicitly when d is at most this ...
EXPLICIT_MAX_D = 2000
#: ... and forming it costs at most this many passes' worth of flops
#: (dense: n d^2 / (n d) = d, through BLAS; sparse: sum_i nnz_i^2 / nnz)
EXPLICIT_MAX_COST = 300.0

#: the dense Hessian X^T diag(curv) X is formed from the rows of nonzero
#: curvature only when they are at most this fraction of the partition's rows
#: (gathering them costs a copy)
ACTIVE_ROWS_GATHER = 0.5


def explicit_hessian_pays(problem) -> bool:
    """hessian="auto": form H when d <= EXPLICIT_MAX_D and one formation costs at
    most EXPLICIT_MAX_COST passes' worth of flops (dense: d; sparse:
    sum_i nnz_i^2 / nnz)."""
    prob = problem
    if prob.d > EXPLICIT_MAX_D or prob.nnz == 0:
        return False
    if prob.rows.is_sparse:
        cost = float(row_nnz_squares(prob.rows.indptr)) / prob.nnz
    else:
        cost = float(prob.d)
    return cost <= EXPLICIT_MAX_COST


def dot(a, b):
    """a . b by a compiled loop: BLAS ``ddot`` starts its threads for long
    vectors, which on a loaded machine was measured at 26 ms for d = 47,236
    (about 20 times a Hessian-vector product of 400,000 nonzeros)."""
    return float(weighted_sum(a, b))


def contiguous_partitions(n, K):
    """Boundaries (K+1,) of ``n`` rows in ``K`` contiguous partitions whose
    sizes differ by at most one (as the distributed engines split them)."""
    sizes = np.array([len(a) for a in np.array_split(np.arange(n), K)], np.int64)
    return np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)


def normal_equations(problem):
    """``w = (X^T C X / W + lam I)^{-1} X^T C y / W`` for dense rows (the squared
    loss's optimum): BLAS and a Cholesky factorization of the system scaled to
    unit diagonal; zeros when it cannot be factored (the caller iterates)."""
    X = np.asarray(problem.rows.X, dtype=np.float64)
    c = problem.sample_weight / problem.W
    Xs = X * np.sqrt(c)[:, None]
    H = Xs.T @ Xs
    H[np.diag_indices_from(H)] += problem.lam
    scale = 1.0 / np.sqrt(np.diag(H))
    try:
        cf = scipy.linalg.cho_factor(H * scale[:, None] * scale[None, :], check_finite=False)
        w = scale * scipy.linalg.cho_solve(cf, scale * (X.T @ (c * problem.y)),
                                           check_finite=False)
    except (np.linalg.LinAlgError, ValueError):
        return np.zeros(problem.d)
    return w if np.isfinite(w).all() else np.zeros(problem.d)


def add_pairs(parts):
    """``(sum of firsts, sum of seconds)`` of per-partition scalar pairs, in
    partition order (a line search's slope and curvature)."""
    d1 = d2 = 0.0
    for a, b in parts:
        d1 += a
        d2 += b
    return d1, d2


def weighted_mean(parts):
    """``sum_k W_k z_k / sum_k W_k`` of per-partition ``(W_k, z_k)``, added in
    partition order (the averaged local preconditioner)."""
    total = np.zeros_like(np.asarray(parts[0][1], dtype=np.float64))
    weight = 0.0
    for Wk, z in parts:
        total += Wk * z
        weight += Wk
    return total / weight if weight > 0.0 else total


def average_directions(parts):
    """``(weighted mean of the s_k, the most local steps, local passes)`` of
    per-partition ``(W_k, s_k, steps, passes)``; the partitions solve at once,
    so the local passes are the slowest partition's, in passes over its rows."""
    mean = weighted_mean([(Wk, s) for Wk, s, _, _ in parts])
    steps = max(it for _, _, it, _ in parts)
    passes = max(p for _, _, _, p in parts)
    return mean, int(steps), float(passes)


def join_local_sdca(parts, part_ptr):
    """``(status, bad_row, sum_k v_k)`` of per-partition ``(status, bad_row_k,
    v_k)`` (rows numbered within partitions): the first failure, its row in
    the whole block's numbering, or ``STATUS_OK``."""
    for k, (status, bad, _) in enumerate(parts):
        if status != STATUS_OK:
            return status, int(part_ptr[k]) + bad, None
    return STATUS_OK, -1, add_parts([v for _, _, v in parts])


def join_duals(parts):
    """``(sum of the conjugate parts, alpha of every partition in order)``
    from per-partition ``(conj, alpha_k)``."""
    conj = 0.0
    for c, _ in parts:
        conj += c
    return conj, np.concatenate([alpha for _, alpha in parts])


def add_parts(parts):
    """``parts[0] + parts[1] + ...`` in that order, from zero (the one order
    every backend adds partition parts in)."""
    total = np.zeros_like(np.asarray(parts[0], dtype=np.float64))
    for p in parts:
        total += p
    return total


class NewtonBlock:
    """Rows ``part_ptr[0]..part_ptr[-1]`` of a problem split into partitions.

    Parameters
    ----------
    rows : Rows        the block's rows (local numbering from 0)
    y, cw : arrays     labels and sample weights of those rows
    part_ptr : int64 array (K+1,)   local partition boundaries, ``part_ptr[0] == 0``
    kind, param : the loss's kernel code and parameter
    W : float          the global weight sum (the Hessian's scale)
    loss : Loss or None    the loss itself, for a loss module outside the registry
                       (the kernels are compiled for it)
    first_part : int   the index of the block's first partition among all of them:
                       partition ``k`` of the block draws its random orders from
                       stream ``first_part + k`` of the seed it is given
                       (:func:`~primaldual._util.seeding.partition_stream`)
    """

    def __init__(self, rows, y, cw, part_ptr, kind, param, W, loss=None, first_part=0):
        self.first_part = int(first_part)
        self.rows = rows
        self.y = np.ascontiguousarray(y, dtype=np.float64)
        self.cw = np.ascontiguousarray(cw, dtype=np.float64)
        self.part_ptr = np.asarray(part_ptr, dtype=np.int64)
        self.K = self.part_ptr.shape[0] - 1
        self.kind = int(kind)
        self.param = float(param)
        self.W = float(W)
        n, d = rows.n, rows.d
        self.margins = [np.zeros(n), np.zeros(n)]
        self.curv = [np.zeros(n), np.zeros(n)]
        self.current = 0
        self._out = np.empty((self.K, d))
        self._dense_buf = None
        self._local = None
        self._point = 0             # counts evaluations: names the curvatures
        compiled = (lambda f: f) if loss is None else loss.kernel
        self._fun_grad = compiled(fun_grad)
        self._line_derivatives = compiled(line_derivatives)
        self._primal_dual_point = compiled(primal_dual_point)

    def _bounds(self):
        return zip(self.part_ptr[:-1].tolist(), self.part_ptr[1:].tolist())

    def _view(self, a, b):
        r = self.rows
        return r.data, r.indices, r.indptr[a:b + 1], r.iptr[a:b + 1]

    # ------------------------------------------------------------ passes
    def evaluate(self, w, slot):
        """One pass at ``w`` into ``slot``: per partition ``(sum c_i phi_i,
        sum c_i phi'_i x_i)``."""
        w = np.ascontiguousarray(w, dtype=np.float64)
        self._point += 1
        m, c = self.margins[slot], self.curv[slot]
        out = []
        for k, (a, b) in enumerate(self._bounds()):
            g = self._out[k]
            loss_sum = self._fun_grad(*self._view(a, b), self.y[a:b], self.cw[a:b], w,
                                self.kind, self.param, m[a:b], g, c[a:b])
            out.append((float(loss_sum), g.copy()))
        return out

    def use(self, slot):
        """Make ``slot`` the current point (the Hessian's and the certificate's)."""
        self.current = int(slot)
        return True

    def hess_vec(self, v):
        """Per partition ``sum_i D_i (x_i . v) x_i`` at the current point."""
        v = np.ascontiguousarray(v, dtype=np.float64)
        c = self.curv[self.current]
        out = []
        for k, (a, b) in enumerate(self._bounds()):
            hv = self._out[k]
            hess_vec(*self._view(a, b), c[a:b], v, hv)
            out.append(hv.copy())
        return out

    def hessian(self):
        """Per partition ``sum_i D_i x_i x_i^T / W`` (d x d) at the current point:
        BLAS on ``sqrt(D / W) X_k`` for dense rows, the compiled sum for CSR."""
        r = self.rows
        c = self.curv[self.current]
        d = r.d
        out = []
        for a, b in self._bounds():
            H = np.empty((d, d))
            if r.is_sparse:
                hess_sparse(*self._view(a, b), c[a:b], H)
                H /= self.W
            else:
                if self._dense_buf is None or self._dense_buf.shape[0] < b - a:
                    self._dense_buf = np.empty((int(np.diff(self.part_ptr).max()), d))
                scale = np.sqrt(c[a:b] / self.W)
                rows = np.flatnonzero(scale)
                if rows.size <= ACTIVE_ROWS_GATHER * (b - a):
                    # piecewise-quadratic losses (squared hinge, smoothed hinge):
                    # rows outside the margin have curvature 0 and add nothing,
                    # so the product runs over the others (near the optimum
                    # often a few percent of the rows)
                    buf = self._dense_buf[:rows.size]
                    np.multiply(r.X[a + rows], scale[rows, None], out=buf)
                else:
                    buf = self._dense_buf[:b - a]
                    np.multiply(r.X[a:b], scale[:, None], out=buf)
                np.dot(buf.T, buf, out=H)
            out.append(H)
        return out

    def precondition(self, r, lam_mu, sweeps, coarse, parts=None):
        """Per partition ``k`` in ``parts`` (default all) ``(W_k, z_k)`` with
        ``z_k ~ (H_k + mu I)^{-1} r``, ``H_k = sum_{i in k} D_i x_i x_i^T / W_k +
        lam I`` the Hessian at the current point estimated from partition
        ``k``'s rows alone (``W_k`` their weight), ``lam_mu = lam + mu``: a
        coarse solve on ``coarse`` columns and ``sweeps`` symmetric
        Gauss-Seidel sweeps (:class:`~primaldual.distributed.local_precond.LocalSolve`)."""
        r = np.ascontiguousarray(r, dtype=np.float64)
        c = self.curv[self.current]
        bounds = list(self._bounds())
        self._local_solves(coarse)
        out = []
        for k in (range(self.K) if parts is None else parts):
            a, b = bounds[k]
            Wk = float(self.cw[a:b].sum())
            if Wk > 0.0:
                z = self._local[1][k].apply(r, c[a:b] / Wk, float(lam_mu), sweeps,
                                            (self._point, self.current, float(lam_mu)))
            else:
                z = r / lam_mu
            out.append((Wk, z))
        return out

    def local_newton(self, g, lam, sweeps, coarse, tol, max_iter, solver="cg", seed=0):
        """Per partition ``(W_k, s_k, steps, passes)``: ``s_k ~ -H_k^{-1} g`` with
        ``H_k = sum_{i in k} D_i x_i x_i^T / W_k + lam I`` the Hessian at the
        current point estimated from partition ``k``'s rows alone (GIANT's
        local Newton direction); ``passes`` over the partition's rows.
        ``solver="cg"``: local preconditioned CG to ``||res|| <= tol ||g||``
        (:meth:`LocalSolve.solve`, ``steps`` its CG steps); ``"sdca"``: dual
        coordinate ascent to a duality gap of ``tol`` times the dual's
        (:func:`~primaldual.distributed.local_precond.dual_cd_solve`, each
        epoch's permutation drawn from the partition's stream of ``seed``,
        ``steps`` its epochs)."""
        g = np.ascontiguousarray(g, dtype=np.float64)
        c = self.curv[self.current]
        bounds = list(self._bounds())
        if solver == "cg":
            self._local_solves(coarse)
        out = []
        for k, (a, b) in enumerate(bounds):
            Wk = float(self.cw[a:b].sum())
            if not Wk > 0.0:
                s, it, passes = -g / lam, 0, 0.0
            elif solver == "sdca":
                r = self.rows
                view = RowsView(r.data, r.indices, r.indptr[a:b + 1], r.iptr[a:b + 1],
                                np.asarray(r.sqnorm[a:b], dtype=np.float64), self.y[a:b],
                                self.cw[a:b])
                s, it, passes = dual_cd_solve(view, c[a:b] / Wk, g, float(lam), float(tol),
                                              int(max_iter),
                                              partition_stream(seed, self.first_part + k))
            else:
                s, it, passes = self._local[1][k].solve(
                    -g, c[a:b] / Wk, float(lam), int(sweeps),
                    (self._point, self.current, float(lam)), float(tol), int(max_iter))
            out.append((Wk, s, int(it), float(passes)))
        return out

    def local_sdca(self, lam, epochs, seed):
        """Per partition ``(status, bad_row, v_k)`` (``bad_row`` within the
        partition): ``epochs`` SDCA passes (random permutations from the
        partition's stream of ``seed``) from ``alpha = 0`` on the partition's own
        problem ``(1/W_k) sum_{i in k} c_i phi_i + lam/2 ||w||^2``, as one
        CoCoA+ round with ``sigma' = W / W_k`` (:func:`local_sdca_round`);
        ``v_k = (1/W) sum_{i in k} c_i alpha_i x_i``, so ``sum_k v_k / lam`` is
        the primal point of the joined local duals (CoCoA+'s first round)."""
        r = self.rows
        sqnorm = np.asarray(r.sqnorm, dtype=np.float64)
        view = RowsView(r.data, r.indices, r.indptr, r.iptr, sqnorm, self.y, self.cw)
        spec = StepSpec(self.kind, self.param, float(lam), 0.0, 1.0 / self.W)
        alpha = np.zeros(r.n)
        logit = np.full(r.n if BUILTIN[self.kind].STEP_CACHE else 0, np.nan)
        v = np.zeros(r.d)
        out = []
        for k, (a, b) in enumerate(self._bounds()):
            Wk = float(self.cw[a:b].sum())
            vk = np.zeros(r.d)
            if Wk > 0.0 and b > a:
                status, bad, _, cols, vals = local_sdca_round(
                    view, spec, alpha, v, logit, a, b, int(epochs) * (b - a), self.W / Wk,
                    1.0, partition_stream(seed, self.first_part + k))
                if status != STATUS_OK:
                    out.append((int(status), int(bad) - a, vk))
                    continue
                vk[cols] = vals
            out.append((STATUS_OK, -1, vk))
        return out

    def _local_solves(self, coarse):
        if self._local is None or self._local[0] != coarse:
            self._local = (coarse, [LocalSolve(self.rows.X[a:b], self._view(a, b),
                                               self.rows.sqnorm[a:b], coarse)
                                    for a, b in self._bounds()])

    def line_derivatives(self, t):
        """Per partition the data part of the slope and curvature of ``f`` at
        ``w + t s``, where ``s`` is the step from the current point to the
        other slot's (``X s`` is the difference of the two slots' margins)."""
        cur, other = self.margins[self.current], self.margins[1 - self.current]
        out = []
        for a, b in self._bounds():
            d1, d2 = self._line_derivatives(self.y[a:b], self.cw[a:b], cur[a:b], other[a:b],
                                      float(t), self.kind, self.param)
            out.append((float(d1), float(d2)))
        return out

    def dual(self):
        """Per partition ``(sum_i c_i (-phi*(-alpha_i)), alpha_k)`` with
        ``alpha_i = -phi'(x_i . w)`` at the current point."""
        m = self.margins[self.current]
        out = []
        for a, b in self._bounds():
            alpha = np.empty(b - a)
            conj = self._primal_dual_point(self.y[a:b], self.cw[a:b], m[a:b], self.kind,
                                     self.param, alpha)
            out.append((float(conj), alpha))
        return out


class BlockNewtonData:
    """The data of a Newton driver in this process: a :class:`NewtonBlock`
    of ``K`` partitions whose parts are added in partition order (``K = 1``:
    the serial solver).  Every method returns the sum over partitions."""

    backend = "local"

    def __init__(self, problem, part_ptr):
        self.problem = problem
        self.part_ptr = np.asarray(part_ptr, dtype=np.int64)
        self.K = self.part_ptr.shape[0] - 1
        self.block = NewtonBlock(problem.rows, problem.y, problem.sample_weight,
                                 self.part_ptr, problem.loss.code, problem.loss.param,
                                 problem.W, loss=problem.loss)
        self.reductions = 0
        #: calls to the partitions (as a Dask run makes them: one round trip each)
        self.calls = 0

    def evaluate(self, w, slot):
        self.calls += 1
        parts = self.block.evaluate(w, slot)
        self.reductions += 1
        loss_sum = 0.0
        for ls, _ in parts:
            loss_sum += ls
        return loss_sum, add_parts([g for _, g in parts])

    def use(self, slot):
        self.calls += 1
        self.block.use(slot)

    def hess_vec(self, v):
        self.calls += 1
        self.reductions += 1
        return add_parts(self.block.hess_vec(v))

    def hessian(self):
        self.calls += 1
        self.reductions += 1
        return add_parts(self.block.hessian())

    def precondition(self, r, lam_mu, sweeps, coarse, first_only):
        """The local preconditioner averaged over the partitions (one round), or
        partition 0's alone, computed by the driver (DiSCO's master: no round):
        :meth:`NewtonBlock.precondition`."""
        if not first_only:
            self.calls += 1
            self.reductions += 1
        return weighted_mean(self.block.precondition(r, lam_mu, sweeps, coarse,
                                                     [0] if first_only else None))

    def local_newton(self, g, lam, sweeps, coarse, tol, max_iter, solver="cg", seed=0):
        """GIANT's averaged local Newton direction (one round):
        ``(sum_k W_k s_k / W, max_k steps_k, max_k passes_k)`` from
        :meth:`NewtonBlock.local_newton`."""
        self.calls += 1
        self.reductions += 1
        return average_directions(self.block.local_newton(g, lam, sweeps, coarse, tol,
                                                          max_iter, solver, seed))

    def local_sdca(self, lam, epochs, seed):
        """CoCoA+'s first round (one round): ``(status, bad_row, sum_k v_k)``
        from :meth:`NewtonBlock.local_sdca`, ``bad_row`` in the block's numbering."""
        self.calls += 1
        self.reductions += 1
        return join_local_sdca(self.block.local_sdca(lam, epochs, seed), self.part_ptr)

    def line_derivatives(self, t):
        self.calls += 1
        return add_pairs(self.block.line_derivatives(t))

    def dual(self):
        self.calls += 1
        return join_duals(self.block.dual())

    def margins(self):
        return self.block.margins[self.block.current].copy()

    def info(self):
        return {"calls": int(self.calls)}
