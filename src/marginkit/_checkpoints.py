"""Checkpoints: the orders of a fit's epochs, the fingerprint of its data, and the
resumable fit that writes and resumes from them (``fit(checkpoint=...)``)."""

import hashlib
import hmac
import time

import numpy as np
import scipy.sparse as sp
from sklearn.utils import check_random_state

from . import _checks as check
from . import persistence
from ._core.arrays import to_numpy
from ._order import epoch_order, rows_by_content
from ._registry import trusted_type


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

    def check_loaded(self, where, n_epochs, shuffle, n=None):
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


def check_checkpoint_args(checkpoint, every, random_state, kernel):
    """A ValueError (TypeError) before training when fit cannot write or resume
    ``checkpoint`` as asked, every ``every`` trials, with this ``random_state`` and
    ``kernel`` (None for the linear estimators)."""
    if checkpoint is None and every is not None:
        raise ValueError("checkpoint_every needs a checkpoint path")
    if checkpoint is not None and isinstance(random_state, np.random.RandomState):
        raise ValueError(
            "a fit with checkpoints needs random_state to be an int or None: a "
            "generator object cannot be told from another when the fit resumes, so "
            "its orders could not be those of an uninterrupted run"
        )
    if checkpoint is not None and callable(kernel):
        # said before training, not at the first checkpoint
        raise TypeError(
            "a fit with a callable kernel cannot write checkpoints (a function is code, "
            "not data, and marginkit.save does not store it); use one of the named "
            "kernels, or fit without checkpoint"
        )


def resumed(path, est, X, y, digest):
    """The estimator the checkpoint at ``path`` holds, to go on training ``est`` (its
    type, its parameters) on the rows ``X, y`` whose :func:`fingerprint` is ``digest``;
    a ValueError unless it was made so, by their width, classes, rows and features'
    names."""
    saved = persistence.load(path)
    if type(saved) is not type(est) or settings(est) != settings(saved):
        raise ValueError(
            f"{path} is a checkpoint of {saved!r}, not of {est!r}: resuming it "
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
    names = getattr(est, "feature_names_in_", None)
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
    return saved


def check_resumes_on(path, n_features, classes, X, y):
    """A ValueError unless a checkpoint of a model of ``n_features`` and ``classes``
    can resume on ``X, y``, by their width and classes."""
    width = X.shape[1]
    if n_features != width:
        raise ValueError(
            f"{path} is a checkpoint of training on {n_features} features, "
            f"not on these data's {width}"
        )
    present = np.unique(y)
    if not np.array_equal(present, classes):
        raise ValueError(
            f"{path} is a checkpoint of training on the classes {classes}, not on "
            f"these data's {present}"
        )
