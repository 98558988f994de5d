"""One safe fan-out for both wrappers (``instrument/spans/fanout.py``): every wrapped processor gets each
hook even when another raises, and ``force_flush(timeout)`` is one deadline shared by all of them —
not the full timeout each — as the SDK's ``SynchronousMultiSpanProcessor`` does.
"""

from __future__ import annotations

import logging
import time

from opentelemetry.sdk.trace import SpanProcessor

import otel_provenance as op
from interop import logs_sdk
from otel_provenance.instrument.spans.fanout import OnceLog, SafeFanout


class Flushes(SpanProcessor):
    """Takes ``seconds`` to flush; records the timeout it was given (and that it was asked)."""

    def __init__(self, seconds: float = 0.0, flushed: object = True) -> None:
        self.seconds, self.flushed = seconds, flushed
        self.timeouts: list[int] = []

    def force_flush(self, timeout_millis: int = 30000) -> object:
        self.timeouts.append(timeout_millis)
        time.sleep(self.seconds)
        return self.flushed


class Raises(SpanProcessor):
    def on_end(self, span) -> None:
        raise RuntimeError("secret-on-end")

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        raise RuntimeError("secret-flush")


class Records(SpanProcessor):
    def __init__(self) -> None:
        self.ended: list[object] = []

    def on_end(self, span) -> None:
        self.ended.append(span)


def _messages(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name.startswith("otel_provenance")]


def test_the_flush_timeout_is_one_deadline_shared_by_every_processor():
    slow, after = Flushes(seconds=0.2), Flushes()
    assert SafeFanout((slow, after), OnceLog()).force_flush(1000) is True
    assert slow.timeouts[0] > 900
    assert after.timeouts[0] <= 800  # what was left of the one second, not a second of its own


def test_once_the_deadline_has_passed_the_rest_are_not_asked_and_the_flush_failed():
    slow, never = Flushes(seconds=0.2), Flushes()
    assert SafeFanout((slow, never), OnceLog()).force_flush(100) is False
    assert never.timeouts == []


def test_a_processor_that_fails_to_flush_fails_the_flush_but_the_others_still_flush(caplog):
    unflushed, raising, after = Flushes(flushed=False), Raises(), Flushes()
    with caplog.at_level(logging.ERROR):
        assert SafeFanout((unflushed, raising, after), OnceLog()).force_flush(1000) is False
    assert len(after.timeouts) == 1
    assert _messages(caplog) == ["otel-provenance: Raises.force_flush failed with RuntimeError"]


def test_a_processor_that_raises_is_logged_once_and_the_others_still_get_the_span(caplog):
    first, last = Records(), Records()
    fanout = SafeFanout((first, Raises(), last), OnceLog())
    with caplog.at_level(logging.ERROR):
        for span in ("a", "b"):
            fanout.each("on_end", span)
    assert first.ended == last.ended == ["a", "b"]
    assert _messages(caplog) == ["otel-provenance: Raises.on_end failed with RuntimeError"]
    assert "secret" not in caplog.text


def test_the_span_processor_flushes_its_processors_within_one_deadline():
    slow, after = Flushes(seconds=0.2), Flushes()
    processor = op.ProvenanceSpanProcessor(slow, after)
    assert processor.downstream == (slow, after)
    assert processor.force_flush(1000) is True
    assert after.timeouts[0] <= 800
    assert op.ProvenanceSpanProcessor(Flushes(seconds=0.2), never := Flushes()).force_flush(100) is False
    assert never.timeouts == []


@logs_sdk
def test_the_log_processor_flushes_its_processors_within_one_deadline():
    from opentelemetry.sdk._logs import LogRecordProcessor

    class LogFlushes(LogRecordProcessor):
        def __init__(self, seconds: float = 0.0) -> None:
            self.seconds = seconds
            self.timeouts: list[int] = []

        def on_emit(self, log_record) -> None:
            return None

        def emit(self, log_record) -> None:
            return None

        def shutdown(self) -> None:
            return None

        def force_flush(self, timeout_millis: int = 30000) -> bool:
            self.timeouts.append(timeout_millis)
            time.sleep(self.seconds)
            return True

    slow, after = LogFlushes(seconds=0.2), LogFlushes()
    processor = op.ProvenanceLogRecordProcessor(slow, after)
    assert processor.downstream == (slow, after)
    assert processor.force_flush(1000) is True
    assert after.timeouts[0] <= 800
