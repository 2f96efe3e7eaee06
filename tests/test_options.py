"""Solver options (primaldual.solvers._options): one frozen dataclass per
solver, validated on construction; validate_options is pure; the command line
reads ``--option`` by the field's type; mini-batch SDCA's factory.
"""
from __future__ import annotations

import dataclasses
import json
import math

import numpy as np
import pytest
from sklearn.preprocessing import normalize

from primaldual import cli
from primaldual.problem import Problem
from primaldual.solvers import SOLVERS, option_classes, solve
from primaldual.solvers._base import COMMON_OPTIONS
from primaldual.solvers._options import CommonOptions, EngineOptions, Options, RingOptions
from primaldual.solvers.minibatch import (MinibatchSDCAEngine, MinibatchSDCALocal,
                                          MinibatchSDCAOptions, MinibatchSDCASolver,
                                          minibatch_class)
from primaldual.solvers.sdca import SDCAOptions

from conftest import l1_for

SOLVER_NAMES = sorted(SOLVERS)


def _bad_values(rule):
    """Values the rule must refuse."""
    bad = []
    if rule.any:
        return bad
    if not rule.text:
        bad.append("not-an-option-value")
    if rule.number:
        if rule.low is not None:
            bad.append(rule.low - 1.0)
            if rule.low_strict:
                bad.append(rule.low)
        if rule.high is not None:
            bad.append(rule.high + 1.0)
        if rule.integer:
            bad.append(2.5)
        bad += [math.nan, math.inf]
        if True not in rule.choices:
            bad.append(True)
    else:
        bad.append(12345.5)
    if None not in rule.choices:
        bad.append(None)
    return bad


def _cases():
    for name in SOLVER_NAMES:
        cls = SOLVERS[name].options_class
        for f in dataclasses.fields(cls):
            for value in _bad_values(f.metadata["rule"]):
                yield pytest.param(cls, f.name, value, id=f"{name}-{f.name}-{value!r}")


# ------------------------------------------------------------ the classes
@pytest.mark.parametrize("name", SOLVER_NAMES)
def test_every_solver_has_its_own_frozen_options_class(name):
    cls = SOLVERS[name].options_class
    assert dataclasses.is_dataclass(cls) and issubclass(cls, CommonOptions)
    assert cls.solver_name == name
    assert sum(SOLVERS[k].options_class is cls for k in SOLVERS) == 1
    opts = cls()                                     # the defaults are valid
    assert set(COMMON_OPTIONS) <= set(cls.names())
    for f in dataclasses.fields(cls):
        assert "rule" in f.metadata, f.name
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(opts, f.name, f.default)


@pytest.mark.parametrize("cls, field, value", list(_cases()))
def test_bad_value_is_refused_naming_the_option(cls, field, value):
    with pytest.raises(ValueError) as err:
        cls(**{field: value})
    msg = str(err.value)
    assert field in msg
    assert repr(value) in msg or str(value) in msg


@pytest.mark.parametrize("name", SOLVER_NAMES)
def test_unknown_option_lists_the_valid_ones(name):
    cls = SOLVERS[name].options_class
    with pytest.raises(ValueError, match=rf"unknown option.*'smapling'.*solver='{name}'"
                                         rf".*valid options: .*time_limit"):
        cls.create(smapling="uniform")


def test_messages_name_what_is_allowed():
    with pytest.raises(ValueError, match="sampling='unifrom' is not valid; choose one of "
                                         "'uniform', 'permutation', 'cyclic'"):
        SDCAOptions(sampling="unifrom")
    with pytest.raises(ValueError, match=r"T0 must be >= 0 and finite, got -1"):
        SDCAOptions(T0=-1)
    with pytest.raises(ValueError, match="sync_every must be an integer, got 1.5"):
        SDCAOptions(sync_every=1.5)
    with pytest.raises(ValueError, match=r"sync_every must be 'auto', False or an "
                                         r"integer >= 0, got 'sometimes'"):
        SDCAOptions(sync_every="sometimes")
    with pytest.raises(ValueError, match=r"cg_tol must be in \(0, 1\), got 1.0"):
        SOLVERS["newton"].options_class(cg_tol=1.0)
    with pytest.raises(ValueError, match="n_jobs=0 means no thread"):
        SDCAOptions(n_jobs=0)


def test_checks_between_options_run_on_construction():
    with pytest.raises(ValueError, match="output='last'"):
        SDCAOptions(shrinking=True, output="average")
    with pytest.raises(ValueError, match="batch_size must be 1"):
        MinibatchSDCAOptions(sampling="serial")
    with pytest.raises(ValueError, match="sampling='distributed' only"):
        MinibatchSDCAOptions(n_partitions=2)
    with pytest.raises(ValueError, match="not a multiple"):
        MinibatchSDCAOptions(sampling="distributed", n_partitions=3, batch_size=64)
    with pytest.raises(ValueError, match="batch_size=1"):
        SOLVERS["spdc"].options_class(sampling="weighted", batch_size=4)


def test_values_are_normalized_and_replace_validates():
    o = SDCAOptions(sync_every=np.int64(8), T0=np.float64(2.0), n_jobs=2.0)
    assert type(o.sync_every) is int and type(o.T0) is float and type(o.n_jobs) is int
    assert o.replace(sampling="cyclic").sampling == "cyclic"
    assert o.sampling == "permutation"
    with pytest.raises(ValueError, match="sampling"):
        o.replace(sampling="nope")


def test_groups_are_shared_not_copied():
    for name in ("dso", "psgd"):
        assert issubclass(SOLVERS[name].options_class, RingOptions)
    for name in ("cocoa", "minibatch_sdca"):
        assert issubclass(SOLVERS[name].options_class, EngineOptions)
    assert set(RingOptions.names()) < set(EngineOptions.names())


def test_to_dict_is_json_and_leaves_out_the_common_options():
    o = SOLVERS["dso"].options_class(client=object(), eta0=np.float64(0.5))
    d = o.to_dict()
    json.dumps(d)
    assert not set(COMMON_OPTIONS) & set(d)
    assert isinstance(d["client"], str) and d["eta0"] == 0.5
    assert set(o.to_dict(common=True)) == set(o.names())


# ------------------------------------------------------------ the solvers
@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = normalize(rng.normal(size=(80, 6)))
    y = np.where(X[:, 0] + 0.3 * rng.normal(size=80) > 0, 1.0, -1.0)
    return X, y


def _problem(name, X, y):
    req = SOLVERS[name].requires
    loss = "logistic" if ("smooth" in req or "generalized_hessian" in req) else "hinge"
    return Problem(X, y, loss=loss, lam=1e-4, l1=l1_for(name))


@pytest.mark.parametrize("name", SOLVER_NAMES)
def test_validate_options_is_pure(name, data):
    X, y = data
    solver = SOLVERS[name].create(_problem(name, X, y), tol=1e-6, max_epochs=2,
                                  random_state=0)
    before = dict(vars(solver))
    opts = solver.opts
    snapshot = dataclasses.asdict(opts) if name not in ("cocoa", "dso", "psgd",
                                                        "minibatch_sdca") else None
    solver.validate_options()
    after = vars(solver)
    assert after.keys() == before.keys()
    assert all(after[k] is before[k] for k in before), name
    assert solver.opts is opts
    if snapshot is not None:
        assert dataclasses.asdict(opts) == snapshot


def test_resolved_values_live_on_the_solver(data):
    X, y = data
    res = solve(X, y, solver="dso", lam=1e-2, max_epochs=2)
    assert res.options["n_workers"] == 1
    s = SOLVERS["psgd"](_problem("psgd", X, y), tol=1e-6, max_epochs=2, random_state=0)
    assert s.opts.n_workers is None and s.k == 2
    assert s.resolved_opts.n_workers == 2
    c = SOLVERS["cocoa"](_problem("cocoa", X, y), tol=1e-6, max_epochs=2, random_state=0)
    assert c.opts.n_partitions is None and c.K == 1 and c.resolved_opts.n_partitions == 1


def test_solve_result_options_stay_plain(data):
    X, y = data
    res = solve(X, y, solver="sdca", lam=1e-2, max_epochs=2, sampling="uniform",
                time_limit=100)
    assert res.options["sampling"] == "uniform" and "time_limit" not in res.options
    json.dumps(res.options)
    assert res.state.meta["options"] == res.options


# ------------------------------------------------------------ minibatch factory
@pytest.mark.parametrize("kw, cls", [
    ({}, MinibatchSDCALocal),
    ({"sampling": "serial", "batch_size": 1}, MinibatchSDCALocal),
    ({"sampling": "standard"}, MinibatchSDCALocal),
    ({"sampling": "distributed", "batch_size": 8, "n_partitions": 2}, MinibatchSDCAEngine),
])
def test_minibatch_factory_picks_the_class(data, kw, cls):
    X, y = data
    s = SOLVERS["minibatch_sdca"].create(Problem(X, y, loss="hinge", lam=1e-2), tol=1e-6,
                                         max_epochs=2, random_state=0, **kw)
    assert SOLVERS["minibatch_sdca"] is MinibatchSDCASolver
    assert "__new__" not in vars(MinibatchSDCASolver)       # a plain factory
    assert type(s) is cls and isinstance(s, MinibatchSDCASolver)
    assert s.name == "minibatch_sdca"
    assert minibatch_class(kw.get("sampling", "standard")) is cls
    res = s.run()
    assert res.solver == "minibatch_sdca" and np.isfinite(res.gap)


# ------------------------------------------------------------ command line
@pytest.mark.parametrize("solver, key, text, value", [
    ("sdca", "sampling", "uniform", "uniform"),
    ("sdca", "T0", "2", 2),
    ("sdca", "T0", "0.5", 0.5),
    ("sdca", "T0", "none", None),
    ("sdca", "shrinking", "false", False),
    ("sdca", "shrinking", "auto", "auto"),
    ("sdca", "sync_every", "auto", "auto"),
    ("sdca", "sync_every", "off", False),
    ("sdca", "sync_every", "64", 64),
    ("sgd", "project", "yes", True),
    ("sag", "step", "1/L", "1/L"),
    ("sag", "step", "1e-3", 1e-3),
    ("minibatch_sdca", "batch_size", "16", 16),
    ("minibatch_sdca", "sigma", "0.25", 0.25),
    ("minibatch_sdca", "sigma", "bound", "bound"),
    ("dso", "variance_reduction", "None", None),
    ("dso", "recovery_dir", "/tmp/x", "/tmp/x"),
    ("auto", "cg_tol", "0.2", 0.2),
    ("auto", "sampling", "cyclic", "cyclic"),
    ("cocoa", "connect_timeout", "2", 2),
])
def test_cli_reads_the_option_by_its_type(solver, key, text, value):
    got = cli.parse_option(solver, key, text)
    assert got == value and type(got) is type(value)


@pytest.mark.parametrize("solver, key, text, message", [
    ("sdca", "sampling", "unifrom", r"sampling='unifrom'.*one of 'uniform', "
                                    r"'permutation', 'cyclic'"),
    ("sdca", "T0", "abc", r"T0='abc'.*None or a number >= 0"),
    ("minibatch_sdca", "batch_size", "abc", r"batch_size='abc'.*an integer > 0 \(int\)"),
    ("minibatch_sdca", "batch_size", "0", r"batch_size.*> 0"),
    ("sdca", "sync_every", "2.5", r"sync_every.*integer"),
    ("sgd", "project", "maybe", r"project='maybe'.*one of True, False \(bool\)"),
    ("newton", "cg_tol", "2", r"cg_tol.*in \(0, 1\)"),
    ("sdca", "smapling", "uniform", r"unknown option.*'smapling'.*valid options"),
])
def test_cli_bad_values_name_the_option(solver, key, text, message):
    with pytest.raises(ValueError, match=message):
        cli.parse_option(solver, key, text)


def test_cli_auto_reads_options_of_the_candidates():
    names = [c.solver_name for c in option_classes("auto")]
    assert names == ["sdca", "newton", "ipm", "box_newton", "l1cd", "l1_ipm"]


def test_cli_option_error_end_to_end(tmp_path, capsys):
    path = tmp_path / "d.svm"
    path.write_text("1 1:0.5 2:1\n-1 1:-0.5 3:1\n1 2:0.3\n-1 3:0.7\n")
    code = cli.main(["fit", str(path), "--solver", "sdca", "--option", "sampling=unifrom"])
    err = capsys.readouterr().err
    assert code != 0
    assert "sampling" in err and "'uniform', 'permutation', 'cyclic'" in err
    code = cli.main(["fit", str(path), "--solver", "minibatch_sdca",
                     "--option", "batch_size=abc"])
    err = capsys.readouterr().err
    assert code != 0 and "batch_size" in err and "int" in err


def test_options_base_is_abstract_enough():
    assert issubclass(CommonOptions, Options)
    assert CommonOptions().check_every == "auto"


def test_minibatch_class_must_match_the_sampling(data):
    X, y = data
    with pytest.raises(ValueError, match="runs on MinibatchSDCAEngine"):
        MinibatchSDCALocal(Problem(X, y, loss="hinge", lam=1e-2), tol=1e-6, max_epochs=2,
                           random_state=0, sampling="distributed", batch_size=8)
    # the shared base is abstract: it is not built itself
    with pytest.raises(TypeError, match="abstract class MinibatchSDCASolver"):
        MinibatchSDCASolver(Problem(X, y, loss="hinge", lam=1e-2), tol=1e-6, max_epochs=2,
                            random_state=0)


def test_every_registered_solver_is_built_by_create(data):
    """``SOLVERS[name].create`` is how solve, the CLI and the Dask estimators
    build a solver; for every method but minibatch_sdca it is the class itself."""
    X, y = data
    for name, cls in SOLVERS.items():
        s = cls.create(_problem(name, X, y), tol=1e-6, max_epochs=2, random_state=0)
        assert isinstance(s, cls) and s.name == name
        if name != "minibatch_sdca":
            assert type(s) is cls
