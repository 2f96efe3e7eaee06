"""lightning's SDCA adapter (``bench/peers.py``, ``bench/speed.py``) solves the
problem of docs/conventions.md §1: its coefficients, scored by
``primaldual.Problem``, reach the optimum certified by ``primaldual.solve``.

lightning (sklearn-contrib-lightning 0.6.2, the last release) builds from
source only with Cython < 3, without build isolation and on Python < 3.12
(it needs ``numpy.distutils``); ``make test`` installs it there
(``make bench-peers``) and then a missing lightning is an error.
"""
from __future__ import annotations

import sys

import numpy as np
import pytest

import primaldual
from primaldual import make_loss
from primaldual.bench.peers import PEERS

from conftest import optional_import

if sys.version_info < (3, 12):
    optional_import("lightning.classification", "lightning is not installed "
                    "(make bench-peers)")
else:
    pytest.importorskip("lightning.classification",
                        reason="lightning does not build on Python >= 3.12")

LAM = 1e-2


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    n, d = 300, 10
    X = rng.normal(size=(n, d))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    y = np.where(X @ rng.normal(size=d) + 0.3 * rng.normal(size=n) > 0, 1.0, -1.0)
    return X, y


def test_status_and_version():
    peer = PEERS["lightning-sdca"]
    assert peer.status() is None
    assert peer.version() is not None
    assert peer.unsupported(make_loss("logistic")) is not None
    assert peer.unsupported(make_loss("hinge")) is None


@pytest.mark.parametrize("loss, params, tol", [
    ("hinge", None, 1e-9),            # lightning's hinge SDCA converges slowly
    ("squared_hinge", None, 1e-12),
    ("smooth_hinge", {"gamma": 0.5}, 1e-12),
    ("smooth_hinge", {"gamma": 1.0}, 1e-12),
])
def test_adapter_reaches_the_certified_optimum(data, loss, params, tol):
    X, y = data
    ref = primaldual.solve(X, y, loss=loss, loss_params=params, lam=LAM, tol=1e-13,
                           max_epochs=5000)
    assert ref.converged
    prob = primaldual.Problem(X, y, loss=loss, loss_params=params, lam=LAM)
    points = list(PEERS["lightning-sdca"].trace(X, y, make_loss(loss, params), LAM,
                                                seed=0, max_epochs=200))
    assert [p.epochs for p in points][:4] == [1.0, 2.0, 3.0, 4.0]
    coef = points[-1].coef
    # P(coef) - D(dual_coef) bounds the sub-optimality of coef from above
    subopt = prob.primal(coef) - ref.dual
    assert -1e-14 <= subopt <= tol * ref.primal
    # the same minimizer (strongly convex primal): |w - w*|^2 <= 2 subopt / lam
    assert np.linalg.norm(coef - ref.coef) <= np.sqrt(2 * max(subopt, 0) / LAM) + 1e-12
    # a one-epoch budget is far from it: the budget reaches lightning
    assert prob.primal(points[0].coef) - ref.dual > 10 * max(subopt, 1e-15)


def test_speed_benchmark_fit(data):
    from primaldual.bench.speed import _lightning_fit
    X, y = data
    ref = primaldual.solve(X, y, loss="squared_hinge", lam=LAM, tol=1e-13, max_epochs=5000)
    coef, _ = _lightning_fit(X, y, "squared_hinge", LAM, 1e-12, 0)
    prob = primaldual.Problem(X, y, loss="squared_hinge", lam=LAM)
    assert prob.primal(coef) - ref.dual <= 1e-10 * ref.primal
