"""The compiled call path (#45): what a tool works out once must not change what any call decides.

``call/plan.py`` decides ``op.Budget``'s verdict once per pattern of argument names and kinds; the
processor notes ``@op.tool`` calls for framework twins only once a span not of ours was seen. Each
test drives the real SDK through the public API and reads the exported spans.
"""

from __future__ import annotations

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import otel_provenance as op
from instrument_helpers import settings
from otel_provenance import semconv as sc


def _provider() -> tuple[TracerProvider, InMemorySpanExporter]:
    memory = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(op.ProvenanceSpanProcessor(SimpleSpanProcessor(memory)))
    return provider, memory


def _tool_spans(memory: InMemorySpanExporter, name: str) -> list:
    return [s for s in memory.get_finished_spans() if s.attributes.get(sc.GEN_AI_TOOL_NAME) == name]


def test_each_pattern_of_kinds_is_decided_for_itself_however_the_calls_alternate() -> None:
    provider, memory = _provider()

    @op.tool(tracer_provider=provider)
    def list_files(root: str) -> list[str]:
        return ["/srv/a.txt", "/srv/b.txt"]

    @op.tool(side_effect="write", tracer_provider=provider)
    def delete_file(path: str, reason: str = "") -> str:
        return "deleted"

    paths = ["/srv/a.txt", "/etc/passwd", "/srv/b.txt", "/etc/shadow", "/srv/a.txt"]
    outcomes = []
    with op.run(inputs={"root": "/srv"}):
        list_files("/srv")
        for path in paths:
            try:
                delete_file(path, reason="tidy up")
                outcomes.append("ran")
            except op.ProvenanceError:
                outcomes.append("blocked")
    assert outcomes == ["ran", "blocked", "ran", "blocked", "ran"]
    spans = _tool_spans(memory, "delete_file")
    assert [s.attributes[sc.TOOL_STATUS] for s in spans] == ["ok", "blocked", "ok", "blocked", "ok"]
    assert [s.attributes[sc.BUDGET_ASSUMED] for s in spans] == [0, 1, 0, 1, 0]
    assert [tuple(s.attributes.get(sc.VIOLATIONS, ())) for s in spans] == [
        (),
        ("max_assumed:path=assumed",),
        (),
        ("max_assumed:path=assumed",),
        (),
    ]
    assert all(tuple(s.attributes[sc.BUDGET_ALLOWED]) == ("reason",) for s in spans)


def test_the_enforcement_setting_is_part_of_the_pattern() -> None:
    provider, memory = _provider()

    @op.tool(side_effect="write", tracer_provider=provider)
    def delete_file(path: str) -> str:
        return "deleted"

    with op.run():
        with pytest.raises(op.ProvenanceError):
            delete_file("/etc/passwd")
        with settings(enforce=False):
            assert delete_file("/etc/passwd") == "deleted"  # only tagged now
        with pytest.raises(op.ProvenanceError):
            delete_file("/etc/passwd")
    assert [s.attributes[sc.TOOL_STATUS] for s in _tool_spans(memory, "delete_file")] == [
        "blocked",
        "ok",
        "blocked",
    ]


def test_an_applications_own_budget_is_asked_on_every_call() -> None:
    provider, memory = _provider()
    asked: list[int] = []

    class CountingBudget(op.Budget):
        def check(self, classification, side_effect, **options):  # type: ignore[no-untyped-def]
            asked.append(len(asked))
            return super().check(classification, side_effect, **options)

    @op.tool(side_effect="read", budget=CountingBudget(), tracer_provider=provider)
    def read_file(path: str) -> str:
        return "text"

    with op.run():
        for _ in range(3):
            read_file("/srv/a.txt")
    assert asked == [0, 1, 2]
    assert len(_tool_spans(memory, "read_file")) == 3


def test_a_framework_span_seen_after_only_our_own_is_still_the_twin_of_the_call_inside_it() -> None:
    """The processor saw only this package's spans for a while (no twin bookkeeping then); a framework
    span that starts around a later call, named only when it ends (as OpenInference's OpenAI Agents
    instrumentation does, so it is not adopted), is that call's twin: no provenance of its own."""
    provider, memory = _provider()
    framework = provider.get_tracer("some.framework")

    @op.tool(tracer_provider=provider)
    def lookup(customer: str) -> str:
        return "ORD-1"

    with op.run(inputs={"customer": "c-1"}):
        for _ in range(3):
            lookup("c-1")  # only our own spans so far
        with framework.start_as_current_span("tool") as outer:
            lookup("c-1")
            outer.set_attributes(
                {
                    sc.GEN_AI_OPERATION_NAME: sc.EXECUTE_TOOL,
                    sc.GEN_AI_TOOL_NAME: "lookup",
                    sc.GEN_AI_TOOL_CALL_ARGUMENTS: '{"customer": "c-1"}',  # what it would classify
                }
            )
    spans = memory.get_finished_spans()
    (outer_span,) = [s for s in spans if s.instrumentation_scope.name == "some.framework"]
    assert not any(key.startswith("agent.") for key in outer_span.attributes)
    assert [s.attributes[sc.RETRY_NUMBER] for s in _tool_spans(memory, "lookup") if s is not outer_span] == [
        0,
        1,
        2,
        3,
    ]
