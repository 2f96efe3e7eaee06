"""A solver's outcome and its saved state: :class:`SolveResult` (the certified
pair, the trace, the state exported on first read), :class:`SolverState`, the
state files (:func:`save_state`, :func:`load_state`: ``.npz`` without pickle)
and the best certified pair a run keeps (:class:`BestIterate`).
"""
from __future__ import annotations

import json
import math
import zipfile
from dataclasses import dataclass, field, fields
from pathlib import Path

import numpy as np

from .._util import atomic_write
from ..problem import Certificate, relative_gap

__all__ = ["SolveResult", "SolverState", "save_state", "load_state", "STATE_FORMAT_VERSION",
           "BestIterate", "deferred_export", "deferred_state"]

STATE_FORMAT_VERSION = 1


# ---------------------------------------------------------------- results
@dataclass
class SolverState:
    """Everything needed to continue a run exactly where it stopped.

    ``meta`` holds JSON-serializable scalars (counters, the RNG state, the
    trace, the options); ``arrays`` holds the iterates (alpha, w, sample
    order, ...).  It is stored without pickle (:func:`save_state`).
    """

    solver: str
    meta: dict
    arrays: dict

    @property
    def epoch(self) -> float:
        return float(self.meta.get("epochs", 0.0))


class _DeferredState:
    """``SolveResult.state``: the solver's state, exported on first read (a
    checkpoint, a resume or a warm start reads it; most fits never do)."""

    def __set_name__(self, owner, name):
        self.slot = "_" + name

    def __get__(self, obj, objtype=None):
        if obj is None:
            return None                       # the dataclass field's default
        val = obj.__dict__.get(self.slot)
        if isinstance(val, _Export):
            val = obj.__dict__[self.slot] = val.run()
        return val

    def __set__(self, obj, value):
        obj.__dict__[self.slot] = value


class _Export:
    """A state export not run yet: ``make()`` returns the state."""

    def __init__(self, make):
        self.make = make

    def run(self):
        state, self.make = self.make(), None
        return state


@dataclass
class SolveResult:
    """The outcome of :func:`primaldual.solve`: a certified pair (coef, dual_coef).

    A run that stops before reaching ``tol`` returns the best pair its checks
    certify (:func:`~primaldual.solvers._base.pick_pair`): the ``w`` with the
    smallest primal value and the ``alpha`` with the largest dual value among
    them, or ``w = 0`` when ``P(0)`` is lower (``extras["best_epoch"]``,
    ``extras["best_dual_epoch"]`` and ``extras["zero_model"]`` say which, when
    they are not the last check); ``trace`` still records every check.
    """

    coef: np.ndarray
    dual_coef: np.ndarray
    primal: float
    dual: float
    gap: float
    solver: str
    options: dict
    converged: bool
    n_epochs: float
    time: float
    trace: list
    loss: str = ""
    lam: float = 0.0
    l1: float = 0.0
    tol: float = 0.0
    feature_accesses: int = 0
    stop_reason: str = ""
    state: SolverState | None = field(default=None, repr=False)
    extras: dict = field(default_factory=dict)

    @property
    def rel_gap(self) -> float:
        return relative_gap(self.primal, self.dual)

    def __getstate__(self):
        d = dict(self.__dict__)
        d["_state"] = self.state              # a pickled result carries its state
        return d

    def summary(self) -> dict:
        """The result for display: the gaps clipped at 0 (rounding can make ``P - D``
        of a converged pair a few ulps negative; ``primal``, ``dual`` are raw)."""
        return {"solver": self.solver, "loss": self.loss, "lam": self.lam, "l1": self.l1,
                "epochs": self.n_epochs, "time_s": self.time, "primal": self.primal,
                "dual": self.dual, "gap": max(self.gap, 0.0),
                "rel_gap": max(self.rel_gap, 0.0),
                "converged": self.converged, "stop_reason": self.stop_reason}

    def __repr__(self) -> str:
        """The dataclass repr, with ``gap`` shown clipped at 0 as in :meth:`summary`
        (the attribute keeps the raw ``P - D``)."""
        shown = []
        for f in fields(self):
            if f.repr:
                v = getattr(self, f.name)
                shown.append(f"{f.name}={max(v, 0.0) if f.name == 'gap' else v!r}")
        return f"{type(self).__name__}({', '.join(shown)})"


_state_slot = _DeferredState()           # set after @dataclass: the field keeps its default
_state_slot.__set_name__(SolveResult, "state")
SolveResult.state = _state_slot


# ------------------------------------------------------------ state files
def _json_default(o):
    if isinstance(o, (np.integer,)):
        return int(o)
    if isinstance(o, (np.floating,)):
        return float(o)
    if isinstance(o, np.ndarray):
        return o.tolist()
    if isinstance(o, np.bool_):
        return bool(o)
    raise TypeError(f"cannot store {type(o).__name__} in a state file")


def save_state(state: SolverState, path) -> Path:
    """Write ``state`` to ``path`` (a ``.npz`` file, or a directory that gets
    ``state.npz``) atomically: a temporary file in the same directory is
    fsynced and renamed over the old one, so a crash mid-write leaves the
    previous checkpoint intact.  No pickle is involved."""
    path = Path(path)
    if path.suffix != ".npz":
        path.mkdir(parents=True, exist_ok=True)
        path = path / "state.npz"
    else:
        path.parent.mkdir(parents=True, exist_ok=True)
    meta = dict(state.meta)
    meta["solver"] = state.solver
    meta["format_version"] = STATE_FORMAT_VERSION
    payload = {"__meta__": np.array(json.dumps(meta, default=_json_default))}
    for k, v in state.arrays.items():
        arr = np.asarray(v)
        if arr.dtype == object:
            raise TypeError(f"state array {k!r} has dtype=object; refusing to pickle")
        payload[k] = arr
    with atomic_write(path) as fh:
        np.savez(fh, **payload)
    return path


def load_state(path) -> SolverState:
    """Read a state written by :func:`save_state` (``allow_pickle=False``)."""
    path = Path(path)
    if path.is_dir():
        path = path / "state.npz"
    if not path.exists():
        raise FileNotFoundError(f"no checkpoint at {path}")
    with open(path, "rb") as fh:
        magic = fh.read(4)
    if magic not in (b"PK\x03\x04", b"PK\x05\x06"):
        raise ValueError(f"checkpoint {path} is not a primaldual state file: not an .npz "
                         f"archive (it starts with {magic!r}); it is corrupt or another "
                         f"file. Start without --resume, or point to the checkpoint "
                         f"directory a fit wrote")
    try:
        with np.load(path, allow_pickle=False) as z:
            meta = json.loads(str(z["__meta__"]))
            arrays = {k: z[k] for k in z.files if k != "__meta__"}
    except ValueError as e:
        raise ValueError(f"checkpoint {path} is not a valid primaldual state file "
                         f"(object arrays are refused): {e}") from None
    except (OSError, KeyError, EOFError, zipfile.BadZipFile, json.JSONDecodeError) as e:
        raise ValueError(f"checkpoint {path} is unreadable or corrupt: {e}") from None
    if meta.get("format_version") != STATE_FORMAT_VERSION:
        raise ValueError(f"checkpoint {path} has format_version "
                         f"{meta.get('format_version')!r}; this primaldual reads "
                         f"version {STATE_FORMAT_VERSION}")
    return SolverState(solver=meta["solver"], meta=meta, arrays=arrays)


def deferred_export(solver, trace, elapsed):
    """The value ``SolveResult.state`` takes: ``solver.export_state(trace, elapsed)``
    run when the state is first read."""
    return _Export(lambda: solver.export_state(trace, elapsed))


def state_of(result):
    """``result.state`` as it is held: a deferred export stays deferred (a result
    built from another one passes it on without running it)."""
    return result.__dict__.get(_state_slot.slot)


def deferred_state(make):
    """The value ``SolveResult.state`` takes: ``make()`` run when the state is
    first read."""
    return _Export(make)


class BestIterate:
    """The best certified pair a run has seen, built from its checks (copies:
    solvers update their iterates in place); part of the state, so that a resumed
    run returns what the uninterrupted one would.

    By default the pair of the check with the smallest relative gap (a dual
    method's ``w`` is ``w(alpha)``, and the pair stays one).  With ``mix`` (a
    solver's ``mixes_best_pair``: saddle-point methods, whose primal and dual
    iterates are separate and are best at different checks) the ``w`` with the
    smallest primal value and the ``alpha`` with the largest dual value, from
    whichever checks they came: every check's ``P(w)`` and ``D(alpha)`` are exact,
    so ``P(w_best) - D(alpha_best)`` is a certified gap of the returned ``w``, at
    most the gap of any single check."""

    _W, _ALPHA = "best_pair_w", "best_pair_alpha"

    def __init__(self, mix=False):
        self.mix = mix
        self.w = self.alpha = None
        self.primal, self.dual = math.inf, -math.inf
        self.epoch = self.dual_epoch = None

    @property
    def cert(self):
        """The pair as a :class:`Certificate`, or None before the first check."""
        if self.w is None:
            return None
        return Certificate(w=self.w, alpha=self.alpha, primal=self.primal, dual=self.dual,
                           v=None, margins=None)

    def to_meta(self):
        return {"best_pair": {"primal": self.primal, "dual": self.dual, "epoch": self.epoch,
                              "dual_epoch": self.dual_epoch}}

    def to_arrays(self):
        return {self._W: self.w, self._ALPHA: self.alpha}

    @classmethod
    def from_state(cls, meta, arrays, mix=False):
        best = cls(mix)
        info = meta.get("best_pair")
        if info is not None and cls._W in arrays and cls._ALPHA in arrays:
            best.w = np.array(arrays[cls._W], dtype=np.float64)
            best.alpha = np.array(arrays[cls._ALPHA], dtype=np.float64)
            best.primal, best.dual = float(info["primal"]), float(info["dual"])
            best.epoch = float(info["epoch"])
            de = info.get("dual_epoch")
            best.dual_epoch = best.epoch if de is None else float(de)
        return best

    def offer(self, cert, rec):
        epoch = float(rec["epoch"])
        if not self.mix:
            if self.w is None or cert.rel_gap < self.cert.rel_gap:
                self.w, self.alpha = np.array(cert.w), np.array(cert.alpha)
                self.primal, self.dual = cert.primal, cert.dual
                self.epoch = self.dual_epoch = epoch
            return
        if cert.primal < self.primal:
            self.w, self.primal, self.epoch = np.array(cert.w), cert.primal, epoch
        if cert.dual > self.dual:
            self.alpha, self.dual, self.dual_epoch = np.array(cert.alpha), cert.dual, epoch

    def better_than(self, cert):
        """The recorded pair beats ``cert``: a smaller gap, absolute when mixing
        (a relative gap favours a large primal value), else relative."""
        if self.w is None:
            return False
        if self.mix:
            return self.primal - self.dual < cert.primal - cert.dual
        return self.cert.rel_gap < cert.rel_gap

    def where(self):
        """``extras`` naming the checks the pair came from."""
        out = {"best_epoch": self.epoch}
        if self.dual_epoch != self.epoch:
            out["best_dual_epoch"] = self.dual_epoch
        return out
