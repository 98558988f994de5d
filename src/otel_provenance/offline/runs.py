"""Spans → runs: grouping, ordering and the structural checks that make a run usable as evidence.

A trace belongs to exactly one run. Traces that share an ``agent.run.id`` value (a run that spans
several traces) are one run, named by that value; a trace with no ``agent.run.id`` on any span is a
run of its own, named by its trace id. So spans that carry no run id — the agent's root span opened
before the tools, a downstream service's server span in another process — stay in the run of their
trace instead of splitting it (see :class:`RunKeys`).

A run's spans are sorted by ``(start_ns, span_id)`` so that equal input gives equal runs whatever
order the spans arrived in. A run is *invalid evidence* when a span id occurs twice in it (span ids
name data-flow sources run-wide, so they must be unique run-wide), a span is its own parent, or
parent links form a cycle.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

from .. import semconv
from ..errors import InvalidEvidenceError
from .model import Run, Span


class RunKeys:
    """Union-find over trace ids and ``agent.run.id`` values: which run each trace belongs to.

    ``link(trace_id, run_id)`` records that a span of ``trace_id`` carries ``run_id`` (or just that
    the trace exists, with ``None``). ``run_of(trace_id)`` names the run: the smallest run id linked
    to the trace's component, else the smallest trace id in it — independent of input order.
    """

    __slots__ = ("_parent",)

    def __init__(self) -> None:
        self._parent: dict[tuple[int, str], tuple[int, str]] = {}

    # Nodes are (0, run_id) or (1, trace_id): tuple order makes a run id the preferred name.
    def _find(self, node: tuple[int, str]) -> tuple[int, str]:
        parent = self._parent
        root = node
        while parent.setdefault(root, root) != root:
            root = parent[root]
        while node != root:  # path compression
            parent[node], node = root, parent[node]
        return root

    def link(self, trace_id: str, run_id: str | None = None) -> None:
        a = self._find((1, trace_id))
        if run_id:
            b = self._find((0, run_id))
            if a != b:
                low, high = (a, b) if a < b else (b, a)
                self._parent[high] = low

    def link_span(self, span: Span) -> None:
        value = span.attributes.get(semconv.RUN_ID)
        self.link(span.trace_id, value if isinstance(value, str) else None)

    def run_of(self, trace_id: str) -> str:
        return self._find((1, trace_id))[1]

    def resolve(self, key: str) -> str:
        """The run of ``key``, which is a run id or a trace id."""
        node = (0, key) if (0, key) in self._parent else (1, key)
        return self._find(node)[1]


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
    spans = list(spans)
    keys = RunKeys()
    for span in spans:
        keys.link_span(span)
    groups: dict[str, list[Span]] = defaultdict(list)
    for span in spans:
        groups[keys.run_of(span.trace_id)].append(span)
    runs = (make_run(run_id, members) for run_id, members in groups.items())
    return sorted((r for r in runs if in_release(r, release)), key=lambda r: r.run_id)
