"""Solver options: frozen dataclasses whose fields carry their constraints.

Every solver declares one options class (``Solver.options_class``), a frozen
:func:`dataclasses.dataclass` derived from :class:`Options`.  Each field is
made by one of the helpers below, which store a :class:`Rule` (what the field
accepts) in the field's metadata:

``choice(default, *choices)``   one of the given values (strings, True, False, None)
``flag(default)``               True or False
``number(default, ...)``        a finite number (``integer=``, bounds ``low``/``high``,
                                strict or not), optionally also some exact values
                                (``also=(None, "auto")``)
``path(default)``               None or a path (str or os.PathLike)
``anything(default)``           any object (a Dask client, a warm start)

Construction validates (``__post_init__``): an options object that exists is
valid, and being frozen it stays so.  Integer fields are stored as ``int``.
Errors are ValueErrors naming the option, the value and what is allowed.
:meth:`Options.create` rejects unknown names with the list of valid ones.

Checks between options that need no data go in :meth:`Options.check`; checks
that need the problem (``n_workers <= min(n, d)``, ``init='dcd'`` needs
``l1 = 0``) are the solver's ``validate_options`` (pure), and the work the
options imply (layouts, step sizes, ``n_workers`` from the client) its
``setup`` -- derived values live on the solver, never in the options.

The same rules read the command line's ``--option KEY=VALUE``
(:meth:`Options.parse`): the field decides how the text is read (an integer,
a float, ``true/false/yes/no/on/off``, ``none/null``, one of the choices,
``auto`` or a number).
"""
from __future__ import annotations

import dataclasses
import math
import numbers
import os
from dataclasses import dataclass, field, fields
from typing import Any, Callable

import numpy as np

from .._util import resolve_n_jobs

__all__ = ["Rule", "Options", "CommonOptions", "choice", "flag", "number", "path",
           "anything", "to_jsonable", "ThreadOptions", "RingOptions", "EngineOptions",
           "PartitionOptions"]

_TRUE_WORDS = ("true", "yes", "on")
_FALSE_WORDS = ("false", "no", "off")
_NONE_WORDS = ("none", "null")


def _is_bool(v):
    return isinstance(v, (bool, np.bool_))


def _same(value, choice):
    """``value`` is the choice ``choice`` (True is not 1, 'auto' is not b'auto')."""
    if choice is None:
        return value is None
    if isinstance(choice, bool):
        return _is_bool(value) and bool(value) is choice
    if isinstance(choice, str):
        return isinstance(value, str) and value == choice
    return value == choice


def _fmt(x):
    return f"{x:g}" if isinstance(x, float) else str(x)


#: options class -> ``(names, ((name, rule or None), ...))`` of its fields in
#: declaration order: a dataclass's fields are fixed when its class is made, so
#: they are read once per class (``dataclasses.fields`` builds them at each call)
_FIELDS = {}


def _fields_of(cls) -> tuple:
    got = _FIELDS.get(cls)
    if got is None:
        pairs = tuple((f.name, f.metadata.get("rule")) for f in fields(cls))
        got = _FIELDS[cls] = (tuple(name for name, _ in pairs), pairs)
    return got


@dataclass(frozen=True)
class Rule:
    """What one option accepts (see the module docstring)."""

    choices: tuple = ()                 # exact values accepted as they are
    number: bool = False                # a finite real number is accepted
    integer: bool = False               # ... only a whole one (stored as int)
    low: float | None = None            # lower bound of the number
    low_strict: bool = True             # low < x (else low <= x)
    high: float | None = None           # upper bound of the number
    high_strict: bool = False           # x < high (else x <= high)
    text: bool = False                  # any str or os.PathLike (a path)
    any: bool = False                   # anything at all
    check: Callable | None = None       # extra check(name, value) of a number

    # ------------------------------------------------------------ describe
    def bound_text(self) -> str:
        """The bounds of the number: ``> 0``, ``>= 1``, ``in (0, 1]``, or ''."""
        lo, hi = self.low, self.high
        if lo is not None and hi is not None:
            return (f"in {'(' if self.low_strict else '['}{_fmt(lo)}, "
                    f"{_fmt(hi)}{')' if self.high_strict else ']'}")
        if lo is not None:
            return f"{'>' if self.low_strict else '>='} {_fmt(lo)}"
        if hi is not None:
            return f"{'<' if self.high_strict else '<='} {_fmt(hi)}"
        return ""

    def range_text(self) -> str:
        """The number part: ``an integer > 0``, ``a number in (0, 1)``..."""
        what = "an integer" if self.integer else "a number"
        b = self.bound_text()
        return f"{what} {b}" if b else what

    def allowed(self) -> str:
        """Everything the option accepts, in words."""
        parts = [repr(c) for c in self.choices]
        if self.number:
            parts.append(self.range_text())
        if self.text:
            parts.append("a path")
        if self.any:
            return "anything"
        if len(parts) == 1:
            return parts[0]
        if not self.number and not self.text:
            return "one of " + ", ".join(parts)
        return ", ".join(parts[:-1]) + " or " + parts[-1]

    @property
    def type_name(self) -> str:
        """The Python type(s) of the field, as in its annotation."""
        names = []
        for c in self.choices:
            t = "None" if c is None else type(c).__name__
            if t not in names:
                names.append(t)
        if self.number:
            names.append("int" if self.integer else "float")
        if self.text:
            names.append("str")
        return "Any" if self.any else " | ".join(names)

    # ------------------------------------------------------------ validate
    def validate(self, name, value):
        """``value`` if the option accepts it (integers as ``int``), else a
        ValueError naming ``name``, ``value`` and what is allowed."""
        if self.any:
            return value
        for c in self.choices:
            if _same(value, c):
                return c
        if self.text and isinstance(value, (str, os.PathLike)):
            return value
        if self.number and isinstance(value, numbers.Real) and not _is_bool(value):
            return self._check_number(name, value)
        if self.choices and not self.number and not self.text:
            raise ValueError(f"{name}={value!r} is not valid; choose one of "
                             f"{', '.join(repr(c) for c in self.choices)}")
        raise ValueError(f"{name} must be {self.allowed()}, got {value!r}")

    def _check_number(self, name, value):
        fv = float(value)
        bad = not math.isfinite(fv)
        if self.low is not None:
            bad = bad or fv < self.low or (self.low_strict and fv == self.low)
        if self.high is not None:
            bad = bad or fv > self.high or (self.high_strict and fv == self.high)
        if bad:
            b = self.bound_text()
            if self.low is not None and self.high is not None:
                raise ValueError(f"{name} must be {b}, got {value!r}")
            raise ValueError(f"{name} must be {b + ' and ' if b else ''}finite, "
                             f"got {value!r}")
        if self.integer:
            if fv != int(fv):
                raise ValueError(f"{name} must be an integer, got {value!r}")
            value = int(fv)
        elif type(value) not in (int, float):
            value = fv
        if self.check is not None:
            self.check(name, value)
        return value

    # --------------------------------------------------------------- parse
    def parse(self, name, text: str):
        """The value of ``--option name=text``, read as the field's type."""
        raw = text.strip()
        low = raw.lower()
        for c in self.choices:
            if (c is None and low in _NONE_WORDS) or (c is True and low in _TRUE_WORDS) \
                    or (c is False and low in _FALSE_WORDS) \
                    or (isinstance(c, str) and raw == c):
                return c
        if self.number:
            try:
                return int(raw)
            except ValueError:
                pass
            try:
                v = float(raw)
            except ValueError:
                pass
            else:
                if self.integer and math.isfinite(v) and v == int(v):
                    return int(v)
                return v
        if self.text or self.any:
            return raw
        raise ValueError(f"--option {name}={text!r} is not valid: {name} takes "
                         f"{self.allowed()} ({self.type_name})")


# ------------------------------------------------------------- field helpers
def _field(default, rule, doc):
    return field(default=default, metadata={"rule": rule, "doc": doc})


def choice(default, *choices, doc=""):
    """A field taking one of ``choices`` (default ``default``, which must be one)."""
    return _field(default, Rule(choices=tuple(choices)), doc)


def flag(default, doc=""):
    """A field taking True or False."""
    return _field(default, Rule(choices=(True, False)), doc)


def number(default, *, integer=False, low=None, strict=True, high=None,
           high_strict=False, also=(), check=None, doc=""):
    """A field taking a finite number (bounds ``low``/``high``; ``strict``: the
    bound itself is excluded) or one of the exact values ``also``."""
    return _field(default, Rule(choices=tuple(also), number=True, integer=integer, low=low,
                                low_strict=strict, high=high, high_strict=high_strict,
                                check=check), doc)


def path(default=None, doc=""):
    """A field taking None or a path."""
    return _field(default, Rule(choices=(None,), text=True), doc)


def anything(default=None, doc=""):
    """A field taking any object (checked by the solver, e.g. a Dask client)."""
    return _field(default, Rule(any=True), doc)


def to_jsonable(v):
    """``v`` as JSON takes it: plain values as they are, numpy scalars as Python
    ones, anything else (a client) as its repr."""
    if isinstance(v, (str, int, float, bool)) or v is None:
        return v
    if isinstance(v, np.generic):
        return v.item()
    return repr(v)


# ------------------------------------------------------------------- base
@dataclass(frozen=True)
class Options:
    """Base of the options classes: validated on construction, frozen."""

    #: the solver these options belong to (for error messages)
    solver_name = ""

    def __post_init__(self):
        for name, rule in _fields_of(type(self))[1]:
            if rule is None:
                continue
            value = getattr(self, name)
            ok = rule.validate(name, value)
            if ok is not value:
                object.__setattr__(self, name, ok)
        self.check()

    def check(self):
        """Checks between options that need no data (pure; raise ValueError)."""

    # -------------------------------------------------------- class helpers
    @classmethod
    def names(cls) -> tuple:
        """The option names, in declaration order."""
        return _fields_of(cls)[0]

    @classmethod
    def rule(cls, name) -> Rule:
        for f in fields(cls):
            if f.name == name:
                return f.metadata["rule"]
        raise cls.unknown_error([name])

    @classmethod
    def unknown_error(cls, unknown) -> ValueError:
        """The ValueError for the unknown option names ``unknown``."""
        who = f" for solver={cls.solver_name!r}" if cls.solver_name else ""
        return ValueError(f"unknown option(s) {sorted(unknown)}{who}; valid options: "
                          f"{', '.join(sorted(cls.names()))}")

    @classmethod
    def create(cls, **kwargs) -> "Options":
        """``cls(**kwargs)``, an unknown name being a ValueError that lists the
        valid options."""
        unknown = set(kwargs) - set(cls.names())
        if unknown:
            raise cls.unknown_error(unknown)
        return cls(**kwargs)

    @classmethod
    def parse(cls, name, text):
        """The value of ``--option name=text``: read as the field's type and
        checked by its rule (a ValueError names the option and what it takes)."""
        rule = cls.rule(name)
        value = rule.parse(name, text)
        try:
            return rule.validate(name, value)
        except ValueError as e:
            raise ValueError(f"--option {name}={text!r} is not valid: {e}") from None

    # ----------------------------------------------------------- instances
    def replace(self, **changes) -> "Options":
        """A new, validated options object with ``changes``."""
        return dataclasses.replace(self, **changes)

    def to_dict(self, common=False) -> dict:
        """The options as a JSON-able dict (what :class:`SolveResult` and state
        files store): plain values as they are, numpy scalars as Python ones,
        any other object (a client) as its repr.  ``common=False`` leaves out
        the options every solver shares (:class:`CommonOptions`)."""
        skip = () if common else _COMMON_NAMES
        return {name: to_jsonable(getattr(self, name)) for name in _fields_of(type(self))[0]
                if name not in skip}


# --------------------------------------------------------------- groups
@dataclass(frozen=True)
class CommonOptions(Options):
    """The options every solver takes (handled by the shared loop)."""

    time_limit: float | None = number(None, low=0.0, also=(None,),
                                      doc="seconds of wall time; checked at each check")
    check_every: float | str = number(
        "auto", low=0.0, also=("auto",),
        doc='epochs between exact gap checks (fractions allowed); "auto": predicted '
            "from the observed rate")
    warm_start: Any = anything(None, doc="SolveResult or an initial point (see each solver)")
    resume: Any = anything(None, doc="SolverState, SolveResult, or a checkpoint path")
    checkpoint: Any = path(None, doc="directory: write the state there atomically")
    checkpoint_every: float = number(1.0, low=0.0, doc="epochs between checkpoints")
    progress: bool = flag(False, doc="tqdm progress bar on stderr")


_COMMON_NAMES = frozenset(CommonOptions.names())


def _check_n_jobs(name, value):
    resolve_n_jobs(value)           # the one rule for n_jobs (0 is refused there)


@dataclass(frozen=True)
class ThreadOptions(Options):
    """``n_jobs``: threads of a solver that runs on several."""

    n_jobs: int | None = number(None, integer=True, also=(None,), check=_check_n_jobs,
                                doc="threads: None or 1 one, -1 all cores, -2 all but one")


@dataclass(frozen=True)
class RingOptions(Options):
    """The Dask options of DSO and PSGD (see docs/distributed.md)."""

    client: Any = anything(None, doc="dask.distributed.Client: run the parts on it")
    round_timeout: float = number(120.0, low=0.0,
                                  doc="seconds a Dask round may take before a clear error")
    recovery_every: int | None = number(None, integer=True, low=0.0, also=(None,),
                                        doc="rounds between recovery snapshots (Dask)")
    recovery_dir: Any = path(None, doc="directory for recovery snapshots (Dask); None: "
                                       "client memory")
    max_recoveries: int = number(3, integer=True, low=0.0, strict=False,
                                 doc="worker losses tolerated in one fit (Dask)")


@dataclass(frozen=True)
class PartitionOptions(Options):
    """The options of a driver whose sums over rows run on row partitions, in
    this process or on Dask workers (the Newton methods)."""

    n_partitions: int | None = number(None, integer=True, low=0.0, also=(None,),
                                      doc="K row partitions (their parts added in order); "
                                          "None: one in process, else the parts or the "
                                          "Dask workers")
    client: Any = anything(None, doc="dask.distributed.Client: the partitions run on it")
    round_timeout: float = number(120.0, low=0.0,
                                  doc="seconds a Dask call may take before a clear error")
    max_recoveries: int = number(3, integer=True, low=0.0, strict=False,
                                 doc="worker losses tolerated in one fit (Dask)")


@dataclass(frozen=True)
class EngineOptions(RingOptions):
    """The options of every round-based solver: the ring's plus the number of
    partitions."""

    n_partitions: int | None = number(4, integer=True, low=0.0, also=(None,),
                                      doc="K, the number of row partitions (C in the "
                                          "mini-batch paper)")
