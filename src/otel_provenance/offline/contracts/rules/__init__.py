"""One checker per rule type. ``CHECKERS[rule.type]`` is a generator of violations and unknowns."""

from __future__ import annotations

from typing import Final

from ..outcomes import Checker, Outcome, Status, Unknown, Violation, Witness
from .attributes import check_allowed_values, check_attribute_constraints
from .budgets import check_numeric_budgets, check_provenance_budgets, check_retry_budgets
from .counts import check_cardinality, check_forbidden_spans, check_required_spans
from .routes import check_approved_routes
from .structure import check_forbidden_paths, check_required_ancestry, check_required_edges

CHECKERS: Final[dict[str, Checker]] = {
    "required_spans": check_required_spans,
    "forbidden_spans": check_forbidden_spans,
    "cardinality": check_cardinality,
    "required_edges": check_required_edges,
    "required_ancestry": check_required_ancestry,
    "forbidden_paths": check_forbidden_paths,
    "attribute_constraints": check_attribute_constraints,
    "allowed_values": check_allowed_values,
    "retry_budgets": check_retry_budgets,
    "approved_routes": check_approved_routes,
    "numeric_budgets": check_numeric_budgets,
    "provenance_budgets": check_provenance_budgets,
}

__all__ = ["CHECKERS", "Checker", "Outcome", "Status", "Unknown", "Violation", "Witness"]
