"""``--export-findings``: a command's findings and run verdicts sent beside the traces, over OTLP.

The records are built in ``offline/report/evaluations.py`` (pure); here they become SDK log records
and go out through the official exporters, one row of :data:`EXPORTERS` each — the registry of
where findings can go, read by the flags as ``report.formats.FORMATS`` is read by the report flags:

- ``http/protobuf`` (the default) and ``grpc``: the official ``OTLPLogExporter``; the endpoint is
  ``--findings-endpoint`` (a base URL, as ``OTEL_EXPORTER_OTLP_ENDPOINT``) or the standard
  ``OTEL_EXPORTER_OTLP_LOGS_ENDPOINT`` / ``OTEL_EXPORTER_OTLP_ENDPOINT``, which the exporter reads
  itself, with its headers, timeout, certificate and compression variables; the protocol is
  ``--findings-protocol`` or ``OTEL_EXPORTER_OTLP_LOGS_PROTOCOL`` / ``OTEL_EXPORTER_OTLP_PROTOCOL``.
  No endpoint at all is an error, never a send to a default ``localhost`` nobody listens on.
- ``file`` (``--findings-file FILE``): the same records as OTLP JSON Lines, one
  ``ExportLogsServiceRequest`` per line (the demo's file path, and CI without a backend).

The records' resource is only ``service.name = otel-provenance-gate``: ``OTEL_SERVICE_NAME`` /
``OTEL_RESOURCE_ATTRIBUTES`` meant for an agent never relabel them. The package's own version is the
instrumentation scope's, never ``service.version``: a dashboard's release variable lists the values
of ``service.version``, and the gate's version there would read as a release of the agent (#48); the
release a record judged is its ``agent.finding.release``. All the records of one command carry one timestamp,
the time they are sent (the verdict itself never reads a clock): the logs reader tells one export
from the next by it.

A failed export is exit 1 with a message naming where and why — but a ``fail`` (exit 2) stays a
fail: the release failed whether or not its findings reached the backend. The OpenTelemetry SDK is
imported only when records are sent, so importing the command line loads no SDK.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any, Final, TypeVar

from .. import __version__, semconv
from ..errors import ConfigurationError
from ..extras import install_command
from ..offline.engines.fold import RunFold
from ..offline.model import Run
from ..offline.release import DEFAULT_RELEASE_ATTRIBUTE
from ..offline.report.evaluations import Evaluation, RunRef, run_ref
from ._common import EXIT_ERROR, EXIT_FAIL, IO
from ._writefile import write_text

P = TypeVar("P")

PROTOCOL_HTTP: Final = "http/protobuf"
PROTOCOL_GRPC: Final = "grpc"
FILE: Final = "file"
BATCH: Final = 512  # records per request: bounded requests, and few of them
SCOPE: Final = "otel_provenance.gate"
_ENDPOINT_VARS: Final = ("OTEL_EXPORTER_OTLP_LOGS_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT")
_PROTOCOL_VARS: Final = ("OTEL_EXPORTER_OTLP_LOGS_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL")
# severity of each label: a finding that fails is an error to look at, one that lacks evidence a warning
_SEVERITY: Final = {
    "pass": (9, "INFO"),
    "insufficient": (13, "WARN"),
    "fail": (17, "ERROR"),
    "error": (17, "ERROR"),
}


class ExportError(Exception):
    """The records could not be sent or written: exit 1 (a fail stays 2), the message on stderr."""


@dataclass(frozen=True, slots=True)
class FindingsExporter:
    """One place findings can go: its name, what it is, and how its exporter is built for a target
    (an endpoint URL or None for the environment's; a file path for ``file``)."""

    name: str
    help: str
    build: Callable[[str | None], Any]
    describe: Callable[[str | None], str]


def _otlp(module: str, path: str, extra: str) -> Callable[[str | None], Any]:
    def build(endpoint: str | None) -> Any:
        try:
            exporter_module = __import__(module, fromlist=["OTLPLogExporter"])
        except ModuleNotFoundError as error:
            raise ConfigurationError(
                f"--export-findings over {module.split('.')[4]} needs {error.name}, which is not installed: "
                + install_command(extra)
            ) from None
        if endpoint is None and not any(os.environ.get(name) for name in _ENDPOINT_VARS):
            raise ConfigurationError(
                "--export-findings: no OTLP endpoint; give --findings-endpoint URL or set "
                "OTEL_EXPORTER_OTLP_ENDPOINT (e.g. http://localhost:4318)"
            )
        url = endpoint.rstrip("/") + path if endpoint is not None and path else endpoint
        return exporter_module.OTLPLogExporter(endpoint=url)

    return build


def _where(endpoint: str | None) -> str:
    if endpoint is not None:
        return endpoint
    return next((f"{os.environ[n]} ({n})" for n in _ENDPOINT_VARS if os.environ.get(n)), "(no endpoint)")


EXPORTERS: Final[tuple[FindingsExporter, ...]] = (
    FindingsExporter(
        PROTOCOL_HTTP,
        "OTLP/HTTP protobuf, the official OTLPLogExporter (default)",
        _otlp("opentelemetry.exporter.otlp.proto.http._log_exporter", "/v1/logs", "otlp"),
        _where,
    ),
    FindingsExporter(
        PROTOCOL_GRPC,
        "OTLP/gRPC, the official OTLPLogExporter",
        _otlp("opentelemetry.exporter.otlp.proto.grpc._log_exporter", "", "grpc"),
        _where,
    ),
    FindingsExporter(
        FILE, "OTLP JSON Lines in a file (--findings-file)", lambda path: _FileExporter(path), str
    ),
)
_PROTOCOLS: Final = tuple(e.name for e in EXPORTERS if e.name != FILE)


def exporter_named(name: str) -> FindingsExporter:
    for row in EXPORTERS:
        if row.name == name:
            return row
    raise ConfigurationError(f"findings cannot go over {name!r}; use one of {', '.join(_PROTOCOLS)}")


# --- the command line -------------------------------------------------------------------------------


def add_export_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--export-findings",
        action="store_true",
        help="send each finding and each run's verdict over OTLP as gen_ai.evaluation.result log "
        "records on the run's trace (endpoint: --findings-endpoint or OTEL_EXPORTER_OTLP_ENDPOINT)",
    )
    p.add_argument(
        "--findings-endpoint",
        metavar="URL",
        help="OTLP endpoint for --export-findings, a base URL like OTEL_EXPORTER_OTLP_ENDPOINT "
        "(http://host:4318; /v1/logs is added for OTLP/HTTP)",
    )
    p.add_argument(
        "--findings-protocol",
        choices=_PROTOCOLS,
        help="OTLP protocol for --export-findings (default: OTEL_EXPORTER_OTLP_LOGS_PROTOCOL, "
        f"OTEL_EXPORTER_OTLP_PROTOCOL, else {PROTOCOL_HTTP})",
    )
    p.add_argument(
        "--findings-file",
        metavar="FILE",
        help="also write the same evaluation records to FILE as OTLP JSON Lines",
    )


def wants_export(args: argparse.Namespace) -> bool:
    """Whether a command's arguments ask for any export (``--findings-file ""`` too: it is refused)."""
    return bool(args.export_findings) or args.findings_file is not None


@dataclass(frozen=True, slots=True)
class Target:
    """A destination made ready before any trace is read: a bad endpoint stops the command at once."""

    where: str
    exporter: Any


def prepare(args: argparse.Namespace, command: str) -> list[Target]:
    """The exporters the arguments ask for, built (nothing is sent yet); [] without export flags.
    Endpoint options without ``--export-findings`` are refused: they would be silently ignored."""
    if not args.export_findings and (args.findings_endpoint or args.findings_protocol):
        raise ConfigurationError(
            f"{command}: --findings-endpoint and --findings-protocol need --export-findings"
        )
    chosen: list[tuple[FindingsExporter, str | None]] = []
    if args.export_findings:
        protocol = args.findings_protocol or next(
            (os.environ[n].strip() for n in _PROTOCOL_VARS if os.environ.get(n, "").strip()), PROTOCOL_HTTP
        )
        chosen.append((exporter_named(protocol), args.findings_endpoint))
    if args.findings_file is not None:  # "" (an unset variable in a CI line) is refused, not ignored
        chosen.append((exporter_named(FILE), args.findings_file))
    return [Target(row.describe(target), row.build(target)) for row, target in chosen]


def export(targets: Sequence[Target], io: IO, records: Sequence[Evaluation], code: int) -> int:
    """Send ``records`` to each target; the command's exit code after it (see the module)."""
    sent_at = time.time_ns()
    for target in targets:
        try:
            try:
                _send(target.exporter, records, sent_at)
            finally:
                target.exporter.shutdown()
        except (ExportError, ConfigurationError, OSError) as exc:
            io.error(
                f"--export-findings: {len(records)} evaluation record(s) not exported "
                f"to {target.where}: {exc}"
            )
            return code if code == EXIT_FAIL else EXIT_ERROR
        findings = sum(1 for r in records if r.name != semconv.RUN_EVALUATION)
        io.stderr.write(
            f"otel-provenance: exported {len(records)} evaluation record(s) ({findings} finding(s), "
            f"{len(records) - findings} run verdict(s)) to {target.where}\n"
        )
    return code


def _send(exporter: Any, records: Sequence[Evaluation], sent_at: int) -> None:
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.util.instrumentation import InstrumentationScope

    try:
        from opentelemetry.sdk._logs import ReadableLogRecord  # SDK >= 1.39: the record shape exporters take
    except ImportError:
        raise ConfigurationError(
            "--export-findings needs opentelemetry-sdk >= 1.39 (its log records changed shape there)"
        ) from None
    resource = Resource({semconv.SERVICE_NAME: semconv.GATE_SERVICE_NAME})
    scope = InstrumentationScope(SCOPE, __version__)
    batch = [
        ReadableLogRecord(log_record=_log_record(r, sent_at), resource=resource, instrumentation_scope=scope)
        for r in records
    ]
    for start in range(0, len(batch), BATCH):
        with _exporter_messages() as said:
            result = exporter.export(batch[start : start + BATCH])
        if getattr(result, "name", "") != "SUCCESS":
            why = f" ({said[-1]})" if said else ""
            raise ExportError(f"the exporter answered {getattr(result, 'name', result)}{why}")


@contextlib.contextmanager
def _exporter_messages() -> Iterator[list[str]]:
    """What the official exporters log while they send (they report a refusal by logging it, and
    return FAILURE): kept for the one error line the command prints, instead of loose log lines."""
    import logging  # with the exporters, which load it anyway: not by every gate

    said: list[str] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            said.append(record.getMessage()[:300])

    logger = logging.getLogger("opentelemetry.exporter")
    handler, propagate = Keep(logging.WARNING), logger.propagate
    logger.addHandler(handler)
    logger.propagate = False
    try:
        yield said
    finally:
        logger.removeHandler(handler)
        logger.propagate = propagate


def _log_record(record: Evaluation, sent_at: int) -> Any:
    from opentelemetry._logs import LogRecord, SeverityNumber
    from opentelemetry.trace import TraceFlags

    number, text = _SEVERITY[record.label]
    return LogRecord(
        timestamp=sent_at,
        observed_timestamp=sent_at,
        trace_id=int(record.trace_id, 16) if record.trace_id else 0,
        span_id=int(record.span_id, 16) if record.span_id else 0,
        trace_flags=TraceFlags(TraceFlags.SAMPLED if record.trace_id else TraceFlags.DEFAULT),
        severity_text=text,
        severity_number=SeverityNumber(number),
        body=record.explanation,
        attributes=record.attributes(),
        event_name=semconv.EVALUATION_RESULT_EVENT,
    )


class _FileExporter:
    """OTLP JSON Lines of log records, the whole file written at once (``cli/_writefile``)."""

    def __init__(self, path: str | None) -> None:
        if not path:
            raise ConfigurationError("--findings-file needs a file name")
        self.path = path
        self.lines: list[str] = []

    def export(self, batch: Sequence[Any]) -> Any:
        from opentelemetry.exporter.otlp.proto.common._log_encoder import encode_logs
        from opentelemetry.sdk._logs.export import LogRecordExportResult

        from ..otlp_encoding import json_line  # protobuf, with the SDK: only when records are written

        self.lines.append(json_line(encode_logs(batch)))
        return LogRecordExportResult.SUCCESS

    def shutdown(self) -> None:
        write_text(self.path, "".join(self.lines))


# --- where each run lives (read beside the gate's own fold) -----------------------------------------


def with_run_refs(
    fold: RunFold[P], release: str | None, release_attribute: str = DEFAULT_RELEASE_ATTRIBUTE
) -> RunFold[tuple[P, dict[str, RunRef]]]:
    """``fold`` plus each run's trace and root span (:func:`run_ref`), in the same one read of the
    runs — so a passing run's verdict goes on its own trace, whichever engine reads the runs."""
    return RunFold(
        partial(_over_with_refs, over=fold.over, release=release, release_attribute=release_attribute),
        partial(_merge_with_refs, merge=fold.merge),
    )


def _over_with_refs(
    runs: Iterable[Run], over: Callable[[Iterable[Run]], P], release: str | None, release_attribute: str
) -> tuple[P, dict[str, RunRef]]:
    refs: dict[str, RunRef] = {}

    def noted() -> Iterable[Run]:
        for run in runs:
            if release is None or run.attribution_for(release_attribute).concerns(release):
                refs[run.run_id] = run_ref(run)
            yield run

    return over(noted()), refs


def _merge_with_refs(
    a: tuple[P, dict[str, RunRef]], b: tuple[P, dict[str, RunRef]], merge: Callable[[P, P], P]
) -> tuple[P, dict[str, RunRef]]:
    return merge(a[0], b[0]), {**a[1], **b[1]}
