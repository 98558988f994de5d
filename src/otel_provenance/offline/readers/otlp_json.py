"""OTLP JSON: one ``ExportTraceServiceRequest`` object → spans.

The official JSON file exporter and the Collector file exporter write one such object per line
(JSON Lines); a single pretty-printed document has the same shape. Field names are the OTLP/JSON
lowerCamelCase ones; ids are hex (base64, as plain proto3 JSON would write them, is accepted too);
64-bit integers may be numbers or decimal strings; enums may be integers or their names.

The conversion is the hot path of every offline command, so it does the minimum per attribute:
one dict lookup per value and a type check. Structural surprises (a list where an object belongs)
are caught once around the whole request and reported with the span's position.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable
from typing import Any, Final

from ... import semconv
from ..model import EMPTY_ATTRIBUTES, Attributes, Event, Link, Span, SpanKind, Status, Value, make_span
from . import _convert as c

_Bad = c._Bad
UNKNOWN: Final = c.UNKNOWN_VALUE

_KINDS: Final = tuple(SpanKind)
_N_KINDS: Final = len(_KINDS)
_LOWER_HEX16: Final = re.compile(r"[0-9a-f]{16}").fullmatch  # a span id as every writer spells it
_ZERO16: Final = c.ZERO_SPAN_ID
_SPECIAL_DOUBLES: Final = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}


SIGNAL_TRACES: Final = "traces"
SIGNAL_EMPTY: Final = "empty"
_OTHER_SIGNALS: Final = (
    ("resourceLogs", "logs"),
    ("resourceMetrics", "metrics"),
    ("resourceProfiles", "profiles"),
)
# A request's signal member, by its bytes: a JSON string followed by a colon is always a member name
# (a string value is followed by a comma, "}" or "]"), so a string *value* "resourceSpans" — a log
# body, an attribute key — is never taken for one.
_SIGNAL_MEMBER: Final = re.compile(
    rb'"resource(Spans|Logs|Metrics|Profiles|_spans|_logs|_metrics|_profiles)"\s*:'
)
# An empty request, ``{}`` (what the Collector writes for one), with JSON's whitespace only. On a
# request line it fails at the second non-blank byte.
_EMPTY_REQUEST: Final = re.compile(rb"[ \t\r\n]*\{[ \t\r\n]*\}[ \t\r\n]*\Z")
_SIGNAL_OF_MEMBER: Final = {
    b"Spans": SIGNAL_TRACES,
    b"_spans": SIGNAL_TRACES,
    **{key[8:].encode(): signal for key, signal in _OTHER_SIGNALS},
    **{b"_" + key[8:].lower().encode(): signal for key, signal in _OTHER_SIGNALS},
}


_SPANS_MEMBER: Final = re.compile(rb'"resource(?:Spans|_spans)"\s*:')
beside: Counter[str] = Counter()
"""Requests of other signals found beside ``resourceSpans`` in one request (what agentevals serves for
download: spans and logs in one document), by signal, so far in this process: their spans are read,
the rest is left out and counted; readers report the difference per read."""


def raw_signal(line: bytes) -> str:
    """The signal a raw JSON line holds, by a byte search for its first signal member (and, when that
    is another signal's, for a ``resourceSpans`` after it: a request holding traces is a traces
    request). ``traces`` when unsure (no such member: a name written with escapes, or not OTLP): the
    parse then says precisely what the line is or what is wrong with it."""
    if _EMPTY_REQUEST.match(line):
        return SIGNAL_EMPTY
    member = _SIGNAL_MEMBER.search(line)
    if member is None:
        return SIGNAL_TRACES
    signal = _SIGNAL_OF_MEMBER[member.group(1)]
    if signal != SIGNAL_TRACES and _SPANS_MEMBER.search(line, member.end()):
        return SIGNAL_TRACES
    return signal


_SURROGATE_ESCAPE: Final = re.compile(rb"\\u[dD][89a-fA-F]")


def refuse_lone_surrogates(raw: bytes, doc: Any) -> None:
    """``_Bad`` naming where when a string of ``doc`` (parsed from ``raw``) holds a lone surrogate.

    JSON can spell one (``"\\ud800"``) and Python's parser accepts it, but it is not Unicode: no
    UTF-8 writer can print or encode it, so a report, a terminal or an export would crash on it
    later. Only a line that spells a surrogate escape at all is walked (a pair, as ``ensure_ascii``
    writes an emoji, is fine and walked for nothing); the walk is iterative, so depth costs no stack."""
    if _SURROGATE_ESCAPE.search(raw) is None:
        return
    stack: list[tuple[str, Any]] = [("", doc)]
    while stack:
        where, node = stack.pop()
        if node.__class__ is dict:
            for key, value in node.items():
                _encodable(key, f"{where} (a member name)")
                stack.append((f"{where}.{key}", value))
        elif node.__class__ is list:
            stack.extend((f"{where}[{i}]", value) for i, value in enumerate(node))
        elif node.__class__ is str:
            _encodable(node, where)


def _encodable(text: str, where: str) -> None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        place = where.lstrip(".") or "the top level"
        raise _Bad(f"the string at {place} holds a lone surrogate (not valid Unicode)") from None


def request_signal(doc: Any) -> str:
    """``traces``, ``logs``, ``metrics``, ``profiles`` or ``empty`` (``{}``: what the Collector
    writes for an empty request) for one parsed OTLP JSON request; ``_Bad`` when it is none."""
    if type(doc) is not dict:
        raise _Bad("not a JSON object (expected an OTLP ExportTraceServiceRequest)")
    if "resourceSpans" in doc:  # other signals beside it are counted (``beside``), not read
        return SIGNAL_TRACES
    others = [(key, signal) for key, signal in _OTHER_SIGNALS if key in doc]
    if others:
        return others[0][1]
    if not doc:
        return SIGNAL_EMPTY
    raise _Bad("no resourceSpans: not an OTLP ExportTraceServiceRequest")


def spans_from_request(doc: Any, keep: Callable[[str], bool] | None = None) -> list[Span]:
    """Spans of one parsed ``ExportTraceServiceRequest``. Raises ``_Bad`` with the span's position.

    ``keep(run_key)``, when given, skips converting spans whose run key (``agent.run.id``, else the
    trace id, found by a cheap look at the raw span) it rejects — a shard reads only its own runs.
    ``{}`` (an empty request) has no spans; another signal's request is an error here (the file
    reader skips and counts those before they get here)."""
    signal = request_signal(doc)
    if signal == SIGNAL_EMPTY:
        return []
    if signal != SIGNAL_TRACES:
        key = next(key for key, other in _OTHER_SIGNALS if other == signal)
        raise _Bad(f"a {signal} request ({key}), not traces")
    if len(doc) > 1:
        for key, other in _OTHER_SIGNALS:
            if key in doc:
                beside[other] += 1
    resource_spans = doc["resourceSpans"]
    if type(resource_spans) is not list:
        raise _Bad("resourceSpans is not an array")
    out: list[Span] = []
    ri = si = pi = -1
    try:
        for ri, rs in enumerate(resource_spans):  # noqa: B007 - the indexes name the span in errors
            si = pi = -1
            resource = rs.get("resource") or {}
            res_attrs = _resource_attributes(resource.get("attributes"))
            scope_spans = rs.get("scopeSpans")
            if scope_spans is None:
                scope_spans = rs.get("instrumentationLibrarySpans", ())  # pre-1.0 OTLP
            for si, ss in enumerate(scope_spans):  # noqa: B007
                pi = -1
                scope = ss.get("scope") or ss.get("instrumentationLibrary") or {}
                scope_name = scope.get("name", "")
                scope_version = scope.get("version", "")
                if type(scope_name) is not str or type(scope_version) is not str:
                    raise _Bad("scope name/version is not a string")
                for pi, sp in enumerate(ss.get("spans", ())):  # noqa: B007
                    if keep is None or c.kept(keep, _raw_run_key, sp):
                        out.append(_span(sp, res_attrs, scope_name, scope_version))
    except _Bad as exc:
        raise _Bad(f"{_where(ri, si, pi)}: {exc}") from None
    except (
        TypeError,
        AttributeError,
        ValueError,
        KeyError,
        IndexError,
        OverflowError,
        RecursionError,
    ) as exc:
        raise _Bad(f"{_where(ri, si, pi)}: malformed OTLP structure ({type(exc).__name__})") from None
    return out


_last_resource: tuple[Any, Attributes] = (None, EMPTY_ATTRIBUTES)


def _resource_attributes(kvs: Any) -> Attributes:
    """Resource attributes repeat on every line: reuse the last conversion when the raw list is equal
    (a C-level comparison, far cheaper than converting again). Only all-string resources are reused,
    because JSON equality does not tell ``1`` from ``true`` or ``1.0``."""
    global _last_resource
    raw, converted = _last_resource
    if raw is not None and kvs == raw:
        return converted
    converted = _attributes(kvs)
    if type(kvs) is list and all(type(v) is str for v in converted.values()):
        _last_resource = (kvs, converted)
    return converted


def _where(ri: int, si: int, pi: int) -> str:
    where = "resourceSpans"
    for name, index in (("", ri), (".scopeSpans", si), (".spans", pi)):
        if index < 0:
            break
        where += f"{name}[{index}]"
    return where


def _raw_run_key(sp: dict) -> str:
    """``Span.run_id`` of a raw span, without converting it."""
    for kv in sp.get("attributes") or ():
        if kv["key"] == semconv.RUN_ID:
            value = kv.get("value")
            run_id = value.get("stringValue") if value.__class__ is dict else None
            if run_id.__class__ is str and run_id:
                return run_id
            break
    return _trace_id(sp.get("traceId"))


def _span(sp: dict, resource: Attributes, scope_name: str, scope_version: str) -> Span:
    name = sp.get("name", "")
    if type(name) is not str:
        raise _Bad("name is not a string")
    status = sp.get("status")
    if status:
        code = c.status_code(status.get("code", 0))
        message = status.get("message", "")
        if type(message) is not str:
            raise _Bad("status message is not a string")
        status = Status(code, message) if (code or message) else c.UNSET_STATUS
    else:
        status = c.UNSET_STATUS
    events = sp.get("events")
    links = sp.get("links")
    kind = sp.get("kind", 0)
    start = sp.get("startTimeUnixNano", 0)
    end = sp.get("endTimeUnixNano", 0)
    span_id = sp.get("spanId")
    if not (span_id.__class__ is str and _LOWER_HEX16(span_id) and span_id != _ZERO16):
        span_id = c.span_id_from_text(span_id)  # uppercase, base64, or a problem to report
    parent = sp.get("parentSpanId")
    if not (parent.__class__ is str and _LOWER_HEX16(parent) and parent != _ZERO16):
        parent = c.parent_id_from_text(parent)  # a root (absent, ""), uppercase, base64, bad (zeros)
    return make_span(  # positional: this runs once per span
        _trace_id(sp.get("traceId")),
        span_id,
        parent,
        name,
        _KINDS[kind] if kind.__class__ is int and 0 <= kind < _N_KINDS else c.span_kind(kind),
        int(start)
        if start.__class__ is str and start.isascii() and start.isdigit() and len(start) < 20
        else c.u64(start, "startTimeUnixNano"),
        int(end)
        if end.__class__ is str and end.isascii() and end.isdigit() and len(end) < 20
        else c.u64(end, "endTimeUnixNano"),
        status,
        _attributes(sp.get("attributes")),
        tuple(_event(e) for e in events) if events else (),
        tuple(_link(li) for li in links) if links else (),
        resource,
        scope_name,
        scope_version,
    )


_last_trace_id: tuple[object, str] = (object(), "")  # matches no raw id before the first conversion


def _trace_id(raw: object) -> str:
    """Spans of one trace sit together in a batch: reuse the last checked id when it repeats."""
    global _last_trace_id
    if raw.__class__ is str and raw == _last_trace_id[0]:
        return _last_trace_id[1]
    tid = c.trace_id_from_text(raw)
    _last_trace_id = (raw, tid)
    return tid


def _event(ev: dict) -> Event:
    name = ev.get("name", "")
    if type(name) is not str:
        raise _Bad("event name is not a string")
    return Event(
        name, c.u64(ev.get("timeUnixNano", 0), "event timeUnixNano"), _attributes(ev.get("attributes"))
    )


def _link(li: dict) -> Link:
    return Link(
        c.trace_id_from_text(li.get("traceId"), "link traceId"),
        c.span_id_from_text(li.get("spanId"), "link spanId"),
        _attributes(li.get("attributes")),
    )


def _attributes(kvs: Any) -> Attributes:
    if not kvs:
        return EMPTY_ATTRIBUTES
    data: dict[str, Value] = {}
    for kv in kvs:
        key = kv["key"]
        value = kv.get("value")
        if value:
            raw = value.get("stringValue")  # the common cases, inlined
            if raw.__class__ is str and key.__class__ is str and len(value) == 1:
                data[key] = raw
                continue
            raw = value.get("intValue")  # a decimal string of at most 18 digits fits in 64 bits
            if (
                raw.__class__ is str
                and 0 < len(raw) < 19
                and raw.isdigit()
                and raw.isascii()
                and key.__class__ is str
                and len(value) == 1
            ):
                data[key] = int(raw)
                continue
            if key.__class__ is not str:
                raise _Bad("attribute key is not a string")
            converted = _value(value, key)
            if converted is not UNKNOWN:
                data[key] = converted
        elif key.__class__ is not str:
            raise _Bad("attribute key is not a string")
        # else: an empty AnyValue carries nothing — the attribute is absent
    if len(data) != len(kvs) and len({kv["key"] for kv in kvs}) != len(kvs):
        raise _Bad("duplicate attribute key")
    return Attributes.adopt(data)


def _value(value: dict, key: str) -> Value:
    if len(value) != 1:
        raise _Bad(f"attribute {key!r}: value must have exactly one type field")
    ((typ, raw),) = value.items()
    if typ == "stringValue":
        if type(raw) is str:
            return raw
    elif typ == "intValue":
        return c.i64(raw, f"attribute {key!r} intValue")
    elif typ == "boolValue":
        if type(raw) is bool:
            return raw
    elif typ == "doubleValue":
        t = type(raw)
        if t is float:
            return raw
        if t is int:
            return float(raw)
        if t is str:
            if raw in _SPECIAL_DOUBLES:
                return _SPECIAL_DOUBLES[raw]
            try:
                return float(raw)
            except ValueError:
                pass
    elif typ == "arrayValue":
        if type(raw) is dict:
            items = tuple(_value(v, key) if v else _bad_empty(key) for v in raw.get("values") or ())
            return UNKNOWN if any(v is UNKNOWN for v in items) else items
    elif typ == "kvlistValue":
        if type(raw) is dict:
            return _attributes(raw.get("values"))
    elif typ == "bytesValue":
        return c.b64_bytes(raw, f"attribute {key!r} bytesValue")
    elif typ == "stringValueStrindex":  # profiling dictionaries only: non-fatal elsewhere, counted
        return c.unknown_value()
    else:
        raise _Bad(f"attribute {key!r}: value of unknown type {typ[:40]!r}")
    raise _Bad(f"attribute {key!r}: {typ} has the wrong JSON type")


def _bad_empty(key: str) -> Value:
    raise _Bad(f"attribute {key!r}: array element without a value")
