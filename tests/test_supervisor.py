"""solver="auto" under supervision: hand-over on a stall, a failure or a lost
thread probe; warm starts; the returned pair (best primal with the best dual,
never worse than w = 0)."""
from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

import primaldual
from primaldual import Problem
from primaldual.solvers import SOLVERS, supervisor
from primaldual.solvers._base import Solver
from dataclasses import dataclass

from primaldual.solvers._options import CommonOptions, ThreadOptions
from primaldual.solvers.auto import candidates

from conftest import load_binary, shared_file


def _data(n=120, d=6, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    y = np.where(X @ rng.standard_normal(d) + 0.5 * rng.standard_normal(n) > 0, 1.0, -1.0)
    return X, y


class _Stuck(Solver):
    """A dual method that never moves from its start: after the first check,
    every check certifies the same gap (an injected stall).  ``mode``: "stall"
    (the gap stays), "raise" (a FloatingPointError), "signal" (the method's own
    no-progress flag, ``finished``) or "ctrl-c" (a SIGINT).  The last three
    happen in the first advance, so that on a loaded machine the supervisor has
    no time to judge the leg stalled first."""

    name = "stuck"
    mode = "stall"
    start = None

    def init_state(self, warm_start):
        n = self.problem.n
        self.alpha = np.zeros(n) if self.start is None else self.start.copy()
        self.k = 0
        self.finished = False

    def advance(self, n_epochs, deadline):
        self.k += 1
        self.steps += self.problem.n
        if self.mode == "raise" and self.k >= 1:
            raise FloatingPointError("injected: a non-finite step")
        if self.mode == "signal" and self.k >= 1:
            self.finished = True
        if self.mode == "ctrl-c" and self.k == 1:
            os.kill(os.getpid(), signal.SIGINT)

    @property
    def epochs(self):
        return max(self.steps / self.problem.n,
                   self.max_epochs if self.finished else 0.0)

    def certificate(self):
        w = self.problem.w_of(self.alpha)
        return self.problem.certificate(w, self.alpha)

    def get_state(self):
        return {"k": self.k}, {"alpha": self.alpha}

    def set_state(self, meta, arrays):
        self.k, self.alpha = meta["k"], arrays["alpha"]


@pytest.fixture
def stuck_first(monkeypatch):
    """The supervisor's candidates become ``["stuck", <auto's own candidates>]``."""
    monkeypatch.setitem(SOLVERS, "stuck", _Stuck)

    def order(problem, options=None, n_jobs=1, tol=1e-6):
        return ["stuck"] + candidates(problem, options, n_jobs, tol)
    monkeypatch.setattr(supervisor, "candidates", order)
    return _Stuck


@pytest.mark.parametrize("mode", ["stall", "raise", "signal"])
@pytest.mark.parametrize("loss", ["hinge", "logistic"])
def test_a_stuck_first_candidate_hands_over_and_the_next_certifies(stuck_first, monkeypatch,
                                                                   mode, loss):
    monkeypatch.setattr(_Stuck, "mode", mode)
    X, y = _data()
    res = primaldual.solve(X, y, loss=loss, lam=1e-2, tol=1e-8, check_every=1)
    path = res.extras["path"]
    assert path[0]["method"] == "stuck"
    expected = {"stall": ("stalled", "slow"), "raise": ("failed: FloatingPointError",),
                "signal": ("failed: stuck",)}[mode]
    assert path[0]["reason"].startswith(expected), path[0]["reason"]
    assert res.converged and res.stop_reason == "converged"
    assert res.solver == path[-1]["method"] != "stuck"
    # the certificate is the returned pair's own
    cert = Problem(X, y, loss=loss, lam=1e-2).certificate(res.coef, res.dual_coef)
    assert cert.primal == pytest.approx(res.primal, rel=1e-12)
    assert cert.dual == pytest.approx(res.dual, rel=1e-12, abs=1e-15)
    # the trace runs through every leg, in the whole run's epochs and seconds
    assert [r["solver"] for r in res.trace][0] == "stuck"
    epochs = [r["epoch"] for r in res.trace]
    assert epochs == sorted(epochs) and res.n_epochs == pytest.approx(
        sum(p["epochs"] for p in path))


def test_ctrl_c_in_a_leg_ends_the_run_with_its_certified_point(stuck_first, monkeypatch):
    monkeypatch.setattr(_Stuck, "mode", "ctrl-c")
    X, y = _data()
    # Python's own handler, as in an interactive session (a test runner's
    # worker process may ignore SIGINT)
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        res = primaldual.solve(X, y, loss="hinge", lam=1e-2, tol=1e-8, check_every=1)
    finally:
        signal.signal(signal.SIGINT, previous)
    assert res.stop_reason == "interrupted" and len(res.extras["path"]) == 1
    assert res.extras["path"][0]["method"] == "stuck"
    assert np.isfinite(res.gap)


def test_the_last_candidate_stalling_ends_the_run_as_stalled(monkeypatch):
    monkeypatch.setitem(SOLVERS, "stuck", _Stuck)
    monkeypatch.setattr(supervisor, "candidates", lambda *a, **k: ["stuck"])
    X, y = _data()
    res = primaldual.solve(X, y, loss="hinge", lam=1e-2, tol=1e-8, check_every=1)
    assert res.stop_reason == "stalled" and not res.converged
    assert res.n_epochs < 1000 and len(res.extras["path"]) == 1


class _Stuck2(_Stuck):
    name = "stuck2"


def test_when_the_last_candidate_stalls_the_first_gets_the_budget_back(monkeypatch):
    monkeypatch.setitem(SOLVERS, "stuck", _Stuck)
    monkeypatch.setitem(SOLVERS, "stuck2", _Stuck2)
    monkeypatch.setattr(supervisor, "candidates", lambda *a, **k: ["stuck", "stuck2"])
    X, y = _data()
    res = primaldual.solve(X, y, loss="hinge", lam=1e-2, tol=1e-8, check_every=1,
                           max_epochs=300)
    path = res.extras["path"]
    assert [p["method"] for p in path] == ["stuck", "stuck2", "stuck"]
    assert path[0]["reason"].startswith("stalled") and path[1]["reason"] == "stalled"
    # the budget given back runs without a stall rule, to the end of max_epochs
    assert path[2]["reason"] == "max_epochs" and res.stop_reason == "max_epochs"
    assert res.n_epochs == pytest.approx(300)


def test_hand_over_never_loses_certified_progress(stuck_first, monkeypatch):
    """A first leg that holds a good point: every later gap is at most its
    best, and the next (primal) method starts from its best primal point."""
    X, y = _data(seed=3)
    lam = 1e-2
    ref = primaldual.solve(X, y, loss="logistic", lam=lam, solver="newton", tol=1e-12)
    monkeypatch.setattr(_Stuck, "start", 0.9 * ref.dual_coef)
    res = primaldual.solve(X, y, loss="logistic", lam=lam, tol=1e-10, check_every=1)
    path = res.extras["path"]
    best = [p["best_gap"] for p in path]
    assert all(b1 <= b0 for b0, b1 in zip(best, best[1:]))
    assert res.rel_gap <= best[0]
    stuck = [r for r in res.trace if r["solver"] == "stuck"]
    nxt = [r for r in res.trace if r["solver"] != "stuck"]
    # warm: the next (primal) leg starts from the stuck leg's best primal point
    assert nxt[0]["primal"] <= min(r["primal"] for r in stuck) + 1e-15


def test_dual_seed_is_built_from_the_best_primal_point(monkeypatch):
    """A dual method after a primal one starts from alpha_i = -phi'(x_i . w),
    clipped to the dual box, when that dual value is the higher."""
    X, y = _data(seed=4)
    prob = Problem(X, y, loss="squared_hinge", lam=1e-2)
    ref = primaldual.solve(X, y, loss="squared_hinge", lam=1e-2, solver="newton",
                           tol=1e-12)
    sup = supervisor._Supervisor(prob, ["sdca"], tol=1e-8, max_epochs=None,
                                 random_state=0, callback=None, eval_set=None,
                                 n_jobs=None, options={})
    sup.offer({"coef": ref.coef * 0.99, "dual_coef": np.zeros(prob.n), "epoch": 0.0,
               "primal": prob.primal(ref.coef * 0.99), "dual": prob.dual(np.zeros(prob.n))})
    seed = sup.seed()
    lo, hi = prob.loss.dual_bounds(prob.y)
    expect = np.clip(-prob.loss.derivative(X @ (ref.coef * 0.99), y), lo, hi)
    np.testing.assert_allclose(seed.dual_coef, expect, rtol=1e-12, atol=1e-15)
    np.testing.assert_array_equal(seed.coef, ref.coef * 0.99)
    assert prob.is_dual_feasible(seed.dual_coef)


@dataclass(frozen=True)
class _GeometricOptions(ThreadOptions, CommonOptions):
    solver_name = "geometric"


class _Geometric(Solver):
    """A dual method converging geometrically to a known optimum at a rate set
    by its threads (``rates[threads > 1]`` per epoch; each epoch sleeps the
    same time): the slowness of one side is injected, not timed."""

    name = "geometric"
    options_class = _GeometricOptions
    opt = None
    rates = (0.3, 0.98)          # one thread, several

    def setup(self):
        self.n_threads = max(1, int(self.opts.n_jobs or 1))

    def init_state(self, warm_start):
        self.alpha = self.warm_start_alpha()
        if self.alpha is None:
            self.alpha = np.zeros(self.problem.n)

    def advance(self, n_epochs, deadline):
        r = self.rates[self.n_threads > 1]
        for _ in range(max(1, int(n_epochs))):
            self.alpha = self.opt + r * (self.alpha - self.opt)
            self.steps += self.problem.n
            time.sleep(0.002)

    def certificate(self):
        return self.problem.certificate(self.problem.w_of(self.alpha), self.alpha)

    def get_state(self):
        return {}, {"alpha": self.alpha}

    def set_state(self, meta, arrays):
        self.alpha = arrays["alpha"]

    def run(self):
        res = super().run()
        res.extras["threads"] = self.n_threads
        return res


@pytest.mark.parametrize("rates, kept", [((0.3, 0.98), 1), ((0.98, 0.3), 2)])
def test_threads_are_kept_only_when_their_certified_progress_is_faster(monkeypatch, rates,
                                                                       kept):
    """One thread first (the probe), then the threads from its point; the run
    goes on with the faster (here by injected rates, 0.3 against 0.98 per
    epoch), and certifies."""
    X, y = _data(seed=5)
    ref = primaldual.solve(X, y, loss="logistic", lam=1e-2, solver="newton", tol=1e-13)
    monkeypatch.setitem(SOLVERS, "geometric", _Geometric)
    monkeypatch.setattr(_Geometric, "opt", ref.dual_coef)
    monkeypatch.setattr(_Geometric, "rates", rates)
    monkeypatch.setattr(supervisor, "PROBE_MIN_S", 0.0)
    monkeypatch.setattr(supervisor, "candidates", lambda *a, **k: ["geometric"])
    res = primaldual.solve(X, y, loss="logistic", lam=1e-2, tol=1e-9, n_jobs=2,
                           check_every=1)
    path = res.extras["path"]
    assert path[0]["threads"] == 1 and path[0]["reason"] == "thread probe"
    assert path[1]["threads"] == 2
    if kept == 1:
        assert path[1]["reason"].startswith("threads slower")
    assert path[-1]["threads"] == kept and path[-1]["reason"] == "converged"
    assert res.converged and len(path) <= 3


def test_a_threaded_probe_slower_than_its_cap_falls_back_to_one_thread(monkeypatch):
    """Threads whose first epoch takes longer than 1.5x the whole serial probe
    are judged at that check (the wrong choice costs one threaded epoch, not
    three checks) and the run continues, certified, on one thread."""
    X, y = _data(seed=5)
    ref = primaldual.solve(X, y, loss="logistic", lam=1e-2, solver="newton", tol=1e-13)

    class Slow(_Geometric):
        def advance(self, n_epochs, deadline):
            super().advance(n_epochs, deadline)
            if self.n_threads > 1:
                time.sleep(1.0)

    monkeypatch.setitem(SOLVERS, "geometric", Slow)
    monkeypatch.setattr(Slow, "opt", ref.dual_coef)
    monkeypatch.setattr(Slow, "rates", (0.3, 0.3))
    monkeypatch.setattr(supervisor, "PROBE_MIN_S", 0.0)
    monkeypatch.setattr(supervisor, "direct_applies", lambda *a, **k: False)
    monkeypatch.setattr(supervisor, "candidates", lambda *a, **k: ["geometric"])
    res = primaldual.solve(X, y, loss="logistic", lam=1e-2, tol=1e-9, n_jobs=2)
    path = res.extras["path"]
    assert [p["threads"] for p in path] == [1, 2, 1]
    assert path[1]["reason"].startswith("threads slower") and path[1]["epochs"] == 1
    assert res.converged


def test_a_tiny_fit_spawns_no_thread(monkeypatch):
    X, y = _data(seed=5)
    ref = primaldual.solve(X, y, loss="logistic", lam=1e-2, solver="newton", tol=1e-13)
    monkeypatch.setitem(SOLVERS, "geometric", _Geometric)
    monkeypatch.setattr(_Geometric, "opt", ref.dual_coef)
    monkeypatch.setattr(supervisor, "PROBE_MIN_S", math.inf)
    # not the direct leg (it would also run on one thread): the supervisor's own choice
    monkeypatch.setattr(supervisor, "direct_applies", lambda *a, **k: False)
    monkeypatch.setattr(supervisor, "candidates", lambda *a, **k: ["geometric"])
    res = primaldual.solve(X, y, loss="logistic", lam=1e-2, tol=1e-9, n_jobs=2)
    path = res.extras["path"]
    assert [(p["method"], p["threads"]) for p in path] == [("geometric", 1)] and res.converged


# ------------------------------------------------------------ the pair returned
def test_an_unconverged_run_returns_the_best_primal_and_never_worse_than_zero():
    """SGD on logistic at tiny lam wanders far above its best checks (issue
    31: P = 4,335 returned where a check had P = 117); the returned primal is
    the smallest checked one, and at most P(0) = log 2."""
    X, y = load_binary("heart_scale")
    for seed in range(4):
        res = primaldual.solve(X, y, loss="logistic", lam=1e-6, solver="sgd",
                               max_epochs=20, random_state=seed)
        assert not res.converged
        assert res.primal <= min(r["primal"] for r in res.trace) + 1e-15
        assert res.dual == max(r["dual"] for r in res.trace)
        assert res.primal <= math.log(2.0) * (1 + 1e-12)
        cert = Problem(X, y, loss="logistic", lam=1e-6).certificate(res.coef, res.dual_coef)
        assert cert.primal == pytest.approx(res.primal, rel=1e-12)


class _Far(_Stuck):
    """A primal method whose every check is a point far worse than w = 0."""

    name = "far"

    def certificate(self):
        w = np.full(self.problem.d, 50.0 * (1 + self.k))
        return self.problem.primal_certificate(w)


def test_the_zero_model_is_returned_when_every_check_is_worse():
    X, y = _data(seed=6)
    prob = Problem(X, y, loss="hinge", lam=1e-2)
    res = _Far(prob, tol=0.0, max_epochs=3, random_state=0, check_every=1).run()
    assert min(r["primal"] for r in res.trace) > prob.primal(np.zeros(X.shape[1]))
    assert res.extras.get("zero_model") and not res.coef.any()
    assert res.primal == prob.primal(np.zeros(X.shape[1]))
    assert res.dual == max(r["dual"] for r in res.trace)


@pytest.mark.realdata
def test_cli_simba_on_ionosphere_returns_a_primal_below_the_zero_model():
    """Issue 31's example: ``primaldual fit ionosphere_scale --normalize --solver
    simba --max-epochs 20`` returned P = 172.4 while its trace held 0.889 and
    P(0) = 1."""
    path = shared_file("ionosphere_scale")
    out = subprocess.run([sys.executable, "-m", "primaldual", "fit", str(path),
                          "--normalize", "--loss", "hinge", "--solver", "simba",
                          "--max-epochs", "20", "--json"],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    summary = json.loads(out.stdout.strip().splitlines()[-1])
    assert summary["primal"] <= 1.0


def test_a_leg_predicted_to_need_its_whole_budget_still_hands_over(monkeypatch):
    """SDCA on the hinge at a small lam is predicted to need r / tol epochs (its
    whole budget) and cuts its gap 10x in each stall window: at its rate it would
    not reach tol in the budget, so it hands over to the IPM, which certifies
    (before, it ran to max_epochs uncertified and the IPM never ran)."""
    import scipy.sparse as sp
    monkeypatch.setattr(supervisor, "candidates", lambda *a, **k: ["sdca", "ipm"])
    rng = np.random.default_rng(0)
    X = (rng.random((400, 40)) < 0.25).astype(float)
    y = np.where(X @ rng.standard_normal(40) + 0.5 * rng.standard_normal(400) > 0, 1.0, -1.0)
    res = primaldual.solve(sp.csr_matrix(X), y, loss="hinge", lam=3e-5, max_epochs=1000)
    path = res.extras["path"]
    assert [p["method"] for p in path] == ["sdca", "ipm"] and res.converged
    assert path[0]["reason"].startswith("slow") and path[0]["epochs"] < 900


# ------------------------------------------------- how a leg is judged (issue 31)
def _watch(window, stall_checks=0, names=("sdca", "ipm")):
    X, y = _data()
    prob = Problem(X, y, loss="squared_hinge", lam=1e-2)
    sup = supervisor._Supervisor(prob, list(names), tol=1e-8, max_epochs=1000,
                                 random_state=0, callback=None, eval_set=None,
                                 n_jobs=None, options={})
    # one model second per epoch, no grace: the window counts epochs
    return supervisor._Watch(sup, window, stall_checks, None, 1.0, 0.0), prob


def _check(watch, prob, epoch, primal, dual):
    return watch({"coef": np.zeros(prob.d), "dual_coef": np.zeros(prob.n), "time": 0.0,
                  "epoch": float(epoch), "primal": primal, "dual": dual})


def test_a_leg_with_no_check_a_full_window_back_is_not_judged():
    """A window the cost model cannot size (NaN: a next method with no finite
    prediction) leaves no check a window back: the leg goes on, unjudged (the
    verdict took min() of nothing on news20, squared hinge)."""
    watch, prob = _watch(math.nan)
    for k in range(6):
        assert _check(watch, prob, 100 * (k + 1), 1.0, 0.5) is False
        assert watch.reason == ""


def test_a_leg_whose_primal_falls_while_its_relative_gap_rises_has_not_stalled():
    """Newton on standardized dna (squared hinge, C = 100): its dual point
    alpha(w) is far off (D = -1e3 P) and the relative gap (P - D) / P rises
    while P falls 1% per check; P - max(D, 0) measures the progress."""
    watch, prob = _watch(None, stall_checks=5)
    for k in range(40):
        p = 0.99 ** k
        assert _check(watch, prob, 20 * (k + 1), p, -1e3) is False, (k, watch.reason)
    # and the same P, flat, stalls
    for k in range(40, 60):
        if _check(watch, prob, 20 * (k + 1), 0.99 ** 39, -1e3):
            break
    assert watch.reason.startswith("stalled")


def test_a_leg_whose_absolute_gap_falls_tenfold_per_window_is_not_slow():
    """SDCA on standardized gisette (squared hinge, C = 1): D is at its optimum
    within 20 epochs and P falls tenfold every 45, while the relative gap stays
    near 1 for 200 epochs; the leg is not slow."""
    watch, prob = _watch(10.0)
    d_opt = 1e-6
    for k in range(31):
        p = d_opt + 0.1 * 10 ** (-k / 9)
        assert _check(watch, prob, k, p, d_opt) is False, (k, watch.reason)
    assert (p - d_opt) / p > 0.9
    # a leg whose absolute gap falls threefold per window is
    for k in range(31, 80):
        p = d_opt + 0.1 * 10 ** (-30 / 9) * 3.0 ** (-(k - 30) / 10)
        if _check(watch, prob, k, p, d_opt):
            break
    assert watch.reason.startswith("slow")


class _Crawl(_Geometric):
    """Converges, but 0.1% per epoch: never stalls, never certifies."""

    name = "crawl"
    rates = (0.999, 0.999)


class _Tortoise(_Geometric):
    """Converges 3% per epoch: slower than the next method is predicted to be."""

    name = "tortoise"
    rates = (0.97, 0.97)


def test_a_slow_leg_gets_the_budget_back_before_a_method_with_no_cost_model(monkeypatch):
    """Newton on standardized dna (squared hinge, C = 100) needs 180 iterations
    where 20 are predicted: it hands over as slow to SDCA, which stalls; the
    next candidate (l1cd) has no cost model and crawled to max_epochs
    uncertified.  The slow leg now gets the rest of the budget first, and
    certifies."""
    X, y = _data(seed=5)
    ref = primaldual.solve(X, y, loss="logistic", lam=1e-2, solver="newton", tol=1e-13)
    for cls in (_Tortoise, _Crawl):
        monkeypatch.setitem(SOLVERS, cls.name, cls)
        monkeypatch.setattr(cls, "opt", ref.dual_coef)
    monkeypatch.setattr(_Geometric, "advance", _no_sleep_advance)
    monkeypatch.setitem(SOLVERS, "stuck", _Stuck)
    monkeypatch.setattr(supervisor, "direct_applies", lambda *a, **k: False)
    monkeypatch.setattr(supervisor, "candidates", lambda *a, **k: ["tortoise", "stuck",
                                                                   "crawl"])
    # the cost model: an epoch is one model second; "stuck" is predicted to
    # take 20 epochs, the others have no prediction
    monkeypatch.setattr(supervisor, "epoch_seconds", lambda name, p: 1.0)
    monkeypatch.setattr(supervisor, "predicted_epochs",
                        lambda name, p, tol, most: 20.0 if name == "stuck" else most,
                        raising=False)
    monkeypatch.setattr(supervisor, "predicted_seconds",
                        lambda name, p, tol, most: 20.0 if name == "stuck" else most)
    res = primaldual.solve(X, y, loss="logistic", lam=1e-2, tol=1e-10, check_every=1,
                           max_epochs=1000)
    path = res.extras["path"]
    assert [p["method"] for p in path] == ["tortoise", "stuck", "tortoise"], path
    assert path[0]["reason"].startswith("slow") and path[1]["reason"].startswith("stalled")
    assert res.converged and path[-1]["reason"] == "converged"


def _no_sleep_advance(self, n_epochs, deadline):
    r = self.rates[self.n_threads > 1]
    for _ in range(max(1, int(n_epochs))):
        self.alpha = self.opt + r * (self.alpha - self.opt)
        self.steps += self.problem.n


class _Short(_Stuck):
    name = "short"
    default_max_epochs = 140


class _Steady(_Geometric):
    """Certifies tol = 1e-10 in 112 epochs (10% per epoch), alone within its
    default budget of 140."""

    name = "steady"
    rates = (0.9, 0.9)
    default_max_epochs = 140


def test_a_hand_over_does_not_shorten_the_next_legs_default_budget(monkeypatch):
    """Under the default budget (max_epochs None, the methods' own 140) the
    first leg stalls after ~50 epochs; the next one still gets its 140 and
    certifies (it had the 90 left and ended uncertified: SDCA on standardized
    gisette, squared hinge, C = 100, after Newton's 133 epochs)."""
    X, y = _data(seed=5)
    ref = primaldual.solve(X, y, loss="logistic", lam=1e-2, solver="newton", tol=1e-13)
    monkeypatch.setitem(SOLVERS, "short", _Short)
    monkeypatch.setitem(SOLVERS, "steady", _Steady)
    monkeypatch.setattr(_Steady, "opt", ref.dual_coef)
    monkeypatch.setattr(_Steady, "advance", _no_sleep_advance)
    monkeypatch.setattr(supervisor, "direct_applies", lambda *a, **k: False)
    monkeypatch.setattr(supervisor, "candidates", lambda *a, **k: ["short", "steady"])
    res = primaldual.solve(X, y, loss="logistic", lam=1e-2, tol=1e-10, check_every=1)
    path = res.extras["path"]
    assert [p["method"] for p in path] == ["short", "steady"], path
    assert path[0]["reason"].startswith("stalled") and path[0]["epochs"] >= 40
    assert res.converged and res.n_epochs > 140
    # a budget the caller sets is the whole run's
    res = primaldual.solve(X, y, loss="logistic", lam=1e-2, tol=1e-10, check_every=1,
                           max_epochs=140)
    assert not res.converged and res.n_epochs <= 140 + 1e-9


class _Inch(_Geometric):
    """Gains 0.0005% of its distance to the optimum per epoch: progress, under 0.1%
    in 50 epochs."""

    name = "inch"
    rates = (0.999995, 0.999995)


def test_the_last_method_standing_stops_early_only_at_a_fixed_point(monkeypatch):
    """SDCA alone on standardized reuters (hinge, C = 0.01) gains under 0.1% of
    its gap over 15 checks at 3e-5 and certifies later: with no leg to give the
    budget back to, only a leg that makes no progress at all stops as stalled."""
    X, y = _data(seed=5)
    ref = primaldual.solve(X, y, loss="logistic", lam=1e-2, solver="newton", tol=1e-13)
    monkeypatch.setitem(SOLVERS, "inch", _Inch)
    monkeypatch.setattr(_Inch, "opt", ref.dual_coef)
    monkeypatch.setattr(_Inch, "advance", _no_sleep_advance)
    monkeypatch.setattr(supervisor, "direct_applies", lambda *a, **k: False)
    monkeypatch.setattr(supervisor, "candidates", lambda *a, **k: ["inch"])
    res = primaldual.solve(X, y, loss="logistic", lam=1e-2, tol=1e-10, check_every=1,
                           max_epochs=200)
    assert res.stop_reason == "max_epochs" and res.n_epochs == pytest.approx(200)


class _Steep(_Geometric):
    """5% of its distance to the optimum per epoch: steady progress that needs
    more than its default budget of 140 epochs to certify 1e-10."""

    name = "steep"
    rates = (0.95, 0.95)
    default_max_epochs = 140


def _portfolio(monkeypatch, classes, names, modelled=None, no_sleep=None):
    """The fake methods ``classes`` (converging to the optimum of the logistic
    problem on ``_data(seed=5)``) as the candidates ``names``, one model second
    an epoch; ``modelled`` is predicted to take 20 epochs, the others have no
    prediction.  Returns (X, y)."""
    X, y = _data(seed=5)
    ref = primaldual.solve(X, y, loss="logistic", lam=1e-2, solver="newton", tol=1e-13)
    for cls in classes:
        monkeypatch.setitem(SOLVERS, cls.name, cls)
        monkeypatch.setattr(cls, "opt", ref.dual_coef)
    for cls in classes if no_sleep is None else no_sleep:
        monkeypatch.setattr(cls, "advance", _no_sleep_advance)
    monkeypatch.setattr(supervisor, "direct_applies", lambda *a, **k: False)
    monkeypatch.setattr(supervisor, "candidates", lambda *a, **k: list(names))
    monkeypatch.setattr(supervisor, "epoch_seconds", lambda name, p: 1.0)
    for fn in ("predicted_epochs", "predicted_seconds"):
        monkeypatch.setattr(supervisor, fn,
                            lambda name, p, tol, most: 20.0 if name == modelled else most)
    return X, y


@pytest.mark.parametrize("newton_type", [False, True])
def test_a_steady_leg_gets_more_than_the_default_budget(monkeypatch, newton_type):
    """news20 as given, logistic, C = 100: Newton certifies after about 1,550
    passes where the default budget is 1,000, and the only later candidate has
    no cost model; it handed the rest of the budget to SDCA, which crawled to
    max_epochs at gap 0.37.  Under the default budget a leg judged by the
    budget alone now goes on: by its rate (up to EXTEND_CAP times the budget),
    or, a Newton-type method, until it stalls or reaches that cap.  A budget
    the caller sets is never extended."""
    # neither has a cost model: "steep" is judged by the budget alone
    X, y = _portfolio(monkeypatch, (_Steep, _Crawl), ["steep", "crawl"])
    monkeypatch.setattr(_Steep, "newton_type", newton_type)
    res = primaldual.solve(X, y, loss="logistic", lam=1e-2, tol=1e-10, check_every=1)
    path = res.extras["path"]
    # never judged (no later method with a cost model), it reaches the default
    # budget still making progress and goes on in a second leg
    assert [p["method"] for p in path] == ["steep", "steep"], path
    assert path[0]["reason"] == "budget extended" and path[0]["epochs"] == 140
    assert res.converged and res.n_epochs > 140
    ext = res.extras["budget_extensions"]
    assert ext and all(e["max_epochs"] <= supervisor.EXTEND_CAP * 140 for e in ext)
    res = primaldual.solve(X, y, loss="logistic", lam=1e-2, tol=1e-10, check_every=1,
                           max_epochs=140)
    assert not res.converged and res.n_epochs <= 140 + 1e-9
    assert "budget_extensions" not in res.extras


@pytest.mark.parametrize("newton_type", [False, True])
def test_a_steady_leg_judged_by_the_budget_goes_on_in_place(monkeypatch, newton_type):
    """The news20 sequence: a first leg slower than the next method's
    prediction hands over; the next one, judged by the budget alone (its only
    later candidate has no cost model), would not reach tol in the default
    budget at its rate.  It goes on in the same leg, not handing the budget back
    to the slow first leg."""
    # "tortoise" is slow against the 20 epochs predicted for "steep"
    X, y = _portfolio(monkeypatch, (_Steep, _Crawl, _Tortoise),
                      ["tortoise", "steep", "crawl"], modelled="steep")
    monkeypatch.setattr(_Steep, "newton_type", newton_type)
    res = primaldual.solve(X, y, loss="logistic", lam=1e-2, tol=1e-10, check_every=1)
    path = res.extras["path"]
    assert [p["method"] for p in path] == ["tortoise", "steep"], path
    assert path[0]["reason"].startswith("slow")
    assert res.converged and path[-1]["reason"] == "converged"
    assert res.extras["budget_extensions"][0]["method"] == "steep"


class _Halt(_Steep):
    """Newton-type: 5% per epoch for its first 150 epochs, then no progress."""

    name = "halt"
    newton_type = True

    def advance(self, n_epochs, deadline):
        for _ in range(max(1, int(n_epochs))):
            if self.steps < 150 * self.problem.n:
                self.alpha = self.opt + 0.95 * (self.alpha - self.opt)
            self.steps += self.problem.n


def test_after_an_extended_leg_stalls_the_leg_given_back_has_a_budget(monkeypatch):
    """Standardized news20, squared hinge, C = 100: Newton got more than the
    default budget, then stalled; the run then stopped at once (the budget
    was spent), where the SDCA leg it had taken over from was at 5.7e-5.  The
    leg given the budget back now gets a default budget of its own."""
    X, y = _portfolio(monkeypatch, (_Halt, _Crawl, _Tortoise),
                      ["tortoise", "halt", "crawl"], modelled="halt",
                      no_sleep=(_Crawl, _Tortoise))
    res = primaldual.solve(X, y, loss="logistic", lam=1e-2, tol=1e-13, check_every=1)
    path = res.extras["path"]
    assert [p["method"] for p in path][:3] == ["tortoise", "halt", "tortoise"], path
    assert path[1]["epochs"] > 140 and path[1]["reason"].startswith("stalled")
    assert path[2]["epochs"] >= 140 - 1e-9
    # still steady at the end of that budget, it goes on, by its rate, and certifies
    assert all(p["method"] == "tortoise" for p in path[3:]) and res.converged


def _early_watch(grace):
    """A watch whose next method is predicted 100 model s (one per epoch) and
    its own fit ``grace``."""
    watch, prob = _watch(100.0)
    watch.grace = grace
    return watch, prob


def test_a_hopeless_leg_hands_over_once_it_has_had_the_next_methods_fit():
    """Own prediction 1,000 epochs, the next method's 100: a gap falling 0.1%
    an epoch (tol about 17,000 epochs away) hands over at the first check 100
    epochs after the leg's first, not at 1,000 (l1cd on covtype)."""
    watch, prob = _early_watch(1000.0)
    reason, epoch = "", 0
    while not reason and epoch < 1000:
        epoch += 10
        _check(watch, prob, epoch, 1.0, 1.0 - 0.5 * 0.999 ** epoch)
        reason = watch.reason
    assert epoch == 110 and reason.startswith("slow:") and "own predicted fit" in reason


def test_a_leg_on_course_for_its_own_prediction_is_not_judged_early():
    """The same, with the gap falling a decade every 100 epochs from 1: tol
    1e-8 (the watch's) is 800 epochs away, within twice its own 1,000 epochs,
    so the leg goes on to its own predicted fit before the usual rule judges
    it (and that rule keeps it: a decade per window)."""
    watch, prob = _early_watch(1000.0)
    for epoch in range(10, 1001, 10):
        gap = 10.0 ** (-epoch / 100.0)
        assert _check(watch, prob, epoch, 1.0, 1.0 - gap) is False, (epoch, watch.reason)
