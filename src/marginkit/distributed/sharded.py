"""The exact kernel estimators with their support vectors sharded over a dask cluster."""

from __future__ import annotations

from numbers import Integral

from sklearn.base import _fit_context, clone
from sklearn.utils._param_validation import HasMethods, Interval

from .._core.shards import Sharded, products_on
from .._kernel_base import KernelOnlineClassifier
from ..alma import KernelALMAClassifier
from ..perceptron import KernelPerceptronClassifier
from ..pumma import KernelPUMMAClassifier
from ..romma import KernelROMMAClassifier
from .cluster import ShardPlacer, active_client, cores_left, live_workers
from .dask_predict import DaskMetaEstimator
from .inputs import on_driver

#: The kernel estimators :class:`ShardedKernelClassifier` trains: those of kernel
#: ALMA's exact engine (:mod:`marginkit._core.kernel`)
SHARDED = (KernelALMAClassifier, KernelPerceptronClassifier, KernelROMMAClassifier)


class ShardedKernelClassifier(DaskMetaEstimator):
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
        client = active_client(who)
        workers = live_workers(client, who)
        n = len(workers) if self.n_shards is None else self.n_shards
        spawn = ShardPlacer(client, sorted(workers), who)
        return Sharded(spawn, n, spawn.lost, cores_left(workers))

    def _call(self, est, method, *args, **kwargs):
        """``est.method(*args, **kwargs)`` with its margin products on the shards."""
        shards = self._shards(est)
        try:
            with products_on(shards):
                getattr(est, method)(*args, **kwargs)
        finally:
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
        return self._call(est, "fit", on_driver(X, who), on_driver(y, who), **fit_params)

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
        X, y = on_driver(X, who), on_driver(y, who)
        return self._call(est, "partial_fit", X, y, classes=classes)
