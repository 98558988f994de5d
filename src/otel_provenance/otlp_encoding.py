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

The fields present come from protobuf's ``ListFields`` (in C), each message type's layout is worked
out once. ``google.protobuf.json_format`` is not used because it orders fields by number (``flags``, field 16
of ``Span``, would move to the end) and writes ids as base64.
"""

from __future__ import annotations

import base64
import json
import math
from collections.abc import Callable
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


def _base64(value: bytes) -> str:
    return base64.b64encode(value).decode("ascii")


def _double(value: float) -> float | str:
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    return value


def _converter(field: FieldDescriptor) -> Callable[[Any], Any] | None:
    """How one value of ``field`` is written; None: as it is (strings, booleans, 32-bit integers)."""
    kind = field.type
    if kind == FieldDescriptor.TYPE_MESSAGE:
        return message_to_dict
    if kind == FieldDescriptor.TYPE_BYTES:
        return bytes.hex if field.name in _HEX_ID_FIELDS else _base64
    if kind in _INT64_TYPES:
        return str
    if kind in _FLOAT_TYPES:
        return _double
    if kind == FieldDescriptor.TYPE_ENUM:
        return int
    return None


def _is_repeated(field: FieldDescriptor) -> bool:
    is_repeated = getattr(field, "is_repeated", None)  # protobuf >= 6; ``label`` is deprecated there
    if is_repeated is not None:
        return bool(is_repeated)
    return field.label == FieldDescriptor.LABEL_REPEATED


class _Layout:
    """What is known of a message type before any message of it is written: each field's JSON name,
    whether it repeats and how a value is written, and the declaration order where it differs from
    the field numbers' (``ListFields`` gives the fields present in number order)."""

    __slots__ = ("fields", "position")

    def __init__(self, descriptor: Any) -> None:
        self.fields = {f.number: (f.json_name, _is_repeated(f), _converter(f)) for f in descriptor.fields}
        declared = [f.number for f in descriptor.fields]
        self.position = None if declared == sorted(declared) else {n: i for i, n in enumerate(declared)}


_LAYOUTS: dict[Any, _Layout] = {}


def message_to_dict(message: Message) -> dict[str, Any]:
    """One OTLP protobuf message as its OTLP/JSON object (see the module docstring for the rules).

    ``ListFields`` (in C) names the fields present — repeated ones when non-empty, message and
    ``oneof`` fields when set, plain scalars when not the default — the rule above; each message
    type's layout is worked out once (:class:`_Layout`)."""
    descriptor = message.DESCRIPTOR
    layout = _LAYOUTS.get(descriptor)
    if layout is None:
        layout = _LAYOUTS[descriptor] = _Layout(descriptor)
    present = message.ListFields()
    position = layout.position
    if position is not None:
        present.sort(key=lambda item: position[item[0].number])
    fields = layout.fields
    out: dict[str, Any] = {}
    for field, value in present:
        name, repeated, convert = fields[field.number]
        if repeated:
            out[name] = list(value) if convert is None else [convert(item) for item in value]
        else:
            out[name] = value if convert is None else convert(value)
    return out


def json_line(request: Message) -> str:
    """The JSON Lines line for one export request: compact JSON and ``\\n``."""
    return json.dumps(message_to_dict(request), separators=(",", ":")) + "\n"


__all__ = ["json_line", "message_to_dict"]
