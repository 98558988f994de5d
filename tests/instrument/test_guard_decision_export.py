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
