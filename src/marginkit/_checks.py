"""Checks of loaded values, shared by the estimators' ``_check_loaded`` and the checks of
the engines' states (:mod:`marginkit._state_checks`).

A model file is data from anywhere, and the compiled passes index their arrays without
bounds checks: before any of them runs, every array of a loaded model is checked for
its type, dtype and shape, every index against the size it addresses and every count
against its array. Each check raises :class:`~marginkit.persistence.UntrustedFileError`
(a ``ValueError``) naming the attribute, as ``where``: ``_states[0].b_indices`` for
instance.
"""

from numbers import Integral, Real

import numpy as np

from ._registry import UntrustedFileError

#: The length of a Mersenne Twister's key (numpy's MT19937)
MT_KEY_LENGTH = 624


def fail(where, message):
    """Raise the error of an attribute ``where`` that is not what it must be."""
    raise UntrustedFileError(f"{where} {message}")


def attributes(obj, where, required, optional=()):
    """``obj`` has the attributes ``required``, perhaps some of ``optional``, no others
    (``obj`` a dict: the keys)."""
    names = set(obj) if isinstance(obj, dict) else set(vars(obj))
    missing = sorted(set(required) - names)
    if missing:
        fail(where, f"lacks {', '.join(missing)}")
    extra = sorted(names - set(required) - set(optional))
    if extra:
        fail(where, f"has attributes that marginkit does not write: {', '.join(extra)}")


def instance(obj, where, cls):
    """``obj`` is exactly of class ``cls`` (no subclass)."""
    if type(obj) is not cls:
        fail(where, f"must be of type {cls.__name__}, got {type(obj).__name__}")
    return obj


def array(a, where, dtype, shape, *, finite=False, within=None):
    """``a`` is a plain, C-ordered, writeable numpy array of ``dtype`` and ``shape``.

    ``shape`` is a tuple whose entries are lengths, or None for any length. With
    ``finite``, its values are finite; with ``within=(lo, hi)``, in ``[lo, hi)``.
    """
    dtype = np.dtype(dtype)
    if type(a) is not np.ndarray:
        fail(where, f"must be a numpy array of {dtype}, got {type(a).__name__}")
    if a.dtype != dtype:
        fail(where, f"must be an array of {dtype}, got {a.dtype}")
    if a.ndim != len(shape) or any(
        n is not None and n != m for n, m in zip(shape, a.shape, strict=True)
    ):
        want = "(" + ", ".join("any" if n is None else str(n) for n in shape) + ")"
        fail(where, f"must have shape {want}, got {a.shape}")
    if not (a.flags.c_contiguous and a.flags.writeable and a.flags.aligned):
        fail(where, "must be a C-contiguous, writeable, aligned array")
    if finite and not np.all(np.isfinite(a)):
        fail(where, "holds values that are not finite")
    if within is not None:
        _within(a, where, *within)
    return a


def _within(a, where, lo, hi):
    """Every value of the integer array ``a`` is in ``[lo, hi)``."""
    if a.size:
        low, high = a.min(), a.max()
        if low < lo or high >= hi:
            bad = low if low < lo else high
            fail(where, f"holds {int(bad)}, outside [{lo}, {hi})")
    return a


def integer(x, where, lo=None, hi=None):
    """``x`` is an integer (not a bool) in ``[lo, hi]``; returned as a Python int."""
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, Integral):
        fail(where, f"must be an integer, got {type(x).__name__}")
    x = int(x)
    if lo is not None and x < lo:
        fail(where, f"must be >= {lo}, got {x}")
    if hi is not None and x > hi:
        fail(where, f"must be <= {hi}, got {x}")
    return x


def real(x, where, lo=None, *, positive=False):
    """``x`` is a finite real number (not a bool), at least ``lo``, positive if asked."""
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, Real):
        fail(where, f"must be a real number, got {type(x).__name__}")
    x = float(x)
    if not np.isfinite(x):
        fail(where, f"must be finite, got {x}")
    if (lo is not None and x < lo) or (positive and x <= 0.0):
        fail(where, f"must be {'> 0' if positive else f'>= {lo}'}, got {x}")
    return x


def flag(x, where):
    """``x`` is a bool (Python's or numpy's)."""
    if not isinstance(x, (bool, np.bool_)):
        fail(where, f"must be a bool, got {type(x).__name__}")
    return bool(x)


def equal(x, where, expected):
    """``x`` equals ``expected`` (None: is None; a number or string: equals it)."""
    if expected is None:
        same = x is None
    else:
        # a bool is no number here (True == 1 in Python)
        flags = isinstance(x, (bool, np.bool_)), isinstance(expected, (bool, np.bool_))
        same = not isinstance(x, np.ndarray) and flags[0] == flags[1] and bool(x == expected)
    if not same:
        fail(where, f"must be {expected!r}, got {x!r}")
    return x


def mt_state(keys, pos, has_gauss, gauss, where):
    """A Mersenne Twister state numpy's RandomState can take: numpy does not check the
    position, and reads its key at it."""
    array(keys, f"{where} key", np.uint32, (MT_KEY_LENGTH,))
    integer(pos, f"{where} position", 0, MT_KEY_LENGTH)
    integer(has_gauss, f"{where} has_gauss", 0, 1)
    real(gauss, f"{where} cached gaussian")


def random_state(rng, where):
    """``rng`` is a numpy RandomState on the Mersenne Twister (as the loader builds it)."""
    instance(rng, where, np.random.RandomState)
    return rng
