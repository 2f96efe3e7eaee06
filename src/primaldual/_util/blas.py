"""BLAS on one thread while a serial solver's dense linear algebra runs.

The Newton solvers' explicit Hessians and the interior-point method's ``d x d``
systems are formed by BLAS; on a busy 2-core machine a multithreaded BLAS was
measured 10-100x slower than one thread for ``X^T D X``.  The limit is
reference counted, so concurrent one-vs-rest solves share it.  threadpoolctl
(a scikit-learn dependency) is imported on first use.
"""
from __future__ import annotations

import threading
from contextlib import contextmanager

_BLAS_LOCK = threading.Lock()
_BLAS = {"controller": None, "depth": 0, "limiter": None}


def serial_blas_enter():
    """Limit BLAS to one thread until the matching :func:`serial_blas_exit`."""
    with _BLAS_LOCK:
        if _BLAS["depth"] == 0:
            if _BLAS["controller"] is None:
                from threadpoolctl import ThreadpoolController
                _BLAS["controller"] = ThreadpoolController()
            _BLAS["limiter"] = _BLAS["controller"].limit(limits=1, user_api="blas")
        _BLAS["depth"] += 1


def serial_blas_exit():
    with _BLAS_LOCK:
        _BLAS["depth"] -= 1
        if _BLAS["depth"] == 0:
            _BLAS["limiter"].restore_original_limits()
            _BLAS["limiter"] = None


@contextmanager
def serial_blas(enabled=True):
    """:func:`serial_blas_enter` / :func:`serial_blas_exit` around a block
    (nothing when ``enabled`` is false)."""
    if not enabled:
        yield
        return
    serial_blas_enter()
    try:
        yield
    finally:
        serial_blas_exit()
