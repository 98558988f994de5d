"""Attribute rules in detail: ``attribute_constraints`` and ``allowed_values`` — typed equality,
messages and witnesses, through ``parse_contract`` + ``evaluate``."""

from __future__ import annotations

import pytest

from contract_runs import triage_run
from otel_provenance.errors import ContractError
from otel_provenance.offline.contracts import parse_contract
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
