"""Causal graph, step keys, canonical form and optimal matching (pure functions over the model)."""

from __future__ import annotations

import hashlib
import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from otel_provenance import semconv
from otel_provenance.errors import InvalidEvidenceError
from otel_provenance.offline.fingerprint import (
    ROOT_STEP,
    canonical_form,
    edge_counts,
    fingerprint,
    step_counts,
)
from otel_provenance.offline.graph import CausalGraph, DanglingSource, DataEdge
from otel_provenance.offline.matching import optimal_assignment
from otel_provenance.offline.model import Attributes, Run, Span
from otel_provenance.offline.runs import group_runs, make_run
from otel_provenance.offline.stepkey import step_key

TRACE = "a" * 32


def span(sid: int, parent: int | None, name: str, start: int, end: int, trace: str = TRACE, **attrs) -> Span:
    return Span(
        trace_id=trace,
        span_id=f"{sid:016x}",
        parent_span_id=f"{parent:016x}" if parent else None,
        name=name,
        start_ns=start,
        end_ns=end,
        attributes=Attributes(attrs),
    )


def sid(n: int) -> str:
    return f"{n:016x}"


def source(arg: str, n: int | str) -> dict:
    return {semconv.arg_attr(arg, semconv.ARG_SOURCE_SPAN_ID_SUFFIX): sid(n) if isinstance(n, int) else n}


@pytest.fixture
def graph() -> CausalGraph:
    spans = [
        span(1, None, "agent", 0, 100),
        span(2, 1, "list", 10, 20),
        span(3, 1, "a", 30, 50),
        span(4, 1, "b", 40, 60),  # overlaps 3
        span(5, 1, "patch", 70, 80, **source("path", 2), **source("late", 4)),
        span(6, 99, "orphan", 5, 6, **source("gone", 77), **source("bad", "xyz")),
        span(7, 5, "write", 75, 79, **source("self_parent_src", 5)),
    ]
    return CausalGraph.of(make_run("r", reversed(spans)))


def test_structure(graph: CausalGraph) -> None:
    assert graph.roots == (sid(1), sid(6))  # true root and orphan under the virtual root, time order
    assert graph.is_orphan(sid(6)) and not graph.is_orphan(sid(1))
    assert graph.parent(sid(2)) == sid(1) and graph.parent(sid(1)) is None and graph.parent(sid(6)) is None
    assert graph.children(sid(1)) == (sid(2), sid(3), sid(4), sid(5))
    assert graph.ancestors(sid(7)) == (sid(5), sid(1))
    assert graph.descendants(sid(1)) == (sid(2), sid(3), sid(4), sid(5), sid(7))
    assert graph.span(sid(3)).name == "a" and sid(42) not in graph


def test_happens_before_treats_overlap_as_unordered(graph: CausalGraph) -> None:
    assert graph.happens_before(sid(2), sid(3))
    assert not graph.happens_before(sid(3), sid(4)) and not graph.happens_before(sid(4), sid(3))
    assert not graph.happens_before(sid(1), sid(2))  # a parent has not ended when its child starts


def test_data_edges_and_dangling_sources(graph: CausalGraph) -> None:
    assert graph.data_edges == (DataEdge(sid(4), sid(5), "late"), DataEdge(sid(2), sid(5), "path"))
    assert set(graph.dangling_sources) == {
        DanglingSource(sid(6), "gone", sid(77), "missing"),
        DanglingSource(sid(6), "bad", "xyz", "malformed"),
        DanglingSource(sid(7), "self_parent_src", sid(5), "not_before"),  # its parent has not ended
    }
    assert graph.sources_of(sid(5)) == graph.data_edges


def test_parent_in_another_trace_is_an_orphan() -> None:
    run = make_run("r", [span(1, None, "a", 0, 1), span(2, 1, "b", 2, 3, trace="b" * 32)])
    assert CausalGraph.of(run).roots == (sid(1), sid(2))


def test_runs_group_by_run_id_then_trace() -> None:
    spans = [
        span(1, None, "x", 0, 1, **{semconv.RUN_ID: "R"}),
        span(2, None, "y", 0, 1, trace="b" * 32, **{semconv.RUN_ID: "R"}),
        span(3, None, "z", 5, 6, trace="c" * 32),
    ]
    runs = group_runs(reversed(spans))
    assert [r.run_id for r in runs] == ["R", "c" * 32]
    assert [s.span_id for s in runs[0].spans] == [sid(1), sid(2)]


def test_duplicate_span_id_across_traces_of_a_run_is_invalid() -> None:
    spans = [
        span(1, None, "x", 0, 1, **{semconv.RUN_ID: "R"}),
        span(1, None, "y", 0, 1, trace="b" * 32, **{semconv.RUN_ID: "R"}),
    ]
    with pytest.raises(InvalidEvidenceError, match="occurs twice"):
        group_runs(spans)
    with pytest.raises(InvalidEvidenceError, match="occurs twice"):
        CausalGraph.of(Run("R", tuple(spans)))


def test_step_key_uses_tool_name_and_normalises() -> None:
    tool = span(
        1,
        None,
        "execute_tool lookup",
        0,
        1,
        **{semconv.GEN_AI_OPERATION_NAME: "execute_tool", semconv.GEN_AI_TOOL_NAME: "order.lookup 48213"},
    )
    assert step_key(tool) == "order.lookup {id}"
    assert (
        step_key(span(2, None, "GET /orders/550e8400-e29b-41d4-a716-446655440000", 0, 1))
        == "GET /orders/{id}"
    )
    assert step_key(span(3, None, "batch 2024-05-01T10:00:00Z", 0, 1)) == "batch {ts}"
    assert step_key(span(4, None, "gpt-4 v2", 0, 1)) == "gpt-4 v2"
    assert step_key(span(5, None, "", 0, 1)) != ROOT_STEP


def test_canonical_form_multiplicities_and_counts() -> None:
    run = make_run(
        "r",
        [
            span(1, None, "refund", 0, 100),
            span(2, 1, "pay", 10, 20),
            span(3, 2, "http", 11, 12),
            span(4, 1, "pay", 30, 40),
            span(5, 4, "http", 31, 32),
            span(6, 1, "notify", 50, 60),
            span(7, 1, "check", 70, 80),
        ],
    )
    assert canonical_form(run) == '"refund"\n  "check"\n  "notify"\n  2x "pay"\n    "http"\n'
    assert step_counts(run) == {"refund": 1, "pay": 2, "http": 2, "notify": 1, "check": 1}
    assert edge_counts(run) == {
        (ROOT_STEP, "refund"): 1,
        ("refund", "pay"): 2,
        ("pay", "http"): 2,
        ("refund", "notify"): 1,
        ("refund", "check"): 1,
    }


def test_canonical_form_escapes_names() -> None:
    run = make_run("r", [span(1, None, 'a"\nb', 0, 1)])
    assert canonical_form(run) == '"a\\"\\nb"\n'
    assert fingerprint(make_run("r", [span(1, None, "\ud800", 0, 1)])).startswith("v1:")  # lone surrogate


def test_fingerprint_is_its_canonical_form_hash_for_runs_of_one_step_sequence() -> None:
    """Runs are fingerprinted once per shape (steps and parent positions): runs with the same steps
    in the same span order but another tree must not share a fingerprint, runs of one tree must."""
    chain = [span(1, None, "a", 0, 9), span(2, 1, "b", 1, 8), span(3, 2, "b", 2, 7)]
    fan = [span(1, None, "a", 0, 9), span(2, 1, "b", 1, 8), span(3, 1, "b", 2, 7)]
    orphan = [span(1, None, "a", 0, 9), span(2, 1, "b", 1, 8), span(3, 99, "b", 2, 7)]
    again = [span(11, None, "a", 50, 59), span(12, 11, "b", 51, 58), span(13, 12, "b", 52, 57)]
    prints = []
    for spans in (chain, fan, orphan, again, chain):
        run = make_run("r", spans)
        print_ = fingerprint(run)
        assert print_ == "v1:" + hashlib.sha256(canonical_form(run).encode()).hexdigest()
        prints.append(print_)
    assert len(set(prints[:3])) == 3
    assert prints[0] == prints[3] == prints[4]


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 5), st.integers(0, 5), st.data())
def test_optimal_assignment_matches_brute_force(n: int, m: int, data: st.DataObject) -> None:
    cost = [[data.draw(st.integers(-5, 20)) for _ in range(m)] for _ in range(n)]
    pairs = optimal_assignment(cost)
    k = min(n, m) if m else 0
    assert len(pairs) == k and len({i for i, _ in pairs}) == k and len({j for _, j in pairs}) == k
    best = min(
        (
            sum(cost[i][j] for i, j in zip(rows, cols, strict=True))
            for rows in itertools.combinations(range(n), k)
            for cols in itertools.permutations(range(m), k)
        ),
        default=0,
    )
    assert sum(cost[i][j] for i, j in pairs) == best
    assert optimal_assignment(cost) == pairs  # deterministic


def test_optimal_assignment_is_not_greedy_and_prefers_position_on_ties() -> None:
    # Greedy would take (0,0) for cost 0 and then be forced into (1,1) at cost 10.
    assert optimal_assignment([[0, 1], [1, 10]]) == [(0, 1), (1, 0)]
    assert optimal_assignment([[0, 0, 0], [0, 0, 0]]) == [(0, 0), (1, 1)]
    with pytest.raises(ValueError):
        optimal_assignment([[1, 2], [3]])
    with pytest.raises(TypeError):
        optimal_assignment([[1.5]])  # type: ignore[list-item]
