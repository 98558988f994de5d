"""A run that cannot be evidence is refused before any rule sees it (``offline.runs.make_run``):
duplicate span ids, a span that is its own parent, parent links that form a cycle — each named."""

from __future__ import annotations

import pytest

from otel_provenance.errors import InvalidEvidenceError
from otel_provenance.offline.model import Span
from otel_provenance.offline.runs import make_run

T1 = "1" * 32
T2 = "2" * 32


def _span(span_id: str, parent: str | None = None, trace: str = T1, start: int = 100) -> Span:
    return Span(trace, span_id, parent, f"s{span_id[-1]}", start_ns=start, end_ns=start + 10)


def _refusal(spans, source=None) -> str:
    with pytest.raises(InvalidEvidenceError) as info:
        make_run("r", spans, source)
    return str(info.value)


A, B, C, D = (c * 16 for c in "abcd")


def test_a_span_id_twice_in_one_trace_is_refused():
    assert _refusal([_span(A), _span(B, A), _span(B, A, start=200)]) == (
        f"run r: run r: span id {B} occurs twice"
    )


def test_a_span_id_shared_by_two_traces_of_one_run_names_both_traces():
    assert _refusal([_span(A), _span(A, trace=T2, start=200)], source="f.jsonl") == (
        f"f.jsonl: run r: span id {A} occurs twice (traces {T1}, {T2})"
    )


def test_a_span_that_is_its_own_parent_is_refused():
    assert _refusal([_span(A), _span(B, B)]) == f"run r: run r: span {B} is its own parent"


def test_parent_links_that_loop_are_refused_naming_a_span_on_the_loop():
    message = _refusal([_span(A), _span(B, D), _span(C, B), _span(D, C)], source="f.jsonl")
    assert message.startswith("f.jsonl: run r: parent links form a cycle through span ")
    assert message.rsplit(" ", 1)[1] in {B, C, D}


def test_chains_that_share_ancestors_and_links_across_traces_are_not_cycles():
    spans = [_span(A), _span(B, A), _span(C, B), _span(D, B, start=300)]
    assert [s.span_id for s in make_run("r", spans).spans] == [A, B, C, D]
    assert make_run("r", [_span(A), _span(B, C)]).spans[1].parent_span_id == C  # a lost parent is no cycle
    # each names the other as parent, but across traces no parent link is followed
    e = "e" * 16
    crossed = [_span(A, e), _span(e, A, trace=T2, start=200)]
    assert len(make_run("r", crossed).spans) == 2
