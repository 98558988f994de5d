"""Metric attributes come only from bounded, content-free sets (#36): a third-party tool span's
free-text ``error.type`` (or tool type, or agent name) never becomes a metric attribute value.

Read back through the real SDK's ``InMemoryMetricReader`` (the ``reader`` fixture), from spans that
the real ``ProvenanceSpanProcessor`` classifies.
"""

from __future__ import annotations

import json
import secrets

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import Status, StatusCode

import otel_provenance as op
from instrument_helpers import Traced
from otel_provenance import semconv as sc
from otel_provenance.instrument.spans import metrics as tool_metrics


class OrderNotFoundError(LookupError):
    pass


class Refused(Exception):  # an exception class without a conventional suffix, found by lookup
    pass


def _durations(reader) -> list[dict]:
    data = reader.get_metrics_data()
    out = []
    for rm in data.resource_metrics if data else ():
        for sm in rm.scope_metrics:
            for metric in sm.metrics:
                if metric.name == tool_metrics.TOOL_DURATION:
                    out.extend(dict(point.attributes) for point in metric.data.data_points)
    return out


def _failing_openllmetry_tool_span(tracer, error_type: str, **extra) -> None:
    with tracer.start_as_current_span("search.tool") as span:
        span.set_attribute("traceloop.span.kind", "tool")
        span.set_attribute("traceloop.entity.name", "search")
        span.set_attribute("traceloop.entity.input", json.dumps({"args": ["q"], "kwargs": {}}))
        span.set_attribute(sc.ERROR_TYPE, error_type)
        for name, value in extra.items():
            span.set_attribute(name, value)
        span.set_status(Status(StatusCode.ERROR))


@pytest.fixture
def fresh_labels(monkeypatch):
    for name in ("_tool_names", "_agent_names", "_error_types"):
        monkeypatch.setattr(tool_metrics, name, set())


def test_two_thousand_free_text_error_types_make_one_series_and_no_text(reader, fresh_labels):
    provider = TracerProvider()
    exporter = InMemorySpanExporter()
    provider.add_span_processor(op.ProvenanceSpanProcessor(SimpleSpanProcessor(exporter)))
    tracer = provider.get_tracer("traceloop")
    canaries = [f"order cnry{secrets.token_hex(8)} was not found" for _ in range(2000)]
    for text in canaries:
        _failing_openllmetry_tool_span(tracer, text)
    points = _durations(reader)
    assert len(points) == 1, "one series, not one per text"
    assert points[0][sc.ERROR_TYPE] == tool_metrics.OTHER_ERROR
    assert "cnry" not in repr(points)


@pytest.mark.parametrize(
    ("raw", "recorded"),
    [
        ("ValueError", "ValueError"),
        ("builtins.KeyError", "builtins.KeyError"),
        ("httpx.ReadTimeout", "httpx.ReadTimeout"),
        (f"{__name__}.OrderNotFoundError", f"{__name__}.OrderNotFoundError"),
        (f"{__name__}.Refused", f"{__name__}.Refused"),  # found among the loaded module's names
        ("ValueError: order cnry123 not found", "ValueError"),  # "Type: message" keeps the type
        ("timeout", "timeout"),
        ("tool_error", "tool_error"),
        ("_OTHER", "_OTHER"),
        ("cnry-0123456789", "_OTHER"),
        ("John Smith", "_OTHER"),
        ("JohnSmith", "_OTHER"),  # CapWords, but no exception class of that name is loaded
        ("refund denied for order 42", "_OTHER"),
        ("", "_OTHER"),
        ("x" * 5000 + "Error", "_OTHER"),
        ("Line\nBreakError", "_OTHER"),
    ],
)
def test_error_type_is_a_class_name_or_a_known_value_or_other(raw, recorded, fresh_labels):
    assert tool_metrics.metric_error_type(raw) == recorded


def test_error_types_past_the_cap_are_other(reader, fresh_labels, monkeypatch):
    monkeypatch.setattr(tool_metrics, "MAX_ERROR_TYPES", 2)
    for name in ("AError", "BError", "CError", "AError"):
        tool_metrics.record_tool_call("t", status="error", side_effect="read", duration=0.1, error_type=name)
    recorded = sorted(p[sc.ERROR_TYPE] for p in _durations(reader))
    assert recorded == ["AError", "BError", "_OTHER"]


def test_free_text_tool_type_and_agent_name_of_a_foreign_span_are_not_attribute_values(reader, fresh_labels):
    provider = TracerProvider()
    provider.add_span_processor(op.ProvenanceSpanProcessor(SimpleSpanProcessor(InMemorySpanExporter())))
    tracer = provider.get_tracer("traceloop")
    canary = f"cnry{secrets.token_hex(8)}"
    _failing_openllmetry_tool_span(
        tracer,
        "KeyError",
        **{sc.GEN_AI_TOOL_TYPE: f"call {canary} now", sc.GEN_AI_AGENT_NAME: f"line one\nline two {canary}"},
    )
    _failing_openllmetry_tool_span(tracer, "KeyError", **{sc.GEN_AI_TOOL_TYPE: "datastore"})
    points = _durations(reader)
    assert canary not in repr(points)
    assert sorted(p[sc.GEN_AI_TOOL_TYPE] for p in points) == ["_OTHER", "datastore"]
    assert [p[sc.GEN_AI_AGENT_NAME] for p in points if sc.GEN_AI_AGENT_NAME in p] == [tool_metrics.OTHER_TOOL]


def test_op_tool_errors_keep_their_class_names(reader, fresh_labels):
    traced = Traced()

    @op.tool(tracer_provider=traced.provider)
    def lookup(order: str) -> None:
        raise OrderNotFoundError(f"no order {order}")

    with pytest.raises(OrderNotFoundError):
        lookup("cnry-order-1")
    [point] = _durations(reader)
    assert point[sc.ERROR_TYPE] == f"{__name__}.OrderNotFoundError"
    assert point[sc.GEN_AI_TOOL_TYPE] == "function"
