"""Train, predict and evaluate on data files: the work behind ``marginkit train``,
``marginkit predict`` and ``marginkit evaluate``, usable from Python too.

Data files are svmlight / LIBSVM (``label index:value ...``) or CSV (numbers separated
by commas, the label in one column, by default the last), plain or ``.gz``, ``.bz2`` or
``.xz``, read by :mod:`marginkit.formats` (what scikit-learn's ``load_svmlight_file``
reads, read as it reads it). Models are written and read with :func:`marginkit.save`
and :func:`marginkit.load`.

A model trained here remembers how its data were read (``input_format_``: the format,
the width and, for svmlight, whether the indices start at 0), and reads every file it
predicts or evaluates the same way: a zero-based model's features keep their places on
a file that never uses index 0, and an index beyond the model's width is an error that
names its line. Prediction needs no labels: an svmlight line's label is a placeholder,
and a CSV file may leave the label column out.
"""

from __future__ import annotations

import ast
import os
import time
import warnings
from numbers import Integral
from pathlib import Path

import numpy as np
import scipy.sparse as sp

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
from ._files import prepare_output
from ._reading import ReadOptions, as_labels
from .formats import checked_file, data_format, input_format, read_file
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


def read_data(path, fmt=None, **options):
    """(X, y) from a data file: CSR for svmlight, a dense array for CSV.

    Parameters
    ----------
    path : str or path-like
    fmt : {"svmlight", "csv"} or None
        None: from the file name (see :func:`marginkit.formats.data_format`).
    **options
        The options of :func:`marginkit.formats.read_file`: for svmlight
        ``n_features`` (e.g. a model's ``n_features_in_``, so that a test file that
        never uses the last features still fits it), ``zero_based`` and ``labels``
        (False reads no labels: ``y`` is None); for CSV ``label_column`` (None: the
        file has none, ``y`` is None) and ``skip_header``.

    Returns
    -------
    X : scipy.sparse.csr_matrix or ndarray
    y : ndarray or None
        int64 when every label is an integer, else float64.

    Raises
    ------
    FileNotFoundError
        No file at ``path``.
    ValueError
        A file that cannot be read in that format (the line and the reason), or that
        holds no examples.
    """
    data = _read_dataset(path, fmt, **options)
    return data.X, data.y


def _read_dataset(path, fmt=None, **options):
    """A :class:`marginkit.formats.Dataset`, its errors naming the file; integral
    labels as int64."""
    path = checked_file(path)
    # what read_file takes beside the reading options: labels or not, its block size
    extra = {k: options.pop(k) for k in ("labels", "block_size") if k in options}
    reading = ReadOptions(fmt, **options).for_file(path)
    try:
        data = read_file(path, reading.fmt, **extra, **reading.reader_args())
    except ValueError as exc:
        if reading.fmt == "svmlight":
            raise ValueError(f"{path}: cannot be read as an svmlight file ({exc})") from exc
        header = ", its first line taken as a header" if reading.skip_header else ""
        raise ValueError(f"{path}: cannot be read as numeric CSV{header} ({exc})") from exc
    if data.X.shape[0] == 0:
        raise ValueError(f"{path}: no examples")
    _check_finite_rows(path, data.X)
    if data.y is not None:
        data = data._replace(y=as_labels(data.y))
    return data


def _check_finite_rows(path, X):
    """A ValueError naming the first example (counted from 1) with a value that is not
    finite (nan, inf): the estimators refuse them, in a message that names no file."""
    values = X.data if sp.issparse(X) else X
    if np.isfinite(values).all():
        return
    if sp.issparse(X):
        bad = np.flatnonzero(~np.isfinite(X.data))[0]
        row = int(np.searchsorted(X.indptr, bad, side="right") - 1)
    else:
        row = int(np.flatnonzero(~np.isfinite(X).all(axis=1))[0])
    raise ValueError(f"{path}: example {row + 1} holds a value that is not finite (nan or inf)")


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


#: Why a checkpoint goes only with data held in memory (the start of the refusals)
NO_CHECKPOINT = (
    "a checkpoint records a position in data held in memory: it cannot be combined with"
)


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
    workers=None,
    scheduler=None,
    mixing="uniform",
    momentum=0.0,
    mix_every=None,
    warm_up=0,
    **read,
):
    """Fit ``estimator`` (a name) on a data file and save the model; a summary dict.

    With ``workers`` (a local Dask cluster of that many processes) or ``scheduler`` (the
    address of a running one), ``data`` is one file or a list of them, each a shard of
    :class:`marginkit.distributed.MixingClassifier` (with ``mixing``, ``momentum``,
    ``mix_every`` and ``warm_up``), read on the workers in chunks of ``chunk_size``
    examples (default 10 000), never through this process (with ``mix_every``, read once
    and held there); the estimator's ``max_iter`` and ``tol`` are the epochs'. The
    summary adds ``n_shards`` and ``n_mixes``; those four options are refused without a
    cluster.

    With ``checkpoint``, training writes its progress there (every
    ``checkpoint_every`` trials) and resumes from it when it exists.

    With ``chunk_size``, the file is read ``chunk_size`` examples at a time and never
    held whole (:mod:`marginkit.streaming`), in the order of its rows: the model is that
    of a fit in memory with ``shuffle=False`` (one in memory shuffles every pass, by
    default; a file that comes in long runs of one label warns); ``classes`` and
    ``zero_based`` (see
    :class:`marginkit.streaming.FileStream`) spare it the first pass over the file.

    ``zero_based`` (svmlight: whether the first feature's index is 0; "auto": as
    ``load_svmlight_file`` decides) and the width are recorded on the model as
    ``input_format_``, and :func:`predict` and :func:`evaluate` read every file with
    them.

    Raises
    ------
    ValueError
        A file that cannot be read, a bad option or parameter, or a file whose largest
        index makes a model wider than this machine's memory holds.
    """
    est = make_estimator(estimator, params)
    # where the work goes, checked before any of it is done
    prepare_output(model, "the model")
    on_cluster = workers is not None or scheduler is not None
    mixed = {"mixing": mixing, "momentum": momentum, "mix_every": mix_every, "warm_up": warm_up}
    given = [k for k, v in mixed.items() if v != _MIXED_DEFAULTS[k]]
    if not on_cluster and given:
        raise ValueError(
            f"{', '.join(given)} only apply to training on a Dask cluster: give workers "
            "(--workers N) or scheduler (--scheduler ADDRESS)"
        )
    if not on_cluster and not isinstance(data, str | os.PathLike):
        if len(data) != 1:
            raise ValueError(
                f"{len(data)} data files are trained as the shards of a Dask cluster: "
                "give workers (--workers N) or scheduler (--scheduler ADDRESS)"
            )
        (data,) = data
    if on_cluster:
        if checkpoint is not None or checkpoint_every is not None:
            raise ValueError(f"{NO_CHECKPOINT} training on a Dask cluster")
        reading = {"chunk_size": 10000 if chunk_size is None else chunk_size, "fmt": fmt}
        reading.update(n_features=n_features, zero_based=zero_based, classes=classes, **read)
        return _train_mixed(data, estimator, est, model, (workers, scheduler), reading, mixed)
    if checkpoint is not None:
        prepare_output(checkpoint, "the checkpoint")
    resumed = checkpoint is not None and Path(checkpoint).is_file()
    if chunk_size is None and classes is not None:
        raise ValueError("classes is an option of streaming: give chunk_size")
    read = {"n_features": n_features, "zero_based": zero_based, **read}
    if chunk_size is None:
        dataset = _read_dataset(data, fmt, **read)
        X, y = dataset.X, dataset.y
        n_samples, width = X.shape
        read_as, based = dataset.fmt, dataset.zero_based
        _check_width(data, width, np.unique(y).size)
    elif checkpoint is not None or checkpoint_every is not None:
        raise ValueError(f"{NO_CHECKPOINT} chunk_size (streaming)")
    else:
        from .streaming import FileStream, check_streamable

        check_streamable(est)
        bar = _ReadBar(data, type(est).__name__, est.get_params().get("verbose", 0))
        try:
            stream = FileStream(data, chunk_size, fmt, classes=classes, read_progress=bar, **read)
            width = stream.n_features
            _check_width(data, width, len(stream.classes))
        except BaseException:
            bar.close()  # (_fit_streaming closes it after the fit)
            raise
        read_as, based = stream.fmt, stream.zero_based
    start = time.perf_counter()
    fit_options = {}
    if checkpoint is not None or checkpoint_every is not None:
        fit_options = {"checkpoint": checkpoint, "checkpoint_every": checkpoint_every}
    # the corrections after each pass (a fresh fit starts from none): whether the last
    # pass made any, for why the passes stopped
    counts = [] if resumed else [0]

    def count_pass(fitted, epoch):
        counts.append(int(fitted.n_corrections_))

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            if chunk_size is None:
                est.fit(X, y, callback=count_pass, **fit_options)
            else:
                _fit_streaming(est, stream, bar, count_pass)
        except MemoryError:
            raise ValueError(
                f"{data}: out of memory training {estimator} on {width} features"
            ) from None
    seconds = time.perf_counter() - start
    if chunk_size is not None:
        # known after the scan or a whole pass; else (every pass stopped early on a
        # margin Perceptron budget) one more, untimed
        n_samples = stream.count()
    est.input_format_ = input_format(read_as, width, based, read.get("label_column", -1))
    save(est, model)
    return _summary(
        est,
        estimator,
        model,
        n_samples,
        width,
        counts,
        seconds,
        caught,
        checkpoint if resumed else None,
    )


def _summary(est, name, model, n_samples, width, counts, seconds, caught, resumed, **more):
    """What :func:`train` returns, of the fitted and saved ``est``: ``counts`` the
    corrections after each pass, ``caught`` the warnings recorded, ``more`` added."""
    last = counts[-1] - counts[-2] if len(counts) >= 2 else None
    return {
        "model": str(model),
        "estimator": name,
        "n_samples": int(n_samples),
        "n_features": int(width),
        "classes": [c.item() if hasattr(c, "item") else c for c in est.classes_],
        "n_corrections": int(getattr(est, "n_corrections_", 0)),
        **passes_made(est, last),
        **more,
        "train_seconds": seconds,
        "resumed_from": None if resumed is None else str(resumed),
        "warnings": [str(w.message) for w in caught],
    }


#: The parameters of :func:`train`'s mix, as by default (those of MixingClassifier)
_MIXED_DEFAULTS = {"mixing": "uniform", "momentum": 0.0, "mix_every": None, "warm_up": 0}


def _train_mixed(data, name, est, model, cluster, reading, mixed):
    """:func:`train` on a Dask cluster (``cluster``: ``(workers, scheduler)``): every file
    of ``data`` a shard of :class:`marginkit.distributed.MixingClassifier` (``mixed``, its
    parameters of the mix), read on the workers with ``reading`` (the options of its
    ``fit``)."""
    from .distributed import MixingClassifier
    from .experiments import _dask_client

    paths = [str(data)] if isinstance(data, str | os.PathLike) else [str(p) for p in data]
    clf = MixingClassifier(est, **mixed)
    clf._checked_estimator()  # refusals before a cluster is started
    params = est.get_params()  # the epochs are the meta-estimator's
    clf.set_params(max_iter=params["max_iter"], tol=params["tol"], verbose=params["verbose"])
    clf._validate_params()
    counts = [0]
    start = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with _dask_client(*cluster):
            clf.fit(
                paths,
                callback=lambda fitted, _: counts.append(int(fitted.n_corrections_)),
                **reading,
            )
    seconds = time.perf_counter() - start
    fitted = clf.estimator_
    fitted.input_format_ = clf.input_format_
    save(fitted, model)
    n_samples = fitted.n_trials_ // clf.n_iter_  # each epoch counts every shard's rows once
    return _summary(
        fitted,
        name,
        model,
        n_samples,
        clf.n_features_in_,
        counts,
        seconds,
        caught,
        None,
        n_shards=int(clf.n_shards_),
        n_mixes=int(clf.n_mixes_),
    )


def _tol_rule(p):
    """``tol``'s setting in the parameters ``p``, and the passes in a row it waits for
    where there are several (``n_iter_no_change``; early stopping's is its own)."""
    patience = p.get("n_iter_no_change") or 1
    waits = patience > 1 and not p.get("early_stopping")
    return f"tol={p['tol']:g}" + (f", n_iter_no_change={patience}" if waits else "")


#: what ended the passes, by the rule an estimator recorded (``_stopped_by``, one of
#: :data:`marginkit._passes.STOPPED`), from its parameters
_STOPPED_BY = {
    "max_iter": lambda p: "max_iter reached",
    "quiet": lambda p: "a pass without update",
    "tol": lambda p: f"corrections stopped falling ({_tol_rule(p)})",
    "growth": lambda p: f"the hypothesis stopped growing ({_tol_rule(p)})",
    "noise": lambda p: (
        "noisy data: a pass made at least 0.85 times the first pass's corrections in "
        "every problem, and more passes would memorise the noise (tol=None makes "
        "max_iter passes)"
    ),
    "early_stopping": lambda p: (
        f"the rows held out stopped improving (early_stopping, n_iter_no_change="
        f"{p.get('n_iter_no_change')}; the best pass's model kept)"
    ),
}


def passes_made(est, last_pass=None):
    """How many passes over its training data a fitted estimator made, and why they
    stopped; a dict of ``n_passes`` (an int) and ``stopped`` (a sentence).

    The reasons are those of :meth:`fit`, which the model records: ``"one pass asked
    (max_iter=1)"``, ``"a pass without update"`` (the hypothesis can no longer change),
    ``"corrections stopped falling (tol=..., n_iter_no_change=...)"`` (that many passes
    made no fewer corrections than the best earlier one by more than ``tol *
    n_samples``), ``"the hypothesis stopped growing (tol=...)"`` (the soft margins,
    with ``n_iter_no_change`` where it is above 1),
    ``"noisy data: ..."`` (a kernel estimator's pass made at least 0.85 times the first
    pass's corrections in every problem), ``"the rows held out stopped improving
    (...)"`` (``early_stopping``) and ``"max_iter reached"``.
    ``last_pass``: the corrections of the last pass where they were counted (see
    :func:`train`); without them and without the record (a model saved before it), a
    model that ``tol`` stopped before ``max_iter`` says ``"tol ended them (tol=...):
    the corrections stopped falling, or a pass made none"``, unless it records that it converged
    (PUMMA and the margin Perceptron: ``converged_``). A stream reads its file once
    per pass.

    The margin Perceptron makes the epochs of each one-vs-rest problem one after the
    other; ``n_passes`` is their sum, and ``passes_per_problem`` lists them.
    """
    try:
        n_iter = np.atleast_1d(np.asarray(est.n_iter_, dtype=np.int64))
    except AttributeError:  # a model saved before n_iter_
        return {"n_passes": None, "stopped": "not recorded (a model of marginkit 0.1)"}
    out = {"n_passes": int(n_iter.sum())}
    if n_iter.size > 1:
        out["passes_per_problem"] = [int(n) for n in n_iter]
    # (the value given under a former name of max_iter, where one was)
    params = est.get_params()
    max_iter = getattr(est, "_max_iter", params.get("max_iter"))
    tol = params.get("tol")
    converged = getattr(est, "converged_", None)
    held_out = params.get("early_stopping", False)
    stopped_by = vars(est).get("_stopped_by")
    if max_iter == 1:
        reason = "one pass asked (max_iter=1)"
    elif stopped_by is not None:
        reason = _STOPPED_BY[stopped_by](params)
    # a model that does not record why (the margin Perceptron, one saved before it)
    elif held_out and int(n_iter.max()) < (max_iter or 0) and last_pass != 0:
        reason = _STOPPED_BY["early_stopping"](params)
    elif converged:
        reason = _STOPPED_BY["quiet"](params)
    elif int(n_iter.max()) >= (max_iter or 0):
        reason = _STOPPED_BY["max_iter"](params)
    elif last_pass == 0 or tol is None:  # tol None: only a pass without update ends early
        reason = _STOPPED_BY["quiet"](params)
    elif converged is not None or last_pass is not None:
        reason = _STOPPED_BY["tol"](params)
    else:
        reason = (
            f"tol ended them (tol={tol:g}): the corrections stopped falling, or a pass made none"
        )
    out["stopped"] = reason
    return out


def describe_passes(summary):
    """``"3 passes; stopped: max_iter reached"``, of a dict of :func:`passes_made`."""
    n = summary["n_passes"]
    if n is None:
        return f"passes {summary['stopped']}"
    text = f"{n} pass{'' if n == 1 else 'es'}"
    if "passes_per_problem" in summary:
        text += f" ({', '.join(map(str, summary['passes_per_problem']))} by problem)"
    return f"{text}; stopped: {summary['stopped']}"


def _physical_memory():
    """Bytes of memory of this machine, None where the system does not tell."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, ValueError, OSError):
        return None


def _check_width(path, width, n_classes):
    """A one-line ValueError when a model ``width`` features wide cannot fit in memory:
    the weights of each one-vs-rest problem, and the few vectors a fit keeps beside."""
    total = _physical_memory()
    need = 4 * 8 * int(width) * (1 if n_classes <= 2 else int(n_classes))
    if total and need > total:
        raise ValueError(
            f"{path}: {width} features (the largest index in the file): a model that wide "
            f"needs about {need / 2**30:.0f} GiB, more than this machine's "
            f"{total / 2**30:.0f} GiB; check the file's indices"
        )


class _ReadBar:
    """One progress bar over the reading of a data file (``disabled`` where ``verbose``
    is 0), in bytes of the file on disk, its total the file's size from the start, and
    begun again at each pass (the scan, then each pass of the fit), its description
    saying which: a stream's :attr:`~marginkit.streaming.FileStream.read_progress`."""

    def __init__(self, path, name, verbose):
        from tqdm.auto import tqdm

        self.name, self.stage = name, None
        self.bar = tqdm(
            total=Path(path).stat().st_size,
            disable=not verbose,
            desc=f"{name}: scan",
            unit="B",
            unit_scale=True,
            unit_divisor=1024,
            leave=False,
        )

    def __call__(self, stage, n):
        if stage != self.stage:
            if self.stage is not None:
                self.bar.reset()
            self.bar.set_description(f"{self.name}: {stage}")
            self.stage = stage
        self.bar.update(n)

    def close(self):
        self.bar.close()


def _fit_streaming(est, stream, bar, callback=None):
    """fit_stream, with one progress bar over the reading of the file (``bar``, a
    :class:`_ReadBar`), not one per chunk; the bar closed at the end."""
    from .streaming import fit_stream

    verbose = est.verbose
    est.set_params(verbose=0)
    try:
        fit_stream(est, stream, callback)
    finally:
        est.set_params(verbose=verbose)
        stream.read_progress = None
        bar.close()


def _read_for(est, path, fmt, labels, label_column, skip_header):
    """(X, y) of a data file read as the model's training data were: to its width, and
    for svmlight with its index base. ``labels`` False: ``y`` is None, an svmlight
    label is a placeholder and a CSV file may have no label column."""
    width = getattr(est, "n_features_in_", None)
    known = getattr(est, "input_format_", None) or {}
    path = Path(path)
    fmt = data_format(path, fmt)
    if isinstance(label_column, str) and label_column == "model":
        # the column the model's training file had its labels in
        label_column = known.get("label_column", -1) if known.get("format") == "csv" else -1
    if label_column is not None and (
        isinstance(label_column, bool) or not isinstance(label_column, Integral)
    ):
        raise ValueError(f"label_column must be an integer, None or 'model', got {label_column!r}")
    if fmt == "svmlight":
        zero_based = "auto"
        if known.get("format") == "svmlight":
            zero_based = known.get("zero_based", "auto")
        try:
            data = _read_dataset(path, fmt, n_features=width, zero_based=zero_based, labels=labels)
        except ValueError as exc:
            if width is not None and "beyond n_features" in str(exc):
                raise ValueError(f"{exc}; the model takes {width} features") from None
            raise
        return data.X, data.y
    table = _read_dataset(path, fmt, label_column=None, skip_header=skip_header).X
    columns = table.shape[1]
    if width is not None and not labels and columns == width:
        return table, None
    if label_column is None or (width is not None and columns != width + 1):
        need = f"{width} features" if width is not None else "features"
        if labels:
            need += " and a label column"
        elif width is not None:
            need += f" ({width + 1} values with a label column)"
        raise ValueError(f"{path}: rows of {columns} values, but the model takes {need}")
    if not -columns <= label_column < columns:
        raise ValueError(
            f"{path}: label_column={label_column} is out of range for rows of {columns} values"
        )
    col = label_column % columns
    return np.delete(table, col, axis=1), as_labels(table[:, col])


def predict(model, data, *, fmt=None, label_column="model", skip_header=False):
    """The labels a saved model (a path) predicts for the examples of a data file.

    The file needs no labels: an svmlight line's label is a placeholder (any token, or
    none), and a CSV file whose rows have as many values as the model has features has
    no label column (else its ``label_column`` is dropped: by default, "model", the
    column the model's training file had its labels in, as :func:`train` recorded it in
    ``input_format_``; -1 for a model that did not record one).
    """
    est = load(model)
    X, _ = _read_for(est, data, fmt, False, label_column, skip_header)
    return est.predict(X)


def evaluate(model, data, *, fmt=None, plot=None, label_column="model", skip_header=False):
    """Error, timing, corrections and margins of a saved model on a labelled data file.

    ``label_column`` as in :func:`predict`: by default the training file's.

    With ``plot`` (a PNG path), also draws the cumulative margin distribution of the
    data under the model (matplotlib, the ``plot`` extra); ``"plot"`` in the result
    is then its path.
    """
    from .margins import margin
    from .plotting import output_margins

    if plot is not None:
        prepare_output(plot, "the plot")
    est = load(model)
    X, y = _read_for(est, data, fmt, True, label_column, skip_header)
    if X.shape[1] == 0 or (sp.issparse(X) and X.nnz == 0):
        raise ValueError(
            f"{data}: no example has a feature (a file of labels only, as predict writes "
            "them?): nothing to evaluate"
        )
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
        **passes_made(est),
        "smallest_margin": None,
        "median_margin": None,
        "geometric_margin": None,
        "p": None,
    }
    # margins on the scale of decision_function, the plot's: y f(x) (multiclass: the
    # true class's value less the largest other)
    if known.all():
        margins = output_margins(est, X, y)
        out["smallest_margin"] = float(margins.min())
        out["median_margin"] = float(np.median(margins))
    # the geometric p-norm margin of a linear two-class hyperplane on these data
    if len(est.classes_) == 2 and known.all() and hasattr(est, "coef_"):
        p = getattr(est, "p_", 2.0)
        try:
            out["geometric_margin"] = float(margin(est, X, y, p=p))
            out["p"] = float(p)
        except (AttributeError, TypeError, ValueError):
            pass  # voted output, or a zero hyperplane: no margin to tell
    if plot is not None:
        title = f"{Path(model).name} on {Path(data).name}: cumulative margins"
        out["plot"] = str(_plot_margins(est, X, y, plot, title))
    return out


def evaluate_prequential(
    estimator,
    data,
    *,
    params=None,
    chunk_size=100,
    window=1000,
    classes=None,
    fmt=None,
    label_column=-1,
    skip_header=False,
    plot=None,
):
    """Prequential accuracy of ``estimator`` (a name, with ``params``) on a data file
    streamed ``chunk_size`` examples at a time: each chunk predicted by the model as it
    stands, then learnt (:func:`marginkit.prequential.prequential_score`); a summary
    dict. The file is never held whole; ``classes`` spares the stream its first pass.

    With ``plot`` (a PNG path), also draws the accuracy over the last ``window``
    examples against the examples read (matplotlib, the ``plot`` extra).
    """
    from .prequential import prequential_score
    from .streaming import FileStream

    est = make_estimator(estimator, params)
    if plot is not None:
        prepare_output(plot, "the plot")
    stream = FileStream(
        data, chunk_size, fmt, classes=classes, label_column=label_column, skip_header=skip_header
    )
    score = prequential_score(
        est,
        stream(),
        classes=stream.classes,
        chunk_size=chunk_size,
        window=window,
        label=estimator,
    )
    lately = float(score.windowed[-1])
    out = {
        "estimator": estimator,
        "data": str(data),
        "n_samples": score.n_rows,
        "n_scored": score.n_scored,
        "accuracy": score.accuracy,
        "window": window,
        "window_accuracy": None if np.isnan(lately) else lately,
        "chunk_size": chunk_size,
        "seconds": score.seconds,
        "seconds_per_row": score.seconds_per_row,
        "model_bytes": score.model_bytes,
    }
    if plot is not None:
        from .plotting import plot_prequential

        title = f"{estimator} on {Path(data).name}"
        out["plot"] = str(_save_plot(plot, lambda ax: plot_prequential(score, ax, title)))
    return out


def _plot_margins(est, X, y, png, title):
    """Draw the cumulative margin distribution of (X, y) under ``est`` into ``png``."""
    from .plotting import plot_margin_distribution

    def draw(ax):
        plot_margin_distribution(est, X, y, ax=ax)
        ax.set_title(title)

    return _save_plot(png, draw)


def _save_plot(png, draw):
    """A figure drawn by ``draw(ax)`` (matplotlib, no display) written to ``png`` whole
    or not at all; its path."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from ._files import atomic_write

    fig, ax = plt.subplots(figsize=(6.5, 4.5))
    draw(ax)
    fig.tight_layout()
    atomic_write(png, lambda f: fig.savefig(f, format="png", dpi=100))
    plt.close(fig)
    return Path(png)
