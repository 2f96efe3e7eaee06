"""Tests for primaldual.datasets: registry, lookup, verified download, parsing, synthetic data.

No test touches the network: downloads use ``file://`` URLs in ``tmp_path`` or a
monkeypatched ``urllib.request.urlopen``. Tests that read ``shared/data`` skip when
that folder is absent.
"""

import bz2
import gzip
import hashlib
import io
import lzma
import os
import re
import urllib.request
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

from primaldual import datasets as D
from primaldual.datasets import fetch
from primaldual.datasets.fetch import _walk_up_for_shared

LIBSVM = "https://www.csie.ntu.edu.tw/~cjlin/libsvmtools/datasets/binary/"


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


# --------------------------------------------------------------------------- fixtures


@pytest.fixture
def shared_dir():
    """The real shared/data folder, or skip."""
    dirs = [d for d in D.shared_data_dirs() if (d / "heart_scale").is_file()]
    if not dirs:
        pytest.skip("shared/data folder with the LIBSVM files is not present")
    return dirs[0]


TOY_TRAIN = b"2 1:0.5 3:1\n1 2:1\n2 1:1 2:0.25 4:2\n"
TOY_TEST = b"1 1:1\n2 3:0.5\n"


@pytest.fixture
def sandbox(tmp_path, monkeypatch):
    """Isolated lookup: no $PRIMALDUAL_DATA, cache in tmp, cwd in tmp/checkout.

    Registers a test-only dataset 'toy' (labels 1/2, 4 features) whose files are served
    from tmp/remote through file:// URLs.
    """
    monkeypatch.delenv("PRIMALDUAL_DATA", raising=False)
    cache = tmp_path / "cache"
    monkeypatch.setenv("PRIMALDUAL_CACHE", str(cache))
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    monkeypatch.chdir(checkout)
    remote = tmp_path / "remote"
    remote.mkdir()
    (remote / "toy.svm").write_bytes(TOY_TRAIN)
    (remote / "toy.t.svm").write_bytes(TOY_TEST)

    def register(name="toy", sha_train=_sha(TOY_TRAIN), sha_test=_sha(TOY_TEST),
                 url_train=None, mirror_train=None):
        ds = D.Dataset(
            name,
            D.DataFile("toy.svm", url_train or (remote / "toy.svm").as_uri(), sha_train,
                       len(TOY_TRAIN), 3, 6, ((1.0, 1), (2.0, 2)), mirror_train),
            D.DataFile("toy.t.svm", (remote / "toy.t.svm").as_uri(), sha_test,
                       len(TOY_TEST), 2, 2, ((1.0, 1), (2.0, 1))),
            4, 1.0, 2.0, "test-only toy set", False)
        monkeypatch.setitem(D.REGISTRY, name, ds)
        return ds

    register()

    class Box:
        pass

    box = Box()
    box.tmp, box.cache, box.checkout, box.remote, box.register = (
        tmp_path, cache, checkout, remote, register)
    return box


def _no_network(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("urlopen must not be called")

    monkeypatch.setattr(urllib.request, "urlopen", refuse)


# --------------------------------------------------------------------------- registry

REMOTE_ONLY = ["w8a", "rcv1.binary", "news20.binary", "real-sim", "covtype.binary",
               "ijcnn1", "webspam", "epsilon"]
SHARED = ["a1a", "a8a", "a9a", "covtype", "mushrooms", "phishing", "splice", "svmguide1",
          "australian", "breast-cancer", "german.numer", "german.numer_scale", "heart",
          "heart_scale", "fourclass", "ionosphere_scale", "sonar_scale", "agaricus",
          "reuters", "cocoa-small", "gisette_scale.t", "higgs7k", "magic04", "default_cc"]
MULTICLASS = ["news20", "letter.scale", "usps.t", "dna.scale", "shuttle"]
REGRESSION = ["cadata", "abalone", "housing_scale"]


def test_registry_has_every_set():
    for name in REMOTE_ONLY + SHARED + MULTICLASS + REGRESSION:
        assert name in D.REGISTRY, name
    for name in MULTICLASS:
        assert D.REGISTRY[name].task == "multiclass" and D.REGISTRY[name].shared
    for name in REGRESSION:
        assert D.REGISTRY[name].task == "regression" and D.REGISTRY[name].shared
    assert {ds.task for name, ds in D.REGISTRY.items()
            if name not in MULTICLASS + REGRESSION} == {"binary"}


def test_registry_entries_are_consistent():
    for name, ds in D.REGISTRY.items():
        assert ds.name == name
        assert ds.n_features >= 1
        if ds.task == "binary":
            assert ds.positive_label > ds.negative_label, "the larger label must become +1"
        else:
            assert ds.label_map is None and ds.positive_label is None
        for df in ds.files:
            assert df.url is None or df.url == LIBSVM + df.filename
            if df.sha256 is not None:
                assert re.fullmatch(r"[0-9a-f]{64}", df.sha256)
            if df.label_counts is not None:
                if ds.task == "binary":
                    assert {raw for raw, _ in df.label_counts} <= set(ds.label_map)
                if df.n_samples is not None:
                    assert sum(c for _, c in df.label_counts) == df.n_samples
    for name in REMOTE_ONLY:
        ds = D.REGISTRY[name]
        assert not ds.shared
        assert all(df.sha256 is None and df.url for df in ds.files), name
    for name in SHARED:
        assert D.REGISTRY[name].shared
        assert all(df.sha256 is not None for df in D.REGISTRY[name].files), name


def test_registry_label_mappings():
    assert D.REGISTRY["covtype"].label_map == {1.0: -1.0, 2.0: 1.0}     # 2 = Lodgepole Pine
    assert D.REGISTRY["covtype.binary"].label_map == {1.0: -1.0, 2.0: 1.0}
    assert D.REGISTRY["breast-cancer"].label_map == {2.0: -1.0, 4.0: 1.0}
    assert D.REGISTRY["phishing"].label_map == {0.0: -1.0, 1.0: 1.0}
    assert D.REGISTRY["mushrooms"].label_map == {1.0: -1.0, 2.0: 1.0}
    assert D.REGISTRY["default_cc"].label_map == {0.0: -1.0, 1.0: 1.0}
    assert D.REGISTRY["dna.scale"].classes == (1.0, 2.0, 3.0)
    assert D.REGISTRY["letter.scale"].classes == tuple(float(k) for k in range(1, 27))
    assert D.REGISTRY["cadata"].classes is None


def test_dataset_task_and_labels_must_agree():
    df = D.DataFile("x.svm")
    with pytest.raises(ValueError, match="task must be one of"):
        D.Dataset("x", df, None, 3, None, None, task="ranking")
    with pytest.raises(ValueError, match="a binary set has both raw labels"):
        D.Dataset("x", df, None, 3, None, None)                      # binary without labels
    with pytest.raises(ValueError, match="a binary set has both raw labels"):
        D.Dataset("x", df, None, 3, -1.0, 1.0, task="regression")    # regression with labels


def test_info_of_multiclass_and_regression_sets():
    i = D.info("dna.scale")
    assert i["task"] == "multiclass" and i["raw_labels"] is None
    assert i["label_counts"] == {1: 464, 2: 485, 3: 1051}
    assert i["test"]["label_counts"] == {1: 303, 2: 280, 3: 603}
    i = D.info("cadata")
    assert i["task"] == "regression" and i["label_counts"] is None
    assert (i["n"], i["d"], i["nnz"]) == (20640, 8, 165120)
    assert D.info("a9a")["task"] == "binary"


@pytest.mark.realdata
def test_load_multiclass_and_regression_sets(shared_dir):
    X, y, Xt, yt = D.load("dna.scale", subset="both", download=False)
    assert X.shape == (2000, 180) and Xt.shape == (1186, 180)
    assert sorted(np.unique(y)) == [1.0, 2.0, 3.0] and sorted(np.unique(yt)) == [1.0, 2.0, 3.0]
    assert np.bincount(y.astype(int))[1:].tolist() == [464, 485, 1051]
    X, y = D.load("housing_scale", download=False)
    assert X.shape == (506, 13) and y.min() == 5.0 and y.max() == 50.0
    assert len(np.unique(y)) == 229


@pytest.mark.realdata
def test_load_refuses_labels_outside_the_registered_classes(shared_dir, tmp_path,
                                                           monkeypatch):
    (tmp_path / "dna.scale").write_bytes(b"1 1:1\n4 2:1\n")
    monkeypatch.setenv("PRIMALDUAL_DATA", str(tmp_path))
    with pytest.raises(D.DataFormatError, match=r"labels \[4\] are not among"):
        D.load("dna.scale", download=False)


@pytest.mark.realdata
def test_shared_regimes_are_binary(shared_dir):
    names = D.shared_regimes()
    assert "a9a" in names or "heart_scale" in names
    assert not set(names) & set(MULTICLASS + REGRESSION)


def _readme_rows(shared_dir):
    rows = {}
    for line in (shared_dir / "README.md").read_text().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < 10 or not cells[1].isdigit():
            continue
        fname, n, feats, nnz, _dens, labels, _repo, _path, _commit, sha = cells[:10]
        counts = {float(v): int(c) for v, c in re.findall(r"([+-]?\d+) \((\d+)\)", labels)}
        rows[fname] = dict(n=int(n), features=int(feats), nnz=int(nnz), labels=counts,
                           sha256=sha)
    return rows


@pytest.mark.realdata
def test_registry_matches_shared_readme_and_files(shared_dir):
    rows = _readme_rows(shared_dir)
    assert len(rows) >= 28
    by_file = {df.filename: (ds, df) for ds in D.REGISTRY.values() if ds.shared
               for df in ds.files}
    assert set(by_file) == set(rows)
    for fname, row in rows.items():
        ds, df = by_file[fname]
        assert df.sha256 == row["sha256"], fname
        assert df.n_samples == row["n"] and df.nnz == row["nnz"], fname
        if row["labels"]:
            assert dict(df.label_counts) == row["labels"], fname
        else:                                          # a regression set without counts
            assert ds.task == "regression" and df.label_counts is None, fname
        assert row["features"] <= ds.n_features, fname
        path = shared_dir / fname
        assert df.size == path.stat().st_size, fname
        assert _sha(path.read_bytes()) == df.sha256, fname


def test_info_numbers():
    i = D.info("heart_scale")
    assert (i["n"], i["d"], i["nnz"]) == (270, 13, 3378)
    assert i["label_counts"] == {-1: 150, 1: 120}
    assert i["test"] is None
    i = D.info("a1a")
    assert (i["n"], i["d"], i["nnz"]) == (1605, 123, 22249)
    assert i["test"]["n"] == 30956 and i["test"]["label_counts"] == {-1: 23510, 1: 7446}
    i = D.info("breast-cancer")
    assert i["label_counts"] == {-1: 444, 1: 239}
    i = D.info("epsilon")
    assert i["d"] == 2000 and i["nnz"] is None and i["sha256"] == [None, None]


def test_unknown_name_lists_valid_names():
    with pytest.raises(ValueError) as err:
        D.load("rcv1")
    msg = str(err.value)
    assert "rcv1.binary" in msg and "heart_scale" in msg and "epsilon" in msg
    with pytest.raises(ValueError, match="Known datasets"):
        D.info("nope")


def test_subset_errors(sandbox):
    with pytest.raises(ValueError, match="subset"):
        D.load("toy", subset="validation")
    with pytest.raises(ValueError, match="no test split"):
        D.find("heart_scale", subset="both")


# ------------------------------------------------------------------------ real data


@pytest.mark.realdata
def test_load_heart_scale(shared_dir):
    X, y = D.load("heart_scale", download=False)
    assert sp.isspmatrix_csr(X) and X.dtype == np.float64 and y.dtype == np.float64
    assert X.shape == (270, 13) and X.nnz == 3378
    assert set(np.unique(y)) == {-1.0, 1.0}
    assert (y == -1).sum() == 150 and (y == 1).sum() == 120
    X32, _ = D.load("heart_scale", download=False, dtype=np.float32)
    assert X32.dtype == np.float32


@pytest.mark.realdata
def test_load_a1a_both_same_n_features(shared_dir):
    X, y, Xt, yt = D.load("a1a", subset="both", download=False)
    assert X.shape == (1605, 123) and Xt.shape == (30956, 123)
    assert X.nnz == 22249 and Xt.nnz == 429343
    assert ((y == -1).sum(), (y == 1).sum()) == (1210, 395)
    assert ((yt == -1).sum(), (yt == 1).sum()) == (23510, 7446)
    Xt2, yt2 = D.load("a1a", subset="test", download=False)
    assert Xt2.shape == (30956, 123) and np.array_equal(yt2, yt)


@pytest.mark.realdata
def test_load_reuters_bz2(shared_dir):
    X, y = D.load("reuters", download=False)
    assert X.shape == (7770, 8315) and X.nnz == 339837
    assert ((y == -1).sum(), (y == 1).sum()) == (7232, 538)
    assert X.has_sorted_indices


@pytest.mark.realdata
def test_load_maps_larger_label_to_plus_one(shared_dir):
    X, y = D.load("breast-cancer", download=False)
    assert ((y == -1).sum(), (y == 1).sum()) == (444, 239)
    assert X.nnz == 6830


@pytest.mark.realdata
def test_explicit_zeros_are_dropped(shared_dir):
    X, y = D.load("heart", download=False)       # the file stores 3510 entries
    assert X.nnz == 2636 and np.all(X.data != 0)


@pytest.mark.realdata
def test_find_and_available_see_shared(shared_dir):
    p = D.find("heart_scale")
    assert p == shared_dir / "heart_scale"
    train, test = D.find("a1a", subset="both")
    assert train.name == "a1a" and test.name == "a1a.t"
    avail = D.available()
    assert "heart_scale" in avail and "reuters" in avail
    assert "epsilon" not in avail or (shared_dir / "epsilon_normalized.bz2").exists()
    assert D.available_real() == avail


@pytest.mark.realdata
def test_find_from_checkout_sibling(shared_dir, monkeypatch, tmp_path):
    # From an unrelated cwd the shared folder is still found from the package location.
    # The temporary directory may itself sit below some other shared/data folder (CI
    # machines put their scratch space anywhere), and that one legitimately comes first
    # in the lookup order, so the expected hit is computed from both walks rather than
    # assumed to be the checkout's sibling.
    pkg_hit = _walk_up_for_shared(Path(fetch.__file__).resolve().parent)
    if pkg_hit is None:
        pytest.skip("the package is installed away from the checkout")
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("PRIMALDUAL_DATA", raising=False)
    dirs = D.shared_data_dirs()
    assert pkg_hit.resolve() in dirs, (pkg_hit, dirs)
    cwd_hit = _walk_up_for_shared(Path.cwd())
    walks = [h.resolve() for h in (cwd_hit, pkg_hit) if h is not None]
    with_file = [h for h in walks if (h / "heart_scale").is_file()]
    if not with_file:
        pytest.skip(f"no shared/data folder above {tmp_path} or the package holds heart_scale")
    expected = with_file[0]
    found = D.find("heart_scale")
    assert found.parent.resolve() == expected, (found, walks, shared_dir)


# ---------------------------------------------------------------------------- lookup


def test_lookup_order_env_beats_shared_beats_cache(sandbox, monkeypatch):
    _no_network(monkeypatch)
    env_dir = sandbox.tmp / "env"
    shared = sandbox.tmp / "shared" / "data"
    for d, nrows in ((env_dir, 1), (shared, 2), (sandbox.cache, 3)):
        d.mkdir(parents=True)
        (d / "toy.svm").write_bytes(b"".join([b"2 1:1\n"] * nrows))
    monkeypatch.setenv("PRIMALDUAL_DATA", str(env_dir))
    assert D.search_path()[:2] == [env_dir, shared.resolve()]
    assert D.find("toy") == env_dir / "toy.svm"
    assert D.load("toy")[0].shape == (1, 4)

    monkeypatch.delenv("PRIMALDUAL_DATA")
    assert D.find("toy") == shared.resolve() / "toy.svm"
    assert D.load("toy")[0].shape == (2, 4)

    (shared / "toy.svm").unlink()
    assert D.find("toy") == sandbox.cache / "toy.svm"
    assert D.load("toy")[0].shape == (3, 4)

    other = sandbox.tmp / "home"
    with pytest.raises(FileNotFoundError):
        D.find("toy", data_home=other)              # data_home replaces the cache dir
    (sandbox.cache / "toy.svm").unlink()
    (other).mkdir()
    (other / "toy.svm").write_bytes(b"1 1:1\n")
    assert D.find("toy", data_home=other) == other / "toy.svm"


def test_env_var_may_list_several_dirs(sandbox, monkeypatch):
    a, b = sandbox.tmp / "a", sandbox.tmp / "b"
    a.mkdir()
    b.mkdir()
    (b / "toy.svm").write_bytes(TOY_TRAIN)
    monkeypatch.setenv("PRIMALDUAL_DATA", os.pathsep.join([str(a), str(b)]))
    assert D.find("toy") == b / "toy.svm"


def test_missing_without_download_says_where_it_looked(sandbox):
    with pytest.raises(FileNotFoundError) as err:
        D.load("toy", download=False)
    msg = str(err.value)
    assert "toy.svm" in msg and str(sandbox.cache) in msg and "PRIMALDUAL_DATA" in msg
    assert not sandbox.cache.exists()


# -------------------------------------------------------------------------- download


def test_download_file_url_verified(tmp_path):
    src = tmp_path / "src.bin"
    payload = os.urandom(3 * 1024 + 17)
    src.write_bytes(payload)
    dest = tmp_path / "out" / "copy.bin"
    got = D.download(src.as_uri(), dest, sha256=_sha(payload), chunk_size=1000)
    assert got == dest and dest.read_bytes() == payload
    assert sorted(p.name for p in dest.parent.iterdir()) == ["copy.bin"]


def test_download_checksum_mismatch_is_refused(tmp_path):
    src = tmp_path / "src.bin"
    src.write_bytes(b"hello world\n")
    dest = tmp_path / "out" / "copy.bin"
    wrong = "0" * 64
    with pytest.raises(D.ChecksumError) as err:
        D.download(src.as_uri(), dest, sha256=wrong)
    assert wrong in str(err.value) and _sha(b"hello world\n") in str(err.value)
    assert err.value.expected == wrong and err.value.got == _sha(b"hello world\n")
    assert not dest.exists()
    assert list(dest.parent.iterdir()) == []


def test_download_without_hash_needs_opt_in(tmp_path, monkeypatch):
    src = tmp_path / "src.bin"
    src.write_bytes(b"data\n")
    dest = tmp_path / "copy.bin"
    with monkeypatch.context() as m:
        _no_network(m)
        with pytest.raises(D.UnverifiedDownloadError, match="allow_unverified"):
            D.download(src.as_uri(), dest)
    D.download(src.as_uri(), dest, allow_unverified=True)
    assert dest.read_bytes() == b"data\n"
    with pytest.raises(ValueError, match="64 hex"):
        D.download(src.as_uri(), dest, sha256="abc")


class _BrokenResponse(io.BytesIO):
    """A response that yields some bytes, then fails mid-stream."""

    def __init__(self, payload, fail_after, exc):
        super().__init__(payload)
        self.headers = {"Content-Length": str(len(payload))}
        self._left = fail_after
        self._exc = exc

    def read(self, size=-1):
        if self._left <= 0:
            raise self._exc
        chunk = super().read(min(size, self._left) if size and size > 0 else self._left)
        self._left -= len(chunk)
        return chunk


@pytest.mark.parametrize("exc", [ConnectionResetError("peer reset"),
                                 KeyboardInterrupt()])
def test_interrupted_download_leaves_nothing(tmp_path, monkeypatch, exc):
    payload = b"x" * 5000
    monkeypatch.setattr(urllib.request, "urlopen",
                        lambda url, timeout=None: _BrokenResponse(payload, 2000, exc))
    out = tmp_path / "out"
    out.mkdir()
    (out / "keep.txt").write_text("unrelated")
    dest = out / "file.bin"
    with pytest.raises(type(exc)):
        D.download("https://example.invalid/file.bin", dest, sha256=_sha(payload),
                   chunk_size=512)
    assert sorted(p.name for p in out.iterdir()) == ["keep.txt"]


def test_failed_download_keeps_existing_file(tmp_path):
    src = tmp_path / "src.bin"
    src.write_bytes(b"new content")
    dest = tmp_path / "copy.bin"
    dest.write_bytes(b"old content")
    with pytest.raises(D.ChecksumError):
        D.download(src.as_uri(), dest, sha256="1" * 64)
    assert dest.read_bytes() == b"old content"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["copy.bin", "src.bin"]


def test_truncated_transfer_is_refused(tmp_path, monkeypatch):
    class Short(io.BytesIO):
        headers = {"Content-Length": "100"}

    monkeypatch.setattr(urllib.request, "urlopen", lambda url, timeout=None: Short(b"abc"))
    dest = tmp_path / "f.bin"
    with pytest.raises(D.DownloadError, match="truncated"):
        D.download("https://example.invalid/f", dest, allow_unverified=True)
    assert list(tmp_path.iterdir()) == []


def test_load_downloads_into_cache_then_hits_cache(sandbox, monkeypatch):
    X, y, Xt, yt = D.load("toy", subset="both")
    assert (sandbox.cache / "toy.svm").read_bytes() == TOY_TRAIN
    assert (sandbox.cache / "toy.t.svm").read_bytes() == TOY_TEST
    assert X.shape == (3, 4) and Xt.shape == (2, 4)
    assert y.tolist() == [1.0, -1.0, 1.0] and yt.tolist() == [-1.0, 1.0]
    _no_network(monkeypatch)           # a cache hit must not download again
    X2, y2 = D.load("toy")
    assert (X2 != X).nnz == 0 and np.array_equal(y2, y)
    assert D.available() == [n for n in D.REGISTRY if n in D.available()]
    assert "toy" in D.available()


def test_interrupted_load_leaves_no_cache_entry(sandbox, monkeypatch):
    with monkeypatch.context() as m:
        m.setattr(urllib.request, "urlopen",
                  lambda url, timeout=None: _BrokenResponse(TOY_TRAIN, 10,
                                                            ConnectionResetError()))
        with pytest.raises(D.DownloadError, match="could not download 'toy.svm'"):
            D.load("toy")
    assert not sandbox.cache.exists() or list(sandbox.cache.iterdir()) == []
    X, y = D.load("toy")                    # a later attempt starts from scratch
    assert X.shape == (3, 4)


def test_load_refuses_wrong_checksum_then_uses_mirror(sandbox):
    bad = sandbox.remote / "tampered.svm"
    bad.write_bytes(TOY_TRAIN + b"1 1:1\n")
    sandbox.register(url_train=bad.as_uri())          # no mirror: refused
    with pytest.raises(D.ChecksumError, match="expected sha256"):
        D.load("toy")
    assert not (sandbox.cache / "toy.svm").exists()
    assert [p for p in sandbox.cache.iterdir() if p.name.endswith(".part")] == []
    sandbox.register(url_train=bad.as_uri(), mirror_train=(sandbox.remote / "toy.svm").as_uri())
    X, _ = D.load("toy")
    assert X.shape == (3, 4)


def test_load_unverified_set_needs_opt_in(sandbox):
    sandbox.register(sha_train=None)
    with pytest.raises(D.UnverifiedDownloadError, match="allow_unverified"):
        D.load("toy")
    assert not (sandbox.cache / "toy.svm").exists()
    X, y = D.load("toy", allow_unverified=True)
    assert X.shape == (3, 4)


def test_set_without_source_is_reported(sandbox, monkeypatch):
    ds = D.REGISTRY["toy"]
    monkeypatch.setitem(D.REGISTRY, "toy", D.Dataset(
        "toy", D.DataFile("toy.svm", None, ds.train.sha256), None, 4, 1.0, 2.0,
        "no source here"))
    with pytest.raises(D.DownloadError, match="no download source"):
        D.load("toy")


# --------------------------------------------------------------------------- parsing


@pytest.mark.parametrize("content, lineno, words", [
    (b"1 1:0.5 3:1\n-1 2:1\n+1 1:x\n", 3, "invalid value"),
    (b"1 1:0.5 3:1\n-1 3:1 2:3\n", 2, "increasing"),
    (b"1 1:0.5\n\n# comment\n-1 2:1 2:3\n", 4, "increasing"),
    (b"1 1:0.5 3:1\n-1 2:1 9:3\n", 2, "exceeds n_features=4"),
    (b"1 1:0.5 3:1\n-1 2\n", 2, "not index:value"),
    (b"1 1:0.5\nabc 1:1\n", 2, "invalid label"),
    (b"1 1:0.5\r\n-1 1.5:2\r\n", 2, "invalid feature index"),
])
def test_bad_file_names_file_and_line(tmp_path, content, lineno, words):
    path = tmp_path / "bad.svm"
    path.write_bytes(content)
    with pytest.raises(D.DataFormatError) as err:
        D.load_svmlight(path, n_features=4)
    assert isinstance(err.value, ValueError)
    assert err.value.lineno == lineno
    msg = str(err.value)
    assert str(path) in msg and f"line {lineno}" in msg and words in msg


@pytest.mark.parametrize("opener, suffix", [(gzip.open, ".gz"), (bz2.open, ".bz2"),
                                            (lzma.open, ".xz")])
def test_compressed_files(tmp_path, opener, suffix):
    good = tmp_path / ("good" + suffix)
    with opener(good, "wb") as f:
        f.write(b"2 1:0.5 3:1\n4 2:1\n")
    X, y = D.load_svmlight(good)
    assert X.shape == (2, 3) and y.tolist() == [2.0, 4.0]      # raw labels, no mapping
    X, y = D.load_svmlight(good, n_features=10, dtype=np.float32)
    assert X.shape == (2, 10) and X.dtype == np.float32
    bad = tmp_path / ("bad" + suffix)
    with opener(bad, "wb") as f:
        f.write(b"1 1:1\n1 1:1\n1 1:nope\n")
    with pytest.raises(D.DataFormatError, match=r"line 3"):
        D.load_svmlight(bad)


@pytest.mark.parametrize("opener", [open, gzip.open, bz2.open])
def test_max_rows_reads_only_the_head(tmp_path, opener):
    # blank and comment-only lines are not samples; a bad line after the head is not read
    content = b"# header\n1 1:0.5 3:1\n\n-1 2:1\n# note\n1 1:2 4:1\n-1 1:nope\n"
    path = tmp_path / "head.svm"
    with opener(path, "wb") as f:
        f.write(content)
    X, y = D.load_svmlight(path, n_features=4, max_rows=3)
    assert y.tolist() == [1.0, -1.0, 1.0]
    np.testing.assert_array_equal(X.toarray(), [[0.5, 0, 1, 0], [0, 1, 0, 0], [2, 0, 0, 1]])
    X1, y1 = D.load_svmlight(path, n_features=4, max_rows=1)
    assert X1.shape == (1, 4) and y1.tolist() == [1.0]
    with pytest.raises(D.DataFormatError) as err:     # the fourth sample is the bad one
        D.load_svmlight(path, n_features=4, max_rows=4)
    assert err.value.lineno == 7 and "invalid value" in str(err.value)
    with pytest.raises(D.DataFormatError):
        D.load_svmlight(path, n_features=4)


def test_max_rows_past_the_end_and_bad_values(tmp_path):
    path = tmp_path / "short.svm"
    path.write_bytes(b"1 1:1\n-1 2:1")               # no final newline
    X, y = D.load_svmlight(path, max_rows=10)
    assert X.shape == (2, 2) and y.tolist() == [1.0, -1.0]
    for bad in (0, -1, 2.5, True, "3"):
        with pytest.raises(ValueError, match="max_rows"):
            D.load_svmlight(path, max_rows=bad)


def test_load_registered_head(sandbox):
    X, y, Xt, yt = D.load("toy", subset="both")
    Xh, yh = D.load("toy", max_rows=2)
    assert Xh.shape == (2, 4)
    np.testing.assert_array_equal(Xh.toarray(), X[:2].toarray())
    np.testing.assert_array_equal(yh, y[:2])
    Xh, yh, Xth, yth = D.load("toy", subset="both", max_rows=1)
    np.testing.assert_array_equal(Xth.toarray(), Xt[:1].toarray())
    assert yth.tolist() == yt[:1].tolist() and Xh.shape == (1, 4)


def test_load_parsed_cache_keeps_and_reuses_the_parse(sandbox, monkeypatch):
    """``parsed_cache=True`` keeps the whole parse as one .npz in <cache>/parsed/ and
    reuses it (no second parse); a head (``max_rows``) never touches it; a changed
    file gets a new entry."""
    from primaldual.datasets import loading

    X, y, Xt, yt = D.load("toy", subset="both")
    out = D.load("toy", subset="both", parsed_cache=True)
    kept = list((sandbox.cache / "parsed").iterdir())
    assert len(kept) == 1 and kept[0].suffix == ".npz"         # no temporary file left
    with monkeypatch.context() as m:
        m.setattr(loading, "load_svmlight_files",
                  lambda *a, **k: pytest.fail("parsed again"))
        again = D.load("toy", subset="both", parsed_cache=True)
        for a, b in zip(again, (X, y, Xt, yt)):
            if sp.issparse(b):
                assert sp.isspmatrix_csr(a) and a.shape == b.shape and (a != b).nnz == 0
            else:
                np.testing.assert_array_equal(a, b)
        assert len(out) == len(again) == 4
        with pytest.raises(pytest.fail.Exception, match="parsed again"):
            D.load("toy", subset="both", parsed_cache=True, max_rows=1)
    path = sandbox.cache / "toy.svm"
    os.utime(path, (path.stat().st_atime, path.stat().st_mtime + 10))
    D.load("toy", subset="both", parsed_cache=True)
    assert len(list((sandbox.cache / "parsed").iterdir())) == 2


def test_truncated_compressed_file(tmp_path):
    raw = b"".join(b"1 1:%d 2:0.5\n" % i for i in range(20000))
    path = tmp_path / "t.bz2"
    path.write_bytes(bz2.compress(raw)[:-200])
    with pytest.raises(D.DataFormatError, match="corrupt or truncated"):
        D.load_svmlight(path)


def test_load_svmlight_files_share_columns_and_name_bad_file(tmp_path):
    a, b = tmp_path / "a.svm", tmp_path / "b.svm"
    a.write_bytes(b"1 1:1 5:2\n")
    b.write_bytes(b"-1 2:1\n")
    Xa, ya, Xb, yb = D.load_svmlight_files([a, b])
    assert Xa.shape == (1, 5) and Xb.shape == (1, 5)
    b.write_bytes(b"-1 2:1\n-1 2:zz\n")
    with pytest.raises(D.DataFormatError) as err:
        D.load_svmlight_files([a, b])
    assert str(b) in str(err.value) and err.value.lineno == 2


def test_explicit_zeros_dropped_by_load_svmlight(tmp_path):
    path = tmp_path / "z.svm"
    path.write_bytes(b"1 1:0 2:1\n-1 2:0.000\n")
    X, y = D.load_svmlight(path)
    assert X.nnz == 1 and X.shape == (2, 2)


def test_missing_file(tmp_path):
    with pytest.raises(FileNotFoundError, match="nope.svm"):
        D.load_svmlight(tmp_path / "nope.svm")


def test_unexpected_labels_in_registered_set(sandbox):
    (sandbox.cache).mkdir()
    (sandbox.cache / "toy.svm").write_bytes(b"2 1:1\n3 2:1\n")
    with pytest.raises(D.DataFormatError, match="labels"):
        D.load("toy", download=False)


# ------------------------------------------------------------------------- synthetic


def test_synthetic_presets_match_the_guide():
    S = D.SYNTHETIC_SHAPES
    assert S["rcv1"] == (20242, 47236, 0.0016)
    assert S["news20"] == (19996, 1355191, 0.0003)
    assert S["real-sim"] == (72309, 20958, 0.0024)
    assert S["astro-ph"] == (29882, 99757, 0.0008)
    assert S["CCAT"] == (781265, 47236, 0.0016)
    n, d, density = S["webspam"]
    assert (n, d) == (350000, 254) and 0.32 < density < 0.35
    assert S["rcv1"].d == 47236


def _check_csr(X):
    X.check_format(full_check=True)
    steps = np.diff(X.indices)
    inside = np.ones(steps.size, dtype=bool)
    ends = X.indptr[1:-1] - 1
    inside[ends[(ends >= 0) & (ends < steps.size)]] = False
    assert np.all(steps[inside] > 0), "indices must be sorted without duplicates in a row"


@pytest.mark.parametrize("name, n_samples", [
    ("rcv1", None), ("news20", 2000), ("real-sim", None), ("astro-ph", None),
    ("CCAT", 5000), ("webspam", 2000)])
def test_synthetic_shape_density_and_structure(name, n_samples):
    n, d, density = D.SYNTHETIC_SHAPES[name]
    X, y, w = D.make_synthetic(name, n_samples=n_samples, random_state=1)
    n = n_samples or n
    assert sp.isspmatrix_csr(X) and X.shape == (n, d) and X.dtype == np.float64
    got = X.nnz / (n * d)
    assert abs(got - density) <= 0.05 * density, (got, density)
    _check_csr(X)
    assert np.all(X.data > 0)
    norms = np.sqrt(np.asarray(X.multiply(X).sum(axis=1)).ravel())
    np.testing.assert_allclose(norms, 1.0, rtol=1e-10)
    row_nnz = np.diff(X.indptr)
    assert row_nnz.min() >= 1 and row_nnz.std() > 0            # rows vary in size
    assert set(np.unique(y)) == {-1.0, 1.0} and y.dtype == np.float64
    assert 0.2 <= np.mean(y > 0) <= 0.8
    assert w.shape == (d,) and 0 < np.count_nonzero(w) < d


def test_synthetic_column_popularity_is_skewed():
    X, _, _ = D.make_synthetic("rcv1", n_samples=3000)
    df = np.sort(np.bincount(X.indices, minlength=X.shape[1]))[::-1]
    # Zipf: the top features are in most rows, most features are rare
    assert df[0] > 0.5 * X.shape[0]
    assert np.median(df) < 0.01 * X.shape[0]


def test_synthetic_seeding():
    a = D.make_synthetic("rcv1", n_samples=2000, random_state=7)
    b = D.make_synthetic("rcv1", n_samples=2000, random_state=7)
    c = D.make_synthetic("rcv1", n_samples=2000, random_state=8)
    for u, v in ((a[0].indptr, b[0].indptr), (a[0].indices, b[0].indices),
                 (a[0].data, b[0].data), (a[1], b[1]), (a[2], b[2])):
        assert np.array_equal(u, v)
    assert not (a[0].shape == c[0].shape and a[0].nnz == c[0].nnz
                and np.array_equal(a[0].indices, c[0].indices))
    assert not np.array_equal(a[2], c[2])


def test_synthetic_labels_and_noise():
    X, y0, w = D.make_synthetic("real-sim", n_samples=3000, noise=0.0, random_state=3)
    margin = X @ w
    assert np.all(y0[margin > 0] == 1) and np.all(y0[margin < 0] == -1)
    _, y1, _ = D.make_synthetic("real-sim", n_samples=3000, noise=0.1, random_state=3)
    assert np.sum(y0 != y1) == 300


def test_synthetic_custom_shape_and_dtype():
    X, y, w = D.make_synthetic((500, 300, 0.05), random_state=0, dtype=np.float32)
    assert X.shape == (500, 300) and X.dtype == np.float32
    assert abs(X.nnz / (500 * 300) - 0.05) < 0.0025
    X2, _, _ = D.make_synthetic("ccat", n_samples=100)       # case-insensitive preset
    assert X2.shape == (100, 47236)


def test_synthetic_bad_arguments():
    with pytest.raises(ValueError, match="presets"):
        D.make_synthetic("rcv2")
    with pytest.raises(ValueError, match="noise"):
        D.make_synthetic("rcv1", n_samples=10, noise=1.5)
    with pytest.raises(ValueError, match="density"):
        D.make_synthetic((10, 10, 0.0))
    with pytest.raises(ValueError, match="floating"):
        D.make_synthetic("rcv1", n_samples=10, dtype=np.int32)
