"""Where stripped spans go: an OTLP JSON Lines file (the embedded default) or OTLP over HTTP/gRPC.

The file format is the one the official ``opentelemetry-exporter-otlp-json-file`` package and the
Collector's file exporter write — one ``ExportTraceServiceRequest`` (or ``ExportLogsServiceRequest``,
``ExportMetricsServiceRequest``) JSON object per line — and the bytes are the same (a test compares
them). The request is built by
the OTLP protobuf encoder of ``opentelemetry-exporter-otlp-proto-common``, which every OTLP exporter
already installs, and rendered by :mod:`.otlp_json`; so the file writer works with whatever SDK
release the application runs, and does not need the official JSON package (which pins one SDK).

What we add is the write path. A buffered text stream hands a batch larger than its buffer to the
file in several ``write(2)`` calls, and a write that fails half way (disk full) leaves a torn line that
the *next* batch is appended to, corrupting a complete batch. :class:`AppendLineStream` instead
collects each line and hands it to the kernel in one ``os.write`` on an ``O_APPEND`` descriptor at
``flush()`` (once per batch), and after a failed partial write starts the next line on a fresh line.
So a process killed at any point leaves every complete batch intact and at most one torn last line,
which the offline reader reports and skips. Lines are not ``fsync``-ed: they survive a killed
process, not a power cut.
"""

from __future__ import annotations

import importlib
import io
import logging
import os
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final

from opentelemetry.exporter.otlp.proto.common.metrics_encoder import encode_metrics
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.metrics.export import MetricExporter, MetricExportResult, MetricsData
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

from ...errors import ConfigurationError
from ...extras import install_command
from ...otlp_encoding import json_line
from ..base._sdkcompat import LogRecordExporter, LogRecordExportResult
from ..base.internal_errors import reraise_own_bug_under_pytest

_log = logging.getLogger("otel_provenance")

PROTOCOL_HTTP: Final = "http/protobuf"
PROTOCOL_GRPC: Final = "grpc"
PROTOCOLS: Final = (PROTOCOL_HTTP, PROTOCOL_GRPC)


class AppendLineStream(io.TextIOBase):
    """A text stream that writes each flushed chunk to the file with one ``os.write`` (O_APPEND)."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        super().__init__()
        self.path = os.fspath(path)
        try:
            self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o644)
        except OSError as error:
            raise ConfigurationError(f"{self.path}: cannot open for appending ({error.strerror})") from None
        self._pending: list[str] = []
        self._torn = False  # the last line on disk is incomplete: start the next one on a new line
        self._lock = threading.Lock()

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        if self.closed:
            raise ValueError("write to closed AppendLineStream")
        self._pending.append(text)
        return len(text)

    def flush(self) -> None:
        if self.closed:
            return
        with self._lock:
            data = "".join(self._pending).encode("utf-8")
            self._pending.clear()
            if not data:
                return
            if self._torn:
                data = b"\n" + data
            view = memoryview(data)
            written = 0
            try:
                while written < len(view):
                    written += os.write(self._fd, view[written:])
            except OSError:
                self._torn = self._torn or written > 0
                raise
            self._torn = False

    def close(self) -> None:
        if self.closed:
            return
        try:
            self.flush()
        finally:
            os.close(self._fd)
            super().close()


class _JsonLinesFile:
    """One :class:`AppendLineStream`; each export encodes a batch and writes it as one line."""

    def __init__(self, path: str | os.PathLike[str], encode: Callable[[Any], Any], kind: str) -> None:
        self._stream = AppendLineStream(path)
        self._encode = encode
        self._kind = kind
        self._shutdown = False
        self._lock = threading.Lock()

    @property
    def path(self) -> str:
        return self._stream.path

    def _write(self, batch: Sequence[Any]) -> bool:
        """Encode and write ``batch``; False (logged, never raised) when it could not be written."""
        if self._shutdown:
            _log.warning("%s: exporter already shut down, %s batch dropped", self.path, self._kind)
            return False
        try:
            request = self._encode(batch)
            line = json_line(request) if request.ListFields() else None
            with self._lock:
                if line is not None:
                    self._stream.write(line)
                self._stream.flush()
        except Exception as error:  # an exporter never raises into the application
            reraise_own_bug_under_pytest(error)
            _log.error("%s: cannot write %s batch (%s)", self.path, self._kind, type(error).__name__)
            return False
        return True

    def shutdown(self, *args: Any, **kwargs: Any) -> None:
        if self._shutdown:
            return
        self._shutdown = True
        with self._lock:
            self._stream.close()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return True  # every batch is written and flushed by export itself


class JsonLinesSpanExporter(_JsonLinesFile, SpanExporter):
    """OTLP JSON Lines span file, one ``ExportTraceServiceRequest`` per batch."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        super().__init__(path, encode_spans, "spans")

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        return SpanExportResult.SUCCESS if self._write(spans) else SpanExportResult.FAILURE


class JsonLinesLogExporter(_JsonLinesFile, LogRecordExporter):
    """OTLP JSON Lines log file, one ``ExportLogsServiceRequest`` per batch."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        # Imported here, not at module level: the base install does not pin the OTLP encoder to the
        # application's SDK (#35), and a newer encoder's logs part needs a newer SDK's log types than
        # the spans and metrics parts do (its 1.45 log encoder fails to import beside SDK 1.33).
        from opentelemetry.exporter.otlp.proto.common._log_encoder import encode_logs

        super().__init__(path, encode_logs, "logs")

    def export(self, batch: Sequence[Any]) -> LogRecordExportResult:
        return LogRecordExportResult.SUCCESS if self._write(batch) else LogRecordExportResult.FAILURE


class JsonLinesMetricExporter(_JsonLinesFile, MetricExporter):
    """OTLP JSON Lines metrics file: one ``ExportMetricsServiceRequest`` per collection, same writer."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        MetricExporter.__init__(self)  # cumulative temporality, default aggregations
        _JsonLinesFile.__init__(self, path, encode_metrics, "metrics")

    def export(
        self, metrics_data: MetricsData, timeout_millis: float = 10_000, **kwargs: object
    ) -> MetricExportResult:
        return MetricExportResult.SUCCESS if self._write(metrics_data) else MetricExportResult.FAILURE

    def shutdown(self, timeout_millis: float = 30_000, **kwargs) -> None:
        _JsonLinesFile.shutdown(self)


def _check_protocol(protocol: str) -> None:
    if protocol not in PROTOCOLS:
        raise ConfigurationError(
            f"OTLP protocol {protocol!r} is not supported; use one of {', '.join(PROTOCOLS)}"
        )


def _signal_url(endpoint: str, path: str) -> str:
    """Base endpoint (as in OTEL_EXPORTER_OTLP_ENDPOINT) plus the signal path, for OTLP/HTTP."""
    return endpoint.rstrip("/") + "/" + path


#: Per signal: (gRPC module, HTTP module, exporter class, OTLP/HTTP path). The modules are imported
#: only when that exporter is built, so an application pays for the protocol it uses.
_OTLP_EXPORTERS: Final = {
    "traces": (
        "opentelemetry.exporter.otlp.proto.grpc.trace_exporter",
        "opentelemetry.exporter.otlp.proto.http.trace_exporter",
        "OTLPSpanExporter",
        "v1/traces",
    ),
    "metrics": (
        "opentelemetry.exporter.otlp.proto.grpc.metric_exporter",
        "opentelemetry.exporter.otlp.proto.http.metric_exporter",
        "OTLPMetricExporter",
        "v1/metrics",
    ),
    "logs": (
        "opentelemetry.exporter.otlp.proto.grpc._log_exporter",
        "opentelemetry.exporter.otlp.proto.http._log_exporter",
        "OTLPLogExporter",
        "v1/logs",
    ),
}


def _otlp_exporter(
    signal: str, protocol: str, endpoint: str | None, headers: Mapping[str, str] | None
) -> Any:
    _check_protocol(protocol)
    grpc_module, http_module, name, path = _OTLP_EXPORTERS[signal]
    kwargs: dict[str, object] = {}
    if headers is not None:
        kwargs["headers"] = dict(headers)
    if protocol == PROTOCOL_GRPC:
        return getattr(_exporter_module(grpc_module, protocol), name)(endpoint=endpoint, **kwargs)
    url = _signal_url(endpoint, path) if endpoint else None
    return getattr(_exporter_module(http_module, protocol), name)(endpoint=url, **kwargs)


#: Per protocol: the package of its OTLP exporter and the extra that installs it (pyproject.toml).
EXPORTER_EXTRAS: Final = {
    PROTOCOL_HTTP: ("opentelemetry-exporter-otlp-proto-http", "otlp"),
    PROTOCOL_GRPC: ("opentelemetry-exporter-otlp-proto-grpc", "grpc"),
}


def _exporter_module(module: str, protocol: str) -> Any:
    """The exporter's module; if its package is not installed, a ConfigurationError naming the extra.

    The base install has no OTLP exporter (each release requires its own SDK release, which would move
    an application's SDK), so an application that lacks one gets it from the extra."""
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as error:
        missing = error.name or ""
        if not (module == missing or module.startswith(missing + ".")):
            raise  # the exporter is there but something it imports is not: not ours to rename
        package, extra = EXPORTER_EXTRAS[protocol]
        raise ConfigurationError(
            f"OTLP protocol {protocol!r} needs {package}, which is not installed: {install_command(extra)} "
            "(the installed OpenTelemetry repeated, so pip picks the exporter of this SDK release)"
        ) from None


def otlp_span_exporter(
    protocol: str = PROTOCOL_HTTP,
    *,
    endpoint: str | None = None,
    headers: Mapping[str, str] | None = None,
) -> SpanExporter:
    """The real OTLP span exporter for ``protocol``.

    ``endpoint`` is a *base* endpoint like ``OTEL_EXPORTER_OTLP_ENDPOINT`` (``http://host:4318``
    for HTTP — ``/v1/traces`` is appended — or ``http://host:4317`` for gRPC). Left ``None``, the
    exporter reads the standard ``OTEL_EXPORTER_OTLP_*`` variables itself (endpoint, headers,
    certificates, compression, timeout).
    """
    return _otlp_exporter("traces", protocol, endpoint, headers)


def otlp_metric_exporter(
    protocol: str = PROTOCOL_HTTP,
    *,
    endpoint: str | None = None,
    headers: Mapping[str, str] | None = None,
) -> MetricExporter:
    """The real OTLP metric exporter for ``protocol``; arguments as in :func:`otlp_span_exporter`."""
    return _otlp_exporter("metrics", protocol, endpoint, headers)


def otlp_log_exporter(
    protocol: str = PROTOCOL_HTTP,
    *,
    endpoint: str | None = None,
    headers: Mapping[str, str] | None = None,
) -> LogRecordExporter:
    """The real OTLP log exporter for ``protocol``; arguments as in :func:`otlp_span_exporter`."""
    return _otlp_exporter("logs", protocol, endpoint, headers)
