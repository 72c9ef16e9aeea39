"""Prediction and evaluation over dask arrays: one task per block, the model sent once.

The model enters the task graph a single time (as one ``dask.delayed`` key that every
block's task depends on), so a cluster ships it to each worker once, not once per block.
Needs the ``dask`` extra.

Examples
--------
>>> import dask.array as da
>>> import numpy as np
>>> from marginkit import ALMAClassifier
>>> from marginkit.distributed import predict
>>> rng = np.random.default_rng(0)
>>> X = rng.normal(size=(1000, 4))
>>> y = (X[:, 0] > 0).astype(int)
>>> clf = ALMAClassifier(fit_intercept=True, max_iter=3).fit(X, y)
>>> labels = predict(clf, da.from_array(X, chunks=250))
>>> bool((labels.compute() == clf.predict(X)).all())
True
"""

from __future__ import annotations

import numpy as np


def _dask():
    try:
        import dask
        import dask.array as da
    except ImportError as exc:
        raise ImportError(
            'dask arrays need the dask extra: pip install "marginkit[dask]"'
        ) from exc
    return dask, da


def _blocks(X):
    _, da = _dask()
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
    dask, _ = _dask()
    X = _blocks(X)
    shared = dask.delayed(model, pure=True)
    return X.map_blocks(
        _predict_block, shared, drop_axis=1, dtype=model.classes_.dtype, meta=np.array([])
    )


def decision_function(model, X):
    """``model.decision_function`` over the row blocks: a lazy (n, n_problems) dask array."""
    dask, _ = _dask()
    X = _blocks(X)
    shared = dask.delayed(model, pure=True)
    width = 1 if len(model.classes_) == 2 else len(model.classes_)
    out = X.map_blocks(_scores_block, shared, chunks=(X.chunks[0], (width,)), dtype=float)
    return out[:, 0] if width == 1 else out


def evaluate(model, X, y):
    """Test error and counts of a model on dask arrays ``X`` and ``y`` (computed)."""
    dask, da = _dask()
    labels = predict(model, X)
    y = y if isinstance(y, da.Array) else da.from_array(np.asarray(y), chunks=labels.chunks)
    wrong, n = dask.compute((labels != y.rechunk(labels.chunks)).sum(), labels.shape[0])
    return {"n_samples": int(n), "errors": int(wrong), "error": float(wrong) / max(int(n), 1)}
