# primaldual: `make demo` and `make test` do all the set-up on a fresh machine.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
# Numba keys a cached kernel by its own file only, while every kernel inlines the
# loss dispatch generated from src/primaldual/losses/: the cache lives in a folder
# named by a checksum of those files, so a checkout whose losses changed (a pull)
# never runs kernels compiled for the old list of losses.
LOSSES_SUM := $(shell cat src/primaldual/losses/*.py 2>/dev/null | cksum | cut -d' ' -f1)
export NUMBA_CACHE_DIR ?= $(CURDIR)/.numba_cache/losses-$(LOSSES_SUM)

.PHONY: demo test install docs wheel install-check bench bench-peers lightning clean

# The library alone is `pip install .`; the extras dask, plot and progress add
# Dask, matplotlib and tqdm; test, bench and docs install all three.  Every
# target here installs everything, lightning included where it builds.
$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e ".[test,bench,docs]"
	$(MAKE) --no-print-directory lightning
	touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	$(PY) -m primaldual demo $(DEMO_ARGS)

# PRIMALDUAL_REQUIRE_OPTIONAL=1: a test whose optional package is missing fails
# instead of being skipped (everything is installed above)
test: $(STAMP)
	PRIMALDUAL_REQUIRE_OPTIONAL=1 $(PY) -m pytest -q $(PYTEST_ARGS)

# the API reference and the user guide (docs/) as HTML in docs/_build/html;
# warnings are errors and nothing is fetched from the network
docs: $(STAMP)
	$(VENV)/bin/sphinx-build -W --keep-going -q -b html docs docs/_build/html

# a wheel in dist/, installed into a fresh venv outside the source tree, where
# `primaldual demo --quick` must run (checks that the package installs alone)
wheel: $(STAMP)
	rm -rf dist
	$(PY) -m build --wheel --outdir dist .

install-check: wheel
	bash .ci/install-check dist

# lightning (sklearn-contrib-lightning 0.6.2, the last release), a benchmark peer,
# builds only from source with Cython < 3, without build isolation and with
# numpy.distutils (Python < 3.12), so it cannot be an entry of the bench extra;
# it is installed here (with the rest, by every target), and skipped with a note
# on Python >= 3.12.
bench-peers: $(STAMP)

lightning:
	@if $(PY) -c 'import sys; sys.exit(sys.version_info >= (3, 12))'; then \
		{ $(PY) -m pip install --quiet "cython<3" setuptools wheel && \
		  $(PY) -m pip install --quiet --no-build-isolation sklearn-contrib-lightning; } || \
		echo "warning: lightning did not build (needs a C compiler and the Python headers);" \
		     "make test reports it as a failure of tests/test_peer_lightning.py"; \
	else \
		echo "lightning does not build on Python >= 3.12 (numpy.distutils); not installed"; \
	fi

bench: $(STAMP)
	$(PY) benchmarks/bench_speed.py

clean:
	rm -rf $(VENV) .numba_cache .pytest_cache build dist docs/_build src/*.egg-info
