"""A run as a causal graph: who called whom (parent/child) and whose result fed whom (data flow).

Nodes are span ids (unique run-wide: ``runs.validate_run`` guarantees it). A span whose parent is
not in the run — it never arrived, or lives in another trace — is an *orphan*; orphans and true
roots hang under a virtual root, listed by ``roots``.

Data-flow edges come from ``agent.arg.<name>.source_span_id``: the span that returned the value
→ the span that received it as argument ``<name>``. A source is *dangling* when it is not in the
run, is not a well-formed span id, or did not finish before its consumer started.

Time is compared in integer nanoseconds only; ``happens_before(a, b)`` means *a ended no later
than b started*. Overlapping spans (e.g. concurrent siblings) are unordered either way.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from itertools import repeat
from operator import attrgetter
from typing import Final, NamedTuple

from .. import semconv
from .model import Run, Span
from .runs import validate_run, validated_order

_SPAN_ID: Final = re.compile(r"[0-9a-f]{16}")

DANGLING_MISSING: Final = "missing"  # no span with that id in the run
DANGLING_MALFORMED: Final = "malformed"  # the attribute is not a 16-hex-digit string
DANGLING_NOT_BEFORE: Final = "not_before"  # the source had not finished when the consumer started


@dataclass(frozen=True, slots=True)
class DataEdge:
    source_span_id: str
    consumer_span_id: str
    arg: str


@dataclass(frozen=True, slots=True)
class DanglingSource:
    consumer_span_id: str
    arg: str
    source_span_id: str  # as written in the attribute ("" when it was not a string)
    reason: str  # DANGLING_MISSING | DANGLING_MALFORMED | DANGLING_NOT_BEFORE


def _order(span: Span) -> tuple[int, str]:
    return (span.start_ns, span.span_id)


class _Last(threading.local):
    graph: CausalGraph | None = None
    run: Run | None = None  # the run of ``tree``
    tree: Tree | None = None


_LAST = _Last()


class CausalGraph:
    """Immutable view of one run's structure. Build with ``CausalGraph.of(run)``."""

    __slots__ = ("_by_id", "_children", "_flow", "_parent", "orphans", "roots", "run")

    def __init__(self, run: Run) -> None:
        validate_run(run)
        self.run = run
        self._by_id: dict[str, Span] = {s.span_id: s for s in run.spans}
        by_id = self._by_id
        self._parent: dict[str, str | None] = {}
        parents = self._parent
        roots: list[str] = []
        orphans: list[Span] = []
        for span in run.spans:  # already in (start_ns, span_id) order
            span_id, parent_id = span.span_id, span.parent_span_id
            parent = by_id.get(parent_id) if parent_id else None
            if parent is not None and parent.trace_id == span.trace_id:
                parents[span_id] = parent_id
            else:
                parents[span_id] = None
                roots.append(span_id)
                if parent_id is not None:
                    orphans.append(span)
        self._children: dict[str, tuple[str, ...]] | None = None  # from the parents, when first asked
        self.roots: tuple[str, ...] = tuple(roots)
        # the spans naming a parent that is not in the run (``is_orphan``), in span order
        self.orphans: tuple[Span, ...] = tuple(orphans)
        self._flow: tuple[tuple[DataEdge, ...], tuple[DanglingSource, ...]] | None = None

    @classmethod
    def of(cls, run: Run) -> CausalGraph:
        """The graph of ``run``. The last one built is reused: several stages (fingerprint, rule
        evidence) ask for the graph of the same run in a row, and building it validates the run."""
        last = _LAST.graph
        if last is not None and last.run is run:
            return last
        graph = _LAST.graph = cls(run)
        return graph

    @property
    def data_edges(self) -> tuple[DataEdge, ...]:
        """Source span → consuming span, for every well-formed source that happened before its use."""
        if self._flow is None:
            self._flow = self._data_flow()
        return self._flow[0]

    @property
    def dangling_sources(self) -> tuple[DanglingSource, ...]:
        if self._flow is None:
            self._flow = self._data_flow()
        return self._flow[1]

    def _data_flow(self) -> tuple[tuple[DataEdge, ...], tuple[DanglingSource, ...]]:
        edges: list[DataEdge] = []
        dangling: list[DanglingSource] = []
        prefix, suffix = semconv.ARG_PREFIX, semconv.ARG_SOURCE_SPAN_ID_SUFFIX
        shortest = len(prefix) + len(suffix)
        for span in self.run.spans:
            sources = sorted(
                (key[len(prefix) : -len(suffix)], value)
                for key, value in span.attributes.items_unordered()
                if len(key) > shortest and key.endswith(suffix) and key.startswith(prefix)
            )
            for arg, value in sources:
                source = value.lower() if isinstance(value, str) else ""
                if not _SPAN_ID.fullmatch(source):
                    dangling.append(DanglingSource(span.span_id, arg, source, DANGLING_MALFORMED))
                elif source not in self._by_id:
                    dangling.append(DanglingSource(span.span_id, arg, source, DANGLING_MISSING))
                elif not self.happens_before(source, span.span_id):
                    dangling.append(DanglingSource(span.span_id, arg, source, DANGLING_NOT_BEFORE))
                else:
                    edges.append(DataEdge(source, span.span_id, arg))
        return tuple(edges), tuple(dangling)

    # --- structure -------------------------------------------------------------------------------
    @property
    def spans(self) -> tuple[Span, ...]:
        return self.run.spans

    def __contains__(self, span_id: object) -> bool:
        return span_id in self._by_id

    def span(self, span_id: str) -> Span:
        """The span with this id (``KeyError`` if it is not in the run)."""
        return self._by_id[span_id]

    def parent(self, span_id: str) -> str | None:
        """The parent's span id; None for a root or an orphan."""
        return self._parent[span_id]

    @property
    def parents(self) -> Mapping[str, str | None]:
        """``parent`` of every span id at once (for walks over every span): read it, never change it."""
        return self._parent

    def is_orphan(self, span_id: str) -> bool:
        """The span names a parent that is not in the run."""
        return self._parent[span_id] is None and self._by_id[span_id].parent_span_id is not None

    def children(self, span_id: str) -> tuple[str, ...]:
        """Child span ids in (start_ns, span_id) order."""
        children = self._children
        if children is None:  # most runs pass every rule without a walk down the tree
            lists: dict[str, list[str]] = {}
            for child, parent in self._parent.items():  # in span order, so each list is in time order
                if parent is not None:
                    lists.setdefault(parent, []).append(child)
            children = self._children = {k: tuple(v) for k, v in lists.items()}
        return children.get(span_id, ())

    def ancestors(self, span_id: str) -> tuple[str, ...]:
        """Parent, grandparent, … up to the root (nearest first)."""
        out: list[str] = []
        current = self._parent[span_id]
        while current is not None:
            out.append(current)
            current = self._parent[current]
        return tuple(out)

    def descendants(self, span_id: str) -> tuple[str, ...]:
        """Every span below ``span_id``, depth first, children in time order."""
        out: list[str] = []
        stack = list(reversed(self.children(span_id)))
        while stack:
            current = stack.pop()
            out.append(current)
            stack.extend(reversed(self.children(current)))
        return tuple(out)

    def happens_before(self, a: str, b: str) -> bool:
        """Span ``a`` ended no later than span ``b`` started (integer nanoseconds)."""
        return self._by_id[a].end_ns <= self._by_id[b].start_ns

    def sources_of(self, span_id: str) -> tuple[DataEdge, ...]:
        """Data-flow edges into ``span_id``."""
        return tuple(e for e in self.data_edges if e.consumer_span_id == span_id)


class Tree(NamedTuple):
    """What the parents of a one-trace run say, read without building its :class:`CausalGraph`."""

    parents: tuple[int, ...]  # each span's parent's position in ``run.spans``; -1 for a root or orphan
    complete: bool  # no orphan (``CausalGraph.orphans`` is empty)


_SPAN_ID_OF: Final = attrgetter("span_id")
_PARENT_OF: Final = attrgetter("parent_span_id")
_TRACE_OF: Final = attrgetter("trace_id")


def tree(run: Run) -> Tree | None:
    """The run's :class:`Tree` (the run validated first, as ``CausalGraph.of`` does), or None when
    only the graph can tell: the run spans several traces (a parent in another trace makes an
    orphan), or a span id is empty (an empty parent id is an orphan's, never that span's child).

    Most runs pass every rule from counts, their completeness and their fingerprint's shape; these
    come from the parents by position, made in C (``map`` over the spans), while the graph — dicts
    of span ids walked in Python — is left to the runs a checker walks. The last run's is kept."""
    last = _LAST
    if last.run is run:
        return last.tree
    validate_run(run)
    spans = run.spans
    order = validated_order(run)  # the positions validation found, most often
    if order is None:
        position = dict(zip(map(_SPAN_ID_OF, spans), range(len(spans)), strict=True))
    else:
        position = order[0]
    found: Tree | None = None
    if "" not in position and len(set(map(_TRACE_OF, spans))) <= 1:
        parent_ids = list(map(_PARENT_OF, spans))
        # from a list when made here, as ``runs._ordered`` makes it (the tuple free lists)
        parents = tuple(list(map(position.get, parent_ids, repeat(-1)))) if order is None else order[1]
        # a root (no parent id) is at -1, and so is a span whose parent is not in the run: an orphan
        found = Tree(parents, parents.count(-1) == parent_ids.count(None))
    last.run, last.tree = run, found
    return found
