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

from .dask_predict import decision_function, evaluate, predict
from .mixing import MIXED, MixingClassifier
from .sharded import SHARDED, ShardedKernelClassifier

__all__ = [
    "MIXED",
    "SHARDED",
    "MixingClassifier",
    "ShardedKernelClassifier",
    "decision_function",
    "evaluate",
    "predict",
]
