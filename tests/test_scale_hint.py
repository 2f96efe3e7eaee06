"""The unscaled-data hint: a fit that stops short on features of very different
scales names the spread and the remedy (never rescaling silently)."""
from __future__ import annotations

import numpy as np

from primaldual import cli
from primaldual._util.scales import column_scales, scale_spread_note


def _write(path, X, y):
    with open(path, "w") as fh:
        for xi, yi in zip(X, y):
            fh.write(f"{int(yi)} " + " ".join(f"{j + 1}:{v:.6g}" for j, v in enumerate(xi))
                     + "\n")


def _unscaled(n=200, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 3)) * np.array([1.0, 5e3, 1e-2])
    y = np.where(X[:, 0] + 0.3 * rng.standard_normal(n) > 0, 1, -1)
    return X, y


def test_column_scales_and_the_note():
    X, _ = _unscaled()
    np.testing.assert_array_equal(column_scales(X), np.abs(X).max(0))
    note = scale_spread_note(X)
    assert "column 1" in note and "column 2" in note and "StandardScaler" in note
    assert scale_spread_note(X / np.abs(X).max(0)) == ""
    assert scale_spread_note(np.zeros((3, 2))) == ""         # no nonzero column pair


def test_cli_fit_hint_names_the_spread(tmp_path, capsys):
    X, y = _unscaled()
    path = tmp_path / "unscaled.svm"
    _write(path, X, y)
    cli.main(["fit", str(path), "--solver", "sdca", "--max-epochs", "2"])
    err = capsys.readouterr().err
    # the remedy is --scale (per column, as svm-scale), never row normalization,
    # and the features are numbered as in the file (1-based)
    assert "scales differ" in err and "--scale" in err and "svm-scale" in err
    assert "--normalize" not in err
    assert "feature 2 reaches" in err and "feature 3 only" in err
    # with --normalize the rows are scaled as asked: no spread hint
    cli.main(["fit", str(path), "--solver", "sdca", "--max-epochs", "2", "--normalize"])
    assert "scales differ" not in capsys.readouterr().err
