"""When the passes of a fit end: ``max_iter`` (and its former names), and ``tol``.

A fit's progress is a dict ``r``: the epoch and position reached, and the record
``tol`` decides on (:data:`PASS_KEYS`). The estimators' loops ask their
:class:`Schedule` for each epoch still to make (:meth:`Schedule.epochs`) and tell it
where they got (:meth:`Schedule.reached`).
"""

import warnings
from numbers import Integral, Real

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils._param_validation import Hidden, Interval, StrOptions

from . import _checks as check
from ._warnings import user_level

#: The constraint of a former name of ``max_iter`` (deprecated in 0.2, removed in 0.3).
RENAMED = [Interval(Integral, 1, None, closed="left"), Hidden(StrOptions({"deprecated"}))]


#: ``tol``: when fit's passes end (see :meth:`Schedule.pass_ends`)
TOL = [Interval(Real, 0, None, closed="left"), None]
#: the keys of a fit's progress that ``tol`` decides on (:meth:`Schedule.fresh`)
PASS_KEYS = ("at_start", "fewest", "improving", "ended")
#: the key of the passes in a row that did not improve (``n_iter_no_change``), which
#: checkpoints written before it lack (and estimators without it never write)
SINCE_KEY = "since"
#: the key of the first pass's corrections (``Traits.noise_ratio``), which checkpoints
#: written before it lack
FIRST_KEY = "first"
#: the key of the size each problem's hypothesis had after the last pass, where the
#: passes end on its growth (``Schedule.growth``), which other estimators never write
GROWTH_KEY = "growth"
#: the key of the rule that ended the passes (one of :data:`STOPPED`), written with
#: ``"ended"``; checkpoints written before it lack it
WHY_KEY = "why"
#: why the passes of the last fit ended (``_stopped_by``): all ``max_iter`` made; a pass
#: without correction; ``tol`` on the corrections; ``tol`` on the hypothesis's growth;
#: the kernel estimators' noise rule (``Traits.noise_ratio``); the rows held out
#: (``early_stopping``)
STOPPED = ("max_iter", "quiet", "tol", "growth", "noise", "early_stopping")


def noisy(made, first, ratio):
    """The noise rule of the kernel estimators (``Traits.noise_ratio``): whether every
    problem made at least ``ratio`` times its corrections of the first pass (some made
    any), the mark of data whose errors are noise, which more passes only memorise."""
    return bool(np.any(first)) and bool(np.all(made >= ratio * first))


def still_improving(made, fewest, tol, n):
    """``tol``'s rule: whether the corrections a pass over ``n`` rows ``made`` (of each
    problem) fell below the ``fewest`` of any earlier pass by more than ``tol * n`` in
    some problem (any fall when ``tol`` is None), and were not none."""
    margin = 0.0 if tol is None else tol * n
    return bool(np.any(made < fewest - margin)) and bool(np.any(made))


def tol_ends(r, made, tol, n, patience=1):
    """``tol``'s rule after a pass over ``n`` rows that ``made`` these corrections (of each
    problem), on the record ``r`` of the passes before (its ``"fewest"``, and its
    ``"since"`` where ``patience`` > 1, are brought up to date; ``"improving"`` is set):
    whether the passes end, after ``patience`` passes in a row that did not improve
    (:func:`still_improving`) or a pass without any correction. Never with ``tol``
    None."""
    r["improving"] = still_improving(made, r["fewest"], tol, n)
    r["fewest"] = np.minimum(r["fewest"], made)
    return _patience_ends(r, made, tol, patience)


def _patience_ends(r, made, tol, patience):
    """Whether the passes end, ``r["improving"]`` being set for the last: after
    ``patience`` passes in a row that did not improve (counted in ``r``), or a pass
    without any correction; never with ``tol`` None."""
    if tol is None:
        return False
    if patience == 1:
        return not r["improving"]
    r[SINCE_KEY] = 0 if r["improving"] else r.get(SINCE_KEY, 0) + 1
    return r[SINCE_KEY] >= patience or not np.any(made)


def growth_ends(r, size, made, tol, patience=1):
    """``tol``'s rule on a size that only grows and is bounded (``Schedule.growth``), after
    a pass that left it at ``size`` (of each problem) and made these corrections: the
    pass improved when some problem's grew by more than ``tol`` times itself; the
    passes end after ``patience`` passes in a row that did not, or after a pass without
    any correction. Never with ``tol`` None. ``r``'s growth record, its fewest
    corrections and its count of passes that did not improve are brought up to date;
    ``"improving"`` is set."""
    r["fewest"] = np.minimum(r["fewest"], made)
    before = r.get(GROWTH_KEY)
    r[GROWTH_KEY] = np.asarray(size, dtype=np.float64)
    r["improving"] = before is None or bool(np.any(size > before * (1.0 + (tol or 0.0))))
    return _patience_ends(r, made, tol, patience)


def ended_early(bar, skipped):
    """A progress bar whose loop skipped ``skipped`` of the steps of its total (converged
    early): its total shrinks to what is left to do, so that it ends full."""
    if skipped > 0 and bar.total is not None:
        bar.total -= skipped
        bar.refresh()


#: The parameters added after models were first saved, with the value that does what a
#: model saved before them did (tol: it made its max_iter passes; no budget)
ADDED_PARAMS = {
    "tol": None,
    "budget": None,
    "budget_rule": "project",
    "early_stopping": False,
    "validation_fraction": 0.1,
    "n_iter_no_change": 2,
    "class_weight": None,
    "horizon": None,
}


def former_name(params, constraints):
    """``(name, value)`` of passes given under a former name of ``max_iter`` (a parameter
    whose constraint is :data:`RENAMED`, taken until marginkit 0.3 with a FutureWarning)
    among an estimator's ``params`` (its attributes), or None."""
    for old, allowed in constraints.items():
        if allowed is RENAMED:
            value = params.get(old, "deprecated")
            if not (isinstance(value, str) and value == "deprecated"):
                return old, value
    return None


def warn_renamed(former, max_iter):
    """The FutureWarning of passes given under a former name (``former``: its name and
    value) of ``max_iter``."""
    old, value = former
    warnings.warn(
        f"{old} was renamed max_iter in marginkit 0.2 and will be removed in 0.3; "
        f"pass max_iter={value!r} instead (max_iter={max_iter!r} is ignored "
        "while it is set).",
        FutureWarning,
        stacklevel=user_level(),
    )


def with_added_params(state, names, added, constraints):
    """The pickled ``state`` of an estimator (its attributes) written before some of its
    parameters ``names`` existed: each missing one of ``added`` takes the value that does
    what the model did then, and passes given under a former name of ``max_iter``
    (before it existed) move to it."""
    state = dict(state)
    for name, before in added.items():
        if name in names and name not in state:
            state[name] = before
    for old, allowed in constraints.items():
        if allowed is RENAMED and "max_iter" not in state and old in state:
            state["max_iter"], state[old] = state[old], "deprecated"
    return state


def check_passes(r, n_problems):
    """The ``tol`` record of a loaded checkpoint's progress ``r`` of ``n_problems``
    binary problems."""
    C = n_problems
    check.array(r["at_start"], "_resume['at_start']", np.int64, (C,), within=(0, 2**62))
    fewest = check.array(r["fewest"], "_resume['fewest']", np.float64, (C,))
    if np.any(np.isnan(fewest) | (fewest < 0)):
        check.fail("_resume['fewest']", "must hold counts of corrections, or inf")
    check.flag(r["improving"], "_resume['improving']")
    check.flag(r["ended"], "_resume['ended']")
    if r.get(SINCE_KEY) is not None:
        check.integer(r[SINCE_KEY], "_resume['since']", 0, 2**62)
    if r.get(FIRST_KEY) is not None:
        check.array(r[FIRST_KEY], "_resume['first']", np.int64, (C,), within=(0, 2**62))
    if r.get(WHY_KEY) is not None and r[WHY_KEY] not in STOPPED:
        check.fail("_resume['why']", f"must be one of {', '.join(STOPPED)}")
    if r.get(GROWTH_KEY) is not None:
        growth = check.array(r[GROWTH_KEY], "_resume['growth']", np.float64, (C,))
        if not np.all(np.isfinite(growth) & (growth >= 0)):
            check.fail("_resume['growth']", "must hold sizes, finite and >= 0")


class Schedule:
    """When the passes of a fit end, and why.

    The rules: ``max_iter`` passes; ``tol`` on the corrections, or on the growth of the
    hypothesis where the learner measures one, after ``patience`` passes in a row that
    do not improve; the noise rule (``noise_ratio``); a pass without update
    (``quiet_ends``); the rows held out (``validation``, early stopping), which then
    decide in place of the others. The estimator makes one for its passes
    (``_schedule``), from its parameters, its :class:`~marginkit._traits.Traits` and
    two measures of its learning: ``corrections()``, each binary problem's corrections
    so far, and ``growth()``, each problem's size or None.

    The progress of the passes is a dict ``r`` (the epoch and position reached, and the
    record ``tol`` decides on, :data:`PASS_KEYS`), which the schedule brings up to date
    and a checkpoint holds: the schedule keeps nothing of its own.
    """

    def __init__(
        self,
        name,
        max_iter,
        tol,
        patience,
        n_problems,
        corrections,
        growth,
        *,
        noise_ratio=None,
        quiet_ends=False,
        validation=None,
    ):
        self.name, self.max_iter, self.tol = name, max_iter, tol
        self.patience, self.n_problems = patience, n_problems
        self.corrections, self.growth = corrections, growth
        self.noise_ratio, self.quiet_ends = noise_ratio, quiet_ends
        self.validation = validation

    def fresh(self):
        """How a fit's passes went, for ``tol``: each problem's corrections when the
        current pass began, the fewest any finished pass made, whether the last one still
        made fewer by more than ``tol * n``, and whether the passes ended."""
        return {
            "at_start": self.corrections(),
            "fewest": np.full(self.n_problems, np.inf),
            "improving": True,
            "ended": False,
        }

    def progress(self, resume=None):
        """The progress passes go on from: a checkpoint's, or a fresh one."""
        return resume if resume is not None else {"epoch": 0, "pos": 0, **self.fresh()}

    @staticmethod
    def epochs(r, n_epochs):
        """``(epoch, first position)`` of each epoch still to make from progress ``r``."""
        while r["epoch"] < n_epochs and not r["ended"]:
            yield r["epoch"], r["pos"]

    def reached(self, r, epoch, pos, n):
        """Progress ``r`` reached row ``pos`` of ``n`` in ``epoch``; at a pass's end, the
        next one (or the end of the passes)."""
        if pos < n:
            r["epoch"], r["pos"] = epoch, pos
        else:
            self.pass_ends(r, n)
            r["epoch"], r["pos"] = epoch + 1, 0

    def pass_ends(self, r, n):
        """Record a finished pass over ``n`` rows in ``r``, and whether the passes end
        there (``r["ended"]``)."""
        counts = self.corrections()
        made = counts - r["at_start"]
        tol = self.tol
        growth = self.growth()
        if growth is None:
            r["ended"] = tol_ends(r, made, tol, n, self.patience)
            why = "tol"
        else:
            # the hypothesis's size decides, in place of the corrections
            r["ended"] = growth_ends(r, growth, made, tol, self.patience)
            why = "growth"
        r["at_start"] = counts
        quiet = not np.any(made)
        if self.validation is not None:
            # early stopping: the held-out rows decide, in place of the corrections
            r["ended"] = self.validation.after_pass() or quiet
            r["improving"] = False
            _ended_by(r, "quiet" if quiet else "early_stopping")
            return
        ratio = self.noise_ratio
        if ratio is not None and growth is None:
            # (a soft margin makes the data separable: its updates fall in no set way)
            first = r.get(FIRST_KEY)
            if r.get("epoch", 0) == 0:
                r[FIRST_KEY] = made
            elif first is not None and tol is not None and not r["ended"]:
                # (a checkpoint written before the rule has no first pass's record)
                if noisy(made, first, ratio):
                    # ended by a rule, not by running out: no more passes would help
                    r["ended"], r["improving"], why = True, False, "noise"
        if self.quiet_ends and quiet:
            r["ended"] = True  # every later pass would make no update either
        _ended_by(r, "quiet" if quiet else why)

    def end(self, r):
        """Why the passes of progress ``r`` ended (one of :data:`STOPPED`), with the
        warning of passes that ran out while they still improved."""
        why = r.get(WHY_KEY, "tol") if r["ended"] else "max_iter"
        if self.quiet_ends and self.tol is None:
            if not np.all(r["fewest"] == 0) and r["epoch"] == self.max_iter:
                # (a problem's first pass without update is followed by none with one)
                warnings.warn(
                    f"{self.name} made no pass without update within "
                    f"max_iter={self.max_iter} passes: its margin guarantee (at least "
                    "1 - delta times the best margin) holds after one. The data may not "
                    "be separable; increase max_iter, or check the data.",
                    ConvergenceWarning,
                    stacklevel=user_level(),
                )
            return why
        ran_out = r["epoch"] == self.max_iter > 1 and r["improving"]
        if ran_out and self.tol is not None:
            what = (
                "the hypothesis still grew in the last of max_iter={} passes (by more "
                "than tol times itself)"
                if r.get(GROWTH_KEY) is not None
                else "the corrections still fell in the last of max_iter={} passes (by more "
                "than tol * n_samples)"
            )
            warnings.warn(
                f"{self.name}: {what.format(self.max_iter)}; more "
                "passes may fit the data better. Increase max_iter, or set tol=None to "
                "make max_iter passes without this check.",
                ConvergenceWarning,
                stacklevel=user_level(),
            )
        return why


def _ended_by(r, why):
    """Record in progress ``r`` which rule ended the passes, where they ended."""
    if r["ended"]:
        r[WHY_KEY] = why
