"""How one SigNoz row becomes a Span: ids, times, kinds and statuses checked, each value typed back.

These rows are what SigNoz answers (see signoz_double); the malformed ones are what a broken or foreign
server could answer, which the double never does, so they are given to the row converter directly.
"""

from __future__ import annotations

import logging
import math
import os
import time

import pytest

from otel_provenance.errors import TraceReadError
from otel_provenance.offline.model import SpanKind, StatusCode
from otel_provenance.offline.readers.signoz import _is_default, _layers, _span, _timestamp_ns, _value
from otel_provenance.offline.readers.signoz_query import FieldKey

URL = "http://signoz.test"
TRACE, SPAN, PARENT = "0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331", "00f067aa0ba902b7"
TS = "2025-07-31T00:56:48.40583808Z"
TS_NS = 1_753_923_408_405_838_080


def _s(name: str, data_type: str = "string") -> FieldKey:
    return FieldKey(name, "span", data_type)


def _a(name: str, data_type: str = "string") -> FieldKey:
    return FieldKey(name, "attribute", data_type)


def _r(name: str) -> FieldKey:
    return FieldKey(name, "resource", "string")


def _row(**overrides: object) -> dict:
    row: dict = {
        "timestamp": TS,
        _s("parent_span_id"): PARENT,
        _s("name"): "execute_tool payment.refund",
        _s("kind", "number"): 3,
        _s("duration_nano", "number"): 1500,
        _s("status_code", "number"): 2,
        _s("status_message"): "timeout",
    }
    for name, value in overrides.items():
        key = next((k for k in row if isinstance(k, FieldKey) and k.name == name), name)
        if value is _DROP:
            del row[key]
        else:
            row[key] = value
    return row


_DROP = object()


def test_a_row_becomes_a_span_with_every_intrinsic() -> None:
    row = _row()
    row[_a("agent.retry.number", "number")] = 2
    row[_a("agent.idempotency.present", "bool")] = False
    row[_a("absent")] = None
    row[_r("service.version")] = "v2"
    span = _span(URL, TRACE, SPAN, row)
    assert (span.trace_id, span.span_id, span.parent_span_id) == (TRACE, SPAN, PARENT)
    assert span.name == "execute_tool payment.refund" and span.kind is SpanKind.CLIENT
    assert span.start_ns == TS_NS and span.end_ns == TS_NS + 1500
    assert span.status.code is StatusCode.ERROR and span.status.message == "timeout"
    assert dict(span.attributes) == {"agent.retry.number": 2, "agent.idempotency.present": False}
    assert dict(span.resource) == {"service.version": "v2"}


def test_a_root_has_no_parent_and_missing_names_kinds_and_statuses_are_the_defaults() -> None:
    span = _span(
        URL,
        TRACE,
        SPAN,
        _row(parent_span_id="", name=None, kind=None, status_code=None, status_message=None, duration_nano=0),
    )
    assert span.parent_span_id is None and span.name == ""
    assert span.kind is SpanKind.UNSPECIFIED and span.status.code is StatusCode.UNSET
    assert span.status.message == "" and span.end_ns == span.start_ns  # a zero duration is a duration
    assert _span(URL, TRACE, SPAN, _row(parent_span_id=_DROP)).parent_span_id is None


@pytest.mark.parametrize(
    ("trace_id", "span_id", "shown"),
    [
        (TRACE[:-1], SPAN, f"{TRACE[:-1]}/{SPAN}"),
        (TRACE + "0", SPAN, f"{TRACE}0/{SPAN}"),
        (TRACE.upper(), SPAN, f"{TRACE.upper()}/{SPAN}"),
        (TRACE, SPAN[:-1], f"{TRACE}/{SPAN[:-1]}"),
        (TRACE, "g" + SPAN[1:], f"{TRACE}/g{SPAN[1:]}"),
        ("X" + TRACE[1:], SPAN, f"X{TRACE[1:]}/{SPAN}"),
        ("", "", "?/?"),
    ],
)
def test_ids_that_are_not_lowercase_hex_of_the_right_length_are_refused(
    trace_id: str, span_id: str, shown: str
) -> None:
    with pytest.raises(TraceReadError) as info:
        _span(URL, trace_id, span_id, _row())
    assert str(info.value) == (
        f"{URL}: span {shown}: trace_id must be 32 and span_id 16 lowercase hex digits"
    )


@pytest.mark.parametrize(
    ("overrides", "problem"),
    [
        ({"parent_span_id": "00F067AA0BA902B7"}, "parent_span_id is not 16 lowercase hex digits"),
        ({"parent_span_id": "00f067aa0ba902b"}, "parent_span_id is not 16 lowercase hex digits"),
        ({"timestamp": _DROP}, "timestamp or duration_nano missing or malformed"),
        ({"timestamp": "2025-07-31 00:56:48"}, "timestamp or duration_nano missing or malformed"),
        ({"duration_nano": _DROP}, "timestamp or duration_nano missing or malformed"),
        ({"duration_nano": -1}, "timestamp or duration_nano missing or malformed"),
        ({"duration_nano": 1.5}, "timestamp or duration_nano missing or malformed"),
        ({"duration_nano": True}, "timestamp or duration_nano missing or malformed"),
        ({"kind": 6}, "kind or status_code out of range"),
        ({"kind": "server"}, "kind or status_code out of range"),
        ({"status_code": 3}, "kind or status_code out of range"),
        ({"status_code": [2]}, "kind or status_code out of range"),
    ],
)
def test_a_malformed_intrinsic_is_a_read_error_naming_the_span(overrides: dict, problem: str) -> None:
    with pytest.raises(TraceReadError) as info:
        _span(URL, TRACE, SPAN, _row(**overrides))
    assert str(info.value) == f"{URL}: span {TRACE}/{SPAN}: {problem}"


def test_an_attribute_with_the_name_of_an_intrinsic_stays_an_attribute() -> None:
    row = _row()
    row[_a("name")] = "attr-called-name"
    row[_r("kind")] = "resource-kind"
    span = _span(URL, TRACE, SPAN, row)
    assert span.name == "execute_tool payment.refund" and span.kind is SpanKind.CLIENT
    assert dict(span.attributes) == {"name": "attr-called-name"}
    assert dict(span.resource) == {"kind": "resource-kind"}


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("2025-07-31T00:56:48.40583808Z", TS_NS),
        ("2025-07-31T00:56:48Z", TS_NS - 405_838_080),
        ("2025-07-31T00:56:48.000000001Z", TS_NS - 405_838_079),
        ("2025-07-31T00:56:48.1234567891Z", TS_NS - 405_838_080 + 123_456_789),  # past ns: cut, not rounded
        ("1970-01-01T00:00:00Z", 0),
        (TS_NS, TS_NS),
        (0, 0),
        (True, None),
        (float(TS_NS), None),
        (None, None),
        ("2025-07-31T00:56:48.405", None),
        ("2025-07-31T00:56:48.4O5Z", None),
        ("2025-07-31T00:56:48.-1Z", None),
        ("2025-13-31T00:56:48.405Z", None),
        ("Z", None),
        ("2025-07-31T00:56:48.1.2Z", None),  # one fraction, after the last colon-separated field
    ],
)
def test_timestamps_are_exact_nanoseconds_or_none(value: object, expected: int | None) -> None:
    assert _timestamp_ns(value) == expected


def test_timestamps_are_utc_whatever_the_local_time_zone() -> None:
    saved = os.environ.get("TZ")
    os.environ["TZ"] = "America/New_York"
    time.tzset()
    try:
        assert _timestamp_ns(TS) == TS_NS
    finally:
        if saved is None:
            del os.environ["TZ"]
        else:
            os.environ["TZ"] = saved
        time.tzset()


@pytest.mark.parametrize(
    ("field", "value", "expected"),
    [
        (_a("b", "bool"), True, True),
        (_a("b", "bool"), False, False),
        (_a("b", "bool"), 1, None),
        (_a("b", "bool"), "true", None),
        (_a("n", "number"), 7, 7),
        (_a("n", "number"), -7.0, -7),
        (_a("n", "number"), 0.125, 0.125),
        (_a("n", "number"), "12", 12),
        (_a("n", "number"), "2.5", 2.5),
        (_a("n", "number"), "not a number", None),
        (_a("n", "number"), True, None),
        (_a("n", "number"), [1], None),
        (_a("s"), "text", "text"),
        (_a("s"), "", ""),
        (_a("s"), 5, "5"),
        (_a("s"), {"a": 1}, '{"a": 1}'),
        (_a("agent.violations"), '["a", 1, 2.5, true]', ("a", 1, 2.5, True)),
        (_a("agent.violations"), "[]", ()),
        (_a("agent.violations"), "not json [", "not json ["),
        (_a("agent.violations"), '{"a": 1}', '{"a": 1}'),
        (_a("agent.violations"), '["a", ["nested"]]', '["a", ["nested"]]'),
        (_a("agent.violations"), '["a", null]', '["a", null]'),
        (_a("gen_ai.response.finish_reasons"), ["stop"], ("stop",)),
        (_r("process.command_args"), '["python", "-m"]', ("python", "-m")),
        (_r("process.pid"), "4242", 4242),
        (_r("process.parent_pid"), "-1", -1),
        (_r("process.pid"), "42a", "42a"),
        (_r("process.pid"), "", ""),
        (_r("process.pid"), "X5", "X5"),
        (_r("process.pid"), "5-", "5-"),
        (_r("service.version"), "2", "2"),
        (_a("process.pid"), "4242", "4242"),
        (_a("s"), None, None),
        (_a("n", "number"), None, None),
    ],
)
def test_values_come_back_typed_as_far_as_signoz_keeps_them(
    field: FieldKey, value: object, expected: object
) -> None:
    got = _value(field, value)
    assert got == expected and type(got) is type(expected)


@pytest.mark.parametrize(
    ("text", "check"),
    [("NaN", math.isnan), ("Inf", lambda x: x == math.inf), ("-Inf", lambda x: x == -math.inf)],
)
def test_signoz_non_finite_number_strings_come_back_as_floats(text: str, check) -> None:
    got = _value(_a("n", "number"), text)
    assert isinstance(got, float) and check(got)


@pytest.mark.parametrize(
    ("field", "value", "default"),
    [
        (_a("s"), "", True),
        (_a("s"), "x", False),
        (_a("n", "number"), 0, True),
        (_a("n", "number"), 0.0, False),  # a float is a real value, the map default is an integer 0
        (_a("n", "number"), False, False),
        (_a("n", "number"), 1, False),
        (_a("b", "bool"), False, True),
        (_a("b", "bool"), 0, False),
        (_a("b", "bool"), True, False),
        (_a("s"), None, False),
        (_a("b", "bool"), None, False),
    ],
)
def test_only_the_map_default_of_the_keys_own_type_is_a_suspect(
    field: FieldKey, value: object, default: bool
) -> None:
    assert _is_default(field, value) is default


def test_layers_put_each_name_once_per_query_and_never_beside_an_intrinsic(
    caplog: pytest.LogCaptureFixture,
) -> None:
    keys = [
        _a("mixed"),
        _a("mixed", "number"),
        _a("mixed", "bool"),
        _a("name"),
        _r("duration_nano"),
        _a("trace_id"),
        _r("span_id"),
        _a("timestamp", "number"),
        _a("plain"),
    ]
    with caplog.at_level(logging.WARNING):
        layers = _layers(keys)
    assert layers == [
        [_a("mixed"), _a("plain")],
        [_a("mixed", "number"), _a("name"), _r("duration_nano")],
        [_a("mixed", "bool")],
    ]
    assert [r.getMessage() for r in caplog.records] == [
        f"attribute {n!r} shares its name with a column SigNoz always returns; not read"
        for n in ("trace_id", "span_id", "timestamp")
    ]


def test_no_keys_is_one_empty_layer() -> None:
    assert _layers([]) == [[]]
