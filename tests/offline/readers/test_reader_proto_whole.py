"""A file that is one whole OTLP protobuf request (what ``protoc``-style dumps and the SDK's own
encoder give): where its errors and cut-offs are placed, and a whole request of another signal.

Built with the official ``opentelemetry-proto`` classes; offsets are computed from their encoding."""

from __future__ import annotations

from pathlib import Path

import pytest
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import ExportMetricsServiceRequest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.logs.v1.logs_pb2 import LogRecord, ResourceLogs, ScopeLogs
from opentelemetry.proto.metrics.v1.metrics_pb2 import Gauge, Metric, ResourceMetrics, ScopeMetrics
from opentelemetry.proto.trace.v1.trace_pb2 import ResourceSpans, ScopeSpans, Span

from otel_provenance.errors import TraceReadError
from otel_provenance.offline.readers import ReadReport, read_spans


def _resource_spans(n: int, trace_id: bytes | None = None) -> ResourceSpans:
    span = Span(
        trace_id=trace_id if trace_id is not None else bytes([n]) * 16,
        span_id=bytes([n]) * 8,
        name=f"step {n}",
        end_time_unix_nano=2,
    )
    return ResourceSpans(scope_spans=[ScopeSpans(spans=[span])])


def _request(*records: ResourceSpans) -> bytes:
    return ExportTraceServiceRequest(resource_spans=list(records)).SerializeToString()


def _error(path: Path) -> str:
    with pytest.raises(TraceReadError) as caught:
        list(read_spans([path]))
    return str(caught.value)


@pytest.mark.parametrize(
    ("request_bytes", "says"),
    [
        (
            ExportLogsServiceRequest(
                resource_logs=[
                    ResourceLogs(scope_logs=[ScopeLogs(log_records=[LogRecord(time_unix_nano=1)])])
                ]
            ).SerializeToString(),
            "a logs file (resourceLogs), not traces",
        ),
        (
            ExportMetricsServiceRequest(
                resource_metrics=[
                    ResourceMetrics(scope_metrics=[ScopeMetrics(metrics=[Metric(name="m", gauge=Gauge())])])
                ]
            ).SerializeToString(),
            "a metrics file (resourceMetrics), not traces",
        ),
    ],
)
def test_a_whole_request_of_another_signal_is_named_not_read_as_empty(
    tmp_path: Path, request_bytes: bytes, says: str
) -> None:
    path = tmp_path / "other.binpb"
    path.write_bytes(request_bytes)
    assert _error(path) == f"{path}: {says}"
    report = ReadReport()  # with a report it is left out and said (a folder holds such files): not empty
    assert list(read_spans([path], report=report)) == []
    assert report.notes() == [f"{path}: {says} (left out)"] and report.complete


def test_a_bad_span_in_the_second_record_names_that_records_byte(tmp_path: Path) -> None:
    first = _resource_spans(1)
    second_at = len(_request(first))  # the second record's tag follows the first record whole
    path = tmp_path / "t.binpb"
    path.write_bytes(_request(first, _resource_spans(2, trace_id=b"\x02" * 5)))
    assert _error(path).startswith(f"{path}: record at byte {second_at}: scope_spans[0].spans[0]: ")


def test_a_request_cut_inside_its_second_record_is_incomplete_at_that_records_byte(tmp_path: Path) -> None:
    first = _resource_spans(1)
    second_at = len(_request(first))
    data = _request(first, _resource_spans(2))
    path = tmp_path / "t.binpb"
    path.write_bytes(data[:-3])
    report = ReadReport()
    assert [s.name for s in read_spans([path], report=report)] == ["step 1"]
    [cut] = report.incomplete
    assert (cut.line, cut.problem) == (None, f"the protobuf data ends inside the record at byte {second_at}")
    assert str(cut) == f"{path}: the protobuf data ends inside the record at byte {second_at}"  # no line


def test_a_field_that_is_not_resource_spans_is_named_by_its_byte_without_a_record(tmp_path: Path) -> None:
    first = _request(_resource_spans(1))
    path = tmp_path / "t.binpb"
    path.write_bytes(first + b"\x1d\x01\x02\x03\x04")  # field 3, fixed32: no trace request has it
    assert _error(path) == (
        f"{path}: byte {len(first)}: unexpected protobuf field 3 (wire type 5); "
        "not an OTLP ExportTraceServiceRequest"
    )
