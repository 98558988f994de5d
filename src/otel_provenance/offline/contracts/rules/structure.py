"""Where steps sit in the causal graph: ``required_edges``, ``required_ancestry``, ``forbidden_paths``.

Blocked calls (``agent.tool.status = blocked``) did not happen: they are neither placed steps, nor
parents, nor path sources, targets or guards.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from ...matching import optimal_assignment
from ...model import Span
from ...runs import validate_run
from ..evidence import RunEvidence, tally_key
from ..model import Rule
from ..outcomes import Observation, Unknown, Violation, span_witness, spans_witnesses
from ..ruletype import Absence, AtCall, Passes, RuleType, always
from ..selectors import Match, Selector


def check_required_edges(rule: Rule, ev: RunEvidence) -> Iterator[Observation]:
    """Every ``child`` span's direct parent is a ``parent`` span, and there are at least ``min``
    (default 1) such edges."""
    parent_sel: Selector = rule.params["parent"]
    child_sel: Selector = rule.params["child"]
    want = rule.params.get("min", 1)
    yield from _placement(ev, child_sel, parent_sel, want, lambda s: _direct(ev, s), "a child of")


def check_required_ancestry(rule: Rule, ev: RunEvidence) -> Iterator[Observation]:
    """Every ``descendant`` span has an ``ancestor`` span above it (B only under A); at least ``min``
    (default 0) such descendants."""
    anc_sel: Selector = rule.params["ancestor"]
    desc_sel: Selector = rule.params["descendant"]
    want = rule.params.get("min", 0)
    yield from _placement(ev, desc_sel, anc_sel, want, lambda s: _chain(ev, s), "under")


def _direct(ev: RunEvidence, span: Span) -> tuple[list[Span], bool]:
    parent = ev.parent(span)
    return ([parent] if parent else []), ev.is_orphan(span)


def _chain(ev: RunEvidence, span: Span) -> tuple[list[Span], bool]:
    chain = list(ev.ancestors(span))
    top = chain[-1] if chain else span
    return chain, ev.is_orphan(top)


def _placement(
    ev: RunEvidence,
    inner: Selector,
    outer: Selector,
    want: int,
    above: Callable[[Span], tuple[list[Span], bool]],
    relation: str,
) -> Iterator[Observation]:
    inner_label, outer_label = inner.describe(), outer.describe()
    matched, undecided = ev.occurred(inner)
    placed = 0
    unknown: list[Span] = list(undecided)
    for span in matched:
        candidates, broken = above(span)
        verdicts = [outer.match(c, ev.step(c)) for c in candidates if not c.blocked]
        if Match.MATCH in verdicts:
            placed += 1
        elif Match.UNKNOWN in verdicts or broken:
            unknown.append(span)
        else:
            where = ev.step(candidates[0]) if candidates else "none (it is a root)"
            yield Violation(
                f"{inner_label} is not {relation} {outer_label}; its parent is {where}.",
                (span_witness(span, parent_step=where),),
            )
    if unknown:
        yield Unknown(
            f"cannot tell whether {inner_label} is {relation} {outer_label}: "
            f"{len(unknown)} span(s) lack an attribute or a parent.",
            spans_witnesses(unknown),
        )
    elif placed < want:
        if not ev.complete:
            yield Unknown(
                f"{inner_label} {relation} {outer_label} occurred {placed} time(s) and the run is "
                "incomplete.",
                spans_witnesses(list(ev.orphans), count=placed),
            )
        else:
            yield Violation(
                f"{inner_label} {relation} {outer_label} is required at least {want} time(s) but "
                f"occurred {placed} time(s).",
                ev.witnesses(count=placed),
            )


def check_forbidden_paths(rule: Rule, ev: RunEvidence) -> Iterator[Observation]:
    """No path reaches a ``to`` span from a ``from`` span (or from the start of the run) without
    passing an ``unless_preceded_by`` span. With ``one_to_one`` every ``to`` span needs its own
    preceding guard span (matched optimally, not greedily)."""
    target: Selector = rule.params["to"]
    source: Selector | None = rule.params.get("from")
    guard: Selector | None = rule.params.get("unless_preceded_by")
    targets, undecided_targets = ev.occurred(target)
    sources, undecided_sources = ev.occurred(source) if source else ([], [])
    guards, undecided_guards = ev.occurred(guard) if guard else ([], [])
    t_label = target.describe()
    unknown: list[Span] = list(undecided_targets)
    if guard is not None and source is None and rule.params.get("one_to_one", False):
        yield from _one_to_one(ev, targets, guards, undecided_guards, t_label, guard.describe(), unknown)
        return
    for t in targets:
        starts: list[Span | None] = [None]
        if source is not None:
            starts = [s for s in sources if ev.happens_before(s, t)]
            if not starts:
                if any(ev.happens_before(s, t) for s in undecided_sources):
                    unknown.append(t)
                continue
        after = f" after {source.describe()}" if source is not None else ""
        for s in starts:
            proof = [t] if s is None else [s, t]
            if guard is None:
                yield Violation(
                    f"{source.describe() if source else ''} happens before {t_label}; the contract "
                    "forbids that path.",
                    spans_witnesses(proof),
                )
            elif any(_between(ev, s, g, t) for g in guards):
                continue
            elif any(_between(ev, s, g, t) for g in undecided_guards) or not ev.complete:
                unknown.append(t)
            else:
                yield Violation(
                    f"{t_label} is not preceded by {guard.describe()}{after}.", spans_witnesses(proof)
                )
    unknown = sorted(set(unknown), key=lambda sp: sp.span_id)
    if unknown:
        yield Unknown(
            f"cannot decide whether {t_label} is reached by a forbidden path: {len(unknown)} span(s) "
            "lack evidence (an attribute, or the run is incomplete).",
            spans_witnesses(unknown),
        )


def _between(ev: RunEvidence, start: Span | None, middle: Span, end: Span) -> bool:
    return ev.happens_before(middle, end) and (start is None or ev.happens_before(start, middle))


def _one_to_one(
    ev: RunEvidence,
    targets: list[Span],
    guards: list[Span],
    undecided_guards: list[Span],
    t_label: str,
    g_label: str,
    unknown: list[Span],
) -> Iterator[Observation]:
    if targets and guards:
        cost = [[0 if ev.happens_before(g, t) else 1 for g in guards] for t in targets]
        paired = {ti for ti, gi in optimal_assignment(cost) if cost[ti][gi] == 0}
    else:
        paired = set()
    lonely = [t for i, t in enumerate(targets) if i not in paired]
    if not lonely:
        if unknown:
            yield Unknown(
                f"cannot tell whether {len(unknown)} span(s) are {t_label}.", spans_witnesses(unknown)
            )
        return
    if undecided_guards or not ev.complete or unknown:
        yield Unknown(
            f"{len(lonely)} {t_label} span(s) may lack their own preceding {g_label}: evidence is missing.",
            spans_witnesses(lonely + unknown),
        )
        return
    yield Violation(
        f"{t_label} occurred {len(targets)} time(s) but only {len(paired)} had their own "
        f"preceding {g_label}.",
        spans_witnesses(lonely, count=len(targets), guarded=len(paired)),
    )


def _compile_forbidden_paths(rule: Rule) -> Passes:
    """No ``to`` call ran, or — without ``from`` and ``one_to_one`` — each ran after a ``unless_preceded_by``
    call; nothing undecided. Any other run goes to the checker. Read from the shared tallies: a
    call that ran is an ``occurred`` span, one that might be a target an ``occurred_unknown`` one."""
    target = tally_key(rule.params["to"])
    guard_selector: Selector | None = rule.params.get("unless_preceded_by")
    guard = tally_key(guard_selector)
    one_to_one = rule.params.get("one_to_one", False)
    guarded_each = guard_selector is not None and "from" not in rule.params and not one_to_one

    def passes(ev: RunEvidence) -> bool:
        tallies = ev.tallies
        targets = tallies[target]
        if targets.occurred_unknown:
            return False
        if not targets.occurred:
            return True
        if not guarded_each:
            return False
        validate_run(ev.run)  # as the checker's happens_before does (building the graph)
        guards = tallies[guard]
        # happens_before(g, t) is g.end_ns <= t.start_ns: the earliest guard precedes every target
        return guards.occurred > 0 and guards.end_min <= targets.start_min

    return passes


RULE_TYPES = (
    RuleType("required_edges", check_required_edges, "MISSING_EDGE", always(Absence.IRRELEVANT)),
    RuleType("required_ancestry", check_required_ancestry, "MISPLACED_STEP", always(Absence.IRRELEVANT)),
    RuleType(
        "forbidden_paths",
        check_forbidden_paths,
        "FORBIDDEN_PATH",
        always(Absence.IRRELEVANT),
        compile=_compile_forbidden_paths,
        at_call=AtCall.RUN,
        passes_without_step="to",
    ),
)
