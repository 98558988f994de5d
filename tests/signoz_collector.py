"""How SigNoz stores and renders values, for the test double: the collector's ingest, the server's numbers.

Sources (read line by line; cite these when the double changes):

- Ingest: ``SigNoz/signoz-otel-collector`` v0.144.5, ``exporter/clickhousetracesexporter/
  clickhouse_exporter_v3.go`` (``attributesData.add``, ``newStructuredSpanV3``) and
  ``utils/flatten/flatten.go`` (``FlattenJSON``); ``utils/utils.go`` (``IsValidFloat``).
  Span attribute doubles that are NaN/±Inf are dropped ("NaN value in tag map, skipping key"), also
  inside maps; maps are flattened to dotted keys, and arrays *inside* maps to ``key.0``, ``key.1``…;
  a top-level array is stored as JSON text (pdata ``Value.AsString``); every resource value is a
  string (``AsString`` at the top level, ``fmt.Sprintf("%v")`` for flattened map leaves).
- Rendering: ``SigNoz/signoz`` v0.129.0, ``pkg/types/querybuildertypes/querybuildertypesv5/resp.go``
  (``sanitizeValue``, ``roundToNonZeroDecimals``): every float64 in a raw row is rounded with Go's
  ``math.Round`` (half away from zero) to 3 decimals (|v| ≥ 1) or 3 significant digits (|v| < 1);
  NaN/±Inf become the strings ``"NaN"``, ``"Inf"``, ``"-Inf"``.
"""

from __future__ import annotations

import base64
import json
import math
from decimal import Decimal
from typing import Any

from opentelemetry.proto.common.v1.common_pb2 import AnyValue


def go_round(value: float) -> float:
    """Go's ``math.Round``: half away from zero, on the float exactly as given."""
    whole = math.trunc(value)
    if abs(value - whole) >= 0.5:
        whole += math.copysign(1.0, value)
    return float(whole)


def round_like_signoz(value: float) -> Any:
    """``sanitizeValue`` of one float64: NaN/±Inf as strings, else rounded; whole numbers as JSON ints."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Inf" if value > 0 else "-Inf"
    if value == 0:
        return 0
    if abs(value) >= 1:
        rounded = go_round(value * 1000.0) / 1000.0
    else:
        order = math.floor(math.log10(abs(value)))
        scale = 10.0 ** (-order + 2)
        rounded = go_round(value * scale) / scale
    return int(rounded) if rounded.is_integer() else rounded


def _digits(value: float) -> tuple[str, int]:
    """Shortest round-trip digits and the decimal exponent of the first digit (``1234.5`` → ``12345``, 3)."""
    _sign, digits, exponent = Decimal(repr(abs(value))).normalize().as_tuple()
    text = "".join(map(str, digits))
    return text, len(text) - 1 + int(exponent)


def _e_format(value: float, min_exp_digits: int) -> str:
    digits, exp = _digits(value)
    mantissa = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
    sign = "-" if value < 0 else ""
    return f"{sign}{mantissa}e{'-' if exp < 0 else '+'}{abs(exp):0{min_exp_digits}d}"


def _f_format(value: float) -> str:
    text = format(Decimal(repr(value)), "f")
    return text.rstrip("0").rstrip(".") if "." in text else text


def es6_number(value: float) -> str:
    """pdata's ``float64AsString`` (as Go's encoding/json): ``'f'`` unless |v| < 1e-6 or ≥ 1e21."""
    if not math.isfinite(value):
        go = "NaN" if math.isnan(value) else ("+Inf" if value > 0 else "-Inf")
        return f"json: unsupported value: {go}"
    if value == 0:
        return "0"
    if abs(value) < 1e-6 or abs(value) >= 1e21:
        return _e_format(value, 1)
    return _f_format(value)


def go_v(value: Any) -> str:
    """Go's ``fmt.Sprintf("%v", x)`` for the leaf types ``FlattenJSON`` produces."""
    if value is None:
        return "<nil>"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        if math.isnan(value):
            return "NaN"
        if math.isinf(value):
            return "+Inf" if value > 0 else "-Inf"
        if value == 0:
            return "0"
        _, exp = _digits(value)
        return _e_format(value, 2) if exp < -4 or exp >= 6 else _f_format(value)  # strconv 'g', -1
    if isinstance(value, bytes):
        return "[" + " ".join(str(b) for b in value) + "]"
    return str(value)


def go_json(value: Any) -> str | None:
    """Go's ``json.Marshal`` of a pdata raw value; None where Go fails (a NaN/±Inf inside)."""

    def encode(item: Any) -> str:
        if item is None:
            return "null"
        if isinstance(item, bool):
            return "true" if item else "false"
        if isinstance(item, int):
            return str(item)
        if isinstance(item, float):
            if not math.isfinite(item):
                raise ValueError("unsupported value")
            return es6_number(item)
        if isinstance(item, bytes):
            return json.dumps(base64.b64encode(item).decode())
        if isinstance(item, list):
            return "[" + ",".join(encode(i) for i in item) + "]"
        if isinstance(item, dict):
            return (
                "{"
                + ",".join(f"{json.dumps(k, ensure_ascii=False)}:{encode(item[k])}" for k in sorted(item))
                + "}"
            )
        return json.dumps(str(item), ensure_ascii=False)

    try:
        return encode(value)
    except ValueError:
        return None


def raw(value: AnyValue) -> Any:
    """pdata ``Value.AsRaw``: the plain Go value (ints stay ints, bytes stay bytes)."""
    kind = value.WhichOneof("value")
    if kind == "array_value":
        return [raw(v) for v in value.array_value.values]
    if kind == "kvlist_value":
        return {kv.key: raw(kv.value) for kv in value.kvlist_value.values}
    return getattr(value, kind) if kind else None


def as_string(value: AnyValue) -> str:
    """pdata ``Value.AsString``."""
    kind = value.WhichOneof("value")
    if kind == "string_value":
        return value.string_value
    if kind == "bool_value":
        return "true" if value.bool_value else "false"
    if kind == "int_value":
        return str(value.int_value)
    if kind == "double_value":
        return es6_number(value.double_value)
    if kind == "bytes_value":
        return base64.b64encode(value.bytes_value).decode()
    if kind in ("array_value", "kvlist_value"):
        return go_json(raw(value)) or ""
    return ""


def flatten_json(data: dict[str, Any], prefix: str) -> dict[str, Any]:
    """``FlattenJSON``: nested maps to dotted keys, arrays to ``key.N``, ints to float64, others to %v."""
    out: dict[str, Any] = {}
    for key, value in data.items():
        full = f"{prefix}.{key}" if prefix else key
        if isinstance(value, dict):
            out.update(flatten_json(value, full))
        elif isinstance(value, list):
            for i, item in enumerate(value):
                out.update(flatten_json({str(i): item}, full))
        elif isinstance(value, bool | float):
            out[full] = value
        elif isinstance(value, int):
            out[full] = float(value)
        else:
            out[full] = go_v(value)
    return out


def span_attribute(key: str, value: AnyValue) -> list[tuple[str, str, Any]]:
    """``attributesData.add``: ``(key, map, value)`` entries, map one of string / number / bool."""
    kind = value.WhichOneof("value")
    if kind == "double_value":
        return [(key, "number", value.double_value)] if math.isfinite(value.double_value) else []
    if kind == "int_value":
        return [(key, "number", float(value.int_value))]  # one Float64 map: ints > 2^53 lose precision
    if kind == "bool_value":
        return [(key, "bool", value.bool_value)]
    if kind == "kvlist_value":
        entries: list[tuple[str, str, Any]] = []
        for leaf, item in flatten_json(raw(value), key).items():
            if isinstance(item, bool):
                entries.append((leaf, "bool", item))
            elif isinstance(item, float):
                if math.isfinite(item):
                    entries.append((leaf, "number", item))
            else:
                entries.append((leaf, "string", item))
        return entries
    return [(key, "string", as_string(value))]


def resource_attribute(key: str, value: AnyValue) -> list[tuple[str, str]]:
    """Resource values in ``newStructuredSpanV3``: all strings, maps flattened with ``%v`` leaves."""
    if value.WhichOneof("value") == "kvlist_value":
        return [(leaf, go_v(item)) for leaf, item in flatten_json(raw(value), key).items()]
    return [(key, as_string(value))]
