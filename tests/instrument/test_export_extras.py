"""A missing OTLP exporter is named with the extra that installs it (#35).

The base install has no OTLP exporter (every exporter release requires its own SDK release, which would
move an application's SDK); ``op.configure`` asked for one that is not installed raises
``op.ConfigurationError`` naming ``otel-provenance[otlp]`` or ``otel-provenance[grpc]`` — in the command
that repeats the installed OpenTelemetry API and SDK (#48: the bare extra moved Google ADK's SDK). The
exporter packages are made unimportable here; scripts/install_check.sh runs the printed command in a
real ADK app.
"""

from __future__ import annotations

import io
import sys
from importlib.metadata import version

import pytest

import otel_provenance as op

HTTP = "opentelemetry.exporter.otlp.proto.http"
GRPC = "opentelemetry.exporter.otlp.proto.grpc"


def _hide(monkeypatch, package: str) -> None:
    for name in [m for m in sys.modules if m == package or m.startswith(package + ".")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, package, None)  # import of it now fails as if not installed


@pytest.mark.parametrize(
    ("protocol", "package", "extra"),
    [("http/protobuf", HTTP, "otlp"), ("grpc", GRPC, "grpc")],
)
def test_a_missing_exporter_names_its_extra(monkeypatch, protocol, package, extra):
    _hide(monkeypatch, package)
    with pytest.raises(op.ConfigurationError) as raised:
        op.configure(
            exporter="otlp",
            endpoint="http://127.0.0.1:4318",
            protocol=protocol,
            metrics=False,
            set_global=False,
        )
    message = str(raised.value)
    # the command repeats the installed OpenTelemetry, so pip picks the exporter of this SDK (#48)
    pins = " ".join(f"'{name}=={version(name)}'" for name in ("opentelemetry-api", "opentelemetry-sdk"))
    assert f"pip install 'otel-provenance[{extra}]' {pins} " in message
    assert f"needs opentelemetry-exporter-otlp-proto-{package.rsplit('.', 1)[1]}," in message


def test_the_cli_names_the_same_command_for_its_findings_exporter(monkeypatch, tmp_path):
    from otel_provenance.cli import run

    _hide(monkeypatch, "opentelemetry.exporter.otlp.proto.grpc")
    contract = tmp_path / "c.yaml"
    contract.write_text("version: 1\nname: c\nrules: []\n")
    err = io.StringIO()
    argv = ["gate", "check", "--contract", str(contract), "--release", "v1", "--export-findings"]
    argv += ["--findings-protocol", "grpc", "--findings-endpoint", "http://127.0.0.1:9", str(contract)]
    assert run(argv, io.StringIO(), err) == 1
    assert "pip install 'otel-provenance[grpc]' 'opentelemetry-api==" in err.getvalue()


def test_the_other_protocol_still_works_without_the_missing_one(monkeypatch, tmp_path):
    _hide(monkeypatch, GRPC)
    provider = op.configure(
        exporter="otlp", endpoint="http://127.0.0.1:4318", metrics=False, set_global=False, batch=False
    )
    provider.shutdown()


def test_the_file_exporter_needs_no_otlp_exporter(monkeypatch, tmp_path):
    _hide(monkeypatch, HTTP)
    _hide(monkeypatch, GRPC)
    path = tmp_path / "spans.jsonl"
    provider = op.configure(exporter="file", file=str(path), metrics=False, set_global=False, batch=False)
    provider.get_tracer("t").start_span("s").end()
    provider.shutdown()
    assert b'"name":"s"' in path.read_bytes().replace(b" ", b"")
