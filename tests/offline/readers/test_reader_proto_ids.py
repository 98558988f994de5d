"""Span, trace and parent ids in OTLP protobuf: bytes of the wrong length or all zeros are refused with
the field named; an all-zero parent is refused too (OTLP writes a root's parent empty), any other parent
bytes are the parent's id.

The requests are built with the official ``opentelemetry-proto`` classes."""

from __future__ import annotations

from pathlib import Path

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.trace.v1.trace_pb2 import ResourceSpans, ScopeSpans, Span

from otel_provenance.errors import TraceReadError
from otel_provenance.offline.readers import read_spans


def _write(tmp_path: Path, **fields) -> Path:
    span = {"trace_id": b"\x01" * 16, "span_id": b"\x02" * 8, "name": "s", "end_time_unix_nano": 2, **fields}
    request = ExportTraceServiceRequest(
        resource_spans=[ResourceSpans(scope_spans=[ScopeSpans(spans=[Span(**span)])])]
    )
    path = tmp_path / "t.pb"
    path.write_bytes(request.SerializeToString())
    return path


@pytest.mark.parametrize(
    ("fields", "problem"),
    [
        ({"span_id": b"\x02" * 7}, "span_id has 7 bytes, expected 8"),
        ({"span_id": b"\x00" * 8}, "span_id is all zeros (invalid)"),
        ({"trace_id": b"\x01" * 15}, "trace_id has 15 bytes, expected 16"),
        ({"trace_id": b"\x00" * 16}, "trace_id is all zeros (invalid)"),
        ({"parent_span_id": b"\x03" * 9}, "parent_span_id has 9 bytes, expected 8"),
    ],
    ids=["short-span", "zero-span", "short-trace", "zero-trace", "long-parent"],
)
def test_a_bad_id_is_refused_naming_the_field_and_the_span(tmp_path: Path, fields: dict, problem: str):
    path = _write(tmp_path, **fields)
    with pytest.raises(TraceReadError) as caught:
        list(read_spans([path]))
    assert str(caught.value) == f"{path}: record at byte 0: scope_spans[0].spans[0]: {problem}"


@pytest.mark.parametrize(
    ("parent", "expected"),
    [(b"", None), (b"X" * 8, "58" * 8), (b"\x00" * 7 + b"X", "00" * 7 + "58")],
    ids=["absent", "letters", "zeros-then-a-letter"],
)
def test_a_parent_id_is_a_root_only_when_absent(tmp_path: Path, parent: bytes, expected: str | None) -> None:
    (span,) = read_spans([_write(tmp_path, parent_span_id=parent)])
    assert span.parent_span_id == expected
