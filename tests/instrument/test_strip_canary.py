"""Canary: random values put on every path content can take never reach the exported bytes.

Paths: span attributes (default and user-added keys), nested maps, arrays of maps, event attributes,
content events, link attributes, exception events and status descriptions on tool spans, resource
attributes, and log records (content events, map bodies, attributes). The bytes checked are the
real OTLP encodings — protobuf (``SerializeToString``) and OTLP JSON — plus the JSON Lines file the
default exporter writes. A control run without the processor proves the canaries would be seen.
"""

from __future__ import annotations

import hashlib
import json
import secrets

import pytest

from interop import require_logs_sdk

require_logs_sdk()  # the logs processor needs opentelemetry-sdk >= 1.39; else skip the module

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from opentelemetry.exporter.otlp.proto.common._log_encoder import encode_logs as encode_logs_proto  # noqa: E402
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans as encode_spans_proto  # noqa: E402
from opentelemetry.sdk._logs import LoggerProvider  # noqa: E402
from opentelemetry.sdk._logs.export import InMemoryLogRecordExporter, SimpleLogRecordProcessor  # noqa: E402
from opentelemetry.sdk.resources import Resource  # noqa: E402
from opentelemetry.sdk.trace import TracerProvider  # noqa: E402
from opentelemetry.sdk.trace.export import SimpleSpanProcessor  # noqa: E402
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter  # noqa: E402
from opentelemetry.trace import Link, Status, StatusCode  # noqa: E402

import otel_provenance as op  # noqa: E402
from interop import otlp_json_logs, otlp_json_spans  # noqa: E402
from otel_provenance.instrument.spans.export import JsonLinesLogExporter, JsonLinesSpanExporter  # noqa: E402
from otel_provenance.instrument.spans.redaction import DEFAULT_FORBIDDEN_KEYS, StripOptions  # noqa: E402

MARKERS = (
    "REDACTED",
    "Redacted",
    "redacted",
    "Scrubbed",
    "scrubbed",
    "****",
    "[removed",
    "removed_count",
    "redaction.",
    "masked",
)

OPTIONS = StripOptions(keys={"myapp.secret"}, prefixes=("corp.pii_",), patterns=(r"\.password$",))


def _canary() -> str:
    return "cnry" + secrets.token_hex(12)


def _emit_spans(tracer, canaries: list[str]) -> None:
    def c() -> str:
        value = _canary()
        canaries.append(value)
        return value

    root_attrs = {
        "gen_ai.operation.name": "chat",
        "gen_ai.input.messages": c(),
        "gen_ai.output.messages": json.dumps(
            [{"role": "assistant", "parts": [{"type": "reasoning", "content": c()}]}]
        ),
        "gen_ai.system_instructions": c(),
        "gen_ai.tool.definitions": c(),
        "gen_ai.prompt.0.content": c(),
        "gen_ai.completion.0.content": c(),
        "llm.input_messages.0.message.content": c(),
        "llm.output_messages.0.message.tool_calls.0.tool_call.function.arguments": c(),
        "llm.prompts.0": c(),
        "myapp.secret": c(),
        "corp.pii_email": c(),
        "db.password": c(),
        "app.request": {"payload": {"gen_ai.input.messages": c(), "n": 1}, "items": [{"output.value": c()}]},
        "gen_ai": {"tool": {"call": {"arguments": c()}}},
    }
    with tracer.start_as_current_span("chat model", attributes=root_attrs) as root:
        root.add_event("gen_ai.user.message", {"content": c()})
        root.add_event("gen_ai.choice", {"message": c()})
        root.add_event("gen_ai.client.inference.operation.details", {"gen_ai.input.messages": c()})
        root.add_event(
            "progress", {"gen_ai.tool.call.result": c(), "nested": {"input.value": c()}, "step": 1}
        )
        link_ctx = root.get_span_context()
        tool_attrs = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": "lookup",
            "gen_ai.tool.call.arguments": json.dumps({"order": c()}),
            "gen_ai.tool.call.result": json.dumps({"status": c()}),
            "gen_ai.tool.description": c(),
            "input.value": c(),
            "output.value": c(),
            "traceloop.entity.input": json.dumps({"args": [c()], "kwargs": {}}),
            "traceloop.entity.output": c(),
            "tool_call.function.arguments": c(),
        }
        with (
            pytest.raises(ValueError),
            tracer.start_as_current_span(
                "execute_tool lookup",
                attributes=tool_attrs,
                links=[Link(link_ctx, {"input.value": c(), "k": 1})],
            ),
        ):
            raise ValueError(f"order {c()} not found")  # exception event + automatic status description
        with tracer.start_as_current_span(
            "execute_tool other", attributes={"gen_ai.operation.name": "execute_tool"}
        ) as s:
            s.set_status(Status(StatusCode.ERROR, f"bad argument {c()}"))
        with tracer.start_as_current_span(
            "execute_tool third", attributes={"gen_ai.operation.name": "execute_tool"}
        ) as s:
            s.record_exception(RuntimeError(c()))


def _emit_logs(logger, canaries: list[str]) -> None:
    def c() -> str:
        value = _canary()
        canaries.append(value)
        return value

    logger.emit(event_name="gen_ai.user.message", body={"content": c()}, attributes={"gen_ai.system": "x"})
    logger.emit(
        event_name="gen_ai.client.inference.operation.details",
        attributes={"gen_ai.input.messages": c(), "gen_ai.output.messages": c()},
    )
    logger.emit(body={"input.value": c(), "ok": "fine"}, attributes={"gen_ai.prompt": c(), "n": 1})
    logger.emit(
        body={"traceloop.entity.output": c()}, attributes={"nested": {"gen_ai.tool.call.result": c()}}
    )
    logger.emit(attributes={"event.name": "gen_ai.tool.message"}, body={"content": c()})
    try:
        raise KeyError(c())
    except KeyError as error:
        logger.emit(event_name="gen_ai.evaluation.result", exception=error, body="evaluation failed")


def _run(processor_on: bool, tmp_path) -> tuple[list[bytes], list[str]]:
    canaries: list[str] = []
    resource = Resource.create({"service.name": "canary", "input.value": (leak := _canary())})
    canaries.append(leak)
    spans_mem = InMemorySpanExporter()
    span_file = tmp_path / f"spans-{processor_on}.jsonl"
    span_procs = [SimpleSpanProcessor(spans_mem), SimpleSpanProcessor(JsonLinesSpanExporter(span_file))]
    provider = TracerProvider(resource=resource)
    if processor_on:
        provider.add_span_processor(op.ProvenanceSpanProcessor(*span_procs, options=OPTIONS))
    else:
        for p in span_procs:
            provider.add_span_processor(p)
    _emit_spans(provider.get_tracer("canary"), canaries)

    logs_mem = InMemoryLogRecordExporter()
    log_file = tmp_path / f"logs-{processor_on}.jsonl"
    log_procs = [SimpleLogRecordProcessor(logs_mem), SimpleLogRecordProcessor(JsonLinesLogExporter(log_file))]
    logger_provider = LoggerProvider(resource=resource)
    if processor_on:
        logger_provider.add_log_record_processor(op.ProvenanceLogRecordProcessor(*log_procs, options=OPTIONS))
    else:
        for p in log_procs:
            logger_provider.add_log_record_processor(p)
    _emit_logs(logger_provider.get_logger("canary"), canaries)
    provider.shutdown()
    logger_provider.shutdown()

    spans = spans_mem.get_finished_spans()
    logs = logs_mem.get_finished_logs()
    assert len(spans) == 4
    blobs = [
        encode_spans_proto(spans).SerializeToString(),
        otlp_json_spans(spans),
        span_file.read_bytes(),
        otlp_json_logs(logs) if logs else b"",
        encode_logs_proto(logs).SerializeToString() if logs else b"",
        log_file.read_bytes(),
    ]
    return blobs, canaries


def test_control_without_processor_every_canary_is_exported(tmp_path):
    blobs, canaries = _run(False, tmp_path)
    everything = b"".join(blobs)
    missing = [c for c in canaries if c.encode() not in everything]
    assert not missing


def test_no_canary_marker_or_hash_in_any_exported_bytes(tmp_path):
    blobs, canaries = _run(True, tmp_path)
    assert len(canaries) > 40
    for blob in blobs:
        assert blob, "every encoding produced bytes"
        for value in canaries:
            assert value.encode() not in blob
            assert hashlib.sha256(value.encode()).hexdigest()[:16].encode() not in blob
        for marker in MARKERS:
            assert marker.encode() not in blob, marker


@pytest.mark.parametrize("mode", ["hybrid", "denylist"])
def test_what_is_kept_is_kept(tmp_path, mode):
    """Deny-list mode keeps every key that is not content; the default hybrid mode judges these spans
    (each carries a GenAI marker) by the allow-list, so the custom keys ``k``, ``step`` and
    ``app.request`` go as well. Both keep the identity and the exception type."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    options = StripOptions(mode=mode)
    provider.add_span_processor(op.ProvenanceSpanProcessor(SimpleSpanProcessor(exporter), options=options))
    _emit_spans(provider.get_tracer("canary"), [])
    spans = {s.name: s for s in exporter.get_finished_spans()}
    tool = spans["execute_tool lookup"]
    assert tool.attributes["gen_ai.tool.name"] == "lookup"
    assert tool.status.status_code is StatusCode.ERROR
    assert tool.status.description == "ValueError"
    [exception] = [e for e in tool.events if e.name == "exception"]
    assert exception.attributes["exception.type"] == "ValueError"
    assert tool.links[0].attributes == ({"k": 1} if mode == "denylist" else {})
    assert spans["execute_tool other"].status.description is None
    root = spans["chat model"]
    assert root.attributes["gen_ai.operation.name"] == "chat"
    assert [e.name for e in root.events] == ["progress"]
    assert dict(root.events[0].attributes) == ({"step": 1} if mode == "denylist" else {})
    if mode == "denylist":
        assert root.attributes["app.request"] == {"payload": {"n": 1}}
    else:
        assert "app.request" not in root.attributes
    assert "gen_ai" not in root.attributes


@pytest.mark.parametrize("mode", ["hybrid", "denylist"])
def test_log_records_kept_minus_content(mode):
    """Deny-list mode keeps a record's other keys and string body; in hybrid mode the records that
    carry a GenAI key or ``gen_ai.*`` event name are judged by the allow-list (no body, no custom
    key), the others by the deny-list."""
    exporter = InMemoryLogRecordExporter()
    provider = LoggerProvider()
    options = StripOptions(mode=mode)
    provider.add_log_record_processor(
        op.ProvenanceLogRecordProcessor(SimpleLogRecordProcessor(exporter), options=options)
    )
    _emit_logs(provider.get_logger("canary"), [])
    records = [r.log_record for r in exporter.get_finished_logs()]
    # the three content events are gone whole; the others lose content keys only
    assert len(records) == 3
    if mode == "denylist":
        assert records[0].body == {"ok": "fine"}
        assert dict(records[0].attributes) == {"n": 1}
        assert records[2].body == "evaluation failed"
    else:  # records 0 (a gen_ai.prompt key) and 2 (a gen_ai.* event) were made by an AI library
        assert records[0].body is None
        assert dict(records[0].attributes) == {}
        assert records[2].body is None
    assert records[1].body is None
    assert dict(records[1].attributes) == {}
    assert records[2].attributes["exception.type"] == "KeyError"
    assert "exception.message" not in records[2].attributes


# --- property: random shapes, random content keys, random canaries ---------------------------------

_CONTENT_KEYS = st.sampled_from(sorted(DEFAULT_FORBIDDEN_KEYS))
_PLAIN_KEYS = st.sampled_from(["a", "meta", "x.y", "gen_ai.tool.name", "n"])
_CANARY = st.from_regex(r"\Acnry[0-9a-f]{16}\Z")


@st.composite
def _content_tree(draw, depth=0):
    """A value holding canaries only under content keys (possibly deep inside plain maps)."""
    plain: dict = {}
    for key in draw(st.lists(_PLAIN_KEYS, max_size=3, unique=True)):
        plain[key] = (
            draw(_content_tree(depth + 1)) if depth < 3 and draw(st.booleans()) else draw(st.integers(0, 9))
        )
    for key in draw(st.lists(_CONTENT_KEYS, min_size=1, max_size=2, unique=True)):
        plain[key] = draw(st.one_of(_CANARY, st.lists(_CANARY, min_size=1, max_size=2)))
    return plain


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tree=_content_tree(), top=_CONTENT_KEYS, canary=_CANARY)
def test_property_random_shapes_leave_no_canary(tree, top, canary):
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(op.ProvenanceSpanProcessor(SimpleSpanProcessor(exporter)))
    attrs = {"holder": tree, top: canary, "gen_ai.operation.name": "execute_tool"}
    with provider.get_tracer("p").start_as_current_span("execute_tool p", attributes=attrs) as span:
        span.add_event("evt", {"holder": tree})
    wire = encode_spans_proto(exporter.get_finished_spans()).SerializeToString()
    assert b"cnry" not in wire
