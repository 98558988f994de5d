"""Every rule type: pass, fail and insufficient evidence — on hand-built runs and on the same runs
written by the real OTel SDK's OTLP JSON file exporter and read back."""

from __future__ import annotations

from pathlib import Path

import pytest

from contract_runs import MISSING_PARENT, READ, WRITE, export_runs, triage_run
from otel_provenance import semconv
from otel_provenance.offline.contracts import RULE_TYPES, parse_contract
from otel_provenance.offline.evaluate import evaluate
from otel_provenance.offline.fingerprint import edge_counts, fingerprint, step_counts
from otel_provenance.offline.model import Run
from otel_provenance.offline.readers import iter_runs


def _route_rule() -> str:
    usual = triage_run("route-model")
    steps = "".join(f"\n          {k}: {n}" for k, n in sorted(step_counts(usual).items()))
    edges = "".join(
        f"\n          - {{from: '{a}', to: '{b}', count: {n}}}"
        for (a, b), n in sorted(edge_counts(usual).items())
    )
    return f"""
    type: approved_routes
    similarity: "1"
    families:
      - id: usual
        status: approved
        fingerprints: ["{fingerprint(usual)}"]
        steps:{steps}
        edges:{edges}
"""


# rule type -> (rule body, pass run, fail run, insufficient run); runs are keyword changes to triage_run
CASES = {
    "required_spans": (
        "type: required_spans\n    select: {step: permissions.check}",
        {},
        {"skip_check": True},
        {"skip_check": True, "orphan": True},
    ),
    "forbidden_spans": (
        "type: forbidden_spans\n    select: {step: ticket.delete, attributes: {agent.side_effect: write}}",
        {},
        {"extra": [("ticket.delete", WRITE)]},
        {"extra": [("ticket.delete", {})]},
    ),
    "cardinality": (
        "type: cardinality\n    select: {step: ticket.update}\n    max: 1",
        {},
        {"writes": 2},
        {"orphan": True},
    ),
    "required_edges": (
        "type: required_edges\n    parent: {step: ticket.triage}\n    child: {step: ticket.update}",
        {},
        {"update_under_check": True},
        {"orphan_update": True},
    ),
    "required_ancestry": (
        "type: required_ancestry\n    ancestor: {step: ticket.triage}\n    descendant: {step: ticket.update}",
        {},
        {"root": "batch.job"},
        {"orphan_update": True},
    ),
    "forbidden_paths": (
        "type: forbidden_paths\n    to: {attributes: {agent.side_effect: write}}\n"
        "    unless_preceded_by: {step: permissions.check}",
        {},
        {"skip_check": True},
        {"extra": [("mystery.tool", {})]},
    ),
    "attribute_constraints": (
        "type: attribute_constraints\n    select: {step: ticket.update}\n    attribute: agent.retry.number\n"
        "    op: '<='\n    value: 0",
        {},
        {"writes": 2},
        {"update_attrs": {semconv.RETRY_NUMBER: None}},
    ),
    "allowed_values": (
        "type: allowed_values\n    select: {attributes: {agent.side_effect: write}}\n"
        "    attribute: agent.idempotency.present\n    values: [true]",
        {},
        {"update_attrs": {semconv.IDEMPOTENCY_PRESENT: False}},
        {"update_attrs": {semconv.IDEMPOTENCY_PRESENT: None}},
    ),
    "retry_budgets": (
        "type: retry_budgets\n    select: {step: ticket.update}\n    max_retries: 0",
        {},
        {"writes": 2},
        {"update_attrs": {semconv.RETRY_NUMBER: None}},
    ),
    "approved_routes": (
        None,
        {},
        {"skip_check": True},
        {"skip_check": True, "orphan": True},
    ),
    "numeric_budgets": (
        "type: numeric_budgets\n    select: {step: ticket.update}\n    attribute: ticket.cost.cents\n"
        "    aggregate: sum\n    max: 100",
        {"update_attrs": {"ticket.cost.cents": 60}},
        {"writes": 2, "update_attrs": {"ticket.cost.cents": 60}},
        {"writes": 2, "update_attrs": {"ticket.cost.cents": 60.5, semconv.IDEMPOTENCY_PRESENT: True}}
        | {"extra": [("ticket.update", WRITE)]},
    ),
    "provenance_budgets": (
        "type: provenance_budgets\n    select: {step: ticket.update}\n    max_assumed: 0",
        {},
        {"status_kind": "assumed"},
        {
            "update_attrs": {
                semconv.arg_attr("ticket_id", ".kind"): None,
                semconv.arg_attr("status", ".kind"): None,
            }
        },
    ),
    "blocked_calls": (
        "type: blocked_calls\n    select: {step: ticket.update}\n    max: 0",
        {"update_attrs": {semconv.TOOL_STATUS: "ok"}},
        {"update_attrs": {semconv.TOOL_STATUS: "blocked"}},
        {},
    ),
}
EXPECTED = (("pass", "pass"), ("fail", "fail"), ("insufficient", "insufficient_evidence"))


def _contract(rule_type: str):
    body = CASES[rule_type][0] or _route_rule().strip()
    return parse_contract(f"version: 1\nname: t\nrules:\n  - id: r\n    {body}\n", "test.yaml")


def _runs(rule_type: str) -> dict[str, Run]:
    _, ok, bad, unknown = CASES[rule_type]
    return {
        label: triage_run(f"{rule_type}-{label}", **changes)
        for label, changes in (("pass", ok), ("fail", bad), ("insufficient", unknown))
    }


def test_every_rule_type_has_cases() -> None:
    assert set(CASES) == set(RULE_TYPES)


@pytest.mark.parametrize("rule_type", RULE_TYPES)
@pytest.mark.parametrize(("label", "status"), EXPECTED)
def test_hand_built_runs(rule_type: str, label: str, status: str) -> None:
    run = _runs(rule_type)[label]
    result = evaluate(run, _contract(rule_type))
    (rule,) = result.rules
    assert rule.status.value == status, [f.message for f in rule.findings]
    if status != "pass":
        assert rule.findings and all(w.trace_id in run.trace_ids for f in rule.findings for w in f.witnesses)


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Run]]:
    """Every case's runs, exported by the OTel SDK and read back, keyed like ``_runs``."""
    path = Path(tmp_path_factory.mktemp("exported")) / "cases.jsonl"
    originals = {rt: _runs(rt) for rt in RULE_TYPES}
    flat = [run for cases in originals.values() for run in cases.values()]
    export_runs(flat, str(path))
    read = list(iter_runs([path]))
    assert len(read) == len(flat)
    by_case = {_case(run): run for run in read}
    return {
        rt: {label: by_case[_case(run)] for label, run in cases.items()} for rt, cases in originals.items()
    }


def _case(run: Run) -> str:
    (name,) = [s.attributes["test.case"] for s in run.spans if "test.case" in s.attributes]
    return name


@pytest.mark.parametrize("rule_type", RULE_TYPES)
@pytest.mark.parametrize(("label", "status"), EXPECTED)
def test_runs_read_back_from_sdk_export(exported: dict, rule_type: str, label: str, status: str) -> None:
    run = exported[rule_type][label]
    assert all(len(s.span_id) == 16 for s in run.spans)
    (rule,) = evaluate(run, _contract(rule_type)).rules
    assert rule.status.value == status, [f.message for f in rule.findings]


def test_missing_parent_constant_is_not_a_real_span() -> None:
    assert all(s.span_id != MISSING_PARENT for s in triage_run(orphan=True).spans)
    assert READ[semconv.SIDE_EFFECT] == "read"


def test_provenance_budget_with_evicted_kinds_never_passes() -> None:
    """The span's own counters outlive evicted agent.arg.* keys: more counted than named is lost
    evidence — a failure when the count alone exceeds the budget, else insufficient."""
    contract = parse_contract(
        "version: 1\nname: t\nrules:\n  - id: p\n"
        "    type: provenance_budgets\n    select: {step: ticket.update}\n    max_assumed: 0\n",
        "t.yaml",
    )
    evicted = {semconv.arg_attr("status", ".kind"): None}  # 'status' was assumed; its kind is gone
    over = triage_run("over", update_attrs={**evicted, semconv.BUDGET_ASSUMED: 1})
    [result] = evaluate(over, contract).rules
    assert result.status.value == "fail"
    within = parse_contract(
        "version: 1\nname: t\nrules:\n  - id: p\n"
        "    type: provenance_budgets\n    select: {step: ticket.update}\n    max_assumed: 1\n",
        "t.yaml",
    )
    [result] = evaluate(over, within).rules
    assert result.status.value == "insufficient_evidence"
