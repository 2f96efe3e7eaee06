"""The worker side: a Dask actor that owns one partition.

A :class:`PartitionActor` lives on one worker for the whole fit.  It loads its
rows itself (from a LIBSVM part file, or from arrays handed to it once), keeps
its labels, weights, ``alpha`` block, random stream and a copy of ``v``, and
answers the engine's calls; only ``v`` updates, changes of ``v`` and
certificate pieces travel.
"""
from __future__ import annotations

import hashlib
import time

import numpy as np
import scipy.sparse as sp

from .._util import encode_pm1
from .cs_block import CSBlock
from .l1_block import L1Block
from .multinomial_block import MultinomialBlock
from .newton_block import NewtonBlock
from .block import LINE_SEARCH, PartitionBlock, partition_coefficients

__all__ = ["PartitionActor", "content_digest", "load_source"]


def content_digest(X, y, c) -> str:
    """A BLAKE2b digest of a partition's rows, labels and weights as parsed: two
    parts are equal in content exactly when their digests are equal (the format,
    CSR or dense, and the values all count)."""
    h = hashlib.blake2b(digest_size=16)
    parts = ((X.indptr, X.indices, X.data) if sp.issparse(X) else (np.asarray(X),))
    for a in (*parts, y, c):
        a = np.ascontiguousarray(a)
        h.update(f"{a.dtype.str}{a.shape}".encode())
        h.update(memoryview(a).cast("B"))
    return h.hexdigest()


def load_source(source):
    """Materialize a partition source on the worker: ``(X, y_raw, c)``.

    ``("arrays", X, y, c)``  arrays (possibly produced by a Dask computation);
    ``("svmlight", path, zero_based, dtype)``  a LIBSVM/svmlight part file read
    with :func:`sklearn.datasets.load_svmlight_file` (compressed files included);
    the weights are ones.
    """
    kind = source[0]
    if kind == "arrays":
        _, X, y, c = source
        X = sp.csr_matrix(X) if sp.issparse(X) else np.ascontiguousarray(X)
        y = np.asarray(y, dtype=np.float64).ravel()
        c = np.ones(X.shape[0]) if c is None else np.asarray(c, dtype=np.float64).ravel()
        return X, y, c
    if kind == "svmlight":
        from sklearn.datasets import load_svmlight_file
        _, path, zero_based, dtype = source
        try:
            X, y = load_svmlight_file(str(path), zero_based=zero_based, dtype=dtype)
        except (ValueError, OSError) as e:
            raise ValueError(f"cannot read LIBSVM part file {path}: {e}") from None
        return sp.csr_matrix(X), np.asarray(y, dtype=np.float64), np.ones(X.shape[0])
    raise ValueError(f"unknown partition source kind {kind!r}")


def _with_columns(X, d, intercept):
    """The partition's rows with ``d`` data columns (a CSR part file may name
    fewer) and, when ``intercept`` is not None, a constant column of that value."""
    if sp.issparse(X):
        if X.shape[1] != d:
            X = sp.csr_matrix((X.data, X.indices, X.indptr), shape=(X.shape[0], d))
    elif X.shape[1] != d:
        raise ValueError(f"dense partition has {X.shape[1]} features, expected {d}")
    if intercept is not None:
        col = np.full((X.shape[0], 1), float(intercept))
        X = (sp.hstack([X, sp.csr_matrix(col)], format="csr") if sp.issparse(X)
             else np.hstack([X, col]))
    return X


class PartitionActor:
    """One partition on one worker (create with ``client.submit(..., actor=True)``)."""

    def __init__(self, source):
        t = time.perf_counter()
        self.X, self.y_raw, self.c = load_source(source)
        self.block = None
        self.digest = content_digest(self.X, self.y_raw, self.c)
        self.load_time = time.perf_counter() - t

    # ------------------------------------------------------------ setup
    def describe(self) -> dict:
        X = self.X
        if sp.issparse(X):
            max_col = int(X.indices.max()) if X.nnz else -1
            nnz = int(X.nnz)
        else:
            max_col = X.shape[1] - 1
            nnz = int(X.size)
        labels = np.unique(self.y_raw)
        return {"n": int(X.shape[0]), "d": int(X.shape[1]), "max_col": max_col,
                "nnz": nnz, "W": float(self.c.sum()), "labels": labels[:3].tolist(),
                "n_labels": int(labels.size), "finite": bool(np.isfinite(self.y_raw).all()),
                "digest": self.digest, "load_time": self.load_time}

    def configure(self, d, label_map, loss_code, loss_param, lam, W, intercept=None, index=0):
        """Fix the global feature count (``d`` data columns), map labels,
        append the constant column ``intercept`` (when not None) and build the
        block; ``index`` is the partition's place among all of them (its
        random streams are spawned by it)."""
        X = _with_columns(self.X, d, intercept)
        y = self.y_raw
        if label_map is not None:
            lo, hi = label_map
            y = encode_pm1(y, hi, lo, source="labels of this partition")
        part_ptr = np.array([0, X.shape[0]], dtype=np.int64)
        self.block = PartitionBlock.from_arrays(X, y, self.c, part_ptr, loss_code,
                                                loss_param, lam, W)
        self.newton_block = self.l1_block = None
        self.index = int(index)
        self.X = None           # the block holds the validated rows
        return True

    def class_labels(self):
        """The distinct raw labels of this partition, sorted."""
        return np.unique(self.y_raw)

    def configure_classes(self, d, classes, dense, intercept=None, index=0):
        """Fix the global feature count ``d``, append the constant column
        ``intercept`` (when not None) and build the multinomial block of this
        partition: raw label ``classes[k]`` is class ``k`` (``classes``
        sorted; every label of the partition is among them); ``dense``:
        multiply sparse rows as a dense array."""
        X, y, classes = self._class_rows(d, classes, intercept, index)
        self.mn_block = MultinomialBlock(X, y, self.c, [0, X.shape[0]],
                                         classes.size, bool(dense), first_part=int(index))
        return True

    def _class_rows(self, d, classes, intercept, index):
        """The rows with ``d`` columns (and ``intercept``) and the class
        indices of the raw labels in the sorted ``classes``."""
        X = _with_columns(self.X, d, intercept)
        classes = np.asarray(classes, dtype=np.float64)
        y = np.searchsorted(classes, self.y_raw)
        if (y >= classes.size).any() or (classes[np.minimum(y, classes.size - 1)]
                                         != self.y_raw).any():
            raise ValueError(f"partition {index} has a label outside the classes "
                             f"{classes[:10].tolist()}")
        self.X = None           # the block holds the rows
        self.index = int(index)
        return X, y.astype(np.int64), classes

    def configure_cs(self, d, classes, intercept=None, index=0):
        """As :meth:`configure_classes`, for the Crammer-Singer CoCoA+ rounds:
        a :class:`~primaldual.distributed.cs_block.CSBlock` of this partition."""
        X, y, classes = self._class_rows(d, classes, intercept, index)
        self.cs_block = CSBlock(X, y, self.c, [0, X.shape[0]], classes.size,
                                first_part=int(index))
        return True

    def crammer_singer(self, method, *args):
        """A call of the Crammer-Singer CoCoA+ driver on this partition:
        ``method`` of its :class:`~primaldual.distributed.cs_block.CSBlock`."""
        return getattr(self.cs_block, method)(*args)

    def multinomial(self, method, *args):
        """A pass of multinomial Newton-CG on this partition: ``method`` of its
        :class:`~primaldual.distributed.multinomial_block.MultinomialBlock`."""
        return getattr(self.mn_block, method)(*args)

    def ping(self):
        return True

    def set_curvature(self, beta):
        self.block.set_curvature(beta)
        return True

    def set_threads(self, n_jobs):
        """Threads this partition's local solver runs on (CoCoA+ with SDCA)."""
        self.block.n_jobs = int(n_jobs)
        return True

    def set_state(self, alpha, v, rng_state):
        self.block.set_state(alpha, v, [rng_state])
        return True

    def get_state(self, step=None):
        self._step(step)
        return self.block.alpha.copy(), self.block.rng_states()[0]

    # ------------------------------------------------------------ rounds
    def _sync(self, sync):
        if sync is None:
            return
        kind, a, b = sync
        if kind == "full":
            self.block.v[:] = a
        else:
            self.block.v[a] = b

    def _step(self, step):
        """Take the last round's step, which the driver sends with its next
        call: the summed step ``theta`` (``aggregation="line_search"``), or
        ``("subspace", K, theta)``, the coefficients of the step on a subspace
        (``aggregation="subspace"``), of which this partition takes its own and
        the remembered steps' (:meth:`PartitionBlock.apply_subspace`)."""
        if step is None:
            return
        if isinstance(step, tuple):
            _, K, theta = step
            self.block.apply_subspace(partition_coefficients(theta, self.index, K))
        else:
            self.block.apply_step(step)

    def subspace(self, method, *args):
        """``aggregation="subspace"`` on this partition: ``method`` of its
        :class:`~primaldual.distributed.block.PartitionBlock` (the memory, the
        terms and the largest feasible step at this partition's coefficients)."""
        return getattr(self.block, method)(*args)

    def round(self, sync, mode, m, sigma_dot, gamma, step=None):
        """Take the last round's step, apply the last ``v`` update, run one round
        on this partition and return ``(cols, vals, accesses, status, bad_row,
        compute_seconds, terms0)``; ``terms0`` are the line search's terms at
        ``theta = 0`` (its first evaluation) with ``aggregation="line_search"``,
        else None: the search then starts without another call."""
        self._step(step)
        self._sync(sync)
        t = time.perf_counter()
        st, _, acc, bad = self.block.run(mode, m, sigma_dot, gamma, 1, False)
        (cols, vals), = self.block.last_changes()
        terms0 = self.block.line_terms((0.0,))[0] if mode & LINE_SEARCH and st == 0 else None
        return cols, vals, int(acc), int(st), int(bad), time.perf_counter() - t, terms0

    def line_terms(self, thetas):
        """The scalars of the dual along the summed update at each of
        ``thetas`` (``aggregation="line_search"``; :meth:`PartitionBlock.line_terms`)."""
        return self.block.line_terms(thetas)

    def apply_step(self, theta):
        """Take the driver's step on the summed update."""
        self.block.apply_step(theta)
        return True

    def certificate(self, sync, step=None):
        """Pieces of the exact certificate with ``w = v / lam`` (this copy of
        ``v``), plus the block state for the recovery snapshot."""
        self._step(step)
        self._sync(sync)
        w = self.block.v / self.block.lam
        (ls, cs, vs, margins), = self.block.certificate_parts(w)
        return ls, cs, vs, margins, self.block.alpha.copy(), self.block.rng_states()[0]

    # ---------------------------------------------------- distributed Newton
    def newton(self, method, *args):
        """A pass of distributed Newton-CG on this partition: ``method`` of its
        :class:`~primaldual.distributed.newton_block.NewtonBlock` (built on first use)."""
        if self.newton_block is None:
            b = self.block
            self.newton_block = NewtonBlock(b.rows, b.y, b.cw, b.part_ptr, b.kind,
                                            b.param, b.W, first_part=self.index)
        return getattr(self.newton_block, method)(*args)

    def l1(self, method, *args):
        """A pass of the L1 proximal Newton method on this partition: ``method``
        of its :class:`~primaldual.distributed.l1_block.L1Block` (built on first use)."""
        if self.l1_block is None:
            b = self.block
            self.l1_block = L1Block(b.rows.X, b.y, b.cw / b.W, [0, b.rows.n], b.kind, b.param)
        return getattr(self.l1_block, method)(*args)

    # ------------------------------------------------------- ESO passes
    def gram_matvec(self, z):
        return self.block.gram_matvec(z)

    def column_counts(self):
        return self.block.column_counts()

    def omega_ratio(self, omega):
        return self.block.omega_ratio(omega)
