"""Reviewing a contract's route families: listing them, and approving a pending one.

Approving rewrites the contract document: the family's status becomes ``approved`` and the step-count
rules the miner wrote are re-derived from every approved family's stored step counts
(:func:`widen_for_family`), and the mined ordering rules the family's runs do not keep are dropped
(``contracts.prerequisites.order_for_approval``, which also orders the writes only the family makes),
so approving a family never leaves its own runs failing them. The result is checked by parsing it
before anyone writes it.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

from .contracts.dsl import dump_document, parse_contract
from .contracts.model import Contract, RouteFamily
from .contracts.prerequisites import order_for_approval


@dataclass(frozen=True, slots=True)
class Approval:
    """What approving a family did: the contract's new text (None when it was approved already) and
    one line per rule the approval re-derived."""

    text: str | None
    changes: tuple[str, ...] = ()


def contract_families(contract: Contract) -> list[tuple[str, RouteFamily]]:
    """(rule id, family) for every route family of the contract's ``approved_routes`` rules."""
    return [
        (rule.id, family)
        for rule in contract.rules
        if rule.type == "approved_routes"
        for family in rule.params["families"]
    ]


def approve_family(contract: Contract, family_id: str) -> Approval:
    """Approve ``family_id``; ``KeyError`` when the contract has no such family."""
    document = copy.deepcopy(dict(contract.document))
    hits = [
        f
        for r in document["rules"]
        if r["type"] == "approved_routes"
        for f in r["families"]
        if f["id"] == family_id
    ]
    if not hits:
        raise KeyError(family_id)
    if all(f["status"] == "approved" for f in hits):
        return Approval(None)
    for family in hits:
        family["status"] = "approved"
    changes = widen_for_family(document)  # the family's own runs must pass the mined step rules
    changes += order_for_approval(document, family_id)  # … and the mined ordering rules (#49)
    text = dump_document(document)
    parse_contract(text, contract.source)  # never hand back a contract that does not parse
    return Approval(text, tuple(changes))


def widen_for_family(document: dict[str, Any]) -> list[str]:
    """Re-derive the mined step-count rules of ``document`` (a contract as plain data, changed in
    place) from every ``approved`` family's stored step counts, so that approving a family never
    leaves its own runs failing them. Returns one line per change, for the user.

    Only rules the miner wrote (they carry ``support``) and that select a step by key alone are
    touched: ``required_spans`` (minimum lowered to the smallest approved count; dropped when an
    approved family lacks the step), ``cardinality`` (bounds widened to the approved counts) and
    ``retry_budgets`` (widened to the approved repeat count). Hand-written rules stay as written.
    """
    approved = [
        f
        for rule in document["rules"]
        if rule["type"] == "approved_routes"
        for f in rule["families"]
        if f["status"] == "approved"
    ]
    if not approved:
        return []
    changes: list[str] = []
    kept: list[dict[str, Any]] = []
    for rule in document["rules"]:
        step = rule.get("select", {}).get("step") if set(rule.get("select", {})) == {"step"} else None
        if "support" not in rule or step is None:
            kept.append(rule)
            continue
        counts = [f["steps"].get(step, 0) for f in approved]
        low, high = min(counts), max(counts)
        kind = rule["type"]
        if kind == "required_spans":
            if low == 0:
                lacking = next(f["id"] for f, n in zip(approved, counts, strict=True) if n == 0)
                changes.append(f"{rule['id']}: removed ({lacking} is approved and has no {step})")
                continue
            if low < rule.get("min", 1):
                changes.append(f"{rule['id']}: min {rule.get('min', 1)} → {low}")
                rule["min"] = low
        elif kind == "cardinality":
            if "max" in rule and high > rule["max"]:
                changes.append(f"{rule['id']}: max {rule['max']} → {high}")
                rule["max"] = high
            if "min" in rule and low < rule["min"]:
                changes.append(f"{rule['id']}: min {rule['min']} → {low}")
                rule["min"] = low
        elif kind == "retry_budgets" and high - 1 > rule["max_retries"]:
            changes.append(f"{rule['id']}: max_retries {rule['max_retries']} → {high - 1}")
            rule["max_retries"] = high - 1
        kept.append(rule)
    document["rules"] = kept
    return changes
