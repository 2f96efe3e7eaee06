"""Every code example in README.md and docs/*.md runs as written.

* README.md: every fenced ``python`` block runs as a script file (``python
  block.py``, the way a user saves it) and every ``bash`` block in bash
  (``set -euo pipefail``), in order, in one temporary directory, so a later
  block may use the files an earlier one wrote (the quick start writes
  ``wine.svm`` for the command-line example).  The ``primaldual`` command is
  this checkout's (a shim on PATH that runs ``python -m primaldual``).
* docs/*.md: every fenced ``python`` block runs as a script file in its own
  temporary directory.  A block whose first line is ``# continues the block
  above`` runs after the blocks it continues (a tutorial's next step); a block
  whose first line is ``# not run: <reason>`` is not run (it needs what a test
  machine has not, e.g. a remote TLS scheduler), and the reason must be given.

Running as a file is what catches a Dask example without an
``if __name__ == "__main__":`` guard (its worker processes re-import the
script).  The shared data folder is passed as ``$PRIMALDUAL_DATA``; a block
that reads it is skipped with a reason when it is absent.  ``bash`` blocks of
docs/*.md (shell set-up such as openssl) and ``text`` blocks are not run.
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
CONTINUES = "# continues the block above"
NOT_RUN = "# not run:"
#: what a block that reads the shared data folder calls
NEEDS_DATA = re.compile(r"shared/data|datasets\.(load|find|info|load_shared_regime)\(")
DOC_PAGES = sorted((REPO / "docs").glob("*.md"))
TIMEOUT = 600


def code_blocks(path):
    """``(language, code, line)`` of every fenced block of a Markdown file."""
    text = path.read_text()
    return [(m.group(1), m.group(2), text.count("\n", 0, m.start()) + 1) for m in
            re.finditer(r"^```(\w*)\n(.*?)^```", text, flags=re.S | re.M)]


def readme_blocks():
    return [(lang, code) for lang, code, _ in code_blocks(REPO / "README.md")]


def doc_scripts():
    """One ``pytest.param(script, id="page.md:line")`` per python block of docs/*.md."""
    params = []
    for page in DOC_PAGES:
        chain = []
        for lang, code, line in code_blocks(page):
            if lang != "python":
                continue
            first = code.splitlines()[0] if code.strip() else ""
            chain = chain + [code] if first.startswith(CONTINUES) else [code]
            marks = ()
            if first.startswith(NOT_RUN):
                marks = pytest.mark.skip(reason=first[len(NOT_RUN):].strip())
            params.append(pytest.param("\n".join(chain), id=f"{page.name}:{line}",
                                       marks=marks))
    return params


def _env(tmp_path):
    shim = tmp_path / "bin" / "primaldual"
    shim.parent.mkdir(exist_ok=True)
    shim.write_text(f"#!/bin/sh\nexec {sys.executable} -m primaldual \"$@\"\n")
    shim.chmod(0o755)
    env = dict(os.environ, PYTHONPATH=str(REPO / "src"), NUMBA_CACHE_DIR=NUMBA_CACHE,
               PATH=f"{shim.parent}{os.pathsep}{os.environ.get('PATH', '')}",
               MPLBACKEND="Agg")
    if SHARED_DATA.is_dir():
        env["PRIMALDUAL_DATA"] = str(SHARED_DATA)
    return env


def _run_python(code, cwd, env, name="block.py"):
    script = cwd / name
    script.write_text(code)
    return subprocess.run([sys.executable, str(script)], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=TIMEOUT)


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
    env = _env(tmp_path)
    work = tmp_path / "work"
    work.mkdir()
    ran = 0
    for k, (lang, code) in enumerate(readme_blocks()):
        if lang not in ("python", "bash"):
            continue
        if "shared/data" in code and not SHARED_DATA.is_dir():
            continue
        if lang == "python":
            p = _run_python(code, work, env, name=f"readme_block_{k}.py")
        else:
            p = subprocess.run(["bash", "-c", "set -euo pipefail\n" + code], cwd=work,
                               env=env, capture_output=True, text=True, timeout=TIMEOUT)
        assert p.returncode == 0, (f"README block {k} ({lang}) failed:\n{code}\n"
                                   f"--- stdout\n{p.stdout}\n--- stderr\n{p.stderr}")
        ran += 1
    assert ran >= 3
    assert (work / "model.npz").is_file() and (work / "wine.npz").is_file()


def test_dask_examples_have_a_main_guard():
    """A Dask example starts worker processes that re-import the script: every
    block that makes a LocalCluster keeps it under ``if __name__ == "__main__":``."""
    pages = [REPO / "README.md", *DOC_PAGES]
    found = 0
    for page in pages:
        for lang, code, line in code_blocks(page):
            if lang == "python" and "LocalCluster(" in code:
                found += 1
                assert 'if __name__ == "__main__":' in code, f"{page.name}:{line}"
    assert found >= 2


def test_every_skipped_block_says_why():
    skipped = [(page.name, line, code.splitlines()[0]) for page in DOC_PAGES
               for lang, code, line in code_blocks(page)
               if lang == "python" and code.startswith(NOT_RUN)]
    for name, line, first in skipped:
        assert len(first[len(NOT_RUN):].strip()) > 20, f"{name}:{line} gives no reason"
    assert len(skipped) <= 2, skipped        # the exception, not the rule


@pytest.mark.parametrize("code", doc_scripts())
def test_docs_python_blocks_run(code, tmp_path):
    if NEEDS_DATA.search(code) and not SHARED_DATA.is_dir():
        pytest.skip(f"the block reads the shared data folder, absent at {SHARED_DATA}")
    p = _run_python(code, tmp_path, _env(tmp_path))
    assert p.returncode == 0, (f"block failed:\n{code}\n--- stdout\n{p.stdout}\n"
                               f"--- stderr\n{p.stderr}")
