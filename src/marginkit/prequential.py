"""Prequential (test-then-train) evaluation of a classifier on a stream.

Each chunk of the stream is predicted by the model as it stands, then learnt
(``partial_fit``): every row is scored before the model has seen it, the way streams
are measured (Dawid 1984; river's ``evaluate.progressive_val_score``, MOA's prequential
evaluator). The record is the accuracy over all the rows scored and over a sliding
window of the last ones, after each chunk, with the time spent and the model's size:
what :func:`marginkit.plotting.plot_prequential` draws.

Written here rather than taken from river: river's evaluator feeds one row at a time
through ``learn_one``, while marginkit's compiled passes take a chunk per call, and
river is not a dependency of marginkit.
"""

from __future__ import annotations

import os
import pickle
import time
from dataclasses import dataclass

import numpy as np
from sklearn.base import clone
from sklearn.utils import check_consistent_length
from sklearn.utils.multiclass import unique_labels
from sklearn.utils.validation import _num_samples, check_array

from .formats import check_count

__all__ = ["PrequentialScore", "prequential_score"]


@dataclass
class PrequentialScore:
    """The record of :func:`prequential_score`.

    Attributes
    ----------
    estimator : estimator
        The model after the whole stream (a clone of the one given, trained on it).
    label : str
        What the plots call it (the estimator's class name, or the label given).
    n_rows : int
        The rows of the stream.
    n_scored : int
        The rows predicted before they were learnt: all but the first chunk's (a model
        predicts nothing before its first ``partial_fit``).
    accuracy : float
        The share of the rows scored that were predicted right.
    rows : ndarray of shape (n_points,)
        The rows read at each point of the record (the end of a chunk).
    windowed : ndarray of shape (n_points,)
        The accuracy over the last ``window`` rows scored at each point (over all the
        rows scored while there are fewer); NaN before any was scored.
    window : int
        The rows of the sliding window.
    seconds : float
        The time spent predicting and learning (reading the stream aside).
    model_bytes : int
        The size of the final model, pickled.

    The record holds one point per chunk; the window, ``window`` flags.
    """

    estimator: object
    label: str
    n_rows: int
    n_scored: int
    accuracy: float
    rows: np.ndarray
    windowed: np.ndarray
    window: int
    seconds: float
    model_bytes: int

    @property
    def seconds_per_row(self):
        """The time spent on each row, predicting and learning it."""
        return self.seconds / self.n_rows if self.n_rows else 0.0


def _chunks_of(X, y, chunk_size, classes):
    """``(chunks, classes)``: the stream as an iterable of ``(X, y)`` chunks, and all the
    labels it can hold."""
    if isinstance(X, str | os.PathLike):
        if y is not None:
            raise ValueError("y must be None when the stream is a file: its labels are in it")
        from .streaming import FileStream

        stream = FileStream(X, chunk_size, classes=classes)
        return stream(), stream.classes
    if y is None:
        if hasattr(X, "shape"):
            raise ValueError("y must be given with an array of rows (the labels of its rows)")
        if classes is None:
            raise ValueError(
                "classes must be given with a stream of (X, y) chunks: the first call of "
                "partial_fit needs every label the stream can hold"
            )
        return iter(X), unique_labels(classes)
    check_consistent_length(X, y)
    y = np.asarray(y)
    n = _num_samples(X)
    known = unique_labels(y) if classes is None else unique_labels(classes)
    chunks = ((X[i : i + chunk_size], y[i : i + chunk_size]) for i in range(0, n, chunk_size))
    return chunks, known


def prequential_score(
    estimator, X, y=None, *, classes=None, chunk_size=100, window=1000, label=None
):
    """Score a classifier on a stream by predicting each chunk before learning it.

    Parameters
    ----------
    estimator : estimator with ``partial_fit``
        Cloned, not changed: any marginkit estimator (or another with ``partial_fit``
        and ``predict``).
    X : {array-like, sparse matrix} of shape (n_samples, n_features), iterable of
        ``(X, y)`` chunks, or path
        The stream: rows in their order (cut into chunks of ``chunk_size``); the
        chunks of a generator (``marginkit.formats.iter_chunks``,
        ``marginkit.datasets.iter_deformed_mnist``...), each learnt as it comes; or a
        data file (svmlight or CSV, read by :class:`marginkit.streaming.FileStream`).
    y : array-like of shape (n_samples,), default=None
        The labels of ``X``'s rows; None for chunks or a file.
    classes : array-like, default=None
        Every label the stream can hold: required with chunks; by default those of
        ``y``, or of the file.
    chunk_size : int >= 1, default=100
        The rows predicted, then learnt, at a time (rows and files); a model is the
        same for any chunking (``partial_fit``), its scores come from the model before
        each chunk.
    window : int >= 1, default=1000
        The rows of the sliding window of ``windowed``.
    label : str, default=None
        The name of the record in plots; the estimator's class name by default.

    Returns
    -------
    PrequentialScore

    Examples
    --------
    >>> import numpy as np
    >>> from marginkit import ALMAClassifier
    >>> from marginkit.prequential import prequential_score
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(2000, 5))
    >>> y = np.where(X[:, 0] + X[:, 1] > 0, 1, -1)
    >>> score = prequential_score(ALMAClassifier(), X, y, window=500)
    >>> score.n_scored, bool(score.windowed[-1] > 0.9)
    (1900, True)
    """
    if not (hasattr(estimator, "partial_fit") and hasattr(estimator, "predict")):
        raise TypeError(
            f"prequential_score needs an estimator with partial_fit and predict, got "
            f"{type(estimator).__name__}"
        )
    chunk_size = check_count(chunk_size, "chunk_size")
    window = check_count(window, "window")
    if y is not None and not isinstance(X, str | os.PathLike) and not hasattr(X, "shape"):
        X = check_array(X, accept_sparse="csr", dtype=None)
    model = clone(estimator)
    chunks, known = _chunks_of(X, y, chunk_size, classes)
    recent = np.zeros(window, dtype=bool)  # the last rows scored, in a ring
    filled = right = scored = rows = 0
    points, windowed = [], []
    seconds = 0.0
    for Xc, yc in chunks:
        n = _num_samples(Xc)
        if n == 0:
            continue
        yc = np.asarray(yc)
        start = time.perf_counter()
        if rows:  # (fitted: the first chunk has no model to score it)
            hits = np.asarray(model.predict(Xc) == yc).ravel()
            model.partial_fit(Xc, yc)
        else:
            hits = None
            model.partial_fit(Xc, yc, classes=known)
        seconds += time.perf_counter() - start
        rows += n
        if hits is not None:
            right += int(hits.sum())
            scored += n
            last = hits[-window:]
            at = (filled + np.arange(last.shape[0])) % window
            recent[at] = last
            filled += last.shape[0]
        points.append(rows)
        seen = min(filled, window)
        windowed.append(recent[:seen].mean() if seen else np.nan)
    if not rows:
        raise ValueError("the stream holds no rows")
    return PrequentialScore(
        estimator=model,
        label=type(estimator).__name__ if label is None else str(label),
        n_rows=rows,
        n_scored=scored,
        accuracy=right / scored if scored else float("nan"),
        rows=np.asarray(points, dtype=np.int64),
        windowed=np.asarray(windowed, dtype=np.float64),
        window=window,
        seconds=seconds,
        model_bytes=len(pickle.dumps(model, protocol=pickle.HIGHEST_PROTOCOL)),
    )
