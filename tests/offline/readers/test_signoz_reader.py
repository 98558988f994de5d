"""The SigNoz reader against the double, spans sent by the real SDK through the real OTLP/HTTP exporter."""

from __future__ import annotations

import pytest

from otel_provenance.errors import ConfigurationError, QueryError
from otel_provenance.offline.model import ABSENT, SpanKind, StatusCode
from otel_provenance.offline.readers.signoz import read_signoz
from signoz_double import SigNozDouble, export_spans, window_around_now

OLD, NEW = "v0.129.0", "v0.134.0"


@pytest.fixture(params=[OLD, NEW], ids=["map-default-v0.129", "null-v0.134"])
def double(request: pytest.FixtureRequest):
    with SigNozDouble(version=request.param) as d:
        yield d


def read(double: SigNozDouble, release: str = "v2", **kwargs):
    start, end = window_around_now()
    kwargs.setdefault("api_key", double.api_key)
    return list(read_signoz(double.url, release=release, start_ms=start, end_ms=end, **kwargs))


def _refund_run(tracer) -> None:
    from opentelemetry.trace import Status
    from opentelemetry.trace import StatusCode as OtelStatus

    with tracer.start_as_current_span("invoke_agent refund") as root:
        root.set_attribute("agent.run.id", "run-1")
        with tracer.start_as_current_span(
            "execute_tool payment.refund",
            attributes={
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": "payment.refund",
                "agent.side_effect": "write",
                "agent.retry.number": 0,
                "agent.idempotency.present": False,
                "agent.arg.order_id.kind": "observed",
                "agent.arg.order_id.source_tool": "order.lookup",
                "agent.arg.amount_minor.kind": "assumed",
                "amount_minor": 12345,
                "risk.score": 0.123456,
                "latency.ratio": 2.718281,
                "agent.violations": ["max_assumed:amount_minor=assumed"],
                "note": "",
            },
        ) as span:
            span.set_status(Status(OtelStatus.ERROR, "timeout"))
        with tracer.start_as_current_span(
            "execute_tool customer.notify",
            attributes={
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": "customer.notify",
            },
        ):
            pass


def test_custom_attributes_come_back_typed_and_absence_stays_absent(double: SigNozDouble) -> None:
    export_spans(
        double, {"service.name": "refund-agent", "service.version": "v2", "process.pid": 4242}, _refund_run
    )
    spans = {s.name: s for s in read(double)}
    assert set(spans) == {
        "invoke_agent refund",
        "execute_tool payment.refund",
        "execute_tool customer.notify",
    }
    pay, notify, root = (
        spans["execute_tool payment.refund"],
        spans["execute_tool customer.notify"],
        spans["invoke_agent refund"],
    )
    # discovered custom keys, with their types as far as SigNoz keeps them
    assert pay.attributes["agent.arg.order_id.kind"] == "observed"
    assert pay.attributes["agent.arg.order_id.source_tool"] == "order.lookup"
    assert pay.attributes["agent.retry.number"] == 0 and type(pay.attributes["agent.retry.number"]) is int
    assert pay.attributes["agent.idempotency.present"] is False
    assert pay.attributes["amount_minor"] == 12345 and type(pay.attributes["amount_minor"]) is int
    assert pay.attributes["risk.score"] == 0.123  # 3 significant digits below 1
    assert pay.attributes["latency.ratio"] == 2.718  # 3 decimals at or above 1
    assert pay.attributes["agent.violations"] == ("max_assumed:amount_minor=assumed",)
    assert pay.attributes["note"] == ""  # a real empty string survives the old server's default check
    assert pay.status.code is StatusCode.ERROR and pay.status.message == "timeout"
    assert pay.kind is SpanKind.INTERNAL and pay.end_ns > pay.start_ns
    # absence: never "", 0 or false, whatever the server version answers for it
    for key in (
        "agent.retry.number",
        "agent.idempotency.present",
        "agent.arg.order_id.kind",
        "note",
        "amount_minor",
        "agent.violations",
    ):
        assert notify.attributes.get(key, ABSENT) is ABSENT, key
        assert key not in root.attributes
    assert root.attributes["agent.run.id"] == "run-1"
    # tree and resource
    assert root.parent_span_id is None
    assert pay.parent_span_id == root.span_id == notify.parent_span_id
    assert {s.trace_id for s in spans.values()} == {root.trace_id}
    assert pay.resource["service.version"] == "v2" and pay.resource["service.name"] == "refund-agent"
    assert pay.resource["process.pid"] == 4242  # resource values come back as strings; known ints converted
    assert pay.release == "v2"


def test_old_server_defaults_are_checked_with_exists_new_server_nulls_are_not(double: SigNozDouble) -> None:
    export_spans(double, {"service.name": "a", "service.version": "v2"}, _refund_run)
    read(double)
    exists = [
        b
        for _, path, b in double.requests
        if b and "EXISTS" in b["compositeQuery"]["queries"][0]["spec"]["filter"]["expression"]
    ]
    assert bool(exists) == (double.version == OLD)


def test_version_unknown_is_treated_as_old_server() -> None:
    with SigNozDouble(version="v0.129.0") as d:
        export_spans(d, {"service.name": "a", "service.version": "v2"}, _refund_run)
        d.version = "unreleased-build"  # /api/v1/version no longer tells
        notify = next(s for s in read(d) if s.name == "execute_tool customer.notify")
        assert "agent.idempotency.present" not in notify.attributes


def test_only_the_release_traces_are_read_whole_across_services(double: SigNozDouble) -> None:
    from opentelemetry import trace
    from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

    carrier: dict[str, str] = {}

    def agent(tracer) -> None:
        with tracer.start_as_current_span("agent v2 run"):
            TraceContextTextMapPropagator().inject(carrier)

    def payment_service(tracer) -> None:  # another service, another version, same trace
        ctx = TraceContextTextMapPropagator().extract(carrier)
        with tracer.start_as_current_span("POST /refund", context=ctx, kind=trace.SpanKind.SERVER):
            pass

    export_spans(double, {"service.name": "agent", "service.version": "v2"}, agent)
    export_spans(double, {"service.name": "payment", "service.version": "p-7"}, payment_service)
    export_spans(
        double,
        {"service.name": "agent", "service.version": "v1"},
        lambda t: t.start_span("agent v1 run").end(),
    )
    spans = read(double)
    assert sorted(s.name for s in spans) == ["POST /refund", "agent v2 run"]
    server = next(s for s in spans if s.name == "POST /refund")
    assert server.kind is SpanKind.SERVER and server.resource["service.version"] == "p-7"
    assert [s.name for s in read(double, service="payment")] == []  # no payment span carries release v2
    assert sorted(s.name for s in read(double, service="agent")) == ["POST /refund", "agent v2 run"]


def test_paging_keeps_every_span_that_shares_a_millisecond(double: SigNozDouble) -> None:
    base = (window_around_now()[1] - 120_000) * 1_000_000  # one millisecond, all spans inside it

    def many(tracer) -> None:
        root = tracer.start_span("root", start_time=base)
        from opentelemetry.trace import set_span_in_context

        ctx = set_span_in_context(root)
        for i in range(23):
            tracer.start_span(f"step {i:02d}", context=ctx, start_time=base + i).end(end_time=base + 500 + i)
        root.end(end_time=base + 900)

    export_spans(double, {"service.name": "a", "service.version": "v2"}, many)
    spans = read(double, page_size=5, trace_batch=1)
    assert sorted(s.name for s in spans) == ["root", *[f"step {i:02d}" for i in range(23)]]
    assert len({s.span_id for s in spans}) == 24
    assert {s.start_ns // 1_000_000 for s in spans} == {base // 1_000_000}
    assert all(s.start_ns == base + int(s.name[5:]) for s in spans if s.name != "root")  # ns kept exactly


def test_many_traces_in_batches(double: SigNozDouble) -> None:
    def runs(tracer) -> None:
        for i in range(7):
            with tracer.start_as_current_span(f"run {i}"), tracer.start_as_current_span("tool"):
                pass

    export_spans(double, {"service.name": "a", "service.version": "v2"}, runs)
    spans = read(double, page_size=3, trace_batch=2)
    assert len(spans) == 14 and len({s.trace_id for s in spans}) == 7


def test_nothing_matches_is_empty_not_an_error(double: SigNozDouble) -> None:
    export_spans(double, {"service.name": "a", "service.version": "v1"}, lambda t: t.start_span("x").end())
    assert read(double, release="v9") == []  # the double answers rows: null


def test_release_key_never_catalogued_reads_nothing_without_a_400(double: SigNozDouble) -> None:
    export_spans(double, {"service.name": "a"}, lambda t: t.start_span("x").end())
    assert read(double) == []
    assert double.query_count() == 0  # a filter on the uncatalogued key would be a 400 before v0.134


def test_one_key_with_two_types_and_a_key_named_like_a_column(double: SigNozDouble) -> None:
    def build(tracer) -> None:
        tracer.start_span("a", attributes={"mixed": "text", "name": "attr-called-name"}).end()
        tracer.start_span("b", attributes={"mixed": 7}).end()

    export_spans(double, {"service.name": "a", "service.version": "v2"}, build)
    spans = {s.name: s for s in read(double)}
    assert spans["a"].attributes["mixed"] == "text" and spans["b"].attributes["mixed"] == 7
    assert spans["a"].attributes["name"] == "attr-called-name" and "name" not in spans["b"].attributes


def test_bad_arguments_are_configuration_errors(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SIGNOZ_API_KEY", raising=False)
    with pytest.raises(ConfigurationError, match=r"SIGNOZ_API_KEY"):
        list(read_signoz("http://127.0.0.1:9", release="v2", start_ms=0, end_ms=1, deadline_s=0.5))
    with pytest.raises(ConfigurationError, match=r"empty time window"):
        list(
            read_signoz("http://127.0.0.1:9", release="v2", start_ms=5, end_ms=5, api_key="k", deadline_s=0.5)
        )
    with pytest.raises(ConfigurationError, match=r"page_size"):
        list(
            read_signoz(
                "http://127.0.0.1:9",
                release="v2",
                start_ms=0,
                end_ms=1,
                api_key="k",
                page_size=10_001,
                deadline_s=0.5,
            )
        )
    with pytest.raises(QueryError, match=r"http:// or https://"):
        list(read_signoz("localhost:8080", release="v2", start_ms=0, end_ms=1, api_key="k", deadline_s=0.5))


def test_key_from_environment(double: SigNozDouble, monkeypatch: pytest.MonkeyPatch) -> None:
    export_spans(double, {"service.name": "a", "service.version": "v2"}, lambda t: t.start_span("x").end())
    monkeypatch.setenv("SIGNOZ_API_KEY", double.api_key)
    start, end = window_around_now()
    assert [s.name for s in read_signoz(double.url, release="v2", start_ms=start, end_ms=end)] == ["x"]


def test_a_key_catalogued_only_outside_the_window_is_absent_not_a_default(double: SigNozDouble) -> None:
    """SigNoz lists keys of any time for traces (metadata.go getTracesKeys ignores the window), so the
    reader selects keys no span in the window has; on v0.129 they come back as map defaults, which the
    EXISTS check must drop."""
    old = (window_around_now()[0] - 7 * 86_400_000) * 1_000_000
    resource = {"service.name": "a", "service.version": "v2"}
    export_spans(
        double,
        resource,
        lambda t: t.start_span("old", start_time=old, attributes={"agent.old.flag": True, "old.n": 3}).end(
            end_time=old + 10
        ),
    )
    export_spans(double, resource, lambda t: t.start_span("new", attributes={"k": "v"}).end())
    (span,) = read(double)
    assert span.name == "new" and dict(span.attributes) == {"k": "v"}
    assert span.attributes.get("agent.old.flag", ABSENT) is ABSENT
