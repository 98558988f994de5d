"""Failing-run rates with a confidence: one-sided exact binomial tests, in integers and ``Fraction``.

A rule may bound the *rate* of failing runs instead of their count: "fail when the failing-run rate
is above ``p`` with confidence ``c``". Each run is taken as an independent draw that fails the rule
with an unknown probability; ``n`` runs, ``k`` of them failing, are then judged by two one-sided
exact binomial tests at level ``α = 1 − c`` (the Clopper–Pearson bounds, without computing a bound):

- **fail** when ``P(X ≥ k | n, p) ≤ α`` — had the true rate been ``p`` or less, ``k`` or more failing
  runs would have been this unlikely, so the rate is above ``p`` (the lower ``c`` bound is ≥ ``p``);
- **pass** when ``P(X ≤ k | n, p) ≤ α`` — had the true rate been above ``p``, ``k`` or fewer failing
  runs would have been at most this likely, so the rate is at most ``p`` (the upper bound is ≤ ``p``);
- otherwise **undecided**: the evidence says neither. Both cannot hold because ``c > 1/2``.

Runs whose evidence for the rule is missing count against whichever verdict is tested: as passing
when testing *fail*, as failing when testing *pass*; so no unknown run can push a verdict either way.

Every tail is an exact rational: ``Σ C(n,i) a^i (b−a)^(n−i) / b^n`` for ``p = a/b``, summed in
integers from the shorter end, compared by cross-multiplication. No float, no randomness, no
approximation: the same counts give the same verdict and the same numbers on every machine.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from math import comb
from typing import Final

from .model import RateLimit

MAX_RATE_DENOMINATOR: Final = 1_000_000
"""The largest denominator a bound may have (``"0.000001"``): tails are sums over ``b^n``, and a
bound with a huge denominator costs time without meaning anything a team can tell from 1/10^6."""
MAX_FURTHER_RUNS: Final = 100_000
"""Further runs searched for "how many more would decide": beyond this the count is not reported."""


def at_most_tail(k: int, n: int, p: Fraction) -> Fraction:
    """``P(X ≤ k)`` for ``X ~ Binomial(n, p)``, exactly."""
    if k < 0:
        return Fraction(0)
    if k >= n:
        return Fraction(1)
    return Fraction(_sum_terms(0, k, n, p), p.denominator**n)


def at_least_tail(k: int, n: int, p: Fraction) -> Fraction:
    """``P(X ≥ k)`` for ``X ~ Binomial(n, p)``, exactly."""
    return 1 - at_most_tail(k - 1, n, p)


def _sum_terms(low: int, high: int, n: int, p: Fraction) -> int:
    """``Σ_{i=low..high} C(n,i) a^i (b−a)^(n−i)`` for ``p = a/b``, from whichever end has fewer terms
    to the other: the complement ``b^n − Σ(rest)`` when the range is more than half of ``0..n``."""
    a, b = p.numerator, p.denominator
    if high - low + 1 > n + 1 - (high - low + 1):
        rest = (_sum_terms(0, low - 1, n, p) if low > 0 else 0) + (
            _sum_terms(high + 1, n, n, p) if high < n else 0
        )
        return b**n - rest
    term = comb(n, low) * a**low * (b - a) ** (n - low)
    total = term
    for i in range(low, high):  # term(i+1) = term(i) · (n−i)·a / ((i+1)·(b−a)), exact in integers
        term = term * (n - i) * a // ((i + 1) * (b - a))
        total += term
    return total


@dataclass(frozen=True, slots=True)
class RateJudgement:
    """What the two tests say about ``failing`` (and ``unknown``) of ``runs`` under ``limit``."""

    limit: RateLimit
    runs: int
    failing: int
    unknown: int
    fail_tail: Fraction  # P(X ≥ failing | runs, rate): at most α → the rate is above the bound
    pass_tail: Fraction  # P(X ≤ failing + unknown | runs, rate): at most α → at or below it

    @property
    def fails(self) -> bool:
        return self.runs > 0 and self.fail_tail <= self.limit.alpha

    @property
    def passes(self) -> bool:
        return self.runs > 0 and self.pass_tail <= self.limit.alpha


def judge_rate(limit: RateLimit, runs: int, failing: int, unknown: int = 0) -> RateJudgement:
    """Both one-sided exact tests on the counts (``failing + unknown <= runs``)."""
    if not 0 <= failing <= failing + unknown <= runs:
        raise ValueError(f"counts do not fit: {failing} failing and {unknown} unknown of {runs} run(s)")
    p = limit.max_rate
    return RateJudgement(
        limit,
        runs,
        failing,
        unknown,
        at_least_tail(failing, runs, p),
        at_most_tail(failing + unknown, runs, p),
    )


def fails_after(limit: RateLimit, runs: int, failing: int, more: int) -> bool:
    """Would the rule fail if ``more`` further runs all failed it? (``P(X ≥ k+m | n+m) ≤ α``)"""
    n, k = runs + more, failing + more
    return _at_most_alpha(_sum_terms(k, n, n, limit.max_rate) if k <= n else 0, n, limit)


def passes_after(limit: RateLimit, runs: int, failing: int, unknown: int, more: int) -> bool:
    """Would the rate test pass if ``more`` further runs all passed it with evidence?
    (``P(X ≤ k+u | n+m) ≤ α``)"""
    n, c = runs + more, failing + unknown
    return c < n and _at_most_alpha(_sum_terms(0, c, n, limit.max_rate), n, limit)


def _at_most_alpha(numerator: int, n: int, limit: RateLimit) -> bool:
    """``numerator / b^n ≤ α`` by cross-multiplication: no ``Fraction`` of ``b^n`` is reduced."""
    alpha = limit.alpha
    return numerator * alpha.denominator <= alpha.numerator * limit.max_rate.denominator**n


def smallest_more(decides: Callable[[int], bool], limit: int = MAX_FURTHER_RUNS) -> int | None:
    """The smallest ``m`` in ``1..limit`` with ``decides(m)``, for a ``decides`` that stays true once
    true (each "further runs" predicate is: one more passing run only lowers ``P(X ≤ c)``, one more
    failing run only lowers ``P(X ≥ k)``). ``None`` when even ``limit`` does not decide."""
    low, high = 0, 1  # decides(low) is false (or low is 0): double high until it decides, then bisect
    while not decides(high):
        if high >= limit:
            return None
        low, high = high, min(high * 2, limit)
    while high - low > 1:
        middle = (low + high) // 2
        if decides(middle):
            high = middle
        else:
            low = middle
    return high
