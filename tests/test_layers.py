"""The import layers of primaldual, checked on the source (nothing is imported).

Every module under src/primaldual is parsed with ``ast``:

* every module has a layer in ``LAYERS`` and imports, at module level, only
  modules of its own layer or below;
* no ``import`` of a primaldual module inside a function or method body (such
  an import is how a cycle hides);
* a lazy import of a primaldual module goes through ``primaldual._util.lazy``:
  every ``lazy_module("primaldual.x")`` / ``lazy_attr("primaldual.x", name)``
  call names an existing module with a literal string and counts as a
  module-level import of it (layers and package graph); a non-literal module
  argument is an error;
* ``importlib.import_module`` / ``__import__`` of a primaldual module happens
  only in ``_util/lazy.py``; elsewhere they take a literal third-party name
  (``_extras.require``, which refuses anything but the optional packages, may
  pass its argument on);
* the graph of imports between packages has no cycle.

Imports of optional third-party packages (dask, distributed, matplotlib, tqdm,
snapml, liblinear, lightning) stay lazy inside functions and are not checked.
A new module must be given a layer here (an unmapped module fails), so the map
is kept up to date.
"""
from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"
PKG = "primaldual"

#: The layers, lowest first.  A key ending in ".*" covers a package and every
#: module in it; any other key is one module (and wins over a ".*" key).  A
#: module below may never import a module above.
#:   0 kernels      the numba kernels, also a method package's own (solvers/dso/kernels),
#:                  and the losses' compiled modules, registry and dispatch (losses.*)
#:   1 model        problem, the Loss object (losses, losses.loss), penalties, rows,
#:                  validation, datasets, helpers, the front ends' training data
#:                  (fitdata: intercept column, weights, seeds, storable labels),
#:                  the multiclass problems, extras, and a method package's per-block
#:                  maths that its workers also run (solvers/dso/blocks, solvers/dso/saddle)
#:   2 engines      primaldual.distributed: the partition engines (in process and on
#:                  Dask), Dask actors, partitioned problems, the actor-state engine;
#:                  they import nothing from the solvers
#:   3 solvers      the solvers; they import their engines from layer 2 directly
#:   4 front ends   estimators, regularization path, model files, the Dask
#:                  estimators, CLI, demo, bench, and the package's own __init__ /
#:                  __main__
LAYERS = {
    "primaldual.kernels.*": 0,
    "primaldual.losses.*": 0,
    "primaldual.problem": 1,
    "primaldual.multiclass": 1,
    "primaldual.losses": 1,
    "primaldual.losses.loss": 1,
    "primaldual.penalties": 1,
    "primaldual.rows": 1,
    "primaldual.validation": 1,
    "primaldual.direct_newton": 1,
    "primaldual.fitdata": 1,
    "primaldual.datasets.*": 1,
    "primaldual._util.*": 1,
    "primaldual._extras": 1,
    "primaldual.liblinear_format": 1,
    "primaldual.blocks.*": 1,
    "primaldual.distributed.*": 2,
    "primaldual.solvers.*": 3,
    "primaldual.solvers.dso.kernels": 0,
    "primaldual.solvers.dso.blocks": 1,
    "primaldual.solvers.dso.saddle": 1,
    "primaldual.estimators": 4,
    "primaldual.probability": 4,
    "primaldual.estimators_multiclass": 4,
    "primaldual.regpath": 4,
    "primaldual.estimators_cv": 4,
    "primaldual.model_io": 4,
    "primaldual.dask": 4,
    "primaldual.cli.*": 4,
    "primaldual.demo": 4,
    "primaldual.bench.*": 4,
    "primaldual.__main__": 4,
    "primaldual": 4,
}

#: (module, imported module) pairs allowed inside a function, with the reason.
#: Keep it empty: hoist the import, or move the shared code down a layer.
LOCAL_IMPORT_ALLOWED: dict = {}


# ---------------------------------------------------------------- the checker
def module_name(path: Path, root: Path = SRC) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def all_modules(root: Path = SRC) -> dict:
    """module name -> path, for every .py file of the package."""
    return {module_name(p, root): p for p in sorted((root / PKG).rglob("*.py"))}


def layer_of(module: str, layers: dict = LAYERS):
    """The layer of ``module``, or None when the map does not cover it."""
    if module in layers:
        return layers[module]
    parts = module.split(".")
    for k in range(len(parts), 0, -1):
        key = ".".join(parts[:k]) + ".*"
        if key in layers:
            return layers[key]
    return None


def _resolve(module: str, is_pkg: bool, node, known) -> list:
    """The primaldual modules an import statement loads (a name imported from a
    package counts as its submodule when there is one, else as the package)."""
    if isinstance(node, ast.Import):
        targets = [a.name for a in node.names]
    else:
        if node.level:
            base = module.split(".")
            if not is_pkg:
                base = base[:-1]
            base = base[:len(base) - (node.level - 1)]
            mod = ".".join(base + ([node.module] if node.module else []))
        else:
            mod = node.module or ""
        targets = [f"{mod}.{a.name}" if f"{mod}.{a.name}" in known else mod
                   for a in node.names]
    out = []
    for t in targets:
        if t.split(".")[0] != PKG:
            continue
        while t not in known and "." in t:     # an attribute of a module
            t = t.rpartition(".")[0]
        out.append(t)
    return sorted(set(out))


def scan(source: str, module: str, is_pkg: bool = False, known=None):
    """``(module_level, local)`` primaldual imports of one module's source:
    ``module_level`` a set of module names, ``local`` a list of
    ``(lineno, function, module)`` for imports inside a function body."""
    known = set(all_modules()) if known is None else set(known)
    tree = ast.parse(source)
    top, local = set(), []

    def visit(node, func):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                visit(child, getattr(child, "name", "<lambda>"))
            elif isinstance(child, (ast.Import, ast.ImportFrom)):
                for t in _resolve(module, is_pkg, child, known):
                    if func is None:
                        top.add(t)
                    else:
                        local.append((child.lineno, func, t))
            else:
                visit(child, func)

    visit(tree, None)
    top.discard(module)
    return top, local


LAZY_FUNCS = {"lazy_module", "lazy_attr"}
LAZY_HELPER = "primaldual._util.lazy"
#: modules allowed to call importlib.import_module with a name that is not a
#: literal: the lazy helper itself, and the optional-package helper, whose
#: require() refuses every name that is not an optional third-party package
IMPORT_MODULE_ALLOWED = {"primaldual._util.lazy", "primaldual._extras"}


def _call_name(func):
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return None


def _literal_str(node):
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) \
        else None


def scan_lazy(source: str, module: str, is_pkg: bool = False, known=None):
    """``(lazy, problems)`` of one module's source: ``lazy`` the set of primaldual
    modules it imports through :mod:`primaldual._util.lazy` (checked like
    module-level imports), ``problems`` the lazy-import rules it breaks."""
    known = set(all_modules()) if known is None else set(known)
    tree = ast.parse(source)
    names = set(LAZY_FUNCS)          # lazy_attr / lazy_module, and their aliases
    importers = {"import_module", "__import__"}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and LAZY_HELPER in _resolve(module, is_pkg, node,
                                                                         known):
            names |= {a.asname or a.name for a in node.names if a.name in LAZY_FUNCS}
        if isinstance(node, ast.ImportFrom) and node.module == "importlib" and not node.level:
            importers |= {a.asname or a.name for a in node.names if a.name == "import_module"}
    lazy, problems = set(), []
    if module == LAZY_HELPER:
        return lazy, problems
    calls = sorted((n for n in ast.walk(tree) if isinstance(n, ast.Call)),
                   key=lambda n: (n.lineno, n.col_offset))
    for node in calls:
        fname = _call_name(node.func)
        first = node.args[0] if node.args else next(
            (k.value for k in node.keywords if k.arg in ("module", "name")), None)
        target = None if first is None else _literal_str(first)
        where = f"{module}:{node.lineno}"
        if fname in names and (fname in LAZY_FUNCS or isinstance(node.func, ast.Name)):
            if target is None:
                problems.append(f"{where}: {fname}() takes the module as a literal string")
            elif target not in known:
                problems.append(f"{where}: {fname}({target!r}) names no primaldual module")
            else:
                lazy.add(target)
        elif fname in importers and module not in IMPORT_MODULE_ALLOWED:
            if target is None:
                problems.append(f"{where}: {fname}() of a name that is not a literal string "
                                f"(primaldual modules: primaldual._util.lazy; optional "
                                f"packages: primaldual._extras.require)")
            elif target.split(".")[0] == PKG or target.startswith("."):
                problems.append(f"{where}: {fname}({target!r}) imports a primaldual module "
                                f"outside primaldual._util.lazy (use lazy_module / "
                                f"lazy_attr)")
    lazy.discard(module)
    return lazy, problems


def package_of(module: str) -> str:
    """The node of the package graph: ``primaldual.<first part>`` (the package's
    own ``__init__`` is ``primaldual``)."""
    return ".".join(module.split(".")[:2])


def check(modules: dict, layers: dict = LAYERS, allowed: dict = LOCAL_IMPORT_ALLOWED):
    """Every violation in ``modules`` (name -> source text, or path), as text lines;
    also returns the module-level import graph between packages."""
    known = set(modules)
    problems = []
    graph = defaultdict(set)
    for mod, src in sorted(modules.items()):
        text = src.read_text() if isinstance(src, Path) else src
        is_pkg = (src.name == "__init__.py" if isinstance(src, Path)
                  else any(k.startswith(mod + ".") for k in known))
        top, local = scan(text, mod, is_pkg, known)
        lazy, lazy_problems = scan_lazy(text, mod, is_pkg, known)
        top |= lazy
        problems.extend(lazy_problems)
        for lineno, func, target in local:
            if (mod, target) not in allowed:
                problems.append(f"{mod}:{lineno}: imports {target} inside {func}() "
                                f"(hoist it to module level)")
        lay = layer_of(mod, layers)
        if lay is None:
            problems.append(f"{mod}: no layer in LAYERS (add it to tests/test_layers.py)")
            continue
        for target in sorted(top):
            tl = layer_of(target, layers)
            if tl is not None and tl > lay:
                problems.append(f"{mod} (layer {lay}) imports {target} (layer {tl}) at "
                                f"module level")
            if package_of(target) != package_of(mod):
                graph[package_of(mod)].add(package_of(target))
    cycle = find_cycle(graph)
    if cycle:
        problems.append("package import cycle: " + " -> ".join(cycle))
    return problems, graph


def find_cycle(graph):
    """One cycle of the directed graph as a list of nodes, or None."""
    state = {}

    def dfs(u, path):
        state[u] = 1
        path.append(u)
        for v in sorted(graph.get(u, ())):
            if state.get(v) == 1:
                return path[path.index(v):] + [v]
            if v not in state:
                found = dfs(v, path)
                if found:
                    return found
        path.pop()
        state[u] = 2
        return None

    for u in sorted(graph):
        if u not in state:
            found = dfs(u, [])
            if found:
                return found
    return None


# ------------------------------------------------------------------- the tests
def test_the_package_follows_the_layers():
    problems, _ = check(all_modules())
    assert not problems, "\n".join(problems)


def test_every_layer_key_names_existing_modules():
    mods = all_modules()
    for key in LAYERS:
        if key.endswith(".*"):
            assert any(m == key[:-2] or m.startswith(key[:-1]) for m in mods), key
        else:
            assert key in mods, key


def test_the_engines_never_import_the_solvers():
    """Stated separately: the engines sit below the solvers."""
    for mod, path in all_modules().items():
        if mod.startswith("primaldual.distributed"):
            top, local = scan(path.read_text(), mod, path.name == "__init__.py")
            assert not [t for t in top if t.startswith("primaldual.solvers")], mod
            assert not local, mod


def test_the_solvers_import_their_engines():
    """No registry between the solvers and their engines: the round-based
    solvers build theirs with solvers._rounds.make_engine, DSO and PSGD call
    distributed.actor_engine.actor_engine with their own actor class, all
    imported by name."""
    from primaldual.distributed.actor_engine import actor_engine
    from primaldual.distributed.dask_engine import DaskEngine
    from primaldual.distributed.engine import LocalEngine
    from primaldual.solvers import _rounds, psgd
    from primaldual.solvers.dso import ring as dso_ring

    assert not hasattr(_rounds, "provide_engines") and not hasattr(_rounds, "engine_hook")
    assert _rounds.LocalEngine is LocalEngine and _rounds.DaskEngine is DaskEngine
    assert psgd.actor_engine is actor_engine and dso_ring.actor_engine is actor_engine
    assert not (SRC / PKG / "distributed" / "rounds.py").exists()


def _loaded_after(code):
    """The module names in ``sys.modules`` after ``code`` in a fresh interpreter."""
    probe = code + "\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))\n"
    env = dict(os.environ)
    env["PYTHONPATH"] = str(SRC) + os.pathsep + env.get("PYTHONPATH", "")
    out = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_the_engines_load_without_the_solvers_and_without_dask():
    """At run time too: importing the engines loads no solver and no Dask, and
    importing the solvers (which import their engines) loads no Dask."""
    mods = _loaded_after("import primaldual.distributed")
    assert "primaldual.distributed.engine" in mods
    assert not [m for m in mods if m.startswith("primaldual.solvers")]
    assert not [m for m in mods if m.split(".")[0] in ("dask", "distributed")]
    mods = _loaded_after("import primaldual.solvers")
    assert "primaldual.solvers.cocoa" in mods
    assert not [m for m in mods if m.split(".")[0] in ("dask", "distributed")]
    # a CoCoA+ fit in process runs on LocalEngine: still no Dask
    mods = _loaded_after("import numpy as np, primaldual\n"
                         "X = np.arange(40.0).reshape(20, 2) % 7 - 3\n"
                         "y = np.where(np.arange(20) % 2, 1.0, -1.0)\n"
                         "r = primaldual.solve(X, y, loss='hinge', lam=0.1, solver='cocoa',\n"
                         "                     n_partitions=2, max_epochs=2)\n"
                         "assert r.n_epochs > 0\n")
    assert "primaldual.distributed.engine" in mods
    assert not [m for m in mods if m.split(".")[0] in ("dask", "distributed")]


def test_the_check_fails_when_an_engine_imports_a_solver_again():
    """The real tree with an engine importing a solver and the engines'
    package importing the solvers' round mixin: the check names both."""
    mods = {m: p.read_text() for m, p in all_modules().items()}
    mods["primaldual.distributed.block"] += "\nfrom ..solvers.sdca import SDCASolver\n"
    mods["primaldual.distributed"] += "\nfrom ..solvers._rounds import RoundsMixin\n"
    problems, graph = check(mods)
    assert ("primaldual.distributed.block (layer 2) imports primaldual.solvers.sdca "
            "(layer 3) at module level") in problems
    assert ("primaldual.distributed (layer 2) imports primaldual.solvers._rounds "
            "(layer 3) at module level") in problems
    assert any(p.startswith("package import cycle: ") for p in problems)
    assert "primaldual.solvers" in graph["primaldual.distributed"]


# ----------------------------------------------- the checker catches what it should
KNOWN = ["primaldual", "primaldual.solvers", "primaldual.solvers.dso",
         "primaldual.solvers.dso.ring", "primaldual.solvers.dso.blocks",
         "primaldual.solvers.dso.kernels", "primaldual.distributed",
         "primaldual.distributed.actor_engine", "primaldual.kernels",
         "primaldual.kernels.loss_kernels"]


def _modules(**sources):
    """name -> source, with every KNOWN module present and empty."""
    mods = dict.fromkeys(KNOWN, "")
    mods.update({k.replace("__", "."): v for k, v in sources.items()})
    return mods


def test_checker_reports_a_function_local_import():
    """An engine importing a solver inside a method (how a cycle hides)."""
    eng = ("class ActorStateEngine:\n"
           "    def step(self):\n"
           "        from ..solvers.dso.ring import DSOPartitionActor\n"
           "        return DSOPartitionActor\n")
    problems, _ = check(_modules(primaldual__distributed__actor_engine=eng))
    assert problems == ["primaldual.distributed.actor_engine:3: imports "
                        "primaldual.solvers.dso.ring inside step() (hoist it to module level)"]
    # absolute and nested forms too
    src = "def f():\n    def g():\n        import primaldual.solvers.dso as d\n"
    problems, _ = check(_modules(primaldual__solvers__dso__blocks=src))
    assert len(problems) == 1 and "inside g()" in problems[0]


def test_checker_reports_an_upward_import_and_the_cycle():
    """The engine importing DSO's actor at module level (while DSO's ring
    imports the engine) breaks the layers and closes a package cycle."""
    problems, graph = check(_modules(
        primaldual__solvers__dso__ring="from ...distributed.actor_engine import actor_engine\n",
        primaldual__distributed__actor_engine="from ..solvers.dso.ring import DSOPartitionActor\n"))
    assert problems[0] == ("primaldual.distributed.actor_engine (layer 2) imports "
                           "primaldual.solvers.dso.ring (layer 3) at module level")
    assert len(problems) == 2 and problems[1].startswith("package import cycle: ")
    assert graph["primaldual.solvers"] == {"primaldual.distributed"}
    assert graph["primaldual.distributed"] == {"primaldual.solvers"}


def test_checker_applies_the_layers_inside_a_method_package():
    """DSO's kernels (layer 0) may not import DSO's blocks (1) or its ring (3)."""
    problems, _ = check(_modules(
        primaldual__solvers__dso__kernels="from .blocks import x\nfrom .ring import y\n"))
    assert problems == [
        "primaldual.solvers.dso.kernels (layer 0) imports primaldual.solvers.dso.blocks "
        "(layer 1) at module level",
        "primaldual.solvers.dso.kernels (layer 0) imports primaldual.solvers.dso.ring "
        "(layer 3) at module level"]


def test_checker_allows_imports_downwards_and_of_third_party_packages():
    problems, graph = check(_modules(
        primaldual__solvers__dso__ring=("from ...distributed.actor_engine import actor_engine\n"
                                        "from .blocks import dso_block\n"
                                        "def f():\n    import dask.array\n"
                                        "    from distributed import Client\n"),
        primaldual__solvers__dso__blocks="from .kernels import x\n",
        primaldual__solvers__dso__kernels="from ...kernels.loss_kernels import HINGE\n"))
    assert problems == []
    assert graph["primaldual.solvers"] == {"primaldual.distributed", "primaldual.kernels"}


def test_checker_counts_a_lazy_import_as_an_import():
    """A literal lazy_attr / lazy_module call (also aliased, or through the
    module) is an import of that module, wherever it is written."""
    eng = ("from .._util.lazy import lazy_attr as la\n"
           "def f():\n"
           "    return la('primaldual.solvers.dso.ring', 'DSOPartitionActor')\n")
    ring = ("from ... import _util\n"
            "from ...distributed.actor_engine import actor_engine\n")
    blocks = ("from ..._util import lazy\n"
              "def g():\n    return lazy.lazy_module('primaldual.solvers.dso.ring')\n")
    problems, graph = check(_modules(primaldual__distributed__actor_engine=eng,
                                     primaldual__solvers__dso__ring=ring,
                                     primaldual__solvers__dso__blocks=blocks,
                                     primaldual___util__lazy="", primaldual___util=""))
    assert problems[:2] == [
        "primaldual.distributed.actor_engine (layer 2) imports primaldual.solvers.dso.ring "
        "(layer 3) at module level",
        "primaldual.solvers.dso.blocks (layer 1) imports primaldual.solvers.dso.ring "
        "(layer 3) at module level"]
    assert len(problems) == 3 and problems[2].startswith("package import cycle: ")
    assert "primaldual.solvers" in graph["primaldual.distributed"]


def test_checker_rejects_a_lazy_import_it_cannot_read():
    src = ("from .._util.lazy import lazy_attr, lazy_module\n"
           "NAME = 'primaldual.kernels'\n"
           "def f(m):\n"
           "    lazy_module(NAME)\n"
           "    lazy_attr(f'primaldual.{m}', 'x')\n"
           "    lazy_module('primaldual.nothing_here')\n"
           "    lazy_module(module='primaldual.kernels')\n")
    problems, _ = check(_modules(primaldual__distributed__actor_engine=src,
                                 primaldual___util__lazy=""))
    assert problems == [
        "primaldual.distributed.actor_engine:4: lazy_module() takes the module as a literal "
        "string",
        "primaldual.distributed.actor_engine:5: lazy_attr() takes the module as a literal "
        "string",
        "primaldual.distributed.actor_engine:6: lazy_module('primaldual.nothing_here') names "
        "no primaldual module"]


def test_checker_allows_import_module_only_for_third_party_names():
    src = ("import importlib\n"
           "from importlib import import_module as im\n"
           "def f(name):\n"
           "    importlib.import_module('dask.array')\n"
           "    importlib.import_module('primaldual.kernels')\n"
           "    im(f'{__name__}.x')\n"
           "    __import__('.x')\n"
           "    importlib.import_module(name)\n")
    problems, _ = check(_modules(primaldual__distributed__actor_engine=src,
                                 primaldual___extras=src, primaldual___util__lazy=src))
    assert [p.split(":")[1] for p in problems] == ["5", "6", "7", "8"]
    assert all(p.startswith("primaldual.distributed.actor_engine:") for p in problems)
    assert "imports a primaldual module outside primaldual._util.lazy" in problems[0]
    assert "not a literal string" in problems[1] and "not a literal string" in problems[3]


def test_the_real_lazy_imports_are_seen():
    """The package's own lazy table is read: ``import primaldual`` names its
    modules through the helper, and the helper imports primaldual modules only."""
    path = SRC / PKG / "__init__.py"
    lazy, problems = scan_lazy(path.read_text(), PKG, True)
    assert problems == []
    assert {"primaldual.solvers", "primaldual.estimators", "primaldual.datasets",
            "primaldual.model_io"} <= lazy
    from primaldual._util.lazy import lazy_attr, lazy_module
    with pytest.raises(ValueError, match="primaldual modules only"):
        lazy_module("json")
    assert lazy_attr("primaldual.problem", "Problem").__name__ == "Problem"


def test_checker_rejects_an_unmapped_module():
    problems, _ = check(_modules(primaldual__newthing="import numpy\n"))
    assert problems == ["primaldual.newthing: no layer in LAYERS (add it to "
                        "tests/test_layers.py)"]


@pytest.mark.parametrize("module, layer", [
    ("primaldual.solvers.dso.kernels", 0), ("primaldual.solvers.dso.blocks", 1),
    ("primaldual._util", 1), ("primaldual.solvers.dso.ring", 3),
    ("primaldual.blocks.sdca_threads", 1), ("primaldual.distributed.actor_engine", 2),
    ("primaldual.solvers._rounds", 3),
    ("primaldual.bench.presets.dso_paper", 4), ("primaldual", 4), ("primaldual.nope", None)])
def test_layer_of(module, layer):
    assert layer_of(module) == layer
