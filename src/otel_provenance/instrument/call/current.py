"""The run a tool call belongs to, and an explicit retry number: two ``contextvars`` variables.

``op.run`` (:mod:`.runscope`) sets the first; every call path reads it — the lifecycle, argument-value
policies, foreign tool spans — through this module, which imports nothing of theirs (no circle).
Asyncio tasks and ``contextvars.copy_context().run`` inherit both; a plain thread starts without.
"""

from __future__ import annotations

import contextvars
from typing import TYPE_CHECKING

from ...errors import ConfigurationError

if TYPE_CHECKING:
    from ..evidence.ledger import Ledger
    from .runscope import RunScope

CURRENT_RUN: contextvars.ContextVar[RunScope | None] = contextvars.ContextVar(
    "otel_provenance_run", default=None
)
_RETRY_NUMBER: contextvars.ContextVar[int | None] = contextvars.ContextVar(
    "otel_provenance_retry", default=None
)


def current_run() -> RunScope | None:
    return CURRENT_RUN.get()


def current_ledger() -> Ledger | None:
    scope = CURRENT_RUN.get()
    return scope.ledger if scope is not None else None


class retry_attempt:
    """Set ``agent.retry.number`` explicitly for tool calls made inside the block.

    Automatic counting (same tool, same argument digests, same run) covers retries that repeat the
    call; use this when a retry legitimately changes an argument (a new timestamp, a new token).
    """

    __slots__ = ("_number", "_token")

    def __init__(self, number: int) -> None:
        if isinstance(number, bool) or not isinstance(number, int) or number < 0:
            raise ConfigurationError("retry_attempt(number): expected an integer >= 0")
        self._number = number
        self._token: contextvars.Token | None = None

    def __enter__(self) -> int:
        self._token = _RETRY_NUMBER.set(self._number)
        return self._number

    def __exit__(self, *exc_info: object) -> None:
        if self._token is not None:
            _RETRY_NUMBER.reset(self._token)
            self._token = None


def explicit_retry_number() -> int | None:
    return _RETRY_NUMBER.get()


__all__ = ["CURRENT_RUN", "current_ledger", "current_run", "explicit_retry_number", "retry_attempt"]
