"""Distributed Newton with locally preconditioned conjugate gradient (DiSCO).

Zhang & Xiao, "DiSCO: Distributed optimization for self-concordant empirical
loss", ICML 2015; the averaged local preconditioner and ``direction="giant"``
(the partitions' local Newton directions averaged) follow GIANT (Wang,
Roosta-Khorasani, Xu & Mahoney, NeurIPS 2018).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from .._util.cg import pcg
from ..distributed.newton_block import NewtonBlock, dot
from ..kernels.sdca import STATUS_OK
from ..rows import as_rows
from ._base import register
from ._options import choice, number
from .newton import ETA0, NewtonOptions, NewtonSolver

__all__ = ["DiscoSolver", "DiscoOptions", "GIANT_CG_MAX_D"]

#: local_solver="auto" solves GIANT's local systems by CG up to this many
#: columns (its steps are at most d, and the coarse solve covers much of a
#: small d: a9a, d = 123, 0.4-0.7x the local passes of dual coordinate
#: ascent at K = 4 and 8, 1.3x at K = 2), else by dual coordinate ascent
#: (the text and reuters: 0.16-0.24x CG's; docs/distributed.md)
GIANT_CG_MAX_D = 1000


@dataclass(frozen=True)
class DiscoOptions(NewtonOptions):
    """The options of :class:`DiscoSolver` (see its docstring)."""

    solver_name = "disco"
    hessian: str = choice("matvec", "matvec",
                          doc="Hessian-vector products (the preconditioner needs them)")
    globalization: str = choice("line_search", "line_search",
                                doc="LIBLINEAR's line search (no trust region)")
    cg_tol: float = number(0.1, low=0.0, high=1.0, high_strict=True,
                           doc="PCG stops at ||r|| <= cg_tol ||grad f||")
    precond_mu: float | str = number("auto", low=0.0, strict=False, also=("auto",),
                                     doc="mu added to the local Hessians; auto: lam "
                                         "(direction='giant': 0)")
    precond_sweeps: int = number(1, integer=True, low=1.0, strict=False,
                                 doc="symmetric Gauss-Seidel sweeps of a local solve "
                                     "(each two passes over the partition)")
    precond_coarse: int = number(32, integer=True, low=0.0, strict=False,
                                 doc="columns of the coarse solve (the most frequent)")
    preconditioner: str = choice("first", "first", "average",
                                 doc="partition 0's local solve, on the driver (DiSCO), "
                                     "or every partition's averaged (GIANT)")
    direction: str = choice("pcg", "pcg", "giant",
                            doc="Newton step: CG on the whole Hessian (DiSCO) or the "
                                "partitions' local directions averaged (GIANT)")
    local_tol: float = number(1e-2, low=0.0, high=1.0, high_strict=True,
                              doc="direction='giant': each local CG stops at "
                                  "||res|| <= local_tol ||grad f||")
    local_max_iter: int = number(200, integer=True, low=1.0, strict=False,
                                 doc="direction='giant': local CG steps (or SDCA "
                                     "epochs) at most")
    local_solver: str = choice("auto", "auto", "cg", "sdca",
                               doc="direction='giant': local Newton systems by CG or "
                                   "dual coordinate ascent; auto: CG when d <= 1000")
    local_gap: float = number(0.1, low=0.0, high=1.0, high_strict=True,
                              doc="local_solver='sdca': stop at a local duality gap "
                                  "<= local_gap times the local dual's magnitude")
    init_epochs: int | str = number("auto", integer=True, low=0.0, strict=False,
                                    also=("auto",),
                                    doc="local SDCA passes of a CoCoA+ first round to start "
                                        "from (auto: 3 for giant, else 0)")


@register
class DiscoSolver(NewtonSolver):
    """Newton-CG whose CG is preconditioned by the partitions' local Hessians.

    Problem: ``min_w P(w) = (1/W) sum_i c_i phi(x_i . w; y_i) + lam/2 ||w||^2``
    (docs/conventions.md §1), ``l1 = 0``, a loss with a (generalized) Hessian
    (``logistic``, ``squared_hinge``, ``squared``, ``smooth_hinge``,
    ``squared_epsilon_insensitive``), as
    :class:`~primaldual.solvers.newton.NewtonSolver` solves it, and with its
    line search, passes, certificate (``alpha_i = -phi'(x_i . w)``), warm
    starts, partitions and Dask engine.

    The Newton system ``H s = -grad f`` is solved by preconditioned CG
    (Zhang & Xiao, ICML 2015, Algorithm 2) to ``||r|| <= cg_tol ||grad f||``.
    The preconditioner of partition ``k`` is ``H_k + mu I``, with
    ``H_k = (1/W_k) sum_{i in k} D_i x_i x_i^T + lam I`` the Hessian estimated
    from its rows alone (``D_i = c_i phi''(x_i . w)``, ``W_k`` their weight);
    DiSCO solves it on one machine by local SDCA.  Here each partition applies
    ``precond_sweeps`` symmetric Gauss-Seidel sweeps from zero to the dual of
    that ridge system (SDCA's exact coordinate step for the squared loss, in
    the order ``0..n_k-1`` and back; :mod:`primaldual.kernels.precond`): a
    fixed, symmetric, positive definite linear map, so CG keeps its
    guarantees.  ``preconditioner="first"`` (default) uses partition 0's, as
    DiSCO does: its rows stay on the driver (on Dask the client keeps a copy
    of partition 0 when the rows are in this process, and asks partition 0's
    worker otherwise), so a CG step costs one round, the ``H v``.
    ``"average"`` averages every partition's solve weighted by ``W_k`` (one
    more round a CG step, all workers at once; GIANT's averaging, Wang et al.
    NeurIPS 2018).  The preconditioned system's condition number is set by
    how well the preconditioning rows represent all of them, not by
    ``||H|| / lam``, so the CG steps stop growing with the conditioning
    (docs/distributed.md, benchmarks/results/cluster-model.md).

    ``direction="giant"`` replaces the PCG by GIANT's step (Wang, Roosta,
    Xu & Mahoney, NeurIPS 2018: the average of the workers' approximate
    Newton directions, with a line search): every partition solves its own Newton
    system ``(H_k + mu I) s_k = -grad f`` (``mu = 0`` by default), at once,
    and the step is ``sum_k W_k s_k / W`` (one round).  The local solver
    (``local_solver``; ``"auto"``: ``"cg"`` when ``d <= 1000``, else
    ``"sdca"``) is either CG preconditioned as above, from zero, to ``||res||
    <= local_tol ||grad f||`` (``2 sweeps + 3`` passes over the partition's
    rows a step), or dual coordinate ascent on the local quadratic ``min_s
    1/2 s^T (H_k + mu I) s + grad f . s``, whose dual in ``beta`` (one a row)
    gives ``s = -(grad f + sum_{i in k} beta_i x_i) / (lam + mu)``:
    SDCA's exact steps for the squared loss (Shalev-Shwartz & Zhang 2013),
    from ``beta = 0``, each epoch (one pass over the partition's rows) in a
    new random order, until the epoch's summed duality gap is at most
    ``local_gap`` times the local dual's magnitude
    (:func:`~primaldual.kernels.precond.dual_cd`); its epochs do not grow
    with ``||H|| / lam`` when the rows are short against ``lam n_k`` (the
    text: 20-26 local passes where CG makes 93-113).  The line search
    runs along the step on the margins of ``w + s`` (one pass, whose
    gradient is the next iteration's when the full step is taken).  An
    iteration then costs one or two passes over all rows however ill
    conditioned ``H`` is; its local work is the local solver's.  It converges fast
    where each partition's rows estimate the Hessian well (many rows a
    partition per effective dimension: text at ``lam n`` near 1) and
    linearly, slower, where they do not (``d`` above the rows of a
    partition, few rows a partition).  Without a warm start it starts (by
    default, ``init_epochs=3``) at CoCoA+'s first round: every partition runs
    3 SDCA passes on its own problem ``(1/W_k) sum_{i in k} c_i phi_i + lam/2
    ||w||^2`` at once, and ``w`` is the primal point ``(1/(lam W)) sum_i c_i
    alpha_i x_i`` of the joined local duals (one round, no pass over all rows;
    Ma et al. 2015, adding with ``sigma' = K``), which saves Newton steps where
    ``w = 0`` is far from the optimum (reuters at ``lam n = 0.08``, K = 2:
    12 passes over all rows against 16 from zero).

    Passes (``n_epochs``): each evaluation of ``f`` and ``grad f`` and each
    ``H v`` is one pass and one round (``trace[-1]["reductions"]``); each
    preconditioner application adds ``2 sweeps + 2`` passes (``2`` for the
    coarse solves) over the rows it runs on: ``n_0 / n`` of them for
    ``"first"``, all for ``"average"`` (the partitions at once), counted in
    ``trace[-1]["precond_passes"]``; with ``direction="giant"`` the local
    CG's passes (the slowest partition's, over its own rows) are counted
    there (the local SDCA's epochs likewise; ``trace[-1]["cg_iter"]``
    counts the local CG steps or epochs).  ``n_epochs - precond_passes`` are
    the passes over all rows.
    ``trace[-1]["calls"]`` counts every round trip.

    Options
    -------
    cg_tol : float, default 0.1
    precond_mu : float or "auto", default "auto" (``lam``; 0 for ``"giant"``)
    precond_sweeps : int, default 1
    precond_coarse : int, default 32
    preconditioner : {"first", "average"}, default "first"
    direction : {"pcg", "giant"}, default "pcg"
    local_tol : float, default 1e-2 (``direction="giant"``)
    local_max_iter : int, default 200 (``direction="giant"``: CG steps or epochs)
    local_solver : {"auto", "cg", "sdca"}, default "auto" (``direction="giant"``)
    local_gap : float, default 0.1 (``local_solver="sdca"``)
    init_epochs : int or "auto", default "auto" (3 for ``"giant"``, else 0)
    n_partitions, client, round_timeout, max_recoveries, max_cg_iter
        As :class:`~primaldual.solvers.newton.NewtonSolver`'s; without
        partitions or a client the whole data is one partition.
    """

    name = "disco"
    summary = "Newton-CG preconditioned by local Hessians (DiSCO, Zhang & Xiao 2015)"
    options_class = DiscoOptions
    default_max_epochs = 1000

    def setup(self):
        super().setup()
        o = self.opts
        self.giant = o.direction == "giant"
        auto_mu = 0.0 if self.giant else self.problem.lam
        self.mu = auto_mu if o.precond_mu == "auto" else float(o.precond_mu)
        self.sweeps = int(o.precond_sweeps)
        self.first_only = o.preconditioner == "first"
        self.coarse = int(o.precond_coarse)
        self.local_tol = float(o.local_tol)
        self.local_max_iter = int(o.local_max_iter)
        self.local_solver = o.local_solver
        if self.local_solver == "auto":
            self.local_solver = "cg" if self.problem.d <= GIANT_CG_MAX_D else "sdca"

    def _choose_explicit(self, mode):
        return False

    def _make_data(self):
        """The Newton data; with ``preconditioner="first"`` on Dask and the rows
        in this process, partition 0's rows also on the client, which
        preconditions by itself (DiSCO's master)."""
        data = super()._make_data()
        if self.first_only and data.backend == "dask" and not self.distributed_input:
            prob = self.problem
            b = int(data.part_ptr[1])
            data.driver_block = NewtonBlock(as_rows(prob.rows.X[:b]), prob.y[:b],
                                            prob.sample_weight[:b], [0, b], prob.loss.code,
                                            prob.loss.param, prob.W)
        return data

    def init_state(self, warm_start):
        self.precond_passes = 0.0
        self._init_local = 0.0
        super().init_state(warm_start)
        self.passes += self._init_local
        self.precond_passes += self._init_local

    def _warm_point(self):
        """A warm start's point; else with ``init_epochs`` CoCoA+'s first round
        (adding, ``sigma' = W / W_k``, from ``alpha = 0``): every partition runs
        ``init_epochs`` SDCA passes on its own rows at once (one round), and
        ``w = (1/(lam W)) sum_i c_i alpha_i x_i`` of the joined local duals."""
        w0 = super()._warm_point()
        epochs = self.opts.init_epochs
        builtin = self.problem.loss.builtin
        epochs = (3 if self.giant and builtin else 0) if epochs == "auto" else int(epochs)
        if epochs and not builtin:
            raise ValueError(f"init_epochs={epochs} runs SDCA's kernels, compiled for the "
                             f"registered losses only, not {self.problem.loss.name!r}: "
                             f"set init_epochs=0")
        if w0 is not None or epochs == 0:
            return w0
        if self.data is None:
            self.data = self._make_data()
        lam = self.problem.lam
        status, bad, v = self.data.local_sdca(lam, epochs, int(self.rng.integers(2**31)))
        if status != STATUS_OK:
            raise FloatingPointError(f"disco: the local SDCA of init_epochs={epochs} failed "
                                     f"(status {status}) at row {bad}: scale the features "
                                     f"or set init_epochs=0")
        self._init_local = float(epochs)
        return v / lam

    def get_state(self):
        meta, arrays = super().get_state()
        meta["precond_passes"] = float(self.precond_passes)
        meta["passes"] = float(self.passes)     # local passes come in fractions
        return meta, arrays

    def set_state(self, meta, arrays):
        self.precond_passes = float(meta.get("precond_passes", 0.0))
        super().set_state(meta, arrays)
        self.passes = float(meta["passes"])

    def _precondition(self, r):
        """``M r``: the partitions' local solves (one round), or partition 0's
        on the driver."""
        data = self.data
        z = data.precondition(r, self.problem.lam + self.mu, self.sweeps, self.coarse,
                              self.first_only)
        share = 1.0
        if self.first_only:
            share = float(data.part_ptr[1] - data.part_ptr[0]) / self.problem.n
        # the sweeps read the rows twice each, the coarse solves twice more
        cost = (2.0 * self.sweeps + (2.0 if self.coarse else 0.0)) * share
        self.passes += cost
        self.precond_passes += cost
        return z

    def _steihaug(self, g, delta, max_iter):
        """Preconditioned CG on ``H s = -g`` (no radius: the line search
        globalizes).  Returns ``(s, r, iterations)``, ``r = -g - H s``."""
        return pcg(self._hv, self._precondition, -g, self.cg_tol, max_iter, dot)

    def _iterate(self):
        if not self.giant:
            return super()._iterate()
        if not math.sqrt(dot(self.g, self.g)) > 0.0:
            self.stall = "no_step"
            return
        sdca = self.local_solver == "sdca"
        s, it, local = self.data.local_newton(
            self.g, self.problem.lam + self.mu, self.sweeps, self.coarse,
            float(self.opts.local_gap) if sdca else self.local_tol, self.local_max_iter,
            self.local_solver, int(self.rng.integers(2**31)) if sdca else 0)
        self.cg_iter += it
        self.passes += local
        self.precond_passes += local
        w_new = self.w + s
        f_new, gdata_new = self._pass_fg(w_new, 1 - self.cur)
        self.passes += 1
        self.n_iter += 1
        if f_new <= self.f + ETA0 * dot(self.g, s):
            # Armijo at the full step: accepted without the line search's
            # slope evaluations (a round trip each on a cluster)
            self._accept(w_new, f_new, gdata_new)
        else:
            self._line_search(s, w_new, f_new, gdata_new)

    def trace_extras(self):
        out = super().trace_extras()
        out["precond_passes"] = float(self.precond_passes)
        if getattr(self.data, "driver_passes", 0):
            # the client's copy of partition 0 evaluated at each new point (not in
            # n_epochs, which equals the in-process run's)
            out["driver_passes"] = int(self.data.driver_passes)
        if "reductions" not in out:
            out["reductions"] = int(self.data.reductions)
        return out
