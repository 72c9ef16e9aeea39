"""PUMMA's epochs: the driver that PUMMAClassifier and KernelPUMMAClassifier share.

PUMMA (Ishibashi, Hatano and Takeda, COLT 2008) makes epochs until one makes no update
(the setting of its margin guarantee), or ``tol`` ends them on the growth of the
hypothesis's norm, or ``max_iter`` does: the loop over the epochs from a checkpoint's
progress, the end of an epoch (progress, callback), and the end of a fit (``converged_``
and the warning of epochs that ran out).
"""

import warnings

from sklearn.exceptions import ConvergenceWarning

from . import _checks as check
from ._order import epoch_order
from ._passes import GROWTH_KEY, PASS_KEYS, WHY_KEY, ended_early
from ._utils import user_level


def end_of_fit(est, r):
    """``converged_``, and the warning of epochs that ran out: before an epoch without
    update (``tol=None``), or while the updates still fell."""
    est._update_counts()
    est.converged_ = bool(r["done"])
    if est.converged_:
        est._stopped_by = "quiet"
        return
    if est.tol is None:
        est._stopped_by = "max_iter"
        warn_not_converged(est)
    else:
        est._end_of_passes({**r, "epoch": est.n_epochs_})


def epochs_until_quiet(est, n, step, save, run_chunk, callback, rows=None):
    """PUMMA's epochs: until one makes no update (or ``tol`` ends them, or
    ``max_iter``), from ``est._resume``; ``callback(est, epoch)`` after each.

    ``run_chunk(order, lo, hi)`` trains on ``order[lo:hi]`` and returns the updates and
    conflicts it made; each epoch's order shuffles ``rows`` (:func:`epoch_order`); with
    ``save``, a checkpoint follows every ``step`` trials and every epoch.
    """
    r = est._resume
    if "ended" not in r:
        # a checkpoint written before tol: its epoch so far counts from here
        r.update(est._fresh_passes())
    with est._progress(est._max_iter, "epoch") as bar:
        # every one-vs-rest problem sees the same epochs, until none updates
        while not (r["done"] or r["ended"]) and est.n_epochs_ < est._max_iter:
            if r["pos"] == 0:  # a new epoch
                r["order"] = epoch_order(r["rng"], n, est.shuffle, rows)
                r["changes"] = 0
            lo = r["pos"]
            while lo < n:
                hi = min(n, lo + step)
                r["changes"] += run_chunk(r["order"], lo, hi)
                lo = hi
                if hi < n and save is not None:
                    r["pos"] = hi
                    est._update_counts()
                    save()
            est.n_epochs_ += 1
            r["pos"] = 0
            epoch_ends(est, r, n, r["changes"], bar, callback)
            if save is not None:
                est._update_counts()
                save()
        ended_early(bar, est._max_iter - est.n_epochs_)


def epoch_ends(est, r, n, changes, bar, callback):
    """An epoch over ``n`` rows made ``changes`` (updates and conflicts): whether the
    epochs are done (none) or ended by ``tol``; the progress bar and the callback."""
    est._pass_ends(r, n)
    r["done"] = changes == 0
    bar.update(1)
    if callback is not None:
        est._update_counts()
        callback(est, est.n_epochs_ - 1)


def end_of_partial_fit(est, changes):
    """The counts after a call of partial_fit, one epoch, and ``converged_``: whether it
    made no update (nor skipped a trial as a conflict)."""
    est.n_epochs_ += 1
    est.converged_ = bool(changes == 0)
    est._update_counts()


#: the keys a checkpoint's progress of PUMMA's epochs may hold besides its own
PROGRESS_OPTIONAL = ("order", "changes", *PASS_KEYS, GROWTH_KEY, WHY_KEY)


def check_tol_record(est, resume):
    """The ``tol`` record of a checkpoint's progress (none before tol)."""
    present = [key for key in PASS_KEYS if key in resume]
    if present:
        missing = sorted(set(PASS_KEYS) - set(present))
        if missing:
            check.fail("_resume", f"lacks {', '.join(missing)}")
        est._check_passes(resume)


def warn_not_converged(est):
    warnings.warn(
        f"{type(est).__name__} did not converge within max_iter={est._max_iter} epochs: "
        f"an epoch still made updates. The data may not be separable (lam={est.lam}); a "
        "soft margin lam > 0 makes any data separable. Increase max_iter or lam.",
        ConvergenceWarning,
        stacklevel=user_level(),
    )
