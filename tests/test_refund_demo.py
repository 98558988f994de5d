"""The README's main command, end to end: five services as real processes, 25 approved v1 runs,
mine, then gate v2 (exit 2 with the two headline findings) and a v1-behaviour release (exit 0)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "examples" / "refund_agent" / "demo.py"


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    out = tmp_path_factory.mktemp("refund-demo")
    proc = subprocess.run(
        [sys.executable, str(DEMO), "--out", str(out)], capture_output=True, text=True, timeout=300
    )
    return proc, out


def test_v2_fails_the_gate_with_the_findings_that_prove_it(demo):
    proc, out = demo
    assert proc.returncode == 2, proc.stdout[-3000:] + proc.stderr[-3000:]
    text = proc.stdout
    block = text[text.index("== gate check release 2.0.0") :]
    assert "FAIL: This release exceeded one or more trajectory thresholds.\nFindings:\n" in block
    lines = block.splitlines()
    assert any(
        line.startswith("MISSING_PREREQUISITE (")
        and "fraud.check is required at least 1 time(s) but occurred 0 time(s)." in line
        for line in lines
    )
    assert any(
        line.startswith("DUPLICATE_SIDE_EFFECT (")
        and "payment.refund occurred 2 times; the contract permits at most 1 per run." in line
        for line in lines
    )
    # Every finding is proved by trace ids.
    report = json.loads((out / "report-2.0.0.json").read_text())
    assert report["decision"] == "fail"


def test_the_v1_behaviour_passes_the_same_gate(demo):
    proc, _ = demo
    block = proc.stdout[
        proc.stdout.index("== gate check release 1.1.0") : proc.stdout.index("== gate check release 2.0.0")
    ]
    assert "PASS: This release met every trajectory threshold." in block
    assert "exit 0" in block


def test_both_releases_told_the_customer_the_same_sentence(demo):
    proc, _ = demo
    assert "-> same sentence" in proc.stdout


def test_no_argument_result_or_reply_value_left_any_process(demo):
    _, out = demo
    files = list(out.rglob("*.jsonl"))
    assert len(files) >= 3 * 7  # 3 phases x (agent spans + 5 services + agent logs)
    data = b"".join(p.read_bytes() for p in files)
    for canary in (b"ORD-0", b"CUST-", b"refund has been issued", b"POL-RET-30", b"FRD-", b"RF-ORD"):
        assert canary not in data, canary
    # ...while the stripped log records themselves were still exported.
    logs = (out / "approved" / "logs" / "agent-1.0.0.jsonl").read_text()
    assert logs.count("refund request handled") == 25
