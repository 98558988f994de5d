"""The exporter-leak warning and the fault log of ProvenanceSpanProcessor, word for word.

Both are what an operator reads when the set-up is unsafe or an exporter breaks: the warning must name
the processors, say where they belong and be attributed to the caller's line; a fault is logged once
per (place, error type), by type only.
"""

from __future__ import annotations

import logging
import os
import warnings

import pytest
from opentelemetry.sdk.trace import SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import otel_provenance as op
from otel_provenance.instrument.spans.leaks import ContentLeakWarning, unsafe_processors


class _HoldsSpanExporter(SpanProcessor):
    def __init__(self) -> None:
        self.span_exporter = InMemorySpanExporter()


class _HoldsPrivateExporter(SpanProcessor):
    def __init__(self) -> None:
        self._exporter = InMemorySpanExporter()


class _HoldsExporter(SpanProcessor):
    def __init__(self) -> None:
        self.exporter = InMemorySpanExporter()


class _Counts(SpanProcessor):
    """Exports nothing: it only counts."""

    def __init__(self) -> None:
        self.ended = 0

    def on_end(self, span) -> None:
        self.ended += 1


def _leaks(caught) -> list[warnings.WarningMessage]:
    return [w for w in caught if issubclass(w.category, ContentLeakWarning)]


def _configure_beside(*beside: SpanProcessor) -> TracerProvider:
    provider = TracerProvider()
    for processor in beside:
        provider.add_span_processor(processor)
    op.configure(
        tracer_provider=provider, exporter=InMemorySpanExporter(), set_global=False, logs=False, metrics=False
    )
    return provider


@pytest.mark.parametrize("processor_class", [_HoldsSpanExporter, _HoldsPrivateExporter, _HoldsExporter])
def test_a_custom_processor_holding_an_exporter_beside_the_wrapper_is_unsafe(processor_class):
    """Not only the SDK's own exporting processors: any processor with an exporter attribute."""
    provider = TracerProvider()
    provider.add_span_processor(op.ProvenanceSpanProcessor(SimpleSpanProcessor(InMemorySpanExporter())))
    provider.add_span_processor(processor_class())
    provider.add_span_processor(_Counts())  # no exporter: not a leak
    assert unsafe_processors(provider) == [processor_class.__name__]


def test_the_leak_warning_names_the_processors_and_where_they_belong(caplog):
    provider = TracerProvider()
    provider.add_span_processor(_HoldsExporter())
    provider.add_span_processor(BatchSpanProcessor(InMemorySpanExporter()))
    with warnings.catch_warnings(record=True) as caught, caplog.at_level(logging.WARNING):
        warnings.simplefilter("always")
        op.configure(
            tracer_provider=provider,
            exporter=InMemorySpanExporter(),
            set_global=False,
            logs=False,
            metrics=False,
        )
    [leak] = _leaks(caught)
    expected = (
        "otel-provenance: exporting span processor(s) BatchSpanProcessor, _HoldsExporter are registered "
        "beside ProvenanceSpanProcessor and receive spans with content; pass them to "
        "ProvenanceSpanProcessor(...) instead of TracerProvider.add_span_processor"
    )
    assert str(leak.message) == expected
    if "MUTANT_UNDER_TEST" not in os.environ:  # mutmut's trampolines add frames to every call
        assert leak.filename == __file__  # attributed to the line that called op.configure
    assert [r.getMessage() for r in caplog.records if r.name.startswith("otel_provenance")] == [expected]


def test_the_leak_warning_for_log_records_names_the_log_processor_and_where_it_belongs():
    from interop import require_logs_sdk

    require_logs_sdk()
    from opentelemetry.sdk._logs import LoggerProvider
    from opentelemetry.sdk._logs.export import InMemoryLogRecordExporter, SimpleLogRecordProcessor

    class AuditLogProcessor(SimpleLogRecordProcessor):
        pass

    provider = LoggerProvider()
    provider.add_log_record_processor(
        op.ProvenanceLogRecordProcessor(SimpleLogRecordProcessor(InMemoryLogRecordExporter()))
    )
    provider.add_log_record_processor(AuditLogProcessor(InMemoryLogRecordExporter()))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        provider.get_logger("t").emit(body="hello")
    [leak] = _leaks(caught)
    assert str(leak.message) == (
        "otel-provenance: exporting log processor(s) AuditLogProcessor are registered beside "
        "ProvenanceLogRecordProcessor and receive log records with content; pass them to "
        "ProvenanceLogRecordProcessor(...) instead of LoggerProvider.add_log_record_processor"
    )


def test_the_leak_warning_is_given_once_per_set_of_processors():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        _configure_beside(BatchSpanProcessor(InMemorySpanExporter()))
        _configure_beside(BatchSpanProcessor(InMemorySpanExporter()))  # the same set: not again
        _configure_beside(_HoldsExporter())  # another set: warned
        _configure_beside(_HoldsExporter())
    assert [str(w.message).split(" are registered")[0] for w in _leaks(caught)] == [
        "otel-provenance: exporting span processor(s) BatchSpanProcessor",
        "otel-provenance: exporting span processor(s) _HoldsExporter",
    ]


class _Breaks(SpanProcessor):
    def __init__(self) -> None:
        self.errors = [RuntimeError("secret-1"), RuntimeError("secret-2"), KeyError("secret-3")]

    def on_end(self, span) -> None:
        raise self.errors.pop(0)


def test_a_downstream_fault_is_logged_once_per_error_type_by_type_only(caplog):
    provider = TracerProvider()
    provider.add_span_processor(op.ProvenanceSpanProcessor(_Breaks()))
    tracer = provider.get_tracer("t")
    with caplog.at_level(logging.ERROR):
        for name in ("a", "b", "c"):
            with tracer.start_as_current_span(name):
                pass
    messages = [r.getMessage() for r in caplog.records if r.name.startswith("otel_provenance")]
    assert messages == [
        "otel-provenance: _Breaks.on_end failed with RuntimeError",
        "otel-provenance: _Breaks.on_end failed with KeyError",
    ]


class _Flushes(SpanProcessor):
    def __init__(self, result) -> None:
        self.result = result
        self.timeouts: list[int] = []

    def force_flush(self, timeout_millis: int = 30000):
        self.timeouts.append(timeout_millis)
        if isinstance(self.result, Exception):
            raise self.result
        return self.result


def test_force_flush_is_true_only_when_every_wrapped_processor_flushed():
    assert op.ProvenanceSpanProcessor(_Flushes(True), _Flushes(True)).force_flush(1234) is True
    assert op.ProvenanceSpanProcessor(_Flushes(False), _Flushes(True)).force_flush(1234) is False
    assert op.ProvenanceSpanProcessor(_Flushes(True), _Flushes(None)).force_flush(1234) is False


def test_force_flush_hands_the_wrapped_processors_what_is_left_of_one_timeout_default_thirty_seconds():
    """One deadline for all of them (tests/instrument/test_fanout.py): each gets what is left of the caller's
    timeout, never more, and the next one no more than the one before."""
    first, second = _Flushes(True), _Flushes(True)
    wrapper = op.ProvenanceSpanProcessor(first, second)
    wrapper.force_flush(1234)
    wrapper.force_flush()
    for call, timeout in enumerate((1234, 30000)):
        assert timeout - 1000 < first.timeouts[call] <= timeout
        assert timeout - 1000 < second.timeouts[call] <= first.timeouts[call]


def test_a_wrapped_processor_failing_to_flush_is_logged_by_type_and_the_others_still_flush(caplog):
    class _Unflushable(_Flushes):
        pass

    after = _Flushes(True)
    wrapper = op.ProvenanceSpanProcessor(_Unflushable(RuntimeError("secret-9")), after)
    with caplog.at_level(logging.ERROR):
        assert wrapper.force_flush(1234) is False
    [left] = after.timeouts
    assert 1234 - 1000 < left <= 1234
    messages = [r.getMessage() for r in caplog.records if r.name.startswith("otel_provenance")]
    assert messages == ["otel-provenance: _Unflushable.force_flush failed with RuntimeError"]


class _OtherProvider:
    """A provider of another SDK: processors kept somewhere this package does not know."""

    def __init__(self, active=None) -> None:
        if active is not None:
            self._active_span_processor = active


def test_unsafe_processors_is_empty_where_the_provider_does_not_expose_its_processors():
    from opentelemetry.trace import NoOpTracerProvider

    assert unsafe_processors(NoOpTracerProvider()) == []
    assert unsafe_processors(_OtherProvider()) == []
    assert unsafe_processors(_OtherProvider(active=object())) == []


class _CannotShutDown(SpanProcessor):
    def shutdown(self) -> None:
        raise RuntimeError("secret-77")


def test_a_wrapped_processor_failing_to_shut_down_is_logged_by_type(caplog):
    provider = TracerProvider()
    provider.add_span_processor(op.ProvenanceSpanProcessor(_CannotShutDown()))
    with caplog.at_level(logging.ERROR):
        provider.shutdown()
    messages = [r.getMessage() for r in caplog.records if r.name.startswith("otel_provenance")]
    assert messages == ["otel-provenance: _CannotShutDown.shutdown failed with RuntimeError"]
