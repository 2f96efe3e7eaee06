"""Distributed training over Dask TLS (docs/reliability.md, "Running with Dask TLS").

A LocalCluster with a temporary self-signed CA (``Security.temporary()``, which
needs the ``cryptography`` package from the test extras): the scheduler,
workers and client only speak ``tls://``, and a CoCoA+ fit over it equals the
local run.
"""
import numpy as np
import pytest

import cryptography  # noqa: F401  (test extra: Security.temporary() needs it)

from distributed import Client, LocalCluster  # noqa: E402
from distributed.security import Security  # noqa: E402

import primaldual  # noqa: E402

from conftest import make_classification_data  # noqa: E402


def test_cocoa_over_tls_equals_local():
    X, y = make_classification_data(n=120, d=10, seed=3)
    sec = Security.temporary()
    kw = dict(loss="hinge", lam=1e-2, solver="cocoa", n_partitions=2, max_epochs=4,
              tol=0.0, random_state=5)
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      protocol="tls://", security=sec, dashboard_address=None) as cluster, \
            Client(cluster, security=sec) as client:
        assert cluster.scheduler_address.startswith("tls://")
        assert all(a.startswith("tls://") for a in client.scheduler_info()["workers"])
        remote = primaldual.solve(X, y, client=client, **kw)
    local = primaldual.solve(X, y, **kw)
    np.testing.assert_allclose(remote.coef, local.coef, atol=1e-10)
    assert remote.gap == pytest.approx(local.gap, abs=1e-12)
