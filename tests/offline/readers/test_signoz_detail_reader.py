"""read_signoz against the double: its arguments, the queries it asks, paging down on large answers, a span
that arrives mid-read, and what it tells the user."""

from __future__ import annotations

import logging
import secrets
import time
from typing import Any

import pytest

from otel_provenance.errors import ConfigurationError, QueryError, TraceReadError
from otel_provenance.offline.readers.signoz import SigNozReport, read_signoz
from signoz_clock import FakeClock
from signoz_double import Fault, SigNozDouble, StoredSpan, export_spans, window_around_now

QUERY = "/api/v5/query_range"
RESOURCE = {"service.name": "agent", "service.version": "v2"}


def read(double: SigNozDouble, **kwargs: Any) -> list:
    start, end = window_around_now()
    kwargs.setdefault("api_key", double.api_key)
    kwargs.setdefault("release", "v2")
    kwargs.setdefault("clock", double.clock)
    return list(read_signoz(double.url, start_ms=start, end_ms=end, **kwargs))


def _expressions(double: SigNozDouble) -> list[str]:
    return [
        body["compositeQuery"]["queries"][0]["spec"]["filter"]["expression"]
        for _, path, body in double.requests
        if path == QUERY and body
    ]


def _config_error(**kwargs: Any) -> str:
    # A short deadline: should an argument get through, the read fails at once on the closed port
    # instead of retrying for the default five minutes.
    args: dict[str, Any] = {"release": "v2", "start_ms": 0, "end_ms": 10, "api_key": "k", "deadline_s": 0.5}
    with pytest.raises(ConfigurationError) as info:
        list(read_signoz("http://127.0.0.1:9", **{**args, **kwargs}))
    return str(info.value)


@pytest.mark.parametrize(
    ("kwargs", "says"),
    [
        ({"release": ""}, "release must be a non-empty service.version"),
        ({"start_ms": 10, "end_ms": 10}, "empty time window: start 10 ms is not before end 10 ms"),
        ({"start_ms": 11, "end_ms": 10}, "empty time window: start 11 ms is not before end 10 ms"),
        ({"page_size": 0}, "page_size must be 1..10000, got 0"),
        ({"page_size": 10_001}, "page_size must be 1..10000, got 10001"),
        ({"trace_batch": 0}, "trace_batch must be at least 1, got 0"),
        ({"max_response_bytes": 1023}, "max_response_bytes must be at least 1024, got 1023"),
        ({"api_key": ""}, "no SigNoz API key: set SIGNOZ_API_KEY (Settings → Service Accounts → Keys)"),
    ],
)
def test_bad_arguments_say_what_is_wrong(kwargs: dict, says: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SIGNOZ_API_KEY", "sk-from-the-environment")  # an explicit "" is not replaced by it
    assert _config_error(**kwargs) == says


@pytest.mark.parametrize(
    "kwargs",
    [{"page_size": 1}, {"page_size": 10_000}, {"trace_batch": 1}, {"max_response_bytes": 1024}, {}],
)
def test_arguments_at_their_limits_are_accepted(kwargs: dict) -> None:
    """Accepted: the read goes on to ask the (unreachable) server."""
    with SigNozDouble() as d:
        url = d.url
    start, end = window_around_now()
    args = {"release": "v2", "start_ms": start, "end_ms": end, "api_key": "k", "deadline_s": 0.3}
    with pytest.raises(QueryError, match="no answer within"):  # not a ConfigurationError
        list(read_signoz(url, **args, clock=FakeClock(), **kwargs))


def test_the_release_and_service_are_the_filter_of_the_first_query() -> None:
    with SigNozDouble(version="v0.134.0") as d:
        export_spans(d, RESOURCE, lambda t: t.start_span("x").end())
        assert [s.name for s in read(d, service="agent")] == ["x"]
        assert [s.name for s in read(d)] == ["x"]
    first, _, second, _ = _expressions(d)
    assert first == "resource.service.version = 'v2' AND resource.service.name = 'agent'"
    assert second == "resource.service.version = 'v2'"


def test_traces_are_read_in_batches_of_a_hundred_by_default() -> None:
    def runs(tracer) -> None:
        for i in range(101):
            tracer.start_span(f"run {i}").end()

    with SigNozDouble(version="v0.134.0") as d:
        export_spans(d, RESOURCE, runs)
        assert len(read(d)) == 101
    batches = [e.count("'") // 2 for e in _expressions(d) if e.startswith("trace_id IN")]
    assert batches == [100, 1]


def test_no_catalogued_release_key_is_logged_and_reads_nothing(caplog: pytest.LogCaptureFixture) -> None:
    with SigNozDouble() as d, caplog.at_level(logging.WARNING):
        export_spans(d, {"service.name": "agent"}, lambda t: t.start_span("x").end())
        assert read(d) == []
    assert [r.getMessage() for r in caplog.records if r.name.startswith("otel_provenance")] == [
        "SigNoz has no resource service.version in this window: no spans for any release"
    ]


def test_a_page_too_large_is_halved_and_the_halving_is_logged(caplog: pytest.LogCaptureFixture) -> None:
    with SigNozDouble() as d:
        export_spans(d, RESOURCE, lambda t: [t.start_span(f"s{i}").end() for i in range(3)])
        d.inject(QUERY, Fault(huge_bytes=3 * 2**20))
        report = SigNozReport()
        with caplog.at_level(logging.INFO, logger="otel_provenance"):
            assert len(read(d, max_response_bytes=2**20, page_size=8, report=report)) == 3
    assert report.page_size == 4
    assert [r.getMessage() for r in caplog.records if "asking for pages" in r.getMessage()] == [
        f"{d.url}/api/v5/query_range: SigNoz's answer is larger than 1 MiB; not read into memory; "
        "asking for pages of 4 spans"
    ]


def test_a_page_of_two_too_large_is_asked_again_as_one() -> None:
    with SigNozDouble() as d:
        export_spans(d, RESOURCE, lambda t: [t.start_span(f"s{i}").end() for i in range(3)])
        d.inject(QUERY, Fault(huge_bytes=3 * 2**20))
        report = SigNozReport()
        assert len(read(d, max_response_bytes=2**20, page_size=2, report=report)) == 3
    assert report.page_size == 1


def test_a_span_that_arrives_between_two_query_layers_is_not_part_of_the_read() -> None:
    """A key catalogued with two types is read in a second query; a span ingested in between is skipped,
    and the spans after it in that answer keep their values."""

    class LateSpan(SigNozDouble):
        late: StoredSpan | None = None

        def query_range(self, body: Any) -> dict[str, Any]:
            spec = body["compositeQuery"]["queries"][0]["spec"]
            names = [f["name"] for f in spec.get("selectFields") or []]
            if (
                self.late is None
                and spec["filter"]["expression"].startswith("trace_id IN")
                and "name" not in names
            ):
                first = self.spans[0]
                self.late = StoredSpan(
                    trace_id=first.trace_id,
                    span_id="00000000000000ff",
                    parent_span_id="",
                    name="late",
                    kind=1,
                    timestamp_ns=first.timestamp_ns - 1_000_000,  # sorts first in the answer
                    duration_nano=5,
                    status_code=0,
                    status_message="",
                    numbers={"mixed": 1.0},
                    resource=dict(first.resource),
                )
                with self._lock:
                    self.spans.append(self.late)
            return super().query_range(body)

    def build(tracer) -> None:
        with tracer.start_as_current_span("root", attributes={"mixed": "text"}):
            tracer.start_span("child", attributes={"mixed": 7}).end()

    with LateSpan(version="v0.134.0") as d:
        export_spans(d, RESOURCE, build)
        spans = {s.name: dict(s.attributes) for s in read(d)}
    assert d.late is not None  # the second layer was asked
    assert spans == {"root": {"mixed": "text"}, "child": {"mixed": 7}}


def test_a_malformed_span_names_the_server_and_the_span() -> None:
    now = time.time_ns()
    with SigNozDouble() as d:
        export_spans(d, RESOURCE, lambda t: t.start_span("backwards", start_time=now).end(end_time=now - 10))
        (stored,) = d.spans
        with pytest.raises(TraceReadError) as info:
            read(d)
    assert str(info.value) == (
        f"{d.url}: span {stored.trace_id}/{stored.span_id}: timestamp or duration_nano missing or malformed"
    )


def _unfilterable_defaults(names: list[str]):
    def build(tracer) -> None:
        tracer.start_span("zero", attributes=dict.fromkeys(names, "")).end()
        tracer.start_span("lacks").end()

    return build


def test_the_dropped_defaults_warning_in_full(caplog: pytest.LogCaptureFixture) -> None:
    names = [f"k{i} x" for i in range(5)]  # a space: the filter grammar reads two keys
    with SigNozDouble(version="v0.129.0") as d:
        export_spans(d, RESOURCE, _unfilterable_defaults(names))
        report = SigNozReport()
        with caplog.at_level(logging.WARNING):
            read(d, report=report)
    assert report.unfilterable_keys == set(names) and report.defaults_dropped == 10
    warnings = [r.getMessage() for r in caplog.records if r.name.startswith("otel_provenance")]
    assert warnings == [
        f"{d.url}: 10 value(s) of 5 key(s) SigNoz's filter grammar cannot name ('k0 x', 'k1 x', 'k2 x', "
        "'k3 x', 'k4 x') were left out as absent: before v0.134 SigNoz answers \"\"/0/false for a key a "
        "span lacks, and these keys cannot be checked with EXISTS; rules that need them report insufficient "
        "evidence"
    ]


def test_no_dropped_defaults_no_warning_and_the_page_size_kept(caplog: pytest.LogCaptureFixture) -> None:
    with SigNozDouble(version="v0.129.0") as d:
        export_spans(d, RESOURCE, lambda t: t.start_span("x", attributes={"k": ""}).end())
        report = SigNozReport()
        with caplog.at_level(logging.WARNING):
            assert [dict(s.attributes) for s in read(d, report=report, page_size=50)] == [{"k": ""}]
    assert report == SigNozReport(set(), 0, 50)  # the page size it ended with: the one asked
    assert [r.getMessage() for r in caplog.records if r.name.startswith("otel_provenance")] == []


def test_each_request_is_bounded_by_the_timeout_given_to_the_read(caplog: pytest.LogCaptureFixture) -> None:
    """``timeout_s`` reaches the client: a query answered after 1.5 s is given up at the timeout (0.2 to
    0.4 s) and asked again (well inside the deadline), rather than waited for."""
    timeout_s = 0.2 + secrets.randbelow(20) / 100  # fresh per run: nothing cached can stand in for it
    with SigNozDouble(version="v0.134.0", clock=FakeClock()) as d:
        export_spans(d, RESOURCE, lambda t: t.start_span("x").end())
        d.inject(QUERY, Fault(delay_s=1.5))
        with caplog.at_level(logging.INFO, logger="otel_provenance"):
            assert [s.name for s in read(d, timeout_s=timeout_s, deadline_s=30.0)] == ["x"]
    retries = [r.getMessage() for r in caplog.records if "retrying in" in r.getMessage()]
    assert len(retries) == 1 and f"{timeout_s:.3g} s" in retries[0], retries
