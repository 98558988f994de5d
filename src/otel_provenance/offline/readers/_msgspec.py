"""The fast path of the JSON reader: one OTLP JSON request line decoded by msgspec into typed structs.

With ``msgspec`` installed (the ``fast`` extra), a line is decoded in C into the structs below — every
member typed, every member name known (``forbid_unknown_fields``) — and converted to spans in one
pass. The result is used only when it is provably the one the strict reader (``_json.loads`` and
``otlp_json.spans_from_request``) gives; otherwise :func:`spans` returns None and the caller reads
the line strictly, which words any error. What is proved, and how, all in C over the line's bytes:

- *No member was dropped.* msgspec keeps the last of two equal member names, as orjson does. When
  msgspec's re-encoding of what it decoded is the line itself (what compact writers in the usual
  member order give), nothing was dropped: the encoding never writes a name twice in one object.
  Otherwise, as in ``_json.loads_fast``, the line and the re-encoding hold as many colons — one per
  member, and those inside strings, which neither changes — if and only if none was dropped (a
  colon escaped as ``\\u003a`` is not counted, so such lines are read strictly).
- *Every attribute value has one type.* The re-encoding is canonical: a type member (``stringValue``,
  ``intValue`` …) is written once per value object, so their count equals the count of non-empty
  value objects (``"value":{"``) plus the elements of arrays, counted while converting (and each
  checked by the strict reader's own ``otlp_json._value``, which converts every array).
  ``stringValueStrindex`` (profiling dictionaries only) is not a member here: such lines are read
  strictly, and every type member ends in ``Value":``.

Other differences go to the strict reader too: snake_case member names and the pre-1.0 names
(unknown here), lone surrogates and ``NaN`` tokens (msgspec refuses them), other signals' requests.
Spans with events or links, and attribute values other than strings, integers and booleans, are
converted by the strict reader's own functions from the decoded data (``msgspec.to_builtins``), so
there is one conversion of each such thing.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, Final

from ... import semconv
from ..model import EMPTY_ATTRIBUTES, Attributes, Span, SpanKind, Status, Value, make_span
from . import _convert as c
from . import otlp_json

try:
    import msgspec
    from msgspec import UNSET, Struct, UnsetType
except ImportError:  # the `fast` extra is not installed: every line is read strictly
    msgspec = None

_LOWER_HEX16: Final = re.compile(r"[0-9a-f]{16}").fullmatch
_ZERO16: Final = c.ZERO_SPAN_ID
_KINDS: Final = tuple(SpanKind)
_RUN_ID: Final = semconv.RUN_ID

if msgspec is not None:
    _OPTIONS: Final = dict(omit_defaults=True, forbid_unknown_fields=True, gc=False)

    class _AnyValue(Struct, **_OPTIONS):
        stringValue: str | UnsetType = UNSET
        boolValue: bool | UnsetType = UNSET
        intValue: int | str | UnsetType = UNSET
        doubleValue: float | int | str | UnsetType = UNSET
        arrayValue: _Values | UnsetType | None = UNSET
        kvlistValue: _KeyValues | UnsetType | None = UNSET
        bytesValue: str | UnsetType = UNSET

    class _KeyValue(Struct, **_OPTIONS):
        key: str
        value: _AnyValue | UnsetType | None = UNSET

    class _Values(Struct, **_OPTIONS):
        values: list[_AnyValue] | UnsetType | None = UNSET

    class _KeyValues(Struct, **_OPTIONS):
        values: list[_KeyValue] | UnsetType | None = UNSET

    class _Status(Struct, **_OPTIONS):
        code: int | str | UnsetType = UNSET
        message: str | UnsetType = UNSET

    class _Span(Struct, **_OPTIONS):
        traceId: str | UnsetType = UNSET
        spanId: str | UnsetType = UNSET
        traceState: str | UnsetType = UNSET
        parentSpanId: str | UnsetType = UNSET
        flags: int | UnsetType = UNSET
        name: str | UnsetType = UNSET
        kind: int | str | UnsetType = UNSET
        startTimeUnixNano: int | str | UnsetType = UNSET
        endTimeUnixNano: int | str | UnsetType = UNSET
        attributes: list[_KeyValue] | UnsetType | None = UNSET
        droppedAttributesCount: int | UnsetType = UNSET
        events: list[dict[str, Any]] | UnsetType | None = UNSET
        droppedEventsCount: int | UnsetType = UNSET
        links: list[dict[str, Any]] | UnsetType | None = UNSET
        droppedLinksCount: int | UnsetType = UNSET
        status: _Status | UnsetType | None = UNSET

    class _Scope(Struct, **_OPTIONS):
        name: str | UnsetType = UNSET
        version: str | UnsetType = UNSET
        attributes: list[_KeyValue] | UnsetType | None = UNSET
        droppedAttributesCount: int | UnsetType = UNSET

    class _ScopeSpans(Struct, **_OPTIONS):
        scope: _Scope | UnsetType | None = UNSET
        spans: list[_Span] | UnsetType | None = UNSET
        schemaUrl: str | UnsetType = UNSET

    class _Resource(Struct, **_OPTIONS):
        attributes: list[_KeyValue] | UnsetType | None = UNSET
        droppedAttributesCount: int | UnsetType = UNSET
        entityRefs: list[dict[str, Any]] | UnsetType | None = UNSET

    class _ResourceSpans(Struct, **_OPTIONS):
        resource: _Resource | UnsetType | None = UNSET
        scopeSpans: list[_ScopeSpans] | UnsetType | None = UNSET
        schemaUrl: str | UnsetType = UNSET

    class _Request(Struct, **_OPTIONS):
        resourceSpans: list[_ResourceSpans] | UnsetType | None = UNSET

    _DECODE: Final = msgspec.json.Decoder(_Request).decode
    _ENCODE: Final = msgspec.json.Encoder().encode

# Anything unexpected — msgspec refusing the line (its errors are ValueErrors only from msgspec 0.19 on),
# invalid UTF-8, a check of the shared conversion failing — leaves the line to the strict reader.
_NOT_OURS: Final = (
    *((msgspec.MsgspecError,) if msgspec is not None else ()),
    ValueError,
    TypeError,
    KeyError,
    IndexError,
    AttributeError,
    OverflowError,
    RecursionError,
)


class _Unvouched(Exception):
    """This path cannot show its result equal to the strict reader's: the line is read strictly."""


def spans(raw: bytes, keep: Callable[[str], bool] | None = None) -> list[Span] | None:
    """The spans of one OTLP JSON request line, as the strict reader gives them; None when msgspec
    is not installed or the line needs the strict reader (see the module docstring)."""
    if msgspec is None:
        return None
    unknown = c.unknown_values
    try:
        request = _DECODE(raw)
        encoded = _ENCODE(request)
        if not _is_line_of(encoded, raw) and (b"\\u003" in raw or encoded.count(b":") != raw.count(b":")):
            return None  # a member was dropped: a duplicate name (the strict reader words the error)
        converted = _Converter()
        out = converted.request(request, keep)
        if encoded.count(b'Value":') != encoded.count(b'"value":{"') + converted.elements:
            raise _Unvouched  # a value object with two type members
    except (_Unvouched, c._Bad, *_NOT_OURS):
        c.unknown_values = unknown  # counted again when read strictly
        return None
    return out


def _is_line_of(encoded: bytes, raw: bytes) -> bool:
    """``raw`` is ``encoded``, or ``encoded`` and a newline (file lines come with theirs): compared in
    place, no copy of a line made."""
    extra = len(raw) - len(encoded)
    return (extra == 0 or (extra == 1 and raw[-1] == 0x0A)) and raw.startswith(encoded)


_last_resource: tuple[Any, Attributes] = (None, EMPTY_ATTRIBUTES)


class _Converter:
    """One line's structs → spans; ``elements`` counts the array elements it met (see above)."""

    __slots__ = ("elements", "last_trace")

    def __init__(self) -> None:
        self.elements = 0
        self.last_trace: tuple[object, str] = (None, "")

    def request(self, request: Any, keep: Callable[[str], bool] | None) -> list[Span]:
        resource_spans = request.resourceSpans
        if resource_spans.__class__ is not list:
            raise _Unvouched  # {} or another signal's request: the file reader's business
        out: list[Span] = []
        for rs in resource_spans:
            resource = rs.resource
            res_attrs = self._resource(resource.attributes) if resource else EMPTY_ATTRIBUTES
            scope_spans = rs.scopeSpans
            if scope_spans is UNSET or scope_spans is None:
                raise _Unvouched
            for ss in scope_spans:
                scope = ss.scope
                name = version = ""
                if scope:  # its attributes are not read (nor checked) by the strict reader either
                    name = "" if scope.name is UNSET else scope.name
                    version = "" if scope.version is UNSET else scope.version
                    for kv in scope.attributes or ():  # their values count in the proof of one type each
                        if kv.value and (kv.value.arrayValue or kv.value.kvlistValue):
                            raise _Unvouched  # elements no conversion here checks one by one
                if ss.spans is None:
                    raise _Unvouched  # "spans": null is malformed: the strict reader says so
                for sp in ss.spans or ():
                    if keep is None or keep(self._run_key(sp)):
                        out.append(self._span(sp, res_attrs, name, version))
        return out

    def _resource(self, kvs: Any) -> Attributes:
        """Resource attributes repeat line after line: reuse the last conversion of an equal list of
        strings (``otlp_json._resource_attributes`` does the same for the strict reader)."""
        global _last_resource
        raw, converted = _last_resource
        if raw is not None and kvs == raw:
            return converted
        converted = self._attributes(kvs)
        if kvs.__class__ is list and all(v.__class__ is str for v in converted.values()):
            _last_resource = (kvs, converted)
        return converted

    @staticmethod
    def _run_key(sp: Any) -> str:
        """``Span.run_id`` of a raw span (``otlp_json._raw_run_key``), without converting it."""
        for kv in sp.attributes or ():
            if kv.key == _RUN_ID:
                value = kv.value
                run_id = value.stringValue if value else UNSET
                if run_id.__class__ is str and run_id:
                    return run_id
                break
        return otlp_json._trace_id(sp.traceId)

    def _span(self, sp: Any, resource: Attributes, scope_name: str, scope_version: str) -> Span:
        if sp.events or sp.links:  # the strict reader's own conversion, from the decoded data
            return otlp_json._span(msgspec.to_builtins(sp), resource, scope_name, scope_version)
        status = sp.status
        if status:
            code, message = status.code, status.message
            message = "" if message is UNSET else message
            code = c.status_code(0 if code is UNSET else code)
            status = Status(code, message) if (code or message) else c.UNSET_STATUS
        else:
            status = c.UNSET_STATUS
        kind, start, end = sp.kind, sp.startTimeUnixNano, sp.endTimeUnixNano
        span_id, parent = sp.spanId, sp.parentSpanId
        if not (span_id.__class__ is str and _LOWER_HEX16(span_id) and span_id != _ZERO16):
            span_id = c.span_id_from_text(None if span_id is UNSET else span_id)
        if parent is UNSET:
            parent = None
        elif not (parent.__class__ is str and _LOWER_HEX16(parent) and parent != _ZERO16):
            parent = c.parent_id_from_text(parent)
        name, trace_id = sp.name, sp.traceId
        if trace_id.__class__ is not str or trace_id != self.last_trace[0]:  # spans of a trace sit together
            self.last_trace = (trace_id, otlp_json._trace_id(None if trace_id is UNSET else trace_id))
        return make_span(  # positional: this runs once per span
            self.last_trace[1],
            span_id,
            parent,
            "" if name is UNSET else name,
            _KINDS[kind]
            if kind.__class__ is int and 0 <= kind < 6
            else c.span_kind(0 if kind is UNSET else kind),
            int(start)
            if start.__class__ is str and start.isascii() and start.isdigit() and len(start) < 20
            else _time(start, "startTimeUnixNano"),
            int(end)
            if end.__class__ is str and end.isascii() and end.isdigit() and len(end) < 20
            else _time(end, "endTimeUnixNano"),
            status,
            self._attributes(sp.attributes),
            (),
            (),
            resource,
            scope_name,
            scope_version,
        )

    def _attributes(self, kvs: Any) -> Attributes:
        if not kvs:
            return EMPTY_ATTRIBUTES
        data: dict[str, Value] = {}
        for kv in kvs:
            value = kv.value
            if not value:
                continue  # absent, null or {}: an empty AnyValue carries nothing
            raw = value.stringValue
            if raw is not UNSET:
                data[kv.key] = raw
                continue
            raw = value.intValue
            if raw.__class__ is str and 0 < len(raw) < 19 and raw.isdigit() and raw.isascii():
                data[kv.key] = int(raw)
                continue
            raw = value.boolValue
            if raw is not UNSET:
                data[kv.key] = raw
                continue
            plain = msgspec.to_builtins(value)
            if not plain:
                continue  # {}: an empty AnyValue carries nothing
            if value.arrayValue or value.kvlistValue:
                self.elements += _elements(value)
            converted = otlp_json._value(plain, kv.key)
            if converted is not otlp_json.UNKNOWN:
                data[kv.key] = converted
        if len(data) != len(kvs) and len({kv.key for kv in kvs}) != len(kvs):
            raise _Unvouched  # a duplicate attribute key (an empty value may also explain the count)
        return Attributes.adopt(data)


def _time(value: Any, field: str) -> int:
    """A time that is not a short decimal string (those are read inline)."""
    return c.u64(0 if value is UNSET else value, field)


def _elements(value: Any) -> int:
    """The array elements inside one value, at any depth: each holds one type member of its own."""
    count = 0
    stack = [value]
    while stack:
        node = stack.pop()
        if node.arrayValue:
            items = node.arrayValue.values or ()
            count += len(items)
            stack.extend(items)
        if node.kvlistValue:
            stack.extend(kv.value for kv in node.kvlistValue.values or () if kv.value)
    return count
