"""The benchmark harness: configs, peer adapters, references, determinism, outputs, demo."""
from __future__ import annotations

import json
import math
import re
from pathlib import Path

import numpy as np
import pytest
from sklearn.preprocessing import normalize

import primaldual
from primaldual.bench import config as C
from primaldual.bench.splits import clear_memory_cache, load_data
from primaldual.bench.harness import compute_reference, run_bench
from primaldual.bench.peers import PEERS, budget_schedule, liblinear_options
from primaldual.bench.report import deterministic_view
from primaldual.losses import make_loss

from conftest import make_classification_data, make_regression_data


def _tiny_config(tmp_path, solvers=("sdca", "sgd", "liblinear", "sklearn-sag")):
    toml = tmp_path / "tiny.toml"
    toml.write_text(f"""
name = "tiny"
seeds = [3]
[reference]
tol = 1e-12
max_epochs = 400
[[experiment]]
name = "t"
datasets = [{{ name = "synthetic:rcv1", n = 300, n_test = 100 }}]
losses = ["hinge", "logistic"]
lams = [1e-2]
solvers = {json.dumps(list(solvers))}
max_epochs = 12
tol = 1e-9
plots = ["subopt-epochs"]
""")
    return toml


# ------------------------------------------------------------------ config
def test_config_parses_toml_and_refuses_unknown_keys(tmp_path):
    cfg = C.load_config(_tiny_config(tmp_path))
    exp = cfg.experiments[0]
    assert cfg.seeds == [3] and cfg.reference.max_epochs == 400
    assert exp.datasets[0].source == "synthetic" and exp.datasets[0].name == "rcv1"
    assert [s.kind for s in exp.solvers] == ["ours", "ours", "peer", "peer"]
    with pytest.raises(ValueError, match="unknown key"):
        C.parse_config({"experiment": [{"name": "x", "datasets": ["a9a"], "losses": ["hinge"],
                                        "lams": [1e-3], "solvers": ["sdca"], "epochs": 3}]})
    with pytest.raises(ValueError, match="unknown peer|unknown solver"):
        C.SolverSpec.parse({"peer": "nope"})
    with pytest.raises(ValueError, match="unknown loss"):
        C.LossSpec.parse("hing")
    with pytest.raises(ValueError, match="synthetic shape"):
        C.DatasetSpec.parse("synthetic:rcv2")
    with pytest.raises(ValueError, match="not a data set bundled"):
        C.DatasetSpec.parse("sklearn:covtype")
    with pytest.raises(ValueError, match="no options"):
        C.SolverSpec.parse({"peer": "liblinear", "options": {"x": 1}})
    base = {"name": "x", "datasets": ["a9a"], "losses": ["hinge"], "lams": [1e-3],
            "solvers": ["sdca"]}
    assert exp.timing == "trace"
    assert C.parse_config({"experiment": [dict(base, timing="refit")]}
                          ).experiments[0].timing == "refit"
    with pytest.raises(ValueError, match="timing must be one of trace, refit"):
        C.parse_config({"experiment": [dict(base, timing="peers")]})


def test_budget_schedule_grows_geometrically_and_ends_at_budget():
    assert budget_schedule(50) == [1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 50]
    assert budget_schedule(1) == [1]
    assert budget_schedule(2.5) == [1, 2, 3]


def test_liblinear_option_mapping():
    hinge, sq = make_loss("hinge"), make_loss("squared")
    eps = make_loss("epsilon_insensitive", {"epsilon": 0.25})
    assert liblinear_options(hinge, 0.5, 4, 0.1) == "-s 3 -c 0.5 -B -1 -e 0.1"
    assert liblinear_options(sq, 0.5, 4, 0.1) == "-s 12 -c 0.25 -B -1 -e 0.1 -p 0.0"
    assert liblinear_options(eps, 0.5, 4, 0.1) == "-s 13 -c 0.5 -B -1 -e 0.1 -p 0.25"


# ------------------------------------------------------------------- peers
# SGD's suboptimality decays like 1/(lam t): on the non-smooth losses 1e-6 would need
# ~1e6 epochs, so for those pairs the check is 1e-3 plus steady improvement (below).
_SGD_NONSMOOTH = {("sklearn-sgd", "hinge"), ("sklearn-sgd", "epsilon_insensitive")}
_LOSSES = [("hinge", None), ("squared_hinge", None), ("logistic", None), ("squared", None),
           ("epsilon_insensitive", {"epsilon": 0.1})]
_PAIRS = [(p, ln, lp) for p in PEERS for ln, lp in _LOSSES
          if PEERS[p].unsupported(make_loss(ln, lp)) is None]


@pytest.mark.parametrize("peer_name,loss_name,loss_params", _PAIRS)
def test_peer_reaches_our_optimum(peer_name, loss_name, loss_params):
    peer = PEERS[peer_name]
    if peer.status() is not None:
        pytest.skip(f"{peer_name}: {peer.status()} (the harness records this too)")
    loss = make_loss(loss_name, loss_params)
    if loss.classification:
        X, y = make_classification_data(n=200, d=15, density=0.5, seed=1)
    else:
        X, y = make_regression_data(n=200, d=15, seed=1)
    X = normalize(X).tocsr()
    lam = 1e-2
    ref = primaldual.solve(X, y, loss=loss_name, loss_params=loss_params, lam=lam,
                           tol=1e-13, max_epochs=5000, random_state=0)
    assert ref.gap <= 1e-12 * abs(ref.primal)
    prob = primaldual.Problem(X, y, loss=loss_name, loss_params=loss_params, lam=lam)
    target = 1e-3 if (peer_name, loss_name) in _SGD_NONSMOOTH else 1e-6
    subopts = []
    for pt in peer.trace(X, y, loss, lam, 0, 4000 if peer_name == "sklearn-sgd" else 2000):
        subopts.append((prob.primal(pt.coef) - ref.primal) / abs(ref.primal))
        if subopts[-1] <= 1e-7:
            break
    assert subopts[-1] <= target, (peer_name, loss_name, subopts[-5:])
    assert subopts[-1] >= -1e-9          # never below a certified optimum
    if (peer_name, loss_name) in _SGD_NONSMOOTH:
        assert subopts[-1] < subopts[len(subopts) // 2] < subopts[0]


_SNAPML_CHECK = """
import json, sys
import numpy as np
from sklearn.preprocessing import normalize
sys.path.insert(0, sys.argv[2])
import snapml            # in the bench extra: `make test` installs it, no skip
import primaldual
from primaldual.bench.peers import snapml_estimator
from conftest import make_classification_data
loss_name = sys.argv[1]
X, y = make_classification_data(n=300, d=15, density=0.5, seed=2)
X = normalize(X).tocsr()
lam = 1e-2
est = snapml_estimator(loss_name, lam, X.shape[0], tol=1e-12, max_iter=100000)
cls = snapml.LogisticRegression if loss_name == "logistic" else snapml.SupportVectorMachine
params = est.get_params()
est.fit(X, y)
# the reference is solved first in a process without snapml: its import turns on
# flush-to-zero for the whole process
ref = json.loads(sys.argv[3])
prob = primaldual.Problem(X, y, loss=loss_name, lam=lam)
other = snapml_estimator(loss_name, 2 * lam, X.shape[0], tol=1e-12, max_iter=100000)
other.fit(X, y)
print(json.dumps({"is_cls": isinstance(est, cls), "regularizer": params["regularizer"],
                  "n_jobs": params["n_jobs"], "fit_intercept": params["fit_intercept"],
                  "loss": params.get("loss"),
                  "primal": prob.primal(np.asarray(est.coef_, dtype=float).ravel()),
                  "other_primal": prob.primal(np.asarray(other.coef_, dtype=float).ravel())}))
"""


@pytest.mark.parametrize("loss_name", ["hinge", "squared_hinge", "logistic"])
def test_snapml_mapping_reaches_our_optimum(loss_name):
    """Snap ML's ``regularizer = lam n`` (no intercept, one thread) solves our
    problem: its coefficients reach our certified optimum.  Snap ML runs in a
    subprocess: importing it sets the processor's flush-to-zero mode for the
    whole process, which would change every later test in this one."""
    import json
    import subprocess
    import sys

    from primaldual.bench.peers import snapml_estimator
    X, y = make_classification_data(n=300, d=15, density=0.5, seed=2)
    X = normalize(X).tocsr()
    lam = 1e-2
    ref = primaldual.solve(X, y, loss=loss_name, lam=lam, tol=1e-13, max_epochs=5000,
                           solver="sdca")
    assert ref.gap <= 1e-12 * abs(ref.primal)
    tests_dir = str(Path(__file__).resolve().parent)
    out = subprocess.run([sys.executable, "-c", _SNAPML_CHECK, loss_name, tests_dir,
                          json.dumps(ref.primal)], capture_output=True, text=True,
                         timeout=600)
    assert out.returncode == 0, out.stderr
    r = json.loads(out.stdout.strip().splitlines()[-1])
    assert r["is_cls"]
    assert r["regularizer"] == pytest.approx(lam * 300)
    assert r["n_jobs"] == 1 and r["fit_intercept"] is False
    if loss_name != "logistic":
        assert r["loss"] == loss_name
    sub = (r["primal"] - ref.primal) / ref.primal
    assert -1e-12 <= sub <= 1e-7
    # another scaling of the regularizer is a different problem: the mapping matters
    assert r["other_primal"] > ref.primal * (1 + 1e-4)
    with pytest.raises(ValueError, match="no 'squared' loss"):
        snapml_estimator("squared", lam, 300, tol=1e-3, max_iter=10)


# --------------------------------------------------------------- reference
def test_reference_is_certified_and_records_its_method():
    from primaldual.bench.splits import load_data
    data = load_data(C.DatasetSpec.parse({"name": "synthetic:rcv1", "n": 300}))
    ref = compute_reference(data, C.LossSpec.parse("squared_hinge"), 1e-2,
                            C.ReferenceSettings(tol=1e-12, max_epochs=500))
    assert ref.method in ("sdca", "liblinear")
    assert 0 <= ref.rel_gap <= 1e-11
    assert ref.dual <= ref.primal
    assert ref.candidates["sdca"]["rel_gap"] <= 1e-12


# ------------------------------------------------------ harness end to end
def test_bench_is_deterministic_and_writes_its_outputs(tmp_path):
    cfg = C.load_config(_tiny_config(tmp_path))
    r1 = run_bench(cfg, tmp_path / "a", quiet=True, plots=True)
    r2 = run_bench(cfg, tmp_path / "b", quiet=True, plots=False)
    v1, v2 = deterministic_view(r1.summaries), deterministic_view(r2.summaries)
    assert v1 == v2
    for a, b in zip(r1.runs, r2.runs):
        assert [(x["epoch"], x["primal"], x["dual"]) for x in a.trace] == \
               [(x["epoch"], x["primal"], x["dual"]) for x in b.trace]
    status = {(s["loss"], s["solver"]): s["status"] for s in r1.summaries}
    assert status[("hinge", "sklearn SAG")] == "skipped"        # SAG needs a smooth loss
    assert status[("logistic", "LIBLINEAR")] == "ok"
    ok = [s for s in r1.summaries if s["status"] == "ok"]
    assert all(s["final_test_error"] is not None for s in ok)
    sdca = [s for s in ok if s["solver"] == "sdca" and s["loss"] == "logistic"][0]
    assert sdca["final_rel_gap"] <= 1e-9 and sdca["targets"]["1e-06"]["subopt"] is not None
    out = tmp_path / "a"
    meta = json.loads((out / "meta.json").read_text())
    for key in ("python", "numpy", "scipy", "numba", "sklearn", "liblinear", "primaldual"):
        assert meta["versions"][key]
    assert meta["machine"]["cpu_count"] and meta["seeds"] == [3]
    # peers this run calls are imported to check them; the others only looked up
    assert meta["peers"]["liblinear"] == "ok"
    assert meta["peers"]["lightning-sdca"] in ("installed (not used)", "not installed")
    lines = (out / "traces" / f"{r1.runs[0].run_id}.jsonl").read_text().splitlines()
    recs = [json.loads(x) for x in lines]
    assert recs and all(r["run_id"] == r1.runs[0].run_id for r in recs)
    assert {"epoch", "time", "primal", "dual", "gap", "rel_subopt"} <= set(recs[0])
    assert "| experiment |" in (out / "summary.md").read_text()
    png = out / "plots" / "t_subopt-epochs.png"
    assert png.exists() and png.stat().st_size < 300_000
    refs = json.loads((out / "references.json").read_text())
    assert len(refs) == 2 and all(r["method"] in ("sdca", "liblinear") for r in refs)


def test_cli_runs_a_config_and_reports_errors(tmp_path, capsys):
    from primaldual.bench.cli import main
    toml = _tiny_config(tmp_path, solvers=("sdca",))
    assert main(["--config", str(toml), "--out", str(tmp_path / "o"), "--no-plots"]) == 0
    assert "| t | synthetic:rcv1[n=300]" in capsys.readouterr().out
    assert main(["--preset", "no-such-preset"]) == 2
    assert "unknown preset" in capsys.readouterr().err
    assert main(["--list"]) == 0
    assert "sdca-paper" in capsys.readouterr().out


# ----------------------------------------------------------------- presets
def test_sdca_paper_preset_structure():
    from primaldual.bench.presets import get_preset, presets
    mod = get_preset("sdca-paper")
    assert "sdca-paper" in presets() and callable(mod.figures)
    cfg = mod.build(quick=True)
    losses = {ls.display for e in cfg.experiments for ls in e.losses}
    assert losses == {"γ=1", "hinge (γ=0)", "γ=0.01", "γ=0.1"}
    assert all(e.lams == [1e-3, 1e-4, 1e-5, 1e-6] for e in cfg.experiments)
    sampling = {dict(s.options).get("sampling") for e in cfg.experiments for s in e.solvers
                if s.name == "sdca"}
    assert sampling == {"uniform", "permutation", "cyclic"}
    assert all(dict(s.options).get("shrinking") is False for e in cfg.experiments
               for s in e.solvers if s.name == "sdca")
    assert {d.label for d in cfg.experiments[0].datasets} >= {"astro-ph", "CCAT"}


def test_theorem_bounds():
    from primaldual.bench.presets.sdca_paper import hinge_bound, smooth_bound
    n, lam, gamma, eps = 1000, 1e-4, 1.0, 1e-3
    k = n + 1 / (lam * gamma)
    T = k * math.log(k / eps)             # Theorem 2's sufficient number of steps
    assert smooth_bound(T / n, n, lam, gamma) == pytest.approx(eps, rel=1e-12)
    warm = n + max(0, math.ceil(n * math.log(0.5 * lam * n)))
    T = warm + 5 / (lam * eps)            # Remark 2's sufficient number of steps
    assert hinge_bound(T / n, n, lam) == pytest.approx(eps, rel=1e-12)
    assert np.isinf(hinge_bound(0.5, n, lam))


# -------------------------------------------------------------------- demo
def test_demo_config_and_quick_main(tmp_path, monkeypatch):
    from primaldual import demo
    from primaldual.bench.config import SolverSpec
    cfg, skipped, left_out = demo.build_config(quick=True)
    names = [d.display for d in cfg.experiments[0].datasets]
    assert names[:2] == ["rcv1 (synthetic)", "breast_cancer (sklearn)"]
    solvers = {s.name for s in cfg.experiments[0].solvers}
    assert set(PEERS) <= solvers and "sdca" in solvers
    assert {s for s in primaldual.SOLVERS if not getattr(primaldual.SOLVERS[s],
                                                           "requires_client", False)} <= solvers
    # the real entry point on a tiny budget: two solvers, 200 rows, 2 epochs
    monkeypatch.setattr(demo, "demo_solvers", lambda: (
        [SolverSpec(name="sdca", label="sdca"),
         SolverSpec(name="liblinear", kind="peer", label="LIBLINEAR")], []))
    out = tmp_path / "demo"
    assert demo.main(["--quick", "--out", str(out), "--quiet", "--max-rows", "200",
                      "--max-epochs", "2"]) == 0
    report = (out / "report.md").read_text()
    assert "rcv1 (synthetic)" in report and "breast_cancer (sklearn)" in report
    assert "LIBLINEAR" in report and "![" in report
    assert any(p.suffix == ".png" for p in (out / "plots").iterdir())


def test_minibatch_preset_draws_fig1_top_from_runs(tmp_path):
    # the top-row figure is computed from the runs' traces: epochs to the gap
    import types

    from primaldual.bench.presets import minibatch_paper as M

    def run(solver, epochs_to_hit):
        trace = [{"epoch": float(e), "rel_gap": (0.5 if e < epochs_to_hit else 1e-3)}
                 for e in range(0, 12)]
        return types.SimpleNamespace(status="ok", trace=trace, experiment="b-and-C",
                                     dataset="toy", solver=solver)
    runs = [run("b=1", 4), run("b=16 standard", 4), run("b=16 C=2", 5),
            run("b=128 standard", 8), run("b=128 C=2", 20)]      # 20: never reached
    assert M._epochs_to_gap(runs[1].trace, M.TOP_GAP) == 4.0
    assert M._epochs_to_gap(runs[4].trace, M.TOP_GAP) is None
    assert M._parse_label("b=128 C=4") == (128, 4)
    assert M._parse_label("b=16 standard") == (16, 1)
    made = M.figures(types.SimpleNamespace(runs=runs), tmp_path)
    assert [p.name for p in made] == ["minibatch_fig1_top.png"]
    assert made[0].stat().st_size > 1000


def test_references_are_refined_by_the_runs_certificates():
    # a reference that stopped early: a run goes below its primal value; the
    # reference takes the run's primal and the best dual, and sub-optimalities
    # are recomputed so that none is negative
    from primaldual.bench.harness import Reference, RunResult, refine_references
    ref = Reference(dataset="d", loss="l", lam=1e-8, primal=1.0, dual=0.5, method="sdca",
                    rel_gap=0.5, epochs=3000, time=1.0)

    def run(rid, primals, duals, reference=ref):
        trace = [{"epoch": float(k), "primal": p, "dual": q, "gap": p - q,
                  "rel_gap": (p - q) / p, "subopt": p - 1.0}
                 for k, (p, q) in enumerate(zip(primals, duals))]
        return RunResult(run_id=rid, experiment="e", dataset="d", loss="l", loss_name="hinge",
                         loss_params={}, lam=1e-8, solver=rid, solver_name=rid, kind="ours",
                         options={}, seed=0, status="ok", reason="", trace=trace, data={},
                         reference=reference)
    a = run("a", [2.0, 1.2, 0.9], [0.1, 0.4, 0.6])
    b = run("b", [3.0, 0.95], [0.0, 0.55])
    other = run("c", [5.0], [0.0], reference=None)
    changed = refine_references([a, b, other])
    assert sorted(changed) == ["a", "b"]
    assert ref.primal == 0.9 and ref.dual == 0.6
    assert ref.candidates["runs"] == {"primal": 0.9, "run_id": "a"}
    assert ref.rel_gap == pytest.approx((0.9 - 0.6) / 0.9)
    assert min(r["subopt"] for r in a.trace + b.trace) == 0.0
    assert b.trace[-1]["subopt"] == pytest.approx(0.05)
    assert other.trace[0]["subopt"] == 4.0                # untouched
    assert refine_references([a, b]) == []                # nothing left to refine


def test_harness_warms_each_solver_up_once_on_a_small_slice(monkeypatch):
    """The first timed run of a solver must not carry Numba's compile time: the
    harness first runs it on 64 rows of the same data, once per process."""
    from primaldual.bench import harness
    from primaldual.bench.splits import load_data
    data = load_data(C.DatasetSpec.parse({"name": "synthetic:rcv1", "n": 300}))
    calls = []
    real = primaldual.solve

    def spy(X, y, **kw):
        calls.append((X.shape, type(X).__name__, kw["solver"], kw["loss"]))
        return real(X, y, **kw)

    monkeypatch.setattr(primaldual, "solve", spy)
    monkeypatch.setattr(harness, "_WARMED", set())
    sspec = C.SolverSpec.parse({"solver": "sdca", "options": {"shrinking": False}})
    lspec = C.LossSpec.parse("logistic")
    harness.warm_up(data, lspec, 1e-3, sspec)
    harness.warm_up(data, lspec, 1e-3, sspec)
    assert calls == [((64, data.X.shape[1]), "csr_matrix", "sdca", "logistic")]
    harness.warm_up(data, C.LossSpec.parse("hinge"), 1e-3, sspec)
    assert len(calls) == 2


def test_importing_snapml_leaves_ieee_arithmetic():
    """Snap ML's library turns on flush-to-zero when it loads; the adapter puts the
    default floating-point environment back, so subnormals survive afterwards."""
    from primaldual.bench.peers import import_snapml
    import_snapml()
    x = np.array([1e-310])
    assert (x * 1.0)[0] == 1e-310


# ------------------------------------------------------- the one data loader
_TOY = b"".join(b"%d 1:%d 2:0.5 %d:1\n" % (2 if i % 3 else 1, i + 1, 3 + i % 2)
                for i in range(12))


@pytest.fixture
def toy_registry(tmp_path, monkeypatch):
    """A registered set 'benchtoy' (labels 1/2, 4 features) in $PRIMALDUAL_DATA."""
    import primaldual.datasets as D
    from primaldual.bench.splits import clear_memory_cache

    data = tmp_path / "data"
    data.mkdir()
    (data / "benchtoy.svm").write_bytes(_TOY)
    monkeypatch.setenv("PRIMALDUAL_DATA", str(data))
    monkeypatch.setenv("PRIMALDUAL_CACHE", str(tmp_path / "cache"))
    ds = D.Dataset("benchtoy", D.DataFile("benchtoy.svm"), None, 4, 1.0, 2.0, "bench toy")
    monkeypatch.setitem(D.REGISTRY, "benchtoy", ds)
    clear_memory_cache()
    yield data
    clear_memory_cache()


def test_bench_registry_head_is_the_loader_head(toy_registry):
    import primaldual.datasets as D
    from primaldual.bench.splits import load_data

    X, y = D.load("benchtoy", download=False)
    d = load_data(C.DatasetSpec.parse({"name": "benchtoy", "n": 5, "subsample": "head",
                                       "scale": "none"}))
    assert d.X.shape == (5, 4) and d.X_test is None
    np.testing.assert_array_equal(d.X.toarray(), X[:5].toarray())
    np.testing.assert_array_equal(d.y, y[:5])
    assert set(np.unique(d.y)) == {-1.0, 1.0} and "first 5 rows of benchtoy.svm" in d.note


def test_bench_registry_random_subsample_and_parsed_cache(toy_registry, tmp_path):
    import primaldual.datasets as D
    from primaldual.bench.splits import clear_memory_cache, load_data

    X, y = D.load("benchtoy", download=False)
    spec = C.DatasetSpec.parse({"name": "benchtoy", "n": 6, "subsample": "random",
                                "test_fraction": 0.25, "scale": "none", "seed": 3})
    d = load_data(spec)
    assert d.X.shape[0] + d.X_test.shape[0] == 9 and d.X.shape[0] == 6
    rows = {tuple(r) for r in X.toarray()}
    assert all(tuple(r) in rows for r in np.vstack([d.X.toarray(), d.X_test.toarray()]))
    cached = list((tmp_path / "cache" / "parsed").iterdir())
    assert len(cached) == 1 and cached[0].suffix == ".npz"      # no temporary file left
    clear_memory_cache()
    d2 = load_data(spec)                                        # from the .npz, same draw
    np.testing.assert_array_equal(d2.X.toarray(), d.X.toarray())
    np.testing.assert_array_equal(d2.y, d.y)


def test_planted_source_draws_make_planted_text():
    """``planted:SHAPE`` is make_planted_text's draw (n + n_test rows of one seed,
    the first n for training, unit rows), not make_synthetic's; unknown shapes are
    errors naming the planted shapes."""
    spec = C.DatasetSpec.parse({"name": "planted:Real-Sim", "n": 1500, "n_test": 500,
                                "seed": 4})
    assert (spec.source, spec.name, spec.display) == ("planted", "real-sim",
                                                      "planted:real-sim[n=1500]")
    clear_memory_cache()
    d = load_data(spec)
    X, y, _ = primaldual.datasets.make_planted_text("real-sim", n_samples=2000,
                                                    random_state=4)
    np.testing.assert_array_equal(d.y, y[:1500])
    np.testing.assert_array_equal(d.y_test, y[1500:])
    np.testing.assert_allclose(d.X.toarray(), normalize(X[:1500]).toarray(), rtol=1e-12)
    assert "planted-text real-sim" in d.note
    Xs, ys, _ = primaldual.datasets.make_synthetic("real-sim", n_samples=2000, random_state=4)
    assert not np.array_equal(ys[:1500], d.y)
    with pytest.raises(ValueError, match="unknown planted shape 'rcv1'.*news20, real-sim"):
        C.DatasetSpec.parse("planted:rcv1")
    with pytest.raises(ValueError, match="source must be one of .*planted"):
        C.DatasetSpec.parse({"name": "x", "source": "plant"})


def test_the_bench_reads_data_files_only_through_primaldual_datasets():
    """The bench uses the one loader: no module of primaldual.bench parses or loads
    a data file itself (no svmlight reader of its own, no np.load of a kept parse)."""
    import primaldual.bench as B

    readers = re.compile(r"load_svmlight_files?\(|np\.load\(|load_npz\(|"
                         r"sklearn\.datasets import load_svmlight")
    for path in Path(B.__file__).parent.rglob("*.py"):
        for lineno, line in enumerate(path.read_text().splitlines(), 1):
            hits = [m.group(0) for m in readers.finditer(line)
                    if not line[:m.start()].endswith("datasets.")]
            assert not hits, f"{path.name}:{lineno} reads data itself: {line.strip()}"


def test_bench_file_source_uses_the_loader_errors(tmp_path):
    import primaldual.datasets as D
    from primaldual.bench.splits import clear_memory_cache, load_data

    clear_memory_cache()
    bad = tmp_path / "bad.svm"
    bad.write_bytes(b"1 1:1\n3 1:2\n3 2:x\n")
    with pytest.raises(D.DataFormatError, match="line 3"):
        load_data(C.DatasetSpec.parse({"name": f"file:{bad}", "test_fraction": 0.5}))
    good = tmp_path / "good.svm"
    good.write_bytes(b"1 1:1\n3 1:2\n3 2:1\n1 2:2\n")
    d = load_data(C.DatasetSpec.parse({"name": f"file:{good}", "test_fraction": 0.5,
                                       "scale": "none"}))
    assert sorted(np.concatenate([d.y, d.y_test]).tolist()) == [-1, -1, 1, 1]
    assert "label 3 = +1" in d.note
