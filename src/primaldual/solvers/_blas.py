"""The solvers' name for :mod:`primaldual._util.blas` (BLAS on one thread
while a serial solver's dense linear algebra runs)."""
from __future__ import annotations

from .._util.blas import serial_blas, serial_blas_enter, serial_blas_exit  # noqa: F401
