"""Multiclass models (issue 33 items 2-3; docs/multiclass-models.md): the
multinomial and Crammer-Singer losses, their certificates and solvers.

References: the conjugates by numerical maximization, Fenchel-Young, finite
differences of the objective, cvxpy with Clarabel, scikit-learn's
LogisticRegression at a tight tolerance, and LIBLINEAR ``-s 4``.
"""
from __future__ import annotations

import numpy as np
import pytest
import scipy.optimize
import scipy.sparse as sp

import primaldual
from primaldual.kernels.multiclass import cs_subproblem
from primaldual.multiclass import MulticlassProblem, softmax
from primaldual.solvers._multiclass import MULTICLASS_SOLVERS
from primaldual.solvers.multinomial import MultinomialNewton

from conftest import optional_import, shared_file


def blobs(n=90, d=6, K=3, seed=0, sparse=False, scale=1.0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, K, n)
    centers = rng.normal(size=(K, d)) * 1.5
    X = (centers[y] + rng.normal(size=(n, d))) * scale
    if sparse:
        X[rng.random(X.shape) < 0.4] = 0.0
        X = sp.csr_matrix(X)
    return X, y


def by_hand(X, y, coef, alpha, lam, c, loss):
    """P(coef) and D(alpha) written out from the docs' formulas."""
    X = X.toarray() if sp.issparse(X) else np.asarray(X)
    n, K = alpha.shape
    Z = X @ coef
    idx = np.arange(n)
    W = c.sum()
    if loss == "multinomial":
        m = Z.max(1)
        phi = m + np.log(np.exp(Z - m[:, None]).sum(1)) - Z[idx, y]
        p = -alpha.copy()
        p[idx, y] += 1
        assert np.all(p >= -1e-12) and np.allclose(p.sum(1), 1, atol=1e-12)
        conj = np.array([-sum(v * np.log(v) for v in row if v > 0) for row in p])
    else:
        M = 1.0 + Z - Z[idx, y][:, None]
        M[idx, y] = 0.0
        phi = M.max(1)
        conj = alpha[idx, y]
    V = X.T @ (c[:, None] * alpha) / W
    P = (c @ phi) / W + lam / 2 * np.sum(coef ** 2)
    D = (c @ conj) / W - np.sum(V ** 2) / (2 * lam)
    return P, D


# ------------------------------------------------------------ the losses
def test_multinomial_conjugate_by_numerical_maximization():
    """-phi*(-alpha) = entropy(e_y - alpha): phi*(u) = sup_z u.z - phi(z)."""
    rng = np.random.default_rng(1)
    K, yi = 4, 2
    prob = MulticlassProblem(np.eye(K), np.arange(K), "multinomial", 1.0)
    for _ in range(5):
        p = rng.dirichlet(np.ones(K))
        alpha = -p
        alpha[yi] += 1.0
        u = -alpha

        def neg(z):
            lse = np.log(np.exp(z - z.max()).sum()) + z.max()
            return -(u @ z - (lse - z[yi]))
        best = scipy.optimize.minimize(neg, np.zeros(K), method="BFGS", tol=1e-12)
        conj = -best.fun                      # phi*(u)
        A = np.zeros((K, K))
        A[yi] = alpha
        ours = prob.neg_conjugates(A)[yi]
        assert ours == pytest.approx(-conj, abs=1e-7)


@pytest.mark.parametrize("loss", ["multinomial", "crammer_singer"])
def test_fenchel_young(loss):
    """phi(z) - (-phi*(-alpha)) + alpha.z >= 0, with equality at the
    certificate alpha(z) (the softmax / the subgradient)."""
    X, y = blobs(40, 5, 4, seed=2)
    prob = MulticlassProblem(X, y, loss, 0.1)
    rng = np.random.default_rng(3)
    Z = rng.normal(size=(40, 4)) * 3
    A = prob.dual_from_scores(Z)
    fy = prob.losses(Z) - prob.neg_conjugates(A) + np.sum(A * Z, axis=1)
    np.testing.assert_allclose(fy, 0.0, atol=1e-12)
    for _ in range(5):                     # any feasible alpha: >= 0
        P = rng.dirichlet(np.ones(4), size=40)
        B = -P
        B[np.arange(40), y] += 1.0
        fy = prob.losses(Z) - prob.neg_conjugates(B) + np.sum(B * Z, axis=1)
        assert np.all(fy >= -1e-12)
    bad = A.copy()
    bad[0, 0] += 0.1                       # off the simplex: -inf, D = -inf
    assert prob.neg_conjugates(bad)[0] == -np.inf and prob.dual(bad) == -np.inf


def test_cs_subproblem_against_cvxpy():
    cp = optional_import("cvxpy", "cvxpy is the reference QP solver")
    rng = np.random.default_rng(0)
    for _ in range(40):
        k = int(rng.integers(2, 7))
        A, C = rng.random() * 3 + 0.1, rng.random() * 2
        B = rng.normal(size=k)
        cap = np.zeros(k)
        lab = int(rng.integers(-1, k))            # -1: the label's class is shrunk
        if lab >= 0:
            cap[lab] = C
        total = 0.0 if lab >= 0 else -C
        b = cp.Variable(k)
        cp.Problem(cp.Minimize(A / 2 * cp.sum_squares(b) + B @ b),
                   [cp.sum(b) == total, b <= cap]).solve(solver="CLARABEL")
        new = np.empty(k)
        cs_subproblem(A, k, total, B.copy(), np.empty(k), new, cap)
        np.testing.assert_allclose(new, b.value, atol=1e-6)
        assert new.sum() == pytest.approx(total, abs=1e-12) and np.all(new <= cap + 1e-15)


# ------------------------------------------------------- derivatives
def test_gradient_and_hessian_vector_by_finite_differences():
    X, y = blobs(50, 4, 3, seed=4)
    c = np.random.default_rng(5).random(50) + 0.5
    prob = MulticlassProblem(X, y, "multinomial", 0.05, sample_weight=c)
    s = MultinomialNewton(prob, tol=1e-8, max_epochs=10, random_state=0)
    rng = np.random.default_rng(6)
    W0 = rng.normal(size=(4, 3))
    s.init_state(None)
    s._evaluate_at(W0)
    g, h = s.g.copy(), 1e-6
    num = np.zeros_like(W0)
    for idx in np.ndindex(W0.shape):
        E = np.zeros_like(W0)
        E[idx] = h
        num[idx] = (prob.primal(W0 + E) - prob.primal(W0 - E)) / (2 * h)
    np.testing.assert_allclose(g, num, rtol=1e-6, atol=1e-8)
    D = rng.normal(size=(4, 3))
    Hd = s._hv(D)

    def grad(Wx):
        s._evaluate_at(Wx)
        return s.g.copy()
    num_hd = (grad(W0 + h * D) - grad(W0 - h * D)) / (2 * h)
    np.testing.assert_allclose(Hd, num_hd, rtol=1e-5, atol=1e-7)
    # the explicit Hessian's Newton step solves H s = -g (H as the products give it)
    s._evaluate_at(W0)
    step = s._newton_direct()
    np.testing.assert_allclose(s._hv(step), -s.g, rtol=1e-8, atol=1e-10)


# ----------------------------------------------------------- optima
def _cvxpy_optimum(X, y, lam, c, loss):
    cp = optional_import("cvxpy", "cvxpy is the reference solver")
    n, d = X.shape
    K = int(y.max()) + 1
    Wv = cp.Variable((d, K))
    Z = X @ Wv
    Y = np.eye(K)[y]
    if loss == "multinomial":
        terms = cp.log_sum_exp(Z, axis=1) - cp.sum(cp.multiply(Y, Z), axis=1)
    else:
        zy = cp.sum(cp.multiply(Y, Z), axis=1)
        terms = cp.max(Z + (1 - Y) - cp.reshape(zy, (n, 1), order="C") @ np.ones((1, K)),
                       axis=1)
    obj = c @ terms / c.sum() + lam / 2 * cp.sum_squares(Wv)
    problem = cp.Problem(cp.Minimize(obj))
    problem.solve(solver="CLARABEL", tol_gap_abs=1e-12, tol_gap_rel=1e-12,
                  tol_feas=1e-12)
    return problem.value


@pytest.mark.parametrize("loss", ["multinomial", "crammer_singer"])
@pytest.mark.parametrize("sparse", [False, True])
def test_optimum_matches_cvxpy(loss, sparse):
    X, y = blobs(60, 5, 3, seed=7, sparse=sparse)
    c = np.random.default_rng(8).integers(1, 4, 60).astype(float)
    lam = 0.02
    ref = _cvxpy_optimum(X.toarray() if sparse else X, y, lam, c, loss)
    res = primaldual.solve(X, y, loss=loss, lam=lam, sample_weight=c, tol=1e-9,
                           max_epochs=20000)
    assert res.converged and res.stop_reason == "converged"
    assert res.coef.shape == (5, 3) and res.dual_coef.shape == (60, 3)
    assert abs(res.primal - ref) <= 1e-6 * abs(ref)
    assert res.dual <= ref + 1e-9 * abs(ref)           # weak duality against cvxpy
    P, D = by_hand(X, y, res.coef, res.dual_coef, lam, c, loss)
    assert res.primal == pytest.approx(P, rel=1e-12)
    assert res.dual == pytest.approx(D, rel=1e-10, abs=1e-14)
    assert res.gap == pytest.approx(P - D, abs=1e-12)


def test_crammer_singer_shrinking_and_sparse_view_keep_the_optimum():
    """Six classes (the kernel's four-class blocks with a remainder, classes
    shrunk out of a row), dense input with zeros (read as CSR by the kernel):
    with and without shrinking the certified optimum is cvxpy's."""
    X, y = blobs(70, 7, 6, seed=21)
    X[np.random.default_rng(22).random(X.shape) < 0.45] = 0.0
    c = np.ones(70)
    lam = 0.01
    ref = _cvxpy_optimum(X, y, lam, c, "crammer_singer")
    runs = {}
    for shrinking in (True, False):
        for name, Xin in (("dense", X), ("csr", sp.csr_matrix(X))):
            res = primaldual.solve(Xin, y, loss="crammer_singer", lam=lam, tol=1e-9,
                                   max_epochs=50000, random_state=5, shrinking=shrinking)
            assert res.converged
            assert abs(res.primal - ref) <= 1e-6 * abs(ref)
            assert res.dual <= ref + 1e-9 * abs(ref)
            runs[shrinking, name] = res
    for res in runs.values():
        np.testing.assert_allclose(res.coef, runs[True, "csr"].coef, atol=1e-3)
    # the kernel reads the dense input's nonzeros only
    solver = MULTICLASS_SOLVERS["crammer_singer_dual"](
        MulticlassProblem(X, y, "crammer_singer", lam), tol=1e-3, max_epochs=1,
        random_state=0)
    assert solver.view.data.size == np.count_nonzero(X) and np.all(solver.view.data)


def test_multinomial_matches_sklearn_on_iris_and_weights_are_copies():
    from sklearn.datasets import load_iris
    from sklearn.linear_model import LogisticRegression
    X, y = load_iris(return_X_y=True)
    n, C = X.shape[0], 10.0
    res = primaldual.solve(X, y, loss="multinomial", lam=1 / (C * n), tol=1e-11)
    lr = LogisticRegression(C=C, fit_intercept=False, tol=1e-12, max_iter=100000).fit(X, y)
    prob = MulticlassProblem(X, y, "multinomial", 1 / (C * n))
    ref = prob.primal(lr.coef_.T)
    assert res.primal <= ref + 1e-12 and abs(res.primal - ref) <= 1e-6 * ref
    np.testing.assert_allclose(softmax(X @ res.coef), lr.predict_proba(X), atol=1e-5)
    # an integer weight k is k copies of the row
    k = np.random.default_rng(0).integers(1, 4, n)
    rw = primaldual.solve(X, y, loss="multinomial", lam=0.01, sample_weight=k, tol=1e-11)
    rc = primaldual.solve(np.repeat(X, k, 0), np.repeat(y, k), loss="multinomial",
                          lam=0.01, tol=1e-11)
    np.testing.assert_allclose(rw.coef, rc.coef, atol=1e-7)


def test_multinomial_matches_sklearn_on_dna_subset():
    from sklearn.datasets import load_svmlight_file
    from sklearn.linear_model import LogisticRegression
    X, y = load_svmlight_file(str(shared_file("dna.scale")))
    X, y = X[:600], y[:600].astype(int) - 1
    n = X.shape[0]
    res = primaldual.solve(X, y, loss="multinomial", lam=1 / n, tol=1e-10)
    lr = LogisticRegression(C=1.0, fit_intercept=False, tol=1e-12, max_iter=100000).fit(X, y)
    ref = MulticlassProblem(X, y, "multinomial", 1 / n).primal(lr.coef_.T)
    assert res.converged and abs(res.primal - ref) <= 1e-6 * ref
    P, D = by_hand(X, y, res.coef, res.dual_coef, 1 / n, np.ones(n), "multinomial")
    assert res.gap == pytest.approx(P - D, abs=1e-12)


def test_crammer_singer_agrees_with_liblinear():
    """LIBLINEAR -s 4 and ours: weak duality across the two (our certified dual
    is below LIBLINEAR's primal) and the same test accuracy."""
    from sklearn.datasets import load_svmlight_file
    ll = optional_import("liblinear.liblinearutil", "LIBLINEAR is the -s 4 reference")
    for name, rows in (("dna.scale", None), ("letter.scale", 4000)):
        X, y = load_svmlight_file(str(shared_file(name)))
        Xt, yt = load_svmlight_file(str(shared_file(name + ".t")), n_features=X.shape[1])
        if rows:
            X, y = X[:rows], y[:rows]
        lo = int(min(y.min(), yt.min()))
        yi, yti = y.astype(int) - lo, yt.astype(int) - lo
        n, K = X.shape[0], int(max(yi.max(), yti.max())) + 1
        m = ll.train(y, X, "-s 4 -c 1 -e 0.0001 -q")
        Wll = np.zeros((X.shape[1], K))
        for col, lab in enumerate(m.get_labels()):
            Wll[:, int(lab) - lo] = [m.w[j * m.nr_class + col] for j in range(X.shape[1])]
        res = primaldual.solve(X, yi, loss="crammer_singer", lam=1 / n, tol=1e-3,
                               loss_params={"n_classes": K}, max_epochs=5000)
        prob = MulticlassProblem(X, yi, "crammer_singer", 1 / n, loss_params={"n_classes": K})
        assert res.converged
        assert res.dual <= prob.primal(Wll) + 1e-12
        assert prob.primal(Wll) <= res.primal * (1 + 2e-3)
        acc_ll = np.mean(np.argmax(Xt @ Wll, 1) == yti)
        acc = np.mean(np.argmax(Xt @ res.coef, 1) == yti)
        assert abs(acc - acc_ll) <= 0.01, (name, acc, acc_ll)


# ------------------------------------------------------- the contract
@pytest.mark.parametrize("loss", ["multinomial", "crammer_singer"])
def test_result_contract_resume_and_dense_equals_sparse(loss, tmp_path):
    X, y = blobs(80, 6, 4, seed=9)
    res = primaldual.solve(X, y, loss=loss, lam=0.01, tol=1e-8, max_epochs=5000,
                           random_state=3)
    rs = primaldual.solve(sp.csr_matrix(X), y, loss=loss, lam=0.01, tol=1e-8,
                          max_epochs=5000, random_state=3)
    np.testing.assert_allclose(res.coef, rs.coef, atol=1e-6)
    assert res.solver in MULTICLASS_SOLVERS and res.loss == loss
    assert res.trace and {"epoch", "primal", "dual", "gap"} <= set(res.trace[-1])
    assert res.gap == pytest.approx(res.primal - res.dual) and res.gap >= 0
    # a run cut short, resumed from its checkpoint, ends where the full run does
    part = primaldual.solve(X, y, loss=loss, lam=0.01, tol=1e-8, max_epochs=3,
                            random_state=3, checkpoint=tmp_path, check_every=1)
    assert part.stop_reason == "max_epochs"
    full = primaldual.solve(X, y, loss=loss, lam=0.01, tol=1e-8, max_epochs=5000,
                            random_state=3, resume=tmp_path, check_every=1)
    assert full.converged
    # a warm start from a neighbouring strength starts near the optimum
    warm = primaldual.solve(X, y, loss=loss, lam=0.012, tol=1e-8, max_epochs=5000,
                            warm_start=res)
    cold = primaldual.solve(X, y, loss=loss, lam=0.012, tol=1e-8, max_epochs=5000)
    assert warm.converged and cold.converged
    assert warm.trace[0]["rel_gap"] < 0.5 * cold.trace[0]["rel_gap"]
    assert warm.primal == pytest.approx(cold.primal, rel=1e-7)


def test_eval_set_and_callback():
    X, y = blobs(80, 6, 3, seed=10)
    seen = []
    res = primaldual.solve(X, y, loss="multinomial", lam=0.01, eval_set=(X, y),
                           callback=lambda s: seen.append(s["coef"].shape) and False)
    assert "test_error" in res.trace[-1] and res.trace[-1]["test_error"] < 0.2
    assert seen and seen[0] == (6, 3)


def test_clear_errors():
    X, y = blobs(30, 3, 3)
    with pytest.raises(ValueError, match="integer class labels"):
        primaldual.solve(X, y + 0.5, loss="multinomial", lam=0.1)
    with pytest.raises(ValueError, match="integer class labels"):
        primaldual.solve(X, y - 1, loss="multinomial", lam=0.1)
    with pytest.raises(ValueError, match="only the L2 penalty"):
        primaldual.solve(X, y, loss="multinomial", lam=0.1, l1=0.1)
    with pytest.raises(ValueError, match="lam must be > 0"):
        primaldual.solve(X, y, loss="crammer_singer", lam=0.0)
    with pytest.raises(ValueError, match="does not fit loss='multinomial'"):
        primaldual.solve(X, y, loss="multinomial", lam=0.1, solver="sdca")
    with pytest.raises(ValueError, match="unknown option|not an option|cg_tol"):
        primaldual.solve(X, y, loss="crammer_singer", lam=0.1, cg_tol=0.1)
    with pytest.raises(ValueError, match="n_classes=2"):
        primaldual.solve(X, y, loss="multinomial", lam=0.1, loss_params={"n_classes": 2})


# ---------------------------------------------------------- estimator
def test_linear_classifier_multinomial_equals_logistic_regression():
    from sklearn.datasets import load_iris
    from sklearn.linear_model import LogisticRegression
    X, y = load_iris(return_X_y=True)
    names = np.array(["setosa", "versicolor", "virginica"])[y]
    est = primaldual.LinearClassifier(loss="multinomial", fit_intercept=False, tol=1e-11)
    est.fit(X, names)
    lr = LogisticRegression(fit_intercept=False, tol=1e-12, max_iter=100000).fit(X, names)
    assert est.coef_.shape == (3, 4) and est.intercept_.shape == (3,)
    np.testing.assert_allclose(est.predict_proba(X), lr.predict_proba(X), atol=1e-5)
    assert np.array_equal(est.predict(X), lr.predict(X))
    assert est.dual_coef_.shape == (3, 150) and est.converged_ and est.gap_ >= 0
    # class weights are sample weights
    cw = {"setosa": 2.0, "versicolor": 1.0, "virginica": 0.5}
    a = primaldual.LinearClassifier(loss="multinomial", class_weight=cw, tol=1e-10).fit(X, names)
    b = primaldual.LinearClassifier(loss="multinomial", tol=1e-10).fit(
        X, names, sample_weight=np.vectorize(cw.get)(names))
    np.testing.assert_allclose(a.coef_, b.coef_, atol=1e-7)


def test_linear_classifier_crammer_singer_and_warm_start():
    X, y = blobs(120, 5, 4, seed=11)
    est = primaldual.LinearClassifier(loss="crammer_singer", tol=1e-6, max_iter=20000,
                                      warm_start=True)
    est.fit(X, y)
    assert est.coef_.shape == (4, 5) and est.score(X, y) > 0.8
    scores = est.decision_function(X)
    assert scores.shape == (120, 4)
    cold_gap = est.trace_[0][0]["rel_gap"]
    est.set_params(alpha=1.1 * est.lam_).fit(X, y)
    assert est.converged_ and est.trace_[0][0]["rel_gap"] < 0.5 * cold_gap
    with pytest.raises(AttributeError):
        est.predict_proba(X)


# ------------------------------------------------------------ model files
def test_save_model_of_a_solve_result(tmp_path):
    X, y = blobs(60, 4, 3, seed=12)
    res = primaldual.solve(X, y, loss="multinomial", lam=0.01)
    path = primaldual.save_model(res, tmp_path / "r.npz")
    with np.load(path, allow_pickle=False) as z:
        assert z["coef"].shape == (3, 4)
    est = primaldual.load_model(path)
    np.testing.assert_array_equal(est.predict(X), np.argmax(X @ res.coef, 1))
    np.testing.assert_allclose(est.predict_proba(X), softmax(X @ res.coef), atol=1e-12)


@pytest.mark.parametrize("mode", ["explicit", "matvec"])
def test_hessian_modes_reach_the_same_optimum(mode):
    X, y = blobs(100, 5, 4, seed=13, sparse=True)
    ref = primaldual.solve(X, y, loss="multinomial", lam=1e-3, tol=1e-12)
    res = primaldual.solve(X, y, loss="multinomial", lam=1e-3, tol=1e-10, hessian=mode)
    assert res.options["hessian"] == mode and res.converged
    assert abs(res.primal - ref.primal) <= 1e-9 * ref.primal
    if mode == "explicit":
        assert res.trace[-1]["explicit_steps"] == res.trace[-1]["newton_iter"]


@pytest.mark.parametrize("loss", ["multinomial", "crammer_singer"])
def test_zero_rows_two_classes_and_an_empty_class(loss):
    X, y = blobs(50, 4, 2, seed=14)
    X[:3] = 0.0                                   # rows of zeros
    lam = 0.05
    ref = _cvxpy_optimum(X, y, lam, np.ones(50), loss)
    res = primaldual.solve(X, y, loss=loss, lam=lam, tol=1e-9, max_epochs=20000)
    assert res.converged and abs(res.primal - ref) <= 1e-6 * abs(ref)
    # a third class without samples: its column is 0 for Crammer-Singer, pushed
    # down for the multinomial; the optimum of the two-class data is unchanged for CS
    r3 = primaldual.solve(X, y, loss=loss, lam=lam, tol=1e-9, max_epochs=20000,
                          loss_params={"n_classes": 3})
    assert r3.coef.shape == (4, 3) and r3.converged
    P, D = by_hand(X, y, r3.coef, r3.dual_coef, lam, np.ones(50), loss)
    assert r3.gap == pytest.approx(P - D, abs=1e-12)


def test_crammer_singer_check_returns_violated_shrunk_rows():
    """Each check recomputes every row's scores; a row (or a row's classes)
    shrunk while its violation over all K classes exceeds the shrinking
    threshold returns to the active set with every class, and the check's
    certificate is the problem's own."""
    X, y = blobs(120, 5, 6, seed=3)
    prob = MulticlassProblem(X, y, "crammer_singer", 1.0 / 120)
    solver = MULTICLASS_SOLVERS["crammer_singer_dual"](prob, tol=1e-9, max_epochs=1000,
                                                       random_state=0)
    solver.init_state(None)
    solver.advance(10, None)
    act, K = solver.active, prob.K
    shrunk = np.ones(prob.n, bool)
    shrunk[act.rows[:int(solver.sched[0])]] = False
    G = X @ solver.coef + 1.0                         # before the check
    G[np.arange(prob.n), y] -= 1.0
    cap = np.zeros((prob.n, K))
    cap[np.arange(prob.n), y] = solver.C
    viol = G.max(axis=1) - np.where(solver.beta < cap, G, np.inf).min(axis=1)
    # measured: 12 rows above the threshold have shrunk classes, 3 are shrunk out
    assert np.any(shrunk & (viol > solver.sched[1]))
    cert = solver.certificate()
    m, thr = int(solver.sched[0]), solver.sched[1]
    np.testing.assert_array_equal(np.sort(act.rows), np.arange(prob.n))
    G = X @ cert.w + 1.0
    G[np.arange(prob.n), y] -= 1.0
    viol = G.max(axis=1) - np.where(solver.beta < cap, G, np.inf).min(axis=1)
    active = np.zeros(prob.n, bool)
    active[act.rows[:m]] = True
    assert np.all(active[viol > thr]) and np.all(act.n_cls[viol > thr] == K)
    assert cert.primal == pytest.approx(prob.primal(cert.w), rel=1e-12)
    assert cert.dual == pytest.approx(prob.dual(cert.alpha), rel=1e-12)


def test_crammer_singer_index_order_full_passes_reach_the_same_optimum(monkeypatch):
    """Full passes in index order (used where the iterates outgrow the cache)
    certify the same optimum as the random order; the index order is on."""
    import primaldual.solvers.crammer_singer as cs
    X, y = blobs(150, 6, 5, seed=4)
    kw = dict(loss="crammer_singer", lam=1.0 / 150, tol=1e-9, max_epochs=50000,
              random_state=1)
    ref = primaldual.solve(X, y, **kw)
    monkeypatch.setattr(cs, "SEQUENTIAL_FULL_BYTES", 0)
    solver = MULTICLASS_SOLVERS["crammer_singer_dual"](
        MulticlassProblem(X, y, "crammer_singer", 1.0 / 150), tol=1e-9, max_epochs=10,
        random_state=1)
    solver.init_state(None)
    assert solver.sched[2] == 1.0
    res = primaldual.solve(X, y, **kw)
    assert res.converged and ref.converged
    assert not np.array_equal(res.dual_coef, ref.dual_coef)      # another path
    assert abs(res.primal - ref.primal) <= 2e-9 * abs(ref.primal)
    np.testing.assert_allclose(res.coef, ref.coef, atol=1e-3)


def test_crammer_singer_average_is_the_mean_of_the_epochs_iterates():
    """The kernel's running average (weights (M - t + 1) / M on the changes of
    the t-th of M epochs) equals the mean of the M end-of-epoch iterates taken
    one epoch at a time on the same random stream, and a check of it is the
    problem's own certificate of that point (coef = w(alpha))."""
    from primaldual.kernels.multiclass import CSAverage, cs_epochs
    X, y = blobs(90, 5, 5, seed=31)
    prob = MulticlassProblem(X, y, "crammer_singer", 1.0 / 90)
    mk = lambda: MULTICLASS_SOLVERS["crammer_singer_dual"](  # noqa: E731
        prob, tol=1e-9, max_epochs=1000, random_state=2)
    a, b = mk(), mk()
    for s in (a, b):
        s.init_state(None)
        s.advance(5, None)
    M = 6
    state = np.array([12345], dtype=np.uint64)
    np.copyto(a.avg, a.beta)
    wt = (M - np.arange(M)) / M
    cs_epochs(a.view, a.active, a.sched, a.beta, a.coef, a.work, M, state.copy(),
              True, CSAverage(a.avg, wt))
    snaps, st = [], state.copy()
    for _ in range(M):
        cs_epochs(b.view, b.active, b.sched, b.beta, b.coef, b.work, 1, st, True,
                  CSAverage(b.avg, np.zeros(1)))
        snaps.append(b.beta.copy())
    np.testing.assert_array_equal(a.beta, b.beta)
    np.testing.assert_allclose(a.avg, np.mean(snaps, axis=0), rtol=0, atol=1e-13)
    a.avg_ok = True
    cert = a.certificate()
    np.testing.assert_allclose(cert.alpha, a.avg / a.C[:, None], rtol=1e-15)
    np.testing.assert_allclose(cert.w, prob.w_of(cert.alpha), atol=1e-12)
    assert cert.primal == pytest.approx(prob.primal(cert.w), rel=1e-12)
    assert cert.dual == pytest.approx(prob.dual(cert.alpha), rel=1e-12)


def test_crammer_singer_averaging_and_blas_checks_keep_the_optimum(monkeypatch):
    """With and without averaging and second visits the certified optimum is
    cvxpy's; a dense
    problem's checks (three BLAS products) and the sparse kernel's checks of
    the same point give the same certificate."""
    import primaldual.solvers.crammer_singer as cs
    X, y = blobs(80, 6, 4, seed=33)
    lam = 0.01
    ref = _cvxpy_optimum(X, y, lam, np.ones(80), "crammer_singer")
    runs = {}
    for averaging, revisit in ((True, 0.25), (False, 0.0), (False, 1.0)):
        res = primaldual.solve(X, y, loss="crammer_singer", lam=lam, tol=1e-9,
                               max_epochs=50000, random_state=4, averaging=averaging,
                               revisit=revisit)
        assert res.converged and abs(res.primal - ref) <= 1e-6 * abs(ref)
        P, D = by_hand(X, y, res.coef, res.dual_coef, lam, np.ones(80), "crammer_singer")
        assert res.gap == pytest.approx(P - D, abs=1e-12)
        runs[revisit] = res
    # no row's violation exceeds the pass's largest: revisit=1 visits none again
    np.testing.assert_array_equal(runs[1.0].dual_coef, runs[0.0].dual_coef)
    assert runs[0.25].n_epochs < runs[0.0].n_epochs
    prob = MulticlassProblem(X, y, "crammer_singer", lam)
    certs = []
    for density in (0.75, 1.0):          # 1.0: every input is read as CSR
        monkeypatch.setattr(cs, "SPARSE_VIEW_DENSITY", density)
        s = MULTICLASS_SOLVERS["crammer_singer_dual"](prob, tol=1e-9, max_epochs=100,
                                                      random_state=0)
        assert (s.Xd is not None) == (density < 1.0)
        s.init_state(None)
        s.advance(20, None)
        assert s.avg_ok
        certs.append(s.certificate())
    np.testing.assert_allclose(certs[0].w, certs[1].w, atol=1e-13)
    assert certs[0].primal == pytest.approx(certs[1].primal, rel=1e-12)
    assert certs[0].dual == pytest.approx(certs[1].dual, rel=1e-12)
