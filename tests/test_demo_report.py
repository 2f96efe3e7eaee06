"""The demo's report: the first screen (one row per data set and loss: the time of
primaldual's fastest solver to the certified target with the solver that holds
the certificate, its gap and test error, each peer's time by the same rule with
the ratio and the certified sub-optimality of its last model), built on a
synthetic result and on a real run; the refit timing rule shared by our solvers
and the peers; the data table stating the scaling; the plots (one panel per data
set, legend outside the axes, positive log axes that the points alone span, ours
solid and peers dashed, the holders drawn); the self-contained HTML and the
warm-up before the timed runs."""
from __future__ import annotations

import base64
import re
import types

import numpy as np
import pytest

import primaldual
from primaldual import demo
from primaldual.bench import harness
from primaldual.bench.config import (BenchConfig, DatasetSpec, Experiment, LossSpec,
                                     ReferenceSettings, SolverSpec)
from primaldual.bench.peers import Peer, budget_schedule


RESULT = {}


@pytest.fixture(scope="module")
def demo_out(tmp_path_factory):
    out = tmp_path_factory.mktemp("demo") / "demo"
    solvers = [SolverSpec(name="sdca", label="sdca"), SolverSpec(name="sag", label="sag"),
               SolverSpec(name="liblinear", kind="peer", label="LIBLINEAR"),
               SolverSpec(name="sklearn-saga", kind="peer", label="sklearn SAGA")]
    mp = pytest.MonkeyPatch()
    mp.setattr(demo, "demo_solvers", lambda: (solvers, [("cocoa", "needs a Dask client")]))
    mp.setenv("PRIMALDUAL_DATA", str(out.parent / "nodata"))
    calls = []
    real_warm_up = demo.warm_up
    mp.setattr(demo, "warm_up", lambda **kw: calls.append(kw) or real_warm_up(**kw))
    real_plots = demo._plots
    mp.setattr(demo, "_plots", lambda result, rows: (RESULT.update(result=result),
                                                    real_plots(result, rows))[1])
    try:
        assert demo.main(["--quick", "--out", str(out), "--quiet", "--max-rows", "300",
                          "--max-epochs", "40"]) == 0
    finally:
        mp.undo()
    assert len(calls) == 1
    return out


# ------------------------------------------------- the table on a synthetic result
def _summary(ds, loss, solver, kind, *, hit=None, gap=1e-9, certified=1e-9, test=0.1):
    """A run summary as report.summarize_run writes it: ``hit`` is the time to the
    certified target 1e-4 (None: not reached)."""
    cell = None if hit is None else {"epoch": 4.0, "time": hit}
    return {"dataset": ds, "loss": loss, "solver": solver, "kind": kind, "status": "ok",
            "final_rel_gap": gap, "final_certified_subopt": certified,
            "final_test_error": test,
            "targets": {"0.0001": {"certified": cell, "gap": None, "subopt": None}}}


def _synthetic_result():
    s = [  # toy, hinge: newton is first to the target, sdca second, ipm never
        _summary("toy", "hinge", "sdca", "ours", hit=0.02, gap=3e-9, test=0.12),
        _summary("toy", "hinge", "newton", "ours", hit=0.01, gap=1e-12, certified=1e-12,
                 test=0.11),
        _summary("toy", "hinge", "ipm", "ours", hit=None, gap=2e-3, certified=2e-3),
        _summary("toy", "hinge", "LIBLINEAR", "peer", hit=0.05, certified=3e-9),
        _summary("toy", "hinge", "sklearn SGD", "peer", hit=None, certified=2e-2),
        # toy, logistic: none of ours reaches it; sag is certified closest
        _summary("toy", "logistic", "sdca", "ours", hit=None, gap=5e-3, certified=4e-3,
                 test=0.2),
        _summary("toy", "logistic", "sag", "ours", hit=None, gap=6e-4, certified=5e-4,
                 test=0.19),
        _summary("toy", "logistic", "LIBLINEAR", "peer", hit=0.004, certified=1e-6),
        _summary("toy", "logistic", "sklearn SGD", "peer", hit=None, certified=3e-1),
        _summary("toy", "logistic", "sklearn SAGA", "peer", hit=0.3, certified=1e-8)]
    s.append(dict(s[0], solver="lbfgs", status="skipped"))        # not ok: ignored
    runs = [types.SimpleNamespace(dataset=x["dataset"], loss=x["loss"]) for x in s]
    return types.SimpleNamespace(summaries=s, runs=runs)


def test_glance_names_the_holder_and_certifies_each_peer():
    rows, peers = demo.glance(_synthetic_result())
    assert peers == ["LIBLINEAR", "sklearn SGD", "sklearn SAGA"]
    assert [(r["dataset"], r["loss"]) for r in rows] == [("toy", "hinge"), ("toy", "logistic")]
    hinge, logistic = rows
    # the time, the gap and the test error come from one solver: the first to the target
    assert (hinge["time"], hinge["solver"], hinge["gap"], hinge["test_error"]) == \
        (0.01, "newton", 1e-12, 0.11)
    assert hinge["peers"]["LIBLINEAR"] == {"time": 0.05, "ratio": pytest.approx(5.0),
                                           "certified": 3e-9}
    assert hinge["peers"]["sklearn SGD"] == {"time": None, "ratio": None, "certified": 2e-2}
    assert hinge["peers"]["sklearn SAGA"] is None               # not run on the hinge
    # nobody of ours reached it: the solver certified closest holds the row, no time
    assert (logistic["time"], logistic["solver"], logistic["gap"]) == (None, "sag", 6e-4)
    assert logistic["peers"]["LIBLINEAR"] == {"time": 0.004, "ratio": None,
                                              "certified": 1e-6}


def test_glance_table_columns_and_cells():
    head, body = demo.glance_table(*demo.glance(_synthetic_result()))
    assert head == ["data set", "loss", "primaldual to 1e-4", "certified gap", "test error",
                    "LIBLINEAR", "sklearn SGD", "sklearn SAGA"]
    assert body[0] == ["toy", "hinge", "10 ms (newton)", "1.0e-12", "11.0%",
                       "50 ms (×5); 3e-09", "not reached; 2e-02", "n/a"]
    assert body[1] == ["toy", "logistic", "not reached (sag)", "6.0e-04", "19.0%",
                       "4 ms; 1e-06", "not reached; 3e-01", "300 ms; 1e-08"]


def test_gaps_at_rounding_level_are_not_shown_as_numbers():
    result = _synthetic_result()
    result.summaries[1]["final_rel_gap"] = -2.3e-15     # newton at machine precision
    result.summaries[3]["final_certified_subopt"] = 4e-16
    head, body = demo.glance_table(*demo.glance(result))
    assert body[0][3] == "<1e-15" and body[0][5] == "50 ms (×5); <1e-15"


def test_plot_choice_draws_every_holder():
    result = _synthetic_result()
    rows, _ = demo.glance(result)
    ours, peers = demo.plot_choice(result, "hinge", rows)
    assert ours[:2] == ["sdca", "newton"]
    assert peers == ["LIBLINEAR", "sklearn SGD"]
    ours, _ = demo.plot_choice(result, "logistic", rows)
    assert ours == ["sdca", "sag"]
    # a holder is drawn even when PLOT_OURS other solvers are faster on other rows
    many = [dict(_summary(f"set{k}", "hinge", name, "ours", hit=0.001 * (j + 1)))
            for k in range(2) for j, name in enumerate(["afg", "asdca", "bmrm", "psgd"])]
    many.append(_summary("set2", "hinge", "newton", "ours", hit=0.5))
    res = types.SimpleNamespace(summaries=many, runs=[
        types.SimpleNamespace(dataset=x["dataset"], loss="hinge") for x in many])
    rows, _ = demo.glance(res)
    ours, _ = demo.plot_choice(res, "hinge", rows)
    assert "newton" in ours and ours[0] == "sdca"


def test_ipm_left_out_where_one_iteration_is_unaffordable(tmp_path):
    """admit=affordable: ipm is skipped (with the reason) on 2,500 x 47,236 rcv1 rows,
    runs on breast_cancer's 30; other solvers are never held back."""
    small = DatasetSpec(name="breast_cancer", source="sklearn", scale="maxabs+unit",
                        test_fraction=0.25, label="bc")
    wide = DatasetSpec(name="rcv1", source="synthetic", n=2500, n_test=100, label="rcv1")
    hinge = LossSpec(name="hinge")
    assert demo.affordable(harness.load_data(wide), hinge, 1e-4, SolverSpec("ipm")) \
        == demo.UNAFFORDABLE
    assert demo.affordable(harness.load_data(wide), hinge, 1e-4, SolverSpec("sdca")) is None
    assert demo.affordable(harness.load_data(small), hinge, 1e-4, SolverSpec("ipm")) is None
    exp = Experiment(name="h", datasets=[small, wide], losses=[hinge], lams=[1e-2],
                     solvers=[SolverSpec("ipm")], max_epochs=4, timing="refit")
    cfg = BenchConfig(name="t", experiments=[exp], reference=ReferenceSettings(max_epochs=20))
    res = harness.run_bench(cfg, tmp_path, quiet=True, plots=False, admit=demo.affordable)
    status = {r.dataset: (r.status, r.reason) for r in res.runs}
    assert status == {"bc": ("ok", ""), "rcv1": ("skipped", demo.UNAFFORDABLE)}


# ---------------------------------------------------- one timing rule for all
class _Clock:
    """A fake perf_counter: each fit advances it by its epoch budget in seconds."""

    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


def test_refit_times_each_fit_alone_like_a_peer(monkeypatch):
    """timing="refit": one fresh solve per budget of the peers' schedule, the time of
    a point that fit's wall time alone (not the run's time so far), the model of a
    point that of solve(max_epochs=budget)."""
    clock = _Clock()
    monkeypatch.setattr(harness.time, "perf_counter", clock)
    real_solve = primaldual.solve
    budgets = []

    def solve(*a, max_epochs=None, **k):
        budgets.append(max_epochs)
        clock.now += max_epochs              # this fit takes `max_epochs` seconds
        return real_solve(*a, max_epochs=max_epochs, **k)

    monkeypatch.setattr(harness.primaldual, "solve", solve)
    monkeypatch.setattr(harness, "warm_up", lambda *a: None)
    data = harness.load_data(DatasetSpec(name="breast_cancer", source="sklearn",
                                         scale="maxabs+unit", test_fraction=0.25))
    exp = Experiment(name="t", datasets=[], losses=[], lams=[1e-3], solvers=[],
                     max_epochs=12, tol=1e-14, timing="refit")
    lspec, sspec = LossSpec(name="hinge"), SolverSpec(name="sdca")
    monkeypatch.setattr(harness.primaldual, "solve", real_solve)
    ref = harness.compute_reference(data, lspec, 1e-3, ReferenceSettings(max_epochs=50))
    monkeypatch.setattr(harness.primaldual, "solve", solve)
    status, reason, trace, _ = harness._execute(data, lspec, 1e-3, sspec, 0, exp, ref)
    assert status == "ok", reason
    assert budgets == budget_schedule(12) == [1, 2, 3, 4, 6, 8, 12]
    assert [r["time"] for r in trace] == [float(b) for b in budgets]
    assert [r["epoch"] for r in trace] == [float(b) for b in budgets]
    for rec, b in zip(trace, budgets):
        alone = real_solve(data.X, data.y, loss="hinge", lam=1e-3, solver="sdca", tol=1e-14,
                           max_epochs=b, random_state=0)
        assert rec["primal"] == alone.primal and rec["dual"] == alone.dual
        err = np.mean(np.where(data.X_test @ alone.coef > 0, 1.0, -1.0) != data.y_test)
        assert rec["test_error"] == err
        assert rec["certified_subopt"] == pytest.approx(
            (alone.primal - ref.dual) / abs(alone.primal), rel=1e-12)

    # a peer is timed by the same rule: its point at budget b is one fit of b seconds
    class Toy(Peer):
        def _fit(self, state, X, y, loss, lam, seed, budget):
            clock.now += budget
            return np.zeros(X.shape[1]), budget

    monkeypatch.setattr(primaldual.bench.peers.time, "perf_counter", clock)
    pts = list(Toy().trace(data.X, data.y, None, 1e-3, 0, 12))
    assert [p.time for p in pts] == [float(b) for b in budgets]


def test_certified_subopt_bounds_the_true_suboptimality():
    """Any model's (P(w) - D_best)/|P(w)| is at least its true relative
    sub-optimality (D_best <= P*), and the harness's reference dual is such a D."""
    data = harness.load_data(DatasetSpec(name="breast_cancer", source="sklearn",
                                         scale="maxabs+unit", test_fraction=0.25))
    prob = primaldual.Problem(data.X, data.y, loss="squared_hinge", lam=1e-3)
    star = primaldual.solve(data.X, data.y, loss="squared_hinge", lam=1e-3, solver="newton",
                            tol=1e-14)
    assert star.gap <= 1e-13 * abs(star.primal)
    ref = harness.compute_reference(data, LossSpec(name="squared_hinge"), 1e-3,
                                    ReferenceSettings(max_epochs=30, liblinear=False))
    assert ref.dual <= star.primal + 1e-12
    rng = np.random.default_rng(0)
    for scale in (1e-6, 1e-3, 1e-1):
        w = star.coef + scale * rng.standard_normal(star.coef.size)
        p = prob.primal(w)
        c = harness.certified_subopt(p, ref.dual)
        assert c >= (p - star.primal) / abs(p) - 1e-15
        assert c == pytest.approx((p - ref.dual) / abs(p), rel=1e-12)


# ------------------------------------------------------- the report of a real run
def test_first_screen(demo_out):
    report = (demo_out / "report.md").read_text()
    first = report.split("## Data")[0]
    head = [ln for ln in first.splitlines() if ln.startswith("| data set")]
    assert len(head) == 1
    cols = [c.strip() for c in head[0].strip("|").split("|")]
    assert cols[:5] == ["data set", "loss", "primaldual to 1e-4", "certified gap",
                        "test error"]
    assert "LIBLINEAR" in cols and "sklearn SAGA" in cols
    rows = [ln for ln in first.splitlines() if ln.startswith("| ") and ln not in head]
    datasets = {r.split("|")[1].strip() for r in rows}
    assert {"rcv1 (synthetic)", "breast_cancer (sklearn)"} <= datasets
    assert len(rows) == 3 * len(datasets)           # hinge, squared hinge, logistic each
    assert {r.split("|")[2].strip() for r in rows} == {"hinge", "squared_hinge", "logistic"}
    for r in rows:
        cells = [c.strip() for c in r.strip("|").split("|")]
        assert re.fullmatch(r"([\d.]+ m?s|not reached) \((sdca|sag)\)", cells[2]), cells
        assert re.fullmatch(r"\d\.\de[-+]\d\d", cells[3]), cells
        assert re.fullmatch(r"\d+\.\d%", cells[4]), cells
        for c in cells[5:]:
            assert c == "n/a" or re.fullmatch(
                r"(not reached|[\d.]+ m?s( \(×[\d.e+-]+\))?); \d[.\d]*e[-+]\d\d", c), c
    # SAGA does not fit the hinge losses; it is n/a there, never a time
    hinges = [r for r in rows if r.split("|")[2].strip() != "logistic"]
    assert all(r.strip("|").split("|")[cols.index("sklearn SAGA")].strip() == "n/a"
               for r in hinges)
    assert "ratio peer time / primaldual time" in first
    assert "certified sub-optimality" in first and "holds the certificate" in first
    assert "The timing rule" in first and "a fresh fit for each budget" in first
    assert "warm-up" in first


def test_first_screen_recomputed_from_the_summaries(demo_out):
    """Every time, holder, gap and ratio on the first screen, recomputed from
    summary.json: the holder is the first of ours to a certified 1e-4."""
    import json
    ok = [s for s in json.loads((demo_out / "summary.json").read_text())
          if s["status"] == "ok"]
    report = (demo_out / "report.md").read_text()

    def hit(s):
        c = s["targets"]["0.0001"]["certified"]
        return c["time"] if isinstance(c, dict) else None

    checked = 0
    for ds, loss in {(s["dataset"], s["loss"]) for s in ok}:
        cell = [s for s in ok if s["dataset"] == ds and s["loss"] == loss]
        ours = [(t, s) for s in cell if s["kind"] == "ours" and (t := hit(s)) is not None]
        line = [ln for ln in report.splitlines() if ln.startswith(f"| {ds} | {loss} |")][0]
        cells = [c.strip() for c in line.strip("|").split("|")]
        if ours:
            t0, holder = min(ours, key=lambda ts: ts[0])
            assert cells[2] == f"{demo._secs(t0)} ({holder['solver']})"
            assert cells[3] == f"{holder['final_rel_gap']:.1e}"
        for s in cell:
            if s["kind"] != "peer":
                continue
            assert f"; {s['final_certified_subopt']:.0e}" in line
            if hit(s) is None or not ours:
                continue
            assert f"(×{hit(s) / t0:.2g})" in line, (line, s["solver"])
            checked += 1
    assert checked >= 2


def test_data_table_states_scaling(demo_out):
    report = (demo_out / "report.md").read_text()
    data = report.split("## Data")[1].split("## Plots")[0]
    bc = [ln for ln in data.splitlines() if ln.startswith("| breast_cancer")][0]
    assert "divided by their largest absolute training value" in bc
    assert "unit L2 norm" in bc
    assert "Left out: " in data and "cocoa (needs a Dask client)" in data


def test_plots_one_panel_per_dataset_legend_outside(demo_out):
    import matplotlib
    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    from primaldual.bench import plots as P

    pngs = sorted((demo_out / "plots").glob("*.png"))
    assert [p.name for p in pngs] == ["hinge_certified-time.png", "hinge_gap-epochs.png",
                                      "logistic_certified-time.png", "logistic_gap-epochs.png",
                                      "squared_hinge_certified-time.png",
                                      "squared_hinge_gap-epochs.png"]
    result = RESULT["result"]
    for p in pngs:
        # readable panels: each data set of the loss gets a panel of about
        # 4.3 x 3.3 inches at 90 dpi (one to three per row)
        loss = p.name.rsplit("_", 1)[0]
        n = len({r.dataset for r in result.runs if r.loss == loss and r.status == "ok"})
        ncol = 2 if n in (2, 4) else min(3, n)
        nrow = -(-n // ncol)
        img = plt.imread(p)
        assert img.shape[0] > 240 * nrow and img.shape[1] > 330 * ncol, (p.name, n,
                                                                          img.shape)
    # draw again, keeping the figure, to inspect its artists
    captured = {}
    real_savefig = matplotlib.figure.Figure.savefig

    def keep(fig, *a, **k):
        captured["fig"] = fig
        return real_savefig(fig, *a, **k)

    mp = pytest.MonkeyPatch()
    mp.setattr(matplotlib.figure.Figure, "savefig", keep)
    mp.setattr(plt, "close", lambda *a: None)
    try:
        P.plot_overview(result, "logistic", demo_out / "check.png", ours=["sdca", "sag"],
                        peers=["LIBLINEAR", "sklearn SAGA"], metric="certified", axis="time",
                        target=1e-4)
    finally:
        mp.undo()
    fig = captured["fig"]
    axes = [ax for ax in fig.axes if ax.get_visible()]
    assert len(axes) == len({r.dataset for r in result.runs})
    fig.canvas.draw()
    legend = fig.legends[0]
    lb = legend.get_window_extent()
    for ax in axes:
        assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
        assert all(t > 0 for t in ax.get_xticks()) and all(t > 0 for t in ax.get_yticks())
        assert not ax.get_tightbbox().overlaps(lb)
        drawn = [line for line in ax.get_lines() if not line.get_label().startswith("_")]
        ys = np.concatenate([np.asarray(line.get_ydata(), float) for line in drawn])
        lo, hi = ax.get_ylim()
        # the points alone span the axis (matplotlib's margin, no reference floor);
        # the target line is drawn only inside their range
        assert lo >= ys.min() / 10 and hi <= ys.max() * 10, (lo, hi, ys.min(), ys.max())
        others = [line for line in ax.get_lines() if line not in drawn]
        assert all(ys.min() <= line.get_ydata()[0] <= ys.max() for line in others)
        assert len(others) == (1 if ys.min() <= 1e-4 <= ys.max() else 0)
        for line in ax.get_lines():
            lab = line.get_label()
            if lab in ("sdca", "sag"):
                assert line.get_linestyle() == "-"
            elif lab in ("LIBLINEAR", "sklearn SAGA"):
                assert line.get_linestyle() == "--"
    texts = [t.get_text() for t in legend.get_texts()]
    assert texts[0] == "primaldual (solid)" and "peers (dashed)" in texts
    plt.close(fig)


def test_html_is_self_contained(demo_out):
    html = (demo_out / "report.html").read_text()
    assert html.startswith("<!DOCTYPE html>")
    assert "http://" not in html and "https://" not in html
    imgs = re.findall(r"src='data:image/png;base64,([A-Za-z0-9+/=]+)'", html)
    assert len(imgs) == 6
    assert all(base64.b64decode(b)[:8] == b"\x89PNG\r\n\x1a\n" for b in imgs)
    assert "<th>primaldual to 1e-4</th>" in html and "<h2>Data</h2>" in html


def test_warm_up_compiles_every_solver_that_runs_alone():
    ran = demo.warm_up(losses=("hinge",))
    local = [s for s, c in primaldual.SOLVERS.items()
             if not getattr(c, "requires_client", False)]
    assert 1 <= ran <= len(local)
    assert np.isfinite(ran)
