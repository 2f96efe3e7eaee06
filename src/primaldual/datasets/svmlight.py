"""Reading LIBSVM/svmlight text files, with errors that name the file and the line.

Every file is parsed by :func:`sklearn.datasets.load_svmlight_files`; its parse
errors are re-raised as :class:`DataFormatError`, naming the file and the first bad
line. Compressed files are recognised by their content.
"""

from __future__ import annotations

import contextlib
import io
import lzma
import zipfile
import zlib
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from .._util import UnsupportedCompressionError, open_decompressed

__all__ = ["DataFormatError", "load_svmlight", "load_svmlight_files"]


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


#: the largest feature index the parser reads (scikit-learn's indices are C ints)
MAX_INDEX = 2 ** 31 - 1


def _scan_for_bad_line(path, n_features=None, zero_based="auto", max_rows=None):
    """Find the first line that sklearn's svmlight parser would reject.

    Only the first ``max_rows`` data lines are looked at when it is given.
    Returns ``(lineno, reason, text)`` or None if no bad line is found.
    """
    first_over = None       # first index > n_features (1-based reading)
    first_at = None         # first index >= n_features (0-based reading)
    min_index = None
    rows = 0
    with open_decompressed(path) as f:
        for lineno, raw in enumerate(f, 1):
            line = raw.split(b"#", 1)[0].strip()
            if not line:
                continue
            if max_rows is not None and rows >= max_rows:
                break
            rows += 1
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
                if idx > MAX_INDEX:
                    return (lineno, f"feature index {idx} is too large (the parser "
                            f"reads indices up to {MAX_INDEX})", text)
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


# what a corrupt or truncated compressed stream raises
_STREAM_ERRORS = (EOFError, lzma.LZMAError, zlib.error, zipfile.BadZipFile, OSError)


def _format_error(paths, exc, n_features, zero_based, max_rows=None):
    orig = str(exc) or type(exc).__name__
    if isinstance(exc, _STREAM_ERRORS):
        target = paths[0] if len(paths) == 1 else None
        for p in paths:   # find which compressed stream is broken
            try:
                with open_decompressed(p) as f:
                    while f.read(1 << 20):
                        pass
            except _STREAM_ERRORS:
                target = p
                break
        where = str(target) if target is not None else ", ".join(map(str, paths))
        return DataFormatError(f"{where}: corrupt or truncated compressed data ({orig})",
                               path=target)
    for p in paths:
        try:
            hit = _scan_for_bad_line(p, n_features, zero_based, max_rows)
        except _STREAM_ERRORS:
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
    if isinstance(exc, (ValueError, OverflowError, EOFError, lzma.LZMAError, zlib.error,
                        zipfile.BadZipFile)):
        return True
    # bz2 and gzip report corrupt streams as bare OSError (no errno)
    return isinstance(exc, OSError) and not isinstance(
        exc, (FileNotFoundError, PermissionError, IsADirectoryError)) and exc.errno is None


def _head(handle, max_rows):
    """The first ``max_rows`` data lines of an open file, as an in-memory file.

    Blank lines and lines holding only a comment are kept (the parser skips them)
    but not counted, so row ``i`` of the result is the ``i``-th sample of the file.
    """
    lines = []
    rows = 0
    for raw in handle:
        if raw.split(b"#", 1)[0].strip():
            if rows >= max_rows:
                break
            rows += 1
        lines.append(raw if raw.endswith(b"\n") else raw + b"\n")
    return io.BytesIO(b"".join(lines))


def _check_max_rows(max_rows):
    if max_rows is None:
        return None
    if (not isinstance(max_rows, (int, np.integer)) or isinstance(max_rows, bool)
            or max_rows < 1):
        raise ValueError(f"max_rows must be None or a positive integer, got {max_rows!r}")
    return int(max_rows)


def _existing_files(paths):
    """``paths`` as Paths; a clear error for a directory or a missing file."""
    paths = [Path(p) for p in paths]
    for p in paths:
        if p.is_dir():
            raise IsADirectoryError(f"{p} is a directory, not a data file; give the "
                                    f"path of a LIBSVM file")
        if not p.exists():
            raise FileNotFoundError(f"data file not found: {p}")
    return paths


def _open_data(stack, p):
    """``p`` opened (decompressed) on ``stack``; a DataFormatError for a bad archive."""
    try:
        return stack.enter_context(open_decompressed(p))
    except UnsupportedCompressionError as exc:
        raise DataFormatError(str(exc), path=p) from exc
    except zipfile.BadZipFile as exc:
        raise DataFormatError(f"{p}: corrupt zip archive ({exc})", path=p) from exc


def _rebased(X, base, d, dtype):
    """``X`` parsed with its indices as written, as a CSR matrix of ``d`` columns
    with index ``base`` at column 0, sorted indices and no explicit zeros."""
    indices = X.indices - base if base else X.indices
    X = sp.csr_matrix((X.data, indices, X.indptr), shape=(X.shape[0], d), dtype=dtype)
    X.eliminate_zeros()
    if not X.has_sorted_indices:
        X.sort_indices()
    return X


def load_svmlight_files(paths, *, n_features=None, dtype=np.float64, zero_based="auto",
                        max_rows=None, return_index_base=False):
    """Parse several LIBSVM/svmlight files into matrices with the same column count.

    Parameters
    ----------
    paths : sequence of str or path-like
        Files, plain or compressed (gzip, bzip2, xz, or a zip archive holding one
        file; detected from the content, not the name).
    n_features : int or None
        Number of columns of every matrix; default: the largest index over all files.
    dtype : numpy dtype, default float64
        Dtype of the matrix values.
    zero_based : bool or "auto", default "auto"
        Index base, as in :func:`sklearn.datasets.load_svmlight_files`: True reads
        index ``j`` as column ``j``, False as column ``j - 1``; "auto" reads the
        files as one-based when each has an entry and none uses index 0.
    max_rows : int or None
        Parse only the first ``max_rows`` samples of every file (the rest of the file
        is not read, so a head of a large compressed file costs little).
    return_index_base : bool, default False
        Also return the base used (0 or 1).

    Returns
    -------
    list
        ``[X_1, y_1, X_2, y_2, ...]``: CSR matrices (sorted indices, explicit zeros
        dropped) and raw labels as float64 arrays; with ``return_index_base``,
        ``(list, base)``.

    Raises
    ------
    FileNotFoundError
        A file does not exist.
    DataFormatError
        A file is not valid LIBSVM text; the message names it and the first bad line.
    """
    from sklearn.datasets import load_svmlight_files as _sk_load

    max_rows = _check_max_rows(max_rows)
    paths = _existing_files(paths)
    with contextlib.ExitStack() as stack:
        handles = [_open_data(stack, p) for p in paths]
        try:
            if max_rows is not None:
                handles = [_head(h, max_rows) for h in handles]
            # the indices as written (zero_based=True keeps them); the base is
            # decided below, where it can be reported
            parts = _sk_load(handles, dtype=dtype, zero_based=True)
        except Exception as exc:
            if not _is_format_exception(exc):
                raise
            raise _format_error(paths, exc, n_features, zero_based, max_rows) from exc
        matrices = parts[0::2]
        base = _index_base(matrices, zero_based)
        if base == 1 and any(X.nnz and X.indices.min() == 0 for X in matrices):
            raise _format_error(paths, ValueError("invalid index 0"), n_features, False,
                                max_rows)
        d_raw = matrices[0].shape[1] if matrices else 0
        d = max(d_raw - base, 0)
        if n_features is not None:
            if d > n_features:
                raise _format_error(
                    paths, ValueError(f"n_features={n_features} but the data has column "
                                      f"index {d - 1 + base}"),
                    n_features, base == 0, max_rows)
            d = int(n_features)
    out = []
    for X, y in zip(matrices, parts[1::2]):
        out.extend([_rebased(X, base, d, dtype), np.asarray(y, dtype=np.float64)])
    if return_index_base:
        return out, base
    return out


def _index_base(matrices, zero_based):
    """0 or 1: the index base of files parsed with their indices as written.

    ``zero_based=True``/``False`` say it; ``"auto"`` is scikit-learn's rule:
    one-based when every file has an entry and none uses index 0.  (A file in
    which no row happens to use feature 0 looks one-based; a model file records
    the base of its training data so that ``predict`` does not guess.)
    """
    if zero_based is True:
        return 0
    if zero_based is False:
        return 1
    if zero_based != "auto":
        raise ValueError(f"zero_based must be True, False or 'auto', got {zero_based!r}")
    return 1 if all(X.nnz and X.indices.min() > 0 for X in matrices) else 0


def load_svmlight(path, n_features=None, dtype=np.float64, *, zero_based="auto",
                  max_rows=None):
    """Parse one LIBSVM/svmlight file (plain, gzip, bzip2, xz or zip), without label mapping.

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
    max_rows : int or None
        Parse only the first ``max_rows`` samples.

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
                               zero_based=zero_based, max_rows=max_rows)
    return X, y
