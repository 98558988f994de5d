"""The msgspec reader shares one conversion among a trace's spans whose attributes repeat (#46).

A span whose attribute structs equal those of its trace's last span takes that span's converted
``Attributes``. It must still read exactly what the strict reader reads — for values of every kind,
for values equal in Python but of different types (``2`` and ``2.0``, ``1`` and ``"1"``), and for
lines the strict reader refuses — and count those values for the one-type proof as if it had
converted them again.
"""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from otel_provenance.offline.readers import _convert, _json, _msgspec, otlp_json

TRACES = ("0af7651916cd43dd8448eb211c80319c", "5b8efff798038103d269b633813fc60c")
value = st.sampled_from(
    [
        {"stringValue": "chat"},
        {"stringValue": "1"},
        {"intValue": "1"},
        {"intValue": 1},
        {"intValue": "007"},
        {"boolValue": True},
        {"doubleValue": 2},
        {"doubleValue": 2.0},
        {"arrayValue": {"values": [{"stringValue": "a"}]}},
        {"arrayValue": {"values": [{"intValue": "1"}]}},
        {"stringValue": "a", "intValue": "1"},  # two type members: the line is not vouched for
        {},
    ]
)
attribute = st.builds(lambda k, v: {"key": k, "value": v}, st.sampled_from(["a", "b", "agent.run.id"]), value)
templates = st.lists(st.lists(attribute, max_size=3), min_size=1, max_size=3)
picks = st.lists(st.tuples(st.integers(0, 2), st.integers(0, 1)), min_size=1, max_size=8)


def _line(attribute_lists: list[list[dict]], chosen: list[tuple[int, int]]) -> bytes:
    spans = [
        {
            "traceId": TRACES[trace],
            "spanId": f"{n + 1:016x}",
            "name": "s",
            "kind": 1,
            "startTimeUnixNano": "1",
            "endTimeUnixNano": "2",
            "attributes": attribute_lists[index % len(attribute_lists)],
            "status": {},
        }
        for n, (index, trace) in enumerate(chosen)
    ]
    request = {"resourceSpans": [{"resource": {}, "scopeSpans": [{"scope": {}, "spans": spans}]}]}
    return json.dumps(request, separators=(",", ":")).encode()


def _strict(raw: bytes) -> str:
    try:
        return repr(otlp_json.spans_from_request(_json.loads(raw)))
    except _convert._Bad:
        return "error"


@settings(max_examples=500, deadline=None)
@given(attribute_lists=templates, chosen=picks)
def test_repeated_attributes_read_as_the_strict_reader_reads_them(attribute_lists, chosen) -> None:
    raw = _line(attribute_lists, chosen)
    unknown = _convert.unknown_values
    strict = _strict(raw)
    _convert.unknown_values = unknown
    fast = _msgspec.spans(raw)
    if fast is None:
        assert _convert.unknown_values == unknown
        return
    assert strict != "error"
    assert repr(fast) == strict


def test_a_traces_repeated_plain_attributes_are_converted_once() -> None:
    plain = [{"key": "a", "value": {"stringValue": "chat"}}, {"key": "b", "value": {"intValue": "812"}}]
    mixed = [{"key": "a", "value": {"doubleValue": 2}}]
    raw = _line([plain, mixed], [(0, 0), (0, 0), (0, 1), (1, 0), (1, 0)])
    spans = _msgspec.spans(raw)
    assert spans is not None and repr(spans) == _strict(raw)
    assert spans[1].attributes is spans[0].attributes  # the same trace, equal plain structs
    assert spans[2].attributes is not spans[0].attributes  # another trace converts its own
    assert spans[4].attributes is not spans[3].attributes  # a double is converted each time
    assert spans[4].attributes == spans[3].attributes


def test_a_repeated_value_of_two_types_still_sends_the_line_to_the_strict_reader() -> None:
    twice = [{"key": "a", "value": {"stringValue": "x"}}, {"key": "b", "value": {"stringValue": "y"}}]
    raw = _line([twice], [(0, 0), (0, 0)])
    assert _msgspec.spans(raw) is not None
    odd = raw.replace(b'{"stringValue":"y"}', b'{"stringValue":"y","intValue":"1"}', 2)
    assert _msgspec.spans(odd) is None  # the proof counted the shared values as converted


def test_spans_past_the_sharing_budget_are_still_converted_each_as_the_strict_reader_reads_them() -> None:
    """The generated lines hold at most eight spans: never enough misses to spend the sharing budget
    (32), after which each span's attributes are converted without a look-up. Past it — and for spans
    of one trace whose attributes differ only in their values — every span reads what it holds."""
    distinct = [
        [{"key": "a", "value": {"stringValue": f"v{n}"}}, {"key": "b", "value": {"intValue": str(n)}}]
        for n in range(40)
    ]
    raw = _line(distinct, [(n, 0) for n in range(40)] + [(39, 0), (0, 0), (7, 0)])
    spans = _msgspec.spans(raw)
    assert spans is not None and repr(spans) == _strict(raw)
    assert [s.attributes["a"] for s in spans] == [f"v{n}" for n in range(40)] + ["v39", "v0", "v7"]
    assert [s.attributes["b"] for s in spans[-3:]] == [39, 0, 7]
