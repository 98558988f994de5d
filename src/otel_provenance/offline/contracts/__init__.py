"""Trajectory contracts: a versioned YAML DSL (``schema.json``), parsed into frozen rules.

``load_contract(path)`` / ``parse_contract(text)`` build a ``Contract`` or raise ``ContractError``
naming the line and column; ``contract_schema()`` is the published JSON Schema. Evaluation lives in
``offline.evaluate``; the rule checkers in ``contracts.rules``.
"""

from __future__ import annotations

from .dsl import dump_document, load_contract, parse_contract
from .model import Contract, RateLimit, RouteFamily, Rule, Thresholds
from .rules import DEFAULT_CODES, REGISTRY, RULE_TYPES
from .schemacheck import contract_schema
from .selectors import Match, Selector

__all__ = [
    "DEFAULT_CODES",
    "REGISTRY",
    "RULE_TYPES",
    "Contract",
    "Match",
    "RateLimit",
    "RouteFamily",
    "Rule",
    "Selector",
    "Thresholds",
    "contract_schema",
    "dump_document",
    "load_contract",
    "parse_contract",
]
