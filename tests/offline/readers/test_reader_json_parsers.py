"""#13: the OTLP JSON reader parses with orjson when it is installed (the ``fast`` extra) and with the
standard library otherwise — the same spans, the same errors, the same refusals either way.

Each reader test runs under both parsers (the stdlib run switches orjson off), and again with msgspec
(#46: the first fast path, ``readers/_msgspec.py``), and compares the outcomes; the property tests
hold ``loads_fast`` to "the strict parser's document, or None" on generated JSON, duplicate member
names included."""

from __future__ import annotations

import json
import math
from pathlib import Path

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from offline_helpers import Recorder, reference_runs, write_jsonl
from otel_provenance.errors import TraceReadError
from otel_provenance.offline.readers import ReadReport, _json, _msgspec, iter_runs, read_spans

SPAN = (
    '{"traceId":"0af7651916cd43dd8448eb211c80319c","spanId":"b7ad6b7169203331","name":"s",'
    '"kind":1,"startTimeUnixNano":"1","endTimeUnixNano":"2","attributes":[ATTRS]}'
)


def _line(attrs: str) -> str:
    return (
        '{"resourceSpans":[{"resource":{},"scopeSpans":[{"scope":{},"spans":['
        + SPAN.replace("ATTRS", attrs)
        + "]}]}]}\n"
    )


def _outcome(path: Path, monkeypatch: pytest.MonkeyPatch, fast: bool, msgspec: bool = False):
    """What reading ``path`` gives with orjson on or off (msgspec, the first of the fast paths, off
    unless asked for): the spans and unknown-value count, or the error."""
    with monkeypatch.context() as m:
        if not msgspec:
            m.setattr(_msgspec, "msgspec", None)
        if not fast:
            m.setattr(_json, "_orjson", None)
        report = ReadReport()
        try:
            spans = list(read_spans([path], report=report))
        except TraceReadError as exc:
            return ("error", str(exc), exc.line)
        runs = list(iter_runs([path]))
        return ("spans", spans, report.unknown_values, runs)


def _same_either_way(path: Path, monkeypatch: pytest.MonkeyPatch):
    fast, slow = _outcome(path, monkeypatch, True), _outcome(path, monkeypatch, False)
    assert repr(fast) == repr(slow)  # repr: tells 1 from 1.0 from True, and nan compares equal
    assert repr(_outcome(path, monkeypatch, True, msgspec=True)) == repr(slow)  # and with msgspec
    return fast


def test_orjson_is_installed_with_the_test_extra() -> None:
    assert _json._orjson is orjson


def test_sdk_written_traces_read_the_same_and_take_the_fast_path(tmp_path: Path, monkeypatch) -> None:
    approved, _ = reference_runs()
    path = write_jsonl(approved, tmp_path / "t.jsonl", batch=3)
    lines = path.read_bytes().splitlines()
    assert lines and all(_json.loads_fast(line) == _json.loads(line) for line in lines)
    outcome = _same_either_way(path, monkeypatch)
    assert outcome[0] == "spans" and len(outcome[1]) == len(approved)


def test_typed_values_read_the_same(tmp_path: Path, monkeypatch) -> None:
    rec = Recorder()
    with rec.span("s", {"i": 7, "f": 0.1, "b": True, "s": "a:b", "t": ("x", "y"), "n": (1, 2), "d": 1e300}):
        pass
    path = write_jsonl(rec.spans(), tmp_path / "t.jsonl")
    outcome = _same_either_way(path, monkeypatch)
    attrs = outcome[1][0].attributes
    assert attrs["i"] == 7 and type(attrs["i"]) is int and attrs["f"] == 0.1 and attrs["b"] is True
    assert attrs["s"] == "a:b" and attrs["n"] == (1, 2) and attrs["d"] == 1e300


DUPLICATES = [
    '{"key":"approved","value":{"boolValue":false},"value":{"boolValue":true}}',
    '{"key":"approved","value":{"boolValue":false,"boolValue":true}}',
    '{"key":"approved","key":"other","value":{"boolValue":true}}',
    '{"key":"a","value":{"stringValue":"x"},"value":{"stringValue":"\\u003a"}}',
    # the kept value's escaped colon, written back as ":", makes up for the dropped member's one
    # colon in a plain count: only the escape itself tells
    '{"key":"a","value":{"stringValue":"x","stringValue":"\\u003a"}}',
    '{"key":"a","value":{"stringValue":"x","stringValue":"\\u003A"}}',
]


@pytest.mark.parametrize("attribute", DUPLICATES)
def test_duplicate_members_are_refused_by_both_parsers(tmp_path: Path, monkeypatch, attribute: str) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text(_line('{"key":"ok","value":{"stringValue":"1"}}') + _line(attribute))
    outcome = _same_either_way(path, monkeypatch)
    assert outcome[0] == "error" and "duplicate JSON member name" in outcome[1] and outcome[2] == 2
    assert _json.loads_fast(_line(attribute).encode()) is None


@pytest.mark.parametrize(
    ("attribute", "expected"),
    [
        # integers beyond 64 bits: orjson reads them as floats, the stdlib as ints
        ('{"key":"n","value":{"intValue":123456789012345678901234}}', "out of the signed 64-bit range"),
        ('{"key":"n","value":{"intValue":-9223372036854775809}}', "out of the signed 64-bit range"),
        ('{"key":"n","value":{"doubleValue":123456789012345678901234}}', 1.2345678901234568e23),
        ('{"key":"n","value":{"double_value":-123456789012345678901234}}', -1.2345678901234568e23),
        ('{"key":"n","value":{"arrayValue":{"values":[{"doubleValue": 98765432109876543210987}]}}}', None),
        # tokens orjson refuses and the stdlib accepts
        ('{"key":"n","value":{"doubleValue":NaN}}', math.nan),
        ('{"key":"n","value":{"doubleValue":-Infinity}}', -math.inf),
        ('{"key":"n","value":{"stringValue":"\\ud800"}}', "holds a lone surrogate"),
        ('{"key":"n","value":{"stringValue":"\\ud83d\\ude00"}}', "\U0001f600"),  # a pair is one character
        ('{"key":"n","value":{"doubleValue":1e400}}', math.inf),
        # snake_case proto names, alone and clashing
        ('{"key":"n","value":{"string_value":"x"}}', "x"),
        ('{"key":"n","value":{"string_value":"x","stringValue":"y"}}', "is given twice"),
        ('{"key":"n","value":{"bogusValue":1}}', "value of unknown type"),
        ('{"key":"n","value":{"doubleValue":0.30000000000000004}}', 0.30000000000000004),
    ],
)
def test_values_where_the_parsers_differ_read_the_same(tmp_path: Path, monkeypatch, attribute, expected):
    path = tmp_path / "t.jsonl"
    path.write_text(_line(attribute))
    outcome = _same_either_way(path, monkeypatch)
    if isinstance(expected, str) and outcome[0] == "error":
        assert expected in outcome[1]
    elif expected is not None:
        assert outcome[0] == "spans", outcome
        value = outcome[1][0].attributes["n"]
        assert value == expected or (math.isnan(expected) and math.isnan(value))
        assert type(value) is type(expected)


_DOUBLE_RANGE = (
    2**1024 - 2**971
)  # the largest double: beyond, orjson refuses the literal (the strict path decides)


@settings(max_examples=300, deadline=None)
@given(
    st.one_of(
        st.integers(min_value=2**64, max_value=_DOUBLE_RANGE),  # below: a uint64, an int in both parsers
        st.integers(min_value=-_DOUBLE_RANGE, max_value=-(2**63) - 1),
        # halfway between two doubles: round half to even, the case a parser most often gets wrong
        st.tuples(st.integers(2**52, 2**53 - 1), st.integers(12, 960), st.sampled_from((-1, 1))).map(
            lambda t: t[2] * ((t[0] << t[1]) + (1 << (t[1] - 1)))
        ),
    )
)
def test_a_double_written_as_a_long_integer_reads_as_the_same_double(value: int) -> None:
    """orjson reads an integer literal beyond 64 bits as a float: it must be ``float(int)`` exactly,
    the value the strict path gives a doubleValue (there is no guard sending such lines to it)."""
    raw = _line(f'{{"key":"n","value":{{"doubleValue":{value}}}}}').encode()
    fast = _json.loads_fast(raw)
    assert fast is not None  # the fast path
    got = fast["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["attributes"][0]["value"]["doubleValue"]
    assert type(got) is float and got == float(value)


def test_a_big_integer_time_is_an_error_with_the_same_words(tmp_path: Path, monkeypatch) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text(_line("").replace('"startTimeUnixNano":"1"', '"startTimeUnixNano":18446744073709551616'))
    outcome = _same_either_way(path, monkeypatch)
    assert outcome[0] == "error" and "startTimeUnixNano is out of the unsigned 64-bit range" in outcome[1]


# --- loads_fast against the strict parser -----------------------------------------------------------

_scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(alphabet=st.sampled_from('ab:"\\\n\u00e9\U0001f600_'), max_size=6)
)
_keys = st.text(alphabet=st.sampled_from('ab:_"\\V'), max_size=3)
_json_values = st.recursive(
    _scalars,
    lambda inner: st.lists(inner, max_size=4) | st.lists(st.tuples(_keys, inner), max_size=4),
    max_leaves=12,
)


def _dump(node, duplicate: bool, indent: bool) -> str:
    """JSON text of ``node``; a list of pairs is an object (pairs may repeat a name when ``duplicate``)."""
    if isinstance(node, list) and node and all(isinstance(p, tuple) for p in node):
        pairs = node if duplicate else list(dict(node).items())
        sep = ": " if indent else ":"
        return "{" + ",".join(json.dumps(k) + sep + _dump(v, duplicate, indent) for k, v in pairs) + "}"
    if isinstance(node, list):
        return "[" + ", ".join(_dump(v, duplicate, indent) for v in node) + "]"
    return json.dumps(node)


_I64_MIN, _U64_MAX = -(2**63), 2**64 - 1


def _agree(fast, strict) -> bool:
    """``fast`` is ``strict`` with types told apart (1, 1.0, True) — except that an integer beyond the
    64-bit range reads in orjson as ``float(int)``, correctly rounded (the OTLP conversion refuses a
    float in every integer field; a doubleValue reads as that same double either way)."""
    if type(strict) is int and not _I64_MIN <= strict <= _U64_MAX:
        return type(fast) is float and fast == float(strict)
    if type(fast) is not type(strict):
        return False
    if isinstance(strict, dict):
        return list(fast) == list(strict) and all(_agree(fast[k], strict[k]) for k in strict)
    if isinstance(strict, list):
        return len(fast) == len(strict) and all(map(_agree, fast, strict))
    return fast == strict


@settings(max_examples=300, deadline=None)
@given(_json_values, st.booleans(), st.booleans())
def test_loads_fast_is_the_strict_document_or_none(node, duplicate: bool, indent: bool) -> None:
    raw = _dump(node, duplicate, indent).encode()
    try:
        strict = _json.loads(raw)
    except _json.DuplicateMember:
        assert _json.loads_fast(raw) is None  # never a silently merged object
        return
    fast = _json.loads_fast(raw)
    assert fast is None or _agree(fast, strict)
    if node is not None and b"\\u" not in raw:
        assert fast is not None  # valid JSON without escapes does take the fast path


def test_the_reader_parses_each_line_with_orjson_once(tmp_path: Path, monkeypatch) -> None:
    """The fast path is taken by the reader itself, not only offered by ``_json`` (a spy counts)."""
    approved, _ = reference_runs()
    path = write_jsonl(approved, tmp_path / "t.jsonl", batch=4)
    lines = len(path.read_bytes().splitlines())
    calls: list[bytes] = []

    class Spy:
        JSONDecodeError = orjson.JSONDecodeError
        dumps = staticmethod(orjson.dumps)

        @staticmethod
        def loads(raw: bytes):
            calls.append(raw)
            return orjson.loads(raw)

    monkeypatch.setattr(_json, "_orjson", Spy)
    monkeypatch.setattr(_msgspec, "msgspec", None)  # msgspec would read every line first
    assert len(list(read_spans([path]))) == len(approved)
    assert len(calls) == lines
    calls.clear()
    assert sum(len(run.spans) for run in iter_runs([path])) == len(approved)
    assert len(calls) == lines


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ('"0"', 0),
        ('"007"', 7),
        ('"999999999999999999"', 999999999999999999),  # 18 digits: the inlined path
        ('"9223372036854775807"', 2**63 - 1),  # 19 digits: the checked path
        ('"9223372036854775808"', "is out of the signed 64-bit range"),
        ('"-12"', -12),
        ('"+12"', "is not an integer"),
        ('""', "is not an integer"),
        ('" 1"', "is not an integer"),
        ('"\\u0661\\u0662"', "is not an integer"),  # Arabic-Indic digits: isdigit() but not ASCII
        ("12", 12),
        ("1.5", "is not an integer"),
    ],
)
def test_int_values_read_exactly(tmp_path: Path, monkeypatch, raw: str, expected) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text(_line('{"key":"n","value":{"intValue":' + raw + "}}"))
    outcome = _same_either_way(path, monkeypatch)
    if isinstance(expected, str):
        assert outcome[0] == "error" and f"attribute 'n' intValue {expected}" in outcome[1]
    else:
        value = outcome[1][0].attributes["n"]
        assert value == expected and type(value) is int


@pytest.mark.parametrize(
    ("span_id", "parent", "expected"),
    [
        ('"b7ad6b7169203331"', '"00f067aa0ba902b7"', ("b7ad6b7169203331", "00f067aa0ba902b7")),
        ('"B7AD6B7169203331"', '"00F067AA0BA902B7"', ("b7ad6b7169203331", "00f067aa0ba902b7")),
        ('"t61rcWkgMzE="', '"APBnqgupArc="', ("b7ad6b7169203331", "00f067aa0ba902b7")),  # base64
        ('"b7ad6b7169203331"', '""', ("b7ad6b7169203331", None)),
        ('"b7ad6b7169203331"', '"0000000000000000"', "parentSpanId is all zeros"),
        ('"b7ad6b7169203331"', "null", ("b7ad6b7169203331", None)),
        ('"0000000000000000"', '""', "spanId is all zeros"),
        ('"b7ad6b716920333"', '""', "spanId is not a 16-digit hex id"),
        ('"b7ad6b716920333g"', '""', "spanId is not a 16-digit hex id"),
        ("17", '""', "spanId is missing or not a string"),
        ('"b7ad6b7169203331"', '"00f067aa0ba902bz"', "parentSpanId is not a 16-digit hex id"),
        ('"b7ad6b7169203331"', "7", "parentSpanId is missing or not a string"),
    ],
)
def test_span_ids_read_exactly(tmp_path: Path, monkeypatch, span_id: str, parent: str, expected) -> None:
    line = _line("").replace('"spanId":"b7ad6b7169203331"', f'"spanId":{span_id},"parentSpanId":{parent}')
    path = tmp_path / "t.jsonl"
    path.write_text(line)
    outcome = _same_either_way(path, monkeypatch)
    if isinstance(expected, str):
        assert outcome[0] == "error" and expected in outcome[1]
    else:
        span = outcome[1][0]
        assert (span.span_id, span.parent_span_id) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ('{"doubleValue":"2.5"}', 2.5),  # the proto3 JSON mapping allows a double as a string
        ('{"doubleValue":"Infinity"}', math.inf),
        ('{"doubleValue":"-Infinity"}', -math.inf),
        ('{"doubleValue":"NaN"}', math.nan),
        ('{"doubleValue":"two"}', "attribute 'n': doubleValue has the wrong JSON type"),
        ('{"stringValue":"a","intValue":"1"}', "attribute 'n': value must have exactly one type field"),
        ('{"arrayValue":{"values":[{"stringValue":"a"},{"intValue":"x"}]}}', "attribute 'n' intValue is not"),
        (
            '{"arrayValue":{"values":[{"boolValue":"yes"}]}}',
            "attribute 'n': boolValue has the wrong JSON type",
        ),
        ('{"' + "t" * 60 + '":1}', "attribute 'n': value of unknown type '" + "t" * 40 + "'"),  # cut at 40
    ],
)
def test_values_given_as_strings_or_malformed_read_or_are_named(
    tmp_path: Path, monkeypatch, value: str, expected
) -> None:
    """A double may be a JSON string (a number or NaN/Infinity); an error in a value, also inside an
    array, names the attribute's own key."""
    path = tmp_path / "t.jsonl"
    path.write_text(_line('{"key":"n","value":' + value + "}"))
    outcome = _same_either_way(path, monkeypatch)
    if isinstance(expected, str):
        assert outcome[0] == "error" and expected in outcome[1], outcome
    else:
        read = outcome[1][0].attributes["n"]
        assert type(read) is float and (read == expected or (math.isnan(expected) and math.isnan(read)))


# "\u003a" (an escaped colon) in a line sends it to the strict parser even with orjson installed
ESCAPED = "a\\u003ab"


def _run_line(run: str, trace: int, value: str = "x") -> str:
    attrs = (
        f'{{"key":"agent.run.id","value":{{"stringValue":"{run}"}}}},'
        f'{{"key":"v","value":{{"stringValue":"{value}"}}}}'
    )
    return _line(attrs).replace("0af7651916cd43dd8448eb211c80319c", f"{trace:032x}")


@pytest.mark.parametrize("parser", ["msgspec", "orjson", "stdlib"])
def test_keep_applies_to_lines_either_parser_reads(tmp_path: Path, monkeypatch, parser: str) -> None:
    path = tmp_path / "t.jsonl"
    lines = [_run_line("r1", 1, ESCAPED), _run_line("r2", 2, ESCAPED), _run_line("r1", 3), _run_line("r2", 4)]
    path.write_text("".join(lines))
    with monkeypatch.context() as m:
        if parser != "msgspec":
            m.setattr(_msgspec, "msgspec", None)
        if parser == "stdlib":
            m.setattr(_json, "_orjson", None)
        spans = list(read_spans([path], keep=lambda key: key == "r2"))
    assert sorted(s.trace_id for s in spans) == [f"{2:032x}", f"{4:032x}"]
    assert {s.attributes["v"] for s in spans} == {"a:b", "x"}


def test_a_logs_line_left_to_the_strict_parser_is_skipped_as_logs(tmp_path: Path, monkeypatch) -> None:
    logs = '{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"body":{"stringValue":"' + ESCAPED + '"}}]}]}]}\n'
    path = tmp_path / "t.jsonl"
    path.write_text(_run_line("r1", 1) + logs)
    assert _json.loads_fast(logs.encode()) is None
    for fast in (True, False):
        with monkeypatch.context() as m:
            if not fast:
                m.setattr(_json, "_orjson", None)
                m.setattr(_msgspec, "msgspec", None)
            report = ReadReport()
            assert len(list(read_spans([path], report=report))) == 1
        assert [str(s) for s in report.skipped] == [f"{path}: skipped 1 logs line (not traces)"]


def test_unknown_values_are_counted_over_every_line(tmp_path: Path, monkeypatch) -> None:
    unknown = '{"key":"u","value":{"stringValueStrindex":3}}'
    path = tmp_path / "t.jsonl"
    path.write_text(_line(unknown) + _line(unknown).replace("b7ad6b7169203331", "00f067aa0ba902b7"))
    outcome = _same_either_way(path, monkeypatch)
    assert outcome[0] == "spans" and len(outcome[1]) == 2 and outcome[2] == 2


def test_keep_applies_to_a_whole_json_document(tmp_path: Path) -> None:
    """A pretty-printed request (one document, not JSON Lines) is read in one piece."""
    requests = [json.loads(_run_line(run, trace)) for run, trace in (("r1", 1), ("r2", 2), ("r1", 3))]
    document = {"resourceSpans": [rs for request in requests for rs in request["resourceSpans"]]}
    path = tmp_path / "t.json"
    path.write_text(json.dumps(document, indent=2))
    spans = list(read_spans([path], keep=lambda key: key == "r1"))
    assert sorted(s.trace_id for s in spans) == [f"{1:032x}", f"{3:032x}"]


# The generated names above never spell a proto field, so ``_to_camel`` renames nothing there: these
# draw the snake_case names, their lowerCamelCase twins and a name that is neither, so that an object
# holds a name to rename, both spellings of one field (refused), or only names left as they are.
_proto_keys = st.sampled_from(
    ["trace_id", "traceId", "string_value", "stringValue", "span_id", "tool_x", "a"]
)
_proto_values = st.recursive(
    st.integers(-3, 3) | st.text(alphabet="ab_:", max_size=3),
    lambda inner: (
        st.lists(inner, max_size=3) | st.lists(st.tuples(_proto_keys, inner), min_size=1, max_size=3)
    ),
    max_leaves=8,
)


@settings(max_examples=200, deadline=None)
@given(_proto_values, st.booleans())
def test_loads_fast_renames_snake_case_members_as_the_strict_parser_does(node, indent: bool) -> None:
    raw = _dump(node, False, indent).encode()
    try:
        strict = _json.loads(raw)
    except _json._Bad as exc:
        assert "is given twice" in str(exc)  # both spellings of one field: never one of them kept
        assert _json.loads_fast(raw) is None
        return
    fast = _json.loads_fast(raw)
    assert node is None or fast is not None
    assert fast is None or _agree(fast, strict)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (
            b'{"trace_id":"x","span_id":{"string_value":"y"}}',
            {"traceId": "x", "spanId": {"stringValue": "y"}},
        ),
        (b'[{"tool_x":1,"parent_span_id":""}]', [{"tool_x": 1, "parentSpanId": ""}]),  # only proto names
        (b'{"a":{"string_value":"x","stringValue":"y"}}', None),  # both spellings: loads refuses it
        (b'{"trace_id":"x","traceId":"x"}', None),
    ],
)
def test_loads_fast_renames_snake_case_members_or_leaves_the_line_to_loads(raw: bytes, expected) -> None:
    assert _json.loads_fast(raw) == expected
    if expected is None:
        with pytest.raises(_json._Bad, match="is given twice"):
            _json.loads(raw)
    else:
        assert _json.loads(raw) == expected
