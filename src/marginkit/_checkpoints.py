"""Checkpoints: the orders of a fit's epochs, the fingerprint of its data, and the
resumable fit that writes and resumes from them (``fit(checkpoint=...)``)."""

import hashlib
import hmac
import time
from numbers import Integral
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from sklearn.utils import check_random_state
from sklearn.utils.validation import _num_samples

from . import _checks as check
from . import persistence
from ._core.arrays import to_numpy
from ._order import epoch_order, rows_by_content
from ._passes import FIRST_KEY, GROWTH_KEY, PASS_KEYS, SINCE_KEY, WHY_KEY, check_passes
from ._registry import UntrustedFileError, trusted_type


class Throttled:
    """``write()`` when the time since the last write is at least ``1 / share`` times
    what that write took: writing then takes at most about ``share`` of the time.

    The first write pays once for what every later one reuses (the serialiser's
    imports and first compilations: 0.48 s where later writes of the same model took
    5 ms), so it does not hold back the next: judged by it, a run killed at half of
    19 s had written only its first checkpoint."""

    def __init__(self, write, share=0.05):
        self.write, self.share = write, share
        self.cost, self.done, self.pending = 0.0, time.perf_counter(), False
        self.writes = 0

    def __call__(self):
        if (time.perf_counter() - self.done) * self.share >= self.cost:
            start = time.perf_counter()
            self.write()
            self.done = time.perf_counter()
            self.writes += 1
            # the first write's cost is the warm-up's: the next one measures a write
            self.cost = self.done - start if self.writes > 1 else 0.0
            self.pending = False
        else:
            self.pending = True

    def flush(self):
        if self.pending:
            self.write()
            self.pending = False


@trusted_type
class EpochOrders:
    """The order of the rows in every epoch of a fit, made when asked for.

    ``orders[e]`` is ``random_state``'s e-th permutation of ``range(n)`` (the rows in
    turn without ``shuffle``), the orders :meth:`OnlineClassifier.fit` presents: a
    checkpoint stores the generator's state at the start of the fit, a few kilobytes,
    instead of ``n_epochs x n`` indices. Epochs are asked for in increasing order.
    ``random_state`` is advanced past all the permutations at once, as a fit that made
    them at the start would leave it. An int seeds a generator of the fit's own; None
    draws that seed from numpy's global generator, so that each fit shuffles anew.
    The permutations are of the rows sorted by content, once :meth:`over` has been
    given them (:func:`marginkit._order.rows_by_content`): the epochs then do not depend
    on the order in which the rows were given. A checkpoint of a version before that
    (``by_content`` False) resumes with the permutations of the positions it began with.
    """

    def __init__(self, n, n_epochs, shuffle, random_state):
        self.n, self.n_epochs, self.shuffle = int(n), int(n_epochs), bool(shuffle)
        self.start = None
        if self.shuffle:
            if random_state is None:
                random_state = int(check_random_state(None).randint(np.iinfo(np.int32).max))
            rng = check_random_state(random_state)
            self.start = rng.get_state()[1:]  # the Mersenne Twister's keys and position
            if isinstance(random_state, np.random.RandomState):
                for _ in range(self.n_epochs):
                    rng.permutation(self.n)
        self.by_content = self.shuffle
        self._rng, self._made, self._last, self.rows = None, 0, None, None

    def over(self, X, y, weights=None):
        """Shuffle the rows of ``X`` (labels ``y``, ``weights``) sorted by content, from
        the next epoch made: the rows of the fit, or those it resumes on."""
        self.rows = rows_by_content(X, y, weights) if self.by_content else None
        self._rng, self._made, self._last = None, 0, None
        return self

    def __len__(self):
        return self.n_epochs

    def __getitem__(self, epoch):
        if not self.shuffle:
            return np.arange(self.n)
        if self._rng is None or epoch < self._made - 1:
            self._rng = np.random.RandomState()
            self._rng.set_state(("MT19937", *self.start))
            self._made = 0
        while self._made <= epoch:
            self._last = epoch_order(self._rng, self.n, True, self.rows)
            self._made += 1
        return self._last

    def __getstate__(self):
        return {
            "n": self.n,
            "n_epochs": self.n_epochs,
            "shuffle": self.shuffle,
            "start": self.start,
            "by_content": self.by_content,
        }

    def __setstate__(self, state):
        self.__dict__.update(state)
        self.by_content = state.get("by_content", False)
        self._rng, self._made, self._last, self.rows = None, 0, None, None

    def _check_loaded(self, where, n_epochs, shuffle, n=None):
        """The orders of ``n_epochs`` epochs (shuffled or not) over ``n`` rows (any number
        when None; returned): the generator's state one that numpy reads within its key."""
        w = f"{where}."
        check.attributes(
            self,
            where,
            ("n", "n_epochs", "shuffle", "start", "_rng", "_made"),
            ("_last", "by_content", "rows"),
        )
        check.flag(self.by_content, w + "by_content")
        got = check.integer(self.n, w + "n", 1)
        n = got if n is None else check.equal(got, w + "n", n)
        check.equal(check.integer(self.n_epochs, w + "n_epochs", 1), w + "n_epochs", n_epochs)
        check.equal(check.flag(self.shuffle, w + "shuffle"), w + "shuffle", bool(shuffle))
        if not self.shuffle:
            check.equal(self.start, w + "start", None)
        elif type(self.start) is not tuple or len(self.start) != 4:
            check.fail(w + "start", "must be the state of a Mersenne Twister")
        else:
            check.mt_state(*self.start, w + "start")
        return n


def settings(est):
    """The parameters that decide a model, comparable across estimators (``verbose``
    left out)."""
    params = est.get_params()
    params.pop("verbose", None)
    return repr(params)


def fingerprint(X, y, weights=None):
    """A digest of the training data (and of the rows' weights, where they have some), to
    tell a checkpoint's data from other data."""
    digest = hashlib.sha256()
    arrays = [X.data, X.indices, X.indptr] if sp.issparse(X) else [to_numpy(X)]
    if weights is not None:
        arrays.append(np.asarray(weights, dtype=np.float64))
    for a in [*arrays, np.asarray(y).astype(str)]:
        digest.update(np.ascontiguousarray(a).tobytes())
    digest.update(repr(X.shape).encode())
    return digest.hexdigest()


def check_epoch_loop(resume, n, counter):
    """The progress of a loop of epochs that draws each epoch's order from ``rng``
    (PUMMA's, the margin Perceptron's): ``pos`` in the epoch's ``order`` of ``n`` rows,
    ``counter`` (what the epoch counts so far) and ``done``; ``order`` and ``counter``
    may be missing at the start of an epoch only."""
    check.random_state(resume["rng"], "_resume['rng']")
    check.flag(resume["done"], "_resume['done']")
    pos = check.integer(resume["pos"], "_resume['pos']", 0, max(n - 1, 0))
    if "order" in resume:
        order = check.array(resume["order"], "_resume['order']", np.int64, (n,), within=(0, n))
        if n and np.bincount(order, minlength=n).max() > 1:
            check.fail("_resume['order']", f"must be an order of the {n} rows")
    elif pos:
        check.fail("_resume", "lacks the order of the epoch it is in")
    if counter in resume:
        check.integer(resume[counter], f"_resume[{counter!r}]", 0)
    elif pos:
        check.fail("_resume", f"lacks the {counter!r} of the epoch it is in")


def check_fingerprint(value):
    """A fingerprint as :func:`fingerprint` makes it: 64 hexadecimal digits."""
    if (
        type(value) is not str
        or len(value) != 64
        or not all(c in "0123456789abcdef" for c in value)
    ):
        check.fail("_resume['fingerprint']", "must be a SHA-256 digest in hexadecimal")


class Resumable:
    """A fit that can stop and resume: its progress in ``_resume``, written to a
    checkpoint and checked when read back (a mixin of
    :class:`marginkit._base.OnlineClassifier`)."""

    def _check_checkpoint_args(self, checkpoint, every):
        """A ValueError (TypeError) before training when fit cannot write or resume
        ``checkpoint`` as asked."""
        if checkpoint is None and every is not None:
            raise ValueError("checkpoint_every needs a checkpoint path")
        if checkpoint is not None and isinstance(
            getattr(self, "random_state", None), np.random.RandomState
        ):
            raise ValueError(
                "a fit with checkpoints needs random_state to be an int or None: a "
                "generator object cannot be told from another when the fit resumes, so "
                "its orders could not be those of an uninterrupted run"
            )
        if checkpoint is not None and callable(getattr(self, "kernel", None)):
            # said before training, not at the first checkpoint
            raise TypeError(
                "a fit with a callable kernel cannot write checkpoints (a function is code, "
                "not data, and marginkit.save does not store it); use one of the named "
                "kernels, or fit without checkpoint"
            )

    def _fit_with_checkpoints(self, X, y, callback, checkpoint, every, sample_weight=None):
        if every is not None and (not isinstance(every, Integral) or every < 1):
            raise ValueError(f"checkpoint_every must be an integer >= 1, got {every!r}")
        path = Path(checkpoint)
        resuming = path.exists()
        # X is checked as for a new fit, whatever this estimator learned before: a
        # checkpoint's model replaces it
        X, y = self._validate_Xy(X, y, reset=True)
        n = X.shape[0]
        X, y, weights, present, per_class, kept = self._weighed(X, y, sample_weight)
        digest = fingerprint(X, y, weights)
        if resuming:
            saved = persistence.load(path)
            if type(saved) is not type(self) or settings(self) != settings(saved):
                raise ValueError(
                    f"{path} is a checkpoint of {saved!r}, not of {self!r}: resuming it "
                    "would not give this estimator's model"
                )
            resume = getattr(saved, "_resume", None)
            if resume is None:
                raise ValueError(
                    f"{path} holds a model, not a checkpoint (a fit's progress): give fit "
                    "a new path, or load the model with marginkit.load"
                )
            saved._check_resume(path, X, y)  # their width, classes, format, rows
            if not hmac.compare_digest(resume["fingerprint"], digest):
                raise ValueError(f"{path} is a checkpoint of training on other data")
            names = getattr(self, "feature_names_in_", None)
            theirs = getattr(saved, "feature_names_in_", None)
            if (names is None) != (theirs is None) or (
                names is not None and not np.array_equal(names, theirs)
            ):
                raise ValueError(
                    f"{path} is a checkpoint of training on data with "
                    + ("no feature names" if theirs is None else f"features {list(theirs)}")
                    + ", not on these data's "
                    + ("unnamed features" if names is None else f"{list(names)}")
                )
            verbose = self.verbose
            self.__dict__.update(saved.__dict__)
            self.verbose = verbose
        else:
            self._set_up(X, y, present, per_class)  # validated above, with reset
            self._resume = {"fingerprint": digest, **self._fresh_progress(X)}

        def save():
            persistence.save(self, path)  # looked up at each write (tests stand in for it)

        write = Throttled(save) if every is None else save
        self._train_resumable(X, y, callback, write, every, weights)
        if every is None:
            write.flush()  # the finished state, if the last epoch's was skipped
        self._left_out(kept, n)  # after the last checkpoint, which resumes on the rows kept
        if not self._traits.own_epochs:
            self._end_of_passes(self._resume)
        del self._resume
        return self

    def _fresh_progress(self, X):
        """Where a resumable fit starts: the orders of every epoch, and position 0."""
        orders = EpochOrders(X.shape[0], self._max_iter, self.shuffle, self.random_state)
        return {"orders": orders, "epoch": 0, "pos": 0, **self._schedule().fresh()}

    def _train_resumable(self, X, y, callback, save, every, weights=None):
        """Train from ``self._resume`` on the rows of X (of ``weights``), calling
        ``save()`` at each checkpoint."""
        orders = self._resume["orders"].over(X, y, weights)
        self._passes(
            X, y, orders, callback, resume=self._resume, save=save, every=every, weights=weights
        )

    def _fit_by_progress(self, X, y, callback=None, sample_weight=None):
        """A fit made by the resumable loop (``_fresh_progress``, ``_train_resumable``)
        with no checkpoint: for the estimators whose epochs that loop decides."""
        n = _num_samples(X)
        X, y, weights, kept = self._start_fit(X, y, sample_weight)
        self._resume = self._fresh_progress(X)
        self._train_resumable(X, y, callback, None, None, weights)
        self._left_out(kept, n)
        del self._resume
        return self

    def _check_progress(self, resume, n):
        """A checkpoint's progress (``_resume``): the orders of the epochs over ``n``
        rows (any number when None), and a position in them; the fingerprint of the data.
        """
        names = {"fingerprint", "orders", "epoch", "pos", *PASS_KEYS}
        optional = (*self._traits.cache_keys, FIRST_KEY, SINCE_KEY, GROWTH_KEY, WHY_KEY)
        check.attributes(resume, "_resume", names, optional)
        check_passes(resume, self._n_problems)
        check_fingerprint(resume["fingerprint"])
        orders = check.instance(resume["orders"], "_resume['orders']", EpochOrders)
        n = orders._check_loaded("_resume['orders']", self._max_iter, self.shuffle, n)
        epoch = check.integer(resume["epoch"], "_resume['epoch']", 0, self._max_iter)
        check.integer(resume["pos"], "_resume['pos']", 0, n - 1 if epoch < self._max_iter else 0)
        return n

    def _check_resume(self, path, X, y):
        """A ValueError unless this checkpoint (loaded, so checked) resumes on ``X, y``: the
        data it was made for, by their width, classes and number of rows."""
        n, width = X.shape
        if self.n_features_in_ != width:
            raise ValueError(
                f"{path} is a checkpoint of training on {self.n_features_in_} features, "
                f"not on these data's {width}"
            )
        classes = np.unique(y)
        if not np.array_equal(classes, self.classes_):
            raise ValueError(
                f"{path} is a checkpoint of training on the classes {self.classes_}, not on "
                f"these data's {classes}"
            )
        try:
            self._check_progress(self._resume, n)
        except UntrustedFileError as exc:
            raise UntrustedFileError(f"{path}: a checkpoint of other data: {exc}") from None
