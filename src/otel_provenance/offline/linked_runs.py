"""Runs that span traces through span links: when linked traces are one run (#47).

Some frameworks write one agent run as many traces, joined only by span links: Microsoft AutoGen's
team runtime processes every message in a trace of its own, whose first span links to the span that
sent the message. Read one trace per run, a run of four tool calls is a dozen "runs".

**The rule.** A trace *links to* another when one of its spans carries a link to a span of that trace
(links to traces that are not in the input are ignored). A trace holds *agent work* when it holds an
agent invocation span or a tool call (``dialects.is_agent_span`` / ``is_tool_span``). Following links
from a trace, towards the spans that caused it, reaches the *topmost* traces that hold agent work —
those from which no further agent work is reached. Then:

- a trace that carries a run id (``agent.run.id``, or the ``--run-attribute`` key) is grouped by it and
  is never joined to another run through a link: it names its own run;
- a trace without one joins the run of the topmost agent work it reaches, when that is **one** run;
- when it reaches the agent work of **several** runs, the join is *refused*: the trace stays a run of
  its own (a consumer that links to many producers is not all of them), and the refusal is counted;
- a trace that reaches no agent work is left as it is (if it holds none either, it is no run at all).

Traces whose links form a cycle are one unit (they reach each other); a cycle holding two run ids is
refused as a whole. So traces joined only through a common ancestor that holds no agent work — a
framework's setup trace that every run links to — are not joined: each run reaches its own first
turn, never the setup. The joined run is named by its topmost trace: its run id, else its trace id.
Every step is a function of the link graph alone (nodes and neighbours taken in sorted order), so
the same input gives the same runs whatever the order it arrived in.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Final, Protocol

from .. import dialects
from .model import Span, attribute_map

#: Refusals listed by name in a note (all are counted).
NAMED_REFUSALS: Final = 3


def trace_key(trace_id: str) -> int | str:
    """The key the run index keeps a trace by: its integer value (smaller than the string), else itself."""
    try:
        return int(trace_id, 16)
    except ValueError:
        return trace_id


class Keys(Protocol):
    """The run index (``runs.RunKeys``) as the link rule uses it."""

    def knows(self, key: int | str) -> bool: ...
    def named(self, key: int | str) -> bool: ...
    def run_of_key(self, key: int | str) -> str: ...
    def link_key(self, key: int | str, run_id: str | None) -> None: ...


class TraceLinks:
    """What the run index learns about links: which traces link to which, and which hold agent work."""

    __slots__ = ("edges", "work")

    def __init__(self) -> None:
        self.edges: dict[int | str, set[int | str]] = {}  # trace -> the other traces it links to
        self.work: set[int | str] = set()

    def add_span(self, span: Span) -> None:
        key = trace_key(span.trace_id)
        attributes = attribute_map(span.attributes)
        if dialects.is_tool_span(attributes) or dialects.is_agent_span(attributes):
            self.work.add(key)
        for link in span.links:
            if link.trace_id != span.trace_id:
                self.edges.setdefault(key, set()).add(trace_key(link.trace_id))

    def add_spans(self, spans: Iterable[Span]) -> None:
        for span in spans:
            self.add_span(span)

    def update(self, other: TraceLinks) -> None:
        for key, targets in other.edges.items():
            self.edges.setdefault(key, set()).update(targets)
        self.work |= other.work


@dataclass(frozen=True, slots=True)
class Refusal:
    """A trace (or a cycle of traces) that links to the agent work of several runs: not joined."""

    trace_id: str
    runs: tuple[str, ...]  # the runs it links to, sorted


@dataclass(frozen=True, slots=True)
class LinkJoins:
    """What the link rule did: traces joined into another trace's run, and joins refused."""

    joined: int = 0  # traces that joined the run of another trace
    runs: int = 0  # runs that received them
    refused: tuple[Refusal, ...] = field(default_factory=tuple)

    def notes(self) -> list[str]:
        out = []
        if self.joined:
            out.append(
                f"span links joined {self.joined} trace(s) into {self.runs} run(s) that span traces "
                "(a run written as one trace per agent turn or message, as AutoGen's teams write it)"
            )
        if self.refused:
            named = "; ".join(
                f"trace {r.trace_id} links to runs {', '.join(r.runs)}" for r in self.refused[:NAMED_REFUSALS]
            )
            extra = len(self.refused) - NAMED_REFUSALS
            more = f"; and {extra} more" if extra > 0 else ""
            out.append(
                f"span links: {len(self.refused)} trace(s) link to the agent work of more than one run "
                f"and were not joined to any (each stays a run of its own): {named}{more}"
            )
        return out


def join_linked_traces(keys: Keys, links: TraceLinks) -> LinkJoins:
    """Join, in ``keys``, the traces that the link rule makes one run; what it joined and refused."""
    named: set[str] = set()  # groups that carry a run id

    def group_of(key: int | str) -> str:
        group = keys.run_of_key(key)
        if keys.named(key):
            named.add(group)
        return group

    graph: dict[str, set[str]] = defaultdict(set)  # run group -> the groups it links to
    for source, targets in links.edges.items():
        if keys.knows(source):
            group = group_of(source)
            graph[group].update(g for g in (group_of(t) for t in targets if keys.knows(t)) if g != group)
    if not any(graph.values()):
        return LinkJoins()
    nodes = sorted(set(graph) | {g for targets in graph.values() for g in targets})
    in_graph = set(nodes)
    work = {g for g in (keys.run_of_key(k) for k in links.work if keys.knows(k)) if g in in_graph}
    origins: dict[int, frozenset[str]] = {}  # unit -> the names of the runs whose agent work it reaches
    unit_of: dict[str, int] = {}
    joins: dict[str, list[str]] = defaultdict(list)  # origin name -> groups that join it
    refused: list[Refusal] = []
    for index, unit in enumerate(_components(nodes, graph)):  # each after every unit it reaches
        for group in unit:
            unit_of[group] = index
        reached = frozenset().union(
            *(origins[unit_of[t]] for g in unit for t in graph[g] if unit_of.get(t, index) != index)
        )
        own = [g for g in unit if g in named]
        if len(own) > 1:  # a cycle through two run ids: nothing in it is joined
            refused.append(Refusal(unit[0], tuple(own)))
            origins[index] = frozenset(own)
            continue
        if own:  # a run id names its own run: its links are not followed
            origins[index] = frozenset(own)
            joins[own[0]].extend(g for g in unit if g != own[0])
            continue
        if len(reached) == 1:
            (origin,) = reached
            joins[origin].extend(unit)
            origins[index] = reached
            continue
        if reached:
            refused.append(Refusal(unit[0], tuple(sorted(reached))))
        holds_work = any(g in work for g in unit)
        origins[index] = frozenset([unit[0]]) if holds_work else frozenset()
        if holds_work:
            joins[unit[0]].extend(unit[1:])
    joined = 0
    for origin, members in sorted(joins.items()):
        if not members:
            continue
        if origin not in named:  # a trace named by its id: it becomes the run's name for the members
            keys.link_key(trace_key(origin), origin)
        for member in members:
            keys.link_key(trace_key(member), origin)
        joined += len(members)
    return LinkJoins(joined, sum(1 for m in joins.values() if m), tuple(refused))


def _components(nodes: list[str], graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components (Tarjan, iterative), each sorted, in the order in which every
    component comes after every component it reaches."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    out: list[list[str]] = []
    for root in nodes:
        if root in index:
            continue
        work = [(root, iter(sorted(graph.get(root, ()))))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, neighbours = work[-1]
            step = next(neighbours, None)
            if step is not None:
                if step not in index:
                    index[step] = low[step] = len(index)
                    stack.append(step)
                    on_stack.add(step)
                    work.append((step, iter(sorted(graph.get(step, ())))))
                elif step in on_stack:
                    low[node] = min(low[node], index[step])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                out.append(sorted(component))
    return out
