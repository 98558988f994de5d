"""OTLP protobuf spans: status, link ids and attribute values as read, and the errors a user sees
for a record or a value the reader refuses (file, byte of the record, span, then the problem).

The requests are built with the official ``opentelemetry-proto`` classes; a record that protobuf
itself cannot parse is written by hand."""

from __future__ import annotations

from pathlib import Path

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, ArrayValue, KeyValue
from opentelemetry.proto.trace.v1.trace_pb2 import ResourceSpans, ScopeSpans, Span, Status

from otel_provenance.errors import TraceReadError
from otel_provenance.offline.model import Status as ModelStatus
from otel_provenance.offline.model import StatusCode
from otel_provenance.offline.readers import ReadReport, read_spans

TRACE_ID = b"\x01" * 16
SPAN_ID = b"\x02" * 8


def _write(tmp_path: Path, **fields) -> Path:
    span = {"trace_id": TRACE_ID, "span_id": SPAN_ID, "name": "s", "end_time_unix_nano": 2, **fields}
    request = ExportTraceServiceRequest(
        resource_spans=[ResourceSpans(scope_spans=[ScopeSpans(spans=[Span(**span)])])]
    )
    path = tmp_path / "t.pb"
    path.write_bytes(request.SerializeToString())
    return path


def _error(path: Path) -> str:
    with pytest.raises(TraceReadError) as caught:
        list(read_spans([path]))
    return str(caught.value)


def _attr(key: str, value: AnyValue) -> KeyValue:
    return KeyValue(key=key, value=value)


def _array(*values: AnyValue) -> AnyValue:
    return AnyValue(array_value=ArrayValue(values=list(values)))


_TEXT = AnyValue(string_value="x")


@pytest.mark.parametrize(
    ("status", "expected"),
    [
        (
            Status(code=Status.STATUS_CODE_ERROR, message="tool failed"),
            ModelStatus(StatusCode.ERROR, "tool failed"),
        ),
        (Status(message="no code"), ModelStatus(StatusCode.UNSET, "no code")),
        (Status(code=Status.STATUS_CODE_OK), ModelStatus(StatusCode.OK, "")),
    ],
    ids=["error-with-message", "message-without-code", "ok"],
)
def test_a_span_status_keeps_its_code_and_message(
    tmp_path: Path, status: Status, expected: ModelStatus
) -> None:
    """The status message is kept with its code, and kept even when the code is unset."""
    (span,) = read_spans([_write(tmp_path, status=status)])
    assert span.status == expected


@pytest.mark.parametrize(
    ("link", "problem"),
    [
        (Span.Link(trace_id=TRACE_ID[:15], span_id=SPAN_ID), "link trace_id has 15 bytes, expected 16"),
        (Span.Link(trace_id=b"\x00" * 16, span_id=SPAN_ID), "link trace_id is all zeros (invalid)"),
        (Span.Link(trace_id=TRACE_ID, span_id=SPAN_ID + b"\x03"), "link span_id has 9 bytes, expected 8"),
        (Span.Link(trace_id=TRACE_ID, span_id=b"\x00" * 8), "link span_id is all zeros (invalid)"),
    ],
    ids=["short-trace", "zero-trace", "long-span", "zero-span"],
)
def test_a_bad_link_id_is_refused_naming_the_link_field(
    tmp_path: Path, link: Span.Link, problem: str
) -> None:
    """A link's ids are checked like the span's own, and the error says it is the link's id."""
    path = _write(tmp_path, links=[link])
    assert _error(path) == f"{path}: record at byte 0: scope_spans[0].spans[0]: {problem}"


@pytest.mark.parametrize(
    ("attributes", "problem"),
    [
        ([_attr("k", _TEXT), _attr("k", _TEXT)], "duplicate attribute key"),
        ([_attr("k", _array(_TEXT, AnyValue()))], "attribute 'k': array element without a value"),
        ([_attr("k", _array(_array(AnyValue())))], "attribute 'k': array element without a value"),
    ],
    ids=["duplicate-key", "empty-array-element", "empty-element-of-a-nested-array"],
)
def test_a_bad_attribute_is_refused_naming_its_key(tmp_path: Path, attributes: list, problem: str) -> None:
    """A duplicate key or an array element without a value is an error naming the attribute's key
    (never its value), however deep in arrays the element sits."""
    path = _write(tmp_path, attributes=attributes)
    assert _error(path) == f"{path}: record at byte 0: scope_spans[0].spans[0]: {problem}"


def test_an_attribute_without_a_value_is_left_out_and_the_next_ones_read(tmp_path: Path) -> None:
    """An empty ``AnyValue`` carries nothing: that attribute is absent, the ones after it are kept."""
    path = _write(tmp_path, attributes=[_attr("a", _TEXT), _attr("empty", AnyValue()), _attr("b", _TEXT)])
    (span,) = read_spans([path])
    assert dict(span.attributes) == {"a": "x", "b": "x"}


def test_an_array_holding_a_value_of_unknown_kind_is_left_out_and_counted(tmp_path: Path) -> None:
    """A ``string_value_strindex`` element (profiling dictionaries only) makes its whole array
    attribute unknown: left out, counted in the report, the other attributes kept."""
    if "string_value_strindex" not in AnyValue.DESCRIPTOR.fields_by_name:
        pytest.skip("this opentelemetry-proto release predates string_value_strindex (the writer needs it)")
    strindex = AnyValue(string_value_strindex=3)
    path = _write(tmp_path, attributes=[_attr("k", _array(_TEXT, strindex)), _attr("b", _TEXT)])
    report = ReadReport()
    (span,) = read_spans([path], report=report)
    assert dict(span.attributes) == {"b": "x"}
    assert report.unknown_values == 1


def test_arrays_nested_as_deep_as_protobuf_parses_are_read(tmp_path: Path) -> None:
    """Protobuf parses attribute values nested about 48 arrays deep (its limit is 100 message
    levels); each array level counts one towards the reader's own limit of 64, so all are read."""
    value = _TEXT
    for _ in range(40):
        value = _array(value)
    (span,) = read_spans([_write(tmp_path, attributes=[_attr("deep", value)])])
    inner = span.attributes["deep"]
    for _ in range(40):
        (inner,) = inner
    assert inner == "x"


def test_a_record_protobuf_cannot_parse_is_named_with_its_byte(tmp_path: Path) -> None:
    """A ``resource_spans`` record whose inside is not protobuf (a field running past the record's
    end) is an error naming the record's byte offset and the parser's exception."""
    record = b"\x0a\x05ab"  # field 1 (resource), 5 bytes announced, 2 present
    path = tmp_path / "t.pb"
    path.write_bytes(b"\x0a" + bytes([len(record)]) + record)
    assert _error(path) == f"{path}: record at byte 0: not a valid ResourceSpans protobuf (DecodeError)"
