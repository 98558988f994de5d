"""SigNoz failing: auth, rejected queries, throttling, server errors, slowness; the key never leaks."""

from __future__ import annotations

import base64
import logging
from urllib.parse import quote

import pytest
from hypothesis import given
from hypothesis import strategies as st

from otel_provenance.errors import QueryError
from otel_provenance.offline.readers.signoz import read_signoz
from otel_provenance.offline.readers.signoz_http import echoes_secret
from otel_provenance.offline.readers.signoz_query import MAX_500_ATTEMPTS
from signoz_clock import FakeClock
from signoz_double import Fault, SigNozDouble, export_spans, window_around_now

QUERY = "/api/v5/query_range"
KEYS = "/api/v1/fields/keys"


@pytest.fixture
def double():
    # back-offs, deadlines and the double's delays pass on a fake clock the reader shares (read below)
    with SigNozDouble(version="v0.129.0", api_key="sk-live-SECRET-7f3a9c", clock=FakeClock()) as d:
        export_spans(
            d,
            {"service.name": "agent", "service.version": "v2"},
            lambda t: t.start_span("execute_tool payment.refund", attributes={"agent.retry.number": 1}).end(),
        )
        yield d


def read(double: SigNozDouble, **kwargs):
    start, end = window_around_now()
    kwargs.setdefault("api_key", double.api_key)
    kwargs.setdefault("clock", double.clock)
    return list(read_signoz(double.url, release="v2", start_ms=start, end_ms=end, **kwargs))


def test_wrong_key_is_401_and_says_which_variable_to_fix(double: SigNozDouble) -> None:
    with pytest.raises(QueryError, match=r"401") as info:
        read(double, api_key="sk-wrong-0000")
    assert "SIGNOZ_API_KEY" in str(info.value) and "sk-wrong-0000" not in str(info.value)


def test_403_asks_for_a_viewer_key(double: SigNozDouble) -> None:
    double.inject(QUERY, Fault(status=403))
    with pytest.raises(QueryError, match=r"403.*Viewer"):
        read(double)


def test_400_is_not_retried_and_says_what_to_check(double: SigNozDouble) -> None:
    double.inject(QUERY, Fault(status=400))
    with pytest.raises(QueryError, match=r"400.*release name and time window"):
        read(double)
    assert double.query_count() == 1


def test_429_then_success_is_retried(double: SigNozDouble) -> None:
    double.inject(QUERY, Fault(status=429, retry_after=0), Fault(status=429))
    assert [s.name for s in read(double)] == ["execute_tool payment.refund"]
    assert double.query_count() >= 3


def test_a_retry_after_wait_is_logged_with_the_answer_that_caused_it(
    double: SigNozDouble, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="otel_provenance")
    double.inject(QUERY, Fault(status=429, retry_after=0))
    assert [s.name for s in read(double)] == ["execute_tool payment.refund"]
    waits = [r.getMessage() for r in caplog.records if "retrying in" in r.getMessage()]
    assert waits and "HTTP 429" in waits[0]


def test_500s_then_success_are_retried(double: SigNozDouble) -> None:
    double.inject(KEYS, Fault(status=503))
    double.inject(QUERY, Fault(status=500), Fault(status=502))
    assert [s.attributes["agent.retry.number"] for s in read(double)] == [1]


def test_a_deterministic_500_is_retried_a_few_times_not_until_the_deadline(double: SigNozDouble) -> None:
    """A SigNoz 500 is a ClickHouse error (pkg/querier/builder_query.go), the same on every retry."""
    double.inject(QUERY, *[Fault(status=500)] * 1000)
    with pytest.raises(QueryError, match=r"failed the query 3 times \(HTTP 500 Something went wrong"):
        read(double, deadline_s=600.0)
    assert double.query_count() == MAX_500_ATTEMPTS


def test_persistent_503_ends_at_the_deadline(double: SigNozDouble) -> None:
    double.inject(QUERY, *[Fault(status=503)] * 1000)
    with pytest.raises(QueryError, match=r"deadline.*HTTP 503"):
        read(double, deadline_s=1.0)


def test_the_details_of_a_signoz_error_reach_the_message(double: SigNozDouble) -> None:
    """v0.129 puts the summary in error.message and the cause in error.errors[].message."""
    double.inject(
        QUERY,
        Fault(
            status=400,
            message="Found 1 errors while parsing the search expression.",
            errors=["key `agent.nope` not found"],
        ),
    )
    with pytest.raises(QueryError) as info:
        read(double)
    assert "Found 1 errors while parsing the search expression.: key `agent.nope` not found" in str(
        info.value
    )


@pytest.mark.parametrize(
    "echo",
    [
        lambda k: k.upper(),
        lambda k: k.replace("-", "_"),
        lambda k: k.replace("-", ""),
        lambda k: quote(k, safe=""),
        lambda k: base64.b64encode(k.encode()).decode(),
        lambda k: k.encode().hex(),
        lambda k: k[:-3] + "…",
        lambda k: " ".join(k),
    ],
    ids=["upper", "underscores", "no-dashes", "percent", "base64", "hex", "truncated", "spaced"],
)
def test_an_echo_of_the_key_in_any_form_is_withheld(double: SigNozDouble, echo) -> None:
    shown = echo(double.api_key)
    double.inject(QUERY, Fault(status=400, message="bad request", errors=[f"unknown key {shown}"]))
    with pytest.raises(QueryError) as info:
        read(double)
    assert "withheld" in str(info.value) and shown not in str(info.value)
    assert double.api_key not in str(info.value)


def test_slow_server_ends_at_the_deadline(double: SigNozDouble) -> None:
    double.inject(QUERY, *[Fault(delay_s=1.5)] * 5)
    with pytest.raises(QueryError, match=r"deadline.*timed out"):
        read(double, timeout_s=0.2, deadline_s=0.8)


def test_unreachable_server_ends_at_the_deadline() -> None:
    with SigNozDouble() as d:
        url = d.url
    with pytest.raises(QueryError, match=r"deadline.*cannot connect"):
        list(
            read_signoz(
                url, release="v2", start_ms=0, end_ms=10, api_key="k", deadline_s=0.5, clock=FakeClock()
            )
        )


def test_not_signoz_is_404_with_a_hint() -> None:
    with SigNozDouble() as d:
        d.version = "v0.134.0"
        with pytest.raises(QueryError, match=r"404"):
            list(read_signoz(d.url + "/nested", release="v2", start_ms=0, end_ms=10, api_key=d.api_key))


def test_key_never_in_logs_errors_or_reprs(
    double: SigNozDouble, caplog: pytest.LogCaptureFixture, capsys: pytest.CaptureFixture[str]
) -> None:
    secret = double.api_key
    caplog.set_level(logging.DEBUG)  # httpx / httpcore debug logging included
    double.inject(QUERY, Fault(status=429, retry_after=0), Fault(status=500))
    spans = read(double)
    errors = []
    for status in (401, 403, 400):
        double.inject(QUERY, Fault(status=status))
        with pytest.raises(QueryError) as info:
            read(double)
        errors.append(info.value)
    double.inject(QUERY, *[Fault(status=500)] * 100)
    with pytest.raises(QueryError) as info:
        read(double, deadline_s=0.5)
    errors.append(info.value)
    out, err = capsys.readouterr()
    assert any("retrying" in r.getMessage() for r in caplog.records)  # logging was really captured
    texts = [
        out,
        err,
        caplog.text,
        *map(str, errors),
        *map(repr, errors),
        *map(repr, spans),
        *(repr(e.__cause__) for e in errors),
        *(repr(e.__context__) for e in errors),
    ]
    for text in texts:
        assert secret not in text


def test_a_server_that_ignores_offset_is_an_error_not_a_loop(double: SigNozDouble) -> None:
    export_spans(
        double,
        {"service.name": "agent", "service.version": "v2"},
        lambda t: [t.start_span(f"s{i}").end() for i in range(5)],
    )
    double.ignore_offset = True
    with pytest.raises(QueryError, match="ignored the query offset"):
        read(double, page_size=2)


_KEYS = st.text(
    alphabet="abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_", min_size=20, max_size=48
)
_ECHOES = st.sampled_from(
    [
        str.upper,
        str.lower,
        lambda k: quote(quote(k, safe=""), safe=""),
        lambda k: base64.urlsafe_b64encode(k.encode()).decode(),
        lambda k: "-".join(k[i : i + 4] for i in range(0, len(k), 4)),
        lambda k: k[: len(k) - 4] + "...",
    ]
)
_SIGNOZ_TEXTS = [
    "unauthenticated",
    "Found 1 errors while parsing the search expression.: key `agent.retry.number` not found",
    "limit exceeds maximum allowed value of 10000: Provided limit: 10001",
    "Something went wrong on our end. It's not you, it's us. Our team is notified about it.",
]


@given(key=_KEYS.filter(lambda k: sum(c.isalnum() for c in k) >= 16), echo=_ECHOES)
def test_property_echoes_of_a_key_are_caught_and_signoz_texts_are_not(key: str, echo) -> None:
    assert echoes_secret(f"bad key '{echo(key)}' given", key)
    for text in _SIGNOZ_TEXTS:  # over-withholding only where the key shares 12 characters with the text
        squashed, plain = _squash(key), _squash(text)
        shares = any(squashed[i : i + 12] in plain for i in range(len(squashed) - 11))
        assert not echoes_secret(text, key) or shares


def _squash(text: str) -> str:
    return "".join(c for c in text.lower() if c.isalnum())
