"""Verdict paths that a planted one-line bug could change without any test noticing (issue #17).

Rule-level cases go through ``parse_contract`` + ``evaluate``; gate-level cases through the CLI on
trace files written by the real SDK, as a user would run them.
"""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from contract_runs import READ, WRITE, RunBuilder, export_runs, triage_run
from otel_provenance.cli import run as cli_run
from otel_provenance.offline.aggregate import Aggregate
from otel_provenance.offline.contracts import parse_contract
from otel_provenance.offline.evaluate import evaluate, evaluate_safely
from otel_provenance.offline.gate import check_release, decide
from otel_provenance.offline.mine import mine_contract
from otel_provenance.offline.model import Run

AT = "2026-01-01T00:00:00Z"


def _contract(body: str):
    return parse_contract(f"version: 1\nname: t\nrules:\n  - id: r\n    {body}\n")


def _rule(body: str, run: Run):
    (rule,) = evaluate(run, _contract(body)).rules
    return rule


# --- one rule, one run -----------------------------------------------------------------------------


def test_a_violation_outranks_missing_evidence_within_one_rule_on_one_run():
    b = RunBuilder("mixed")
    b.add("ticket.update", attrs={**WRITE, "agent.idempotency.present": False})  # a violation
    b.add("ticket.update", attrs=dict(WRITE))  # lacks the attribute: unknown
    run = b.run()
    body = (
        "type: allowed_values\n    select: {step: ticket.update}\n"
        "    attribute: agent.idempotency.present\n    values: [true]"
    )
    rule = _rule(body, run)
    assert rule.status.value == "fail"
    assert {f.status.value for f in rule.findings} == {"fail", "insufficient_evidence"}
    assert evaluate(run, _contract(body)).status == "fail"


def _updates(n: int) -> Run:
    b = RunBuilder(f"updates-{n}")
    for _ in range(n):
        b.add("ticket.update", attrs=dict(WRITE))
    return b.run()


@pytest.mark.parametrize(
    ("count", "status"), [(0, "fail"), (1, "pass"), (2, "fail")], ids=["none", "exactly", "twice"]
)
def test_cardinality_exact_fails_below_and_above(count, status):
    rule = _rule("type: cardinality\n    select: {step: ticket.update}\n    exact: 1", _updates(count))
    assert rule.status.value == status
    if status == "fail":
        assert rule.findings[0].message == (
            f"ticket.update occurred {count} time(s); the contract requires exactly 1 per run."
        )


GUARDED = (
    "type: forbidden_paths\n    to: {step: ticket.update}\n    unless_preceded_by: {step: permissions.check}"
)


def _ordered(steps: list[str]) -> Run:
    b = RunBuilder("ordered")
    for step in steps:
        b.add(step, attrs=WRITE if step == "ticket.update" else READ)
    return b.run()


def test_one_to_one_guard_after_its_write_does_not_count():
    rule = _rule(GUARDED + "\n    one_to_one: true", _ordered(["ticket.update", "permissions.check"]))
    assert rule.status.value == "fail"
    assert rule.findings[0].message == (
        "ticket.update occurred 1 time(s) but only 0 had their own preceding permissions.check."
    )


def test_a_guard_before_the_source_does_not_guard_the_path_from_it():
    body = GUARDED + "\n    from: {step: web.fetch}"
    before_source = _ordered(["permissions.check", "web.fetch", "ticket.update"])
    rule = _rule(body, before_source)
    assert rule.status.value == "fail"
    assert "is not preceded by permissions.check after web.fetch" in rule.findings[0].message
    between = _ordered(["web.fetch", "permissions.check", "ticket.update"])
    assert _rule(body, between).status.value == "pass"


# --- the gate -----------------------------------------------------------------------------------


def test_an_internal_error_on_a_rule_whose_step_never_occurs_is_an_error_not_insufficient():
    contract = _contract("type: retry_budgets\n    select: {step: no.such.step}\n    max_retries: 0")

    def broken(rule, evidence):
        raise RuntimeError("checker bug")

    runs = [triage_run(f"u{i}") for i in range(3)]
    aggregate = check_release(
        runs, contract, "v1", AT, evaluator=lambda run, c: evaluate_safely(run, c, rule_evaluator=broken)
    )
    result = decide(aggregate, contract)
    assert result.decision == "error"
    assert result.verdicts[0].status == "error"


def test_a_run_without_any_release_is_not_evaluated_as_the_release(tmp_path: Path):
    approved = [triage_run(f"a{i}") for i in range(3)]
    contract = tmp_path / "contract.yaml"
    contract.write_text(mine_contract(approved, "triage"))
    traces = tmp_path / "unversioned.jsonl"
    export_runs([triage_run(f"u{i}", release=None) for i in range(3)], str(traces))
    out = io.StringIO()
    code = cli_run(
        ["gate", "check", "--contract", str(contract), "--release", "v1", "--completed-at", AT, str(traces)],
        out,
        io.StringIO(),
    )
    assert code == 3, out.getvalue()
    assert "0 evaluated" in out.getvalue()


def test_merge_keeps_either_sides_incomplete_input(tmp_path: Path):
    runs = [triage_run(f"u{i}") for i in range(6)]
    contract = tmp_path / "contract.yaml"
    contract.write_text(mine_contract(runs, "triage"))
    good = tmp_path / "good.jsonl"
    export_runs(runs, str(good))
    extra = tmp_path / "extra.jsonl"
    export_runs([triage_run(f"x{i}") for i in range(2)], str(extra))
    cut = tmp_path / "cut.jsonl"
    first_record = extra.read_bytes().splitlines(keepends=True)[0]
    cut.write_bytes(first_record[: len(first_record) // 2])  # the writer was stopped mid-record

    common = ["--contract", str(contract), "--release", "v1", "--completed-at", AT]
    assert cli_run(["gate", "check", *common, str(good)], io.StringIO(), io.StringIO()) == 0
    partials = []
    for shard, files in (("1/2", [good]), ("2/2", [good, cut])):
        part = tmp_path / f"p{shard[0]}.json"
        code = cli_run(
            ["gate", "check", *common, "--shard", shard, "--partial", str(part), *map(str, files)],
            io.StringIO(),
            io.StringIO(),
        )
        assert code == 0
        partials.append(str(part))
    for order in (partials, partials[::-1]):
        out = io.StringIO()
        code = cli_run(["gate", "merge", "--contract", str(contract), *order], out, io.StringIO())
        assert code == 3, out.getvalue()


def test_tallying_the_same_run_twice_is_refused():
    contract = _contract("type: required_spans\n    select: {step: ticket.update}")
    result = evaluate(triage_run("twice"), contract)
    empty = Aggregate.empty(contract.digest, ["r"], "v1", AT)
    with pytest.raises(ValueError, match="twice"):
        empty.add_all([result, result])
    once = empty.add_all([result])
    with pytest.raises(ValueError, match="two partial results"):
        once.merge(once)
