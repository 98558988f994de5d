"""``rawindex.raw_index``: the (trace id, agent.run.id) pairs a JSON line mentions, found by scanning
its bytes instead of parsing it — the index that groups spans into runs before any line is converted
(and, on a Dask cluster, the only thing a worker sends back for a partition). A run id belongs to the
nearest ``traceId`` before it; ids that cannot be read give no pair and never stop the scan."""

from __future__ import annotations

import base64
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from otel_provenance.offline.readers.rawindex import (
    _MENTIONS,
    _links_by_position,
    _scanned_index,
    compact_index,
    raw_index,
)

T1 = "5b8efff798038103d269b633813fc60c"
T2 = "0af7651916cd43dd8448eb211c80319c"
T1_BASE64 = base64.b64encode(bytes.fromhex(T1)).decode()  # 24 characters, a valid id too


def _pairs(line: bytes) -> set[tuple[str, str | None]]:
    return raw_index(line)[0]


def _attr(key: str, value: str, value_first: bool = False) -> dict:
    if value_first:
        return {"value": {"stringValue": value}, "key": key}
    return {"key": key, "value": {"stringValue": value}}


def _span(trace_id: str, *attributes: dict) -> dict:
    return {"traceId": trace_id, "spanId": "eee19b7ec3c1b174", "name": "s", "attributes": list(attributes)}


def _line(*spans: dict, resource: tuple[dict, ...] = ()) -> bytes:
    scope_spans = [{"spans": list(spans)}]
    request = {"resourceSpans": [{"resource": {"attributes": list(resource)}, "scopeSpans": scope_spans}]}
    return json.dumps(request).encode()


def test_a_run_id_is_paired_with_its_spans_trace_in_either_member_order() -> None:
    line = _line(
        _span(T1, _attr("tool", "x"), _attr("agent.run.id", "r1")),
        _span(T2, _attr("agent.run.id", "r2", value_first=True)),
    )
    assert _pairs(line) == {(T1, None), (T2, None), (T1, "r1"), (T2, "r2")}


def test_a_run_id_before_any_trace_id_is_not_paired_and_the_scan_goes_on() -> None:
    """A run id in the resource comes before every span's traceId: no span to pair it with (the
    parsed spans decide). The span's own run id after it is still found."""
    line = _line(_span(T1, _attr("agent.run.id", "r1")), resource=(_attr("agent.run.id", "r0"),))
    assert _pairs(line) == {(T1, None), (T1, "r1")}


def test_trace_ids_that_are_not_ids_give_no_pair() -> None:
    for bad in ("zz", "caf\u00e9" * 8, ""):
        line = _line(_span(bad, _attr("agent.run.id", "r1")))
        assert _pairs(line) == set(), bad
    line = _line(_span("not-hex", _attr("agent.run.id", "r1")), _span(T2, _attr("agent.run.id", "r2")))
    assert _pairs(line) == {(T2, None), (T2, "r2")}


def test_a_non_ascii_byte_in_a_trace_id_gives_no_pair_and_no_error() -> None:
    line = _line(_span(T1, _attr("agent.run.id", "r1"))).replace(T1.encode(), b"\xff" * 32)
    assert _pairs(line) == set()
    line = _line(_span(T1)).replace(T1.encode(), "\u00e9".encode() * 16)  # no run id: the short path
    assert _pairs(line) == set()


def test_escaped_run_ids_are_read_as_json_reads_them() -> None:
    line = _line(
        _span(T1, _attr("agent.run.id", 'run "7" caf\u00e9')),
        _span(T2, _attr("agent.run.id", "r\\2", value_first=True)),
    )
    assert b"\\" in line  # json.dumps escaped the quotes, the backslash and the accent
    assert _pairs(line) == {(T1, None), (T2, None), (T1, 'run "7" caf\u00e9'), (T2, "r\\2")}


def test_a_run_id_that_cannot_be_decoded_is_left_out_and_the_rest_is_kept() -> None:
    good = _attr("agent.run.id", "r2")
    line = _line(_span(T1, _attr("agent.run.id", "PLACEHOLDER")), _span(T2, good))
    for raw in (rb"r\q", b"r\xff"):  # an invalid escape; a byte that is not UTF-8
        assert _pairs(line.replace(b"PLACEHOLDER", raw)) == {(T1, None), (T2, None), (T2, "r2")}


# #46: one scan finds trace ids and key-first run ids in order, paired in C when they alternate and by a
# walk otherwise; a run id key written any other way sends the line to the scan by position. All three
# must give what pairing each run id with the nearest trace id before it gives, and say whether the line
# names the member "links".
_ids = st.sampled_from([T1, T2, T1.upper(), "zz", "", T1_BASE64])  # base64: proto3 JSON's bytes
_runs = st.sampled_from(["r1", "r2", 'run "7"', "caf\u00e9", ""])
_run_attr = st.builds(_attr, st.just("agent.run.id"), _runs)  # key first, as every writer has it
_attrs = st.lists(
    st.one_of(
        _run_attr,
        _run_attr,
        st.builds(_attr, st.sampled_from(["tool", "agent.run.id.x"]), _runs),
        st.sampled_from(  # now and then written otherwise: the line is scanned by position
            [
                _attr("agent.run.id", "r3", value_first=True),
                {"key": "agent.run.id", "value": {"intValue": "7"}},
            ],
        ),
    ),
    max_size=3,
)
_spans = st.lists(
    st.builds(
        lambda trace_id, attributes, links: {
            **_span(trace_id, *attributes),
            **({"links": [{"traceId": T2, "spanId": "eee19b7ec3c1b174"}]} if links else {}),
        },
        _ids,
        _attrs,
        st.booleans(),
    ),
    max_size=4,
)


@settings(max_examples=300, deadline=None)
@given(_spans, st.lists(_run_attr, max_size=1), st.booleans())
def test_the_one_scan_pairs_as_the_scan_by_position(
    spans: list[dict], resource: list[dict], compact: bool
) -> None:
    request = {"resourceSpans": [{"resource": {"attributes": resource}, "scopeSpans": [{"spans": spans}]}]}
    line = json.dumps(request, separators=(",", ":") if compact else None).encode()
    assert raw_index(line) == (_links_by_position(line), b'"links"' in line)


def test_a_line_of_spans_each_with_its_run_id_is_paired_in_one_step() -> None:
    """The usual line — trace id, run id, trace id, run id ... — takes the pairing in C; the walk and the
    scan by position agree with it."""
    line = _line(_span(T1, _attr("agent.run.id", "r1")), _span(T2, _attr("agent.run.id", "r2")))
    found = _MENTIONS.findall(line)
    assert [bool(trace) for trace, _ in found] == [True, False, True, False]
    assert _pairs(line) == _links_by_position(line) == {(T1, None), (T2, None), (T1, "r1"), (T2, "r2")}


def test_a_line_says_whether_it_may_hold_span_links() -> None:
    """The same scan finds the member ``"links"``: a line without it holds no span links (the run
    index follows links only when some line may hold them)."""
    plain = _line(_span(T1, _attr("agent.run.id", "r1")))
    linked = json.loads(plain)
    linked["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["links"] = [
        {"traceId": T2, "spanId": "eee19b7ec3c1b174"}
    ]
    assert raw_index(plain) == ({(T1, None), (T1, "r1")}, False)
    assert raw_index(json.dumps(linked).encode()) == ({(T1, None), (T2, None), (T1, "r1")}, True)
    value_first = _line(_span(T1, _attr("agent.run.id", "r1", value_first=True)))
    assert raw_index(value_first) == ({(T1, None), (T1, "r1")}, False)
    linked["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["attributes"] = [
        _attr("agent.run.id", "r1", True)
    ]
    assert raw_index(json.dumps(linked).encode()) == ({(T1, None), (T2, None), (T1, "r1")}, True)


# The compact line's substring search (``rawindex.compact_index``) must give what the scan gives, on
# lines built to trip it: names and values that begin with "trace" or hold a run id key, escapes, a
# run id key twice in a span (an event's), spans without a run id, a second trace id spelling.
_tricky_text = st.sampled_from(  # mostly plain, so that many lines take the compact search
    [
        "s",
        "s",
        "s",
        "s",
        "s",
        "s",
        "trace export",
        "tracer",
        'x"traceId":"y',
        "agent.run.id",
        '"agent.run.id"',
        "r\\1",
        "links",
    ]
)
_tricky_attr = st.one_of(
    _run_attr,
    st.builds(_attr, _tricky_text, _tricky_text),
    st.builds(_attr, st.just("agent.run.id"), _tricky_text),
)
_links = st.sampled_from(  # mostly none; links written trace id first (as writers do) or after
    [
        *[None] * 12,
        [],
        [{"traceId": T2, "spanId": "c16e2284c10faa41"}],
        [{"spanId": "c16e2284c10faa41", "traceId": T2}],
        [{"traceId": T1, "spanId": "c16e2284c10faa41"}, {"spanId": "c16e2284c10faa42", "traceId": T2}],
    ]
)
# Mostly the 32-digit ids every writer gives, so that many lines take the compact search at all.
_usual_ids = st.sampled_from([*[T1, T2] * 8, T1.upper(), "zz", "", T1_BASE64])
_tricky_span = st.builds(
    lambda trace_id, name, attributes, event, spelling, links: {
        **({"trace_id": trace_id} if spelling else {"traceId": trace_id}),
        "spanId": "eee19b7ec3c1b174",
        "name": name,
        "attributes": attributes,
        **({"events": [{"name": "e", "attributes": [_attr("agent.run.id", "r9")]}]} if event else {}),
        **({} if links is None else {"links": links}),
    },
    _usual_ids,
    _tricky_text,
    st.lists(_tricky_attr, max_size=3),
    st.integers(0, 4).map(lambda n: n == 0),  # now and then an event with a run id of its own
    st.integers(0, 9).map(lambda n: n == 0),  # now and then the other spelling of the trace id
    _links,
)


_plain_span = st.builds(
    lambda trace_id, run: _span(trace_id, _attr("tool", "x"), *([_attr("agent.run.id", run)] if run else [])),
    _usual_ids,
    st.sampled_from(["r1", "r2", None]),
)


@settings(max_examples=400, deadline=None)
@given(
    st.lists(st.one_of(_plain_span, _plain_span, _plain_span, _tricky_span), min_size=1, max_size=5),
    st.sampled_from([*[[]] * 7, [_attr("agent.run.id", "r0")]]),
    st.sampled_from([b'"links":[', b'"links":[', b'"links": [', b'"links":[ ']),
)
def test_the_compact_search_pairs_as_the_scan(spans: list[dict], resource: list[dict], links: bytes) -> None:
    """Same pairs; and a line holding a span link is always said to (the scan says so of any line
    naming "links", the compact search only reads lines without a link), however its array is spelt."""
    request = {"resourceSpans": [{"resource": {"attributes": resource}, "scopeSpans": [{"spans": spans}]}]}
    line = json.dumps(request, separators=(",", ":")).encode().replace(b'"links":[', links)
    pairs, linked = raw_index(line)
    scanned_pairs, scanned_linked = _scanned_index(line)
    assert pairs == scanned_pairs
    assert pairs == _links_by_position(line)
    if any(span.get("links") for span in spans):
        assert linked
    else:
        assert linked == scanned_linked or compact_index(line) is not None


def test_the_usual_compact_line_is_read_by_the_substring_search() -> None:
    """The benchmark's and the SDK's lines take the fast path (a line it cannot vouch for is scanned)."""
    spans = [_span(T1, _attr("tool", "x"), _attr("agent.run.id", "r1")), _span(T2, _attr("tool", "y"))]
    line = json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}, separators=(",", ":")).encode()
    assert compact_index(line) == {(T1, None), (T2, None), (T1, "r1")}
    assert compact_index(line.replace(b'"traceId":"', b'"traceId": "')) is None  # spelt otherwise


def test_a_trace_id_of_another_length_is_left_to_the_scan() -> None:
    """The compact search cuts a trace id as 32 characters and a quote: a valid id of another length
    (base64, 24 characters) is read by the scan, even when a quote falls where a 32-character id's
    would end (here, after the 5-letter member name that follows it)."""
    span = {
        "traceId": T1_BASE64,
        "flags": 1,
        "spanId": "eee19b7ec3c1b174",
        "attributes": [_attr("agent.run.id", "r1")],
    }
    line = json.dumps(
        {"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]}, separators=(",", ":")
    ).encode()
    quote_at = line.index(b'"traceId":"') + len(b'"traceId":"') + 32  # a 32-character id's end
    assert line[quote_at : quote_at + 1] == b'"'
    assert compact_index(line) is None
    assert raw_index(line) == _scanned_index(line) == ({(T1, None), (T1, "r1")}, False)


@pytest.mark.parametrize(
    "spelling",
    [b'"links":[{"traceId"', b'"links": [{"traceId"', b'"links":[ {"traceId"', b'"links" : [{"traceId"'],
)
@pytest.mark.parametrize("trace_id_first", [True, False])
def test_a_line_with_a_span_link_is_said_to_hold_one_however_it_is_spelt(
    spelling: bytes, trace_id_first: bool
) -> None:
    link = (
        {"traceId": T2, "spanId": "c16e2284c10faa41"}
        if trace_id_first
        else {"spanId": "c16e2284c10faa41", "traceId": T2}
    )
    span = {**_span(T1, _attr("agent.run.id", "r1")), "links": [link]}
    line = json.dumps(
        {"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]}, separators=(",", ":")
    ).encode()
    if trace_id_first:
        line = line.replace(b'"links":[{"traceId"', spelling)
    pairs, linked = raw_index(line)
    assert linked
    assert pairs == _scanned_index(line)[0]


def _compact(*spans: dict) -> bytes:
    return json.dumps(
        {"resourceSpans": [{"scopeSpans": [{"spans": list(spans)}]}]}, separators=(",", ":")
    ).encode()


@pytest.mark.parametrize("run", ['run "7"', 'x"', '"agent.run.id"', "r\\1", "caf\u00e9\\"])
def test_a_compact_line_whose_run_id_holds_an_escape_is_left_to_the_scan(run: str) -> None:
    """The compact search ends a run id at its first quote: an escaped quote in it (or any escape) would
    cut it short, so such a line is read by the scan — the run id whole, as JSON reads it. (The
    generated lines above hold such a run id in a compact line about once in a thousand.)"""
    line = _compact(_span(T2), _span(T1, _attr("tool", "x"), _attr("agent.run.id", run)))
    assert b"\\" in line
    assert compact_index(line) is None
    assert raw_index(line) == _scanned_index(line) == ({(T2, None), (T1, None), (T1, run)}, False)


def test_a_compact_trace_id_of_32_characters_holding_an_escape_is_left_to_the_scan() -> None:
    """A trace id written with an escape can be 32 characters long and closed by a quote where the
    compact search cuts, yet it is no id as cut: the compact search must leave such a line to the scan
    (read as cut, the run id after it would be paired with no trace at all). Which trace the scan then
    pairs that run id with is not pinned here: the scan does not read an escaped trace id either."""
    escaped = "\\u0035" + T1[1:27]  # 32 characters of JSON text, 27 once read
    assert len(escaped) == 32
    line = _compact(_span(T2), _span("ESCAPED", _attr("agent.run.id", "r1"))).replace(
        b"ESCAPED", escaped.encode()
    )
    assert json.loads(line)["resourceSpans"][0]["scopeSpans"][0]["spans"][1]["traceId"] == T1[:27]
    assert compact_index(line) is None
    assert raw_index(line) == _scanned_index(line)


@pytest.mark.parametrize(
    "line",
    [
        b'{"resourceSpans":[{"scopeSpans":[{"spans":[{"trace"traceId":"' + T1.encode() + b'"}]}]}]}',
        b'{"resourceSpans":[{"scopeSpans":[{"spans":[{"trace{"traceId":"' + T1.encode() + b'"}]}]}]}',
        b'{"spans":[{"trace',
    ],
)
def test_a_broken_line_cut_into_an_empty_or_bare_segment_is_left_to_the_scan(line: bytes) -> None:
    """The index reads lines before they are parsed, broken ones too: a '"trace' right after another,
    or one after a lone '{', gives the compact search a segment it cannot read — the scan reads the line."""
    assert compact_index(line) is None
    assert raw_index(line) == _scanned_index(line)
