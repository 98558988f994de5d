"""Strict JSON for OTLP files: duplicate member names refused, proto3 snake_case names accepted.

``json.loads`` keeps the *last* of two members with the same name, so
``{"value":{"boolValue":false},"value":{"boolValue":true}}`` silently reads as ``true`` — one
hand-edited line could turn a failing gate into a pass. Every object is therefore built through a
hook that refuses a repeated name (about twice the parse time of plain ``json.loads``; correctness
first). For a multi-line document the offending object's line is found by a second, slower parse
that tracks positions, run only once a duplicate is known to exist.

Proto3 JSON parsers accept a field's original ``snake_case`` name as well as its lowerCamelCase JSON
name (the Collector does), so ``resource_spans``/``trace_id``/``string_value`` are renamed to the
OTLP/JSON names before conversion. Only member names are renamed — attribute keys are values.

With ``orjson`` installed (the ``fast`` extra), :func:`loads_fast` parses a line at C speed and
returns the document only when it is provably the one :func:`loads` would give; otherwise None,
and the caller uses :func:`loads`. orjson keeps the last of two equal member names silently, so a
dropped member is detected by counting: every member has exactly one colon outside strings, and a
colon inside a string is written literally unless escaped as ``\\u003a`` (such lines go to the
strict parser). orjson's re-serialisation of what it parsed holds the same colons as the line if
and only if no member was dropped. The other differences — orjson refuses ``NaN``/``Infinity``,
lone surrogates and a BOM (the strict parser then decides), and reads an integer beyond 64 bits as a
float — are covered by the caller: a line whose conversion fails is parsed again strictly, so the
error is worded as without orjson. Such a float is the correctly rounded ``float(int)`` (orjson 3.9 to
3.13, halfway cases included; tested on both ends of the range), so a ``doubleValue`` written as a
long integer reads as the same double either way.
"""

from __future__ import annotations

import contextlib
import json
import json.decoder
import json.scanner
import re
from typing import Any, Final

from ._convert import _Bad

try:
    import orjson as _orjson
except ImportError:  # the `fast` extra is not installed: the standard library parses everything
    _orjson = None

# A member name holding an underscore: only a snake_case proto field name can be one in OTLP JSON
# (attribute keys such as "gen_ai.tool.name" are string *values*, never followed by a colon).
_SNAKE_MEMBER: Final = re.compile(rb'_[a-z]+"\s*:')

_CAMEL: Final = {
    name: re.sub(r"_([a-z])", lambda m: m.group(1).upper(), name)
    for name in (
        "resource_spans",
        "resource_logs",
        "resource_metrics",
        "resource_profiles",
        "scope_spans",
        "instrumentation_library_spans",
        "instrumentation_library",
        "schema_url",
        "dropped_attributes_count",
        "dropped_events_count",
        "dropped_links_count",
        "trace_id",
        "span_id",
        "parent_span_id",
        "trace_state",
        "start_time_unix_nano",
        "end_time_unix_nano",
        "time_unix_nano",
        "string_value",
        "bool_value",
        "int_value",
        "double_value",
        "array_value",
        "kvlist_value",
        "bytes_value",
        "string_value_strindex",
        "entity_refs",
    )
}


class DuplicateMember(_Bad):
    """Two members of one JSON object share a name."""

    def __init__(self, name: str) -> None:
        super().__init__(f"duplicate JSON member name {name[:60]!r} (last-wins would change the data)")
        self.name = name


def _unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    d = dict(pairs)
    if len(d) != len(pairs):
        seen: set[str] = set()
        for name, _ in pairs:
            if name in seen:
                raise DuplicateMember(name)
            seen.add(name)
    return d


_DECODER: Final = json.JSONDecoder(object_pairs_hook=_unique)


def loads(raw: bytes) -> Any:
    """Parse one UTF-8 JSON text; ``_Bad`` for invalid JSON (with its column) or a duplicate member name.

    ``DuplicateMember`` carries no line: callers reading a multi-line document use ``line_of_duplicate``."""
    try:
        doc = _DECODER.decode(raw.decode("utf-8"))
    except json.JSONDecodeError as exc:
        raise _Bad(f"invalid JSON ({exc.msg}, column {exc.colno})") from None
    except DuplicateMember:
        raise
    except (ValueError, RecursionError) as exc:
        raise _Bad(f"invalid JSON ({type(exc).__name__})") from None
    if _SNAKE_MEMBER.search(raw):
        doc = _to_camel(doc)
    return doc


def loads_fast(raw: bytes) -> Any | None:
    """``loads(raw)`` parsed by orjson — or None when orjson is not installed or cannot be shown to
    give the same document (see the module docstring; a JSON ``null`` also gives None), and the
    caller then uses :func:`loads`. One difference is left to the caller: an integer beyond the
    64-bit range outside a ``doubleValue`` reads as a float, which the OTLP conversion refuses in
    every field it reads, so a caller that parses again strictly on a conversion error (as
    ``readers._TraceFile.spans`` does) gets exactly the strict result and error."""
    if _orjson is None or b"\\u003" in raw:
        return None
    try:
        doc = _orjson.loads(raw)
        if raw.count(b":") != _orjson.dumps(doc).count(b":"):
            return None  # a member was dropped: a duplicate name (loads words the error)
    except (ValueError, TypeError, RecursionError):  # orjson.JSONDecodeError/JSONEncodeError
        return None
    if _SNAKE_MEMBER.search(raw):
        try:
            doc = _to_camel(doc)
        except _Bad:
            return None
    return doc


def line_of_duplicate(text: str) -> int | None:
    """The 1-based line of the first object in ``text`` with a duplicate member (slow; error path)."""
    found: list[int] = []

    def parse_object(s_and_end, *args, **kwargs):
        s, end = s_and_end
        try:
            return json.decoder.JSONObject(s_and_end, *args, **kwargs)
        except DuplicateMember:
            if not found:
                found.append(s.count("\n", 0, end) + 1)
            raise

    decoder = json.JSONDecoder(object_pairs_hook=_unique)
    decoder.parse_object = parse_object
    decoder.scan_once = json.scanner.py_make_scanner(decoder)
    with contextlib.suppress(DuplicateMember, ValueError, RecursionError):
        decoder.decode(text)
    return found[0] if found else None


def _to_camel(node: Any) -> Any:
    """Rename known snake_case members to their OTLP/JSON names; both spellings at once is an error."""
    if type(node) is list:
        return [_to_camel(item) for item in node]
    if type(node) is not dict:
        return node
    out: dict[str, Any] = {}
    for name, value in node.items():
        camel = _CAMEL.get(name, name)
        if camel in out:
            raise _Bad(f"member {camel!r} is given twice (as {name!r} and {camel!r})")
        out[camel] = _to_camel(value)
    return out
