"""Benchmark data (moved into a package; see :mod:`primaldual.datasets.synthetic`)."""
from .synthetic import *  # noqa: F401,F403
from .synthetic import __all__, __doc__  # noqa: F401
from .synthetic import PLANTED_TEXT_SHAPES, _walk_up_for_shared  # noqa: F401
