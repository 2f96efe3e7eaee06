# primaldual: `make demo` and `make test` do all the set-up on a fresh machine.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
export NUMBA_CACHE_DIR ?= $(CURDIR)/.numba_cache

.PHONY: demo test install bench bench-peers clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e ".[test,bench]"
	touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	$(PY) -m primaldual demo $(DEMO_ARGS)

test: $(STAMP)
	$(PY) -m pytest -q $(PYTEST_ARGS)

# lightning (sklearn-contrib-lightning 0.6.2, the last release) builds only with
# Cython < 3 and without build isolation; it is an optional benchmark peer.
bench-peers: $(STAMP)
	$(PY) -m pip install --quiet "cython<3"
	$(PY) -m pip install --quiet --no-build-isolation sklearn-contrib-lightning

bench: bench-peers
	$(PY) benchmarks/bench_speed.py

clean:
	rm -rf $(VENV) .numba_cache .pytest_cache build src/*.egg-info
