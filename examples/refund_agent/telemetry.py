"""Where the demo's processes send their spans: always an OTLP JSON Lines file (the gate reads it),
and also an OTLP backend such as SigNoz when ``OTEL_EXPORTER_OTLP_ENDPOINT`` is set (the compose
stack sets it). Both exporters sit inside a ``ProvenanceSpanProcessor``: nothing leaves unstripped."""

from __future__ import annotations

import os
from pathlib import Path

from opentelemetry.sdk.trace import TracerProvider

import otel_provenance as op


def tracer_provider(
    service_name: str, service_version: str | None, file: Path, *, set_global: bool
) -> TracerProvider:
    provider = op.configure(
        service_name=service_name,
        service_version=service_version,
        exporter="file",
        file=file,
        set_global=set_global,
    )
    if os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT"):
        op.configure(tracer_provider=provider, exporter="otlp", set_global=False)
    return provider
