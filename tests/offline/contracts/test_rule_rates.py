"""The contract syntax of a failing-run rate with a confidence, and the exact tests behind it (#38)."""

from __future__ import annotations

from fractions import Fraction
from math import comb

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from otel_provenance.errors import ContractError
from otel_provenance.offline.contracts import RateLimit, parse_contract
from otel_provenance.offline.contracts.confidence import (
    at_least_tail,
    at_most_tail,
    fails_after,
    judge_rate,
    passes_after,
    smallest_more,
)

BASE = """\
version: 1
name: rates
{gate}rules:
  - id: checked
    type: required_spans
    select: {{step: permissions.check}}
{thresholds}  - id: counted
    type: cardinality
    select: {{step: ticket.update}}
    max: 1
"""


def _contract(gate: str = "", thresholds: str = ""):
    return parse_contract(BASE.format(gate=gate, thresholds=thresholds), "c.yaml")


def test_a_rate_at_the_gate_is_every_rules_default_and_a_rule_may_go_back_to_a_count() -> None:
    contract = _contract(
        gate='gate:\n  max_failing_rate: "1/10"\n  confidence: "0.95"\n',
        thresholds="    thresholds: {max_failing_runs: 2}\n",
    )
    assert contract.rule("counted").thresholds.rate == RateLimit(Fraction(1, 10), Fraction(19, 20))
    checked = contract.rule("checked").thresholds
    assert checked.rate is None and checked.max_failing_runs == 2


def test_a_rule_may_state_its_own_rate_over_a_count_default() -> None:
    contract = _contract(
        gate="gate:\n  max_failing_runs: 3\n",
        thresholds='    thresholds: {max_failing_rate: "0.05", confidence: "99/100"}\n',
    )
    assert contract.rule("checked").thresholds.rate == RateLimit(Fraction(1, 20), Fraction(99, 100))
    assert contract.rule("counted").thresholds.rate is None
    assert contract.rule("counted").thresholds.max_failing_runs == 3


def test_count_contracts_parse_to_what_they_always_did() -> None:
    contract = _contract(gate="gate:\n  max_failing_runs: 1\n")
    assert all(r.thresholds.rate is None and r.thresholds.max_failing_runs == 1 for r in contract.rules)


@pytest.mark.parametrize(
    ("gate", "thresholds", "message"),
    [
        (
            'gate:\n  max_failing_rate: "1/10"\n',
            "",
            "c.yaml:4:3: gate: 'max_failing_rate' needs 'confidence' beside it",
        ),
        (
            "",
            '    thresholds: {confidence: "0.95"}\n',
            "c.yaml:7:18: rules[0].thresholds: 'confidence' needs 'max_failing_rate' beside it",
        ),
        (
            "",
            '    thresholds: {max_failing_runs: 1, max_failing_rate: "1/10", confidence: "0.95"}\n',
            "c.yaml:7:17: rules[0].thresholds: "
            "give one of 'max_failing_runs' and 'max_failing_rate', not both",
        ),
        (
            'gate:\n  max_failing_rate: 0.1\n  confidence: "0.95"\n',
            "",
            "c.yaml:4:21: gate.max_failing_rate: 0.1 is a floating-point number, which is not exact; "
            'write an integer or a string like "1/20" or "0.05"',
        ),
        (
            'gate:\n  max_failing_rate: "0"\n  confidence: "0.95"\n',
            "",
            'c.yaml:4:21: gate.max_failing_rate: must be above 0 and below 1 (a rate such as "1/10")',
        ),
        (
            "",
            '    thresholds: {max_failing_rate: "1", confidence: "0.95"}\n',
            "c.yaml:7:36: rules[0].thresholds.max_failing_rate: "
            'must be above 0 and below 1 (a rate such as "1/10")',
        ),
        (
            'gate:\n  max_failing_rate: "1/10"\n  confidence: "1/2"\n',
            "",
            'c.yaml:5:15: gate.confidence: must be above 1/2 and below 1 (e.g. "0.95")',
        ),
        (
            'gate:\n  max_failing_rate: "1/10"\n  confidence: "1"\n',
            "",
            'c.yaml:5:15: gate.confidence: must be above 1/2 and below 1 (e.g. "0.95")',
        ),
        (
            'gate:\n  max_failing_rate: "1/10000001"\n  confidence: "0.95"\n',
            "",
            "c.yaml:4:21: gate.max_failing_rate: denominator above 1000000 (write at most 6 decimals)",
        ),
        (
            'gate:\n  max_insufficient_fraction: "3/2"\n',
            "",
            "c.yaml:4:30: gate.max_insufficient_fraction: must be between 0 and 1",
        ),
    ],
)
def test_a_rate_that_means_nothing_is_refused_where_it_is_written(gate, thresholds, message) -> None:
    with pytest.raises(ContractError) as info:
        _contract(gate, thresholds)
    assert str(info.value) == message


def test_the_rate_is_part_of_the_digest() -> None:
    one = _contract(gate='gate:\n  max_failing_rate: "1/10"\n  confidence: "0.95"\n')
    other = _contract(gate='gate:\n  max_failing_rate: "1/10"\n  confidence: "0.99"\n')
    assert one.digest != other.digest != _contract().digest


# -- the exact tests -------------------------------------------------------------------------------

rates = st.fractions(min_value=Fraction(1, 1000), max_value=Fraction(999, 1000), max_denominator=1000)
confidences = st.fractions(min_value=Fraction(51, 100), max_value=Fraction(999, 1000), max_denominator=1000)


def _pmf_sum(low: int, high: int, n: int, p: Fraction) -> Fraction:
    return sum(
        (comb(n, i) * p**i * (1 - p) ** (n - i) for i in range(max(low, 0), min(high, n) + 1)), Fraction(0)
    )


@settings(max_examples=200, deadline=None)
@given(n=st.integers(0, 60), k=st.integers(-2, 62), p=rates)
def test_tails_are_the_binomial_sums(n: int, k: int, p: Fraction) -> None:
    assert at_most_tail(k, n, p) == _pmf_sum(0, k, n, p)
    assert at_least_tail(k, n, p) == _pmf_sum(k, n, n, p)


@settings(max_examples=200, deadline=None)
@given(n=st.integers(1, 80), data=st.data(), p=rates, c=confidences)
def test_the_two_tests_never_both_hold_and_unknown_runs_only_hold_back(n, data, p, c) -> None:
    limit = RateLimit(p, c)
    failing = data.draw(st.integers(0, n))
    unknown = data.draw(st.integers(0, n - failing))
    judged = judge_rate(limit, n, failing, unknown)
    assert not (judged.fails and judged.passes)
    assert judged.fails == (at_least_tail(failing, n, p) <= 1 - c)
    assert judged.passes == (at_most_tail(failing + unknown, n, p) <= 1 - c)
    if unknown:  # an unknown run never helps a pass, and never makes a fail
        known = judge_rate(limit, n, failing)
        assert judged.fails == known.fails and (judged.passes <= known.passes)


@settings(max_examples=100, deadline=None)
@given(n=st.integers(0, 40), data=st.data(), p=rates, c=confidences)
def test_smallest_more_is_the_first_number_that_decides(n, data, p, c) -> None:
    limit = RateLimit(p, c)
    failing = data.draw(st.integers(0, n))
    to_fail = smallest_more(lambda m: fails_after(limit, n, failing, m), limit=300)
    to_pass = smallest_more(lambda m: passes_after(limit, n, failing, 0, m), limit=300)
    for found, decides in (
        (to_fail, lambda m: fails_after(limit, n, failing, m)),
        (to_pass, lambda m: passes_after(limit, n, failing, 0, m)),
    ):
        first = next((m for m in range(1, 301) if decides(m)), None)
        assert found == first


def test_further_runs_count_when_every_run_failed_and_when_runs_lack_evidence() -> None:
    """The further runs that would decide, on the two edges a drawn example seldom reaches: every run
    so far failed (``P(X ≥ n | n) = pⁿ``: 1 of 1 failing at rate 1/2 and α = 1/10 needs 3 more failing
    runs, not 1), and runs without evidence count as failing for a pass (0 failing and 1 unknown of 2:
    ``P(X ≤ 1 | n) = (n+1)/2ⁿ ≤ 1/10`` first at n = 7, 5 more passing runs)."""
    half = Fraction(1, 2)
    limit = RateLimit(half, Fraction(9, 10))
    assert not fails_after(limit, 1, 1, 0) and not fails_after(limit, 1, 1, 2) and fails_after(limit, 1, 1, 3)
    assert smallest_more(lambda m: fails_after(limit, 1, 1, m)) == 3
    assert _pmf_sum(4, 4, 4, half) <= Fraction(1, 10) < _pmf_sum(3, 3, 3, half)  # the textbook agrees
    assert not passes_after(limit, 2, 0, 1, 4) and passes_after(limit, 2, 0, 1, 5)
    assert smallest_more(lambda m: passes_after(limit, 2, 0, 1, m)) == 5
    assert _pmf_sum(0, 1, 7, half) <= Fraction(1, 10) < _pmf_sum(0, 1, 6, half)


def test_a_failing_tail_summed_from_the_other_end_is_exact_at_its_tie() -> None:
    """``P(X ≥ 1 | 2)`` at rate 1/10 is 19/100, summed as its complement (the range is most of
    ``0..n``): at α = 19/100 the tie fails the rule, at α = 18/100 it does not — one part in ``b^n``
    either way changes the verdict."""
    tenth = Fraction(1, 10)
    assert _pmf_sum(1, 2, 2, tenth) == Fraction(19, 100)
    assert fails_after(RateLimit(tenth, Fraction(81, 100)), 2, 1, 0)
    assert not fails_after(RateLimit(tenth, Fraction(82, 100)), 2, 1, 0)
    assert fails_after(RateLimit(tenth, Fraction(81, 100)), 1, 0, 1)  # the same tail, one run further


def test_counts_that_do_not_fit_are_refused_naming_them() -> None:
    limit = RateLimit(Fraction(1, 10), Fraction(95, 100))
    assert judge_rate(limit, 1, 1).unknown == 0  # no unknown runs unless told
    with pytest.raises(ValueError, match=r"counts do not fit: 2 failing and 1 unknown of 2 run\(s\)"):
        judge_rate(limit, 2, 2, 1)
