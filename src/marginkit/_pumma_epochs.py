"""PUMMA's epochs: what PUMMAClassifier and KernelPUMMAClassifier share.

PUMMA (Ishibashi, Hatano and Takeda, COLT 2008) makes epochs until one makes no update
(the setting of its margin guarantee), or ``tol`` ends them on the growth of the
hypothesis's norm, or ``max_iter`` does: the loop over the epochs from a checkpoint's
progress or over a stream, the end of an epoch (progress, callback), and the end of a
fit (``converged_`` and the warning of epochs that ran out). Each form brings its own
pass (``run_chunk``) and training margins.
"""

import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.validation import check_is_fitted

from . import _checks as check
from ._order import epoch_order
from ._passes import GROWTH_KEY, PASS_KEYS, WHY_KEY, check_passes, ended_early
from ._warnings import user_level

#: the keys a checkpoint's progress of PUMMA's epochs may hold besides its own
PROGRESS_OPTIONAL = ("order", "changes", *PASS_KEYS, GROWTH_KEY, WHY_KEY)


class PUMMAEpochs:
    """PUMMA's epochs until one makes no update, from a checkpoint's progress or over a
    stream (see :mod:`marginkit._stream_fit`): the base both forms of PUMMA share."""

    def _check_streamable(self):
        super()._check_streamable()
        if self.lam > 0:
            raise ValueError(
                f"lam={self.lam}: the soft margin gives every example a coordinate of its "
                "own across the epochs, which needs all the data in memory; pass lam=0 "
                "(the hard margin) to learn a stream"
            )

    def _growth(self):
        # With the soft margin every row of a fit keeps its coordinate across the
        # epochs, and ||w~||_q^2 of each problem grows at every update (the new
        # hypothesis satisfies f(w) . w' >= ||w||_q^2) while it stays below
        # 1 / gamma~*^2: the epochs end where it stops growing. The corrections
        # said less: with class weights a light row's updates went on as often while
        # the heavy rows' margins still moved (docs/defaults.md). The hard margin's
        # (a stream's) grows without bound on data no hyperplane separates: its
        # epochs count updates.
        if not self.lam > 0:
            return None
        return self._squared_norms()

    @property
    def n_iter_(self):
        """Epochs made (scikit-learn's name of ``n_epochs_``)."""
        check_is_fitted(self, "n_epochs_")
        return self.n_epochs_

    def _n_changes(self):
        return self.n_updates_ + self.n_conflicts_

    def _learned(self):
        required, optional = super()._learned()
        required |= {"n_epochs_", "converged_", "n_updates_", "n_conflicts_"}
        return required, optional | {"margin_"}

    def _keep_margin(self, margin):
        """The training margins measured at the end of :meth:`fit`."""
        self.margin_ = margin

    def _check_fitted(self):
        super()._check_fitted()
        check.integer(self.n_epochs_, "n_epochs_", 0)
        check.flag(self.converged_, "converged_")
        if "margin_" in vars(self):
            check.array(self.margin_, "margin_", np.float64, (self._n_problems,))

    def _stream_epochs(self, stream, callback):
        r = {"done": False, **self._schedule().fresh()}
        with self._progress(self._max_iter, "epoch") as bar:
            while not (r["done"] or r["ended"]) and self.n_epochs_ < self._max_iter:
                epochs = self.n_epochs_
                changes, rows = self._stream_pass(stream)
                self.n_epochs_ = epochs + 1  # partial passes count chunks
                self._epoch_ends(r, rows, changes, bar, callback)
            ended_early(bar, self._max_iter - self.n_epochs_)
        # the training margin: the smallest over the chunks
        margins = [
            self._chunk_margins(X, y)
            for X, y, _ in self._stream_chunks(stream)
            if X.shape[0]  # a chunk whose rows all weigh 0 has no margin
        ]
        self._keep_margin(np.min(margins, axis=0))
        self._end_of_fit(r)

    def _epochs_until_quiet(self, n, step, save, run_chunk, callback, rows=None):
        """PUMMA's epochs: until one makes no update (or ``tol`` ends them, or
        ``max_iter``), from ``_resume``; ``callback(self, epoch)`` after each.

        ``run_chunk(order, lo, hi)`` trains on ``order[lo:hi]`` and returns the updates
        and conflicts it made; each epoch's order shuffles ``rows`` (:func:`epoch_order`);
        with ``save``, a checkpoint follows every ``step`` trials and every epoch.
        """
        r = self._resume
        if "ended" not in r:
            # a checkpoint written before tol: its epoch so far counts from here
            r.update(self._schedule().fresh())
        with self._progress(self._max_iter, "epoch") as bar:
            # every one-vs-rest problem sees the same epochs, until none updates
            while not (r["done"] or r["ended"]) and self.n_epochs_ < self._max_iter:
                if r["pos"] == 0:  # a new epoch
                    r["order"] = epoch_order(r["rng"], n, self.shuffle, rows)
                    r["changes"] = 0
                lo = r["pos"]
                while lo < n:
                    hi = min(n, lo + step)
                    r["changes"] += run_chunk(r["order"], lo, hi)
                    lo = hi
                    if hi < n and save is not None:
                        r["pos"] = hi
                        self._update_counts()
                        save()
                self.n_epochs_ += 1
                r["pos"] = 0
                self._epoch_ends(r, n, r["changes"], bar, callback)
                if save is not None:
                    self._update_counts()
                    save()
            ended_early(bar, self._max_iter - self.n_epochs_)

    def _epoch_ends(self, r, n, changes, bar, callback):
        """An epoch over ``n`` rows made ``changes`` (updates and conflicts): whether the
        epochs are done (none) or ended by ``tol``; the progress bar and the callback."""
        self._schedule().pass_ends(r, n)
        r["done"] = changes == 0
        bar.update(1)
        if callback is not None:
            self._update_counts()
            callback(self, self.n_epochs_ - 1)

    def _end_of_fit(self, r):
        """``converged_``, and the warning of epochs that ran out: before an epoch without
        update (``tol=None``), or while the updates still fell."""
        self._update_counts()
        self.converged_ = bool(r["done"])
        if self.converged_:
            self._stopped_by = "quiet"
            return
        if self.tol is None:
            self._stopped_by = "max_iter"
            warnings.warn(
                f"{type(self).__name__} did not converge within max_iter={self._max_iter} "
                f"epochs: an epoch still made updates. The data may not be separable "
                f"(lam={self.lam}); a soft margin lam > 0 makes any data separable. "
                "Increase max_iter or lam.",
                ConvergenceWarning,
                stacklevel=user_level(),
            )
        else:
            self._end_of_passes({**r, "epoch": self.n_epochs_})

    def _end_of_partial_fit(self, changes):
        """The counts after a call of partial_fit, one epoch, and ``converged_``: whether
        it made no update (nor skipped a trial as a conflict)."""
        self.n_epochs_ += 1
        self.converged_ = bool(changes == 0)
        self._update_counts()

    def _check_tol_record(self, resume):
        """The ``tol`` record of a checkpoint's progress (none before tol)."""
        present = [key for key in PASS_KEYS if key in resume]
        if present:
            missing = sorted(set(PASS_KEYS) - set(present))
            if missing:
                check.fail("_resume", f"lacks {', '.join(missing)}")
            check_passes(resume, self._n_problems)
