"""The cluster under a distributed fit: the client, its live workers, and the placing of
the kernel store's shards on them.
"""

from __future__ import annotations

import gc
import os
import socket

from .._core.shards import Shard
from .dask_predict import dask_modules


def active_client(who):
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


def cores_left(workers):
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
    dask, _ = dask_modules()
    from dask.utils import parse_timedelta

    wait = dask.config.get("distributed.comm.timeouts.connect")
    return wait, parse_timedelta(wait, default="s")


def live_workers(client, who, during=""):
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


#: How many times :class:`ShardPlacer` places a shard on a worker that the scheduler then
#: does not start it on (a worker lost between the two) before it gives up
PLACE_TRIES = 3


class ShardPlacer:
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
            live = sorted(live_workers(self.client, self.who, " while it made a shard"))
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
