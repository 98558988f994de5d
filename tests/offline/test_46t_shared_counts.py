"""The light counts a run's evidence keeps beside its tallies equal the tallies' own (#46).

``RunEvidence.unsettled_tools`` stands in for ``blocked_tools + silent_tools + unknown_tools`` of the
all-spans tally in the ``blocked_calls`` rule's pass test: it must give that sum on every run —
blocked calls, calls without a status, statuses of other types, echoes (a framework's twin of an
``@op.tool`` span) and spans that are no tool call — whether or not the tally was taken before.
``CausalGraph.children``, now built when first asked, must give each span's children in time order.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from contract_runs import MISSING_PARENT, RunBuilder
from otel_provenance import semconv
from otel_provenance.offline.contracts.evidence import RunEvidence
from otel_provenance.offline.graph import CausalGraph

status = st.sampled_from(["ok", "blocked", "error", "Blocked", 0, 1, True, ("blocked",), None])
span_spec = st.fixed_dictionaries(
    {
        "step": st.sampled_from(["fetch", "update", "notify"]),
        "tool": st.booleans(),
        "status": status,
        "own": st.booleans(),  # written by @op.tool (agent.side_effect), else by a framework
        "call": st.sampled_from([None, "call-1", "call-2"]),
    }
)


def _run(specs: list[dict]) -> object:
    b = RunBuilder("run-46t")
    for spec in specs:
        attrs: dict = {}
        if spec["status"] is not None:
            attrs[semconv.TOOL_STATUS] = spec["status"]
        if spec["own"]:
            attrs[semconv.SIDE_EFFECT] = "write"
        if spec["call"] is not None:
            attrs[semconv.GEN_AI_TOOL_CALL_ID] = spec["call"]
        b.add(spec["step"], tool=spec["tool"], attrs=attrs)
    return b.run()


def _from_tally(evidence: RunEvidence) -> int:
    t = evidence.tally(None)
    return t.blocked_tools + t.silent_tools + t.unknown_tools


@settings(max_examples=300, deadline=None)
@given(specs=st.lists(span_spec, max_size=10), tally_first=st.booleans())
def test_unsettled_tools_is_the_all_spans_tallys_sum(specs: list[dict], tally_first: bool) -> None:
    run = _run(specs)
    expected = _from_tally(RunEvidence(run))
    evidence = RunEvidence(run)
    if tally_first:
        evidence.tally(None)
    assert evidence.unsettled_tools == expected


def test_an_echo_is_no_unsettled_call_and_a_silent_call_is() -> None:
    b = RunBuilder("run-echo")
    outer = b.add("update", attrs={semconv.GEN_AI_TOOL_CALL_ID: "c1"})  # the framework's span: the echo
    b.add("update", outer, attrs={semconv.SIDE_EFFECT: "write", semconv.GEN_AI_TOOL_CALL_ID: "c1"})
    b.add("notify", attrs={semconv.TOOL_STATUS: "blocked"})
    b.add("fetch", attrs={semconv.TOOL_STATUS: "ok"})
    run = b.run()
    assert [s.echo for s in run.spans].count(True) == 1
    evidence = RunEvidence(run)
    # the @op.tool span of update (no status) and the blocked notify; not its echo, not fetch
    assert evidence.unsettled_tools == 2 == _from_tally(RunEvidence(run))


@settings(max_examples=200, deadline=None)
@given(parents=st.lists(st.integers(-2, 9), max_size=12))
def test_children_built_on_first_use_are_each_spans_children_in_time_order(parents: list[int]) -> None:
    """``CausalGraph.children`` is built from the parents when first asked (#46): each span's
    children are the spans naming it as parent in the same trace, in span order; orphans are none's."""
    b = RunBuilder("run-kids")
    ids = [b.root]
    for n, pick in enumerate(parents):
        parent = ids[pick % len(ids)] if pick >= 0 else None
        parent_id = MISSING_PARENT if pick == -2 else None
        ids.append(b.add(f"step{n % 3}", parent, parent_id=parent_id, start=1_000 + (n * 7919) % 13))
    run = b.run()
    graph = CausalGraph.of(run)
    present = {s.span_id for s in run.spans}
    for span in run.spans:
        expected = tuple(
            s.span_id for s in run.spans if s.parent_span_id == span.span_id and span.span_id in present
        )
        assert graph.children(span.span_id) == expected
    assert {s.span_id for s in graph.orphans} == {
        s.span_id for s in run.spans if s.parent_span_id == MISSING_PARENT
    }
