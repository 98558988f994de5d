"""Encode spans as OTLP JSON Lines: one ``ExportTraceServiceRequest`` JSON object per line.

The same shape as the official OTLP JSON file exporter and the Collector's file exporter: lowerCamelCase
keys, hex trace/span ids, 64-bit integers as decimal strings, enums as integers, attribute values as
``AnyValue`` objects. Pure Python (no OTel SDK). One line per trace; within it, spans are grouped by
resource and then by instrumentation scope, in first-seen order, so equal input gives equal bytes.
Non-ASCII is written as JSON escapes, so no character inside a line (U+0085, U+2028) can pass for a
line break in a reader that splits on every Unicode line boundary.
"""

from __future__ import annotations

import base64
import json
import math
from collections.abc import Iterable, Mapping
from decimal import Decimal
from typing import Any, TextIO

from .model import Attributes, Event, Link, Span, Value


def encode_value(value: Value) -> dict[str, Any]:
    """One attribute value as an OTLP ``AnyValue`` JSON object."""
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, int):
        return {"intValue": str(value)}
    if isinstance(value, Decimal):
        if value == value.to_integral_value():
            return {"intValue": str(int(value))}
        return {"doubleValue": float(value)}
    if isinstance(value, float):
        if math.isnan(value):
            return {"doubleValue": "NaN"}
        if math.isinf(value):
            return {"doubleValue": "Infinity" if value > 0 else "-Infinity"}
        return {"doubleValue": value}
    if isinstance(value, str):
        return {"stringValue": value}
    if isinstance(value, bytes):
        return {"bytesValue": base64.b64encode(value).decode("ascii")}
    if isinstance(value, tuple):
        return {"arrayValue": {"values": [encode_value(v) for v in value]}}
    if isinstance(value, Mapping):
        return {"kvlistValue": {"values": encode_attributes(value)}}
    raise TypeError(f"not an attribute value type: {type(value).__name__}")


def encode_attributes(attributes: Mapping[str, Value]) -> list[dict[str, Any]]:
    return [{"key": k, "value": encode_value(attributes[k])} for k in sorted(attributes)]


def _event(event: Event) -> dict[str, Any]:
    out: dict[str, Any] = {"timeUnixNano": str(event.time_ns), "name": event.name}
    if event.attributes:
        out["attributes"] = encode_attributes(event.attributes)
    return out


def _link(link: Link) -> dict[str, Any]:
    out: dict[str, Any] = {"traceId": link.trace_id, "spanId": link.span_id}
    if link.attributes:
        out["attributes"] = encode_attributes(link.attributes)
    return out


def encode_span(span: Span) -> dict[str, Any]:
    out: dict[str, Any] = {"traceId": span.trace_id, "spanId": span.span_id}
    if span.parent_span_id:
        out["parentSpanId"] = span.parent_span_id
    out["name"] = span.name
    if span.kind:
        out["kind"] = int(span.kind)
    out["startTimeUnixNano"] = str(span.start_ns)
    out["endTimeUnixNano"] = str(span.end_ns)
    if span.attributes:
        out["attributes"] = encode_attributes(span.attributes)
    if span.events:
        out["events"] = [_event(e) for e in span.events]
    if span.links:
        out["links"] = [_link(link) for link in span.links]
    status: dict[str, Any] = {}
    if span.status.message:
        status["message"] = span.status.message
    if span.status.code:
        status["code"] = int(span.status.code)
    out["status"] = status
    return out


def encode_request(spans: Iterable[Span]) -> dict[str, Any]:
    """An ``ExportTraceServiceRequest`` holding ``spans``, grouped by resource and scope."""
    groups: dict[Attributes, dict[tuple[str, str], list[Span]]] = {}
    for span in spans:
        groups.setdefault(span.resource, {}).setdefault((span.scope_name, span.scope_version), []).append(
            span
        )
    resource_spans = []
    for resource, scopes in groups.items():
        scope_spans = []
        for (name, version), members in scopes.items():
            scope: dict[str, Any] = {}
            if name:
                scope["name"] = name
            if version:
                scope["version"] = version
            scope_spans.append({"scope": scope, "spans": [encode_span(s) for s in members]})
        resource_spans.append(
            {"resource": {"attributes": encode_attributes(resource)}, "scopeSpans": scope_spans}
        )
    return {"resourceSpans": resource_spans}


def write_jsonl(spans: Iterable[Span], out: TextIO) -> int:
    """Write ``spans`` as OTLP JSON Lines, one request per trace (first seen first); return the count."""
    traces: dict[str, list[Span]] = {}
    count = 0
    for span in spans:
        traces.setdefault(span.trace_id, []).append(span)
        count += 1
    for members in traces.values():
        out.write(json.dumps(encode_request(members), separators=(",", ":"), allow_nan=False))
        out.write("\n")
    return count
