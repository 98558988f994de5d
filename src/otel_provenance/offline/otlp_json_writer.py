"""Write spans of the offline model as OTLP JSON Lines: one ``ExportTraceServiceRequest`` per line.

The spans become the OTLP protobuf messages (``opentelemetry-proto``, which the readers use too) and
are rendered by the package's one OTLP/JSON encoder (``otlp_encoding``), so a file ``fetch`` writes
has the bytes the official OTLP JSON file exporter would write for the same request. One line per
trace; within it, spans are grouped by resource and then by instrumentation scope, in first-seen
order, attributes in key order, so equal input gives equal bytes. Non-ASCII is written as JSON
escapes, so no character inside a line (U+0085, U+2028) can pass for a line break in a reader that
splits on every Unicode line boundary.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from decimal import Decimal
from typing import TextIO

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from opentelemetry.proto.trace.v1.trace_pb2 import Span as PbSpan

from ..otlp_encoding import json_line
from .model import Attributes, Span, Value

_INT64 = range(-(2**63), 2**63)


def encode_value(value: Value, out: AnyValue) -> None:
    """One attribute value into an OTLP ``AnyValue``."""
    if isinstance(value, bool):
        out.bool_value = value
    elif isinstance(value, int):
        if value in _INT64:
            out.int_value = value
        else:  # beyond OTLP's 64 bits: the nearest double, as a backend would keep it
            out.double_value = float(value)
    elif isinstance(value, Decimal):
        if value == value.to_integral_value() and int(value) in _INT64:
            out.int_value = int(value)
        else:
            out.double_value = float(value)
    elif isinstance(value, float):
        out.double_value = value
    elif isinstance(value, str):
        out.string_value = value
    elif isinstance(value, bytes):
        out.bytes_value = value
    elif isinstance(value, tuple):
        values = out.array_value.values
        out.array_value.SetInParent()
        for item in value:
            encode_value(item, values.add())
    elif isinstance(value, Mapping):
        out.kvlist_value.SetInParent()
        encode_attributes(value, out.kvlist_value.values)
    else:
        raise TypeError(f"not an attribute value type: {type(value).__name__}")


def encode_attributes(attributes: Mapping[str, Value], out: Iterable[KeyValue]) -> None:
    for key in sorted(attributes):
        kv = out.add()  # type: ignore[attr-defined]
        kv.key = key
        encode_value(attributes[key], kv.value)


def _span(span: Span, out: PbSpan) -> None:
    out.trace_id = bytes.fromhex(span.trace_id)
    out.span_id = bytes.fromhex(span.span_id)
    if span.parent_span_id:
        out.parent_span_id = bytes.fromhex(span.parent_span_id)
    out.name = span.name
    out.kind = int(span.kind)
    out.start_time_unix_nano = span.start_ns
    out.end_time_unix_nano = span.end_ns
    encode_attributes(span.attributes, out.attributes)
    for event in span.events:
        pb = out.events.add()
        pb.time_unix_nano = event.time_ns
        pb.name = event.name
        encode_attributes(event.attributes, pb.attributes)
    for link in span.links:
        pb = out.links.add()
        pb.trace_id = bytes.fromhex(link.trace_id)
        pb.span_id = bytes.fromhex(link.span_id)
        encode_attributes(link.attributes, pb.attributes)
    out.status.SetInParent()  # always written, as the SDK's encoder writes it
    out.status.message = span.status.message
    out.status.code = int(span.status.code)


def encode_request(spans: Iterable[Span]) -> ExportTraceServiceRequest:
    """An ``ExportTraceServiceRequest`` holding ``spans``, grouped by resource and scope."""
    groups: dict[Attributes, dict[tuple[str, str], list[Span]]] = {}
    for span in spans:
        groups.setdefault(span.resource, {}).setdefault((span.scope_name, span.scope_version), []).append(
            span
        )
    request = ExportTraceServiceRequest()
    for resource, scopes in groups.items():
        resource_spans = request.resource_spans.add()
        resource_spans.resource.SetInParent()
        encode_attributes(resource, resource_spans.resource.attributes)
        for (name, version), members in scopes.items():
            scope_spans = resource_spans.scope_spans.add()
            scope_spans.scope.SetInParent()
            scope_spans.scope.name = name
            scope_spans.scope.version = version
            for span in members:
                _span(span, scope_spans.spans.add())
    return request


def write_jsonl(spans: Iterable[Span], out: TextIO) -> int:
    """Write ``spans`` as OTLP JSON Lines, one request per trace (first seen first); return the count."""
    traces: dict[str, list[Span]] = {}
    count = 0
    for span in spans:
        traces.setdefault(span.trace_id, []).append(span)
        count += 1
    for members in traces.values():
        out.write(json_line(encode_request(members)))
    return count
