"""Which losses give probabilities, and the error for those that do not.

:class:`NoProbabilityError` is an AttributeError, so ``hasattr(clf,
"predict_proba")`` is False for a model whose loss is not probabilistic, as
scikit-learn's meta-estimators expect; its message names the loss that gives
probabilities.
"""
from __future__ import annotations

import functools
from types import MethodType

__all__ = ["PROBABILISTIC_LOSSES", "NoProbabilityError", "needs_probabilistic_loss"]

#: the losses whose scores are log-odds, so that predict_proba means something
PROBABILISTIC_LOSSES = ("logistic", "multinomial")


class NoProbabilityError(AttributeError):
    """``predict_proba`` asked of a loss that does not model probabilities.

    An AttributeError, so ``hasattr(clf, "predict_proba")`` is False for such a
    model, as scikit-learn's meta-estimators expect.
    """


class needs_probabilistic_loss:
    """A method that exists only when ``loss`` is in :data:`PROBABILISTIC_LOSSES`;
    otherwise looking it up raises :class:`NoProbabilityError` saying which loss
    gives probabilities."""

    def __init__(self, fn):
        self.fn = fn
        functools.update_wrapper(self, fn)

    def __get__(self, obj, owner=None):
        if obj is None:
            return self.fn
        if obj.loss not in PROBABILISTIC_LOSSES:
            raise NoProbabilityError(
                f"{self.fn.__name__} needs a loss that models probabilities: "
                f"loss={PROBABILISTIC_LOSSES[0]!r}; this {type(obj).__name__} has "
                f"loss={obj.loss!r}, whose decision_function is a margin, not a "
                f"log-odds. Fit {type(obj).__name__}(loss={PROBABILISTIC_LOSSES[0]!r}), or "
                f"wrap this model in sklearn.calibration.CalibratedClassifierCV")
        return MethodType(self.fn, obj)
