"""Adapters to other libraries' solvers ("peers"), evaluated with OUR objective.

Every peer solves the same problem as ``primaldual.Problem`` (docs/conventions.md §1,
no bias term, no sample weights)::

    P(w) = (1/n) sum_i phi(x_i . w; y_i) + lam/2 ||w||^2

after mapping ``lam`` to the library's parameter (``C = 1/(lam n)``, ``alpha =
lam``, Snap ML's ``regularizer = lam n``, ...; the table of peers, losses and
mappings is in docs/benchmarks.md, "Peers", and ``tests/test_bench.py`` checks
that every installed adapter reaches our certified optimum).

No peer exposes its iterates during a fit, so a peer is traced by refitting
from scratch with a growing budget: ``max_iter`` in ``1, 2, 3, 4, 6, 8, 12,
16, ...`` epochs (each fit with the same seed is the prefix of the longer one),
or for LIBLINEAR, whose iteration cap is fixed in C, a decreasing stopping
tolerance ``-e 1, 10^-0.5, 10^-1, ...``.  A point's time is the wall time of
the fit (the data conversion is done once, outside the timing); its epochs are
the library's own count.  LIBLINEAR's ``rand()`` is re-seeded with
``srand(seed)`` before every fit, so repeated runs are identical.
"""
from __future__ import annotations

import ctypes
import importlib
import importlib.util
import re
import time
import warnings
from dataclasses import dataclass

import numpy as np

__all__ = ["Peer", "PeerPoint", "PEERS", "peer_status", "budget_schedule"]


@dataclass
class PeerPoint:
    """One traced point of a peer: its coefficients after ``epochs`` passes."""

    epochs: float
    time: float
    coef: np.ndarray
    stopped: bool = False      # the library stopped on its own criterion before the budget
    extra: dict | None = None


def budget_schedule(max_epochs):
    """1, 2, 3, 4, 6, 8, 12, 16, 24, ... up to ``max_epochs`` (always included)."""
    top = int(np.ceil(max_epochs))
    seq = [1, 2, 3]
    while seq[-1] < top:
        seq.append(2 * seq[-2])
    return sorted({b for b in seq if b < top} | {top})


class Peer:
    """Base adapter.  Subclasses set ``name``, ``label``, ``module`` and
    ``losses`` and implement :meth:`_fit` (one fit with a budget)."""

    name = "peer"
    label = "peer"
    module = ""                 # import name of the library
    losses: tuple = ()

    def status(self):
        """None when usable, else a reason such as ``"not installed"``."""
        if importlib.util.find_spec(self.module) is None:
            return "not installed"
        return None

    def unsupported(self, loss):
        """None when the loss is supported, else the reason."""
        if loss.name not in self.losses:
            return (f"{self.name} does not support loss={loss.name!r} "
                    f"(supports {', '.join(self.losses)})")
        return None

    distribution = ""           # distribution name, for the recorded version

    def version(self):
        """Installed version of the library, or None."""
        from importlib.metadata import PackageNotFoundError, version
        try:
            return version(self.distribution)
        except PackageNotFoundError:
            return None

    def trace(self, X, y, loss, lam, seed, max_epochs):
        """Yield :class:`PeerPoint` s for growing budgets (the caller may stop early)."""
        state = self._prepare(X, y, loss, lam)
        for b in budget_schedule(max_epochs):
            t0 = time.perf_counter()
            coef, epochs = self._fit(state, X, y, loss, lam, seed, b)
            elapsed = time.perf_counter() - t0
            stopped = epochs < b
            yield PeerPoint(epochs=float(epochs), time=elapsed, coef=coef, stopped=stopped)
            if stopped:
                return

    def _prepare(self, X, y, loss, lam):
        return None

    def _fit(self, state, X, y, loss, lam, seed, budget):
        """Fit with the iteration ``budget``; return (coef, epochs).  A peer
        overrides this, or :meth:`trace` itself (as LIBLINEAR's adapter does)."""
        raise TypeError(f"{type(self).__name__} overrides neither _fit nor trace")


# ------------------------------------------------------------------ LIBLINEAR
_LIBLINEAR_TYPES = {"hinge": 3, "squared_hinge": 1, "logistic": 7, "squared": 12,
                    "absolute": 13, "epsilon_insensitive": 13,
                    "squared_epsilon_insensitive": 12}
_ITER_RE = re.compile(r"#iter\s*=\s*(\d+)")


def _srand(seed):
    """Seed C's rand(), which LIBLINEAR uses for its coordinate order."""
    try:
        ctypes.CDLL(None).srand(ctypes.c_uint(int(seed) & 0xFFFFFFFF))
    except (OSError, AttributeError):       # no libc symbol lookup on this platform
        pass


#: LIBLINEAR solvers for each loss: its own default first (``-s 1`` dual for
#: squared hinge, ``-s 0`` primal Newton for logistic), then the other formulation
LIBLINEAR_SOLVERS = {"hinge": (3,), "squared_hinge": (1, 2), "logistic": (0, 7),
                     "squared": (12, 11), "absolute": (13,), "epsilon_insensitive": (13,),
                     "squared_epsilon_insensitive": (12, 11)}


def liblinear_options(loss, lam, n, eps, s=None):
    """The LIBLINEAR option string for our (loss, lam) on ``n`` rows (``-s s``,
    default the dual solver of :data:`_LIBLINEAR_TYPES`)."""
    if s is None:
        s = _LIBLINEAR_TYPES[loss.name]
    if s not in LIBLINEAR_SOLVERS[loss.name]:
        raise ValueError(f"LIBLINEAR -s {s} does not solve loss={loss.name!r} "
                         f"(use -s {' or -s '.join(map(str, LIBLINEAR_SOLVERS[loss.name]))})")
    C = 1.0 / (lam * n) if loss.name != "squared" else 1.0 / (2.0 * lam * n)
    opts = f"-s {s} -c {C!r} -B -1 -e {eps!r}"
    if s in (11, 12, 13):
        p = loss.param if loss.name != "squared" else 0.0
        opts += f" -p {p!r}"
    return opts


class LiblinearPeer(Peer):
    name = "liblinear"
    label = "LIBLINEAR"
    module = "liblinear"
    distribution = "liblinear-official"
    losses = tuple(_LIBLINEAR_TYPES)
    #: tolerances tried, loosest first
    eps_schedule = tuple(10.0 ** (-k / 2.0) for k in range(0, 21))
    #: LIBLINEAR's hard-coded cap on outer iterations of its dual solvers
    #: (``-s 1``, ``-s 3``, ``-s 7``; 300 in LIBLINEAR 2.4x/2.50).  At the cap
    #: ``-s 1`` and ``-s 7`` print "Switching to use -s 2" / "-s 0" and rerun
    #: with the primal Newton solver, whose iterations the dual count omits;
    #: ``-s 3`` stops there.
    max_iter = 300

    def train(self, X, y, loss, lam, eps, seed, prob=None, s=None, log=None):
        """One LIBLINEAR fit; returns (coef, outer iterations, seconds).

        ``s`` picks the solver (default: the dual one); ``log``, a list,
        receives LIBLINEAR's printed output.  The seconds cover
        ``train`` only; with ``prob=None`` the data conversion
        (``liblinearutil.problem``) is inside them too.
        """
        from liblinear import liblinear as ll
        from liblinear import liblinearutil as lu
        t0 = time.perf_counter()
        if prob is None:
            prob = lu.problem(np.asarray(y, dtype=np.float64), X)
        else:
            t0 = None
        param = lu.parameter(liblinear_options(loss, lam, X.shape[0], eps, s=s))
        lines = [] if log is None else log
        cb = ll.PRINT_STRING_FUN(lambda m: lines.append(m.decode(errors="replace")))
        param.print_func = cb
        _srand(seed)
        if t0 is None:
            t0 = time.perf_counter()
        model = lu.train(prob, param)
        elapsed = time.perf_counter() - t0
        ll.liblinear.set_print_string_function(ll.PRINT_STRING_FUN(lambda s: None))
        coef = np.ctypeslib.as_array(model.w, shape=(X.shape[1],)).astype(np.float64,
                                                                          copy=True)
        if loss.classification and model.get_labels()[0] != 1:
            coef = -coef                 # LIBLINEAR's first label is its positive class
        its = [int(m) for m in _ITER_RE.findall("".join(lines))]
        return coef, (its[-1] if its else 0), elapsed

    def trace(self, X, y, loss, lam, seed, max_epochs):
        from liblinear import liblinearutil as lu
        prob = lu.problem(np.asarray(y, dtype=np.float64), X)
        for eps in self.eps_schedule:
            log = []
            coef, its, elapsed = self.train(X, y, loss, lam, eps, seed, prob=prob, log=log)
            # at the cap -s 1 / -s 7 fall back to primal Newton, which a smaller -e
            # still tightens; -s 3 (and the SVR solvers) stop for good
            fell_back = "Switching to use" in "".join(log)
            capped = (its >= self.max_iter and not fell_back) or its >= max_epochs
            extra = {"eps": eps, **({"fallback": True} if fell_back else {})}
            yield PeerPoint(epochs=float(its), time=elapsed, coef=coef, stopped=capped,
                            extra=extra)
            if capped:
                return


# ------------------------------------------------------------- scikit-learn
def _quiet_fit(est, X, y):
    from sklearn.exceptions import ConvergenceWarning
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        warnings.simplefilter("ignore", UserWarning)
        warnings.simplefilter("ignore", FutureWarning)
        est.fit(X, y)
    return est


def _n_iter(est, budget):
    n = getattr(est, "n_iter_", None)
    if n is None:
        return budget
    return int(np.max(np.atleast_1d(n)))


def _coef(est):
    return np.asarray(est.coef_, dtype=np.float64).ravel().copy()


class SklearnPeer(Peer):
    module = "sklearn"
    distribution = "scikit-learn"

    def _fit(self, state, X, y, loss, lam, seed, budget):
        est = self.make(loss, lam, X.shape[0], seed, budget)
        _quiet_fit(est, X, y)
        return _coef(est), _n_iter(est, budget)


class SagPeer(SklearnPeer):
    name = "sklearn-sag"
    label = "sklearn SAG"
    losses = ("logistic", "squared")
    solver = "sag"

    def make(self, loss, lam, n, seed, budget):
        from sklearn.linear_model import LogisticRegression, Ridge
        if loss.name == "logistic":
            return LogisticRegression(solver=self.solver, C=1.0 / (lam * n),
                                      fit_intercept=False, tol=0.0, max_iter=budget,
                                      random_state=seed)
        return Ridge(alpha=lam * n, solver=self.solver, fit_intercept=False, tol=0.0,
                     max_iter=budget, random_state=seed)


class SagaPeer(SagPeer):
    name = "sklearn-saga"
    label = "sklearn SAGA"
    solver = "saga"


class SgdPeer(SklearnPeer):
    name = "sklearn-sgd"
    label = "sklearn SGD"
    losses = ("hinge", "squared_hinge", "logistic", "squared", "absolute",
              "epsilon_insensitive")

    def make(self, loss, lam, n, seed, budget):
        from sklearn.linear_model import SGDClassifier, SGDRegressor
        common = dict(alpha=lam, penalty="l2", fit_intercept=False, max_iter=budget,
                      tol=None, random_state=seed, learning_rate="optimal", shuffle=True)
        if loss.classification:
            name = {"logistic": "log_loss"}.get(loss.name, loss.name)
            return SGDClassifier(loss=name, **common)
        if loss.name == "squared":
            return SGDRegressor(loss="squared_error", **common)
        eps = loss.param if loss.name == "epsilon_insensitive" else 0.0
        return SGDRegressor(loss="epsilon_insensitive", epsilon=eps, **common)


class LinearSvcPeer(SklearnPeer):
    name = "sklearn-linearsvc"
    label = "sklearn LinearSVC"
    losses = ("hinge", "squared_hinge", "absolute", "epsilon_insensitive", "squared",
              "squared_epsilon_insensitive")

    def make(self, loss, lam, n, seed, budget):
        from sklearn.svm import LinearSVC, LinearSVR
        C = 1.0 / (lam * n)
        if loss.classification:
            return LinearSVC(loss=loss.name, C=C, fit_intercept=False, dual=True,
                             tol=1e-15, max_iter=budget, random_state=seed)
        if loss.name == "squared":
            return LinearSVR(loss="squared_epsilon_insensitive", epsilon=0.0, C=C / 2.0,
                             fit_intercept=False, dual=True, tol=1e-15, max_iter=budget,
                             random_state=seed)
        if loss.name == "squared_epsilon_insensitive":
            return LinearSVR(loss=loss.name, epsilon=loss.param, C=C, fit_intercept=False,
                             dual=True, tol=1e-15, max_iter=budget, random_state=seed)
        eps = loss.param if loss.name == "epsilon_insensitive" else 0.0
        return LinearSVR(loss="epsilon_insensitive", epsilon=eps, C=C, fit_intercept=False,
                         dual=True, tol=1e-15, max_iter=budget, random_state=seed)


class LogRegPeer(SklearnPeer):
    name = "sklearn-logreg"
    label = "sklearn LogisticRegression"
    losses = ("logistic",)

    def make(self, loss, lam, n, seed, budget):
        from sklearn.linear_model import LogisticRegression
        return LogisticRegression(solver="lbfgs", C=1.0 / (lam * n), fit_intercept=False,
                                  tol=1e-15, max_iter=budget)


# ---------------------------------------------------------------- lightning
class LightningSdcaPeer(Peer):
    name = "lightning-sdca"
    label = "lightning SDCA"
    module = "lightning"
    distribution = "sklearn-contrib-lightning"
    losses = ("hinge", "squared_hinge", "smooth_hinge")

    def status(self):
        if importlib.util.find_spec("lightning") is None:
            return "not installed"
        try:
            importlib.import_module("lightning.classification")
        except Exception as e:            # a broken build: record it, don't fail the bench
            return f"not importable ({type(e).__name__}: {e})"
        return None

    def _fit(self, state, X, y, loss, lam, seed, budget):
        from lightning.classification import SDCAClassifier
        gamma = loss.param if loss.name == "smooth_hinge" else 1.0
        est = SDCAClassifier(alpha=lam, l1_ratio=0.0, loss=loss.name, gamma=gamma,
                             max_iter=budget, tol=1e-15, random_state=seed)
        _quiet_fit(est, X, y)
        return _coef(est), _n_iter(est, budget)


# ------------------------------------------------------------------- Snap ML
def snapml_estimator(loss_name, lam, n, tol, max_iter, seed=0, n_jobs=1):
    """The Snap ML estimator for our (loss, lam) on ``n`` rows, ``n_jobs`` threads
    (default one), no bias.

    hinge and squared_hinge: ``SupportVectorMachine(loss=...)``; logistic:
    ``LogisticRegression(dual=True)``; ``regularizer = lam * n``.  Snap ML
    stops when the largest change of a coefficient falls below ``tol``.
    """
    if loss_name not in ("hinge", "squared_hinge", "logistic"):
        raise ValueError(f"Snap ML has no {loss_name!r} loss (hinge, squared_hinge, logistic)")
    snapml = import_snapml()
    common = dict(regularizer=lam * n, fit_intercept=False, n_jobs=int(n_jobs), tol=tol,
                  max_iter=int(max_iter), random_state=seed, use_gpu=False)
    if loss_name in ("hinge", "squared_hinge"):
        return snapml.SupportVectorMachine(loss=loss_name, **common)
    return snapml.LogisticRegression(dual=True, penalty="l2", **common)


def import_snapml():
    """``import snapml``, then restore the default floating-point environment.

    Loading Snap ML's compiled library turns on flush-to-zero and
    denormals-are-zero for the whole process (it is built with fast-math), so
    every later computation in the process -- ours and the other peers'
    included -- would flush subnormal numbers to zero.  ``fesetenv(FE_DFL_ENV)``
    puts back IEEE arithmetic, so that all solvers of a benchmark run under the
    same, standard rules."""
    import ctypes
    import ctypes.util
    import snapml
    libm = ctypes.util.find_library("m")
    if libm:
        ctypes.CDLL(libm).fesetenv(ctypes.c_void_p(-1))     # FE_DFL_ENV on glibc
    return snapml


def snapml_coef(est):
    """Snap ML's ``coef_`` as a float64 vector (no intercept was fitted)."""
    return np.asarray(est.coef_, dtype=np.float64).ravel().copy()


class SnapmlPeer(Peer):
    """IBM Snap ML's dual coordinate ascent, one thread (``n_jobs=1``)."""

    name = "snapml"
    label = "Snap ML"
    module = "snapml"
    distribution = "snapml"
    losses = ("hinge", "squared_hinge", "logistic")

    def _fit(self, state, X, y, loss, lam, seed, budget):
        est = snapml_estimator(loss.name, lam, X.shape[0], tol=1e-15, max_iter=budget,
                               seed=seed)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est.fit(X, y)
        n_iter = getattr(est, "n_iter_", None)
        epochs = budget if n_iter is None else int(np.max(np.atleast_1d(n_iter)))
        return snapml_coef(est), epochs


#: every adapter, by name
PEERS: dict = {p.name: p for p in (LiblinearPeer(), SagPeer(), SagaPeer(), SgdPeer(),
                                   LinearSvcPeer(), LogRegPeer(), LightningSdcaPeer(),
                                   SnapmlPeer())}


def peer_status(used=None) -> dict:
    """{peer name: "ok" or the reason it cannot run, e.g. "not installed"}.

    ``used``: the names of the peers a run will call.  Those are imported to
    check them (a broken build is named); the others are only looked up, which
    costs no import, and read "installed (not used)" or "not installed"."""
    out = {}
    for name, p in PEERS.items():
        if used is None or name in used:
            out[name] = p.status() or "ok"
        else:
            out[name] = Peer.status(p) or "installed (not used)"
    return out
