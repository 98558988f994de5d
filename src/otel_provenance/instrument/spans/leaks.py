"""Exporting processors registered *beside* a stripping wrapper: they receive raw spans and records.

The SDK hands every processor on a provider the same raw span (or log record). A wrapper strips only
for the processors it wraps; one added to the provider beside it exports content. The wrappers mark
themselves (:data:`WRAPPER_MARK`) so that this check needs no import of them, look at their
provider's processors whenever that tuple changes, and warn once per set (:class:`ContentLeakWarning`).
"""

from __future__ import annotations

import logging
import threading
import warnings
from collections.abc import Iterable, Sequence

from opentelemetry.sdk.trace import Span
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor

_logger = logging.getLogger("otel_provenance.instrument.processor")

#: A class attribute, true on this package's stripping wrappers: what they wrap is safe.
WRAPPER_MARK = "_otel_provenance_strips_content"


class ContentLeakWarning(UserWarning):
    """An exporting processor sits beside a ProvenanceSpanProcessor and receives raw spans."""


def _is_exporting(processor: object) -> bool:
    if isinstance(processor, (BatchSpanProcessor, SimpleSpanProcessor)):
        return True
    return any(hasattr(processor, name) for name in ("span_exporter", "_exporter", "exporter"))


def processors_beside(processors: Iterable[object]) -> list[str]:
    """Class names of exporting processors in ``processors`` that are not wrapped by us."""
    return [type(p).__name__ for p in processors if not getattr(p, WRAPPER_MARK, False) and _is_exporting(p)]


def unsafe_processors(provider: object) -> list[str]:
    """Exporting processors registered on ``provider`` beside (not inside) a ProvenanceSpanProcessor.

    Reads the SDK's private processor list; returns ``[]`` where the SDK does not expose it, or when
    no ProvenanceSpanProcessor is registered (then nothing is being stripped on purpose).
    """
    multi = getattr(provider, "_active_span_processor", None)
    processors = tuple(getattr(multi, "_span_processors", ()) or ())
    if not any(getattr(p, WRAPPER_MARK, False) for p in processors):
        return []
    return processors_beside(processors)


_WARNED: set[tuple[str, ...]] = set()  # (signal, processor class names...)
_WARNED_LOCK = threading.Lock()


def warn_leaks(names: Sequence[str], *, signal: str = "span") -> None:
    """Warn (log + ``ContentLeakWarning``) once per process for each set of leaking processors:
    ``op.configure`` checks at set-up and the wrapper again at its first span (or log record)."""
    key = (signal, *sorted(set(names)))
    with _WARNED_LOCK:
        if key in _WARNED:
            return
        _WARNED.add(key)
    wrapper, provider, items = (
        ("ProvenanceSpanProcessor", "TracerProvider.add_span_processor", "spans")
        if signal == "span"
        else ("ProvenanceLogRecordProcessor", "LoggerProvider.add_log_record_processor", "log records")
    )
    message = (
        f"otel-provenance: exporting {signal} processor(s) "
        + ", ".join(sorted(set(names)))
        + f" are registered beside {wrapper} and receive {items} with content; "
        f"pass them to {wrapper}(...) instead of {provider}"
    )
    _logger.warning(message)
    warnings.warn(message, ContentLeakWarning, stacklevel=3)


class LeakGuard:
    """Re-checks a provider's processor tuple only when it changes (the SDK replaces it on add)."""

    def __init__(self) -> None:
        self._seen: dict[int, int] = {}
        self._lock = threading.Lock()

    def check(self, span: Span) -> None:
        multi = getattr(span, "_span_processor", None)
        processors = getattr(multi, "_span_processors", None)
        if processors is None or self._seen.get(id(multi)) == id(processors):
            return
        with self._lock:
            if len(self._seen) > 64:
                self._seen.clear()
            self._seen[id(multi)] = id(processors)
            names = processors_beside(processors)
            if not names:
                return
        warn_leaks(names)  # once per process for each set of leaking processors


__all__ = [
    "WRAPPER_MARK",
    "ContentLeakWarning",
    "LeakGuard",
    "processors_beside",
    "unsafe_processors",
    "warn_leaks",
]
