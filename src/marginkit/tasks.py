"""Train, predict and evaluate on data files: the work behind ``marginkit train``,
``marginkit predict`` and ``marginkit evaluate``, usable from Python too.

Data files are svmlight / LIBSVM (``label index:value ...``, read by scikit-learn's
``load_svmlight_file``; ``.gz`` and ``.bz2`` too) or CSV (numbers separated by commas,
the label in one column, by default the last). Models are written and read with
:func:`marginkit.save` and :func:`marginkit.load`.
"""

from __future__ import annotations

import ast
import time
import warnings
from pathlib import Path

import numpy as np

from . import (
    ALMAClassifier,
    KernelALMAClassifier,
    KernelPerceptronClassifier,
    KernelPUMMAClassifier,
    KernelROMMAClassifier,
    MarginPerceptronClassifier,
    PerceptronClassifier,
    PUMMAClassifier,
    ROMMAClassifier,
)
from .persistence import load, save

#: The estimators ``marginkit train`` knows, by the name it takes.
ESTIMATORS = {
    "alma": ALMAClassifier,
    "kernel-alma": KernelALMAClassifier,
    "perceptron": PerceptronClassifier,
    "kernel-perceptron": KernelPerceptronClassifier,
    "romma": ROMMAClassifier,
    "kernel-romma": KernelROMMAClassifier,
    "margin-perceptron": MarginPerceptronClassifier,
    "pumma": PUMMAClassifier,
    "kernel-pumma": KernelPUMMAClassifier,
}

FORMATS = ("svmlight", "csv")


def data_format(path, fmt=None) -> str:
    """``fmt`` if given, else ``csv`` for ``.csv`` files (also compressed), else svmlight."""
    if fmt is not None:
        if fmt not in FORMATS:
            raise ValueError(f"unknown data format {fmt!r} (known: {', '.join(FORMATS)})")
        return fmt
    suffixes = [s.lower() for s in Path(path).suffixes]
    return "csv" if ".csv" in suffixes else "svmlight"


def read_data(path, fmt=None, *, n_features=None, label_column=-1, skip_header=False):
    """(X, y) from a data file: CSR for svmlight, a dense array for CSV.

    Parameters
    ----------
    path : str or path-like
    fmt : {"svmlight", "csv"} or None
        None: from the file name (see :func:`data_format`).
    n_features : int, optional
        svmlight: the number of features (a model's ``n_features_in_``, so that a test
        file that never uses the last features still fits it).
    label_column : int, default=-1
        CSV: the column of the label.
    skip_header : bool, default=False
        CSV: the first line names the columns.

    Raises
    ------
    FileNotFoundError
        No file at ``path``.
    ValueError
        A file that cannot be read in that format, with the reason.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no data file at {path}")
    fmt = data_format(path, fmt)
    if fmt == "svmlight":
        from sklearn.datasets import load_svmlight_file

        try:
            X, y = load_svmlight_file(str(path), n_features=n_features, dtype=np.float64)
        except (ValueError, OSError, EOFError) as exc:
            raise ValueError(f"{path}: cannot be read as an svmlight file ({exc})") from exc
    else:
        try:
            table = np.loadtxt(path, delimiter=",", skiprows=1 if skip_header else 0, ndmin=2)
        except (ValueError, OSError, EOFError) as exc:
            hint = "" if skip_header else " (if its first line names the columns: skip_header)"
            raise ValueError(f"{path}: cannot be read as numeric CSV ({exc}){hint}") from exc
        if table.shape[1] < 2:
            raise ValueError(f"{path}: a CSV file needs a label column and at least one feature")
        col = label_column % table.shape[1]
        y = table[:, col]
        X = np.delete(table, col, axis=1)
    if X.shape[0] == 0:
        raise ValueError(f"{path}: no examples")
    if np.all(y == np.round(y)):
        y = y.astype(np.int64)
    return X, y


def parse_param(text: str):
    """``"name=value"`` as ``(name, value)``: numbers, True/False/None, else the string."""
    name, sep, raw = text.partition("=")
    if not sep or not name.strip():
        raise ValueError(f"a parameter is NAME=VALUE, got {text!r}")
    raw = raw.strip()
    lowered = raw.lower()
    if lowered in ("true", "false", "none"):
        value = {"true": True, "false": False, "none": None}[lowered]
    else:
        try:
            value = ast.literal_eval(raw)
        except (ValueError, SyntaxError):
            value = raw
        if not isinstance(value, int | float | str):
            value = raw
    return name.strip(), value


def make_estimator(name: str, params=None):
    """The estimator ``name`` (a key of :data:`ESTIMATORS`) with ``params`` set."""
    if name not in ESTIMATORS:
        raise ValueError(f"unknown estimator {name!r} (known: {', '.join(ESTIMATORS)})")
    est = ESTIMATORS[name]()
    params = dict(params or {})
    unknown = sorted(set(params) - set(est.get_params()))
    if unknown:
        raise ValueError(
            f"{name} has no parameter {', '.join(unknown)} "
            f"(its parameters: {', '.join(sorted(est.get_params()))})"
        )
    return est.set_params(**params)


def train(
    data,
    estimator,
    model,
    *,
    params=None,
    fmt=None,
    n_features=None,
    checkpoint=None,
    checkpoint_every=None,
    chunk_size=None,
    classes=None,
    zero_based="auto",
    **read,
):
    """Fit ``estimator`` (a name) on a data file and save the model; a summary dict.

    With ``checkpoint``, training writes its progress there (every
    ``checkpoint_every`` trials) and resumes from it when it exists.

    With ``chunk_size``, the file is read ``chunk_size`` lines at a time and never
    held whole (:mod:`marginkit.streaming`): the model is that of a fit in memory with
    ``shuffle=False``; ``classes`` and ``zero_based`` (see
    :class:`marginkit.streaming.FileStream`) spare it the first pass over the file.
    """
    est = make_estimator(estimator, params)
    if chunk_size is None and (classes is not None or zero_based != "auto"):
        raise ValueError("classes and zero_based are options of streaming: give chunk_size")
    if chunk_size is None:
        X, y = read_data(data, fmt, n_features=n_features, **read)
        n_samples, width = X.shape
    elif checkpoint is not None or checkpoint_every is not None:
        raise ValueError(
            "a checkpoint records a position in data held in memory: it cannot be "
            "combined with chunk_size (streaming)"
        )
    else:
        from .streaming import FileStream, check_streamable

        check_streamable(est)
        stream = FileStream(
            data,
            chunk_size,
            fmt,
            n_features=n_features,
            classes=classes,
            zero_based=zero_based,
            **read,
        )
        width = stream.n_features
    start = time.perf_counter()
    fit_options = {}
    if checkpoint is not None or checkpoint_every is not None:
        fit_options = {"checkpoint": checkpoint, "checkpoint_every": checkpoint_every}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if chunk_size is None:
            est.fit(X, y, **fit_options)
        else:
            _fit_streaming(est, stream)
    seconds = time.perf_counter() - start
    if chunk_size is not None:
        # known after the scan or a whole pass; else (every pass stopped early on a
        # margin Perceptron budget) one more, untimed
        n_samples = stream.count()
    save(est, model)
    return {
        "model": str(model),
        "estimator": estimator,
        "n_samples": int(n_samples),
        "n_features": int(width),
        "classes": [c.item() if hasattr(c, "item") else c for c in est.classes_],
        "n_corrections": int(getattr(est, "n_corrections_", 0)),
        "train_seconds": seconds,
        "warnings": [str(w.message) for w in caught],
    }


def _fit_streaming(est, stream):
    """fit_stream, with one progress bar over the examples read (not one per chunk)."""
    from tqdm.auto import tqdm

    from .streaming import fit_stream

    verbose = est.verbose
    with tqdm(disable=not verbose, desc=type(est).__name__, unit="example", leave=False) as bar:
        stream.progress = bar.update
        est.set_params(verbose=0)
        try:
            fit_stream(est, stream)
        finally:
            est.set_params(verbose=verbose)
            stream.progress = None


def _read_for(model, data, fmt, read):
    return read_data(data, fmt, n_features=getattr(model, "n_features_in_", None), **read)


def predict(model, data, *, fmt=None, **read):
    """The labels a saved model (a path) predicts for the examples of a data file."""
    est = load(model)
    X, _ = _read_for(est, data, fmt, read)
    return est.predict(X)


def evaluate(model, data, *, fmt=None, plot=None, **read):
    """Error, timing, corrections and margins of a saved model on a labelled data file.

    With ``plot`` (a PNG path), also draws the cumulative margin distribution of the
    data under the model (matplotlib, the ``plot`` extra); ``"plot"`` in the result
    is then its path.
    """
    from .margins import margin

    est = load(model)
    X, y = _read_for(est, data, fmt, read)
    start = time.perf_counter()
    pred = est.predict(X)
    seconds = time.perf_counter() - start
    known = np.isin(y, est.classes_)
    out = {
        "model": str(model),
        "estimator": type(est).__name__,
        "output": getattr(est, "output", None),
        "n_samples": int(X.shape[0]),
        "error": float(np.mean(pred != y)),
        "unknown_labels": int((~known).sum()),
        "predict_seconds": seconds,
        "n_corrections": int(getattr(est, "n_corrections_", 0)),
        "margin": None,
    }
    # the p-norm margin of a linear two-class hyperplane on these data
    if len(est.classes_) == 2 and known.all() and hasattr(est, "coef_"):
        try:
            out["margin"] = float(margin(est, X, y, p=getattr(est, "p_", 2.0)))
        except (AttributeError, TypeError, ValueError):
            pass  # voted output, or a zero hyperplane: no margin to tell
    if plot is not None:
        title = f"{Path(model).name} on {Path(data).name}: cumulative margins"
        out["plot"] = str(_plot_margins(est, X, y, plot, title))
    return out


def _plot_margins(est, X, y, png, title):
    """Draw the cumulative margin distribution of (X, y) under ``est`` into ``png``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from .plotting import plot_margin_distribution

    fig, ax = plt.subplots(figsize=(6.5, 4.5))
    plot_margin_distribution(est, X, y, ax=ax)
    ax.set_title(title)
    fig.tight_layout()
    fig.savefig(png, dpi=100)
    plt.close(fig)
    return Path(png)
