"""Where stripped spans go: an OTLP JSON Lines file (the embedded default) or OTLP over HTTP/gRPC.

The file format is the official ``opentelemetry-exporter-otlp-json-file`` one — one
``ExportTraceServiceRequest`` (or ``ExportLogsServiceRequest``, ``ExportMetricsServiceRequest``) JSON
object per line, the shape the
Collector's file exporter also writes — and the encoding is done by that package, not by us.

What we add is the write path. The official exporter opens the file as a buffered text stream: a
batch larger than the buffer reaches the file in several ``write(2)`` calls, and a write that fails
half way (disk full) leaves a torn line that the *next* batch is appended to, corrupting a complete
batch. :class:`AppendLineStream` instead collects each line and hands it to the kernel in one
``os.write`` on an ``O_APPEND`` descriptor at ``flush()`` (the exporter flushes once per batch), and
after a failed partial write starts the next line on a fresh line. So a process killed at any point
leaves every complete batch intact and at most one torn last line, which the offline reader reports
and skips. Lines are not ``fsync``-ed: they survive a killed process, not a power cut.
"""

from __future__ import annotations

import io
import os
import threading
from collections.abc import Mapping, Sequence
from typing import Final

from opentelemetry.exporter.otlp.json.file import FileSpanExporter
from opentelemetry.exporter.otlp.json.file._log_exporter import FileLogExporter
from opentelemetry.exporter.otlp.json.file.metric_exporter import FileMetricExporter
from opentelemetry.sdk._logs import ReadableLogRecord
from opentelemetry.sdk._logs.export import LogRecordExporter, LogRecordExportResult
from opentelemetry.sdk.metrics.export import MetricExporter, MetricExportResult, MetricsData
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

from ..errors import ConfigurationError

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
    """One :class:`AppendLineStream` under an official OTLP JSON file exporter (spans or logs)."""

    def __init__(self, path: str | os.PathLike[str], official: type) -> None:
        self._stream = AppendLineStream(path)
        self._exporter = official(stream=self._stream)

    @property
    def path(self) -> str:
        return self._stream.path

    def shutdown(self) -> None:
        self._exporter.shutdown()
        self._stream.close()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return True  # every batch is written and flushed by export itself


class JsonLinesSpanExporter(_JsonLinesFile, SpanExporter):
    """OTLP JSON Lines span file: the official ``FileSpanExporter`` over an :class:`AppendLineStream`."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        super().__init__(path, FileSpanExporter)

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        return self._exporter.export(spans)


class JsonLinesLogExporter(_JsonLinesFile, LogRecordExporter):
    """OTLP JSON Lines log file: the official ``FileLogExporter`` over an :class:`AppendLineStream`."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        super().__init__(path, FileLogExporter)

    def export(self, batch: Sequence[ReadableLogRecord]) -> LogRecordExportResult:
        return self._exporter.export(batch)


class JsonLinesMetricExporter(_JsonLinesFile, MetricExporter):
    """OTLP JSON Lines metrics file: one ``ExportMetricsServiceRequest`` per collection, same writer."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        MetricExporter.__init__(self)  # cumulative temporality, default aggregations
        _JsonLinesFile.__init__(self, path, FileMetricExporter)

    def export(
        self, metrics_data: MetricsData, timeout_millis: float = 10_000, **kwargs: object
    ) -> MetricExportResult:
        return self._exporter.export(metrics_data)

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
    _check_protocol(protocol)
    kwargs: dict[str, object] = {}
    if headers is not None:
        kwargs["headers"] = dict(headers)
    if protocol == PROTOCOL_GRPC:
        from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter as GrpcExporter

        return GrpcExporter(endpoint=endpoint, **kwargs)
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter as HttpExporter

    return HttpExporter(endpoint=_signal_url(endpoint, "v1/traces") if endpoint else None, **kwargs)


def otlp_metric_exporter(
    protocol: str = PROTOCOL_HTTP,
    *,
    endpoint: str | None = None,
    headers: Mapping[str, str] | None = None,
) -> MetricExporter:
    """The real OTLP metric exporter for ``protocol``; arguments as in :func:`otlp_span_exporter`."""
    _check_protocol(protocol)
    kwargs: dict[str, object] = {}
    if headers is not None:
        kwargs["headers"] = dict(headers)
    if protocol == PROTOCOL_GRPC:
        from opentelemetry.exporter.otlp.proto.grpc.metric_exporter import OTLPMetricExporter as GrpcExporter

        return GrpcExporter(endpoint=endpoint, **kwargs)
    from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter as HttpExporter

    return HttpExporter(endpoint=_signal_url(endpoint, "v1/metrics") if endpoint else None, **kwargs)


def otlp_log_exporter(
    protocol: str = PROTOCOL_HTTP,
    *,
    endpoint: str | None = None,
    headers: Mapping[str, str] | None = None,
) -> LogRecordExporter:
    """The real OTLP log exporter for ``protocol``; arguments as in :func:`otlp_span_exporter`."""
    _check_protocol(protocol)
    kwargs: dict[str, object] = {}
    if headers is not None:
        kwargs["headers"] = dict(headers)
    if protocol == PROTOCOL_GRPC:
        from opentelemetry.exporter.otlp.proto.grpc._log_exporter import OTLPLogExporter as GrpcExporter

        return GrpcExporter(endpoint=endpoint, **kwargs)
    from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter as HttpExporter

    return HttpExporter(endpoint=_signal_url(endpoint, "v1/logs") if endpoint else None, **kwargs)
