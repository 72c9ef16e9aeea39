"""Dask: prediction over dask arrays, and training on a cluster by iterative parameter
mixing.

Prediction and evaluation run one task per block, the model sent once: it enters the
task graph a single time (as one ``dask.delayed`` key that every block's task depends
on), so a cluster ships it to each worker once, not once per block.

:class:`MixingClassifier` trains a linear estimator on a dask array whose row chunks
stay on the workers: each epoch every chunk runs one online pass of the estimator's own
compiled algorithm from the mixed weights, and the chunks' weights are averaged by a
tree of tasks on the workers (McDonald, Hall and Mann, NAACL 2010). The shards can also
be data files, read on the workers in chunks and never through the driver.
:class:`ShardedKernelClassifier` trains an exact kernel estimator with its support
vectors sharded over the workers. Needs the ``dask`` extra.

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

import copy
import gc
import os
import socket
import sys
import warnings
from numbers import Integral, Real

import array_api_compat
import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin, MetaEstimatorMixin, _fit_context, clone
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions
from sklearn.utils.multiclass import unique_labels
from sklearn.utils.validation import check_array, check_is_fitted, column_or_1d
from tqdm.auto import tqdm

from ._base import _canonical
from ._core.linear import scaled_norm
from ._core.shards import Shard, Sharded
from ._core.state import PNormState
from ._guards import check_known, check_two_classes, unchanged_on_error
from ._kernel_base import KernelOnlineClassifier
from ._passes import TOL, ended_early, tol_ends
from ._utils import DataSummary, Norms, row_norms_p
from .alma import ALMAClassifier, KernelALMAClassifier
from .formats import input_format
from .margin_perceptron import MarginPerceptronClassifier
from .margins import _dual_exponent
from .perceptron import KernelPerceptronClassifier, PerceptronClassifier
from .pumma import KernelPUMMAClassifier, PUMMAClassifier
from .romma import KernelROMMAClassifier, ROMMAClassifier
from .streaming import FileScan, FileStream

#: The estimators :class:`MixingClassifier` mixes: those whose learned state is one
#: weight vector per one-vs-rest problem (and ALMA's correction counter)
MIXED = (ALMAClassifier, PerceptronClassifier)


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


# -- training on a cluster: iterative parameter mixing ----------------------------------


def _is_dask(X):
    try:
        import dask.array as da
    except ImportError:
        return False
    return isinstance(X, da.Array)


def _from_frame(X, persist=False):
    """A dask DataFrame or Series as a dask array whose chunks are its partitions, with
    their lengths known (computed from the partitions, persisted first where
    ``persist``); anything else as it is. (A frame exists only once dask.dataframe is
    imported: it is not imported here for nothing.)"""
    dd = sys.modules.get("dask.dataframe")
    if dd is not None and isinstance(X, dd.DataFrame | dd.Series):
        return (X.persist() if persist else X).to_dask_array(lengths=True)
    return X


def _why_not_mixed(est):
    """Why ``est`` cannot be mixed (for the TypeError of :class:`MixingClassifier`), or
    None when it can."""
    if isinstance(est, KernelOnlineClassifier):
        return (
            "a kernel model is its support vectors and their coefficients, with no weight "
            "vector to average"
        )
    if isinstance(est, PUMMAClassifier):
        return (
            "PUMMA's hypothesis is a bias and the last positive and negative examples it "
            "updated on, which an average of weight vectors does not keep"
        )
    if isinstance(est, ROMMAClassifier):
        return (
            "ROMMA's hypothesis is the shortest vector of a half-space that its constraints "
            "imply, and its norm grows with them; a mean of shards' hypotheses is not such a "
            "vector, and on data no plane separates the mixed model got worse with every "
            "epoch (a9a, 8 shards: 15.37% test error after one epoch, 16.94% after "
            "fifteen, where the fit of one process makes 14.97%). Fit ROMMAClassifier "
            "itself, or mix ALMAClassifier (a margin of its own, whose mixes improve "
            "with the epochs)"
        )
    if isinstance(est, MarginPerceptronClassifier):
        return (
            "the margin Perceptron restarts from w = 0 whenever it halves its margin guess, "
            "a schedule of its own that an average of shards' weights would break"
        )
    if not isinstance(est, MIXED):
        return "it is not one of marginkit's linear online classifiers"
    return None


def _known_rows(a):
    """The dask array ``a`` with the lengths of its row chunks known (computed where
    they are not, as after a boolean mask)."""
    return a.compute_chunk_sizes() if any(np.isnan(c) for c in a.chunks[0]) else a


def _aligned_labels(y, X, da):
    """y as a 1-d dask array with X's row chunks (a numpy y is split along them)."""
    if not _is_dask(y):
        y = column_or_1d(y, warn=True)
    elif y.ndim != 1:
        raise ValueError(f"y should be a 1d array, got an array of shape {y.shape} instead.")
    if y.shape[0] != X.shape[0]:
        raise ValueError(
            "Found input variables with inconsistent numbers of samples: "
            f"[{X.shape[0]}, {y.shape[0]}]"
        )
    if not _is_dask(y):
        return da.from_array(y, chunks=(X.chunks[0],))
    return y.rechunk((X.chunks[0],)) if y.chunks[0] != X.chunks[0] else y


def _row_norms(X, p, where=None):
    """The :class:`~marginkit._utils.Norms` of the rows of a chunk, validated as a fit
    validates its rows; ``where``: (shard, its first row in the data), which an error
    of its values names, with the first row that holds a value that is not finite."""
    try:
        X = check_array(X, accept_sparse="csr", dtype=np.float64, order="C")
    except ValueError as exc:
        if where is None:
            raise
        shard, first = where
        raise ValueError(f"{exc} (shard {shard}{_first_bad_row(X, first)})") from None
    return Norms.of(row_norms_p(_canonical(X), p))


def _first_bad_row(X, first):
    """``", row N"``: the first row of chunk ``X`` (row ``first`` of the data) holding a
    value that is not finite, or ``""`` where none does (another fault)."""
    try:
        if sp.issparse(X):
            X = sp.csr_matrix(X)
            bad = ~np.isfinite(np.asarray(X.data, dtype=np.float64))
            rows = np.repeat(np.arange(X.shape[0]), np.diff(X.indptr))[bad]
        else:
            rows = np.flatnonzero(~np.isfinite(np.asarray(X, dtype=np.float64)).all(axis=1))
    except (TypeError, ValueError):  # values that are not numbers at all
        return ""
    return f", row {first + int(rows[0])}" if rows.size else ""


def _labels_of(y):
    return np.unique(np.asarray(y))


def _shard_pass(est, states, X, y):
    """The estimator's own compiled pass over the rows ``X`` (labels ``y``), in their
    order, for every one-vs-rest problem, continuing ``states`` in place: what
    :meth:`fit` and :func:`marginkit.streaming.fit_file` run over each of their
    batches."""
    X, y = est._validate_Xy(X, y, reset=False)
    check_known(y, est.classes_)
    batch = est._batch(X)
    targets = est._targets(y)
    order = np.arange(X.shape[0], dtype=np.int64)
    for j, state in enumerate(states):
        est._run_all(state, batch, targets[j], order)


def _shard_epoch(template, states, X, y, start=None, stop=None):
    """One epoch of a shard: the estimator's own compiled pass over its rows (those
    from ``start`` to ``stop``, between two mixes of ``mix_every``), in their order,
    for every one-vs-rest problem, from (copies of) the mixed ``states``."""
    est = copy.copy(template)
    states = copy.deepcopy(states)  # the mixed states are shared by the shards of a worker
    if start is not None:
        X, y = X[start:stop], y[start:stop]
    _shard_pass(est, states, X, y)
    return states


def _file_epoch(template, states, path, reading, start=None, stop=None):
    """One epoch of a file shard, on a worker: its file streamed in chunks (read and
    parsed by :class:`marginkit.streaming.FileStream`, one chunk ahead in a background
    thread), each chunk's pass continuing from the one before, in file order; only
    the rows from ``start`` to ``stop`` (the earlier ones read and passed over, the
    file left at ``stop``)."""
    est = copy.copy(template)
    states = copy.deepcopy(states)
    start = 0 if start is None else start
    seen = 0
    chunks = FileStream(path, **reading)()
    try:
        for X, y in chunks:
            lo = max(start - seen, 0)
            hi = X.shape[0] if stop is None else min(stop - seen, X.shape[0])
            seen += X.shape[0]
            if lo < hi:
                _shard_pass(est, states, X[lo:hi], y[lo:hi])
            if stop is not None and seen >= stop:
                break
    finally:
        chunks.close()
    return states


def _file_rows(path, reading):
    """All the rows of a file shard and their labels, read on a worker (in chunks, then
    stacked): what :class:`MixingClassifier`'s ``mix_every`` holds there between the
    mixes of an epoch."""
    chunks = list(FileStream(path, **dict(reading, prefetch=False))())
    parts = [X for X, _ in chunks]
    X = sp.vstack(parts, format="csr") if sp.issparse(parts[0]) else np.vstack(parts)
    return X, np.concatenate([y for _, y in chunks])


def _held_epoch(template, states, rows, start=None, stop=None):
    """:func:`_shard_epoch` over the rows a worker holds (:func:`_file_rows`)."""
    return _shard_epoch(template, states, *rows, start, stop)


def _held_norms(rows, p):
    return _row_norms(rows[0], p)


def _file_summary(path, reading):
    """The first pass over one file shard, on a worker: ``(format, scan, classes)``,
    the :class:`marginkit.streaming.FileScan` of the file as written and the classes
    its stream holds (those given, else its own labels). With everything the scan
    would find given, only the rows are counted."""
    stream = FileStream(path, **reading)
    scan = stream.scan
    if scan is None:
        n = stream.count()
        if n == 0:
            raise ValueError(f"{stream.path}: no examples")
        width = stream.n_features
        if stream.fmt == "svmlight" and not stream.zero_based:
            width += 1  # the width as written, indices read as zero-based
        scan = FileScan(n, width, None, stream.classes, stream._integral)
    return stream.fmt, scan, stream.classes


def _file_norms(path, reading, p):
    """The :class:`~marginkit._utils.Norms` of the instances of one file shard: a
    pass, on a worker."""
    return FileStream(path, **reading).summary.norms(p)


#: The options of :meth:`MixingClassifier.fit` that read files, and their defaults
READING = {
    "chunk_size": 10000,
    "fmt": None,
    "n_features": None,
    "zero_based": "auto",
    "label_column": -1,
    "skip_header": False,
    "prefetch": True,
}


def _is_default(value, default):
    return value is default or (type(value) is type(default) and value == default)


def _paths_of(X):
    """The paths of a list (or tuple) of files, or None when X is not one."""
    if not isinstance(X, list | tuple):
        return None
    if not X:
        raise ValueError("X is an empty list: give at least one file to train on")
    if not all(isinstance(x, str | os.PathLike) for x in X):
        kinds = sorted({type(x).__name__ for x in X})
        raise TypeError(
            f"a list X must hold the paths of the files to train on (str or path-like), "
            f"got {', '.join(kinds)}"
        )
    return [os.fspath(x) for x in X]


def _combined(paths, summaries, n_features, zero_based, classes_given):
    """``(fmt, n_features, zero_based, classes)`` of all the file shards together, from
    their first passes: one format, the widest file's features, svmlight indices
    one-based only when no file writes an index 0 (``load_svmlight_files``'s
    ``zero_based="auto"``, which is also what :class:`marginkit.streaming.FileStream`
    decides for the files' concatenation), the union of their labels."""
    fmts = [fmt for fmt, _, _ in summaries]
    if len(set(fmts)) > 1:
        shown = ", ".join(f"{path} ({fmt})" for path, fmt in zip(paths, fmts, strict=True))
        raise ValueError(
            f"the files are of different formats: {shown}. Give files of one format "
            "(or fmt= to read them all as one)."
        )
    fmt = fmts[0]
    scans = [scan for _, scan, _ in summaries]
    widths = [scan.width for scan in scans]
    if fmt == "csv":
        if len(set(widths)) > 1:
            shown = ", ".join(f"{path} ({w})" for path, w in zip(paths, widths, strict=True))
            raise ValueError(f"the CSV files have different numbers of features: {shown}")
        width = widths[0]
        zero_based = True
    else:
        if zero_based == "auto":
            lows = [scan.lowest_index for scan in scans if scan.lowest_index is not None]
            zero_based = not lows or min(lows) == 0
        width = max(widths) - (0 if zero_based else 1)
        if n_features is not None:
            widest = int(np.argmax(widths))
            if width > n_features:
                raise ValueError(
                    f"{paths[widest]}: n_features was given as {n_features}, but the file "
                    f"has {width} features"
                )
            width = int(n_features)
    if classes_given:
        classes = summaries[0][2]
    else:
        classes = np.unique(np.concatenate([scan.labels for scan in scans]))
        if all(scan.integral for scan in scans):
            classes = classes.astype(np.int64)
    return fmt, int(width), zero_based, classes


def _corrections_of(states):
    return [s.n_corrections for s in states]


def _rounds(rows, step, skip):
    """The mixes of an epoch over shards of ``rows`` rows, a mix after every ``step``
    rows of each from row ``skip``: per mix, its first row and the ``(shard, rows)``
    that take part (those with rows left)."""
    firsts = range(skip, max(rows), step)
    return [
        (first, [(i, min(step, n - first)) for i, n in enumerate(rows) if n > first])
        for first in firsts
    ]


def _rounded_mean(num, den):
    """``num / den`` of integers, rounded half up, in integer arithmetic."""
    return (2 * num + den) // (2 * den)


#: The most shards' results (or partial sums) one task of the mix's tree adds up
TREE_FAN_IN = 4


class _MixSums:
    """What an epoch's mix takes of some consecutive shards, summed (one record per
    one-vs-rest problem, and each shard's corrections): a node of the tree in which
    :class:`MixingClassifier` reduces the shards' states on the workers, so that the
    driver receives one record, whatever the number of shards.

    Per problem: ``w``, the shards' hypotheses times their mixing weights (1, or the
    shard's corrections of the epoch), summed, and ``weight`` the weights'; ``acc``,
    their sums of hypotheses times the same weights; ``k`` the weighted sum of their
    correction counters and its weights (integers); ``made``, ``trials`` and
    ``rows_made`` (corrections times rows, for the factor of ``mixing="corrections"``'s
    sums); and, for that mixing, the unweighted ``acc`` and ``k`` sums, its fallback
    when no shard corrected the problem.
    """

    def __init__(self, start_counts, mixing, rows, states):
        pairs = list(zip(states, start_counts, strict=True))
        self.by_shard = [[s.n_corrections - corrections for s, (corrections, _) in pairs]]
        self.problems = []
        weighted = mixing == "corrections"
        for (s, (_, trials)), made in zip(pairs, self.by_shard[0], strict=True):
            weight = made if weighted else 1
            sums = s.sum_weights()
            one = {
                "w": weight * s.last_weights() if weight else np.zeros(s.d),
                "weight": weight,
                "acc": weight * sums if weighted else sums,
                "k": (weight * s.k, weight),
                "made": made,
                "trials": s.n_trials - trials,
                "rows_made": made * rows,
            }
            if weighted:
                one["acc_uniform"], one["k_uniform"] = sums, (s.k, 1)
            self.problems.append(one)

    def plus(self, other):
        """The sums of this node's shards followed by ``other``'s (in place)."""
        self.by_shard += other.by_shard
        for mine, theirs in zip(self.problems, other.problems, strict=True):
            for key, value in mine.items():
                if isinstance(value, tuple):
                    mine[key] = (value[0] + theirs[key][0], value[1] + theirs[key][1])
                else:
                    mine[key] = value + theirs[key]
        return self

    def mixed(self, starts, n_samples, momentum=None):
        """The mixed state of every problem (:meth:`PNormState.from_sums`), its step
        filtered by ``momentum`` (a :class:`_Momentum`) when one is given."""
        out = []
        for j, (start, one) in enumerate(zip(starts, self.problems, strict=True)):
            acc, k = one["acc"], one["k"]
            if "acc_uniform" in one:
                if one["made"] > 0:
                    # each shard's sum of hypotheses times mu_i n_samples / sum_j mu_j n_j
                    acc = acc * (n_samples / float(one["rows_made"]))
                else:
                    acc, k = one["acc_uniform"], one["k_uniform"]
            w = one["w"] / float(one["weight"]) if one["made"] else None
            if momentum is None:
                k = _rounded_mean(*k)
            else:
                w, k = momentum.step(j, start, w, k, one["made"])
            out.append(PNormState.from_sums(start, w, acc, one["made"], one["trials"], k))
        return out


class _Momentum:
    """Block momentum over the mixes (K. Chen and Q. Huo, "Scalable training of deep
    learning machines by incremental block training with intra-block parallel
    optimization and blockwise model-update filtering", ICASSP 2016, equations 3-5,
    with their block learning rate 1 and classical block momentum).

    A mix of S shards moves the weights by the mean of the shards' moves, about as
    far as one shard's rows alone would; the filtered step ``G = mu G + (w_mix -
    w_start)`` adds the earlier mixes' steps, decayed by ``mu``, so that in a steady
    direction the weights move ``1 / (1 - mu)`` times the mean step (S times for
    ``mu = 1 - 1 / S``: about the shards' moves summed, as one learner making every
    shard's corrections would). Per one-vs-rest problem, on the driver, between the
    mixes of one fit: ``G`` of the weights and ``K`` of ALMA's correction counter k,
    which sets its steps and margin (filtered alike, so that k counts about the
    corrections the filtered weights hold, and at most the corrections made so far
    plus one, as one learner that made them all would count: ``K`` is held there too).
    For ALMA the new weights are projected back onto the unit q-ball of its hypotheses
    (Gentile, JMLR 2001, Figure 1: ``w / max(1, ||w||_q)``), and ``G`` is the step
    actually taken. A problem that no shard corrected in a mix keeps its weights, and
    its momentum is dropped.
    """

    def __init__(self, mu, ball):
        self.mu = float(mu)
        self.ball = bool(ball)
        self.steps = {}  # problem -> (G, K)

    def step(self, j, start, w, k_sums, made):
        """The filtered weights and correction counter of problem ``j``, from
        ``start`` (the state the shards began from), the mixed weights ``w`` (None:
        no shard corrected), the weighted sum of the shards' k and its weight, and
        the corrections the shards made in the mix."""
        k0 = start.k
        if w is None:
            self.steps.pop(j, None)
            return None, k0
        g, big_k = self.steps.get(j, (0.0, 0.0))
        w0 = start.last_weights()
        g = self.mu * g + (w - w0)
        # k counts at most the corrections made so far, plus one
        big_k = min(
            self.mu * big_k + (k_sums[0] / k_sums[1] - k0), start.n_corrections + made + 1 - k0
        )
        w = w0 + g
        if self.ball:
            norm = float(scaled_norm(w, _dual_exponent(start.p)))
            if norm > 1.0:
                w = w / norm
                g = w - w0
        self.steps[j] = (g, big_k)
        return w, max(1, k0 + int(np.floor(big_k + 0.5)))


def _tree_node(start_counts, mixing, items):
    """A node of the mix's tree: ``items``, ``(rows, a shard's states)`` or ``(None,
    _MixSums)`` in shard order, summed in that order."""
    total = None
    for rows, item in items:
        part = item if rows is None else _MixSums(start_counts, mixing, rows, item)
        total = part if total is None else total.plus(part)
    return total


class _Wrapper(MetaEstimatorMixin, ClassifierMixin, BaseEstimator):
    """What the estimators of this module share: the fitted model is ``estimator_``,
    a plain marginkit estimator, which predicts (lazily, over dask collections)."""

    def predict(self, X):
        """Class labels of ``estimator_``; lazily, as a dask array, for a dask array."""
        check_is_fitted(self)
        X = _from_frame(X)
        return predict(self.estimator_, X) if _is_dask(X) else self.estimator_.predict(X)

    def decision_function(self, X):
        """Scores of ``estimator_``; lazily, as a dask array, for a dask array."""
        check_is_fitted(self)
        X = _from_frame(X)
        if _is_dask(X):
            return decision_function(self.estimator_, X)
        return self.estimator_.decision_function(X)

    def score(self, X, y, sample_weight=None):
        """Mean accuracy of ``estimator_`` (computed, for dask arrays, on the workers)."""
        check_is_fitted(self)
        X, y = _from_frame(X), _from_frame(y)
        if _is_dask(X) and sample_weight is None:
            return 1.0 - evaluate(self.estimator_, X, y)["error"]
        return super().score(X, y, sample_weight=sample_weight)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags


class MixingClassifier(_Wrapper):
    """Train a linear marginkit estimator on a dask array by iterative parameter mixing.

    Iterative parameter mixing (R. McDonald, K. Hall and G. Mann, "Distributed
    Training Strategies for the Structured Perceptron", NAACL 2010, Figure 2): each
    row chunk of ``X`` is a shard. Every epoch, each shard runs one online epoch of the
    estimator's own compiled pass over its rows, in their order, starting from the
    mixed weights; the driver then mixes the shards' weights (their mean, or their mean
    weighted by each shard's corrections in the epoch), and the next epoch starts from
    the mix. For the Perceptron on data separable with margin gamma by a hyperplane
    through the origin, the mistakes summed over shards and epochs stay at most
    ``R^2 / gamma^2`` (their Theorem 3; R the largest norm of an instance), as for
    one Perceptron, and an epoch without mistakes is reached. One averaging at the end
    (parameter mixing without iterations) has no such bound.

    The rows stay where they live: each shard's epoch is a dask task that runs where
    its chunk is (on the workers of the active ``distributed`` client, or on dask's
    default scheduler), and only the weights (O(n_features x n_problems) numbers)
    move: the mixed ones once to each worker per epoch, and the shards' up a tree of
    tasks on the workers (each node adds the weighted weights, sums of hypotheses and
    counts of at most :data:`TREE_FAN_IN` shards or nodes, in shard order), whose root
    alone reaches the driver, which makes the mix from it. The chunks are persisted
    once at the start of :meth:`fit`.

    The shards can also be files (svmlight or CSV, ``X`` a list of their paths), read
    only on the workers, by marginkit's own readers: a first task per file scans it
    (:class:`marginkit.streaming.FileStream`'s first pass: its rows, widest index,
    lowest index and labels), the driver combines the scans (the widest file's
    features; svmlight indices one-based only when no file writes an index 0, as
    ``load_svmlight_files`` decides; the union of the labels), and each epoch every
    file's task streams its file in chunks of ``chunk_size`` examples through the same
    compiled pass, in file order, holding a chunk and the next one being parsed, never
    the file (with ``mix_every``, several mixes an epoch, each file is instead read
    once and its rows held on the worker that read it). The largest norm of an
    instance, when the estimator needs one
    (``fit_intercept``, and the units of the Perceptron), costs one more
    pass of each file, in parallel, as it costs :func:`marginkit.streaming.fit_file`
    one. With one file the model is bit for bit that of ``fit_file`` with the same
    ``chunk_size``, ``max_iter`` and ``tol``; with several, that of a dask array whose
    row chunks hold the files' rows.

    What is mixed:

    - The weight vector ``w``, the hypothesis itself (for ALMA_p with p != 2, the
      primal ``w = f^-1(theta)``, mapped back to the dual ``theta = f(w)`` of Gentile,
      JMLR 2001, section 2, for the next epoch). A mix of hypotheses in ALMA's unit
      q-ball stays in it, and the mix of primal weights is the one McDonald et al.'s
      analysis is about.
    - ALMA's correction counter k, which sets its margin threshold and learning rate
      ``~ 1 / sqrt(k)``: each epoch restarts from the (weighted) mean of the shards'
      k, rounded to an integer. The total of the shards' k would shrink the steps as
      if one learner had made every shard's corrections; on a9a at 16 shards it cost
      0.18 points of test error. The counts ``n_corrections_`` (here and of
      ``estimator_``) are the true totals: every correction of every shard.
    - The averaged output (``output="avg"``, Freund and Schapire): each shard sums the
      hypotheses of its epoch, and the running sum adds the mix of these sums, scaled
      so that each epoch counts its ``n_samples`` trials: with uniform mixing it is
      the sum of every hypothesis every shard held, over all trials.

    The bias coordinate of ``fit_intercept`` (its radius ``R_``), the norm ``p_`` and
    the power of two of the model's units are decided once, on the driver, from all
    the rows before the first epoch, so that every shard learns in the same space.

    The result is deterministic: the same chunks, mixing and parameters give the same
    model bit for bit, whatever the number of workers or the order in which the shards
    finish (the tree's nodes group the shards in shard order, whatever the workers,
    and add in that order). With one
    chunk, the mix of one state is that state, and the model is bit for bit that of
    ``estimator.fit(X, y)`` (``shuffle=False``) with the same ``max_iter`` and
    ``tol``, but that the epochs always end at one without a correction.

    Parameters
    ----------
    estimator : ALMAClassifier or PerceptronClassifier
        The estimator to train (cloned; its ``max_iter``, ``tol`` and ``verbose`` are
        not used: the epochs are this meta-estimator's). Any ``p`` of ALMA. Refused
        with a TypeError: ROMMA (its hypothesis is the shortest vector of a half-space
        its constraints imply, which a mean of hypotheses is not: mixed, its model got
        worse with every epoch on a9a), PUMMA (its hypothesis is a bias and
        a pair of support examples, not a weight vector to average), the margin
        Perceptron (it restarts from 0 at every halving of its margin guess) and the
        kernel estimators (support vectors and coefficients, no weight vector). Refused
        with a ValueError: ``output="voted"`` and ``keep_corrections=True`` (a vote
        needs every hypothesis in the order of one stream, which mixing does not
        keep). The estimator's ``shuffle`` does not apply: each shard presents its
        rows in their order (shuffle the rows of X beforehand when they are sorted, by
        class or otherwise).
    max_iter : int >= 1, default=1000
        The most epochs (each one pass of every shard over its rows, then a mix).
    tol : float >= 0 or None, default=1e-3
        The epochs end, as the estimator's passes of ``fit`` do, after its
        ``n_iter_no_change`` epochs in a row (one for an estimator without it) whose
        corrections (summed over the shards) did not fall below the fewest of any
        earlier epoch by more than ``tol * n_samples`` in any one-vs-rest problem. None:
        ``max_iter`` epochs. Whatever ``tol``, they end after an epoch without any
        correction (every later one would be the same).
    mixing : {"uniform", "corrections"}, default="uniform"
        The weights of the shards' hypotheses in the mix: equal (McDonald et al.'s
        ``mu_i = 1 / S``), or each shard's corrections of the epoch over all shards'
        (their ``mu_i = k_i / k``, in each one-vs-rest problem), which lets the
        shards that still err move the mix most. A problem no shard corrected in an
        epoch keeps its weights.
    mix_every : int >= 1 or None, default=None
        None: one mix an epoch, after each shard's pass over all its rows (McDonald et
        al.'s Figure 2). An integer m: a mix after every m rows of each shard, so that
        an epoch makes ``ceil(rows of the largest shard / m)`` mixes, each shard
        starting its next m rows from the mix (a shard whose rows are all used waits
        for the epoch's end). The shards' rows stay on the workers; each mix moves the
        weights as once an epoch does. With many shards, one pass of a shard alone
        fits the data far worse than a pass over all of them, and a mix once an epoch
        lags the serial fit for several epochs (linear one-vs-rest MNIST at 8 and 16
        shards: 2.5 to 4 points of test error after the first epoch, 1 to 2 after the
        fifth); a mix every 30 rows of each shard with ``momentum="auto"`` brought the
        Perceptron within 0.2 points of the serial fit from the first epoch at 8 and 16
        shards, and ALMA_2 at 8 (at 16: 0.7 to 1.4 points behind after the first epoch,
        within 0.2 by the fifth; less with ``warm_up``; see the scale-out guide). Each
        mix is a round
        of dask tasks (tens of milliseconds): the fewer rows between mixes, the longer
        the fit. File shards are then read once each, into the memory of the worker
        that reads it (the driver's process, without a ``distributed`` client), and
        held there for the fit (their rows, as a dask array's chunks
        are held): not streamed in chunks, as they are once an epoch without
        ``mix_every``.
    momentum : float in [0, 1) or "auto", default=0.0
        Block momentum over the mixes (K. Chen and Q. Huo, ICASSP 2016, equations 3-5):
        each mix moves the weights by ``G = momentum * G + (w_mix - w_start)``, its
        own step plus the earlier mixes' decayed, and ALMA's correction counter k
        alike; ALMA's weights are projected back onto its unit q-ball. "auto": ``1 -
        1 / n_shards_``, under which a steady step becomes the shards' steps summed,
        as if one learner had made all their corrections (the same in every mix, also
        in an epoch's last mixes of unequal shards, where fewer shards take part). 0
        is plain iterative parameter mixing. Meant with ``mix_every``: with one mix an
        epoch the filter has few steps, and on a9a it fell behind the plain mix after
        the second epoch.
        Momentum is no convex mix of the shards' hypotheses: McDonald et al.'s mistake
        bound is proved for 0 only (measured on separable data in the scale-out
        guide). With one shard the fit is the serial one, whatever the momentum.
    warm_up : int >= 0, default=0
        The first epoch's first ``warm_up`` rows of each shard learnt in sequence
        before the shards learn in parallel: shard 0's from the start, shard 1's from
        where shard 0 ended, and so on, one task after the other, the state moving
        from worker to worker, as one learner would pass over those rows (with
        ``warm_up`` at least every shard's rows, the first epoch is the serial fit over
        the shards' rows in shard order). The rest of the first epoch and every later
        epoch run in parallel from the result. At the start every shard makes the same
        corrections from the same empty model, and a mix of them moves far less than one
        learner making them one after another would; a short sequence first makes the
        mixes start from a model that already separates most rows (the synchronous
        phase before local steps of post-local SGD: T. Lin, S. U. Stich, K. K. Patel
        and M. Jaggi, "Don't use large mini-batches, use local SGD", ICLR 2020). On
        linear one-vs-rest MNIST at 16 shards, with ``mix_every=30`` and
        ``momentum="auto"``, ALMA_2's first-epoch gap to the serial fit, a mean over
        five shuffles, fell from 1.48 points to 0.28 with ``warm_up=150`` and to 0.14
        with ``warm_up=1000`` (see the scale-out guide). The sequence costs one task
        per shard, one after the other, and ``min(warm_up, rows)`` rows of each shard
        learnt on one worker at a time; a file shard without ``mix_every`` reads its
        first ``warm_up`` rows twice in the first epoch.
        For the Perceptron the sequence is one Perceptron's start, whose weights meet
        the two inequalities that McDonald et al.'s induction carries from mix to mix
        (``w . u >= gamma k`` and ``||w||^2 <= R^2 k`` for its k mistakes): with
        ``momentum=0`` their bound holds, the sequence's mistakes counted in full with
        the mixes' weighted ones (uniform weights are then 1 over the shards that take
        part in a mix: a shard whose rows the sequence took waits). 0: every shard starts
        at once. With one shard, nothing changes.
    verbose : int, default=0
        A progress bar over the epochs (over the mixes, with ``mix_every``).

    Attributes
    ----------
    estimator_ : estimator
        The fitted estimator, a plain marginkit model of the estimator's class: it
        predicts, is saved (:func:`marginkit.save`) and loaded like any other, and
        ``partial_fit`` goes on from the mixed state.
    classes_ : ndarray of shape (n_classes,)
    n_features_in_ : int
    n_iter_ : int
        The epochs made.
    n_shards_ : int
        The shards: the row chunks of X that hold rows, or the files.
    n_mixes_ : int
        The mixes made (``n_iter_`` with ``mix_every=None`` and several shards, one
        fewer when ``warm_up`` takes every row of the first epoch; 0 with one shard,
        whose state is never mixed).
    n_corrections_ : int
        Corrections over every shard, epoch and one-vs-rest problem.
    n_corrections_per_epoch_ : ndarray of shape (n_iter_, n_shards_)
        The corrections of each shard in each epoch (over the one-vs-rest problems).
    input_format_ : dict or None
        Files: how they were read, for every file the model reads later (``format``,
        ``n_features``, and ``zero_based`` for svmlight or ``label_column`` for CSV:
        what ``marginkit train`` records on the model it saves); None for dask arrays.

    See Also
    --------
    predict, decision_function, evaluate : the fitted model over dask arrays.

    Notes
    -----
    A shard's pass takes the dot products of dense rows from BLAS. The workers of a
    ``distributed`` cluster run BLAS on one thread (their nanny sets
    ``OPENBLAS_NUM_THREADS=1``); in the driver's own process (dask's threaded
    scheduler, or a serial fit) OpenBLAS may split a dot product of more than 10 000
    numbers over threads and sum it in another order. So for dense rows of more than
    10 000 features the bit-for-bit equalities above hold between runs on workers, and
    otherwise only to rounding; sparse rows, and dense rows of fewer features, are
    summed in one order everywhere.

    Examples
    --------
    >>> import dask.array as da
    >>> import numpy as np
    >>> from marginkit import PerceptronClassifier
    >>> from marginkit.distributed import MixingClassifier
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(2000, 5))
    >>> y = (X @ [1.0, -2.0, 0.5, 0.0, 1.0] > 0).astype(int)
    >>> dX = da.from_array(X, chunks=(500, 5))          # four shards
    >>> clf = MixingClassifier(PerceptronClassifier(), max_iter=20).fit(dX, y)
    >>> clf.n_shards_
    4
    >>> clf.score(X, y) > 0.98
    True
    """

    _parameter_constraints: dict = {
        "estimator": [HasMethods(["fit", "predict"])],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": TOL,
        "mixing": [StrOptions({"uniform", "corrections"})],
        "mix_every": [Interval(Integral, 1, None, closed="left"), None],
        "momentum": [Interval(Real, 0, 1, closed="left"), StrOptions({"auto"})],
        "warm_up": [Interval(Integral, 0, None, closed="left")],
        "verbose": ["verbose"],
    }

    def __init__(
        self,
        estimator,
        *,
        max_iter=1000,
        tol=1e-3,
        mixing="uniform",
        mix_every=None,
        momentum=0.0,
        warm_up=0,
        verbose=0,
    ):
        self.estimator = estimator
        self.max_iter = max_iter
        self.tol = tol
        self.mixing = mixing
        self.mix_every = mix_every
        self.momentum = momentum
        self.warm_up = warm_up
        self.verbose = verbose

    def _checked_estimator(self):
        """A clone of ``estimator`` that can be mixed, its parameters validated."""
        why = _why_not_mixed(self.estimator)
        if why is not None:
            raise TypeError(
                f"{type(self).__name__} cannot mix {type(self.estimator).__name__}: {why}. "
                "It mixes ALMAClassifier and PerceptronClassifier."
            )
        est = clone(self.estimator)
        est._validate_params()
        if est.class_weight is not None:
            raise ValueError(
                f"{type(self).__name__} does not support class_weight (got "
                f"{est.class_weight!r}): its shards learn their own rows, and no shard "
                "sees the classes of all of them. Weigh the rows beforehand, or fit the "
                "estimator itself."
            )
        if est.output == "voted":
            raise ValueError(
                f"{type(self).__name__} does not support output='voted': a vote needs every "
                "hypothesis of one stream in order, and mixing keeps only the mixed ones. "
                "Use output='avg' or 'last'."
            )
        if est.keep_corrections:
            raise ValueError(
                f"{type(self).__name__} does not support keep_corrections=True: the "
                "corrections of several shards are no one stream's log to replay."
            )
        return est

    @_fit_context(prefer_skip_nested_validation=False)
    def fit(
        self,
        X,
        y=None,
        *,
        classes=None,
        callback=None,
        chunk_size=10000,
        fmt=None,
        n_features=None,
        zero_based="auto",
        label_column=-1,
        skip_header=False,
        prefetch=True,
    ):
        """Train by iterative parameter mixing over the row chunks of ``X``, or over
        the files of a list.

        Parameters
        ----------
        X : dask array or DataFrame of shape (n_samples, n_features), or list of paths
            A dask array: dense (numpy) or sparse (scipy.sparse CSR) chunks; each row
            chunk that holds rows is a shard (rechunk the rows to choose the shards;
            column chunks are joined first). A dask DataFrame of numeric columns: each
            partition is a shard (persisted, then read as a dask array of the same
            rows). A list (or tuple) of paths of svmlight or
            CSV files (compressed as :mod:`marginkit.formats` reads them): each file is
            a shard, in list order, read only on the workers, in chunks of
            ``chunk_size`` examples, with the labels it holds (with ``mix_every``,
            once, and held in the worker's memory). The paths must name the files where
            the workers run.
        y : dask array or Series, or array-like of shape (n_samples,), or None
            The labels, aligned with X's rows (a dask array is rechunked to X's row
            chunks when its own differ). None for files, which hold their labels.
        classes : array-like of shape (n_classes,), default=None
            All the labels; by default those of ``y`` or of the files (found once, on
            the workers).
        callback : callable, optional
            Called as ``callback(self, epoch)`` after each epoch's mix (``epoch`` from
            0), with ``estimator_`` the mixed model so far.
        chunk_size, fmt, n_features, zero_based, label_column, skip_header, prefetch
            Files only: how they are read, as in :func:`marginkit.streaming.fit_file`
            and :class:`marginkit.streaming.FileStream`, for all the files together.
            ``n_features`` is that of all the files (by default the widest file's);
            ``zero_based="auto"`` takes svmlight indices as one-based when no file
            writes an index 0, as ``load_svmlight_file`` does for one file holding them
            all; ``fmt=None`` takes each file's format from its name, and the files
            must then share one. ``prefetch=True`` parses each chunk in a background
            thread while the one before is learned (two busy threads per task);
            False, in the task's thread, for workers that have one core each.

        Returns
        -------
        self

        Raises
        ------
        FileNotFoundError
            A path that names no file where the workers read it.
        ValueError
            Besides the refusals of the estimator's parameters: files of different
            formats, of CSV files of different widths, a file that cannot be read in
            its format (the reader's error, with the line), an empty file, an index
            beyond ``n_features``, or a label outside ``classes``; ``y`` with files, or
            reading options with a dask array.
        """
        reading = {
            "chunk_size": chunk_size,
            "fmt": fmt,
            "n_features": n_features,
            "zero_based": zero_based,
            "label_column": label_column,
            "skip_header": skip_header,
            "prefetch": prefetch,
        }
        # a fit that fails (bad rows found on a worker, an interrupt) leaves the
        # estimator as it was
        with unchanged_on_error(self):
            paths = _paths_of(X)
            if paths is not None:
                return self._fit_files(paths, y, classes, callback, reading)
            self.input_format_ = None
            # a dask DataFrame's partitions are the shards; persisted once, as an array's
            X, y = _from_frame(X, persist=True), _from_frame(y, persist=True)
            given = [k for k, v in reading.items() if not _is_default(v, READING[k])]
            if given:
                raise ValueError(
                    f"{', '.join(given)} only apply when X is a list of files, not to a dask array"
                )
            if y is None:
                raise ValueError(
                    f"This {type(self).__name__} estimator requires y to be passed, but the "
                    "target y is None."
                )
            return self._fit(X, y, classes, callback)

    def _fit(self, X, y, classes, callback):
        dask, da = _dask()
        est = self._checked_estimator()
        X = _blocks(X)
        # rows selected by a mask (X[mask]) have chunks of unknown length: computed once
        # persisted, before the numbers of rows are compared
        X, y = dask.persist(X, y)
        X = _known_rows(X)
        y = _known_rows(y) if _is_dask(y) else y
        y = _aligned_labels(y, X, da)
        X, y = dask.persist(X, y)
        rows = [int(c) for c in X.chunks[0]]
        xs = [b for b, n in zip(X.to_delayed().ravel(), rows, strict=True) if n > 0]
        ys = [b for b, n in zip(y.to_delayed().ravel(), rows, strict=True) if n > 0]
        rows = [n for n in rows if n > 0]
        n_samples = sum(rows)
        if n_samples == 0:
            raise ValueError(
                f"Found array with 0 sample(s) (shape={X.shape}) while a minimum of 1 is "
                f"required by {type(self).__name__}."
            )
        if classes is None:
            found = dask.compute(*[dask.delayed(_labels_of)(b) for b in ys])
            classes = np.unique(np.concatenate(found))
        else:
            classes = unique_labels(classes)
        check_two_classes(classes)

        starts = np.concatenate([[0], np.cumsum(rows)[:-1]])

        def norms(p):
            where = [(k, int(start)) for k, start in enumerate(starts)]
            found = [dask.delayed(_row_norms)(b, p, at) for b, at in zip(xs, where, strict=True)]
            return sum(dask.compute(*found), Norms())

        work = [(_shard_epoch, (xb, yb)) for xb, yb in zip(xs, ys, strict=True)]
        summary = DataSummary(X.shape[1], sp.issparse(X._meta), norms, None)
        self._epochs(dask, est, classes, summary, work, rows, callback)
        return self

    def _fit_files(self, paths, y, classes, callback, reading):
        """:meth:`fit` over file shards: a first pass of each file on the workers, the
        combined decisions on the driver, then the epochs, each file read again (with
        ``mix_every``: read once more, and held on its worker)."""
        dask, _ = _dask()
        if y is not None:
            raise ValueError(
                "y must be None when X is a list of files: the labels are read from the files"
            )
        est = self._checked_estimator()
        given = classes is not None
        first = dict(reading, classes=classes)
        if not (given and reading["n_features"] is not None and reading["zero_based"] != "auto"):
            first["n_features"] = None  # checked against all the files together, below
        summaries = dask.compute(
            *[dask.delayed(_file_summary, pure=False)(path, first) for path in paths]
        )
        fmt, width, zero_based, classes = _combined(
            paths, summaries, reading["n_features"], reading["zero_based"], given
        )
        check_two_classes(classes)
        rows = [int(scan.n_samples) for _, scan, _ in summaries]
        # every epoch reads each file knowing all it needs: no scan
        reading = dict(
            reading,
            fmt=fmt,
            n_features=width if fmt == "svmlight" else None,
            zero_based=zero_based,
            classes=classes,
        )

        if self.mix_every is None:
            work = [(_file_epoch, (path, reading)) for path in paths]
            parts = [(_file_norms, (path, reading)) for path in paths]
        else:
            # several mixes an epoch: each file's rows read once, held on its worker
            held = dask.persist(
                *[dask.delayed(_file_rows, pure=False)(path, reading) for path in paths]
            )
            work = [(_held_epoch, (rows,)) for rows in held]
            parts = [(_held_norms, (rows,)) for rows in held]

        def norms(p):
            tasks = [dask.delayed(run, pure=False)(*args, p) for run, args in parts]
            return sum(dask.compute(*tasks), Norms())

        summary = DataSummary(width, fmt == "svmlight", norms, None)
        self._epochs(dask, est, classes, summary, work, rows, callback)
        self.input_format_ = input_format(fmt, width, zero_based, reading["label_column"])
        return self

    def _epochs(self, dask, est, classes, summary, work, rows, callback):
        """The epochs of :meth:`fit`, each a pass of every shard and a mix, after the
        estimator's start from ``classes`` and ``summary`` (a DataSummary of all the
        rows: R_, p_ and the model's units decided once, from every row); ``work``
        holds each shard's ``(epoch function, its arguments after the model and the
        states)``."""
        est.classes_ = classes
        est.n_features_in_ = summary.n_features
        est._initialise(summary)
        template = copy.copy(est)  # what every shard's task gets, without the states
        del template._states
        n_shards, n_samples = len(work), sum(rows)
        mixed = est._states
        n_problems = len(mixed)
        # tol's record, and the estimator's n_iter_no_change: the epochs end as its
        # passes of fit do
        record = {"fewest": np.full(n_problems, np.inf), "improving": True}
        patience = est.get_params().get("n_iter_no_change", 1)
        per_epoch = []
        self.n_shards_ = n_shards
        self.n_mixes_ = 0
        momentum = self._momentum(est, n_shards)
        step = max(rows) if self.mix_every is None else self.mix_every
        # the first epoch's first rows of every shard, learnt in sequence (one shard:
        # its state is never mixed, so the sequence is its pass)
        warm = self.warm_up if n_shards > 1 else 0
        model = dask.delayed(template, traverse=False)  # one key, whatever the tasks
        # the bar counts epochs, or mixes where an epoch makes several
        n_rounds = len(_rounds(rows, step, 0))
        bar = tqdm(
            total=self.max_iter
            if n_rounds == 1
            else len(_rounds(rows, step, warm)) + (self.max_iter - 1) * n_rounds,
            disable=not self.verbose,
            desc=type(self).__name__,
            unit="epoch" if n_rounds == 1 else "mix",
        )
        with bar:
            for epoch in range(self.max_iter):
                made_by_shard = np.zeros(n_shards, dtype=np.int64)
                total = np.zeros(n_problems, dtype=np.int64)
                skip = warm if epoch == 0 else 0
                if skip:
                    chain = [(run, (*args, 0, skip)) for run, args in work]
                    mixed, made = self._in_sequence(dask, model, mixed, chain)
                    made_by_shard += made.sum(axis=1)
                    total += made.sum(axis=0)
                rounds = _rounds(rows, step, skip)
                for first, part in rounds:
                    # each shard's rows from first, those it has (all: once an epoch)
                    bounds = () if len(rounds) == 1 and not skip else (first, first + step)
                    tasks = [(work[i][0], (*work[i][1], *bounds)) for i, _ in part]
                    mixed, made = self._mix(
                        dask, model, mixed, tasks, [n for _, n in part], n_shards, momentum
                    )
                    made_by_shard[[i for i, _ in part]] += made.sum(axis=1)
                    total += made.sum(axis=0)
                    if n_rounds > 1:
                        bar.update(1)
                if n_rounds == 1:
                    bar.update(1)  # an epoch, also one that the sequence took whole
                per_epoch.append(made_by_shard)
                ended = tol_ends(record, total, self.tol, n_samples, patience)
                self._set_fitted(est, mixed, epoch + 1, per_epoch)
                if callback is not None:
                    callback(self, epoch)
                if ended or not total.any():
                    break
            ended_early(bar, (self.max_iter - self.n_iter_) * n_rounds)
        if self.n_iter_ == self.max_iter > 1 and record["improving"] and self.tol is not None:
            warnings.warn(
                f"{type(self).__name__}: the corrections still fell in the last of "
                f"max_iter={self.max_iter} epochs (by more than tol * n_samples); more "
                "epochs may fit the data better. Increase max_iter, or set tol=None to "
                "make max_iter epochs without this check.",
                ConvergenceWarning,
                stacklevel=3,
            )

    def _mix(self, dask, model, mixed, work, rows, n_shards, momentum):
        """One mix: every task of ``work`` (``(function, its arguments after the model
        and the states)``, one a shard, ``rows`` its rows) run with ``model`` (the
        estimator without its states, a dask key) from the ``mixed`` states, then
        mixed; the new states, and each task's corrections per problem."""
        # one shard continues the state itself: the mix of one state is that state;
        # several start with their sums of hypotheses at 0 (_MixSums)
        sent = mixed if n_shards == 1 else [s.without_sum() for s in mixed]
        states = dask.delayed(sent, traverse=False)
        tasks = [dask.delayed(run, pure=False)(model, states, *args) for run, args in work]
        if n_shards == 1:
            (result,) = dask.compute(tasks[0])
            made = np.diff([_corrections_of(mixed), _corrections_of(result)], axis=0)
            return list(result), made.astype(np.int64)
        sums = self._reduced(dask, mixed, tasks, rows)
        self.n_mixes_ += 1
        return sums.mixed(mixed, sum(rows), momentum), np.array(sums.by_shard, dtype=np.int64)

    def _in_sequence(self, dask, model, mixed, work):
        """The tasks of ``work`` (one a shard, as in :meth:`_mix`) run one after the
        other, each from the states the one before returned (the first from
        ``mixed``), as one learner would pass over their rows: the last states, and
        each task's corrections per problem. The states go from worker to worker;
        the driver receives the last and the counts."""
        states = dask.delayed(mixed, traverse=False)
        counts = []
        for run, args in work:
            states = dask.delayed(run, pure=False)(model, states, *args)
            counts.append(dask.delayed(_corrections_of)(states))
        last, counts = dask.compute(states, counts)
        counts = np.array([_corrections_of(mixed), *counts], dtype=np.int64)
        return list(last), np.diff(counts, axis=0)

    def _momentum(self, est, n_shards):
        """The block momentum of this fit's mixes (:class:`_Momentum`), or None: none
        asked, or one shard (whose state is never mixed)."""
        mu = 1.0 - 1.0 / n_shards if self.momentum == "auto" else float(self.momentum)
        if n_shards == 1 or mu == 0.0:
            return None
        return _Momentum(mu, ball=isinstance(est, ALMAClassifier))

    def _reduced(self, dask, mixed, tasks, rows):
        """The shards' results reduced on the workers by a tree of tasks
        (:class:`_MixSums`, at most :data:`TREE_FAN_IN` children a node, grouped in
        shard order: the same sums whatever the workers), its root brought here."""
        counts = [(s.n_corrections, s.n_trials) for s in mixed]
        level = list(zip(rows, tasks, strict=True))
        while True:
            level = [
                (None, dask.delayed(_tree_node, pure=False)(counts, self.mixing, group))
                for group in (
                    level[i : i + TREE_FAN_IN] for i in range(0, len(level), TREE_FAN_IN)
                )
            ]
            if len(level) == 1:
                return dask.compute(level[0][1])[0]

    def _set_fitted(self, est, states, n_epochs, per_epoch):
        est._states = states
        est._update_counts()
        est._made_passes(n_epochs)
        self.estimator_ = est
        self.classes_ = est.classes_
        self.n_features_in_ = est.n_features_in_
        self.n_iter_ = n_epochs
        self.n_corrections_ = est.n_corrections_
        self.n_corrections_per_epoch_ = np.array(per_epoch, dtype=np.int64)


#: The kernel estimators :class:`ShardedKernelClassifier` trains: those of kernel
#: ALMA's exact engine (:mod:`marginkit._core.kernel`)
SHARDED = (KernelALMAClassifier, KernelPerceptronClassifier, KernelROMMAClassifier)


def _client(who):
    """The active ``dask.distributed`` client, or a clear error."""
    try:
        import distributed
    except ImportError as exc:
        raise ImportError(
            f'{who} needs dask.distributed, the dask extra: pip install "marginkit[dask]"'
        ) from exc
    try:
        return distributed.default_client()
    except ValueError as exc:
        raise ValueError(
            f"{who} trains on the workers of a dask.distributed cluster and found no "
            "client: start one first, for example distributed.Client(n_workers=2, "
            "threads_per_worker=1)."
        ) from exc


def _cores_left(workers):
    """The cores of this machine that the threads of the cluster's workers on it (of
    ``workers``, the scheduler's records) leave, at least one."""
    import psutil

    here = {"127.0.0.1", "::1", "localhost", socket.gethostname()}
    for addresses in psutil.net_if_addrs().values():
        here.update(a.address for a in addresses)
    busy = sum(w.get("nthreads", 1) for w in workers.values() if w.get("host") in here)
    return max(1, (os.cpu_count() or 1) - busy)


def _connect_timeout():
    """dask's ``distributed.comm.timeouts.connect``, as configured and in seconds."""
    dask, _ = _dask()
    from dask.utils import parse_timedelta

    wait = dask.config.get("distributed.comm.timeouts.connect")
    return wait, parse_timedelta(wait, default="s")


def _live_workers(client, who, during=""):
    """The scheduler's records of the cluster's workers now; where there is none (a
    cluster just started, or whose workers all restart), those that come within dask's
    connection timeout, or a clear ValueError. ``during``: what the caller was doing,
    for the message."""
    workers = client.scheduler_info(n_workers=-1)["workers"]
    if not workers:
        wait, _ = _connect_timeout()
        try:
            client.wait_for_workers(1, timeout=wait)
        except TimeoutError:
            raise ValueError(
                f"{who} found no worker in the dask cluster{during} (it waited {wait} "
                "for one, dask's distributed.comm.timeouts.connect)."
            ) from None
        workers = client.scheduler_info(n_workers=-1)["workers"]
    return workers


#: How many times :class:`_Spawn` places a shard on a worker that the scheduler then
#: does not start it on (a worker lost between the two) before it gives up
PLACE_TRIES = 3


class _Spawn:
    """Makes shard number s (:class:`marginkit._core.shards.Shard`) as a dask actor on
    the s-th worker of the cluster when the fit began, cycling, or, where that one is
    gone, on the s-th of the workers there are now.

    The workers are read again at each shard made, so that a shard lost with every
    worker (killed, restarted by their nannies under new addresses) is made on the new
    ones: a task restricted to an address that no longer exists waits in the
    scheduler for ever, even with ``allow_other_workers``. Each wait for an actor is
    bounded by dask's connection timeout; after :data:`PLACE_TRIES` such waits, or
    when no worker comes back, a clear error."""

    def __init__(self, client, workers, who):
        self.client, self.workers, self.who = client, workers, who
        self.futures = {}  # the actors live as long as their futures

    def __call__(self, s, kernel, n_features, sparse):
        wait, seconds = _connect_timeout()
        self.futures.pop(s, None)  # the shard this one replaces
        for _ in range(PLACE_TRIES):
            live = sorted(_live_workers(self.client, self.who, " while it made a shard"))
            first = self.workers[s % len(self.workers)]
            where = first if first in live else live[s % len(live)]
            future = self.client.submit(
                Shard,
                kernel,
                n_features,
                sparse,
                actor=True,
                workers=[where],
                allow_other_workers=True,
                pure=False,
            )
            self.futures[s] = future
            try:
                return future.result(timeout=seconds)
            except TimeoutError:
                future.cancel()  # its worker went before it started there
        del self.futures[s]  # not a lost worker (lost): the caller does not retry
        raise RuntimeError(
            f"{self.who} could not start shard {s} on a worker of the dask cluster: "
            f"{PLACE_TRIES} times the worker it was placed on was gone before it started "
            f"(each wait {wait}, dask's distributed.comm.timeouts.connect). Check that the "
            "cluster's workers stay up."
        )

    def close(self):
        """Release the actors' futures, so that the workers drop the shards. Each call
        of a dask actor leaves a reference cycle that holds its handle (a closure
        that refers to itself, in ``distributed.actor``): only a collection frees it."""
        self.futures.clear()
        gc.collect()

    def lost(self, s, exc):
        """Whether ``exc``, raised by a call of shard s, means its worker is gone: the
        call could not reach it (an OSError, as dask's actors raise then), or the
        scheduler lost the actor's task."""
        future = self.futures.get(s)
        return isinstance(exc, OSError) or (
            future is not None and future.status in ("lost", "error", "cancelled")
        )


def _on_driver(a, who):
    """A dask collection gathered to the driver (the walk reads every row, in order);
    anything else as it is, but arrays of another library than numpy (torch, CuPy, the
    Array API's), which the shards' CPUs do not take."""
    a = _from_frame(a)
    if _is_dask(a):
        return a.compute()
    if array_api_compat.is_array_api_obj(a) and not isinstance(a, np.ndarray):
        raise ValueError(
            f"{who} makes its kernel products on the workers' CPUs, from numpy or "
            f"scipy.sparse rows; got a {type(a).__module__}.{type(a).__name__}. Fit on "
            "numpy or scipy.sparse data (on one machine, the estimator itself takes "
            "device arrays)."
        )
    return a


class ShardedKernelClassifier(_Wrapper):
    """Train an exact kernel estimator with its support vectors sharded over a dask
    cluster: the same corrections and model as the estimator's own fit.

    Nearly all of the exact kernel engine's work (Gentile 2001, Remark 5, blocked as
    :mod:`marginkit._core.kernel` does) is the margin sums of each block of ``b``
    incoming rows over the ``m`` support vectors stored: ``b x m`` kernel entries and
    a product with the coefficients of every one-vs-rest problem. Here the support
    vectors' rows are split over ``n_shards`` shards, one dask actor each (one
    process's memory and cores), and each block's sums are made on the shards, each
    over its vectors; the driver adds the shards' ``b x C`` sums in the order of the
    shards and walks the block through the algorithm as the one-process engine does
    (its in-block Gram made on the driver, while the shards work, on the cores the
    workers on its machine leave). A new support vector goes to the shard with the
    fewest, an example corrected again to the shard that holds its row.

    The decisions are those of ``estimator.fit``: only the order of the floating-point
    sums differs, so on data where no margin sits within rounding of a threshold the
    corrections, support vectors and coefficients (last, averaged and voted outputs)
    are the same, the coefficients to rounding. The same data, estimator and
    ``n_shards`` give the same model bit for bit, whichever worker processes hold
    the shards: a shard whose worker is lost (killed, restarted by its nanny) is made
    anew from the driver's rows and its call repeated.

    What moves: each block's rows to every shard that holds vectors its sums need,
    the coefficients of those vectors, each support vector's row once to its shard,
    and ``b x C`` sums back. The driver holds the data (a dask collection is
    gathered to it: the walk reads every row, in order) and the whole model, which
    it returns as ``estimator_``; the shards hold copies of the rows they compute
    with, and are let go at the end of each call.

    Parameters
    ----------
    estimator : KernelALMAClassifier, KernelPerceptronClassifier or KernelROMMAClassifier
        The estimator to train (cloned), with all of its parameters (epochs,
        ``block_size``, outputs, ``cache_size``, early stopping...). Refused with a
        TypeError: kernel PUMMA (its walk sums the margins of stored pairs with a bias
        in one product of its own, which this engine does not shard) and the linear
        estimators (:class:`MixingClassifier` trains those on a cluster). Refused with a
        ValueError: a ``budget`` (a budgeted store is bounded on one machine, and its
        maintenance steps read the whole store).
    n_shards : int >= 1 or None, default=None
        The shards of the support vectors. None: one per worker of the cluster.

    Attributes
    ----------
    estimator_ : estimator
        The fitted estimator, a plain marginkit model of the estimator's class: it
        predicts, is saved (:func:`marginkit.save`) and loaded like any other.
    classes_ : ndarray of shape (n_classes,)
    n_features_in_ : int
    n_shards_ : int
    shard_sizes_ : list of int
        The support-vector entries each shard held at the end of the last call (all
        but those the last block stored, which no block's sums needed).
    bytes_sent_, bytes_received_ : int
        The bytes of arrays sent to the shards and received from them in the last
        call.
    n_remade_ : int
        Shards made anew in the last call after their worker was lost.

    See Also
    --------
    MixingClassifier : the linear estimators on a cluster.

    Notes
    -----
    The shards make their kernel rows with BLAS as the one-process engine does: on a
    ``distributed`` cluster, one thread per worker process (their nanny sets
    ``OPENBLAS_NUM_THREADS=1``), so that ``n_shards`` workers use ``n_shards`` cores.

    Examples
    --------
    >>> import numpy as np
    >>> from distributed import Client, LocalCluster
    >>> from marginkit import KernelALMAClassifier
    >>> from marginkit.distributed import ShardedKernelClassifier
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(600, 4))
    >>> y = (X[:, 0] * X[:, 1] > 0).astype(int)
    >>> est = KernelALMAClassifier(kernel="rbf", gamma=0.5, max_iter=2, block_size=64,
    ...                            random_state=0)
    >>> with LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
    ...                   dashboard_address=":0") as cluster, Client(cluster):
    ...     clf = ShardedKernelClassifier(est).fit(X, y)
    >>> clf.n_shards_
    2
    >>> one = KernelALMAClassifier(**est.get_params()).fit(X, y)
    >>> bool((clf.estimator_.support_ == one.support_).all())
    True
    """

    _parameter_constraints: dict = {
        "estimator": [HasMethods(["fit", "predict"])],
        "n_shards": [Interval(Integral, 1, None, closed="left"), None],
    }

    def __init__(self, estimator, *, n_shards=None):
        self.estimator = estimator
        self.n_shards = n_shards

    def _checked_estimator(self):
        """A clone of ``estimator`` that can be sharded, its parameters validated."""
        est = self.estimator
        if isinstance(est, KernelPUMMAClassifier):
            why = (
                "kernel PUMMA sums the margins of its stored pairs, with a bias, in a "
                "product of its own, which this engine does not shard"
            )
        elif not isinstance(est, KernelOnlineClassifier):
            why = "it is not a kernel estimator (MixingClassifier trains linear ones)"
        else:
            why = None
        if why is not None or not isinstance(est, SHARDED):
            raise TypeError(
                f"{type(self).__name__} cannot shard {type(est).__name__}: "
                f"{why or 'it is not one of marginkit kernel estimators'}. It trains "
                "KernelALMAClassifier, KernelPerceptronClassifier and KernelROMMAClassifier."
            )
        est = clone(est)
        est._validate_params()
        if est.budget is not None:
            raise ValueError(
                f"{type(self).__name__} does not support a budget (got budget="
                f"{est.budget!r}): a budgeted store is bounded on one machine, and its "
                "maintenance steps read the whole store. Fit the estimator itself."
            )
        return est

    def _shards(self, est):
        """A :class:`marginkit._core.shards.Sharded` on the active client's workers."""
        who = type(self).__name__
        client = _client(who)
        workers = _live_workers(client, who)
        n = len(workers) if self.n_shards is None else self.n_shards
        spawn = _Spawn(client, sorted(workers), who)
        return Sharded(spawn, n, spawn.lost, _cores_left(workers))

    def _call(self, est, method, *args, **kwargs):
        """``est.method(*args, **kwargs)`` with its margin products on the shards."""
        shards = self._shards(est)
        est._shards = shards
        try:
            getattr(est, method)(*args, **kwargs)
        finally:
            del est._shards
            sizes = shards.sizes()
            shards.close()
        self.estimator_ = est
        self.classes_ = est.classes_
        self.n_features_in_ = est.n_features_in_
        self.n_shards_ = shards.n_shards
        self.shard_sizes_ = sizes
        self.bytes_sent_ = shards.bytes_sent
        self.bytes_received_ = shards.bytes_received
        self.n_remade_ = shards.remade
        return self

    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y, **fit_params):
        """Fit a clone of ``estimator`` on (X, y), its margin products on the shards.

        Parameters
        ----------
        X : {array-like, sparse matrix, dask array or DataFrame} of shape (n_samples, n_features)
        y : array-like or dask array of shape (n_samples,)
        **fit_params : dict
            Passed to ``estimator.fit`` (``callback``, ``checkpoint``...).

        Returns
        -------
        self : ShardedKernelClassifier
        """
        est = self._checked_estimator()
        who = type(self).__name__
        return self._call(est, "fit", _on_driver(X, who), _on_driver(y, who), **fit_params)

    def partial_fit(self, X, y, classes=None):
        """One more pass of ``estimator_`` (a clone of ``estimator`` at the first call)
        over (X, y), its margin products on the shards.

        Parameters
        ----------
        X : {array-like, sparse matrix, dask array or DataFrame} of shape (n_samples, n_features)
        y : array-like or dask array of shape (n_samples,)
        classes : array-like of shape (n_classes,), default=None
            Every class, at the first call.

        Returns
        -------
        self : ShardedKernelClassifier
        """
        if not hasattr(self, "estimator_"):
            self._validate_params()
            est = self._checked_estimator()
        else:
            est = self.estimator_
        who = type(self).__name__
        X, y = _on_driver(X, who), _on_driver(y, who)
        return self._call(est, "partial_fit", X, y, classes=classes)
