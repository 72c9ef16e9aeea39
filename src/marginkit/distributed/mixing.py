"""Iterative parameter mixing on dask (McDonald, Hall and Mann, NAACL 2010): the driver of
the epochs.
"""

from __future__ import annotations

import warnings
from dataclasses import replace
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from sklearn.base import _fit_context, clone
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions
from sklearn.utils.multiclass import unique_labels
from tqdm.auto import tqdm

from .._guards import check_two_classes, unchanged_on_error
from .._kernel_base import KernelOnlineClassifier
from .._passes import TOL, ended_early, tol_ends
from .._reading import ReadOptions
from .._rows import DataSummary, Norms
from ..alma import ALMAClassifier
from ..formats import input_format
from ..margin_perceptron import MarginPerceptronClassifier
from ..perceptron import PerceptronClassifier
from ..pumma import PUMMAClassifier
from ..romma import ROMMAClassifier
from .dask_predict import DaskMetaEstimator, dask_modules, from_frame, is_dask, row_blocks
from .inputs import (
    ShardReading,
    aligned_labels,
    combined,
    file_norms,
    file_rows,
    file_summary,
    held_norms,
    known_rows,
    labels_of,
    paths_of,
    row_norms,
)
from .mixing_sums import (
    TREE_FAN_IN,
    Momentum,
    corrections_of,
    file_epoch,
    held_epoch,
    mixing_rounds,
    shard_epoch,
    tree_node,
)

#: The estimators :class:`MixingClassifier` mixes: those whose learned state is one
#: weight vector per one-vs-rest problem (and ALMA's correction counter)
MIXED = (ALMAClassifier, PerceptronClassifier)


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


class MixingClassifier(DaskMetaEstimator):
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
        if est.horizon is not None:
            raise ValueError(
                f"{type(self).__name__} does not support a horizon (got horizon="
                f"{est.horizon!r}): a horizon weighs the trials of one stream by their "
                "order, and the shards' trials have none between them. Use horizon=None."
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
        options = ReadOptions(fmt, n_features, zero_based, label_column, skip_header)
        reading = ShardReading(options, chunk_size, prefetch)
        # a fit that fails (bad rows found on a worker, an interrupt) leaves the
        # estimator as it was
        with unchanged_on_error(self):
            paths = paths_of(X)
            if paths is not None:
                return self._fit_files(paths, y, classes, callback, reading)
            self.input_format_ = None
            # a dask DataFrame's partitions are the shards; persisted once, as an array's
            X, y = from_frame(X, persist=True), from_frame(y, persist=True)
            given = reading.given()
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
        dask, da = dask_modules()
        est = self._checked_estimator()
        X = row_blocks(X)
        # rows selected by a mask (X[mask]) have chunks of unknown length: computed once
        # persisted, before the numbers of rows are compared
        X, y = dask.persist(X, y)
        X = known_rows(X)
        y = known_rows(y) if is_dask(y) else y
        y = aligned_labels(y, X, da)
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
            found = dask.compute(*[dask.delayed(labels_of)(b) for b in ys])
            classes = np.unique(np.concatenate(found))
        else:
            classes = unique_labels(classes)
        check_two_classes(classes)

        starts = np.concatenate([[0], np.cumsum(rows)[:-1]])

        def norms(p):
            where = [(k, int(start)) for k, start in enumerate(starts)]
            found = [dask.delayed(row_norms)(b, p, at) for b, at in zip(xs, where, strict=True)]
            return sum(dask.compute(*found), Norms())

        work = [(shard_epoch, (xb, yb)) for xb, yb in zip(xs, ys, strict=True)]
        summary = DataSummary(X.shape[1], sp.issparse(X._meta), norms, None)
        self._epochs(dask, est, classes, summary, work, rows, callback)
        return self

    def _fit_files(self, paths, y, classes, callback, reading):
        """:meth:`fit` over file shards: a first pass of each file on the workers, the
        combined decisions on the driver, then the epochs, each file read again (with
        ``mix_every``: read once more, and held on its worker)."""
        dask, _ = dask_modules()
        if y is not None:
            raise ValueError(
                "y must be None when X is a list of files: the labels are read from the files"
            )
        est = self._checked_estimator()
        given = classes is not None
        options = reading.options
        first = replace(reading, classes=classes)
        if not (given and options.n_features is not None and options.zero_based != "auto"):
            # checked against all the files together, below
            first = replace(first, options=replace(options, n_features=None))
        summaries = dask.compute(
            *[dask.delayed(file_summary, pure=False)(path, first) for path in paths]
        )
        fmt, width, zero_based, classes = combined(
            paths, summaries, options.n_features, options.zero_based, given
        )
        check_two_classes(classes)
        rows = [int(scan.n_samples) for _, scan, _ in summaries]
        # every epoch reads each file knowing all it needs: no scan
        options = replace(
            options,
            fmt=fmt,
            n_features=width if fmt == "svmlight" else None,
            zero_based=zero_based,
        )
        reading = replace(reading, options=options, classes=classes)

        if self.mix_every is None:
            work = [(file_epoch, (path, reading)) for path in paths]
            parts = [(file_norms, (path, reading)) for path in paths]
        else:
            # several mixes an epoch: each file's rows read once, held on its worker
            held = dask.persist(
                *[dask.delayed(file_rows, pure=False)(path, reading) for path in paths]
            )
            work = [(held_epoch, (rows,)) for rows in held]
            parts = [(held_norms, (rows,)) for rows in held]

        def norms(p):
            tasks = [dask.delayed(run, pure=False)(*args, p) for run, args in parts]
            return sum(dask.compute(*tasks), Norms())

        summary = DataSummary(width, fmt == "svmlight", norms, None)
        self._epochs(dask, est, classes, summary, work, rows, callback)
        self.input_format_ = input_format(fmt, width, zero_based, options.label_column)
        return self

    def _epochs(self, dask, est, classes, summary, work, rows, callback):
        """The epochs of :meth:`fit`, each a pass of every shard and a mix, after the
        estimator's start from ``classes`` and ``summary`` (a DataSummary of all the
        rows: R_, p_ and the model's units decided once, from every row); ``work``
        holds each shard's ``(epoch function, its arguments after the model and the
        states)``."""
        learner = est._learner()
        # the estimator, which the learner trains, holds no states while the shards do
        mixed = learner.start(classes, summary)
        n_shards, n_samples = len(work), sum(rows)
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
        model = dask.delayed(learner, traverse=False)  # one key, whatever the tasks
        # the bar counts epochs, or mixes where an epoch makes several
        n_rounds = len(mixing_rounds(rows, step, 0))
        bar = tqdm(
            total=self.max_iter
            if n_rounds == 1
            else len(mixing_rounds(rows, step, warm)) + (self.max_iter - 1) * n_rounds,
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
                rounds = mixing_rounds(rows, step, skip)
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
                self._set_fitted(est, learner, mixed, epoch + 1, per_epoch)
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
        # several start with their sums of hypotheses at 0 (MixSums)
        sent = mixed if n_shards == 1 else [s.without_sum() for s in mixed]
        states = dask.delayed(sent, traverse=False)
        tasks = [dask.delayed(run, pure=False)(model, states, *args) for run, args in work]
        if n_shards == 1:
            (result,) = dask.compute(tasks[0])
            made = np.diff([corrections_of(mixed), corrections_of(result)], axis=0)
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
            counts.append(dask.delayed(corrections_of)(states))
        last, counts = dask.compute(states, counts)
        counts = np.array([corrections_of(mixed), *counts], dtype=np.int64)
        return list(last), np.diff(counts, axis=0)

    def _momentum(self, est, n_shards):
        """The block momentum of this fit's mixes (:class:`Momentum`), or None: none
        asked, or one shard (whose state is never mixed)."""
        mu = 1.0 - 1.0 / n_shards if self.momentum == "auto" else float(self.momentum)
        if n_shards == 1 or mu == 0.0:
            return None
        return Momentum(mu, ball=isinstance(est, ALMAClassifier))

    def _reduced(self, dask, mixed, tasks, rows):
        """The shards' results reduced on the workers by a tree of tasks
        (:class:`MixSums`, at most :data:`TREE_FAN_IN` children a node, grouped in
        shard order: the same sums whatever the workers), its root brought here."""
        counts = [(s.n_corrections, s.n_trials) for s in mixed]
        level = list(zip(rows, tasks, strict=True))
        while True:
            level = [
                (None, dask.delayed(tree_node, pure=False)(counts, self.mixing, group))
                for group in (
                    level[i : i + TREE_FAN_IN] for i in range(0, len(level), TREE_FAN_IN)
                )
            ]
            if len(level) == 1:
                return dask.compute(level[0][1])[0]

    def _set_fitted(self, est, learner, states, n_epochs, per_epoch):
        learner.finish(states, n_epochs)
        self.estimator_ = est
        self.classes_ = est.classes_
        self.n_features_in_ = est.n_features_in_
        self.n_iter_ = n_epochs
        self.n_corrections_ = est.n_corrections_
        self.n_corrections_per_epoch_ = np.array(per_epoch, dtype=np.int64)
