"""Problem: objectives, duality, penalties and the row-access layer."""
import numpy as np
import pytest
import scipy.sparse as sp

from primaldual import ElasticNet, Problem
from primaldual.rows import as_rows
from primaldual.validation import check_X
from primaldual.penalties import make_penalty, soft_threshold

from conftest import make_classification_data, make_regression_data


def _direct_primal(X, y, loss, lam, l1, c, w):
    X = np.asarray(X.todense()) if sp.issparse(X) else X
    a = X @ w
    return (c @ loss.value(a, y)) / c.sum() + lam / 2 * w @ w + l1 * np.abs(w).sum()


@pytest.mark.parametrize("l1", [0.0, 0.05])
@pytest.mark.parametrize("loss", ["hinge", "logistic", "squared_hinge"])
def test_primal_and_dual_match_direct_formulas(loss, l1):
    X, y = make_classification_data(n=60, d=8, seed=1)
    rng = np.random.default_rng(0)
    c = rng.uniform(0.5, 2.0, size=60)
    p = Problem(X, y, loss, 0.1, l1=l1, sample_weight=c)
    w = rng.normal(size=8)
    assert p.primal(w) == pytest.approx(_direct_primal(X, y, p.loss, 0.1, l1, c, w),
                                        rel=1e-13)
    alpha = -p.loss.derivative(X @ w, y)
    v = X.T @ (c * alpha) / c.sum()
    g_star = (np.maximum(np.abs(v) - l1, 0) ** 2).sum() / (2 * 0.1)
    want = (c @ p.loss.neg_conjugate(alpha, y)) / c.sum() - g_star
    assert p.dual(alpha) == pytest.approx(want, rel=1e-13)
    # weak duality for arbitrary pairs
    assert p.gap(w, alpha) >= -1e-12
    # certificate pass agrees with the separate evaluations
    cert = p.certificate(w, alpha)
    assert cert.primal == pytest.approx(p.primal(w), rel=1e-13)
    assert cert.dual == pytest.approx(p.dual(alpha), rel=1e-13)
    np.testing.assert_allclose(cert.margins, X @ w, rtol=1e-13)
    np.testing.assert_allclose(cert.v, v, rtol=1e-13, atol=1e-16)


def test_w_of_alpha_is_the_gradient_of_g_star():
    """w(alpha) = grad g*(v): check against finite differences of g*."""
    pen = ElasticNet(lam=0.3, l1=0.2)
    v = np.array([0.5, -0.1, 0.25, -0.9, 0.0])
    h = 1e-6
    fd = np.array([(pen.conjugate(v + h * e) - pen.conjugate(v - h * e)) / (2 * h)
                   for e in np.eye(5)])
    np.testing.assert_allclose(pen.grad_conjugate(v), fd, atol=1e-8)


@pytest.mark.parametrize("lam,l1", [(0.5, 0.0), (0.3, 0.2), (1e-3, 1.0)])
def test_penalty_fenchel_young(lam, l1):
    """g(w) + g*(v) = v . w exactly at w = grad g*(v), and >= elsewhere."""
    pen = ElasticNet(lam=lam, l1=l1)
    rng = np.random.default_rng(2)
    v = rng.normal(size=50) * 2
    w = pen.grad_conjugate(v)
    assert pen.value(w) + pen.conjugate(v) == pytest.approx(v @ w, rel=1e-12, abs=1e-14)
    w2 = rng.normal(size=50)
    assert pen.value(w2) + pen.conjugate(v) >= v @ w2 - 1e-12


def test_prox_is_the_argmin():
    from scipy.optimize import minimize_scalar
    pen = ElasticNet(lam=0.4, l1=0.3)
    for u in (-2.0, -0.1, 0.0, 0.2, 1.5):
        t = 0.7
        f = lambda w: 0.4 / 2 * w * w + 0.3 * abs(w) + (w - u) ** 2 / (2 * t)  # noqa
        r = minimize_scalar(f, bounds=(-5, 5), method="bounded", options={"xatol": 1e-12})
        assert pen.prox(np.array([u]), t)[0] == pytest.approx(r.x, abs=1e-8)


def test_pure_l1_conjugate_is_an_indicator():
    pen = make_penalty(0.0, 0.5, allow_pure_l1=True)
    assert pen.conjugate(np.array([0.4, -0.5])) == 0.0
    assert pen.conjugate(np.array([0.6])) == np.inf
    with pytest.raises(ValueError, match="pure L1.*lam > 0|lam must be > 0"):
        make_penalty(0.0, 0.5)
    with pytest.raises(ValueError, match="no regularization"):
        make_penalty(0.0, 0.0, allow_pure_l1=True)


def test_soft_threshold():
    np.testing.assert_array_equal(soft_threshold(np.array([-2.0, -0.5, 0.5, 3.0]), 1.0),
                                  [-1.0, 0.0, 0.0, 2.0])


def test_dual_infeasible_alpha_gives_minus_infinity():
    X, y = make_classification_data(n=20, d=4, seed=3)
    p = Problem(X, y, "hinge", 0.1)
    alpha = y.copy()
    alpha[0] = 2 * y[0]
    assert p.dual(alpha) == -np.inf
    assert not p.is_dual_feasible(alpha)


def test_row_view_dense_is_a_csr_shaped_view_without_copy():
    X = np.arange(12, dtype=np.float64).reshape(3, 4)
    r = as_rows(check_X(X))
    assert np.shares_memory(r.data, X)
    for i in range(3):
        cols = [r.indices[k + r.iptr[i] - r.indptr[i]] for k in range(r.indptr[i],
                                                                      r.indptr[i + 1])]
        vals = r.data[r.indptr[i]:r.indptr[i + 1]]
        np.testing.assert_array_equal(vals, X[i, cols])
    np.testing.assert_allclose(r.sqnorm, (X ** 2).sum(1))


def test_csr_input_is_not_copied_and_duplicates_are_summed():
    X, _ = make_regression_data(n=30, d=6, seed=4)
    assert check_X(X) is X
    dup = sp.csr_matrix((np.array([1.0, 2.0, 3.0]), np.array([1, 1, 0]),
                         np.array([0, 2, 3])), shape=(2, 3))
    dup.has_canonical_format = False
    fixed = check_X(dup)
    np.testing.assert_array_equal(fixed.toarray(), [[0, 3, 0], [3, 0, 0]])
    assert as_rows(fixed).sqnorm[0] == 9.0
    assert dup.nnz == 3   # the caller's matrix is untouched


def test_unsorted_csr_indices_give_the_same_objective():
    X, y = make_classification_data(n=40, d=7, seed=5)
    Xu = X.copy()
    for i in range(Xu.shape[0]):
        s, e = Xu.indptr[i], Xu.indptr[i + 1]
        Xu.indices[s:e] = Xu.indices[s:e][::-1]
        Xu.data[s:e] = Xu.data[s:e][::-1]
    Xu.has_sorted_indices = False
    w = np.random.default_rng(0).normal(size=7)
    assert Problem(Xu, y, "logistic", 0.1).primal(w) == pytest.approx(
        Problem(X, y, "logistic", 0.1).primal(w), rel=1e-14)


def _cert_tuple(c):
    return (c.primal, c.dual, c.w.tobytes(), c.alpha.tobytes(), c.v.tobytes(),
            c.margins.tobytes())


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("loss", ["hinge", "logistic", "smooth_hinge", "squared"])
def test_primal_certificate_is_bitwise_the_two_product_form(loss, dtype):
    """primal_certificate(w) reuses X @ w for the certificate pass on CSR rows (one
    row sweep per check instead of two); the result must be bitwise that of
    certificate(w, dual_from_primal(w)), on sparse and dense rows, with weights."""
    rng = np.random.default_rng(3)
    Xs = sp.random(200, 500, density=0.03, random_state=4, format="csr")
    Xs.data = rng.standard_normal(Xs.nnz)
    y = np.where(rng.random(200) < 0.5, -1.0, 1.0) if loss != "squared" \
        else rng.standard_normal(200)
    c = rng.uniform(0.5, 2.0, size=200)
    for X in (Xs.astype(dtype), np.asarray(Xs.todense(), dtype=dtype)):
        p = Problem(X, y, loss, 0.01, l1=0.001, sample_weight=c)
        for w in (rng.normal(size=500) * 0.3, np.zeros(500)):
            got = p.primal_certificate(w)
            want = p.certificate(w, p.dual_from_primal(w))
            assert _cert_tuple(got) == _cert_tuple(want)
        # hinge: rows with alpha_i = 0 are skipped by the margin pass, and v stays exact
        if loss == "hinge":
            w = rng.normal(size=500)
            cert = p.primal_certificate(w)
            assert (cert.alpha == 0).any() and (cert.alpha != 0).any()
            Xd = (X.toarray() if sp.issparse(X) else X).astype(np.float64)
            np.testing.assert_allclose(cert.v, Xd.T @ (c * cert.alpha) / c.sum(),
                                       rtol=1e-12, atol=1e-15)


def test_certificate_with_given_margins_checks_their_shape():
    X, y = make_classification_data(n=30, d=5, seed=2)
    p = Problem(sp.csr_matrix(X), y, "hinge", 0.1)
    w = np.ones(5)
    with pytest.raises(ValueError, match="margins"):
        p.certificate(w, p.dual_from_primal(w), margins=np.zeros(29))


@pytest.mark.parametrize("dense", [False, True])
def test_threads_building_a_problem_change_nothing(monkeypatch, dense):
    """With n_threads > 1 the one-off passes of a large problem (the finite
    check, the rows' norms) run on row ranges: the norms are the same sums, bit
    for bit, and the finite check finds a bad value in any range."""
    import primaldual._util.threads as threads_util
    import primaldual.validation as validation_mod
    monkeypatch.setattr(threads_util, "MIN_VALUES_PER_THREAD", 50)
    X, y = make_classification_data(n=300, d=40, density=1.0 if dense else 0.2, seed=4,
                                    dense=dense)
    one = Problem(X, y, loss="logistic", lam=1e-3)
    ran = []
    real = threads_util.run_threads
    monkeypatch.setattr(threads_util, "run_threads", lambda *a: ran.append(a[1]) or real(*a))
    for k in (2, 3, 7):
        many = Problem(X, y, loss="logistic", lam=1e-3, n_threads=k)
        assert np.array_equal(many.rows.sqnorm, one.rows.sqnorm)
    assert {2, 3} <= set(ran) and max(ran) == 7       # the finite checks' and the norms'
    Xs = sp.csr_matrix(X)
    for where in (0, Xs.nnz // 2, Xs.nnz - 1):
        bad = Xs.copy()
        bad.data[where] = np.nan
        with pytest.raises(ValueError, match="X contains NaN values"):
            Problem(bad, y, loss="logistic", lam=1e-3, n_threads=3)
        assert validation_mod._all_finite(Xs.data, 3)
        assert not validation_mod._all_finite(bad.data, 3)
