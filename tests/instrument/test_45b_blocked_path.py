"""The cheaper blocked call (#45) refuses as it did.

- A refused call raises its error without a local naming it in the frame the traceback holds, so the
  call's span, events and :class:`.lifecycle.ToolCall` are freed at once instead of waiting, as cyclic
  garbage, for the collector: no refused call leaves a cycle behind, whichever error it raises;
- :func:`.security_form.security_decision` and :func:`.security_form.finding_event` make the rule
  parsing once per violation: they answer as the parsing does, on generated reasons, and the spans a
  blocked call exports through ``ProvenanceSpanProcessor`` are the same with the memo switched off —
  ERROR status, the ``gen_ai.security.*`` decision, non-empty findings, no argument value anywhere.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode

import otel_provenance as op
from garbage import garbage_kept, ours
from otel_provenance import semconv as sc
from otel_provenance.instrument.call import security_form
from otel_provenance.instrument.call.decision import Decision


class FrameworkToolError(Exception):
    """A framework's tool-error type, for ``blocked_error``."""


def _exporting() -> tuple[TracerProvider, InMemorySpanExporter]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(op.ProvenanceSpanProcessor(SimpleSpanProcessor(exporter)))
    return provider, exporter


@pytest.mark.parametrize("blocked_error", [None, FrameworkToolError])
@pytest.mark.parametrize("flavour", ["sync", "async", "generator"])
def test_a_refused_call_leaves_no_cycle_behind(blocked_error: type[Exception] | None, flavour: str) -> None:
    provider, exporter = _exporting()
    options: dict[str, Any] = {"side_effect": "write", "tracer_provider": provider}
    if blocked_error is not None:
        options["blocked_error"] = blocked_error

    if flavour == "sync":

        @op.tool(**options)
        def delete_file(path: str, offset: int) -> None:
            raise AssertionError("a blocked tool's body must never run")

        def call(path: str) -> None:
            delete_file(path, 0)
    elif flavour == "async":

        @op.tool(**options)
        async def delete_file(path: str, offset: int) -> None:
            raise AssertionError("a blocked tool's body must never run")

        def call(path: str) -> None:
            # driven by hand: an event loop keeps a task's exception in cycles of its own
            delete_file(path, 0).send(None)  # refused before anything is awaited
    else:

        @op.tool(**options)
        def delete_file(path: str, offset: int) -> Iterator[int]:
            raise AssertionError("a blocked tool's body must never run")
            yield 0

        def call(path: str) -> None:
            delete_file(path, 0)

    expected = blocked_error or op.ProvenanceError
    with op.run(inputs={"root": "/srv/repo"}):
        with pytest.raises(expected):
            call("/etc/warm-up")
        with garbage_kept() as garbage:
            for i in range(20):
                with pytest.raises(expected) as caught:
                    call(f"/etc/passwd{i}")
                error = caught.value if blocked_error is None else caught.value.__cause__
                assert isinstance(error, op.ProvenanceError)
                assert error.violations == ("max_assumed:offset=assumed", "max_assumed:path=assumed")
                assert str(caught.value) == (
                    "delete_file: blocked by provenance budget "
                    "(max_assumed:offset=assumed, max_assumed:path=assumed)"
                )
                del caught, error
    assert ours(garbage) == []
    assert [s.attributes[sc.TOOL_STATUS] for s in exporter.get_finished_spans()] == ["blocked"] * 21


def _parsed_decision(decision: Decision, essential: dict[str, Any]) -> dict[str, Any]:
    """What :func:`.security_form.security_decision` answered before its memo (the reference)."""
    kind = sc.DECISION_ALLOW if not decision.violations else sc.DECISION_WARN
    kind = sc.DECISION_DENY if decision.blocked else kind
    out: dict[str, Any] = {sc.SECURITY_DECISION_TYPE: kind, sc.GUARDIAN_NAME: sc.GUARDIAN}
    if decision.violations:
        out[sc.SECURITY_TARGET_TYPE] = sc.TARGET_TOOL_CALL
        if essential.get(sc.GEN_AI_TOOL_CALL_ID) is not None:
            out[sc.SECURITY_TARGET_ID] = essential[sc.GEN_AI_TOOL_CALL_ID]
        rules = [security_form.rule_of(r) for r in decision.violations]
        out[sc.SECURITY_DECISION_REASON] = ", ".join(dict.fromkeys(rules))
        out[sc.SECURITY_POLICY_ID] = rules[0]
    return out


pieces = st.text(alphabet="abz_=:-09 A", max_size=8)
reasons = st.one_of(
    st.builds(lambda rule, rest: f"{rule}:{rest}", st.sampled_from(
        ["max_assumed", "max_untrusted", "egress", "provenance_fault", "contract", "approval", "x"]
    ), pieces),
    pieces,
)  # fmt: skip


@settings(max_examples=300)
@given(st.lists(reasons, max_size=4), st.booleans(), st.one_of(st.none(), st.text(max_size=6)))
def test_the_memo_answers_as_the_parsing(violations: list[str], blocked: bool, call_id: str | None) -> None:
    decision = Decision(tuple(violations), blocked)
    essential = {} if call_id is None else {sc.GEN_AI_TOOL_CALL_ID: call_id}
    for _ in range(2):  # cold, then from the memo
        answer = security_form.security_decision(decision, essential)
        assert answer == _parsed_decision(decision, essential)
        assert list(answer) == list(_parsed_decision(decision, essential))  # the same order of keys
    for reason in violations:
        rule = security_form.rule_of(reason)
        expected = {
            sc.SECURITY_RISK_CATEGORY: security_form._RISK.get(rule.split(":", 1)[0], "excessive_agency"),
            sc.SECURITY_RISK_SEVERITY: "high" if blocked else "medium",
            sc.SECURITY_POLICY_ID: rule,
            sc.SECURITY_RISK_METADATA: (reason,),
        }
        first = security_form.finding_event(reason, blocked)
        assert first == expected and list(first) == list(expected)
        first[sc.SECURITY_POLICY_ID] = "changed by a caller"  # a fresh dict: the memo is not changed
        assert security_form.finding_event(reason, blocked) == expected


@contextlib.contextmanager
def _no_memo() -> Iterator[None]:
    with (
        mock.patch.object(security_form, "_reasons", security_form._reasons.__wrapped__),
        mock.patch.object(security_form, "_finding", security_form._finding.__wrapped__),
    ):
        yield


_VOLATILE = frozenset({sc.TOOL_CALL_ID, sc.GEN_AI_TOOL_CALL_ID, sc.RUN_ID, sc.SECURITY_TARGET_ID})
VALUES = ("/etc/passwd-canary-7731", "canary reason 5521", 982451653)


def _blocked_spans() -> tuple[list, list[str]]:
    provider, exporter = _exporting()

    @op.tool(side_effect="write", tracer_provider=provider)
    def delete_file(path: str, offset: int, reason: str) -> None:
        raise AssertionError("a blocked tool's body must never run")

    with op.run(inputs={"root": "/srv/repo"}):
        for _ in range(3):
            with pytest.raises(op.ProvenanceError):
                delete_file(*VALUES)
    spans = exporter.get_finished_spans()
    exported = [
        (
            s.name,
            {k: v for k, v in s.attributes.items() if k not in _VOLATILE},
            [(e.name, dict(e.attributes or {})) for e in s.events],
            s.status.status_code,
            s.status.description,
        )
        for s in spans
    ]
    return exported, [s.to_json() for s in spans]


def test_a_blocked_call_exports_the_same_span_with_the_memo_and_without() -> None:
    fast, fast_bytes = _blocked_spans()
    with _no_memo():
        general, _ = _blocked_spans()
    assert fast == general
    for _name, attributes, events, status, description in fast:
        assert status is StatusCode.ERROR and description == "ProvenanceError"
        assert attributes[sc.TOOL_STATUS] == "blocked"
        assert attributes[sc.SECURITY_DECISION_TYPE] == sc.DECISION_DENY
        assert attributes[sc.GUARDIAN_NAME] == sc.GUARDIAN
        assert attributes[sc.SECURITY_POLICY_ID] == "max_assumed"
        findings = [e for e in events if e[0] == sc.SECURITY_FINDING_EVENT]
        assert len(findings) == 2 and all(f[1] for f in findings)
    for text in fast_bytes:  # the canary rule: no argument value in what is exported
        assert not any(str(value) in text for value in VALUES)
