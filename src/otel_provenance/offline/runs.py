"""Spans → runs: grouping, ordering and the structural checks that make a run usable as evidence.

A trace belongs to exactly one run. Traces that share an ``agent.run.id`` value (a run that spans
several traces) are one run, named by that value; a trace with no ``agent.run.id`` on any span is a
run of its own, named by its trace id. So spans that carry no run id — the agent's root span opened
before the tools, a downstream service's server span in another process — stay in the run of their
trace instead of splitting it (see :class:`RunKeys`).

``run_attribute`` (``--run-attribute KEY`` on the CLI) puts another attribute in ``agent.run.id``'s
place for traces this package did not write: e.g. ``gen_ai.conversation.id`` or ``session.id`` groups
the traces of one multi-turn session into one run. Its value is read from the span's attributes,
else from its resource; traces that carry none stay runs of their own, as always.

A run's spans are sorted by ``(start_ns, span_id)`` so that equal input gives equal runs whatever
order the spans arrived in. A run is *invalid evidence* when a span id occurs twice in it (span ids
name data-flow sources run-wide, so they must be unique run-wide), a span is its own parent, or
parent links form a cycle.
"""

from __future__ import annotations

import threading
from array import array
from bisect import bisect_left, bisect_right
from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping
from itertools import repeat
from operator import attrgetter, lt
from typing import Final, Protocol

from .. import semconv
from ..errors import InvalidEvidenceError
from .linked_runs import LinkJoins, TraceLinks, join_linked_traces, trace_key
from .model import Run, Span
from .release import DEFAULT_RELEASE_ATTRIBUTE
from .sessions import SessionCheck, overlaps

_NO_RUN: Final = ""
_LOW: Final = (1 << 64) - 1  # the low 64 bits of a trace key: the order the packed index is kept in


def _packable(key: int | str) -> bool:
    """Whether ``key`` is an unsigned 128-bit integer (every hex trace id of up to 32 digits)."""
    return key.__class__ is int and key >> 128 == 0  # type: ignore[operator]


def _low_then_high(key: int) -> int:
    """The packed order: the low half, then the high half (one integer: no tuple per key)."""
    return (key & _LOW) << 64 | key >> 64


class PackedTraces:
    """Trace key -> run id, in sorted arrays instead of a dict: read-mostly, for a whole file's traces.

    A dict keeps each trace as an integer object (48 bytes for 128 bits) plus its entry (~30 bytes);
    here a trace costs 24 bytes — its key's two 64-bit halves and the run id (shared with the runs
    it names). Kept ordered by the low half, which is random in trace ids (the high half is zero in
    64-bit ids), then the high half, and found by bisection on each: logarithmic even when every
    key shares its low half (a hostile file). A key that is not a 128-bit unsigned integer (a trace id
    that is not hex), or one added after packing (``__setitem__`` of an unknown key), goes to a
    small dict beside the arrays."""

    __slots__ = ("_high", "_low", "_more", "_runs")

    def __init__(self, traces: Mapping[int | str, str]) -> None:
        keys = sorted((k for k in traces if _packable(k)), key=_low_then_high)
        self._low = array("Q", [k & _LOW for k in keys])  # type: ignore[operator]
        self._high = array("Q", [k >> 64 for k in keys])  # type: ignore[operator]
        self._runs = [traces[k] for k in keys]
        self._more = {k: run for k, run in traces.items() if not _packable(k)}

    def _at(self, key: int | str) -> int:
        """The index of ``key`` in the arrays, or -1."""
        if _packable(key):
            lows, low, high = self._low, key & _LOW, key >> 64  # type: ignore[operator]
            at = bisect_left(lows, low)
            if at < len(lows) and lows[at] == low:  # keys sharing the low half: bisect their highs
                at = bisect_left(self._high, high, at, bisect_right(lows, low, at))
                if at < len(lows) and lows[at] == low and self._high[at] == high:
                    return at
        return -1

    def get(self, key: int | str, default: str | None = None) -> str | None:
        at = self._at(key)
        return self._runs[at] if at >= 0 else self._more.get(key, default)

    def __contains__(self, key: object) -> bool:
        return self._at(key) >= 0 or key in self._more  # type: ignore[arg-type]

    def __setitem__(self, key: int | str, run_id: str) -> None:
        at = self._at(key)
        if at >= 0:
            self._runs[at] = run_id
        else:
            self._more[key] = run_id

    def values(self) -> Iterator[str]:
        yield from self._runs
        yield from self._more.values()


class RunKeys:
    """Which run each trace belongs to: traces joined by the ``agent.run.id`` values their spans carry.

    ``link(trace_id, run_id)`` records that a span of ``trace_id`` carries ``run_id`` (or just that
    the trace exists, with ``None``). ``run_of(trace_id)`` names the run: the smallest run id linked
    to the trace's group, else the trace id — independent of input order.

    Compact on purpose (the streaming reader keeps one entry per trace of a whole file): a dict from
    the trace id as an integer to the first run id seen for it — packed into sorted arrays once the
    index is built (``pack``) — and a union-find over run ids only, used when one trace carries
    several run ids.
    """

    __slots__ = ("_alias", "_trace_run")

    def __init__(self) -> None:
        self._trace_run: dict[int | str, str] | PackedTraces = {}  # trace -> a run id it carries, or _NO_RUN
        self._alias: dict[str, str] = {}  # run id -> a smaller run id it was joined with

    key = staticmethod(trace_key)  # the dict key for a trace id

    def pack(self) -> None:
        """Keep the traces known so far in :class:`PackedTraces` (a third of the memory): for when
        the index is built and mostly read from then on (``readers.iter_runs``)."""
        if isinstance(self._trace_run, dict):
            self._trace_run = PackedTraces(self._trace_run)

    def _root(self, run_id: str) -> str:
        alias = self._alias
        root = run_id
        while root in alias:
            root = alias[root]
        while run_id != root:  # path compression
            alias[run_id], run_id = root, alias[run_id]
        return root

    def link(self, trace_id: str, run_id: str | None = None) -> None:
        self.link_key(self.key(trace_id), run_id)

    def link_key(self, key: int | str, run_id: str | None) -> None:
        known = self._trace_run.get(key)
        if not known:
            self._trace_run[key] = run_id or _NO_RUN
        elif run_id and run_id != known:
            a, b = self._root(known), self._root(run_id)
            if a != b:
                low, high = (a, b) if a < b else (b, a)
                self._alias[high] = low

    def knows(self, key: int | str) -> bool:
        """Whether the trace ``key`` is in the input."""
        return key in self._trace_run

    def named(self, key: int | str) -> bool:
        """Whether the trace ``key`` carries a run id (its run is named by one, not by a trace id)."""
        return bool(self._trace_run.get(key))

    def named_counts(self) -> tuple[int, int]:
        """(traces that carry a run id, runs those traces are in)."""
        named = [run_id for run_id in self._trace_run.values() if run_id]
        return len(named), len({self._root(run_id) for run_id in named})

    def link_span(self, span: Span, run_attribute: str = semconv.RUN_ID) -> None:
        self.link(span.trace_id, run_value(span, run_attribute))

    def run_of(self, trace_id: str) -> str:
        run_id = self._trace_run.get(self.key(trace_id))
        return self._root(run_id) if run_id else trace_id

    def run_of_key(self, key: int | str) -> str:
        run_id = self._trace_run.get(key)
        if run_id:
            return self._root(run_id)
        return format(key, "032x") if isinstance(key, int) else key

    def resolve(self, key: str) -> str:
        """The run of ``key``, which is a trace id or a run id."""
        trace_key = self.key(key)
        if trace_key in self._trace_run:
            return self.run_of_key(trace_key)
        return self._root(key)


def run_value(span: Span, run_attribute: str = semconv.RUN_ID) -> str | None:
    """The value that names ``span``'s run: a non-empty string ``agent.run.id``; for another
    ``run_attribute``, its value on the span, else on its resource, a non-empty string or an integer."""
    value = span.attributes.get(run_attribute)
    if run_attribute != semconv.RUN_ID:
        if value is None:
            value = span.resource.get(run_attribute)
        if isinstance(value, int) and not isinstance(value, bool):
            return str(value)
    return value if isinstance(value, str) and value else None


_order: Final = attrgetter("start_ns", "span_id")  # (start_ns, span_id), looked up in C


def make_run(run_id: str, spans: Iterable[Span], source: str | None = None) -> Run:
    """A validated run of ``spans``, sorted. ``source`` names the input in error messages."""
    run = Run(run_id, tuple(sorted(spans, key=_order)))
    validate_run(run, source)
    return run


class _LastValid(threading.local):
    run: Run | None = None
    order: Order | None = None  # the run's, when it was found valid by ``_ordered``


Order = tuple[dict[str, int], tuple[int, ...]]
"""Each span's position in ``run.spans`` by span id, and each span's parent's position (-1: its
parent id names no span of the run, or it has none), whatever the traces."""

_LAST_VALID = _LastValid()
_SPAN_ID: Final = attrgetter("span_id")
_PARENT_ID: Final = attrgetter("parent_span_id")


def validate_run(run: Run, source: str | None = None) -> None:
    """Raise ``InvalidEvidenceError`` for duplicate span ids, self-parents or parent cycles.

    A run is immutable, so the last run found valid (on this thread) is not walked again: the
    reader validates each run it builds (``make_run``) and the causal graph of the same run object
    asks again right after."""
    if run is _LAST_VALID.run:
        return
    order = _ordered(run.spans)
    if order is None:
        _check(run, source)
    _LAST_VALID.run, _LAST_VALID.order = run, order


def validated_order(run: Run) -> Order | None:
    """The :data:`Order` of ``run`` when it is the last run validated and every parent came before
    its child, else None (``graph.tree`` reads it instead of finding the positions again)."""
    last = _LAST_VALID
    return last.order if last.run is run else None


def _ordered(spans: tuple[Span, ...]) -> Order | None:
    """The spans' :data:`Order` when their ids are distinct and each parent id naming a span of the
    run names an earlier one — a valid run, as no span is then its own parent and following parents
    only goes back in the order, never round —, else None (``_check`` decides, and words the error).
    Decided in C (``map`` over the spans): most runs are in this order, as parents start first."""
    ids = list(map(_SPAN_ID, spans))
    position = dict(zip(ids, range(len(ids)), strict=True))
    if len(position) != len(ids):
        return None
    # From a list, not tuple(map(...)): a tuple grown from an iterator of unknown length is resized
    # past the free lists, so freeing one per run filled them (2.3 MB more peak RSS at 1M spans).
    parents = tuple(list(map(position.get, map(_PARENT_ID, spans), repeat(-1))))
    return (position, parents) if all(map(lt, parents, range(len(ids)))) else None


def _check(run: Run, source: str | None) -> None:
    where = source or f"run {run.run_id}"
    by_id: dict[str, Span] = {}
    ahead: list[str] = []  # parent ids not among the spans before theirs (later, or not in the run)
    for span in run.spans:
        span_id, parent_id = span.span_id, span.parent_span_id
        other = by_id.get(span_id)
        if other is not None:
            traces = "" if other.trace_id == span.trace_id else f" (traces {other.trace_id}, {span.trace_id})"
            raise InvalidEvidenceError(where, f"run {run.run_id}: span id {span_id} occurs twice{traces}")
        if parent_id == span_id:
            raise InvalidEvidenceError(where, f"run {run.run_id}: span {span_id} is its own parent")
        if parent_id and parent_id not in by_id:
            ahead.append(parent_id)
        by_id[span_id] = span
    if not any(parent_id in by_id for parent_id in ahead):
        return  # every parent link points to a span before: following them never comes back
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


def in_release(run: Run, release: str | None, key: str = DEFAULT_RELEASE_ATTRIBUTE) -> bool:
    """True when no release filter is given, or the run concerns ``release``: its agent spans say
    ``release`` (read from ``key``; see ``offline.release``), alone or among values they disagree on.
    A disagreeing run is kept so that the gate can judge it insufficient instead of dropping it."""
    return release is None or run.attribution_for(key).concerns(release)


class GroupingReport(Protocol):
    """Where grouping says what it joined (``readers.ReadReport`` is one)."""

    links: LinkJoins | None
    sessions: SessionCheck | None


def group_runs(
    spans: Iterable[Span],
    release: str | None = None,
    key: str = DEFAULT_RELEASE_ATTRIBUTE,
    run_attribute: str = semconv.RUN_ID,
    report: GroupingReport | None = None,
) -> list[Run]:
    """Group spans into validated runs, keep those of ``release`` (if given), sorted by run id.

    Traces are joined by their run ids, then by span links (``linked_runs``); ``report``, when given,
    receives what the links joined and refused, and the ``--run-attribute`` check (``sessions``)."""
    spans = list(spans)
    keys, links = RunKeys(), TraceLinks()
    for span in spans:
        keys.link_span(span, run_attribute)
        links.add_span(span)
    check = SessionCheck(run_attribute, *keys.named_counts()) if run_attribute != semconv.RUN_ID else None
    joined = join_linked_traces(keys, links)
    groups: dict[str, list[Span]] = defaultdict(list)
    for span in spans:
        groups[keys.run_of(span.trace_id)].append(span)
    runs = [make_run(run_id, members) for run_id, members in groups.items()]
    if check is not None:
        check.overlapping.extend(r.run_id for r in runs if by_attribute(r, run_attribute) and overlaps(r))
    if report is not None:
        report.links = joined if joined.joined or joined.refused else None
        report.sessions = check
    return sorted((r for r in runs if in_release(r, release, key)), key=lambda r: r.run_id)


def by_attribute(run: Run, run_attribute: str) -> bool:
    """Whether ``run_attribute`` joined traces into ``run``: it spans traces, and carries a value."""
    return len(run.trace_ids) > 1 and any(run_value(s, run_attribute) for s in run.spans)
