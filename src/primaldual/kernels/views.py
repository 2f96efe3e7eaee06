"""How the kernels read the data: their structured arguments and the two row
operations.

A kernel takes a few NamedTuples instead of a long list of loose arrays (Numba
compiles a NamedTuple of arrays and scalars into a struct passed by value), and
reads a row with :func:`row_dot` and writes with :func:`row_axpy`, inlined, on
the CSR-shaped layout of :mod:`primaldual.rows` (dense and sparse alike).
"""
from __future__ import annotations

from typing import NamedTuple

from numba import njit

__all__ = ["RowsView", "StepSpec", "ProxWork", "row_dot", "row_axpy"]


class RowsView(NamedTuple):
    """What a step reads of the data: the CSR-shaped rows (see
    :mod:`primaldual.rows`), ``||x_i||^2``, the labels and the sample weights."""
    data: object
    indices: object
    indptr: object
    iptr: object
    sqnorm: object
    y: object
    cw: object


class StepSpec(NamedTuple):
    """The coordinate problem: loss code and parameter, ``lam``, ``l1``, ``1/W``."""
    kind: int
    param: float
    lam: float
    l1: float
    inv_W: float


class ProxWork(NamedTuple):
    """Work arrays of the elastic-net step (:func:`prox_dual_step`); empty, or
    None in their place, when ``l1 = 0``."""
    keys: object
    dA: object
    dB: object
    heap: object




# ------------------------------------------------ the two row operations

@njit(cache=True, nogil=True, inline="always")
def row_dot(data, indices, start, end, off, w):
    """``x_i . w`` for the row stored at ``data[start:end]`` (indices at ``+ off``)."""
    a = 0.0
    for k in range(start, end):
        a += data[k] * w[indices[k + off]]
    return a


@njit(cache=True, nogil=True, inline="always")
def row_axpy(coef, data, indices, start, end, off, out):
    """``out += coef * x_i`` for the same row layout as :func:`row_dot`."""
    for k in range(start, end):
        out[indices[k + off]] += coef * data[k]
