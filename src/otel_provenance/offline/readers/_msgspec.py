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
  value objects plus the elements of arrays, counted while converting (and each element checked by
  the strict reader's own ``otlp_json._value``, which converts every array that is not one of
  strings). The values are counted while converting too — one per key of each converted mapping,
  the spans other shards read included — unless some sit in plain dicts (events, links, entity
  refs), scope attributes or key-value lists: then the non-empty value objects are counted in the
  re-encoding (``"value":{"``). ``stringValueStrindex`` (profiling dictionaries only) is not a member
  here: such lines are read strictly, and every type member ends in ``Value":``.

Other differences go to the strict reader too: snake_case member names and the pre-1.0 names
(unknown here), lone surrogates and ``NaN`` tokens (msgspec refuses them), other signals' requests.
Spans with events or links, and attribute values other than strings, integers and booleans, are
converted by the strict reader's own functions from the decoded data (``msgspec.to_builtins``), so
there is one conversion of each such thing. A span whose attributes (strings, integers and booleans)
repeat its trace's last span's, as a run's repeated model calls do, shares that span's conversion.
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
_KIND_OF: Final[dict[object, SpanKind]] = dict(enumerate(_KINDS))  # a kind given as its number
_SMALL_INTS: Final = {str(n): n for n in range(1024)}  # intValue "0", "1" ... as the strict reader reads them
_ABSENT: Final = object()  # an attribute value that leaves the attribute out
_SHARE_BUDGET: Final = 32  # misses beyond hits before a scope's spans stop sharing attributes (_spans)

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
    read = decoded(raw, keep)
    return None if read is None else read[0]


def decoded(raw: bytes, keep: Callable[[str], bool] | None = None) -> tuple[list[Span], bool] | None:
    """:func:`spans`, and whether the line held only typed members: no event, link, key-value list,
    scope attribute or entity ref — and, decoded here, no member the structs do not know (another
    signal's, an unknown one). Then an attribute key can sit only in a span's or a resource's
    attributes, as the run index's byte search assumes (``TraceFile.run_spans`` checks the others)."""
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
        values = encoded.count(b'"value":{"') if converted.untyped else converted.values
        if encoded.count(b'Value":') != values + converted.elements:
            raise _Unvouched  # a value object with two type members
    except (_Unvouched, c._Bad, *_NOT_OURS):
        c.unknown_values = unknown  # counted again when read strictly
        return None
    return out, not converted.untyped


def _is_line_of(encoded: bytes, raw: bytes) -> bool:
    """``raw`` is ``encoded``, or ``encoded`` and a newline (file lines come with theirs): compared in
    place, no copy of a line made."""
    extra = len(raw) - len(encoded)
    return (extra == 0 or (extra == 1 and raw[-1] == 0x0A)) and raw.startswith(encoded)


_last_resource: tuple[Any, Attributes] = (None, EMPTY_ATTRIBUTES)


class _Converter:
    """One line's structs → spans; ``elements`` counts the array elements it met (see above)."""

    __slots__ = ("elements", "mixed", "parents", "previous", "traces", "untyped", "values")

    def __init__(self) -> None:
        self.elements = 0
        self.values = 0  # attribute values that are not empty, in the structs above
        self.untyped = False  # values in plain dicts (events, links, entity refs) or not counted
        # ids as written -> as read: a line holds few traces and parents, each many times
        self.traces: dict[str, str] = {}
        self.parents: dict[str, str | None] = {}
        # trace id as written -> its last span's attribute structs and their conversion (see _spans)
        self.previous: dict[Any, tuple[Any, Attributes]] = {}
        self.mixed = False  # the last attributes converted held a value other than a string, int or bool

    def request(self, request: Any, keep: Callable[[str], bool] | None) -> list[Span]:
        resource_spans = request.resourceSpans
        if resource_spans.__class__ is not list:
            raise _Unvouched  # {} or another signal's request: the file reader's business
        out: list[Span] = []
        for rs in resource_spans:
            resource = rs.resource
            res_attrs = self._resource(resource.attributes) if resource else EMPTY_ATTRIBUTES
            if resource and resource.entityRefs:
                self.untyped = True
            scope_spans = rs.scopeSpans
            if scope_spans is UNSET or scope_spans is None:
                raise _Unvouched
            for ss in scope_spans:
                scope = ss.scope
                name = version = ""
                if scope:  # its attributes are not read (nor checked) by the strict reader either
                    name = "" if scope.name is UNSET else scope.name
                    version = "" if scope.version is UNSET else scope.version
                    self.untyped = self.untyped or bool(scope.attributes)
                    for kv in scope.attributes or ():  # their values count in the proof of one type each
                        if kv.value and (kv.value.arrayValue or kv.value.kvlistValue):
                            raise _Unvouched  # elements no conversion here checks one by one
                if ss.spans is None:
                    raise _Unvouched  # "spans": null is malformed: the strict reader says so
                if ss.spans:
                    self._spans(ss.spans, keep, res_attrs, name, version, out)
        return out

    def _resource(self, kvs: Any) -> Attributes:
        """Resource attributes repeat line after line: reuse the last conversion of an equal list of
        strings (``otlp_json._resource_attributes`` does the same for the strict reader)."""
        global _last_resource
        raw, converted = _last_resource
        if raw is not None and kvs == raw:
            self.values += len(converted)
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

    def _spans(
        self,
        spans: list[Any],
        keep: Callable[[str], bool] | None,
        resource: Attributes,
        scope_name: str,
        scope_version: str,
        out: list[Span],
    ) -> None:
        """The spans of one scope, converted onto ``out``: one loop, no call per span but the
        span's own (this runs once per span; the checks are the strict reader's, inline)."""
        attributes = self._attributes
        traces, parents, previous = self.traces, self.parents, self.previous
        budget = _SHARE_BUDGET
        for sp in spans:
            if keep is not None and not keep(self._run_key(sp)):
                self._check_skipped(sp)
                continue
            if sp.events or sp.links:  # the strict reader's own conversion, from the decoded data
                out.append(otlp_json._span(msgspec.to_builtins(sp), resource, scope_name, scope_version))
                self.untyped = True
                continue
            status = sp.status
            if not status or (status.code is UNSET and status.message is UNSET):  # none, or {}
                status = c.UNSET_STATUS
            else:
                code, message = status.code, status.message
                message = "" if message is UNSET else message
                code = c.status_code(0 if code is UNSET else code)
                status = Status(code, message) if (code or message) else c.UNSET_STATUS
            span_id, parent, raw_trace = sp.spanId, sp.parentSpanId, sp.traceId
            if not (span_id.__class__ is str and _LOWER_HEX16(span_id) and span_id != _ZERO16):
                span_id = c.span_id_from_text(None if span_id is UNSET else span_id)
            if parent is UNSET:
                parent = None
            elif parent in parents:
                parent = parents[parent]
            elif _LOWER_HEX16(parent) and parent != _ZERO16:
                parents[parent] = parent
            else:
                parent = parents[parent] = c.parent_id_from_text(parent)
            trace_id = traces.get(raw_trace)
            if trace_id is None:
                trace_id = traces[raw_trace] = c.trace_id_from_text(None if raw_trace is UNSET else raw_trace)
            # A run repeats a call with the same attributes (a model call, a retry): a span whose
            # attribute structs equal (in C) those of its trace's last span shares their conversion.
            # Structs of strings, integers and booleans are equal only when their values have one
            # type and value each, so they convert alike; others are converted every time. Spans
            # that repeat nothing stop the look-ups once misses outnumber hits by the budget.
            kvs = sp.attributes
            last = previous.get(raw_trace) if budget > 0 else None
            if last is not None and last[0] == kvs:
                span_attributes = last[1]
                self.values += len(span_attributes)  # counted for the proof as if converted again
                budget += 1
            elif budget > 0:
                budget -= 1
                self.mixed = False
                span_attributes = attributes(kvs)
                if not self.mixed:
                    previous[raw_trace] = (kvs, span_attributes)
            else:
                span_attributes = attributes(kvs)
            kind, start, end, name = sp.kind, sp.startTimeUnixNano, sp.endTimeUnixNano, sp.name
            span_kind = _KIND_OF.get(kind)
            out.append(
                make_span(  # positional: this runs once per span
                    trace_id,
                    span_id,
                    parent,
                    "" if name is UNSET else name,
                    c.span_kind(0 if kind is UNSET else kind) if span_kind is None else span_kind,
                    # A time is read from its UTF-8 bytes: bytes.isdigit is ASCII's and ~6x cheaper
                    # than str.isdigit's Unicode look-ups, and int() of bytes skips a str's check.
                    int(digits)
                    if start.__class__ is str and len(start) < 20 and (digits := start.encode()).isdigit()
                    else _time(start, "startTimeUnixNano"),
                    int(digits)
                    if end.__class__ is str and len(end) < 20 and (digits := end.encode()).isdigit()
                    else _time(end, "endTimeUnixNano"),
                    status,
                    span_attributes,
                    (),
                    (),
                    resource,
                    scope_name,
                    scope_version,
                )
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
            if raw.__class__ is str:
                number = _SMALL_INTS.get(raw)
                if number is not None:
                    data[kv.key] = number
                    continue
                if 0 < len(raw) < 19 and raw.isdigit() and raw.isascii():
                    data[kv.key] = int(raw)
                    continue
            raw = value.boolValue
            if raw is not UNSET:
                data[kv.key] = raw
                continue
            raw = self._value(value, kv.key)
            if raw is not _ABSENT:
                data[kv.key] = raw
        if len(data) != len(kvs) and len({kv.key for kv in kvs}) != len(kvs):
            raise _Unvouched  # a duplicate attribute key (an empty value may also explain the count)
        self.values += len(data)  # no key twice: one for each value that is not empty
        return Attributes.adopt(data)

    def _check_skipped(self, sp: Any) -> None:
        """A span another shard reads: not kept, yet its values are converted and counted for the
        proof of one type each (or the whole line would go to the strict reader)."""
        self._attributes(sp.attributes)
        if sp.events or sp.links:  # their values are in plain dicts: the strict reader checks them
            otlp_json._span(msgspec.to_builtins(sp), EMPTY_ATTRIBUTES, "", "")
            self.untyped = True

    def _value(self, value: Any, key: str) -> Any:
        """A value that is not a string, a decimal intValue or a boolean; ``_ABSENT`` when it carries
        nothing (``{}``) or is of a kind the readers count and leave out."""
        self.mixed = True
        array = value.arrayValue
        if array and array.values.__class__ is list:  # an array of strings, read here
            strings = tuple([item.stringValue for item in array.values])
            if UNSET not in strings:
                self.elements += len(strings)
                return strings
        plain = msgspec.to_builtins(value)  # the rest: the strict reader's own conversion
        if not plain:
            return _ABSENT  # {}: an empty AnyValue carries nothing
        if array or value.kvlistValue:
            self.elements += _elements(value)
            self.untyped = self.untyped or bool(value.kvlistValue)  # values inside: not counted
        converted = otlp_json._value(plain, key)
        return _ABSENT if converted is otlp_json.UNKNOWN else converted


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
