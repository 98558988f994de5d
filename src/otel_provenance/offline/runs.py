"""Spans → runs: grouping, ordering and the structural checks that make a run usable as evidence.

A run is every span with the same ``Span.run_id`` (``agent.run.id`` when present, else the trace
id). Its spans are sorted by ``(start_ns, span_id)`` so that equal input gives equal runs whatever
order the spans arrived in. A run is *invalid evidence* when a span id occurs twice in it (span ids
name data-flow sources run-wide, so they must be unique run-wide), a span is its own parent, or
parent links form a cycle.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

from ..errors import InvalidEvidenceError
from .model import Run, Span


def _order(span: Span) -> tuple[int, str]:
    return (span.start_ns, span.span_id)


def make_run(run_id: str, spans: Iterable[Span], source: str | None = None) -> Run:
    """A validated run of ``spans``, sorted. ``source`` names the input in error messages."""
    run = Run(run_id, tuple(sorted(spans, key=_order)))
    validate_run(run, source)
    return run


def validate_run(run: Run, source: str | None = None) -> None:
    """Raise ``InvalidEvidenceError`` for duplicate span ids, self-parents or parent cycles."""
    where = source or f"run {run.run_id}"
    by_id: dict[str, Span] = {}
    for span in run.spans:
        other = by_id.get(span.span_id)
        if other is not None:
            traces = "" if other.trace_id == span.trace_id else f" (traces {other.trace_id}, {span.trace_id})"
            raise InvalidEvidenceError(
                where, f"run {run.run_id}: span id {span.span_id} occurs twice{traces}"
            )
        if span.parent_span_id == span.span_id:
            raise InvalidEvidenceError(where, f"run {run.run_id}: span {span.span_id} is its own parent")
        by_id[span.span_id] = span
    # A cycle: following parents (within the trace) returns to a span already on the current path.
    state: dict[str, int] = {}  # 1 = on the path being walked, 2 = known to reach a root
    for span in run.spans:
        path: list[str] = []
        node: Span | None = span
        while node is not None and state.get(node.span_id) is None:
            state[node.span_id] = 1
            path.append(node.span_id)
            parent = by_id.get(node.parent_span_id) if node.parent_span_id else None
            node = parent if parent is not None and parent.trace_id == node.trace_id else None
        if node is not None and state[node.span_id] == 1:
            raise InvalidEvidenceError(
                where, f"run {run.run_id}: parent links form a cycle through span {node.span_id}"
            )
        for sid in path:
            state[sid] = 2


def in_release(run: Run, release: str | None) -> bool:
    """True when no release filter is given or the run's single ``service.version`` equals it."""
    return release is None or run.release == release


def group_runs(spans: Iterable[Span], release: str | None = None) -> list[Run]:
    """Group spans into validated runs, keep those of ``release`` (if given), sorted by run id."""
    groups: dict[str, list[Span]] = defaultdict(list)
    for span in spans:
        groups[span.run_id].append(span)
    runs = (make_run(run_id, members) for run_id, members in groups.items())
    return sorted((r for r in runs if in_release(r, release)), key=lambda r: r.run_id)
