"""Canary (#34): a call that violates an argument-value policy — each kind of check — leaves no argument
value, input value or limit read from the inputs in the exported bytes (OTLP/JSON and protobuf), the
exception, or the logs. The schema validator's messages quote values; they must go nowhere."""

from __future__ import annotations

import logging
import secrets

import pytest

import otel_provenance as op
from canary import assert_absent, canary, exported_bytes
from instrument_helpers import Traced, settings


def number() -> int:
    return 10**11 + secrets.randbelow(10**11)  # eleven or twelve random digits: findable if leaked


@pytest.mark.parametrize("enforce", [True, False])
def test_no_value_of_a_violating_call_leaves_the_process(caplog, enforce):
    caplog.set_level(logging.DEBUG)
    traced = Traced()
    provider = traced.provider
    texts = {k: canary() for k in ("pattern", "denied", "schema_len", "schema_enum", "schema_type", "count")}
    numbers = {k: number() for k in ("minimum", "maximum", "xmin", "xmax", "sum", "input", "input_sum")}
    limit = numbers["input"]

    policy = op.Policy(
        arguments={
            "low": {"minimum": numbers["minimum"] + 1},
            "high": {"maximum": numbers["maximum"] - 1},
            "xlow": {"exclusive_minimum": numbers["xmin"]},
            "xhigh": {"exclusive_maximum": numbers["xmax"]},
            "to": {"patterns": ["[a-z]+@example\\.com"]},
            "denied": {"denied_patterns": ["sk-.*"]},
        },
        schema={
            "properties": {
                "note": {"type": "string", "maxLength": 3},
                "choice": {"enum": ["a", "b"]},
                "kind": {"type": "integer"},
            }
        },
    )
    spend = op.Policy(arguments={"amount": {"run_sum": 1}, "budgeted": {"run_sum": op.Input("order.limit")}})
    once = op.Policy(run_count=1)

    @op.tool(side_effect="read", policy=policy, tracer_provider=provider)
    def judged(**arguments) -> None:
        return None

    @op.tool(side_effect="read", policy=spend, tracer_provider=provider)
    def spending(amount=None, budgeted=None) -> None:
        return None

    @op.tool(side_effect="read", policy=once, tracer_provider=provider)
    def counted(text: str) -> None:
        return None

    calls = [
        (judged, {"low": numbers["minimum"]}),
        (judged, {"high": numbers["maximum"]}),
        (judged, {"xlow": numbers["xmin"]}),
        (judged, {"xhigh": numbers["xmax"]}),
        (judged, {"to": texts["pattern"]}),
        (judged, {"denied": texts["denied"]}),
        (judged, {"note": texts["schema_len"]}),
        (judged, {"choice": texts["schema_enum"]}),
        (judged, {"kind": texts["schema_type"]}),
        (spending, {"amount": numbers["sum"]}),
        (spending, {"budgeted": numbers["input_sum"]}),
        (counted, {"text": "x"}),
        (counted, {"text": texts["count"]}),
    ]
    messages: list[str] = []
    with settings(enforce=enforce), op.run(inputs={"order": {"limit": limit}}):
        for tool, arguments in calls:
            try:
                tool(**arguments)
            except op.ProvenanceError as blocked:
                messages.append(str(blocked))
                messages.append(repr(blocked.violations))
    if enforce:
        assert len(messages) == 2 * (len(calls) - 1)  # all but the first counted call were blocked
    spans = [s for s in traced.spans if s.name.startswith("execute_tool ")]
    violations = {v for s in spans for v in s.attributes.get("agent.violations", ())}
    assert violations == {
        "policy:low:minimum",
        "policy:high:maximum",
        "policy:xlow:exclusive_minimum",
        "policy:xhigh:exclusive_maximum",
        "policy:to:pattern",
        "policy:denied:denied_pattern",
        "policy:schema:/properties/note/maxLength",
        "policy:schema:/properties/choice/enum",
        "policy:schema:/properties/kind/type",
        "policy:amount:run_sum",
        "policy:budgeted:run_sum",
        "policy:calls:run_count",
    }
    values = [*texts.values(), *(str(n) for n in numbers.values())]
    assert_absent(values, exported_bytes(traced.spans))
    assert_absent(values, ["\n".join(messages).encode(), caplog.text.encode()])
