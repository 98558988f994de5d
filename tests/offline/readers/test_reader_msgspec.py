"""#46: the msgspec fast path reads a line exactly as the strict reader does, or leaves it to it.

``_msgspec.spans(line)`` must be the strict reader's spans (``_json.loads`` then
``otlp_json.spans_from_request``) — or None, and never a result where the strict reader raises. The
property generates requests whose attribute values are of every type, empty, with two type members or
a duplicate member, whose ids and times are written every way the reader accepts, with events and
with snake_case names, and compares the two readers on each. The reader itself takes the fast path
on what the official SDK's exporter writes (a spy counts the decodes).
"""

from __future__ import annotations

import json
from pathlib import Path

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from offline_helpers import reference_runs, write_jsonl
from otel_provenance.offline.readers import _convert, _json, _msgspec, otlp_json, read_spans

values = st.one_of(
    st.text(max_size=4).map(lambda t: {"stringValue": t}),
    st.text(max_size=4).map(lambda t: {"stringValue": t}),
    st.integers(0, 99).map(lambda n: {"intValue": str(n)}),
    st.integers(-(2**64), 2**64).map(lambda n: {"intValue": str(n)}),
    st.integers(-5, 5).map(lambda n: {"intValue": n}),
    st.sampled_from(["007", "", "1e3", " 1", "-0"]).map(lambda t: {"intValue": t}),
    st.booleans().map(lambda b: {"boolValue": b}),
    st.sampled_from([1.5, 2, "NaN", "-Infinity", "x"]).map(lambda d: {"doubleValue": d}),
    st.lists(st.sampled_from([{"stringValue": "a"}, {"intValue": "1"}, {}]), max_size=2).map(
        lambda vs: {"arrayValue": {"values": vs}}
    ),
    st.just({"kvlistValue": {"values": [{"key": "k", "value": {"stringValue": "v"}}]}}),
    st.just({"bytesValue": "aGk="}),
    st.just({"stringValueStrindex": 1}),
    st.just({}),
    st.just(None),
)
odd_values = st.sampled_from([{"stringValue": "a", "intValue": "1"}, {"intValue": "1", "boolValue": True}])
keys = st.sampled_from(["a", "b", "agent.run.id", "gen_ai.operation.name"])
attribute = st.builds(
    lambda k, v: {"key": k} if v is None else {"key": k, "value": v},
    keys,
    st.one_of(*[values] * 12, odd_values),  # now and then two type members in one value
)


def mostly(usual: object, *others: object) -> st.SearchStrategy:
    """``usual`` nine times in ten, else one of ``others``: most generated lines are valid."""
    return st.sampled_from([usual] * 9 * len(others) + list(others))


ids = mostly("b7ad6b7169203331", "B7AD6B7169203331", "t61raWkgMzE=", "0000000000000000", "xyz", None)
parents = mostly("00f067aa0ba902b7", None, "", "00F067AA0BA902B7", "0000000000000000")
times = mostly(  # and what int() takes but a decimal time is not: a sign, blanks, "_", other digits
    "1", 2, "18446744073709551615", "18446744073709551616", "-1", "1.5", "+1", " 1", "1_0", "\u0661", ""
)
span = st.fixed_dictionaries(
    {
        "traceId": st.sampled_from(["0af7651916cd43dd8448eb211c80319c", "0AF7651916CD43DD8448EB211C80319C"]),
        "spanId": ids,
        "parentSpanId": parents,
        "name": st.sampled_from(["s", "execute_tool x"]),
        "kind": mostly(1, 3, 9, "SPAN_KIND_SERVER", "x"),
        "startTimeUnixNano": times,
        "endTimeUnixNano": times,
        "attributes": st.lists(attribute, max_size=4),
        "status": mostly({}, {"code": 2, "message": "m"}, {"code": "STATUS_CODE_OK"}, {"code": 7}),
    },
    optional={
        "events": st.sampled_from([{}, {"foo": 1}, {"stringValue": "a", "intValue": "1"}]).map(
            lambda v: [{"name": "e", "timeUnixNano": "1", "attributes": [{"key": "k", "value": v}]}]
        ),
        "flags": st.just(256),
    },
).map(lambda sp: {k: v for k, v in sp.items() if v is not None})


def _line(spans: list[dict], snake: bool, duplicate: bool) -> bytes:
    text = json.dumps(
        {
            "resourceSpans": [
                {
                    "resource": {"attributes": [{"key": "service.version", "value": {"stringValue": "v1"}}]},
                    "scopeSpans": [{"scope": {"name": "x"}, "spans": spans}],
                }
            ]
        },
        separators=(",", ":"),
    )
    if snake:
        text = text.replace('"traceId"', '"trace_id"', 1)
    if duplicate:
        text = text.replace('"name":"s"', '"name":"s","name":"t"', 1)
    return text.encode()


def _strict(raw: bytes, keep=None):
    try:
        return repr(otlp_json.spans_from_request(_json.loads(raw), keep))
    except _convert._Bad:
        return "error"


def _odd(run_key: str) -> bool:
    """A shard's share: the spans whose run key has an odd length (the others are another's)."""
    return len(run_key) % 2 == 1


@settings(max_examples=400, deadline=None)
@given(st.lists(span, min_size=1, max_size=3), mostly(False, True), mostly(False, True), mostly(False, True))
def test_the_fast_path_is_the_strict_reader_or_none(spans, snake: bool, duplicate: bool, shard: bool) -> None:
    raw = _line(spans, snake, duplicate)
    keep = _odd if shard else None
    unknown = _convert.unknown_values
    strict = _strict(raw, keep)
    _convert.unknown_values = unknown
    fast = _msgspec.spans(raw, keep)
    if fast is None:
        assert _convert.unknown_values == unknown  # left for the strict reader to count
        return
    assert strict != "error"  # never a result where the strict reader refuses the line
    assert repr(fast) == strict


def test_sdk_written_lines_take_the_fast_path(tmp_path: Path, monkeypatch) -> None:
    approved, _ = reference_runs()
    path = write_jsonl(approved, tmp_path / "t.jsonl", batch=3)
    lines = path.read_bytes().splitlines(keepends=True)
    assert all(_msgspec.spans(line) is not None for line in lines)
    decoded: list[bytes] = []
    real = _msgspec._DECODE
    monkeypatch.setattr(_msgspec, "_DECODE", lambda raw: decoded.append(raw) or real(raw))
    assert len(list(read_spans([path]))) == len(approved)
    assert decoded == lines


# Every spelling above that the strict reader accepts, and nothing it refuses: on such lines the fast
# path must be taken as often as it can be and agree (the property above draws mostly refused lines,
# each odd value being drawn in ~1 line of 10, so few of its lines reach the fast path's conversion).
valid_values = st.one_of(
    st.text(max_size=4).map(lambda t: {"stringValue": t}),
    st.integers(-(2**63), 2**63 - 1).map(lambda n: {"intValue": str(n)}),
    st.integers(-5, 5).map(lambda n: {"intValue": n}),
    st.sampled_from(["007", "-0"]).map(lambda t: {"intValue": t}),
    st.booleans().map(lambda b: {"boolValue": b}),
    st.sampled_from([1.5, 2, "NaN", "-Infinity"]).map(lambda d: {"doubleValue": d}),
    st.lists(st.sampled_from([{"stringValue": "a"}, {"intValue": "1"}]), max_size=2).map(
        lambda vs: {"arrayValue": {"values": vs}}
    ),
    st.just({"kvlistValue": {"values": [{"key": "k", "value": {"stringValue": "v"}}]}}),
    st.just({"bytesValue": "aGk="}),
    st.just({}),
    st.just(None),
)
valid_span = st.fixed_dictionaries(
    {
        "traceId": st.sampled_from(["0af7651916cd43dd8448eb211c80319c", "0AF7651916CD43DD8448EB211C80319C"]),
        "spanId": st.sampled_from(["b7ad6b7169203331", "B7AD6B7169203331", "t61raWkgMzE="]),
        "parentSpanId": st.sampled_from(["00f067aa0ba902b7", None, "", "00F067AA0BA902B7"]),
        "name": st.sampled_from(["s", "execute_tool x"]),
        "kind": st.sampled_from([1, 3, "SPAN_KIND_SERVER"]),
        "startTimeUnixNano": st.sampled_from(["1", 2, "18446744073709551615", "1764000003000001000", "007"]),
        "endTimeUnixNano": st.sampled_from(["1", 2, "18446744073709551615", "1764000003000051000"]),
        "attributes": st.lists(
            st.builds(lambda k, v: {"key": k} if v is None else {"key": k, "value": v}, keys, valid_values),
            max_size=4,
            unique_by=lambda kv: kv["key"],
        ),
        "status": st.sampled_from([{}, {"code": 2, "message": "m"}, {"code": "STATUS_CODE_OK"}]),
    },
    optional={"flags": st.just(256)},
).map(lambda sp: {k: v for k, v in sp.items() if v is not None})


@settings(max_examples=300, deadline=None)
@given(st.lists(valid_span, min_size=1, max_size=3), st.booleans())
def test_on_lines_the_strict_reader_accepts_the_fast_path_agrees(spans, shard: bool) -> None:
    raw = _line(spans, False, False)
    keep = _odd if shard else None
    unknown = _convert.unknown_values
    strict = _strict(raw, keep)
    _convert.unknown_values = unknown
    assert strict != "error", raw  # the strategy draws only what the strict reader accepts
    fast = _msgspec.spans(raw, keep)
    if fast is None:
        assert _convert.unknown_values == unknown
        return
    assert repr(fast) == strict


@pytest.mark.parametrize(
    "attribute",
    [
        '{"key":"a","value":{"stringValue":"x","stringValue":"y"}}',
        '{"key":"a","value":{"stringValue":"x","intValue":"1"}}',
        '{"key":"a","key":"b","value":{"stringValue":"x"}}',
        '{"key":"a","value":{"arrayValue":{"values":[{"stringValue":"x","boolValue":true}]}}}',
        '{"key":"a","value":{"arrayValue":{"values":[{}]}}}',
        '{"key":"a","value":{"arrayValue":{"values":[{"stringValue":"x","stringValue":"y"}]}}}',
        '{"key":"a","value":{"stringValue":"x"},"value":{"stringValue":"x"}}',
        # a dropped member's colon made up for by an escaped one: the colon counts alone would agree
        '{"key":"a\\u003a","value":{"stringValue":"x","stringValue":"y"}}',
    ],
)
def test_what_only_the_strict_reader_can_word_is_left_to_it(attribute: str) -> None:
    raw = _line([{"traceId": "0af7651916cd43dd8448eb211c80319c", "spanId": "b7ad6b7169203331"}], False, False)
    raw = raw.replace(
        b'"spanId":"b7ad6b7169203331"',
        b'"spanId":"b7ad6b7169203331","attributes":[' + attribute.encode() + b"]",
    )
    msgspec.json.decode(raw)  # valid JSON
    assert _msgspec.spans(raw) is None
    assert _msgspec.spans(raw + b"\n") is None  # as a file line
    assert _strict(raw) == "error"


@pytest.mark.parametrize(
    "time", ["+1", " 1", "1 ", "1_0", "\u0661", "", "1.5", "-1", "1e3", "18446744073709551616"]
)
def test_a_time_int_would_take_but_no_decimal_is_refused_as_the_strict_reader_refuses_it(time: str) -> None:
    """Times are read inline from their bytes (``bytes.isdigit``): what ``int()`` alone would take —
    a sign, blanks, an underscore, another script's digits — is no unsigned decimal for either path."""
    span = {"traceId": "0af7651916cd43dd8448eb211c80319c", "spanId": "b7ad6b7169203331", "name": "s"}
    for member in ("startTimeUnixNano", "endTimeUnixNano"):
        raw = _line([{**span, member: time}], False, False)
        assert _strict(raw) == "error"
        assert _msgspec.spans(raw) is None


@pytest.mark.parametrize("time", ["1764000003000001000", "007", "0", "18446744073709551615"])
def test_a_decimal_time_is_read_fast_as_the_strict_reader_reads_it(time: str) -> None:
    span = {"traceId": "0af7651916cd43dd8448eb211c80319c", "spanId": "b7ad6b7169203331", "name": "s"}
    raw = _line([{**span, "startTimeUnixNano": time, "endTimeUnixNano": time}], False, False)
    assert repr(_msgspec.spans(raw)) == _strict(raw) != "error"


def test_a_line_msgspec_writes_back_byte_for_byte_is_read_fast_with_or_without_its_newline() -> None:
    raw = _line(
        [{"traceId": "0af7651916cd43dd8448eb211c80319c", "spanId": "b7ad6b7169203331", "name": "s"}],
        False,
        False,
    )
    assert msgspec.json.encode(msgspec.json.decode(raw)) == raw  # written as msgspec writes it
    strict = _strict(raw)
    assert repr(_msgspec.spans(raw)) == repr(_msgspec.spans(raw + b"\n")) == strict != "error"
    duplicate = raw.replace(b'"name":"s"', b'"name":"s","name":"t"')
    assert _msgspec.spans(duplicate) is None and _msgspec.spans(duplicate + b"\n") is None


def test_a_line_in_another_writers_layout_is_still_read_fast() -> None:
    """Spaces after separators and members in another order (as other writers lay lines out): not
    msgspec's own bytes, so the member count vouches for the line — it is read fast, as the strict
    reader reads it, not handed to the strict reader."""
    raw = _line(
        [{"traceId": "0af7651916cd43dd8448eb211c80319c", "spanId": "b7ad6b7169203331", "name": "s: t"}],
        False,
        False,
    )
    request = json.loads(raw)
    span = request["resourceSpans"][0]["scopeSpans"][0]["spans"][0]
    request["resourceSpans"][0]["scopeSpans"][0]["spans"][0] = dict(reversed(span.items()))
    laid_out = json.dumps(request).encode()  # ", " and ": ", the span's members reversed
    assert laid_out != raw and msgspec.json.encode(msgspec.json.decode(laid_out)) != laid_out
    fast = _msgspec.spans(laid_out)
    assert fast is not None
    assert repr(fast) == _strict(laid_out) != "error"


def _shard_line(kept_value: dict, skipped: dict) -> bytes:
    """Two spans: one of run ``run`` (a run key of odd length: kept) holding ``kept_value``, and one of
    run ``run2``, another shard's, with the members ``skipped`` besides."""
    kept = {
        "traceId": "0af7651916cd43dd8448eb211c80319c",
        "spanId": "b7ad6b7169203331",
        "attributes": [
            {"key": "agent.run.id", "value": {"stringValue": "run"}},
            {"key": "a", "value": kept_value},
        ],
    }
    other = {
        "traceId": "5b8efff798038103d269b633813fc60c",
        "spanId": "eee19b7ec3c1b174",
        "attributes": [{"key": "agent.run.id", "value": {"stringValue": "run2"}}],
        **skipped,
    }
    return _line([kept, other], False, False)


def test_a_shard_reads_fast_the_lines_it_shares_with_others() -> None:
    """#46: spans another shard reads (``keep`` rejects them) are not converted, yet their values —
    arrays included — are counted for the proof of one type each: the line is read fast, as the
    strict reader reads it."""
    tags = {"arrayValue": {"values": [{"stringValue": "x"}, {"stringValue": "y"}]}}
    raw = _shard_line({"intValue": "7"}, {"attributes": [{"key": "tags", "value": tags}]})
    fast = _msgspec.spans(raw, _odd)
    assert fast is not None and [span.attributes["a"] for span in fast] == [7]
    assert repr(fast) == _strict(raw, _odd)


def test_a_skipped_spans_event_never_makes_up_for_a_kept_value_of_two_types() -> None:
    """A value of two types in a kept span, and in another shard's span an event value of none: the
    counts in the line agree, but the skipped span's event is checked too, so the line is left to
    the strict reader, which refuses it."""
    event = {"name": "e", "attributes": [{"key": "k", "value": {"foo": 1}}]}
    raw = _shard_line({"stringValue": "x", "intValue": "1"}, {"events": [event]})
    assert _msgspec.spans(raw, _odd) is None
    assert _strict(raw, _odd) == "error"


class _Object(list):
    """An object as its members in order, so that a name can be written twice (a hand-edited line)."""


def _members(node):
    if isinstance(node, dict):
        return _Object((name, _members(value)) for name, value in node.items())
    return [_members(item) for item in node] if isinstance(node, list) else node


def _objects(node):
    """Every object of ``node`` that has a member, outermost first."""
    if isinstance(node, _Object):
        yield from [node] if node else []
        for _, value in node:
            yield from _objects(value)
    elif isinstance(node, list):
        for item in node:
            yield from _objects(item)


def _write(node, comma: str, colon: str) -> str:
    if isinstance(node, _Object):
        return "{" + comma.join(json.dumps(k) + colon + _write(v, comma, colon) for k, v in node) + "}"
    if isinstance(node, list):
        return "[" + comma.join(_write(item, comma, colon) for item in node) + "]"
    return json.dumps(node)


layouts = st.sampled_from([(",", ":"), (", ", ": "), (" ,", " :"), ("\n,\t", "\r\n:\n")])


@settings(max_examples=300, deadline=None)
@given(st.lists(valid_span, min_size=1, max_size=3), st.data(), layouts, st.booleans())
def test_a_member_written_twice_anywhere_is_left_to_the_strict_reader(
    spans, data, layout, shard: bool
) -> None:
    """msgspec keeps the last of two equal member names; the fast path must prove none was dropped.
    Any member of any object of a line the strict reader accepts — a span's, a key-value's, a value's
    type member, the resource's, the status's — written twice with the same value, in any layout
    (blanks around separators, a newline before a colon): the strict reader refuses the line, and
    the fast path leaves it to it, with or without a shard's run filter."""
    tree = _members(json.loads(_line(spans, False, False)))
    target = data.draw(st.sampled_from(list(_objects(tree))))
    name, value = data.draw(st.sampled_from(target))
    target.insert(data.draw(st.integers(0, len(target))), (name, value))
    raw = _write(tree, *layout).encode()
    keep = _odd if shard else None
    unknown = _convert.unknown_values
    assert _strict(raw, keep) == "error"
    _convert.unknown_values = unknown
    assert _msgspec.spans(raw, keep) is None
    assert _convert.unknown_values == unknown


@settings(max_examples=150, deadline=None)
@given(st.lists(valid_span, min_size=1, max_size=3), layouts, st.booleans())
def test_a_line_in_any_layout_agrees_with_the_strict_reader(spans, layout, shard: bool) -> None:
    raw = _write(_members(json.loads(_line(spans, False, False))), *layout).encode()
    keep = _odd if shard else None
    unknown = _convert.unknown_values
    strict = _strict(raw, keep)
    _convert.unknown_values = unknown
    fast = _msgspec.spans(raw, keep)
    assert fast is None or repr(fast) == strict != "error"
