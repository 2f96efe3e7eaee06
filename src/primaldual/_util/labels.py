"""Raw labels to the -1/+1 coding of the binary losses, in one place."""

from __future__ import annotations

import numpy as np

__all__ = ["LabelError", "encode_pm1"]


class LabelError(ValueError):
    """Labels other than the expected ones were found.

    Attributes
    ----------
    labels : list of float
        The unexpected labels, sorted.
    """

    def __init__(self, message, labels=()):
        super().__init__(message)
        self.labels = list(labels)


def _fmt(v):
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, float, np.number)):
        return repr(v.item() if isinstance(v, np.generic) else v)
    v = float(v)
    return str(int(v)) if v.is_integer() and abs(v) < 2 ** 53 else repr(v)


def encode_pm1(y, positive, negative=None, *, source="y"):
    """``+1.0`` where ``y == positive`` and ``-1.0`` elsewhere.

    Parameters
    ----------
    y : array-like of shape (n,)
        Raw labels (numbers or strings).
    positive : scalar
        The label that becomes ``+1``.
    negative : scalar or None
        With a value, the one label that becomes ``-1``: any third label raises
        :class:`LabelError` naming it. None means one-vs-rest: every label other
        than ``positive`` becomes ``-1``.
    source : str, default "y"
        Where the labels come from (a file name, ``"y"``), for the error message.

    Returns
    -------
    ndarray of float64, shape (n,)

    Raises
    ------
    LabelError
        ``negative`` is given and ``y`` holds labels that are neither ``negative``
        nor ``positive``; the message and ``.labels`` list them.
    """
    y = np.asarray(y)
    if y.ndim != 1:
        raise ValueError(f"{source}: labels must be a 1-D array, got shape {y.shape}")
    if negative is not None:
        uniq = np.unique(y)
        bad = uniq[~np.isin(uniq, [negative, positive])]
        if bad.size:
            shown = ", ".join(_fmt(v) for v in bad[:10]) + (", ..." if bad.size > 10 else "")
            raise LabelError(f"{source}: labels [{shown}] are neither {_fmt(negative)} "
                             f"(-> -1) nor {_fmt(positive)} (-> +1)",
                             labels=bad.tolist())
    return np.where(y == positive, 1.0, -1.0)
