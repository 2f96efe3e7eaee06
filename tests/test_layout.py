"""Size limits of the source, checked with ``ast`` (nothing is imported).

* No file under src/ has more than 600 lines, except a kernel module.
* No function or method has more than 80 lines, except a kernel.
* No kernel has more than 100 lines.

Definitions:

* a **kernel** is a function compiled by numba: decorated with ``njit``,
  ``jit``, ``vectorize``, ``guvectorize``, ``cfunc`` or ``intrinsic`` (bare,
  called, or as ``numba.<name>`` / ``numba.extending.<name>``);
* a **kernel module** is a module under ``primaldual/kernels/``, or a module
  ``kernels.py`` (or a module of a package ``kernels/``) inside a method
  package such as ``primaldual/solvers/dso/``, that defines at least one kernel;
* a function's length is the lines from its ``def`` to its last line,
  docstring included, decorators excluded.  A nested function counts inside
  its parent and on its own.
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"
PKG = "primaldual"

MAX_FILE_LINES = 600
MAX_FUNCTION_LINES = 80
MAX_KERNEL_LINES = 100
KERNEL_DECORATORS = {"njit", "jit", "vectorize", "guvectorize", "cfunc", "intrinsic"}


def _decorator_name(node):
    if isinstance(node, ast.Call):
        node = node.func
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Name):
        return node.id
    return None


def is_kernel(func) -> bool:
    """True for a function compiled by numba (see the module docstring)."""
    return any(_decorator_name(d) in KERNEL_DECORATORS for d in func.decorator_list)


def functions(tree):
    """Every function and method of a module, nested ones included, as
    ``(qualified name, node)``."""
    out = []

    def visit(node, prefix):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                name = prefix + child.name
                out.append((name, child))
                visit(child, name + ".")
            elif isinstance(child, ast.ClassDef):
                visit(child, prefix + child.name + ".")
            else:
                visit(child, prefix)

    visit(tree, "")
    return out


def length(func) -> int:
    """Lines from the ``def`` to the function's last line (docstring included)."""
    return func.end_lineno - func.lineno + 1


def in_kernel_place(rel: Path) -> bool:
    """Whether a path relative to src/ may hold a kernel module: under
    primaldual/kernels/, or a ``kernels`` module or package below primaldual/."""
    parts = rel.with_suffix("").parts
    if parts[:2] == (PKG, "kernels"):
        return True
    return "kernels" in parts[2:]


def is_kernel_module(rel: Path, tree) -> bool:
    return in_kernel_place(rel) and any(is_kernel(f) for _, f in functions(tree))


def check_file(rel: Path, text: str) -> list:
    """The size-limit violations of one source file, as text lines."""
    tree = ast.parse(text)
    problems = []
    n_lines = len(text.splitlines())
    if n_lines > MAX_FILE_LINES and not is_kernel_module(rel, tree):
        problems.append(f"{rel}: {n_lines} lines (at most {MAX_FILE_LINES} outside kernel "
                        f"modules)")
    for name, func in functions(tree):
        n = length(func)
        if is_kernel(func):
            if n > MAX_KERNEL_LINES:
                problems.append(f"{rel}:{func.lineno} kernel {name}: {n} lines (at most "
                                f"{MAX_KERNEL_LINES})")
        elif n > MAX_FUNCTION_LINES:
            problems.append(f"{rel}:{func.lineno} {name}: {n} lines (at most "
                            f"{MAX_FUNCTION_LINES} outside kernels)")
    return problems


def source_files():
    return sorted((SRC / PKG).rglob("*.py"))


# ------------------------------------------------------------------- the tests
def test_the_source_keeps_the_size_limits():
    problems = []
    for path in source_files():
        problems += check_file(path.relative_to(SRC), path.read_text())
    assert not problems, "\n".join(problems)


# ----------------------------------------------- the checker catches what it should
def _body(n):
    """``n`` lines of a function body."""
    return "".join(f"    x{k} = {k}\n" for k in range(n))


def test_a_long_function_fails_and_a_long_kernel_is_allowed_to_100_lines():
    src = ("from numba import njit\n\n"
           "def ok():\n" + _body(79) +
           "def long():\n" + _body(80) +
           "class A:\n    def method(self):\n" + _body(85).replace("\n    ", "\n        ")
           .replace("    x0", "        x0", 1) +
           "@njit(cache=True, nogil=True)\ndef kern():\n" + _body(99) +
           "@numba.njit\ndef kern_long():\n" + _body(100))
    problems = check_file(Path("primaldual/solvers/x.py"), src)
    assert [p.split(" ", 1)[1].split(":")[0] for p in problems] == [
        "long", "A.method", "kernel kern_long"]
    assert "81 lines (at most 80 outside kernels)" in problems[0]
    assert "101 lines (at most 100)" in problems[2]


def test_the_docstring_counts_and_the_decorator_does_not():
    doc = '    """' + "\n".join(["doc"] * 40) + '"""\n'
    src = "@decorator\n@other(1)\ndef f():\n" + doc + _body(40)
    (name, func), = functions(ast.parse(src))
    assert length(func) == 1 + 40 + 40
    assert check_file(Path("primaldual/a.py"), src) == [
        "primaldual/a.py:3 f: 81 lines (at most 80 outside kernels)"]


def test_a_long_file_fails_unless_it_is_a_kernel_module():
    plain = "x = 1\n" * 601
    kernel = "from numba import njit\n@njit\ndef k():\n    return 1\n" + plain
    assert check_file(Path("primaldual/solvers/x.py"), plain) == [
        "primaldual/solvers/x.py: 601 lines (at most 600 outside kernel modules)"]
    assert check_file(Path("primaldual/kernels/x.py"), kernel) == []
    assert check_file(Path("primaldual/solvers/dso/kernels.py"), kernel) == []
    assert check_file(Path("primaldual/solvers/sdca/kernels/pass_.py"), kernel) == []
    # a kernel module defines a kernel; a long plain module under kernels/ fails
    assert len(check_file(Path("primaldual/kernels/x.py"), plain)) == 1
    # a kernel outside a kernel place does not exempt its module
    assert len(check_file(Path("primaldual/solvers/x.py"), kernel)) == 1


@pytest.mark.parametrize("rel, kernel_place", [
    ("primaldual/kernels/sdca.py", True), ("primaldual/solvers/dso/kernels.py", True),
    ("primaldual/solvers/sdca/kernels/step.py", True), ("primaldual/solvers/dso/solver.py",
                                                        False),
    ("primaldual/kernelsx.py", False), ("primaldual/estimators.py", False)])
def test_kernel_places(rel, kernel_place):
    assert in_kernel_place(Path(rel)) is kernel_place
