"""Which signal a protobuf request holds, told from its wire fields (``otlp_proto.signal_of``).

A Collector file exporter shared by several pipelines writes traces, logs and metrics requests into
one length-prefixed file; the reader skips and counts the logs and metrics records and reads the
trace records. The three requests have the same outer shape, so the first log record / metric /
span decides: a log record that is taken for spans breaks the read, a span taken for another signal
is lost. The requests are built with the official ``opentelemetry-proto`` classes.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import ExportMetricsServiceRequest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from opentelemetry.proto.logs.v1.logs_pb2 import LogRecord, ResourceLogs, ScopeLogs, SeverityNumber
from opentelemetry.proto.metrics.v1.metrics_pb2 import (
    Gauge,
    Metric,
    NumberDataPoint,
    ResourceMetrics,
    ScopeMetrics,
)
from opentelemetry.proto.trace.v1.trace_pb2 import ResourceSpans, ScopeSpans, Span

from otel_provenance.errors import TraceReadError
from otel_provenance.offline.readers import ReadReport, SkippedRecords, read_spans, sniff_format

TRACE_ID = bytes.fromhex("0af7651916cd43dd8448eb211c80319c")
SPAN_ID = bytes.fromhex("b7ad6b7169203331")
# An unknown field 100 in the deprecated group encoding (wire types 3 and 4) holding a varint:
# protobuf parsers skip it like any unknown field.
UNKNOWN_GROUP = b"\xa3\x06\x08\x01\xa4\x06"


def _trace_request(span: bytes) -> bytes:
    """An ``ExportTraceServiceRequest`` of one span, given as its serialised bytes."""
    assert len(span) < 100  # one-byte lengths below
    scope = b"\x12" + bytes([len(span)]) + span  # ScopeSpans field 2: spans
    rs = b"\x12" + bytes([len(scope)]) + scope  # ResourceSpans field 2: scope_spans
    request = b"\x0a" + bytes([len(rs)]) + rs  # field 1: resource_spans
    assert ExportTraceServiceRequest.FromString(request).resource_spans[0].scope_spans[0].spans
    return request


def _span(**fields) -> bytes:
    return Span(trace_id=TRACE_ID, span_id=SPAN_ID, name="execute_tool lookup", **fields).SerializeToString()


def _logs_request(record: LogRecord) -> bytes:
    return ExportLogsServiceRequest(
        resource_logs=[ResourceLogs(scope_logs=[ScopeLogs(log_records=[record])])]
    ).SerializeToString()


def _metrics_request(metric: Metric) -> bytes:
    return ExportMetricsServiceRequest(
        resource_metrics=[ResourceMetrics(scope_metrics=[ScopeMetrics(metrics=[metric])])]
    ).SerializeToString()


def _framed(tmp_path: Path, *requests: bytes) -> Path:
    """The Collector file exporter with ``format: proto``: each request after its 4-byte length."""
    path = tmp_path / "shared.pb"
    path.write_bytes(b"".join(len(r).to_bytes(4, "big") + r for r in requests))
    assert sniff_format(path) == "otlp-length-prefixed"
    return path


def _read(path: Path) -> tuple[list[str], list[SkippedRecords]]:
    report = ReadReport()
    spans = list(read_spans([path], report=report))
    return [s.span_id for s in spans], report.skipped


_BODY = AnyValue(string_value="tool call finished")
_ATTRS = [KeyValue(key="agent.tool.name", value=AnyValue(string_value="lookup"))]


@pytest.mark.parametrize(
    "record",
    [
        LogRecord(time_unix_nano=5, body=_BODY),
        LogRecord(observed_time_unix_nano=5, body=_BODY),
        LogRecord(severity_number=SeverityNumber.SEVERITY_NUMBER_INFO, body=_BODY),
        LogRecord(severity_text="INFO", attributes=_ATTRS, observed_time_unix_nano=5),
        LogRecord(body=_BODY, dropped_attributes_count=2, observed_time_unix_nano=5),
    ],
    ids=[
        "time-only",
        "observed-time-only",
        "severity-only",
        "attributes-then-observed-time",
        "dropped-count",
    ],
)
def test_a_log_record_in_a_shared_file_is_skipped_as_logs(tmp_path: Path, record: LogRecord) -> None:
    """A log record is known as one by its times (fields 1 and 11) or its severity (field 2) even
    when the other two are unset and other fields (attributes, dropped count) come first."""
    path = _framed(tmp_path, _logs_request(record), _trace_request(_span(end_time_unix_nano=2)))
    span_ids, skipped = _read(path)
    assert span_ids == [SPAN_ID.hex()]
    assert skipped == [SkippedRecords(str(path), (("logs", 1),), "records")]


@pytest.mark.parametrize(
    "metric",
    [
        Metric(name="agent.tool.calls", gauge=Gauge(data_points=[NumberDataPoint(as_int=3)])),
        Metric(name="calls", description="per call", gauge=Gauge(data_points=[NumberDataPoint(as_int=3)])),
    ],
    ids=["16-byte-name", "8-byte-description"],
)
def test_a_metric_whose_name_or_description_has_an_id_length_is_still_a_metric(
    tmp_path: Path, metric: Metric
) -> None:
    """Span ids are 16 and 8 bytes in fields 1 and 2; a metric's name (field 1) or description
    (field 2) of that length alone does not make it a span: both ids are needed."""
    path = _framed(tmp_path, _trace_request(_span(end_time_unix_nano=2)), _metrics_request(metric))
    span_ids, skipped = _read(path)
    assert span_ids == [SPAN_ID.hex()]
    assert skipped == [SkippedRecords(str(path), (("metrics", 1),), "records")]


@pytest.mark.parametrize(
    ("first", "rest"),
    [
        ({"kind": Span.SPAN_KIND_CLIENT}, {"start_time_unix_nano": 1, "end_time_unix_nano": 2}),
        ({"start_time_unix_nano": 1}, {"end_time_unix_nano": 2}),
        ({"end_time_unix_nano": 2}, {"start_time_unix_nano": 1}),
    ],
    ids=["kind", "start-time", "end-time"],
)
def test_a_span_is_known_by_its_kind_or_either_time_before_its_later_fields(
    tmp_path: Path, first: dict, rest: dict
) -> None:
    """The sniffer stops at a span's kind (varint field 6) or its start or end time (fixed64 fields
    7 and 8): what follows — here an unknown field in the group encoding, which it cannot walk but
    protobuf skips — is left to the protobuf parser, and the span is read."""
    span = _span(**first) + UNKNOWN_GROUP + Span(**rest).SerializeToString()
    path = _framed(tmp_path, _trace_request(span))
    (read,) = read_spans([path])
    assert (read.span_id, read.start_ns, read.end_ns) == (SPAN_ID.hex(), 1, 2)


@pytest.mark.parametrize(
    ("span", "problem"),
    [
        (Span(), "trace_id has 0 bytes, expected 16"),
        (
            Span(trace_id=TRACE_ID[:15], span_id=SPAN_ID, parent_span_id=SPAN_ID[::-1], name="s"),
            "trace_id has 15 bytes, expected 16",
        ),
    ],
    ids=["empty-span", "short-trace-id-with-parent"],
)
def test_a_span_that_is_no_other_signal_is_read_as_a_span_and_its_fault_named(
    tmp_path: Path, span: Span, problem: str
) -> None:
    """A span with neither kind nor times nor valid ids, whose fields are not all a metric's
    (an empty span; a parent id in field 4), is left to the trace parser to say what is wrong,
    not taken for a metrics file."""
    path = tmp_path / "t.pb"
    path.write_bytes(
        ExportTraceServiceRequest(
            resource_spans=[ResourceSpans(scope_spans=[ScopeSpans(spans=[span])])]
        ).SerializeToString()
    )
    with pytest.raises(TraceReadError) as caught:
        list(read_spans([path]))
    assert str(caught.value) == f"{path}: record at byte 0: scope_spans[0].spans[0]: {problem}"


def _varint(value: int, size: int) -> bytes:
    """``value`` as a protobuf varint of exactly ``size`` bytes (padded with continuation bytes, as
    protobuf allows up to ten)."""
    out = bytearray()
    for i in range(size):
        byte = value >> (7 * i) & 0x7F
        out.append(byte | (0x80 if i < size - 1 else 0))
    return bytes(out)


@pytest.mark.parametrize(
    "tail",
    [
        Span(flags=0x301).SerializeToString(),  # field 16, fixed32
        _varint(99 << 3 | 1, 2) + (7).to_bytes(8, "little"),  # a field this reader does not know, fixed64
        _varint(99 << 3 | 5, 2) + (7).to_bytes(4, "little"),  # and fixed32
        b"\x50" + _varint(2, 10),  # dropped_attributes_count as the longest varint protobuf allows
    ],
    ids=["flags", "unknown-fixed64", "unknown-fixed32", "ten-byte-varint"],
)
def test_a_span_without_kind_or_times_is_known_by_its_ids_past_fixed_width_fields(
    tmp_path: Path, tail: bytes
) -> None:
    """A span with no kind and no times is decided by its 16- and 8-byte ids, after the sniffer has
    walked every field: fixed-width fields are stepped over by their width, and a ten-byte varint is
    a varint — in a record shared with logs, so a misstep is not left to the trace parser."""
    span = _span() + tail
    assert ExportTraceServiceRequest.FromString(_trace_request(span))  # protobuf itself reads it
    path = _framed(tmp_path, _logs_request(LogRecord(time_unix_nano=5, body=_BODY)), _trace_request(span))
    ids, skipped = _read(path)
    assert ids == [SPAN_ID.hex()] and [s.counts for s in skipped] == [(("logs", 1),)]


def test_a_varint_longer_than_ten_bytes_is_named_as_malformed(tmp_path: Path) -> None:
    span = _span() + b"\x50" + b"\xff" * 10 + b"\x01"  # protobuf refuses it too ("corrupt")
    scope = b"\x12" + bytes([len(span)]) + span
    rs = b"\x12" + bytes([len(scope)]) + scope
    path = _framed(tmp_path, b"\x0a" + bytes([len(rs)]) + rs)
    with pytest.raises(TraceReadError) as caught:
        list(read_spans([path]))
    assert str(caught.value) == f"{path}: record at byte 0: malformed varint"


def test_a_record_longer_than_a_two_byte_length_is_read_whole(tmp_path: Path) -> None:
    """A ResourceSpans of more than 16 KiB has a three-byte length: the record walker reads it, and
    the record after it, as they are."""
    many = [Span(trace_id=TRACE_ID, span_id=i.to_bytes(8, "big"), name="s" * 100) for i in range(1, 200)]
    big = ResourceSpans(scope_spans=[ScopeSpans(spans=many)])
    small = ResourceSpans(
        scope_spans=[ScopeSpans(spans=[Span(trace_id=TRACE_ID, span_id=SPAN_ID, name="x")])]
    )
    assert 2**14 < big.ByteSize() < 2**21
    path = tmp_path / "t.pb"
    path.write_bytes(ExportTraceServiceRequest(resource_spans=[big, small]).SerializeToString())
    spans = list(read_spans([path]))
    assert len(spans) == 200 and spans[-1].span_id == SPAN_ID.hex()


def test_a_resource_with_no_spans_but_a_schema_url_is_passed_over_to_the_next(tmp_path: Path) -> None:
    """Only ``scope_spans`` (and the legacy field 1000) are looked into: a schema URL is a string,
    not a message to walk."""
    empty = ResourceSpans(schema_url="https://opentelemetry.io/schemas/1.21.0")
    full = ResourceSpans(scope_spans=[ScopeSpans(spans=[Span.FromString(_span(kind=Span.SPAN_KIND_CLIENT))])])
    request = ExportTraceServiceRequest(resource_spans=[empty, full]).SerializeToString()
    path = _framed(tmp_path, _logs_request(LogRecord(time_unix_nano=5, body=_BODY)), request)
    assert _read(path)[0] == [SPAN_ID.hex()]


@pytest.mark.parametrize(
    ("record", "problem"),
    [
        (b"\x0a\x03\x12\x05\x0a", "truncated protobuf data"),  # a scope_spans longer than its resource
        (_trace_request(_span() + UNKNOWN_GROUP), "unsupported protobuf wire type 3"),
    ],
    ids=["nested-length-past-the-end", "group-before-the-ids-decide"],
)
def test_a_record_the_sniffer_cannot_walk_is_named_with_what_it_met(
    tmp_path: Path, record: bytes, problem: str
) -> None:
    """A span with no kind and no times is walked to its end to look at its ids; what the walk
    cannot step over is named (the deprecated group encoding is refused, though protobuf skips it)."""
    path = tmp_path / "t.pb"
    path.write_bytes(len(record).to_bytes(4, "big") + record)
    with pytest.raises(TraceReadError) as caught:
        list(read_spans([path]))
    assert str(caught.value) == f"{path}: record at byte 0: {problem}"
