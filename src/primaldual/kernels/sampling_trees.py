"""Sampling trees: complete binary trees over ``m`` leaves whose internal nodes
cache an aggregate of their descendants (Hazan, Koren & Srebro 2011,
Section 4, "The sparse case": "we maintain a tree over the points and
coordinates, with internal nodes caching the combined (unnormalized)
probability mass of their descendants").

Layout (one flat float64 array, heap order): ``size`` is the smallest power
of two ``>= m``; the root is ``tree[1]``, node ``k`` has children ``2k`` and
``2k + 1``, and leaf ``i`` is ``tree[size + i]``.  The array has length
``2 * size``.

* A **sum tree** stores nonnegative masses; a point update costs
  ``O(log m)`` (each ancestor is recomputed as ``left + right``, so the
  internal sums are a deterministic function of the leaves and never drift)
  and a draw with probability ``mass_i / total`` costs ``O(log m)`` by
  descending from the root with one uniform number.
* A **min tree** stores keys (``+inf`` for an empty leaf); the root is the
  minimum and :func:`min_tree_argmin` finds a leaf holding it in
  ``O(log m)``, breaking ties towards the smallest or the largest index.

All functions are ``@njit`` and allocation free.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

__all__ = ["tree_size", "sum_tree_build", "sum_tree_update", "sum_tree_sample",
           "min_tree_build", "min_tree_update", "min_tree_argmin"]


def tree_size(m: int) -> int:
    """The number of leaves of a tree over ``m`` items (a power of two >= 1)."""
    size = 1
    while size < m:
        size *= 2
    return size


@njit(cache=True, nogil=True)
def sum_tree_build(tree, values):
    """Fill ``tree`` (length ``2*size``) from ``values`` (length ``m <= size``)."""
    size = tree.shape[0] // 2
    m = values.shape[0]
    for k in range(size):
        tree[size + k] = values[k] if k < m else 0.0
    for k in range(size - 1, 0, -1):
        tree[k] = tree[2 * k] + tree[2 * k + 1]


@njit(cache=True, nogil=True)
def sum_tree_update(tree, i, value):
    """Set the mass of leaf ``i`` to ``value`` and refresh its ancestors."""
    size = tree.shape[0] // 2
    k = size + i
    tree[k] = value
    k //= 2
    while k >= 1:
        tree[k] = tree[2 * k] + tree[2 * k + 1]
        k //= 2


@njit(cache=True, nogil=True)
def sum_tree_sample(tree, u):
    """The leaf reached by descending with ``u * total`` (``u`` uniform in [0, 1)).

    Leaf ``i`` is returned with probability ``tree[size+i] / tree[1]``.  A
    zero-mass leaf is never returned (rounding at a boundary moves to the
    sibling that has mass).  Returns -1 when the total mass is 0.
    """
    size = tree.shape[0] // 2
    total = tree[1]
    if not total > 0.0:
        return -1
    target = u * total
    k = 1
    while k < size:
        left = tree[2 * k]
        right = tree[2 * k + 1]
        if (target < left and left > 0.0) or not right > 0.0:
            k = 2 * k
        else:
            target -= left
            if target < 0.0:
                target = 0.0
            k = 2 * k + 1
    return k - size


@njit(cache=True, nogil=True)
def min_tree_build(tree, keys, member):
    """Fill a min tree: leaf ``i`` holds ``keys[i]`` if ``member[i]`` else ``+inf``."""
    size = tree.shape[0] // 2
    m = keys.shape[0]
    for k in range(size):
        tree[size + k] = keys[k] if (k < m and member[k]) else np.inf
    for k in range(size - 1, 0, -1):
        a = tree[2 * k]
        b = tree[2 * k + 1]
        tree[k] = a if a <= b else b


@njit(cache=True, nogil=True)
def min_tree_update(tree, i, key):
    """Set leaf ``i`` to ``key`` (``+inf`` removes it) and refresh its ancestors."""
    size = tree.shape[0] // 2
    k = size + i
    tree[k] = key
    k //= 2
    while k >= 1:
        a = tree[2 * k]
        b = tree[2 * k + 1]
        tree[k] = a if a <= b else b
        k //= 2


@njit(cache=True, nogil=True)
def min_tree_argmin(tree, prefer_largest_index):
    """Index of a leaf holding the minimum (-1 if the tree is empty).

    Among equal keys the smallest index is returned, or the largest one when
    ``prefer_largest_index``.
    """
    size = tree.shape[0] // 2
    best = tree[1]
    if best == np.inf or math.isnan(best):
        return -1
    k = 1
    while k < size:
        left = tree[2 * k]
        right = tree[2 * k + 1]
        if prefer_largest_index:
            k = 2 * k + 1 if right == best else 2 * k
        else:
            k = 2 * k if left == best else 2 * k + 1
    return k - size
