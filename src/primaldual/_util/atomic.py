"""Atomic file writes: a reader sees the old file or the complete new one, never a part.

:func:`atomic_write` opens a temporary file in the destination's directory (same
file system, so the final rename is atomic), hands it to the caller, then flushes,
fsyncs and renames it over the destination with :func:`os.replace`. If the
caller's block raises (or the process is interrupted by an exception), the
temporary file is deleted and an existing destination is left untouched. The
temporary file is created with the default permissions (``0o666`` minus the
umask), like a file written with :func:`open`.
"""

from __future__ import annotations

import contextlib
import os
import secrets
from pathlib import Path

__all__ = ["atomic_write"]


def _fsync_dir(directory):
    """Make the rename durable (POSIX); a no-op where directories cannot be opened."""
    with contextlib.suppress(OSError):
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


@contextlib.contextmanager
def atomic_write(path, mode="wb", *, encoding=None, newline=None, durable=True):
    """Write ``path`` atomically through a temporary file in the same directory.

    Parameters
    ----------
    path : str or path-like
        Destination; its parent directories are created if needed.
    mode : {"wb", "w"}, default "wb"
        Binary or text writing.
    encoding, newline : str or None
        As in :func:`open`, for text mode (``encoding`` defaults to UTF-8).
    durable : bool, default True
        fsync the file before the rename and the directory after it, so the new
        content survives a power loss once this block has exited.

    Yields
    ------
    file object
        Open on the temporary file. Write everything, then leave the block.

    Examples
    --------
    >>> with atomic_write(tmp_dir / "model.npz") as fh:      # doctest: +SKIP
    ...     np.savez(fh, coef=coef)
    """
    if mode not in ("wb", "w"):
        raise ValueError(f"mode must be 'wb' or 'w', got {mode!r}")
    if mode == "wb" and (encoding is not None or newline is not None):
        raise ValueError("encoding and newline are for text mode (mode='w')")
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(6)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0),
                 0o666)
    try:
        if mode == "w":
            fh = os.fdopen(fd, "w", encoding=encoding or "utf-8", newline=newline)
        else:
            fh = os.fdopen(fd, "wb")
    except BaseException:
        os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    try:
        with fh:
            yield fh
            fh.flush()
            if durable:
                os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    if durable:
        _fsync_dir(path.parent)
