"""What approved runs prove about order: each write preceded by the checks every approved run made
before it — mined as ``forbidden_paths`` rules (``to: {step: W}``, ``unless_preceded_by: {step: C}``).

Why these rules exist (#49): the guard (``op.run(contract=...)``) judges ``forbidden_paths`` before
each call, but a missing step (``required_spans``) only when the run ends. A mined contract without
an ordering rule let a release that skipped its policy check pay every refund, and only the run's
span said so afterwards. With one, the refund is refused before its body runs.

- A **write** is a tool step whose spans say ``agent.side_effect = write`` or that the user declares
  (``mine --write``); a **check** is any other tool step. Only writes are targets and only checks are
  guards: a write that follows another write (a notice after the payment) is an order of effects, not
  a check, and requiring it would refuse the notice of a payment that was held.
- For a set of runs, a write's **prerequisites** are the checks C such that in every run, every call of
  W that ran (a blocked call did not happen) has a call of C that ran and ended no later than W began —
  the ``forbidden_paths`` law (``contracts.rules.structure``), which then confirms each pair on every
  run before it is proposed: a mined ordering rule never fails an approved run.
- Monotone, like every mined safeguard: an extra check, or a check made earlier, never fails a run.

Each route family records its own prerequisites (``prerequisites`` in the family), so approving
another family (``routes approve``) drops exactly the ordering rules its runs do not keep instead of
leaving them failing its runs, and orders the writes only it makes (:func:`order_for_approval`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Final

from ... import semconv
from ..model import Run
from ..stepkey import step_key
from .evidence import RunEvidence
from .model import Rule, Thresholds
from .rules.structure import check_forbidden_paths
from .selectors import Selector

RULE_TYPE: Final = "forbidden_paths"
CODE: Final = "MISSING_PREREQUISITE"
FAMILY_KEY: Final = "prerequisites"  # in a route family: {write step: [its checks]}


@dataclass(frozen=True, slots=True)
class Order:
    """What a set of runs proves: each write step's checks (sorted), and in how many runs it ran."""

    prerequisites: Mapping[str, tuple[str, ...]]
    runs_with: Mapping[str, int]

    def document(self) -> dict[str, list[str]]:
        """The family's ``prerequisites`` field: every write the runs made, its checks (maybe none)."""
        return {write: list(checks) for write, checks in sorted(self.prerequisites.items())}


def write_steps(runs: Iterable[Run], declared: Iterable[str] = ()) -> frozenset[str]:
    """Tool steps that are writes: declared (``mine --write``), or marked so on any of their spans."""
    marked = {
        step_key(span)
        for run in runs
        for span in run.spans
        if span.is_tool and span.attributes.get(semconv.SIDE_EFFECT) == "write"
    }
    return frozenset(marked | set(declared))


def proven_order(runs: Sequence[Run], writes: frozenset[str]) -> Order:
    """Each write's prerequisites over ``runs``: candidates by a sweep in time order, then each pair
    confirmed by the ``forbidden_paths`` checker itself on every run (no finding of any kind)."""
    candidates: dict[str, set[str]] = {}
    runs_with: dict[str, int] = {}
    for run in runs:
        for write, seen in _preceding_checks(run, writes).items():
            runs_with[write] = runs_with.get(write, 0) + 1
            candidates[write] = candidates[write] & seen if write in candidates else set(seen)
    evidence = [RunEvidence(run) for run in runs]
    proven = {
        write: tuple(c for c in sorted(checks) if all(_keeps(ev, write, c) for ev in evidence))
        for write, checks in candidates.items()
    }
    return Order(MappingProxyType(proven), MappingProxyType(runs_with))


def _preceding_checks(run: Run, writes: frozenset[str]) -> dict[str, set[str]]:
    """For each write step that ran in ``run``: the checks that ended before *every* call of it began."""
    calls = [(span, step_key(span)) for span in run.spans if span.is_tool and not span.blocked]
    checks = sorted((span.end_ns, step) for span, step in calls if step not in writes)
    found: dict[str, set[str]] = {}
    seen: set[str] = set()
    i = 0
    for span, step in sorted(((s, k) for s, k in calls if k in writes), key=lambda c: c[0].start_ns):
        while i < len(checks) and checks[i][0] <= span.start_ns:
            seen.add(checks[i][1])
            i += 1
        found[step] = found[step] & seen if step in found else set(seen)
    return found


def _keeps(evidence: RunEvidence, write: str, check: str) -> bool:
    return not any(check_forbidden_paths(_rule(write, check), evidence))


def _rule(write: str, check: str) -> Rule:
    params = {"to": Selector(step=write), "unless_preceded_by": Selector(step=check)}
    return Rule(f"{write}.after.{check}", RULE_TYPE, CODE, "", MappingProxyType(params), Thresholds())


def prerequisite_rules(order: Order, taken: Iterable[str]) -> list[dict[str, Any]]:
    """One ``forbidden_paths`` rule per (write, check) of ``order``, ids ``<write>.after.<check>``
    unique among ``taken``; support: the runs in which the write ran."""
    used = set(taken)
    rules = []
    for write, checks in sorted(order.prerequisites.items()):
        for check in checks:
            rules.append(
                {
                    "id": _unique(f"{write}.after.{check}", used),
                    "type": RULE_TYPE,
                    "code": CODE,
                    "support": order.runs_with[write],
                    "to": {"step": write},
                    "unless_preceded_by": {"step": check},
                }
            )
    return rules


def _unique(base: str, used: set[str]) -> str:
    base = re.sub(r"[^A-Za-z0-9_.-]", "_", base).strip("._-") or "rule"
    candidate, n = base, 2
    while candidate in used:
        candidate, n = f"{base}-{n}", n + 1
    used.add(candidate)
    return candidate


def order_for_approval(document: dict[str, Any], family_id: str) -> list[str]:
    """The mined ordering rules of ``document`` (plain data, changed in place) once ``family_id`` is
    approved (its status already set), by the prerequisites each family recorded; one line per change.

    - A mined rule ``W.after.C`` that the family's runs do not keep (it calls W, and C is not among the
      checks it recorded before W) is removed; the families approved before had their say already.
      A family that calls W without recording prerequisites (a contract mined before #49, or edited)
      proves nothing, so the rule goes.
    - A write that no family approved before made gets its rules: the checks the family recorded
      before it — the mining law over the approved runs that make it.

    Only mined rules are touched (they carry ``support``, select a step by key alone, have no
    ``from``); hand-written rules, and mined ones a reviewer removed from a write approved before,
    stay as they are."""
    approved = [
        f
        for rule in document["rules"]
        if rule["type"] == "approved_routes"
        for f in rule["families"]
        if f["status"] == "approved"
    ]
    family = next(f for f in approved if f["id"] == family_id)
    changes: list[str] = []
    kept: list[dict[str, Any]] = []
    for rule in document["rules"]:
        pair = _mined_pair(rule)
        if pair is None or _family_keeps(family, *pair):
            kept.append(rule)
            continue
        write, check = pair
        why = f"{family_id} is approved and calls {write} without {check} before it"
        changes.append(f"{rule['id']}: removed ({why})")
    added = _new_write_rules(approved, family_id, {r["id"] for r in kept})
    at = next((i for i, r in enumerate(kept) if r["type"] == "approved_routes"), len(kept))
    kept[at:at] = added
    for r in added:
        write, check = r["to"]["step"], r["unless_preceded_by"]["step"]
        changes.append(f"{r['id']}: added (every approved run that calls {write} makes {check} before it)")
    document["rules"] = kept
    return changes


def _new_write_rules(approved: list[dict[str, Any]], family_id: str, taken: set[str]) -> list[dict[str, Any]]:
    """Rules for the writes ``family_id`` makes that no other approved family makes."""
    family = next(f for f in approved if f["id"] == family_id)
    others = [f for f in approved if f["id"] != family_id]
    recorded = family.get(FAMILY_KEY)
    if recorded is None:
        return []
    new = [w for w in recorded if family["steps"].get(w) and not any(f["steps"].get(w) for f in others)]
    proven = {w: tuple(sorted(recorded[w])) for w in new}
    return prerequisite_rules(Order(proven, {w: family.get("runs", 0) for w in new}), taken)


def _mined_pair(rule: Mapping[str, Any]) -> tuple[str, str] | None:
    if rule["type"] != RULE_TYPE or "support" not in rule or "from" in rule or rule.get("one_to_one"):
        return None
    to, guard = rule.get("to", {}), rule.get("unless_preceded_by", {})
    if set(to) != {"step"} or set(guard) != {"step"}:
        return None
    return to["step"], guard["step"]


def _family_keeps(family: Mapping[str, Any], write: str, check: str) -> bool:
    if not family.get("steps", {}).get(write):
        return True  # the family never makes the write: the rule asks nothing of its runs
    recorded = family.get(FAMILY_KEY)
    return recorded is not None and check in recorded.get(write, ())
