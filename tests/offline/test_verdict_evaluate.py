"""Run-level results that no rule checker produces: an internal error and a run whose release is in
dispute — their status, code and wording as the gate reports them."""

from __future__ import annotations

import dataclasses

import pytest

from contract_runs import READ, WRITE, RunBuilder, triage_run
from otel_provenance.offline.aggregate import finding_json
from otel_provenance.offline.contracts import parse_contract
from otel_provenance.offline.contracts.rules import REGISTRY
from otel_provenance.offline.evaluate import evaluate, evaluate_rule, evaluate_safely, release_conflict_result
from otel_provenance.offline.gate import check_release, decide

AT = "2026-01-01T00:00:00Z"


def _contract(body: str):
    return parse_contract(f"version: 1\nname: t\nrules:\n  - id: r\n    {body}\n")


def test_an_internal_error_keeps_the_rule_code_and_names_only_the_exception_type():
    contract = _contract("type: retry_budgets\n    select: {step: ticket.update}\n    max_retries: 0")

    def broken(rule, evidence):
        raise RuntimeError("secret trace content")

    (rule,) = evaluate_safely(triage_run(), contract, rule_evaluator=broken).rules
    assert (rule.rule_id, rule.code, rule.status.value) == ("r", "RETRY_BUDGET_EXCEEDED", "error")
    (finding,) = rule.findings
    assert finding.message == "internal error while checking rule r: RuntimeError"
    assert finding.witnesses == ()


def test_a_run_whose_agent_spans_disagree_about_the_release_is_insufficient_with_both_values_named():
    b = RunBuilder("disputed", release=None)
    b.add("ticket.fetch", attrs={**READ, "service.version": "v1"})
    b.add("ticket.update", attrs={**WRITE, "service.version": "v2"})
    run = b.run()
    contract = _contract("type: required_spans\n    select: {step: ticket.update}")
    aggregate = check_release([run], contract, "v1", AT)
    assert dict(aggregate.run_counts)["insufficient_data"] == 1
    (finding,) = aggregate.rules["r"].findings
    assert finding.status == "insufficient_evidence"
    assert finding.message == (
        "the run's agent spans disagree about service.version (v1, v2); it cannot be attributed "
        "to one release"
    )
    # the values found, as a JSON array in the report (not the text of a Python list)
    assert finding_json(finding)["witnesses"] == [
        {"trace_id": run.trace_ids[0], "span_ids": [], "observed": {"service.version": ["v1", "v2"]}}
    ]
    (direct,) = release_conflict_result(run, contract, "service.version", ("v1", "v2")).rules
    assert (direct.rule_id, direct.code) == ("r", "MISSING_PREREQUISITE")
    assert decide(aggregate, contract).verdicts[0].tally.count("insufficient_evidence") == 1


FOUR_RULES = """\
version: 1
name: t
rules:
  - id: d_unknown
    type: allowed_values
    select: {step: ticket.update}
    attribute: no.such.attribute
    values: [1]
  - id: c_fail
    type: required_spans
    select: {step: no.such.step}
  - id: b_pass
    type: required_spans
    select: {step: ticket.update}
  - id: a_mixed
    type: allowed_values
    select: {step: ticket.update}
    attribute: score
    values: [1]
"""


def _mixed_run():
    b = RunBuilder("mixed")
    b.add("ticket.update", attrs={**WRITE, "score": 2})  # a violation
    b.add("ticket.update", attrs=dict(WRITE))  # lacks score: unknown
    return b.run()


def test_each_rule_status_follows_its_findings_and_the_run_takes_the_worst():
    result = evaluate(_mixed_run(), parse_contract(FOUR_RULES))
    assert [(r.rule_id, r.status.value) for r in result.rules] == [
        ("a_mixed", "fail"),
        ("b_pass", "pass"),
        ("c_fail", "fail"),
        ("d_unknown", "insufficient_evidence"),
    ]
    assert result.status == "fail"
    mixed = result.rules[0]
    assert [f.status.value for f in mixed.findings] == ["fail", "insufficient_evidence"]  # sorted
    assert result.rules[1].findings == ()


def test_one_broken_rule_is_an_error_the_others_are_still_judged_and_the_run_is_an_error():
    def broken_for_b(rule, evidence):
        if rule.id == "b_pass":
            raise KeyError("x")
        return evaluate_rule(rule, evidence)

    result = evaluate_safely(_mixed_run(), parse_contract(FOUR_RULES), rule_evaluator=broken_for_b)
    assert [(r.rule_id, r.status.value) for r in result.rules] == [
        ("a_mixed", "fail"),
        ("b_pass", "error"),
        ("c_fail", "fail"),
        ("d_unknown", "insufficient_evidence"),
    ]
    assert result.status == "error"
    assert result.rules[1].findings[0].message == "internal error while checking rule b_pass: KeyError"


def test_run_status_is_insufficient_when_nothing_fails_but_something_is_unknown():
    contract = parse_contract(FOUR_RULES.split("  - id: c_fail")[0])
    result = evaluate_safely(triage_run(), contract)
    assert result.status == "insufficient_data"
    assert (result.run_id, result.release, result.trace_ids) == (
        triage_run().run_id,
        "v1",
        triage_run().trace_ids,
    )


def test_a_checker_that_yields_something_else_is_an_internal_error(monkeypatch):
    def confused(rule, evidence):
        yield "pass"

    # without its compiled pass test, so the checker runs on every run
    spans_rule = dataclasses.replace(REGISTRY["required_spans"], checker=confused, compile=None)
    monkeypatch.setitem(REGISTRY, "required_spans", spans_rule)
    contract = parse_contract(FOUR_RULES)
    with pytest.raises(TypeError) as info:
        evaluate(triage_run(), contract)
    assert str(info.value) == "rule c_fail: checker yielded str"  # the first in the contract's order
    result = evaluate_safely(triage_run(), contract)
    statuses = {r.rule_id: r.status.value for r in result.rules}
    assert statuses["b_pass"] == statuses["c_fail"] == "error"


def test_a_run_whose_evidence_cannot_be_indexed_makes_every_rule_an_error_naming_the_type():
    """Indexing the run fails before any rule runs (here a span id that is not a string): every rule
    is an error naming only the exception type, and the run keeps its id — never a pass."""
    run = triage_run("unindexable")
    broken = dataclasses.replace(
        run, spans=(dataclasses.replace(run.spans[0], span_id=["not", "hashable"]), *run.spans[1:])
    )
    contract = parse_contract(FOUR_RULES)
    result = evaluate_safely(broken, contract)
    assert result.run_id == run.run_id and result.status == "error"
    assert [r.rule_id for r in result.rules] == sorted(rule.id for rule in contract.rules)
    for rule in result.rules:
        assert rule.status.value == "error"
        [finding] = rule.findings
        assert finding.message == f"internal error while checking rule {rule.rule_id}: TypeError"


@pytest.mark.parametrize(("minimum", "status"), [(1, "pass"), (2, "fail")])
def test_required_spans_counts_up_to_its_own_minimum(minimum: int, status: str):
    """``min`` raises the requirement: one permission check is not enough for ``min: 2``."""
    run = triage_run()
    assert sum(1 for s in run.spans if s.name.endswith("permissions.check")) == 1
    contract = _contract(f"type: required_spans\n    select: {{step: permissions.check}}\n    min: {minimum}")
    (rule,) = evaluate(run, contract).rules
    assert (rule.rule_id, rule.code, rule.status.value) == ("r", "MISSING_PREREQUISITE", status)


def test_required_spans_counts_first_attempts_not_their_retries():
    """``min: 2`` asks for two checks, not one check and its retry: a retried call is still one call
    (``agent.retry.number`` above 0 marks the retry)."""
    b = RunBuilder("retried", release="v1")
    b.add("permissions.check", attrs={**READ, "agent.retry.number": 0})
    b.add("permissions.check", attrs={**READ, "agent.retry.number": 1})
    contract = _contract("type: required_spans\n    select: {step: permissions.check}\n    min: 2")
    (rule,) = evaluate(b.run(), contract).rules
    assert (rule.code, rule.status.value) == ("MISSING_PREREQUISITE", "fail")
    message = "permissions.check is required at least 2 time(s) but occurred 1 time(s)."
    assert rule.findings[0].message == message
