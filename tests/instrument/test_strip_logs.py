"""ProvenanceLogRecordProcessor: faults never reach the app; options apply to records."""

from __future__ import annotations

import logging

import pytest

from interop import require_logs_sdk

require_logs_sdk()  # the logs processor needs opentelemetry-sdk >= 1.39; else skip the module

from opentelemetry.sdk._logs import LoggerProvider, LogRecordProcessor  # noqa: E402
from opentelemetry.sdk._logs.export import InMemoryLogRecordExporter, SimpleLogRecordProcessor  # noqa: E402

import otel_provenance as op  # noqa: E402
from otel_provenance.instrument.spans.redaction import StripOptions  # noqa: E402


class _Raising(LogRecordProcessor):
    def on_emit(self, log_record):
        raise RuntimeError("boom")

    def shutdown(self):
        raise RuntimeError("boom")

    def force_flush(self, timeout_millis=30000):
        raise RuntimeError("boom")


def _provider(*extra, options=None):
    exporter = InMemoryLogRecordExporter()
    provider = LoggerProvider()
    provider.add_log_record_processor(
        op.ProvenanceLogRecordProcessor(SimpleLogRecordProcessor(exporter), *extra, options=options)
    )
    return provider, exporter


def test_downstream_fault_never_reaches_the_app(caplog):
    provider, exporter = _provider(_Raising())
    with caplog.at_level(logging.ERROR, logger="otel_provenance"):
        for _ in range(3):
            provider.get_logger("t").emit(body={"input.value": "x", "k": 1})
        assert provider.force_flush() is False
        provider.shutdown()
    assert [r.log_record.body for r in exporter.get_finished_logs()] == [{"k": 1}] * 3
    mine = [r.getMessage() for r in caplog.records if r.name.startswith("otel_provenance")]
    assert len([m for m in mine if "_Raising.on_emit" in m]) == 1
    assert all("boom" not in m for m in mine)


def test_constructor_rejects_non_processors():
    with pytest.raises(op.ConfigurationError, match=r"downstream\[0\]"):
        op.ProvenanceLogRecordProcessor(InMemoryLogRecordExporter())


def test_exception_scope_all_applies_to_plain_records():
    provider, exporter = _provider(options=StripOptions(exception_scope="all", keys={"customer_note"}))
    try:
        raise ValueError("card 4111-1111")
    except ValueError as error:
        provider.get_logger("app").emit(
            body="refund failed", exception=error, attributes={"customer_note": "private", "order": "o-1"}
        )
    [record] = [r.log_record for r in exporter.get_finished_logs()]
    assert record.body == "refund failed"
    assert record.attributes["order"] == "o-1"
    assert record.attributes["exception.type"] == "ValueError"
    assert "customer_note" not in record.attributes
    assert "exception.message" not in record.attributes
    assert "exception.stacktrace" not in record.attributes


def test_default_scope_removes_exception_details_from_plain_records():
    provider, exporter = _provider()
    try:
        raise ValueError("disk full for customer 4111-1111")
    except ValueError as error:
        provider.get_logger("app").emit(body="write failed", exception=error)
    [record] = [r.log_record for r in exporter.get_finished_logs()]
    assert record.attributes["exception.type"] == "ValueError"
    assert "exception.message" not in record.attributes
    assert "exception.stacktrace" not in record.attributes


def test_genai_scope_keeps_exception_details_on_plain_records():
    provider, exporter = _provider(options=StripOptions(exception_scope="genai"))
    try:
        raise ValueError("disk full")
    except ValueError as error:
        provider.get_logger("app").emit(body="write failed", exception=error)
    [record] = [r.log_record for r in exporter.get_finished_logs()]
    assert record.attributes["exception.message"] == "disk full"


def test_scope_attributes_of_log_records_are_stripped():
    provider, exporter = _provider()
    scope_attributes = {"gen_ai.system_instructions": "be secret-xyz", "team": "a"}
    logger = provider.get_logger("app", attributes=scope_attributes)
    logger.emit(body="hello")
    [record] = exporter.get_finished_logs()
    scope_attributes = dict(record.instrumentation_scope.attributes or {})
    assert scope_attributes == {"team": "a"}


def test_an_exporting_log_processor_beside_the_wrapper_is_warned_about():
    import warnings

    from opentelemetry.sdk._logs import LoggerProvider
    from opentelemetry.sdk._logs.export import InMemoryLogRecordExporter, SimpleLogRecordProcessor

    import otel_provenance as op
    from otel_provenance.instrument.spans.leaks import ContentLeakWarning
    from otel_provenance.instrument.spans.logs import unsafe_log_processors

    class AuditLogProcessor(SimpleLogRecordProcessor):  # a distinct class: one warning per set
        pass

    provider = LoggerProvider()
    provider.add_log_record_processor(
        op.ProvenanceLogRecordProcessor(SimpleLogRecordProcessor(InMemoryLogRecordExporter()))
    )
    assert unsafe_log_processors(provider) == []
    provider.add_log_record_processor(AuditLogProcessor(InMemoryLogRecordExporter()))  # beside: raw
    assert unsafe_log_processors(provider) == ["AuditLogProcessor"]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        provider.get_logger("t").emit(body="hello")
        provider.get_logger("t").emit(body="again")  # once, not per record
    leaks = [w for w in caught if issubclass(w.category, ContentLeakWarning)]
    assert len(leaks) == 1
    assert "AuditLogProcessor" in str(leaks[0].message) and "log" in str(leaks[0].message)
