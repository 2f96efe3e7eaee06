"""File writes that respect the destination: regular files are replaced atomically.

A regular file (or a new name) is written atomically -- a reader sees the old
file or the complete new one, never a part.  Anything else is written
through, as ``open`` would: ``-`` is standard output, and a device
(``/dev/null``, ``/dev/full``), a FIFO or a socket (``/dev/stdout``) is opened
and written in place, never replaced by a file.  A directory is refused, and
so is a missing parent directory when ``make_dirs=False``; every error names
the destination, never the temporary file.

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
import stat
import sys
from pathlib import Path

__all__ = ["WriteError", "atomic_write"]


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


class WriteError(OSError):
    """A write failed; the message names the destination (``errno`` is kept)."""


def _is_write_error(err) -> bool:
    """A raw system error of a write (ENOSPC, EIO, ...), not an exception of the
    caller's own (a DownloadError, a checksum refusal) that passes through as is."""
    return type(err) is OSError and err.errno is not None


def _named(err, path):
    if isinstance(err, WriteError):
        return err
    out = WriteError(f"cannot write {path}: {err.strerror or err}")
    out.errno = err.errno
    return out


def _kind(path):
    """"stdout", "through" (device, FIFO, socket), "dir", or "file" (regular or new)."""
    if str(path) == "-":
        return "stdout"
    try:
        mode = os.stat(path).st_mode           # follows symbolic links
    except FileNotFoundError:
        return "file"
    except OSError:
        return "file"
    if stat.S_ISDIR(mode):
        return "dir"
    return "file" if stat.S_ISREG(mode) else "through"


@contextlib.contextmanager
def _through(path, mode, encoding, newline):
    """Write into ``path`` as it is (stdout, a device, a FIFO)."""
    if str(path) == "-":
        fh = sys.stdout.buffer if mode == "wb" else sys.stdout
        try:
            yield fh
            fh.flush()
        except OSError as e:
            if not _is_write_error(e):
                raise
            raise _named(e, "standard output") from None
        return
    try:
        fh = (open(path, "wb") if mode == "wb"
              else open(path, "w", encoding=encoding or "utf-8", newline=newline))
    except OSError as e:
        raise _named(e, path) from None
    try:
        with fh:
            yield fh
            fh.flush()
    except OSError as e:
        if not _is_write_error(e):
            raise
        raise _named(e, path) from None


def _destination(path, kind, make_dirs):
    """The regular file to replace: a directory is refused, a symbolic link is
    followed (the link stays), a missing parent is created or refused."""
    if kind == "dir":
        raise IsADirectoryError(f"cannot write {path}: it is a directory; give a file name")
    if path.is_symlink():
        path = Path(os.path.realpath(path))     # write the target, keep the link
    if not path.parent.is_dir():
        if not make_dirs:
            raise FileNotFoundError(f"cannot write {path}: the directory {path.parent} "
                                    f"does not exist; create it first")
        path.parent.mkdir(parents=True, exist_ok=True)
    _remove_orphans(path)
    return path


def _open_temporary(path, mode, encoding, newline):
    """``(tmp, file object)``: a new temporary file beside ``path`` with its
    permission bits."""
    try:
        mode_bits = os.stat(path).st_mode & 0o7777
    except OSError:
        mode_bits = None
    tmp = path.with_name(f".{path.name}.{os.getpid()}-{os.urandom(6).hex()}.tmp")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0),
                     0o666)
    except OSError as e:
        raise _named(e, path) from None
    try:
        if mode_bits is not None:
            os.chmod(tmp, mode_bits)
        if mode == "w":
            return tmp, os.fdopen(fd, "w", encoding=encoding or "utf-8", newline=newline)
        return tmp, os.fdopen(fd, "wb")
    except BaseException:
        os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


@contextlib.contextmanager
def atomic_write(path, mode="wb", *, encoding=None, newline=None, durable=True,
                 make_dirs=True):
    """Write ``path`` atomically through a temporary file in the same directory.

    Parameters
    ----------
    path : str or path-like
        Destination: a file (replaced atomically), ``-`` (standard output), or
        a device, FIFO or socket (written through).
    mode : {"wb", "w"}, default "wb"
        Binary or text writing.
    encoding, newline : str or None
        As in :func:`open`, for text mode (``encoding`` defaults to UTF-8).
    durable : bool, default True
        fsync the file before the rename and the directory after it, so the new
        content survives a power loss once this block has exited.
    make_dirs : bool, default True
        Create missing parent directories; False refuses them with an error
        naming the directory (the command line never creates directories).

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
    kind = _kind(path)
    if kind in ("stdout", "through"):
        with _through(path, mode, encoding, newline) as fh:
            yield fh
        return
    path = _destination(Path(path), kind, make_dirs)
    tmp, fh = _open_temporary(path, mode, encoding, newline)
    try:
        with fh:
            yield fh
            fh.flush()
            if durable:
                os.fsync(fh.fileno())
        os.replace(tmp, path)
    except OSError as e:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if not _is_write_error(e):
            raise
        raise _named(e, path) from None
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    if durable:
        _fsync_dir(path.parent)
