"""The parsed contract: frozen data the evaluator reads. Built only by ``dsl.parse_contract``."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from types import MappingProxyType
from typing import Any


@dataclass(frozen=True, slots=True)
class RateLimit:
    """A failing-run rate bound with a confidence: the rule fails when the evidence says, at
    ``confidence``, that the rate is above ``max_rate``; passes when it says the rate is at most
    ``max_rate`` (``contracts.confidence``). ``0 < max_rate < 1`` and ``1/2 < confidence < 1``."""

    max_rate: Fraction
    confidence: Fraction

    @property
    def alpha(self) -> Fraction:
        """The error rate each one-sided test allows: ``1 − confidence``."""
        return 1 - self.confidence


@dataclass(frozen=True, slots=True)
class Thresholds:
    """Per-rule release thresholds: how many failing runs — or, with ``rate``, what failing-run rate
    at what confidence (then ``max_failing_runs`` is not used) — and what fraction of insufficient
    runs a release may have before the rule stops it."""

    max_failing_runs: int = 0
    max_insufficient_fraction: Fraction = Fraction(0)
    rate: RateLimit | None = None


@dataclass(frozen=True, slots=True)
class RouteFamily:
    """A set of approved-run fingerprints that behave alike, with the step/edge multisets of its
    representative (used for similarity)."""

    id: str
    status: str  # "approved" | "pending"
    fingerprints: tuple[str, ...]
    runs: int
    example_trace_ids: tuple[str, ...]
    steps: tuple[tuple[str, int], ...]
    edges: tuple[tuple[str, str, int], ...]
    #: The representative run's steps in the order they first began: how reports draw the route (an
    #: empty tuple in a contract mined before it was recorded).
    order: tuple[str, ...] = ()
    #: (write step, the checks every run of the family made before it), ``contracts.prerequisites``;
    #: None in a contract mined before they were recorded.
    prerequisites: tuple[tuple[str, tuple[str, ...]], ...] | None = None


@dataclass(frozen=True, slots=True)
class Rule:
    """One rule. ``params`` holds the type-specific fields, already converted (selectors are
    ``Selector``, thresholds are ``Fraction``, families are ``RouteFamily``)."""

    id: str
    type: str
    code: str
    description: str
    params: Mapping[str, Any]
    thresholds: Thresholds
    line: int = 0  # 1-based line of the rule in its file (SARIF locations); 0 when unknown
    support: int | None = None
    compiled: Any = field(default=None, init=False, compare=False, repr=False)
    """What the evaluator made of the rule once (``evaluate.compiled``); not part of the rule."""

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        """Pickled with its ``params`` as a plain dict and read-only again when loaded: engines send
        rules to other processes (``engines.pool``), and a ``mappingproxy`` does not pickle."""
        fields = (self.id, self.type, self.code, self.description, dict(self.params), self.thresholds)
        return _rule, (*fields, self.line, self.support)


def _rule(
    id: str,
    type: str,
    code: str,
    description: str,
    params: dict[str, Any],
    thresholds: Thresholds,
    line: int,
    support: int | None,
) -> Rule:
    return Rule(id, type, code, description, MappingProxyType(params), thresholds, line, support)


@dataclass(frozen=True, slots=True)
class Contract:
    name: str
    version: int
    description: str
    min_runs: int
    rules: tuple[Rule, ...]
    digest: str  # sha256 of the canonical document: independent of formatting, key and rule order
    document: Mapping[str, Any] = field(repr=False, compare=False, hash=False)
    source: str = "<string>"
    notes: tuple[str, ...] = field(default=(), compare=False, hash=False)  # e.g. "no seal" (dsl.SEAL)

    def rule(self, rule_id: str) -> Rule:
        for rule in self.rules:
            if rule.id == rule_id:
                return rule
        raise KeyError(rule_id)
