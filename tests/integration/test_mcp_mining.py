"""The MCP flow of docs/mcp.md, mined: a contract with the tool rules, and a release whose writes were
all refused fails it.

Before, the MCP SDK's handshake (``initialize`` before ``op.run``) was a trace of its own per session,
counted as a run: ``mine`` approved the handshake family (a tie with the real route), wrote a one-rule
contract, and once the real route was approved a release in which every write was blocked passed.
A trace with neither an agent span nor a tool call is no run now, whichever way the session is opened.
"""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from interop import require
from otel_provenance.cli import run as cli_run

FLOW = Path(__file__).parents[1] / "mcp_flow.py"


def cli(*argv: object) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = cli_run([str(a) for a in argv], out, err)
    return code, out.getvalue(), err.getvalue()


def _flow(out: Path, release: str, mode: str, scenario: str, runs: int) -> None:
    command = [sys.executable, str(FLOW), str(out), release, mode, scenario, str(runs)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-3000:]


@pytest.mark.parametrize("mode", ["inside", "before"], ids=["session-inside-run", "initialize-before-run"])
def test_mined_mcp_flow_gates_a_release_whose_writes_were_all_blocked(tmp_path: Path, mode: str) -> None:
    require("mcp")
    traces = tmp_path / "traces"
    traces.mkdir()
    _flow(traces / "approved.jsonl", "1.0.0", mode, "approved", 3)
    _flow(traces / "blocked.jsonl", "2.0.0", mode, "blocked", 2)
    contract = tmp_path / "contract.yaml"
    code, _, err = cli("mine", "--approved", traces / "approved.jsonl", "-o", contract)
    assert code == 0, err
    if mode == "before":
        assert "left out 3 trace(s) that are no agent run" in err  # one handshake per session
    rules = {r["id"]: r for r in yaml.safe_load(contract.read_text())["rules"]}
    # the tool rules, with the write side effect the server's annotations gave
    assert rules["required.refund_invoice"]["min"] == 1
    assert (rules["at_most.refund_invoice"]["code"], rules["at_most.refund_invoice"]["max"]) == (
        "DUPLICATE_SIDE_EFFECT",
        1,
    )
    assert rules["blocked_calls"]["max"] == 0
    (routes,) = [r for r in rules.values() if r["type"] == "approved_routes"]
    assert [f["status"] for f in routes["families"]] == ["approved"]  # no handshake family
    code, text, err = cli(
        "gate", "check", "--contract", contract, "--release", "2.0.0", "--completed-at",
        "2026-12-01T00:00:00Z", traces,
    )  # fmt: skip
    assert code == 2, text + err
    assert "MISSING_PREREQUISITE (required.refund_invoice)" in text
    assert "BLOCKED_CALL (blocked_calls)" in text
    code, text, _ = cli(
        "gate", "check", "--contract", contract, "--release", "1.0.0", "--completed-at",
        "2026-12-01T00:00:00Z", traces,
    )  # fmt: skip
    assert code == 0, text
