"""The release gate: thresholds, decisions and exit codes, reports, errors that never pass."""

from __future__ import annotations

import dataclasses
import io
import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from contract_runs import AT, CONTRACT, export_runs, triage_run
from otel_provenance.cli import run as cli_run
from otel_provenance.offline.contracts import parse_contract
from otel_provenance.offline.contracts import rules as rule_checkers
from otel_provenance.offline.evaluate import evaluate_safely
from otel_provenance.offline.gate import Shard, check_release, decide
from otel_provenance.offline.report import (
    render_json,
    render_junit,
    render_markdown,
    render_sarif,
    render_text,
)


def _gate(runs, release="v2", text=CONTRACT):
    contract = parse_contract(text, "c.yaml")
    return decide(check_release(runs, contract, release, AT), contract)


def test_pass() -> None:
    result = _gate([triage_run(f"r{i}", "v2") for i in range(3)])
    assert result.decision == "pass"
    assert render_text(result).startswith("PASS: ")


def test_fail_lists_findings_with_trace_ids_in_the_documented_form() -> None:
    bad = triage_run("bad", "v2", skip_check=True)
    result = _gate([bad, triage_run("good", "v2")])
    assert result.decision == "fail"
    text = render_text(result)
    lines = text.splitlines()
    assert lines[0] == "FAIL: This release exceeded one or more trajectory thresholds."
    assert lines[1] == "Findings:"
    assert lines[2] == (
        "MISSING_PREREQUISITE (skipped_check) permissions.check is required at least 1 time(s) "
        "but occurred 0 time(s)."
    )
    assert bad.trace_ids[0] in lines[3]


def test_duplicate_write_message_and_per_rule_threshold() -> None:
    one = triage_run("dup1", "v2", writes=2)
    result = _gate([one, triage_run("ok", "v2")])
    assert result.decision == "pass"  # one failing run is within max_failing_runs: 1
    two = triage_run("dup2", "v2", writes=2)
    result = _gate([one, two])
    assert result.decision == "fail"
    line = (
        "DUPLICATE_SIDE_EFFECT (duplicate_write) ticket.update occurred 2 times; the contract permits at "
        "most 1 per run."
    )
    assert line in render_text(result).splitlines()


def test_zero_runs_is_insufficient_not_pass(tmp_path: Path) -> None:
    result = _gate([triage_run("other", "v1")])
    assert result.decision == "insufficient_data"
    assert result.aggregate.other_release_runs == 1
    traces = tmp_path / "t.jsonl"
    export_runs([triage_run("other", "v1")], str(traces))
    contract = tmp_path / "c.yaml"
    contract.write_text(CONTRACT)
    out = io.StringIO()
    assert (
        cli_run(
            ["gate", "check", "--contract", str(contract), "--release", "v2", str(traces)], out, io.StringIO()
        )
        == 3
    )
    assert out.getvalue().startswith("INSUFFICIENT DATA: ")


def test_too_few_runs_and_insufficient_fraction() -> None:
    assert _gate([triage_run("only", "v2")]).decision == "insufficient_data"  # min_runs: 2
    missing = {"update_attrs": {"agent.idempotency.present": None}}
    runs = [triage_run(f"r{i}", "v2") for i in range(3)] + [triage_run("m", "v2", **missing)]
    assert _gate(runs).decision == "pass"  # 1/4 insufficient is allowed
    runs.append(triage_run("m2", "v2", **missing))
    result = _gate(runs)
    assert result.decision == "insufficient_data"  # 2/5 > 1/4
    verdict = next(v for v in result.verdicts if v.rule.id == "idempotent")
    assert verdict.status == "insufficient_data"


def _boom(rule, evidence):
    raise RuntimeError("injected")


def test_internal_error_is_error_never_pass() -> None:
    contract = parse_contract(CONTRACT)
    run = triage_run("r", "v2")
    result = evaluate_safely(run, contract, rule_evaluator=_boom)
    assert result.status == "error"
    assert all(r.status.value == "error" for r in result.rules)
    aggregate = check_release(
        [run, triage_run("s", "v2")],
        contract,
        "v2",
        AT,
        evaluator=lambda r, c: evaluate_safely(r, c, rule_evaluator=_boom),
    )
    assert decide(aggregate, contract).decision == "error"


def test_internal_error_in_a_rule_exits_1(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(rule, ev):
        raise ZeroDivisionError("injected")
        yield  # pragma: no cover

    registry = rule_checkers.REGISTRY
    # without its compiled pass test, so the broken checker runs on every run
    broken_type = dataclasses.replace(registry["cardinality"], checker=broken, compile=None)
    monkeypatch.setitem(registry, "cardinality", broken_type)
    traces = tmp_path / "t.jsonl"
    export_runs([triage_run(f"r{i}", "v2") for i in range(3)], str(traces))
    contract = tmp_path / "c.yaml"
    contract.write_text(CONTRACT)
    out, junit = io.StringIO(), tmp_path / "j.xml"
    code = cli_run(
        ["gate", "check", "--contract", str(contract), "--release", "v2", str(traces), "--junit", str(junit)],
        out,
        io.StringIO(),
    )
    assert code == 1
    assert out.getvalue().startswith("ERROR: ")
    assert "internal error while checking rule duplicate_write: ZeroDivisionError" in out.getvalue()
    suite = ET.parse(junit).getroot().find("testsuite")
    assert suite is not None and suite.get("errors") == "1"


def test_reports(tmp_path: Path) -> None:
    bad = triage_run("bad", "v2", skip_check=True)
    missing = triage_run("m", "v2", update_attrs={"agent.idempotency.present": None})
    result = _gate(
        [
            bad,
            missing,
            triage_run("ok", "v2"),
            triage_run("m2", "v2", **{"update_attrs": {"agent.idempotency.present": None}}),
        ]
    )
    data = json.loads(render_json(result))
    assert data["decision"] == "fail"
    assert data["runs"] == {
        "evaluated": 4,
        "pass": 1,
        "fail": 1,
        "insufficient_data": 2,
        "error": 0,
        "other_releases": 0,
        "other_releases_by_release": {},
    }
    rule = next(r for r in data["rules"] if r["id"] == "skipped_check")
    assert rule["findings"][0]["witnesses"][0]["trace_id"] == bad.trace_ids[0]
    assert "1/4" in render_json(result) and "." not in json.dumps(data["rules"][0]["thresholds"])

    suite = ET.fromstring(render_junit(result).split("?>", 1)[1]).find("testsuite")
    cases = {c.get("name"): c for c in suite.iter("testcase")}
    assert cases["skipped_check (MISSING_PREREQUISITE)"].find("failure") is not None
    assert cases["idempotent (DISALLOWED_VALUE)"].find("skipped") is not None
    assert list(cases["duplicate_write (DUPLICATE_SIDE_EFFECT)"]) == []

    sarif = json.loads(render_sarif(result, "c.yaml"))
    assert sarif["version"] == "2.1.0"
    run = sarif["runs"][0]
    assert [r["id"] for r in run["tool"]["driver"]["rules"]] == [
        "duplicate_write",
        "idempotent",
        "skipped_check",
    ]
    fails = [r for r in run["results"] if r["ruleId"] == "skipped_check"]
    assert len(fails) == 1 and fails[0]["level"] == "error"
    assert fails[0]["locations"][0]["physicalLocation"]["region"]["startLine"] == 7
    assert any(
        bad.trace_ids[0] in loc["fullyQualifiedName"] for loc in fails[0]["locations"][0]["logicalLocations"]
    )

    md = render_markdown(result)
    assert md.startswith("## Trajectory gate: `fail`") and bad.trace_ids[0] in md


def test_cli_writes_every_report_and_validates_completed_at(tmp_path: Path) -> None:
    traces = tmp_path / "t.jsonl"
    export_runs([triage_run("bad", "v2", skip_check=True), triage_run("ok", "v2")], str(traces))
    contract = tmp_path / "c.yaml"
    contract.write_text(CONTRACT)
    base = ["gate", "check", "--contract", str(contract), "--release", "v2", str(traces)]
    files = {opt: tmp_path / f"report{opt}" for opt in ("--report-json", "--junit", "--sarif", "--markdown")}
    args = base + ["--completed-at", AT] + [x for opt, p in files.items() for x in (opt, str(p))]
    assert cli_run(args, io.StringIO(), io.StringIO()) == 2
    assert all(p.stat().st_size > 0 for p in files.values())
    assert json.loads(files["--report-json"].read_text())["completed_at"] == AT
    err = io.StringIO()
    assert cli_run([*base, "--completed-at", "yesterday"], io.StringIO(), err) == 1
    assert "--completed-at" in err.getvalue()
    assert (
        cli_run(
            ["gate", "check", "--contract", str(contract), "--release", "v2"], io.StringIO(), io.StringIO()
        )
        == 1
    )


def test_shard_parsing() -> None:
    assert Shard.parse("2/3") == Shard(2, 3)
    for bad in ("0/3", "4/3", "x", "1/0"):
        with pytest.raises(ValueError):
            Shard.parse(bad)
    owners = [sum(Shard(i, 3).owns(f"run-{n}") for i in (1, 2, 3)) for n in range(50)]
    assert owners == [1] * 50


def test_incomplete_input_cannot_pass(tmp_path: Path) -> None:
    traces = tmp_path / "t.jsonl"
    export_runs([triage_run(f"r{i}", "v2") for i in range(3)], str(traces))
    with traces.open("a") as f:
        f.write('{"resourceSpans": [{"resource": ')  # the writer was killed mid-line
    contract = tmp_path / "c.yaml"
    contract.write_text(CONTRACT)
    out, err, report = io.StringIO(), io.StringIO(), tmp_path / "r.json"
    code = cli_run(
        [
            "gate",
            "check",
            "--contract",
            str(contract),
            "--release",
            "v2",
            str(traces),
            "--report-json",
            str(report),
        ],
        out,
        err,
    )
    assert code == 3
    assert "incomplete input" in err.getvalue()
    data = json.loads(report.read_text())
    assert data["decision"] == "insufficient_data" and data["runs"]["pass"] == 3
    assert data["incomplete_inputs"] and str(traces) in data["incomplete_inputs"][0]
    assert "Incomplete input: " in out.getvalue()


def test_a_rule_on_a_step_no_run_contains_is_never_a_silent_pass():
    """A misspelled step (or one the release never ran) makes upper-bound rules vacuous: the rule is
    insufficient, not passed — unless another rule requires that step (then that rule fails)."""
    contract = parse_contract(
        CONTRACT.replace("select: {step: ticket.update}", "select: {step: ticket.updte}"), "typo.yaml"
    )
    runs = [triage_run(f"run-{i}") for i in range(4)]
    result = decide(check_release(runs, contract, "v1", AT), contract)
    assert result.decision == "insufficient_data"
    verdict = next(v for v in result.verdicts if v.rule.id == "duplicate_write")
    assert verdict.status == "insufficient_data" and "ticket.updte" in verdict.reason
    assert "(duplicate_write) selects step 'ticket.updte'" in render_text(result)
    # The correctly spelled contract passes the same runs.
    good = parse_contract(CONTRACT, "good.yaml")
    assert decide(check_release(runs, good, "v1", AT), good).decision == "pass"


@pytest.mark.parametrize("minimum", ["min: 1", "exact: 1"])
def test_a_step_a_minimum_count_requires_is_judged_by_that_rule_not_called_misspelled(minimum: str):
    """A cardinality rule with a minimum (``min`` or ``exact``) fails the runs that lack its step, so
    an upper-bound rule on the same step is not also reported as selecting a misspelled step."""
    text = CONTRACT.replace("select: {step: ticket.update}", "select: {step: ticket.escalate}")
    text += f"""  - id: escalated
    type: cardinality
    select: {{step: ticket.escalate}}
    {minimum}
"""
    contract = parse_contract(text, "min.yaml")
    runs = [triage_run(f"run-{i}") for i in range(4)]
    result = decide(check_release(runs, contract, "v1", AT), contract)
    statuses = {v.rule.id: v.status for v in result.verdicts}
    assert statuses["escalated"] == "fail"
    assert statuses["duplicate_write"] == "pass"
    assert "misspelled" not in render_text(result)


@pytest.mark.parametrize("torn", [False, True])
def test_jobs_give_exactly_the_result_of_one_process(tmp_path: Path, torn: bool) -> None:
    traces = tmp_path / "t.jsonl"
    runs = [triage_run(f"r{i}", "v2", writes=1 + i % 2, skip_check=i % 3 == 0) for i in range(12)]
    export_runs(runs, str(traces))
    if torn:
        with traces.open("a") as f:
            f.write('{"resourceSpans": [{"resource": ')  # the writer was killed mid-line
    contract = tmp_path / "c.yaml"
    contract.write_text(CONTRACT)
    outputs = []
    for jobs in ("1", "3"):
        out, err, report = io.StringIO(), io.StringIO(), tmp_path / f"r{jobs}.json"
        argv = ["gate", "check", "--contract", str(contract), "--release", "v2", "--completed-at", AT]
        code = cli_run([*argv, "--jobs", jobs, "--report-json", str(report), str(traces)], out, err)
        outputs.append((code, out.getvalue(), report.read_bytes()))
    assert outputs[0] == outputs[1]
    assert outputs[0][0] == 2  # a failing rule fails; a cut-off file is recorded either way
    assert (b"incomplete" in outputs[0][2] and b"t.jsonl:" in outputs[0][2]) == torn


def test_jobs_cannot_be_combined_with_a_shard(tmp_path: Path) -> None:
    contract = tmp_path / "c.yaml"
    contract.write_text(CONTRACT)
    argv = ["gate", "check", "--contract", str(contract), "--release", "v2", "--jobs", "2"]
    code = cli_run(
        [*argv, "--shard", "1/2", "--partial", str(tmp_path / "p"), "x.jsonl"], io.StringIO(), io.StringIO()
    )
    assert code == 1
