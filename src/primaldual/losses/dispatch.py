"""The one compiled dispatch point between the kernels and the losses.

Every kernel calls a loss through this module, as ``L.op(kind, param, ...)``
with ``kind`` the loss's code (its position in
:data:`primaldual.losses.registry.BUILTIN`) and ``param`` its parameter.  For
each operation of :data:`OPS` the function here is generated from
:data:`BUILTIN` (the modules named by the registry)::

    def value(kind, param, a, y):
        if kind == 0:
            return hinge.value(param, a, y)
        ...
        return squared_epsilon_insensitive.value(param, a, y)

compiled with ``cache=True`` under this file's name (the generated code is
part of the cache key, so a new registry entry recompiles it).  With a
constant ``kind`` Numba folds the chain to one call.  Two functions are
written once for every loss: :func:`dual_in_domain` (from ``box``) and
:func:`neg_conjugate` (``-inf`` outside the box).

Numba keys a kernel's disk cache by the kernel's own file: after the list of
losses changes, a cache compiled for the old list must not be reused (the
Makefile names its cache folder by a checksum of this package; elsewhere clear
``NUMBA_CACHE_DIR`` or the ``__pycache__`` folders after such a change).

A loss module outside the registry gets a namespace of the same functions
without the chain (:func:`namespace`); :func:`specialise` recompiles a kernel
and every compiled function it calls that reaches this module with that
namespace in place of this module (no disk cache: once per process).
"""
from __future__ import annotations

import math
import sys
import types

from numba import njit
from numba.core.registry import CPUDispatcher

from . import (absolute, epsilon_insensitive, hinge, logistic, smooth_hinge,  # noqa: F401
               squared, squared_epsilon_insensitive, squared_hinge)
from ._scalar import scalar
from .registry import BUILTIN_NAMES


def _builtin():
    mods = globals()
    missing = [n for n in BUILTIN_NAMES if getattr(mods.get(n), "NAME", None) != n]
    if missing:
        raise ImportError(f"registered losses {missing} are not imported by {__name__}")
    return tuple(mods[n] for n in BUILTIN_NAMES)


#: the registered loss modules, in code order
BUILTIN = _builtin()

#: operation -> its arguments after ``kind`` (the loss module's function takes
#: the same without ``kind``)
OPS = {
    "value": "param, a, y",
    "derivative": "param, a, y",
    "second_derivative": "param, a, y",
    "box": "param",
    "interior": "param",
    "neg_conjugate_inside": "param, alpha, y",
    "neg_conjugate_grad": "param, alpha, y",
    "dual_step": "param, alpha, y, a, s",
    "cached_dual_step": "param, alpha, y, a, s, z",
    "dual_slopes": "param, alpha, y, a",
    "line_terms": "param, alpha, y, d, c",
}
#: the loss module's name of an operation where it differs
_MODULE_NAME = {"neg_conjugate_inside": "neg_conjugate"}
#: operations only the losses with ``STEP_CACHE`` define, and what the others do
_OPTIONAL = {"cached_dual_step": "dual_step(kind, param, alpha, y, a, s), z"}

_GENERIC = '''
def dual_in_domain(kind, param, alpha, y):
    """True when -alpha is in the domain of phi* (alpha is dual feasible)."""
    if not math.isfinite(alpha):
        return False
    lo, hi, in_b = box(kind, param)
    b = alpha * y if in_b else alpha
    return b >= lo and b <= hi


def neg_conjugate(kind, param, alpha, y):
    """-phi*(-alpha; y); -inf outside the dual domain."""
    if not dual_in_domain(kind, param, alpha, y):
        return -math.inf
    return neg_conjugate_inside(kind, param, alpha, y)
'''


def _source(op, modules, chained):
    args = OPS[op]
    lines = [f"def {op}(kind, {args}):"]
    codes = [k for k, m in enumerate(modules) if op not in _OPTIONAL or m.STEP_CACHE]
    for k in codes:
        call = f"return _{k}_{op}({args})"
        if op in _OPTIONAL or (chained and k != codes[-1]):
            lines.append(f"    if kind == {k}:\n        {call}" if chained else f"    {call}")
        else:
            lines.append(f"    {call}")
            break
    if op in _OPTIONAL:
        lines.append(f"    return {_OPTIONAL[op]}")
    return "\n".join(lines) + "\n"


def _fill(ns, modules, filename, jit, chained):
    """Generate every operation of ``modules`` into the dict ``ns``
    (``dual_step`` keeps its CPython wrapper: tests and drivers call it)."""
    ns["math"] = math
    for op in OPS:
        for k, m in enumerate(modules):
            if op not in _OPTIONAL or m.STEP_CACHE:
                ns[f"_{k}_{op}"] = getattr(m, _MODULE_NAME.get(op, op))
        exec(compile(_source(op, modules, chained), filename, "exec"), ns)
        ns[op] = (jit if op != "dual_step" else _WRAPPED[jit])(ns[op])
    exec(compile(_GENERIC, filename, "exec"), ns)
    for name in ("dual_in_domain", "neg_conjugate"):
        ns[name] = jit(ns[name])


_plain = njit(nogil=True)
_WRAPPED = {scalar: njit(cache=True, nogil=True), _plain: _plain}
_fill(globals(), BUILTIN, __file__, scalar, chained=True)


# ------------------------------------------------------- losses outside the registry
_NAMESPACES: dict = {}
_SPECIALISED: dict = {}


def namespace(module):
    """A module object with this module's functions for ``module`` alone."""
    held = _NAMESPACES.get(id(module))
    if held is None or held[0] is not module:
        ns = types.ModuleType(f"{__name__}[{module.NAME}]")
        _fill(ns.__dict__, (module,), f"<dispatch of {module.NAME}>", _plain, chained=False)
        held = _NAMESPACES[id(module)] = (module, ns)
    return held[1]


def _names(code):
    out = set(code.co_names)
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            out |= _names(c)
    return out


def _rebuild(disp, this, ns):
    """``disp`` compiled with ``ns`` for this module, or ``disp`` itself when
    nothing it calls reaches this module."""
    key = (disp, ns)
    if key in _SPECIALISED:
        return _SPECIALISED[key]
    _SPECIALISED[key] = disp             # a cycle, if any, keeps the original
    f = disp.py_func
    glob = f.__globals__
    new = {}
    for name in _names(f.__code__):
        val = glob.get(name)
        if val is this:
            new[name] = ns
        elif isinstance(val, CPUDispatcher) and val.py_func.__globals__ is this.__dict__:
            new[name] = getattr(ns, val.py_func.__name__)
        elif isinstance(val, CPUDispatcher) and \
                getattr(val.py_func, "__module__", "").startswith("primaldual."):
            r = _rebuild(val, this, ns)
            if r is not val:
                new[name] = r
    if new:
        g = dict(glob)
        g.update(new)
        func = types.FunctionType(f.__code__, g, f.__name__, f.__defaults__, f.__closure__)
        func.__kwdefaults__ = f.__kwdefaults__
        func.__qualname__ = f.__qualname__
        func.__module__ = f.__module__
        opts = {k: v for k, v in disp.targetoptions.items() if k not in ("cache", "nopython")}
        _SPECIALISED[key] = njit(**opts)(func)
    return _SPECIALISED[key]


def specialise(kernel, loss):
    """``kernel`` as compiled for ``loss``: itself for a registered loss, else
    recompiled with the loss's :func:`namespace` in place of this module."""
    if loss.builtin:
        return kernel
    return _rebuild(kernel, sys.modules[__name__], namespace(loss.module))
