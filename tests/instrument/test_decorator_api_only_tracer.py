"""@op.tool on a tracer provider other than the SDK's (a vendor's implementation of the OTel API):
spans that keep their attributes in a plain dict and report no ``dropped_attributes``."""

from __future__ import annotations

import contextlib
from typing import Any

import pytest
from opentelemetry import trace
from opentelemetry.trace import SpanContext, SpanKind, TraceFlags

import otel_provenance as op


class DictSpan(trace.Span):
    """A recording span of another OTel API implementation: attributes in a dict, no eviction."""

    _next_id = 1

    def __init__(self, name: str, kind: SpanKind, attributes: Any) -> None:
        DictSpan._next_id += 1
        self.name, self.kind = name, kind
        self.attributes: dict[str, Any] = dict(attributes or {})
        self.ended = False
        self._context = SpanContext(0x1F, DictSpan._next_id, False, TraceFlags(TraceFlags.SAMPLED))

    def get_span_context(self) -> SpanContext:
        return self._context

    def set_attributes(self, attributes) -> None:
        self.attributes.update(attributes)

    def set_attribute(self, key: str, value: Any) -> None:
        self.attributes[key] = value

    def add_event(self, name, attributes=None, timestamp=None) -> None:
        return None

    def update_name(self, name: str) -> None:
        self.name = name

    def is_recording(self) -> bool:
        return not self.ended

    def set_status(self, status, description=None) -> None:
        return None

    def record_exception(self, exception, attributes=None, timestamp=None, escaped=False) -> None:
        return None

    def end(self, end_time=None) -> None:
        self.ended = True


class DictTracer(trace.Tracer):
    def __init__(self) -> None:
        self.spans: list[DictSpan] = []

    def start_span(self, name, context=None, kind=SpanKind.INTERNAL, attributes=None, *args, **kwargs):
        span = DictSpan(name, kind, attributes)
        self.spans.append(span)
        return span

    @contextlib.contextmanager
    def start_as_current_span(self, name, *args, **kwargs):
        with trace.use_span(self.start_span(name, *args, **kwargs), end_on_exit=True) as span:
            yield span


class DictTracerProvider(trace.TracerProvider):
    def __init__(self) -> None:
        self.tracer = DictTracer()

    def get_tracer(self, *args, **kwargs) -> DictTracer:
        return self.tracer


def test_attributes_the_body_sets_stay_on_a_span_that_reports_no_eviction():
    """The essentials are put back only after an eviction: on a span that never evicts, the call id
    a framework sets from inside the tool (the model's own) is the one the span keeps."""
    provider = DictTracerProvider()

    @op.tool(side_effect="read", tracer_provider=provider)
    def lookup(order_id: str) -> str:
        trace.get_current_span().set_attribute("gen_ai.tool.call.id", "call_from_the_model")
        return order_id

    with op.run(inputs={"order_id": "ord-1"}):
        assert lookup("ord-1") == "ord-1"
    [span] = provider.tracer.spans
    assert span.ended and span.name == "execute_tool lookup" and span.kind is SpanKind.INTERNAL
    assert span.attributes["gen_ai.tool.call.id"] == "call_from_the_model"
    assert span.attributes["agent.tool.status"] == "ok"
    assert span.attributes["agent.arg.order_id.kind"] == "observed"


# Whether a ProvenanceSpanProcessor is set up on another provider (which makes the no-op provider
# worth a warning) depends on the tests run before: the warning is not what this test is about.
@pytest.mark.filterwarnings("ignore::otel_provenance.NoExportWarning")
def test_a_tracer_that_records_nothing_still_remembers_each_result_by_the_calls_own_id():
    """The API's no-op tracer gives spans no id: the ledger keys a result by the call's own id
    instead, which — with no framework call id — is `agent.tool.call.id`, not `gen_ai.tool.call.id`
    (#48). A write sourced from a read's result is then observed, not blocked as assumed."""
    provider = trace.NoOpTracerProvider()

    @op.tool(side_effect="read", tracer_provider=provider)
    def lookup(order_id: str) -> dict:
        return {"customer": "cust-42"}

    @op.tool(side_effect="write", tracer_provider=provider)
    def notify(customer: str) -> str:
        return "sent"

    with op.run(inputs={"order_id": "ord-1"}, tracer_provider=provider):
        lookup("ord-1")
        assert notify("cust-42") == "sent"
