"""Compare two runs by argument kind per tool call.

Tool calls are paired per tool name with an optimal assignment (``matching``): the cost of pairing
two calls is the number of arguments whose kind differs (an argument present on one side only
counts as a difference) plus one if the status differs, plus one if the budget decision differs.
The budget decision is the one law (``otel_provenance.budget_law``) applied with the limits and
allow-list each span recorded online: ``within``, or the kinds over budget (``over: assumed``).
Calls left over appeared (only in B) or disappeared (only in A). Because the pairing is optimal, a
retried call cannot steal the partner of the call that actually changed.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

from .. import semconv
from ..budget_law import allowed_on_span, count_arguments, limits_on_span, over_budget
from .audit import arguments
from .matching import optimal_assignment
from .model import Run, Span

ABSENT_KIND: Final = "absent"


@dataclass(frozen=True, slots=True)
class Call:
    tool: str
    span_id: str
    trace_id: str
    status: str  # agent.tool.status, or "absent"
    kinds: Mapping[str, str]  # argument name → kind
    over: tuple[str, ...] = ()  # kinds over the budget the span recorded (budget_law), in law order

    @classmethod
    def of(cls, span: Span) -> Call:
        status = span.attributes.get(semconv.TOOL_STATUS)
        kinds = {a.name: a.kind for a in arguments(span)}
        recorded = allowed_on_span(span.attributes)
        count = count_arguments(kinds.items(), recorded, vetted=recorded)
        return cls(
            tool=span.tool_name or span.name,
            span_id=span.span_id,
            trace_id=span.trace_id,
            status=status if isinstance(status, str) else ABSENT_KIND,
            kinds=kinds,
            over=over_budget(count, limits_on_span(span.attributes)),
        )

    @property
    def budget(self) -> str:
        """``within``, or ``over: assumed, invented`` — the budget decision as text."""
        return f"over: {', '.join(self.over)}" if self.over else "within"


@dataclass(frozen=True, slots=True)
class ArgChange:
    arg: str
    before: str  # a kind, or "absent"
    after: str


@dataclass(frozen=True, slots=True)
class CallPair:
    before: Call
    after: Call
    changes: tuple[ArgChange, ...]

    @property
    def status_changed(self) -> bool:
        return self.before.status != self.after.status

    @property
    def budget_changed(self) -> bool:
        return self.before.over != self.after.over

    @property
    def changed(self) -> bool:
        return bool(self.changes) or self.status_changed or self.budget_changed


@dataclass(frozen=True, slots=True)
class RunDiff:
    run_a: str
    run_b: str
    pairs: tuple[CallPair, ...]  # in A's call order
    appeared: tuple[Call, ...]  # only in B, in B's order
    disappeared: tuple[Call, ...]  # only in A, in A's order

    @property
    def identical(self) -> bool:
        return not self.appeared and not self.disappeared and not any(p.changed for p in self.pairs)


def _changes(a: Call, b: Call) -> tuple[ArgChange, ...]:
    out = []
    for name in sorted(set(a.kinds) | set(b.kinds)):
        before, after = a.kinds.get(name, ABSENT_KIND), b.kinds.get(name, ABSENT_KIND)
        if before != after:
            out.append(ArgChange(name, before, after))
    return tuple(out)


def _cost(a: Call, b: Call) -> int:
    return len(_changes(a, b)) + (a.status != b.status) + (a.over != b.over)


def diff_runs(a: Run, b: Run) -> RunDiff:
    calls_a = [Call.of(s) for s in a.spans if s.is_tool]
    calls_b = [Call.of(s) for s in b.spans if s.is_tool]
    index_a = {id(c): i for i, c in enumerate(calls_a)}
    pairs: list[CallPair] = []
    matched_a: set[int] = set()
    matched_b: set[int] = set()
    for tool in sorted({c.tool for c in calls_a} | {c.tool for c in calls_b}):
        rows = [i for i, c in enumerate(calls_a) if c.tool == tool]
        cols = [j for j, c in enumerate(calls_b) if c.tool == tool]
        if not rows or not cols:
            continue
        cost = [[_cost(calls_a[i], calls_b[j]) for j in cols] for i in rows]
        for r, k in optimal_assignment(cost):
            i, j = rows[r], cols[k]
            matched_a.add(i)
            matched_b.add(j)
            pairs.append(CallPair(calls_a[i], calls_b[j], _changes(calls_a[i], calls_b[j])))
    pairs.sort(key=lambda p: index_a[id(p.before)])
    return RunDiff(
        run_a=a.run_id,
        run_b=b.run_id,
        pairs=tuple(pairs),
        appeared=tuple(c for j, c in enumerate(calls_b) if j not in matched_b),
        disappeared=tuple(c for i, c in enumerate(calls_a) if i not in matched_a),
    )
