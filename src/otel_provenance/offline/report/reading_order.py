"""The order in which the reports a person reads — the terminal, the HTML page, the pull-request
comment — list a gate's rules: the findings that name a step first, the route's similarity last.

A reader acts on the sharpest finding: "payment.refund occurred 2 times", "fraud.check is required
but occurred 0 times", "payment.refund is not preceded by fraud.check". A route that is "4/7
similar" says only that something differs, and listed by rule id (``approved_route`` sorts first) it
came first and pushed the double refund below the fold (#49). So, by rule type: duplicates and step
counts, missing steps, order, the other rules about steps, then values and budgets, then routes.
Within a type the gate's order (rule id) stands. The machine formats (JSON, SARIF, JUnit) keep the
gate's order.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

from ..gate import RuleVerdict

#: Rule types in reading order; a type not listed reads after them, before ``approved_routes``.
READING_ORDER: Final = (
    "cardinality",  # DUPLICATE_SIDE_EFFECT, UNEXPECTED_STEP_COUNT
    "required_spans",  # a missing step
    "forbidden_paths",  # a write not preceded by its check
    "forbidden_spans",
    "required_edges",
    "required_ancestry",
    "retry_budgets",
    "blocked_calls",
    "provenance_budgets",
    "numeric_budgets",
    "allowed_values",
    "attribute_constraints",
)
LAST: Final = "approved_routes"


def reading_order(verdicts: Iterable[RuleVerdict]) -> list[RuleVerdict]:
    """``verdicts`` in reading order (stable: the gate's order within a rule type)."""
    rank = {kind: i for i, kind in enumerate(READING_ORDER)}
    end = len(READING_ORDER)
    return sorted(verdicts, key=lambda v: end + 1 if v.rule.type == LAST else rank.get(v.rule.type, end))
