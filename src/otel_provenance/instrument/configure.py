"""``op.configure()``: provider, stripping processor and exporter in one call.

Every setting resolves the same way: **argument > environment variable > default**. The variables:

==========================================  =========================================================
``OTEL_SERVICE_NAME``                       ``service.name`` (standard; ``service_name=`` wins)
``OTEL_RESOURCE_ATTRIBUTES``                extra resource attributes, e.g. ``service.version=1.4.2``
``OTEL_EXPORTER_OTLP_ENDPOINT``             base OTLP endpoint; when set (or the traces one below),
                                            the default exporter is OTLP instead of the file
``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT``      full OTLP traces URL (standard)
``OTEL_EXPORTER_OTLP_PROTOCOL``             ``http/protobuf`` (default) or ``grpc``
``OTEL_EXPORTER_OTLP_TRACES_PROTOCOL``      same, traces only; wins over the one above
``OTEL_EXPORTER_OTLP_HEADERS`` and the other standard ``OTEL_EXPORTER_OTLP_*`` / ``OTEL_BSP_*``
                                            variables are read by the OTel exporter and batch
                                            processor themselves
``OTEL_PROVENANCE_EXPORTER``                ``otlp`` | ``file`` | ``none``
``OTEL_PROVENANCE_FILE``                    span file (default ``otel-provenance-spans.jsonl``)
``OTEL_PROVENANCE_LOGS``                    ``true`` to also configure the logs signal
``OTEL_PROVENANCE_LOGS_FILE``               log file (default ``otel-provenance-logs.jsonl``)
``OTEL_PROVENANCE_METRICS``                 ``false`` to not configure the metrics signal (default on)
``OTEL_PROVENANCE_METRICS_FILE``            metrics file (default: beside the span file,
                                            ``spans.jsonl`` -> ``spans.metrics.jsonl``; else
                                            ``otel-provenance-metrics.jsonl``)
``OTEL_EXPORTER_OTLP_METRICS_ENDPOINT``     full OTLP metrics URL (standard); also makes OTLP the
                                            metrics default
``OTEL_EXPORTER_OTLP_METRICS_PROTOCOL``     same as the traces one, metrics only
``OTEL_METRIC_EXPORT_INTERVAL``             export period in ms (standard, default 60000; read by
                                            the SDK's periodic reader; a last export runs at exit)
``OTEL_PROVENANCE_STRIP_KEYS``              comma-separated extra forbidden key names
``OTEL_PROVENANCE_STRIP_PREFIXES``          comma-separated extra forbidden key prefixes
``OTEL_PROVENANCE_ALLOW_KEYS``              comma-separated exact keys to keep after all
``OTEL_PROVENANCE_EXCEPTION_SCOPE``         ``all`` (default) | ``genai``
``OTEL_PROVENANCE_STRIP``                   ``hybrid`` (default) | ``denylist`` | ``allowlist``
``OTEL_PROVENANCE_DIGEST_KEY`` …            digest key, key id, enforcement, approval deadline
                                            (``OTEL_PROVENANCE_APPROVAL_TIMEOUT``): see
                                            :mod:`otel_provenance.instrument.base.settings`
==========================================  =========================================================
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final

from opentelemetry import trace
from opentelemetry.sdk import environment_variables as sdk_env
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor, SpanExporter

from .. import environment, semconv
from ..errors import ConfigurationError
from .base import settings as _settings
from .processor import ProvenanceSpanProcessor
from .spans.export import (
    PROTOCOL_HTTP,
    JsonLinesLogExporter,
    JsonLinesMetricExporter,
    JsonLinesSpanExporter,
    otlp_log_exporter,
    otlp_metric_exporter,
    otlp_span_exporter,
)
from .spans.leaks import unsafe_processors, warn_leaks
from .spans.redaction import DEFAULT_STRIP_MODE, STRIP_MODES, StripOptions

# The standard variables are the SDK's own names; this package's are ``otel_provenance.environment``'s.
ENV_OTLP_ENDPOINT: Final = sdk_env.OTEL_EXPORTER_OTLP_ENDPOINT
ENV_OTLP_TRACES_ENDPOINT: Final = sdk_env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT
ENV_OTLP_LOGS_ENDPOINT: Final = sdk_env.OTEL_EXPORTER_OTLP_LOGS_ENDPOINT
ENV_OTLP_METRICS_ENDPOINT: Final = sdk_env.OTEL_EXPORTER_OTLP_METRICS_ENDPOINT
ENV_OTLP_METRICS_PROTOCOL: Final = sdk_env.OTEL_EXPORTER_OTLP_METRICS_PROTOCOL
ENV_OTLP_PROTOCOL: Final = sdk_env.OTEL_EXPORTER_OTLP_PROTOCOL
ENV_OTLP_TRACES_PROTOCOL: Final = sdk_env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL
ENV_OTLP_LOGS_PROTOCOL: Final = sdk_env.OTEL_EXPORTER_OTLP_LOGS_PROTOCOL
ENV_METRICS: Final = environment.OTEL_PROVENANCE_METRICS
ENV_METRICS_FILE: Final = environment.OTEL_PROVENANCE_METRICS_FILE
ENV_EXPORTER: Final = environment.OTEL_PROVENANCE_EXPORTER
ENV_FILE: Final = environment.OTEL_PROVENANCE_FILE
ENV_LOGS: Final = environment.OTEL_PROVENANCE_LOGS
ENV_LOGS_FILE: Final = environment.OTEL_PROVENANCE_LOGS_FILE
ENV_STRIP_KEYS: Final = environment.OTEL_PROVENANCE_STRIP_KEYS
ENV_STRIP_PREFIXES: Final = environment.OTEL_PROVENANCE_STRIP_PREFIXES
ENV_ALLOW_KEYS: Final = environment.OTEL_PROVENANCE_ALLOW_KEYS
ENV_EXCEPTION_SCOPE: Final = environment.OTEL_PROVENANCE_EXCEPTION_SCOPE
ENV_STRIP: Final = environment.OTEL_PROVENANCE_STRIP

DEFAULT_FILE: Final = "otel-provenance-spans.jsonl"
DEFAULT_LOGS_FILE: Final = "otel-provenance-logs.jsonl"
DEFAULT_METRICS_FILE: Final = "otel-provenance-metrics.jsonl"
EXPORTER_OTLP: Final = "otlp"
EXPORTER_FILE: Final = "file"
EXPORTER_NONE: Final = "none"
EXPORTERS: Final = (EXPORTER_OTLP, EXPORTER_FILE, EXPORTER_NONE)


def _strip_mode(strip: str | None) -> str:
    mode = strip if strip is not None else (environment.text(ENV_STRIP) or DEFAULT_STRIP_MODE).lower()
    if mode not in STRIP_MODES:
        where = "strip" if strip is not None else ENV_STRIP
        raise ConfigurationError(f"{where}: expected one of {', '.join(STRIP_MODES)}, got {mode!r}")
    return mode


def strip_options_from_env(strip: str | None = None) -> StripOptions:
    """StripOptions from ``OTEL_PROVENANCE_STRIP`` / ``STRIP_*`` / ``ALLOW_KEYS`` / ``EXCEPTION_SCOPE``
    (``strip``, when given, wins over ``OTEL_PROVENANCE_STRIP``)."""
    scope = (environment.text(ENV_EXCEPTION_SCOPE) or "all").lower()
    if scope not in ("genai", "all"):
        raise ConfigurationError(f"{ENV_EXCEPTION_SCOPE}: expected genai or all")
    return StripOptions(
        keys=environment.names(ENV_STRIP_KEYS),
        prefixes=environment.names(ENV_STRIP_PREFIXES),
        allow=environment.names(ENV_ALLOW_KEYS),
        exception_scope=scope,  # type: ignore[arg-type]
        mode=_strip_mode(strip),  # type: ignore[arg-type]
    )


def _resolve_protocol(protocol: str | None, signal_env: str) -> str:
    return protocol or environment.text(signal_env) or environment.text(ENV_OTLP_PROTOCOL) or PROTOCOL_HTTP


def _resolve_exporter_kind(exporter: str | None, endpoint: str | None, signal_env: str) -> str:
    kind = exporter or environment.text(ENV_EXPORTER)
    if kind is None:
        has_endpoint = endpoint or environment.text(ENV_OTLP_ENDPOINT) or environment.text(signal_env)
        kind = EXPORTER_OTLP if has_endpoint else EXPORTER_FILE
    kind = kind.lower()
    if kind not in EXPORTERS:
        where = "exporter" if exporter else ENV_EXPORTER
        raise ConfigurationError(f"{where}: expected one of {', '.join(EXPORTERS)}, got {kind!r}")
    return kind


def _resource(
    service_name: str | None, service_version: str | None, attributes: Mapping[str, Any] | None
) -> Resource:
    """Resource.create reads OTEL_RESOURCE_ATTRIBUTES and OTEL_SERVICE_NAME; arguments override."""
    explicit: dict[str, Any] = dict(attributes or {})
    if service_name is not None:
        explicit[semconv.SERVICE_NAME] = service_name
    if service_version is not None:
        explicit[semconv.SERVICE_VERSION] = service_version
    return Resource.create(explicit)


def build_span_exporter(
    exporter: str | None = None,
    *,
    endpoint: str | None = None,
    protocol: str | None = None,
    headers: Mapping[str, str] | None = None,
    file: str | os.PathLike[str] | None = None,
) -> SpanExporter | None:
    """The exporter ``configure`` would use (``None`` for ``none``), resolved argument > env > default."""
    kind = _resolve_exporter_kind(exporter, endpoint, ENV_OTLP_TRACES_ENDPOINT)
    if kind == EXPORTER_NONE:
        return None
    if kind == EXPORTER_FILE:
        return JsonLinesSpanExporter(file or environment.text(ENV_FILE) or DEFAULT_FILE)
    protocol = _resolve_protocol(protocol, ENV_OTLP_TRACES_PROTOCOL)
    return otlp_span_exporter(protocol, endpoint=endpoint, headers=headers)


def configure(
    *,
    service_name: str | None = None,
    service_version: str | None = None,
    resource_attributes: Mapping[str, Any] | None = None,
    exporter: str | SpanExporter | None = None,
    endpoint: str | None = None,
    protocol: str | None = None,
    headers: Mapping[str, str] | None = None,
    file: str | os.PathLike[str] | None = None,
    options: StripOptions | None = None,
    strip: str | None = None,
    digest_key: str | bytes | None = None,
    digest_key_id: str | None = None,
    enforce: bool | None = None,
    approver: Callable[..., Any] | None = None,
    approval_timeout: float | None = None,
    batch: bool = True,
    logs: bool | None = None,
    metrics: bool | None = None,
    metrics_file: str | os.PathLike[str] | None = None,
    tracer_provider: TracerProvider | None = None,
    set_global: bool = True,
    contract: str | os.PathLike[str] | Any = None,
) -> TracerProvider:
    """Build (or extend) a TracerProvider whose only exporter sits inside a ProvenanceSpanProcessor.

    ``exporter`` is ``"otlp"``, ``"file"``, ``"none"`` or a ready ``SpanExporter``; unset, it is OTLP
    when an OTLP endpoint is configured and an OTLP JSON Lines file otherwise. ``endpoint`` is a base
    endpoint like ``OTEL_EXPORTER_OTLP_ENDPOINT``. ``tracer_provider`` adds to an existing provider
    (warning if an exporting processor already sits beside the wrapper). ``batch=False`` exports each
    span as it ends (short scripts, tests). ``logs=True`` also runs :func:`configure_logs`.
    ``strip`` (or ``OTEL_PROVENANCE_STRIP``): ``"hybrid"`` (default: the allow-list on spans an AI
    instrumentation made, the deny-list elsewhere), ``"denylist"`` or ``"allowlist"``; with
    ``options`` pass ``StripOptions(mode=...)`` instead (giving both is an error).
    Metrics (:func:`configure_metrics`) follow the same exporter choice; they are on unless
    ``metrics=False`` or ``OTEL_PROVENANCE_METRICS=false`` — and off by default when ``exporter`` is
    a ready ``SpanExporter`` (nothing says where metrics should go; ``metrics=True`` resolves it
    from the variables) or with ``set_global=False`` (``metrics=True`` then points the package's
    instruments at the new, non-global MeterProvider).
    ``approver`` is asked before a call that needs a person's approval (``@op.tool(needs_approval=...)``)
    runs: a function, sync or async, of an ``op.ApprovalRequest`` that answers ``True`` to approve;
    ``approval_timeout`` (seconds, else ``OTEL_PROVENANCE_APPROVAL_TIMEOUT``, 300) is its deadline.
    ``contract`` (a contract file, the one the gate reads) is judged before every tool call of every
    run (:mod:`.guard`). Digest key, key id, enforcement and the approver go to
    :func:`settings.configure_settings`. Raises :class:`ConfigurationError` naming the argument or
    variable that is wrong.
    """
    guard = None
    if contract is not None:
        from .call.guard import ContractGuard  # the offline rules load only when a contract is given

        guard = ContractGuard.load(contract, "op.configure")
    _settings.configure_settings(
        digest_key=digest_key,
        key_id=digest_key_id,
        enforce=enforce,
        approver=approver,
        approval_timeout=approval_timeout,
    )
    if guard is not None:
        _settings.update_settings(contract=guard)
    if options is not None and strip is not None:
        raise ConfigurationError("strip: give the mode in StripOptions(mode=...) when passing options")
    strip_options = options if options is not None else strip_options_from_env(strip)
    if isinstance(exporter, str) or exporter is None:
        span_exporter = build_span_exporter(
            exporter, endpoint=endpoint, protocol=protocol, headers=headers, file=file
        )
    elif isinstance(exporter, SpanExporter):
        span_exporter = exporter
    else:
        raise ConfigurationError(
            f"exporter: expected a name or a SpanExporter, got {type(exporter).__name__}"
        )

    downstream: Sequence[Any] = ()
    if span_exporter is not None:
        downstream = (BatchSpanProcessor(span_exporter) if batch else SimpleSpanProcessor(span_exporter),)
    wrapper = ProvenanceSpanProcessor(*downstream, options=strip_options)

    if tracer_provider is None:
        tracer_provider = TracerProvider(
            resource=_resource(service_name, service_version, resource_attributes)
        )
    elif service_name is not None or service_version is not None or resource_attributes:
        raise ConfigurationError(
            "tracer_provider: an existing provider keeps its resource; "
            "do not also pass service_name, service_version or resource_attributes"
        )
    tracer_provider.add_span_processor(wrapper)
    leaks = unsafe_processors(tracer_provider)
    if leaks:
        warn_leaks(leaks)
    if set_global:
        trace.set_tracer_provider(tracer_provider)
    metrics_on = metrics if metrics is not None else environment.flag(ENV_METRICS, default=True)
    # By default only where the package records: the global provider (a second, non-global
    # configure call would build a MeterProvider nothing records into) and a named exporter choice.
    if metrics_on and (metrics is not None or (set_global and not isinstance(exporter, SpanExporter))):
        meter_provider = configure_metrics(
            resource=tracer_provider.resource,
            exporter=exporter if isinstance(exporter, str) else None,
            endpoint=endpoint,
            protocol=protocol,
            headers=headers,
            file=metrics_file or _metrics_file_beside(file),
            set_global=set_global,
        )
        if meter_provider is not None and not set_global:  # asked for explicitly: record into it
            from .spans import metrics as tool_metrics

            tool_metrics.use_meter_provider(meter_provider)
    if logs if logs is not None else environment.flag(ENV_LOGS, False):
        configure_logs(
            resource=tracer_provider.resource,
            exporter=exporter if isinstance(exporter, str) else None,
            endpoint=endpoint,
            protocol=protocol,
            headers=headers,
            options=strip_options,
            set_global=set_global,
        )
    return tracer_provider


def configure_logs(
    *,
    resource: Resource | None = None,
    exporter: str | None = None,
    endpoint: str | None = None,
    protocol: str | None = None,
    headers: Mapping[str, str] | None = None,
    file: str | os.PathLike[str] | None = None,
    options: StripOptions | None = None,
    set_global: bool = True,
) -> Any:
    """A LoggerProvider whose exporter sits inside a ProvenanceLogRecordProcessor.

    Same resolution as :func:`configure`; the file default is ``OTEL_PROVENANCE_LOGS_FILE`` /
    ``otel-provenance-logs.jsonl``. Returns the ``opentelemetry.sdk._logs.LoggerProvider``.
    """
    from .base._sdkcompat import require_current_logs_sdk

    require_current_logs_sdk("configure_logs (logs=True, OTEL_PROVENANCE_LOGS)")
    from opentelemetry._logs import set_logger_provider
    from opentelemetry.sdk._logs import LoggerProvider
    from opentelemetry.sdk._logs.export import BatchLogRecordProcessor

    from .spans.logs import ProvenanceLogRecordProcessor

    kind = _resolve_exporter_kind(exporter, endpoint, ENV_OTLP_LOGS_ENDPOINT)
    downstream = []
    if kind == EXPORTER_FILE:
        downstream.append(
            BatchLogRecordProcessor(
                JsonLinesLogExporter(file or environment.text(ENV_LOGS_FILE) or DEFAULT_LOGS_FILE)
            )
        )
    elif kind == EXPORTER_OTLP:
        log_protocol = _resolve_protocol(protocol, ENV_OTLP_LOGS_PROTOCOL)
        downstream.append(
            BatchLogRecordProcessor(otlp_log_exporter(log_protocol, endpoint=endpoint, headers=headers))
        )
    provider = LoggerProvider(resource=resource or _resource(None, None, None))
    provider.add_log_record_processor(
        ProvenanceLogRecordProcessor(
            *downstream, options=options if options is not None else strip_options_from_env()
        )
    )
    if set_global:
        set_logger_provider(provider)
    return provider


def _metrics_file_beside(span_file: str | os.PathLike[str] | None) -> str | None:
    """``spans.jsonl`` -> ``spans.metrics.jsonl``, for a span file named by argument or variable."""
    if environment.text(ENV_METRICS_FILE):
        return None  # the variable wins over the derived name
    path = os.fspath(span_file) if span_file is not None else environment.text(ENV_FILE)
    if path is None:
        return None
    root, ext = os.path.splitext(path)
    return f"{root}.metrics{ext or '.jsonl'}"


def configure_metrics(
    *,
    resource: Resource | None = None,
    exporter: str | None = None,
    endpoint: str | None = None,
    protocol: str | None = None,
    headers: Mapping[str, str] | None = None,
    file: str | os.PathLike[str] | None = None,
    export_interval_millis: float | None = None,
    set_global: bool = True,
) -> Any:
    """A MeterProvider exporting this package's tool metrics (:mod:`.metrics`), or ``None`` for ``none``.

    Same resolution as :func:`configure` (OTLP when an endpoint is set, else an OTLP JSON Lines
    file: ``file`` > ``OTEL_PROVENANCE_METRICS_FILE`` > ``otel-provenance-metrics.jsonl``). The
    reader exports every ``export_interval_millis`` (else ``OTEL_METRIC_EXPORT_INTERVAL``, 60 s)
    and once more at shutdown (the SDK shuts the provider down at exit). With ``set_global`` the
    provider becomes the global one and the package's instruments record into it.
    """
    from opentelemetry import metrics as metrics_api
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader

    from .spans import metrics as tool_metrics

    kind = _resolve_exporter_kind(exporter, endpoint, ENV_OTLP_METRICS_ENDPOINT)
    if kind == EXPORTER_NONE:
        return None
    if kind == EXPORTER_FILE:
        metric_exporter: Any = JsonLinesMetricExporter(
            file or environment.text(ENV_METRICS_FILE) or DEFAULT_METRICS_FILE
        )
    else:
        metric_protocol = _resolve_protocol(protocol, ENV_OTLP_METRICS_PROTOCOL)
        metric_exporter = otlp_metric_exporter(metric_protocol, endpoint=endpoint, headers=headers)
    reader = PeriodicExportingMetricReader(metric_exporter, export_interval_millis=export_interval_millis)
    provider = MeterProvider(metric_readers=[reader], resource=resource or _resource(None, None, None))
    if set_global:
        metrics_api.set_meter_provider(provider)
        tool_metrics.use_meter_provider(provider)  # also when a global provider was already set
    return provider
