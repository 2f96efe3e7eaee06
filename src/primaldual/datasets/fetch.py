"""Finding dataset files on disk and downloading them, verified, into the cache.

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
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import sys
import urllib.request
from pathlib import Path

from .._extras import have, require
from .._util import atomic_write

from .registry import REGISTRY, resolve, subset_files

__all__ = ["ChecksumError", "DownloadError", "UnverifiedDownloadError", "available",
           "available_real", "cache_dir", "download", "find", "search_path",
           "shared_data_dirs"]


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
    ds = resolve(name)
    files = subset_files(ds, subset)
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


def _checked_sha256(url, dest, sha256, allow_unverified):
    """``sha256`` as 64 lower-case hex digits, or None when ``allow_unverified``."""
    if sha256 is None:
        if not allow_unverified:
            raise UnverifiedDownloadError(
                f"refusing to download {url} to {dest}: no sha256 was given to verify it. "
                "Pass allow_unverified=True to accept an unverified file.")
        return None
    sha256 = str(sha256).strip().lower()
    if len(sha256) != 64 or any(c not in "0123456789abcdef" for c in sha256):
        raise ValueError(f"sha256 must be 64 hex digits, got {sha256!r}")
    return sha256


def _stream(resp, out, chunk_size, bar_spec):
    """Copy ``resp`` to ``out`` in chunks while hashing; ``bar_spec = (total,
    name)`` shows a tqdm bar on stderr.  Returns ``(sha256 hex digest, bytes)``."""
    h = hashlib.sha256()
    nbytes = 0
    bar = None
    if bar_spec:
        tqdm = require("tqdm.auto", "progress=True").tqdm
        bar = tqdm(total=bar_spec[0], unit="B", unit_scale=True, desc=bar_spec[1],
                   file=sys.stderr, leave=False)
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
    return h.hexdigest(), nbytes


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
    sha256 = _checked_sha256(url, dest, sha256, allow_unverified)
    if progress is None:
        progress = bool(getattr(sys.stderr, "isatty", lambda: False)()) and have("tqdm")
    announced = None
    with atomic_write(dest) as out:       # any error below discards the partial file
        with urllib.request.urlopen(url, timeout=timeout) as resp:
            length = getattr(resp, "headers", {}).get("Content-Length")
            if length is not None and str(length).strip().isdigit():
                announced = int(length)
            got, nbytes = _stream(resp, out, chunk_size, progress and (announced, dest.name))
        if announced is not None and nbytes != announced:
            raise DownloadError(
                f"download of {url} is truncated: got {nbytes} bytes, the server "
                f"announced {announced}")
        if sha256 is not None and got != sha256:
            raise ChecksumError(
                f"checksum mismatch for {url}: expected sha256 {sha256}, got {got} "
                f"({nbytes} bytes); the file was discarded",
                url=url, expected=sha256, got=got)
        if sha256 is None and expected_size is not None and nbytes != expected_size:
            raise DownloadError(
                f"download of {url} has {nbytes} bytes, expected {expected_size}")
    return dest
