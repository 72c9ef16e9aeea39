"""The scale of the instances: the powers of two the compiled passes learn in.

Scaling by a power of two is exact, and every algorithm here makes the same
corrections at any scale of its instances, so the estimators hand the compiled passes
the instances divided by a power of two that keeps their products inside float64, and
give their results back in the units of the data.
"""

import numpy as np

from ._utils import exponent_of, power_of_two_scaled, times_power_of_two

#: Instances whose largest entry lies outside [2^-UNIT_RANGE, 2^UNIT_RANGE] are scaled
#: by a power of two into [0.5, 1) before an algorithm that normalises them sees them
#: (:func:`unit_scaled`)
UNIT_RANGE = 64


def unit_scaled(X, aug):
    """``(X 2^-e, aug 2^-e)``: the instances ``(x, aug)`` scaled by the power of two that
    brings their largest entry into [0.5, 1) when it lies outside [2^-UNIT_RANGE,
    2^UNIT_RANGE] (:func:`marginkit._utils.power_of_two_scaled`); else as given.

    An algorithm that normalises its instances (ALMA) sees the same ``x / ||x||`` either
    way, but its products ``w . x`` neither overflow (features near 1e300) nor fall
    into subnormal numbers (near 1e-300).
    """
    X, e = power_of_two_scaled(X, aug, unless_within=UNIT_RANGE)
    return X, float(np.ldexp(aug, -e))


class Scaled:
    """The units of a model: the power of two its instances are divided by, and the
    conversions of its numbers back to the units of the data (a mixin of
    :class:`marginkit._base.OnlineClassifier`)."""

    #: the largest ||x||^2, in the model's units, that an algorithm that does not
    #: normalise takes: sums of up to 1e50 updates of such instances still fit in a float
    MAX_SQUARED_NORM = 1e250

    #: the power of two the instances are divided by before the compiled passes see
    #: them (``_model_units``): 0 for models written before it
    _exponent = 0

    def _product_shift(self):
        """The power of two by which the products of instances (``x . y``, or the kernel
        values) in the units of the data exceed those in the model's units."""
        return 2 * self._exponent

    def _data_units(self, a, degree):
        """``a`` of the model's units, of ``degree`` in the instances (1 for a margin, 2
        for a product of two), in those of the data: times ``2^(degree shift / 2)``
        (``_product_shift``), where ``a`` is; 0 or inf where it leaves float64."""
        with np.errstate(over="ignore", under="ignore"):
            return times_power_of_two(a, degree * self._product_shift() // 2)

    def _model_lam(self):
        """``lam`` in the model's units (``_model_units``): a 2-norm soft margin (PUMMA's,
        ROMMA's) adds it to ``x . x`` (or ``K(x, x)``), so it scales as the products of
        instances do. A ValueError where it would swamp them."""
        with np.errstate(over="ignore"):
            lam = float(np.ldexp(self.lam, -self._product_shift())) if self.lam > 0 else 0.0
        if lam > self.MAX_SQUARED_NORM:
            raise ValueError(
                f"lam={self.lam} is too large for the scale of the features: "
                + (f"about {lam:.3g}" if np.isfinite(lam) else "more than 1e308")
                + " times the largest squared norm of an instance, a soft margin "
                "that no longer sees the data. Scale lam with the square of the features."
            )
        return lam

    def _other_scale(self, which, measure):
        """The ValueError of rows too far from the scale of a model's first fit to
        learn from or score (``measure``: how far)."""
        return ValueError(
            f"The features are too {which} for {type(self).__name__}: {measure} the scale "
            "of the data this model was first fit on, and products of such instances "
            "leave float64. Scale these features as those of the first fit, or fit anew "
            "on them."
        )

    def _exponent_of(self, radius):
        """The power of two :meth:`_model_units` divides by, for data whose instances'
        largest p-norm is ``radius``: none when that lies within [2^-UNIT_RANGE,
        2^UNIT_RANGE]."""
        if not np.isfinite(radius):
            raise ValueError(
                f"The features are too large for {type(self).__name__}: the norm of an "
                "instance overflows float64. Divide the features by a common factor."
            )
        if 0.0 < radius < 2.0**-1000:
            raise ValueError(
                f"The features are too small for {type(self).__name__}: the largest norm "
                f"of an instance is {radius:.3g}, a subnormal number, whose digits float64 "
                "has already lost. Multiply the features by a common factor."
            )
        return exponent_of(radius, UNIT_RANGE)
