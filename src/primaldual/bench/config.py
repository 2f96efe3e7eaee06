"""Benchmark configuration: what to run, parsed from TOML or built by a preset.

A benchmark is a list of *experiments*.  Each experiment is a grid::

    datasets x losses x lams x solvers x seeds

run with the same stopping rule (``max_epochs``, ``tol``, ``check_every``,
optional ``time_limit``), timed the same way (``timing``, :data:`TIMINGS`)
and drawn with the same plots.  A preset module
(:mod:`primaldual.bench.presets`) builds a :class:`BenchConfig` in Python; a
TOML file describes the same structure (docs/benchmarks.md, "TOML
configuration", gives the format and an example).

A data set is named ``"a9a"`` (a :data:`primaldual.datasets.REGISTRY` name),
``"synthetic:rcv1"`` (:func:`~primaldual.datasets.make_synthetic`),
``"planted:news20"`` (:func:`~primaldual.datasets.make_planted_text`),
``"sklearn:breast_cancer"`` (bundled with scikit-learn) or ``"file:PATH"``; the
table form adds ``n``, ``n_test``, ``subsample`` (``"head"`` or ``"random"``),
``test_fraction``, ``scale`` (``"unit"``, ``"maxabs+unit"``, ``"none"``), ``seed``
and ``label`` (:class:`DatasetSpec`).  Everything unknown is an error naming the key.
"""
from __future__ import annotations

import math
import re
import tomllib
from dataclasses import asdict, dataclass, field
from pathlib import Path
from .. import SOLVERS, datasets
from ..losses import LOSS_NAMES, make_loss
from .peers import PEERS

__all__ = ["DatasetSpec", "LossSpec", "SolverSpec", "Experiment", "ReferenceSettings",
           "BenchConfig", "parse_config", "load_config", "PLOT_KINDS", "DEFAULT_TARGETS",
           "SCALINGS", "SOURCES", "TIMINGS"]

#: relative gap / sub-optimality levels reported in the summary table
DEFAULT_TARGETS = (1e-2, 1e-4, 1e-6, 1e-8)

#: "<metric>-<axis>" plots the harness can draw for an experiment
PLOT_KINDS = ("gap-epochs", "gap-time", "subopt-epochs", "subopt-time", "test_error-epochs")

SCALINGS = ("unit", "maxabs+unit", "none")
#: how a run of our solvers is timed (peers are always refitted, :mod:`.peers`):
#: ``"trace"``: one fit, a trace point at every exact gap check, its time the
#: fit's wall time so far (earlier checks included); ``"refit"``: as the peers,
#: a fresh ``primaldual.solve`` call for each epoch budget of
#: :func:`~primaldual.bench.peers.budget_schedule`, its time the wall time of
#: that whole call
TIMINGS = ("trace", "refit")
SUBSAMPLES = ("head", "random")
SKLEARN_BUNDLED = ("breast_cancer", "digits", "iris", "wine")
#: where a data set comes from (``"<source>:<name>"`` or the ``source`` key)
SOURCES = ("registry", "synthetic", "planted", "sklearn", "file")


def _check_keys(where, table, allowed):
    unknown = set(table) - set(allowed)
    if unknown:
        raise ValueError(f"unknown key(s) {sorted(unknown)} in {where}; allowed keys: "
                         f"{', '.join(sorted(allowed))}")


def _label_safe(text):
    """A name safe as one path component: no separators, and no leading dots
    (so ``..`` or ``.hidden`` cannot escape or hide inside the output dir)."""
    safe = re.sub(r"[^A-Za-z0-9_.=+-]+", "_", str(text)).strip("_").lstrip(".")
    return safe or "unnamed"


def _pos_int(where, value, allow_none=True):
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ValueError(f"{where} must be a positive integer, got {value!r}")
    return value


def _pos_float(where, value, allow_none=False, allow_zero=False):
    if value is None and allow_none:
        return None
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{where} must be a number, got {value!r}") from None
    if isinstance(value, bool) or not math.isfinite(v) or v < 0 or (v == 0 and not allow_zero):
        raise ValueError(f"{where} must be {'>= 0' if allow_zero else '> 0'} and finite, "
                         f"got {value!r}")
    return v


# ------------------------------------------------------------------- specs
@dataclass(frozen=True)
class DatasetSpec:
    """Where a data set comes from and how it is cut and scaled.

    ``source`` is one of :data:`SOURCES`: ``"registry"``, ``"synthetic"``,
    ``"planted"``, ``"sklearn"`` or ``"file"``.
    """

    name: str
    source: str = "registry"
    n: int | None = None
    n_test: int | None = None
    subsample: str = "head"
    test_fraction: float | None = None
    scale: str = "unit"
    seed: int = 0
    label: str = ""

    @property
    def display(self) -> str:
        if self.label:
            return self.label
        base = self.name if self.source in ("registry", "file") else f"{self.source}:{self.name}"
        if self.source == "file":
            base = Path(self.name).name
        return base + (f"[n={self.n}]" if self.n else "")

    def key(self) -> str:
        """Identity of the data (not of its label): equal keys give equal data."""
        return "|".join(str(x) for x in (self.source, self.name, self.n, self.n_test,
                                         self.subsample, self.test_fraction, self.scale,
                                         self.seed))

    @classmethod
    def parse(cls, item, where="dataset"):
        if isinstance(item, DatasetSpec):
            return item
        if isinstance(item, str):
            table = {"name": item}
        elif isinstance(item, dict):
            table = dict(item)
        else:
            raise ValueError(f"{where} must be a name or a table, got {item!r}")
        _check_keys(where, table, {f for f in cls.__dataclass_fields__})
        name = table.get("name")
        if not isinstance(name, str) or not name:
            raise ValueError(f"{where} needs a non-empty 'name'")
        source = table.get("source")
        if source is None:
            source = "registry"
            for prefix in SOURCES[1:]:
                if name.startswith(prefix + ":"):
                    source, name = prefix, name[len(prefix) + 1:]
        if source not in SOURCES:
            raise ValueError(f"{where}: source must be one of {', '.join(SOURCES)}, "
                             f"got {source!r}")
        if source == "sklearn" and name not in SKLEARN_BUNDLED:
            raise ValueError(f"{where}: sklearn:{name} is not a data set bundled with "
                             f"scikit-learn; choose one of {', '.join(SKLEARN_BUNDLED)}")
        if source in ("synthetic", "planted"):
            known = (datasets.SYNTHETIC_SHAPES if source == "synthetic"
                     else datasets.PLANTED_TEXT_SHAPES)
            shapes = {k.lower(): k for k in known}
            if name.lower() not in shapes:
                raise ValueError(f"{where}: unknown {source} shape {name!r}; choose one of "
                                 f"{', '.join(known)}")
            name = shapes[name.lower()]
        scale = table.get("scale", "unit")
        if scale not in SCALINGS:
            raise ValueError(f"{where}: scale must be one of {SCALINGS}, got {scale!r}")
        subsample = table.get("subsample", "head")
        if subsample not in SUBSAMPLES:
            raise ValueError(f"{where}: subsample must be one of {SUBSAMPLES}, got "
                             f"{subsample!r}")
        tf = table.get("test_fraction")
        if tf is not None:
            tf = _pos_float(f"{where}.test_fraction", tf)
            if tf >= 1:
                raise ValueError(f"{where}.test_fraction must be in (0, 1), got {tf!r}")
        seed = table.get("seed", 0)
        if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
            raise ValueError(f"{where}.seed must be an integer >= 0, got {seed!r}")
        return cls(name=name, source=source, n=_pos_int(f"{where}.n", table.get("n")),
                   n_test=_pos_int(f"{where}.n_test", table.get("n_test")),
                   subsample=subsample, test_fraction=tf, scale=scale, seed=seed,
                   label=str(table.get("label", "")))


def _display(label, name, pairs) -> str:
    """How a loss or solver spec is named in tables: its label, else
    ``name(key=value,...)``, or the bare name without parameters."""
    text = ",".join(f"{k}={v}" for k, v in pairs)
    return label or (f"{name}({text})" if text else name)


@dataclass(frozen=True)
class LossSpec:
    """A loss name with its parameters (``gamma``, ``epsilon``)."""

    name: str
    params: tuple = ()          # sorted (key, value) pairs, hashable
    label: str = ""

    @property
    def params_dict(self) -> dict:
        return dict(self.params)

    @property
    def display(self) -> str:
        return _display(self.label, self.name, ((k, f"{v:g}") for k, v in self.params))

    @classmethod
    def parse(cls, item, where="loss"):
        if isinstance(item, LossSpec):
            return item
        if isinstance(item, str):
            table = {"name": item}
        elif isinstance(item, dict):
            table = dict(item)
        else:
            raise ValueError(f"{where} must be a name or a table, got {item!r}")
        name = table.pop("name", None)
        label = str(table.pop("label", ""))
        if name not in LOSS_NAMES:
            raise ValueError(f"{where}: unknown loss {name!r}; choose one of "
                             f"{', '.join(LOSS_NAMES)}")
        params = {k: _pos_float(f"{where}.{k}", v, allow_zero=True) for k, v in table.items()}
        make_loss(name, params or None)        # raises on a bad parameter
        return cls(name=name, params=tuple(sorted(params.items())), label=label)


@dataclass(frozen=True)
class SolverSpec:
    """One of our solvers (``kind="ours"``) or a peer adapter (``kind="peer"``)."""

    name: str
    kind: str = "ours"
    options: tuple = ()          # sorted (key, value) pairs
    label: str = ""

    @property
    def options_dict(self) -> dict:
        return dict(self.options)

    @property
    def display(self) -> str:
        return _display(self.label, self.name, ((k, str(v)) for k, v in self.options))

    @classmethod
    def parse(cls, item, where="solver"):
        if isinstance(item, SolverSpec):
            return item
        if isinstance(item, str):
            table = {"peer": item} if item in PEERS else {"solver": item}
        elif isinstance(item, dict):
            table = dict(item)
        else:
            raise ValueError(f"{where} must be a name or a table, got {item!r}")
        _check_keys(where, table, {"solver", "peer", "options", "label"})
        if ("solver" in table) == ("peer" in table):
            raise ValueError(f"{where} needs exactly one of 'solver' (a primaldual solver) "
                             f"or 'peer' (an adapter to another library)")
        options = table.get("options", {})
        if not isinstance(options, dict):
            raise ValueError(f"{where}.options must be a table, got {options!r}")
        label = str(table.get("label", ""))
        if "peer" in table:
            name = table["peer"]
            if name not in PEERS:
                raise ValueError(f"{where}: unknown peer {name!r}; choose one of "
                                 f"{', '.join(PEERS)}")
            if options:
                raise ValueError(f"{where}: peers take no options (got {sorted(options)})")
            return cls(name=name, kind="peer", label=label or PEERS[name].label)
        name = table["solver"]
        if name not in SOLVERS:
            raise ValueError(f"{where}: unknown solver {name!r}; choose one of "
                             f"{', '.join(sorted(SOLVERS))}")
        return cls(name=name, kind="ours", options=tuple(sorted(options.items())),
                   label=label)


@dataclass(frozen=True)
class ReferenceSettings:
    """How the reference optimum of each (dataset, loss, lam) is computed.

    A tight SDCA run (``tol``, at most ``max_epochs``) certifies a lower bound
    ``D`` and gives an upper bound ``P``; when ``liblinear`` is set and
    LIBLINEAR supports the loss, a LIBLINEAR run at ``liblinear_eps`` also
    proposes a point and the lower primal value is kept.  The reference
    records which method gave it and its certified relative gap.
    """

    tol: float = 1e-12
    max_epochs: float = 2000.0
    liblinear: bool = True
    liblinear_eps: float = 1e-10

    @classmethod
    def parse(cls, table, where="reference"):
        if table is None:
            return cls()
        if not isinstance(table, dict):
            raise ValueError(f"{where} must be a table")
        _check_keys(where, table, {"tol", "max_epochs", "liblinear", "liblinear_eps"})
        lib = table.get("liblinear", True)
        if not isinstance(lib, bool):
            raise ValueError(f"{where}.liblinear must be true or false")
        return cls(tol=_pos_float(f"{where}.tol", table.get("tol", 1e-12)),
                   max_epochs=_pos_float(f"{where}.max_epochs", table.get("max_epochs", 2000)),
                   liblinear=lib,
                   liblinear_eps=_pos_float(f"{where}.liblinear_eps",
                                            table.get("liblinear_eps", 1e-10)))


@dataclass
class Experiment:
    """A grid of runs sharing a stopping rule and plots."""

    name: str
    datasets: list
    losses: list
    lams: list
    solvers: list
    max_epochs: float = 50.0
    tol: float = 1e-8
    check_every: float = 1.0
    time_limit: float | None = None
    reference: bool = True
    plots: list = field(default_factory=lambda: list(PLOT_KINDS))
    title: str = ""
    timing: str = "trace"

    _KEYS = {"name", "datasets", "losses", "lams", "solvers", "max_epochs", "tol",
             "check_every", "time_limit", "reference", "plots", "title", "timing"}

    @classmethod
    def parse(cls, table, where="experiment"):
        if isinstance(table, Experiment):
            return table
        if not isinstance(table, dict):
            raise ValueError(f"{where} must be a table")
        _check_keys(where, table, cls._KEYS)
        name = table.get("name")
        if not isinstance(name, str) or not name:
            raise ValueError(f"{where} needs a non-empty 'name'")
        where = f"experiment {name!r}"
        for key in ("datasets", "losses", "lams", "solvers"):
            if not isinstance(table.get(key), list) or not table[key]:
                raise ValueError(f"{where} needs a non-empty list '{key}'")
        plots = table.get("plots", list(PLOT_KINDS))
        bad = [p for p in plots if p not in PLOT_KINDS]
        if bad:
            raise ValueError(f"{where}: unknown plot(s) {bad}; choose from "
                             f"{', '.join(PLOT_KINDS)}")
        ref = table.get("reference", True)
        if not isinstance(ref, bool):
            raise ValueError(f"{where}.reference must be true or false")
        timing = table.get("timing", "trace")
        if timing not in TIMINGS:
            raise ValueError(f"{where}.timing must be one of {', '.join(TIMINGS)}, got "
                             f"{timing!r}")
        return cls(
            name=_label_safe(name),
            datasets=[DatasetSpec.parse(d, f"{where} dataset {i}")
                      for i, d in enumerate(table["datasets"])],
            losses=[LossSpec.parse(x, f"{where} loss {i}") for i, x in enumerate(table["losses"])],
            lams=[_pos_float(f"{where} lam", x) for x in table["lams"]],
            solvers=[SolverSpec.parse(s, f"{where} solver {i}")
                     for i, s in enumerate(table["solvers"])],
            max_epochs=_pos_float(f"{where}.max_epochs", table.get("max_epochs", 50.0)),
            tol=_pos_float(f"{where}.tol", table.get("tol", 1e-8), allow_zero=True),
            check_every=_pos_float(f"{where}.check_every", table.get("check_every", 1.0)),
            time_limit=_pos_float(f"{where}.time_limit", table.get("time_limit"),
                                  allow_none=True),
            reference=ref, plots=list(plots), title=str(table.get("title", "")),
            timing=timing)


@dataclass
class BenchConfig:
    """The whole benchmark: experiments, seeds, targets and reference settings."""

    name: str
    experiments: list
    seeds: list = field(default_factory=lambda: [0])
    targets: tuple = DEFAULT_TARGETS
    reference: ReferenceSettings = field(default_factory=ReferenceSettings)
    description: str = ""

    def to_dict(self) -> dict:
        """A JSON-serializable description (written to the output folder)."""
        return _jsonable(asdict(self))


def _jsonable(obj):
    if isinstance(obj, dict):
        return {str(k): _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_jsonable(v) for v in obj]
    if isinstance(obj, float) and not math.isfinite(obj):
        return str(obj)
    return obj


def _check_seeds(seeds, where="seeds"):
    if not isinstance(seeds, (list, tuple)) or not seeds:
        raise ValueError(f"{where} must be a non-empty list of integers >= 0")
    for s in seeds:
        if isinstance(s, bool) or not isinstance(s, int) or s < 0:
            raise ValueError(f"{where} must hold integers >= 0, got {s!r}")
    return list(seeds)


def parse_config(table: dict, *, where="config") -> BenchConfig:
    """Build a :class:`BenchConfig` from the TOML structure (see the module docstring)."""
    if not isinstance(table, dict):
        raise ValueError(f"{where} must be a table")
    _check_keys(where, table, {"name", "seeds", "targets", "reference", "experiment",
                               "description"})
    exps = table.get("experiment")
    if not isinstance(exps, list) or not exps:
        raise ValueError(f"{where} needs at least one [[experiment]] table")
    experiments = [Experiment.parse(e, f"{where} experiment {i}") for i, e in enumerate(exps)]
    names = [e.name for e in experiments]
    if len(set(names)) != len(names):
        raise ValueError(f"{where}: experiment names must be unique, got {names}")
    targets = table.get("targets", list(DEFAULT_TARGETS))
    if not isinstance(targets, list) or not targets:
        raise ValueError(f"{where}.targets must be a non-empty list of numbers in (0, 1)")
    targets = tuple(_pos_float(f"{where}.targets", t) for t in targets)
    return BenchConfig(name=_label_safe(table.get("name", "bench")), experiments=experiments,
                       seeds=_check_seeds(table.get("seeds", [0]), f"{where}.seeds"),
                       targets=targets,
                       reference=ReferenceSettings.parse(table.get("reference")),
                       description=str(table.get("description", "")))


def load_config(path) -> BenchConfig:
    """Read a TOML benchmark description (see the module docstring)."""
    path = Path(path)
    if not path.exists():
        raise ValueError(f"config file {path} does not exist")
    try:
        with open(path, "rb") as fh:
            table = tomllib.load(fh)
    except tomllib.TOMLDecodeError as e:
        raise ValueError(f"config file {path} is not valid TOML: {e}") from None
    table.setdefault("name", path.stem)
    return parse_config(table, where=str(path))
