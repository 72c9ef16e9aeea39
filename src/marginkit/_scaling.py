"""The scale of the instances: the powers of two the compiled passes learn in.

Scaling by a power of two is exact, and every algorithm here makes the same
corrections at any scale of its instances, so the estimators hand the compiled passes
the instances divided by a power of two that keeps their products inside float64, and
give their results back in the units of the data.
"""

import numpy as np

from ._core.arrays import move_to, namespace, to_numpy
from ._rows import exponent_of, power_of_two_scaled

#: Instances whose largest entry lies outside [2^-UNIT_RANGE, 2^UNIT_RANGE] are scaled
#: by a power of two into [0.5, 1) before an algorithm that normalises them sees them
#: (:func:`unit_scaled`)
UNIT_RANGE = 64


def unit_scaled(X, aug):
    """``(X 2^-e, aug 2^-e)``: the instances ``(x, aug)`` scaled by the power of two that
    brings their largest entry into [0.5, 1) when it lies outside [2^-UNIT_RANGE,
    2^UNIT_RANGE] (:func:`marginkit._rows.power_of_two_scaled`); else as given.

    An algorithm that normalises its instances (ALMA) sees the same ``x / ||x||`` either
    way, but its products ``w . x`` neither overflow (features near 1e300) nor fall
    into subnormal numbers (near 1e-300).
    """
    X, e = power_of_two_scaled(X, aug, unless_within=UNIT_RANGE)
    return X, float(np.ldexp(aug, -e))


#: The largest ||x||^2, in the model's units, that an algorithm that does not normalise
#: takes: sums of up to 1e50 updates of such instances still fit in a float
MAX_SQUARED_NORM = 1e250


def in_model_units(lam, shift):
    """``lam`` in the model's units, whose products of instances are ``2^shift`` times
    smaller than the data's: a 2-norm soft margin (PUMMA's, ROMMA's) adds it to ``x . x``
    (or ``K(x, x)``), so it scales as the products of instances do. A ValueError where
    it would swamp them."""
    with np.errstate(over="ignore"):
        scaled = float(np.ldexp(lam, -shift)) if lam > 0 else 0.0
    if scaled > MAX_SQUARED_NORM:
        raise ValueError(
            f"lam={lam} is too large for the scale of the features: "
            + (f"about {scaled:.3g}" if np.isfinite(scaled) else "more than 1e308")
            + " times the largest squared norm of an instance, a soft margin "
            "that no longer sees the data. Scale lam with the square of the features."
        )
    return scaled


def other_scale(name, which, measure):
    """The ValueError of rows too far from the scale of a model's first fit (of the
    estimator ``name``) to learn from or score (``measure``: how far)."""
    return ValueError(
        f"The features are too {which} for {name}: {measure} the scale "
        "of the data this model was first fit on, and products of such instances "
        "leave float64. Scale these features as those of the first fit, or fit anew "
        "on them."
    )


def exponent_for(radius, name):
    """The power of two that an estimator (``name``) divides its instances by, for data
    whose largest p-norm is ``radius``: none when that lies within [2^-UNIT_RANGE,
    2^UNIT_RANGE]. A ValueError where the norm overflowed, or is subnormal."""
    if not np.isfinite(radius):
        raise ValueError(
            f"The features are too large for {name}: the norm of an "
            "instance overflows float64. Divide the features by a common factor."
        )
    if 0.0 < radius < 2.0**-1000:
        raise ValueError(
            f"The features are too small for {name}: the largest norm "
            f"of an instance is {radius:.3g}, a subnormal number, whose digits float64 "
            "has already lost. Multiply the features by a common factor."
        )
    return exponent_of(radius, UNIT_RANGE)


def signs_kept(values, scores):
    """``values`` (``scores`` of the model's units brought to the data's by a power of
    two) made to agree with ``scores`` as the estimators' ``predict`` reads them.

    Scaling by a power of two keeps every sign and order but where it leaves float64.
    There, a value that underflowed to 0 becomes the smallest subnormal number of its
    score's sign (never 0 where the score is not: a zero would say neither class), and
    one that overflowed to infinity the largest finite number of its sign (finite, so
    that differences and ratios of values stay numbers). In a row of several classes
    where that rounding made another class's value equal the best one's, the best one
    moves up by one unit in the last place when positive (the largest finite number
    moves to infinity), the others down by one when it is not, so that each keeps its
    sign and the row's argmax is the scores'. Works on arrays of any namespace (the
    adjustments are made on the host).
    """
    if values is scores:
        return values
    xp, device = namespace(values)
    out = np.array(to_numpy(values), copy=True)
    ref = np.asarray(to_numpy(scores))
    info = np.finfo(out.dtype)
    lost = (out == 0) & (ref != 0)
    out[lost] = np.copysign(info.smallest_subnormal, ref[lost])
    far = np.isinf(out) & np.isfinite(ref)
    out[far] = np.copysign(info.max, ref[far])
    if out.ndim == 2 and out.shape[1] > 1:
        best = ref.argmax(axis=1)
        for i in np.flatnonzero(out.argmax(axis=1) != best):
            v = out[i, best[i]]
            if v > 0:
                with np.errstate(over="ignore"):  # the largest finite number: to inf
                    out[i, best[i]] = np.nextafter(v, np.inf)
            else:
                tied = out[i] == v
                tied[best[i]] = False
                out[i, tied] = np.nextafter(v, -np.inf)
    return out if xp is None else move_to(out, xp=xp, device=device)
