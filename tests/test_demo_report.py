"""The demo's report: the first screen (one row per data set and loss with the
certified gap, the test error, primaldual's time to the target and each peer's
time with the ratio), the data table stating the scaling, the plots (one panel
per data set, legend outside the axes, positive log axes, ours solid and peers
dashed), the self-contained HTML and the warm-up before the timed runs."""
from __future__ import annotations

import base64
import re

import numpy as np
import pytest

import primaldual
from primaldual import demo
from primaldual.bench.config import SolverSpec


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


def test_first_screen(demo_out):
    report = (demo_out / "report.md").read_text()
    first = report.split("## Data")[0]
    head = [ln for ln in first.splitlines() if ln.startswith("| data set")]
    assert len(head) == 1
    cols = [c.strip() for c in head[0].strip("|").split("|")]
    assert cols[:5] == ["data set", "loss", "certified gap", "test error",
                        "primaldual to 1e-4"]
    assert "LIBLINEAR" in cols and "sklearn SAGA" in cols
    rows = [ln for ln in first.splitlines() if ln.startswith("| ") and ln not in head]
    datasets = {r.split("|")[1].strip() for r in rows}
    assert {"rcv1 (synthetic)", "breast_cancer (sklearn)"} <= datasets
    assert len(rows) == 2 * len(datasets)                    # hinge and logistic each
    for r in rows:
        cells = [c.strip() for c in r.strip("|").split("|")]
        assert re.fullmatch(r"\d\.\de[-+]\d\d \((sdca|sag)\)", cells[2]), cells
        assert re.fullmatch(r"\d+\.\d%", cells[3]), cells
        for c in cells[5:]:
            assert c == "n/a" or c.startswith("not reached") or re.fullmatch(
                r"[\d.]+ m?s \(×[\d.e+-]+\)", c), c
    # SAGA does not fit the hinge loss; it is n/a there, never a time
    hinge = [r for r in rows if r.split("|")[2].strip() == "hinge"]
    assert all(r.strip("|").split("|")[cols.index("sklearn SAGA")].strip() == "n/a"
               for r in hinge)
    assert "ratio peer time / primaldual time" in first
    assert "warm-up" in first


def test_ratios_are_peer_over_ours(demo_out):
    """Every time and ratio on the first screen, recomputed from summary.json."""
    import json
    ok = [s for s in json.loads((demo_out / "summary.json").read_text())
          if s["status"] == "ok"]
    report = (demo_out / "report.md").read_text()

    def hit(s):
        c = s["targets"]["0.0001"]["subopt"]
        return c["time"] if isinstance(c, dict) else None

    checked = 0
    for ds, loss in {(s["dataset"], s["loss"]) for s in ok}:
        cell = [s for s in ok if s["dataset"] == ds and s["loss"] == loss]
        ours = [t for s in cell if s["kind"] == "ours" and (t := hit(s)) is not None]
        line = [ln for ln in report.splitlines() if ln.startswith(f"| {ds} | {loss} |")][0]
        for s in cell:
            if s["kind"] != "peer" or hit(s) is None or not ours:
                continue
            assert f"(×{hit(s) / min(ours):.2g})" in line, (line, s["solver"])
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
    assert [p.name for p in pngs] == ["hinge_gap-epochs.png", "hinge_subopt-time.png",
                                      "logistic_gap-epochs.png", "logistic_subopt-time.png"]
    result = RESULT["result"]
    for p in pngs:
        # readable panels: each data set of the loss gets a panel of about
        # 4.3 x 3.3 inches at 90 dpi (one to three per row)
        loss = p.name.split("_")[0]
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
                        peers=["LIBLINEAR", "sklearn SAGA"], metric="subopt", axis="time")
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
    assert len(imgs) == 4
    assert all(base64.b64decode(b)[:8] == b"\x89PNG\r\n\x1a\n" for b in imgs)
    assert "<th>primaldual to 1e-4</th>" in html and "<h2>Data</h2>" in html


def test_warm_up_compiles_every_solver_that_runs_alone():
    ran = demo.warm_up(losses=("hinge",))
    local = [s for s, c in primaldual.SOLVERS.items()
             if not getattr(c, "requires_client", False)]
    assert 1 <= ran <= len(local)
    assert np.isfinite(ran)
