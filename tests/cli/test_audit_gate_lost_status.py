"""``audit`` and ``gate`` agree on a blocked call whose ``agent.tool.status`` was lost on the way
(issue #36: the audit said PASS, the gate 3). The call is blocked by the real package; the status
and the recorded violations are then dropped from the exported file, as a filtering Collector or an
attribute limit would."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
import yaml

from blocking_agent import drop_attributes, write_runs
from otel_provenance import semconv
from otel_provenance.cli import run as cli_run

COMPLETED = "2026-12-01T00:00:00Z"


def cli(*argv: object) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = cli_run([str(a) for a in argv], out, err)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def traces(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    folder = tmp_path_factory.mktemp("lost")
    approved = write_runs(folder / "v1.jsonl", "v1", 2, "good")
    blocked = write_runs(folder / "v2.jsonl", "v2", 1, "bad")
    return approved, blocked


def _blocked_only_contract(approved: Path, folder: Path) -> Path:
    """The mined contract, cut down to its blocked-call rule (so no other rule decides the gate)."""
    mined = folder / "mined.yaml"
    assert cli("mine", "--approved", approved, "-o", mined)[0] == 0
    doc = yaml.safe_load(mined.read_text())
    del doc["seal"]  # cut down by hand: unsealed
    doc["rules"] = [r for r in doc["rules"] if r["type"] == "blocked_calls"]
    assert doc["rules"], "the miner proposes a blocked_calls rule"
    doc["gate"]["max_insufficient_fraction"] = 0
    contract = folder / "blocked.yaml"
    contract.write_text(yaml.safe_dump(doc, sort_keys=False))
    return contract


@pytest.mark.parametrize(
    "lost",
    [(semconv.TOOL_STATUS,), (semconv.TOOL_STATUS, semconv.VIOLATIONS)],
    ids=["status", "status-and-violations"],
)
def test_a_blocked_call_without_its_status_never_passes_the_audit(traces, tmp_path: Path, lost) -> None:
    _, blocked = traces
    assert cli("audit", blocked)[0] == 2  # intact: the blocked call fails
    damaged = tmp_path / "v2.jsonl"
    damaged.write_bytes(blocked.read_bytes())
    drop_attributes(damaged, lost)
    code, out, err = cli("audit", damaged)
    assert code in (2, 3), out + err
    assert "unknown_status: patch_file carries no agent.tool.status" in out


def test_audit_and_gate_agree_on_a_lost_status(traces, tmp_path: Path) -> None:
    approved, blocked = traces
    damaged = tmp_path / "v2.jsonl"
    damaged.write_bytes(blocked.read_bytes())
    drop_attributes(damaged, (semconv.TOOL_STATUS, semconv.VIOLATIONS))
    contract = _blocked_only_contract(approved, tmp_path)
    gate = cli(
        "gate", "check", "--contract", contract, "--release", "v2", "--completed-at", COMPLETED, damaged
    )
    audit = cli("audit", damaged)
    assert gate[0] == 3, gate
    assert audit[0] == gate[0], audit
    assert "INSUFFICIENT" in audit[1]
