"""The worked example in examples/contracts/: real OTel SDK traces → mine → gate (exit 2, then 3)."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import yaml

from otel_provenance.cli import run as cli_run
from otel_provenance.offline.readers import iter_runs

EXAMPLE = Path(__file__).parents[2] / "examples" / "contracts" / "triage_agent.py"


def _cli(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = cli_run(list(args), out, err)
    return code, out.getvalue(), err.getvalue()


def test_worked_example(tmp_path: Path) -> None:
    subprocess.run([sys.executable, str(EXAMPLE), str(tmp_path)], check=True, timeout=120)
    approved = tmp_path / "approved.jsonl"
    assert len(list(iter_runs([approved]))) == 25

    contract = tmp_path / "contract.yaml"
    code, out, _ = _cli("mine", "--approved", str(approved), "-o", str(contract), "--name", "ticket-triage")
    assert code == 0
    doc = yaml.safe_load(contract.read_text())
    (routes,) = [r for r in doc["rules"] if r["type"] == "approved_routes"]
    assert [(f["status"], f["runs"]) for f in routes["families"]] == [("approved", 20), ("pending", 5)]

    v2_runs = list(iter_runs([tmp_path / "release-v2.jsonl"]))
    code, out, _ = _cli(
        "gate",
        "check",
        "--contract",
        str(contract),
        "--release",
        "v2",
        "--completed-at",
        "2026-01-01T01:00:00Z",
        str(tmp_path / "release-v2.jsonl"),
    )
    assert code == 2
    lines = out.splitlines()
    assert lines[:2] == ["FAIL: This release exceeded one or more trajectory thresholds.", "Findings:"]
    findings = [
        line
        for line in lines
        if line and not line.startswith(" ") and "(" in line and line.split(" ", 1)[0].isupper()
    ]
    assert findings == [  # those that name a step first (#49)
        "MISSING_PREREQUISITE (required.permissions.check) permissions.check is required at least 1 time(s) "
        "but occurred 0 time(s).",
        "MISSING_PREREQUISITE (customer.notify.after.permissions.check) customer.notify is not preceded by "
        "permissions.check.",
        "MISSING_PREREQUISITE (ticket.update.after.permissions.check) ticket.update is not preceded by "
        "permissions.check.",
        "UNSOURCED_ARGUMENTS (provenance.ticket.update) ticket.update has 1 assumed argument(s) (priority); "
        "the contract permits at most 0.",
    ]
    for run in v2_runs:
        assert f"trace {run.trace_ids[0]}" in out

    code, out, _ = _cli(
        "gate", "check", "--contract", str(contract), "--release", "v3", str(tmp_path / "release-v3.jsonl")
    )
    assert code == 3
    assert out.startswith("INSUFFICIENT DATA: ")
    assert "lacks agent.idempotency.present" in out
