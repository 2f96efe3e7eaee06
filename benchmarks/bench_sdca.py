"""Alias of ``benchmarks/bench_speed.py`` (the end-to-end speed table), kept so
old commands keep working: ``python benchmarks/bench_sdca.py [--quick] [...]``
runs ``bench_speed.py`` with the same arguments.

The old SDCA-only table this script wrote subtracted the exact-gap checks from
SDCA's time and excluded LIBLINEAR's data conversion; ``bench_speed.py`` times
every library's whole public call.  See docs/benchmarks.md.
"""
import runpy
import sys
from pathlib import Path

if __name__ == "__main__":
    target = Path(__file__).resolve().with_name("bench_speed.py")
    sys.argv[0] = str(target)
    runpy.run_path(str(target), run_name="__main__")
