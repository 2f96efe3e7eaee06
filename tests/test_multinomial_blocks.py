"""Multinomial Newton-CG preconditioned by the class blocks of the Hessian
(issue 33; docs/multiclass-models.md): the blocks against the explicit
Hessian, on partitions as in one piece, the optimum against cvxpy, and the
default fit beyond the explicit-Hessian cap on standardized, correlated
features (usps.t standardized stopped at its pass budget, uncertified).
"""
from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import load_digits, load_svmlight_file
from sklearn.preprocessing import StandardScaler

import primaldual
import primaldual.solvers.multinomial as mn
from primaldual.distributed.multinomial_block import MultinomialBlock, add_class_blocks
from primaldual.multiclass import MulticlassProblem
from primaldual.solvers.multinomial import MultinomialNewton

from conftest import shared_file
from test_multiclass import _cvxpy_optimum, blobs


def _digits(n=1797):
    X, y = load_digits(return_X_y=True)
    return StandardScaler(with_mean=False).fit_transform(X[:n]), y[:n]


def test_class_blocks_are_the_diagonal_blocks_of_the_hessian_also_on_partitions():
    X, y = blobs(80, 5, 4, seed=3)
    X[:40, 4] = 0.0                          # partition 0 leaves out a column
    X = sp.csr_matrix(X)
    c = np.random.default_rng(1).random(80) + 0.5
    prob = MulticlassProblem(X, y, "multinomial", 0.01, sample_weight=c)
    s = MultinomialNewton(prob, tol=1e-8, max_epochs=10, random_state=0, hessian="explicit")
    s.init_state(None)
    s._evaluate_at(np.random.default_rng(2).normal(size=(5, 4)))
    H = np.triu(s.data.hessian()).reshape(5, 4, 5, 4)
    B = s.data.class_blocks()
    for k in range(4):
        np.testing.assert_allclose(np.triu(B[k]), np.triu(H[:, k, :, k]), rtol=1e-12,
                                   atol=1e-12)
    # two partitions, one on 4 of the 5 columns: the same blocks, added in order
    block = MultinomialBlock(X, y, c, np.array([0, 40, 80]), 4)
    block.evaluate(s.coef, 0)
    assert block.columns()[0] is not None
    joined = add_class_blocks(block.class_blocks(), block.columns(), 5, 4)
    np.testing.assert_allclose(np.triu(joined), np.triu(B), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("sparse", [False, True])
def test_block_preconditioner_reaches_the_cvxpy_optimum(sparse):
    X, y = blobs(60, 5, 3, seed=7, sparse=sparse)
    c = np.random.default_rng(8).integers(1, 4, 60).astype(float)
    ref = _cvxpy_optimum(X.toarray() if sparse else X, y, 0.02, c, "multinomial")
    res = primaldual.solve(X, y, loss="multinomial", lam=0.02, sample_weight=c, tol=1e-10,
                           hessian="matvec", preconditioner="blocks")
    assert res.converged and res.trace[-1]["block_steps"] == res.trace[-1]["newton_iter"]
    assert abs(res.primal - ref) <= 1e-7 * ref


def test_blocks_cut_cg_iterations_on_correlated_standardized_features():
    X, y = _digits(600)
    lam = 1.0 / (100 * 600)
    runs = {pc: primaldual.solve(X, y, loss="multinomial", lam=lam, tol=1e-8,
                                 hessian="matvec", preconditioner=pc, random_state=0)
            for pc in ("diagonal", "blocks")}
    assert all(r.converged for r in runs.values())
    assert abs(runs["blocks"].primal - runs["diagonal"].primal) <= 1e-7 * runs["blocks"].primal
    assert runs["blocks"].trace[-1]["cg_iter"] <= 0.7 * runs["diagonal"].trace[-1]["cg_iter"]


def test_default_fit_beyond_the_explicit_cap_switches_to_the_blocks(monkeypatch):
    # digits' dK = 640 stands for usps.t's 2,560 > EXPLICIT_MAX_DK: no explicit
    # Hessian, so the default fit is CG, whose diagonal preconditioner is slow here
    monkeypatch.setattr(mn, "EXPLICIT_MAX_DK", 100)
    X, y = _digits()
    res = primaldual.solve(X, y, loss="multinomial", lam=1.0 / (100 * X.shape[0]))
    assert res.converged and res.rel_gap <= 1e-6
    last = res.trace[-1]
    assert last["explicit_steps"] == 0 and last["block_steps"] >= 1


def test_clear_error_where_the_blocks_do_not_fit(monkeypatch):
    monkeypatch.setattr(mn, "BLOCK_MAX_ENTRIES", 10)
    X, y = blobs(40, 5, 3, seed=1)
    with pytest.raises(ValueError, match="preconditioner='blocks'"):
        primaldual.solve(X, y, loss="multinomial", lam=0.01, preconditioner="blocks")


def test_usps_standardized_default_fit_certifies():
    path = shared_file("usps.t.bz2")
    X, y = load_svmlight_file(str(path))
    X = StandardScaler(with_mean=False).fit_transform(X)
    y = np.asarray(y).astype(int)
    y = y - y.min()
    res = primaldual.solve(X, y, loss="multinomial", lam=1.0 / X.shape[0])
    assert res.converged and res.rel_gap <= 1e-6    # was max_epochs at a gap of 1e-4


def test_default_fit_goes_on_from_its_point_at_the_pass_budget(monkeypatch):
    """A default fit stopped by the default pass budget, uncertified, is not
    the answer: auto goes on from the point reached (news20 as given at C =
    100 stopped at 1,000 passes); a max_epochs the caller gives is a cap."""
    X, y = _digits(600)
    lam = 1.0 / (100 * 600)
    ref = primaldual.solve(X, y, loss="multinomial", lam=lam, tol=1e-10)
    monkeypatch.setattr(MultinomialNewton, "default_max_epochs", 40)
    res = primaldual.solve(X, y, loss="multinomial", lam=lam)
    legs = res.extras["path"]
    assert res.converged and res.rel_gap <= 1e-6 and len(legs) >= 2
    assert res.n_epochs == pytest.approx(sum(leg["epochs"] for leg in legs))
    assert ref.dual - 1e-12 <= res.primal <= ref.primal * (1 + 1e-6)
    capped = primaldual.solve(X, y, loss="multinomial", lam=lam, max_epochs=40)
    assert not capped.converged and len(capped.extras["path"]) == 1
