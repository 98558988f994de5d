"""What ``ProvenanceSpanProcessor`` says and does when it is misconfigured or a span defeats it.

A wrong downstream or options object is refused with a message naming the culprit; a span whose
attributes raise when read is dropped (never exported raw) and the two failures are logged with
what failed and the exception type only; with foreign-tool classification off nothing is logged at
all; and the checks that decide "nothing to strip" judge a nested key by its full path and keep the
SDK's own span object in allowlist mode.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Mapping

import pytest
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans as encode_proto
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, SpanLimits, SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import Link

import otel_provenance as op
from instrument_helpers import fresh_canary, span_context
from otel_provenance.instrument.spans.redaction import StripOptions


class _Records(SpanProcessor):
    """Exports nothing (safe beside the wrapper): keeps the span objects ``on_end`` was given."""

    def __init__(self) -> None:
        self.ended: list[object] = []

    def on_end(self, span) -> None:
        self.ended.append(span)


def _errors(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name.startswith("otel_provenance")]


def test_a_downstream_that_is_not_a_span_processor_is_named_with_its_position_and_type():
    class Exporterish:
        def export(self, spans):  # an exporter passed where a processor belongs
            return None

    with pytest.raises(op.ConfigurationError) as raised:
        op.ProvenanceSpanProcessor(_Records(), Exporterish())
    assert str(raised.value) == (
        "ProvenanceSpanProcessor: downstream[1] (Exporterish) is not a SpanProcessor"
    )


def test_options_of_the_wrong_type_are_refused_with_what_was_expected():
    with pytest.raises(op.ConfigurationError) as raised:
        op.ProvenanceSpanProcessor(_Records(), options={"keys": ["x"]})
    assert str(raised.value) == "ProvenanceSpanProcessor: options must be a StripOptions"


class _Hostile(Mapping):
    """Attributes that list a key but raise when it is read (a broken or hostile mapping)."""

    def __init__(self, canary: str) -> None:
        self._canary = canary

    def __getitem__(self, key):
        raise RuntimeError(f"cannot read {key}: {self._canary}")

    def __iter__(self) -> Iterator[str]:
        return iter(["gen_ai.tool.name"])

    def __len__(self) -> int:
        return 1


def test_a_span_whose_attributes_raise_is_dropped_and_both_failures_are_logged_by_type(caplog):
    """Classification is best effort and stripping is not: the span is dropped, not exported, and
    each failure is logged once, with the exception type and never its message (it may quote
    content)."""
    canary = fresh_canary()
    exporter = InMemorySpanExporter()
    processor = op.ProvenanceSpanProcessor(SimpleSpanProcessor(exporter))
    span = ReadableSpan(name="execute_tool", context=span_context(), attributes=_Hostile(canary))
    with caplog.at_level(logging.ERROR):
        processor.on_end(span)  # must not raise into the host application
    assert exporter.get_finished_spans() == ()
    assert _errors(caplog) == [
        "otel-provenance: classifying a tool span from another instrumentation failed with RuntimeError",
        "otel-provenance: stripping a span (the span was dropped, not exported) failed with RuntimeError",
    ]
    assert canary not in caplog.text


def test_with_foreign_classification_off_a_foreign_tool_span_is_stripped_without_a_word(caplog):
    """``classify_foreign_tools=False`` means no classification at all — not one that fails and is
    logged on every foreign tool span."""
    canary = fresh_canary()
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(
        op.ProvenanceSpanProcessor(SimpleSpanProcessor(exporter), classify_foreign_tools=False)
    )
    attributes = {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "read_file",
        "gen_ai.tool.call.arguments": f'{{"path": "{canary}"}}',
    }
    tracer = provider.get_tracer("other-sdk")
    with caplog.at_level(logging.DEBUG), tracer.start_as_current_span("execute_tool", attributes=attributes):
        pass
    [exported] = exporter.get_finished_spans()
    assert dict(exported.attributes) == {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "read_file",
    }
    assert _errors(caplog) == []


def test_a_nested_key_is_judged_by_its_full_path_before_a_span_is_passed_on_unchanged():
    """A span replayed by hand may hold a map; a prefix rule that names ``app.secret`` covers the
    ``secret`` key inside ``app``, so the span is rebuilt without it rather than passed on as clean."""
    canary = fresh_canary()
    exporter = InMemorySpanExporter()
    options = StripOptions(prefixes=["app.secret"])
    processor = op.ProvenanceSpanProcessor(SimpleSpanProcessor(exporter), options=options)
    span = ReadableSpan(
        name="replayed",
        context=span_context(),
        attributes={"app": {"secret": canary, "step": 1}},
        start_time=1,
        end_time=2,
    )
    processor.on_end(span)
    [exported] = exporter.get_finished_spans()
    assert exported is not span
    # The rest of the map is kept where the SDK takes map values; older SDKs (1.33) drop the map whole.
    assert dict(exported.attributes) in ({"app": {"step": 1}}, {})
    assert canary not in exported.to_json()


def test_a_clean_span_is_handed_on_as_the_sdks_own_span_in_allowlist_mode():
    """In allowlist mode too, a span holding only known content-free keys (and a Resource of the
    same) is forwarded as the SDK's own object, not rebuilt."""
    inside, beside = _Records(), _Records()
    provider = TracerProvider(resource=Resource.create({"service.name": "agent"}))
    provider.add_span_processor(op.ProvenanceSpanProcessor(inside, options=StripOptions(mode="allowlist")))
    provider.add_span_processor(beside)
    attributes = {"gen_ai.operation.name": "chat", "gen_ai.request.model": "stub-model"}
    with provider.get_tracer("t").start_as_current_span("chat stub-model", attributes=attributes):
        pass
    [ended], [sdk_span] = inside.ended, beside.ended
    assert ended is sdk_span


def test_a_links_own_dropped_attribute_count_survives_stripping():
    """The SDK's count of link attributes dropped at its limit is kept on the rebuilt span (and
    reaches OTLP as ``dropped_attributes_count``); only the content goes."""
    canary = fresh_canary()
    exporter = InMemorySpanExporter()
    provider = TracerProvider(span_limits=SpanLimits(max_link_attributes=1))
    provider.add_span_processor(op.ProvenanceSpanProcessor(SimpleSpanProcessor(exporter)))
    link = Link(span_context(), {"app.peer": "queue", "app.a": 1, "app.b": 2})
    with provider.get_tracer("t").start_as_current_span(
        "step", attributes={"input.value": canary}, links=[link]
    ):
        pass
    [exported] = exporter.get_finished_spans()
    [kept] = exported.links
    assert kept.dropped_attributes == 2
    blob = encode_proto([exported]).SerializeToString()
    assert canary.encode() not in blob
    [[[proto_span]]] = [[s.spans for s in r.scope_spans] for r in encode_proto([exported]).resource_spans]
    assert proto_span.links[0].dropped_attributes_count == 2


def test_a_value_nested_too_deep_to_prove_clean_is_removed_not_passed_on():
    """A map nested past the depth limit cannot be proven clean: the span is rebuilt without it,
    even though no key in it is a forbidden one."""
    canary = fresh_canary()
    deep: object = {"note": canary}
    for _ in range(40):
        deep = {"level": deep}
    exporter = InMemorySpanExporter()
    processor = op.ProvenanceSpanProcessor(SimpleSpanProcessor(exporter))
    span = ReadableSpan(
        name="replayed",
        context=span_context(),
        attributes={"app.step": 1, "app.deep": deep},
        start_time=1,
        end_time=2,
    )
    processor.on_end(span)
    [exported] = exporter.get_finished_spans()
    assert dict(exported.attributes) == {"app.step": 1}
    assert canary not in exported.to_json()
