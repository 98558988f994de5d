"""The export flags as ``--help`` shows them (#50): every command that exports findings lists the same
four flags, with the metavars docs/findings.md's table names and what each flag does, word for word."""

from __future__ import annotations

import io
import re

import pytest

from otel_provenance.cli import run

EXPORT_FLAGS_HELP = (
    "--export-findings send each finding and each run's verdict over OTLP as gen_ai.evaluation.result "
    "log records on the run's trace (endpoint: --findings-endpoint or OTEL_EXPORTER_OTLP_ENDPOINT) "
    "--findings-endpoint URL OTLP endpoint for --export-findings, a base URL like "
    "OTEL_EXPORTER_OTLP_ENDPOINT (http://host:4318; /v1/logs is added for OTLP/HTTP) "
    "--findings-protocol {http/protobuf,grpc} OTLP protocol for --export-findings (default: "
    "OTEL_EXPORTER_OTLP_LOGS_PROTOCOL, OTEL_EXPORTER_OTLP_PROTOCOL, else http/protobuf) "
    "--findings-file FILE also write the same evaluation records to FILE as OTLP JSON Lines"
)


@pytest.mark.parametrize("command", [("gate", "check"), ("gate", "merge"), ("audit",)])
def test_each_exporting_command_lists_the_export_flags_with_what_each_does(
    command: tuple[str, ...], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "1000")  # argparse wraps at hyphens too: one line per flag
    out, err = io.StringIO(), io.StringIO()
    assert run([*command, "--help"], out, err) == 0
    text = " ".join(out.getvalue().split())  # argparse wraps the help text
    # the flags' entries, each ending where the next option, the epilog or the help ends
    assert re.search(re.escape(EXPORT_FLAGS_HELP) + r"( --| exit codes:|$)", text), text
