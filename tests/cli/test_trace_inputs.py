"""What teams hand the CLI as trace input: a folder, a glob over a folder where ``op.configure()`` wrote
its metrics file beside its span file, one JSON document holding spans and logs (what agentevals serves
for download) — all read by ``mine`` and ``gate check``. Other signals are left out and said, never an
error; no input holding traces at all is no pass.
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import yaml

from interop import optional, require
from otel_provenance.cli import run as cli_run

COMPLETED = "2026-12-01T00:00:00Z"

#: A refund agent instrumented with this package, set up with ``op.configure(file=...)`` as the README
#: says: spans to ``<dir>/spans.jsonl`` and, beside it, metrics to ``<dir>/spans.metrics.jsonl``.
AGENT = textwrap.dedent(
    """
    import sys
    import otel_provenance as op

    folder, release, refunds = sys.argv[1], sys.argv[2], int(sys.argv[3])
    provider = op.configure(service_name="refunds", service_version=release, file=f"{folder}/spans.jsonl",
                            batch=False)

    @op.tool(side_effect="read")
    def lookup_order(order_id: str) -> dict:
        return {"order_id": order_id, "amount": "42.50"}

    @op.tool(side_effect="write")
    def issue_refund(order_id: str, amount: str) -> dict:
        return {"status": "paid"}

    for i in range(3):
        with op.run(inputs={"order_id": f"ord-{i:04d}"}, agent_name="refunds"):
            order = lookup_order(order_id=f"ord-{i:04d}")
            for _ in range(refunds):
                issue_refund(order_id=order["order_id"], amount=order["amount"])
    provider.shutdown()
    from opentelemetry import metrics
    metrics.get_meter_provider().shutdown()  # op.configure() set it globally: its file is written now
    """
)


def cli(*argv: object) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = cli_run([str(a) for a in argv], out, err)
    return code, out.getvalue(), err.getvalue()


def _agent(folder: Path, release: str, refunds: int) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(
        [sys.executable, "-c", AGENT, str(folder), release, str(refunds)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]


def _gate(contract: Path, release: str, *inputs: object) -> tuple[int, str]:
    code, out, err = cli(
        "gate", "check", "--contract", contract, "--release", release, "--completed-at", COMPLETED, *inputs
    )
    return code, out + err


@pytest.fixture(scope="module")
def releases(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``traces/v1`` (one refund per run) and ``traces/v2`` (the refund paid twice), each a folder as
    ``op.configure()`` leaves it: a span file and a metrics file beside it."""
    root = tmp_path_factory.mktemp("traces")
    _agent(root / "v1", "1.0.0", 1)
    _agent(root / "v2", "2.0.0", 2)
    return root


def test_op_configure_writes_a_metrics_file_beside_the_spans(releases: Path) -> None:
    assert sorted(p.name for p in (releases / "v1").iterdir()) == ["spans.jsonl", "spans.metrics.jsonl"]
    assert '"resourceMetrics"' in (releases / "v1" / "spans.metrics.jsonl").read_text()


def test_a_glob_that_takes_the_metrics_file_too_is_read(releases: Path, tmp_path: Path) -> None:
    contract = tmp_path / "c.yaml"
    code, _, err = cli("mine", "--approved", f"{releases}/v1/*.jsonl", "-o", contract)
    assert code == 0, err
    assert "spans.metrics.jsonl: a metrics file (resourceMetrics), not traces (left out)" in err
    code, text = _gate(contract, "2.0.0", f"{releases}/*/*.jsonl")
    assert code == 2, text
    assert "DUPLICATE_SIDE_EFFECT (at_most.issue_refund) issue_refund occurred 2 times" in text
    assert _gate(contract, "1.0.0", f"{releases}/*/*.jsonl")[0] == 0


def test_a_folder_is_read_recursively(releases: Path, tmp_path: Path) -> None:
    contract = tmp_path / "c.yaml"
    code, _, err = cli("mine", "--approved", releases, "--release", "1.0.0", "-o", contract)
    assert code == 0, err
    assert yaml.safe_load(contract.read_text())["description"].startswith("Mined from 3 approved run(s)")
    code, text = _gate(contract, "2.0.0", releases)
    assert code == 2, text
    assert "Runs of release 2.0.0: 3 evaluated" in text and "(3 run(s) of other releases left out" in text
    # hidden files (an editor's, a tool's own) below a folder are not inputs
    (releases / "v2" / ".spans.jsonl.swp").write_bytes(b"\x00\x01 not a trace")
    assert _gate(contract, "2.0.0", releases)[0] == 2


def test_an_empty_folder_is_an_error_and_other_signals_alone_are_no_pass(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    code, _, err = cli("audit", empty)
    assert code == 1 and f"{empty}: a directory with no file in it" in err
    metrics = tmp_path / "metrics"
    metrics.mkdir()
    (metrics / "m.jsonl").write_text('{"resourceMetrics": []}\n')
    code, out, err = cli("audit", metrics)
    assert code == 3, out + err
    assert "a metrics file (resourceMetrics), not traces (left out)" in err


def _agentevals_document(path: Path, release: str, refunds: int) -> None:
    """Spans written by the plain SDK (GenAI tool spans, as an agent framework writes them) and a log
    record, encoded by the official OTLP JSON encoders into ONE document, as agentevals serves it."""
    require("opentelemetry.exporter.otlp.json.common.trace_encoder")
    from opentelemetry.exporter.otlp.json.common._log_encoder import encode_logs
    from opentelemetry.exporter.otlp.json.common.trace_encoder import encode_spans
    from opentelemetry.sdk._logs import LoggerProvider
    from opentelemetry.sdk._logs.export import InMemoryLogRecordExporter, SimpleLogRecordProcessor
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    resource = Resource.create({"service.name": "kagent", "service.version": release})
    spans = InMemorySpanExporter()
    provider = TracerProvider(resource=resource)
    provider.add_span_processor(SimpleSpanProcessor(spans))
    tracer = provider.get_tracer("agent")
    for _ in range(3):
        with tracer.start_as_current_span(
            "invoke_agent refunds", attributes={"gen_ai.operation.name": "invoke_agent"}
        ):
            for tool in ["lookup_order", *["issue_refund"] * refunds]:
                attributes = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": tool}
                tracer.start_span(f"execute_tool {tool}", attributes=attributes).end()
    logs = InMemoryLogRecordExporter()
    log_provider = LoggerProvider(resource=resource)
    log_provider.add_log_record_processor(SimpleLogRecordProcessor(logs))
    log_provider.get_logger("agent").emit(body=f"run {release} done")
    document = encode_spans(spans.get_finished_spans()).to_dict()
    document.update(encode_logs(logs.get_finished_logs()).to_dict())
    assert set(document) == {"resourceSpans", "resourceLogs"}
    path.write_text(json.dumps(document, indent=2))


def test_one_document_with_spans_and_logs_is_read(tmp_path: Path) -> None:
    if optional("opentelemetry.sdk._logs.export") is None:
        pytest.skip("no logs SDK")
    approved, regressed = tmp_path / "approved.json", tmp_path / "regressed.json"
    _agentevals_document(approved, "1.0.0", 1)
    _agentevals_document(regressed, "2.0.0", 2)
    contract = tmp_path / "c.yaml"
    code, _, err = cli("mine", "--approved", approved, "--write", "issue_refund", "-o", contract)
    assert code == 0, err
    assert "left out other signals held beside traces (logs in 1 request(s)); their spans were read" in err
    code, text = _gate(contract, "2.0.0", regressed)
    assert code == 2, text
    assert "DUPLICATE_SIDE_EFFECT (at_most.issue_refund)" in text
    assert _gate(contract, "1.0.0", approved)[0] == 0


def _plain_runs(path: Path, release: str | None, tools: list[list[str]]) -> None:
    """Runs written by the plain SDK: an ``invoke_agent`` span each, with the GenAI tool spans listed."""
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor

    from interop import FileSpanExporter

    attributes = {"service.name": "refunds"} | ({"service.version": release} if release else {})
    provider = TracerProvider(resource=Resource.create(attributes))
    provider.add_span_processor(SimpleSpanProcessor(FileSpanExporter(str(path))))
    tracer = provider.get_tracer("agent")
    for calls in tools:
        with tracer.start_as_current_span(
            "invoke_agent refunds", attributes={"gen_ai.operation.name": "invoke_agent"}
        ):
            for tool in calls:
                attributes = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": tool}
                tracer.start_span(f"execute_tool {tool}", attributes=attributes).end()
    provider.shutdown()


def test_a_run_with_an_agent_span_and_no_tool_call_never_passes(releases: Path, tmp_path: Path) -> None:
    contract = tmp_path / "c.yaml"
    assert cli("mine", "--approved", releases / "v1", "-o", contract)[0] == 0
    toolless = tmp_path / "toolless.jsonl"
    _plain_runs(toolless, "3.0.0", [[], []])
    code, text = _gate(contract, "3.0.0", toolless)
    assert code == 3 and "no run of release 3.0.0 holds a tool span" in text, text
    mixed = tmp_path / "mixed.jsonl"
    _plain_runs(mixed, "3.1.0", [["lookup_order", "issue_refund"], []])
    code, text = _gate(contract, "3.1.0", mixed)
    assert code == 2, text
    assert "MISSING_PREREQUISITE (required.issue_refund) issue_refund is required at least 1 time(s)" in text


def test_a_run_without_a_release_is_in_no_release(tmp_path: Path) -> None:
    """``--release`` keeps the runs of that release only: never a run that names no release."""
    versionless = tmp_path / "versionless.jsonl"
    _plain_runs(versionless, None, [["lookup_order"]])
    code, out, _ = cli("audit", "--release", "1.0.0", versionless)
    assert code == 3 and "summary: 0 run(s)" in out
    code, out, _ = cli("fingerprint", "--release", "1.0.0", "--format", "json", versionless)
    assert code == 3 and json.loads(out)["runs"] == []
    code, _, err = cli("mine", "--approved", versionless, "--release", "1.0.0", "-o", tmp_path / "c.yaml")
    assert code == 1 and "no agent runs found in the approved traces for release 1.0.0" in err
    code, _, err = cli("fetch", "--release", "1.0.0", versionless, "-o", tmp_path / "f.jsonl")
    assert code == 0 and "fetched 0 span(s)" in err
    # without --release the run is there
    assert "summary: 1 run(s)" in cli("audit", versionless)[1]
