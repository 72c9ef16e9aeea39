"""The glue of a fit from a stream (:func:`marginkit.streaming.fit_file`): epochs of
chunks, each validated as a batch of :meth:`partial_fit` is."""

import numpy as np
from sklearn.base import _fit_context
from sklearn.utils.multiclass import check_classification_targets

from ._guards import check_known, check_two_classes, unchanged_on_error
from ._weights import as_stored


class Streamed:
    """:meth:`_fit_stream` and its epochs (a mixin of
    :class:`marginkit._base.OnlineClassifier`)."""

    @_fit_context(prefer_skip_nested_validation=True)
    def _fit_stream(self, stream, classes, data, callback=None):
        """:meth:`fit` with ``shuffle=False`` on data that come in chunks, never whole:
        a stream is learned in its own order, whatever ``shuffle`` says (a stream
        that comes in long runs of one label warns once).

        Used by :func:`marginkit.streaming.fit_file`.

        Parameters
        ----------
        stream : callable
            ``stream()`` starts a pass over the data: an iterable of ``(X, y)`` chunks,
            in the same order every time. Each epoch is one such pass.
        classes : ndarray
            The sorted labels of all the data.
        data : DataSummary
            The data-wide quantities a fit starts from (the radius of the instances for
            ``fit_intercept``, the variance for a kernel's ``gamma="scale"``), so that the
            model is that of :meth:`fit` on the chunks stacked. Under
            :meth:`partial_fit` they come from the first chunk instead.

        Returns
        -------
        self
        """
        self._warn_renamed()
        self._check_streamable()
        check_classification_targets(classes)
        check_two_classes(np.asarray(classes))
        # a stream can turn out bad late (a label outside classes, an index past the
        # width): then the estimator is left as it was, as fit leaves it
        with unchanged_on_error(self):
            self.classes_ = np.asarray(classes)
            self.__dict__.pop("_label_runs", None)
            self.__dict__.pop("_class_weight", None)  # set by the first chunk
            self.n_features_in_ = data.n_features
            self._initialise(data)
            self._update_counts()
            self._stream_epochs(stream, callback)
        return self

    def _check_streamable(self):
        """A ValueError when this estimator's fit cannot be made from a stream (a
        stream is learned in its own order: ``shuffle`` does not apply to it)."""

    def _stream_epochs(self, stream, callback):
        """Passes over a stream, as :meth:`fit`'s epochs: ``max_iter``, or fewer (tol)."""
        plan = self._schedule()
        r = plan.progress()
        for epoch, _ in plan.epochs(r, self._max_iter):
            rows = self._stream_pass(stream)[1]
            plan.reached(r, epoch, rows, rows)
            if callback is not None:
                callback(self, epoch)
        self._end_of_passes(r)

    def _stream_pass(self, stream):
        """One epoch over a stream: the changes (updates, and PUMMA's conflicts) it made,
        and the rows it read."""
        before, rows = self._n_changes(), 0
        for X, y, weights in self._stream_chunks(stream):
            if X.shape[0]:  # (none where every row of the chunk weighs 0)
                self._passes(X, y, [np.arange(X.shape[0])], None, weights=weights)
            rows += X.shape[0]
        return self._n_changes() - before, rows

    def _stream_chunks(self, stream):
        """A pass over a stream: ``(X, y, weights)`` of each chunk, validated, with labels
        among ``classes_``: its rows of weight > 0 (none may be left) and their weights
        (None: 1 each). The class weights are
        fixed by the first chunk, as by the first call of partial_fit. Unlike a fit's,
        a stream's radius and ``gamma="scale"`` come from its scan, rows of weight 0
        included, and its positions (a kernel model's ``support_``) count the rows of
        weight > 0: renumbering them to the file's rows would keep a position per row."""
        for X, y in stream():
            X, y = self._validate_Xy(X, y, reset=False)
            check_known(y, self.classes_)
            fixed = getattr(self, "_class_weight", None)
            fixed = None if fixed is None else np.array(fixed)
            X, y, weights, _, per_class, _ = self._weighed(X, y, None, self.classes_, fixed)
            if fixed is None:
                self._class_weight = as_stored(per_class)
            self._note_order(y)
            yield X, y, weights

    def _n_changes(self):
        return self.n_corrections_
