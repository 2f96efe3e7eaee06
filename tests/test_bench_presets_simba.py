"""The ``simba-paper`` preset: its experiment grid (built, never run) and its
tuning / comparison logic on hand-made traces."""
from __future__ import annotations

import json
from types import SimpleNamespace

import numpy as np
import pytest

import primaldual.datasets as D
from primaldual.bench.presets import get_preset, presets
from primaldual.bench.presets import simba_paper as S


@pytest.fixture
def with_reuters(monkeypatch):
    """build() only asks whether the reuters files exist; pretend they do."""
    monkeypatch.setattr(D, "available_real", lambda data_home=None: ["reuters"])


@pytest.fixture
def without_reuters(monkeypatch):
    monkeypatch.setattr(D, "available_real", lambda data_home=None: [])


def _grid(cfg):
    """Every (experiment, dataset label, lam, solver label, options, seed) of the config."""
    return [(e.name, d.display, lam, s.display, s.options_dict, seed)
            for e in cfg.experiments for d in e.datasets for lam in e.lams
            for s in e.solvers for seed in cfg.seeds]


def test_registered_with_figures():
    mod = get_preset("simba-paper")
    assert mod is S and "simba-paper" in presets()
    assert callable(S.figures) and isinstance(S.DESCRIPTION, str)


def test_quick_config(with_reuters):
    cfg = S.build(quick=True)
    assert cfg.name == "simba-paper" and "(quick" in cfg.description
    assert cfg.seeds == [0, 1, 2]
    assert [e.name for e in cfg.experiments] == ["pegasos", "simba"]
    for e in cfg.experiments:
        assert [d.display for d in e.datasets] == ["reuters"]
        d = e.datasets[0]
        assert (d.source, d.name, d.n, d.scale) == ("registry", "reuters", None, "unit")
        assert e.max_epochs == 5.0 and e.check_every == 0.05 and e.tol == 0.0
        assert e.reference is False and [ls.name for ls in e.losses] == ["hinge"]
    peg, sim = cfg.experiments
    assert peg.lams == [1e-3, 1e-4, 1e-5]
    assert [(s.name, s.options_dict) for s in peg.solvers] == [("sgd", {"project": True})]
    assert sim.lams == [S.SIMBA_LAM]
    assert [(s.name, s.options_dict) for s in sim.solvers] == [
        ("simba", {"nu": nu, "schedule": "adaptive_sqrt"}) for nu in S.NUS]
    # 3 Pegasos lams + 6 SIMBA nus, 3 seeds each, all with distinct run ids
    grid = _grid(cfg)
    assert len(grid) == (3 + len(S.NUS)) * 3
    from primaldual.bench.harness import run_id_for
    ids = {run_id_for(e.name, d, ls, lam, s, seed) for e in cfg.experiments
           for d in e.datasets for ls in e.losses for lam in e.lams for s in e.solvers
           for seed in cfg.seeds}
    assert len(ids) == len(grid)


def test_full_config(with_reuters):
    cfg = S.build(quick=False)
    assert cfg.seeds == list(range(10))
    for e in cfg.experiments:
        specs = {d.display: d for d in e.datasets}
        assert list(specs) == ["reuters", "news20-shaped", "real-sim-shaped"]
        news, rs = specs["news20-shaped"], specs["real-sim-shaped"]
        assert (news.source, news.name, news.n, news.n_test) == ("planted", "news20",
                                                                 8000, 11996)
        assert (rs.source, rs.name, rs.n, rs.n_test) == ("planted", "real-sim",
                                                         20000, 52309)
        assert e.max_epochs == 20.0 and e.check_every == 0.05
    assert len(_grid(cfg)) == 3 * (3 + len(S.NUS)) * 10


def test_missing_reuters(without_reuters):
    with pytest.raises(ValueError, match="reuters.bz2"):
        S.build(quick=True)
    cfg = S.build(quick=False)
    assert [d.display for d in cfg.experiments[0].datasets] == ["news20-shaped",
                                                                 "real-sim-shaped"]


def test_solver_options_are_accepted():
    """The preset's option sets are valid for the solvers (checked by the solvers'
    own validation on a tiny problem, one short run each)."""
    import primaldual
    rng = np.random.default_rng(0)
    X = rng.standard_normal((40, 5))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    y = np.where(X[:, 0] > 0, 1.0, -1.0)
    for spec, lam in ((S.PEGASOS, 1e-3), (S.simba_spec(S.NUS[0]), S.SIMBA_LAM)):
        res = primaldual.solve(X, y, loss="hinge", lam=lam, solver=spec.name, tol=0,
                               max_epochs=0.5, check_every=S.CHECK_EVERY,
                               eval_set=(X, y), **spec.options_dict)
        assert res.trace[-1]["feature_accesses"] > 0 and "test_error" in res.trace[-1]


# ---------------------------------------------------------------- analysis
def _run(solver_name, lam, nu, seed, acc, err, dataset="toy"):
    trace = [{"feature_accesses": 0, "test_error": 0.5}] + [
        {"feature_accesses": a, "test_error": e} for a, e in zip(acc, err)]
    return SimpleNamespace(status="ok", trace=trace, dataset=dataset, lam=lam, seed=seed,
                           solver_name=solver_name,
                           options={"nu": nu} if nu is not None else {"project": True})


def _result(runs, description="x (quick: ...)"):
    return SimpleNamespace(runs=runs, config=SimpleNamespace(description=description))


def test_analysis_tunes_on_final_mean_and_counts_accesses(tmp_path):
    acc = [10.0, 100.0, 1000.0, 10000.0]
    runs = [
        # Pegasos lam=1e-3: final mean 0.20; lam=1e-4: final mean 0.12, best 0.10 at 1000
        _run("sgd", 1e-3, None, 0, acc, [0.4, 0.3, 0.2, 0.2]),
        _run("sgd", 1e-3, None, 1, acc, [0.4, 0.3, 0.2, 0.2]),
        _run("sgd", 1e-4, None, 0, acc, [0.4, 0.2, 0.08, 0.10]),
        _run("sgd", 1e-4, None, 1, acc, [0.4, 0.2, 0.12, 0.14]),
        # SIMBA nu=0.01 reaches 0.10 at 100 accesses (seed 1 has 12 accesses more)
        _run("simba", 1e-4, 0.01, 0, acc, [0.3, 0.09, 0.09, 0.09]),
        _run("simba", 1e-4, 0.01, 1, [a + 12 for a in acc], [0.3, 0.11, 0.09, 0.09]),
        _run("simba", 1e-4, 0.1, 0, acc, [0.3, 0.3, 0.3, 0.3]),
        SimpleNamespace(status="error", trace=[], dataset="toy", lam=1e-4, seed=0,
                        solver_name="simba", options={"nu": 0.5}),
    ]
    a = S.analyse(_result(runs))["toy"]
    assert a["tuned"]["Pegasos"]["value"] == 1e-4 and a["tuned"]["SIMBA"]["value"] == 0.01
    acc_m, mean, sd, k = a["tuned"]["Pegasos"]["curve"]
    assert k == 2 and np.allclose(acc_m, acc)
    assert np.allclose(mean, [0.4, 0.2, 0.10, 0.12]) and np.allclose(sd, [0, 0, 0.02, 0.02])
    assert a["pegasos_best"] == pytest.approx(0.10)
    reach = a["accesses_to_pegasos_best"]
    assert reach["Pegasos"] == 1000.0 and reach["SIMBA"] == pytest.approx(106.0)
    assert a["pegasos_over_simba"] == pytest.approx(1000.0 / 106.0)
    assert len(a["configs"]) == 4          # the failed run adds none

    paths = S.figures(_result(runs), tmp_path)
    assert [p.name for p in paths] == ["simba_fig1.png"] and paths[0].stat().st_size > 1000
    summary = json.loads((tmp_path / "simba_summary.json").read_text())
    assert summary["toy"]["tuned"]["SIMBA"]["nu"] == 0.01
    assert "not reached" not in (tmp_path / "simba_summary.md").read_text()


def test_analysis_reports_not_reached(tmp_path):
    acc = [10.0, 100.0]
    runs = [_run("sgd", 1e-4, None, 0, acc, [0.2, 0.05]),
            _run("simba", 1e-4, 0.01, 0, acc, [0.2, 0.1])]
    a = S.analyse(_result(runs))["toy"]
    assert a["accesses_to_pegasos_best"] == {"Pegasos": 100.0, "SIMBA": None}
    assert "pegasos_over_simba" not in a
    S.figures(_result(runs), tmp_path)
    assert "SIMBA not reached" in (tmp_path / "simba_summary.md").read_text()
