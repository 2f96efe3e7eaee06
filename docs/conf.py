"""Sphinx configuration: the API reference (autodoc + numpydoc) and the user
guide pages of docs/ (Markdown, through MyST).  Builds offline: no
intersphinx, no remote images, no network access of any kind."""
import os
import sys
from importlib import metadata

sys.path.insert(0, os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "src")))

project = "primaldual"
author = "the primaldual authors"
copyright = "primaldual authors, BSD-3-Clause"
try:
    release = metadata.version("primaldual")
except metadata.PackageNotFoundError:  # building from a checkout that is not installed
    release = "0.1.0"
version = release

extensions = [
    "sphinx.ext.autodoc",
    "numpydoc",
    "myst_parser",
]
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "figures/*.txt"]

autodoc_default_options = {"members": False, "undoc-members": False}
autodoc_typehints = "none"
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_validation_checks = set()
numpydoc_xref_param_type = False

# the guide pages link to files of the repository (benchmarks/results/..., src/...)
# that are not part of the rendered documentation
suppress_warnings = ["myst.xref_missing", "myst.header", "misc.highlighting_failure"]
myst_heading_anchors = 3
# literal blocks without a language are formulas and plain text, not Python
highlight_language = "text"

html_theme = "alabaster"
html_theme_options = {"nosidebar": False}
html_static_path = []


def _parses_cleanly(text):
    """True when docutils reads ``text`` without a warning or error."""
    import io

    from docutils.core import publish_doctree
    stream = io.StringIO()
    try:
        publish_doctree(text, settings_overrides={"warning_stream": stream,
                                                  "report_level": 2, "halt_level": 5})
    except Exception:                  # noqa: BLE001 - any failure: show it verbatim
        return False
    return not stream.getvalue()


def _verbatim_solver_docs(app, what, name, obj, options, lines):
    """Solver module docstrings are written as plain text with ASCII formulas; one
    that is not valid reStructuredText is shown as it is written (a literal block)
    rather than mis-rendered."""
    if what != "module" or not name.startswith("primaldual.solvers.") or not lines:
        return
    if _parses_cleanly("\n".join(lines)):
        return
    body = ["::", ""] + ["    " + ln if ln.strip() else "" for ln in lines] + [""]
    lines[:] = body


def setup(app):
    app.connect("autodoc-process-docstring", _verbatim_solver_docs)
