"""The reader against SigNoz as it answers from v0.131 to v0.138 (the double at those versions).

- a refusal's suggestions reach the message (v0.131+ error envelope), filtered like any server text;
- an unknown filter key is a warning on a 200 (v0.134+): a read that comes back empty with a warning is
  an error, never "no spans" (which the gate would otherwise weigh as a release without failing runs);
  a warning beside rows is logged, and a later page that is empty is the end of the rows, as always;
- fine-grained authorization (v0.134+) answers 403: named as an authorization problem, not retried.
"""

from __future__ import annotations

import logging

import pytest

from otel_provenance.errors import QueryError
from otel_provenance.offline.readers.signoz import read_signoz
from otel_provenance.offline.readers.signoz_query import FieldKey, SigNozClient
from signoz_clock import FakeClock
from signoz_double import SERVICE_ACCOUNT, Fault, SigNozDouble, export_spans, window_around_now

QUERY = "/api/v5/query_range"
KEY = "sk-live-SECRET-7f3a9c0d1e"


@pytest.fixture(params=["v0.134.0", "v0.138.0"])
def double(request):
    with SigNozDouble(version=request.param, api_key=KEY, clock=FakeClock()) as d:
        export_spans(
            d,
            {"service.name": "agent", "service.version": "v2"},
            lambda t: t.start_span("execute_tool payment.refund", attributes={"agent.retry.number": 1}).end(),
        )
        yield d


def _read(double: SigNozDouble, **kwargs):
    start, end = window_around_now()
    kwargs.setdefault("api_key", KEY)
    kwargs.setdefault("clock", double.clock)
    return list(read_signoz(double.url, release="v2", start_ms=start, end_ms=end, **kwargs))


def _raw(double: SigNozDouble, expression: str, *, limit: int = 10, offset: int = 0):
    start, end = window_around_now()
    with SigNozClient(double.url, api_key=KEY, clock=double.clock) as client:
        return client.query_raw(
            start_ms=start,
            end_ms=end,
            expression=expression,
            select=[FieldKey("name", "span", "string")],
            order=[FieldKey("timestamp", "span", "number"), FieldKey("span_id", "span", "string")],
            limit=limit,
            offset=offset,
        )


def test_a_release_reads_as_before(double: SigNozDouble) -> None:
    [span] = _read(double)
    assert span.attributes["agent.retry.number"] == 1 and span.resource["service.version"] == "v2"


def test_the_suggestions_of_a_refusal_reach_the_message(double: SigNozDouble) -> None:
    double.inject(
        QUERY,
        Fault(
            status=400,
            message='unknown field "limt" in query spec',
            errors=["Valid fields are: limit, offset"],
            suggestions=["did you mean: `limit`", "valid fields are `limit`, `offset`"],
        ),
    )
    with pytest.raises(QueryError) as info:
        _read(double)
    message = str(info.value)
    assert "400" in message and "not found" not in message
    assert (
        'unknown field "limt" in query spec: Valid fields are: limit, offset (did you mean: `limit`; '
        "valid fields are `limit`, `offset`)" in message
    )
    assert double.query_count() == 1  # a refusal is not retried


def test_suggestions_are_server_text_filtered_like_the_rest(double: SigNozDouble) -> None:
    double.inject(
        QUERY, Fault(status=400, message="bad", suggestions=[f"did you mean: `{KEY}`", "x\x1b[2Jy"])
    )
    with pytest.raises(QueryError) as info:
        _read(double)
    assert KEY not in str(info.value) and "withheld" in str(info.value)
    double.inject(QUERY, Fault(status=400, message="bad", suggestions=["x\x1b[2Jy"]))
    with pytest.raises(QueryError) as escaped:
        _read(double)
    assert "\x1b" not in str(escaped.value) and "x\\x1b[2Jy" in str(escaped.value)


def test_an_empty_answer_with_an_unknown_key_warning_is_an_error_not_no_spans(double: SigNozDouble) -> None:
    """SigNoz (v0.134+) searches the data for a key it has not catalogued and warns: the empty answer
    cannot be told from "SigNoz does not know this key"."""
    with pytest.raises(QueryError) as info:
        _raw(double, "attribute.agent.nope:string = 'x'")
    message = str(info.value)
    assert "SigNoz matched nothing and warned" in message
    assert "key `agent.nope` not found in metadata" in message
    assert "is not read as 'no spans'" in message


def test_without_a_warning_an_empty_answer_is_no_rows(double: SigNozDouble) -> None:
    assert _raw(double, "resource.service.version:string = 'v9'") == []


def test_a_warning_beside_rows_is_logged_and_the_rows_kept(
    double: SigNozDouble, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING):
        rows = _raw(double, "attribute.agent.nope:string = 'x' OR resource.service.version:string = 'v2'")
    assert [r["name"] for r in rows] == ["execute_tool payment.refund"]
    assert any("key `agent.nope` not found in metadata" in r.getMessage() for r in caplog.records)


def test_an_empty_later_page_with_a_warning_ends_the_rows(double: SigNozDouble) -> None:
    """Offset paging: a full first page, then an empty one; the warning on it is no reason to doubt."""
    expression = "attribute.agent.nope:string = 'x' OR resource.service.version:string = 'v2'"
    assert len(_raw(double, expression, limit=1)) == 1
    assert _raw(double, expression, limit=1, offset=1) == []


def test_a_fine_grained_403_is_named_as_authorization_and_not_retried(double: SigNozDouble) -> None:
    double.readable = {"logs", "metrics"}
    with pytest.raises(QueryError) as info:
        _read(double)
    message = str(info.value)
    assert f"not authorized (403 {SERVICE_ACCOUNT} is not authorized to perform traces:read)" in message
    assert "not retried" in message and "read traces" in message
    assert double.query_count() == 1
