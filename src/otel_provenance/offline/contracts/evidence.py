"""One run, prepared once for every rule: step keys, parents, completeness, causal order, and the
counts the compiled rules read.

The step keys and the happens-before relation come from the offline core (``offline.stepkey``,
``offline.graph``); this module only indexes them for the checkers. :meth:`RunEvidence.tally` walks
the spans a selector picks once and counts what every rule type asks of them (calls that ran, first
attempts, retries, blocked and silent tool calls), so that the rules of a contract share one walk per
step instead of each walking the run again (``RuleType.compile``).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Final, NamedTuple

from ... import semconv
from ..arguments import argument_kinds
from ..graph import CausalGraph, tree
from ..model import ABSENT, Attributes, Run, Span, says_tool
from ..stepkey import run_index
from .outcomes import Witness, run_witnesses
from .selectors import Match, Selector

_BLOCKED = semconv.TOOL_STATUS_BLOCKED
_STATUS = semconv.TOOL_STATUS
_RETRY = semconv.RETRY_NUMBER


class Tally(NamedTuple):
    """What the spans a selector picks hold, counted once (``RunEvidence.tally``). ``matched`` and
    ``unknown`` are ``RunEvidence.select``'s two lists; the rest count within them. A named tuple,
    not a dataclass: a run makes one per step, built in C, and the all-spans tally adds them up
    column by column (``_sum_tallies``)."""

    matched: int  # spans that match (blocked calls included)
    unknown: int  # spans that might match but lack an attribute
    occurred: int  # matched spans that are no blocked call
    occurred_unknown: int  # unknown spans that are no blocked call
    first: int  # occurred spans that are no retry (``agent.retry.number`` above 0)
    retry_max: int  # the highest integer retry number among the matched spans (-1: none)
    retry_missing: int  # matched spans without an integer retry number
    blocked_tools: int  # matched tool calls that were blocked
    silent_tools: int  # matched tool calls without agent.tool.status
    unknown_tools: int  # unknown spans that are tool calls
    start_min: int | float  # the earliest start_ns of the occurred spans (``_NEVER``: none occurred)
    end_min: int | float  # the earliest end_ns of the occurred spans (``_NEVER``: none occurred)


@dataclass(frozen=True)
class RunEvidence:
    run: Run
    steps: dict[str, str] = field(init=False)
    by_step: dict[str, list[Span]] = field(init=False)
    _selected: dict[tuple | str | None, tuple[list[Span], list[Span]]] = field(init=False)
    tallies: Tallies = field(init=False)
    """``tally`` by ``tally_key(selector)``: a compiled test finds a tally with one subscript."""
    _kinds: dict[str, dict[str, str] | None] = field(init=False)

    def __post_init__(self) -> None:
        steps, by_step, _ = run_index(self.run)  # shared with the gate's and the fingerprint's walk
        object.__setattr__(self, "steps", steps)
        object.__setattr__(self, "by_step", by_step)
        selected: dict[tuple | str | None, tuple[list[Span], list[Span]]] = {}
        object.__setattr__(self, "_selected", selected)
        object.__setattr__(self, "tallies", Tallies(self.run.spans, steps, by_step, selected))
        object.__setattr__(self, "_kinds", {})

    @cached_property
    def by_id(self) -> dict[str, Span]:
        """Each span by its id, built on first use: only the checkers look parents up, and most runs
        pass every rule's compiled test without them."""
        return {s.span_id: s for s in self.run.spans}

    @cached_property
    def graph(self) -> CausalGraph:
        return CausalGraph.of(self.run)

    @cached_property
    def orphans(self) -> tuple[Span, ...]:
        """Spans whose parent is not in the run: the trace is incomplete (spans were lost)."""
        return self.graph.orphans

    @cached_property
    def complete(self) -> bool:
        """No orphan: read from the parents by position (``graph.tree``) when the run is one trace —
        the compiled tests of most rules ask it of every run, the graph is left to the checkers."""
        found = tree(self.run)
        return found.complete if found is not None else not self.orphans

    def is_orphan(self, span: Span) -> bool:
        return self.graph.is_orphan(span.span_id)

    def step(self, span: Span) -> str:
        return self.steps[span.span_id]

    def parent(self, span: Span) -> Span | None:
        parent_id = self.graph.parent(span.span_id)
        return self.by_id[parent_id] if parent_id is not None else None

    def ancestors(self, span: Span) -> Iterator[Span]:
        """Parent, grandparent, … (nearest first)."""
        return (self.by_id[i] for i in self.graph.ancestors(span.span_id))

    def happens_before(self, a: Span, b: Span) -> bool:
        return self.graph.happens_before(a.span_id, b.span_id)

    def argument_kinds(self, span: Span) -> dict[str, str] | None:
        """``{argument name: kind}`` of a tool span (``agent.arg.<name>.kind``); None when the span
        carries no provenance at all or an unknown kind. Found once per span and shared by every
        rule that asks (several budget rules select the same tool spans); do not mutate it."""
        cache = self._kinds
        if span.span_id not in cache:
            cache[span.span_id] = argument_kinds(span)
        return cache[span.span_id]

    def select(self, selector: Selector | None) -> tuple[list[Span], list[Span]]:
        """(matching spans, spans that might match but lack an attribute); all spans when None."""
        if selector is None:
            return list(self.run.spans), []
        matched, unknown = self.selection(selector)
        return list(matched), list(unknown)

    def selection(self, selector: Selector) -> tuple[list[Span], list[Span]]:
        """``select``'s two lists as kept for every rule that asks: read them, never change them."""
        return _selection(self.run.spans, self.steps, self.by_step, self._selected, selector)

    def tally(self, selector: Selector | None) -> Tally:
        """The counts of :class:`Tally` for the spans ``selector`` picks (all spans when None), walked
        once per run and selector whichever rules ask."""
        return self.tallies[tally_key(selector)]

    @cached_property
    def unsettled_tools(self) -> int:
        """``blocked_tools + silent_tools + unknown_tools`` of ``tally(None)`` — the tool calls among all
        spans that were blocked or carry no ``agent.tool.status`` — without the whole tally: the
        ``blocked_calls`` rule over every span asks only this, and the all-spans tally would count
        every step, most of which no other rule selects (``unknown_tools`` is 0: with no selector no
        span is unknown). The same tests as :func:`_count`'s, over the tool calls the run's index
        picked out (``stepkey.run_index``)."""
        found = self.tallies.get(None)
        if found is not None:
            return found.blocked_tools + found.silent_tools + found.unknown_tools
        count = 0
        for span in run_index(self.run).tools:  # Span.is_tool, found as the steps were
            attributes = span.attributes
            values = attributes._map if attributes.__class__ is Attributes else attributes  # attribute_map
            status = values.get(_STATUS, ABSENT)
            if status is ABSENT or status == _BLOCKED:
                count += 1
        return count

    def occurred(self, selector: Selector | None) -> tuple[list[Span], list[Span]]:
        """Like ``select``, without blocked calls (``agent.tool.status = blocked``): a call its budget
        refused never ran, so it satisfies no requirement and is no side effect."""
        matched, unknown = self.select(selector)
        return [s for s in matched if not s.blocked], [s for s in unknown if not s.blocked]

    def witnesses(self, **observed: object) -> tuple[Witness, ...]:
        """Run-level witnesses (one per trace, no spans) for findings about something absent."""
        return run_witnesses(self.run, **observed)


def tally_key(selector: Selector | None) -> tuple | str | None:
    """How the evidence keeps what a selector picks: by its step when it tests no attribute (so that
    the rules selecting one step share it without hashing selectors), None for every span; else by
    its step, each tested value *with its type* — ``1`` and ``true`` test different spans
    (``values_equal``), but are equal in Python, so two rules differing only there would share one
    selection under the selector itself — and the selector, which :class:`Tallies` selects with."""
    if selector is None:
        return None
    if not selector.attributes:
        return selector.step
    tested = tuple([(key, value.__class__, value) for key, value in selector.attributes])
    return selector.step, tested, selector


def _selection(
    spans: tuple[Span, ...],
    steps: dict[str, str],
    by_step: dict[str, list[Span]],
    selected: dict[tuple | str | None, tuple[list[Span], list[Span]]],
    selector: Selector,
) -> tuple[list[Span], list[Span]]:
    """``RunEvidence.selection``, kept in ``selected`` by :func:`tally_key`."""
    key = tally_key(selector)
    cached = selected.get(key)
    if cached is None and key.__class__ is not tuple:  # a step alone: its every span matches
        matched = list(spans) if key is None else by_step.get(key, [])  # type: ignore[arg-type]
        cached = selected[key] = (matched, [])
    if cached is None:  # many rules share a selector; candidates are indexed by step key
        candidates = spans if selector.step is None else by_step.get(selector.step, ())
        matched: list[Span] = []
        unknown: list[Span] = []
        for span in candidates:
            verdict = selector.match(span, steps[span.span_id])
            if verdict is Match.MATCH:
                matched.append(span)
            elif verdict is Match.UNKNOWN:
                unknown.append(span)
        cached = selected[key] = (matched, unknown)
    return cached


class Tallies(dict):
    """A run's :class:`Tally` by :func:`tally_key`, each counted when first asked (``__missing__``):
    the compiled tests of a contract read ``evidence.tallies[key]``, a look-up in C for every rule
    but the first to ask. It holds the evidence's indexes, not the evidence (no reference cycle)."""

    __slots__ = ("_by_step", "_selected", "_spans", "_steps")

    def __init__(
        self,
        spans: tuple[Span, ...],
        steps: dict[str, str],
        by_step: dict[str, list[Span]],
        selected: dict[tuple | str | None, tuple[list[Span], list[Span]]],
    ) -> None:
        super().__init__()
        self._spans, self._steps, self._by_step, self._selected = spans, steps, by_step, selected

    def __missing__(self, key: tuple | str | None) -> Tally:
        if key is None:  # every span: the sum of its steps' tallies, which the step rules share
            found = _sum_tallies([self[step] for step in self._by_step])
        elif key.__class__ is str:  # a step alone: its every span matches
            found = _count(self._by_step.get(key, ()), ())  # type: ignore[arg-type]
        else:
            selector = key[-1]  # type: ignore[index]
            found = _count(*_selection(self._spans, self._steps, self._by_step, self._selected, selector))
        self[key] = found
        return found


def _count(matched: Sequence[Span], unknown: Sequence[Span]) -> Tally:
    """The :class:`Tally` of a selection (``RunEvidence.selection``'s two lists)."""
    occurred = first = blocked_tools = silent_tools = retry_missing = 0
    retry_max = -1
    start_min = end_min = _NEVER
    for span in matched:
        attributes = span.attributes
        values = attributes._map if attributes.__class__ is Attributes else attributes  # attribute_map
        status = values.get(_STATUS, ABSENT)
        retry = values.get(_RETRY)
        # a boolean counts nothing
        counted = retry.__class__ is int or (isinstance(retry, int) and retry.__class__ is not bool)
        if counted:
            if retry > retry_max:
                retry_max = retry
        else:
            retry_missing += 1
        if status == _BLOCKED:
            if not span.echo and says_tool(attributes):  # Span.is_tool
                blocked_tools += 1
        else:
            occurred += 1
            if span.start_ns < start_min:
                start_min = span.start_ns
            if span.end_ns < end_min:
                end_min = span.end_ns
            if not (counted and retry > 0):
                first += 1
            if status is ABSENT and not span.echo and says_tool(attributes):  # Span.is_tool, silent
                silent_tools += 1
    occurred_unknown = unknown_tools = 0
    for span in unknown:
        if span.attributes.get(_STATUS) != _BLOCKED:
            occurred_unknown += 1
        if span.is_tool:
            unknown_tools += 1
    return Tally(
        len(matched),
        len(unknown),
        occurred,
        occurred_unknown,
        first,
        retry_max,
        retry_missing,
        blocked_tools,
        silent_tools,
        unknown_tools,
        start_min,
        end_min,
    )


def _sum_tallies(tallies: list[Tally]) -> Tally:
    """The tally of the spans of ``tallies`` together (each span counted in one of them): the counts
    add up, the highest retry number is the highest of theirs, the earliest times the earliest."""
    if len(tallies) == 1:
        return tallies[0]
    columns = list(zip(*tallies, strict=True))  # one tuple per field, in order
    if not columns:
        return Tally(0, 0, 0, 0, 0, -1, 0, 0, 0, 0, _NEVER, _NEVER)
    total = [sum(column) for column in columns[:_RETRY_MAX]]
    total.append(max(columns[_RETRY_MAX]))
    total.extend(sum(column) for column in columns[_RETRY_MAX + 1 : _START_MIN])
    total.extend(min(column) for column in columns[_START_MIN:])
    return Tally(*total)


_NEVER: Final = float("inf")  # above every time (an int compares exactly with it)
_RETRY_MAX: Final = Tally._fields.index("retry_max")
_START_MIN: Final = Tally._fields.index("start_min")  # it and end_min, the last fields, are minimums
COUNTS: Final = slice(0, _START_MIN)
"""A tally's counts (``tally[COUNTS]``): every field but the times, which vary from run to run."""
