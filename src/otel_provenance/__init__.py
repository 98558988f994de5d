"""otel-provenance: prove what an AI agent *did*, from its OpenTelemetry traces.

The public API is exactly ``__all__`` (a test guards it). Online names are imported lazily so that
``import otel_provenance`` stays cheap and the offline half never drags in the OTel SDK.
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
    "run": "otel_provenance.instrument.runscope",
    "Budget": "otel_provenance.instrument.budget",
    "ProvenanceSpanProcessor": "otel_provenance.instrument.processor",
    "ProvenanceLogRecordProcessor": "otel_provenance.instrument.logs",
    "configure": "otel_provenance.instrument.configure",
}

if TYPE_CHECKING:  # pragma: no cover
    from .instrument.budget import Budget
    from .instrument.configure import configure
    from .instrument.decorators import tool
    from .instrument.logs import ProvenanceLogRecordProcessor
    from .instrument.processor import ProvenanceSpanProcessor
    from .instrument.runscope import run


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'otel_provenance' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


__all__ = [
    "Budget",
    "ConfigurationError",
    "ContractError",
    "InvalidEvidenceError",
    "OtelProvenanceError",
    "ProvenanceError",
    "ProvenanceLogRecordProcessor",
    "ProvenanceSpanProcessor",
    "QueryError",
    "TraceReadError",
    "__version__",
    "configure",
    "run",
    "tool",
]
