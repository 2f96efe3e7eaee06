"""Security: no input file runs code, downloads are verified, and bench configs
cannot write outside their output directory.

* state/checkpoint files and model files with a pickled object array are
  refused and the pickle payload never runs (it would create a marker file);
* ``datasets.load(..., download=True)`` through a ``file://`` URL with a fake
  registry entry: a sha256 mismatch raises ChecksumError and leaves nothing
  in the cache; a matching hash loads the data;
* ``primaldual bench --config cfg.toml --out DIR`` with ``../`` and absolute
  paths in every name the config controls writes nothing outside ``DIR``.
"""
from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import primaldual
from primaldual import datasets
from primaldual.solvers._base import STATE_FORMAT_VERSION, load_state

SRC = Path(__file__).resolve().parents[1] / "src"


class _Payload:
    """Unpickling this creates the marker file: proof that code ran."""

    def __init__(self, marker):
        self.marker = str(marker)

    def __reduce__(self):
        return (Path.touch, (Path(self.marker),))


def _evil_npz(path, marker, extra=None):
    obj = np.empty(1, dtype=object)
    obj[0] = _Payload(marker)
    np.savez(path, evil=obj, **(extra or {}))


def test_load_state_refuses_an_object_array_without_running_it(tmp_path):
    marker = tmp_path / "pwned"
    meta = {"solver": "sdca", "format_version": STATE_FORMAT_VERSION, "steps": 0}
    import json
    _evil_npz(tmp_path / "state.npz", marker, {"__meta__": np.array(json.dumps(meta))})
    with pytest.raises(ValueError, match="object arrays are refused"):
        load_state(tmp_path)
    with pytest.raises(ValueError):
        load_state(tmp_path / "state.npz")
    assert not marker.exists()
    # the object array may also hide in the meta slot
    _evil_npz(tmp_path / "other.npz", marker)
    os.replace(tmp_path / "other.npz", tmp_path / "state.npz")
    with pytest.raises(ValueError):
        load_state(tmp_path)
    assert not marker.exists()


def test_resume_from_a_crafted_checkpoint_does_not_run_it(tmp_path):
    marker = tmp_path / "pwned"
    _evil_npz(tmp_path / "state.npz", marker)
    X = np.eye(4)
    y = np.array([1.0, -1.0, 1.0, -1.0])
    with pytest.raises(ValueError):
        primaldual.solve(X, y, resume=str(tmp_path), max_epochs=2)
    assert not marker.exists()


def test_non_npz_checkpoint_is_a_clear_error(tmp_path):
    (tmp_path / "state.npz").write_bytes(b"\x80\x04K\x01.")      # a raw pickle
    with pytest.raises(ValueError):
        load_state(tmp_path)


def test_corrupt_zip_checkpoint_is_a_clear_error(tmp_path):
    (tmp_path / "state.npz").write_bytes(b"PK\x03\x04 garbage")
    with pytest.raises(ValueError, match="unreadable or corrupt|not a valid"):
        load_state(tmp_path)


def test_save_state_refuses_object_arrays(tmp_path):
    from primaldual.solvers._base import SolverState, save_state
    bad = SolverState("sdca", {}, {"x": np.array([object()], dtype=object)})
    with pytest.raises(TypeError, match="refusing to pickle"):
        save_state(bad, tmp_path)


def test_model_file_with_object_array_is_refused_without_running_it(tmp_path):
    marker = tmp_path / "pwned"
    X = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [-1.0, 0.0]])
    y = np.array([1, 0, 1, 0])
    clf = primaldual.LinearClassifier(max_iter=5).fit(X, y)
    good = tmp_path / "model.npz"
    primaldual.save_model(clf, good)
    with np.load(good, allow_pickle=False) as z:
        arrays = {k: z[k] for k in z.files}
    for key in list(arrays):
        obj = np.empty(1, dtype=object)
        obj[0] = _Payload(marker)
        np.savez(tmp_path / "evil.npz", **dict(arrays, **{key: obj}))
        with pytest.raises(ValueError):
            primaldual.load_model(tmp_path / "evil.npz")
        assert not marker.exists(), key
    # through the CLI too
    env = dict(os.environ, PYTHONPATH=str(SRC))
    data = tmp_path / "d.svm"
    data.write_text("1 1:1\n0 2:1\n")
    proc = subprocess.run([sys.executable, "-m", "primaldual", "predict",
                           str(tmp_path / "evil.npz"), str(data)], capture_output=True,
                          text=True, env=env, timeout=120)
    assert proc.returncode != 0 and "error" in proc.stderr
    assert not marker.exists()


# -------------------------------------------------------------- downloads
LIBSVM_TEXT = b"+1 1:0.5 3:1\n-1 2:1\n+1 1:1 2:0.5\n-1 3:-1\n"


@pytest.fixture
def fake_registry(tmp_path, monkeypatch):
    src = tmp_path / "remote" / "fake.svm"
    src.parent.mkdir()
    src.write_bytes(LIBSVM_TEXT)
    cache = tmp_path / "cache"
    monkeypatch.setenv("PRIMALDUAL_DATA", str(tmp_path / "nothing-here"))
    monkeypatch.chdir(tmp_path)

    def register(sha):
        df = datasets.DataFile("fake.svm", src.as_uri(), sha, None, 4, 6,
                               ((-1.0, 2), (1.0, 2)))
        ds = datasets.Dataset("fake-set", df, None, 3, -1.0, 1.0, "test fixture")
        monkeypatch.setitem(datasets.REGISTRY, "fake-set", ds)
    return register, cache


def test_download_with_wrong_sha256_is_refused_and_discarded(fake_registry):
    register, cache = fake_registry
    register("0" * 64)
    with pytest.raises(datasets.ChecksumError, match="checksum mismatch") as ei:
        datasets.load("fake-set", download=True, data_home=cache)
    assert ei.value.expected == "0" * 64
    assert ei.value.got == hashlib.sha256(LIBSVM_TEXT).hexdigest()
    leftovers = [p for p in cache.rglob("*") if p.is_file()] if cache.exists() else []
    assert leftovers == [], leftovers


def test_download_with_right_sha256_loads(fake_registry):
    register, cache = fake_registry
    register(hashlib.sha256(LIBSVM_TEXT).hexdigest())
    X, y = datasets.load("fake-set", download=True, data_home=cache)
    assert X.shape == (4, 3) and sorted(y.tolist()) == [-1.0, -1.0, 1.0, 1.0]
    assert (cache / "fake.svm").read_bytes() == LIBSVM_TEXT


def test_download_without_sha256_needs_explicit_consent(fake_registry):
    register, cache = fake_registry
    register(None)
    with pytest.raises(datasets.UnverifiedDownloadError):
        datasets.load("fake-set", download=True, data_home=cache)
    assert not (cache / "fake.svm").exists()


# ---------------------------------------------------------- bench configs
ESCAPES = ["../escaped", "../../escaped", "/tmp/primaldual-escape-{tag}", "..", ".",
           "a/../../escaped", "~/escaped"]


def _bench_config(tmp_path, tag, name):
    data = tmp_path / "tiny.svm"
    data.write_text("+1 1:1 2:0.5\n-1 2:1\n+1 1:0.7\n-1 1:-1 2:-0.2\n+1 1:2 2:0.1\n")
    esc = name.format(tag=tag)
    return f'''
name = "{esc}"
seeds = [0]
[[experiment]]
name = "{esc}"
datasets = [{{ name = "file:{data}", label = "{esc}", test_fraction = 0.4 }}]
losses = ["hinge"]
lams = [0.1]
solvers = [{{ solver = "sdca", label = "{esc}" }}]
max_epochs = 2
tol = 1e-3
plots = ["gap-epochs"]
'''


def _snapshot(root):
    return {p for p in root.rglob("*")}


@pytest.mark.parametrize("name", ESCAPES)
def test_bench_config_cannot_write_outside_out(tmp_path, name):
    if "bench" not in sys.modules and not (SRC / "primaldual" / "bench" / "cli.py").exists():
        pytest.skip("the bench harness is not in this version")
    tag = os.urandom(4).hex()
    work = tmp_path / "work"
    out = work / "a" / "out"
    work.mkdir()
    cfg = tmp_path / "cfg.toml"
    cfg.write_text(_bench_config(tmp_path, tag, name))
    home = tmp_path / "home"
    home.mkdir()
    before = _snapshot(tmp_path)
    env = dict(os.environ, PYTHONPATH=str(SRC), HOME=str(home), MPLBACKEND="Agg")
    proc = subprocess.run([sys.executable, "-m", "primaldual", "bench", "--config", str(cfg),
                           "--out", str(out), "--quiet"], capture_output=True, text=True,
                          env=env, cwd=work, timeout=300)
    after = _snapshot(tmp_path)
    outside = sorted(str(p) for p in after - before
                     if out != p and out not in p.parents and p not in out.parents
                     # matplotlib's and fontconfig's own caches in $HOME
                     and not any(q in p.parents or q == p for q in
                                 (home / ".cache", home / ".config")))
    stray = Path(f"/tmp/primaldual-escape-{tag}")
    assert not stray.exists(), f"wrote {stray}"
    assert outside == [], (outside, proc.stderr[-2000:])
    # a config that only names things is accepted or refused with a clear message
    assert proc.returncode == 0 or "error" in proc.stderr, proc.stderr[-2000:]


@pytest.mark.parametrize("name", ["..", ".", "../..", "/etc", ".hidden", ""])
def test_config_name_cannot_escape_the_default_output_dir(name):
    """Without --out the output dir is bench-out/<config name>: the name must stay
    one path component inside bench-out."""
    from pathlib import Path

    from primaldual.bench.config import _label_safe
    safe = _label_safe(name)
    out = (Path("bench-out") / safe).resolve()
    assert out.parent == Path("bench-out").resolve()
    assert safe and not safe.startswith(".")
