"""The command that installs an extra beside an application's own OpenTelemetry, for error messages.

Every OTLP exporter release requires the SDK of its own release (``opentelemetry-exporter-otlp-proto-http
1.45.2`` requires ``opentelemetry-sdk ~= 1.45.2``), and pip does not weigh what an installed application
requires: ``pip install 'otel-provenance[otlp]'`` alone picks the newest exporter and moves the SDK with
it — into Google ADK 2.13 (``opentelemetry-sdk <= 1.44``) it installed 1.45.2 and broke ``pip check``.
Repeating the application's OpenTelemetry versions on the same command makes pip pick the exporter of
the SDK release the application runs, and nothing moves (``scripts/install_check.sh``, case
``adk-otlp``). So where this package names an extra to install, it prints that command, with the
versions read from what is installed (#48).
"""

from __future__ import annotations

from typing import Final

#: The distributions whose installed versions the command repeats: the SDK (which pins its semantic
#: conventions) and the API it requires. Only those installed are named.
KEPT: Final = ("opentelemetry-api", "opentelemetry-sdk")


def install_command(extra: str) -> str:
    """``pip install 'otel-provenance[EXTRA]' 'opentelemetry-api==V' 'opentelemetry-sdk==V'``, with the
    installed versions (module doc); just the extra where no OpenTelemetry is installed."""
    from importlib import metadata  # loaded when a message needs it (its import costs a gate 0.01 s)

    words = [f"pip install 'otel-provenance[{extra}]'"]
    for name in KEPT:
        try:
            words.append(f"'{name}=={metadata.version(name)}'")
        except metadata.PackageNotFoundError:
            continue
    return " ".join(words)


__all__ = ["KEPT", "install_command"]
