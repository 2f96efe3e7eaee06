"""The regime suite (issue 21): seeded generators with the promised shapes, and the
benchmark's smoke run (benchmarks/bench_regimes.py).

No test here times anything: the shapes, the seeding and the records are checked.
"""
from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

from primaldual.datasets import (REGIMES, load_shared_regime, load_svmlight, make_duplicated_rows,
                                 make_mixed_scales, make_one_hot, make_orthogonal_text,
                                 make_regime, make_shared_vocab_text, make_standardized_dense,
                                 make_tiny, make_unscaled_dense, make_very_wide_sparse,
                                 regime_cosine, regime_stats, shared_regimes)
from primaldual.datasets.fetch import find
from primaldual.rows import as_rows
from primaldual.blocks.sdca_threads import mean_row_cosine

ROOT = Path(__file__).resolve().parents[1]

#: a small version of every regime: (regime, scale)
SMALL = {"shared_vocab_text": 0.005, "orthogonal_text": 0.01, "very_wide_sparse": 0.05,
         "one_hot": 0.005, "tall_narrow_unscaled": 0.005, "dense_mixed_scales": 0.05,
         "standardized_dense": 0.5, "tiny": 1.0, "duplicated_rows": 0.02}


def _same(a, b):
    if sp.issparse(a):
        return (sp.issparse(b) and a.shape == b.shape and np.array_equal(a.indptr, b.indptr)
                and np.array_equal(a.indices, b.indices) and np.array_equal(a.data, b.data))
    return not sp.issparse(b) and np.array_equal(a, b)


def test_every_regime_has_a_small_version():
    assert set(SMALL) == set(REGIMES)
    for name, reg in REGIMES.items():
        assert reg.name == name and reg.description and reg.n_samples >= 2


@pytest.mark.parametrize("name", sorted(SMALL))
def test_seeded_labels_pm1_and_both_classes(name):
    X, y = make_regime(name, scale=SMALL[name], random_state=7)
    X2, y2 = make_regime(name, scale=SMALL[name], random_state=7)
    assert _same(X, X2) and np.array_equal(y, y2)            # every choice from the seed
    X3, y3 = make_regime(name, scale=SMALL[name], random_state=8)
    assert not (_same(X, X3) and np.array_equal(y, y3))
    assert X.shape[0] == y.shape[0] == max(50, round(SMALL[name] * REGIMES[name].n_samples))
    assert set(np.unique(y)) == {-1.0, 1.0}
    assert 0.3 < np.mean(y > 0) < 0.7                      # the planted model splits evenly
    assert X.dtype == np.float64
    if sp.issparse(X):
        assert X.format == "csr" and X.has_sorted_indices
        X.check_format(full_check=True)


def test_unknown_regime_and_bad_scale_are_refused():
    with pytest.raises(ValueError, match="unknown regime 'nope'"):
        make_regime("nope")
    with pytest.raises(ValueError, match="scale must be > 0"):
        make_regime("tiny", scale=0)
    with pytest.raises(ValueError, match="noise"):
        make_tiny(noise=0.7)


def test_shared_vocabulary_text_is_raw_counts_with_high_row_cosine():
    X, y = make_shared_vocab_text(n_samples=2000, random_state=1)
    assert X.shape == (2000, 100_000)
    assert 50 <= X.nnz / X.shape[0] <= 65                   # about 57 words a row
    norms = np.sqrt(np.asarray(X.multiply(X).sum(axis=1)).ravel())
    np.testing.assert_allclose(norms, 1.0, rtol=1e-12)
    assert regime_cosine(X) >= 0.4
    C, _ = make_shared_vocab_text(n_samples=2000, unit_rows=False, random_state=1)
    assert np.all(C.data >= 1) and np.all(C.data == np.round(C.data))   # raw counts
    np.testing.assert_allclose(C.data / np.repeat(np.sqrt(np.add.reduceat(
        C.data**2, C.indptr[:-1])), np.diff(C.indptr)), X.data, rtol=1e-12)
    assert regime_cosine(C) == pytest.approx(regime_cosine(X), rel=1e-9)


def test_orthogonal_text_has_unit_rows_and_small_row_cosine():
    X, y = make_orthogonal_text(n_samples=2000, random_state=1)
    assert X.shape == (2000, 200_000)
    assert 50 <= X.nnz / X.shape[0] <= 75
    norms = np.sqrt(np.asarray(X.multiply(X).sum(axis=1)).ravel())
    np.testing.assert_allclose(norms, 1.0, rtol=1e-12)
    assert regime_cosine(X) < 0.01


def test_very_wide_sparse_has_d_much_larger_than_n():
    X, y = make_very_wide_sparse(n_samples=1000, random_state=2)
    assert X.shape == (1000, 1_355_191)
    assert X.shape[1] > 1000 * X.shape[0]


def test_one_hot_rows_have_exactly_one_one_per_field_and_a_long_tail():
    n_fields = 6
    X, y = make_one_hot(n_samples=3000, n_fields=n_fields, smallest_field=3,
                        largest_field=20_000, random_state=3)
    assert np.array_equal(np.diff(X.indptr), np.full(3000, n_fields))
    assert np.all(X.data == 1.0)
    sizes = np.round(np.geomspace(3, 20_000, n_fields)).astype(int)
    assert X.shape[1] == sizes.sum()
    edges = np.concatenate([[0], np.cumsum(sizes)])
    field = np.searchsorted(edges, X.indices, side="right") - 1
    assert np.array_equal(field.reshape(3000, n_fields), np.tile(np.arange(n_fields), (3000, 1)))
    counts = np.bincount(X.indices, minlength=X.shape[1])[edges[-2]:]    # the widest field
    seen = counts[counts > 0]
    assert np.mean(seen == 1) > 0.3                          # many categories seen once
    assert counts.max() > 50                                 # and a few frequent ones


def test_tall_narrow_unscaled_columns_span_0_to_255_integers():
    X, y = make_unscaled_dense(n_samples=4000, random_state=4)
    assert isinstance(X, np.ndarray) and X.shape == (4000, 3) and X.flags.c_contiguous
    assert np.all(X == np.round(X))
    np.testing.assert_array_equal(X.min(axis=0), 0.0)
    np.testing.assert_array_equal(X.max(axis=0), 255.0)


def test_mixed_scales_columns_span_five_decades():
    X, y = make_mixed_scales(n_samples=3000, random_state=5)
    sd = X.std(axis=0)
    assert X.shape == (3000, 8)
    assert sd.max() / sd.min() > 1e4


def test_standardized_dense_d_close_to_n():
    X, y = make_standardized_dense(random_state=6)
    assert X.shape == (2000, 500)
    np.testing.assert_allclose(X.mean(axis=0), 0.0, atol=1e-12)
    np.testing.assert_allclose(X.std(axis=0), 1.0, rtol=1e-12)


def test_tiny_default_is_below_1000_rows():
    X, y = make_tiny()
    assert X.shape[0] < 1000
    assert REGIMES["tiny"].n_samples < 1000


def test_duplicated_rows_really_duplicate_with_their_labels():
    X, y = make_duplicated_rows(n_samples=5000, mean_copies=5.0, random_state=7)
    rows = {}
    for i in range(X.shape[0]):
        a, b = X.indptr[i], X.indptr[i + 1]
        key = (X.indices[a:b].tobytes(), X.data[a:b].tobytes())
        rows.setdefault(key, set()).add(y[i])
    assert 700 <= len(rows) <= 1300                          # about 5000 / 5 distinct rows
    assert all(len(labels) == 1 for labels in rows.values())   # a copy keeps its label


@pytest.mark.parametrize("name", ["tiny", "standardized_dense", "shared_vocab_text", "one_hot",
                                  "very_wide_sparse", "duplicated_rows"])
def test_a_linear_model_learns_the_planted_labels(name):
    # (orthogonal_text needs many rows: each row holds ~3 of the 1,000 planted words)
    from sklearn.linear_model import LogisticRegression
    X, y = make_regime(name, scale=max(SMALL[name], 0.01), random_state=9)
    n = X.shape[0]
    cut = int(0.8 * n)
    clf = LogisticRegression(C=10.0, solver="liblinear", max_iter=2000).fit(X[:cut], y[:cut])
    majority = max(np.mean(y[cut:] > 0), np.mean(y[cut:] < 0))
    assert clf.score(X[cut:], y[cut:]) > majority + 0.05


@pytest.mark.parametrize("name", ["shared_vocab_text", "one_hot", "tall_narrow_unscaled",
                                  "tiny"])
def test_regime_cosine_is_the_threaded_solvers_statistic(name):
    X, y = make_regime(name, scale=SMALL[name], random_state=1)
    assert regime_cosine(X) == pytest.approx(mean_row_cosine(as_rows(X)), rel=1e-9, abs=1e-12)


def test_regime_stats_on_a_hand_made_matrix():
    X = sp.csr_matrix(np.array([[3.0, 0.0, 4.0], [0.0, 2.0, 0.0], [6.0, 0.0, 8.0]]))
    y = np.array([1.0, -1.0, -1.0])
    st = regime_stats(X, y)
    assert (st["n"], st["d"], st["nnz"]) == (3, 3, 5)
    assert st["nnz_per_row"] == pytest.approx(5 / 3) and st["density"] == pytest.approx(5 / 9)
    assert (st["min"], st["max"]) == (0.0, 8.0) and st["sparse"]
    assert st["mean_row_norm"] == pytest.approx((5 + 2 + 10) / 3)
    assert st["positive"] == pytest.approx(1 / 3)
    # rows 0 and 2 are parallel (cosine 1), row 1 orthogonal to both: mean 1/3
    assert st["cosine"] == pytest.approx(1 / 3)
    dense = regime_stats(X.toarray(), y)
    assert dense["nnz"] == 5 and not dense["sparse"]
    assert dense["cosine"] == pytest.approx(1 / 3)


def test_shared_sets_load_as_given_with_pm1_labels():
    names = shared_regimes()
    if not names:
        pytest.skip("no shared/data folder with the registered sets on this machine")
    name = "heart" if "heart" in names else names[0]
    X, y = load_shared_regime(name)
    assert set(np.unique(y)) <= {-1.0, 1.0}
    raw, _ = load_svmlight(find(name, download=False), n_features=X.shape[1])
    np.testing.assert_array_equal(X.toarray(), raw.toarray())         # no scaling


# ------------------------------------------------------------ the benchmark
def _bench_module():
    spec = importlib.util.spec_from_file_location("bench_regimes",
                                                  ROOT / "benchmarks" / "bench_regimes.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.slow
def test_quick_bench_runs_end_to_end(tmp_path):
    bench = _bench_module()
    out = tmp_path / "regimes.md"
    records = bench.main(["--quick", "--regimes", "tiny,duplicated_rows", "--no-shared",
                          "--repeats", "1", "--out", str(out)])
    assert [(r["set"], r["loss"]) for r in records] == [
        ("tiny", "hinge"), ("tiny", "logistic"),
        ("duplicated_rows", "hinge"), ("duplicated_rows", "logistic")]
    lines = out.with_suffix(".jsonl").read_text().splitlines()
    assert len(lines) == 4
    for rec, line in zip(records, lines):
        assert json.loads(line)["set"] == rec["set"]
        for nj in (1, 2):
            o = rec["ours"][nj]
            assert len(o["times"]) == 1 and o["epochs"] > 0
            assert o["converged"] == (o["rel_gap"] <= 1e-6)
        if rec["ratio_2_over_1"] is not None:
            assert rec["ratio_2_over_1"] == pytest.approx(
                rec["ours"][2]["median"] / rec["ours"][1]["median"])
        assert rec["flags"] == bench.flags(rec)
        assert 0.0 <= rec["estimator"]["accuracy"] <= 1.0
        for p in rec["peers"].values():
            if p["status"] == "ok":
                assert p["rel_gap"] >= -1e-12 and 0.0 <= p["accuracy"] <= 1.0
    md = out.read_text()
    assert "| tiny | 400 | 20 | 8,000 |" in md and "## Misses" in md
    # --render rebuilds the same table from the records, a later file's record winning
    again = tmp_path / "again.md"
    rerun = tmp_path / "rerun.jsonl"
    rec = json.loads(lines[0])
    rec["estimator"]["accuracy"] = 0.123
    rerun.write_text(json.dumps(rec) + "\n")
    back = bench.main(["--render", str(out.with_suffix(".jsonl")), str(rerun),
                       "--out", str(again)])
    assert [(r["set"], r["loss"]) for r in back] == [(r["set"], r["loss"]) for r in records]
    assert back[0]["estimator"]["accuracy"] == 0.123
    assert again.read_text().split("## solve()")[1].split("## Estimator")[0] == \
        md.split("## solve()")[1].split("## Estimator")[0]


def test_warm_slice_holds_both_labels_of_a_sorted_file():
    bench = _bench_module()
    y = np.concatenate([np.ones(100), -np.ones(100)])
    X = np.arange(400.0).reshape(200, 2)
    Xs, ys = bench.warm_slice(X, y)
    assert ys.size == 64 and (ys > 0).sum() == 32 and (ys < 0).sum() == 32
    np.testing.assert_array_equal(Xs, X[np.r_[0:32, 100:132]])      # rows of X, in order


def test_flags_follow_the_issue_targets():
    bench = _bench_module()
    ok = {"converged": True}

    def rec(ratio, nnz, snap=None):
        return {"ratio_2_over_1": ratio, "nnz": nnz, "ratio_2_over_snap2": snap,
                "ours": {1: ok, 2: ok}}
    assert bench.flags(rec(1.04, 5_000_000)) == []
    assert bench.flags(rec(1.06, 5_000_000)) == ["2/1 = 1.06 > 1.05"]
    assert bench.flags(rec(0.64, 12_000_000)) == []
    assert bench.flags(rec(0.7, 12_000_000)) == ["2/1 = 0.70 > 0.65 (nnz >= 10M)"]
    assert bench.flags(rec(0.5, 12_000_000, snap=1.3)) == ["1.30x Snap ML n_jobs=2"]
    capped = {"ratio_2_over_1": None, "nnz": 10, "ours": {
        1: {"converged": False, "stop_reason": "time_limit", "epochs": 12.0}, 2: ok}}
    assert bench.flags(capped) == ["n_jobs=1 not certified (time_limit, 12 epochs)"]
