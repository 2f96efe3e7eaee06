"""Compressed data files, recognised by their first bytes (never by the file name).

A LIBSVM file starts with a label (a digit, a sign, a point) or a comment, so
none of these magic numbers can start a plain text data file.
"""

from __future__ import annotations

import bz2
import gzip
import lzma
import os
import zipfile
from pathlib import Path

__all__ = ["COMPRESSION_MAGIC", "UnsupportedCompressionError", "detect_compression",
           "open_decompressed"]

#: Magic numbers: format name -> leading bytes.
COMPRESSION_MAGIC = {
    "gzip": b"\x1f\x8b",
    "bzip2": b"BZh",
    "xz": b"\xfd7zXZ\x00",
    "zip": b"PK\x03\x04",
    "zstd": b"\x28\xb5\x2f\xfd",
}
_READERS = {"gzip": gzip.open, "bzip2": bz2.open, "xz": lzma.open}


class UnsupportedCompressionError(ValueError):
    """The file is compressed in a format that cannot be read here."""


def detect_compression(source):
    """The compression format of a file or of its first bytes.

    Parameters
    ----------
    source : str, path-like or bytes
        A file name (its first bytes are read) or the leading bytes themselves.

    Returns
    -------
    {"gzip", "bzip2", "xz", "zip", "zstd"} or None
        None for anything else (plain text included).
    """
    if isinstance(source, (bytes, bytearray, memoryview)):
        head = bytes(source[:8])
    else:
        with open(os.fspath(source), "rb") as f:
            head = f.read(8)
    for name, magic in COMPRESSION_MAGIC.items():
        if head.startswith(magic):
            return name
    return None


def open_decompressed(path):
    """Open ``path`` for binary reading, decompressing it when its content says so.

    gzip, bzip2 and xz are streamed; a zip archive is read when it holds exactly
    one file. Anything else is opened as it is.

    Raises
    ------
    UnsupportedCompressionError
        A zip archive with zero or several files, or a zstd stream (no reader in the
        standard library); the message says what to do.
    """
    path = Path(path)
    kind = detect_compression(path)
    if kind in _READERS:
        return _READERS[kind](path, "rb")
    if kind == "zip":
        zf = zipfile.ZipFile(path)
        try:
            names = [i.filename for i in zf.infolist() if not i.is_dir()]
            if len(names) != 1:
                shown = ", ".join(names[:5]) + (", ..." if len(names) > 5 else "")
                raise UnsupportedCompressionError(
                    f"{path}: a zip archive must hold exactly one data file to be read "
                    f"directly, this one holds {len(names)}" + (f" ({shown})" if names else "")
                    + "; extract the file you want and pass it instead")
            return zf.open(names[0])      # keeps the archive open until it is closed
        finally:
            zf.close()
    if kind == "zstd":
        raise UnsupportedCompressionError(
            f"{path}: zstd-compressed data cannot be read here; decompress it first "
            f"(zstd -d {path.name}) or recompress it with gzip, bzip2 or xz")
    return open(path, "rb")
