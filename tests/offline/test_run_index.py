"""The one-walk indexes the rules' pass tests read agree with what they stand in for (#46).

* ``graph.tree`` — each span's parent by position and whether the run is complete, made without the
  causal graph — must agree with ``CausalGraph`` (its parents, its orphans), and give None where only
  the graph can tell (spans of several traces, an empty span id).
* ``stepkey.run_index`` — each span's step, the spans of each step, the tool calls — must agree with
  ``step_key`` and ``Span.is_tool`` span by span.
* ``runs._ordered`` — validation's shortcut, decided in C — lets through only runs the walk would.
* A tally's ``start_min``/``end_min`` are the earliest times of the spans that ran, which the
  ``forbidden_paths`` pass test compares: it may pass only where the checker finds nothing.
"""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from contract_runs import MISSING_PARENT, RunBuilder
from otel_provenance import semconv
from otel_provenance.errors import InvalidEvidenceError
from otel_provenance.offline.contracts.dsl import parse_contract
from otel_provenance.offline.contracts.evidence import RunEvidence
from otel_provenance.offline.evaluate import check_rule, compiled
from otel_provenance.offline.graph import CausalGraph, tree
from otel_provenance.offline.model import Run, Span, SpanKind
from otel_provenance.offline.outcome import Outcome
from otel_provenance.offline.runs import _check, _ordered, validate_run
from otel_provenance.offline.stepkey import run_index, step_key


def _run(parents: list[int]) -> Run:
    b = RunBuilder("run-index")
    ids = [b.root]
    for n, pick in enumerate(parents):
        parent = ids[pick % len(ids)] if pick >= 0 else None
        parent_id = MISSING_PARENT if pick == -2 else None
        ids.append(b.add(f"step{n % 3}", parent, parent_id=parent_id, tool=n % 2 == 0, start=1_000 + n % 5))
    return b.run()


@settings(max_examples=200, deadline=None)
@given(parents=st.lists(st.integers(-2, 9), max_size=12))
def test_the_tree_by_position_is_the_graphs(parents: list[int]) -> None:
    run = _run(parents)
    found = tree(run)
    graph = CausalGraph.of(run)
    assert found is not None
    position = {s.span_id: i for i, s in enumerate(run.spans)}
    expected = tuple(
        -1 if graph.parent(s.span_id) is None else position[graph.parent(s.span_id)] for s in run.spans
    )
    assert found.parents == expected
    assert found.complete == (not graph.orphans) == RunEvidence(run).complete


def test_only_the_graph_tells_of_several_traces_or_an_empty_span_id() -> None:
    b = RunBuilder("run-two-traces")
    b.add("fetch")
    run = b.run()
    other = replace(run.spans[1], trace_id="f" * 32)  # its parent is in another trace: an orphan
    two = Run(run.run_id, (run.spans[0], other))
    assert tree(two) is None
    assert RunEvidence(two).complete is False
    empty = Run(run.run_id, (replace(run.spans[0], span_id=""), replace(run.spans[1], parent_span_id="")))
    assert tree(empty) is None
    assert RunEvidence(empty).complete is False  # an empty parent id is an orphan's


@settings(max_examples=200, deadline=None)
@given(parents=st.lists(st.integers(-1, 9), max_size=12))
def test_the_run_index_is_each_spans_step_and_tool_call(parents: list[int]) -> None:
    run = _run(parents)
    steps, by_step, tools = run_index(run)
    assert steps == {s.span_id: step_key(s) for s in run.spans}
    assert by_step == {k: [s for s in run.spans if step_key(s) == k] for k in set(steps.values())}
    assert tools == [s for s in run.spans if s.is_tool]


def test_the_run_index_names_an_echo_and_a_nameless_tool_span_by_their_span_names() -> None:
    """The runs above hold no echo (a server's own span of a call the run holds: no tool call) and no
    tool span without a tool name (its step is its span name): the index must agree there too."""
    b = RunBuilder("run-echo")
    call = b.add("fetch")
    b.add("fetch", call)  # made the server's own span of the call below: an echo
    b.add("nameless", attrs={semconv.GEN_AI_TOOL_NAME: ""})
    built = b.run()
    echo = replace(built.spans[2], kind=SpanKind.SERVER)
    run = Run(built.run_id, (*built.spans[:2], echo, *built.spans[3:]))
    assert [s.echo for s in run.spans] == [False, False, True, False]
    assert [s.is_tool for s in run.spans] == [False, True, False, True]
    steps, by_step, tools = run_index(run)
    assert steps == {s.span_id: step_key(s) for s in run.spans}
    assert steps[run.spans[2].span_id] != steps[run.spans[1].span_id]  # the echo's span name, not its tool
    assert steps[run.spans[3].span_id] == step_key(run.spans[3]) != "nameless"
    assert by_step == {k: [s for s in run.spans if step_key(s) == k] for k in set(steps.values())}
    assert tools == [run.spans[1], run.spans[3]]


_CONTRACT = """
version: 1
name: paths
rules:
- id: notify.after.fetch
  type: forbidden_paths
  to: {step: notify}
  unless_preceded_by: {step: fetch}
"""

call = st.fixed_dictionaries(
    {
        "step": st.sampled_from(["fetch", "notify", "other"]),
        "blocked": st.booleans(),
        "start": st.integers(0, 30),
        "length": st.integers(0, 30),
    }
)


@settings(max_examples=300, deadline=None)
@given(calls=st.lists(call, max_size=8))
def test_a_guarded_path_passes_its_test_only_where_the_checker_finds_nothing(calls: list[dict]) -> None:
    rule = parse_contract(_CONTRACT).rules[0]
    b = RunBuilder("run-paths")
    for c in calls:
        attrs = {semconv.TOOL_STATUS: "blocked"} if c["blocked"] else {}
        b.add(c["step"], attrs=attrs, start=100 + c["start"], end=100 + c["start"] + c["length"])
    run = b.run()
    evidence = RunEvidence(run)
    ran = {
        step: [s for s in run.spans if step_key(s) == step and not s.blocked] for step in ("fetch", "notify")
    }
    for step, spans in ran.items():
        t = evidence.tally(rule.params["to" if step == "notify" else "unless_preceded_by"])
        assert t.occurred == len(spans)
        if spans:
            assert t.start_min == min(s.start_ns for s in spans)
            assert t.end_min == min(s.end_ns for s in spans)
    passes, _ = compiled(rule)
    checked = check_rule(rule, RunEvidence(run)).status
    assert passes(evidence) == (checked is Outcome.PASS)


@pytest.mark.parametrize(
    ("calls", "expected"),
    [
        # (step, start, end, blocked): the fetch ends the very nanosecond the notify starts — it precedes
        ([("fetch", 100, 110, False), ("notify", 110, 120, False)], Outcome.PASS),
        ([("fetch", 100, 111, False), ("notify", 110, 120, False)], Outcome.FAIL),
        ([("notify", 110, 120, False), ("fetch", 100, 110, False), ("fetch", 90, 130, False)], Outcome.PASS),
        ([("fetch", 100, 110, True), ("notify", 110, 120, False)], Outcome.FAIL),  # a blocked fetch never ran
        ([("fetch", 100, 110, False), ("notify", 110, 120, True)], Outcome.PASS),  # nor a blocked notify
    ],
)
def test_a_guard_that_ends_as_its_target_starts_precedes_it(calls: list[tuple], expected: Outcome) -> None:
    """The generated calls above end exactly as a later one starts in few runs: the pass test must
    count that guard as before its target (``happens_before`` is end <= start), as the checker does."""
    rule = parse_contract(_CONTRACT).rules[0]
    b = RunBuilder("run-paths")
    for step, start, end, blocked in calls:
        b.add(step, attrs={semconv.TOOL_STATUS: "blocked"} if blocked else {}, start=start, end=end)
    run = b.run()
    passes, _ = compiled(rule)
    assert check_rule(rule, RunEvidence(run)).status is expected
    assert passes(RunEvidence(run)) == (expected is Outcome.PASS)


@settings(max_examples=300, deadline=None)
@given(
    links=st.lists(st.tuples(st.integers(0, 5), st.integers(-1, 6)), min_size=1, max_size=7),
)
def test_the_ordered_shortcut_accepts_only_runs_the_walk_accepts(links: list[tuple[int, int]]) -> None:
    """``runs._ordered`` lets a run through without ``_check``'s walk only when every parent comes
    before its child; ``validate_run`` raises exactly where the walk does (duplicate ids, a span its
    own parent, a cycle), whichever decides."""
    ids = [f"{n:016x}" for n, _ in links]  # ids may repeat
    spans = tuple(
        Span("a" * 32, ids[i], None if parent < 0 else f"{parent:016x}", f"s{i}", start_ns=i)
        for i, (_, parent) in enumerate(links)
    )
    run = Run("run-order", spans)
    try:
        _check(run, None)
        walked = None
    except InvalidEvidenceError as exc:
        walked = str(exc)
    if _ordered(run.spans) is not None:
        assert walked is None
    try:
        validate_run(run)
        validated = None
    except InvalidEvidenceError as exc:
        validated = str(exc)
    assert validated == walked
