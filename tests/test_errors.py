"""Clear errors: every bad input is refused with a ValueError (or a CLI exit
code and stderr line) that names the field and says how to fix it; nothing is
silently changed.  Rows of all zeros are valid input and are solved exactly."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import pytest
import scipy.sparse as sp

import primaldual
from primaldual import SOLVERS, cli, solve
from primaldual.losses import LOSS_NAMES, make_loss

from conftest import REPO, make_classification_data, make_regression_data


@pytest.fixture(scope="module")
def data():
    X, y = make_classification_data(n=40, d=6, seed=4)
    return X.toarray(), y


def solve_error(X, y, **kw):
    kw.setdefault("max_epochs", 2)
    with pytest.raises(ValueError) as exc:
        solve(X, y, **kw)
    return str(exc.value)


def run_main(capsys, *args):
    code = cli.main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, err


def write(tmp_path, name, text):
    p = tmp_path / name
    p.write_text(text)
    return p


GOOD = "1 1:0.5 2:1\n-1 1:-1 3:0.25\n1 2:2 3:1\n-1 1:-0.5 2:-1\n"


# ---------------------------------------------------------------- solve()
@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_nonfinite_X(data, sparse, bad):
    X, y = data
    X = X.copy()
    X[3, 2] = bad
    if sparse:
        X = sp.csr_matrix(X)
    msg = solve_error(X, y)
    kind = "NaN" if np.isnan(bad) else "inf"
    assert f"X contains {kind} values" in msg and "remove or impute" in msg


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_nonfinite_y(data, bad):
    X, y = data
    y = y.copy()
    y[0] = bad
    for loss in ("hinge", "squared"):
        msg = solve_error(X, y, loss=loss)
        assert "y contains" in msg and "remove or impute" in msg


def test_non_binary_labels_for_a_binary_loss(data):
    X, y = data
    for loss in ("hinge", "logistic", "squared_hinge", "smooth_hinge"):
        msg = solve_error(X, np.where(y > 0, 1.0, 0.0), loss=loss)
        assert f"loss={loss!r} is a binary classification loss" in msg
        assert "{-1, +1}" in msg and "[0.0]" in msg and "Map your labels to -1/+1" in msg
    msg = solve_error(X, np.arange(40.0) % 3)
    assert "found other values such as [0.0, 2.0]" in msg and "one-vs-rest" in msg
    # a regression loss takes the same y as is
    res = solve(X, np.arange(40.0) % 3, loss="squared", lam=1e-1, max_epochs=2)
    assert res.coef.shape == (6,)


def test_single_class(data, tmp_path, capsys):
    """solve() accepts y of one class (a valid problem: all labels +1); the
    classifier and the command line refuse it."""
    X, y = data
    res = solve(X, np.ones(40), lam=1e-1, tol=1e-8, max_epochs=200)
    assert res.converged
    f = write(tmp_path, "one.svm", "1 1:0.5\n1 2:1\n1 1:2\n")
    code, err = run_main(capsys, "fit", f)
    assert code == 1
    assert "every sample has the label 1, a single class" in err
    assert "needs two classes" in err and str(f) in err
    import primaldual.estimators as est
    with pytest.raises(ValueError, match="at least 2 classes"):
        est.LinearClassifier().fit(X, np.ones(40))


def test_mismatched_shapes(data):
    X, y = data
    msg = solve_error(X, y[:-1])
    assert "X and y have mismatched shapes: X has 40 rows but y has 39 entries" in msg
    msg = solve_error(X, y[:, None])
    assert "y must be 1-D" in msg and "y.ravel()" in msg
    msg = solve_error(X[0], y[:1])
    assert "X must be a 2-D array" in msg and "X.reshape(1, -1)" in msg
    msg = solve_error(X, y, sample_weight=np.ones(39))
    assert "sample_weight has shape (39,) but X has 40 rows" in msg
    assert "one weight per sample" in msg
    msg = solve_error(X, y, eval_set=(X[:, :5], y))
    assert "eval_set X has 5 features but the training data has 6" in msg
    msg = solve_error(X, y, warm_start=np.zeros(39), solver="sdca")
    assert "warm_start alpha has shape (39,), expected (40,)" in msg
    msg = solve_error(X, y, warm_start=np.zeros(39))        # auto: its first method's
    assert "warm_start" in msg and "(39,)" in msg


@pytest.mark.parametrize("lam", [0.0, -1e-3, np.nan, np.inf, "big"])
def test_lam_must_be_positive(data, lam):
    X, y = data
    msg = solve_error(X, y, lam=lam)
    assert msg.startswith("lam must be")
    if lam == 0.0:
        assert "got lam=0" in msg and "use a positive lam such as 1e-4" in msg
    if lam == -1e-3:
        assert "got lam=-0.001" in msg and "use a positive L2 strength" in msg
    msg = solve_error(X, y, l1=-0.5)
    assert "l1 must be >= 0, got l1=-0.5" in msg


def test_lam_zero_with_l1_needs_a_pure_l1_solver(data):
    X, y = data
    msg = solve_error(X, y, lam=0.0, l1=1e-2, solver="sdca")
    assert "lam must be > 0 for solver='sdca'" in msg and "spdc, dso" in msg


def test_weights_must_be_positive(data):
    X, y = data
    w = np.ones(40)
    w[[3, 5]] = -1.0
    msg = solve_error(X, y, sample_weight=w)
    assert "sample_weight has 2 negative values" in msg and "weights must be > 0" in msg
    w[[3, 5]] = 0.0
    msg = solve_error(X, y, sample_weight=w)
    assert "sample_weight has 2 zero weights" in msg and "drop those rows" in msg
    w[3] = np.nan
    msg = solve_error(X, y, sample_weight=w)
    assert "sample_weight contains NaN" in msg


def test_empty_input(data):
    X, y = data
    msg = solve_error(np.zeros((0, 6)), np.zeros(0))
    assert "X is empty: it has 0 samples; at least 1 is required" in msg
    msg = solve_error(sp.csr_matrix((0, 6)), np.zeros(0))
    assert "X is empty" in msg
    msg = solve_error(np.zeros((5, 0)), np.ones(5))
    assert "X has 0 features; at least 1 is required" in msg


def test_unknown_option_and_solver(data):
    X, y = data
    msg = solve_error(X, y, solver="sdca", step_size=0.1)
    assert "unknown option(s) ['step_size'] for solver='sdca'" in msg
    assert "valid options:" in msg and "sampling" in msg
    msg = solve_error(X, y, solver="sdca", sampling="random")
    assert "sampling='random' is not valid; choose one of" in msg
    msg = solve_error(X, y, solver="bfgs")
    assert "unknown solver 'bfgs'; choose one of" in msg and "sdca" in msg
    msg = solve_error(X, y, loss="hingee")
    assert "unknown loss 'hingee'; choose one of" in msg
    msg = solve_error(X, y, loss="smooth_hinge", loss_params={"gamma": -1})
    assert "loss_params['gamma'] for loss='smooth_hinge' must be finite and > 0" in msg
    msg = solve_error(X, y, loss="hinge", loss_params={"gamma": 1})
    assert "unknown loss_params ['gamma'] for loss='hinge'; allowed: none" in msg


def _unsupported_combinations():
    """Every (solver, loss, l1, lam) a registered solver must refuse by its declared
    capabilities: required loss properties, l1 > 0, pure L1."""
    combos = []
    for name, cls in sorted(SOLVERS.items()):
        for cap in cls.requires:
            for loss in LOSS_NAMES:
                if not getattr(make_loss(loss), cap):
                    combos.append((name, loss, 0.0, 1e-2, f"does not support loss={loss!r}"))
                    break
        ok = [loss for loss in LOSS_NAMES
              if all(getattr(make_loss(loss), cap) for cap in cls.requires)]
        if not ok:
            continue
        if not cls.supports_l1:
            combos.append((name, ok[0], 1e-3, 1e-2, "does not support l1 > 0"))
        elif not cls.supports_pure_l1:
            combos.append((name, ok[0], 1e-3, 0.0, "lam must be > 0"))
    return combos


def test_unsupported_combinations_are_rejected_before_any_work(data, monkeypatch):
    X, y_cls = data
    y_reg = np.linspace(-1, 1, 40)
    combos = _unsupported_combinations()
    assert any(c[0] == "sgd" for c in combos)       # sgd has no l1: always one case
    started = []
    for name, cls in SOLVERS.items():
        monkeypatch.setattr(cls, "init_state",
                            lambda self, *a, _n=name: started.append(_n))
    for name, loss, l1, lam, expected in combos:
        y = y_cls if make_loss(loss).classification else y_reg
        msg = solve_error(X, y, solver=name, loss=loss, l1=l1, lam=lam)
        assert expected in msg and f"solver={name!r}" in msg, msg
    assert started == []                             # no solver began its work


def test_zero_rows_are_solved_exactly(capsys, tmp_path):
    """Rows of all zeros are allowed: the fit converges to tol, and their dual
    coordinates sit exactly at the optimum (hinge: alpha_i y_i = 1, squared:
    alpha_i = y_i, since x_i . w = 0 for every w)."""
    X, y = make_classification_data(n=120, d=10, zero_rows=7, seed=8)
    zero = np.flatnonzero(np.diff(X.indptr) == 0)
    assert zero.size >= 7
    for dense in (False, True):
        Xi = X.toarray() if dense else X
        res = solve(Xi, y, loss="hinge", lam=1e-2, tol=1e-9, max_epochs=500)
        assert res.converged and res.rel_gap <= 1e-9
        np.testing.assert_array_equal(res.dual_coef[zero] * y[zero], 1.0)
        prob = primaldual.Problem(Xi, y, loss="hinge", lam=1e-2)
        assert prob.primal(res.coef) == pytest.approx(res.primal, rel=1e-12)
        assert prob.dual(res.dual_coef) == pytest.approx(res.dual, rel=1e-12)
    Xr, yr = make_regression_data(n=80, d=6, seed=9)
    Xr = Xr.tolil()
    Xr.rows[0], Xr.data[0] = [], []
    Xr = Xr.tocsr()
    res = solve(Xr, yr, loss="squared", lam=1e-2, tol=1e-10, max_epochs=500)
    assert res.converged and res.dual_coef[0] == yr[0]

    # the command line fits such a file and info counts the zero rows
    f = write(tmp_path, "z.svm", GOOD + "1\n-1 2:0\n")
    code, err = run_main(capsys, "fit", f, "--lam", "1e-1", "--tol", "1e-9", "--json")
    assert code == 0, err
    assert cli.main(["info", str(f), "--json"]) == 0
    assert json.loads(capsys.readouterr()[0])["zero_rows"] == 2


# ----------------------------------------------------------- command line
def test_cli_bad_files(tmp_path, capsys):
    f = write(tmp_path, "bad.svm", "1 1:0.5 2:1\n-1 1:-1 3:0.25\n1 2:2 x:1\n")
    code, err = run_main(capsys, "fit", f)
    assert code == 1
    assert err.startswith("primaldual fit: error: ")
    assert f"{f}, line 3" in err and "invalid feature index 'x'" in err
    code, err = run_main(capsys, "info", f)
    assert code == 1 and f"{f}, line 3" in err

    f = write(tmp_path, "nan.svm", GOOD + "1 1:nan\n")
    code, err = run_main(capsys, "fit", f)
    assert code == 1 and "sample 5 has the value nan at feature 1" in err
    assert "feature values must be finite" in err
    f = write(tmp_path, "inflabel.svm", GOOD + "inf 1:1\n")
    code, err = run_main(capsys, "fit", f, "--loss", "squared")
    assert code == 1 and "the label of sample 5 is inf" in err
    assert "labels must be finite numbers" in err

    f = write(tmp_path, "empty.svm", "# nothing here\n\n")
    code, err = run_main(capsys, "fit", f)
    assert code == 1 and "has no samples (empty input)" in err
    code, err = run_main(capsys, "fit", tmp_path / "missing.svm")
    assert code == 1 and "data file not found" in err and "missing.svm" in err

    f = write(tmp_path, "three.svm", GOOD + "2 1:1\n")
    code, err = run_main(capsys, "fit", f, "--loss", "logistic")
    assert code == 0, err                          # three labels: one-vs-rest
    assert "3 classes in" in err and "one-vs-rest" in err
    code, err = run_main(capsys, "fit", f, "--loss", "squared", "--lam", "1e-1")
    assert code == 0, err                          # regression keeps the three values

    train = write(tmp_path, "train.svm", GOOD)
    test = write(tmp_path, "test.svm", "3 1:1\n")
    code, err = run_main(capsys, "fit", train, "--test", test)
    assert code == 1 and "labels ['3'] do not occur in" in err


def test_cli_bad_arguments(tmp_path, capsys):
    f = write(tmp_path, "good.svm", GOOD)
    cases = [
        (["--lam", "0"], "lam must be > 0, got lam=0"),
        (["--lam", "-1"], "lam must be > 0, got lam=-1.0"),
        (["--l1", "-1"], "l1 must be >= 0"),
        (["--option", "bogus=1"], "unknown option(s) ['bogus'] for solver='sdca'"),
        (["--option", "sampling"], "--option expects KEY=VALUE"),
        (["--option", "checkpoint=x"], "--option checkpoint is not accepted here: use "
                                       "--checkpoint"),
        (["--option", "sampling=uniform", "--option", "sampling=cyclic"],
         "--option sampling is given twice"),
        (["--solver", "bfgs"], "unknown solver 'bfgs'"),
        (["--solver", "sgd", "--l1", "0.01"], "solver='sgd' does not support l1 > 0"),
        (["--loss", "hingee"], "unknown loss 'hingee'"),
        (["--loss", "smooth_hinge", "--loss-param", "gamma=-1"],
         "loss_params['gamma'] for loss='smooth_hinge' must be finite and > 0"),
        (["--loss-param", "gamma=1"],
         "unknown loss_params ['gamma'] for loss='squared_hinge'"),
        (["--max-epochs", "0"], "max_epochs must be > 0"),
        (["--checkpoint-every", "0", "--checkpoint", str(tmp_path / "ck")],
         "--checkpoint-every must be > 0"),
    ]
    for extra, expected in cases:
        code, err = run_main(capsys, "fit", f, *extra)
        assert code == 1, (extra, err)
        last = err.strip().splitlines()[-1]
        assert last.startswith("primaldual fit: error: ") and expected in last, (extra, err)
    assert not (tmp_path / "ck").exists()


def test_cli_predict_errors(tmp_path, capsys):
    train = write(tmp_path, "train.svm", GOOD)
    model = tmp_path / "m.npz"
    assert cli.main(["fit", str(train), "--model", str(model), "--quiet"]) == 0
    capsys.readouterr()
    # a feature the training file never had is ignored, as LIBLINEAR does
    wide = write(tmp_path, "wide.svm", GOOD + "1 7:1\n")
    code, err = run_main(capsys, "predict", model, wide)
    assert code == 0 and "beyond the model's 3" in err and "ignored" in err
    zero = write(tmp_path, "zero.svm", "1 0:1 2:1\n")
    code, err = run_main(capsys, "predict", model, zero)
    assert code == 1 and "uses feature index 0" in err and "numbered from 1" in err
    bogus = write(tmp_path, "bogus.npz", "not a model")
    code, err = run_main(capsys, "predict", bogus, train)
    assert code == 1 and "is not an .npz archive" in err


def test_cli_error_in_a_subprocess(tmp_path):
    """The real process: non-zero exit, message on stderr, nothing on stdout."""
    f = write(tmp_path, "bad.svm", "1 1:0.5\n-1 2:1 2:3\n")
    env = dict(os.environ, PYTHONPATH=str(REPO / "src"),
               NUMBA_CACHE_DIR=os.environ.get("NUMBA_CACHE_DIR") or os.path.join(
                   tempfile.gettempdir(), "primaldual-test-numba-cache"))
    r = subprocess.run([sys.executable, "-m", "primaldual", "fit", str(f), "--json"],
                       capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 1 and r.stdout == ""
    assert f"{f}, line 2" in r.stderr and "not strictly increasing" in r.stderr
    assert "Traceback" not in r.stderr


# ------------------------------------------------------------- absurd widths
def test_absurd_feature_count_is_refused_before_allocating(tmp_path, capsys):
    # one index near 2^31 declares two billion features: w alone would be 17 GB
    import scipy.sparse as sp

    from primaldual import solve
    X = sp.csr_matrix((np.ones(2), ([0, 1], [3, 2 ** 31 - 2])), shape=(2, 2 ** 31 - 1))
    with pytest.raises(MemoryError, match=r"2,147,483,647 columns but only 2 of them"):
        solve(X, np.array([1.0, -1.0]), loss="hinge", lam=0.1)
    f = write(tmp_path, "wide.svm", "1 4:1\n-1 2147483647:1\n")
    code, err = run_main(capsys, "fit", f)
    assert code == 1 and "columns but only 2 of them hold a nonzero" in err
    assert "Traceback" not in err


def test_feature_cap_can_be_set_and_raised(monkeypatch):
    import scipy.sparse as sp

    from primaldual import solve
    X = sp.random(20, 50, density=0.2, format="csr", random_state=0)
    y = np.where(np.arange(20) % 2, 1.0, -1.0)
    monkeypatch.setenv("PRIMALDUAL_MAX_FEATURES", "49")
    with pytest.raises(MemoryError, match="PRIMALDUAL_MAX_FEATURES"):
        solve(X, y, loss="hinge", lam=0.1)
    monkeypatch.setenv("PRIMALDUAL_MAX_FEATURES", "50")
    assert solve(X, y, loss="hinge", lam=0.1).coef.shape == (50,)


# ------------------------------------------------ complex input is refused
@pytest.mark.parametrize("sparse", [False, True])
def test_complex_X_is_refused_not_truncated(sparse):
    import scipy.sparse as sp
    from primaldual import solve
    X = np.ones((6, 3)) + 1j * np.arange(18).reshape(6, 3)
    X = sp.csr_matrix(X) if sparse else X
    y = np.array([1.0, -1, 1, -1, 1, -1])
    with pytest.raises(ValueError, match="X has a complex dtype.*X.real"):
        solve(X, y, loss="hinge", lam=1e-2)


def test_complex_y_is_refused():
    from primaldual import solve
    with pytest.raises(ValueError, match="y has a complex dtype"):
        solve(np.ones((4, 2)), np.array([1, -1, 1, -1]) + 0j, loss="squared", lam=1e-2)


# ------------------------- Dask: an actor's own error is reported, not replayed
def _raise_runtime_error():
    raise RuntimeError("boom in actor code")


def test_actor_error_on_a_live_worker_is_reported(client):
    """PartitionSet.wait: a RuntimeError from a live worker's code reaches the
    caller; only a partition whose worker is gone is treated as lost."""
    from primaldual.distributed.partition_set import PartitionSet, _Lost

    workers = list(client.scheduler_info()["workers"])

    class Stub(PartitionSet):
        POLL = 1e-3       # look at the scheduler on every wait, as a slow round does

        def __init__(self, dead):
            self.timeout = 30.0
            self._dead = dead
            # what wait's periodic look at the scheduler reads: one live worker
            self.client = client
            self.addresses = workers[:1]

        def dead_partitions(self):
            return list(self._dead)

        def _died(self, k, grace=0.0):
            return k in self._dead

    fut = client.submit(_raise_runtime_error, pure=False)
    with pytest.raises(RuntimeError, match="boom in actor code"):
        Stub(dead=[]).wait([fut])
    fut = client.submit(_raise_runtime_error, pure=False)
    with pytest.raises(_Lost):
        Stub(dead=[0]).wait([fut])


def test_liveness_pings_go_out_at_once_and_share_one_deadline(monkeypatch):
    """PartitionSet.dead_partitions: every actor is pinged before any answer is
    awaited, the waits share one deadline of at most ``PING`` seconds (K busy
    actors cost one deadline, not K), a busy actor counts as alive and one whose
    ping fails as lost."""
    from primaldual.distributed import partition_set as PS

    events = []

    class Future:
        def __init__(self, k, outcome):
            self.k, self.outcome = k, outcome

        def result(self, timeout=None):
            events.append(("wait", self.k, timeout))
            if self.outcome == "busy":
                raise TimeoutError
            if self.outcome == "gone":
                raise OSError("connection closed")
            return "pong"

    class Actor:
        def __init__(self, k, outcome):
            self.k, self.outcome = k, outcome

        def ping(self):
            events.append(("ping", self.k))
            return Future(self.k, self.outcome)

    outcomes = ["busy", "ok", "gone", "busy", "ok"]
    pset = object.__new__(PS.PartitionSet)
    pset.client, pset.K, pset.timeout = None, len(outcomes), 30.0
    pset.addresses = ["w0", "w1", "w2", "w0", "gone-worker"]
    pset.actors = [Actor(k, o) for k, o in enumerate(outcomes)]
    monkeypatch.setattr(PS, "_workers", lambda client: ["w0", "w1", "w2"])
    assert pset.dead_partitions() == [2, 4]          # a failed ping, a dropped worker
    kinds = [e[0] for e in events]
    assert kinds == ["ping"] * 4 + ["wait"] * 4      # partition 4's worker is not pinged
    assert all(0 < e[2] <= PS.PartitionSet.PING for e in events if e[0] == "wait")
