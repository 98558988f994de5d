"""A tool span's argument attributes fit the tracer's attribute limit.

The SDK keeps at most ``max_span_attributes`` per span and evicts the oldest past it. ``@op.tool``
writes as many argument attributes as fit below that limit, with its own attributes last, and keeps
four places free for what is set after the call (status, error type): so nothing is evicted, whatever
the limit, and an unsourced argument's kind is not pushed out by a digest.
"""

from __future__ import annotations

import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import SpanLimits, SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import otel_provenance as op

AFTER_THE_CALL = 4  # places kept free when the span starts


class AttributesAtStart(SpanProcessor):
    """How many attributes each span had when it started (a real SDK processor hook)."""

    def __init__(self) -> None:
        self.counts: list[int] = []

    def on_start(self, span, parent_context=None) -> None:
        self.counts.append(len(span.attributes))


def provider(limit: int | None) -> tuple[TracerProvider, AttributesAtStart, InMemorySpanExporter]:
    tp = (
        TracerProvider()
        if limit is None
        else TracerProvider(span_limits=SpanLimits(max_span_attributes=limit))
    )
    at_start, exporter = AttributesAtStart(), InMemorySpanExporter()
    tp.add_span_processor(at_start)
    tp.add_span_processor(SimpleSpanProcessor(exporter))
    return tp, at_start, exporter


def call_wide_tool(tracer_provider, fail: bool = False) -> None:
    @op.tool(side_effect="read", tracer_provider=tracer_provider)
    def wide(**fields: str) -> None:
        if fail:
            raise LookupError("no such field")

    fields = {f"field_{i:02d}": f"value-{i}" for i in range(80)}  # far more than any limit below
    if fail:
        with pytest.raises(LookupError):
            wide(**fields)
    else:
        wide(**fields)


@pytest.mark.parametrize("fail", [False, True], ids=["ok", "error"])
@pytest.mark.parametrize("limit", [24, 25, 40, 127])
def test_argument_attributes_fill_the_limit_but_the_places_kept_for_after_the_call(
    limit: int, fail: bool
) -> None:
    tp, at_start, exporter = provider(limit)
    call_wide_tool(tp, fail)
    (span,) = exporter.get_finished_spans()
    assert at_start.counts == [limit - AFTER_THE_CALL]
    assert span.dropped_attributes == 0
    assert span.attributes["gen_ai.tool.name"] == "wide"
    assert span.attributes["agent.tool.status"] == ("error" if fail else "ok")
    assert "agent.digest.key_id" in span.attributes
    assert span.attributes["agent.arg.field_00.kind"] == "assumed"


def test_the_sdk_default_limit_is_used_when_the_provider_sets_none() -> None:
    tp, at_start, exporter = provider(None)
    call_wide_tool(tp)
    assert at_start.counts == [128 - AFTER_THE_CALL]
    assert exporter.get_finished_spans()[0].dropped_attributes == 0


def test_without_a_limit_every_argument_is_described() -> None:
    tp, _, exporter = provider(SpanLimits.UNSET)
    call_wide_tool(tp)
    attributes = exporter.get_finished_spans()[0].attributes
    assert sum(key.endswith(".kind") for key in attributes) == 80
    assert sum(key.endswith(".digest") for key in attributes) == 80


def test_a_proxy_provider_uses_the_limit_of_the_provider_it_resolves_to(monkeypatch) -> None:
    """A tool given the API's proxy provider (``trace.get_tracer_provider()`` before the application set
    one) follows the real provider set later, and its attribute limit from the first call on."""
    tp, at_start, exporter = provider(40)
    proxy = trace.ProxyTracerProvider()

    @op.tool(side_effect="read", tracer_provider=proxy)
    def wide(**fields: str) -> None:
        return None

    @op.tool(side_effect="write", tracer_provider=proxy)
    def ping() -> str:
        return "pong"

    fields = {f"field_{i:02d}": "x" for i in range(80)}
    wide(**fields)  # no provider yet: nothing is recorded, and nothing fails
    assert ping() == "pong"  # a fault in the provenance machinery would block a write
    # as trace.set_tracer_provider(tp) would, undone after the test (it can be set once per process)
    monkeypatch.setattr(trace, "_TRACER_PROVIDER", tp)
    wide(**fields)
    wide(**fields)
    assert at_start.counts == [40 - AFTER_THE_CALL] * 2
    assert [s.dropped_attributes for s in exporter.get_finished_spans()] == [0, 0]


def _argument_keys(limit: int) -> list[str] | None:
    """The ``agent.arg.*`` keys (without the prefix) of a call with two observed arguments and an
    unsourced one, under a span attribute limit of ``limit``; None while even the key id has no room."""
    tp, _at_start, exporter = provider(limit)

    @op.tool(side_effect="read", tracer_provider=tp)
    def listing() -> dict:
        return {"first": "acct-first-1", "second": "acct-second-2"}

    @op.tool(side_effect="read", tracer_provider=tp)
    def compare(a_first: str, b_second: str, z_guess: str) -> str:
        return "ok"

    with op.run():
        found = listing()
        compare(a_first=found["first"], b_second=found["second"], z_guess="acct-guess-3")
    [span] = [s for s in exporter.get_finished_spans() if s.name == "execute_tool compare"]
    keys = sorted(k.removeprefix("agent.arg.") for k in span.attributes if k.startswith("agent.arg."))
    return keys if "agent.digest.key_id" in span.attributes else None


def test_short_of_room_argument_attributes_are_kept_in_order_of_importance() -> None:
    """One more place keeps one more attribute, in this order: the unsourced argument's kind (even
    though its name sorts last), every other kind, the data-flow sources (span id, then tool) of
    each observed argument, their fields and projections, and the digests last."""
    priority = [
        "z_guess.kind",
        "a_first.kind",
        "b_second.kind",
        "a_first.source_span_id",
        "a_first.source_tool",
        "b_second.source_span_id",
        "b_second.source_tool",
        "a_first.source_field",
        "a_first.projection",
        "b_second.source_field",
        "b_second.projection",
        "z_guess.digest",
        "a_first.digest",
        "b_second.digest",
    ]
    base = next(limit for limit in range(8, 64) if _argument_keys(limit + 1))  # room for none yet
    for extra in range(len(priority) + 2):
        assert _argument_keys(base + extra) == sorted(priority[:extra]), extra
