"""A problem whose rows live on the Dask workers only.

:class:`PartitionedProblem` is built from a list of LIBSVM part files (each
worker reads its own file with :func:`sklearn.datasets.load_svmlight_file`,
so the data never passes through the client) or from Dask arrays (each row
chunk is computed on a worker and handed to the actor there).  One part file
or row chunk is one partition, in the given order.

It offers what the solvers need from a :class:`~primaldual.problem.Problem`
(``n``, ``d``, ``nnz``, ``W``, ``loss``, ``penalty``, ``fingerprint()``) and
the placed actors (``pset``); it has no rows on the client.
"""
from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np

from ..losses import make_loss
from ..multiclass import MulticlassLoss
from ..penalties import make_penalty
from .partition_set import PartitionSet
from .multinomial_block import dense_rows_pay

__all__ = ["PartitionedProblem", "PartitionedMulticlassProblem"]


class PartitionedProblem:
    """Rows on the workers, one partition per part file or row chunk.

    Parameters
    ----------
    client : dask.distributed.Client
    sources : list of callables ``(client, address) -> source`` (use
        :meth:`from_files` or :meth:`from_dask`).
    loss, lam, l1, loss_params : as :class:`~primaldual.problem.Problem`; ``lam=None``
        is ``1/W`` (LIBLINEAR's ``C = 1``, the estimators' default).
    n_features : int, optional    global feature count (default: largest index seen)
    intercept_scaling : float, optional   append a constant column of this value
        on the workers (the regularized intercept of the estimators)
    label_map : "auto" | None     classification: map the two raw labels to
        -1/+1 (larger -> +1, as the CLI does); None: labels are used as they are.
    round_timeout : float         seconds allowed for loading a partition
    """

    def __init__(self, client, sources, *, loss="hinge", lam=1e-4, l1=0.0,
                 loss_params=None, n_features=None, label_map="auto",
                 round_timeout=120.0, names=None, intercept_scaling=None):
        self.client = client
        self.loss = make_loss(loss, loss_params)
        if lam is not None:       # None: 1/W, known once the partitions are read
            self.penalty = make_penalty(lam, l1, allow_pure_l1=True)
        self._place(client, sources, names, round_timeout, n_features)
        if lam is None:
            self.penalty = make_penalty(1.0 / self.W, l1, allow_pure_l1=True)
        self.label_map = self._labels(self.pset.stats, label_map)
        self.n_data_features = self.d
        self.pset.configure(self.d, self.label_map, self.loss.code, self.loss.param,
                            self.lam, self.W, intercept_scaling)
        if intercept_scaling is not None:
            self.d += 1
            self.nnz += self.n

    def _place(self, client, sources, names, round_timeout, n_features):
        """Place the partitions' actors and read their shapes and weights."""
        self.names = list(names) if names is not None else [str(i) for i in range(len(sources))]
        if not sources:
            raise ValueError("no partitions: pass at least one part file or row chunk")
        self.pset = PartitionSet(client, sources, round_timeout)
        st = self.pset.stats
        for k, s in enumerate(st):
            if s["n"] == 0:
                raise ValueError(f"partition {k} ({self.names[k]}) has no rows")
            if not s["finite"]:
                raise ValueError(f"partition {k} ({self.names[k]}) has non-finite labels")
        d_seen = max(max(s["max_col"] + 1 for s in st), max(s["d"] for s in st))
        if n_features is not None:
            if n_features < d_seen:
                raise ValueError(f"n_features={n_features} but the data uses feature "
                                 f"index {d_seen - 1} (0-based); pass n_features >= {d_seen}")
            d_seen = int(n_features)
        self.d = int(d_seen)
        sizes = np.array([s["n"] for s in st], dtype=np.int64)
        self.part_ptr = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
        self.n = int(self.part_ptr[-1])
        self.nnz = int(sum(s["nnz"] for s in st))
        self.W = float(sum(s["W"] for s in st))

    # ---------------------------------------------------------- builders
    @classmethod
    def from_files(cls, client, paths, *, zero_based=False, dtype=np.float64, **kw):
        """One partition per LIBSVM part file, read on its worker.

        ``zero_based=False`` is the LIBSVM convention (indices start at 1); the
        same value is used for every part so that all parts agree.
        """
        paths = [str(p) for p in paths]
        if not paths:
            raise ValueError("the list of part files is empty")

        def source(path):
            def make(client, address):
                return ("svmlight", path, zero_based, dtype)
            return make
        return cls(client, [source(p) for p in paths],
                   names=[Path(p).name for p in paths], **kw)

    @classmethod
    def from_dask(cls, client, X, y, sample_weight=None, **kw):
        """One partition per row chunk of the Dask arrays ``X`` (n, d) and ``y`` (n,)."""
        import dask.array as da
        if not isinstance(X, da.Array):
            raise ValueError(f"X must be a dask.array.Array, got {type(X).__name__}")
        if X.ndim != 2:
            raise ValueError(f"X must be 2-D, got shape {X.shape}")
        if len(X.chunks[1]) != 1:
            X = X.rechunk({1: -1})
        y = da.asarray(y)
        if y.ndim != 1 or y.shape[0] != X.shape[0]:
            raise ValueError(f"y must be 1-D with {X.shape[0]} entries, got shape {y.shape}")
        y = y.rechunk((X.chunks[0],))
        Xd = X.to_delayed().ravel()
        yd = y.to_delayed().ravel()
        cd = None
        if sample_weight is not None:
            c = da.asarray(sample_weight).rechunk((X.chunks[0],))
            cd = c.to_delayed().ravel()

        def source(k):
            def make(client, address):
                parts = [Xd[k], yd[k]] + ([cd[k]] if cd is not None else [])
                futs = client.compute(parts, workers=[address], allow_other_workers=True)
                return ("arrays", futs[0], futs[1], futs[2] if cd is not None else None)
            return make
        return cls(client, [source(k) for k in range(len(Xd))],
                   names=[f"chunk{k}" for k in range(len(Xd))], **kw)

    # ------------------------------------------------------------ basics
    def _labels(self, stats, label_map):
        if not self.loss.classification or label_map is None:
            return None
        if any(s["n_labels"] > 2 for s in stats):
            raise ValueError(f"loss={self.loss.name!r} is binary but a partition has more "
                             f"than two label values; use one-vs-rest on the client")
        labels = sorted({v for s in stats for v in s["labels"]})
        if len(labels) > 2:
            raise ValueError(f"loss={self.loss.name!r} is binary but the parts hold the "
                             f"labels {labels[:5]}")
        if len(labels) == 1:
            if labels[0] not in (-1.0, 1.0):
                raise ValueError(f"all labels equal {labels[0]}; a binary loss needs two "
                                 f"classes or labels in {{-1, +1}}")
            return (-1.0, 1.0)
        return (float(labels[0]), float(labels[1]))

    @property
    def n_parts(self) -> int:
        return self.part_ptr.shape[0] - 1

    @property
    def lam(self) -> float:
        return self.penalty.lam

    @property
    def l1(self) -> float:
        return self.penalty.l1

    def dual_image(self, alpha):
        raise ValueError("warm starts are not supported for partitioned input (the "
                         "rows are on the workers); fit without warm_start")

    def fingerprint(self) -> dict:
        h = hashlib.sha256()
        h.update(self.part_ptr.tobytes())
        h.update(repr([(s["nnz"], s["W"]) for s in self.pset.stats]).encode())
        h.update(repr(self.names).encode())
        return {"n": self.n, "d": self.d, "nnz": self.nnz, "sha256": h.hexdigest(),
                "loss": self.loss.name, "loss_params": self.loss.params,
                "lam": self.lam, "l1": self.l1}


class PartitionedMulticlassProblem(PartitionedProblem):
    """Rows on the workers for ``loss="multinomial"`` or ``"crammer_singer"``,
    one partition per part file or row chunk (build with :meth:`from_files`
    or :meth:`from_dask`).

    The classes are the distinct raw labels of all partitions, sorted: raw
    label ``classes[k]`` is class ``k`` (at least two).  ``lam=None`` is
    ``1/W``; ``intercept_scaling``: a constant column of that value appended
    on the workers.  It offers what
    :class:`~primaldual.solvers.multinomial.MultinomialNewton` and
    :class:`~primaldual.solvers.crammer_singer_cocoa.CrammerSingerCoCoA` need of a
    :class:`~primaldual.multiclass.MulticlassProblem` (``n``, ``d``, ``K``,
    ``nnz``, ``W``, ``lam``, ``loss``, ``coef_shape()``, ``fingerprint()``)
    and the placed actors (``pset``); it has no rows on the client.
    """

    def __init__(self, client, sources, *, loss="multinomial", lam=None, n_features=None,
                 round_timeout=120.0, names=None, intercept_scaling=None):
        self.client = client
        self.loss = MulticlassLoss(getattr(loss, "name", loss))
        self._place(client, sources, names, round_timeout, n_features)
        lam = 1.0 / self.W if lam is None else float(lam)
        if not (np.isfinite(lam) and lam > 0):
            raise ValueError(f"lam must be > 0 and finite for loss={self.loss.name!r}, "
                             f"got {lam!r}")
        self._lam = lam
        labels = self.pset.call_all("class_labels")
        self.classes = np.unique(np.concatenate([np.asarray(v, dtype=np.float64)
                                                 for v in labels]))
        if self.classes.size < 2:
            raise ValueError(f"a multiclass loss needs at least 2 classes; the parts hold "
                             f"only the label {self.classes[0]:g}")
        self.K = int(self.classes.size)
        self.label_map = None
        self.n_data_features = self.d
        #: sparse rows multiplied as dense arrays (decided from the whole shape)
        self.dense = dense_rows_pay(self.n, self.d, self.nnz, True)
        if self.loss.name == "crammer_singer":     # CoCoA+ rounds (cs_block)
            self.pset.configure(self.d, self.classes, intercept_scaling,
                                method="configure_cs")
        else:
            self.pset.configure(self.d, self.classes, self.dense, intercept_scaling,
                                method="configure_classes")
        if intercept_scaling is not None:
            self.d += 1
            self.nnz += self.n

    @property
    def lam(self) -> float:
        return self._lam

    @property
    def l1(self) -> float:
        return 0.0

    def coef_shape(self):
        return (self.d, self.K)

    def fingerprint(self) -> dict:
        out = super().fingerprint()
        out.update(loss_params={"n_classes": self.K}, lam=self.lam, l1=0.0)
        return out
