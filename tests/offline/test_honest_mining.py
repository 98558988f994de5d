"""Honest mining: no contract from traces without agent behaviour, and approving a family re-derives
the step rules so that the family's own runs pass them."""

from __future__ import annotations

import io
from pathlib import Path

import yaml
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.trace import SpanKind

from contract_runs import export_runs, triage_run
from interop import FileSpanExporter
from otel_provenance.cli import run as cli


def _cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    return cli(list(argv), out, err), out.getvalue(), err.getvalue()


def test_mine_refuses_traces_without_an_agent_run(tmp_path: Path) -> None:
    path = tmp_path / "http.jsonl"
    with path.open("w") as stream:
        provider = TracerProvider(resource=Resource.create({"service.name": "web", "service.version": "1"}))
        provider.add_span_processor(SimpleSpanProcessor(FileSpanExporter(stream=stream)))
        tracer = provider.get_tracer("web")
        for _ in range(3):
            server = tracer.start_as_current_span("GET /orders", kind=SpanKind.SERVER)
            with server, tracer.start_as_current_span("SELECT orders"):
                pass
        provider.shutdown()
    out_file = tmp_path / "c.yaml"
    code, _, err = _cli("mine", "--approved", str(path), "-o", str(out_file))
    assert code == 1
    assert "left out 3 trace(s) that are no agent run: neither an agent invocation span nor a tool" in err
    assert "no agent runs found in the approved traces; no contract was written" in err
    assert not out_file.exists()


def test_approving_a_family_without_a_step_makes_its_runs_pass(tmp_path: Path) -> None:
    approved = tmp_path / "approved.jsonl"
    export_runs(
        [triage_run(f"u{i}") for i in range(6)] + [triage_run(f"s{i}", skip_check=True) for i in range(2)],
        str(approved),
    )
    contract = tmp_path / "c.yaml"
    code, _, err = _cli("mine", "--approved", str(approved), "-o", str(contract), "--similarity", "1")
    assert code == 0, err
    doc = yaml.safe_load(contract.read_text())
    (routes,) = [r for r in doc["rules"] if r["type"] == "approved_routes"]
    pending = [f["id"] for f in routes["families"] if f["status"] == "pending"]
    assert len(pending) == 1
    release = tmp_path / "v2.jsonl"
    export_runs(
        [triage_run(f"a{i}", "v2") for i in range(3)]
        + [triage_run(f"b{i}", "v2", skip_check=True) for i in range(2)],
        str(release),
    )
    code, out, _ = _cli("gate", "check", "--contract", str(contract), "--release", "v2", str(release))
    assert code == 2 and "permissions.check is required at least 1 time(s)" in out

    code, out, _ = _cli("routes", "approve", "--contract", str(contract), pending[0])
    assert code == 0
    assert (
        f"required.permissions.check: removed ({pending[0]} is approved and has no permissions.check)" in out
    )
    code, out, _ = _cli("gate", "check", "--contract", str(contract), "--release", "v2", str(release))
    assert code == 0, out
    # Only the rule the approved family contradicts is gone; the others stand.
    rules = yaml.safe_load(contract.read_text())["rules"]
    assert all(r["id"] != "required.permissions.check" for r in rules)
    assert any(r["id"] == "required.ticket.update" for r in rules)
