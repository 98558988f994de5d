"""Checks shared by the JSON and protobuf readers: ids, enums, 64-bit integers.

Every problem raises ``_Bad(problem)``; the format reader turns it into a ``TraceReadError`` that
names the file and line. Problems name fields and types, never an attribute value.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Callable, Mapping
from typing import Any, Final, TypeVar

from ..model import SpanKind, Status, StatusCode

_HEX32: Final = re.compile(r"[0-9a-fA-F]{32}")
_HEX16: Final = re.compile(r"[0-9a-fA-F]{16}")
_B64_16: Final = re.compile(r"[A-Za-z0-9+/_-]{22}==")
_B64_8: Final = re.compile(r"[A-Za-z0-9+/_-]{11}=")
_DECIMAL: Final = re.compile(r"-?[0-9]{1,20}")

U64_MAX: Final = 2**64 - 1
I64_MIN: Final = -(2**63)
I64_MAX: Final = 2**63 - 1
ZERO_TRACE_ID: Final = "0" * 32
ZERO_SPAN_ID: Final = "0" * 16

UNSET_STATUS: Final = Status()
_KINDS: Final = tuple(SpanKind)
_STATUS_CODES: Final = tuple(StatusCode)
_KIND_NAMES: Final = {f"SPAN_KIND_{k.name}": k for k in SpanKind}
_STATUS_NAMES: Final = {f"STATUS_CODE_{c.name}": c for c in StatusCode}
_E = TypeVar("_E", SpanKind, StatusCode)


class _Bad(Exception):
    """A problem inside one record; the caller adds file and line."""


class _Unknown:
    """The value of an attribute the readers cannot interpret but must not fail on: the attribute is
    left out and counted (``unknown_values``), e.g. ``stringValueStrindex``, which ``common.proto``
    tells receivers other than profiling ones to treat as a non-fatal unknown value."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "UNKNOWN_VALUE"


UNKNOWN_VALUE: Final = _Unknown()
unknown_values = 0
"""Attributes left out as unknown so far in this process; readers report the difference per read."""


def kept(keep: Callable[[str], bool], run_key_of: Callable[[Any], str], raw: Any) -> bool:
    """``keep(run_key_of(raw))`` for a shard's reader; True when the raw span's run key cannot be
    told (its trace id is no id): then the span is converted, and its own first error is the one a
    single process reports — a shard must not word the same bad line otherwise."""
    try:
        key = run_key_of(raw)
    except _Bad:
        return True
    return keep(key)


def unknown_value() -> _Unknown:
    global unknown_values
    unknown_values += 1
    return UNKNOWN_VALUE


def _b64_to_hex(text: str) -> str:
    try:
        return base64.b64decode(text.replace("-", "+").replace("_", "/"), validate=True).hex()
    except (binascii.Error, ValueError) as exc:
        raise _Bad("id is neither hex nor base64") from exc


def _id_from_text(value: object, field: str, hex_re: re.Pattern, b64_re: re.Pattern, digits: int) -> str:
    if type(value) is not str:
        raise _Bad(f"{field} is missing or not a string")
    if hex_re.fullmatch(value):
        out = value.lower()
    elif b64_re.fullmatch(value):
        out = _b64_to_hex(value)
    else:
        raise _Bad(f"{field} is not a {digits}-digit hex id")
    if out == "0" * digits:
        raise _Bad(f"{field} is all zeros (invalid)")
    return out


def trace_id_from_text(value: object, field: str = "traceId") -> str:
    """A 32-hex-digit trace id (base64 of 16 bytes, as in proto3 JSON, is also accepted)."""
    return _id_from_text(value, field, _HEX32, _B64_16, 32)


def span_id_from_text(value: object, field: str = "spanId") -> str:
    """A 16-hex-digit span id (base64 of 8 bytes is also accepted)."""
    return _id_from_text(value, field, _HEX16, _B64_8, 16)


def parent_id_from_text(value: object) -> str | None:
    """``None`` for a root: the field absent or empty. All zeros is refused like any other all-zero
    id: OTLP says a root's ``parent_span_id`` *must be empty* and an all-zero span id is invalid, so
    reading it as "no parent" would turn a span whose parent was lost into a clean root."""
    if value is None or value == "":
        return None
    return span_id_from_text(value, "parentSpanId")


def trace_id_from_bytes(value: bytes, field: str = "trace_id") -> str:
    return _id_from_bytes(value, field, 16, ZERO_TRACE_ID)


def span_id_from_bytes(value: bytes, field: str = "span_id") -> str:
    return _id_from_bytes(value, field, 8, ZERO_SPAN_ID)


def _id_from_bytes(value: bytes, field: str, size: int, zero: str) -> str:
    if len(value) != size:
        raise _Bad(f"{field} has {len(value)} bytes, expected {size}")
    hex_id = value.hex()
    if hex_id == zero:
        raise _Bad(f"{field} is all zeros (invalid)")
    return hex_id


def parent_id_from_bytes(value: bytes) -> str | None:
    """``None`` for a root (empty); all zeros is refused, as in ``parent_id_from_text``."""
    if not value:
        return None
    return span_id_from_bytes(value, "parent_span_id")


def u64(value: object, field: str) -> int:
    """An unsigned 64-bit integer given as a JSON number or a decimal string (proto3 JSON)."""
    return _integer(value, field, 0, U64_MAX, "unsigned")


def i64(value: object, field: str) -> int:
    """A signed 64-bit integer given as a JSON number or a decimal string (OTLP ``intValue``)."""
    return _integer(value, field, I64_MIN, I64_MAX, "signed")


def _integer(value: object, field: str, low: int, high: int, kind: str) -> int:
    if type(value) is int:
        n = value
    elif type(value) is str and _DECIMAL.fullmatch(value):
        n = int(value)
    else:
        raise _Bad(f"{field} is not an integer")
    if not low <= n <= high:
        raise _Bad(f"{field} is out of the {kind} 64-bit range")
    return n


def span_kind(value: object) -> SpanKind:
    return _enum_member(value, _KINDS, _KIND_NAMES, "kind", "span kind")


def status_code(value: object) -> StatusCode:
    return _enum_member(value, _STATUS_CODES, _STATUS_NAMES, "status code", "status code")


def _enum_member(
    value: object, by_number: tuple[_E, ...], by_name: Mapping[str, _E], field: str, meaning: str
) -> _E:
    """An OTLP enum's member from its number or its proto name (``SPAN_KIND_SERVER``)."""
    if type(value) is int:
        if 0 <= value < len(by_number):
            return by_number[value]
        raise _Bad(f"{field} {value} is out of range 0..{len(by_number) - 1}")
    if type(value) is str and value in by_name:
        return by_name[value]
    raise _Bad(f"{field} is not a known {meaning}")


def b64_bytes(value: object, field: str) -> bytes:
    if type(value) is not str:
        raise _Bad(f"{field} is not a base64 string")
    try:
        return base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise _Bad(f"{field} is not valid base64") from exc
