"""What the HTML report draws for one run: its causal graph, compared with the closest approved route.

``run_view(run, contract)`` is a pure function. It picks the approved route family (of any
``approved_routes`` rule) most similar to the run — the same weighted-Jaccard score the rule uses,
ties to the smaller family id — rebuilds that family's canonical route as a tree, and matches the
two trees top-down, step by step (calls of one step are paired in time order). Then:

- a route node no run node matched is **missing** (drawn in the route, and as a placeholder in the
  run under the node where it belongs);
- a run node the route has no place for is **extra**;
- a ``write`` tool called more than once in the run is a **duplicated side effect** (every call of
  it is marked: the first one may have taken effect even when it reported an error);
- a call with ``agent.tool.status = blocked`` did not happen: it is marked **blocked** and neither
  matches a route step nor counts as a duplicate.

A family's route is drawn in its own order: the order its representative run's steps began, which
``mine`` records (``order``); a contract mined before that was recorded has only step and edge
multisets, so its route's siblings paired with the run's calls are drawn in those calls' time order and
the rest after them. In the run's column, the placeholder of a missing step stands where the route
has it — before the first sibling the route puts after it — not after the calls that did happen.
``run_view_against(run, other)`` compares with another run instead (``diff``), in its time order;
the other run's blocked calls are never missing. With no contract (``audit``) the run is drawn alone.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from fractions import Fraction
from typing import Final

from ... import semconv
from ...budget_law import ALLOW_REACH, allowed_on_span
from ..audit import arguments
from ..contracts.model import Contract, RouteFamily
from ..contracts.rational import format_rational
from ..contracts.similarity import more_similar, route_shape, weighted_jaccard
from ..fingerprint import ROOT_STEP, edge_counts, step_counts
from ..graph import CausalGraph
from ..model import Run, Span, StatusCode
from ..stepkey import step_key

MARK_MISSING: Final = "missing"
MARK_EXTRA: Final = "extra"
MARK_DUPLICATED: Final = "duplicated"
MARK_BLOCKED: Final = "blocked"
MARK_ERROR: Final = "error"
MARKS: Final = (MARK_MISSING, MARK_DUPLICATED, MARK_BLOCKED, MARK_EXTRA, MARK_ERROR)  # display order
MARK_LABELS: Final = {
    MARK_MISSING: "MISSING",
    MARK_DUPLICATED: "DUPLICATED SIDE EFFECT",
    MARK_BLOCKED: "BLOCKED (did not happen)",
    MARK_EXTRA: "EXTRA",
    MARK_ERROR: "ERROR",
}
MAX_ROUTE_NODES: Final = 500  # a family's route is rebuilt from counts: bound it


@dataclass(frozen=True, slots=True)
class Node:
    key: str  # "s:<span id>" in the run, "m:<n>" a missing-step placeholder, "f:…" in the reference
    step: str
    detail: str  # "tool · write · ok", "server", …
    marks: tuple[str, ...]  # in MARKS order
    span_id: str | None = None
    flagged_args: tuple[tuple[str, str], ...] = ()  # (argument, kind) for assumed/invented arguments
    args: tuple[tuple[str, str, str], ...] = ()  # every argument: (name, kind, standing), by name


ARG_OBSERVED: Final = "observed"
ARG_ALLOWED: Final = "allowed"
ARG_VIOLATING: Final = "violating"
ARG_STANDINGS: Final = (ARG_OBSERVED, ARG_ALLOWED, ARG_VIOLATING)  # legend order
"""How an argument stands under the budget law (names and kinds only — never a value): *observed*
(a tool result supplied it), *allowed* (assumed, but on the span's allow-list, ``agent.budget.allowed``)
or *violating* (assumed, invented or of no known kind: no tool result supplied it, and it counts)."""


def arg_standing(kind: str, name: str, allowed: frozenset[str]) -> str:
    if kind == semconv.KIND_OBSERVED:
        return ARG_OBSERVED
    if kind in ALLOW_REACH and name in allowed:
        return ARG_ALLOWED
    return ARG_VIOLATING


@dataclass(frozen=True, slots=True)
class Flow:
    """Data flow: the arguments ``args`` of ``consumer`` were returned by ``source``."""

    source: str  # node keys
    consumer: str
    args: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Dangling:
    consumer: str  # node key
    arg: str
    source_span_id: str
    reason: str


@dataclass(frozen=True, slots=True)
class Tree:
    nodes: tuple[Node, ...]  # in key order of creation (span order, then placeholders)
    roots: tuple[str, ...]
    children: tuple[tuple[str, tuple[str, ...]], ...]

    def node_map(self) -> dict[str, Node]:
        return {n.key: n for n in self.nodes}

    def child_map(self) -> dict[str, tuple[str, ...]]:
        return dict(self.children)


@dataclass(frozen=True, slots=True)
class Reference:
    """What a run is drawn beside: an approved family's canonical route, or another run (``diff``)."""

    kind: str  # "family" | "run"
    id: str  # the family id, or the other run's id
    rule_id: str  # the family's approved_routes rule ("" for a run)
    similarity: str  # weighted Jaccard of the two step/edge multisets, e.g. "4/7"
    tree: Tree


@dataclass(frozen=True, slots=True)
class RunView:
    run_id: str
    trace_ids: tuple[str, ...]
    tree: Tree  # the run, with missing-step placeholders
    flows: tuple[Flow, ...]
    dangling: tuple[Dangling, ...]
    route: Reference | None  # None when the contract approves no route


@dataclass(frozen=True, slots=True)
class _RefTree:
    kind: str
    id: str
    rule_id: str
    score: tuple[int, int]
    nodes: dict[str, str]  # key -> step
    roots: list[str]
    children: dict[str, list[str]]
    details: dict[str, str]
    marks: dict[str, set[str]]  # a reference run's own marks (blocked, duplicated, error)
    skip: frozenset[str]  # blocked calls of a reference run: they did not happen, so never missing
    order: tuple[str, ...] = ()  # a family's recorded step order (empty: none recorded, or a run)


def run_view(run: Run, contract: Contract | None) -> RunView:
    """``run`` beside the closest approved route family of ``contract`` (if it approves any; the
    run alone when ``contract`` is None, as ``audit`` draws it)."""
    closest = _closest_family(run, contract) if contract is not None else None
    if closest is None:
        return _view(run, None)
    family, rule_id, score = closest
    nodes, roots, children = _route_tree(family)
    ref = _RefTree(
        "family", family.id, rule_id, score, nodes, roots, children, {}, {}, frozenset(), family.order
    )
    return _view(run, ref)


def run_view_against(run: Run, reference: Run) -> RunView:
    """``run`` beside another run (``diff A B`` draws B beside A)."""
    graph = CausalGraph.of(reference)
    steps = {s.span_id: step_key(s) for s in reference.spans}
    marks = _span_marks(reference, steps)
    score = weighted_jaccard(_shape(run), _shape(reference))
    return _view(
        run,
        _RefTree(
            "run",
            reference.run_id,
            "",
            score,
            {f"f:{s.span_id}": steps[s.span_id] for s in reference.spans},
            [f"f:{r}" for r in graph.roots],
            {f"f:{s.span_id}": [f"f:{c}" for c in graph.children(s.span_id)] for s in reference.spans},
            {f"f:{s.span_id}": _detail(s) for s in reference.spans},
            {f"f:{k}": v for k, v in marks.items()},
            frozenset(f"f:{s.span_id}" for s in reference.spans if _blocked(s)),
        ),
    )


def _shape(run: Run) -> Counter[tuple[str, ...]]:
    return route_shape(step_counts(run), edge_counts(run).items())


def _span_marks(run: Run, steps: dict[str, str]) -> dict[str, set[str]]:
    blocked = {s.span_id for s in run.spans if _blocked(s)}
    duplicated = _duplicated(run.spans, steps, blocked)
    marks: dict[str, set[str]] = {s.span_id: set() for s in run.spans}
    for span in run.spans:
        if span.span_id in blocked:
            marks[span.span_id].add(MARK_BLOCKED)
        if span.span_id in duplicated:
            marks[span.span_id].add(MARK_DUPLICATED)
        if _errored(span):
            marks[span.span_id].add(MARK_ERROR)
    return marks


def _view(run: Run, ref: _RefTree | None) -> RunView:
    graph = CausalGraph.of(run)
    steps = {s.span_id: step_key(s) for s in run.spans}
    blocked = {s.span_id for s in run.spans if _blocked(s)}
    marks = _span_marks(run, steps)
    children: dict[str, list[str]] = {
        f"s:{s.span_id}": [f"s:{c}" for c in graph.children(s.span_id)] for s in run.spans
    }
    roots = [f"s:{r}" for r in graph.roots]
    placeholders: list[Node] = []
    route: Reference | None = None
    if ref is not None:
        matcher = _Matcher(graph, steps, blocked, ref, children, roots)
        matcher.match(None, list(graph.roots), ref.roots)
        placeholders = matcher.placeholders
        order = _sibling_order(ref, graph, matcher.paired)
        matcher.place_placeholders(order)
        for span_id in matcher.extra:
            marks[span_id].add(MARK_EXTRA)
        ref_nodes = []
        for key, step in ref.nodes.items():
            ref_marks = set(ref.marks.get(key, ()))
            if key in matcher.missing_route:
                ref_marks.add(MARK_MISSING)
            detail = ref.details.get(key, "")
            if key in matcher.missing_route and not detail:
                detail = "not in the run"
            ref_nodes.append(
                Node(
                    key,
                    step,
                    detail,
                    tuple(m for m in MARKS if m in ref_marks),
                    key[2:] if ref.kind == "run" else None,
                )
            )
        route_tree = Tree(
            tuple(ref_nodes),
            tuple(order(ref.roots)),
            tuple((k, tuple(order(v))) for k, v in ref.children.items() if v),
        )
        route = Reference(ref.kind, ref.id, ref.rule_id, format_rational(Fraction(*ref.score)), route_tree)
    nodes = [
        Node(
            f"s:{s.span_id}",
            steps[s.span_id],
            _detail(s),
            tuple(m for m in MARKS if m in marks[s.span_id]),
            s.span_id,
            tuple(
                (a.name, a.kind)
                for a in arguments(s)
                if a.kind in (semconv.KIND_ASSUMED, semconv.KIND_INVENTED, semconv.KIND_UNTRUSTED)
            ),
            _standings(s),
        )
        for s in run.spans
    ]
    tree = Tree(
        tuple(nodes + placeholders), tuple(roots), tuple((k, tuple(v)) for k, v in children.items() if v)
    )
    return RunView(run.run_id, run.trace_ids, tree, _flows(graph), _dangling(graph), route)


def _standings(span: Span) -> tuple[tuple[str, str, str], ...]:
    allowed = allowed_on_span(span.attributes)
    return tuple((a.name, a.kind, arg_standing(a.kind, a.name, allowed)) for a in arguments(span))


def _blocked(span: Span) -> bool:
    return span.is_tool and span.attributes.get(semconv.TOOL_STATUS) == semconv.TOOL_STATUS_BLOCKED


def _errored(span: Span) -> bool:
    return span.status.code == StatusCode.ERROR or span.attributes.get(semconv.TOOL_STATUS) == (
        semconv.TOOL_STATUS_ERROR
    )


def _duplicated(spans: Iterable[Span], steps: dict[str, str], blocked: set[str]) -> set[str]:
    """Calls of a ``write`` tool that was called more than once (blocked calls did not happen)."""
    writes: dict[str, list[str]] = {}
    for span in spans:
        if (
            span.is_tool
            and span.span_id not in blocked
            and span.attributes.get(semconv.SIDE_EFFECT) == "write"
        ):
            writes.setdefault(steps[span.span_id], []).append(span.span_id)
    return {sid for ids in writes.values() if len(ids) > 1 for sid in ids}


def _detail(span: Span) -> str:
    if span.is_tool:
        side = span.attributes.get(semconv.SIDE_EFFECT)
        status = span.attributes.get(semconv.TOOL_STATUS)
        parts = ["tool", side if isinstance(side, str) else "side effect ?"]
        if isinstance(status, str):
            parts.append(status)
        elif span.status.code == StatusCode.ERROR:
            parts.append("error")
        return " · ".join(parts)
    parts = [span.kind.name.lower()]
    if span.status.code == StatusCode.ERROR:
        parts.append("error")
    return " · ".join(parts)


def _closest_family(run: Run, contract: Contract) -> tuple[RouteFamily, str, tuple[int, int]] | None:
    shape = _shape(run)
    best: tuple[RouteFamily, str, tuple[int, int]] | None = None
    candidates = sorted(
        (
            (family, rule.id)
            for rule in contract.rules
            if rule.type == "approved_routes"
            for family in rule.params.get("families", ())
            if family.status == "approved"
        ),
        key=lambda pair: (pair[0].id, pair[1]),
    )
    for family, rule_id in candidates:
        family_shape = route_shape(dict(family.steps), (((p, c), n) for p, c, n in family.edges))
        score = weighted_jaccard(shape, family_shape)
        if best is None or more_similar(score, best[2]):
            best = (family, rule_id, score)
    return best


def _route_tree(family: RouteFamily) -> tuple[dict[str, str], list[str], dict[str, list[str]]]:
    """The family's canonical route as a tree. Edge counts are per step, not per call, so when a
    step occurs several times its children are dealt round-robin over its occurrences."""
    out_edges: dict[str, list[str]] = {}
    for parent, child, count in sorted(family.edges):
        out_edges.setdefault(parent, []).extend([child] * count)
    nodes: dict[str, str] = {}
    children: dict[str, list[str]] = {}
    occurrences = Counter(dict(family.steps))
    dealt: Counter[str] = Counter()  # occurrences of a step created so far

    def make(step: str) -> str:
        key = f"f:{len(nodes)}"
        nodes[key] = step
        return key

    roots = [make(step) for step in out_edges.get(ROOT_STEP, [])]
    queue = list(roots)
    while queue and len(nodes) < MAX_ROUTE_NODES:
        key = queue.pop(0)
        step = nodes[key]
        index = dealt[step]
        dealt[step] += 1
        share = max(occurrences[step], 1)
        mine = [c for i, c in enumerate(out_edges.get(step, [])) if i % share == index % share]
        if index >= share:
            mine = []
        kids = [make(c) for c in mine[: MAX_ROUTE_NODES - len(nodes)]]
        if kids:
            children[key] = kids
        queue.extend(kids)
    return nodes, roots, children


class _Matcher:
    """Pairs run children with reference children by step, in time order, and recurses into pairs.
    Unpaired reference nodes become missing (with placeholders in the run), unpaired run nodes extra.
    Blocked calls did not happen: on neither side do they pair, and a blocked reference call is not
    missing."""

    def __init__(
        self,
        graph: CausalGraph,
        steps: dict[str, str],
        blocked: set[str],
        ref: _RefTree,
        children: dict[str, list[str]],
        roots: list[str],
    ) -> None:
        self.graph, self.steps, self.blocked, self.ref = graph, steps, blocked, ref
        self.children, self.roots = children, roots  # the run tree's, extended with placeholders
        self.missing_route: set[str] = set()
        self.paired: dict[str, str] = {}  # reference key -> the run's span id it was paired with
        self.extra: set[str] = set()
        self.placeholders: list[Node] = []
        self.stands_for: dict[str, str] = {}  # placeholder key -> the reference key it stands for

    def match(self, run_parent: str | None, run_kids: list[str], route_kids: list[str]) -> None:
        stack = [(run_parent, run_kids, route_kids)]
        while stack:
            parent, kids, wanted = stack.pop()
            free: dict[str, list[str]] = {}
            for kid in kids:
                if kid not in self.blocked:
                    free.setdefault(self.steps[kid], []).append(kid)
            for route_kid in wanted:
                if route_kid in self.ref.skip:
                    continue
                candidates = free.get(self.ref.nodes[route_kid])
                if candidates:
                    run_kid = candidates.pop(0)
                    self.paired[route_kid] = run_kid
                    stack.append(
                        (run_kid, list(self.graph.children(run_kid)), self.ref.children.get(route_kid, []))
                    )
                else:
                    target = self.children.setdefault(f"s:{parent}", []) if parent is not None else self.roots
                    target.append(self._placeholder(route_kid))
            for left in free.values():
                for run_kid in left:
                    self.extra.add(run_kid)
                    self.extra.update(d for d in self.graph.descendants(run_kid) if d not in self.blocked)

    def _placeholder(self, route_key: str) -> str:
        """A missing reference node and its subtree, as placeholders in the run tree; the top key."""
        self.missing_route.add(route_key)
        key = f"m:{len(self.placeholders)}"
        self.stands_for[key] = route_key
        self.placeholders.append(Node(key, self.ref.nodes[route_key], "not in this run", (MARK_MISSING,)))
        kids = [self._placeholder(c) for c in self.ref.children.get(route_key, []) if c not in self.ref.skip]
        if kids:
            self.children[key] = kids
        return key

    def place_placeholders(self, order: Callable[[list[str]], list[str]]) -> None:
        """Each placeholder where the reference has its step among its siblings (``order``, the order
        the reference is drawn in): before the first sibling the reference puts after it. The calls
        that happened keep their time order; extra calls, which have no place, keep theirs."""
        by_span = {f"s:{span}": key for key, span in self.paired.items()}
        refs = {**by_span, **self.stands_for}  # a run-tree key -> its reference key
        rank: dict[str, int] = {}
        for kids in (self.ref.roots, *self.ref.children.values()):
            rank.update((key, i) for i, key in enumerate(order(kids)))
        lists = [self.roots, *self.children.values()]
        for kids in lists:
            if not any(k in self.stands_for for k in kids):
                continue
            placed = [k for k in kids if k not in self.stands_for]
            for ph in sorted((k for k in kids if k in self.stands_for), key=lambda k: rank[refs[k]]):
                later = (i for i, k in enumerate(placed) if k in refs and rank[refs[k]] > rank[refs[ph]])
                placed.insert(next(later, len(placed)), ph)
            kids[:] = placed


def _sibling_order(
    ref: _RefTree, graph: CausalGraph, paired: dict[str, str]
) -> Callable[[list[str]], list[str]]:
    """How the reference's siblings are drawn. A family with a recorded order: by it (steps it does
    not list after, in step order). A family without one (mined before #49): the siblings paired with
    the run's calls in those calls' time order, the rest after. A run: its own time order."""
    if ref.kind != "family":
        return list
    if ref.order:
        rank = {step: i for i, step in enumerate(ref.order)}
        return lambda keys: sorted(keys, key=lambda k: (rank.get(ref.nodes[k], len(rank)), ref.nodes[k]))

    def order(keys: list[str]) -> list[str]:
        return sorted(keys, key=lambda k: (0, _pos(graph, paired[k])) if k in paired else (1, (0, "")))

    return order


def _flows(graph: CausalGraph) -> tuple[Flow, ...]:
    grouped: dict[tuple[str, str], list[str]] = {}
    for edge in graph.data_edges:
        grouped.setdefault((edge.source_span_id, edge.consumer_span_id), []).append(edge.arg)
    return tuple(
        Flow(f"s:{source}", f"s:{consumer}", tuple(sorted(args)))
        for (source, consumer), args in sorted(grouped.items(), key=lambda kv: (_pos(graph, kv[0][1]), kv[0]))
    )


def _pos(graph: CausalGraph, span_id: str) -> tuple[int, str]:
    span = graph.span(span_id)
    return (span.start_ns, span.span_id)


def _dangling(graph: CausalGraph) -> tuple[Dangling, ...]:
    return tuple(
        Dangling(f"s:{d.consumer_span_id}", d.arg, d.source_span_id, d.reason) for d in graph.dangling_sources
    )
