"""The value types of the attributes this project defines, so a contract cannot compare a boolean
attribute with the string ``"true"`` (which would never match, turning a safeguard into noise).

A value of the wrong type for a known key is a contract error at load time, located at the value.
Keys this table does not know are compared as written (typed equality, see ``selectors``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from ... import semconv

_BOOLEAN: Final = "a boolean (true or false)"
INTEGER: Final = "an integer"  # public: what an ordering operator needs
_STRING: Final = "a string"

KNOWN_TYPES: Final = {
    semconv.IDEMPOTENCY_PRESENT: _BOOLEAN,
    semconv.LEDGER_FULL: _BOOLEAN,
    semconv.RETRY_NUMBER: INTEGER,
    semconv.BUDGET_ASSUMED: INTEGER,
    semconv.BUDGET_INVENTED: INTEGER,
    semconv.BUDGET_MAX_ASSUMED: INTEGER,
    semconv.BUDGET_MAX_INVENTED: INTEGER,
    semconv.BUDGET_UNTRUSTED: INTEGER,
    semconv.BUDGET_MAX_UNTRUSTED: INTEGER,
    semconv.SIDE_EFFECT: _STRING,
    semconv.DATA_DOMAIN: _STRING,
    semconv.TOOL_STATUS: _STRING,
    semconv.RUN_ID: _STRING,
    semconv.GEN_AI_OPERATION_NAME: _STRING,
    semconv.GEN_AI_TOOL_NAME: _STRING,
    semconv.SERVICE_NAME: _STRING,
    semconv.SERVICE_VERSION: _STRING,
}

_CHECKS: Final = {
    _BOOLEAN: lambda v: isinstance(v, bool),
    INTEGER: lambda v: isinstance(v, int) and not isinstance(v, bool),
    _STRING: lambda v: isinstance(v, str),
}


def known_type(key: str) -> str | None:
    """ "a boolean", "an integer" or "a string" when ``key`` is one of ours (or an argument's
    provenance attribute, always a string); None for any other key."""
    expected = KNOWN_TYPES.get(key)
    if expected is None and semconv.split_arg_attr(key) is not None:
        return _STRING
    return expected


def check_value_type(key: str, value: object, fail: Callable[[str], Exception]) -> None:
    """Raise ``fail(problem)`` when ``value`` is not of ``key``'s known type."""
    expected = known_type(key)
    if expected is not None and not _CHECKS[expected](value):
        shown = ("true" if value else "false") if isinstance(value, bool) else repr(value)
        raise fail(f"{key} is {expected}; {shown} can never match it")
