"""Pre-1.0 ``instrumentation_library_spans`` (field 1000) in OTLP protobuf, beside ``scope_spans``.

Old SDKs and Collectors wrote a ``ResourceSpans`` whose spans sit in field 1000 instead of field 2;
the reader decodes that field by hand with the ``ScopeSpans`` layout (``otlp_proto._legacy_scope_spans``).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, InstrumentationScope, KeyValue
from opentelemetry.proto.resource.v1.resource_pb2 import Resource
from opentelemetry.proto.trace.v1.trace_pb2 import ResourceSpans, ScopeSpans
from opentelemetry.proto.trace.v1.trace_pb2 import Span as PbSpan

from otel_provenance.errors import TraceReadError
from otel_provenance.offline.readers import read_spans, sniff_format

TRACE = bytes.fromhex("0af7651916cd43dd8448eb211c80319c")


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        byte, n = n & 0x7F, n >> 7
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)


def _field(number: int, payload: bytes) -> bytes:
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


def _scope(name: str, *span_ids: int) -> ScopeSpans:
    spans = [
        PbSpan(
            trace_id=TRACE,
            span_id=n.to_bytes(8, "big"),
            name=f"execute_tool s{n}",
            kind=PbSpan.SPAN_KIND_INTERNAL,
            start_time_unix_nano=n,
            end_time_unix_nano=n + 1,
        )
        for n in span_ids
    ]
    return ScopeSpans(scope=InstrumentationScope(name=name, version="1"), spans=spans)


def _file(tmp_path: Path, legacy: bytes) -> Path:
    """A request of one ResourceSpans: a resource with an attribute, a schema URL, scope_spans of
    span 1 (field 2), then ``legacy`` appended as field 1000."""
    rs = ResourceSpans(
        resource=Resource(attributes=[KeyValue(key="service.name", value=AnyValue(string_value="agent"))]),
        scope_spans=[_scope("new-lib", 1)],
        schema_url="https://opentelemetry.io/schemas/1.21.0",
    )
    record = rs.SerializeToString() + _field(1000, legacy)
    path = tmp_path / "t.pb"
    path.write_bytes(_field(1, record))
    assert ExportTraceServiceRequest.FromString(path.read_bytes()).resource_spans  # a valid message
    return path


def test_legacy_and_current_scope_spans_of_one_resource_are_each_read_once(tmp_path: Path) -> None:
    path = _file(tmp_path, _scope("old-lib", 2, 3).SerializeToString())
    assert sniff_format(path) == "otlp-protobuf"
    spans = list(read_spans([path]))
    assert [(s.span_id[-1], s.scope_name) for s in spans] == [
        ("1", "new-lib"),
        ("2", "old-lib"),
        ("3", "old-lib"),
    ]
    assert {s.resource["service.name"] for s in spans} == {"agent"}


def test_a_corrupt_legacy_record_is_an_error_naming_it(tmp_path: Path) -> None:
    path = _file(tmp_path, _field(2, b"\x0a\x05ab"))  # a span whose first field overruns it
    with pytest.raises(TraceReadError) as info:
        list(read_spans([path]))
    assert "not a valid instrumentation_library_spans record (DecodeError)" in str(info.value)
    assert info.value.source == str(path)


def _keyed_file(tmp_path: Path, run_value: AnyValue) -> Path:
    span = PbSpan(
        trace_id=TRACE,
        span_id=(7).to_bytes(8, "big"),
        name="execute_tool t",
        start_time_unix_nano=1,
        end_time_unix_nano=2,
        attributes=[KeyValue(key="agent.run.id", value=run_value)],
    )
    resource_spans = ResourceSpans(scope_spans=[ScopeSpans(spans=[span])])
    request = ExportTraceServiceRequest(resource_spans=[resource_spans])
    path = tmp_path / "keyed.pb"
    path.write_bytes(request.SerializeToString())
    return path


@pytest.mark.parametrize(
    "run_value",
    [AnyValue(string_value=""), AnyValue(int_value=5)],
    ids=["empty-string", "not-a-string"],
)
def test_a_protobuf_span_without_a_usable_run_id_is_kept_or_not_by_its_trace_id(
    tmp_path: Path, run_value: AnyValue
) -> None:
    """``keep`` (a shard's filter) is asked about a span's run key before the span is converted: an
    empty or non-string ``agent.run.id`` does not name a run, so the key is the trace id."""
    asked: list[str] = []
    path = _keyed_file(tmp_path, run_value)
    assert list(read_spans([path], keep=lambda key: asked.append(key) or False)) == []
    assert asked == [TRACE.hex()]
    (span,) = read_spans([path], keep=lambda key: key == TRACE.hex())
    assert span.trace_id == TRACE.hex()


def test_a_legacy_logs_request_in_a_shared_file_is_skipped_as_logs(tmp_path: Path) -> None:
    """Pre-1.0 logs sit in ``instrumentation_library_logs``, field 1000 of ``ResourceLogs``, with the
    ``ScopeLogs`` layout: the sniffer looks there too, so such a record is skipped and counted as
    logs, not parsed as spans."""
    from opentelemetry.proto.common.v1.common_pb2 import AnyValue as Value
    from opentelemetry.proto.logs.v1.logs_pb2 import LogRecord, ScopeLogs

    from otel_provenance.offline.readers import ReadReport

    record = LogRecord(time_unix_nano=5, body=Value(string_value="tool call finished"))
    legacy_logs = _field(1, _field(1000, ScopeLogs(log_records=[record]).SerializeToString()))
    spans = ExportTraceServiceRequest(
        resource_spans=[ResourceSpans(scope_spans=[_scope("lib", 7)])]
    ).SerializeToString()
    path = tmp_path / "shared.pb"
    path.write_bytes(b"".join(len(r).to_bytes(4, "big") + r for r in (legacy_logs, spans)))
    assert sniff_format(path) == "otlp-length-prefixed"
    report = ReadReport()
    assert [s.name for s in read_spans([path], report=report)] == ["execute_tool s7"]
    assert [s.counts for s in report.skipped] == [(("logs", 1),)]
