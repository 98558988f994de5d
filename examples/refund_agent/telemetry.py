"""Where the demo's processes send their telemetry: always OTLP JSON Lines files (the gate reads the
span files), and also an OTLP backend such as SigNoz when ``OTEL_EXPORTER_OTLP_ENDPOINT`` is set (the
compose stack sets it). Span exporters sit inside a ``ProvenanceSpanProcessor``: nothing leaves
unstripped. Metrics (the package's tool-call instruments, and the services' request durations) go to
both places through one MeterProvider with two readers — the "existing MeterProvider" set-up of the
README, since ``op.configure`` builds one reader per provider."""

from __future__ import annotations

import os
from pathlib import Path

from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider

import otel_provenance as op
from otel_provenance import JsonLinesMetricExporter, otlp_metric_exporter, use_meter_provider


def tracer_provider(
    service_name: str, service_version: str | None, file: Path, *, set_global: bool
) -> TracerProvider:
    provider = op.configure(
        service_name=service_name,
        service_version=service_version,
        exporter="file",
        file=file,
        metrics=False,  # see meter_provider
        set_global=set_global,
    )
    if os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT"):
        op.configure(tracer_provider=provider, exporter="otlp", metrics=False, set_global=False)
    return provider


def meter_provider(resource: Resource, file: Path) -> MeterProvider:
    """A MeterProvider exporting to ``file`` (and OTLP when configured); the package records into it."""
    file.parent.mkdir(parents=True, exist_ok=True)
    readers = [PeriodicExportingMetricReader(JsonLinesMetricExporter(file))]
    if os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT"):
        readers.append(PeriodicExportingMetricReader(otlp_metric_exporter()))  # reads OTEL_EXPORTER_OTLP_*
    provider = MeterProvider(metric_readers=readers, resource=resource)
    use_meter_provider(provider)
    return provider
