"""The rule-type registry: ``REGISTRY[name]`` is the one declaration of a rule type (``RuleType``:
checker, default finding code, how absence is judged, parameter validation), collected from the
modules that implement them. The DSL, the evaluator, the gate and the schema test all read it."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Final

from ..outcomes import Checker, Observation, Unknown, Violation, Witness
from ..ruletype import Absence, RuleType
from . import attributes, blocked, budgets, counts, routes, structure

REGISTRY: Final[dict[str, RuleType]] = {
    t.name: t
    for module in (counts, structure, attributes, budgets, routes, blocked)
    for t in module.RULE_TYPES
}
RULE_TYPES: Final = tuple(REGISTRY)
DEFAULT_CODES: Final[Mapping[str, str]] = MappingProxyType({n: t.default_code for n, t in REGISTRY.items()})

__all__ = [
    "DEFAULT_CODES",
    "REGISTRY",
    "RULE_TYPES",
    "Absence",
    "Checker",
    "Observation",
    "RuleType",
    "Unknown",
    "Violation",
    "Witness",
]
