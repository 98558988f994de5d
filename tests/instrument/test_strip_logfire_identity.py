"""logfire names its agent-run and tool spans only by a message template and its ``name`` argument. The
default (hybrid) and allow-list modes keep those two keys on exactly those spans — so the offline half
still finds the tool call — and nothing else of them; a ``name`` beside any other template goes."""

from __future__ import annotations

from pathlib import Path

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from canary import assert_absent, canary, exported_bytes
from offline_helpers import write_jsonl
from otel_provenance.instrument.processor import ProvenanceSpanProcessor
from otel_provenance.instrument.spans.redaction import StripOptions
from otel_provenance.offline import iter_runs


def _export(mode: str, spans: list[tuple[str, dict]]):
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    options = StripOptions(mode=mode)
    provider.add_span_processor(ProvenanceSpanProcessor(SimpleSpanProcessor(exporter), options=options))
    tracer = provider.get_tracer("logfire.openai_agents")
    with tracer.start_as_current_span("Agent run: 'refunds'", attributes=spans[0][1]):
        for name, attributes in spans[1:]:
            with tracer.start_as_current_span(name, attributes=attributes):
                pass
    provider.shutdown()
    return list(exporter.get_finished_spans())


@pytest.mark.parametrize("mode", ["hybrid", "allowlist"])
def test_a_logfire_tool_span_keeps_its_identity_and_nothing_else(mode: str, tmp_path: Path) -> None:
    secret, words = canary(), canary()
    spans = _export(
        mode,
        [
            ("Agent run: 'refunds'", {"logfire.msg_template": "Agent run: {name!r}", "name": "refunds"}),
            (
                "Function: issue_refund",
                {
                    "logfire.msg_template": "Function: {name}",
                    "name": "issue_refund",
                    "logfire.span_type": "span",
                    "input": f'{{"order_id": "{secret}"}}',
                    "output": secret,
                },
            ),
            ("Dear customer", {"logfire.msg_template": "Dear {name}", "name": words, "gen_ai.system": "x"}),
        ],
    )
    by_name = {s.name: dict(s.attributes or {}) for s in spans}
    assert by_name["Function: issue_refund"] == {
        "logfire.msg_template": "Function: {name}",
        "name": "issue_refund",
    }
    assert by_name["Agent run: 'refunds'"] == {
        "logfire.msg_template": "Agent run: {name!r}",
        "name": "refunds",
    }
    assert "name" not in by_name["Dear customer"] and "logfire.msg_template" not in by_name["Dear customer"]
    assert_absent([secret, words], exported_bytes(spans))
    (run,) = iter_runs([write_jsonl(spans, tmp_path / "t.jsonl")])
    assert [s.tool_name for s in run.spans if s.tool_name] == ["issue_refund"]
