"""``primaldual bench``: solvers and peers side by side on a grid of problems.

- :mod:`.config`   experiments (TOML or presets): datasets x losses x lams x solvers x seeds
- :mod:`.data`     loading, cutting and scaling the data sets
- :mod:`.peers`    adapters to LIBLINEAR, scikit-learn and lightning
- :mod:`.harness`  reference optima, runs, traces on disk
- :mod:`.report`   environment facts, summaries, Markdown tables
- :mod:`.plots`    figures in the papers' style
- :mod:`.presets`  named benchmarks (``sdca-paper``, ...)
- :mod:`.cli`      the command line
"""
from .config import BenchConfig, load_config, parse_config
from .harness import BenchResult, compute_reference, run_bench

__all__ = ["BenchConfig", "BenchResult", "load_config", "parse_config", "run_bench",
           "compute_reference"]
