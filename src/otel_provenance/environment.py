"""Every environment variable this package reads, one documented constant each, and the one parser.

The model is the OTel SDK's ``opentelemetry.sdk.environment_variables``: a constant per variable with
its meaning beside it. The standard ``OTEL_*`` variables the package also reads (endpoints,
protocols, service name) are the SDK's own constants, imported where they are used (``instrument``):
this module imports no OTel package, since the offline half reads some of these variables too.

One rule for every variable: unset, empty and blanks mean "not set" (the default applies); a value
that does not parse raises :class:`~otel_provenance.errors.ConfigurationError` naming the variable,
never a value of a secret.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from typing import Final, TypeVar

from .errors import ConfigurationError

# --- the online half: where spans, logs and metrics go (``op.configure``) -----------------------------
OTEL_PROVENANCE_EXPORTER: Final = "OTEL_PROVENANCE_EXPORTER"
"""``otlp`` | ``file`` | ``none``: the span exporter ``op.configure()`` builds (default: OTLP when an
OTLP endpoint is set, else the file)."""
OTEL_PROVENANCE_FILE: Final = "OTEL_PROVENANCE_FILE"
"""The OTLP JSON Lines span file (default ``otel-provenance-spans.jsonl``)."""
OTEL_PROVENANCE_LOGS: Final = "OTEL_PROVENANCE_LOGS"
"""``true`` to configure the logs signal too (default off)."""
OTEL_PROVENANCE_LOGS_FILE: Final = "OTEL_PROVENANCE_LOGS_FILE"
"""The log file (default ``otel-provenance-logs.jsonl``)."""
OTEL_PROVENANCE_METRICS: Final = "OTEL_PROVENANCE_METRICS"
"""``false`` to not configure the metrics signal (default on)."""
OTEL_PROVENANCE_METRICS_FILE: Final = "OTEL_PROVENANCE_METRICS_FILE"
"""The metrics file (default: beside the span file, ``spans.jsonl`` -> ``spans.metrics.jsonl``)."""

# --- the online half: what is stripped --------------------------------------------------------------
OTEL_PROVENANCE_STRIP: Final = "OTEL_PROVENANCE_STRIP"
"""``hybrid`` (default) | ``denylist`` | ``allowlist``: the stripping mode (docs/stripping.md)."""
OTEL_PROVENANCE_STRIP_KEYS: Final = "OTEL_PROVENANCE_STRIP_KEYS"
"""Comma-separated extra forbidden key names."""
OTEL_PROVENANCE_STRIP_PREFIXES: Final = "OTEL_PROVENANCE_STRIP_PREFIXES"
"""Comma-separated extra forbidden key prefixes."""
OTEL_PROVENANCE_ALLOW_KEYS: Final = "OTEL_PROVENANCE_ALLOW_KEYS"
"""Comma-separated exact keys kept after all."""
OTEL_PROVENANCE_EXCEPTION_SCOPE: Final = "OTEL_PROVENANCE_EXCEPTION_SCOPE"
"""``all`` (default) | ``genai``: which spans' exception details are scrubbed."""

# --- the online half: provenance (``instrument.settings``) ------------------------------------------
OTEL_PROVENANCE_DIGEST_KEY: Final = "OTEL_PROVENANCE_DIGEST_KEY"
"""The digest key: 32 random bytes or more, as hex or base64 (``otel-provenance keygen``). Unset: a
random key for this process (``ephemeral-…``)."""
OTEL_PROVENANCE_DIGEST_KEY_ID: Final = "OTEL_PROVENANCE_DIGEST_KEY_ID"
"""The name exported as ``agent.digest.key_id`` (default: derived from the key with scrypt)."""
OTEL_PROVENANCE_ENFORCE: Final = "OTEL_PROVENANCE_ENFORCE"
"""``false`` turns blocking into advisory tagging (default ``true``)."""
OTEL_PROVENANCE_MIN_VALUE_LENGTH: Final = "OTEL_PROVENANCE_MIN_VALUE_LENGTH"
"""The short-value floor: values shorter than this are never ``observed`` (default 4)."""
OTEL_PROVENANCE_LEDGER_MAX_ENTRIES: Final = "OTEL_PROVENANCE_LEDGER_MAX_ENTRIES"
"""How many remembered values one run's ledger holds (default 50,000)."""
OTEL_PROVENANCE_APPROVAL_TIMEOUT: Final = "OTEL_PROVENANCE_APPROVAL_TIMEOUT"
"""Seconds the approver has to answer a call that needs approval before it is denied (default 300)."""

# --- the offline half ------------------------------------------------------------------------------
OTEL_PROVENANCE_READ_MAX_BYTES: Final = "OTEL_PROVENANCE_READ_MAX_BYTES"
"""The most bytes a compressed trace file may expand to (default 64 GiB)."""
OTEL_PROVENANCE_READ_MAX_RATIO: Final = "OTEL_PROVENANCE_READ_MAX_RATIO"
"""The most a compressed trace file may expand, past 512 KiB (default 200)."""
OTEL_PROVENANCE_WRITE_DEADLINE: Final = "OTEL_PROVENANCE_WRITE_DEADLINE"
"""Seconds a report written to a FIFO waits for a reader, and for it to take more (default 60)."""
SIGNOZ_API_KEY: Final = "SIGNOZ_API_KEY"
"""The SigNoz API key (never a flag: it would leak into shell history and process lists)."""

# --- read, not ours --------------------------------------------------------------------------------
PYTEST_CURRENT_TEST: Final = "PYTEST_CURRENT_TEST"
"""Set by pytest while a test runs: the package's own errors are then raised, not swallowed."""

_TRUE: Final = frozenset({"1", "true", "yes", "on"})
_FALSE: Final = frozenset({"0", "false", "no", "off"})
_N = TypeVar("_N", int, float)


def text(name: str, environ: Mapping[str, str] | None = None) -> str | None:
    """The variable's value without surrounding blanks; None when unset or blank."""
    value = (os.environ if environ is None else environ).get(name)
    if value is None or not value.strip():
        return None
    return value.strip()


def names(name: str, environ: Mapping[str, str] | None = None) -> tuple[str, ...]:
    """A comma-separated list, blanks dropped; () when unset."""
    value = text(name, environ)
    return tuple(part.strip() for part in value.split(",") if part.strip()) if value else ()


def flag(name: str, default: bool, environ: Mapping[str, str] | None = None) -> bool:
    """``true``/``false`` (also ``1``/``0``, ``yes``/``no``, ``on``/``off``); ``default`` when unset."""
    value = text(name, environ)
    if value is None:
        return default
    if value.lower() in _TRUE:
        return True
    if value.lower() in _FALSE:
        return False
    raise ConfigurationError(f"{name}: expected true or false")


def integer(name: str, environ: Mapping[str, str] | None = None) -> int | None:
    """A whole number; None when unset."""
    return _parsed(name, environ, int, "an integer")


def number(name: str, environ: Mapping[str, str] | None = None) -> float | None:
    """A number; None when unset."""
    return _parsed(name, environ, float, "a number")


def _parsed(
    name: str, environ: Mapping[str, str] | None, parse: Callable[[str], _N], expected: str
) -> _N | None:
    value = text(name, environ)
    if value is None:
        return None
    try:
        return parse(value)
    except ValueError:
        raise ConfigurationError(f"{name}: expected {expected}") from None
