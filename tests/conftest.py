"""Shared fixtures: the real data folder (skipped cleanly when absent) and small problems."""
from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = Path(os.environ.get("PRIMALDUAL_SHARED_DATA", REPO.parent / "shared" / "data"))


def shared_file(name: str) -> Path:
    """Path of a file in ../shared/data, or skip the test when it is absent."""
    p = SHARED_DATA / name
    if not p.exists():
        pytest.skip(f"real data file {name} not found in {SHARED_DATA}")
    return p


def optional_import(module: str, reason: str):
    """Import an optional package a test needs (a benchmark peer, ...).

    Under ``make test`` (``PRIMALDUAL_REQUIRE_OPTIONAL=1``), which installs
    every extra, a missing package is an error; elsewhere the test is skipped
    with ``reason``."""
    import importlib
    if os.environ.get("PRIMALDUAL_REQUIRE_OPTIONAL") == "1":
        return importlib.import_module(module)
    return pytest.importorskip(module, reason=reason)


def load_binary(name: str, n_features=None, max_rows=None):
    """Load a LIBSVM binary set from ../shared/data with labels mapped to -1/+1
    (larger raw label -> +1) and int32 CSR indices (for LIBLINEAR peers)."""
    from sklearn.datasets import load_svmlight_file
    X, y = load_svmlight_file(str(shared_file(name)), n_features=n_features)
    if max_rows is not None:
        X, y = X[:max_rows], y[:max_rows]
    hi = np.max(y)
    y = np.where(y == hi, 1.0, -1.0)
    X = sp.csr_matrix(X)
    X.indices = X.indices.astype(np.int32)
    X.indptr = X.indptr.astype(np.int32)
    return X, y


@pytest.fixture
def a9a_small():
    """First 2000 rows of a9a (real, sparse)."""
    return load_binary("a9a", n_features=123, max_rows=2000)


@pytest.fixture
def mushrooms():
    return load_binary("mushrooms")


def l1_for(name, l1=1e-2) -> float:
    """The ``l1`` a registry-wide test gives solver ``name``: 0, or ``l1`` for a
    solver that solves only problems with ``l1 > 0`` (``requires_l1``)."""
    from primaldual import SOLVERS
    return l1 if getattr(SOLVERS[name], "requires_l1", False) else 0.0


def make_classification_data(n=200, d=30, density=0.3, seed=0, zero_rows=0, dense=False):
    """Small synthetic sparse classification problem with unit-ish rows."""
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=density, random_state=rng, format="csr")
    X.data = rng.standard_normal(X.data.size)
    if zero_rows:
        X = X.tolil()
        for i in range(zero_rows):
            X.rows[i] = []
            X.data[i] = []
        X = X.tocsr()
    w = rng.standard_normal(d)
    y = np.sign(X @ w + 0.3 * rng.standard_normal(n))
    y[y == 0] = 1.0
    if dense:
        X = X.toarray()
    return X, y


def make_regression_data(n=200, d=20, seed=0, dense=False):
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=0.4, random_state=rng, format="csr")
    X.data = rng.standard_normal(X.data.size)
    w = rng.standard_normal(d)
    y = X @ w + 0.1 * rng.standard_normal(n)
    if dense:
        X = X.toarray()
    return X, y


# ------------------------------------------------------------------ Dask
@pytest.fixture(scope="module")
def cluster():
    """A LocalCluster of 2 worker processes with 1 thread each, one per test
    module (modules that kill or slow workers get their own)."""
    import distributed
    cl = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None)
    yield cl
    cl.close()


@pytest.fixture(scope="module")
def client(cluster):
    """A client of :func:`cluster`, with both workers up."""
    import distributed
    c = distributed.Client(cluster)
    c.wait_for_workers(2, timeout=60)
    yield c
    c.close()


@pytest.fixture
def own_client():
    """A client of a LocalCluster of 2 worker processes made for this one test.

    A test that SIGKILLs a worker takes this one, so that no later test waits
    for the nanny to restart the killed worker: on a loaded machine that restart
    once took over 300 s, and no test may depend on how fast it is."""
    import distributed
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cl, distributed.Client(cl) as c:
        c.wait_for_workers(2, timeout=300)
        yield c


def worker_killer(client, at_epoch, last=False):
    """``(callback, killed)``: a fit callback that SIGKILLs one worker of
    ``client`` (the first address in sorted order, or the last with ``last``)
    at the first check at or after epoch ``at_epoch``, once; ``killed`` maps
    the killed worker's address to its pid."""
    import signal
    killed = {}

    def kill_one(snapshot):
        if snapshot["epoch"] >= at_epoch and not killed:
            pids = client.run(os.getpid)
            addr = sorted(pids)[-1 if last else 0]
            os.kill(pids[addr], signal.SIGKILL)
            killed[addr] = pids[addr]
        return False
    return kill_one, killed


def assert_same_run(a, b, atol=1e-12):
    """Two fits ran the same iterates: ``coef`` and ``dual_coef`` to ``atol``,
    the same checks at the same epochs with the same primal and dual."""
    np.testing.assert_allclose(a.coef, b.coef, rtol=0, atol=atol)
    np.testing.assert_allclose(a.dual_coef, b.dual_coef, rtol=0, atol=atol)
    assert [r["epoch"] for r in a.trace] == [r["epoch"] for r in b.trace]
    for ra, rb in zip(a.trace, b.trace):
        assert ra["primal"] == pytest.approx(rb["primal"], rel=1e-12)
        assert ra["dual"] == pytest.approx(rb["dual"], rel=1e-12)


def worker_dies_at(call, k, method=None):
    """Run on a worker (``client.run``): its ``k``-th call of the actor method
    ``PartitionActor.<call>`` -- with ``method`` as its first argument, when
    given (``newton``, ``multinomial``, ``l1``, ``crammer_singer`` name the
    pass they dispatch) -- kills the worker process (SIGKILL)."""
    import signal
    from primaldual.distributed import worker as W
    orig = getattr(W.PartitionActor, call)
    seen = [0]

    def dying(self, *args):
        if method is None or args[0] == method:
            seen[0] += 1
            if seen[0] == k:
                os.kill(os.getpid(), signal.SIGKILL)
        return orig(self, *args)
    setattr(W.PartitionActor, call, dying)


# ------------------------------------------------------------ a loaded machine
def pytest_configure(config):
    config.addinivalue_line(
        "markers", "busy_cores: run the test with one spinning process pinned to each "
                   "core (the busy_cores fixture), as on a loaded machine")


def pytest_collection_modifyitems(config, items):
    for item in items:
        if item.get_closest_marker("busy_cores") is not None:
            item.fixturenames.append("busy_cores")


#: what each busy process runs: a spin that never yields its core
_SPIN = "while True:\n    pass\n"


@pytest.fixture
def busy_cores():
    """One busy process pinned to each core this process may run on, for the
    duration of the test: the test's threads share every core with a process
    that never sleeps, so any of them may be descheduled for a whole time
    slice (milliseconds), as on a machine loaded by other work.  Tests marked
    ``busy_cores`` get it automatically."""
    import subprocess
    import sys
    cores = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else [None]
    procs = []
    try:
        for core in cores:
            p = subprocess.Popen([sys.executable, "-c", _SPIN],
                                 stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                 stderr=subprocess.DEVNULL)
            procs.append(p)
            if core is not None:
                os.sched_setaffinity(p.pid, {core})
        yield [p.pid for p in procs]
    finally:
        for p in procs:
            p.kill()
        for p in procs:
            p.wait()


@pytest.fixture
def default_sigint():
    """Python's default SIGINT handler for the test (a run started as a
    background job inherits SIGINT ignored, and then no Ctrl-C arrives)."""
    import signal
    old = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, old)


def sigint_default_in_child():
    """``preexec_fn`` for a subprocess that must receive Ctrl-C: SIGINT back to
    its default disposition (see :func:`default_sigint`)."""
    import signal
    signal.signal(signal.SIGINT, signal.SIG_DFL)



@pytest.fixture
def part_thread_calls(monkeypatch):
    """The ``(n_tasks, n_threads)`` of every :func:`run_threads` call the test
    makes through the partitions' helper (:func:`run_parts`, which names
    ``n_threads``; the one-off passes cut in ranges do not and are left out),
    with the floor of a million values per thread lowered to one, so that a
    test's small partitions run on the threads asked for."""
    from primaldual._util import threads as threads_util
    seen = []
    real = threads_util.run_threads

    def recording(task, n_tasks, n_threads=None):
        if n_threads is not None:
            seen.append((n_tasks, n_threads))
        return real(task, n_tasks, n_threads)

    monkeypatch.setattr(threads_util, "MIN_VALUES_PER_THREAD", 1)
    monkeypatch.setattr(threads_util, "run_threads", recording)
    return seen


@pytest.fixture
def certificate_threads(monkeypatch):
    """The ``n_threads`` of every :meth:`Problem.certificate` call the test
    makes, in order (a spy around the real method)."""
    from primaldual.problem import Problem
    seen = []
    real = Problem.certificate

    def recording(self, w, alpha, n_threads=1, margins=None):
        seen.append(n_threads)
        return real(self, w, alpha, n_threads, margins)

    monkeypatch.setattr(Problem, "certificate", recording)
    return seen
