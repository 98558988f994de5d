"""ProvenanceSpanProcessor: rebuilt spans keep every field, faults never reach the app, leak guard."""

from __future__ import annotations

import asyncio
import logging
import secrets
import threading
import warnings

import pytest
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.trace import SpanLimits, SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor, SpanExporter
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import Link, SpanKind

import otel_provenance as op
from otel_provenance.instrument.spans.leaks import ContentLeakWarning, unsafe_processors


def _setup(*extra: SpanProcessor, limits: SpanLimits | None = None):
    exporter = InMemorySpanExporter()
    provider = TracerProvider(span_limits=limits) if limits else TracerProvider()
    provider.add_span_processor(op.ProvenanceSpanProcessor(SimpleSpanProcessor(exporter), *extra))
    return provider, provider.get_tracer("test", "1.2", attributes={"scope.attr": "s"}), exporter


def test_rebuilt_span_keeps_every_field():
    _provider, tracer, exporter = _setup(limits=SpanLimits(max_span_attributes=3, max_events=1, max_links=1))
    with tracer.start_as_current_span("parent") as parent:
        other = parent.get_span_context()
        with tracer.start_as_current_span(
            "child",
            kind=SpanKind.CLIENT,
            links=[Link(other, {"l": 1}), Link(other, {"l": 2})],
            attributes={"a": 1, "b": 2, "c": 3, "d": 4, "input.value": "gone"},
        ) as child:
            child.add_event("e1", {"x": 1})
            child.add_event("e2", {"x": 2})
    spans = {s.name: s for s in exporter.get_finished_spans()}
    child_span, parent_span = spans["child"], spans["parent"]
    assert child_span.parent.span_id == parent_span.context.span_id
    assert child_span.context.trace_id == parent_span.context.trace_id
    assert child_span.kind is SpanKind.CLIENT
    assert child_span.start_time <= child_span.end_time
    assert child_span.instrumentation_scope.name == "test"
    assert child_span.instrumentation_scope.version == "1.2"
    assert child_span.resource is not None
    # input.value was the newest key, so the SDK kept it and evicted a and b; we then removed it
    assert dict(child_span.attributes) == {"c": 3, "d": 4}
    # the SDK's own limit counts survive (they count limit overflow, never our removals)
    assert child_span.dropped_attributes == 2
    assert child_span.dropped_events == 1
    assert child_span.dropped_links == 1
    proto = encode_spans([child_span])
    wire = proto.resource_spans[0].scope_spans[0].spans[0]
    assert wire.dropped_attributes_count == 2 and wire.dropped_events_count == 1


def test_removal_leaves_no_count():
    _provider, tracer, exporter = _setup()
    with tracer.start_as_current_span("s", attributes={"input.value": "x", "output.value": "y"}):
        pass
    [span] = exporter.get_finished_spans()
    assert span.dropped_attributes == 0
    assert dict(span.attributes) == {}


class _Raising(SpanProcessor):
    def on_start(self, span, parent_context=None):
        raise RuntimeError("boom-start")

    def on_end(self, span):
        raise RuntimeError("boom-end")

    def shutdown(self):
        raise RuntimeError("boom-shutdown")

    def force_flush(self, timeout_millis=30000):
        raise RuntimeError("boom-flush")


def test_downstream_faults_never_reach_the_app_and_others_still_export(caplog):
    provider, tracer, exporter = _setup(_Raising())
    secret = secrets.token_hex(8)
    with caplog.at_level(logging.ERROR):
        for _ in range(3):
            with tracer.start_as_current_span("s", attributes={"input.value": secret}):
                pass
        assert provider.force_flush() is False
        provider.shutdown()
    assert len(exporter.get_finished_spans()) == 3
    messages = [r.getMessage() for r in caplog.records if r.name.startswith("otel_provenance")]
    assert len([m for m in messages if "_Raising.on_end" in m]) == 1  # logged once, not per span
    assert all("boom" not in m and secret not in m for m in messages)
    assert all(r.exc_info is None for r in caplog.records if r.name.startswith("otel_provenance"))


class _HostileText(str):
    """A str subclass whose methods blow up: the SDK keeps str subclasses as they are."""

    def startswith(self, *args, **kwargs):
        raise RuntimeError("hostile")

    def split(self, *args, **kwargs):
        raise RuntimeError("hostile")

    __hash__ = str.__hash__


class _ExplodingProcessor(SpanProcessor):
    """Sits before the wrapper and poisons the shared span's attributes with a hostile key."""

    def on_end(self, span):
        span._attributes._dict[_HostileText("input.value.x")] = "leak-me"


def test_a_span_that_cannot_be_stripped_is_dropped_not_exported(caplog):
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(_ExplodingProcessor())
    provider.add_span_processor(op.ProvenanceSpanProcessor(SimpleSpanProcessor(exporter)))
    tracer = provider.get_tracer("t")
    with caplog.at_level(logging.ERROR):
        with tracer.start_as_current_span("s"):
            pass
        with tracer.start_as_current_span("s2"):
            pass
    assert exporter.get_finished_spans() == ()
    messages = [r.getMessage() for r in caplog.records if r.name.startswith("otel_provenance")]
    assert any("dropped" in m for m in messages)
    assert all("leak-me" not in m for m in messages)


def test_constructor_rejects_non_processors():
    with pytest.raises(op.ConfigurationError, match=r"downstream\[1\]"):
        op.ProvenanceSpanProcessor(SimpleSpanProcessor(InMemorySpanExporter()), InMemorySpanExporter())


def test_leak_guard_warns_once_about_exporting_processor_beside_the_wrapper():
    provider, tracer, _exporter = _setup()
    beside = InMemorySpanExporter()
    provider.add_span_processor(BatchSpanProcessor(beside))
    assert unsafe_processors(provider) == ["BatchSpanProcessor"]
    with pytest.warns(ContentLeakWarning, match="BatchSpanProcessor"), tracer.start_as_current_span("s"):
        pass
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with tracer.start_as_current_span("s"):
            pass
    provider.shutdown()


def test_leak_guard_silent_for_the_safe_setup():
    provider, tracer, _exporter = _setup()
    assert unsafe_processors(provider) == []
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with tracer.start_as_current_span("s"):
            pass


class _Counting(SpanExporter):
    def __init__(self):
        self.spans = []
        self._lock = threading.Lock()

    def export(self, spans):
        with self._lock:
            self.spans.extend(spans)

    def shutdown(self):
        pass


def test_removal_holds_under_eight_threads_and_asyncio():
    exporter = _Counting()
    provider = TracerProvider()
    provider.add_span_processor(
        op.ProvenanceSpanProcessor(BatchSpanProcessor(exporter, max_export_batch_size=64))
    )
    tracer = provider.get_tracer("t")
    secrets_seen: list[str] = []
    lock = threading.Lock()

    def work(n: int) -> None:
        for i in range(50):
            value = f"s{n}-{i}-{secrets.token_hex(6)}"
            with lock:
                secrets_seen.append(value)
            with tracer.start_as_current_span(
                f"execute_tool t{n}",
                attributes={
                    "gen_ai.operation.name": "execute_tool",
                    "gen_ai.tool.call.arguments": value,
                    "nested": {"input.value": value, "keep": n},
                },
            ) as span:
                span.add_event("gen_ai.tool.message", {"content": value})

    threads = [threading.Thread(target=work, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()

    async def task(n: int) -> None:
        for i in range(25):
            value = f"a{n}-{i}-{secrets.token_hex(6)}"
            secrets_seen.append(value)
            with tracer.start_as_current_span("chat", attributes={"gen_ai.input.messages": value, "k": n}):
                await asyncio.sleep(0)

    async def main() -> None:
        await asyncio.gather(*(task(n) for n in range(8)))

    asyncio.run(main())
    provider.shutdown()
    assert len(exporter.spans) == 8 * 50 + 8 * 25
    wire = encode_spans(exporter.spans).SerializeToString()
    assert not [s for s in secrets_seen if s.encode() in wire]
    assert all(s.attributes.get("nested", {"keep": 0}).get("keep") is not None for s in exporter.spans)
