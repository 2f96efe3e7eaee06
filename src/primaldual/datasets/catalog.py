"""The catalog of LIBSVM sets the registry knows: the record types
(:class:`DataFile`, :class:`Dataset`) and one record per set, with its files,
where they can be downloaded, their sha256, shapes, label counts and task.
:mod:`.registry` looks names up in it.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["DATASETS", "DataFile", "Dataset", "LIBSVM_BINARY_URL", "TASKS"]

#: Base address of the public LIBSVM page of binary classification sets.
LIBSVM_BINARY_URL = "https://www.csie.ntu.edu.tw/~cjlin/libsvmtools/datasets/binary/"

#: The tasks a registered set can have.
TASKS = ("binary", "multiclass", "regression")


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
    """A registered set: binary or multiclass classification, or regression.

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
    negative_label, positive_label : float or None
        Binary sets: the raw labels mapped to -1 and +1 (the larger raw label is the
        positive one). None for multiclass and regression sets.
    description : str
        What the data is and where the copy comes from.
    shared : bool
        True when the files ship in the project's ``shared/data`` folder.
    task : {"binary", "multiclass", "regression"}
        What the targets are. Multiclass labels and regression targets are returned
        as stored in the file.
    """

    name: str
    train: DataFile
    test: DataFile | None
    n_features: int
    negative_label: float
    positive_label: float
    description: str = ""
    shared: bool = False
    task: str = "binary"

    def __post_init__(self):
        if self.task not in TASKS:
            raise ValueError(f"task must be one of {TASKS}, got {self.task!r}")
        binary = self.negative_label is not None and self.positive_label is not None
        if binary != (self.task == "binary"):
            raise ValueError(f"dataset {self.name!r}: a binary set has both raw labels, "
                             "a multiclass or regression set has neither")

    @property
    def files(self):
        """list of DataFile: the train file, then the test file if any."""
        return [self.train] + ([self.test] if self.test is not None else [])

    @property
    def label_map(self):
        """dict: raw label -> -1.0 / +1.0 (binary sets); None for the other tasks."""
        if self.task != "binary":
            return None
        return {self.negative_label: -1.0, self.positive_label: 1.0}

    @property
    def classes(self):
        """tuple of float: the raw class labels of a classification set (sorted, from
        the registered counts of its files), or None for regression."""
        if self.task == "regression":
            return None
        if self.task == "binary":
            return (self.negative_label, self.positive_label)
        seen = {raw for df in self.files for raw, _ in (df.label_counts or ())}
        return tuple(sorted(seen))


def _libsvm(filename):
    return LIBSVM_BINARY_URL + filename


def _github(repo, commit, path):
    return f"https://raw.githubusercontent.com/{repo}/{commit}/{path}"


def _shared(filename, url, sha256, size, n, nnz, labels, mirror=None):
    return DataFile(filename, url, sha256, size, n, nnz,
                    None if labels is None else tuple(labels), mirror)


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
_OPTM = ("konstmish/opt_methods", "8a3ae3ab666d916abaa5a61132fb60bb2a059088")
_LETTER = ("baowj-678/Machine-Learning", "7880388edd7ada9dcea2ba60fa0c7e27202b6d42")
_KPRIORS = ("team-approx-bayes/kpriors", "7113fe83a025bc6eba02b4d9fa8c9f10e04c6366")
_ANGEL = ("Angel-ML/angel", "2f2a895654833c95dd1b20bea4928d0c7e566d1b")


def _counts(*pairs):
    """``(raw label, count)`` pairs with labels 1, 2, ... in order: ``_counts(5, 7)``."""
    return [(float(k + 1), c) for k, c in enumerate(pairs)]


def _gh(src, path):
    return _github(src[0], src[1], path)


DATASETS = [
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
    # ---- multiclass sets (labels as stored, 1..K) ------------------------------------
    Dataset(
        "news20",
        _shared("news20.bz2", None,
                "8c79851f6f5fdc5540a0d04a5ab728353c42d26b84e73f93bda301c06c15ffe9",
                2376572, 15935, 1272569,
                _counts(797, 780, 797, 796, 796, 797, 799, 798, 799, 792, 798, 797, 798,
                        798, 799, 799, 800, 799, 799, 797),
                _gh(_OPTM, "optmethods/datasets/news20.bz2")),
        None, 62061, None, None,
        "20 Newsgroups (LIBSVM multiclass news20), 20 classes, raw term counts.", True,
        "multiclass"),
    Dataset(
        "letter.scale",
        _shared("letter.scale", None,
                "ce2c7df15cc5742dc4382d59079181c97c21e0beaa0af53c84cc5745c69f1020",
                2630396, 15000, 240000,
                _counts(594, 567, 554, 598, 565, 565, 547, 538, 567, 575, 572, 560, 607,
                        605, 574, 597, 594, 568, 563, 599, 606, 581, 576, 583, 602, 543),
                _gh(_LETTER, "LibSVM/dataset/letter/letter.scale")),
        _shared("letter.scale.t", None,
                "07522ccbf54187fae6d560d1712b88c41ea1f7e8d19491c5adcc22ee37a075da",
                877223, 5000, 80000,
                _counts(195, 199, 182, 207, 203, 210, 226, 196, 188, 172, 167, 201, 185,
                        178, 179, 206, 189, 190, 185, 197, 207, 183, 176, 204, 184, 191),
                _gh(_LETTER, "LibSVM/dataset/letter/letter.scale.t")),
        16, None, None,
        "Statlog letter recognition, 26 classes, dense, scaled to [-1, 1].", True,
        "multiclass"),
    Dataset(
        "usps.t",
        _shared("usps.t.bz2", None,
                "a9c0164e797d60142a50604917f0baa604f326e9a689698763793fa5d12ffc4e",
                1831726, 2007, 513792,
                _counts(359, 264, 198, 166, 200, 160, 170, 147, 166, 177),
                _gh(_KPRIORS, "data/usps.t.bz2")),
        None, 256, None, None,
        "USPS digits, the test split only (labels 1..10 = digits 0..9), dense, in [-1, 1].",
        True, "multiclass"),
    Dataset(
        "dna.scale",
        _shared("dna.scale", None,
                "03d39477c5e48415e9cd18e006efc8f7a3b5c3deaee8289a72511c35070e3cfe",
                499248, 2000, 91233, _counts(464, 485, 1051),
                _gh(_ANGEL, "data/dna/dna.scale")),
        _shared("dna.scale.t", None,
                "d2eeed170e4e38ae2aba6aa4cd27a8ca4ecceb01a7751e8e509bb4e1a6bcef39",
                293744, 1186, 53669, _counts(303, 280, 603),
                _gh(_ANGEL, "data/dna/dna.scale.t")),
        180, None, None,
        "Statlog DNA splice junctions, 3 classes, 180 binary features.", True,
        "multiclass"),
    Dataset(
        "shuttle",
        _shared("shuttle", None,
                "fd7697dd19c56886d77a5b04e9acad88f3298db649c56d2cabfc0cf3af7e6151",
                1597190, 43500, 306668, _counts(34108, 37, 132, 6748, 2458, 6, 11)),
        _shared("shuttle.t", None,
                "ffc3fe7ae0d606506bc79092895af5096bfc54554d5a99dbeec9e7e961fa9152",
                531813, 14500, 102139, _counts(11478, 13, 39, 2155, 809, 4, 2)),
        9, None, None,
        "Statlog Shuttle, 7 classes (78% class 1), unscaled integer features. "
        "Reconstructed from CSV: no byte-identical download.", True, "multiclass"),
    # ---- binary sets added with the multiclass and regression ones --------------------
    Dataset(
        "gisette_scale.t",
        _shared("gisette_scale.t.bz2", None,
                "51b5a289928886b96840a1936e5026b1eab21a9799fc78cb7ba960fef56ee74c",
                3697909, 1000, 4971000, [(-1.0, 500), (1.0, 500)]),
        None, 5000, -1.0, 1.0,
        "GISETTE (NIPS 2003), the 1,000-row test split only, nearly dense, values up to "
        "3.2. Reconstructed from an R file: no byte-identical download.", True),
    Dataset(
        "higgs7k",
        _shared("higgs7k", None,
                "2c8651bab255521cc1d3bee88e0f8ed2fdcbac31779965ce1689f3837b86ab8e",
                1617400, 7000, 180489, [(0.0, 3284), (1.0, 3716)]),
        _shared("higgs7k.t", None,
                "ab0d13b1956d830f3bbe764f7a7e63e17bed4375c204057dab192a93c4e2870d",
                115728, 500, 12915, [(0.0, 228), (1.0, 272)]),
        28, 0.0, 1.0,
        "HIGGS subset (LightGBM's example), 28 dense unscaled features, labels 0/1 "
        "(1 = signal). Reconstructed from TSV.", True),
    Dataset(
        "magic04",
        _shared("magic04", None,
                "6db81d682954a6b9231a51a51e026618ff530bbfa2ae9788b21959ccb860cd4e",
                1894863, 19020, 189958, [(-1.0, 6688), (1.0, 12332)]),
        None, 10, -1.0, 1.0,
        "UCI MAGIC gamma telescope, 10 dense unscaled features (gamma -> +1). "
        "Reconstructed from CSV.", True),
    Dataset(
        "default_cc",
        _shared("default_cc", None,
                "94d89cc966abef52033f59940c41ab733d075bd3b630336a287e7fbd5e0dd478",
                4048345, 30000, 569011, [(0.0, 23364), (1.0, 6636)]),
        None, 24, 0.0, 1.0,
        "UCI default of credit card clients, unscaled; feature 1 is the row ID, kept on "
        "purpose. Reconstructed from CSV.", True),
    # ---- regression sets (targets as stored) -----------------------------------------
    Dataset(
        "cadata",
        _shared("cadata", None,
                "ffefbe2e9f0af268b72f523af41ef6076b59fa842482de0c586f81d3162a4a2a",
                1318692, 20640, 165120, None),
        None, 8, None, None,
        "California housing (1990 census), 8 unscaled features, median house value "
        "14,999-500,001. Reconstructed from an R file.", True, "regression"),
    Dataset(
        "abalone",
        _shared("abalone", None,
                "45cd1d44b3c6ebc081b640f65eb8f7e264dda782fcf6d18b36f0fbc3bfd714ce",
                258697, 4177, 33414,
                [(float(r), c) for r, c in (
                    (1, 1), (2, 1), (3, 15), (4, 57), (5, 115), (6, 259), (7, 391),
                    (8, 568), (9, 689), (10, 634), (11, 487), (12, 267), (13, 203),
                    (14, 126), (15, 103), (16, 67), (17, 58), (18, 42), (19, 32), (20, 26),
                    (21, 14), (22, 6), (23, 9), (24, 2), (25, 1), (26, 1), (27, 2),
                    (29, 1))]),
        None, 8, None, None,
        "Abalone, unscaled (sex coded 1/2/3, 7 measurements); the target is the number "
        "of rings, 1-29. Reconstructed from an R file.", True, "regression"),
    Dataset(
        "housing_scale",
        _shared("housing_scale", None,
                "bbacd2f526a038499717d5dc4b8895e6baf1e2351895b9360a84bcb31e104476",
                72154, 506, 6578, None, _gh(_SPARKGBM, "data/housing_scale")),
        None, 13, None, None,
        "Boston housing scaled to [-1, 1], median value 5-50.", True, "regression"),
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
