"""The one OTLP/JSON encoder: OTLP protobuf messages rendered as OTLP/JSON, for both halves.

The online half's file exporter renders the ``ExportTraceServiceRequest`` / ``ExportLogsServiceRequest``
messages that ``opentelemetry-exporter-otlp-proto-common`` (installed with every OTLP exporter) builds
from SDK spans and log records; the offline half's writer (``fetch``) builds the same messages from its
span model. Both are rendered here, the way the official ``opentelemetry-exporter-otlp-json-file`` and
the Collector's file exporter do, so neither needs that package nor its exact SDK pin:

- fields in the ``.proto`` declaration order, lowerCamelCase names (the fields' JSON names);
- a field is written when it is present: repeated fields when non-empty, message and ``oneof``
  fields when set, plain scalars when not the default (``0``, ``""``, ``false``);
- ``traceId`` / ``spanId`` / ``parentSpanId`` as lowercase hex, other bytes as base64;
- 64-bit integers as decimal strings, 32-bit integers and enums as numbers, non-finite doubles as
  ``"NaN"`` / ``"Infinity"`` / ``"-Infinity"``;
- one compact ``json.dumps`` line (ASCII escapes), as the official exporter writes it.

``google.protobuf.json_format`` is not used because it orders fields by number (``flags``, field 16
of ``Span``, would move to the end) and writes ids as base64.
"""

from __future__ import annotations

import base64
import json
import math
from typing import Any, Final

from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message

_HEX_ID_FIELDS: Final = frozenset({"trace_id", "span_id", "parent_span_id"})
_INT64_TYPES: Final = frozenset(
    {
        FieldDescriptor.TYPE_INT64,
        FieldDescriptor.TYPE_UINT64,
        FieldDescriptor.TYPE_FIXED64,
        FieldDescriptor.TYPE_SFIXED64,
        FieldDescriptor.TYPE_SINT64,
    }
)
_FLOAT_TYPES: Final = frozenset({FieldDescriptor.TYPE_DOUBLE, FieldDescriptor.TYPE_FLOAT})


def _is_repeated(field: FieldDescriptor) -> bool:
    is_repeated = getattr(field, "is_repeated", None)  # protobuf >= 6; ``label`` is deprecated there
    if is_repeated is not None:
        return bool(is_repeated)
    return field.label == FieldDescriptor.LABEL_REPEATED


def _has_presence(field: FieldDescriptor) -> bool:
    has_presence = getattr(field, "has_presence", None)
    if has_presence is not None:
        return bool(has_presence)
    return field.type == FieldDescriptor.TYPE_MESSAGE or field.containing_oneof is not None


def _scalar(field: FieldDescriptor, value: Any) -> Any:
    kind = field.type
    if kind == FieldDescriptor.TYPE_BYTES:
        if field.name in _HEX_ID_FIELDS:
            return value.hex()
        return base64.b64encode(value).decode("ascii")
    if kind in _INT64_TYPES:
        return str(value)
    if kind in _FLOAT_TYPES:
        if math.isnan(value):
            return "NaN"
        if math.isinf(value):
            return "Infinity" if value > 0 else "-Infinity"
        return value
    if kind == FieldDescriptor.TYPE_ENUM:
        return int(value)
    return value


def _value(field: FieldDescriptor, value: Any) -> Any:
    return message_to_dict(value) if field.type == FieldDescriptor.TYPE_MESSAGE else _scalar(field, value)


def message_to_dict(message: Message) -> dict[str, Any]:
    """One OTLP protobuf message as its OTLP/JSON object (see the module docstring for the rules)."""
    out: dict[str, Any] = {}
    for field in message.DESCRIPTOR.fields:  # declaration order, as the official encoder writes
        value = getattr(message, field.name)
        if _is_repeated(field):
            if len(value):
                out[field.json_name] = [_value(field, item) for item in value]
        elif _has_presence(field):
            if message.HasField(field.name):
                out[field.json_name] = _value(field, value)
        elif value:
            out[field.json_name] = _scalar(field, value)
    return out


def json_line(request: Message) -> str:
    """The JSON Lines line for one export request: compact JSON and ``\\n``."""
    return json.dumps(message_to_dict(request), separators=(",", ":")) + "\n"


__all__ = ["json_line", "message_to_dict"]
