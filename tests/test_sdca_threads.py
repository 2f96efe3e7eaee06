"""SDCA on several threads (``n_jobs > 1``): exact certificates, the serial
optimum, dual feasibility under contention, clean stops.

Small problems would get one thread (each thread needs
``MIN_NNZ_PER_THREAD`` stored entries per pass, and the cost model predicts
that threads lose on them), so the fixture below lifts that floor and hands
the cost model costs under which threads win: these tests run real threads
on tiny data.  Every test here runs with a busy process pinned to each core
(the ``busy_cores`` marker, tests/conftest.py), as on a loaded machine.
"""
from __future__ import annotations

import _thread
import threading
import time

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import primaldual
import primaldual.blocks.sdca_threads as threads_mod
import primaldual.blocks.sdca_trial as trial_mod
import primaldual.solvers.sdca as sdca_mod
from primaldual import solve
from primaldual.problem import Problem
from primaldual._util.threads import resolve_n_jobs

from conftest import make_classification_data, make_regression_data

pytestmark = pytest.mark.busy_cores

CLASSIFICATION = ("hinge", "smooth_hinge", "squared_hinge", "logistic")
REGRESSION = ("squared", "absolute", "epsilon_insensitive")


#: costs under which threads always win (no sync or wake-up cost): the tests
#: below exercise the threads, whatever this machine's measured costs say
FREE_SYNCS = threads_mod.ThreadCosts(step_entry=1e-9, buffered_entry=1e-9, flush_column=0.0,
                                  sweep_column=0.0, wake=0.0)


@pytest.fixture(autouse=True)
def threads_on_tiny_data(monkeypatch):
    monkeypatch.setattr(threads_mod, "MIN_NNZ_PER_THREAD", 0)
    monkeypatch.setattr(threads_mod, "measured_thread_costs", lambda: FREE_SYNCS)


def data_for(loss, n=300, d=25, seed=0, dense=False):
    if loss in REGRESSION:
        return make_regression_data(n=n, d=d, seed=seed, dense=dense)
    return make_classification_data(n=n, d=d, seed=seed, dense=dense)


def recomputed(X, y, loss, lam, l1, sample_weight, res):
    """P(w(alpha)) and D(alpha) from the returned alpha, computed afresh:
    ``w(alpha) = soft_threshold((1/W) X^T (c alpha), l1) / lam``."""
    prob = Problem(X, y, loss=loss, lam=lam, l1=l1, sample_weight=sample_weight)
    c = np.ones(X.shape[0]) if sample_weight is None else np.asarray(sample_weight, float)
    v = sp.csr_matrix(X).T @ (c * res.dual_coef) / c.sum()
    w = np.sign(v) * np.maximum(np.abs(v) - l1, 0.0) / lam
    return w, prob.primal(w), prob.dual(res.dual_coef)


def assert_exact_certificate(X, y, loss, lam, res, l1=0.0, sample_weight=None):
    w, P, D = recomputed(X, y, loss, lam, l1, sample_weight, res)
    # relative to |P|, or to the margins' size where they cancel in P (rows of
    # norm 1e3: a margin's rounding is 1e-16 |x_i| |w|, not 1e-16 |P|),
    row_norms = np.sqrt(np.asarray(sp.csr_matrix(X).multiply(X).sum(axis=1)).ravel())
    # and no finer than the rounding of sums of O(1) loss terms (1e-4 * 1e-10)
    scale = max(abs(P), float(np.mean(row_norms)) * float(np.linalg.norm(w)), 1e-4)
    if res.extras.get("best_dual_epoch") is not None or res.extras.get("zero_model"):
        # unconverged: the best primal point of the checks with the best dual point
        # (solvers._base.pick_pair), each exact for itself
        P = Problem(X, y, loss=loss, lam=lam, l1=l1, sample_weight=sample_weight).primal(
            res.coef)
    else:
        np.testing.assert_allclose(res.coef, w, rtol=0,
                                   atol=1e-9 * max(1.0, np.abs(w).max()))
    assert abs(res.primal - P) <= 1e-10 * scale
    assert abs(res.dual - D) <= 1e-10 * scale
    assert res.primal - res.dual >= -1e-12 * scale


# -------------------------------------------------------------- n_jobs
def test_resolve_n_jobs():
    import os
    assert resolve_n_jobs(None) == 1 and resolve_n_jobs(1) == 1 and resolve_n_jobs(3) == 3
    assert resolve_n_jobs(-1) == (os.cpu_count() or 1)
    assert resolve_n_jobs(-(os.cpu_count() or 1) - 5) == 1
    for bad in (0, 1.5, "2", True):
        with pytest.raises(ValueError, match="n_jobs"):
            resolve_n_jobs(bad)


@pytest.mark.parametrize("K, d", [(1, 7), (2, 1000), (5, 999), (64, 37)])
def test_rows_summed_on_column_blocks_are_the_ordered_sum(monkeypatch, K, d):
    """The threads' partial images are added on column blocks, each in row
    order: bit for bit the sum one thread makes, on any number of threads; the
    fold adds them to the shared image and clears them."""
    import primaldual._util.threads as util
    monkeypatch.setattr(util, "MIN_VALUES_PER_THREAD", 5)
    rng = np.random.default_rng(K + d)
    parts = rng.standard_normal((K, d)) * 10.0 ** rng.integers(-8, 8, (K, d))
    ordered = parts[0].copy()
    for j in range(1, K):
        ordered += parts[j]
    shared = rng.standard_normal(d)
    folded = shared.copy()
    for j in range(K):
        folded += parts[j]
    for threads in (1, 2, 3, 8):
        out = np.full(d, np.nan)
        assert util.sum_rows(parts, out, threads) is False
        assert np.array_equal(out, ordered)
        work, into = parts.copy(), shared.copy()
        assert util.fold_rows(work, into, threads) is False
        assert np.array_equal(into, folded) and not work.any()


def test_n_jobs_one_is_the_serial_solver_exactly():
    X, y = make_classification_data(n=200, d=20, seed=3)
    kw = dict(loss="squared_hinge", lam=1e-3, solver="sdca", tol=1e-9, random_state=5)
    a = solve(X, y, **kw)
    b = solve(X, y, n_jobs=1, **kw)
    np.testing.assert_array_equal(a.dual_coef, b.dual_coef)
    np.testing.assert_array_equal(a.coef, b.coef)
    assert b.extras["threads"] == 1


def test_threads_are_used_and_capped_by_the_work(monkeypatch):
    X, y = make_classification_data(n=200, d=20, seed=3)
    res = solve(X, y, solver="sdca", n_jobs=3, tol=1e-6)
    assert res.extras["threads"] == 3
    monkeypatch.setattr(threads_mod, "MIN_NNZ_PER_THREAD", X.nnz // 2)
    res = solve(X, y, solver="sdca", n_jobs=8, tol=1e-6)
    assert res.extras["threads"] == 2


def test_a_serial_plan_checks_on_the_threads(monkeypatch, certificate_threads):
    """The cost model may keep the steps on one thread; a check's certificate
    pass (it reads alpha and w, each thread a range of rows) still runs on the
    threads asked for, and the run is the serial one: the same steps, the
    same optimum, its certificate exact."""
    X, y = make_classification_data(n=400, d=30, seed=7)
    monkeypatch.setattr(threads_mod, "MIN_SPEEDUP", np.inf)         # steps: serial
    seen = certificate_threads
    kw = dict(loss="logistic", lam=1e-3, solver="sdca", tol=1e-10, random_state=0)
    two = solve(X, y, n_jobs=2, **kw)
    assert two.extras["threads"] == 1 and two.converged
    assert seen and set(seen) == {2}
    seen.clear()
    one = solve(X, y, n_jobs=1, **kw)
    assert set(seen) == {1} and one.n_epochs == two.n_epochs
    np.testing.assert_array_equal(two.dual_coef, one.dual_coef)      # the same steps
    assert_exact_certificate(X, y, "logistic", 1e-3, two)
    # under the work floor a check stays on one thread
    monkeypatch.setattr(threads_mod, "MIN_NNZ_PER_THREAD", X.nnz)
    seen.clear()
    solve(X, y, n_jobs=2, **kw)
    assert set(seen) == {1}


def test_n_jobs_errors():
    X, y = make_classification_data(n=60, d=5)
    with pytest.raises(ValueError, match="runs on one thread"):
        solve(X, y, solver="spdc", n_jobs=2)
    with pytest.raises(ValueError, match="output='last'"):
        solve(X, y, solver="sdca", n_jobs=2, output="average")
    with pytest.raises(ValueError, match="n_jobs"):
        solve(X, y, solver="sdca", n_jobs=0)


# ------------------------------------------------ every loss, exact certificate
@pytest.mark.parametrize("loss", CLASSIFICATION + REGRESSION)
@pytest.mark.parametrize("n_jobs", [2, 3])
def test_every_loss_certified_exactly(loss, n_jobs):
    X, y = data_for(loss, seed=1)
    lam = 1e-2
    # the non-smooth regression losses converge slowly for SDCA, threads or not
    tol = 1e-5 if loss in ("absolute", "epsilon_insensitive") else 1e-9
    res = solve(X, y, loss=loss, lam=lam, solver="sdca", n_jobs=n_jobs, tol=tol,
                max_epochs=3000, random_state=2)
    assert res.extras["threads"] == n_jobs
    assert res.converged and res.rel_gap <= tol
    assert_exact_certificate(X, y, loss, lam, res)


@pytest.mark.parametrize("loss", ["hinge", "logistic", "squared"])
def test_two_threads_reach_the_one_thread_optimum(loss):
    X, y = data_for(loss, n=400, d=30, seed=4)
    kw = dict(loss=loss, lam=1e-3, solver="sdca", tol=1e-11, max_epochs=5000,
              random_state=0)
    one = solve(X, y, n_jobs=1, **kw)
    two = solve(X, y, n_jobs=2, **kw)
    assert one.converged and two.converged
    assert abs(one.primal - two.primal) <= 1e-8 * abs(one.primal)
    # strong convexity: ||w1 - w2||^2 <= 2 (gap1 + gap2) / lam
    bound = np.sqrt(2 * (one.gap + two.gap) / kw["lam"])
    assert np.linalg.norm(one.coef - two.coef) <= bound + 1e-12


@pytest.mark.parametrize("dense", [False, True])
def test_elastic_net_sample_weights_and_dense_rows(dense):
    X, y = make_classification_data(n=300, d=20, seed=6, dense=dense)
    c = np.random.default_rng(0).uniform(0.2, 3.0, X.shape[0])
    kw = dict(loss="squared_hinge", lam=1e-3, l1=1e-3, sample_weight=c, solver="sdca",
              tol=1e-9, max_epochs=3000, random_state=1)
    res = solve(X, y, n_jobs=2, **kw)
    assert res.converged
    assert_exact_certificate(X, y, "squared_hinge", 1e-3, res, l1=1e-3, sample_weight=c)
    ref = solve(X, y, n_jobs=1, **kw)
    assert abs(ref.primal - res.primal) <= 2e-9 * abs(ref.primal)


def test_warm_start_and_shrinking_off():
    X, y = make_classification_data(n=300, d=20, seed=7)
    kw = dict(loss="hinge", lam=1e-3, solver="sdca", random_state=3)
    first = solve(X, y, n_jobs=2, tol=1e-3, **kw)
    warm = solve(X, y, n_jobs=2, tol=1e-9, warm_start=first, max_epochs=3000, **kw)
    assert warm.converged
    assert_exact_certificate(X, y, "hinge", 1e-3, warm)
    # without shrinking at lam n = 3 (at lam n = 0.3 it takes ~4,000 threaded
    # epochs, each waiting for a core on a busy machine)
    kw["lam"] = 1e-2
    plain = solve(X, y, n_jobs=2, tol=1e-7, shrinking=False, max_epochs=5000, **kw)
    assert plain.converged and plain.extras["threads"] == 2
    assert_exact_certificate(X, y, "hinge", 1e-2, plain)


@pytest.mark.parametrize("sampling", ["uniform", "cyclic"])
def test_other_samplings(sampling):
    X, y = make_classification_data(n=300, d=20, seed=8)
    res = solve(X, y, loss="logistic", lam=1e-3, solver="sdca", n_jobs=2, tol=1e-9,
                sampling=sampling, max_epochs=3000, random_state=3)
    assert res.converged
    assert_exact_certificate(X, y, "logistic", 1e-3, res)


def test_plain_additions_still_certify_exactly():
    # atomic=False (PASSCoDe-Wild) may lose updates on shared columns: the
    # certificate is recomputed at w(alpha)
    X, y = make_classification_data(n=400, d=4, density=1.0, seed=9, dense=True)
    res = solve(X, y, loss="squared_hinge", lam=1e-3, solver="sdca", n_jobs=2,
                atomic=False, tol=1e-8, max_epochs=3000, random_state=0)
    assert res.converged
    assert_exact_certificate(X, y, "squared_hinge", 1e-3, res)


def test_lost_updates_cost_no_second_certificate_pass(monkeypatch):
    # a lost addition (simulated: each threaded pass drops a bit of v's column
    # 3) moves the certificate to w(alpha) through the drifted columns only, at
    # the checks that may end the run (gap within RESYNC_GAP of the tolerance);
    # the earlier checks keep their exact pair (w(v), alpha).  One certificate
    # pass per check, and the returned pair is exact at w(alpha)
    import primaldual.blocks.sdca_resync as resync_mod
    passes, resynced = [], []
    real_cert, real_resync = Problem.certificate, resync_mod.resync_certificate
    real_pass = sdca_mod.threaded_pass

    def counting(self, *args, **kw):
        passes.append(1)
        return real_cert(self, *args, **kw)

    def recording(problem, cert, *args, **kw):
        out = real_resync(problem, cert, *args, **kw)
        resynced.append((cert.rel_gap, out[1]))
        return out

    def losing(rows, spec, state, *args):
        out = real_pass(rows, spec, state, *args)
        state.v[3] *= 1.0 - 1e-7
        return out

    monkeypatch.setattr(Problem, "certificate", counting)
    monkeypatch.setattr(resync_mod, "resync_certificate", recording)
    monkeypatch.setattr(sdca_mod, "threaded_pass", losing)
    X, y = make_classification_data(n=400, d=30, seed=9)
    tol = 1e-9
    res = solve(X, y, loss="logistic", lam=1e-3, solver="sdca", n_jobs=2, tol=tol,
                max_epochs=3000, random_state=0)
    assert res.converged
    assert len(passes) == len(res.trace)
    # resynced: the checks near the tolerance, the last one among them
    assert resynced and all(g <= sdca_mod.RESYNC_GAP * tol for g, _ in resynced)
    assert resynced[-1][1] > resync_mod.RESYNC_DRIFT                 # updates were lost
    far = [r for r in res.trace if r["rel_gap"] > 2 * sdca_mod.RESYNC_GAP * tol]
    assert far and len(resynced) <= len(res.trace) - len(far)       # these kept theirs
    assert_exact_certificate(X, y, "logistic", 1e-3, res)
    # a far check's pair is exact for the w it reports
    prob = Problem(X, y, loss="logistic", lam=1e-3)
    snaps = []
    res2 = solve(X, y, loss="logistic", lam=1e-3, solver="sdca", n_jobs=2, tol=tol,
                 max_epochs=3000, random_state=0,
                 callback=lambda s: snaps.append({k: np.array(v) for k, v in s.items()})
                 and False)
    assert res2.converged
    for s in snaps:
        if s["rel_gap"] > 2 * sdca_mod.RESYNC_GAP * tol:
            assert abs(prob.primal(s["coef"]) - s["primal"]) <= 1e-12 * abs(s["primal"])
            assert abs(prob.dual(s["dual_coef"]) - s["dual"]) <= 1e-12 * abs(s["primal"])


def test_the_thread_planner_calls_no_blas():
    # OpenBLAS runs a long dot product on its threads, which then spin for
    # about 0.1 s on the cores the first-pass trial is about to time (it
    # measured two threads on about one core): the statistics the planner
    # reads right before the trial use numpy's own loops, never `@`
    import ast
    import inspect
    import primaldual.blocks.thread_stats as stats_mod
    for mod in (stats_mod, threads_mod):
        tree = ast.parse(inspect.getsource(mod))
        matmul = [n.lineno for n in ast.walk(tree)
                  if isinstance(n, (ast.BinOp, ast.AugAssign)) and isinstance(n.op, ast.MatMult)]
        assert not matmul, (mod.__name__, matmul)
    rows = Problem(*make_classification_data(n=300, d=40, seed=2), loss="hinge",
                   lam=1e-2).rows
    omega = rows.column_counts().astype(float)
    assert stats_mod.column_overlap(rows) == pytest.approx(
        float(np.dot(omega, omega)) / (rows.n * omega.sum()), rel=1e-12)


def test_resync_certificate_is_exact_at_the_point_it_returns():
    from primaldual.blocks.sdca_resync import resync_certificate
    rng = np.random.default_rng(4)
    X, y = make_classification_data(n=300, d=40, seed=4)
    for l1 in (0.0, 1e-3):
        prob = Problem(X, y, loss="hinge", lam=1e-2, l1=l1)
        alpha = rng.uniform(0.0, 1.0, 300) * prob.y
        fresh = prob.dual_image(alpha)
        v = fresh.copy()
        v[[2, 17]] += 1e-3                       # two columns lost updates
        v[5] += 1e-15 * np.abs(fresh).max()      # rounding: kept as it is
        cert = prob.certificate(prob.penalty.grad_conjugate(v), alpha)
        out, drift = resync_certificate(prob, cert, v, 1e-11, n_threads=2)
        assert drift > 1e-4
        expect = v.copy()
        expect[[2, 17]] = fresh[[2, 17]]
        w = prob.penalty.grad_conjugate(expect)
        np.testing.assert_array_equal(out.w, w)
        np.testing.assert_array_equal(out.v, cert.v)
        ref = prob.certificate(w, alpha)
        np.testing.assert_allclose(out.margins, ref.margins, rtol=1e-13, atol=1e-15)
        assert abs(out.primal - ref.primal) <= 1e-13 * abs(ref.primal)
        assert out.dual == cert.dual == ref.dual
        assert resync_certificate(prob, ref, fresh, 1e-11)[0] is ref


# ------------------------------------------------ contention on adversarial data
@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(n=st.integers(2, 12), d=st.integers(1, 3), threads=st.integers(2, 8),
       loss=st.sampled_from(CLASSIFICATION + REGRESSION), seed=st.integers(0, 10_000),
       scale=st.sampled_from([1e-3, 1.0, 1e3]), dup=st.booleans(),
       sampling=st.sampled_from(["permutation", "uniform", "cyclic"]))
def test_no_alpha_leaves_its_dual_domain(n, d, threads, loss, seed, scale, dup, sampling):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d)) * scale
    if dup:                                  # identical rows: the worst contention
        X[:] = X[0]
    y = (np.where(rng.random(n) < 0.5, -1.0, 1.0) if loss in CLASSIFICATION
         else rng.standard_normal(n))
    res = solve(X, y, loss=loss, lam=1e-2, solver="sdca", n_jobs=threads, tol=0.0,
                max_epochs=20, check_every=5, sampling=sampling, random_state=seed)
    prob = Problem(X, y, loss=loss, lam=1e-2)
    assert np.isfinite(prob.dual(res.dual_coef))        # -inf outside the domain
    assert np.all(np.isfinite(res.dual_coef))
    assert_exact_certificate(X, y, loss, 1e-2, res)


# ------------------------------------------------------------------ stops
def big_problem():
    X, y = make_classification_data(n=20_000, d=200, density=0.05, seed=11)
    return X, y


def test_time_limit_with_threads():
    X, y = big_problem()
    res = solve(X, y, loss="logistic", lam=1e-7, solver="sdca", n_jobs=2, tol=0.0,
                max_epochs=10_000, time_limit=0.5, random_state=0)
    assert res.stop_reason == "time_limit" and res.n_epochs < 10_000
    assert_exact_certificate(X, y, "logistic", 1e-7, res)


def test_callback_stop_with_threads():
    X, y = big_problem()
    seen = []

    def cb(snap):
        seen.append(snap["epoch"])
        return len(seen) >= 3

    res = solve(X, y, loss="hinge", lam=1e-6, solver="sdca", n_jobs=2, tol=0.0,
                max_epochs=10_000, check_every=1, callback=cb, random_state=0)
    assert res.stop_reason == "callback" and len(seen) == 3
    assert_exact_certificate(X, y, "hinge", 1e-6, res)


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_keyboard_interrupt_stops_cleanly_and_certifies(monkeypatch, n_jobs, default_sigint):
    """A KeyboardInterrupt while the threads run: every thread is waited for,
    and the run returns a certified result with stop_reason "interrupted".
    (``default_sigint``: under SIGINT ignored, as in a run started in the
    background, ``interrupt_main`` does nothing.)"""
    X, y = big_problem()
    real = sdca_mod.sdca_epoch
    calls = {"n": 0}
    lock = threading.Lock()

    def epoch_then_interrupt(*args):
        with lock:
            calls["n"] += 1
            fire = calls["n"] == 5
        if fire:
            _thread.interrupt_main()      # what Ctrl-C does
            time.sleep(0.2)               # the main thread gets it while we run
        return real(*args)

    monkeypatch.setattr(sdca_mod, "sdca_epoch", epoch_then_interrupt)      # serial
    monkeypatch.setattr(threads_mod, "sdca_epoch", epoch_then_interrupt)   # threads
    res = solve(X, y, loss="logistic", lam=1e-7, solver="sdca", n_jobs=n_jobs, tol=0.0,
                max_epochs=10_000, check_every=1, shrinking=False, random_state=0)
    assert res.stop_reason == "interrupted"
    assert res.n_epochs < 10_000
    n_calls = calls["n"]
    time.sleep(0.3)
    assert calls["n"] == n_calls          # no thread is still running steps
    assert_exact_certificate(X, y, "logistic", 1e-7, res)


# ------------------------------------------------------------ checkpoints
def test_checkpoint_and_resume_with_threads(tmp_path):
    X, y = make_classification_data(n=500, d=20, seed=12)
    kw = dict(loss="hinge", lam=1e-4, solver="sdca", n_jobs=2, random_state=0)
    part = solve(X, y, tol=0.0, max_epochs=6, checkpoint=tmp_path, check_every=2, **kw)
    assert part.stop_reason == "max_epochs"
    res = solve(X, y, tol=1e-8, max_epochs=3000, resume=tmp_path, **kw)
    assert res.converged and res.n_epochs > 6
    assert_exact_certificate(X, y, "hinge", 1e-4, res)


def test_column_overlap_by_hand():
    from primaldual.rows import as_rows
    from primaldual.blocks.sdca_threads import column_overlap
    # column 0 in all 4 rows, column 1 in one row: entries 4 + 1 = 5;
    # sum omega^2 = 16 + 1 = 17 -> 17 / (4 * 5)
    X = sp.csr_matrix(np.array([[1.0, 2.0], [1.0, 0.0], [3.0, 0.0], [1.0, 0.0]]))
    assert column_overlap(as_rows(X)) == pytest.approx(17 / 20)


@pytest.mark.parametrize("atomic, dense, sync_every, expect", [
    ("auto", False, "auto", True),     # thread copies: atomic syncs
    ("auto", True, 0, True),           # one shared v, dense columns: atomic
    ("auto", False, 0, False),         # one shared v, sparse text-like, logistic: plain
    (True, False, 0, True),
    (False, True, "auto", False),
    (False, True, 0, False)])
def test_atomic_choice(atomic, dense, sync_every, expect):
    X, y = make_classification_data(n=300, d=200, density=0.02, seed=1)
    if dense:
        X = np.random.default_rng(0).standard_normal((300, 8))
    res = solve(X, y, loss="logistic", lam=1e-3, solver="sdca", n_jobs=2, atomic=atomic,
                sync_every=sync_every, tol=1e-9, max_epochs=3000, random_state=0)
    assert res.converged
    assert_exact_certificate(X, y, "logistic", 1e-3, res)
    solver = sdca_mod.SDCASolver(Problem(X, y, loss="logistic", lam=1e-3), tol=1e-6,
                                 max_epochs=10, random_state=0, n_jobs=2, atomic=atomic,
                                 sync_every=sync_every)
    assert solver.atomic is expect


@pytest.mark.parametrize("start, stop, K, entries", [
    (0, 100_000, 2, 10 * threads_mod.CHUNK_NNZ), (7, 50_007, 3, 100 * threads_mod.CHUNK_NNZ),
    (0, 1_000, 2, 2 * threads_mod.CHUNK_NNZ), (5, 9, 4, 10), (0, 3, 4, 10)])
def test_chunks_cover_the_range_once_and_shrink_at_the_end(start, stop, K, entries):
    from primaldual.blocks.sdca_threads import MAX_CHUNKS_PER_THREAD, _chunk_bounds
    b = _chunk_bounds(start, stop, K, entries)
    assert b[0] == start and b[-1] == stop and np.all(np.diff(b) > 0)
    m = int(min(MAX_CHUNKS_PER_THREAD * K, max(K, entries // threads_mod.CHUNK_NNZ)))
    size = np.diff(b)
    if m > K and stop - start >= 8 * m:
        # the last K of m equal chunks, in quarters: no thread is left a whole
        # chunk alone at the end
        assert size.shape[0] == m - K + 4 * K
        assert size[-1] <= (stop - start) / m / 4 + 1 < size[0]
    else:
        assert size.shape[0] <= max(m, 1) + 3 * K


def test_an_empty_range_is_one_empty_chunk():
    from primaldual.blocks.sdca_threads import _chunk_bounds
    assert _chunk_bounds(7, 7, 2, 0).tolist() == [7, 7]


@pytest.mark.parametrize("sync_every", [0, 64])
def test_warm_threads_load_the_kernel_before_a_trial(monkeypatch, sync_every):
    """The trial times steps, not a kernel's first dispatch (its load from the
    cache, or its compilation, for the arguments the threads pass): the
    warm-up's empty pass calls the threads' kernel once, with an empty range,
    and changes nothing."""
    from primaldual.kernels.sdca import SDCAState
    X, y = data_for("hinge", n=200, d=20, seed=4)
    prob = Problem(X, y, loss="hinge", lam=1e-2)
    n, d = prob.n, prob.d
    calls = []
    kernel = threads_mod.sdca_epoch

    def counted(*args):
        calls.append((args[4], args[5], args[-2], args[-1] is None))
        return kernel(*args)

    monkeypatch.setattr(threads_mod, "sdca_epoch", counted)
    work = threads_mod.ThreadWork(d, 2, sync_every, False, int(prob.rows.row_nnz.max()), True)
    state = SDCAState(np.zeros(n), np.zeros(d), np.zeros(0), np.zeros(n, np.uint8))
    prox = [sdca_mod.prox_work_arrays(prob.rows, 0.0) for _ in range(2)]
    threads_mod.warm_threads(prob.rows_view(), prob.step_spec(), state, work, prox)
    assert len(calls) == 1 and calls[0][0] == calls[0][1] == 0
    # the arguments a pass's chunks get (the atomic flag, the copy or none)
    assert calls[0][2:] == (False, sync_every == 0)
    assert not state.v.any() and not state.alpha.any() and not work.cpu.any()


def test_atomic_columns_are_the_most_held_by_hand():
    from primaldual.rows import as_rows
    from primaldual.blocks.thread_stats import atomic_columns
    # column 0 in 4 of 5 rows, column 1 in 2, column 2 in 1, column 3 in none
    X = sp.csr_matrix(np.array([[1.0, 2.0, 0, 0], [1.0, 0, 0, 0], [3.0, 1.0, 0, 0],
                                [1.0, 0, 5.0, 0], [0, 0, 0, 0]]))
    rows = as_rows(X)
    assert atomic_columns(rows, 0.5).tolist() == [1, 0, 0, 0]      # held by >= 2.5 rows
    assert atomic_columns(rows, 0.4).tolist() == [1, 1, 0, 0]      # >= 2 rows
    assert atomic_columns(rows, 0.0).tolist() == [1, 1, 1, 0]      # at least one row
    assert atomic_columns(rows, 0.5).dtype == np.uint8


@pytest.mark.parametrize("loss, expect", [("hinge", "mask"), ("squared_hinge", "mask"),
                                          ("logistic", False), ("squared", False)])
def test_auto_atomic_masks_the_most_held_columns_for_box_duals(loss, expect):
    """One shared v on sparse text-like rows: a loss with a box dual gets atomic
    additions on the columns held by at least ATOMIC_SHARE of the rows (here
    column 0, in every row), the smooth losses none."""
    from primaldual.blocks.thread_stats import ATOMIC_SHARE, auto_atomic
    X, y = make_classification_data(n=2000, d=4000, density=0.002, seed=5)
    X = sp.hstack([sp.csr_matrix(np.ones((X.shape[0], 1))), X]).tocsr()
    prob = Problem(X, y, loss=loss, lam=1e-3)
    got = auto_atomic(prob.rows, 0, prob.loss.box_dual)
    if expect is False:
        assert got is False
        return
    held = np.diff(X.tocsc().indptr) >= ATOMIC_SHARE * X.shape[0]
    assert got.dtype == np.uint8 and got[0] == 1
    assert np.array_equal(got.astype(bool), held)   # n <= the sample: exact counts
    assert 0 < got.sum() < X.shape[1]
    assert auto_atomic(prob.rows, 64, prob.loss.box_dual) is True   # copies


def test_masked_additions_on_one_thread_equal_plain_ones():
    """The kernel with a mask of atomic columns (half the columns) makes the
    same steps as with plain additions, bit for bit, on one thread."""
    from primaldual.kernels.sdca import Averaging, SDCAState, Shrinking, sdca_epoch
    X, y = data_for("hinge", n=300, d=50, seed=6)
    X = sp.csr_matrix(X)
    prob = Problem(X, y, loss="hinge", lam=1e-3)
    order = np.random.default_rng(0).permutation(np.tile(np.arange(300), 3)).astype(np.int64)
    mask = (np.arange(50) % 2).astype(np.uint8)
    out = []
    for atomic in (False, mask, True):
        state = SDCAState(np.zeros(300), np.zeros(50), np.zeros(0), np.zeros(300, np.uint8))
        sdca_epoch(prob.rows_view(), prob.step_spec(), state, order, 0, order.shape[0], 0, -1,
                   Shrinking(False, np.inf, np.inf),
                   Averaging(False, np.zeros(0), np.zeros(0, np.int64), 0),
                   sdca_mod.prox_work_arrays(prob.rows, 0.0), atomic, None)
        out.append((state.alpha.copy(), state.v.copy()))
    for alpha, v in out[1:]:
        assert np.array_equal(alpha, out[0][0]) and np.array_equal(v, out[0][1])
    assert np.count_nonzero(out[0][0]) > 0
    # the Python side of the overloads: plain additions, and the same test
    from primaldual.kernels.atomics import add_entry, any_atomic
    a = np.zeros(3)
    add_entry(a, 1, 2.5, mask)
    assert a.tolist() == [0.0, 2.5, 0.0]
    assert any_atomic(mask) and any_atomic(True) and not any_atomic(False)
    assert not any_atomic(np.zeros(0, np.uint8))


@pytest.mark.parametrize("loss", ["hinge", "logistic", "squared"])
def test_threaded_certificate_pass_equals_one_thread(loss):
    X, y = data_for(loss, n=500, d=40, seed=3)
    c = np.random.default_rng(2).uniform(0.5, 2.0, X.shape[0])
    prob = Problem(X, y, loss=loss, lam=1e-3, sample_weight=c)
    alpha = solve(X, y, loss=loss, lam=1e-3, sample_weight=c, solver="sdca", tol=1e-3,
                  random_state=0).dual_coef
    w = np.random.default_rng(4).standard_normal(X.shape[1])
    one = prob.certificate(w, alpha)
    for k in (2, 3, 7):
        many = prob.certificate(w, alpha, n_threads=k)
        assert many.primal == pytest.approx(one.primal, rel=1e-13)
        assert many.dual == pytest.approx(one.dual, rel=1e-13)
        np.testing.assert_allclose(many.v, one.v, rtol=1e-12, atol=1e-15)
        np.testing.assert_array_equal(many.margins, one.margins)


def test_mean_row_cosine_and_distinct_columns_by_hand():
    from primaldual.rows import as_rows
    from primaldual.blocks.sdca_threads import distinct_columns, mean_row_cosine
    # rows (1, 0), (0, 0) (skipped), (1, 1): one pair, cosine 1/sqrt(2)
    X = sp.csr_matrix(np.array([[1.0, 0.0], [0.0, 0.0], [1.0, 1.0]]))
    assert mean_row_cosine(as_rows(X)) == pytest.approx(1 / np.sqrt(2), rel=1e-12)
    Xo = sp.csr_matrix(np.eye(3))
    assert mean_row_cosine(as_rows(Xo)) == pytest.approx(0.0, abs=1e-15)
    # n = 2 rows; a column in both rows is in any draw, one in one row is in
    # 1 draw with chance 1/2 and in 2 draws with chance 3/4
    omega = np.array([2, 0, 1])
    assert distinct_columns(omega, 2, 1) == pytest.approx(1.5, rel=1e-12)
    assert distinct_columns(omega, 2, 2) == pytest.approx(1.75, rel=1e-12)


@pytest.mark.parametrize("dense", [False, True])
def test_sampled_statistics_against_direct_computation(dense):
    """The cost model's row cosine and column counts, read from a sample of
    rows through the row view: exact when every row is read (against a
    product of the normalized matrix and a count of its nonzeros), and on a
    sample equal to the same formulas on the sampled rows, scaled to n."""
    from primaldual.rows import as_rows
    from primaldual.blocks.sdca_threads import mean_row_cosine, sampled_column_counts
    rng = np.random.default_rng(5)
    X = sp.random(300, 40, density=0.2, format="csr", random_state=rng)
    X[7] = 0.0                                       # an empty row is skipped
    X.eliminate_zeros()
    Xin = X.toarray() if dense else X
    rows = as_rows(Xin)
    A = X.toarray()
    norms = np.linalg.norm(A, axis=1)
    U = A[norms > 0] / norms[norms > 0, None]
    G = U @ U.T
    m = U.shape[0]
    assert mean_row_cosine(rows) == pytest.approx((G.sum() - m) / (m * (m - 1)), rel=1e-12)
    np.testing.assert_array_equal(sampled_column_counts(rows), np.count_nonzero(A, axis=0))
    from primaldual.blocks.sdca_threads import grouped_column_counts
    values, mult = grouped_column_counts(rows)
    omega = np.count_nonzero(A, axis=0)
    want, want_mult = np.unique(omega[omega > 0], return_counts=True)
    np.testing.assert_array_equal(values, want)
    np.testing.assert_array_equal(mult, want_mult)
    idx = np.unique(np.linspace(0, 299, 50).astype(np.int64))
    np.testing.assert_allclose(sampled_column_counts(rows, sample=50),
                               np.count_nonzero(A[idx], axis=0) * 300 / idx.shape[0])
    Us = A[idx][norms[idx] > 0] / norms[idx][norms[idx] > 0, None]
    ms = Us.shape[0]
    assert mean_row_cosine(rows, sample=50) == pytest.approx(
        ((Us @ Us.T).sum() - ms) / (ms * (ms - 1)), rel=1e-12)


# ------------------------------------------------------------ the cost model
#: costs of the size this kind of machine measures (ns per entry, us per wake)
TYPICAL = threads_mod.ThreadCosts(step_entry=4e-9, buffered_entry=5e-9, flush_column=6e-9,
                               sweep_column=1e-9, wake=3e-4)


def zipf_text(n, d, tokens=70, exponent=1.03, seed=0):
    """Raw term counts of words drawn from one Zipf law (a shared vocabulary:
    mean row cosine ~0.5)."""
    rng = np.random.default_rng(seed)
    cdf = np.cumsum(1.0 / np.arange(1, d + 1) ** exponent)
    cdf /= cdf[-1]
    lens = rng.poisson(tokens, n).clip(1)
    rows = np.repeat(np.arange(n), lens)
    cols = np.minimum(np.searchsorted(cdf, rng.random(rows.shape[0])), d - 1)
    X = sp.csr_matrix((np.ones(rows.shape[0]), (rows, cols)), shape=(n, d))
    X.sum_duplicates()
    return X


def test_cost_model_serial_on_small_shared_vocabulary_threads_on_large_orthogonal(
        monkeypatch):
    from primaldual.rows import as_rows
    monkeypatch.setattr(threads_mod, "MIN_NNZ_PER_THREAD", 100_000)
    # a small shared vocabulary (5,000 rows over 100,000 words): short passes
    # (a wake-up each) and syncs over a wide vocabulary cost more than the
    # threads save at every period the staleness allows
    text = as_rows(zipf_text(5_000, 100_000))
    assert threads_mod.mean_row_cosine(text) > 0.4 and text.nnz > 2 * 100_000
    plan = threads_mod.thread_plan(text, 2, costs=TYPICAL, hot_ok=False)
    assert plan.threads == 1 and plan.reason.startswith("serial") and plan.speedup < 1.15
    # copies of its few hot columns only: the others shared, syncs of a few
    # dozen columns per chunk, nearly no staleness
    plan = threads_mod.thread_plan(text, 2, costs=TYPICAL)
    assert plan.sparse == "hot" and "hot columns" in plan.reason
    assert 0 < plan.hot.shape[0] <= threads_mod.HOT_MAX and plan.penalty < 1.05
    # large and orthogonal (random signs): long sync periods cost nothing in
    # epochs, and each sync's columns are reused many times
    rng = np.random.default_rng(1)
    n, r, d = 100_000, 20, 20_000
    X = sp.csr_matrix((rng.standard_normal(n * r), rng.integers(0, d, n * r),
                       np.arange(0, n * r + 1, r)), shape=(n, d))
    ortho = as_rows(X)
    assert abs(threads_mod.mean_row_cosine(ortho)) < 0.01
    plan = threads_mod.thread_plan(ortho, 2, costs=TYPICAL)
    assert plan.threads == 2 and plan.reason.startswith("threads") and plan.speedup > 1.15
    # columns that rarely meet: one shared v, no copies (PASSCoDe's design)
    assert plan.sync_every == 0 and "one shared v, column overlap 0.00" in plan.reason
    assert threads_mod.thread_plan(ortho, 2, costs=TYPICAL._replace(two_threads=1.0)
                                   ).threads == 1
    # the sampled overlap estimates column_overlap; a shared vocabulary's is high
    for rows in (ortho, text):
        sampled = threads_mod._ThreadModel(rows, TYPICAL).overlap
        assert sampled == pytest.approx(threads_mod.column_overlap(rows), rel=0.3, abs=2e-4)
    assert threads_mod._ThreadModel(text, TYPICAL).overlap > threads_mod.WILD_OVERLAP
    # copies where one shared v is not allowed: long periods
    monkeypatch.setattr(threads_mod, "WILD_OVERLAP", 0.0)
    plan = threads_mod.thread_plan(ortho, 2, costs=TYPICAL)
    assert plan.threads == 2 and plan.sync_every >= 1024
    # on cores held by other work (two threads no faster than one) it is serial
    held = TYPICAL._replace(two_threads=1.0)
    assert threads_mod.thread_plan(ortho, 2, costs=held).threads == 1
    # n_jobs=1 is one thread whatever the data; so is data too small to share out
    one = threads_mod.thread_plan(ortho, 1, costs=TYPICAL)
    assert (one.threads, one.reason) == (1, "n_jobs=1")
    tiny = threads_mod.thread_plan(as_rows(X[:1000]), 2, costs=TYPICAL)
    assert tiny.threads == 1 and "fewer than" in tiny.reason


def test_serial_choice_is_the_serial_solver_and_says_why(monkeypatch):
    monkeypatch.setattr(threads_mod, "measured_thread_costs", lambda: TYPICAL)
    X = zipf_text(3000, 3000, tokens=20, seed=2)
    y = np.where(np.random.default_rng(0).random(X.shape[0]) < 0.5, -1.0, 1.0)
    kw = dict(loss="logistic", lam=1e-3, solver="sdca", tol=1e-8, random_state=0)
    two = solve(X, y, n_jobs=2, **kw)
    one = solve(X, y, n_jobs=1, **kw)
    assert two.extras["threads"] == 1
    assert two.extras["threads_reason"].startswith("serial: 2 threads predicted")
    assert one.extras["threads_reason"] == "n_jobs=1"
    np.testing.assert_array_equal(one.dual_coef, two.dual_coef)


# ------------------------------------- the prediction checked on the data
@pytest.mark.parametrize("loss", ["hinge", "logistic"])     # shrinking on / off
@pytest.mark.parametrize("outcome", ["threads", "serial"])
def test_trial_pass_decides_threads_or_serial_and_certifies(monkeypatch, loss, outcome):
    """Data long enough for a trial: the first pass runs a quarter on one thread
    and a quarter on the threads; the measured times decide (here handed in, so the
    choice does not depend on this machine's load), the reason says what was
    measured, and either way the run certifies the serial optimum."""
    monkeypatch.setattr(sdca_mod, "TRIAL_MIN_NNZ", 0)
    monkeypatch.setattr(sdca_mod, "TRIAL_FLOOR", 0.0)
    decide = sdca_mod.SDCASolver._trial_decision
    seen = []

    def with_times(self):
        serial_s, serial_nnz, thread_s, thread_nnz = self.trial_times
        # both halves of one pass were timed, on about half the entries each
        seen.append((serial_s > 0, thread_s > 0, serial_nnz + thread_nnz))
        per_entry = 1e-9 if outcome == "threads" else 4e-9
        self.trial_times[:] = [2e-9 * serial_nnz, serial_nnz, per_entry * thread_nnz,
                               thread_nnz]
        decide(self)

    monkeypatch.setattr(sdca_mod.SDCASolver, "_trial_decision", with_times)
    X, y = data_for(loss, n=400, d=30, seed=3)
    kw = dict(loss=loss, lam=1e-3, solver="sdca", tol=1e-9, max_epochs=3000,
              random_state=0)
    res = solve(X, y, n_jobs=2, **kw)
    assert len(seen) == 1 and seen[0][:2] == (True, True)
    assert 0 < seen[0][2] < sp.csr_matrix(X).nnz     # half of the first pass
    reason = res.extras["threads_reason"]
    assert reason.startswith(f"{outcome}: measured on this data's first pass"), reason
    assert res.extras["threads"] == (2 if outcome == "threads" else 1)
    assert res.converged
    assert_exact_certificate(X, y, loss, 1e-3, res)
    ref = solve(X, y, n_jobs=1, **kw)
    np.testing.assert_allclose(res.coef, ref.coef, rtol=0, atol=1e-5 * np.abs(ref.coef).max())


def _fake_solver(serial_ns, thread_ns, passes_before=0):
    class Fake:
        n_threads, trial, trial_mid = 2, True, 5
        plan = threads_mod.ThreadPlan(1, 64, 0.8, "serial: predicted", True, 2, 1.25)
        threads_reason = plan.reason
        alpha = np.array([0.5, -0.25])
        problem = type("P", (), {"dual_image": staticmethod(lambda a: 2.0 * a)})()

    f = Fake()
    f.trial_times = np.array([serial_ns * 1e-9 * 1e6, 1e6, thread_ns * 1e-9 * 2e6, 2e6])
    f.trial_cpu = np.zeros(2)
    f.trial_passes = passes_before
    f.thread_work = f.thread_prox = object()
    f.v = np.array([7.0, 7.0])
    return f


def test_trial_decision_rule():
    """Threads stay where one thread's time per entry over theirs, divided by
    the predicted epoch penalty, is at least TRIAL_MIN_SPEEDUP; a first trial
    within TRIAL_RETRY_BAND of it decides nothing, a second one decides."""
    bar, band = trial_mod.TRIAL_MIN_SPEEDUP, trial_mod.TRIAL_RETRY_BAND
    for measured in (bar - 1.5 * band, bar - 0.5 * band, bar + 0.5 * band,
                     bar + 1.5 * band, 10.0 / 10.0 / 1.25):
        for before in (0, 1):
            f = _fake_solver(10.0, 10.0 / (measured * 1.25), before)
            sdca_mod.SDCASolver._trial_decision(f)
            assert f.trial_passes == before + 1
            assert f"{measured:.2f}x one thread" in f.threads_reason
            again = before == 0 and abs(measured - bar) < band
            assert f.trial is again
            if again:                  # the threads run on, the next pass decides
                assert f.threads_reason.startswith("trial again: ")
                assert f.n_threads == 2 and f.thread_work is not None
                continue
            stays = measured >= bar
            assert f.threads_reason.startswith("threads: " if stays else "serial: ")
            assert (f.n_threads == 2) is stays
            where = "first pass" if before == 0 else "first 2 passes"
            assert f"measured on this data's {where}" in f.threads_reason
            # serial from here: v is the exact image of alpha again
            assert stays or (f.thread_work is None and np.array_equal(f.v, [1.0, -0.5]))


def test_trial_outcome_reads_the_bar_and_the_band():
    plan = threads_mod.ThreadPlan(2, 0, 1.5, "threads: predicted", True, 2, 1.0)
    times = np.array([10e-9 * 1e6, 1e6, 8e-9 * 1e6, 1e6])          # 1.25x
    assert trial_mod.trial_outcome(times, np.zeros(2), plan, 2, 1, 1.2, 0.1)[0] == "again"
    assert trial_mod.trial_outcome(times, np.zeros(2), plan, 2, 2, 1.2, 0.1)[0] == "threads"
    assert trial_mod.trial_outcome(times, np.zeros(2), plan, 2, 1, 1.3, 0.01)[0] == "serial"
    assert trial_mod.trial_outcome(np.zeros(4), np.zeros(2), plan, 2, 1) == (None, None)


def test_a_descheduled_serial_quarter_does_not_pass_for_slow():
    # other work took the core from the serial quarter (wall 20 ns per entry,
    # CPU 10): the threads' 9 ns are measured against the 10, not the 20
    plan = threads_mod.ThreadPlan(2, 0, 1.5, "threads: predicted", True, 2, 1.0)
    times = np.array([20e-9 * 1e6, 1e6, 9e-9 * 1e6, 1e6])
    keep, reason, measured = trial_mod.trial_verdict(
        times, np.array([10e-9 * 1e6, 17e-9 * 1e6]), plan, 2, 1.2)
    assert not keep and "1.11x one thread" in reason and abs(measured - 10 / 9) < 1e-12
    # on a core of its own (CPU = wall) the same threads win
    keep, reason, _ = trial_mod.trial_verdict(
        times, np.array([20e-9 * 1e6, 17e-9 * 1e6]), plan, 2, 1.2)
    assert keep and "2.22x one thread" in reason


@pytest.mark.parametrize("second", ["threads", "serial"])
def test_a_trial_near_the_bar_is_run_again_on_the_next_pass(monkeypatch, second):
    """A first trial within the band of the bar leaves the threads on for the
    rest of that pass; the next pass runs a second trial, whose times are added
    to the first's, and that decides.  Either way the run certifies the serial
    optimum."""
    monkeypatch.setattr(sdca_mod, "TRIAL_MIN_NNZ", 0)
    monkeypatch.setattr(sdca_mod, "TRIAL_FLOOR", 0.0)
    decide = sdca_mod.SDCASolver._trial_decision
    seen = []

    def with_times(self):
        serial_nnz, thread_nnz = self.trial_times[1], self.trial_times[3]
        seen.append((self.trial_passes, self.trial_times.copy()))
        first = self.trial_passes == 0
        # the first trial: at the bar's speed-up (the plan's penalty taken out);
        # the second pass's quarters: 3x faster threads, or 3x slower
        bar = trial_mod.TRIAL_MIN_SPEEDUP * self.plan.penalty
        ratio = bar if first else (3.0 if second == "threads" else 1 / 3)
        self.trial_times[:] = [2e-9 * serial_nnz, serial_nnz,
                               2e-9 / ratio * thread_nnz, thread_nnz]
        decide(self)
        assert self.trial is first and self.n_threads == (2 if first or second == "threads"
                                                          else 1)

    monkeypatch.setattr(sdca_mod.SDCASolver, "_trial_decision", with_times)
    X, y = data_for("hinge", n=400, d=30, seed=3)
    kw = dict(loss="hinge", lam=1e-3, solver="sdca", tol=1e-9, max_epochs=3000,
              random_state=0)
    res = solve(X, y, n_jobs=2, **kw)
    assert [p for p, _ in seen] == [0, 1]
    (_, one), (_, two) = seen
    nnz = sp.csr_matrix(X).nnz
    assert 0 < one[1] + one[3] < nnz                     # half of the first pass timed
    # the second pass's quarters are added to the first's
    assert one[1] < two[1] < one[1] + nnz and one[3] < two[3] < one[3] + nnz
    reason = res.extras["threads_reason"]
    assert reason.startswith(f"{second}: measured on this data's first 2 passes"), reason
    assert res.extras["threads"] == (2 if second == "threads" else 1)
    assert res.converged
    assert_exact_certificate(X, y, "hinge", 1e-3, res)
    ref = solve(X, y, n_jobs=1, **kw)
    np.testing.assert_allclose(res.coef, ref.coef, rtol=0, atol=1e-5 * np.abs(ref.coef).max())


def test_serial_after_the_trial_goes_on_from_the_exact_image(monkeypatch):
    """The threads of the trial pass may lose concurrent updates of v (plain
    additions), and a serial run's checks do not re-synchronize it: the run
    that turns serial after the trial goes on from v(alpha).  Here v is
    corrupted at the decision (as lost updates would leave it) and the run
    still certifies the serial optimum; from the corrupted v it stalled."""
    monkeypatch.setattr(sdca_mod, "TRIAL_MIN_NNZ", 0)
    monkeypatch.setattr(sdca_mod, "TRIAL_FLOOR", 0.0)
    decide = sdca_mod.SDCASolver._trial_decision

    def slow_threads_and_lost_updates(self):
        serial_nnz, thread_nnz = self.trial_times[1], self.trial_times[3]
        self.trial_times[:] = [1e-9 * serial_nnz, serial_nnz, 4e-9 * thread_nnz, thread_nnz]
        self.v += 1e-2 * np.abs(self.v).max()
        decide(self)

    monkeypatch.setattr(sdca_mod.SDCASolver, "_trial_decision", slow_threads_and_lost_updates)
    X, y = data_for("hinge", n=400, d=30, seed=3)
    kw = dict(loss="hinge", lam=1e-3, solver="sdca", tol=1e-9, max_epochs=3000,
              random_state=0)
    res = solve(X, y, n_jobs=2, **kw)
    assert res.extras["threads"] == 1 and res.converged
    assert_exact_certificate(X, y, "hinge", 1e-3, res)
    ref = solve(X, y, n_jobs=1, **kw)
    np.testing.assert_allclose(res.coef, ref.coef, rtol=0, atol=1e-5 * np.abs(ref.coef).max())


# ------------------------------------------------ staleness bounded by work
def test_a_stalled_thread_still_certifies_the_optimum(monkeypatch):
    """Thread 1 sleeps 4 ms before every other chunk it takes (as if
    descheduled, holding unpublished updates and a copy that goes stale while
    thread 0 runs on: a chunk of these rows takes microseconds, so thread 0
    takes the pass's other chunks meanwhile): the run still certifies the
    serial optimum."""
    monkeypatch.setattr(threads_mod, "CHUNK_NNZ", 1)        # many chunks per pass
    stalls = []

    def stall(k, chunk):
        if k == 1 and chunk % 2 == 0:
            stalls.append(chunk)
            time.sleep(0.004)

    monkeypatch.setattr(threads_mod, "THREAD_STALL", stall)
    X, y = make_classification_data(n=400, d=12, density=0.8, seed=13)
    kw = dict(lam=1e-3, solver="sdca", tol=1e-9, max_epochs=3000, random_state=0)
    # copies synced every 8 updates; one shared v with plain additions (wild)
    for loss, sync in (("hinge", 8), ("logistic", 8), ("logistic", 0)):
        res = solve(X, y, loss=loss, n_jobs=2, sync_every=sync, atomic=False, **kw)
        assert res.extras["threads"] == 2 and res.converged
        assert_exact_certificate(X, y, loss, 1e-3, res)
        ref = solve(X, y, loss=loss, n_jobs=1, **kw)
        assert abs(res.primal - ref.primal) <= 2e-9 * abs(ref.primal)
    assert len(stalls) > 10


def test_auto_measures_threads_with_one_stalled_and_certifies_the_optimum(monkeypatch):
    """solver="auto", n_jobs=2: one thread first, then the threads
    (``threads="on"``) with thread 1 stalling 4 ms before every other chunk;
    whichever the supervisor keeps, the fit certifies the serial optimum, and
    the threaded probe leg ran on two threads."""
    from primaldual.solvers import supervisor
    monkeypatch.setattr(threads_mod, "CHUNK_NNZ", 1)
    monkeypatch.setattr(threads_mod, "THREAD_STALL",
                        lambda k, chunk: time.sleep(0.004) if k == 1 and chunk % 2 == 0
                        else None)
    monkeypatch.setattr(supervisor, "PROBE_MIN_S", 0.0)
    monkeypatch.setattr(supervisor, "candidates", lambda *a, **k: ["sdca"])
    X, y = make_classification_data(n=400, d=12, density=0.8, seed=13)
    kw = dict(loss="logistic", lam=1e-3, tol=1e-9, random_state=0)
    res = solve(X, y, n_jobs=2, check_every=1, **kw)
    path = res.extras["path"]
    assert path[0]["threads"] == 1 and path[0]["reason"] == "thread probe"
    assert path[1]["threads"] == 2
    assert res.converged
    assert_exact_certificate(X, y, "logistic", 1e-3, res)
    ref = solve(X, y, solver="sdca", n_jobs=1, **kw)
    assert abs(res.primal - ref.primal) <= 2e-9 * abs(ref.primal)


@pytest.mark.parametrize("two_threads, outcome", [(2.0, "threads"), (2.0, "serial"),
                                                  (0.3, "loaded")])
def test_auto_hands_the_decision_to_sdcas_trial(monkeypatch, two_threads, outcome):
    """solver="auto", n_jobs=2, on data where SDCA times its threads itself
    (``measures_threads``): no supervisor probe, one leg; SDCA's first-pass
    trial decides (its times injected: threads 4x or 0.5x one thread's speed),
    with thread 1 stalling 5 ms before every other chunk; on a machine measured
    busy (two threads 0.3x one: other work holds the cores) the cost model
    rules the threads out with no trial.  Each certifies the serial optimum."""
    from primaldual.solvers import supervisor
    monkeypatch.setattr(threads_mod, "measured_thread_costs",
                        lambda: FREE_SYNCS._replace(two_threads=two_threads))
    monkeypatch.setattr(threads_mod, "CHUNK_NNZ", 1)
    monkeypatch.setattr(threads_mod, "THREAD_STALL",
                        lambda k, chunk: time.sleep(0.005) if k == 1 and chunk % 2 == 0
                        else None)
    monkeypatch.setattr(sdca_mod, "TRIAL_MIN_NNZ", 0)
    monkeypatch.setattr(supervisor, "PROBE_MIN_S", 0.0)
    monkeypatch.setattr(supervisor, "candidates", lambda *a, **k: ["sdca"])
    monkeypatch.setattr(supervisor, "direct_applies", lambda *a, **k: False)
    decide, trials = sdca_mod.SDCASolver._trial_decision, []

    def with_times(self):
        trials.append(self.trial_cpu.copy())
        serial_nnz, thread_nnz = self.trial_times[1], self.trial_times[3]
        per_entry = 0.5e-9 if outcome == "threads" else 4e-9
        self.trial_times[:] = [2e-9 * serial_nnz, serial_nnz, per_entry * thread_nnz,
                               thread_nnz]
        decide(self)

    monkeypatch.setattr(sdca_mod.SDCASolver, "_trial_decision", with_times)
    X, y = make_classification_data(n=400, d=12, density=0.8, seed=13)
    kw = dict(loss="logistic", lam=1e-2, tol=1e-9, random_state=0)
    res = solve(X, y, n_jobs=2, **kw)
    path = res.extras["path"]
    assert len(path) == 1 and path[0]["method"] == "sdca"
    assert path[0]["threads"] == (2 if outcome == "threads" else 1)
    reason = res.extras["threads_reason"]
    if outcome == "loaded":
        assert not trials and reason.startswith("serial: 2 threads predicted")
    else:
        assert len(trials) == 1 and (trials[0] > 0).all()       # CPU times measured
        assert reason.startswith(f"{outcome}: measured on this data's first pass")
        assert "CPU" in reason
    assert res.converged
    assert_exact_certificate(X, y, "logistic", 1e-2, res)
    ref = solve(X, y, solver="sdca", n_jobs=1, **kw)
    assert abs(res.primal - ref.primal) <= 2e-9 * abs(ref.primal)


def _two_copies(X, y, loss, every, sparse=True):
    from primaldual.kernels.sdca import SDCAState, start_copy
    prob = Problem(X, y, loss=loss, lam=1e-2)
    n, d = X.shape
    work = threads_mod.ThreadWork(d, 2, every, False, int(np.diff(X.indptr).max()), sparse)
    shared = np.zeros(d)
    alpha = np.zeros(n)
    states, copies = [], []
    for k in range(2):
        copy = work.copy(k, shared)
        st = SDCAState(alpha, work.local[k], np.zeros(0), np.zeros(0, np.uint8))
        start_copy(st.v, copy)
        states.append(st)
        copies.append(copy)
    return prob, work, shared, alpha, states, copies


def _steps(prob, state, copy, order):
    from primaldual.kernels.sdca import Averaging, Shrinking, sdca_epoch
    no_avg = Averaging(False, np.zeros(0), np.zeros(0, np.int64), 0)
    prox = sdca_mod.prox_work_arrays(prob.rows, 0.0)
    return sdca_epoch(prob.rows_view(), prob.step_spec(), state, order, 0, order.shape[0],
                      0, -1, Shrinking(False, np.inf, np.inf), no_avg, prox, False, copy)


def test_a_copy_behind_by_more_than_the_limit_is_refreshed_before_its_step():
    """One OS thread plays both: thread 0 makes 40 steps (published every 4
    updates);
    thread 1, whose copy was taken before, must catch up before its next step,
    since the others are more than ``limit`` = 8 updates ahead of it."""
    from primaldual.kernels.sdca import sync_copy
    X, y = make_classification_data(n=60, d=15, density=0.5, seed=14)
    X = sp.csr_matrix(X)
    prob, work, shared, alpha, (s0, s1), (c0, c1) = _two_copies(X, y, "squared_hinge", 4)
    assert work.limit == 8
    _steps(prob, s0, c0, np.arange(40, dtype=np.int64))
    published = int(work.clock[0])                   # thread 0's published updates
    assert published == c0.counts[2] > work.limit
    image = shared + work.parts.sum(axis=0)
    assert np.abs(s1.v - image).max() > 0            # thread 1's copy is stale
    row = 45
    cols = X.indices[X.indptr[row]:X.indptr[row + 1]]
    _steps(prob, s1, c1, np.array([row], dtype=np.int64))
    assert c1.counts[3] == published                 # it refreshed first
    others = np.setdiff1d(np.arange(X.shape[1]), cols)
    np.testing.assert_array_equal(s1.v[others], image[others])
    # after both sync and the parts are folded, the image is v(alpha): no
    # update was lost
    sync_copy(s0.v, c0)
    sync_copy(s1.v, c1)
    work.fold(shared)
    np.testing.assert_allclose(shared, prob.dual_image(alpha), rtol=1e-13, atol=1e-15)


@pytest.mark.parametrize("every, sparse", [(1, True), (3, True), (50, True), (3, False)])
def test_interleaved_syncs_lose_no_update(every, sparse):
    """Two copies stepping in turns of a few rows (sparse syncs, change logs
    read by the other, log wrap-around and full refreshes all happen; or
    sweeping syncs) add up to exactly v(alpha)."""
    from primaldual.kernels.sdca import sync_copy
    X, y = make_classification_data(n=300, d=40, density=0.1, seed=15)
    X = sp.csr_matrix(X)
    prob, work, shared, alpha, states, copies = _two_copies(X, y, "logistic", every,
                                                            sparse)
    rng = np.random.default_rng(every)
    for _ in range(6):
        order = rng.permutation(X.shape[0]).astype(np.int64)
        halves = (order[::2], order[1::2])
        pos = [0, 0]
        while pos[0] < halves[0].shape[0] or pos[1] < halves[1].shape[0]:
            k = int(rng.integers(0, 2))
            m = int(rng.integers(1, 12))
            part = halves[k][pos[k]:pos[k] + m]
            pos[k] += m
            if part.shape[0]:
                _steps(prob, states[k], copies[k], part)
        for k in range(2):
            sync_copy(states[k].v, copies[k])
        work.fold(shared)
        np.testing.assert_allclose(shared, prob.dual_image(alpha), rtol=1e-12,
                                   atol=1e-15)
        for k in range(2):
            from primaldual.kernels.sdca import start_copy
            start_copy(states[k].v, copies[k])


def _planted_text(n, d, seed):
    X = zipf_text(n, d, tokens=15, seed=seed)
    w = np.random.default_rng(seed).standard_normal(d)
    return X, np.where(X @ w > np.median(X @ w), 1.0, -1.0)


@pytest.mark.parametrize("threads", [1, 2])
def test_hot_column_copies_keep_the_image_exact(threads):
    """Hot-column copies: the threads step on the image with the hot columns
    renumbered to their own copies and sync them after each chunk; after a
    pass the image is v(alpha).  One thread: exactly; two (one OS thread
    each, plain additions on the other columns): to rounding, unless two
    additions met (the certificate recomputes v(alpha) anyway)."""
    from primaldual.kernels.sdca import Shrinking, SDCAState
    X, y = _planted_text(500, 300, seed=6)
    prob = Problem(X, y, loss="logistic", lam=1e-2)
    n, d = X.shape
    hot = threads_mod._ThreadModel(prob.rows, FREE_SYNCS).hot()[0]
    assert 0 < hot.shape[0] < 60
    work = threads_mod.ThreadWork(d, threads, 64, False, int(np.diff(X.indptr).max()),
                                  True, hot)
    assert work.parts.size == 0 and work.copy(0, np.zeros(d)) is None
    state = SDCAState(np.zeros(n), np.zeros(d), np.zeros(0), np.zeros(n, np.uint8))
    prox = [sdca_mod.prox_work_arrays(prob.rows, 0.0) for _ in range(threads)]
    threads_mod.warm_threads(prob.rows_view(), prob.step_spec(), state, work, prox)
    assert all(v is not None for v in work.hot_slots(prob.rows_view()))   # views built
    assert not state.v.any() and not work.cpu.any()
    rng = np.random.default_rng(0)
    for _ in range(3):
        order = rng.permutation(n).astype(np.int64)
        results, _ = threads_mod.threaded_pass(prob.rows_view(), prob.step_spec(), state,
                                               order, 0, n, work, X.nnz,
                                               Shrinking(False, np.inf, np.inf), prox)
        assert sum(r[2] for r in results) == n
        drift = np.abs(state.v - prob.dual_image(state.alpha)).max()
        assert drift <= (1e-15 if threads == 1 else 1e-3) * max(1.0, np.abs(state.v).max())
    # the renumbered rows reach the thread's own copy, nowhere else
    rows = prob.rows_view()
    for t in range(threads):
        view = work.hot_view(rows, t)
        assert view is work.hot_view(rows, t)                    # built once
        moved = view.indices >= d
        assert set(rows.indices[moved]) <= set(hot.tolist())
        assert (view.indices[moved] >= d + t * work.pad).all()
        assert (view.indices[moved] < d + t * work.pad + hot.shape[0]).all()
        np.testing.assert_array_equal(view.indices[~moved], rows.indices[~moved])


def test_hot_column_copies_certify_the_optimum_with_a_thread_stalled(monkeypatch):
    """A shared vocabulary (a few columns in most rows): the plan copies the
    hot columns only (made the cheapest here) and the run, thread 1 stalling
    20 ms before every other chunk, certifies the serial optimum."""
    monkeypatch.setattr(threads_mod, "HOT_STEP", 0.5)
    monkeypatch.setattr(threads_mod, "CHUNK_NNZ", 1)
    stalls = []

    def stall(k, chunk):
        if k == 1 and chunk % 2 == 0:
            stalls.append(chunk)
            time.sleep(0.004)

    monkeypatch.setattr(threads_mod, "THREAD_STALL", stall)
    X, y = _planted_text(500, 300, seed=7)
    kw = dict(loss="logistic", lam=1e-2, solver="sdca", tol=1e-9, random_state=0)
    res = solve(X, y, n_jobs=2, **kw)
    assert res.extras["threads"] == 2 and "hot columns" in res.extras["threads_reason"]
    assert res.converged and len(stalls) > 5
    assert_exact_certificate(X, y, "logistic", 1e-2, res)
    ref = solve(X, y, n_jobs=1, **kw)
    assert abs(res.primal - ref.primal) <= 2e-9 * abs(ref.primal)


#: the module's own function (the autouse fixture above replaces it per test)
_MEASURED_THREAD_COSTS = threads_mod.measured_thread_costs


def test_thread_costs_are_measured_again_once_stale(monkeypatch):
    """The costs (the two-thread speed-up follows the machine's load) are kept
    for COSTS_MAX_AGE seconds, then measured again: a measurement taken while
    the machine was busy does not keep later fits serial."""
    made = []

    def fake_measure():
        made.append(threads_mod.ThreadCosts(1e-9, 1e-9, 1e-9, 1e-9, 1e-5,
                                         two_threads=1.0 + len(made)))
        return made[-1]

    monkeypatch.setattr(threads_mod, "_measure_thread_costs", fake_measure)
    monkeypatch.setattr(threads_mod, "_COSTS", [])
    monkeypatch.setattr(threads_mod, "measured_thread_costs", _MEASURED_THREAD_COSTS)
    monkeypatch.setattr(threads_mod, "COSTS_MAX_AGE", 1e9)
    first = threads_mod.measured_thread_costs()
    assert threads_mod.measured_thread_costs() is first and len(made) == 1
    monkeypatch.setattr(threads_mod, "COSTS_MAX_AGE", -1.0)      # every value is stale
    second = threads_mod.measured_thread_costs()
    assert len(made) == 2 and second.two_threads == 2.0
    monkeypatch.setattr(threads_mod, "COSTS_MAX_AGE", 1e9)
    assert threads_mod.measured_thread_costs() is second and len(made) == 2


def test_one_shared_v_is_tried_on_the_data_whatever_the_copies_predict(monkeypatch):
    """Rows whose columns rarely meet: the plan's best choice is one shared v
    (sync_every = 0), which the cost model's two-thread speed-up (measured on
    thread copies) says nothing about; on a machine measured slow for copies
    (two threads 0.3x one) the first-pass trial still runs, and with its
    times injected (threads 4x faster) the threads stay.  The fit certifies
    the serial optimum."""
    # copies' steps 3x the serial step's and sweeps not free: one shared v is the best plan
    monkeypatch.setattr(threads_mod, "measured_thread_costs",
                        lambda: FREE_SYNCS._replace(two_threads=0.3, buffered_entry=3e-9,
                                                    sweep_column=1e-9))
    monkeypatch.setattr(threads_mod, "CHUNK_NNZ", 1)
    monkeypatch.setattr(sdca_mod, "TRIAL_MIN_NNZ", 0)
    monkeypatch.setattr(threads_mod, "MIN_NNZ_PER_THREAD", 1)
    decide, trials = sdca_mod.SDCASolver._trial_decision, []

    def with_times(self):
        trials.append(self.plan.sync_every)
        serial_nnz, thread_nnz = self.trial_times[1], self.trial_times[3]
        self.trial_times[:] = [2e-9 * serial_nnz, serial_nnz, 0.5e-9 * thread_nnz,
                               thread_nnz]
        decide(self)

    monkeypatch.setattr(sdca_mod.SDCASolver, "_trial_decision", with_times)
    rng = np.random.default_rng(3)
    n, d, r = 600, 60_000, 8
    X = sp.csr_matrix((rng.standard_normal(n * r), rng.choice(d, n * r, replace=False),
                       np.arange(0, n * r + 1, r)), shape=(n, d))
    y = np.where(rng.random(n) < 0.5, -1.0, 1.0)
    kw = dict(loss="logistic", lam=1e-2, tol=1e-9, random_state=0)
    res = solve(X, y, solver="sdca", n_jobs=2, **kw)
    assert trials == [0], trials
    assert res.extras["threads"] == 2
    assert res.extras["threads_reason"].startswith("threads: measured on this data's first")
    assert res.converged
    assert_exact_certificate(X, y, "logistic", 1e-2, res)
    ref = solve(X, y, solver="sdca", n_jobs=1, **kw)
    assert abs(res.primal - ref.primal) <= 2e-9 * abs(ref.primal)


def test_most_held_columns_equal_a_stable_sort():
    """The planner's hot columns come from a partial selection that must pick
    exactly the columns of a stable sort by count (ties to the lower column)."""
    from primaldual.blocks.sdca_threads import _most_held
    rng = np.random.default_rng(0)
    for _ in range(200):
        d, k = int(rng.integers(1, 2000)), int(rng.integers(1, 150))
        omega = rng.integers(0, int(rng.integers(1, 40)), size=d).astype(np.float64)
        np.testing.assert_array_equal(_most_held(omega, k),
                                      np.argsort(-omega, kind="stable")[:k])
