"""Status codes returned by every compiled kernel (one set of values for all of them).

A kernel returns a code; the Python driver that called it decides what to do
(raise, refill a buffer, take a snapshot). Each code has one meaning everywhere:

======================  =====  =================================================
``STATUS_OK``             0    the requested work was done
``STATUS_SNAPSHOT``       1    stopped right after the step to snapshot
                               (SDCA's random output); resume where it stopped
``STATUS_NONFINITE``      2    a non-finite value appeared; the driver raises
``STATUS_ABORTED``        3    another thread raised the abort flag
``STATUS_NEED_UNIFORMS``  4    the buffer of uniforms ran out: refill, call again
======================  =====  =================================================

The values are compiled into the cached kernels as constants: never change one.
"""

STATUS_OK = 0
STATUS_SNAPSHOT = 1
STATUS_NONFINITE = 2
STATUS_ABORTED = 3
STATUS_NEED_UNIFORMS = 4

__all__ = ["STATUS_ABORTED", "STATUS_NEED_UNIFORMS", "STATUS_NONFINITE", "STATUS_OK",
           "STATUS_SNAPSHOT"]
