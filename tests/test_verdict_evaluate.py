"""Run-level results that no rule checker produces: an internal error and a run whose release is in
dispute — their status, code and wording as the gate reports them."""

from __future__ import annotations

from contract_runs import READ, WRITE, RunBuilder, triage_run
from otel_provenance.offline.aggregate import finding_json
from otel_provenance.offline.contracts import parse_contract
from otel_provenance.offline.evaluate import evaluate_safely, release_conflict_result
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
