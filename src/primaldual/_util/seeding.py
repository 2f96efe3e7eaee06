"""Every random choice flows from ``random_state``: one generator, k independent streams.

``random_state`` is what a user passes: None (fresh OS entropy), a non-negative
int, a :class:`numpy.random.Generator` or a legacy
:class:`numpy.random.RandomState`.

- :func:`make_rng` turns it into the one PCG64 generator of a solver or generator.
  An int seeds PCG64 directly (``make_rng(s)`` equals ``np.random.default_rng(s)``);
  a Generator or RandomState contributes one draw, so the new generator is
  independent of the caller's later use of theirs.
- :func:`seed_entropy` gives the root entropy of a family of streams: an int
  ``random_state`` itself (so another process rebuilds the same streams from the
  seed alone), otherwise one draw from the caller's generator.
- :func:`spawn_streams` / :func:`spawn_seeds` split that entropy into ``k``
  independent children with :meth:`numpy.random.SeedSequence.spawn` (streams for
  partitions or workers, seeds for one-vs-rest problems); child ``i`` depends only
  on the entropy and ``i``, never on scheduling.
"""

from __future__ import annotations

import numpy as np

__all__ = ["make_rng", "rng_from_state", "seed_entropy", "spawn_seeds", "spawn_streams"]


def _is_int(x):
    return isinstance(x, (int, np.integer)) and not isinstance(x, bool)


def _bad(random_state):
    return ValueError(f"random_state must be None, a non-negative int, a numpy Generator "
                      f"or RandomState, got {random_state!r}")


def make_rng(random_state) -> np.random.Generator:
    """A PCG64 generator from ``random_state`` (None, int >= 0, Generator, RandomState)."""
    if isinstance(random_state, np.random.Generator):
        return np.random.Generator(np.random.PCG64(random_state.integers(2 ** 63)))
    if isinstance(random_state, np.random.RandomState):
        return np.random.Generator(np.random.PCG64(random_state.randint(2 ** 31 - 1)))
    if random_state is None:
        return np.random.Generator(np.random.PCG64())
    if _is_int(random_state):
        if random_state < 0:
            raise ValueError(f"random_state must be >= 0, got {random_state}")
        return np.random.Generator(np.random.PCG64(int(random_state)))
    raise _bad(random_state)


def seed_entropy(random_state, rng=None) -> int:
    """Root entropy of a family of streams.

    Parameters
    ----------
    random_state : None, int, Generator or RandomState
        An int is returned as it is.
    rng : numpy Generator, optional
        The caller's generator (a solver's ``self.rng``): for a non-int
        ``random_state`` the entropy is one draw from it. Without it the draw is
        taken from ``random_state`` itself (a Generator: ``integers(2**63)``, a
        RandomState: ``randint(2**31 - 1)``), and None gives fresh OS entropy.

    Returns
    -------
    int
    """
    if _is_int(random_state):
        if random_state < 0:
            raise ValueError(f"random_state must be >= 0, got {random_state}")
        return int(random_state)
    if rng is not None:
        return int(rng.integers(2 ** 63))
    if random_state is None:
        return int(np.random.SeedSequence().entropy)
    if isinstance(random_state, np.random.Generator):
        return int(random_state.integers(2 ** 63))
    if isinstance(random_state, np.random.RandomState):
        return int(random_state.randint(np.iinfo(np.int32).max))
    raise _bad(random_state)


def _children(entropy, k):
    if not _is_int(k) or k < 0:
        raise ValueError(f"the number of streams must be an int >= 0, got {k!r}")
    if not _is_int(entropy) or entropy < 0:
        raise ValueError(f"entropy must be an int >= 0, got {entropy!r}")
    return np.random.SeedSequence(int(entropy)).spawn(int(k))


def spawn_streams(entropy, k) -> list:
    """``k`` independent PCG64 generators: ``SeedSequence(entropy).spawn(k)``."""
    return [np.random.Generator(np.random.PCG64(s)) for s in _children(entropy, k)]


def partition_stream(entropy, k) -> np.random.Generator:
    """Stream ``k`` of :func:`spawn_streams` alone (``SeedSequence(entropy,
    spawn_key=(k,))``): what partition ``k`` draws from, wherever it runs."""
    if not _is_int(k) or k < 0:
        raise ValueError(f"the partition index must be an int >= 0, got {k!r}")
    if not _is_int(entropy) or entropy < 0:
        raise ValueError(f"entropy must be an int >= 0, got {entropy!r}")
    return np.random.Generator(np.random.PCG64(
        np.random.SeedSequence(int(entropy), spawn_key=(int(k),))))


def spawn_seeds(entropy, k) -> list:
    """``k`` independent int seeds: the first 64-bit word of each spawned child."""
    return [int(s.generate_state(1, np.uint64)[0]) for s in _children(entropy, k)]


def rng_from_state(state) -> np.random.Generator:
    """A PCG64 generator resumed from ``g.bit_generator.state`` (a checkpoint's dict)."""
    if not isinstance(state, dict) or state.get("bit_generator") != "PCG64":
        kind = state.get("bit_generator") if isinstance(state, dict) else type(state).__name__
        raise ValueError(f"expected the state of a PCG64 generator, got {kind!r}")
    g = np.random.Generator(np.random.PCG64())
    g.bit_generator.state = state
    return g
