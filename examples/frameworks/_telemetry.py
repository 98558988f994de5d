"""The set-up every framework example shares: spans to an OTLP JSON Lines file through the stripping
processor (the exporting processor goes *inside* ``op.ProvenanceSpanProcessor``)."""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from opentelemetry import trace
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

import otel_provenance as op
from otel_provenance import JsonLinesSpanExporter

# The workspace the scripted model "sees": the files a read-only tool lists.
FILES = ["report.txt", "notes.md"]


def set_up(service: str) -> tuple[TracerProvider, Path]:
    default = Path(tempfile.gettempdir()) / f"otel-provenance-{service}.jsonl"
    output = Path(sys.argv[1]) if len(sys.argv) > 1 else default
    output.unlink(missing_ok=True)
    provider = TracerProvider(resource=Resource.create({"service.name": service}))
    provider.add_span_processor(
        op.ProvenanceSpanProcessor(SimpleSpanProcessor(JsonLinesSpanExporter(output)))
    )
    trace.set_tracer_provider(provider)
    return provider, output
