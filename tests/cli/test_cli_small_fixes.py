"""Small CLI truths: overflow counts runs, exit 3 prints no PASS, diff says when there is nothing to
compare, and a closed pipe ends the command quietly."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

from contract_runs import triage_run
from offline_helpers import Recorder, reference_runs, write_jsonl
from otel_provenance.cli import run as cli
from otel_provenance.offline.contracts import parse_contract
from otel_provenance.offline.gate import check_release, decide
from otel_provenance.offline.report import render_markdown, render_text


def test_and_n_more_counts_runs_not_findings() -> None:
    contract = parse_contract(
        "version: 1\nname: t\nrules:\n  - id: placed\n    type: required_ancestry\n"
        "    ancestor: {step: ticket.triage}\n    descendant: {step: ticket.update}\n"
    )
    runs = [triage_run(f"r{i}", "v2", root="batch.job", writes=2) for i in range(8)]  # 2 findings each
    result = decide(check_release(runs, contract, "v2"), contract)
    text = render_text(result)
    assert "… and 3 more run(s) (see the JSON report)" in text  # 8 runs, 5 shown
    assert sum(line.startswith("  trace ") for line in text.splitlines()) == 10  # 5 runs × 2 spans
    assert "… and 3 more run(s)" in render_markdown(result)


def _cli(*argv: str) -> tuple[int, str]:
    out = io.StringIO()
    return cli(list(argv), out, io.StringIO()), out.getvalue()


def test_audit_prints_no_pass_when_it_exits_3(tmp_path: Path) -> None:
    good, _ = reference_runs()
    data = write_jsonl(good, tmp_path / "g.jsonl").read_bytes()
    (tmp_path / "cut.jsonl").write_bytes(data + data[:40])  # a last line cut off mid-write
    code, out = _cli("audit", str(tmp_path / "cut.jsonl"))
    assert code == 3
    assert "PASS" not in out and ": no finding" in out
    plain = Recorder()
    with plain.span("GET /"):
        pass
    code, out = _cli("audit", str(write_jsonl(plain.spans(), tmp_path / "plain.jsonl")))
    assert code == 3 and "PASS" not in out


def test_diff_says_plainly_when_there_is_nothing_to_compare(tmp_path: Path) -> None:
    toolless = Recorder()  # an agent run that called no tool
    with toolless.span("invoke_agent triage", attributes={"gen_ai.operation.name": "invoke_agent"}):
        pass
    a = write_jsonl(toolless.spans(), tmp_path / "a.jsonl")
    code, out = _cli("diff", str(a), str(a))
    assert code == 3
    assert out == "nothing to compare: neither run has a tool call (gen_ai.operation.name=execute_tool)\n"
    plain = Recorder()  # no agent run at all: left out, and said so
    with plain.span("GET /"):
        pass
    http = write_jsonl(plain.spans(), tmp_path / "http.jsonl")
    code, out = _cli("diff", str(a), str(http))
    assert code == 3 and out == f"nothing to compare: B ({http}) holds no run\n"
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    code, out = _cli("diff", str(a), str(empty))
    assert code == 3 and out == f"nothing to compare: B ({empty}) holds no run\n"


def test_a_closed_pipe_ends_the_cli_quietly(tmp_path: Path) -> None:
    # 600 runs listed call by call (--verbose; a clean run is one line without it, #49): some 160 kB,
    # far more than a pipe holds (64 kB), so the write is still under way when the reader goes
    spans = [s for _ in range(600) for s in reference_runs()[0]]
    path = str(write_jsonl(spans, tmp_path / "many.jsonl", batch=50))
    code = "import sys; from otel_provenance.cli import main; sys.argv[0] = 'otel-provenance'; main()"
    proc = subprocess.Popen(
        [sys.executable, "-c", code, "audit", "--verbose", path],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.read(10)
    proc.stdout.close()  # the reader (`| head`) goes away
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == 1
    assert err == "", err
