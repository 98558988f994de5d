"""OTLP protobuf: a file holding one (or several concatenated) ``ExportTraceServiceRequest`` → spans.

The top level of the message is framed by hand so that each ``ResourceSpans`` is parsed on its own:
a file that was cut off mid-write still yields its complete ``ResourceSpans`` records, and the cut
is reported as an incomplete file rather than as garbage. (Concatenated serialised requests are
one valid request in protobuf, so they read the same way.)

The Collector's file exporter (``format: proto``, or any ``compression``) writes each request
preceded by its length as 4 big-endian bytes (``frames``), and one exporter shared by several
pipelines writes traces, logs and metrics requests into one file. The three requests have the same
outer shape, so ``signal_of`` tells them apart by the wire types of the first record's fields.
Pre-1.0 ``instrumentation_library_spans`` (field 1000, the same layout as ``scope_spans``) is read.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import IO, TYPE_CHECKING, Final

from ... import semconv
from ..model import EMPTY_ATTRIBUTES, Attributes, Event, Link, Span, Status, Value, make_span
from . import _convert as c

if TYPE_CHECKING:
    from opentelemetry.proto.common.v1.common_pb2 import AnyValue
    from opentelemetry.proto.trace.v1.trace_pb2 import ScopeSpans
    from opentelemetry.proto.trace.v1.trace_pb2 import Span as PbSpan

_Bad = c._Bad
_RESOURCE_SPANS_TAG: Final = (1 << 3) | 2  # field 1, length-delimited
_LEGACY_SCOPE_TAG_BYTES: Final = b"\xc2\x3e"  # varint of field 1000, length-delimited
_MAX_DEPTH: Final = 64
SIGNAL_TRACES: Final = "traces"
SIGNAL_LOGS: Final = "logs"
SIGNAL_METRICS: Final = "metrics"
SIGNAL_EMPTY: Final = "empty"
_METRIC_FIELDS: Final = frozenset({1, 2, 3, 5, 7, 9, 10, 11, 12})


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


def frames(f: IO[bytes]) -> Iterator[tuple[int, bytes]]:
    """``(byte offset, payload)`` of each length-prefixed record; ``Truncated`` when one is cut off."""
    offset = 0
    while True:
        head = f.read(4)
        if not head:
            return
        if len(head) < 4:
            raise Truncated(offset)
        length = int.from_bytes(head, "big")
        payload = f.read(length)
        if len(payload) < length:
            raise Truncated(offset)
        yield offset, payload
        offset += 4 + length


def looks_framed(head: bytes) -> bool:
    """True when ``head`` starts like the Collector's length-prefixed framing: a 4-byte length, then a
    protobuf request (field 1), a zstd frame, a JSON object — or nothing (an empty request).
    A bare request starts with 0x0A instead, which as a length would mean a 167 MB record."""
    if len(head) < 4 or head[0] == 0x0A:
        return False
    length = int.from_bytes(head[:4], "big")
    if length == 0:
        return len(head) == 4 or looks_framed(head[4:])
    return len(head) > 4 and (head[4] in (0x0A, 0x7B) or head[4:8] == b"\x28\xb5\x2f\xfd"[: len(head[4:8])])


def _fields(data: bytes | memoryview) -> Iterator[tuple[int, int, bytes | memoryview | None]]:
    """``(field number, wire type, payload for length-delimited fields)`` of one message's top level."""
    pos, end = 0, len(data)
    while pos < end:
        tag, pos = _varint(data, pos)
        wire = tag & 7
        if wire == 0:
            _, pos = _varint(data, pos)
            payload = None
        elif wire == 1:
            pos += 8
            payload = None
        elif wire == 5:
            pos += 4
            payload = None
        elif wire == 2:
            length, pos = _varint(data, pos)
            payload = data[pos : pos + length]
            pos += length
        else:
            raise _Bad(f"unsupported protobuf wire type {wire}")
        if pos > end:
            raise IndexError
        yield tag >> 3, wire, payload


def signal_of(data: bytes | memoryview) -> str:
    """Which request ``data`` is: ``traces``, ``logs``, ``metrics``, or ``empty`` (no records).

    Decided by the first span / log record / metric: a log record has fixed64 times in fields 1 and
    11 and a varint severity in 2; a span has fixed64 times in 7 and 8, a varint kind in 6, or a
    16-byte id in 1 and an 8-byte id in 2; a metric has only length-delimited fields."""
    view = memoryview(data)
    try:
        for number, wire, resource in _fields(view):
            if number != 1 or wire != 2:
                raise _Bad(
                    f"unexpected protobuf field {number} (wire type {wire}); not an OTLP export request"
                )
            for s_number, s_wire, scope in _fields(resource):
                if s_number not in (2, 1000) or s_wire != 2:
                    continue
                for i_number, i_wire, item in _fields(scope):
                    if i_number == 2 and i_wire == 2:
                        return _item_signal(item)
    except IndexError:
        raise _Bad("truncated protobuf data") from None
    return SIGNAL_EMPTY if not len(view) else SIGNAL_TRACES  # resources without records: nothing to skip


def _item_signal(item: bytes | memoryview) -> str:
    seen: dict[int, tuple[int, int]] = {}
    for number, wire, payload in _fields(item):
        if (wire == 1 and number in (1, 11)) or (wire == 0 and number == 2):
            return SIGNAL_LOGS
        if (wire == 1 and number in (7, 8)) or (wire == 0 and number == 6):
            return SIGNAL_TRACES
        seen[number] = (wire, len(payload) if payload is not None else -1)
    if seen.get(1) == (2, 16) and seen.get(2) == (2, 8):
        return SIGNAL_TRACES
    if seen and all(number in _METRIC_FIELDS and wire == 2 for number, (wire, _) in seen.items()):
        return SIGNAL_METRICS
    return SIGNAL_TRACES  # let the trace parser say precisely what is wrong


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
    data = bytes(record)
    # protobuf is loaded when a protobuf file is read, not by every gate that sniffs a file's format
    from google.protobuf.message import DecodeError
    from opentelemetry.proto.trace.v1.trace_pb2 import ResourceSpans

    try:
        rs = ResourceSpans.FromString(data)
    except (DecodeError, RecursionError, ValueError) as exc:
        raise _Bad(f"not a valid ResourceSpans protobuf ({type(exc).__name__})") from None
    resource = _attributes(rs.resource.attributes, 0)
    out: list[Span] = []
    scope_spans = list(rs.scope_spans)
    if _LEGACY_SCOPE_TAG_BYTES in data:  # cheap test first; only the top level is then scanned
        scope_spans += _legacy_scope_spans(data)
    for si, ss in enumerate(scope_spans):
        for pi, sp in enumerate(ss.spans):
            try:
                if keep is None or c.kept(keep, _raw_run_key, sp):
                    out.append(_span(sp, resource, ss.scope.name, ss.scope.version))
            except _Bad as exc:
                raise _Bad(f"scope_spans[{si}].spans[{pi}]: {exc}") from None
    return out


def _legacy_scope_spans(record: bytes | memoryview) -> list[ScopeSpans]:
    """Pre-1.0 ``instrumentation_library_spans`` (field 1000): the same wire layout as ``ScopeSpans``."""
    from google.protobuf.message import DecodeError
    from opentelemetry.proto.trace.v1.trace_pb2 import ScopeSpans

    try:
        return [
            ScopeSpans.FromString(bytes(payload))
            for number, wire, payload in _fields(memoryview(record))
            if number == 1000 and wire == 2 and payload is not None
        ]
    except (DecodeError, IndexError) as exc:
        raise _Bad(f"not a valid instrumentation_library_spans record ({type(exc).__name__})") from None


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
    return make_span(
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
        value = _value(kv.value, kv.key, depth)
        if value is not c.UNKNOWN_VALUE:
            data[kv.key] = value
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
        return c.UNKNOWN_VALUE if c.UNKNOWN_VALUE in out else tuple(out)
    if which == "kvlist_value":
        return _attributes(v.kvlist_value.values, depth + 1)
    if which == "bytes_value":
        return v.bytes_value
    if which == "string_value_strindex":  # profiling dictionaries only: non-fatal elsewhere, counted
        return c.unknown_value()
    raise _Bad(f"attribute {key!r}: value of unknown type")
