"""otel-provenance: prove what an AI agent *did*, from its OpenTelemetry traces.

The application's public face: the public API is exactly ``__all__`` (a test guards it); CI jobs and
scripts have ``otel_provenance.offline``. Online names are imported lazily so that ``import
otel_provenance`` stays cheap and the offline half never drags in the OTel SDK. ``provenance_session``
and ``ToolPolicy`` need the ``mcp`` extra.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from .errors import (
    ConfigurationError,
    ContractError,
    InvalidEvidenceError,
    OtelProvenanceError,
    ProvenanceError,
    QueryError,
    TraceReadError,
)

__version__ = "0.1.0"

_LAZY = {
    "tool": "otel_provenance.instrument.decorators",
    "run": "otel_provenance.instrument.call.runscope",
    "Budget": "otel_provenance.instrument.call.budget",
    "ProvenanceSpanProcessor": "otel_provenance.instrument.processor",
    "ProvenanceLogRecordProcessor": "otel_provenance.instrument.spans.logs",
    "configure": "otel_provenance.instrument.configure",
    "configure_logs": "otel_provenance.instrument.configure",
    "configure_metrics": "otel_provenance.instrument.configure",
    "unsafe_log_processors": "otel_provenance.instrument.spans.logs",
    "retry_attempt": "otel_provenance.instrument.call.current",
    "StripOptions": "otel_provenance.instrument.spans.redaction",
    "unsafe_processors": "otel_provenance.instrument.spans.leaks",
    "ContentLeakWarning": "otel_provenance.instrument.spans.leaks",
    "NoExportWarning": "otel_provenance.instrument.spans.leaks",
    "JsonLinesSpanExporter": "otel_provenance.instrument.spans.export",
    "JsonLinesMetricExporter": "otel_provenance.instrument.spans.export",
    "otlp_metric_exporter": "otel_provenance.instrument.spans.export",
    "use_meter_provider": "otel_provenance.instrument.spans.metrics",
    "provenance_session": "otel_provenance.instrument.mcp",
    "ToolPolicy": "otel_provenance.instrument.mcp",
    "ApprovalRequest": "otel_provenance.instrument.call.approval",
    "Policy": "otel_provenance.instrument.call.policy",
    "Input": "otel_provenance.instrument.call.policy",
    "adk_plugin": "otel_provenance.instrument.adapters.adk",
    "carry_context_into_threads": "otel_provenance.instrument.adapters.threads",
}

if TYPE_CHECKING:  # pragma: no cover
    from .instrument.adapters.adk import adk_plugin
    from .instrument.adapters.threads import carry_context_into_threads
    from .instrument.call.approval import ApprovalRequest
    from .instrument.call.budget import Budget
    from .instrument.call.current import retry_attempt
    from .instrument.call.policy import Input, Policy
    from .instrument.call.runscope import run
    from .instrument.configure import configure, configure_logs, configure_metrics
    from .instrument.decorators import tool
    from .instrument.mcp import ToolPolicy, provenance_session
    from .instrument.processor import ProvenanceSpanProcessor
    from .instrument.spans.export import JsonLinesMetricExporter, JsonLinesSpanExporter, otlp_metric_exporter
    from .instrument.spans.leaks import ContentLeakWarning, NoExportWarning, unsafe_processors
    from .instrument.spans.logs import ProvenanceLogRecordProcessor, unsafe_log_processors
    from .instrument.spans.metrics import use_meter_provider
    from .instrument.spans.redaction import StripOptions


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'otel_provenance' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


__all__ = [
    "ApprovalRequest",
    "Budget",
    "ConfigurationError",
    "ContentLeakWarning",
    "ContractError",
    "Input",
    "InvalidEvidenceError",
    "JsonLinesMetricExporter",
    "JsonLinesSpanExporter",
    "NoExportWarning",
    "OtelProvenanceError",
    "Policy",
    "ProvenanceError",
    "ProvenanceLogRecordProcessor",
    "ProvenanceSpanProcessor",
    "QueryError",
    "StripOptions",
    "ToolPolicy",
    "TraceReadError",
    "__version__",
    "adk_plugin",
    "carry_context_into_threads",
    "configure",
    "configure_logs",
    "configure_metrics",
    "otlp_metric_exporter",
    "provenance_session",
    "retry_attempt",
    "run",
    "tool",
    "unsafe_log_processors",
    "unsafe_processors",
    "use_meter_provider",
]
