"""The structured arguments of the kernels.

A kernel takes a few of these instead of a long list of loose arrays: Numba
compiles a NamedTuple of arrays and scalars into a struct passed by value, so
the compiled loop is the same as with the arrays passed one by one.
"""
from __future__ import annotations

from typing import NamedTuple

__all__ = ["RowsView", "StepSpec", "ProxWork"]


class RowsView(NamedTuple):
    """What a step reads of the data: the CSR-shaped rows (see
    :mod:`primaldual.data`), ``||x_i||^2``, the labels and the sample weights."""
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
    """Work arrays of the elastic-net step (:func:`prox_dual_step`); empty when
    ``l1 = 0``."""
    keys: object
    dA: object
    dB: object
    heap: object


