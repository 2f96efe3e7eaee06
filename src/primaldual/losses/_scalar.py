"""What the loss modules share: the ``scalar`` and ``op`` decorators and small
math helpers.

``scalar`` compiles a function that is called from compiled code only: without
the CPython and C-callable wrappers Numba compiles it about a fifth faster,
which the first fit in a fresh process (empty cache) waits for
(benchmarks/bench_startup.py).  ``op`` marks a loss module's operation: Numba
inlines it into the dispatch function of :mod:`.dispatch` that calls it, so
each operation compiles once for all the registered losses rather than once
per loss and once more for the dispatch.
"""
from __future__ import annotations

import math

from numba import njit

scalar = njit(cache=True, nogil=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)
op = njit(cache=True, nogil=True, inline="always", no_cpython_wrapper=True,
          no_cfunc_wrapper=True)


@scalar
def clip(x, lo, hi):
    """``x`` held in ``[lo, hi]``."""
    if x < lo:
        return lo
    if x > hi:
        return hi
    return x


@scalar
def softplus(z):
    """log(1 + exp(z)) without overflow."""
    if z > 0.0:
        return z + math.log1p(math.exp(-z))
    return math.log1p(math.exp(z))


@scalar
def sigmoid(z):
    """1 / (1 + exp(-z)) without overflow."""
    if z >= 0.0:
        return 1.0 / (1.0 + math.exp(-z))
    e = math.exp(z)
    return e / (1.0 + e)


@scalar
def xlogx(b):
    """b log b, 0 at b <= 0."""
    if b <= 0.0:
        return 0.0
    return b * math.log(b)
