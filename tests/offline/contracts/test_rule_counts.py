"""Counting rules in detail (``required_spans``, ``forbidden_spans``, ``cardinality``): the bounds
check with sure, undecided and possibly lost spans — verdicts, messages, witnesses, contract errors."""

from __future__ import annotations

import pytest

from contract_runs import MISSING_PARENT, READ, WRITE, RunBuilder, triage_run
from otel_provenance.errors import ContractError
from otel_provenance.offline.contracts import parse_contract
from otel_provenance.offline.contracts.outcomes import Witness
from otel_provenance.offline.evaluate import evaluate
from otel_provenance.offline.gate import check_release, decide
from otel_provenance.offline.model import Run

WRITES = "{step: ticket.update, attributes: {agent.side_effect: write}}"
LABEL = "ticket.update[agent.side_effect=write]"


def _text(body: str) -> str:
    return f"version: 1\nname: t\nrules:\n  - id: r\n    {body}\n"


def _rule(body: str, run: Run):
    (rule,) = evaluate(run, parse_contract(_text(body))).rules
    return rule


def _updates(sure: int, undecided: int = 0, lost: bool = False) -> tuple[Run, list, list, list]:
    b = RunBuilder(f"u{sure}-{undecided}-{lost}")
    known = [b.add("ticket.update", attrs=dict(WRITE)) for _ in range(sure)]
    maybe = [b.add("ticket.update") for _ in range(undecided)]
    orphans = [b.add("late.audit", parent_id=MISSING_PARENT, attrs=dict(READ))] if lost else []
    return b.run(), known, maybe, orphans


def _card(bounds: str) -> str:
    return f"type: cardinality\n    select: {WRITES}\n    {bounds}"


def test_a_forbidden_step_names_every_occurrence():
    run, known, _, _ = _updates(2)
    rule = _rule(f"type: forbidden_spans\n    select: {WRITES}", run)
    (finding,) = rule.findings
    assert finding.message == f"{LABEL} is forbidden but occurred 2 time(s)."
    assert finding.witnesses == (Witness(run.trace_ids[0], tuple(sorted(known)), (("count", 2),)),)
    assert _rule(f"type: forbidden_spans\n    select: {WRITES}", _updates(0)[0]).status.value == "pass"


def test_a_maximum_is_inclusive_and_its_violation_names_the_spans():
    assert _rule(_card("max: 2"), _updates(2)[0]).status.value == "pass"
    run, known, _, _ = _updates(3)
    (finding,) = _rule(_card("max: 2"), run).findings
    assert finding.message == f"{LABEL} occurred 3 times; the contract permits at most 2 per run."
    assert finding.witnesses == (Witness(run.trace_ids[0], tuple(sorted(known)), (("count", 3),)),)


def test_a_minimum_is_inclusive_and_its_violation_names_what_occurred():
    assert _rule(_card("min: 2"), _updates(2)[0]).status.value == "pass"
    run, known, _, _ = _updates(1)
    (finding,) = _rule(_card("min: 2"), run).findings
    assert finding.message == f"{LABEL} is required at least 2 time(s) but occurred 1 time(s)."
    assert finding.witnesses == (Witness(run.trace_ids[0], tuple(known), (("count", 1),)),)
    run, _, _, _ = _updates(0)
    (finding,) = _rule(f"type: required_spans\n    select: {WRITES}", run).findings
    assert finding.witnesses == (Witness(run.trace_ids[0], (), (("count", 0),)),)  # the run, no span


def test_exact_below_its_count_says_exactly():
    run, _, _, _ = _updates(1)
    (finding,) = _rule(_card("exact: 2"), run).findings
    assert finding.message == f"{LABEL} occurred 1 time(s); the contract requires exactly 2 per run."


def test_undecided_spans_that_could_reach_a_minimum_are_insufficient_and_named():
    run, _, maybe, _ = _updates(1, undecided=1)
    rule = _rule(_card("min: 2"), run)
    assert rule.status.value == "insufficient_evidence"
    (finding,) = rule.findings
    assert finding.message == (
        f"cannot count {LABEL}: 1 span(s) lack an attribute needed to tell whether they are {LABEL}."
    )
    assert finding.witnesses == (Witness(run.trace_ids[0], tuple(maybe), (("count", 1), ("undecided", 1))),)
    assert _rule(_card("min: 3"), run).status.value == "fail"  # even both cannot reach 3


def test_undecided_spans_that_could_pass_a_maximum_are_insufficient():
    run, _, _, _ = _updates(1, undecided=1)
    assert _rule(_card("max: 1"), run).status.value == "insufficient_evidence"
    assert _rule(_card("max: 2"), run).status.value == "pass"  # even both stay within 2


def test_an_incomplete_run_cannot_prove_a_minimum_short_nor_a_maximum_kept():
    run, _, _, orphans = _updates(0, lost=True)
    rule = _rule(f"type: required_spans\n    select: {WRITES}", run)
    assert rule.status.value == "insufficient_evidence"
    (finding,) = rule.findings
    assert finding.message == (
        f"cannot count {LABEL}: the run is incomplete (1 span(s) have a parent that is not in the trace)."
    )
    assert finding.witnesses == (Witness(run.trace_ids[0], tuple(orphans), (("count", 0),)),)
    one, _, _, _ = _updates(1, lost=True)
    assert _rule(_card("max: 1"), one).status.value == "insufficient_evidence"
    assert _rule(_card("min: 1"), one).status.value == "pass"
    two, _, _, _ = _updates(2, lost=True)
    assert _rule(_card("max: 1"), two).status.value == "fail"  # already over: lost spans add only


@pytest.mark.parametrize(
    ("bounds", "message"),
    [
        ("exact: 1\n    min: 0", "<string>:7:12: rules[0].exact: use either exact or min/max, not both"),
        ("exact: 1\n    max: 2", "<string>:7:12: rules[0].exact: use either exact or min/max, not both"),
        ("min: 3\n    max: 2", "<string>:7:10: rules[0].min: min 3 is greater than max 2"),
    ],
)
def test_contradictory_bounds_are_refused_where_written(bounds, message):
    with pytest.raises(ContractError) as info:
        parse_contract(_text(_card(bounds).replace(WRITES, "{step: ticket.update}")))
    assert str(info.value) == message


def test_equal_minimum_and_maximum_are_accepted():
    assert _rule(_card("min: 1\n    max: 1"), _updates(1)[0]).status.value == "pass"


@pytest.mark.parametrize(
    ("bounds", "status"),
    [
        ("min: 1", "fail"),
        ("exact: 1", "fail"),
        ("max: 1", "insufficient_data"),
        ("min: 0", "insufficient_data"),
    ],
)
def test_a_count_with_a_minimum_judges_a_step_no_run_contains_and_one_without_is_vacuous(bounds, status):
    contract = parse_contract(_text(f"type: cardinality\n    select: {{step: no.such.step}}\n    {bounds}"))
    runs = [triage_run(f"r{i}") for i in range(3)]
    result = decide(check_release(runs, contract, "v1", "2026-01-01T00:00:00Z"), contract)
    assert result.verdicts[0].status == status
