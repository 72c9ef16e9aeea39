"""The compiled conversion of a number's text, exact: Clinger's fast path, else the C
library's strtod, as Python's float() and int() read numbers.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, types

from .._core import NUMBA_INLINE, NUMBA_OPTS

_strtod = types.ExternalFunction("strtod", types.float64(types.voidptr, types.voidptr))

INT32_MAX = np.iinfo(np.int32).max
INT64_MAX = np.iinfo(np.int64).max


# 10**0 .. 10**22: every one exactly a double
POW10 = np.array([10.0**k for k in range(23)])


NUMBER_OK = 0


NUMBER_BAD = 1


NUMBER_PYTHON = 2  # valid, but left to Python's float()


@njit(**NUMBA_INLINE)
def is_digit(c):
    return 48 <= c <= 57


@njit(**NUMBA_INLINE)
def _lower(c):
    return c + 32 if 65 <= c <= 90 else c


@njit(**NUMBA_INLINE)
def _underscore_ok(buf, s, e, i):
    """Python's rule for ``_`` in a number: only between two digits."""
    return i > s and i + 1 < e and is_digit(buf[i - 1]) and is_digit(buf[i + 1])


# _digits, parse_float and _fast_pair are called from several places and are left to
# LLVM to inline: numba's own inlining (inline="always") copies their typed IR into every
# caller: the parser then took 30 s to compile instead of 16 s (2-core Xeon), and read no
# faster.
@njit(**NUMBA_OPTS)
def _digits(buf, s, e, i, frac, mant, nd, exp10, inexact, any_digit):
    """The digits of a number's integer part (``frac`` False) or fraction from ``i``:
    up to 18 significant ones into ``mant``, the power of ten in ``exp10``, ``inexact``
    when a non-zero digit did not fit. Returns the position after them (-1 for a
    misplaced underscore) and the updated ``mant, nd, exp10, inexact, any_digit``."""
    while i < e:
        c = buf[i]
        if is_digit(c):
            any_digit = True
            if nd > 0 or c != 48:
                if nd < 18:
                    mant = mant * 10 + (c - 48)
                    nd += 1
                    if frac:
                        exp10 -= 1
                else:
                    if not frac:
                        exp10 += 1
                    if c != 48:
                        inexact = True
            elif frac:
                exp10 -= 1
        elif c == 95:
            if not _underscore_ok(buf, s, e, i):
                return -1, mant, nd, exp10, inexact, any_digit
        else:
            break
        i += 1
    return i, mant, nd, exp10, inexact, any_digit


@njit(**NUMBA_OPTS)
def parse_float(buf, s, e, scratch, endp):
    """``float(buf[s:e])`` as Python computes it: ``(code, value)``.

    The grammar is that of ``float()`` on bytes: an optional sign, then digits with
    at most one ``.`` and an optional exponent, or ``inf``, ``infinity`` or ``nan`` in
    any case; ``_`` only between two digits. The value is exact: Clinger's fast path
    where it applies, else ``strtod`` (correctly rounded, as Python's own conversion);
    ``NUMBER_PYTHON`` when ``strtod`` does not read the whole token.
    """
    if s >= e:
        return NUMBER_BAD, 0.0
    i = s
    neg = False
    c = buf[i]
    if c == 43 or c == 45:  # + -
        neg = c == 45
        i += 1
        if i >= e:
            return NUMBER_BAD, 0.0
    c = buf[i]
    if not (is_digit(c) or c == 46):
        n = e - i
        if n == 3 or n == 8:
            a, b, d = _lower(buf[i]), _lower(buf[i + 1]), _lower(buf[i + 2])
            if n == 3 and a == 110 and b == 97 and d == 110:  # nan
                return NUMBER_OK, math.copysign(np.nan, -1.0 if neg else 1.0)
            if a == 105 and b == 110 and d == 102:  # inf
                if n == 8:
                    for k, want in enumerate((105, 110, 105, 116, 121)):  # inity
                        if _lower(buf[i + 3 + k]) != want:
                            return NUMBER_BAD, 0.0
                return NUMBER_OK, -np.inf if neg else np.inf
        return NUMBER_BAD, 0.0
    i, mant, nd, exp10, inexact, any_digit = _digits(buf, s, e, i, False, 0, 0, 0, False, False)
    if i >= 0 and i < e and buf[i] == 46:  # .
        i, mant, nd, exp10, inexact, any_digit = _digits(
            buf, s, e, i + 1, True, mant, nd, exp10, inexact, any_digit
        )
    if i < 0:
        return NUMBER_BAD, 0.0
    if not any_digit:
        return NUMBER_BAD, 0.0
    if i < e and (buf[i] == 101 or buf[i] == 69):  # e E
        i += 1
        eneg = False
        if i < e and (buf[i] == 43 or buf[i] == 45):
            eneg = buf[i] == 45
            i += 1
        ev = 0
        edigit = False
        while i < e:
            c = buf[i]
            if is_digit(c):
                edigit = True
                if ev < 100_000_000:
                    ev = ev * 10 + (c - 48)
            elif c == 95:
                if not _underscore_ok(buf, s, e, i):
                    return NUMBER_BAD, 0.0
            else:
                break
            i += 1
        if not edigit:
            return NUMBER_BAD, 0.0
        exp10 += -ev if eneg else ev
    if i != e:
        return NUMBER_BAD, 0.0
    if not inexact:
        if mant == 0:
            return NUMBER_OK, -0.0 if neg else 0.0
        if mant <= 9007199254740992:  # 2**53: the mantissa is an exact double
            if 0 <= exp10 <= 22:
                v = float(mant) * POW10[exp10]
                return NUMBER_OK, -v if neg else v
            if -22 <= exp10 < 0:
                v = float(mant) / POW10[-exp10]
                return NUMBER_OK, -v if neg else v
    # strtod on a copy without underscores, ended by a NUL
    if e - s + 1 > scratch.size:
        return NUMBER_PYTHON, 0.0
    n = 0
    for k in range(s, e):
        if buf[k] != 95:
            scratch[n] = buf[k]
            n += 1
    scratch[n] = 0
    v = _strtod(scratch.ctypes, endp.ctypes)
    if endp[0] - scratch.ctypes.data != n:
        return NUMBER_PYTHON, 0.0
    return NUMBER_OK, v


@njit(**NUMBA_INLINE)
def parse_int(buf, s, e):
    """``int(buf[s:e])`` as Python reads it, in int64: ``(code, value)``; code 0 read,
    1 not an integer, 2 beyond int64."""
    i = s
    neg = False
    if i < e and (buf[i] == 43 or buf[i] == 45):
        neg = buf[i] == 45
        i += 1
    v = 0
    nd = 0
    over = False
    while i < e:
        c = buf[i]
        if is_digit(c):
            d = c - 48
            if v > (INT64_MAX - d) // 10:
                over = True
            else:
                v = v * 10 + d
            nd += 1
        elif c == 95:
            if not _underscore_ok(buf, s, e, i):
                return 1, 0
        else:
            return 1, 0
        i += 1
    if nd == 0:
        return 1, 0
    if over:
        return 2, 0
    return 0, -v if neg else v


@njit(**NUMBA_INLINE)
def is_space(c):
    """bytes.split()'s whitespace: space, \\t, \\n, \\v, \\f, \\r."""
    return c == 32 or 9 <= c <= 13
