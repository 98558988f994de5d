"""Mine a trajectory contract from runs a human approved.

1. Every run gets a fingerprint and a route shape (step and parent→child edge multisets).
2. Runs with the same fingerprint form a group; groups are taken largest first (ties by
   fingerprint) and each joins the first family whose representative it resembles by weighted
   Jaccard ≥ ``similarity`` (exact integer comparison), else it founds a new family.
3. The family with the most runs is proposed ``approved``; the others are ``pending`` with their run
   counts and example trace ids, for a human to approve (``routes approve``).
4. Rules are proposed from the approved family only, each with its support (how many runs or spans
   it was observed on); a rule whose trigger never occurred is dropped as vacuous. Every tool step
   gets an upper bound on its per-run count, whatever marks its spans carry (foreign traces carry no
   ``agent.side_effect``); a step is a write when its spans say so or the user declares it
   (``writes``), and a write's bound is a ``DUPLICATE_SIDE_EFFECT``. Blocked calls did not happen:
   step counts (``required_spans``, ``cardinality``) leave them out, and a ``blocked_calls`` rule
   bounds them at the approved maximum (normally 0). Provenance budgets are counted by ``budget_law``
   with the allow-list each tool span recorded, and written with it.
5. Mined safeguards are monotone: being safer than the approved runs never fails a run. A safeguard
   attribute is required only where every approved call had it (never "only false"), minimums count
   first attempts (fewer retries still meet them), and maximums bound counts and retries.

``routes approve`` (``offline.routes``) re-derives the step-count rules so that an approved family's
own runs pass them.

Only sorted data reaches the output, so the same runs in any order give the same bytes.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Final

from .. import semconv
from ..budget_law import ArgumentCount, allowed_on_span, count_arguments
from .arguments import argument_kinds
from .contracts.dsl import dump_document, parse_contract
from .contracts.rational import format_rational, ratio_at_least
from .contracts.similarity import route_shape, weighted_jaccard
from .fingerprint import edge_counts, fingerprint, step_counts
from .model import ABSENT, Run, Span
from .stepkey import step_key

NO_TOOL_SPANS: Final = (
    "the approved traces hold no tool span (gen_ai.operation.name=execute_tool, or an OpenInference or "
    "OpenLLMetry tool span), so there is no agent "
    "behaviour to mine; record the agent's tools (@op.tool, or a GenAI instrumentation) and mine again"
)
DEFAULT_SIMILARITY: Final = Fraction(4, 5)
DEFAULT_MAX_INSUFFICIENT: Final = Fraction(1, 20)
EXAMPLES_PER_FAMILY: Final = 3


@dataclass(frozen=True)
class _Routed:
    run: Run
    fingerprint: str
    shape: Counter


@dataclass
class Family:
    id: str
    representative: _Routed
    members: list[_Routed]

    @property
    def runs(self) -> list[Run]:
        return [m.run for m in self.members]


def route_families(runs: Iterable[Run], similarity: Fraction = DEFAULT_SIMILARITY) -> list[Family]:
    """Route families, largest first (ties by family id)."""
    routed = [
        _Routed(run, fingerprint(run), route_shape(step_counts(run), edge_counts(run).items()))
        for run in sorted(runs, key=lambda r: r.run_id)
    ]
    groups: dict[str, list[_Routed]] = {}
    for item in routed:
        groups.setdefault(item.fingerprint, []).append(item)
    families: list[Family] = []
    for print_, members in sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        shape = members[0].shape
        home = next(
            (
                f
                for f in families
                if ratio_at_least(*weighted_jaccard(shape, f.representative.shape), similarity)
            ),
            None,
        )
        if home is None:
            family_id = "route-" + hashlib.sha256(print_.encode()).hexdigest()[:10]
            families.append(Family(family_id, members[0], list(members)))
        else:
            home.members.extend(members)
    return sorted(families, key=lambda f: (-len(f.members), f.id))


def mine_contract(
    runs: Iterable[Run],
    name: str,
    similarity: Fraction = DEFAULT_SIMILARITY,
    min_runs: int = 1,
    max_insufficient_fraction: Fraction = DEFAULT_MAX_INSUFFICIENT,
    writes: Iterable[str] = (),
    notes: list[str] | None = None,
) -> str:
    """The proposed contract as canonical YAML text (validated before it is returned).

    ``writes`` names tool steps that are writes (``mine --write``), for traces whose spans do not say
    so themselves (``agent.side_effect``): a step the approved runs never call is an error.
    ``notes``, when given, receives what the user should know about the choice: route families tied
    for approval, steps bounded from pending families only (:func:`family_notes`)."""
    families = route_families(runs, similarity)
    if not families:
        raise ValueError("no approved runs to mine")
    if not any(span.is_tool for f in families for run in f.runs for span in run.spans):
        raise ValueError(NO_TOOL_SPANS)
    declared = sorted(set(writes))
    tool_steps = {step_key(s) for f in families for run in f.runs for s in run.spans if s.is_tool}
    unknown = [step for step in declared if step not in tool_steps]
    if unknown:
        raise ValueError(
            f"--write {', '.join(unknown)}: no approved run calls such a tool; "
            f"the tool steps are {', '.join(sorted(tool_steps))}"
        )
    approved = families[0]
    others = [run for family in families[1:] for run in family.runs]
    rules = propose_rules(approved.runs, declared, others)
    if notes is not None:
        notes.extend(family_notes(families, declared))
    rules.append(_routes_rule(families, approved, similarity))
    document = {
        "version": 1,
        "name": name,
        "description": f"Mined from {sum(len(f.members) for f in families)} approved run(s); "
        f"{len(families)} route family(ies), {approved.id} approved.",
        "gate": {
            "min_runs": min_runs,
            "max_failing_runs": 0,
            "max_insufficient_fraction": format_rational(max_insufficient_fraction),
        },
        "rules": rules,
    }
    text = dump_document(document)
    parse_contract(text, source="<mined contract>")  # the miner never writes a contract it cannot read
    return text


def family_notes(families: list[Family], writes: Iterable[str] = ()) -> list[str]:
    """What mining chose for the user that the contract alone does not say: route families tied for
    approval (the first by id is proposed, which is no reason), and tool steps that no run of the
    approved family takes, bounded from the pending families' runs that take them (#47)."""
    out: list[str] = []
    top = [f for f in families if len(f.members) == len(families[0].members)]
    if len(top) > 1:
        out.append(
            f"{len(top)} route families tie at {len(top[0].members)} run(s) each "
            f"({', '.join(f.id for f in top)}): {top[0].id} is proposed approved only because its id "
            "sorts first; check that the runs are grouped as you mean (one run per task), then "
            "approve the families that are right (routes list, routes approve)"
        )
    own = {step_key(s) for run in families[0].runs for s in run.spans if s.is_tool}
    elsewhere: dict[str, list[str]] = {}
    for family in families[1:]:
        for step in sorted({step_key(s) for run in family.runs for s in run.spans if s.is_tool} - own):
            elsewhere.setdefault(step, []).append(family.id)
    if elsewhere:
        declared = set(writes)
        listed = "; ".join(
            f"{step}{' (--write)' if step in declared else ''} in {', '.join(ids)}"
            for step, ids in sorted(elsewhere.items())
        )
        out.append(
            f"no run of the approved family {families[0].id} takes {len(elsewhere)} tool step(s), bounded "
            f"from the pending families' runs that take them: {listed}"
        )
    return out


def propose_rules(
    runs: list[Run], writes: Iterable[str] = (), others: Iterable[Run] = ()
) -> list[dict[str, Any]]:
    """Rules every approved run satisfies, with support counts; vacuous ones are dropped.

    ``writes`` are step keys the user declares to be writes (``mine --write``), beside the steps
    whose spans say ``agent.side_effect = write`` themselves. ``others`` are the approved runs of the
    pending route families: a tool step none of ``runs`` takes is bounded from those of them that
    take it (counts, retries, safeguards — never required), so every step an approved run took is
    bounded; a step ``runs`` take is bounded from ``runs`` alone."""
    declared = frozenset(writes)
    per_run = _tool_steps(runs)
    own = {s for steps in per_run for s in steps}
    per_other = [steps for steps in _tool_steps(others) if not own.issuperset(steps)]
    all_steps = sorted(own | {s for steps in per_other for s in steps})
    rules: list[dict[str, Any]] = []
    ids = _RuleIds()
    for step in all_steps:
        if step not in own:  # only in runs of pending families: bounded from the runs that take it
            rules.extend(_step_bounds(ids, step, per_other, declared))
            continue
        firsts = [sum(1 for sp in steps.get(step, []) if _first_attempt(sp)) for steps in per_run]
        if min(firsts) >= 1:
            rules.append(
                {
                    "id": ids.make("required", step),
                    "type": "required_spans",
                    "code": "MISSING_PREREQUISITE",
                    "support": len(runs),
                    "select": {"step": step},
                    "min": min(firsts),
                }
            )
        rules.extend(_step_bounds(ids, step, per_run, declared))
    blocked = _blocked_rule(runs)
    if blocked is not None:
        rules.append(blocked)
    return [r for r in rules if r["support"] > 0]


def _tool_steps(runs: Iterable[Run]) -> list[dict[str, list[Span]]]:
    """Per run, its tool spans by step."""
    out: list[dict[str, list[Span]]] = []
    for run in runs:
        steps: dict[str, list[Span]] = {}
        for span in run.spans:
            if span.is_tool:
                steps.setdefault(step_key(span), []).append(span)
        out.append(steps)
    return out


def _step_bounds(
    ids: _RuleIds, step: str, per_run: list[dict[str, list[Span]]], declared: frozenset[str]
) -> list[dict[str, Any]]:
    """The upper bounds on ``step`` that every run of ``per_run`` meets: its count per run, its
    retries, the safeguards of a write, the provenance of its arguments."""
    rules: list[dict[str, Any]] = []
    spans = [sp for steps in per_run for sp in steps.get(step, [])]
    counts = [sum(1 for sp in steps.get(step, []) if not sp.blocked) for steps in per_run]
    select = {"step": step}
    runs_with = sum(1 for c in counts if c)  # support: approved runs in which the rule's trigger occurred
    is_write = step in declared or any(sp.attributes.get(semconv.SIDE_EFFECT) == "write" for sp in spans)
    rules.append(
        {
            "id": ids.make("at_most", step),
            "type": "cardinality",
            "code": "DUPLICATE_SIDE_EFFECT" if is_write else "UNEXPECTED_STEP_COUNT",
            "support": runs_with,
            "select": select,
            "max": max(counts),
        }
    )
    if is_write:
        rules.extend(_write_value_rules(ids, step, spans, runs_with))
    retries = [sp.attributes.get(semconv.RETRY_NUMBER, ABSENT) for sp in spans]
    if retries and all(_is_count(v) for v in retries):
        observed = max([*retries, *(c - 1 for c in counts)])  # type: ignore[list-item]
        rules.append(
            {
                "id": ids.make("retries", step),
                "type": "retry_budgets",
                "code": "RETRY_BUDGET_EXCEEDED",
                "support": runs_with,
                "select": select,
                "max_retries": observed,
            }
        )
    provenance = [_kind_counts(sp) for sp in spans]
    if provenance and all(p is not None for p in provenance):
        allow = sorted({name for sp in spans for name in allowed_on_span(sp.attributes)})
        rule: dict[str, Any] = {
            "id": ids.make("provenance", step),
            "type": "provenance_budgets",
            "code": "UNSOURCED_ARGUMENTS",
            "support": runs_with,
            "select": select,
            "max_assumed": max(len(p.assumed) for p in provenance if p is not None),
            "max_invented": max(len(p.invented) for p in provenance if p is not None),
            "max_untrusted": max(len(p.untrusted) for p in provenance if p is not None),
        }
        if allow:
            rule["allow"] = allow
        rules.append(rule)
    return rules


def _write_value_rules(ids: _RuleIds, step: str, spans: list[Span], support: int) -> list[dict[str, Any]]:
    """``allowed_values`` rules for a write step, each only "at least as safe as approved".

    A safeguard (``agent.idempotency.present``) is required only when every approved write carried it:
    a release that adds the key where the approved runs had none is safer, never a finding. The data
    domain is not a safeguard: the values the approved writes touched are the values allowed."""
    out: list[dict[str, Any]] = []
    select = {"step": step}
    keys = [sp.attributes.get(semconv.IDEMPOTENCY_PRESENT, ABSENT) for sp in spans]
    if keys and all(v is True for v in keys):
        out.append(
            {
                "id": ids.make("values", step, semconv.IDEMPOTENCY_PRESENT),
                "type": "allowed_values",
                "code": "MISSING_SAFEGUARD",
                "support": support,
                "select": select,
                "attribute": semconv.IDEMPOTENCY_PRESENT,
                "values": [True],
            }
        )
    domains = [sp.attributes.get(semconv.DATA_DOMAIN, ABSENT) for sp in spans]
    if domains and all(isinstance(v, str) for v in domains):
        out.append(
            {
                "id": ids.make("values", step, semconv.DATA_DOMAIN),
                "type": "allowed_values",
                "code": "DISALLOWED_VALUE",
                "support": support,
                "select": select,
                "attribute": semconv.DATA_DOMAIN,
                "values": sorted(set(domains)),
            }
        )
    return out


def _is_count(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _first_attempt(span: Span) -> bool:
    """A call that ran and is not a retry of an earlier one: what ``required_spans`` counts, so that a
    release with fewer retries than the approved runs still meets the required minimum."""
    return not span.blocked and not span.is_retry


def _blocked_rule(runs: list[Run]) -> dict[str, Any] | None:
    """``blocked_calls`` at the approved maximum per run, when every tool span records its status."""
    calls = [[s for s in run.spans if s.is_tool] for run in runs]
    if not all(semconv.TOOL_STATUS in s.attributes for c in calls for s in c):
        return None
    return {
        "id": "blocked_calls",
        "type": "blocked_calls",
        "code": "BLOCKED_CALL",
        "support": sum(1 for c in calls if c),
        "max": max((sum(1 for s in c if s.blocked) for c in calls), default=0),
    }


def _kind_counts(span: Span) -> ArgumentCount | None:
    """The span's arguments counted by the budget law with the allow-list the span recorded; None
    when the span carries no provenance or an unknown kind."""
    kinds = argument_kinds(span)
    if kinds is None:
        return None
    recorded = allowed_on_span(span.attributes)
    return count_arguments(sorted(kinds.items()), recorded, vetted=recorded)  # type: ignore[arg-type]


def _routes_rule(families: list[Family], approved: Family, similarity: Fraction) -> dict[str, Any]:
    return {
        "id": "approved_route",
        "type": "approved_routes",
        "code": "UNAPPROVED_ROUTE",
        "support": len(approved.members),
        "similarity": format_rational(similarity),
        "families": [_family_document(f, "approved" if f is approved else "pending") for f in families],
    }


def _family_document(family: Family, status: str) -> dict[str, Any]:
    rep = family.representative
    steps = {k[1]: n for k, n in rep.shape.items() if k[0] == "step"}
    edges = [{"from": k[1], "to": k[2], "count": n} for k, n in rep.shape.items() if k[0] == "edge"]
    traces = sorted({t for run in family.runs for t in run.trace_ids})
    return {
        "id": family.id,
        "status": status,
        "runs": len(family.members),
        "fingerprints": sorted({m.fingerprint for m in family.members}),
        "example_trace_ids": traces[:EXAMPLES_PER_FAMILY],
        "steps": dict(sorted(steps.items())),
        "edges": sorted(edges, key=lambda e: (e["from"], e["to"])),
    }


class _RuleIds:
    """Readable, unique rule ids built from step keys (characters outside the id alphabet → ``_``)."""

    def __init__(self) -> None:
        self._used: set[str] = set()

    def make(self, *parts: str) -> str:
        base = ".".join(re.sub(r"[^A-Za-z0-9_.-]", "_", p) for p in parts).strip("._-") or "rule"
        candidate, n = base, 2
        while candidate in self._used:
            candidate, n = f"{base}-{n}", n + 1
        self._used.add(candidate)
        return candidate
