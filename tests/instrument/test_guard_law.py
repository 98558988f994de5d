"""One law for the contract, online and offline: the calls the guard blocks are the calls whose prefix
the offline evaluator fails, rule by rule.

Hypothesis draws a contract of prefix-decidable rules (forbidden steps, maxima, retry budgets, guarded
paths, allowed values and constraints of call-time attributes, provenance budgets) and a sequence of
tool calls; the calls are made for real through ``@op.tool`` under ``op.run(contract=...)`` and the
spans exported with the official OTLP protobuf encoder. Offline, for every call ``k`` the run is cut
after it — the calls before ``k`` as exported, call ``k`` as if it had run — and judged by the public
evaluator (``offline.evaluate``): the rules that fail with a finding naming call ``k`` must be exactly
the rules the guard named when it blocked it (none for a call that ran).
"""

from __future__ import annotations

import secrets
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import otel_provenance as op
from offline_helpers import write_proto
from otel_provenance import semconv
from otel_provenance.offline.contracts.dsl import dump_document, parse_contract
from otel_provenance.offline.evaluate import evaluate
from otel_provenance.offline.model import Attributes, Run
from otel_provenance.offline.outcome import Outcome
from otel_provenance.offline.readers import iter_runs

STEPS = ("lookup", "check", "pay", "note")
SIDE_EFFECT = {"lookup": "read", "check": "read", "pay": "write", "note": "none"}

_step = st.sampled_from(STEPS)
_rules = st.one_of(
    st.builds(lambda s: {"type": "forbidden_spans", "select": {"step": s}}, _step),
    st.builds(
        lambda s, m: {"type": "cardinality", "select": {"step": s}, "max": m}, _step, st.integers(0, 2)
    ),
    st.builds(
        lambda s, m: {"type": "retry_budgets", "select": {"step": s}, "max_retries": m},
        _step,
        st.integers(0, 1),
    ),
    st.builds(
        lambda t, g, f: {
            "type": "forbidden_paths",
            "to": {"step": t},
            "unless_preceded_by": {"step": g},
            **({"from": {"step": f}} if f else {}),
        },
        _step,
        _step,
        st.one_of(st.none(), _step),
    ),
    st.builds(
        lambda s: {
            "type": "allowed_values",
            "select": {"step": s},
            "attribute": semconv.IDEMPOTENCY_PRESENT,
            "values": [True],
        },
        _step,
    ),
    st.builds(
        lambda s, v: {
            "type": "attribute_constraints",
            "select": {"step": s},
            "attribute": semconv.RETRY_NUMBER,
            "op": "<=",
            "value": v,
        },
        _step,
        st.integers(0, 1),
    ),
    st.builds(lambda s: {"type": "provenance_budgets", "select": {"step": s}, "max_assumed": 0}, _step),
    st.builds(
        lambda s, m, agg: {
            "type": "numeric_budgets",
            "select": {"step": s},
            "attribute": semconv.RETRY_NUMBER,
            "aggregate": agg,
            "max": m,
        },
        _step,
        st.integers(0, 2),
        st.sampled_from(["sum", "max"]),
    ),
    st.builds(lambda s: {"type": "forbidden_spans", "select": {"step": s}, "on_violation": "ask"}, _step),
)
_contracts = st.lists(_rules, min_size=1, max_size=4).map(
    lambda rules: {
        "name": "law",
        "version": 1,
        "rules": [{"id": f"r{i}", **rule} for i, rule in enumerate(rules)],
    }
)
# a call: the step, its retry number (0: a new call), whether the idempotency key is passed, and
# whether its argument is one the run never saw (assumed; only on tools that are not writes)
_calls = st.lists(st.tuples(_step, st.sampled_from([0, 0, 1, 2]), st.booleans(), st.booleans()), max_size=7)


def _tools(provider: TracerProvider) -> dict[str, object]:
    tools = {}
    for step in STEPS:

        def body(order: str, key: str | None = None) -> dict:
            return {"done": True}

        tools[step] = op.tool(
            body,
            name=step,
            side_effect=SIDE_EFFECT[step],
            idempotency_key="key",
            budget=op.Budget(enforce=False) if SIDE_EFFECT[step] != "write" else None,
            tracer_provider=provider,
        )
    return tools


def _online(contract: dict, calls: list, tmp: Path) -> tuple[Run, list[tuple[str, ...] | None]]:
    """Make the calls under the contract; the exported run and, per call, the rules that blocked it."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tools = _tools(provider)
    path = tmp / f"contract-{secrets.token_hex(4)}.yaml"
    path.write_text(dump_document(contract))
    blocked: list[tuple[str, ...] | None] = []
    inputs = {"order": "ord-20240501", "key": "k-0001"}
    with op.run(inputs=inputs, contract=str(path), tracer_provider=provider):
        for step, retry, keyed, unseen in calls:
            order = (
                f"guess-{secrets.token_hex(3)}" if unseen and SIDE_EFFECT[step] != "write" else "ord-20240501"
            )
            kwargs = {"order": order, "key": "k-0001" if keyed else None}
            try:
                if retry:
                    with op.retry_attempt(retry):
                        tools[step](**kwargs)
                else:
                    tools[step](**kwargs)
                blocked.append(None)
            except op.ProvenanceError as error:
                blocked.append(
                    tuple(sorted({v.split(":")[1] for v in error.violations if v.startswith("contract:")}))
                )
    (run,) = iter_runs([write_proto(exporter.get_finished_spans(), tmp / f"run-{secrets.token_hex(4)}.pb")])
    return run, blocked


def _offline(run: Run, contract: dict) -> list[tuple[str, ...]]:
    """Per call, the rules the offline evaluator fails on the run cut after it, naming that call."""
    parsed = parse_contract(dump_document(contract))
    calls = sorted((s for s in run.spans if s.is_tool), key=lambda s: (s.start_ns, s.span_id))
    others = [s for s in run.spans if not s.is_tool]
    failing = []
    for k, call in enumerate(calls):
        as_run = dict(call.attributes.items_unordered())
        as_run[semconv.TOOL_STATUS] = semconv.TOOL_STATUS_OK
        cut = Run(run.run_id, (*others, *calls[:k], replace(call, attributes=Attributes(as_run))))
        result = evaluate(cut, parsed)
        failing.append(
            tuple(
                sorted(
                    rule.rule_id
                    for rule in result.rules
                    if any(
                        finding.status is Outcome.FAIL
                        and any(call.span_id in w.span_ids for w in finding.witnesses)
                        for finding in rule.findings
                    )
                )
            )
        )
    return failing


@settings(max_examples=150, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(contract=_contracts, calls=_calls)
def test_the_guard_blocks_exactly_the_calls_whose_prefix_fails_offline(tmp_path, contract, calls):
    run, blocked = _online(contract, calls, tmp_path)
    offline = _offline(run, contract)
    assert len(offline) == len(calls)
    event(f"calls blocked by the contract: {sum(1 for b in blocked if b)}")
    assert [b or () for b in blocked] == offline


def test_the_law_can_fail(tmp_path):
    """Control: a call made twice under ``cardinality max 1`` — the second is blocked, and the cut
    after it fails offline; without the guard it runs and the same cut still fails (so the test above
    compares something)."""
    contract = {
        "name": "law",
        "version": 1,
        "rules": [{"id": "r0", "type": "cardinality", "select": {"step": "pay"}, "max": 1}],
    }
    calls = [("pay", 0, True, False), ("pay", 0, True, False)]
    run, blocked = _online(contract, calls, tmp_path)
    assert blocked == [None, ("r0",)]
    assert _offline(run, contract) == [(), ("r0",)]


@pytest.mark.parametrize(
    "rule",
    [
        {"type": "required_spans", "select": {"step": "check"}, "min": 1},
        {"type": "required_edges", "parent": {"step": "check"}, "child": {"step": "pay"}},
        {"type": "cardinality", "select": {"step": "check"}, "min": 1},
    ],
    ids=["required_spans", "required_edges", "cardinality-min"],
)
def test_rules_only_the_whole_run_decides_never_block_and_are_judged_when_it_ends(tmp_path, rule):
    contract = {"name": "law", "version": 1, "rules": [{"id": "r0", **rule}]}
    run, blocked = _online(contract, [("pay", 0, True, False)], tmp_path)
    assert blocked == [None]
    (root,) = [s for s in run.spans if s.attributes.get(semconv.GEN_AI_OPERATION_NAME) == "invoke_agent"]
    assert root.attributes[semconv.GUARD_RUN_VERDICT] == "fail"
    assert root.attributes[semconv.GUARD_RUN_FAILED] == ("r0",)
    assert root.attributes[semconv.GUARD_CONTRACT].startswith("law@")
