"""Checkpoint and resume for every registered solver, and crash safety of the
checkpoint files.

* Python API: ``solve(..., max_epochs=k, checkpoint=DIR)`` followed by
  ``solve(..., resume=DIR, max_epochs=K)`` gives bit-for-bit the coefficients,
  dual certificate and objectives of one uninterrupted run to ``K`` epochs, for
  every solver in ``primaldual.SOLVERS`` and every loss it supports (the state
  on disk carries the RNG, so a resumed run draws the same samples).
* Command line: ``primaldual fit --checkpoint DIR`` then ``--resume``.
* SIGKILL while a checkpoint is being written: a child process rewrites a
  large state in a tight loop and is killed at random moments; after each kill
  ``load_state(DIR)`` must succeed and return one of the states the child wrote
  (the writer goes through a temporary file, fsync and ``os.replace``).
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

from conftest import l1_for, make_classification_data, make_regression_data

import primaldual
from primaldual import SOLVERS, load_state, solve
from primaldual.losses import LOSS_NAMES, check_capabilities, make_loss

SRC = Path(__file__).resolve().parents[1] / "src"

#: two losses per solver at most keep the file fast: one classification, one
#: regression loss, picked among those the solver supports
PREFERRED = ("smooth_hinge", "logistic", "hinge", "squared_hinge", "squared",
             "epsilon_insensitive", "absolute")

#: options that make a solver's run small, deterministic and local
SOLVER_OPTIONS = {
    # shrinking (smooth_hinge) re-activates coordinates at checks: continuing a run
    # equals one long run when both check at the same epochs
    "sdca": {"check_every": 1},
    "minibatch_sdca": {"batch_size": 8},
    "cocoa": {"n_partitions": 2, "local_iters": 20},
    "psgd": {"n_workers": 2},
    "dso": {"n_workers": 2},
    # SIMBA's constant schedule derives its horizon T (and the step sqrt(log n / T))
    # from max_epochs unless T is given; a run to k epochs is then a different
    # algorithm from a run to K, so the horizon is fixed explicitly here
    "simba": {"T": 100_000},
}


def supported_losses(name):
    """Losses a solver accepts: its ``requires`` flags, then its constructor
    (which refuses an unsupported loss with the documented ValueError before
    any work)."""
    cls = SOLVERS[name]
    out = []
    for loss in LOSS_NAMES:
        try:
            check_capabilities(make_loss(loss), name, cls.requires)
            y = np.resize([1.0, -1.0], 16)
            cls.create(primaldual.Problem(np.eye(16), y, loss=loss, lam=1.0,
                                          l1=l1_for(name)), tol=0,
                       max_epochs=1, random_state=0, **SOLVER_OPTIONS.get(name, {}))
        except ValueError:
            continue
        out.append(loss)
    return out


def resume_cases():
    cases = []
    for name in sorted(SOLVERS):
        losses = supported_losses(name)
        cls_loss = [lo for lo in PREFERRED if lo in losses and make_loss(lo).classification]
        reg_loss = [lo for lo in PREFERRED if lo in losses and not make_loss(lo).classification]
        for lo in cls_loss[:1] + reg_loss[:1]:
            cases.append((name, lo))
    return cases


@pytest.fixture(scope="module")
def problems():
    from sklearn.preprocessing import normalize
    Xc, yc = make_classification_data(n=60, d=12, density=0.4, seed=11)
    Xr, yr = make_regression_data(n=60, d=10, seed=12)
    # unit rows: SIMBA's input condition ||x_i|| <= 1
    return {True: (normalize(Xc), yc), False: (normalize(Xr), yr)}


def _run(X, y, solver, loss, **kw):
    return solve(X, y, loss=loss, lam=1e-2, l1=l1_for(solver), solver=solver, tol=0.0,
                 random_state=3, **SOLVER_OPTIONS.get(solver, {}), **kw)


def _assert_identical(a, b):
    np.testing.assert_array_equal(a.coef, b.coef)
    np.testing.assert_array_equal(a.dual_coef, b.dual_coef)
    assert a.primal == b.primal and a.dual == b.dual
    assert a.n_epochs == b.n_epochs
    assert a.feature_accesses == b.feature_accesses


@pytest.mark.parametrize("solver,loss", resume_cases())
def test_resume_from_checkpoint_equals_uninterrupted_run(problems, solver, loss, tmp_path):
    X, y = problems[make_loss(loss).classification]
    full = _run(X, y, solver, loss, max_epochs=4)
    ckpt = tmp_path / "ckpt"
    first = _run(X, y, solver, loss, max_epochs=2, checkpoint=str(ckpt))
    assert (ckpt / "state.npz").exists()
    on_disk = load_state(ckpt)
    assert on_disk.solver == solver
    assert on_disk.meta["rng_state"] == first.state.meta["rng_state"]
    resumed = _run(X, y, solver, loss, max_epochs=4, resume=str(ckpt))
    _assert_identical(resumed, full)
    # the epochs of the first part are kept in the trace, not recomputed
    assert [r["epoch"] for r in resumed.trace] == [r["epoch"] for r in full.trace]
    # resuming from the in-memory state gives the same thing
    again = _run(X, y, solver, loss, max_epochs=4, resume=first)
    _assert_identical(again, full)


def test_every_registered_solver_is_covered():
    covered = {s for s, _ in resume_cases()}
    assert covered == set(SOLVERS)


def test_resume_refuses_another_problem(problems, tmp_path):
    X, y = problems[True]
    _run(X, y, "sdca", "hinge", max_epochs=1, checkpoint=str(tmp_path))
    with pytest.raises(ValueError, match="different problem"):
        solve(X, y, loss="hinge", lam=2e-2, solver="sdca", max_epochs=2,
              resume=str(tmp_path))
    with pytest.raises(ValueError, match="cannot resume solver='sgd'"):
        solve(X, y, loss="hinge", lam=1e-2, solver="sgd", max_epochs=2,
              resume=str(tmp_path))


def test_resume_refuses_another_seed_or_options(problems, tmp_path):
    """The checkpoint carries its run's random state and iterates; resuming it
    under another seed or other solver options would continue a different run
    than the one asked for, so it is refused, naming what differs."""
    X, y = problems[True]
    kw = dict(loss="hinge", lam=1e-2, solver="sdca", max_epochs=2)
    solve(X, y, random_state=3, checkpoint=str(tmp_path), max_epochs=1,
          **{k: v for k, v in kw.items() if k != "max_epochs"})
    with pytest.raises(ValueError, match=r"seed \(checkpoint: 3, now: 4\)"):
        solve(X, y, random_state=4, resume=str(tmp_path), **kw)
    with pytest.raises(ValueError, match="sampling .*'permutation'.*'uniform'"):
        solve(X, y, random_state=3, resume=str(tmp_path), sampling="uniform", **kw)
    # where and when the run executes and checks may change
    res = solve(X, y, random_state=3, resume=str(tmp_path), check_every=2, **kw)
    assert res.n_epochs == 2


def _interrupt_at_call(monkeypatch, module, name, k):
    """Make the ``k``-th call of kernel ``module.name`` deliver a real SIGINT to
    this process while it runs (the call itself completes, as a compiled kernel
    does)."""
    real = getattr(module, name)
    calls = {"n": 0}

    def kernel(*args):
        calls["n"] += 1
        if calls["n"] == k:
            signal.raise_signal(signal.SIGINT)
        return real(*args)

    monkeypatch.setattr(module, name, kernel)
    return calls


@pytest.mark.parametrize("opts", [{}, {"shrinking": False}])
def test_ctrl_c_mid_epoch_then_resume_equals_uninterrupted(problems, tmp_path, monkeypatch,
                                                           opts, default_sigint):
    """SDCA's default (adaptive checks, shrinking that re-activates coordinates
    at checks) interrupted in the middle of an epoch: the interrupted run ends
    certified with stop_reason "interrupted" and leaves the checkpoint of its
    last scheduled check; resuming it gives the uninterrupted run bit for bit
    (coefficients, dual coefficients, objectives, epochs and check epochs)."""
    import primaldual.solvers.sdca as sdca_mod
    X, y = problems[True]
    kw = dict(loss="smooth_hinge", lam=1e-4, solver="sdca", tol=1e-12, random_state=9,
              max_epochs=40, **opts)
    full = solve(X, y, checkpoint=str(tmp_path / "full"), **kw)
    kernel = "sdca_epoch" if opts else "sdca_passes"
    _interrupt_at_call(monkeypatch, sdca_mod, kernel, 23)
    cut = solve(X, y, checkpoint=str(tmp_path / "ck"), **kw)
    monkeypatch.undo()
    assert cut.stop_reason == "interrupted" and cut.n_epochs < full.n_epochs
    assert cut.gap >= 0 and cut.dual <= cut.primal
    on_disk = load_state(tmp_path / "ck")
    assert on_disk.epoch < cut.n_epochs                 # the last scheduled check
    assert on_disk.epoch in [r["epoch"] for r in full.trace]
    resumed = solve(X, y, checkpoint=str(tmp_path / "ck"), resume=str(tmp_path / "ck"),
                    **kw)
    np.testing.assert_array_equal(resumed.coef, full.coef)
    np.testing.assert_array_equal(resumed.dual_coef, full.dual_coef)
    assert (resumed.primal, resumed.dual, resumed.n_epochs) == \
        (full.primal, full.dual, full.n_epochs)
    assert [r["epoch"] for r in resumed.trace] == [r["epoch"] for r in full.trace]


def test_sigint_handler_is_restored_and_left_alone_when_not_default(problems,
                                                                   default_sigint):
    """The flag handler is installed only over Python's default handler, and
    the previous handler is back after the fit (also after an error)."""
    X, y = problems[True]
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    solve(X, y, loss="hinge", lam=1e-2, max_epochs=1)
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    with pytest.raises(ValueError):
        solve(X, y, loss="hinge", lam=-1.0)
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    seen = []
    old = signal.signal(signal.SIGINT, lambda *a: seen.append(a))
    try:
        res = solve(X, y, loss="hinge", lam=1e-2, max_epochs=3, check_every=1,
                    callback=lambda snap: signal.raise_signal(signal.SIGINT))
        assert seen and res.stop_reason != "interrupted"    # the caller's handler ran
    finally:
        signal.signal(signal.SIGINT, old)


# ------------------------------------------------------------------ CLI
@pytest.fixture(scope="module")
def libsvm_file(tmp_path_factory):
    from sklearn.datasets import dump_svmlight_file
    X, y = make_classification_data(n=80, d=15, density=0.4, seed=5)
    path = tmp_path_factory.mktemp("cli") / "train.svm"
    dump_svmlight_file(X, y.astype(int), str(path), zero_based=False)
    return path


def _cli(*args):
    env = dict(os.environ, PYTHONPATH=str(SRC))
    proc = subprocess.run([sys.executable, "-m", "primaldual", *map(str, args)],
                          capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("solver", ["sdca", "spdc"])
def test_cli_checkpoint_and_resume_equal_one_run(libsvm_file, solver, tmp_path):
    common = ["fit", libsvm_file, "--loss", "smooth_hinge", "--lam", "0.01", "--solver",
              solver, "--tol", "0", "--seed", "4", "--json"]
    common += [f"--option={k}={v}" for k, v in SOLVER_OPTIONS.get(solver, {}).items()
               if k == "check_every"]
    full = _cli(*common, "--max-epochs", "4", "--model", tmp_path / "full.npz")
    ck = tmp_path / "ck"
    part = _cli(*common, "--max-epochs", "2", "--checkpoint", ck)
    assert part["epochs"] == 2
    resumed = _cli(*common, "--max-epochs", "4", "--checkpoint", ck, "--resume",
                   "--model", tmp_path / "resumed.npz")
    assert resumed["epochs"] == full["epochs"] == 4
    assert resumed["primal"] == full["primal"] and resumed["dual"] == full["dual"]
    with np.load(tmp_path / "full.npz", allow_pickle=False) as a, \
            np.load(tmp_path / "resumed.npz", allow_pickle=False) as b:
        np.testing.assert_array_equal(a["coef"], b["coef"])


# ------------------------------------------------------- SIGKILL safety
WRITER = textwrap.dedent("""
    import sys
    import numpy as np
    from primaldual.solvers._base import SolverState, save_state
    out = sys.argv[1]
    big = np.random.default_rng(0).standard_normal(1_500_000)   # 12 MB per state
    k = 0
    while True:
        big[0] = k
        save_state(SolverState("sdca", {"steps": k, "epochs": float(k)},
                               {"alpha": big, "tag": np.array([k])}), out)
        sys.stdout.write(f"{k}\\n")
        sys.stdout.flush()
        k += 1
""")


def test_sigkill_during_checkpoint_writes_leaves_a_readable_checkpoint(tmp_path):
    """Kill a tight checkpoint-writing loop at random moments (8 times); every
    time the checkpoint on disk is complete and is one of the written states."""
    script = tmp_path / "writer.py"
    script.write_text(WRITER)
    env = dict(os.environ, PYTHONPATH=str(SRC))
    rng = np.random.default_rng(2024)
    ckpt = tmp_path / "ck"
    kills = 0
    for trial in range(8):
        proc = subprocess.Popen([sys.executable, str(script), str(ckpt)],
                                stdout=subprocess.PIPE, text=True, env=env)
        first = proc.stdout.readline()            # one complete state exists
        assert first.strip().isdigit(), first
        time.sleep(float(rng.uniform(0.0, 0.4)))
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
        written = [int(line) for line in ([first] + proc.stdout.read().split()) if
                   str(line).strip()]
        proc.stdout.close()
        assert proc.returncode == -signal.SIGKILL
        kills += 1
        st = load_state(ckpt)
        k = int(st.arrays["tag"][0])
        # the state on disk was written by this child or an earlier one, completely:
        # its big array carries the same counter as its tag and its meta
        assert st.arrays["alpha"][0] == k == st.meta["steps"]
        assert st.arrays["alpha"].shape == (1_500_000,)
        assert k <= max(written) + 1    # at most the one being replaced when killed
        leftovers = list(ckpt.glob("state.npz.tmp-*"))
        for tmp in leftovers:           # a killed writer leaves its temporary file
            tmp.unlink()
    assert kills == 8


def test_sigkill_during_a_fit_with_frequent_checkpoints(libsvm_file, tmp_path):
    """A fit checkpointing every 0.05 epoch, killed mid-run, resumes from the
    last checkpoint and ends where one uninterrupted run ends."""
    X, y = make_classification_data(n=400, d=30, density=0.3, seed=8)
    np.save(tmp_path / "X.npy", X.toarray())
    np.save(tmp_path / "y.npy", y)
    ck = tmp_path / "ck"
    script = tmp_path / "fit.py"
    script.write_text(textwrap.dedent(f"""
        import sys, numpy as np, primaldual
        X = np.load({str(tmp_path / 'X.npy')!r}); y = np.load({str(tmp_path / 'y.npy')!r})
        def cb(s):
            sys.stdout.write("x\\n"); sys.stdout.flush()
        primaldual.solve(X, y, loss="hinge", lam=1e-3, solver="sdca", tol=0,
                         max_epochs=1e6, random_state=1, check_every=0.05,
                         checkpoint_every=0.05, checkpoint={str(ck)!r}, callback=cb)
    """))
    env = dict(os.environ, PYTHONPATH=str(SRC))
    proc = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True,
                            env=env)
    for _ in range(20):                         # at least 20 checks (and checkpoints)
        assert proc.stdout.readline() == "x\n"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    proc.stdout.close()
    st = load_state(ck)
    k = st.epoch
    assert k >= 0.9
    target = float(np.ceil(k) + 1)
    kw = dict(loss="hinge", lam=1e-3, solver="sdca", tol=0, random_state=1,
              check_every=0.05)
    resumed = solve(X.toarray(), y, max_epochs=target, resume=str(ck), **kw)
    full = solve(X.toarray(), y, max_epochs=target, **kw)
    np.testing.assert_array_equal(resumed.coef, full.coef)
    np.testing.assert_array_equal(resumed.dual_coef, full.dual_coef)
