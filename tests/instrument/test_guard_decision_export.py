"""#45: the guard's own decision survives every stripping mode. A blocked call under the default
set-up (``op.ProvenanceSpanProcessor`` as the README wires it, ``hybrid``) — and under ``allowlist`` and
``denylist`` — exports its ``gen_ai.security.*`` decision, ``gen_ai.guardian.name`` and a non-empty
``gen_ai.security.finding`` event; no argument value reaches the exported bytes (canaries)."""

from __future__ import annotations

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import otel_provenance as op
from canary import assert_absent, canary, exported_bytes
from otel_provenance.instrument.spans.redaction import StripOptions

DECISION = (
    "gen_ai.security.decision.type",
    "gen_ai.security.decision.reason",
    "gen_ai.security.target.type",
    "gen_ai.security.policy.id",
    "gen_ai.guardian.name",
)


@pytest.mark.parametrize(
    "mode", [None, "hybrid", "allowlist", "denylist"], ids=["default", "hybrid", "allowlist", "denylist"]
)
def test_a_blocked_calls_decision_and_finding_are_exported_and_no_value(mode):
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    options = StripOptions(mode=mode) if mode is not None else None
    provider.add_span_processor(op.ProvenanceSpanProcessor(SimpleSpanProcessor(exporter), options=options))
    secret_account, secret_note = canary(), canary()

    @op.tool(side_effect="write", tracer_provider=provider)
    def pay(account: str, comment: str) -> str:
        raise AssertionError("a blocked call never runs")

    with op.run(tracer_provider=provider), pytest.raises(op.ProvenanceError):
        pay(account=secret_account, comment=secret_note)  # the comment: allowed free text
    spans = exporter.get_finished_spans()
    (tool,) = [s for s in spans if s.name == "execute_tool pay"]
    attributes = dict(tool.attributes)
    for key in DECISION:
        assert key in attributes, key
    assert attributes["gen_ai.security.decision.type"] == "deny"
    assert attributes["agent.tool.status"] == "blocked"
    (finding,) = [e for e in tool.events if e.name == "gen_ai.security.finding"]
    assert finding.attributes["gen_ai.security.policy.id"] == "max_assumed"
    assert tuple(finding.attributes["gen_ai.security.risk.metadata"]) == ("max_assumed:account=assumed",)
    assert_absent([secret_account, secret_note], exported_bytes(spans))


def _traced(mode: str, **options):
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(
        op.ProvenanceSpanProcessor(SimpleSpanProcessor(exporter), options=StripOptions(mode=mode, **options))
    )
    return provider, exporter


@pytest.mark.parametrize("mode", ["hybrid", "allowlist", "denylist"])
def test_an_advisory_decision_survives_on_a_tool_span_its_body_added_to(mode):
    """A tool body that sets an attribute on its own span sends that span through the stripping walk
    (not the shortcut for spans holding only this package's keys): the allow-list's rule for
    ``gen_ai.security.decision.reason`` and ``risk.metadata`` — kept on this package's spans only —
    still keeps the decision this package wrote there, and the body's value goes."""
    from opentelemetry import trace

    provider, exporter = _traced(mode)
    query, note = canary(), canary()

    @op.tool(side_effect="read", budget=op.Budget(max_assumed=0), tracer_provider=provider)
    def search(query: str) -> list:
        trace.get_current_span().set_attribute("gen_ai.input.messages", f"note {note}")
        return []

    with op.run(tracer_provider=provider):
        assert search(query) == []
    spans = exporter.get_finished_spans()
    (tool,) = [s for s in spans if s.name == "execute_tool search"]
    assert tool.attributes["gen_ai.security.decision.type"] == "warn"
    assert tool.attributes["gen_ai.security.decision.reason"] == "max_assumed"
    (finding,) = [e for e in tool.events if e.name == "gen_ai.security.finding"]
    assert tuple(finding.attributes["gen_ai.security.risk.metadata"]) == ("max_assumed:query=assumed",)
    assert_absent([query, note], exported_bytes(spans))


@pytest.mark.parametrize("allow", [(), ("gen_ai.security.decision.reason", "gen_ai.security.risk.metadata")])
def test_another_guardrails_reason_text_goes_under_the_allow_list_unless_allowed(allow):
    """Another producer's guardrail span keeps its decision's identifiers under the allow-list, and its
    free-text reason and risk metadata go (they may quote what it matched) — unless the user named
    them in ``allow``."""
    provider, exporter = _traced("allowlist", allow=allow)
    with provider.get_tracer("some.guardrail").start_as_current_span(
        "apply_guardrail pii",
        attributes={
            "gen_ai.operation.name": "apply_guardrail",
            "gen_ai.security.decision.type": "deny",
            "gen_ai.security.decision.reason": "quoted text",
        },
    ) as span:
        span.add_event(
            "gen_ai.security.finding",
            {"gen_ai.security.risk.category": "pii", "gen_ai.security.risk.metadata": ["matched=x"]},
        )
    (guardrail,) = exporter.get_finished_spans()
    (finding,) = guardrail.events
    assert guardrail.attributes["gen_ai.security.decision.type"] == "deny"
    assert finding.attributes["gen_ai.security.risk.category"] == "pii"
    kept = bool(allow)
    assert ("gen_ai.security.decision.reason" in guardrail.attributes) is kept
    assert ("gen_ai.security.risk.metadata" in finding.attributes) is kept


@pytest.mark.parametrize("mode", ["hybrid", "allowlist"])
def test_the_decision_on_a_frameworks_tool_span_the_call_adopted_survives(mode):
    """A framework that opens the ``execute_tool`` span itself (another instrumentation scope): the
    call adopts it and writes its decision there, and the allow-list keeps that decision — the span
    carries this package's ``agent.side_effect``, so the rule for other producers' text does not
    take it."""
    provider, exporter = _traced(mode)
    query = canary()

    @op.tool(side_effect="read", budget=op.Budget(max_assumed=0), tracer_provider=provider)
    def search(query: str) -> list:
        return []

    framework = provider.get_tracer("some.agent.framework")
    with (
        op.run(tracer_provider=provider),
        framework.start_as_current_span(
            "execute_tool search",
            attributes={"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "search"},
        ),
    ):
        assert search(query) == []
    spans = exporter.get_finished_spans()
    (tool,) = [s for s in spans if s.name == "execute_tool search"]
    assert tool.instrumentation_scope.name == "some.agent.framework"  # adopted, not a second span
    assert tool.attributes["gen_ai.security.decision.reason"] == "max_assumed"
    (finding,) = [e for e in tool.events if e.name == "gen_ai.security.finding"]
    assert tuple(finding.attributes["gen_ai.security.risk.metadata"]) == ("max_assumed:query=assumed",)
    assert_absent([query], exported_bytes(spans))
