"""What a mutation run found untested in two small verdict modules (docs/testing.md):

* ``blocked_calls``: the boundary between "could be over the limit" and "cannot be", and the words
  and witnesses of its two kinds of insufficient evidence (a reviewer acts on them);
* route similarity: the exact-ratio arithmetic that decides whether two routes are one family;
* exact numbers in contracts: what is refused and why, the range bounds, and how a rational is shown.
"""

from __future__ import annotations

from collections import Counter
from decimal import Decimal
from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from contract_runs import triage_run
from otel_provenance import semconv
from otel_provenance.offline.contracts import parse_contract
from otel_provenance.offline.contracts.rational import (
    MAX_MAGNITUDE,
    MAX_TEXT,
    exact_number,
    format_exact,
    parse_rational,
    ratio_at_least,
    ratio_at_most,
)
from otel_provenance.offline.contracts.similarity import more_similar, route_shape, weighted_jaccard
from otel_provenance.offline.evaluate import evaluate

UPDATE = "{step: ticket.update}"


def _blocked_rule(limit: int, select: str | None = UPDATE):
    body = f"type: blocked_calls\n    max: {limit}" + (f"\n    select: {select}" if select else "")
    (rule,) = evaluate_rules(body)
    return rule


def evaluate_rules(body: str, **changes):
    contract = parse_contract(f"version: 1\nname: t\nrules:\n  - id: r\n    {body}\n", "t.yaml")
    return evaluate(triage_run("r", **changes), contract).rules


def _one(body: str, **changes):
    (rule,) = evaluate_rules(body, **changes)
    return rule


def test_calls_without_a_status_that_cannot_reach_the_limit_still_pass():
    silent = {"update_attrs": {semconv.TOOL_STATUS: None}}
    one_allowed = _one(f"type: blocked_calls\n    select: {UPDATE}\n    max: 1", **silent)
    assert one_allowed.status.value == "pass", [f.message for f in one_allowed.findings]
    none_allowed = _one(f"type: blocked_calls\n    select: {UPDATE}\n    max: 0", **silent)
    assert none_allowed.status.value == "insufficient_evidence"


def test_a_call_without_a_status_is_named_with_the_blocked_count_so_far():
    run = triage_run("r", update_attrs={semconv.TOOL_STATUS: None})
    update = next(s for s in run.spans if s.tool_name == "ticket.update")
    (rule,) = evaluate_rules(
        f"type: blocked_calls\n    select: {UPDATE}\n    max: 0", update_attrs={semconv.TOOL_STATUS: None}
    )
    [finding] = rule.findings
    assert finding.message == (
        "1 of the run's ticket.update carry no agent.tool.status (or lack a selector attribute); "
        "blocked calls cannot be counted."
    )
    [witness] = finding.witnesses
    assert witness.span_ids == (update.span_id,) and witness.observed == (("blocked", 0),)


def test_an_incomplete_run_cannot_show_it_has_no_blocked_calls():
    run = triage_run("r", orphan=True, update_attrs={semconv.TOOL_STATUS: "ok"})
    orphan = next(s for s in run.spans if s.tool_name == "late.audit")
    (rule,) = evaluate_rules(
        f"type: blocked_calls\n    select: {UPDATE}\n    max: 0",
        orphan=True,
        update_attrs={semconv.TOOL_STATUS: "ok"},
    )
    assert rule.status.value == "insufficient_evidence"
    [finding] = rule.findings
    assert finding.message == (
        "cannot count blocked ticket.update: the run is incomplete (1 span(s) have a parent that is "
        "not in the trace)."
    )
    [witness] = finding.witnesses
    assert witness.span_ids == (orphan.span_id,) and witness.observed == (("blocked", 0),)


def test_without_a_selector_every_tool_call_is_counted_and_so_named():
    (rule,) = evaluate_rules("type: blocked_calls\n    max: 0", update_attrs={semconv.TOOL_STATUS: "blocked"})
    [finding] = rule.findings
    assert finding.message.startswith("1 of the run's tool calls were blocked by their provenance budget")
    assert finding.witnesses[0].observed == (("blocked", 1),)


# --- similarity -----------------------------------------------------------------------------------


def test_a_repeated_edge_adds_up():
    shape = route_shape({"a": 1, "b": 2}, [(("a", "b"), 1), (("a", "b"), 1)])
    assert shape == Counter({("step", "a"): 1, ("step", "b"): 2, ("edge", "a", "b"): 2})


def test_two_empty_routes_are_identical_and_an_empty_one_shares_nothing_with_another():
    assert weighted_jaccard(Counter(), Counter()) == (1, 1)
    assert weighted_jaccard(Counter({("step", "a"): 1}), Counter()) == (0, 1)
    assert weighted_jaccard(Counter({("step", "a"): 2}), Counter({("step", "a"): 1})) == (1, 2)


ratios = st.tuples(st.integers(0, 50), st.integers(1, 50))


@given(ratios, ratios)
def test_more_similar_is_the_exact_comparison_of_the_two_ratios(x, y):
    assert more_similar(x, y) == (Fraction(*x) > Fraction(*y))


# --- exact numbers ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "words"),
    [
        (0.05, 'write exact numbers as integers or strings like "1/20" or "0.05"'),
        (True, 'write exact numbers as integers or strings like "1/20" or "0.05"'),
        ("1" * (MAX_TEXT + 1), f"exact number too long ({MAX_TEXT + 1} characters; at most {MAX_TEXT})"),
        ("1e3", 'not an exact number: \'1e3\' (use an integer, "0.05" or "1/20")'),
        (MAX_MAGNITUDE + 1, f"exact number out of range (at most {MAX_MAGNITUDE} in magnitude)"),
        (f"1/{MAX_MAGNITUDE + 1}", f"exact number out of range (at most {MAX_MAGNITUDE} in magnitude)"),
    ],
)
def test_a_refused_number_says_why(value, words):
    with pytest.raises(ValueError) as info:
        parse_rational(value)
    assert str(info.value) == words


def test_the_bounds_themselves_are_allowed():
    assert parse_rational(MAX_MAGNITUDE) == MAX_MAGNITUDE
    assert parse_rational(-MAX_MAGNITUDE) == -MAX_MAGNITUDE
    assert parse_rational(f"1/{MAX_MAGNITUDE}") == Fraction(1, MAX_MAGNITUDE)
    assert parse_rational("0" * (MAX_TEXT - 1) + "7") == 7  # exactly MAX_TEXT characters


def test_exact_number_takes_numbers_only_and_never_an_infinity():
    assert exact_number(3) == 3 and exact_number(0.1) == Fraction(0.1)
    assert exact_number(Decimal("0.1")) == Fraction(1, 10)
    for not_a_number in (True, "3", None, float("nan"), float("inf"), float("-inf")):
        assert exact_number(not_a_number) is None
    for not_finite in (Decimal("NaN"), Decimal("Infinity"), Decimal("-Infinity")):
        assert exact_number(not_finite) is None


@given(st.integers(0, 10**6), st.integers(1, 10**6), st.fractions(min_value=0, max_value=2))
def test_ratio_comparisons_are_the_exact_ones(numerator, denominator, threshold):
    value = Fraction(numerator, denominator)
    assert ratio_at_least(numerator, denominator, threshold) == (value >= threshold)
    assert ratio_at_most(numerator, denominator, threshold) == (value <= threshold)


@given(st.integers(-(10**9), 10**9), st.integers(0, 12), st.integers(0, 12), st.integers(1, 50))
def test_a_rational_is_shown_as_a_decimal_exactly_when_it_terminates(numerator, twos, fives, other):
    value = Fraction(numerator, 2**twos * 5**fives * other)
    text = format_exact(value)
    assert Fraction(text) == value
    rest = value.denominator
    for prime in (2, 5):
        while rest % prime == 0:
            rest //= prime
    terminates = rest == 1
    assert ("/" not in text) == terminates
    if terminates and value.denominator > 1:
        whole, _, places = text.lstrip("-").partition(".")
        assert whole.isdigit() and places.isdigit() and not places.endswith("0")
    assert text.startswith("-") == (value < 0)


def test_decimals_shown_for_people():
    assert [format_exact(Fraction(n, d)) for n, d in [(25, 2), (1, 4), (-1, 20), (1, 3), (7, 1)]] == [
        "12.5",
        "0.25",
        "-0.05",
        "1/3",
        "7",
    ]


def test_the_tiniest_float_an_attribute_can_hold_is_shown_exactly():
    """A float attribute converts exactly: 5e-324 is 1/2**1074, a denominator no float can hold."""
    for value in (exact_number(5e-324), Fraction(1, 5**400)):
        text = format_exact(value)
        assert "/" not in text and Fraction(text) == value
