"""The README's code blocks run as written.

Every fenced ``python`` block runs in a fresh interpreter and every fenced
``bash`` block in bash (``set -euo pipefail``), in order, in one temporary
directory, so a later block may use the files an earlier one wrote (the quick
start writes ``wine.svm`` for the command-line example).  The ``primaldual``
command is this checkout's (a shim on PATH that runs ``python -m primaldual``).
Blocks that read ``../shared/data`` are skipped when it is absent; ``text``
blocks (make targets, synopses) are not run.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile

import pytest

from conftest import REPO, SHARED_DATA

NUMBA_CACHE = os.environ.get("NUMBA_CACHE_DIR") or os.path.join(
    tempfile.gettempdir(), "primaldual-test-numba-cache")


def readme_blocks():
    text = (REPO / "README.md").read_text()
    return [(m.group(1), m.group(2)) for m in
            re.finditer(r"^```(\w*)\n(.*?)^```", text, flags=re.S | re.M)]


def test_readme_has_the_runnable_blocks():
    langs = [lang for lang, _ in readme_blocks()]
    assert langs.count("python") >= 2 and langs.count("bash") >= 1
    # the two commands come first
    assert readme_blocks()[0][1].splitlines()[0].startswith("make demo")
    assert readme_blocks()[0][1].splitlines()[1].startswith("make test")


def test_readme_has_no_development_narrative():
    text = (REPO / "README.md").read_text().lower()
    for phrase in ("this round", "re-measured", "re-run this", "made in this", "old default",
                   "until this change", "fixed since", "session", "issue "):
        assert phrase not in text, phrase


def test_readme_code_blocks_run(tmp_path):
    shim = tmp_path / "bin" / "primaldual"
    shim.parent.mkdir()
    shim.write_text(f"#!/bin/sh\nexec {sys.executable} -m primaldual \"$@\"\n")
    shim.chmod(0o755)
    work = tmp_path / "work"
    work.mkdir()
    env = dict(os.environ, PYTHONPATH=str(REPO / "src"), NUMBA_CACHE_DIR=NUMBA_CACHE,
               PATH=f"{shim.parent}{os.pathsep}{os.environ.get('PATH', '')}",
               MPLBACKEND="Agg")
    ran = 0
    for k, (lang, code) in enumerate(readme_blocks()):
        if lang not in ("python", "bash"):
            continue
        if "shared/data" in code and not SHARED_DATA.is_dir():
            continue
        if lang == "python":
            cmd = [sys.executable, "-c", code]
        else:
            cmd = ["bash", "-c", "set -euo pipefail\n" + code]
        p = subprocess.run(cmd, cwd=work, env=env, capture_output=True, text=True,
                           timeout=600)
        assert p.returncode == 0, (f"README block {k} ({lang}) failed:\n{code}\n"
                                   f"--- stdout\n{p.stdout}\n--- stderr\n{p.stderr}")
        ran += 1
    assert ran >= 3
    assert (work / "model.npz").is_file() and (work / "wine.npz").is_file()
