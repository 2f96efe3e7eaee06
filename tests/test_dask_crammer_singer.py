"""The Crammer-Singer multiclass SVM on row partitions and on Dask
(``solver="crammer_singer_cocoa"``: CoCoA+ over the sequential dual method):

* partitions in process reach cvxpy's optimum (Clarabel), the certificate is
  recomputed by hand and ``coef = coef(alpha)`` holds;
* a round is CoCoA+ (adding, sigma' = K): each partition's local subproblem
  (written out here from Ma et al. 2015) rises, the joined dual is above the
  sum of the subproblems (so it rises every round) and the joined coef is
  coef(alpha);
* Dask equals in process with the same partitions to 1e-12, check by check;
* a worker SIGKILLed inside a round is recovered and the fit certifies;
* warm starts and checkpoints; ``solver="auto"`` routes there with
  ``n_partitions`` or ``client``; refusals by name;
* the Dask estimator (in-memory arrays, Dask arrays, part files) and
  ``primaldual fit --loss crammer_singer --scheduler``.
"""
from __future__ import annotations

import json

import numpy as np
import pytest

import distributed  # noqa: F401  (the Dask extra; the fixtures need it)

from conftest import assert_same_run, worker_dies_at  # noqa: E402

from primaldual import solve  # noqa: E402
from primaldual.multiclass import MulticlassProblem  # noqa: E402

from test_multiclass import _cvxpy_optimum, blobs, by_hand  # noqa: E402

LAM = 0.02


def _weights(n, seed=8):
    return np.random.default_rng(seed).integers(1, 4, n).astype(float)


@pytest.mark.parametrize("K", [2, 3])
def test_partitions_reach_the_cvxpy_optimum_and_certify_by_hand(K):
    X, y = blobs(60, 5, 3, seed=7, sparse=True)
    c = _weights(60)
    ref = _cvxpy_optimum(X.toarray(), y, LAM, c, "crammer_singer")
    res = solve(X, y, loss="crammer_singer", lam=LAM, sample_weight=c, tol=1e-9,
                n_partitions=K, random_state=0)
    assert res.solver == "crammer_singer_cocoa" and res.options["n_partitions"] == K
    assert res.converged and res.trace[-1]["partitions"] == K
    assert abs(res.primal - ref) <= 1e-6 * abs(ref)
    assert res.dual <= ref + 1e-9 * abs(ref)             # weak duality against cvxpy
    P, D = by_hand(X, y, res.coef, res.dual_coef, LAM, c, "crammer_singer")
    assert res.primal == pytest.approx(P, rel=1e-12)
    assert res.dual == pytest.approx(D, rel=1e-10, abs=1e-14)
    assert res.gap == pytest.approx(P - D, abs=1e-12)
    prob = MulticlassProblem(X, y, "crammer_singer", LAM, sample_weight=c)
    assert prob.in_dual_domain(res.dual_coef).all()
    np.testing.assert_allclose(res.coef, prob.w_of(res.dual_coef), rtol=0, atol=1e-12)


def _subproblem(X, y, c, W, lam, coef, alpha, delta, K):
    """G_k^{sigma'}(delta; coef, alpha) of CoCoA+ (Ma et al. 2015, eq. (10);
    sigma' = K) for one partition's rows (weights ``c``, of the total ``W``),
    in this library's scaling: the partition's share of the dual with its own
    change ``u = coef(delta)`` counted sigma' times."""
    idx = np.arange(y.shape[0])
    u = X.T @ (c[:, None] * delta) / (lam * W)
    return (c @ (alpha + delta)[idx, y]) / W - lam / (2 * K) * np.sum(coef ** 2) \
        - lam * np.sum(coef * u) - K * lam / 2 * np.sum(u ** 2)


def test_a_round_is_cocoa_plus_and_the_dual_rises():
    from primaldual.distributed.cs_block import CSBlock
    X, y = blobs(90, 6, 4, seed=3)
    c = _weights(90, seed=4)
    lam, ptr = 0.01, [0, 25, 60, 90]
    prob = MulticlassProblem(X, y, "crammer_singer", lam, sample_weight=c)
    block = CSBlock(X, y, c, ptr, prob.K)
    coef = np.zeros((6, 4))
    alpha = np.zeros((90, 4))
    last = prob.dual(alpha)
    for r in range(12):
        parts = block.round(coef, lam, prob.W, 3.0, 1, 100 + r, False, 0.25, r % 2 == 0)
        assert all(status == 0 for status, _, _ in parts)
        new = np.concatenate([p.alpha for p in block.parts])
        subs = []
        for k, (a, b) in enumerate(zip(ptr[:-1], ptr[1:])):
            rows = (X[a:b], y[a:b], c[a:b], prob.W, lam, coef, alpha[a:b])
            g0 = _subproblem(*rows, 0 * alpha[a:b], 3)
            g = _subproblem(*rows, new[a:b] - alpha[a:b], 3)
            assert g >= g0 - 1e-15                   # the local solver improves G_k
            subs.append(g)
        coef = coef + sum(dc for _, dc, _ in parts)
        alpha = new
        np.testing.assert_allclose(coef, prob.w_of(alpha), rtol=0, atol=1e-12)
        dual = prob.dual(alpha)
        assert dual >= sum(subs) - 1e-13            # ||sum_k u_k||^2 <= K sum_k ||u_k||^2
        assert dual > last
        last = dual


def test_solve_routes_warm_starts_and_resumes(tmp_path):
    X, y = blobs(80, 6, 4, seed=9)
    kw = dict(loss="crammer_singer", lam=0.01, tol=1e-8, random_state=3)
    serial = solve(X, y, solver="crammer_singer_dual", **kw)
    warm = solve(X, y, n_partitions=2, warm_start=serial, **dict(kw, tol=1e-6))
    assert warm.solver == "crammer_singer_cocoa" and warm.converged and warm.n_epochs == 0
    assert warm.trace[0]["rel_gap"] == pytest.approx(serial.rel_gap, rel=1e-6, abs=1e-14)
    # a run cut short, resumed from its checkpoint, ends where the full run does
    part = solve(X, y, n_partitions=2, max_epochs=3, checkpoint=tmp_path, check_every=1,
                 **kw)
    assert part.stop_reason == "max_epochs" and part.n_epochs == 3
    full = solve(X, y, n_partitions=2, resume=tmp_path, check_every=1, **kw)
    once = solve(X, y, n_partitions=2, check_every=1, **kw)
    assert full.converged and full.n_epochs == once.n_epochs
    np.testing.assert_allclose(full.coef, once.coef, rtol=0, atol=1e-12)
    # one partition is the sequential dual method without averaging
    one = solve(X, y, solver="cocoa", local_epochs=2, shrinking=False, **kw)
    assert one.solver == "crammer_singer_cocoa" and one.options["n_partitions"] == 1
    assert one.converged and one.n_epochs % 2 == 0


def test_refusals_by_name():
    X, y = blobs(40, 4, 3, seed=1)
    kw = dict(loss="crammer_singer", lam=0.01)
    for name in ("crammer_singer_dual", "crammer_singer_ipm"):
        with pytest.raises(ValueError, match="runs in this process only.*crammer_singer_"
                                             "cocoa, which runs on partitions and Dask"):
            solve(X, y, solver=name, n_partitions=2, **kw)
    with pytest.raises(ValueError, match="n_partitions=50 is larger than n=40"):
        solve(X, y, n_partitions=50, **kw)
    with pytest.raises(ValueError, match="'crammer_singer_cocoa' does not fit loss='multinomial'"):
        solve(X, y, loss="multinomial", lam=0.01, solver="crammer_singer_cocoa")
    with pytest.raises(ValueError, match="local_epochs"):
        solve(X, y, n_partitions=2, local_epochs=0, **kw)


@pytest.mark.parametrize("dense", [False, True])
def test_partitions_on_threads_are_the_same_numbers(part_thread_calls, monkeypatch, dense):
    """``n_jobs=2`` runs the 3 partitions' rounds and checks on 2 threads and
    gives the run of one thread number for number; the certificate is exact."""
    from primaldual._util import threads as threads_util
    X, y = blobs(90, 6, 4, seed=12, sparse=not dense)
    c = _weights(90, seed=2)
    kw = dict(loss="crammer_singer", lam=LAM, sample_weight=c, tol=1e-9, n_partitions=3,
              random_state=1, check_every=1)
    one = solve(X, y, solver="crammer_singer_cocoa", n_jobs=1, **kw)
    assert part_thread_calls == [] and one.trace[-1]["threads"] == 1
    two = solve(X, y, solver="crammer_singer_cocoa", n_jobs=2, **kw)
    assert part_thread_calls and set(part_thread_calls) == {(3, 2)}
    assert two.trace[-1]["threads"] == 2 and two.converged
    assert one.extras["threads_reason"] == "one thread: n_jobs is 1"
    assert two.extras["threads"] == 2
    assert two.extras["threads_reason"].startswith("threads on: 3 partitions on 2 threads")
    assert "rounds on the threads" in two.extras["threads_reason"]
    assert two.n_epochs == one.n_epochs and len(two.trace) == len(one.trace)
    np.testing.assert_array_equal(two.coef, one.coef)
    np.testing.assert_array_equal(two.dual_coef, one.dual_coef)
    assert [t["rel_gap"] for t in two.trace] == [t["rel_gap"] for t in one.trace]
    P, D = by_hand(X, y, two.coef, two.dual_coef, LAM, c, "crammer_singer")
    assert two.primal == pytest.approx(P, rel=1e-12)
    assert two.dual == pytest.approx(D, rel=1e-10, abs=1e-14)
    # auto with partitions passes n_jobs on; below a million values per thread
    # (the real floor) the partitions stay on the calling thread
    monkeypatch.setattr(threads_util, "MIN_VALUES_PER_THREAD", 1_000_000)
    small = solve(X, y, n_jobs=2, **kw)
    assert small.solver == "crammer_singer_cocoa" and small.options["n_jobs"] == 2
    assert small.trace[-1]["threads"] == 1
    assert small.extras["threads_reason"].startswith("one thread: ")
    assert "under 1,000,000 for each of 2 threads" in small.extras["threads_reason"]
    np.testing.assert_array_equal(small.coef, one.coef)


def test_rounds_take_the_faster_measured_mode(monkeypatch):
    """A round runs on threads only where its work gives each a million
    values, then on whichever of one thread and the threads measured faster
    per entry read, the slower one measured again every PACE_PROBE rounds;
    a check on dense rows (BLAS products) stays on one thread."""
    from primaldual._util import threads as threads_util
    from primaldual.distributed import cs_block as cb
    X, y = blobs(90, 6, 4, seed=12, sparse=True)
    block = cb.CSBlock(X, y, np.ones(90), [0, 45, 90], 4)
    block.n_threads = 2
    monkeypatch.setattr(threads_util, "MIN_VALUES_PER_THREAD", 1)
    assert block._round_threads() == 1                  # neither mode measured: one first
    block.pace[1] = 2e-9
    assert block._round_threads() == 2                  # then the threads
    block.pace[2] = 1e-9
    block.rounds = 5
    assert block._round_threads() == 2                  # the faster
    block.rounds = cb.PACE_PROBE
    assert block._round_threads() == 1                  # the slower, measured again
    block.pace[2], block.rounds = 3e-9, 7
    assert block._round_threads() == 1
    block.last_reads = 0                                # a shrunk round: one thread
    assert block._round_threads() == 1
    block.last_reads, block.pace = 10**9, {1: 2e-9, 2: 1e-9}
    assert block._round_threads() == 2
    monkeypatch.setattr(threads_util, "MIN_VALUES_PER_THREAD", 1_000_000)
    block.last_reads = 1_999_999 // 4                   # K = 4: under 2 x 1M values
    assert block._round_threads() == 1
    assert block._check_threads() == 2
    dense = cb.CSBlock(np.random.default_rng(0).normal(size=(90, 6)), y, np.ones(90),
                       [0, 45, 90], 4)
    dense.n_threads = 2
    assert isinstance(dense.parts[0].X, np.ndarray) and dense._check_threads() == 1


def test_threads_refused_where_they_do_not_run():
    X, y = blobs(40, 4, 3, seed=1)
    kw = dict(loss="crammer_singer", lam=0.01)
    for name in ("crammer_singer_dual", "crammer_singer_ipm", "crammer_singer_newton"):
        with pytest.raises(ValueError, match=f"solver='{name}' runs on one thread; n_jobs=2 "
                                             f"does not apply to it .crammer_singer_cocoa "
                                             f"runs its row partitions"):
            solve(X, y, solver=name, n_jobs=2, **kw)


# --------------------------------------------------------------------- Dask
def test_threads_with_a_client_are_refused(client):
    X, y = blobs(40, 4, 3, seed=1)
    with pytest.raises(ValueError, match="n_jobs=2 runs the partitions of an in-process "
                                         "crammer_singer_cocoa fit on threads.*leave n_jobs "
                                         "at 1 with client="):
        solve(X, y, loss="crammer_singer", lam=0.01, solver="crammer_singer_cocoa",
              client=client, n_jobs=2)


@pytest.mark.parametrize("K, dense", [(2, False), (3, True)])
def test_dask_equals_in_process(client, K, dense):
    X, y = blobs(120, 8, 4, seed=5, sparse=not dense)
    c = np.random.default_rng(1).uniform(0.5, 2.0, size=120)
    kw = dict(loss="crammer_singer", lam=0.01, tol=1e-12, random_state=0, sample_weight=c,
              n_partitions=K, max_epochs=40, check_every=5)
    local = solve(X, y, **kw)
    dist = solve(X, y, client=client, **kw)
    assert dist.solver == "crammer_singer_cocoa" and len(dist.trace) == 9
    assert_same_run(dist, local)


def test_worker_killed_mid_round_is_recovered(own_client):
    """The lost partition comes back with the last check's alpha, coef is
    joined again from every partition and the round made again: the fit
    certifies the in-process optimum."""
    client = own_client
    X, y = blobs(150, 6, 3, seed=4)
    kw = dict(loss="crammer_singer", lam=0.05, tol=1e-6, random_state=0, n_partitions=2,
              check_every=5)
    addr = sorted(client.scheduler_info()["workers"])[-1]
    client.run(worker_dies_at, "crammer_singer", 8, "round", workers=[addr])
    res = solve(X, y, client=client, round_timeout=60, **kw)
    assert res.trace[-1]["recoveries"] >= 1
    assert res.converged
    prob = MulticlassProblem(X, y, "crammer_singer", 0.05)
    assert res.primal == pytest.approx(prob.primal(res.coef), rel=1e-12)
    assert res.dual == pytest.approx(prob.dual(res.dual_coef), rel=1e-12)
    local = solve(X, y, **kw)
    assert abs(res.primal - local.primal) <= 2e-6 * abs(local.primal)


def test_dask_estimator_in_memory_dask_arrays_and_part_files(client, tmp_path):
    import dask.array as da
    from sklearn.datasets import dump_svmlight_file
    from primaldual import LinearClassifier as Local
    from primaldual.dask import LinearClassifier
    X, y = blobs(150, 6, 3, seed=6)
    labels = np.array([2.0, 5.0, 9.0])[y]
    kw = dict(loss="crammer_singer", alpha=1.0, tol=1e-6, random_state=0)
    dist = LinearClassifier(client=client, solver_options={"n_partitions": 2}, **kw)
    dist.fit(X, labels)
    local = Local(solver="cocoa", solver_options={"n_partitions": 2}, **kw).fit(X, labels)
    assert dist.solver_ == "crammer_singer_cocoa" and dist.coef_.shape == (3, 6)
    np.testing.assert_allclose(dist.coef_, local.coef_, rtol=0, atol=1e-12)
    assert (dist.predict(X) == local.predict(X)).all()
    # without n_partitions: one partition per worker
    res = solve(X, y, loss="crammer_singer", lam=1.0, tol=1e-4, client=client)
    assert res.solver == "crammer_singer_cocoa" and res.trace[-1]["partitions"] == 2
    # Dask arrays: one partition per row chunk
    ref = Local(loss="crammer_singer", alpha=1.0, tol=1e-10).fit(X, labels)
    arr = LinearClassifier(client=client, **kw)
    arr.fit(da.from_array(X, chunks=(50, 6)), da.from_array(labels, chunks=50))
    assert list(arr.classes_) == [2.0, 5.0, 9.0] and arr.trace_[-1][-1]["partitions"] == 3
    assert arr.converged_ and abs(arr.primal_ - ref.primal_) <= 2e-6 * ref.primal_
    assert np.mean(arr.predict(X) == ref.predict(X)) >= 0.98
    # LIBSVM part files read on the workers
    paths = []
    for k, (a, b) in enumerate([(0, 90), (90, 150)]):
        p = tmp_path / f"part{k}.svm"
        dump_svmlight_file(X[a:b], labels[a:b], str(p), zero_based=False)
        paths.append(str(p))
    files = LinearClassifier(client=client, **kw).fit(paths)
    assert files.converged_ and abs(files.primal_ - ref.primal_) <= 2e-6 * ref.primal_
    with pytest.raises(ValueError, match="runs crammer_singer_cocoa: set solver='cocoa'"):
        LinearClassifier(loss="crammer_singer", solver="newton", client=client).fit(paths)


def test_cli_scheduler_fits_crammer_singer_on_part_files(capsys, tmp_path, cluster, client):
    """``fit --loss crammer_singer --scheduler``: the workers read the part
    files and crammer_singer_cocoa trains one problem; its certified primal
    equals the local fit's and the model file predicts as the local one."""
    from sklearn.datasets import dump_svmlight_file
    from primaldual import cli, load_model
    rng = np.random.default_rng(3)
    X = rng.normal(size=(150, 5))
    y = np.argmax(X[:, :3] + 0.3 * rng.normal(size=(150, 3)), axis=1) + 1   # labels 1..3
    path = tmp_path / "three.svm"
    dump_svmlight_file(X, y, str(path), zero_based=False)

    def run_main(*args):
        code = cli.main([str(a) for a in args])
        return (code, *capsys.readouterr())
    model, local_model = tmp_path / "d.npz", tmp_path / "l.npz"
    common = ["--loss", "crammer_singer", "--lam", "5e-2", "--bias", "1", "--tol", "1e-7",
              "--json"]
    code, out, err = run_main("fit", path, "--scheduler", cluster.scheduler_address,
                              "--partitions", "2", "--parts-dir", tmp_path / "parts",
                              "--model", model, "--test", path, *common)
    assert code == 0, err
    rec = json.loads(out.strip().splitlines()[-1])
    assert rec["solver"] == "crammer_singer_cocoa" and rec["partitions"] == 2
    assert rec["converged"] and "one crammer_singer problem" in err
    code, out, err = run_main("fit", path, "--model", local_model, *common)
    assert code == 0, err
    loc = json.loads(out.strip().splitlines()[-1])
    assert rec["primal"] == pytest.approx(loc["primal"], rel=2e-7)
    dist, ref = load_model(model), load_model(local_model)
    np.testing.assert_array_equal(dist.classes_, ref.classes_)
    assert np.mean(dist.predict(X) == ref.predict(X)) >= 0.98
    assert rec["test_accuracy"] == pytest.approx(float(np.mean(dist.predict(X) == y)))
    code, out, err = run_main("fit", path, "--scheduler", cluster.scheduler_address,
                              "--parts-dir", tmp_path / "p2", "--loss", "crammer_singer",
                              "--solver", "newton")
    assert code == 1 and "with crammer_singer_cocoa; --solver newton" in err
