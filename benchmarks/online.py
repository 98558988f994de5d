"""Shared pieces of the online cases: a no-op exporter and tracer providers wired the two ways."""

from __future__ import annotations

from collections.abc import Sequence

from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter, SpanExportResult

import otel_provenance as op


class NoopExporter(SpanExporter):
    """Accepts spans and drops them; counts them so a case can check spans really arrived."""

    def __init__(self) -> None:
        self.spans = 0

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        self.spans += len(spans)
        return SpanExportResult.SUCCESS

    def shutdown(self) -> None:
        pass


def wrapped_provider() -> tuple[TracerProvider, NoopExporter]:
    """Spans → ProvenanceSpanProcessor → SimpleSpanProcessor → no-op exporter."""
    exporter = NoopExporter()
    provider = TracerProvider()
    provider.add_span_processor(op.ProvenanceSpanProcessor(SimpleSpanProcessor(exporter)))
    return provider, exporter


def bare_provider() -> tuple[TracerProvider, NoopExporter]:
    """Spans → SimpleSpanProcessor → no-op exporter (the baseline's exporter path)."""
    exporter = NoopExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return provider, exporter
