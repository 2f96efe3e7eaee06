"""The end-to-end speed benchmark's rules (benchmarks/bench_speed.py, bench/speed.py).

No test here asserts a wall-clock time: they check the reference rule, the
tolerance search, the peer mappings and one small cell end to end.
"""
from __future__ import annotations

import importlib.util
import json
import math
from pathlib import Path

import numpy as np
import pytest
from sklearn.preprocessing import normalize

import primaldual
from primaldual.bench.peers import PEERS, liblinear_options
from primaldual.bench.speed import (REF_CERT, TARGET, certify_reference, decades,
                                    peer_variants, rel_subopt, search_tolerance)
from primaldual.losses import make_loss

from conftest import make_classification_data

ROOT = Path(__file__).resolve().parents[1]


def _bench_module():
    spec = importlib.util.spec_from_file_location("bench_speed",
                                                  ROOT / "benchmarks" / "bench_speed.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


# ---------------------------------------------------------------- reference
def test_reference_takes_lowest_primal_highest_dual_and_certifies():
    ref = certify_reference({"a": 1.0 + 5e-10, "b": 1.0, "c": np.nan},
                            {"a": 1.0 - 5e-10, "b": 0.9, "c": -np.inf})
    assert ref["primal"] == 1.0 and ref["primal_from"] == "b"
    assert ref["dual"] == 1.0 - 5e-10 and ref["dual_from"] == "a"
    assert ref["rel_gap"] == pytest.approx(5e-10) and ref["certified"]
    assert rel_subopt(1.0 + 2e-6, ref) == pytest.approx(2e-6)


def test_reference_wider_than_1e9_makes_the_cell_na():
    ref = certify_reference({"sdca": 2.0}, {"sdca": 2.0 - 2 * 5e-9})
    assert ref["rel_gap"] == pytest.approx(5e-9)
    assert not ref["certified"] and ref["threshold"] == REF_CERT
    assert rel_subopt(2.0, ref) is None          # n/a, not a guess
    assert rel_subopt(2.0, None) is None
    empty = certify_reference({"x": np.inf}, {})
    assert not empty["certified"] and empty["primal"] is None


# --------------------------------------------------------- tolerance search
def test_search_picks_the_loosest_tolerance_that_reaches_the_target():
    calls = []

    def run(tol):                 # sub-optimality proportional to the tolerance
        calls.append(tol)
        return np.array([tol]), 0.01, {"iter": int(-math.log10(tol))}

    tols = decades(1e-1, 1e-10)
    found = search_tolerance(run, tols, lambda c: 3.0 * c[0], TARGET)
    # 3 * tol <= 1e-6  first holds at tol = 10^-6.5 (10^-6 gives 3e-6)
    assert found["reached"] and found["tol"] == pytest.approx(10 ** -6.5)
    assert calls == list(tols[:tols.index(found["tol"]) + 1])     # stops there
    assert found["rel_subopt"] == pytest.approx(3 * 10 ** -6.5)
    assert [t["tol"] for t in found["tried"]] == calls
    assert found["info"] == {"iter": 6} and not found["at_loosest"]
    first = search_tolerance(run, tols, lambda c: 0.0, TARGET)
    assert first["reached"] and first["at_loosest"] and first["tol"] == tols[0]


def test_search_reports_does_not_reach_with_its_best():
    def run(tol):
        return np.array([max(tol, 1e-4)]), 0.0, {"capped": tol < 1e-3}

    found = search_tolerance(run, decades(1e-1, 1e-10), lambda c: c[0],
                             stop=lambda info: "cap" if info["capped"] else None)
    assert not found["reached"] and found["tol"] is None
    assert found["best_subopt"] == pytest.approx(10 ** -3.5) and found["reason"] == "cap"
    assert len(found["tried"]) == 6               # 1e-1 .. 10^-3.5, then the cap stops it

    slow = search_tolerance(lambda tol: (np.array([1.0]), 5.0, {}), [1e-1, 1e-2, 1e-3],
                            lambda c: c[0], cap=2.0)
    assert not slow["reached"] and len(slow["tried"]) == 1 and "time cap" in slow["reason"]


def test_decades():
    assert decades(1.0, 1e-2) == pytest.approx((1.0, 10 ** -0.5, 0.1, 10 ** -1.5, 0.01))
    assert decades(1e-1, 1e-10)[-1] == pytest.approx(1e-10)


# ------------------------------------------------------------------- peers
def test_liblinear_solver_choice_per_loss():
    lg, sqh = make_loss("logistic"), make_loss("squared_hinge")
    assert liblinear_options(lg, 0.5, 4, 0.1, s=0) == "-s 0 -c 0.5 -B -1 -e 0.1"
    assert liblinear_options(sqh, 0.5, 4, 0.1) == "-s 1 -c 0.5 -B -1 -e 0.1"
    assert liblinear_options(sqh, 0.5, 4, 0.1, s=2).startswith("-s 2 ")
    with pytest.raises(ValueError, match="does not solve"):
        liblinear_options(lg, 0.5, 4, 0.1, s=3)
    names = {ls: [v.name for v in peer_variants(ls)] for ls in ("hinge", "squared_hinge",
                                                                 "logistic")}
    assert names["hinge"][:2] == ["LIBLINEAR -s 3", "Snap ML"]
    assert names["squared_hinge"][:3] == ["LIBLINEAR -s 1", "LIBLINEAR -s 2", "Snap ML"]
    assert names["logistic"] == ["LIBLINEAR -s 0", "LIBLINEAR -s 7", "Snap ML",
                                 "sklearn L-BFGS", "sklearn SAGA"]


def test_liblinear_cap_is_300_and_dual_solvers_fall_back_to_newton():
    """LIBLINEAR's dual solvers stop at 300 outer iterations; -s 1 then reruns
    as -s 2 (primal Newton), -s 3 stops (the search ends there)."""
    assert PEERS["liblinear"].max_iter == 300
    rng = np.random.default_rng(0)
    import scipy.sparse as sp
    X = sp.csr_matrix(rng.standard_normal((400, 20)))
    y = np.where(rng.standard_normal(400) > 0, 1.0, -1.0)       # not separable
    by = {v.name: v for v in peer_variants("squared_hinge") + peer_variants("hinge")}
    _, info3 = by["LIBLINEAR -s 3"].fit(X, y, "hinge", 1e-7, 1e-12, 0)
    assert info3["iter"] == 300 and info3["capped"] and "fallback" not in info3
    assert "cap of 300" in by["LIBLINEAR -s 3"].stop(info3)
    coef, info1 = by["LIBLINEAR -s 1"].fit(X, y, "squared_hinge", 1e-7, 1e-12, 0)
    assert info1["capped"] and info1["fallback"] == "-s 2"
    assert by["LIBLINEAR -s 1"].stop(info1) is None           # Newton goes on with -e
    # and the Newton fallback still solves our problem
    ref = primaldual.solve(X, y, loss="squared_hinge", lam=1e-7, solver="lbfgs"
                           if "lbfgs" in primaldual.SOLVERS else "sdca", tol=1e-10,
                           max_epochs=5000)
    prob = primaldual.Problem(X, y, loss="squared_hinge", lam=1e-7)
    assert prob.primal(coef) <= ref.primal * (1 + 1e-6)
    # the harness's trace goes on tightening -e after a fallback, and stops after -s 3's cap
    pts = list(PEERS["liblinear"].trace(X, y, make_loss("squared_hinge"), 1e-7, 0, 10 ** 6))
    capped = [p for p in pts if p.epochs >= 300]
    assert len(capped) >= 2 and all(p.extra.get("fallback") for p in capped)
    pts3 = list(PEERS["liblinear"].trace(X, y, make_loss("hinge"), 1e-7, 0, 10 ** 6))
    assert pts3[-1].epochs == 300 and pts3[-1].stopped
    assert [p.epochs >= 300 for p in pts3].count(True) == 1


# ------------------------------------------------------- one cell end to end
def test_one_cell_end_to_end(tmp_path):
    bench = _bench_module()
    X, y = make_classification_data(n=400, d=20, density=0.4, seed=3)
    X = normalize(X).tocsr()
    args = bench.parse_args(["--quick", "--reps", "2"])
    rec = bench.run_cell("toy", "toy", X, y, "logistic", 1e-3, args)
    ref = rec["reference"]
    assert ref["certified"] and ref["rel_gap"] <= REF_CERT
    # primaldual's tol-1e-10 run certified the reference alone: no LIBLINEAR run needed
    assert set(rec["reference_runs"]) == {"primaldual"}
    pd_ = rec["primaldual"]
    assert len(pd_["times"]) == 2 and pd_["min"] <= pd_["median"]
    assert pd_["converged"] and pd_["rel_gap"] <= 1e-6
    assert -1e-9 <= pd_["rel_subopt"] <= pd_["rel_gap"] + 1e-12     # gap bounds sub-opt
    reached = [p for p in rec["peers"].values() if p.get("reached")]
    assert "LIBLINEAR" in {p["group"] for p in reached}
    first = min(p["times"][0] for p in reached)
    for p in rec["peers"].values():
        if p.get("status") != "ok" or p["reached"]:
            continue
        # a peer left behind is either truly stuck, or its last fit was already
        # slower than twice the fastest peer found before it
        assert p["slower"] == p["reason"].startswith("stopped: its")
        if p["slower"]:
            assert p["tried"][-1]["seconds"] > 2 * first
    for p in reached:
        # repeated unless its first timing is > 2x the fastest peer's first timing
        assert len(p["times"]) == (2 if p["times"][0] <= 2 * first else 1)
        assert p["repeated"] == (len(p["times"]) == 2)
        assert p["rel_subopt"] <= TARGET
        # the chosen tolerance is the loosest tried that reached: every looser one missed
        assert all(t["rel_subopt"] > TARGET for t in p["tried"][:-1])
        assert p["tried"][-1]["tol"] == p["tol"]
    fastest = rec["peers"][rec["fastest_peer"]]
    assert rec["ratio"] == pytest.approx(pd_["median"] / fastest["median"])
    md = bench.render([rec], {"cpu": "x", "cores": 2, "platform": "p",
                              "versions": {"numpy": np.__version__}, "peer_cap": 5.0}, True)
    assert "| toy | logistic | 0.001 |" in md and "Worst ratio" in md
    json.dumps(rec, default=bench._json_default)          # the jsonl record serializes


def test_uncertified_reference_leaves_peers_na(monkeypatch):
    bench = _bench_module()
    X, y = make_classification_data(n=200, d=10, density=0.5, seed=4)
    X = normalize(X).tocsr()
    args = bench.parse_args(["--quick", "--reps", "1"])
    # a reference budget too small to certify 1e-9: the cell must say n/a
    args.ref_epochs = 1
    monkeypatch.setattr(bench, "peer_variants", lambda loss: [
        v for v in peer_variants(loss) if v.group in ("LIBLINEAR", "Snap ML")])
    rec = bench.run_cell("toy", "toy", X, y, "hinge", 1e-4, args)
    assert not rec["reference"]["certified"]
    assert "LIBLINEAR -s 3" in rec["reference_runs"]      # tried, since ours did not certify
    assert rec["primaldual"]["rel_subopt"] is None
    assert rec["peers"]["Snap ML"]["status"] == "n/a (reference not certified)"
    assert rec["peers"]["LIBLINEAR -s 3"]["status"] == "n/a (reference not certified)"
    assert rec["ratio"] is None


def test_search_stops_before_a_fit_once_the_deadline_has_passed():
    import time
    calls = []

    def run(tol):
        calls.append(tol)
        return np.array([1.0]), 0.0, {}

    found = search_tolerance(run, decades(1e-1, 1e-10), lambda c: c[0],
                             deadline=time.perf_counter() - 1.0)
    # one fit is always made (a cell never ends with nothing), then the cut
    assert calls == [1e-1] and found["cut"] and not found["reached"]
    assert "budget" in found["reason"] and found["best_subopt"] == 1.0


def test_search_gives_up_once_a_fit_is_slower_than_the_bar():
    times = iter([0.1, 0.5, 2.0, 8.0])

    def run(tol):
        return np.array([tol]), next(times), {}

    found = search_tolerance(run, [1e-1, 1e-2, 1e-3, 1e-4], lambda c: c[0], 1e-9,
                             give_up_after=1.0)
    assert not found["reached"] and len(found["tried"]) == 3
    assert found["reason"].startswith("stopped: its fit took 2")
