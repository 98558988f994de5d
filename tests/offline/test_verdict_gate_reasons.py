"""The gate's decision and each rule's verdict carry a reason that the reports print: every branch
of ``decide`` and of the per-rule verdict, with its exact words (in-process, no files)."""

from __future__ import annotations

from contract_runs import RunBuilder, triage_run
from otel_provenance.offline.contracts import parse_contract
from otel_provenance.offline.evaluate import evaluate_safely
from otel_provenance.offline.gate import check_release, decide

AT = "2026-01-31T12:00:00Z"
CONTRACT = """\
version: 1
name: triage
gate:
  min_runs: 2
  max_insufficient_fraction: "1/4"
rules:
  - id: one_write
    type: cardinality
    select: {step: ticket.update}
    max: 1
    thresholds: {max_failing_runs: 1}
  - id: idempotent
    type: allowed_values
    select: {step: ticket.update}
    attribute: agent.idempotency.present
    values: [true]
"""


def _gate(runs, text=CONTRACT, release="v2", **kwargs):
    contract = parse_contract(text)
    return decide(check_release(runs, contract, release, AT, **kwargs), contract)


def _reasons(result) -> dict[str, tuple[str, str]]:
    return {v.rule.id: (v.status, v.reason) for v in result.verdicts}


def test_a_pass_says_every_rule_is_within_its_thresholds_and_counts_the_runs():
    result = _gate([triage_run(f"r{i}", "v2") for i in range(3)])
    assert (result.decision, result.reason) == ("pass", "every rule is within its thresholds")
    assert _reasons(result)["one_write"] == ("pass", "0 failing, 0 insufficient of 3 run(s)")


def test_failing_runs_at_the_threshold_pass_and_above_it_fail_with_both_numbers():
    at_limit = [triage_run("dup1", "v2", writes=2), triage_run("ok1", "v2"), triage_run("ok2", "v2")]
    result = _gate(at_limit)
    assert result.decision == "pass"
    assert _reasons(result)["one_write"] == ("pass", "1 failing, 0 insufficient of 3 run(s)")
    result = _gate([*at_limit, triage_run("dup2", "v2", writes=2)])
    assert (result.decision, result.reason) == ("fail", "a rule exceeded its failing-run threshold")
    assert _reasons(result)["one_write"] == ("fail", "2 failing run(s); at most 1 allowed")


def test_too_few_runs_names_how_many_were_found_and_needed():
    result = _gate([triage_run("only", "v2")])
    assert (result.decision, result.reason) == ("insufficient_data", "1 run(s) found; the contract needs 2")
    assert _reasons(result)["one_write"] == ("insufficient_data", "1 run(s); at least 2 needed")


def test_too_many_runs_without_evidence_names_the_fraction():
    missing = {"update_attrs": {"agent.idempotency.present": None}}
    runs = [triage_run(f"r{i}", "v2") for i in range(3)]
    runs += [triage_run("m1", "v2", **missing), triage_run("m2", "v2", **missing)]
    result = _gate(runs)
    assert (result.decision, result.reason) == (
        "insufficient_data",
        "too many runs lack the evidence a rule needs",
    )
    assert _reasons(result)["idempotent"] == (
        "insufficient_data",
        "2 of 5 run(s) lack evidence; at most 1/4 allowed",
    )


def test_no_runs_of_the_release_names_the_releases_that_were_found():
    result = _gate([triage_run("a", "v1"), triage_run("b", "v1"), triage_run("c", "v3")])
    assert (result.decision, result.reason) == (
        "insufficient_data",
        "no runs of release v2 were found (found: v1 (2 runs), v3 (1 run))",
    )
    assert _reasons(result)["one_write"] == ("insufficient_data", "0 run(s); at least 2 needed")
    alone = _gate([])
    assert alone.reason == "no runs of release v2 were found"


def test_runs_without_any_tool_span_are_insufficient_even_when_a_rule_fails():
    bare = [RunBuilder(f"bare{i}", release="v2").run() for i in range(3)]  # a root span only
    text = CONTRACT + "  - id: must_check\n    type: required_spans\n    select: {step: permissions.check}\n"
    result = _gate(bare, text)
    assert _reasons(result)["must_check"][0] == "fail"
    assert (result.decision, result.reason) == (
        "insufficient_data",
        "no run of release v2 holds a tool span (gen_ai.operation.name=execute_tool), so there is no "
        "agent behaviour to judge",
    )


def test_an_internal_error_outranks_everything_and_counts_the_runs_hit():
    def broken(rule, evidence):
        raise RuntimeError("bug")

    runs = [triage_run(f"r{i}", "v2", writes=2) for i in range(3)]
    result = _gate(runs, evaluator=lambda run, c: evaluate_safely(run, c, rule_evaluator=broken))
    assert (result.decision, result.reason) == ("error", "an internal error occurred while checking a rule")
    assert _reasons(result)["one_write"] == ("error", "3 run(s) hit an internal error")


def test_a_rule_on_a_step_no_run_contains_is_insufficient_and_says_so():
    misspelled = "select: {step: ticket.updat}\n    attribute"
    text = CONTRACT.replace("select: {step: ticket.update}\n    attribute", misspelled)
    result = _gate([triage_run(f"r{i}", "v2") for i in range(3)], text)
    assert _reasons(result)["idempotent"] == (
        "insufficient_data",
        "selects step 'ticket.updat', which no run of this release contains (a misspelled step?)",
    )
    assert result.decision == "insufficient_data"


def test_an_incomplete_input_keeps_an_otherwise_passing_gate_from_passing():
    contract = parse_contract(CONTRACT)
    aggregate = check_release([triage_run(f"r{i}", "v2") for i in range(3)], contract, "v2", AT)
    result = decide(aggregate.with_incomplete_inputs(["t.jsonl:7: truncated record"]), contract)
    assert (result.decision, result.reason) == (
        "insufficient_data",
        "the trace input is incomplete, so it cannot prove a pass",
    )
