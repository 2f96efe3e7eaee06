"""Fuzzing the LIBSVM reader (hypothesis).

Target: :func:`primaldual.datasets.load_svmlight` (sklearn's parser plus our
error reporting) and the ``primaldual info`` command on the same file.

Property, for any byte string (plain, or wrapped in / posing as gzip, bzip2
or xz): the reader returns a CSR matrix and labels of matching length, or
raises our :class:`~primaldual.datasets.DataFormatError` (a ValueError) or
another ValueError with a message; ``primaldual info`` exits 0 or prints an
``error:`` line and exits 1.  No other exception, no crash, no hang, and no
memory blow-up: each input is parsed in a forked worker process that measures the peak
of traced allocations
(numpy allocations are traced by tracemalloc; must stay below 16 MB for
inputs of a few KB, 48 MB for xz whose decoder allocates its dictionary, so
e.g. ``1 2147483646:1`` must not build a dense matrix).  A worker that does not answer within 20 s is killed and the input
reported as a hang.
"""
from __future__ import annotations

import bz2
import gzip
import lzma
import multiprocessing as mp
import os
import tempfile

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

PEAK_BYTES = 16 * 2 ** 20
#: the xz decoder allocates its dictionary (8 MB at the default preset 6)
PEAK_BYTES_COMPRESSED = 48 * 2 ** 20
HANG_SECONDS = 20.0

FUZZ = settings(max_examples=500, deadline=None, derandomize=True, database=None,
                suppress_health_check=list(HealthCheck),
                phases=(Phase.explicit, Phase.generate))


def _worker(conn):
    """Parse inputs sent over ``conn`` (forked: the parent's imports are reused)."""
    import contextlib
    import io
    import time
    import tracemalloc

    import numpy as np

    from primaldual import cli
    from primaldual.datasets import DataFormatError, load_svmlight

    fd, path = tempfile.mkstemp(suffix=".svm")
    os.close(fd)
    with open(path, "wb") as fh:         # warm up: lazy imports are not timed
        fh.write(b"1 1:1\n")
    load_svmlight(path)
    with contextlib.redirect_stdout(io.StringIO()):
        cli.main(["info", path])
    while True:
        payload = conn.recv()
        if payload is None:
            break
        with open(path, "wb") as fh:
            fh.write(payload)
        tracemalloc.start()
        t0 = time.perf_counter()
        try:
            X, y = load_svmlight(path)
            ok = (X.format == "csr" and X.shape[0] == y.shape[0] and X.ndim == 2
                  and X.indptr.shape[0] == X.shape[0] + 1 and np.all(np.diff(X.indptr) >= 0))
            outcome = ("parsed", bool(ok), X.shape, "")
        except DataFormatError as e:
            outcome = ("format_error", True, None, str(e))
        except ValueError as e:
            outcome = ("value_error", True, None, str(e))
        except BaseException as e:     # noqa: BLE001 - reported to the parent
            outcome = ("other", False, None, f"{type(e).__name__}: {e}")
        elapsed = time.perf_counter() - t0
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        out, err = io.StringIO(), io.StringIO()
        t1 = time.perf_counter()
        try:
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                code = cli.main(["info", path])
        except BaseException as e:     # noqa: BLE001
            code = f"raised {type(e).__name__}: {e}"
        info_elapsed = time.perf_counter() - t1
        conn.send((outcome, elapsed, peak, code, err.getvalue(), info_elapsed))
    os.unlink(path)


class Parser:
    """A forked worker that parses inputs; restarted after a hang."""

    def __init__(self):
        self.ctx = mp.get_context("fork")
        self.count = 0
        self._start()

    def _start(self):
        self.parent, child = self.ctx.Pipe()
        self.proc = self.ctx.Process(target=_worker, args=(child,), daemon=True)
        self.proc.start()

    def parse(self, payload: bytes):
        self.count += 1
        self.parent.send(payload)
        if not self.parent.poll(HANG_SECONDS):
            self.proc.kill()
            self.proc.join()
            self._start()
            raise AssertionError(f"parser hung for more than {HANG_SECONDS}s on "
                                 f"{payload[:200]!r}")
        return self.parent.recv()

    def close(self):
        self.parent.send(None)
        self.proc.join(timeout=10)
        if self.proc.is_alive():
            self.proc.kill()


@pytest.fixture(scope="module")
def parser():
    p = Parser()
    yield p
    p.close()


def check(parser, payload):
    outcome, elapsed, peak, code, err, info_elapsed = parser.parse(payload)
    kind, ok, shape, msg = outcome
    assert kind != "other", f"unexpected exception {msg} on {payload[:200]!r}"
    assert ok, f"inconsistent parse result {shape} on {payload[:200]!r}"
    if kind != "parsed":
        assert len(msg) >= 15, f"unclear error {msg!r}"
    # no wall-clock bound here (it would flake on a loaded machine): a parse that
    # does not end is caught by the HANG_SECONDS guard of Parser.parse
    limit = PEAK_BYTES_COMPRESSED if payload[:6] == _MAGIC["xz"] else PEAK_BYTES
    assert peak < limit + 64 * len(payload), \
        f"peak traced memory {peak / 2**20:.1f} MB on {payload[:200]!r}"
    assert code in (0, 1), f"primaldual info: {code!r}"
    if code == 1:
        assert "primaldual info: error:" in err, err
    return kind, shape


# ---------------------------------------------------------------- inputs
_num = st.one_of(
    st.integers(-10 ** 20, 10 ** 20).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.sampled_from(["nan", "inf", "-inf", "1e400", "-1e-400", "0x10", "1_0", "", "+", "-",
                     "1e", ".", "1.5.5", "０", "\u00a0", "1,2", "9" * 40]),
)
_index = st.one_of(st.integers(-3, 40), st.sampled_from(
    [0, 2 ** 31 - 2, 2 ** 31 - 1, 2 ** 31, 2 ** 32, 2 ** 63 - 1, 2 ** 63, 10 ** 30]))
_token = st.one_of(
    st.tuples(_index, _num).map(lambda t: f"{t[0]}:{t[1]}"),
    st.tuples(_index, _num).map(lambda t: f"{t[0]}:{t[1]}"),
    st.sampled_from(["qid:1", "qid:x", ":", "1:", ":1", "a:b", "1::1", "#", "# c", "1:1#x"]),
    st.text(max_size=6),
)
_line = st.tuples(_num, st.lists(_token, max_size=6), st.sampled_from(
    ["\n", "\r\n", "\r", "", " \n", "\t\n", "\x00\n"])).map(
    lambda t: t[0] + "".join(" " + tok for tok in t[1]) + t[2])
libsvm_like = st.lists(_line, max_size=8).map(lambda ls: "".join(ls)).flatmap(
    lambda s: st.sampled_from(["utf-8", "latin-1", "utf-16"]).map(
        lambda enc: s.encode(enc, errors="replace")))

_MAGIC = {"gzip": b"\x1f\x8b", "bzip2": b"BZh", "xz": b"\xfd7zXZ\x00"}


def _compress(kind, data):
    return {"gzip": gzip.compress, "bzip2": bz2.compress, "xz": lzma.compress}[kind](data)


@st.composite
def compressed(draw):
    kind = draw(st.sampled_from(sorted(_MAGIC)))
    body = draw(st.one_of(libsvm_like, st.binary(max_size=200)))
    blob = _compress(kind, body)
    how = draw(st.sampled_from(["intact", "truncated", "bitflip", "magic+junk", "appended"]))
    if how == "truncated":
        blob = blob[:draw(st.integers(0, max(0, len(blob) - 1)))]
    elif how == "bitflip" and blob:
        i = draw(st.integers(0, len(blob) - 1))
        blob = blob[:i] + bytes([blob[i] ^ (1 << draw(st.integers(0, 7)))]) + blob[i + 1:]
    elif how == "magic+junk":
        blob = _MAGIC[kind] + draw(st.binary(max_size=100))
    elif how == "appended":
        blob = blob + draw(st.binary(min_size=1, max_size=50))
    return blob


# ------------------------------------------------------------------ tests
@FUZZ
@given(payload=st.binary(max_size=400))
def test_any_bytes(parser, payload):
    check(parser, payload)


@FUZZ
@given(payload=libsvm_like)
def test_libsvm_like_text(parser, payload):
    check(parser, payload)


@settings(FUZZ, max_examples=300)
@given(payload=compressed())
def test_malformed_compressed_files(parser, payload):
    check(parser, payload)


@pytest.mark.parametrize("line", [b"1 999999999999:1\n", b"1 2147483646:1\n",
                                  b"1 2147483647:1\n", b"-1 1:1 2147483646:2\n",
                                  b"1 9223372036854775807:1\n"])
def test_huge_feature_index_does_not_densify(parser, line):
    """A huge index is either refused or gives a CSR matrix of that width whose
    memory is O(nnz), never O(n * d)."""
    kind, shape = check(parser, line)
    if kind == "parsed":
        assert shape[0] == 1 and shape[1] >= 2 ** 31 - 2


def test_valid_files_round_trip(parser, tmp_path):
    """The fuzz harness itself sees a valid file (plain and compressed) as parsed."""
    text = b"+1 1:0.5 3:-2\n-1 2:1e-3 # comment\n+1 qid:3 4:7\n"
    for blob in (text, gzip.compress(text), bz2.compress(text), lzma.compress(text)):
        kind, shape = check(parser, blob)
        assert kind == "parsed" and shape == (3, 4)


# ----------------------------------------------- malformed CSR arrays to solve
def _solve_worker(conn):
    """Fit the CSR matrices sent over ``conn`` (forked: a crash kills only this
    process, and the parent reports it)."""
    import numpy as np
    import scipy.sparse as sp

    from primaldual import solve
    while True:
        msg = conn.recv()
        if msg is None:
            break
        data, indices, indptr, shape = msg
        X = sp.csr_matrix(shape)
        X.data, X.indices, X.indptr = data, indices, indptr   # past scipy's checks
        y = np.where(np.arange(shape[0]) % 2 == 0, 1.0, -1.0)
        try:
            res = solve(X, y, lam=0.1, solver="sdca", max_epochs=2, random_state=0)
            out = ("solved", bool(np.isfinite([res.primal, res.dual]).all()
                                  and res.gap >= -1e-12), "")
        except ValueError as e:
            out = ("value_error", True, str(e))
        except BaseException as e:     # noqa: BLE001 - reported to the parent
            out = ("other", False, f"{type(e).__name__}: {e}")
        conn.send(out)


class SolveWorker(Parser):
    def _start(self):
        self.parent, child = self.ctx.Pipe()
        self.proc = self.ctx.Process(target=_solve_worker, args=(child,), daemon=True)
        self.proc.start()

    def fit(self, arrays):
        self.count += 1
        self.parent.send(arrays)
        if not self.parent.poll(HANG_SECONDS * 6):   # a cold Numba cache compiles first
            self.proc.kill()
            self.proc.join()
            self._start()
            raise AssertionError(f"solve hung on {arrays}")
        try:
            return self.parent.recv()
        except EOFError:
            code = self.proc.exitcode
            self.proc.join()
            self._start()
            raise AssertionError(f"solve crashed (exit {code}) on {arrays}") from None


@pytest.fixture(scope="module")
def solver_worker():
    w = SolveWorker()
    yield w
    w.close()


#: what can be wrong with the three CSR arrays (None: nothing)
CSR_FAULTS = [None, "index_high", "index_huge", "index_negative", "indptr_decreasing",
              "indptr_first", "indptr_last_short", "indptr_last_long", "indptr_length",
              "indices_length"]


@st.composite
def csr_arrays(draw):
    import numpy as np
    n, d = draw(st.integers(1, 5)), draw(st.integers(1, 5))
    rows = [sorted(draw(st.sets(st.integers(0, d - 1), min_size=1, max_size=d)))
            for _ in range(n)]
    indptr = np.cumsum([0] + [len(r) for r in rows]).astype(np.int32)
    indices = np.array([j for r in rows for j in r], dtype=np.int32)
    data = np.array(draw(st.lists(st.floats(-3, 3).filter(bool), min_size=indices.size,
                                  max_size=indices.size)), dtype=np.float64)
    fault = draw(st.sampled_from(CSR_FAULTS))
    k = draw(st.integers(0, indices.size - 1))
    if fault == "index_high":
        indices[k] = d + draw(st.integers(0, 3))
    elif fault == "index_huge":
        indices = indices.astype(np.int64)
        indices[k] = draw(st.sampled_from([10 ** 6, 2 ** 31 - 1, 2 ** 40]))
    elif fault == "index_negative":
        indices[k] = -draw(st.integers(1, d + 2))
    elif fault == "indptr_decreasing" and n >= 2:
        i = draw(st.integers(1, n - 1))
        indptr[i] = indptr[i + 1] + draw(st.integers(1, 3))
    elif fault == "indptr_first":
        indptr[0] = draw(st.sampled_from([1, -1]))
    elif fault == "indptr_last_short":
        indptr[-1] -= 1
        indptr = np.minimum(indptr, indptr[-1])
    elif fault == "indptr_last_long":
        indptr[-1] += draw(st.integers(1, 5))
    elif fault == "indptr_length":
        indptr = np.append(indptr, indptr[-1])
    elif fault == "indices_length":
        indices, data = indices[:-1], data[:-1]
    else:
        fault = None if fault is None else "none_possible"
    return fault, (data, indices, indptr, (n, d))


@settings(FUZZ, max_examples=300)
@given(case=csr_arrays())
def test_malformed_csr_is_refused_before_any_kernel(solver_worker, case):
    """CSR arrays that scipy does not check (index range, indptr order and
    ends, lengths): ``solve`` raises a ValueError that says "malformed" and
    names the problem, or (for intact arrays) returns a certificate; it never
    crashes or reads outside the arrays."""
    fault, arrays = case
    kind, ok, msg = solver_worker.fit(arrays)
    assert kind != "other", msg
    if fault in (None, "none_possible"):
        assert kind == "solved" and ok, msg
    else:
        assert kind == "value_error" and "malformed" in msg, (fault, msg)


@pytest.mark.parametrize("arrays, words", [
    # the report's examples: scipy accepts both, the kernels would read out of bounds
    (([1.0, 2.0], [0, 10 ** 6], [0, 1, 2], (2, 5)), ["row 1", "column index 1000000"]),
    (([1.0, 2.0], [0, -3], [0, 1, 2], (2, 5)), ["row 1", "column index -3", "negative"]),
    (([1.0, 2.0], [0, 1], [0, 2, 1], (2, 5)), ["indptr decreases at row 1"]),
    (([1.0, 2.0], [0, 1], [0, 1, 3], (2, 5)), ["indptr[-1] = 3", "indices has 2"]),
])
def test_malformed_csr_names_the_problem(solver_worker, arrays, words):
    import numpy as np
    data, indices, indptr, shape = arrays
    kind, _, msg = solver_worker.fit((np.array(data), np.array(indices, np.int64),
                                      np.array(indptr, np.int64), shape))
    assert kind == "value_error", msg
    for w in words:
        assert w in msg, msg


def test_malformed_sparse_of_other_formats_is_refused():
    import numpy as np
    import scipy.sparse as sp

    from primaldual.validation import check_X
    X = sp.csc_matrix(np.eye(3))
    X.indices[1] = 9
    with pytest.raises(ValueError, match="malformed CSC .* row index 9"):
        check_X(X)
    X = sp.coo_matrix(np.eye(3))
    X.col[2] = -1
    with pytest.raises(ValueError, match="malformed COO .* column index -1"):
        check_X(X)


def test_counts(parser):
    """Runs last in this module: the number of inputs the worker parsed."""
    assert parser.count >= 500 + 500 + 300 + 5 + 4
