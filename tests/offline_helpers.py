"""Build real OTLP trace files for the offline tests with the real OpenTelemetry SDK and exporters.

Spans are recorded with a real ``TracerProvider`` (in-memory exporter), then written by the
official ``FileSpanExporter`` (JSON Lines) or by ``encode_spans(...).SerializeToString()``
(OTLP protobuf). ``agent.arg.*`` attributes are set by hand here; the online processor sets them
in production.
"""

from __future__ import annotations

import gzip
import io
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import Status, StatusCode

from interop import FileSpanExporter
from otel_provenance import semconv

T0 = 1_700_000_000_000_000_000


class Recorder:
    """A real TracerProvider that keeps finished spans in memory."""

    def __init__(self, release: str | None = "v1", service: str = "agent") -> None:
        attrs: dict[str, Any] = {"service.name": service}
        if release is not None:
            attrs["service.version"] = release
        self.exporter = InMemorySpanExporter()
        self.provider = TracerProvider(resource=Resource.create(attrs))
        self.provider.add_span_processor(SimpleSpanProcessor(self.exporter))
        self.tracer = self.provider.get_tracer("tests.offline", "1.0")
        self.clock = T0

    def tick(self, ns: int = 1_000) -> int:
        self.clock += ns
        return self.clock

    @contextmanager
    def span(
        self,
        name: str,
        attributes: Mapping[str, Any] | None = None,
        parent: trace.Span | None = None,
        status: StatusCode | None = None,
        links: Sequence[trace.Span] = (),
    ) -> Iterator[trace.Span]:
        """A span; ``links`` are spans it links to (span links, e.g. to another trace)."""
        context = trace.set_span_in_context(parent) if parent is not None else None
        span = self.tracer.start_span(
            name,
            context=context,
            attributes=dict(attributes or {}),
            start_time=self.tick(),
            links=[trace.Link(other.get_span_context()) for other in links],
        )
        try:
            yield span
        finally:
            if status is not None:
                span.set_status(Status(status))
            span.end(end_time=self.tick())

    def spans(self) -> list[ReadableSpan]:
        return list(self.exporter.get_finished_spans())


_AGENT = {semconv.GEN_AI_OPERATION_NAME: semconv.INVOKE_AGENT}


def agent_turn(
    rec: Recorder, tool: str | None, links: list[trace.Span], run_id: str | None = None
) -> trace.Span:
    """One agent turn in a trace of its own: a message span linking to ``links``, the agent under it,
    and a tool call (none for a turn that only answers). Returns the message span, for later links."""
    with (
        rec.span("autogen process", links=links) as message,
        rec.span("invoke_agent refunds", _AGENT, parent=message) as agent,
    ):
        if tool is not None:
            with rec.span(f"execute_tool {tool}", tool_attributes(tool, {}, run_id=run_id), parent=agent):
                pass
    return message


def plain_trace(rec: Recorder, name: str, links: list[trace.Span]) -> trace.Span:
    """A trace holding no agent work (a setup step, a message the runtime only passes on)."""
    with rec.span(name, links=links) as span:
        pass
    return span


def team_run(rec: Recorder, tools: list[str], setup: trace.Span | None = None) -> trace.Span:
    """A run as AutoGen's team writes it: a setup trace, then per turn a passing message and the turn,
    each linking to the one before; the last turn only answers. Returns the first turn."""
    start = plain_trace(rec, "autogen send", [setup] if setup is not None else [])
    previous, first = start, None
    for tool in [*tools, None]:
        hop = plain_trace(rec, "autogen publish", [previous])
        previous = agent_turn(rec, tool, [hop])
        first = first or previous
    assert first is not None
    return first


def span_id_hex(span: trace.Span) -> str:
    return format(span.get_span_context().span_id, "016x")


def trace_id_hex(span: trace.Span) -> str:
    return format(span.get_span_context().trace_id, "032x")


@dataclass
class Arg:
    kind: str
    source_tool: str | None = None
    source_field: str | None = None
    source_span_id: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)


def tool_attributes(
    tool: str, args: Mapping[str, Arg], status: str | None = "ok", run_id: str | None = None, **extra: Any
) -> dict[str, Any]:
    attrs: dict[str, Any] = {
        semconv.GEN_AI_OPERATION_NAME: semconv.EXECUTE_TOOL,
        semconv.GEN_AI_TOOL_NAME: tool,
    }
    if status is not None:
        attrs[semconv.TOOL_STATUS] = status
    if run_id is not None:
        attrs[semconv.RUN_ID] = run_id
    for name, arg in args.items():
        attrs[semconv.arg_attr(name, semconv.ARG_KIND_SUFFIX)] = arg.kind
        if arg.source_tool is not None:
            attrs[semconv.arg_attr(name, semconv.ARG_SOURCE_TOOL_SUFFIX)] = arg.source_tool
        if arg.source_field is not None:
            attrs[semconv.arg_attr(name, semconv.ARG_SOURCE_FIELD_SUFFIX)] = arg.source_field
        if arg.source_span_id is not None:
            attrs[semconv.arg_attr(name, semconv.ARG_SOURCE_SPAN_ID_SUFFIX)] = arg.source_span_id
        attrs.update(arg.extra)
    attrs.update(extra)
    return attrs


def write_jsonl(spans: Sequence[ReadableSpan], path: Path, batch: int = 1, compress: bool = False) -> Path:
    """Write with the official JSON file exporter, ``batch`` spans per line."""
    stream = io.StringIO()
    exporter = FileSpanExporter(stream=stream)
    for i in range(0, len(spans), batch):
        exporter.export(list(spans[i : i + batch]))
    data = stream.getvalue().encode()
    path.write_bytes(gzip.compress(data) if compress else data)
    return path


def write_proto(spans: Sequence[ReadableSpan], path: Path, compress: bool = False) -> Path:
    data = encode_spans(list(spans)).SerializeToString()
    path.write_bytes(gzip.compress(data) if compress else data)
    return path


def reference_runs(release: str = "v1") -> tuple[list[ReadableSpan], list[ReadableSpan]]:
    """The reference scenario: a good run and a bad run whose ``patch_file`` was blocked."""
    good = Recorder(release)
    with good.span("invoke_agent fixer") as root:
        with good.span(
            "execute_tool list_files",
            tool_attributes(
                "list_files", {"root": Arg("observed", source_tool="input", source_field="root")}
            ),
            parent=root,
        ) as ls:
            pass
        with good.span(
            "execute_tool patch_file",
            tool_attributes(
                "patch_file",
                {
                    "path": Arg(
                        "observed",
                        source_tool="list_files",
                        source_field="files.0",
                        source_span_id=span_id_hex(ls),
                    ),
                    "comment": Arg("assumed"),
                },
            ),
            parent=root,
        ):
            pass
    bad = Recorder(release)
    with bad.span("invoke_agent fixer") as root:
        with bad.span(
            "execute_tool list_files",
            tool_attributes(
                "list_files", {"root": Arg("observed", source_tool="input", source_field="root")}
            ),
            parent=root,
        ):
            pass
        with bad.span(
            "execute_tool patch_file",
            tool_attributes(
                "patch_file",
                {"path": Arg("assumed"), "comment": Arg("assumed")},
                status="blocked",
                **{semconv.VIOLATIONS: ("max_assumed:path=assumed",)},
            ),
            parent=root,
            status=StatusCode.ERROR,
        ):
            pass
    return good.spans(), bad.spans()


def write_reference(directory: Path) -> tuple[Path, Path]:
    good, bad = reference_runs()
    return write_jsonl(good, directory / "good.jsonl"), write_jsonl(bad, directory / "bad.jsonl")


def json_kv(**values: str) -> list[dict]:
    """OTLP JSON attributes of string values, written by hand: ``{"key": k, "value": {"stringValue": v}}``."""
    return [{"key": k, "value": {"stringValue": v}} for k, v in values.items()]


def json_tool_span(trace_id: str, span_id: str, run_id: str | None = None, **extra: object) -> dict:
    """An OTLP JSON tool span written by hand, with ``agent.run.id`` when given; ``extra`` members last."""
    attributes = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "x"}
    if run_id is not None:
        attributes["agent.run.id"] = run_id
    return {
        "traceId": trace_id,
        "spanId": span_id,
        "name": "execute_tool x",
        "kind": 1,
        "startTimeUnixNano": "2",
        "endTimeUnixNano": "3",
        "attributes": json_kv(**attributes),
        **extra,
    }
