"""What an estimator's algorithm is, as data: one :class:`Traits` value per estimator.

The estimators share their validation, passes, checkpoints and streams; where they
differ is what the algorithm learns and how its passes end. That is said here, once per
estimator, in one value (``_traits``) that the shared code reads, rather than by a flag
of its own set on each class and overridden down the hierarchy.
"""

from dataclasses import dataclass


@dataclass(frozen=True)
class Traits:
    """The traits of an online algorithm that the shared fit, checks and units read.

    Parameters
    ----------
    state : str
        The attribute that holds the learned state once fitted (``"_states"``, one per
        binary problem, for the linear forms; ``"_kstate"`` for the kernel store).
    state_class : type or None
        The class of each binary problem's state of a linear form (what a loaded
        model's states are checked to be); None for the kernel forms.
    weight_degree : int
        How the weights follow the scale of the instances, ``w(c x) = c^k w(x)``: 1 for
        the sums of instances of the Perceptrons and ALMA, -1 for the functional margin
        of 1 of ROMMA and PUMMA (their ``w . x`` does not change).
    normalises : bool
        Whether the update rule works on normalised instances (ALMA's ``x / ||x||``,
        Figure 1 of Gentile 2001): the model's units are then those of the data.
    forgets : bool
        Whether an update can forget the hypothesis (ROMMA's, which may zero its
        coefficients), so that a kernel state keeps where each hypothesis starts.
    own_epochs : bool
        Whether the algorithm decides its epochs (PUMMA and the margin Perceptron run
        until an epoch makes no update, from a progress record that checkpoints hold);
        ``n_iter_`` is then its own count, not the passes of fit.
    noise_ratio : float or None
        With ``tol``, the passes of fit also end after a pass (the second or later) in
        which every problem made at least this share of its first pass's corrections
        (:func:`marginkit._passes.noisy`); None: no such rule.
    cache_keys : tuple of str
        The keys a checkpoint's progress may add (the kernel estimators' caches).
    """

    state: str = "_states"
    state_class: type | None = None
    weight_degree: int = 1
    normalises: bool = False
    forgets: bool = False
    own_epochs: bool = False
    noise_ratio: float | None = None
    cache_keys: tuple = ()
