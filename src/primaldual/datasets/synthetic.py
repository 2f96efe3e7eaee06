"""Benchmark data: a registry of LIBSVM binary sets, verified downloads, synthetic twins.

Real data
---------
:data:`REGISTRY` maps a dataset name (``"a9a"``, ``"rcv1.binary"``, ``"heart_scale"``,
...) to a :class:`Dataset` record: its files, where they can be downloaded, their
sha256, the number of features and which raw label becomes ``+1``.
:func:`load` returns ``(X, y)`` as a CSR matrix and labels in ``{-1, +1}``.

Files are looked up, in this order, in

1. the directories listed in ``$PRIMALDUAL_DATA`` (``os.pathsep``-separated),
2. the project's ``shared/data`` folder, found by walking up from the current working
   directory and from this source file looking for a ``shared/data`` directory (the
   checkout lives beside it, e.g. ``/work/main`` and ``/work/shared/data``),
3. the cache directory (``data_home``, else ``$PRIMALDUAL_CACHE``, else
   ``~/.cache/primaldual``),

and, failing all of those, downloaded into the cache with :func:`download`, which
streams to a temporary file, checks the sha256 and only then renames the file into
place. A set whose hash is not known (``sha256=None`` in the registry) is downloaded
only when the caller passes ``allow_unverified=True``.

Every file is parsed by :func:`sklearn.datasets.load_svmlight_files`; its parse
errors are re-raised as :class:`DataFormatError`, naming the file and the line.

Synthetic data
--------------
:func:`make_synthetic` draws seeded sparse sets with the shape of the large text
sets of the papers (:data:`SYNTHETIC_SHAPES`): Zipf-distributed feature popularity,
a varying number of nonzeros per row, positive TF-IDF-like values, unit-norm rows
and labels from a planted linear model with a fraction of flipped labels.
"""

from __future__ import annotations

import bz2
import contextlib
import difflib
import gzip
import hashlib
import lzma
import os
import sys
import tempfile
import zlib
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

import numpy as np
import scipy.sparse as sp

__all__ = [
    "ChecksumError",
    "DataFile",
    "DataFormatError",
    "Dataset",
    "DownloadError",
    "LIBSVM_BINARY_URL",
    "REGISTRY",
    "SYNTHETIC_SHAPES",
    "SyntheticShape",
    "UnverifiedDownloadError",
    "ZIPF_EXPONENT",
    "available",
    "available_real",
    "cache_dir",
    "download",
    "find",
    "info",
    "load",
    "load_svmlight",
    "load_svmlight_files",
    "make_planted_text",
    "make_synthetic",
    "search_path",
    "shared_data_dirs",
]

#: Base address of the public LIBSVM page of binary classification sets.
LIBSVM_BINARY_URL = "https://www.csie.ntu.edu.tw/~cjlin/libsvmtools/datasets/binary/"

_SUBSETS = ("train", "test", "both")


# --------------------------------------------------------------------------- errors


class DataFormatError(ValueError):
    """A data file could not be parsed as LIBSVM/svmlight text.

    Parameters
    ----------
    message : str
        Full message; it names the file and, when it could be found, the line.
    path : str or None
        The offending file.
    lineno : int or None
        1-based number of the first bad line, when it could be determined.
    """

    def __init__(self, message, path=None, lineno=None):
        super().__init__(message)
        self.path = None if path is None else str(path)
        self.lineno = lineno


class DownloadError(OSError):
    """A file could not be downloaded (network error, truncated transfer, no source)."""


class ChecksumError(DownloadError):
    """A downloaded file's sha256 is not the expected one; the file was discarded.

    Attributes
    ----------
    url : str
        Where the bytes came from.
    expected, got : str
        The expected and the computed sha256 (hex).
    """

    def __init__(self, message, url=None, expected=None, got=None):
        super().__init__(message)
        self.url = url
        self.expected = expected
        self.got = got


class UnverifiedDownloadError(DownloadError):
    """A download without a known sha256 was refused (pass ``allow_unverified=True``)."""


# ------------------------------------------------------------------------- registry


@dataclass(frozen=True)
class DataFile:
    """One file of a registered dataset.

    Attributes
    ----------
    filename : str
        File name, as looked up in the data directories and as stored in the cache.
    url : str or None
        Address on the public LIBSVM binary page, or None for sets not published there.
    sha256 : str or None
        Hash of the known-good copy (for the files in ``shared/data``, the hash listed
        in its README). None when unknown: downloads then need ``allow_unverified``.
    size : int or None
        Size in bytes of the known-good copy, when known.
    n_samples : int or None
        Number of rows.
    nnz : int or None
        Number of nonzero values (explicit zeros in the file are not counted).
    label_counts : tuple of (float, int) or None
        ``(raw label, count)`` pairs.
    mirror : str or None
        A second source pinned to a commit whose bytes are exactly ``sha256``, tried
        when the LIBSVM copy is missing or differs from the known-good copy.
    """

    filename: str
    url: str | None = None
    sha256: str | None = None
    size: int | None = None
    n_samples: int | None = None
    nnz: int | None = None
    label_counts: tuple | None = None
    mirror: str | None = None

    @property
    def sources(self):
        """list of str: download addresses, LIBSVM first, then the mirror."""
        return [u for u in (self.url, self.mirror) if u]


@dataclass(frozen=True)
class Dataset:
    """A registered binary classification set.

    Attributes
    ----------
    name : str
        Registry key.
    train : DataFile
        Training file.
    test : DataFile or None
        Test file, when the set has a published split.
    n_features : int
        Number of columns used for both files (a test file may not use the last index).
    negative_label, positive_label : float
        Raw labels mapped to -1 and +1 (the larger raw label is the positive one).
    description : str
        What the data is and where the copy comes from.
    shared : bool
        True when the files ship in the project's ``shared/data`` folder.
    """

    name: str
    train: DataFile
    test: DataFile | None
    n_features: int
    negative_label: float
    positive_label: float
    description: str = ""
    shared: bool = False

    @property
    def files(self):
        """list of DataFile: the train file, then the test file if any."""
        return [self.train] + ([self.test] if self.test is not None else [])

    @property
    def label_map(self):
        """dict: raw label -> -1.0 / +1.0."""
        return {self.negative_label: -1.0, self.positive_label: 1.0}


def _libsvm(filename):
    return LIBSVM_BINARY_URL + filename


def _github(repo, commit, path):
    return f"https://raw.githubusercontent.com/{repo}/{commit}/{path}"


def _shared(filename, url, sha256, size, n, nnz, labels, mirror=None):
    return DataFile(filename, url, sha256, size, n, nnz, tuple(labels), mirror)


def _remote(filename, n=None, nnz=None, labels=None):
    return DataFile(filename, _libsvm(filename), None, None, n, nnz,
                    None if labels is None else tuple(labels), None)


_SPARKGBM = ("zhengruifeng/SparkGBM", "600ffe911864d746ec06940d98cd1232c4253bad")
_HEJW = ("HeJingweiFoward/SVM", "5792304fc04fee3750a11b4fad6905e605c7e4d2")
_GREEDY = ("deshanadesai/GreedyBoost", "04a6bf038e7724ae6438f00fcf38f3ef8c4d78c9")
_HCBR = ("aquemy/HCBR", "bc61cf0ca0629119c8d29b146890873f92a46835")
_TSIM = ("ambroiseodt/tsim", "c80abbd765cdaa57ad2b598583251850ded28e62")
_XGB = ("dmlc/xgboost", "379b29f0836b9dbc313b993d8e5743bd452d4117")
_TICK = ("X-DataInitiative/tick-datasets", "9d959b6e53e17145e93e9849ff1f9f6d2de8ae51")
_COCOA = ("gingsmith/cocoa", "ce2108f40b0ed1962c9f3b241586eff88bde49f7")


def _gh(src, path):
    return _github(src[0], src[1], path)


_DATASETS = [
    # ---- sets whose files ship in shared/data (sha256, sizes, counts from its README)
    Dataset(
        "a9a",
        _shared("a9a", _libsvm("a9a"),
                "f5d5ffd8d865ff41328e7ee043e4b020816914ff6843ff15b98905ddbedce906",
                2329875, 32561, 451592, [(-1.0, 24720), (1.0, 7841)],
                _gh(_SPARKGBM, "data/a9a")),
        _shared("a9a.t", _libsvm("a9a.t"),
                "1f448a153f0320399a7e40836eb207655b0bde0f21fc941cc472193daa9f5de9",
                1164628, 16281, 225731, [(-1.0, 12435), (1.0, 3846)],
                _github("UltramanGaia/ML2017-lab-02",
                        "a83899df9c288a04fb7047dbcbdf1d2eafb28e70", "data/a9a.t")),
        123, -1.0, 1.0,
        "Adult census income (UCI), 123 binary features (Platt's preprocessing).", True),
    Dataset(
        "a8a",
        _shared("a8a", _libsvm("a8a"),
                "d08a37b3fadd4bd3c8b3fc30bdc93b54d7c0f371265c90cbfb931a7efe97cd28",
                1624166, 22696, 314815, [(-1.0, 17190), (1.0, 5506)],
                _github("unc-optimization/AccSPD",
                        "d2f1f2c961e3401032649544445bb24ab63ab1c5", "data/a8a")),
        _shared("a8a.t", _libsvm("a8a.t"),
                "fc16c3580048add99056ee4d14105c93f0af63fb8ff6a78f3d66bf5d87c13cd3",
                705709, 9865, 136777, [(-1.0, 7530), (1.0, 2335)],
                _gh(_HEJW, "DataSet/a8a.t")),
        123, -1.0, 1.0, "Adult subset a8a.", True),
    Dataset(
        "a1a",
        _shared("a1a", _libsvm("a1a"),
                "25117c3e7614e158bb7f883b47b1facb46c28948fdfc9eae4f804ac2c00e0392",
                116421, 1605, 22249, [(-1.0, 1210), (1.0, 395)],
                _gh(_HEJW, "DataSet/a1a")),
        _shared("a1a.t", _libsvm("a1a.t"),
                "0212d0c4a3996fe6fb6a0ab54033d9f4fa4b60369b6e3bb141821d9ffc40c04d",
                2215057, 30956, 429343, [(-1.0, 23510), (1.0, 7446)],
                _gh(_HEJW, "DataSet/a1a.t")),
        123, -1.0, 1.0, "Adult subset a1a (the shared copy has CRLF line endings).", True),
    Dataset(
        "covtype",
        _shared("covtype.libsvm.binary.bz2", None,
                "2e3600919f627064b0970259d8e1fa3594cae0d67843c31209aa471eb2b1e86e",
                6694125, 581012, 6901775, [(1.0, 297711), (2.0, 283301)]),
        None, 54, 1.0, 2.0,
        "Forest CoverType, label 2 (Lodgepole Pine) -> +1, unscaled. The shared copy was "
        "reconstructed from another format (same values, different bytes), so its hash "
        "matches no downloadable file: use 'covtype.binary' to download the LIBSVM file.",
        True),
    Dataset(
        "mushrooms",
        _shared("mushrooms", _libsvm("mushrooms"),
                "f39a4eb628dc61a7d43760815b061c9e497aa728ce1ad8bde57a09ef6043b538",
                879712, 8124, 170604, [(1.0, 3916), (2.0, 4208)],
                _github("ericdasse28/online-learning",
                        "9413bf5e973012e1c3522cab5efb5767553e7cf3", "madelon.txt")),
        None, 112, 1.0, 2.0, "UCI Mushroom, 112 binary features, labels 1/2 (2 -> +1).", True),
    Dataset(
        "phishing",
        _shared("phishing", _libsvm("phishing"),
                "0b0ca40e17bc95e909bfa587c408bf69904571ace01dea26e34cafc464f2da93",
                3620167, 11055, 331650, [(0.0, 4898), (1.0, 6157)],
                _gh(_HCBR, "data/phishing.txt")),
        None, 68, 0.0, 1.0, "UCI Phishing Websites, 68 features, labels 0/1.", True),
    Dataset(
        "splice",
        _shared("splice", _libsvm("splice"),
                "eee33566cfe8988ec26122460cc712d66c5c5b79b966b259408e803addaa584d",
                715000, 1000, 60000, [(-1.0, 483), (1.0, 517)]),
        _shared("splice.t", _libsvm("splice.t"),
                "f40da7cfd17860f3f1a1bb7d118f8e86c306d232ca6ac6ddefbaaef266abaa03",
                1555125, 2175, 130500, [(-1.0, 1044), (1.0, 1131)]),
        60, -1.0, 1.0, "Splice-junction DNA (Delve), 60 features with values 1-4.", True),
    Dataset(
        "svmguide1",
        _shared("svmguide1", _libsvm("svmguide1"),
                "2b9ab55b6236f62cee6b7739b52f9e7cb033771f39b9c22c1f1790d80ef14d7f",
                192782, 3089, 12319, [(0.0, 1089), (1.0, 2000)],
                _gh(_TSIM, "data/svmguide1.txt")),
        _shared("svmguide1.t", _libsvm("svmguide1.t"),
                "f9c2fd4c725172aeb4476fc1e2327d537f7fbc2f53f49dfd073f80efbe1ba8f7",
                249612, 4000, 15985, [(0.0, 2000), (1.0, 2000)],
                _github("lxcnju/svm_gradient_descent",
                        "ffd8d329ca82435a6eff537c1e69ba66f8d61152", "data/svmguide1.t")),
        4, 0.0, 1.0, "Astroparticle set of the LIBSVM practical guide, labels 0/1.", True),
    Dataset(
        "australian",
        _shared("australian", _libsvm("australian"),
                "a3b5960775ac0eff78b579ab43affd73b848bef6f59d1cc972fc60188f0fb6ba",
                115307, 690, 7724, [(-1.0, 383), (1.0, 307)],
                _github("Rroscha/Adversarial-Attack-on-KNN",
                        "32c1cc77a46101f93b8f80095f60ebadab90ad5e", "data/australian")),
        None, 14, -1.0, 1.0, "Statlog Australian credit, unscaled.", True),
    Dataset(
        "breast-cancer",
        _shared("breast-cancer", _libsvm("breast-cancer"),
                "445505b580a88e9e19b533b4f126d3dda1883bc7551e46907041ca263aa3c5d9",
                87065, 683, 6830, [(2.0, 444), (4.0, 239)],
                _gh(_SPARKGBM, "data/breast-cancer")),
        None, 10, 2.0, 4.0,
        "Wisconsin breast cancer (original), unscaled, labels 2/4 (4 -> +1).", True),
    Dataset(
        "german.numer",
        _shared("german.numer", _libsvm("german.numer"),
                "69ffe0c4ba0bd91f936986d7c070dfca7e22064bbd5ab8e1fb925d6c86024ec8",
                285792, 1000, 17989, [(-1.0, 700), (1.0, 300)],
                _gh(_GREEDY, "data/german.numer")),
        None, 24, -1.0, 1.0, "Statlog German credit (numeric), unscaled.", True),
    Dataset(
        "german.numer_scale",
        _shared("german.numer_scale", _libsvm("german.numer_scale"),
                "e461161650598fda2988f2a4c3b592634bbcae1c0eec382c94ceda5f30d4dab4",
                165392, 1000, 23001, [(-1.0, 700), (1.0, 300)],
                _github("bokunwang1/P-norm-Push",
                        "a2993349a1261bee45754a99cae9be6efbea1b23", "data/german_scale.txt")),
        None, 24, -1.0, 1.0, "German credit (numeric) scaled to [-1, 1].", True),
    Dataset(
        "heart",
        _shared("heart", _libsvm("heart"),
                "f0437e4847e6293a20850ef3fa2a809a1e11250a5b8760b259510bb321652470",
                42650, 270, 2636, [(-1.0, 150), (1.0, 120)],
                _gh(_GREEDY, "data/heart.binary")),
        None, 13, -1.0, 1.0, "Statlog heart, unscaled.", True),
    Dataset(
        "heart_scale",
        _shared("heart_scale", _libsvm("heart_scale"),
                "5defa0a4c4c5bdaf3f55ae3828310252e8565c13ee37ce279e0b86d82e7f4ce9",
                27670, 270, 3378, [(-1.0, 150), (1.0, 120)],
                _github("cjlin1/libsvm", "6b907139084abf2da4d6d3cb10dc3b7eaffa2fbb",
                        "heart_scale")),
        None, 13, -1.0, 1.0, "Statlog heart scaled to [-1, 1] (LIBSVM's sample file).", True),
    Dataset(
        "fourclass",
        _shared("fourclass", _libsvm("fourclass"),
                "407b9c6377c8c0a19eac962059b0c8c019be7af5db99e84f9dcd7649a35e1178",
                25005, 862, 1724, [(-1.0, 555), (1.0, 307)],
                _gh(_GREEDY, "data/fourclass.binary")),
        None, 2, -1.0, 1.0, "fourclass (Ho & Kleinberg), 2 features, unscaled.", True),
    Dataset(
        "ionosphere_scale",
        _shared("ionosphere_scale", _libsvm("ionosphere_scale"),
                "c4f7fb384c95f758fbc92e06652b952cdf906e28707a5f24ab5b1d691d9296e3",
                102169, 351, 10551, [(-1.0, 126), (1.0, 225)],
                _gh(_HCBR, "data/ionosphere_not_shuffled.txt")),
        None, 34, -1.0, 1.0, "UCI Ionosphere scaled to [-1, 1].", True),
    Dataset(
        "sonar_scale",
        _shared("sonar_scale", _libsvm("sonar_scale"),
                "5d820b62d9873f13b283738971b02aef67900fcd98b310c8e77eca3d0dc53daa",
                156000, 208, 12479, [(-1.0, 111), (1.0, 97)],
                _gh(_HCBR, "data/sonar.txt")),
        None, 60, -1.0, 1.0, "UCI Sonar (mines vs rocks) scaled to [-1, 1].", True),
    Dataset(
        "agaricus",
        _shared("agaricus", None,
                "915c2def06e9b44a306ad097fe8b6652c7c477d9c1e605bd2130ad20a70a8ad6",
                742257, 6513, 143286, [(0.0, 3373), (1.0, 3140)],
                _gh(_XGB, "demo/data/agaricus.txt.train")),
        _shared("agaricus.t", None,
                "765db79391141953d890ce197fe828a621d6487fbba4de5e4d2217bd140371c0",
                183611, 1611, 35442, [(0.0, 835), (1.0, 776)],
                _gh(_XGB, "demo/data/agaricus.txt.test")),
        126, 0.0, 1.0,
        "UCI Mushroom in xgboost's one-hot encoding (not on the LIBSVM page).", True),
    Dataset(
        "reuters",
        _shared("reuters.bz2", None,
                "e77a3368662c02caebe0d9cbcc97d856019bcfb33a8e9b7c48e0b51ee4cdfb60",
                3107267, 7770, 339837, [(-1.0, 7232), (1.0, 538)],
                _gh(_TICK, "binary/reuters/reuters.trn.bz2")),
        _shared("reuters.t.bz2", None,
                "3d699b9644a38160bf3228059d18fbfc07474057d8e82d512576a2b82d72e211",
                763856, 3299, 136821, [(-1.0, 3120), (1.0, 179)],
                _gh(_TICK, "binary/reuters/reuters.tst.bz2")),
        8315, -1.0, 1.0,
        "Reuters-21578 text classification (LaSVM's reuters), sparse TF-IDF-like; "
        "not RCV1 and not on the LIBSVM page.", True),
    Dataset(
        "cocoa-small",
        _shared("cocoa-small", None,
                "e49c95459a812ad6f76bfe1abc8ef274b050911420c78cb96010e4c783e54af1",
                2154250, 2000, 94790, [(-1.0, 1000), (1.0, 1000)],
                _gh(_COCOA, "data/small_train.dat")),
        _shared("cocoa-small.t", None,
                "ff8f671dfe951635aefdcc6c709a44345dd5a8634b0fdff036246a836c3a0730",
                536387, 600, 23730, [(-1.0, 300), (1.0, 300)],
                _gh(_COCOA, "data/small_test.dat")),
        9947, -1.0, 1.0, "Sparse text demo data shipped with CoCoA (not on the LIBSVM page).",
        True),
    # ---- remote-only sets: hashes unknown, so a download needs allow_unverified=True
    Dataset(
        "w8a", _remote("w8a", n=49749), _remote("w8a.t", n=14951), 300, -1.0, 1.0,
        "Web page classification (Platt), 300 binary features."),
    Dataset(
        "rcv1.binary", _remote("rcv1_train.binary.bz2", n=20242),
        _remote("rcv1_test.binary.bz2", n=677399), 47236, -1.0, 1.0,
        "RCV1 (Lewis et al.), CCAT+ECAT vs GCAT+MCAT, TF-IDF, unit-norm rows."),
    Dataset(
        "news20.binary", _remote("news20.binary.bz2", n=19996), None, 1355191, -1.0, 1.0,
        "20 Newsgroups, two halves of the groups, unit-norm rows."),
    Dataset(
        "real-sim", _remote("real-sim.bz2", n=72309), None, 20958, -1.0, 1.0,
        "SRAA real vs simulated auto/aviation, unit-norm rows."),
    Dataset(
        "covtype.binary",
        _remote("covtype.libsvm.binary.bz2", n=581012, nnz=6901775,
                labels=[(1.0, 297711), (2.0, 283301)]),
        None, 54, 1.0, 2.0,
        "Forest CoverType as published on the LIBSVM page (label 2 -> +1). Same values "
        "as the shared 'covtype' copy; the LIBSVM file's hash is not recorded."),
    Dataset(
        "ijcnn1", _remote("ijcnn1.bz2", n=49990), _remote("ijcnn1.t.bz2", n=91701),
        22, -1.0, 1.0, "IJCNN 2001 neural network competition, 22 features."),
    Dataset(
        "webspam", _remote("webspam_wc_normalized_unigram.svm.xz", n=350000), None,
        254, -1.0, 1.0, "Webspam UK2007, unigram counts normalized per row."),
    Dataset(
        "epsilon", _remote("epsilon_normalized.bz2", n=400000),
        _remote("epsilon_normalized.t.bz2", n=100000), 2000, -1.0, 1.0,
        "PASCAL large scale challenge 'epsilon', dense, unit-norm rows."),
]

#: Registered datasets, by name.
REGISTRY: dict[str, Dataset] = {ds.name: ds for ds in _DATASETS}


def _get(name):
    try:
        return REGISTRY[name]
    except (KeyError, TypeError):
        pass
    names = sorted(REGISTRY)
    key = str(name).lower()
    close = [n for n in names if key and n.lower().startswith(key)]
    close += [n for n in difflib.get_close_matches(key, names, n=3) if n not in close]
    hint = f" Did you mean {', '.join(map(repr, close))}?" if close else ""
    raise ValueError(
        f"unknown dataset {name!r}.{hint} Known datasets: {', '.join(names)}. "
        "(Synthetic shapes are made with make_synthetic().)"
    )


def _check_subset(ds, subset):
    if subset not in _SUBSETS:
        raise ValueError(f"subset must be one of {_SUBSETS}, got {subset!r}")
    if subset in ("test", "both") and ds.test is None:
        raise ValueError(f"dataset {ds.name!r} has no test split; use subset='train'")
    if subset == "train":
        return [ds.train]
    if subset == "test":
        return [ds.test]
    return [ds.train, ds.test]


# -------------------------------------------------------------------------- lookup


def cache_dir(data_home=None):
    """Directory where downloads are stored.

    Parameters
    ----------
    data_home : str or path-like, optional
        Explicit cache directory. Default: ``$PRIMALDUAL_CACHE`` if set, else
        ``~/.cache/primaldual``.

    Returns
    -------
    pathlib.Path
        The directory (not created by this function).
    """
    if data_home is not None:
        return Path(data_home).expanduser()
    env = os.environ.get("PRIMALDUAL_CACHE")
    if env:
        return Path(env).expanduser()
    return Path.home() / ".cache" / "primaldual"


def _walk_up_for_shared(start):
    start = Path(start)
    for base in (start, *start.parents):
        cand = base / "shared" / "data"
        if cand.is_dir():
            return cand
    return None


def shared_data_dirs():
    """The project's ``shared/data`` folders, found by walking up the directory tree.

    Walks up from the current working directory, then from this source file, and at
    each level checks for a ``shared/data`` directory; the first hit of each walk is
    kept.

    Returns
    -------
    list of pathlib.Path
        Zero, one or two distinct directories, the working-directory one first.
    """
    found = []
    starts = []
    with contextlib.suppress(OSError):
        starts.append(Path.cwd())
    starts.append(Path(__file__).resolve().parent)
    for start in starts:
        hit = _walk_up_for_shared(start)
        if hit is not None:
            hit = hit.resolve()
            if hit not in found:
                found.append(hit)
    return found


def search_path(data_home=None):
    """Directories searched for dataset files, in lookup order.

    Parameters
    ----------
    data_home : str or path-like, optional
        Cache directory override (see :func:`cache_dir`).

    Returns
    -------
    list of pathlib.Path
        ``$PRIMALDUAL_DATA`` entries, then the shared folders, then the cache
        directory (listed even if it does not exist yet).
    """
    dirs = []
    env = os.environ.get("PRIMALDUAL_DATA", "")
    for part in env.split(os.pathsep):
        if part.strip():
            dirs.append(Path(part.strip()).expanduser())
    dirs.extend(shared_data_dirs())
    dirs.append(cache_dir(data_home))
    out = []
    for d in dirs:
        if d not in out:
            out.append(d)
    return out


def _locate(filename, dirs):
    for d in dirs:
        p = d / filename
        if p.is_file():
            return p
    return None


def _not_found_message(ds, df, dirs):
    where = ", ".join(str(d) for d in dirs)
    notes = []
    if not os.environ.get("PRIMALDUAL_DATA"):
        notes.append("$PRIMALDUAL_DATA is not set")
    if not shared_data_dirs():
        notes.append("no shared/data folder was found above the working directory "
                     "or the package")
    note = f" ({'; '.join(notes)})" if notes else ""
    return (f"file {df.filename!r} of dataset {ds.name!r} was not found; looked in: "
            f"{where}{note}. Pass download=True to fetch it, or put the file in one of "
            "these directories.")


def find(name, *, subset="train", data_home=None, download=False,
         allow_unverified=False, timeout=60.0):
    """Resolve the local path(s) of a registered dataset without loading it.

    Parameters
    ----------
    name : str
        Registry name (see :data:`REGISTRY`).
    subset : {"train", "test", "both"}, default "train"
        Which file(s) to resolve.
    data_home : str or path-like, optional
        Cache directory override (see :func:`cache_dir`).
    download : bool, default False
        Download missing files into the cache instead of raising.
    allow_unverified : bool, default False
        Permit downloading files whose sha256 is not in the registry.
    timeout : float, default 60
        Network timeout in seconds for each download attempt.

    Returns
    -------
    pathlib.Path or tuple of pathlib.Path
        One path for ``"train"``/``"test"``; ``(train_path, test_path)`` for ``"both"``.

    Raises
    ------
    ValueError
        Unknown name (the message lists the known ones) or bad ``subset``.
    FileNotFoundError
        A file is missing and ``download`` is False; the message lists where it looked.
    UnverifiedDownloadError, ChecksumError, DownloadError
        See :func:`download`.
    """
    ds = _get(name)
    files = _check_subset(ds, subset)
    dirs = search_path(data_home)
    found = [_locate(df.filename, dirs) for df in files]
    missing = [df for df, p in zip(files, found) if p is None]
    if missing and not download:
        raise FileNotFoundError(_not_found_message(ds, missing[0], dirs))
    for df in missing:
        if not df.sources:
            raise DownloadError(
                f"{df.filename!r} of dataset {ds.name!r} has no download source; "
                f"{ds.description} Looked in: {', '.join(str(d) for d in dirs)}.")
        if df.sha256 is None and not allow_unverified:
            raise UnverifiedDownloadError(
                f"refusing to download {df.filename!r} of dataset {ds.name!r}: the registry "
                "has no sha256 for it, so the file could not be verified. Pass "
                "allow_unverified=True to download it anyway, or place a copy in one of: "
                f"{', '.join(str(d) for d in dirs)}.")
    dest_dir = cache_dir(data_home)
    for i, (df, p) in enumerate(zip(files, found)):
        if p is None:
            found[i] = _fetch(ds, df, dest_dir, allow_unverified, timeout)
    return found[0] if subset != "both" else tuple(found)


def _fetch(ds, df, dest_dir, allow_unverified, timeout):
    dest = Path(dest_dir) / df.filename
    errors = []
    last = None
    checksum = None
    for url in df.sources:
        try:
            return download(url, dest, sha256=df.sha256, allow_unverified=allow_unverified,
                            timeout=timeout, expected_size=df.size, progress=None)
        except OSError as exc:   # DownloadError, urllib.error.URLError, socket errors
            errors.append(f"{url}: {exc}")
            last = exc
            if isinstance(exc, ChecksumError):
                checksum = exc
    msg = f"could not download {df.filename!r} of dataset {ds.name!r}: " + "; ".join(errors)
    if checksum is not None:
        raise ChecksumError(msg, url=checksum.url, expected=checksum.expected,
                            got=checksum.got) from last
    raise DownloadError(msg) from last


def available_real(data_home=None):
    """Names of registered datasets whose files (train and test, if any) are all local.

    Parameters
    ----------
    data_home : str or path-like, optional
        Cache directory override (see :func:`cache_dir`).

    Returns
    -------
    list of str
        In registry order.
    """
    dirs = search_path(data_home)
    return [name for name, ds in REGISTRY.items()
            if all(_locate(df.filename, dirs) is not None for df in ds.files)]


def available(data_home=None):
    """Names of registered datasets that :func:`load` can read without a download.

    Same as :func:`available_real` (synthetic sets are made, never looked up: see
    :data:`SYNTHETIC_SHAPES`).

    Parameters
    ----------
    data_home : str or path-like, optional
        Cache directory override (see :func:`cache_dir`).

    Returns
    -------
    list of str
    """
    return available_real(data_home)


def info(name):
    """Registry facts about a dataset, without reading any file.

    Parameters
    ----------
    name : str
        Registry name.

    Returns
    -------
    dict
        ``name``, ``description``, ``n`` (train rows), ``d`` (features), ``nnz`` (train
        nonzeros), ``label_counts`` (``{-1: count, +1: count}`` after the label mapping),
        ``raw_labels`` (``{raw: -1/+1}``), ``files``, ``urls``, ``sha256``, ``shared``
        and ``test`` (a dict with ``n``, ``nnz``, ``label_counts``, or None). Unknown
        numbers (remote-only sets) are None.
    """
    ds = _get(name)

    def counts(df):
        if df.label_counts is None:
            return None
        out = {-1: 0, 1: 0}
        for raw, c in df.label_counts:
            out[int(ds.label_map[raw])] += c
        return out

    def part(df):
        return {"n": df.n_samples, "nnz": df.nnz, "label_counts": counts(df),
                "file": df.filename}

    return {
        "name": ds.name,
        "description": ds.description,
        "n": ds.train.n_samples,
        "d": ds.n_features,
        "nnz": ds.train.nnz,
        "label_counts": counts(ds.train),
        "raw_labels": dict(ds.label_map),
        "files": [df.filename for df in ds.files],
        "urls": [df.sources for df in ds.files],
        "sha256": [df.sha256 for df in ds.files],
        "shared": ds.shared,
        "test": part(ds.test) if ds.test is not None else None,
    }


# ------------------------------------------------------------------------- download


def download(url, dest, sha256=None, *, allow_unverified=False, timeout=60.0,
             expected_size=None, progress=False, chunk_size=1 << 20):
    """Download ``url`` to ``dest`` atomically, verifying its sha256.

    The body is streamed into a temporary file in ``dest``'s directory while being
    hashed; only a complete, verified file is renamed to ``dest`` (``os.replace``).
    On any failure (network error, interruption, checksum mismatch) the temporary
    file is deleted and an existing ``dest`` is left untouched.

    Parameters
    ----------
    url : str
        Source address (``https://``, ``http://`` or ``file://``).
    dest : str or path-like
        Final file name; its directory is created if needed.
    sha256 : str or None
        Expected hex digest. None is refused unless ``allow_unverified`` is True.
    allow_unverified : bool, default False
        Accept a download without a known hash.
    timeout : float, default 60
        Socket timeout in seconds.
    expected_size : int or None
        Expected size in bytes; checked when no ``sha256`` is given (the hash covers it
        otherwise).
    progress : bool or None, default False
        Show a tqdm progress bar on stderr; None shows it when stderr is a terminal.
    chunk_size : int, default 1 MiB
        Read size.

    Returns
    -------
    pathlib.Path
        ``dest``.

    Raises
    ------
    UnverifiedDownloadError
        ``sha256`` is None and ``allow_unverified`` is False (nothing is fetched).
    ChecksumError
        The bytes do not hash to ``sha256``; the message gives expected and got.
    DownloadError
        The transfer was shorter than announced or than ``expected_size``.
    urllib.error.URLError, OSError
        Network and file system errors, re-raised after cleanup.
    """
    dest = Path(dest)
    if sha256 is None:
        if not allow_unverified:
            raise UnverifiedDownloadError(
                f"refusing to download {url} to {dest}: no sha256 was given to verify it. "
                "Pass allow_unverified=True to accept an unverified file.")
    else:
        sha256 = str(sha256).strip().lower()
        if len(sha256) != 64 or any(c not in "0123456789abcdef" for c in sha256):
            raise ValueError(f"sha256 must be 64 hex digits, got {sha256!r}")
    if progress is None:
        progress = bool(getattr(sys.stderr, "isatty", lambda: False)())
    dest.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{dest.name}.", suffix=".part", dir=dest.parent)
    try:
        h = hashlib.sha256()
        nbytes = 0
        announced = None
        bar = None
        with os.fdopen(fd, "wb") as out:
            with urllib.request.urlopen(url, timeout=timeout) as resp:
                length = getattr(resp, "headers", {}).get("Content-Length")
                if length is not None and str(length).strip().isdigit():
                    announced = int(length)
                if progress:
                    from tqdm.auto import tqdm

                    bar = tqdm(total=announced, unit="B", unit_scale=True,
                               desc=dest.name, file=sys.stderr, leave=False)
                try:
                    while True:
                        chunk = resp.read(chunk_size)
                        if not chunk:
                            break
                        out.write(chunk)
                        h.update(chunk)
                        nbytes += len(chunk)
                        if bar is not None:
                            bar.update(len(chunk))
                finally:
                    if bar is not None:
                        bar.close()
            out.flush()
            os.fsync(out.fileno())
        if announced is not None and nbytes != announced:
            raise DownloadError(
                f"download of {url} is truncated: got {nbytes} bytes, the server "
                f"announced {announced}")
        got = h.hexdigest()
        if sha256 is not None and got != sha256:
            raise ChecksumError(
                f"checksum mismatch for {url}: expected sha256 {sha256}, got {got} "
                f"({nbytes} bytes); the file was discarded",
                url=url, expected=sha256, got=got)
        if sha256 is None and expected_size is not None and nbytes != expected_size:
            raise DownloadError(
                f"download of {url} has {nbytes} bytes, expected {expected_size}")
        os.chmod(tmp, 0o644)
        os.replace(tmp, dest)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    return dest


# -------------------------------------------------------------------------- parsing


def _open_binary(path):
    """Open a data file for binary reading, decompressing gzip, bzip2 or xz by content."""
    path = Path(path)
    with open(path, "rb") as f:
        magic = f.read(6)
    if magic[:2] == b"\x1f\x8b":
        return gzip.open(path, "rb")
    if magic[:3] == b"BZh":
        return bz2.open(path, "rb")
    if magic[:6] == b"\xfd7zXZ\x00":
        return lzma.open(path, "rb")
    return open(path, "rb")


def _scan_for_bad_line(path, n_features=None, zero_based="auto"):
    """Find the first line that sklearn's svmlight parser would reject.

    Returns ``(lineno, reason, text)`` or None if no bad line is found.
    """
    first_over = None       # first index > n_features (1-based reading)
    first_at = None         # first index >= n_features (0-based reading)
    min_index = None
    with _open_binary(path) as f:
        for lineno, raw in enumerate(f, 1):
            line = raw.split(b"#", 1)[0].strip()
            if not line:
                continue
            text = raw.rstrip(b"\r\n")
            tokens = line.split()
            try:
                for lab in tokens[0].split(b","):
                    float(lab)
            except ValueError:
                return lineno, f"invalid label {tokens[0].decode('latin-1')!r}", text
            prev = -1
            for tok in tokens[1:]:
                if tok.startswith(b"qid:"):
                    try:
                        int(tok[4:])
                    except ValueError:
                        return lineno, f"invalid qid {tok.decode('latin-1')!r}", text
                    continue
                idx_s, sep, val_s = tok.partition(b":")
                if not sep:
                    return (lineno, f"token {tok.decode('latin-1')!r} is not index:value",
                            text)
                try:
                    idx = int(idx_s)
                except ValueError:
                    return (lineno, f"invalid feature index {idx_s.decode('latin-1')!r}",
                            text)
                if idx < 0 or (idx == 0 and zero_based is False):
                    return (lineno, f"invalid feature index {idx} (LIBSVM indices start "
                            "at 1)", text)
                try:
                    float(val_s)
                except ValueError:
                    return lineno, f"invalid value {val_s.decode('latin-1')!r}", text
                if idx <= prev:
                    return (lineno, f"feature indices are not strictly increasing "
                            f"({prev} then {idx})", text)
                prev = idx
                min_index = idx if min_index is None else min(min_index, idx)
                if n_features is not None:
                    if first_over is None and idx > n_features:
                        first_over = (lineno, idx, text)
                    if first_at is None and idx >= n_features:
                        first_at = (lineno, idx, text)
    if n_features is not None:
        zero = zero_based is True or (zero_based == "auto" and min_index == 0)
        hit = first_at if zero else first_over
        if hit is not None:
            lineno, idx, text = hit
            return (lineno, f"feature index {idx} exceeds n_features={n_features}", text)
    return None


def _format_error(paths, exc, n_features, zero_based):
    orig = str(exc) or type(exc).__name__
    if isinstance(exc, (EOFError, lzma.LZMAError, zlib.error, OSError)):
        target = paths[0] if len(paths) == 1 else None
        for p in paths:   # find which compressed stream is broken
            try:
                with _open_binary(p) as f:
                    while f.read(1 << 20):
                        pass
            except (EOFError, lzma.LZMAError, zlib.error, OSError):
                target = p
                break
        where = str(target) if target is not None else ", ".join(map(str, paths))
        return DataFormatError(f"{where}: corrupt or truncated compressed data ({orig})",
                               path=target)
    for p in paths:
        try:
            hit = _scan_for_bad_line(p, n_features, zero_based)
        except (EOFError, lzma.LZMAError, zlib.error, OSError):
            hit = None
        if hit is not None:
            lineno, reason, text = hit
            snippet = text.decode("latin-1")
            if len(snippet) > 80:
                snippet = snippet[:77] + "..."
            return DataFormatError(
                f"{p}, line {lineno}: {reason}: {snippet!r} (parser said: {orig})",
                path=p, lineno=lineno)
    where = ", ".join(map(str, paths))
    return DataFormatError(f"{where}: not a valid LIBSVM/svmlight file: {orig} "
                           "(no single bad line was found)",
                           path=paths[0] if len(paths) == 1 else None)


def _is_format_exception(exc):
    if isinstance(exc, (ValueError, OverflowError, EOFError, lzma.LZMAError, zlib.error)):
        return True
    # bz2 and gzip report corrupt streams as bare OSError (no errno)
    return isinstance(exc, OSError) and not isinstance(
        exc, (FileNotFoundError, PermissionError, IsADirectoryError)) and exc.errno is None


def load_svmlight_files(paths, *, n_features=None, dtype=np.float64, zero_based="auto"):
    """Parse several LIBSVM/svmlight files into matrices with the same column count.

    Parameters
    ----------
    paths : sequence of str or path-like
        Files, plain or compressed (gzip, bzip2, xz; detected from the content).
    n_features : int or None
        Number of columns of every matrix; default: the largest index over all files.
    dtype : numpy dtype, default float64
        Dtype of the matrix values.
    zero_based : bool or "auto", default "auto"
        Index base, as in :func:`sklearn.datasets.load_svmlight_files`.

    Returns
    -------
    list
        ``[X_1, y_1, X_2, y_2, ...]``: CSR matrices (sorted indices, explicit zeros
        dropped) and raw labels as float64 arrays.

    Raises
    ------
    FileNotFoundError
        A file does not exist.
    DataFormatError
        A file is not valid LIBSVM text; the message names it and the first bad line.
    """
    from sklearn.datasets import load_svmlight_files as _sk_load

    paths = [Path(p) for p in paths]
    for p in paths:
        if not p.is_file():
            raise FileNotFoundError(f"data file not found: {p}")
    with contextlib.ExitStack() as stack:
        handles = [stack.enter_context(_open_binary(p)) for p in paths]
        try:
            parts = _sk_load(handles, n_features=n_features, dtype=dtype,
                             zero_based=zero_based)
        except Exception as exc:
            if not _is_format_exception(exc):
                raise
            raise _format_error(paths, exc, n_features, zero_based) from exc
    out = []
    for X, y in zip(parts[0::2], parts[1::2]):
        X = sp.csr_matrix(X, dtype=dtype)
        X.eliminate_zeros()
        if not X.has_sorted_indices:
            X.sort_indices()
        out.extend([X, np.asarray(y, dtype=np.float64)])
    return out


def load_svmlight(path, n_features=None, dtype=np.float64, *, zero_based="auto"):
    """Parse one LIBSVM/svmlight file (plain, .gz, .bz2 or .xz), without label mapping.

    Parameters
    ----------
    path : str or path-like
        The file.
    n_features : int or None
        Number of columns; default: the largest index in the file.
    dtype : numpy dtype, default float64
        Dtype of the matrix values.
    zero_based : bool or "auto", default "auto"
        Index base, as in :func:`sklearn.datasets.load_svmlight_file`.

    Returns
    -------
    X : scipy.sparse.csr_matrix
        Sorted indices, explicit zeros dropped.
    y : ndarray of float64
        The raw labels as written in the file.

    Raises
    ------
    FileNotFoundError
        The file does not exist.
    DataFormatError
        The file is not valid LIBSVM text; the message names the file and the line.
    """
    X, y = load_svmlight_files([path], n_features=n_features, dtype=dtype,
                               zero_based=zero_based)
    return X, y


def _map_labels(ds, y_raw, path):
    uniq = np.unique(y_raw)
    allowed = np.array([ds.negative_label, ds.positive_label])
    bad = uniq[~np.isin(uniq, allowed)]
    if bad.size:
        raise DataFormatError(
            f"{path}: labels {bad.tolist()} do not match dataset {ds.name!r}, whose "
            f"labels are {ds.negative_label:g} (-> -1) and {ds.positive_label:g} (-> +1)",
            path=path)
    return np.where(y_raw == ds.positive_label, 1.0, -1.0)


def load(name, *, subset="train", data_home=None, download=True, allow_unverified=False,
         dtype=np.float64):
    """Load a registered LIBSVM binary classification set.

    Parameters
    ----------
    name : str
        Registry name, e.g. ``"a9a"``, ``"heart_scale"``, ``"rcv1.binary"``.
    subset : {"train", "test", "both"}, default "train"
        Which split to return.
    data_home : str or path-like, optional
        Cache directory override (see :func:`cache_dir`).
    download : bool, default True
        Download files missing from every local directory.
    allow_unverified : bool, default False
        Permit downloads of files with no sha256 in the registry.
    dtype : numpy dtype, default float64
        Dtype of the matrix values.

    Returns
    -------
    (X, y) or (X, y, X_test, y_test)
        CSR matrices with ``n_features`` columns (the same for both splits) and labels
        in {-1.0, +1.0} (the registry's positive raw label becomes +1).

    Raises
    ------
    ValueError
        Unknown name or subset, or a subset the set does not have.
    FileNotFoundError
        A file is missing and ``download`` is False; the message lists where it looked.
    DataFormatError
        A file does not parse or holds labels other than the registered two.
    UnverifiedDownloadError, ChecksumError, DownloadError
        See :func:`download`.
    """
    ds = _get(name)
    _check_subset(ds, subset)
    found = find(name, subset=subset, data_home=data_home, download=download,
                 allow_unverified=allow_unverified)
    paths = list(found) if subset == "both" else [found]
    parts = load_svmlight_files(paths, n_features=ds.n_features, dtype=dtype,
                                zero_based=False)
    out = []
    for p, X, y in zip(paths, parts[0::2], parts[1::2]):
        out.extend([X, _map_labels(ds, y, p)])
    return tuple(out)


# ------------------------------------------------------------------------ synthetic


class SyntheticShape(NamedTuple):
    """Shape of a synthetic preset: rows, columns and fraction of nonzero entries."""

    n: int
    d: int
    density: float


#: Presets of :func:`make_synthetic`: the papers' large sets (n, d, density).
SYNTHETIC_SHAPES: dict[str, SyntheticShape] = {
    "rcv1": SyntheticShape(20242, 47236, 0.0016),
    "news20": SyntheticShape(19996, 1355191, 0.0003),
    "real-sim": SyntheticShape(72309, 20958, 0.0024),
    "astro-ph": SyntheticShape(29882, 99757, 0.0008),
    "CCAT": SyntheticShape(781265, 47236, 0.0016),
    "webspam": SyntheticShape(350000, 254, 85.0 / 254.0),
}

#: Zipf exponent of the column popularity (p_rank ~ rank**-s).
ZIPF_EXPONENT = 1.1
# lognormal spread of the per-row nonzero count; webspam rows vary less
_ROW_SIGMA = {"webspam": 0.35}
_DEFAULT_ROW_SIGMA = 0.6
_SUPPORT_FRACTION = 0.2        # fraction of features in the planted model's support
_BLOCK_DRAWS = 1 << 22         # candidate draws per block (bounds memory)


def _resolve_shape(shape):
    if isinstance(shape, str):
        for key, val in SYNTHETIC_SHAPES.items():
            if key.lower() == shape.lower():
                return key, val
        raise ValueError(f"unknown synthetic shape {shape!r}; presets: "
                         f"{', '.join(SYNTHETIC_SHAPES)}, or pass (n, d, density)")
    try:
        n, d, density = shape
    except (TypeError, ValueError):
        raise ValueError(f"shape must be a preset name or an (n, d, density) tuple, "
                         f"got {shape!r}") from None
    return None, SyntheticShape(int(n), int(d), float(density))


def _rng(random_state):
    if isinstance(random_state, np.random.Generator):
        return random_state
    if isinstance(random_state, np.random.RandomState):
        return np.random.default_rng(random_state.randint(0, 2**31 - 1))
    return np.random.default_rng(random_state)


class _DistinctCalibration:
    """Expected number of distinct columns after m i.i.d. draws, and its inverse."""

    def __init__(self, p, k_max):
        head = p[:4096]
        tail = p[4096:]
        nodes, weights = [head], [np.ones(head.size)]
        if tail.size:
            # geometric bins over the tail ranks; p varies slowly inside each bin
            edges = np.unique(np.round(np.geomspace(1, tail.size + 1, 1025)).astype(np.int64)) - 1
            edges = edges[edges < tail.size]
            counts = np.diff(np.append(edges, tail.size))
            nodes.append(np.add.reduceat(tail, edges) / counts)
            weights.append(counts.astype(float))
        self._lq = np.log1p(-np.concatenate(nodes))
        self._w = np.concatenate(weights)
        m_hi = max(4.0, 4.0 * k_max)
        while self.expected(np.array([m_hi]))[0] < k_max + 0.5 and m_hi < 1e12:
            m_hi *= 2.0
        self._m = np.geomspace(1.0, m_hi, 512)
        self._D = self.expected(self._m)

    def expected(self, m):
        out = np.empty(m.size)
        for s in range(0, m.size, 64):
            mm = m[s:s + 64]
            out[s:s + 64] = (-np.expm1(np.outer(mm, self._lq)) * self._w).sum(axis=1)
        return out

    def draws_for(self, k):
        """Draws whose expected distinct count is k (vectorized)."""
        return np.interp(k, self._D, self._m)


def _first_k_distinct(rows, ranks, pos, k, d):
    """Per row, keep the first k[row] distinct ranks in draw order (by ``pos``).

    Returns the kept ``(rows, ranks)`` and the kept count per row. Drawing with
    replacement and keeping the first k distinct values is exactly weighted sampling
    without replacement.
    """
    nb = k.size
    if rows.size == 0:
        return rows, ranks, np.zeros(nb, dtype=np.int64)
    M = int(pos.max()) + 1
    if float(nb) * d * M < 2.0**62:
        key = (rows * d + ranks) * M + pos
        key.sort()
        pair, p = np.divmod(key, M)
    else:
        order = np.lexsort((pos, ranks, rows))
        pair = rows[order] * d + ranks[order]
        p = pos[order]
    first = np.empty(pair.size, dtype=bool)
    first[0] = True
    np.not_equal(pair[1:], pair[:-1], out=first[1:])
    pair, p = pair[first], p[first]
    r, c = np.divmod(pair, d)
    order = np.argsort(r * M + p)
    r, c = r[order], c[order]
    starts = np.searchsorted(r, np.arange(nb))
    rank_in_row = np.arange(r.size) - starts[r]
    keep = rank_in_row < k[r]
    r, c = r[keep], c[keep]
    return r, c, np.bincount(r, minlength=nb)


def _row_offsets(counts):
    """For per-row counts, the within-row position 0..count-1 of each repeated entry."""
    total = int(counts.sum())
    starts = np.repeat(np.cumsum(counts) - counts, counts)
    return np.arange(total, dtype=np.int64) - starts


def _sample_columns(rng, k, cdf, d, calib, m0, perm):
    """Sample k[i] distinct Zipf-distributed columns for every row.

    Returns the column indices in CSR order (rows in order, columns sorted within each
    row) and the popularity rank of each one.
    """
    invperm = np.empty(d, dtype=np.int64)
    invperm[perm] = np.arange(d)
    n = k.size
    cum = np.cumsum(m0)
    # block boundaries so that each block draws about _BLOCK_DRAWS candidates
    cuts = np.searchsorted(cum, np.arange(_BLOCK_DRAWS, cum[-1], _BLOCK_DRAWS), side="right")
    bounds = np.unique(np.concatenate([[0], cuts, [n]]))
    pieces = []
    for a, b in zip(bounds[:-1], bounds[1:]):
        kb = k[a:b]
        mb = m0[a:b]
        nb = b - a
        rows = np.repeat(np.arange(nb, dtype=np.int64), mb)
        pos = _row_offsets(mb)
        ranks = np.minimum(np.searchsorted(cdf, rng.random(rows.size), side="right"), d - 1)
        r, c, cnt = _first_k_distinct(rows, ranks.astype(np.int64), pos, kb, d)
        for _ in range(10_000):
            deficient = cnt < kb
            if not deficient.any():
                break
            idx = np.flatnonzero(deficient)
            sel = deficient[r]
            o = np.argsort(r[sel], kind="stable")
            r_old, c_old = r[sel][o], c[sel][o]
            pos_old = _row_offsets(cnt[idx])
            extra = (np.ceil(1.5 * (calib.draws_for(kb[idx]) - calib.draws_for(cnt[idx])))
                     .astype(np.int64))
            extra = np.maximum(extra, 2 * (kb[idx] - cnt[idx])) + 4
            r_new = np.repeat(idx, extra)
            pos_new = np.repeat(cnt[idx], extra) + _row_offsets(extra)
            c_new = np.minimum(
                np.searchsorted(cdf, rng.random(r_new.size), side="right"), d - 1)
            r2, c2, cnt2 = _first_k_distinct(
                np.concatenate([r_old, r_new]), np.concatenate([c_old, c_new.astype(np.int64)]),
                np.concatenate([pos_old, pos_new]), kb, d)
            r = np.concatenate([r[~sel], r2])
            c = np.concatenate([c[~sel], c2])
            cnt[idx] = cnt2[idx]
        else:  # pragma: no cover - needs k close to d with a vanishing tail probability
            raise RuntimeError("synthetic sampler did not reach the requested row sizes")
        key = r * d + perm[c]
        key.sort()
        pieces.append(key % d)
    cols = np.concatenate(pieces)
    return cols, invperm[cols]


def _sample_columns_dense(rng, k, p, d, perm):
    """Dense-regime twin of :func:`_sample_columns` (rows hold a large share of d).

    Every column of a row gets an exponential arrival time with rate ``p[rank]``; the
    ``k[i]`` earliest arrive are kept, which is the same weighted sampling without
    replacement, at a cost of ``n * d`` instead of the many repeated draws of the head.
    """
    invperm = np.empty(d, dtype=np.int64)
    invperm[perm] = np.arange(d)
    n = k.size
    step = max(1, _BLOCK_DRAWS // d)
    pieces = []
    for a in range(0, n, step):
        kb = k[a:a + step]
        nb = kb.size
        arrival = rng.standard_exponential((nb, d)) / p
        order = np.argsort(arrival, axis=1)
        keep = np.arange(d) < kb[:, None]
        ranks = order[keep].astype(np.int64)
        rows = np.repeat(np.arange(nb, dtype=np.int64), kb)
        key = rows * d + perm[ranks]
        key.sort()
        pieces.append(key % d)
    cols = np.concatenate(pieces)
    return cols, invperm[cols]


def make_synthetic(shape, n_samples=None, random_state=0, noise=0.05, dtype=np.float64):
    """Seeded sparse binary classification data shaped like a large text set.

    Generation, fully vectorized:

    1. Column popularity follows Zipf's law, ``p(rank) ~ rank**-1.1``
       (:data:`ZIPF_EXPONENT`), with ranks assigned to columns by a random
       permutation.
    2. Row ``i`` gets ``k_i`` nonzeros, ``k_i`` lognormal around ``density * d``
       (sigma 0.6; 0.35 for webspam), rescaled so that the mean is exactly
       ``density * d``, clipped to ``[1, 0.75 d]``.
    3. The ``k_i`` columns are drawn from the Zipf law without replacement (i.i.d.
       draws, keeping the first ``k_i`` distinct ones; for dense rows such as
       webspam's, the equivalent race of exponential arrival times over all columns).
    4. Values are TF-IDF-like: ``(1 + log tf) * idf_j`` with ``tf`` geometric on
       {1, 2, ...} and ``idf_j = 1 + log(1 / P(column j in a row))``; each row is then
       scaled to unit L2 norm.
    5. A planted model ``w_true`` has Gaussian weights on a random 20% of the columns,
       made orthogonal to the mean row (so that the classes are roughly balanced) and
       scaled to unit norm. ``y = sign(X w_true)`` (ties broken at random), then a
       fraction ``noise`` of the labels, chosen at random, is flipped.

    Parameters
    ----------
    shape : str or (n, d, density)
        A key of :data:`SYNTHETIC_SHAPES` (case-insensitive: ``"rcv1"``, ``"news20"``,
        ``"real-sim"``, ``"astro-ph"``, ``"CCAT"``, ``"webspam"``) or a custom tuple.
    n_samples : int, optional
        Number of rows, overriding the preset's ``n``; ``d`` and the per-row number of
        nonzeros (hence the density) are kept.
    random_state : int, numpy Generator or None, default 0
        Seed; the same seed gives identical output.
    noise : float in [0, 1], default 0.05
        Fraction of labels flipped after labelling by the planted model.
    dtype : numpy floating dtype, default float64
        Dtype of the matrix values.

    Returns
    -------
    X : scipy.sparse.csr_matrix, shape (n, d)
        Sorted indices without duplicates, positive values, unit-norm rows.
    y : ndarray of float64, shape (n,)
        Labels in {-1, +1}.
    w_true : ndarray of float64, shape (d,)
        The planted model.
    """
    key, (n, d, density) = _resolve_shape(shape)
    if n_samples is not None:
        n = int(n_samples)
    if n < 1 or d < 1:
        raise ValueError(f"need n >= 1 and d >= 1, got n={n}, d={d}")
    if not 0.0 < density <= 1.0:
        raise ValueError(f"density must be in (0, 1], got {density}")
    if not 0.0 <= noise <= 1.0:
        raise ValueError(f"noise must be in [0, 1], got {noise}")
    dtype = np.dtype(dtype)
    if dtype.kind != "f":
        raise ValueError(f"dtype must be a floating type, got {dtype}")
    rng = _rng(random_state)
    sigma = _ROW_SIGMA.get(key, _DEFAULT_ROW_SIGMA)

    # column popularity by rank, and a random rank -> column assignment
    p = np.arange(1, d + 1, dtype=np.float64) ** -ZIPF_EXPONENT
    p /= p.sum()
    cdf = np.cumsum(p)
    cdf[-1] = 1.0
    perm = rng.permutation(d)

    # nonzeros per row
    mean_k = density * d
    k_max = max(1, int(0.75 * d)) if d > 1 else 1
    k_raw = rng.lognormal(-0.5 * sigma**2, sigma, size=n) * mean_k
    for _ in range(3):   # rescale so the clipped mean stays at density * d
        kc = np.clip(k_raw, 1.0, k_max)
        k_raw *= mean_k / kc.mean()
    k = np.floor(np.clip(k_raw, 1.0, k_max) + rng.random(n)).astype(np.int64)
    k = np.clip(k, 1, min(k_max, d))

    calib = _DistinctCalibration(p, float(k.max()))
    m0 = np.ceil(1.05 * calib.draws_for(k)).astype(np.int64) + 2
    m0 = np.maximum(m0, k)
    if m0.mean() >= 0.5 * d:     # dense rows: racing all d columns is cheaper
        cols, ranks = _sample_columns_dense(rng, k, p, d, perm)
    else:
        cols, ranks = _sample_columns(rng, k, cdf, d, calib, m0, perm)
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(k, out=indptr[1:])

    # TF-IDF-like values, then unit-norm rows
    m_mean = float(calib.draws_for(np.array([mean_k]))[0])
    appear = -np.expm1(m_mean * np.log1p(-p))          # P(column of this rank in a row)
    idf = 1.0 + np.log(1.0 / np.maximum(appear, 1e-300))
    tf = rng.geometric(0.6, size=cols.size)
    vals = (1.0 + np.log(tf)) * idf[ranks]
    norms = np.sqrt(np.add.reduceat(vals * vals, indptr[:-1]))
    vals /= np.repeat(norms, k)

    index_dtype = np.int32 if max(d, cols.size) < 2**31 else np.int64
    X = sp.csr_matrix((vals.astype(dtype), cols.astype(index_dtype),
                       indptr.astype(index_dtype)), shape=(n, d))
    X.has_sorted_indices = True

    # planted sparse-ish model, orthogonal to the mean row
    s_w = max(1, int(round(_SUPPORT_FRACTION * d)))
    support = rng.choice(d, size=s_w, replace=False)
    wv = rng.standard_normal(s_w)
    col_mean = np.bincount(cols, weights=vals, minlength=d)[support] / n
    mm = float(col_mean @ col_mean)
    if mm > 0.0:
        wv -= (float(wv @ col_mean) / mm) * col_mean
    w_true = np.zeros(d)
    w_true[support] = wv
    nrm = np.linalg.norm(w_true)
    if nrm > 0:
        w_true /= nrm

    return X, _planted_labels(X, w_true, noise, rng), w_true


def _planted_labels(X, w_true, noise, rng):
    """sign(X w_true), ties broken at random, then a ``noise`` share of labels flipped."""
    n = X.shape[0]
    margin = np.asarray(X @ w_true, dtype=np.float64)
    y = np.where(margin > 0, 1.0, -1.0)
    ties = margin == 0
    if ties.any():
        y[ties] = rng.choice([-1.0, 1.0], size=int(ties.sum()))
    n_flip = int(round(noise * n))
    if n_flip:
        y[rng.choice(n, size=n_flip, replace=False)] *= -1.0
    return y


#: Presets of :func:`make_planted_text`: (shape, support size, document-frequency range).
PLANTED_TEXT_SHAPES = {
    "news20": ("news20", 1000, (0.005, 0.05)),
    "real-sim": ("real-sim", 300, (0.005, 0.05)),
}


def make_planted_text(shape, n_samples=None, random_state=0, noise=0.01,
                      support_size=None, df_range=None, topic_words=4.0, dtype=np.float64):
    """Seeded sparse text-like data whose labels a linear model can learn from few rows.

    The background matrix is :func:`make_synthetic`'s (Zipf column popularity,
    lognormal row lengths, TF-IDF-like values; same ``shape``, ``n_samples`` and
    seed).  The labels come from a sparse planted model on *mid-frequency*
    features, as topic words work in real text:

    1. ``support_size`` features are drawn uniformly from those whose document
       frequency ``df_j`` (fraction of rows containing ``j``) lies in
       ``df_range``, and split at random into two halves ``S+`` and ``S-``;
       ``w_true = (1_{S+} - 1_{S-}) / sqrt(support_size)``;
    2. every row draws a class ``c_i = +-1`` (fair coin) and ``1 + Poisson(topic_words - 1)``
       topic words uniformly from ``S_{c_i}``, each with the value of the row's
       largest entry (added to the entry if the word is already present);
       rows are then scaled to unit L2 norm;
    3. ``y = sign(X w_true)`` (ties at random), then a fraction ``noise`` of the
       labels, chosen at random, is flipped.

    So the Bayes error is about ``noise``, and a few thousand rows see each
    support feature many times: the set can be learned from the training sizes
    of the SIMBA paper (8,000 rows for news20, 20,000 for real-sim).
    :func:`make_synthetic`'s dense planted model on 20% of all columns cannot be
    learned from 8,000 rows of a million-column set.

    Parameters
    ----------
    shape : str or (n, d, density)
        ``"news20"`` or ``"real-sim"`` (:data:`PLANTED_TEXT_SHAPES`, which also set
        ``support_size`` and ``df_range``), or any :func:`make_synthetic` shape.
    n_samples : int, optional
        Number of rows (default: the shape's ``n``).
    random_state : int, numpy Generator or None, default 0
    noise : float in [0, 1], default 0.01
        Fraction of labels flipped at random.
    support_size : int, optional
        Number of features in the planted model (preset value, else 1000); at least 2.
    df_range : (float, float), optional
        Document-frequency range of the support in the background matrix
        (preset value, else (0.005, 0.05)).
    topic_words : float >= 1, default 4.0
        Mean number of topic words added per row.
    dtype : numpy floating dtype, default float64

    Returns
    -------
    X : scipy.sparse.csr_matrix, shape (n, d)   unit-norm rows, sorted indices
    y : ndarray of float64, shape (n,)          labels in {-1, +1}
    w_true : ndarray of float64, shape (d,)     the planted model (unit norm)
    """
    preset = None
    if isinstance(shape, str):
        for key, val in PLANTED_TEXT_SHAPES.items():
            if key.lower() == shape.lower():
                preset = val
    if preset is not None:
        shape = preset[0]
        support_size = preset[1] if support_size is None else support_size
        df_range = preset[2] if df_range is None else df_range
    support_size = 1000 if support_size is None else int(support_size)
    df_range = (0.005, 0.05) if df_range is None else tuple(float(v) for v in df_range)
    if support_size < 2:
        raise ValueError(f"support_size must be >= 2, got {support_size}")
    if len(df_range) != 2 or not 0.0 <= df_range[0] < df_range[1] <= 1.0:
        raise ValueError(f"df_range must be (lo, hi) with 0 <= lo < hi <= 1, got {df_range}")
    if not 0.0 <= noise <= 1.0:
        raise ValueError(f"noise must be in [0, 1], got {noise}")
    if not topic_words >= 1.0:
        raise ValueError(f"topic_words must be >= 1, got {topic_words}")
    rng = _rng(random_state)
    X, _, _ = make_synthetic(shape, n_samples=n_samples, random_state=rng, noise=0.0,
                             dtype=np.float64)
    n, d = X.shape
    df = np.bincount(X.indices, minlength=d) / n
    mid = np.flatnonzero((df >= df_range[0]) & (df <= df_range[1]))
    if mid.size < support_size:
        raise ValueError(f"only {mid.size} features have a document frequency in "
                         f"{df_range} on this {n} x {d} set, fewer than support_size="
                         f"{support_size}; widen df_range or lower support_size")
    support = rng.choice(mid, size=support_size, replace=False)
    half = support_size // 2
    pos, neg = support[:half], support[half:]
    w_true = np.zeros(d)
    w_true[pos] = 1.0
    w_true[neg] = -1.0
    w_true /= np.sqrt(support_size)

    cls = rng.choice([-1.0, 1.0], size=n)
    m = 1 + rng.poisson(topic_words - 1.0, size=n)
    rows = np.repeat(np.arange(n), m)
    u = rng.random(rows.size)
    cpos = cls[rows] > 0
    cols = np.where(cpos, pos[(u * pos.size).astype(np.int64)],
                    neg[(u * neg.size).astype(np.int64)])
    rowmax = np.maximum.reduceat(X.data, X.indptr[:-1]) if X.nnz else np.ones(n)
    rowmax = np.where(np.diff(X.indptr) > 0, rowmax, 1.0)
    T = sp.csr_matrix((rowmax[rows], (rows, cols)), shape=(n, d))
    X = (X + T).tocsr()
    X.sum_duplicates()
    X.sort_indices()
    norms = np.sqrt(np.add.reduceat(X.data * X.data, X.indptr[:-1]))
    X.data /= np.repeat(norms, np.diff(X.indptr))
    X = X.astype(np.dtype(dtype))

    return X, _planted_labels(X, w_true, noise, rng), w_true
