"""otel-provenance: prove what an AI agent *did*, from its OpenTelemetry traces.

The public API is exactly ``__all__`` (a test guards it).
"""

from __future__ import annotations

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

__all__ = [
    "ConfigurationError",
    "ContractError",
    "InvalidEvidenceError",
    "OtelProvenanceError",
    "ProvenanceError",
    "QueryError",
    "TraceReadError",
    "__version__",
]
