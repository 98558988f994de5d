"""Where spans go wrong: exporting processors registered *beside* a stripping wrapper (they receive
raw spans and records), and tool spans recorded to a provider that exports nothing.

The SDK hands every processor on a provider the same raw span (or log record). A wrapper strips only
for the processors it wraps; one added to the provider beside it exports content. The wrappers mark
themselves (:data:`WRAPPER_MARK`) so that this check needs no import of them, look at their
provider's processors whenever that tuple changes, and warn once per set (:class:`ContentLeakWarning`).

A ``TracerProvider`` built with the wrapper but not made global, and an ``@op.tool`` without
``tracer_provider=``, record every tool span to the global provider — the API's proxy, which exports
nothing — and the span file stays empty. Wrappers note themselves when made (:func:`note_wrapper`), so
the first such call warns, once per process (:class:`NoExportWarning`, #49).
"""

from __future__ import annotations

import logging
import os
import sys
import threading
import warnings
import weakref
from collections.abc import Iterable, Sequence

from opentelemetry import trace
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


def say_once(
    logger: logging.Logger, message: str, category: type[Warning], stacklevel: int | None = 3
) -> None:
    """``message`` as a warning of ``category`` (catchable, filterable; ``logging.captureWarnings``
    sends it to the logs), and as a log record only where the application configured logging: with
    no handler, Python prints an unhandled record to stderr itself, and the message appeared twice
    there (#49). ``stacklevel`` None: the first caller outside this package (and wrapt)."""
    if logger.hasHandlers():
        logger.warning(message)
    warnings.warn(message, category, stacklevel=stacklevel or _callers_level())


_PACKAGE = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _callers_level() -> int:
    """The ``stacklevel`` of :func:`say_once`'s first caller outside this package (and wrapt)."""
    frame, level = sys._getframe(1), 1  # say_once
    while frame is not None and (
        frame.f_code.co_filename.startswith(_PACKAGE) or f"{os.sep}wrapt{os.sep}" in frame.f_code.co_filename
    ):
        frame, level = frame.f_back, level + 1
    return level


def warn_leaks(names: Sequence[str], *, signal: str = "span") -> None:
    """Warn (``ContentLeakWarning``, and a log record where logging is configured: :func:`say_once`)
    once per process for each set of leaking processors: ``op.configure`` checks at set-up and the
    wrapper again at its first span (or log record)."""
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
    say_once(_logger, message, ContentLeakWarning, stacklevel=4)


class NoExportWarning(UserWarning):
    """``@op.tool`` records to a tracer provider that exports nothing, while a ProvenanceSpanProcessor
    was set up on another: the tool's spans are lost."""


_WRAPPERS: weakref.WeakSet = weakref.WeakSet()  # the stripping wrappers alive in this process
_NOWHERE = threading.Event()  # set once the no-export warning was given
_NOWHERE_LOCK = threading.Lock()


def note_wrapper(wrapper: object) -> None:
    """A stripping wrapper was made: spans are meant to be exported somewhere."""
    _WRAPPERS.add(wrapper)


def warn_if_exporting_nowhere(tool: str, provider: object, given: bool) -> None:
    """Warn once per process when ``tool`` records to ``provider`` (``given``: passed as
    ``tracer_provider=``, else the global one) while it exports nothing and a wrapper exists."""
    if _NOWHERE.is_set() or not _WRAPPERS:
        return
    whose = (
        "the tracer provider passed as tracer_provider="
        if given
        else "the global tracer provider (tracer_provider= was left out)"
    )
    if isinstance(provider, trace.ProxyTracerProvider | trace.NoOpTracerProvider):
        what = (
            f"{whose}, a {type(provider).__name__} that records nothing"
            if given
            else f"{whose}, and none is set (trace.set_tracer_provider was never called)"
        )
    else:
        multi = getattr(provider, "_active_span_processor", None)
        processors = getattr(multi, "_span_processors", None)
        if processors is None or processors:  # a provider that does not say, or one that exports
            return
        what = f"{whose}, which has no span processor"
    with _NOWHERE_LOCK:
        if _NOWHERE.is_set():
            return
        _NOWHERE.set()
    message = (
        f"otel-provenance: @op.tool {tool} records to {what}: its spans go nowhere, while a "
        "ProvenanceSpanProcessor was set up on another provider; pass tracer_provider=<that provider> "
        "to @op.tool and op.run, or make it the global provider (trace.set_tracer_provider(provider), "
        "or op.configure(set_global=True))"
    )
    say_once(_logger, message, NoExportWarning, stacklevel=None)  # the line that called the tool


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
    "NoExportWarning",
    "note_wrapper",
    "processors_beside",
    "unsafe_processors",
    "warn_if_exporting_nowhere",
    "warn_leaks",
]
