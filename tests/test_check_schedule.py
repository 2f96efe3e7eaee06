"""The adaptive gap-check schedule (check_every="auto") and what it must keep:
exact certificates, no early "converged", determinism, the user's check_every."""
import math

import numpy as np
import pytest
import scipy.sparse as sp

from primaldual import Problem, solve
from primaldual.solvers._base import (CHECK_FIRST, CHECK_MIN, CHECK_PASS_COST,
                                      CHECK_SHARE, CHECK_SLACK, check_budget_interval,
                                      check_pass_cost, next_check_interval)


# ----------------------------------------------------------- the rule itself
def test_first_interval_before_any_rate_is_known():
    assert next_check_interval([], 1e-6) == CHECK_FIRST
    assert next_check_interval([(0.0, 1.0)], 1e-6) == CHECK_FIRST


def test_prediction_lands_just_past_the_crossing():
    # gap 1e-2 at epoch 10, 1e-3 at epoch 20: one decade per 10 epochs, three
    # decades to go to 1e-6 -> 30 epochs, but capped at max(2*10, 20, 1) = 20
    assert next_check_interval([(10.0, 1e-2), (20.0, 1e-3)], 1e-6) == pytest.approx(20.0)
    # one decade to go: 10 epochs * 1.05
    got = next_check_interval([(10.0, 1e-4), (20.0, 1e-5)], 1e-6)
    assert got == pytest.approx(10.0 * CHECK_SLACK)


def test_stalled_or_rising_gap_doubles_the_interval():
    assert next_check_interval([(4.0, 1e-3), (6.0, 1e-3)], 1e-6) == pytest.approx(4.0)
    assert next_check_interval([(4.0, 1e-3), (6.0, 2e-3)], 1e-6) == pytest.approx(4.0)


def test_interval_is_never_below_the_minimum():
    got = next_check_interval([(1.0, 1e-3), (2.0, 1.0000001e-6)], 1e-6)
    assert got == CHECK_MIN


def test_nonpositive_and_nonfinite_points_are_ignored():
    assert next_check_interval([(0.0, 0.0), (1.0, math.inf)], 1e-6) == CHECK_FIRST


def test_budget_bounds_far_predictions_and_plateaus():
    # three decades to go at one per 10 epochs: 30 epochs, but the budget is 6
    assert next_check_interval([(10.0, 1e-2), (20.0, 1e-3)], 1e-6, budget=6.0) == 6.0
    # a plateau (rising or flat gap) is sampled every `budget` epochs
    assert next_check_interval([(10.0, 1e-5), (20.0, 2e-5)], 1e-6, budget=6.0) == 6.0
    # a near crossing is taken as predicted
    got = next_check_interval([(10.0, 1e-5), (20.0, 2e-6)], 1e-6, budget=6.0)
    assert got == pytest.approx(CHECK_SLACK * 10 * math.log(2) / math.log(5))


def test_budget_interval_keeps_checks_to_their_share():
    b = check_budget_interval(nnz=1000, accesses_per_epoch=1000)
    # checks of cost CHECK_PASS_COST epochs every b epochs: share CHECK_SHARE
    assert CHECK_PASS_COST / b == pytest.approx(CHECK_SHARE)
    # with shrinking an epoch touches fewer entries, so a full check costs more
    assert check_budget_interval(1000, 250) == pytest.approx(4 * b)
    assert check_budget_interval(1000, 0) == b


def test_a_check_costs_more_epochs_on_wide_data():
    # narrow data (w and v in cache): CHECK_PASS_COST; wide: towards one epoch
    assert check_pass_cost(123) == check_pass_cost(16_000) == CHECK_PASS_COST
    costs = [check_pass_cost(d) for d in (50_000, 100_000, 200_000, 10**7)]
    assert costs == sorted(costs) and CHECK_PASS_COST < costs[0] and costs[-1] < 1.0
    assert 0.8 < check_pass_cost(200_000) < 0.9
    wide = check_pass_cost(200_000)
    assert check_budget_interval(1000, 1000, wide) == pytest.approx(
        check_budget_interval(1000, 1000) * wide / CHECK_PASS_COST)


def test_a_hovering_gap_is_not_checked_more_often_than_checks_cost():
    # the hinge's tail on the orthogonal text: the predicted crossing is near,
    # and the gap keeps missing it
    points = [(0.0, 1.0), (1.5, 0.069), (7.2, 4e-5), (10.2, 2.35e-6), (10.9, 1.49e-6)]
    assert next_check_interval(points, 1e-6, budget=12.0) == CHECK_MIN
    floor = check_pass_cost(200_000)
    assert next_check_interval(points, 1e-6, budget=12.0, floor=floor) == floor
    # a far prediction is not changed by the floor
    far = next_check_interval(points[:3], 1e-6, budget=12.0)
    assert far > floor and next_check_interval(points[:3], 1e-6, 12.0, floor) == far


# -------------------------------------------------------- on real solves
def _data(seed=0, n=600, d=80, density=0.1):
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=density, format="csr", random_state=seed)
    X.data = rng.normal(size=X.nnz)
    w = rng.normal(size=d)
    y = np.where(X @ w + 0.3 * rng.normal(size=n) > 0, 1.0, -1.0)
    return X, y


@pytest.mark.parametrize("loss", ["hinge", "squared_hinge", "logistic", "squared",
                                  "smooth_hinge", "absolute", "epsilon_insensitive"])
@pytest.mark.parametrize("tol", [1e-3, 1e-5])
def test_converged_only_with_an_exact_gap_below_tol(loss, tol):
    X, y = _data(seed=3)
    res = solve(X, y, loss=loss, lam=1e-3, tol=tol, max_epochs=3000, random_state=1,
                solver="sdca")
    assert res.converged
    # recompute P and D independently of the solver's certificate
    prob = Problem(X, y, loss=loss, lam=1e-3)
    P = prob.primal(res.coef)
    D = prob.dual(res.dual_coef)
    assert P == pytest.approx(res.primal, rel=1e-12, abs=1e-15)
    assert D == pytest.approx(res.dual, rel=1e-12, abs=1e-15)
    assert (P - D) / abs(P) <= tol
    # the reported coef is w(alpha)
    np.testing.assert_allclose(res.coef, prob.w_of(res.dual_coef), rtol=1e-10, atol=1e-13)
    # every trace record is converged-or-not by its own exact gap, only the last one stops
    gaps = [r["rel_gap"] for r in res.trace]
    assert all(g > tol for g in gaps[:-1]) and gaps[-1] <= tol


def test_auto_schedule_checks_less_often_than_every_epoch():
    X, y = _data(seed=4, n=2000, d=200, density=0.05)
    every = solve(X, y, loss="logistic", lam=1e-3, tol=1e-10, max_epochs=500, solver="sdca",
                  check_every=1, random_state=0)
    auto = solve(X, y, loss="logistic", lam=1e-3, tol=1e-10, max_epochs=500, solver="sdca",
                 random_state=0)
    assert every.converged and auto.converged
    assert len(auto.trace) < len(every.trace) / 2
    # the schedule decides only when to stop: epochs to the target differ by little
    assert auto.n_epochs <= 1.5 * every.n_epochs + 1


def test_same_seed_same_result_with_auto_schedule():
    X, y = _data(seed=5)
    a = solve(X, y, loss="squared_hinge", lam=1e-4, tol=1e-7, random_state=7,
              max_epochs=300, solver="sdca")
    b = solve(X, y, loss="squared_hinge", lam=1e-4, tol=1e-7, random_state=7,
              max_epochs=300, solver="sdca")
    assert a.n_epochs == b.n_epochs
    np.testing.assert_array_equal(a.coef, b.coef)
    np.testing.assert_array_equal(a.dual_coef, b.dual_coef)
    assert [r["epoch"] for r in a.trace] == [r["epoch"] for r in b.trace]


def test_user_check_every_keeps_its_meaning():
    X, y = _data(seed=6)
    res = solve(X, y, loss="logistic", lam=1e-4, tol=0.0, max_epochs=6, check_every=2,
                random_state=0, solver="sdca")
    assert [r["epoch"] for r in res.trace] == pytest.approx([0, 2, 4, 6])


def test_checkpoints_keep_their_interval_under_auto(tmp_path):
    X, y = _data(seed=7)
    epochs = []
    res = solve(X, y, loss="logistic", lam=1e-5, tol=0.0, max_epochs=6, solver="sdca",
                checkpoint=tmp_path / "ck", checkpoint_every=1.0, random_state=0,
                callback=lambda snap: epochs.append(snap["epoch"]) and False)
    # a check (hence a checkpoint) at least every checkpoint_every epochs
    steps = np.diff([0.0] + [r["epoch"] for r in res.trace][1:])
    assert steps.max() <= 1.0 + 1e-9


def test_cold_start_certificate_needs_no_pass_and_is_exact():
    X, y = _data(seed=8)
    for loss in ("hinge", "logistic", "squared"):
        prob = Problem(X, y, loss=loss, lam=1e-3)
        c = prob.certificate(np.zeros(prob.d), np.zeros(prob.n))
        assert c.primal == pytest.approx(prob.primal(np.zeros(prob.d)), rel=1e-14)
        assert c.dual == pytest.approx(prob.dual(np.zeros(prob.n)), rel=1e-14, abs=1e-300)
        assert not c.v.any() and not c.margins.any()
