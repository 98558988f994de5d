"""A run's release comes from the agent's spans, never from a downstream service's resource.

Traces are written by the plain OpenTelemetry SDK and the official JSON file exporter, two
TracerProviders per run (the agent and the payment service it calls), joined by real W3C trace
context propagation — the situation in which the gate used to skip exactly the bad runs.
"""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.trace import SpanKind
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

from interop import FileSpanExporter
from otel_provenance.cli import run as cli
from otel_provenance.offline.model import Attributes, Span
from otel_provenance.offline.readers import iter_runs
from otel_provenance.offline.release import Attribution, attribute_release

PROPAGATOR = TraceContextTextMapPropagator()


class Process:
    """One service: a real TracerProvider whose spans the official file exporter writes to ``path``."""

    def __init__(self, path: Path, name: str, version: str | None) -> None:
        attrs = {"service.name": name}
        if version is not None:
            attrs["service.version"] = version
        self.stream = path.open("a", encoding="utf-8")
        self.provider = TracerProvider(resource=Resource.create(attrs))
        self.provider.add_span_processor(SimpleSpanProcessor(FileSpanExporter(stream=self.stream)))
        self.tracer = self.provider.get_tracer(name)

    def close(self) -> None:
        self.provider.shutdown()
        self.stream.close()


def _tool(process: Process, name: str, side_effect: str = "read"):
    return process.tracer.start_as_current_span(
        f"execute_tool {name}",
        attributes={
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": name,
            "agent.side_effect": side_effect,
            "agent.tool.status": "ok",
        },
    )


def _refund(agent: Process, service: Process) -> None:
    """The agent's refund tool calls the payment service over "HTTP": context crosses in headers."""
    with _tool(agent, "payment.refund", "write"):
        with agent.tracer.start_as_current_span("POST /refunds", kind=SpanKind.CLIENT):
            headers: dict[str, str] = {}
            PROPAGATOR.inject(headers)
        context = PROPAGATOR.extract(headers)
        server = service.tracer.start_as_current_span("POST /refunds", context=context, kind=SpanKind.SERVER)
        with server, service.tracer.start_as_current_span("db.insert refund"):
            pass


def agent_run(agent: Process, service: Process, *, bad: bool = False, tool_process: Process | None = None):
    with agent.tracer.start_as_current_span(
        "invoke_agent refund-agent", attributes={"gen_ai.operation.name": "invoke_agent"}
    ):
        if not bad:
            with _tool(tool_process or agent, "fraud.check"):
                pass
        _refund(agent, service)
        if bad:  # the bad behaviour: no fraud check, and the refund twice
            _refund(agent, service)


def write_release(path: Path, version: str, service_version: str, good: int, bad: int) -> Path:
    agent = Process(path, "refund-agent", version)
    service = Process(path, "payments", service_version)
    try:
        for _ in range(good):
            agent_run(agent, service)
        for _ in range(bad):
            agent_run(agent, service, bad=True)
    finally:
        agent.close()
        service.close()
    return path


def gate(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = cli(["gate", "check", *argv], out, err)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def contract(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("approved")
    approved = write_release(d / "approved.jsonl", "1.0.0", "7.3.0", good=6, bad=0)
    out = d / "contract.yaml"
    code = cli(["mine", "--approved", str(approved), "-o", str(out)], io.StringIO(), io.StringIO())
    assert code == 0
    return out


def test_downstream_versions_do_not_take_the_run_out_of_its_release(tmp_path):
    path = write_release(tmp_path / "v2.jsonl", "2.0.0", "7.3.1", good=2, bad=1)
    runs = list(iter_runs([path]))
    assert len(runs) == 3
    assert {r.release for r in runs} == {"2.0.0"}  # the payment service says 7.3.1 in every run
    assert len(list(iter_runs([path], release="2.0.0"))) == 3
    assert list(iter_runs([path], release="7.3.1")) == []


def test_the_bad_runs_that_reach_a_service_of_another_version_fail_the_gate(tmp_path, contract):
    path = write_release(tmp_path / "v2.jsonl", "2.0.0", "7.3.1", good=3, bad=2)
    code, out, err = gate("--contract", str(contract), "--release", "2.0.0", str(path))
    assert code == 2, out + err
    assert "Runs of release 2.0.0: 5 evaluated — 3 pass, 2 fail" in out
    assert "fraud.check is required at least 1 time(s) but occurred 0 time(s)." in out
    assert "payment.refund occurred 2 times; the contract permits at most 1 per run." in out


def test_a_good_release_calling_a_newer_service_passes(tmp_path, contract):
    path = write_release(tmp_path / "v2.jsonl", "2.0.0", "7.3.1", good=4, bad=0)
    code, out, err = gate("--contract", str(contract), "--release", "2.0.0", str(path))
    assert code == 0, out + err


def test_a_run_whose_agent_spans_disagree_is_insufficient_never_skipped(tmp_path, contract):
    path = write_release(tmp_path / "v2.jsonl", "2.0.0", "7.3.1", good=3, bad=0)
    agent = Process(path, "refund-agent", "2.0.0")
    other = Process(path, "refund-agent", "2.0.1")  # the tool runs in a process of another version
    service = Process(path, "payments", "7.3.1")
    try:
        agent_run(agent, service, tool_process=other)
    finally:
        for p in (agent, other, service):
            p.close()
    mixed = [r for r in iter_runs([path]) if r.attribution.disagrees]
    assert len(mixed) == 1 and mixed[0].attribution.found == ("2.0.0", "2.0.1")
    code, out, err = gate("--contract", str(contract), "--release", "2.0.0", str(path), "--format", "json")
    assert code == 3, out + err
    assert '"insufficient_data": 1' in out and '"evaluated": 4' in out
    assert "disagree about service.version (2.0.0, 2.0.1)" in out
    # The same run is judged for 2.0.1 too: insufficient there as well, never a pass.
    code, out, _ = gate("--contract", str(contract), "--release", "2.0.1", str(path))
    assert code == 3 and "1 evaluated — 0 pass, 0 fail, 1 insufficient data" in out


def test_nothing_evaluated_names_the_releases_found(tmp_path, contract):
    one = write_release(tmp_path / "a.jsonl", "1.0.0", "7.3.0", good=3, bad=0)
    two = write_release(tmp_path / "b.jsonl", "2.0.0", "7.3.1", good=2, bad=0)
    code, out, _ = gate("--contract", str(contract), "--release", "3.0.0", str(one), str(two))
    assert code == 3
    assert "found: 1.0.0 (3 runs), 2.0.0 (2 runs)" in out
    md = tmp_path / "gate.md"
    code, out, _ = gate(
        "--contract", str(contract), "--release", "2.0.0", str(one), str(two), "--markdown", str(md)
    )
    assert code == 0
    assert "(3 run(s) of other releases left out: 1.0.0 (3 runs))" in out
    assert "left out: 1.0.0 (3 runs)" in md.read_text()


def test_release_attribute_names_the_key(tmp_path, contract):
    path = tmp_path / "v.jsonl"
    agent = Process(path, "refund-agent", None)
    agent.provider = TracerProvider(
        resource=Resource.create({"service.name": "refund-agent", "deployment.release": "r42"})
    )
    agent.provider.add_span_processor(SimpleSpanProcessor(FileSpanExporter(stream=agent.stream)))
    agent.tracer = agent.provider.get_tracer("agent")
    service = Process(path, "payments", "7.3.1")
    try:
        agent_run(agent, service)
    finally:
        agent.close()
        service.close()
    code, out, _ = gate("--contract", str(contract), "--release", "r42", str(path))
    assert code == 3 and "found: (no service.version) (1 run)" in out
    code, out, err = gate(
        *("--contract", str(contract), "--release", "r42"),
        *("--release-attribute", "deployment.release", str(path)),
    )
    assert code == 0, out + err


def test_a_trace_with_no_agent_span_takes_its_release_from_the_root(tmp_path):
    path = tmp_path / "plain.jsonl"
    web = Process(path, "web", "5.1")
    try:
        with web.tracer.start_as_current_span("GET /"), web.tracer.start_as_current_span("SELECT"):
            pass
    finally:
        web.close()
    (run,) = iter_runs([path])
    assert run.release == "5.1"


def test_gate_on_a_release_without_tool_spans_is_insufficient(tmp_path, contract):
    path = tmp_path / "toolless.jsonl"  # the agent ran and called no tool: its tools are not instrumented
    agent = Process(path, "refund-agent", "2.0.0")
    try:
        with agent.tracer.start_as_current_span(
            "invoke_agent refunds", attributes={"gen_ai.operation.name": "invoke_agent"}
        ):
            pass
    finally:
        agent.close()
    forbidding = tmp_path / "c.yaml"
    forbidding.write_text(
        "version: 1\nname: c\nrules:\n  - id: no_deletes\n    type: forbidden_spans\n"
        "    select: {step: ticket.delete}\n"
    )
    for c in (forbidding, contract):  # nothing would fail / the mined required steps would fail
        code, out, _ = gate("--contract", str(c), "--release", "2.0.0", str(path))
        assert code == 3, out
        assert "no run of release 2.0.0 holds a tool span" in out
    plain = tmp_path / "plain.jsonl"  # no agent run at all: left out, and said so
    web = Process(plain, "refund-agent", "2.0.0")
    try:
        with web.tracer.start_as_current_span("GET /"):
            pass
    finally:
        web.close()
    code, out, err = gate("--contract", str(contract), "--release", "2.0.0", str(plain))
    assert code == 3 and "no runs of release 2.0.0 were found" in out
    assert "left out 1 trace(s) that are no agent run" in err


def _span(span_id: str, parent: str | None, version: str | None, **attrs: str) -> Span:
    resource = Attributes({"service.version": version} if version else {})
    return Span(
        "ab" * 16,
        span_id * 8,
        parent * 8 if parent else None,
        "s",
        attributes=Attributes(attrs),
        resource=resource,
    )


def test_precedence_run_id_then_genai_then_root() -> None:
    root = _span("01", None, "9.9")
    genai = _span("02", "01", "2.0.0", **{"gen_ai.operation.name": "chat"})
    marked = _span("03", "02", "3.0.0", **{"agent.run.id": "r1"})
    service = _span("04", "03", "7.3.1")
    assert attribute_release((root, genai, marked, service)) == Attribution("3.0.0", ("3.0.0",))
    assert attribute_release((root, genai, service)) == Attribution("2.0.0", ("2.0.0",))
    assert attribute_release((root, service)) == Attribution("9.9", ("9.9",))
    assert attribute_release((service,)) == Attribution(None, ())  # an orphan service span decides nothing
    other = _span("05", "01", "2.0.1", **{"gen_ai.operation.name": "execute_tool"})
    assert attribute_release((root, genai, other)) == Attribution(None, ("2.0.0", "2.0.1"))
