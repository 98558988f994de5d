"""The run index's search of a raw OTLP JSON line: which (trace id, ``agent.run.id``) pairs it holds
— found in its bytes, without parsing it, for a line in the compact spelling every known writer uses
(pass 1 of ``readers.iter_runs``; on a Dask cluster, the only thing a worker sends back for a
partition). Any other line is indexed from its parsed spans (``TraceFile.index``): only the spans
can say which span a run id is written in. The scan by regular expression (:func:`raw_index`)
indexes a line that cannot be parsed, whose error the conversion pass then reports."""

from __future__ import annotations

import bisect
import json
import re
from itertools import islice
from typing import Final

from ... import semconv
from . import _convert as c

_Bad = c._Bad

# Pass-1 index (see readers.iter_runs): the run keys a raw line mentions, found without parsing it.
_TRACE_ID_RE: Final = re.compile(rb'"trace(?:Id|_id)"\s*:\s*"([^"\\]*)"')
RUN_ID_KEY: Final = b'"' + semconv.RUN_ID.encode() + b'"'
_STR = rb'"((?:[^"\\]|\\.)*)"'
_RUN_ID_THEN_VALUE: Final = re.compile(
    re.escape(RUN_ID_KEY) + rb'\s*,\s*"value"\s*:\s*\{\s*"stringValue"\s*:\s*' + _STR
)
_VALUE_THEN_RUN_ID: Final = re.compile(
    rb'"stringValue"\s*:\s*' + _STR + rb'\s*\}\s*,\s*"key"\s*:\s*' + re.escape(RUN_ID_KEY)
)
LINKS_MEMBER: Final = b'"links"'  # a span's links, in OTLP/JSON and proto3 JSON alike
# All in one scan, in order: a trace id (group 1), a run id written key first (group 2) — each with
# its closing quote, so never empty — or (both empty) the run id key written otherwise or "links".
_MENTIONS: Final = re.compile(
    rb'"(?:trace(?:Id|_id)"\s*:\s*"([^"\\]*")|'
    + re.escape(RUN_ID_KEY[1:])
    + rb'(?:\s*,\s*"value"\s*:\s*\{\s*"stringValue"\s*:\s*"([^"\\]*(?:\\.[^"\\]*)*"))?|links")'
)
# The compact spelling every known writer uses, found by C's substring search (see compact_index).
TRACE_MENTION: Final = b'"trace'  # where the compact search cuts a line: one cut per span it reads
_TRACE_REST: Final = b'Id":"'  # after '"trace': the compact trace id member, '"traceId":"'
_ID_AT: Final = len(_TRACE_REST)
_TRACE_CUT: Final = _ID_AT + 32 + 1  # a segment's trace id as cut: 'Id":"', 32 characters, '"'
_BRACE: Final = b"{"[0]  # what a cut before a trace id ends with: the object it opens
_BRACKET: Final = b"["[0]  # before it, an array's first object: a scope's first span ...
_SPANS_OPEN: Final = b'"spans":[{'  # ... written so; any other (a span's links) goes to the scan
_COMMA: Final = b","[0]  # or an array's next object
_RUN_VALUE_AFTER_KEY: Final = b',"value":{"stringValue":"'
_QUOTE: Final = b'"'
_BACKSLASH: Final = b"\\"
_RUN_ID_MEMBER: Final = RUN_ID_KEY + _RUN_VALUE_AFTER_KEY  # the key, then its value: compact
_VALUE_AT: Final = len(_RUN_ID_MEMBER)  # a run id's first byte, from its key's
# A scope's or a resource's member: a run id key after one, in a segment, is not its span's (see
# compact_index). Only the spellings the reader reads (no escapes: those lines are parsed).
_BEYOND_THE_SPAN: Final = re.compile(rb'"(?:scope|resource|instrumentationLibrary)"\s*:')
# An ASCII letter, digit, "_" or "." written as a \u escape, which JSON reads as the character itself.
_ESCAPED_NAME_CHARACTER: Final = re.compile(rb"\\u00(?:3[0-9]|[46][1-9a-fA-F]|[57][0-9aA]|5[fF]|2[eE])")


def escapes_a_name(line: bytes) -> bool:
    """Whether ``line`` writes an ASCII letter, digit, ``_`` or ``.`` as a ``\\u`` escape. No writer
    does (they escape control characters, quotes and, some, non-ASCII or ``<>&``), but JSON reads it
    as the character: a member name (``"trace\\u0049d"``, ``"lin\\u006bs"``) or a trace id spelt so
    is one the byte scan does not see, and a run id would be paired with another span's trace. Such a
    line is indexed from its parsed spans (``TraceFile.index``)."""
    # a one-byte test is memchr's (~30 bytes an instruction); a longer needle's search, the line's time
    return _BACKSLASH in line and _ESCAPED_NAME_CHARACTER.search(line) is not None


def raw_index(line: bytes) -> tuple[set[tuple[str, str | None]], bool]:
    """``(trace id, agent.run.id or None)`` pairs a raw JSON line mentions, found without parsing it,
    and whether the line may hold span links: the scan says so of a line naming the member
    ``"links"``, the compact search reads only lines that hold none.

    A run id is paired with the nearest ``traceId`` before it: in every known writer a span's
    ``traceId`` precedes its attributes (links, which carry other trace ids, come after them). The
    index built from this is checked against the parsed spans (see ``readers.iter_runs``).

    A line in the compact spelling every known writer uses is read by substring search
    (:func:`compact_index`); any other by one regular-expression scan (:func:`_scanned_index`),
    which gives the same pairs on the compact lines too."""
    compact = compact_index(line)
    if compact is not None:
        return compact, False
    return _scanned_index(line)


def compact_index(line: bytes) -> set[tuple[str, str | None]] | None:
    """:func:`raw_index`'s pairs for a line in the compact spelling (each span's object opening with
    ``{"traceId":"…"``, the run id key first and ``,"value":{"stringValue":"…"}`` right after it, no
    span link), found by C's substring search instead of a regular expression tried at every quote;
    None when the line is spelt otherwise or holds a link, and its parsed spans are its index.

    Cut at each ``"trace``, the line is a head and one segment per trace id, each starting with the
    rest of ``"traceId":"`` and that id: a segment starting otherwise is another spelling (or a
    ``"trace…`` key), and the line goes to the scan. Each cut but the last must end with ``,{`` or
    ``"spans":[{``: the trace id opens the next object of an array or the first span of a scope's.
    A span's links are an array too: its first link, written trace id first as writers do, shows as
    a cut ending ``"links":[{`` (or spelt with blanks), a link whose trace id is not its first member
    as a cut ending otherwise — either way the line goes to the scan, which follows links; a link
    with no trace id is refused by the reader whichever pass meets it. No search of the whole line
    for ``"links"``, then.

    A segment's trace id is read as its first 38 bytes — ``Id":"``, 32 characters and a quote, what
    every known writer gives, checked on the line's few distinct trace ids (any other length or an
    escape, and the line goes to the scan) — so no search runs for its end. A run id in a segment
    comes after the segment's trace id and before the next one: the nearest trace id before it, as
    the scan pairs it. Each segment's run id, written compactly (key, then its value), is found from
    the segment's end (``rpartition``: the key sits among the attributes, nearer a span's end than
    its start); as many run id keys in the line as segments holding one (none written otherwise,
    none before the first trace id, none twice in a segment: then the last is the only one), and no
    run id holding a backslash (the scan's escapes) — or the line goes to the scan. A segment that
    ends the line or runs into another scope's first span holds that scope's (and resource's)
    members too: a run id after a ``"scope":`` or ``"resource":`` member there is not its span's, and
    the line is left to its parsed spans. A run id this search cannot place — an event's, a nested
    list's, an unknown member's, another signal's — is caught when the line is converted
    (``TraceFile.run_spans``): an error, not a link.

    This runs once per span, and a method call on bytes with more than one argument parses them
    (~600 instructions): per segment, one search for the run id and one for its end, neither with a
    second argument; the other checks index bytes, or run on the few distinct ids and the whole line."""
    chunks = line.split(TRACE_MENTION)
    if len(chunks) == 1 or not chunks[0].endswith(_SPANS_OPEN):
        return None
    traces: set[bytes] = set()  # each as cut: 'Id":"', 32 characters, '"' (checked below)
    pairs: set[tuple[bytes, bytes]] = set()
    found = 0
    open_ends = 0  # segments ending with '{': all but the last, the line's end
    try:
        for segment in islice(chunks, 1, None):  # one per span: copies of the ids and a segment's tail
            boundary = True  # the line's end, or another scope's first span: its members come first
            if segment[-1] == _BRACE:
                open_ends += 1
                before = segment[-2]
                if before == _COMMA:
                    boundary = False  # the next span of the same scope follows
                elif not (before == _BRACKET and segment.endswith(_SPANS_OPEN)):
                    return None  # an array's first object but a scope's first span: a span's links
            trace = segment[:_TRACE_CUT]
            head, key, rest = segment.rpartition(_RUN_ID_MEMBER)
            if not key:
                traces.add(trace)  # the others are in pairs (added below)
                continue
            if boundary and _BEYOND_THE_SPAN.search(head) is not None:
                return None  # the run id may be another scope's or resource's: the parsed spans say
            stop = rest.find(_QUOTE)
            if stop < 0:
                return None
            pairs.add((trace, rest[: stop + 1]))  # with its closing quote, as the trace id's
            found += 1
    except IndexError:
        return None  # an empty segment, or '{' alone: no span's
    if open_ends != len(chunks) - 2:
        return None  # a trace id that opens no object (a link's, written after another member)
    traces.update([trace for trace, _ in pairs])
    if line.count(RUN_ID_KEY) != found:
        return None  # a run id key written otherwise, a second one in a span, or one before any trace id
    for trace in traces:  # the line's distinct trace ids: a '"trace' that begins '"traceId":"' and
        if not (trace.startswith(_TRACE_REST) and trace.endswith(_QUOTE)):  # an id of 32 characters
            return None
        if _QUOTE in trace[_ID_AT:-1] or _BACKSLASH in trace:
            return None  # shorter, or an escape: the scan reads it
    if any(_BACKSLASH in run for _, run in pairs):
        return None  # escapes: the scan reads them
    return _read(traces, pairs, 1, _ID_AT)


def _read(
    traces: set[bytes], pairs: set[tuple[bytes, bytes]], quoted: int, head: int = 0
) -> set[tuple[str, str | None]]:
    """The index's pairs from the raw ids found: each trace id alone, and with each run id paired
    with it, as JSON reads them; ids that cannot be read give no pair. ``quoted``: 1 when each raw id
    still ends with its closing quote (the scans' and the compact search's), 0 when not; ``head``:
    the bytes before each raw trace id (the compact search's ``Id":"``)."""
    read = {raw: _indexed_trace_id(raw[head : len(raw) - quoted]) for raw in traces}
    links: set[tuple[str, str | None]] = {(t, None) for t in read.values() if t is not None}
    for raw_id, raw_run in pairs:
        trace_id = read[raw_id]
        if trace_id is not None:
            run_id = _indexed_run_id(raw_run[: len(raw_run) - quoted])
            if run_id:
                links.add((trace_id, run_id))
    return links


def _scanned_index(line: bytes) -> tuple[set[tuple[str, str | None]], bool]:
    """:func:`raw_index` by one regular-expression scan of the line's mentions (``_MENTIONS``).

    One scan finds the mentions of all three in order. When trace ids and run ids alternate — a trace
    id, its span's run id, the next span's trace id ... — they are paired in C; otherwise one walk
    pairs each run id with the trace id last seen. A run id key written otherwise (value first) sends
    the line to :func:`_links_by_position`."""
    found = _MENTIONS.findall(line)
    if not found:
        return set(), False
    raw_ids, raw_runs = zip(*found, strict=True)  # a trace id, else a run id, else neither
    if len(found) % 2 == 0 and all(raw_ids[0::2]) and all(raw_runs[1::2]):
        pairs = set(zip(raw_ids[0::2], raw_runs[1::2], strict=True))
        traces = set(raw_ids[0::2])
        linked = False
    else:
        pairs = set()
        traces = set()
        current = None
        runs = others = 0
        for raw_id, raw_run in found:
            if raw_id:
                current = raw_id
                traces.add(raw_id)
            elif raw_run:
                runs += 1
                if current is not None:
                    pairs.add((current, raw_run))
            else:
                others += 1  # "links", or the run id key not followed by its value
        if others and line.count(RUN_ID_KEY) != runs:
            return _links_by_position(line), LINKS_MEMBER in line
        linked = others > 0
    return _read(traces, pairs, 1), linked


def _links_by_position(line: bytes) -> set[tuple[str, str | None]]:
    """:func:`raw_index`'s pairs for a line that mentions the run id key other than as ``{"key": ..., "value":
    {"stringValue": ...}}``: run ids written value first are found too, and paired by position."""
    traces = [(m.start(), m.group(1)) for m in _TRACE_ID_RE.finditer(line)]
    found = [(m.start(), m.group(1)) for m in _RUN_ID_THEN_VALUE.finditer(line)]
    if len(found) < line.count(RUN_ID_KEY):
        found += [(m.start(), m.group(1)) for m in _VALUE_THEN_RUN_ID.finditer(line)]
    starts = [pos for pos, _ in traces]
    pairs = set()
    for pos, raw in found:
        i = bisect.bisect_left(starts, pos) - 1
        if i >= 0:
            pairs.add((traces[i][1], raw))
    return _read({raw for _, raw in traces}, pairs, 0)


def _indexed_trace_id(raw: bytes) -> str | None:
    """A trace id's bytes as the index reads them; None when they are no id (the conversion pass
    reports that)."""
    try:
        return c.trace_id_from_text(raw.decode("ascii", "replace"))
    except _Bad:
        return None


def _indexed_run_id(raw: bytes) -> str | None:
    """A run id's bytes (inside the quotes) as JSON reads them; None when they cannot be read."""
    try:
        return json.loads(b'"' + raw + b'"') if b"\\" in raw else raw.decode("utf-8")
    except ValueError:
        return None
