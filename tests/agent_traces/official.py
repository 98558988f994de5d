"""The exporting side every producer shares: a real SDK ``TracerProvider`` whose resource names the
agent and its release, with the official OTLP JSON file exporter behind a ``SimpleSpanProcessor``."""

from __future__ import annotations

from pathlib import Path

from opentelemetry.exporter.otlp.json.file import FileSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

SERVICE: str = "refund-agent"


def resource(release: str) -> Resource:
    return Resource.create({"service.name": SERVICE, "service.version": release})


def file_processor(out: Path) -> SpanProcessor:
    return SimpleSpanProcessor(FileSpanExporter(str(out)))


def file_provider(out: Path, release: str) -> TracerProvider:
    provider = TracerProvider(resource=resource(release))
    provider.add_span_processor(file_processor(out))
    return provider
