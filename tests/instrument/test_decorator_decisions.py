"""What @op.tool decides before a call runs: the call id, the attempt number, advisory warnings, and
what a fault in the provenance machinery does — through the real SDK, as a user would see it."""

from __future__ import annotations

import logging
import re
import secrets

import pytest

import otel_provenance as op
from instrument_helpers import Traced, arg_attrs
from otel_provenance.instrument.base.settings import ENV_DIGEST_KEY, reset_settings
from otel_provenance.instrument.spans import metrics as tool_metrics

ADVISORY = "provenance budget exceeded, advisory only"


def metric_names(reader) -> set[str]:
    data = reader.get_metrics_data()
    return {
        metric.name
        for rm in (data.resource_metrics if data else ())
        for sm in rm.scope_metrics
        for metric in sm.metrics
        if any(getattr(point, "value", 1) for point in metric.data.data_points)
    }


class BrokenBudget(op.Budget):
    """A budget whose check fails: stands for any bug in the provenance machinery after the
    arguments were named (the case ``@op.tool`` must fail closed on)."""

    def check(self, classification, side_effect, *, enforce_globally=True):
        raise RuntimeError("budget backend gone")


def test_every_call_id_is_call_and_sixteen_hex_digits():
    """Without a framework's call id, a call's own id is ``call_`` and exactly 16 lower-case hex digits
    (64 random bits) under this package's key ``agent.tool.call.id`` — never in ``gen_ai.tool.call.id``,
    which the conventions keep for the model's id of the call (#48)."""
    traced = Traced()

    @op.tool(tracer_provider=traced.provider)
    def ping() -> str:
        return "pong"

    for _ in range(64):
        ping()
    assert not [s for s in traced.spans if "gen_ai.tool.call.id" in s.attributes]
    ids = [span.attributes["agent.tool.call.id"] for span in traced.spans]
    assert len(ids) == 64 and len(set(ids)) == 64
    assert all(re.fullmatch(r"call_[0-9a-f]{16}", i) for i in ids), ids


def test_calls_outside_any_run_are_first_attempts(reader):
    """Without a run there is no ledger to count repeats in: every call is attempt 0, none a retry."""
    traced = Traced()

    @op.tool(side_effect="read", tracer_provider=traced.provider)
    def lookup(order_id: str) -> str:
        return order_id

    lookup("ord-1")
    lookup("ord-1")
    assert [s.attributes["agent.retry.number"] for s in traced.spans] == [0, 0]
    assert tool_metrics.TOOL_RETRIES not in metric_names(reader)


def test_a_call_the_machinery_could_not_classify_is_a_first_attempt(monkeypatch, reader):
    """A provenance fault (here an unusable digest key) still gives the span attempt number 0 and
    counts no retry, beside the fault it records."""
    traced = Traced()

    @op.tool(side_effect="read", tracer_provider=traced.provider)
    def lookup(order_id: str) -> str:
        return order_id

    monkeypatch.setenv(ENV_DIGEST_KEY, "short")
    reset_settings()
    try:
        lookup("ord-1")
    finally:
        monkeypatch.delenv(ENV_DIGEST_KEY)
        reset_settings()
    span = traced.span("lookup")
    assert tuple(span.attributes["agent.violations"]) == ("provenance_fault:ConfigurationError",)
    assert span.attributes["agent.retry.number"] == 0
    assert tool_metrics.TOOL_RETRIES not in metric_names(reader)


def test_an_advisory_violation_is_logged_naming_the_tool_and_every_violation(caplog):
    """A read tool over an explicit, not enforced budget runs, and one warning names the tool and
    each violation (rule and argument, never a value)."""
    traced = Traced()

    @op.tool(side_effect="read", budget=op.Budget(max_assumed=0), tracer_provider=traced.provider)
    def search(query: str, region: str) -> list:
        return []

    caplog.set_level(logging.WARNING, logger="otel_provenance")
    with op.run():
        assert search("secret-query-81", "eu-west") == []
    messages = [r.getMessage() for r in caplog.records if r.name == "otel_provenance"]
    assert messages == [f"search: {ADVISORY} (max_assumed:query=assumed, max_assumed:region=assumed)"]


def test_calls_within_budget_or_blocked_log_no_advisory_warning(caplog):
    """Only an advisory violation is logged: a call within its budget and a blocked call (its
    refusal is the exception) log nothing."""
    traced = Traced()

    @op.tool(side_effect="read", tracer_provider=traced.provider)
    def lookup(order_id: str) -> dict:
        return {"order_id": order_id}

    @op.tool(side_effect="write", tracer_provider=traced.provider)
    def refund(order_id: str) -> str:
        return "done"

    caplog.set_level(logging.DEBUG, logger="otel_provenance")
    with op.run(inputs={"order_id": "ord-7"}):
        lookup("ord-7")
        refund("ord-7")
        with pytest.raises(op.ProvenanceError):
            refund("ord-guessed")
    assert [s.attributes["agent.tool.status"] for s in traced.spans] == ["ok", "ok", "blocked"]
    assert [r.getMessage() for r in caplog.records if ADVISORY in r.getMessage()] == []


def test_a_faulty_check_does_not_launder_the_calls_arguments_through_its_result():
    """When the provenance check fails after the arguments were named, every argument counts as
    unsourced: the tool's result echoing one back is no evidence for a later call."""
    traced = Traced()
    guess = f"ord-{secrets.token_hex(4)}"

    @op.tool(side_effect="read", budget=BrokenBudget(), tracer_provider=traced.provider)
    def lookup(order_id: str) -> dict:
        return {"order_id": order_id}

    @op.tool(side_effect="read", tracer_provider=traced.provider)
    def refund_preview(order_id: str) -> str:
        return "ok"

    with op.run():
        assert lookup(guess) == {"order_id": guess}
        refund_preview(guess)
    faulty = traced.span("lookup")
    assert tuple(faulty.attributes["agent.violations"]) == ("provenance_fault:RuntimeError",)
    assert faulty.attributes["agent.retry.number"] == 0
    assert arg_attrs(traced.span("refund_preview"), "order_id")["kind"] == "assumed"
