"""Our OTLP JSON Lines writer gives the same bytes as the official JSON file exporter.

The official ``opentelemetry-exporter-otlp-json-file`` pins one SDK release, so it is installed only
with the newest constraint set; elsewhere the comparison is skipped and the structural tests below
(no official package needed) still run. The same SDK spans and log records go to both writers.
"""

from __future__ import annotations

import io
import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from opentelemetry import trace
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import Link, SpanContext, SpanKind, Status, StatusCode, TraceFlags, TraceState

from otel_provenance.instrument.spans.export import JsonLinesLogExporter, JsonLinesSpanExporter
from otel_provenance.offline.readers import read_spans

T0 = 1_700_000_000_000_000_000
REMOTE = SpanContext(
    0x0AF7651916CD43DD8448EB211C80319C,
    0x00F067AA0BA902B7,
    is_remote=True,
    trace_flags=TraceFlags(1),
    trace_state=TraceState([("vendor", "v1"), ("other", "x")]),
)


def _official():
    return pytest.importorskip(
        "opentelemetry.exporter.otlp.json.file", reason="official JSON file exporter not installed"
    )


def _spans():
    """Spans with every field the encoder knows: kinds, remote parent, links, events, status, types."""
    memory = InMemorySpanExporter()
    provider = TracerProvider(
        resource=Resource.create({"service.name": "agent", "service.version": "2.0.0", "ratio": 0.5}, "s://r")
    )
    provider.add_span_processor(SimpleSpanProcessor(memory))
    tracer = provider.get_tracer("scope-a", "1.2.3", schema_url="https://opentelemetry.io/schemas/1.26.0")
    other = provider.get_tracer("scope-b")
    parent = trace.set_span_in_context(trace.NonRecordingSpan(REMOTE))
    attributes = {
        "s": 'text with ünïcødé \u2028 and "quotes"',
        "empty": "",
        "i": -(2**63),
        "big": 2**63 - 1,
        "zero": 0,
        "f": 1.25,
        "nan": math.nan,
        "inf": -math.inf,
        "t": True,
        "false": False,
        "strs": ("a", "b"),
        "ints": (1, 2, 3),
        "floats": [0.1, 2.0],
        "bools": [True, False],
        "empty_list": [],
    }
    with tracer.start_as_current_span("root", context=parent, kind=SpanKind.SERVER, attributes=attributes):
        with tracer.start_as_current_span(
            "child", kind=SpanKind.CLIENT, links=[Link(REMOTE, {"why": "batch"}), Link(REMOTE)]
        ) as child:
            child.add_event("e1", {"k": 1}, timestamp=T0)
            child.add_event("bare", timestamp=T0 + 1)
            child.set_status(Status(StatusCode.ERROR, "went wrong"))
        with other.start_as_current_span("ok", kind=SpanKind.PRODUCER) as ok:
            ok.set_status(Status(StatusCode.OK))
        with other.start_as_current_span("consumer", kind=SpanKind.CONSUMER):
            pass
    limited = TracerProvider(span_limits=trace_limits(), resource=Resource.get_empty())
    limited.add_span_processor(SimpleSpanProcessor(memory))
    with limited.get_tracer("limited").start_as_current_span(
        "many", attributes={f"a{i}": i for i in range(5)}
    ):
        pass
    return list(memory.get_finished_spans())


def trace_limits():
    from opentelemetry.sdk.trace import SpanLimits

    return SpanLimits(max_span_attributes=2, max_events=1, max_links=1)


def _ours_span_bytes(spans, batches, tmp_path) -> bytes:
    path = tmp_path / "ours.jsonl"
    exporter = JsonLinesSpanExporter(path)
    for batch in batches(spans):
        exporter.export(batch)
    exporter.shutdown()
    return path.read_bytes()


def _official_span_bytes(official, spans, batches) -> bytes:
    stream = io.StringIO()
    exporter = official.FileSpanExporter(stream=stream)
    for batch in batches(spans):
        exporter.export(batch)
    return stream.getvalue().encode("utf-8")


def _one_batch(spans):
    return [spans]


def _pairs(spans):
    return [spans[i : i + 2] for i in range(0, len(spans), 2)]


@pytest.mark.parametrize("batches", [_one_batch, _pairs, lambda spans: [[]] + [[s] for s in spans]])
def test_span_lines_equal_the_official_exporter_byte_for_byte(tmp_path, batches):
    official = _official()
    spans = _spans()
    ours = _ours_span_bytes(spans, batches, tmp_path)
    assert ours == _official_span_bytes(official, spans, batches)
    assert ours.endswith(b"\n") and ours.isascii()


attribute_values = st.one_of(
    st.text(max_size=8),
    st.booleans(),
    st.integers(min_value=-(2**63), max_value=2**63 - 1),
    st.floats(allow_nan=True, allow_infinity=True),
    st.lists(st.text(max_size=4), max_size=3),
    st.lists(st.integers(min_value=-(2**63), max_value=2**63 - 1), max_size=3),
    st.lists(st.floats(), max_size=3),
)


@settings(max_examples=60, deadline=None)
@given(st.dictionaries(st.text(min_size=1, max_size=6), attribute_values, max_size=6), st.text(max_size=10))
def test_any_attributes_equal_the_official_exporter(tmp_path_factory, attributes, name):
    official = _official()
    memory = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource.create({"service.name": name or "x"}))
    provider.add_span_processor(SimpleSpanProcessor(memory))
    with provider.get_tracer(name).start_as_current_span(name, attributes=attributes) as span:
        span.add_event(name, attributes)
    spans = list(memory.get_finished_spans())
    ours = _ours_span_bytes(spans, _one_batch, tmp_path_factory.mktemp("p"))
    assert ours == _official_span_bytes(official, spans, _one_batch)


def _log_records():
    """Log records through the real logs SDK (API logger) with assorted bodies, in and outside a span."""
    from opentelemetry._logs import LogRecord, SeverityNumber
    from opentelemetry.sdk._logs import LoggerProvider
    from opentelemetry.sdk._logs.export import SimpleLogRecordProcessor

    from otel_provenance.instrument.base import _sdkcompat

    captured = []

    class Capture(_sdkcompat.LogRecordExporter):
        def export(self, batch):
            captured.extend(batch)
            return _sdkcompat.LogRecordExportResult.SUCCESS

        def shutdown(self):
            pass

        def force_flush(self, timeout_millis=30000):
            return True

    provider = LoggerProvider(resource=Resource.create({"service.name": "agent"}))
    provider.add_log_record_processor(SimpleLogRecordProcessor(Capture()))
    logger = provider.get_logger("scope-l", "0.1")
    with TracerProvider().get_tracer("t").start_as_current_span("inside"):
        logger.emit(
            LogRecord(
                timestamp=T0,
                observed_timestamp=T0 + 5,
                severity_text="WARN",
                severity_number=SeverityNumber.WARN,
                body="plain message, ünïcødé",
                attributes={"user.id": 7, "ratio": 0.5, "tags": ("a", "b")},
            )
        )
    logger.emit(LogRecord(timestamp=T0, body={"structured": {"nested": [1, "two"]}, "flag": True}))
    logger.emit(LogRecord(timestamp=T0, body=None, attributes={"only": "attributes"}))
    logger.emit(LogRecord(observed_timestamp=T0, body=["a", 1, 2.5, False]))
    provider.shutdown()
    assert len(captured) == 4
    return captured


def test_log_lines_equal_the_official_exporter_byte_for_byte(tmp_path):
    official = _official()
    from opentelemetry.exporter.otlp.json.file._log_exporter import FileLogExporter

    assert official  # the span package and its log exporter come together
    records = _log_records()
    path = tmp_path / "logs.jsonl"
    ours = JsonLinesLogExporter(path)
    ours.export(records)
    ours.export(records[:1])
    ours.shutdown()
    stream = io.StringIO()
    theirs = FileLogExporter(stream=stream)
    theirs.export(records)
    theirs.export(records[:1])
    assert path.read_bytes() == stream.getvalue().encode("utf-8")


def test_structure_without_the_official_package(tmp_path):
    """Checked on every SDK release we support: the OTLP JSON rules the official exporter follows."""
    spans = _spans()
    data = _ours_span_bytes(spans, _one_batch, tmp_path)
    (line,) = data.decode("ascii").splitlines()
    doc = json.loads(line)
    first = doc["resourceSpans"][0]
    assert list(first) == ["resource", "scopeSpans", "schemaUrl"]
    assert first["schemaUrl"] == "s://r"
    scope_a = first["scopeSpans"][0]
    assert scope_a["scope"] == {"name": "scope-a", "version": "1.2.3"}
    assert scope_a["schemaUrl"] == "https://opentelemetry.io/schemas/1.26.0"
    root = next(s for s in scope_a["spans"] if s["name"] == "root")
    assert list(root)[:6] == ["traceId", "spanId", "traceState", "parentSpanId", "flags", "name"]
    assert root["traceId"] == "0af7651916cd43dd8448eb211c80319c"
    assert root["parentSpanId"] == "00f067aa0ba902b7"
    assert root["traceState"] == "vendor=v1,other=x"
    assert root["flags"] == 0x300  # context has is_remote, and the parent is remote
    assert root["kind"] == 2
    assert isinstance(root["startTimeUnixNano"], str)
    values = {a["key"]: a["value"] for a in root["attributes"]}
    assert values["i"] == {"intValue": str(-(2**63))}
    assert values["empty"] == {"stringValue": ""}
    assert values["zero"] == {"intValue": "0"}
    assert values["false"] == {"boolValue": False}
    assert values["nan"] == {"doubleValue": "NaN"}
    assert values["inf"] == {"doubleValue": "-Infinity"}
    assert values["strs"] == {"arrayValue": {"values": [{"stringValue": "a"}, {"stringValue": "b"}]}}
    assert root["status"] == {}
    child = next(s for s in scope_a["spans"] if s["name"] == "child")
    assert child["status"] == {"message": "went wrong", "code": 2}
    assert child["events"][0] == {
        "timeUnixNano": str(T0),
        "name": "e1",
        "attributes": [{"key": "k", "value": {"intValue": "1"}}],
    }
    assert child["links"][0]["spanId"] == "00f067aa0ba902b7"
    many = next(
        s
        for rs in doc["resourceSpans"]
        for ss in rs["scopeSpans"]
        for s in ss["spans"]
        if s["name"] == "many"
    )
    assert many["droppedAttributesCount"] == 3
    # and the offline reader reads it back
    assert sorted(s.name for s in read_spans([str(tmp_path / "ours.jsonl")])) == sorted(s.name for s in spans)
