"""How the command line writes to the terminal: notes on stderr, labels in
messages, numbers in JSON."""
from __future__ import annotations

import math
import sys


def note(req, msg):
    """``primaldual <command>: msg`` on stderr, unless the request is ``--quiet``."""
    if not getattr(req, "quiet", False):
        print(f"primaldual {req.command}: {msg}", file=sys.stderr)


def format_label(v) -> str:
    """A label as the data file writes it: ``2``, ``-1``, ``0.5``; a string label (a
    model saved from Python with string classes) as it is."""
    if isinstance(v, str):                  # numpy.str_ is a str
        return str(v)
    return str(int(v)) if float(v).is_integer() and abs(v) < 2 ** 53 else repr(float(v))


def json_float(v):
    """JSON-safe float: non-finite values become None."""
    v = float(v)
    return v if math.isfinite(v) else None
