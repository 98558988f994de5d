"""Names that moved between the OpenTelemetry SDK releases this package supports (see pyproject).

One place for every such difference, so the rest of ``instrument/`` imports one name each. The logs
SDK is still marked unstable upstream and changed shape twice: before 1.35 a processor's hook was
``emit(LogData)``, from 1.35 ``on_emit(LogData)``, and from 1.39 ``on_emit(ReadWriteLogRecord)``,
when the exporter interface was also renamed (``LogExporter`` → ``LogRecordExporter``). The tracing
half works with every supported release; :class:`ProvenanceLogRecordProcessor` needs the 1.39 shape
and says so (:func:`require_current_logs_sdk`) rather than strip records it cannot read.
"""

from __future__ import annotations

from collections.abc import Mapping
from importlib import metadata
from typing import Any, Final

from opentelemetry.attributes import BoundedAttributes

from ...errors import ConfigurationError

LOGS_SDK_MINIMUM: Final = "1.39"

try:  # SDK >= 1.39
    from opentelemetry.sdk._logs import ReadWriteLogRecord
    from opentelemetry.sdk._logs.export import LogRecordExporter, LogRecordExportResult

    HAS_CURRENT_LOGS_SDK: Final = True
except ImportError:  # older SDKs: the same exporter interface under its first name
    from opentelemetry.sdk._logs.export import LogExporter as LogRecordExporter  # type: ignore[assignment]
    from opentelemetry.sdk._logs.export import (  # type: ignore[assignment]
        LogExportResult as LogRecordExportResult,
    )

    ReadWriteLogRecord: Any = None  # type: ignore[no-redef]
    HAS_CURRENT_LOGS_SDK: Final = False  # type: ignore[misc]


def validated_attributes(attributes: Mapping[str, Any], dropped: int) -> BoundedAttributes:
    """Immutable ``BoundedAttributes`` holding ``attributes`` as given, with the SDK's own
    limit-dropped count.

    For values the SDK validated already — a finished span's, event's or link's attributes less what
    stripping removed (a nested map less some keys, an array less some items: still valid) — its
    public constructor would validate each value again, a fifth of what stripping a span costs
    (#45). Every supported SDK keeps the items in a plain ``dict`` at ``_dict`` and the flag at
    ``_immutable``; on an SDK that does not, the public constructor is used
    (``tests/instrument/test_sdk_compat.py`` holds the two equal).
    """
    if _PLAIN_LAYOUT:
        bounded = BoundedAttributes(maxlen=None, immutable=False)
        bounded._dict.update(attributes)
        bounded._immutable = True
    else:  # pragma: no cover - an SDK laid out otherwise
        bounded = BoundedAttributes(maxlen=None, attributes=attributes, immutable=True)
    bounded.dropped = dropped
    return bounded


def _plain_layout() -> bool:
    """Whether the installed SDK's ``BoundedAttributes`` keeps a plain ``dict`` at ``_dict`` and its
    flag at ``_immutable`` (decided once: the layout is the installed release's)."""
    probe = BoundedAttributes(maxlen=None, immutable=False)
    return type(getattr(probe, "_dict", None)) is dict and getattr(probe, "_immutable", None) is False


_PLAIN_LAYOUT: Final = _plain_layout()


def sdk_version() -> str:
    try:
        return metadata.version("opentelemetry-sdk")
    except metadata.PackageNotFoundError:
        return "unknown"


def require_current_logs_sdk(what: str) -> None:
    """Raise :class:`ConfigurationError` when the installed logs SDK predates the 1.39 record shape."""
    if not HAS_CURRENT_LOGS_SDK:
        raise ConfigurationError(
            f"{what} needs opentelemetry-sdk >= {LOGS_SDK_MINIMUM} (its log records changed shape there); "
            f"installed: {sdk_version()}. Spans are supported on this release; upgrade the SDK for logs."
        )


__all__ = [
    "HAS_CURRENT_LOGS_SDK",
    "LOGS_SDK_MINIMUM",
    "LogRecordExportResult",
    "LogRecordExporter",
    "ReadWriteLogRecord",
    "require_current_logs_sdk",
    "sdk_version",
    "validated_attributes",
]
