"""Handing one span or log record to every processor a wrapper holds, safely, under one flush deadline.

Both wrappers (:class:`.processor.ProvenanceSpanProcessor`, :class:`.logs.ProvenanceLogRecordProcessor`)
sit between the SDK and the user's exporting processors. Those are the user's code: one that raises
must not reach the application, nor keep the others from their span. So every hook goes through
:meth:`SafeFanout.each`: each processor in turn, a failure logged once per processor, hook and error
type (never its message: it may quote content), the rest still called.

``force_flush(timeout)`` gives all processors **one** deadline, as the SDK's
``SynchronousMultiSpanProcessor`` does: each gets what is left of the caller's timeout, and once it
has run out the rest are not asked (the flush failed). The processors are a tuple, fixed at
construction, so iterating needs no lock.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterable
from typing import Any

from ...errors import ConfigurationError

_logger = logging.getLogger("otel_provenance.instrument.processor")
_NS_PER_MS = 1_000_000


class OnceLog:
    """Logs each (what, error type) once: a broken exporter must not flood the application's logs."""

    def __init__(self) -> None:
        self._seen: set[tuple[str, str]] = set()
        self._lock = threading.Lock()

    def __call__(self, what: str, error: BaseException) -> None:
        key = (what, type(error).__name__)
        with self._lock:
            if key in self._seen:
                return
            self._seen.add(key)
        # Only the type: an exception's message or traceback may quote content.
        _logger.error("otel-provenance: %s failed with %s", what, key[1])


def checked_fanout(
    wrapper: str, downstream: tuple[Any, ...], hooks: tuple[str, ...], kind: str, log: OnceLog
) -> SafeFanout:
    """The fan-out over a wrapper's ``downstream`` processors, each of which must have the ``hooks`` of
    a ``kind`` (else a :class:`ConfigurationError` naming the ``wrapper`` and the processor)."""
    for i, processor in enumerate(downstream):
        if not all(callable(getattr(processor, m, None)) for m in hooks):
            raise ConfigurationError(
                f"{wrapper}: downstream[{i}] ({type(processor).__name__}) is not a {kind}"
            )
    return SafeFanout(downstream, log)


class SafeFanout:
    """The processors a wrapper hands its spans (or log records) to, each call guarded."""

    __slots__ = ("_log", "processors")

    def __init__(self, processors: Iterable[Any], log: OnceLog) -> None:
        self.processors: tuple[Any, ...] = tuple(processors)
        self._log = log

    def each(self, hook: str, *args: Any, **kwargs: Any) -> None:
        """``processor.<hook>(*args, **kwargs)`` for every processor; one that raises is logged."""
        for processor in self.processors:
            try:
                getattr(processor, hook)(*args, **kwargs)
            except Exception as error:
                self._log(f"{type(processor).__name__}.{hook}", error)

    def shutdown(self) -> None:
        self.each("shutdown")

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        """Flush every processor within one shared deadline; True only when all of them flushed."""
        deadline = time.monotonic_ns() + timeout_millis * _NS_PER_MS
        flushed = True
        for processor in self.processors:
            left = deadline - time.monotonic_ns()
            if left <= 0:
                return False  # out of time: the rest are not flushed
            try:
                flushed = bool(processor.force_flush(left // _NS_PER_MS)) and flushed
            except Exception as error:
                self._log(f"{type(processor).__name__}.force_flush", error)
                flushed = False
        return flushed


__all__ = ["OnceLog", "SafeFanout"]
