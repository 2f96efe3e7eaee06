"""Property tests (hypothesis) over random small problems, for every registered
solver and every loss it supports.

The problems cover n = 1 and d = 1, empty columns, duplicate rows, rows of
zeros, values scaled by 10^e for e in [-150, 150], float32 data, CSR with
unsorted indices and CSR with duplicate entries.

The property: a run either raises a clear error (``ValueError`` or
``FloatingPointError`` with a message that says what is wrong), or returns a
result with a finite certificate (finite primal, dual, coef, dual_coef), a
duality gap ``>= -1e-12 max(1, |P|)`` (weak duality up to rounding), and the
same optimum as SDCA: the certified intervals ``[D, P]`` of the solver and of
SDCA both contain the optimum ``P*``, so each solver's dual value may not
exceed the other's primal value (up to rounding).  That check cannot be
satisfied by a wrong solver that happens to report a small gap.

Supported combinations come from each solver's ``requires`` and
``supports_l1`` flags and from its constructor, which refuses an unsupported
loss with the documented ValueError before any work (SIMBA: hinge only).

Runs are deterministic (``derandomize=True``).  Each solver test also checks
that a good share of its examples produced a certificate (not only errors),
so the property is not vacuous.
"""
from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

import primaldual
from primaldual import SOLVERS, solve
from primaldual.losses import LOSS_NAMES, check_capabilities, make_loss

from conftest import l1_for

EXAMPLES_PER_SOLVER = 50
#: solvers whose runs cost seconds on these problems get fewer examples
EXAMPLES = {"bmrm": 6, "simba": 20, "cocoa": 30, "minibatch_sdca": 30}


def _settings(name):
    return settings(max_examples=EXAMPLES.get(name, EXAMPLES_PER_SOLVER), deadline=None,
                    derandomize=True, database=None, suppress_health_check=list(HealthCheck),
                    # no shrinking: a failure is reported as drawn (keeps the budget)
                    phases=(Phase.explicit, Phase.generate))

SCALES = (-150, -100, -20, -8, 0, 0, 0, 8, 20, 100, 150)
FORMATS = ("dense64", "dense32", "csr", "csr32", "csr_unsorted", "csr_duplicates")
STRUCTURES = ("plain", "zero_row", "duplicate_rows", "empty_column", "all_three")


def accepts(name, loss):
    """True when the solver takes the loss (flags first, then its constructor)."""
    cls = SOLVERS[name]
    try:
        check_capabilities(make_loss(loss), name, cls.requires)
        X = np.eye(16) / 2.0
        y = np.resize([1.0, -1.0], 16)
        cls.create(primaldual.Problem(X, y, loss=loss, lam=1.0, l1=l1_for(name)), tol=0,
                   max_epochs=1, random_state=0, **options_for(name, 16))
    except ValueError:
        return False
    return True


def options_for(name, n):
    """Small, valid solver options for an n-row problem."""
    if name == "minibatch_sdca":
        return {"batch_size": max(1, n // 2)}
    if name == "cocoa":
        return {"n_partitions": min(2, n)}
    if name == "psgd":
        return {"n_workers": min(2, n)}
    return {}


def _csr_unsorted(A):
    """CSR of A with the indices of every row in reverse order."""
    A = sp.csr_matrix(A)
    data, indices = A.data.copy(), A.indices.copy()
    for i in range(A.shape[0]):
        a, b = A.indptr[i], A.indptr[i + 1]
        data[a:b] = data[a:b][::-1]
        indices[a:b] = indices[a:b][::-1]
    M = sp.csr_matrix((data, indices, A.indptr.copy()), shape=A.shape)
    return M


def _csr_duplicates(A):
    """CSR of A where every stored entry is split into two equal duplicate entries."""
    A = sp.csr_matrix(A)
    counts = np.diff(A.indptr) * 2
    indptr = np.concatenate([[0], np.cumsum(counts)])
    data = np.repeat(A.data / 2.0, 2)
    indices = np.repeat(A.indices, 2)
    return sp.csr_matrix((data, indices, indptr), shape=A.shape)


@st.composite
def problems(draw, classification):
    n = draw(st.integers(1, 6))
    d = draw(st.integers(1, 4))
    ints = st.integers(-3, 3)
    A = np.array(draw(st.lists(st.lists(ints, min_size=d, max_size=d), min_size=n,
                               max_size=n)), dtype=np.float64).reshape(n, d)
    structure = draw(st.sampled_from(STRUCTURES))
    if structure in ("zero_row", "all_three"):
        A[draw(st.integers(0, n - 1))] = 0.0
    if structure in ("duplicate_rows", "all_three") and n > 1:
        A[1:] = A[0] if structure == "duplicate_rows" else A[1:]
        A[-1] = A[0]
    if structure in ("empty_column", "all_three"):
        A[:, draw(st.integers(0, d - 1))] = 0.0
    e = draw(st.sampled_from(SCALES))
    fmt = draw(st.sampled_from(FORMATS))
    if fmt in ("dense32", "csr32"):
        e = max(min(e, 20), -20)       # float32 range: 10^+-38
    A = A * 10.0 ** e
    if fmt == "dense64":
        X = A
    elif fmt == "dense32":
        X = A.astype(np.float32)
    elif fmt == "csr":
        X = sp.csr_matrix(A)
    elif fmt == "csr32":
        X = sp.csr_matrix(A.astype(np.float32))
    elif fmt == "csr_unsorted":
        X = _csr_unsorted(A)
    else:
        X = _csr_duplicates(A)
    if classification:
        y = np.array(draw(st.lists(st.sampled_from([-1.0, 1.0]), min_size=n, max_size=n)))
    else:
        ey = draw(st.sampled_from((-8, 0, 0, 8, 100)))
        y = np.array(draw(st.lists(st.integers(-5, 5), min_size=n, max_size=n)),
                     dtype=np.float64) * 10.0 ** ey
    lam = draw(st.sampled_from([1e-3, 1e-1, 1.0]))
    l1 = draw(st.sampled_from([0.0, 0.0, 1e-2]))
    seed = draw(st.integers(0, 3))
    return {"X": X, "y": y, "lam": lam, "l1": l1, "seed": seed, "fmt": fmt,
            "structure": structure, "scale": e, "A": A}


CLEAR_ERRORS = (ValueError, FloatingPointError)


def _check_message(err):
    msg = str(err)
    assert len(msg) >= 20, f"unclear error message: {msg!r}"
    return msg


def unit_ball_rows(X):
    """X scaled so that max ||x_i|| <= 1 (SIMBA's input condition, Algorithm 1)."""
    norms = np.sqrt(np.asarray(sp.csr_matrix(X).multiply(sp.csr_matrix(X)).sum(1),
                               dtype=np.float64))
    m = float(norms.max())
    if m > 1.0 and math.isfinite(m):
        X = X / np.asarray(m, dtype=X.dtype)
    return X


def _fit(name, loss, prob, **kw):
    X = prob["X"]
    n = X.shape[0]
    return solve(X, prob["y"], loss=loss, lam=prob["lam"], l1=prob["l1"], solver=name,
                 tol=1e-10, max_epochs=kw.pop("max_epochs", 30), random_state=prob["seed"],
                 **options_for(name, n), **kw)


def _certificate_ok(res):
    assert np.isfinite(res.primal) and np.isfinite(res.dual), (res.primal, res.dual)
    assert np.isfinite(res.coef).all() and np.isfinite(res.dual_coef).all()
    scale = max(1.0, abs(res.primal))
    assert res.gap >= -1e-12 * scale, (res.gap, res.primal, res.dual)


def _same_optimum(a, b):
    """Certified intervals [D, P] must intersect (both contain P*)."""
    scale = max(1.0, abs(a.primal), abs(b.primal))
    slack = 1e-9 * scale
    assert a.dual <= b.primal + slack, (a.solver, a.dual, b.solver, b.primal)
    assert b.dual <= a.primal + slack, (b.solver, b.dual, a.solver, a.primal)


def solver_loss_cases():
    out = []
    for name in sorted(SOLVERS):
        losses = [lo for lo in LOSS_NAMES if accepts(name, lo)]
        marks = []
        out.append(pytest.param(name, losses, marks=marks, id=name))
    return out


@pytest.mark.parametrize("name,losses", solver_loss_cases())
def test_certificate_or_clear_error(name, losses):
    tally = {"ok": 0, "error": 0, "compared": 0, "examples": 0, "losses": set()}
    cls = SOLVERS[name]

    budget = EXAMPLES.get(name, EXAMPLES_PER_SOLVER)

    @_settings(name)
    @given(data=st.data())
    def run(data):
        loss = data.draw(st.sampled_from(losses), label="loss")
        prob = data.draw(problems(make_loss(loss).classification), label="problem")
        if prob["l1"] > 0 and not cls.supports_l1:
            prob["l1"] = 0.0
        prob["l1"] = prob["l1"] or l1_for(name)
        extra = {}
        if name == "simba":
            prob["X"] = unit_ball_rows(prob["X"])
            # nu=None derives nu from lam and refuses many tiny problems (nu > 1)
            extra["nu"] = data.draw(st.sampled_from([None, 0.2, 0.6]), label="nu")
        tally["examples"] += 1
        try:
            res = _fit(name, loss, prob, **extra)
        except CLEAR_ERRORS as err:
            _check_message(err)
            tally["error"] += 1
            return
        _certificate_ok(res)
        tally["ok"] += 1
        tally["losses"].add(loss)
        # an independent reference: SDCA for the other solvers; for SDCA itself
        # L-BFGS where the loss is smooth and the penalty L2
        ref_name = "sdca"
        if name == "sdca":
            if not (make_loss(loss).smooth and prob["l1"] == 0):
                return
            ref_name = "lbfgs"
        try:
            ref = _fit(ref_name, loss, prob, max_epochs=200)
        except CLEAR_ERRORS as err:
            _check_message(err)
            return
        _certificate_ok(ref)
        _same_optimum(res, ref)
        tally["compared"] += 1

    run()
    assert tally["examples"] == budget
    # not vacuous: a good share of the examples give a certificate, and some of
    # those were compared with an independent solver's certified interval
    assert tally["ok"] >= budget // 4, tally
    assert tally["compared"] >= 1, tally


# ------------------------------------------- the named corner cases, one each
def _corner_problems():
    one_row = np.array([[0.5, -1.0, 0.0]])
    one_col = np.array([[1.0], [-2.0], [0.0], [0.5]])
    base = np.array([[1.0, 0.0, 2.0, 0.0], [1.0, 0.0, 2.0, 0.0], [0.0, 0.0, 0.0, 0.0],
                     [-1.0, 0.0, 0.5, 1.0], [0.0, 0.0, -1.0, 3.0]])
    return {
        "n=1": one_row,
        "d=1": one_col,
        "empty_column+duplicate_rows+zero_row": base,
        "tiny_values_1e-150": base * 1e-150,
        "huge_values_1e150": base * 1e150,
        "float32": base.astype(np.float32),
        "csr_unsorted": _csr_unsorted(base),
        "csr_duplicates": _csr_duplicates(base),
    }


CORNERS = _corner_problems()
EXTREME_CORNERS = ("tiny_values_1e-150", "huge_values_1e150")
#: refusals the solver documents (SIMBA's step uses log n)
DOCUMENTED_REFUSALS = {("simba", "n=1"): "needs at least 2 samples"}


def _corner_params():
    out = []
    for name in sorted(SOLVERS):
        for corner in sorted(CORNERS):
            marks = []
            out.append(pytest.param(name, corner, marks=marks, id=f"{name}-{corner}"))
    return out


@pytest.mark.parametrize("name,corner", _corner_params())
def test_named_corner_cases(name, corner):
    """Each named case, for each solver with its first supported classification
    and regression loss: a certificate that brackets SDCA's, or a clear error."""
    X = CORNERS[corner]
    n = X.shape[0]
    certified, errors = 0, []
    for loss in [lo for lo in LOSS_NAMES if accepts(name, lo)][:2] + \
            [lo for lo in ("squared", "absolute") if accepts(name, lo)][:1]:
        y = np.resize([1.0, -1.0, -1.0], n) if make_loss(loss).classification else \
            np.linspace(-1.0, 2.0, n)
        prob = {"X": unit_ball_rows(X) if name == "simba" else X, "y": y, "lam": 0.1,
                "l1": l1_for(name), "seed": 0}
        try:
            res = _fit(name, loss, prob)
        except CLEAR_ERRORS as err:
            _check_message(err)
            errors.append(f"{loss}: {err}")
            continue
        except Exception as err:          # anything else is not a clear error
            raise AssertionError(f"{name}/{loss} on {corner}: {err!r}") from err
        _certificate_ok(res)
        ref = _fit("sdca", loss, prob, max_epochs=300)
        _certificate_ok(ref)
        _same_optimum(res, ref)
        certified += 1
    # only values beyond double precision's reach may leave a solver with no
    # certificate at all; a solver that refuses every loss on an ordinary corner
    # would otherwise pass
    if (name, corner) in DOCUMENTED_REFUSALS:
        assert errors and all(DOCUMENTED_REFUSALS[name, corner] in e for e in errors), errors
    elif corner not in EXTREME_CORNERS:
        assert certified >= 1, (name, corner, errors)


def test_csr_inputs_are_not_modified():
    """Unsorted / duplicate CSR given by the caller is left as it was."""
    base = CORNERS["empty_column+duplicate_rows+zero_row"]
    for M in (_csr_unsorted(base), _csr_duplicates(base)):
        before = (M.data.copy(), M.indices.copy(), M.indptr.copy())
        res = solve(M, np.resize([1.0, -1.0], 5), loss="hinge", lam=0.1, max_epochs=5)
        assert np.isfinite(res.gap)
        for a, b in zip(before, (M.data, M.indices, M.indptr)):
            np.testing.assert_array_equal(a, b)
