"""OTLP protobuf: a file holding one (or several concatenated) ``ExportTraceServiceRequest`` → spans.

The top level of the message is framed by hand so that each ``ResourceSpans`` is parsed on its own:
a file that was cut off mid-write still yields its complete ``ResourceSpans`` records, and the cut
is reported as an incomplete file rather than as garbage. (Concatenated serialised requests are
one valid request in protobuf, so they read the same way.)
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Final

from google.protobuf.message import DecodeError
from opentelemetry.proto.common.v1.common_pb2 import AnyValue
from opentelemetry.proto.trace.v1.trace_pb2 import ResourceSpans
from opentelemetry.proto.trace.v1.trace_pb2 import Span as PbSpan

from ... import semconv
from ..model import EMPTY_ATTRIBUTES, Attributes, Event, Link, Span, Status, Value
from . import _convert as c

_Bad = c._Bad
_RESOURCE_SPANS_TAG: Final = (1 << 3) | 2  # field 1, length-delimited
_MAX_DEPTH: Final = 64


class Truncated(Exception):
    """The data ends inside a record: the file was cut off (``offset`` is where the record began)."""

    def __init__(self, offset: int) -> None:
        super().__init__(offset)
        self.offset = offset


def _varint(data: bytes | memoryview, pos: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        if pos >= len(data):
            raise IndexError
        b = data[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            return result, pos
        shift += 7
        if shift > 63:
            raise _Bad("malformed varint")


def resource_span_records(data: bytes) -> Iterator[tuple[int, memoryview]]:
    """``(byte offset, serialised ResourceSpans)`` for each top-level field of the request.

    Raises ``_Bad`` for a field that is not ``resource_spans`` and ``Truncated`` when the data stops
    inside a record."""
    view = memoryview(data)
    pos = 0
    end = len(data)
    while pos < end:
        start = pos
        try:
            tag, pos = _varint(view, pos)
            if tag != _RESOURCE_SPANS_TAG:
                raise _Bad(
                    f"byte {start}: unexpected protobuf field {tag >> 3} (wire type {tag & 7}); "
                    "not an OTLP ExportTraceServiceRequest"
                )
            length, pos = _varint(view, pos)
        except IndexError:
            raise Truncated(start) from None
        if pos + length > end:
            raise Truncated(start)
        yield start, view[pos : pos + length]
        pos += length


def spans_from_record(record: bytes | memoryview, keep: Callable[[str], bool] | None = None) -> list[Span]:
    """Spans of one serialised ``ResourceSpans`` (``keep`` as in ``otlp_json.spans_from_request``)."""
    try:
        rs = ResourceSpans.FromString(bytes(record))
    except (DecodeError, RecursionError, ValueError) as exc:
        raise _Bad(f"not a valid ResourceSpans protobuf ({type(exc).__name__})") from None
    resource = _attributes(rs.resource.attributes, 0)
    out: list[Span] = []
    for si, ss in enumerate(rs.scope_spans):
        for pi, sp in enumerate(ss.spans):
            try:
                if keep is None or keep(_raw_run_key(sp)):
                    out.append(_span(sp, resource, ss.scope.name, ss.scope.version))
            except _Bad as exc:
                raise _Bad(f"scope_spans[{si}].spans[{pi}]: {exc}") from None
    return out


def _raw_run_key(sp: PbSpan) -> str:
    """``Span.run_id`` of a protobuf span, without converting it."""
    for kv in sp.attributes:
        if kv.key == semconv.RUN_ID:
            if kv.value.WhichOneof("value") == "string_value" and kv.value.string_value:
                return kv.value.string_value
            break
    return c.trace_id_from_bytes(sp.trace_id)


def _span(sp: PbSpan, resource: Attributes, scope_name: str, scope_version: str) -> Span:
    code = c.status_code(sp.status.code)
    message = sp.status.message
    return Span(
        trace_id=c.trace_id_from_bytes(sp.trace_id),
        span_id=c.span_id_from_bytes(sp.span_id),
        parent_span_id=c.parent_id_from_bytes(sp.parent_span_id),
        name=sp.name,
        kind=c.span_kind(sp.kind),
        start_ns=sp.start_time_unix_nano,
        end_ns=sp.end_time_unix_nano,
        status=Status(code, message) if (code or message) else c.UNSET_STATUS,
        attributes=_attributes(sp.attributes, 0),
        events=tuple(Event(e.name, e.time_unix_nano, _attributes(e.attributes, 0)) for e in sp.events),
        links=tuple(
            Link(
                c.trace_id_from_bytes(li.trace_id, "link trace_id"),
                c.span_id_from_bytes(li.span_id, "link span_id"),
                _attributes(li.attributes, 0),
            )
            for li in sp.links
        ),
        resource=resource,
        scope_name=scope_name,
        scope_version=scope_version,
    )


def _attributes(kvs, depth: int) -> Attributes:  # kvs: RepeatedCompositeContainer[KeyValue]
    if not kvs:
        return EMPTY_ATTRIBUTES
    data: dict[str, Value] = {}
    for kv in kvs:
        if kv.key in data:
            raise _Bad("duplicate attribute key")
        if kv.value.WhichOneof("value") is None:  # an empty AnyValue carries nothing: absent
            continue
        data[kv.key] = _value(kv.value, kv.key, depth)
    return Attributes(data)


def _value(v: AnyValue, key: str, depth: int) -> Value:
    if depth > _MAX_DEPTH:
        raise _Bad(f"attribute {key!r}: nested deeper than {_MAX_DEPTH}")
    which = v.WhichOneof("value")
    if which == "string_value":
        return v.string_value
    if which == "int_value":
        return v.int_value
    if which == "bool_value":
        return v.bool_value
    if which == "double_value":
        return v.double_value
    if which == "array_value":
        out = []
        for item in v.array_value.values:
            if item.WhichOneof("value") is None:
                raise _Bad(f"attribute {key!r}: array element without a value")
            out.append(_value(item, key, depth + 1))
        return tuple(out)
    if which == "kvlist_value":
        return _attributes(v.kvlist_value.values, depth + 1)
    if which == "bytes_value":
        return v.bytes_value
    raise _Bad(f"attribute {key!r}: value of unknown type")
