"""Attribute rules in detail: ``attribute_constraints`` and ``allowed_values`` — typed equality,
messages and witnesses, through ``parse_contract`` + ``evaluate``."""

from __future__ import annotations

import pytest

from contract_runs import WRITE, RunBuilder, triage_run
from otel_provenance.errors import ContractError
from otel_provenance.offline.contracts import parse_contract
from otel_provenance.offline.contracts.outcomes import Witness
from otel_provenance.offline.evaluate import evaluate
from otel_provenance.offline.model import Run


def _rule(body: str, run: Run):
    contract = parse_contract(f"version: 1\nname: t\nrules:\n  - id: r\n    {body}\n")
    (rule,) = evaluate(run, contract).rules
    return rule


def _constraint(op: str, value: str, attribute: str = "score") -> str:
    return (
        "type: attribute_constraints\n    select: {step: ticket.update}\n"
        f"    attribute: {attribute}\n    op: '{op}'\n    value: {value}"
    )


@pytest.mark.parametrize(
    ("actual", "value", "equal"),
    [
        ("high", '"high"', True),
        ("high", '"low"', False),
        (3, "3", True),
        (3, "4", False),
        (True, "true", True),
        (False, "true", False),
    ],
)
def test_equality_constraints_hold_exactly_when_the_typed_values_are_equal(actual, value, equal):
    run = triage_run(update_attrs={"score": actual})
    assert _rule(_constraint("=", value), run).status.value == ("pass" if equal else "fail")
    assert _rule(_constraint("!=", value), run).status.value == ("fail" if equal else "pass")


def test_a_numeric_bound_is_shown_as_written_in_decimal_in_the_violation():
    run = triage_run(update_attrs={"score": 0.75})
    rule = _rule(_constraint("<", '"0.5"'), run)
    assert rule.status.value == "fail"
    assert rule.findings[0].message == ("ticket.update has score = 0.75; the contract requires score < 0.5.")


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("op: exists\n    value: 1", "<string>:9:12: rules[0].value: 'exists' takes no value"),
        ("op: '='", "<string>:8:9: rules[0].op: operator '=' needs a value"),
    ],
    ids=["exists-with-value", "equals-without-value"],
)
def test_a_constraint_whose_value_does_not_fit_its_operator_is_refused_where_it_is_written(body, message):
    text = (
        "version: 1\nname: t\nrules:\n  - id: r\n    type: attribute_constraints\n"
        f"    select: {{step: ticket.update}}\n    attribute: score\n    {body}\n"
    )
    with pytest.raises(ContractError) as info:
        parse_contract(text)
    assert str(info.value) == message


def test_exists_fails_a_selected_span_without_the_attribute_and_names_it():
    run = triage_run()
    body = (
        "type: attribute_constraints\n    select: {step: ticket.update}\n    attribute: score\n    op: exists"
    )
    rule = _rule(body, run)
    assert rule.status.value == "fail"
    (finding,) = rule.findings
    assert finding.message == "ticket.update lacks score, which the contract requires."
    update = next(s for s in run.spans if s.name.endswith("ticket.update"))
    assert [w.span_ids for w in finding.witnesses] == [(update.span_id,)]


def test_an_unequal_value_is_shown_with_the_required_one_and_kept_as_the_witness():
    run = triage_run(update_attrs={"score": "low"})
    rule = _rule(_constraint("=", '"high"'), run)
    assert rule.status.value == "fail"
    (finding,) = rule.findings
    assert finding.message == "ticket.update has score = low; the contract requires score = high."
    update = next(s for s in run.spans if s.name.endswith("ticket.update"))
    assert finding.witnesses == (Witness(run.trace_ids[0], (update.span_id,), (("score", "low"),)),)
    flag = _rule(_constraint("=", "true"), triage_run(update_attrs={"score": 1}))
    assert flag.findings[0].message == "ticket.update has score = 1; the contract requires score = true."


def test_every_selected_span_is_judged_not_only_the_first():
    b = RunBuilder("three")
    b.add("ticket.update", attrs={**WRITE, "score": 1})
    b.add("ticket.update", attrs=dict(WRITE))
    b.add("ticket.update", attrs=dict(WRITE))
    run = b.run()
    exists = (
        "type: attribute_constraints\n    select: {step: ticket.update}\n    attribute: score\n    op: exists"
    )
    rule = _rule(exists, run)
    lacks = "ticket.update lacks score, which the contract requires."
    assert [f.message for f in rule.findings] == [lacks, lacks]


def test_missing_and_undecided_spans_make_a_constraint_insufficient_and_are_named():
    b = RunBuilder("gaps")
    b.add("ticket.update", attrs={**WRITE, "score": 1})
    lacking = b.add("ticket.update", attrs=dict(WRITE))
    maybe = b.add("ticket.update", attrs={"score": 1})  # no agent.side_effect: selected or not?
    run = b.run()
    body = (
        "type: attribute_constraints\n"
        "    select: {step: ticket.update, attributes: {agent.side_effect: write}}\n"
        "    attribute: score\n    op: '>='\n    value: 1"
    )
    rule = _rule(body, run)
    assert rule.status.value == "insufficient_evidence"
    by_message = {f.message: f.witnesses for f in rule.findings}
    trace = run.trace_ids[0]
    assert by_message == {
        "ticket.update[agent.side_effect=write] lacks score on 1 span(s); the rule cannot be checked.": (
            Witness(trace, (lacking,), (("missing_attribute", "score"),)),
        ),
        "cannot tell whether 1 span(s) are ticket.update[agent.side_effect=write].": (
            Witness(trace, (maybe,)),
        ),
    }


@pytest.mark.parametrize("op", ["<", "<=", ">", ">="])
def test_every_ordering_operator_compares_exact_rationals(op):
    run = triage_run(update_attrs={"score": 0.5})
    holds = {"<": False, "<=": True, ">": False, ">=": True}[op]
    assert _rule(_constraint(op, '"1/2"'), run).status.value == ("pass" if holds else "fail")


def _parse_error(op: str, value: str) -> str:
    text = (
        "version: 1\nname: t\nrules:\n  - id: r\n    type: attribute_constraints\n"
        f"    select: {{step: ticket.update}}\n    attribute: agent.side_effect\n    op: '{op}'\n"
        f"    value: {value}\n"
    )
    with pytest.raises(ContractError) as info:
        parse_contract(text)
    return str(info.value)


def test_a_value_of_the_wrong_type_for_a_known_attribute_is_refused_at_the_value():
    assert _parse_error("=", "1") == (
        "<string>:9:12: rules[0].value: agent.side_effect is a string; 1 can never match it"
    )
    # an ordering needs a number, which a string attribute never is
    assert _parse_error("<", "5") == (
        "<string>:8:9: rules[0].op: operator '<' compares numbers, but agent.side_effect is a string"
    )
    fine = _constraint("=", "write", attribute="agent.side_effect")
    assert _rule(fine, triage_run()).status.value == "pass"


@pytest.mark.parametrize(
    ("actual", "shown"),
    [
        (0.1, "0.1000000000000000055511151231257827021181583404541015625"),
        (1e20, "100000000000000000000"),
        (7, "7"),
    ],
)
def test_a_float_that_breaks_a_bound_is_shown_as_the_exact_number_compared(actual, shown):
    """Bounds compare exactly, so the message shows the exact value of the double that was compared:
    0.1 is a little above 0.1, which is why ``score <= 0.1`` fails for it."""
    run = triage_run(update_attrs={"score": actual})
    rule = _rule(_constraint("<", '"0.05"'), run)
    message = rule.findings[0].message
    assert message == f"ticket.update has score = {shown}; the contract requires score < 0.05."


def test_a_value_outside_the_allowed_ones_is_named_with_every_allowed_value():
    b = RunBuilder("priority")
    b.add("ticket.update", attrs={**WRITE, "priority": "high"})
    body = (
        "type: allowed_values\n    select: {step: ticket.update}\n"
        "    attribute: priority\n    values: [low, medium, 3]"
    )
    (finding,) = _rule(body, b.run()).findings
    assert finding.message == "ticket.update has priority = high; the contract allows only low, medium, 3."


def test_allowed_values_cannot_pass_a_span_it_might_select_or_one_lacking_the_attribute():
    """A write lacking the attribute, and an update that may or may not be a write: neither is a pass."""
    b = RunBuilder("unsure")
    b.add("ticket.update", attrs={**WRITE, "priority": "low"})
    lacking = b.add("ticket.update", attrs=dict(WRITE))
    maybe = b.add("ticket.update", attrs={"priority": "high"})  # no agent.side_effect
    run = b.run()
    body = (
        "type: allowed_values\n    select: {step: ticket.update, attributes: {agent.side_effect: write}}\n"
        "    attribute: priority\n    values: [low]"
    )
    rule = _rule(body, run)
    assert rule.status.value == "insufficient_evidence"
    assert sorted((f.message, f.witnesses[0].span_ids) for f in rule.findings) == [
        ("cannot tell whether 1 span(s) are ticket.update[agent.side_effect=write].", (maybe,)),
        (
            "ticket.update[agent.side_effect=write] lacks priority on 1 span(s); the rule cannot be checked.",
            (lacking,),
        ),
    ]
