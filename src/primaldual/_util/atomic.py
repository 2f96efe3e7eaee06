"""Atomic file writes: a reader sees the old file or the complete new one, never a part.

:func:`atomic_write` opens a temporary file in the destination's directory (same
file system, so the final rename is atomic), hands it to the caller, then flushes,
fsyncs and renames it over the destination with :func:`os.replace`. If the
caller's block raises (or the process is interrupted by an exception), the
temporary file is deleted and an existing destination is left untouched.

A destination that is a symbolic link is written through: the link stays and
its target gets the new content.  An existing destination keeps its
permission bits; a new one gets the default permissions (``0o666`` minus the
umask), like a file written with :func:`open`.  A process killed outright
(SIGKILL, power loss) cannot delete its temporary file; the temporary name
carries the writer's process id, and the next write to the same destination
removes the temporary files of writers that are no longer running.
"""

from __future__ import annotations

import contextlib
import os
import secrets
from pathlib import Path

__all__ = ["atomic_write"]


def _alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:             # exists, owned by someone else
        return True
    return True


def _remove_orphans(path):
    """Delete ``.NAME.PID-TOKEN.tmp`` files left by killed writers of ``path``."""
    prefix = f".{path.name}."
    with contextlib.suppress(OSError):
        for entry in os.scandir(path.parent):
            name = entry.name
            if not (name.startswith(prefix) and name.endswith(".tmp")):
                continue
            pid = name[len(prefix):-4].split("-", 1)[0]
            if pid.isdigit() and int(pid) != os.getpid() and not _alive(int(pid)):
                with contextlib.suppress(OSError):
                    os.unlink(entry.path)


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
    if path.is_symlink():
        path = Path(os.path.realpath(path))     # write the target, keep the link
    path.parent.mkdir(parents=True, exist_ok=True)
    _remove_orphans(path)
    try:
        mode_bits = os.stat(path).st_mode & 0o7777
    except OSError:
        mode_bits = None
    tmp = path.with_name(f".{path.name}.{os.getpid()}-{secrets.token_hex(6)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0),
                 0o666)
    try:
        if mode_bits is not None:
            os.chmod(tmp, mode_bits)
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
