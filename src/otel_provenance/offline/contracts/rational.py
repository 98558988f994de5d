"""Exact thresholds: every number a contract compares against is a ``fractions.Fraction``.

A contract writes thresholds as integers or as strings (``"1/20"``, ``"0.05"``, ``"3"``); YAML floats
are refused because ``0.1`` is not the number the author meant once it is a binary double. Ratios
are compared by integer cross-multiplication (``Fraction`` does exactly that), never by dividing
into a float.
"""

from __future__ import annotations

import re
from decimal import Decimal
from fractions import Fraction
from typing import Final

RATIONAL_PATTERN: Final = r"^-?[0-9]+(\.[0-9]+|/[1-9][0-9]*)?$"
_RATIONAL_RE: Final = re.compile(RATIONAL_PATTERN)
MAX_MAGNITUDE: Final = 2**63 - 1
"""The largest integer, numerator or denominator a contract may write: no threshold needs more, and a
number of thousands of digits is a mistake (or an attack on the parser), never a limit."""
MAX_TEXT: Final = 64  # characters of an exact number written as a string


def parse_rational(value: object) -> Fraction:
    """``3`` / ``"3"`` / ``"0.05"`` / ``"1/20"`` → ``Fraction``. Raises ``ValueError`` on anything else
    (floats and booleans included: neither is an exact number a human wrote)."""
    if isinstance(value, (bool, float)):
        raise ValueError('write exact numbers as integers or strings like "1/20" or "0.05"')
    if isinstance(value, int):
        return _bounded(Fraction(value))
    if isinstance(value, str) and len(value) > MAX_TEXT:
        raise ValueError(f"exact number too long ({len(value)} characters; at most {MAX_TEXT})")
    if isinstance(value, str) and _RATIONAL_RE.match(value):
        return _bounded(Fraction(value))
    raise ValueError(f'not an exact number: {value!r} (use an integer, "0.05" or "1/20")')


def _bounded(value: Fraction) -> Fraction:
    if abs(value.numerator) > MAX_MAGNITUDE or value.denominator > MAX_MAGNITUDE:
        raise ValueError(f"exact number out of range (at most {MAX_MAGNITUDE} in magnitude)")
    return value


def format_rational(value: Fraction) -> str:
    """Canonical text of a rational: ``"3"``, ``"1/20"``. Round-trips through :func:`parse_rational`."""
    return str(value)


def exact_number(value: object) -> Fraction | None:
    """An attribute value as an exact ``Fraction`` when it is a number (int, float, Decimal), else None.

    Floats convert exactly (``Fraction(0.1)`` is the double's true value), so no rounding enters a
    comparison; booleans are not numbers here.
    """
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return Fraction(value)
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            return None
        return Fraction(value)
    if isinstance(value, Decimal):
        return Fraction(value) if value.is_finite() else None
    return None


def ratio_at_least(numerator: int, denominator: int, threshold: Fraction) -> bool:
    """``numerator / denominator >= threshold`` by cross-multiplication (``denominator > 0``)."""
    return numerator * threshold.denominator >= threshold.numerator * denominator


def ratio_at_most(numerator: int, denominator: int, threshold: Fraction) -> bool:
    """``numerator / denominator <= threshold`` by cross-multiplication (``denominator > 0``)."""
    return numerator * threshold.denominator <= threshold.numerator * denominator


def format_exact(value: Fraction) -> str:
    """A rational for a human: a terminating decimal when there is one (``"12.5"``), else ``"1/3"``."""
    if value.denominator == 1:
        return str(value.numerator)
    den = value.denominator
    twos = fives = 0
    while den % 2 == 0:
        den //= 2
        twos += 1
    while den % 5 == 0:
        den //= 5
        fives += 1
    if den != 1:
        return str(value)
    places = max(twos, fives)
    scaled = value * 10**places
    sign = "-" if scaled < 0 else ""
    digits = str(abs(scaled.numerator)).rjust(places + 1, "0")
    return f"{sign}{digits[:-places]}.{digits[-places:]}"


def format_rounded(value: Fraction, places: int) -> str:
    """``value`` as a decimal rounded half up to ``places`` decimals, in integers (``"0.052335"``):
    for reading a long exact number. Decisions compare the exact ``Fraction``, never this text."""
    scaled = value * 10**places
    whole = (scaled.numerator * 2 + scaled.denominator) // (2 * scaled.denominator)
    sign = "-" if whole < 0 else ""
    digits = str(abs(whole)).rjust(places + 1, "0")
    return f"{sign}{digits[:-places]}.{digits[-places:]}" if places else f"{sign}{digits}"
