"""Our own bugs are re-raised under pytest and swallowed in users' applications
(``instrument/base/internal_errors.py``); a user's failing exporter, processor or object is swallowed in both.

A bug is planted by replacing a helper the package calls with ``None``: calling it raises a
``TypeError`` in the package's own frame, as a real slip would. "In an application" is this process
with pytest's ``PYTEST_CURRENT_TEST`` taken away.
"""

from __future__ import annotations

import logging

import pytest
from opentelemetry.sdk.trace import ReadableSpan, SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import otel_provenance as op
from instrument_helpers import Traced, span_context
from otel_provenance.instrument.base.internal_errors import PYTEST_CURRENT_TEST, raised_by_this_package
from otel_provenance.instrument.evidence import ledger as ledger_module
from otel_provenance.instrument.spans import metrics as tool_metrics
from otel_provenance.instrument.spans import span_transforms


def _raised_in(module: str, error: str) -> BaseException:
    """An exception raised by code whose module is ``module``."""
    try:
        exec(compile(f"raise {error}", "<planted>", "exec"), {"__name__": module})
    except BaseException as caught:
        return caught
    raise AssertionError("nothing raised")


def as_in_an_application(monkeypatch) -> None:
    """From here to the end of the test (pytest sets the variable again for each phase: set-up, call
    and tear-down, so a fixture cannot take it away for the test's body)."""
    monkeypatch.delenv(PYTEST_CURRENT_TEST, raising=False)


def _messages(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name.startswith("otel_provenance")]


def test_a_bug_is_an_error_raised_in_this_packages_own_code_other_than_an_os_error():
    assert raised_by_this_package(_raised_in("otel_provenance.instrument.fake", "KeyError('k')"))
    assert raised_by_this_package(_raised_in("otel_provenance", "TypeError()"))
    assert not raised_by_this_package(_raised_in("otel_provenance.instrument.fake", "OSError(28, 'full')"))
    assert not raised_by_this_package(_raised_in("otel_provenanceX", "KeyError('k')"))
    assert not raised_by_this_package(_raised_in("users_exporter", "RuntimeError()"))
    assert not raised_by_this_package(KeyError("never raised: no traceback"))


def _processor():
    exporter = InMemorySpanExporter()
    return op.ProvenanceSpanProcessor(SimpleSpanProcessor(exporter)), exporter


def _span() -> ReadableSpan:
    return ReadableSpan(
        name="step", context=span_context(), attributes={"app.step": 1}, start_time=1, end_time=2
    )


def test_a_bug_in_stripping_is_raised_under_pytest(monkeypatch):
    processor, exporter = _processor()
    monkeypatch.setattr(span_transforms, "has_forbidden_key", None)
    with pytest.raises(TypeError):
        processor.on_end(_span())
    assert exporter.get_finished_spans() == ()


def test_in_an_application_the_same_bug_drops_the_span_and_is_logged_by_type(monkeypatch, caplog):
    as_in_an_application(monkeypatch)
    processor, exporter = _processor()
    monkeypatch.setattr(span_transforms, "has_forbidden_key", None)
    with caplog.at_level(logging.ERROR):
        processor.on_end(_span())  # does not raise
    assert exporter.get_finished_spans() == ()
    assert _messages(caplog) == [
        "otel-provenance: stripping a span (the span was dropped, not exported) failed with TypeError"
    ]


class _FailingExporterProcessor(SpanProcessor):
    def on_end(self, span) -> None:
        raise RuntimeError("the user's exporter is down")


def test_a_users_processor_failing_is_swallowed_under_pytest_too(caplog):
    """Not our bug: the fan-out logs it and the other processors still get the span."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(
        op.ProvenanceSpanProcessor(_FailingExporterProcessor(), SimpleSpanProcessor(exporter))
    )
    with caplog.at_level(logging.ERROR), provider.get_tracer("t").start_as_current_span("step"):
        pass
    assert [s.name for s in exporter.get_finished_spans()] == ["step"]
    assert _messages(caplog) == ["otel-provenance: _FailingExporterProcessor.on_end failed with RuntimeError"]


def _tool(traced: Traced):
    @op.tool(side_effect="read", tracer_provider=traced.provider)
    def lookup(order_id: str) -> dict:
        return {"order_id": order_id, "status": "shipped"}

    return lookup


def test_a_bug_in_remembering_a_result_is_raised_under_pytest(monkeypatch):
    lookup = _tool(Traced())
    monkeypatch.setattr(ledger_module.Ledger, "_remember", None)
    with op.run(), pytest.raises(TypeError):
        lookup("ord-guessed")


def test_in_an_application_a_result_that_cannot_be_remembered_is_logged_and_the_call_succeeds(
    monkeypatch, caplog
):
    as_in_an_application(monkeypatch)
    traced = Traced()
    lookup = _tool(traced)
    monkeypatch.setattr(ledger_module.Ledger, "_remember", None)
    with caplog.at_level(logging.WARNING), op.run():
        assert lookup("ord-guessed") == {"order_id": "ord-guessed", "status": "shipped"}
    assert traced.span("lookup").attributes["agent.tool.status"] == "ok"
    assert _messages(caplog) == ["lookup: could not remember the result (TypeError)"]


def test_a_bug_in_recording_metrics_is_raised_under_pytest_and_swallowed_in_an_application(
    monkeypatch, reader
):
    monkeypatch.setattr(tool_metrics, "_tool_label", None)
    with pytest.raises(TypeError):
        tool_metrics.record_tool_call("lookup", status="ok", side_effect="read")
    as_in_an_application(monkeypatch)
    tool_metrics.record_tool_call("lookup", status="ok", side_effect="read")  # does not raise
