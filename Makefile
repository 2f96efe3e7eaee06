# primaldual: `make demo` and `make test` do all the set-up on a fresh machine.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
export NUMBA_CACHE_DIR ?= $(CURDIR)/.numba_cache

.PHONY: demo test install docs wheel install-check bench bench-peers clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e ".[test,bench,docs]"
	touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	$(PY) -m primaldual demo $(DEMO_ARGS)

test: $(STAMP)
	$(PY) -m pytest -q $(PYTEST_ARGS)

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

# lightning (sklearn-contrib-lightning 0.6.2, the last release) builds only with
# Cython < 3 and without build isolation; it is an optional benchmark peer.
bench-peers: $(STAMP)
	$(PY) -m pip install --quiet "cython<3"
	$(PY) -m pip install --quiet --no-build-isolation sklearn-contrib-lightning

bench: bench-peers
	$(PY) benchmarks/bench_speed.py

clean:
	rm -rf $(VENV) .numba_cache .pytest_cache build dist docs/_build src/*.egg-info
