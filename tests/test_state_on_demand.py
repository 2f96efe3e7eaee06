"""A fit exports its solver state only when something reads it (a checkpoint, a
resume, a warm start or the caller through ``res.state``)."""
from __future__ import annotations

import pickle

import numpy as np

import primaldual
from primaldual.solvers.sdca import SDCASolver


def _data():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((120, 6))
    return X, np.where(X[:, 0] + 0.3 * rng.standard_normal(120) > 0, 1.0, -1.0)


def _count(monkeypatch):
    calls = []
    real = SDCASolver.get_state

    def counting(self):
        calls.append(1)
        return real(self)

    monkeypatch.setattr(SDCASolver, "get_state", counting)
    return calls


def test_a_plain_fit_exports_no_state_until_asked(monkeypatch):
    calls = _count(monkeypatch)
    X, y = _data()
    res = primaldual.solve(X, y, loss="hinge", lam=1e-2, solver="sdca", random_state=0)
    assert calls == []
    state = res.state
    assert calls == [1] and res.state is state          # exported once
    np.testing.assert_array_equal(state.arrays["alpha"], res.dual_coef)


def test_a_checkpointed_fit_exports_and_a_pickled_result_carries_the_state(monkeypatch,
                                                                           tmp_path):
    calls = _count(monkeypatch)
    X, y = _data()
    res = primaldual.solve(X, y, loss="hinge", lam=1e-2, solver="sdca", random_state=0,
                           checkpoint=str(tmp_path / "ck"))
    assert len(calls) >= 1
    back = pickle.loads(pickle.dumps(res))
    np.testing.assert_array_equal(back.state.arrays["alpha"], res.state.arrays["alpha"])


def test_resuming_from_a_result_reads_its_state():
    X, y = _data()
    kw = dict(loss="logistic", lam=1e-3, solver="sdca", random_state=3, tol=1e-10)
    full = primaldual.solve(X, y, max_epochs=12, **kw)
    half = primaldual.solve(X, y, max_epochs=5, **kw)
    rest = primaldual.solve(X, y, max_epochs=12, resume=half, **kw)
    # the iterate continues exactly; the returned primal point is the best of the
    # checks each run made, and a stop at epoch 5 moves the later checks
    np.testing.assert_array_equal(rest.dual_coef, full.dual_coef)
    assert rest.trace[-1]["primal"] == full.trace[-1]["primal"]
    assert rest.dual == full.dual


def test_auto_passes_its_last_leg_state_on_unread(monkeypatch):
    """``solver="auto"`` hands the state of its last leg (here ``l1cd``) on without
    exporting it; read, it is that leg's, and resumes to the same point."""
    from primaldual.solvers.sparse import SparseCDSolver
    calls = []
    real = SparseCDSolver.get_state
    monkeypatch.setattr(SparseCDSolver, "get_state",
                        lambda self: calls.append(1) or real(self))
    X, y = _data()
    res = primaldual.solve(X, y, loss="logistic", lam=0.0, l1=0.01, random_state=0)
    assert res.solver == "l1cd" and calls == []
    state = res.state
    assert calls == [1] and state.solver == "l1cd"
    np.testing.assert_array_equal(state.arrays["w"], res.coef)
    again = primaldual.solve(X, y, loss="logistic", lam=0.0, l1=0.01, solver="l1cd",
                             random_state=0, resume=res)
    assert again.converged and again.primal <= res.primal + 1e-12 * abs(res.primal)
