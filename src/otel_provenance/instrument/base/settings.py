"""Process-wide settings of the online half: digest key, enforcement switch, short-value floor, ledger
bound, and who approves a call that needs a person's approval (the approver and its deadline).

Precedence is always: explicit argument to :func:`configure_settings` > ``OTEL_PROVENANCE_*`` environment
variable > built-in default. Settings are resolved lazily on first use (so an application can set the
environment before importing its tools) and can be replaced at any time; tool calls read the current
object once per call, so a call never sees half of an update.

Digest key: there is deliberately no unkeyed fallback. A plain hash of a short value (a PIN, an account
number) is reversed by brute force in seconds, so with no key configured we draw a random 256-bit key
for this process and name it ``ephemeral-<random>``: digests stay linkable inside one process (retry
detection, data-flow checks) but cannot be linked across processes or reversed offline.

A configured key must be at least 32 random bytes, written as hex or base64 (``otel-provenance keygen``
prints one): a key someone chose (``Summer2026!Summer``) can be guessed offline from anything computed
with it, and then every short value digested under it (a PIN) falls too. Randomness cannot be measured
from one sample, so what is refused is what is plainly not random: text that is neither hex nor
base64, fewer than 32 bytes, or bytes with few distinct values (``"k" * 64``).

The exported key id is not an offline oracle: unless the user sets one, it is derived with scrypt
(memory-hard, ~0.1 s) under a fixed salt, once per process and key, and names the key without letting
anyone test guesses of it at speed.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import math
import os
import re
import secrets
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from ... import environment
from ...errors import ConfigurationError

ENV_DIGEST_KEY = environment.OTEL_PROVENANCE_DIGEST_KEY
ENV_DIGEST_KEY_ID = environment.OTEL_PROVENANCE_DIGEST_KEY_ID
ENV_ENFORCE = environment.OTEL_PROVENANCE_ENFORCE
ENV_MIN_VALUE_LENGTH = environment.OTEL_PROVENANCE_MIN_VALUE_LENGTH
ENV_LEDGER_MAX_ENTRIES = environment.OTEL_PROVENANCE_LEDGER_MAX_ENTRIES
ENV_APPROVAL_TIMEOUT = environment.OTEL_PROVENANCE_APPROVAL_TIMEOUT

DEFAULT_MIN_VALUE_LENGTH = 4
DEFAULT_LEDGER_MAX_ENTRIES = 50_000
DEFAULT_APPROVAL_TIMEOUT = 300.0  # seconds a person has to answer before the call is denied
MIN_KEY_BYTES = 32  # 256 random bits at least
MIN_DISTINCT_BYTES = 16  # 32 random bytes hold ~30 distinct values; a typed or repeated key far fewer
KEY_ID_SALT = b"otel-provenance/key-id/v1"
_SCRYPT = {"n": 1 << 14, "r": 8, "p": 1, "dklen": 16}
_HEX = re.compile(r"[0-9a-fA-F]+")
_BASE64 = re.compile(r"[A-Za-z0-9+/_-]+={0,2}")
EPHEMERAL_KEY_ID_PREFIX = "ephemeral-"


@dataclass(frozen=True, slots=True)
class Settings:
    """Resolved settings. ``digest_key`` never leaves the process; ``key_id`` is exported on spans.
    ``approver`` answers an :class:`.approval.ApprovalRequest` (``None``: every ask is denied)."""

    digest_key: bytes
    key_id: str
    enforce: bool = True
    min_value_length: int = DEFAULT_MIN_VALUE_LENGTH
    ledger_max_entries: int = DEFAULT_LEDGER_MAX_ENTRIES
    approver: Callable[..., object] | None = None
    approval_timeout: float = DEFAULT_APPROVAL_TIMEOUT
    contract: Any = None  # the contract every run is judged by at call time (.guard.ContractGuard)

    @property
    def ephemeral_key(self) -> bool:
        return self.key_id.startswith(EPHEMERAL_KEY_ID_PREFIX)

    def __repr__(self) -> str:  # never print the key
        return (
            f"Settings(key_id={self.key_id!r}, enforce={self.enforce}, "
            f"min_value_length={self.min_value_length}, ledger_max_entries={self.ledger_max_entries}, "
            f"approver={'set' if self.approver is not None else None}, "
            f"approval_timeout={self.approval_timeout:g})"
        )


_lock = threading.Lock()
_first_use = threading.Lock()
_current: Settings | None = None


def get_settings() -> Settings:
    """The current settings, resolved from the environment on first use."""
    current = _current
    if current is None:
        with _first_use:  # two threads must not each draw their own ephemeral key
            current = _current
            if current is None:
                current = configure_settings()
    return current


def configure_settings(
    *,
    digest_key: str | bytes | None = None,
    key_id: str | None = None,
    enforce: bool | None = None,
    min_value_length: int | None = None,
    ledger_max_entries: int | None = None,
    approver: Callable[..., object] | None = None,
    approval_timeout: float | None = None,
    environ: Mapping[str, str] | None = None,
) -> Settings:
    """Resolve and install process-wide settings; arguments win over ``OTEL_PROVENANCE_*`` variables.

    Raises :class:`ConfigurationError` naming the argument or variable when a value is invalid (a key
    shorter than 16 bytes, a non-boolean enforce flag, a negative floor). ``op.configure`` calls this.
    """
    global _current
    env = os.environ if environ is None else environ
    key_source = "digest_key"
    if digest_key is None and environment.text(ENV_DIGEST_KEY, env):
        digest_key, key_source = environment.text(ENV_DIGEST_KEY, env), ENV_DIGEST_KEY
    if key_id is None:
        key_id = environment.text(ENV_DIGEST_KEY_ID, env)
    if digest_key is None:
        key_bytes = secrets.token_bytes(32)
        key_id = EPHEMERAL_KEY_ID_PREFIX + secrets.token_hex(4)
    else:
        key_bytes = _key_bytes(digest_key, key_source)
        if key_id is None:
            key_id = derived_key_id(key_bytes)
    if not key_id or not isinstance(key_id, str):
        raise ConfigurationError("key_id: must be a non-empty string")

    settings = Settings(
        digest_key=key_bytes,
        key_id=key_id,
        enforce=_bool(enforce, ENV_ENFORCE, env, default=True),
        min_value_length=_int(
            min_value_length,
            ENV_MIN_VALUE_LENGTH,
            env,
            default=DEFAULT_MIN_VALUE_LENGTH,
            minimum=0,
        ),
        ledger_max_entries=_int(
            ledger_max_entries,
            ENV_LEDGER_MAX_ENTRIES,
            env,
            default=DEFAULT_LEDGER_MAX_ENTRIES,
            minimum=1,
        ),
        approver=approver_option(approver, "approver"),
        approval_timeout=_timeout(approval_timeout, env),
    )
    with _lock:
        _current = settings
    return settings


def update_settings(**changes: object) -> Settings:
    """Change some fields of the current settings, keeping the rest (used by tests and ``op.configure``)."""
    global _current
    settings = replace(get_settings(), **changes)  # type: ignore[arg-type]
    with _lock:
        _current = settings
    return settings


def reset_settings() -> None:
    """Forget the installed settings; the next :func:`get_settings` re-reads the environment."""
    global _current
    with _lock:
        _current = None


_KEY_IDS: dict[bytes, str] = {}
_KEY_IDS_LOCK = threading.Lock()


def derived_key_id(key: bytes) -> str:
    """``k-`` + 16 hex digits of scrypt(key, fixed salt): computed once per process and key."""
    with _KEY_IDS_LOCK:
        found = _KEY_IDS.get(key)
        if found is None:
            digest = hashlib.scrypt(key, salt=KEY_ID_SALT, maxmem=64 << 20, **_SCRYPT)  # type: ignore[arg-type]
            found = "k-" + digest.hex()[:16]
            if len(_KEY_IDS) >= 8:
                _KEY_IDS.clear()
            _KEY_IDS[key] = found
        return found


def _decoded(text: str) -> bytes | None:
    """Hex or base64 (standard or URL-safe) text as bytes; ``None`` if it is neither."""
    if _HEX.fullmatch(text) and len(text) % 2 == 0:
        return bytes.fromhex(text)
    if _BASE64.fullmatch(text):
        padded = text + "=" * (-len(text) % 4)
        try:
            return base64.b64decode(padded.replace("-", "+").replace("_", "/"), validate=True)
        except (binascii.Error, ValueError):
            return None
    return None


def _key_bytes(key: str | bytes, where: str) -> bytes:
    hint = "generate one with `otel-provenance keygen`"
    if isinstance(key, str):
        raw = _decoded(key.strip())
        if raw is None:
            raise ConfigurationError(
                f"{where}: digest key must be random bytes written as hex or base64 ({hint})"
            )
    elif isinstance(key, bytes | bytearray):
        raw = bytes(key)
    else:
        raise ConfigurationError(f"{where}: must be str or bytes, got {type(key).__name__}")
    if len(raw) < MIN_KEY_BYTES:
        raise ConfigurationError(
            f"{where}: digest key must be at least {MIN_KEY_BYTES} random bytes (256 bits); {hint}"
        )
    if len(set(raw)) < MIN_DISTINCT_BYTES:
        raise ConfigurationError(f"{where}: digest key does not look random (too few distinct bytes); {hint}")
    return raw


def _bool(value: bool | None, where: str, env: Mapping[str, str], *, default: bool) -> bool:
    """The argument when given (a bool), else the variable ``where`` (``environment.flag``)."""
    if value is not None:
        if not isinstance(value, bool):
            raise ConfigurationError(f"enforce: must be a bool, got {type(value).__name__}")
        return value
    return environment.flag(where, default, env)


def approver_option(approver: object, where: str) -> Callable[..., object] | None:
    """An approver as given to ``op.configure`` or ``op.run``: ``None`` or a callable."""
    if approver is not None and not callable(approver):
        raise ConfigurationError(f"{where}: expected a function of an op.ApprovalRequest, or None")
    return approver  # type: ignore[return-value]


def timeout_option(timeout: object, where: str) -> float | None:
    """An approval deadline in seconds as given (``None``: not given): a finite number above 0."""
    if timeout is None:
        return None
    if isinstance(timeout, bool) or not isinstance(timeout, int | float):
        raise ConfigurationError(f"{where}: expected a number of seconds, got {type(timeout).__name__}")
    if not (math.isfinite(timeout) and timeout > 0):
        raise ConfigurationError(f"{where}: must be a finite number of seconds above 0")
    return float(timeout)


def _timeout(value: float | None, env: Mapping[str, str]) -> float:
    """The approval deadline: the argument, else the variable, else the default."""
    if value is not None:
        return timeout_option(value, "approval_timeout")  # type: ignore[return-value]
    found = timeout_option(environment.number(ENV_APPROVAL_TIMEOUT, env), ENV_APPROVAL_TIMEOUT)
    return DEFAULT_APPROVAL_TIMEOUT if found is None else found


def _int(value: int | None, where: str, env: Mapping[str, str], *, default: int, minimum: int) -> int:
    """The argument (an int), else the variable ``where``, else ``default``; at least ``minimum``."""
    if value is None:
        found = environment.integer(where, env)
        value = default if found is None else found
    elif isinstance(value, bool) or not isinstance(value, int):
        raise ConfigurationError(f"{where}: expected an integer, got {type(value).__name__}")
    if value < minimum:
        raise ConfigurationError(f"{where}: must be >= {minimum}")
    return value


__all__ = [
    "ENV_APPROVAL_TIMEOUT",
    "ENV_DIGEST_KEY",
    "ENV_DIGEST_KEY_ID",
    "ENV_ENFORCE",
    "ENV_LEDGER_MAX_ENTRIES",
    "ENV_MIN_VALUE_LENGTH",
    "Settings",
    "approver_option",
    "configure_settings",
    "get_settings",
    "reset_settings",
    "timeout_option",
    "update_settings",
]
