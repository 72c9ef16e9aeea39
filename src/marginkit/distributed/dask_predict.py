"""Prediction and evaluation over dask collections, one task per block, the model sent
once; and the base of the meta-estimators whose fitted model predicts so.
"""

from __future__ import annotations

import sys

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, MetaEstimatorMixin
from sklearn.utils.validation import check_is_fitted


def dask_modules():
    try:
        import dask
        import dask.array as da
    except ImportError as exc:
        raise ImportError(
            'dask arrays need the dask extra: pip install "marginkit[dask]"'
        ) from exc
    return dask, da


def row_blocks(X):
    _, da = dask_modules()
    if not isinstance(X, da.Array):
        raise TypeError(f"expected a dask array, got {type(X).__name__}")
    if X.ndim != 2:
        raise ValueError(f"expected a 2-d dask array, got {X.ndim} dimensions")
    # whole rows per block: the features of an example must stay together
    return X.rechunk({1: -1}) if X.numblocks[1] > 1 else X


def _predict_block(block, model):
    return model.predict(block)


def _scores_block(block, model):
    scores = model.decision_function(block)
    return scores if scores.ndim == 2 else scores[:, None]


def predict(model, X):
    """``model.predict`` over the row blocks of a dask array: a lazy 1-d dask array."""
    dask, _ = dask_modules()
    X = row_blocks(X)
    shared = dask.delayed(model, pure=True)
    return X.map_blocks(
        _predict_block, shared, drop_axis=1, dtype=model.classes_.dtype, meta=np.array([])
    )


def decision_function(model, X):
    """``model.decision_function`` over the row blocks: a lazy (n, n_problems) dask array."""
    dask, _ = dask_modules()
    X = row_blocks(X)
    shared = dask.delayed(model, pure=True)
    width = 1 if len(model.classes_) == 2 else len(model.classes_)
    out = X.map_blocks(_scores_block, shared, chunks=(X.chunks[0], (width,)), dtype=float)
    return out[:, 0] if width == 1 else out


def evaluate(model, X, y):
    """Test error and counts of a model on dask arrays ``X`` and ``y`` (computed)."""
    dask, da = dask_modules()
    labels = predict(model, X)
    y = y if isinstance(y, da.Array) else da.from_array(np.asarray(y), chunks=labels.chunks)
    wrong, n = dask.compute((labels != y.rechunk(labels.chunks)).sum(), labels.shape[0])
    return {"n_samples": int(n), "errors": int(wrong), "error": float(wrong) / max(int(n), 1)}


def is_dask(X):
    try:
        import dask.array as da
    except ImportError:
        return False
    return isinstance(X, da.Array)


def from_frame(X, persist=False):
    """A dask DataFrame or Series as a dask array whose chunks are its partitions, with
    their lengths known (computed from the partitions, persisted first where
    ``persist``); anything else as it is. (A frame exists only once dask.dataframe is
    imported: it is not imported here for nothing.)"""
    dd = sys.modules.get("dask.dataframe")
    if dd is not None and isinstance(X, dd.DataFrame | dd.Series):
        return (X.persist() if persist else X).to_dask_array(lengths=True)
    return X


class DaskMetaEstimator(MetaEstimatorMixin, ClassifierMixin, BaseEstimator):
    """What the estimators of this module share: the fitted model is ``estimator_``,
    a plain marginkit estimator, which predicts (lazily, over dask collections)."""

    def predict(self, X):
        """Class labels of ``estimator_``; lazily, as a dask array, for a dask array."""
        check_is_fitted(self)
        X = from_frame(X)
        return predict(self.estimator_, X) if is_dask(X) else self.estimator_.predict(X)

    def decision_function(self, X):
        """Scores of ``estimator_``; lazily, as a dask array, for a dask array."""
        check_is_fitted(self)
        X = from_frame(X)
        if is_dask(X):
            return decision_function(self.estimator_, X)
        return self.estimator_.decision_function(X)

    def score(self, X, y, sample_weight=None):
        """Mean accuracy of ``estimator_`` (computed, for dask arrays, on the workers)."""
        check_is_fitted(self)
        X, y = from_frame(X), from_frame(y)
        if is_dask(X) and sample_weight is None:
            return 1.0 - evaluate(self.estimator_, X, y)["error"]
        return super().score(X, y, sample_weight=sample_weight)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags
