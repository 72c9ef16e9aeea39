"""Where marginkit's warnings point: at the user's call."""

import os
import sys

_PACKAGE = os.path.dirname(os.path.abspath(__file__))


def user_level():
    """The ``stacklevel`` at which :func:`warnings.warn`, called by the caller of this
    function, names the first frame outside marginkit and scikit-learn's ``fit``
    wrapper (``sklearn/base.py``): the user's call, whichever of the estimator's
    paths led to the warning."""
    frame = sys._getframe(1)
    level = 1
    while frame is not None:
        name = os.path.abspath(frame.f_code.co_filename)
        inside = name.startswith(_PACKAGE + os.sep) or name.endswith(
            os.path.join("sklearn", "base.py")
        )
        if not inside:
            return level
        frame = frame.f_back
        level += 1
    return level
