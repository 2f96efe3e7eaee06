"""An unconverged fit returns the best certified pair it saw, never a worse later one."""
from __future__ import annotations

import numpy as np

import primaldual
from primaldual import Problem
from primaldual.solvers._base import Solver


class _Wandering(Solver):
    """A test solver whose iterate is the optimum after the first advance and
    walks away from it after: the last check is the worst."""

    name = "wandering"

    def init_state(self, warm_start):
        self.k = 0
        self.alpha = np.zeros(self.problem.n)

    def advance(self, n_epochs, deadline):
        self.k += 1
        self.steps += self.problem.n
        self.alpha = self.opt * (1.0 if self.k == 1 else 1.0 / self.k)

    def certificate(self):
        w = self.problem.w_of(self.alpha)
        return self.problem.certificate(w, self.alpha)

    def get_state(self):
        return {"k": self.k}, {"alpha": self.alpha}

    def set_state(self, meta, arrays):
        self.k, self.alpha = meta["k"], arrays["alpha"]


def test_unconverged_run_returns_the_best_checked_pair():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((80, 5))
    y = np.where(X[:, 0] + 0.5 * rng.standard_normal(80) > 0, 1.0, -1.0)
    ref = primaldual.solve(X, y, loss="hinge", lam=1e-2, solver="ipm", tol=1e-12)
    prob = Problem(X, y, loss="hinge", lam=1e-2)
    s = _Wandering(prob, tol=0.0, max_epochs=5, random_state=0, check_every=1)
    s.opt = ref.dual_coef
    res = s.run()
    gaps = [r["rel_gap"] for r in res.trace]
    assert not res.converged and res.stop_reason == "max_epochs"
    assert gaps[-1] > min(gaps) and np.argmin(gaps) == 1      # the last check is worse
    assert res.rel_gap == min(gaps)
    assert res.extras["best_epoch"] == res.trace[1]["epoch"]
    np.testing.assert_array_equal(res.dual_coef, ref.dual_coef)
    # the returned pair is certified: its numbers are those of the pair itself
    cert = prob.certificate(res.coef, res.dual_coef)
    assert cert.primal == res.primal and cert.dual == res.dual


def test_converged_run_returns_the_last_pair():
    rng = np.random.default_rng(1)
    X = rng.standard_normal((60, 4))
    y = np.where(X[:, 1] > 0, 1.0, -1.0)
    res = primaldual.solve(X, y, loss="logistic", lam=1e-2, solver="sdca", tol=1e-8)
    assert res.converged and "best_epoch" not in res.extras
    assert res.rel_gap == res.trace[-1]["rel_gap"]


def test_resumed_run_returns_the_best_pair_of_the_whole_run():
    rng = np.random.default_rng(2)
    X = rng.standard_normal((50, 4))
    y = np.where(X[:, 0] > 0, 1.0, -1.0)
    ref = primaldual.solve(X, y, loss="hinge", lam=1e-2, solver="ipm", tol=1e-12)
    prob = Problem(X, y, loss="hinge", lam=1e-2)

    def run(max_epochs, resume=None):
        s = _Wandering(prob, tol=0.0, max_epochs=max_epochs, random_state=0,
                       check_every=1, resume=resume)
        s.opt = ref.dual_coef
        return s.run()

    full = run(5)
    part = run(3)                          # its best (epoch 1) is in its state
    rest = run(5, resume=part.state)       # sees only worse checks itself
    np.testing.assert_array_equal(rest.dual_coef, full.dual_coef)
    assert rest.primal == full.primal and rest.extras == full.extras


class _Alternating(Solver):
    """A test solver whose primal iterate is exact at check 1 and whose dual
    iterate is exact at check 2 (each perturbed elsewhere): no single check holds
    the best pair."""

    name = "alternating"
    mixes_best_pair = True          # a saddle-point method's separate iterates

    def init_state(self, warm_start):
        self.k = 0

    def advance(self, n_epochs, deadline):
        self.k += 1
        self.steps += self.problem.n

    def certificate(self):
        w = self.w_opt * (1.0 if self.k == 0 else 0.5)
        alpha = self.a_opt * (1.0 if self.k == 1 else 0.5)
        return self.problem.certificate(w, alpha)

    def get_state(self):
        return {"k": self.k}, {}

    def set_state(self, meta, arrays):
        self.k = meta["k"]


def _alternating_run(mix):
    """An _Alternating run on a small logistic problem (its optimum from Newton)."""
    rng = np.random.default_rng(3)
    X = rng.standard_normal((70, 5))
    y = np.where(X[:, 2] + 0.3 * rng.standard_normal(70) > 0, 1.0, -1.0)
    ref = primaldual.solve(X, y, loss="logistic", lam=1e-2, solver="newton", tol=1e-13)
    prob = Problem(X, y, loss="logistic", lam=1e-2)
    s = _Alternating(prob, tol=0.0, max_epochs=3, random_state=0, check_every=1)
    s.mixes_best_pair = mix
    s.w_opt, s.a_opt = ref.coef, ref.dual_coef
    return s.run(), prob, ref


def test_returned_pair_takes_the_best_primal_and_the_best_dual_of_different_checks():
    res, prob, ref = _alternating_run(mix=True)
    primals = [r["primal"] for r in res.trace]
    duals = [r["dual"] for r in res.trace]
    assert np.argmin(primals) == 0 and np.argmax(duals) == 1
    assert res.primal == min(primals) and res.dual == max(duals)
    assert res.rel_gap < min(r["rel_gap"] for r in res.trace)
    assert res.extras == {"best_epoch": res.trace[0]["epoch"],
                          "best_dual_epoch": res.trace[1]["epoch"]}
    np.testing.assert_array_equal(res.coef, ref.coef)
    np.testing.assert_array_equal(res.dual_coef, ref.dual_coef)
    cert = prob.certificate(res.coef, res.dual_coef)     # certified: the pair's own numbers
    assert cert.primal == res.primal and cert.dual == res.dual
    assert res.primal - res.dual >= -1e-12                # weak duality holds for the mix


def test_solvers_that_do_not_mix_return_one_checks_pair():
    """Without mixes_best_pair (dual methods) the returned pair is the one check
    with the smallest relative gap, so coef stays the w of that check's alpha."""
    res, _, _ = _alternating_run(mix=False)
    k = int(np.argmin([r["rel_gap"] for r in res.trace]))
    assert res.primal == res.trace[k]["primal"] and res.dual == res.trace[k]["dual"]
    assert res.extras == {"best_epoch": res.trace[k]["epoch"]}
