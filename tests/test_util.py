"""The one-home helpers: atomic writes, seeding, label encoding, compression, status codes,
dual bounds."""
from __future__ import annotations

import ast
import bz2
import gzip
import importlib
import lzma
import os
import pkgutil
import stat
import zipfile
from pathlib import Path

import numpy as np
import pytest

import primaldual
import primaldual.losses  # noqa: F401  (its LOSS_NAMES parametrize a test below)
import primaldual._util as U
import primaldual.kernels as kernels_pkg
from primaldual import datasets as D
from primaldual.kernels import status


# ------------------------------------------------------------------ layering
def test_util_and_status_import_nothing_from_primaldual():
    """They sit below the kernels: only the standard library, numpy and each other."""
    files = list(Path(U.__file__).parent.glob("*.py")) + [Path(status.__file__)]
    for f in files:
        tree = ast.parse(f.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                assert node.level <= 1, (f.name, ast.dump(node))
                if f.name == "status.py":
                    assert node.module == "__future__" or node.module is None, f.name
                assert not (node.module or "").startswith("primaldual"), f.name
            elif isinstance(node, ast.Import):
                for a in node.names:
                    assert not a.name.startswith("primaldual"), f.name


# ------------------------------------------------------------- atomic write
def test_atomic_write_replaces_and_creates_parents(tmp_path):
    dest = tmp_path / "a" / "b" / "out.bin"
    with U.atomic_write(dest) as fh:
        fh.write(b"first")
    assert dest.read_bytes() == b"first"
    with U.atomic_write(dest) as fh:
        fh.write(b"second")
        assert dest.read_bytes() == b"first"          # not visible before the block ends
    assert dest.read_bytes() == b"second"
    assert sorted(p.name for p in dest.parent.iterdir()) == ["out.bin"]


@pytest.mark.parametrize("exc", [RuntimeError, KeyboardInterrupt])
def test_atomic_write_leaves_no_partial_file_when_the_writer_raises(tmp_path, exc):
    dest = tmp_path / "model.npz"
    with pytest.raises(exc):
        with U.atomic_write(dest) as fh:
            fh.write(b"partial")
            raise exc("writer failed")
    assert list(tmp_path.iterdir()) == []             # nothing, not even a temporary
    dest.write_bytes(b"old")
    with pytest.raises(exc):
        with U.atomic_write(dest) as fh:
            np.savez(fh, x=np.arange(1000))
            raise exc("writer failed")
    assert dest.read_bytes() == b"old"                # the old content is untouched
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model.npz"]


def test_atomic_write_text_mode_and_permissions(tmp_path):
    dest = tmp_path / "t.csv"
    with U.atomic_write(dest, "w", newline="") as fh:
        fh.write("a,b\r\nü\n")
    assert dest.read_bytes() == "a,b\r\nü\n".encode()
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE(dest.stat().st_mode) == 0o666 & ~umask     # like open(), not 0600
    with pytest.raises(ValueError, match="mode"):
        with U.atomic_write(dest, "ab"):
            pass
    with pytest.raises(ValueError, match="text mode"):
        with U.atomic_write(dest, "wb", newline=""):
            pass
    assert dest.read_bytes() == "a,b\r\nü\n".encode()


def test_no_hand_written_os_replace_left_in_the_package():
    src = Path(primaldual.__file__).parent
    hits = [str(p.relative_to(src)) for p in src.rglob("*.py")
            if "os.replace(" in p.read_text() and p.name != "atomic.py"]
    assert hits == []


# ------------------------------------------------------------------ seeding
def test_make_rng_streams():
    a = U.make_rng(42).random(5)
    np.testing.assert_array_equal(a, np.random.default_rng(42).random(5))
    g = np.random.default_rng(7)
    child = U.make_rng(g)
    expected = np.random.Generator(np.random.PCG64(
        np.random.default_rng(7).integers(2 ** 63))).random(3)
    np.testing.assert_array_equal(child.random(3), expected)
    rs = np.random.RandomState(3)
    r = U.make_rng(rs).random(3)
    np.testing.assert_array_equal(
        r, np.random.default_rng(np.random.RandomState(3).randint(2 ** 31 - 1)).random(3))
    assert not np.array_equal(U.make_rng(None).random(4), U.make_rng(None).random(4))
    for bad in (-1, 1.5, "3", True, [1]):
        with pytest.raises(ValueError, match="random_state"):
            U.make_rng(bad)


def test_seed_entropy():
    assert U.seed_entropy(12) == 12 and U.seed_entropy(np.int64(12)) == 12
    g = np.random.default_rng(1)
    assert U.seed_entropy(None, g) == np.random.default_rng(1).integers(2 ** 63)
    assert U.seed_entropy(np.random.default_rng(2)) == np.random.default_rng(2).integers(2 ** 63)
    assert U.seed_entropy(np.random.RandomState(2)) == \
        np.random.RandomState(2).randint(np.iinfo(np.int32).max)
    assert U.seed_entropy(None) != U.seed_entropy(None)
    with pytest.raises(ValueError, match=">= 0"):
        U.seed_entropy(-3)
    with pytest.raises(ValueError, match="random_state"):
        U.seed_entropy("x")


def test_spawned_streams_are_reproducible_and_independent():
    a = [g.random(20_000) for g in U.spawn_streams(5, 4)]
    b = [g.random(20_000) for g in U.spawn_streams(5, 4)]
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x, y)                       # reproducible
    # the child i of a seed is the same whatever k is (no dependence on the count)
    np.testing.assert_array_equal(U.spawn_streams(5, 2)[1].random(10), a[1][:10])
    c = np.corrcoef(np.vstack(a))
    off = c[~np.eye(4, dtype=bool)]
    assert np.abs(off).max() < 0.05                              # 20k draws: sd ~ 0.007
    assert all(not np.array_equal(a[i], a[j]) for i in range(4) for j in range(i))
    assert not np.array_equal(U.spawn_streams(6, 1)[0].random(10), a[0][:10])
    seeds = U.spawn_seeds(5, 3)
    assert seeds == U.spawn_seeds(5, 3) and len(set(seeds)) == 3
    assert seeds == [int(s.generate_state(1, np.uint64)[0])
                     for s in np.random.SeedSequence(5).spawn(3)]
    assert U.spawn_streams(5, 0) == []
    for bad in (-1, 2.0):
        with pytest.raises(ValueError, match="number of streams"):
            U.spawn_streams(5, bad)


def test_callers_use_the_one_seeding_home():
    from primaldual.distributed import block
    from primaldual.estimators import spawn_seeds
    from primaldual.solvers import dso

    assert block.spawn_streams is U.spawn_streams
    assert spawn_seeds(9, 4) == U.spawn_seeds(9, 4)
    x = [g.random(3) for g in dso.partition_streams(9, np.random.default_rng(0), 3)]
    y = [g.random(3) for g in U.spawn_streams(9, 3)]
    np.testing.assert_array_equal(x, y)


# ------------------------------------------------------------------- labels
def test_encode_pm1():
    y = np.array([2.0, 4.0, 4.0, 2.0])
    np.testing.assert_array_equal(U.encode_pm1(y, 4.0, 2.0), [-1, 1, 1, -1])
    np.testing.assert_array_equal(U.encode_pm1(np.array([0, 1, 2, 1]), 1), [-1, 1, -1, 1])
    assert U.encode_pm1(y, 4.0).dtype == np.float64


def test_encode_pm1_errors_name_the_bad_labels():
    y = np.array([1.0, 2.0, 3.0, 7.5, 2.0, np.nan])
    with pytest.raises(U.LabelError) as err:
        U.encode_pm1(y, 2.0, 1.0, source="train.svm")
    msg = str(err.value)
    assert isinstance(err.value, ValueError)
    assert msg.startswith("train.svm: labels [3, 7.5, nan]")
    assert "1 (-> -1)" in msg and "2 (-> +1)" in msg
    assert err.value.labels[:2] == [3.0, 7.5] and np.isnan(err.value.labels[2])
    with pytest.raises(ValueError, match="1-D"):
        U.encode_pm1(np.ones((2, 2)), 1.0)


# -------------------------------------------------------------- compression
_PAYLOAD = b"1 1:0.5 3:1\n-1 2:2\n"


def _write(path, kind):
    if kind == "gzip":
        path.write_bytes(gzip.compress(_PAYLOAD))
    elif kind == "bzip2":
        path.write_bytes(bz2.compress(_PAYLOAD))
    elif kind == "xz":
        path.write_bytes(lzma.compress(_PAYLOAD))
    elif kind == "zip":
        with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
            z.writestr("inner.svm", _PAYLOAD)
    else:
        path.write_bytes(_PAYLOAD)


@pytest.mark.parametrize("kind", ["gzip", "bzip2", "xz", "zip", None])
@pytest.mark.parametrize("name", ["data.txt", "data.gz", "data.bz2", "data"])
def test_compression_is_detected_by_magic_bytes_not_by_name(tmp_path, kind, name):
    path = tmp_path / name
    _write(path, kind)
    assert U.detect_compression(path) == kind
    assert U.detect_compression(path.read_bytes()[:8]) == kind
    with U.open_decompressed(path) as fh:
        assert fh.read() == _PAYLOAD
    X, y = D.load_svmlight(path)
    assert X.shape == (2, 3) and y.tolist() == [1.0, -1.0]


def test_unreadable_archives_get_clear_errors(tmp_path):
    assert U.detect_compression(b"\x28\xb5\x2f\xfd\x00") == "zstd"
    assert U.detect_compression(b"") is None and U.detect_compression(b"BZ") is None
    zst = tmp_path / "a.svm"
    zst.write_bytes(b"\x28\xb5\x2f\xfd" + b"\x00" * 20)
    with pytest.raises(U.UnsupportedCompressionError, match="zstd"):
        U.open_decompressed(zst)
    with pytest.raises(D.DataFormatError, match="zstd") as err:
        D.load_svmlight(zst)
    assert err.value.path == str(zst)
    two = tmp_path / "two.zip"
    with zipfile.ZipFile(two, "w") as z:
        z.writestr("a.svm", _PAYLOAD)
        z.writestr("b.svm", _PAYLOAD)
    with pytest.raises(D.DataFormatError, match=r"holds 2 \(a.svm, b.svm\)"):
        D.load_svmlight(two)
    broken = tmp_path / "broken.zip"
    broken.write_bytes(b"PK\x03\x04" + b"\x00" * 30)
    with pytest.raises(D.DataFormatError, match="zip"):
        D.load_svmlight(broken)


def test_bad_line_inside_a_zip_is_reported_with_its_number(tmp_path):
    path = tmp_path / "bad.zip"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("bad.svm", b"1 1:1\n-1 2:1\n1 3:x\n")
    with pytest.raises(D.DataFormatError) as err:
        D.load_svmlight(path)
    assert err.value.lineno == 3 and "invalid value" in str(err.value)


# ------------------------------------------------------------- status codes
def test_status_codes_have_one_home_and_distinct_values():
    names = [n for n in dir(status) if n.startswith("STATUS_")]
    values = [getattr(status, n) for n in names]
    assert len(set(values)) == len(values) == 5
    for mod in pkgutil.iter_modules(kernels_pkg.__path__):
        m = importlib.import_module(f"primaldual.kernels.{mod.name}")
        src = Path(m.__file__).read_text()
        if mod.name != "status":
            assert "STATUS_OK =" not in src and "STATUS_NONFINITE =" not in src, mod.name
        for n in dir(m):
            if n.startswith("STATUS_"):
                assert getattr(m, n) == getattr(status, n), (mod.name, n)


# -------------------------------------------------------------- dual bounds
@pytest.mark.parametrize("name", primaldual.losses.LOSS_NAMES)
def test_dual_bounds_agree_with_the_domain_kernel(name):
    loss = primaldual.make_loss(name)
    y = np.array([1.0, -1.0, 1.0, -1.0]) if loss.classification else \
        np.array([0.3, -2.0, 1.5, 0.0])
    lo, hi = loss.dual_bounds(y)
    assert lo.shape == hi.shape == y.shape and lo.flags.c_contiguous
    rng = np.random.default_rng(0)
    for _ in range(20):
        a = rng.uniform(-3, 3, y.size)
        inside = (lo <= a) & (a <= hi)
        np.testing.assert_array_equal(loss.in_dual_domain(a, y), inside)
    for bound, step in ((lo, -1e-9), (hi, 1e-9)):
        fin = np.isfinite(bound)
        assert loss.in_dual_domain(bound[fin], y[fin]).all()           # closed ends
        assert not loss.in_dual_domain(bound[fin] + step, y[fin]).any()
    for i, yi in enumerate(y):
        assert loss.dual_domain(yi) == (lo[i], hi[i])


def test_dso_bounds_are_the_loss_bounds_with_the_logistic_margin():
    from primaldual.solvers.dso import LOGISTIC_MARGIN, dual_bounds

    y = np.array([1.0, -1.0, -1.0])
    for name in primaldual.losses.LOSS_NAMES:
        loss = primaldual.make_loss(name)
        lo, hi = dual_bounds(loss, y)
        blo, bhi = loss.dual_bounds(y)
        m = LOGISTIC_MARGIN if name == "logistic" else 0.0
        np.testing.assert_array_equal(lo, blo + m)
        np.testing.assert_array_equal(hi, bhi - m)


def test_rng_from_state_resumes_the_stream():
    g = U.make_rng(3)
    g.random(7)
    state = g.bit_generator.state
    np.testing.assert_array_equal(U.rng_from_state(state).random(5), g.random(5))
    with pytest.raises(ValueError, match="PCG64"):
        U.rng_from_state(np.random.Generator(np.random.MT19937(1)).bit_generator.state)
    with pytest.raises(ValueError, match="PCG64"):
        U.rng_from_state([1, 2])


def test_encode_pm1_string_labels():
    y = np.array(["spam", "ham", "spam", "eggs"])
    np.testing.assert_array_equal(U.encode_pm1(y, "spam"), [1, -1, 1, -1])
    with pytest.raises(U.LabelError, match=r"labels \['eggs'\] are neither 'ham'") as err:
        U.encode_pm1(y, "spam", "ham")
    assert err.value.labels == ["eggs"]


def test_partition_stream_is_that_partitions_spawned_stream():
    from primaldual._util.seeding import partition_stream, spawn_streams
    whole = spawn_streams(12345, 5)
    for k in (0, 3, 4):
        np.testing.assert_array_equal(partition_stream(12345, k).random(8), whole[k].random(8))
    assert not np.array_equal(partition_stream(12345, 0).random(8),
                              partition_stream(12345, 1).random(8))
    with pytest.raises(ValueError, match="partition index"):
        partition_stream(1, -1)


def test_part_threads_caps_by_jobs_parts_and_the_floor(monkeypatch):
    from primaldual._util import threads as T
    monkeypatch.setattr(T, "MIN_VALUES_PER_THREAD", 100)
    assert T.part_threads(4, 10_000, 2) == 2           # n_jobs
    assert T.part_threads(3, 10_000, 8) == 3           # the partitions
    assert T.part_threads(4, 250, 8) == 2              # 100 values a thread at least
    assert T.part_threads(4, 50, 8) == 1               # tiny: the calling thread
    assert T.part_threads(1, 10_000, None) == 1
    assert T.part_threads_reason(4, 10_000, 2) == (
        "threads on: 4 partitions on 2 threads, 10,000 stored entries, at least 100 a thread")
    assert T.part_threads_reason(4, 150, 2) == (
        "one thread: 150 stored entries in 4 partitions, under 100 for each of 2 threads")
    assert T.part_threads_reason(4, 10_000, 1) == "one thread: n_jobs is 1"
    assert T.part_threads_reason(1, 10_000, 2) == "one thread: one partition"


def test_run_parts_orders_results_and_raises_an_interrupt_after_every_part(monkeypatch):
    """The parts come back in partition order on any number of threads; a
    Ctrl-C that :func:`run_threads` reports (it waits for every task first)
    is raised by :func:`run_parts`, after every partition's call ran."""
    from primaldual._util import threads as T
    assert T.run_parts(lambda k: k * k, 5, 1) == [0, 1, 4, 9, 16]
    assert T.run_parts(lambda k: k * k, 5, 3) == [0, 1, 4, 9, 16]
    ran = []
    real = T.run_threads

    def interrupted(task, n_tasks, n_threads=None):
        out, _ = real(task, n_tasks, n_threads)
        return out, True

    monkeypatch.setattr(T, "run_threads", interrupted)
    with pytest.raises(KeyboardInterrupt):
        T.run_parts(ran.append, 3, 2)
    assert sorted(ran) == [0, 1, 2]
    assert T.run_parts(ran.append, 3, 1) == [None] * 3     # one thread: no run_threads
