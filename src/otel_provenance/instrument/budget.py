"""Provenance budgets: how many unsourced (assumed) and proposed (invented) arguments a tool accepts.

Defaults follow the side effect: a ``side_effect="write"`` tool allows zero assumed arguments and blocks
(fail closed); other tools are tagged and never blocked unless given an explicit budget with
``enforce=True``. Arguments on the allow-list (annotation fields meant to be written by the model:
``comment``, ``reason``, ``commit_message``, ``title``, ``body`` by default) are classified and tagged
like any other but do not count against ``max_assumed`` — the counting and the decision are the one
law in ``otel_provenance.budget_law``, which the offline checks apply too. The span records the
exempted names (``agent.budget.allowed``) so that offline checks apply exactly this list.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from .. import semconv as sc
from ..budget_law import Limits, count_arguments, over_budget
from ..errors import ConfigurationError
from .classify import Classification

DEFAULT_ALLOW: frozenset[str] = frozenset({"comment", "reason", "commit_message", "title", "body"})
RULE_MAX_ASSUMED = "max_assumed"
RULE_MAX_INVENTED = "max_invented"
RULE_FAULT = "provenance_fault"


@dataclass(frozen=True, slots=True)
class Budget:
    """``op.Budget(max_assumed=, max_invented=, allow=, enforce=)``.

    ``None`` means "default for the tool's side effect": ``max_assumed`` 0 for write tools and no limit
    otherwise; ``max_invented`` no limit; ``enforce`` True for write tools, False (advisory) otherwise.
    ``allow`` replaces the default allow-list when given.
    """

    max_assumed: int | None = None
    max_invented: int | None = None
    allow: frozenset[str] | Iterable[str] | None = field(default=DEFAULT_ALLOW)
    enforce: bool | None = None

    def __post_init__(self) -> None:
        for name in ("max_assumed", "max_invented"):
            value = getattr(self, name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 0):
                raise ConfigurationError(f"Budget.{name}: must be None or an integer >= 0")
        allow: Any = DEFAULT_ALLOW if self.allow is None else self.allow
        if isinstance(allow, str | bytes) or not isinstance(allow, Iterable):
            raise ConfigurationError("Budget.allow: must be a collection of argument names, e.g. {'comment'}")
        names = frozenset(allow)
        if not all(isinstance(n, str) and n for n in names):
            raise ConfigurationError("Budget.allow: every entry must be a non-empty argument name")
        object.__setattr__(self, "allow", names)
        if self.enforce is not None and not isinstance(self.enforce, bool):
            raise ConfigurationError("Budget.enforce: must be None, True or False")

    def check(
        self, classification: Classification, side_effect: str, *, enforce_globally: bool = True
    ) -> Verdict:
        """Count the call's arguments against this budget and decide whether to block it."""
        write = side_effect == "write"
        allow: frozenset[str] = self.allow  # type: ignore[assignment]  # normalised in __post_init__
        max_assumed = self.max_assumed if self.max_assumed is not None else (0 if write else None)
        enforce = (self.enforce if self.enforce is not None else write) and enforce_globally
        count = count_arguments([(a.name, a.kind) for a in classification.arguments], allow)
        over = over_budget(count, _limits(max_assumed, self.max_invented))
        violations: list[str] = []
        if sc.KIND_ASSUMED in over:
            violations.extend(f"{RULE_MAX_ASSUMED}:{name}={sc.KIND_ASSUMED}" for name in count.assumed)
        if sc.KIND_INVENTED in over:
            violations.extend(f"{RULE_MAX_INVENTED}:{name}={sc.KIND_INVENTED}" for name in count.invented)
        violations.extend(f"{RULE_FAULT}:{fault}" for fault in classification.faults)
        return Verdict(
            assumed=len(count.assumed),
            invented=len(count.invented),
            max_assumed=max_assumed,
            max_invented=self.max_invented,
            violations=tuple(violations),
            blocked=bool(violations) and enforce,
            allowed=count.allowed,
        )


_LIMITS: dict[tuple[int | None, int | None], Limits] = {}


def _limits(max_assumed: int | None, max_invented: int | None) -> Limits:
    """One immutable ``Limits`` per pair (a few per process): not rebuilt on every call."""
    key = (max_assumed, max_invented)
    limits = _LIMITS.get(key)
    if limits is None:
        limits = Limits(max_assumed, max_invented)
        if len(_LIMITS) < 256:
            _LIMITS[key] = limits
    return limits


class Verdict(NamedTuple):
    """Outcome of a budget check. ``violations`` name rules, arguments and kinds — never values."""

    assumed: int
    invented: int
    max_assumed: int | None
    max_invented: int | None
    violations: tuple[str, ...]
    blocked: bool
    allowed: tuple[str, ...] = ()  # argument names the allow-list exempted from counting

    def attributes(self) -> dict[str, Any]:
        out: dict[str, Any] = {sc.BUDGET_ASSUMED: self.assumed, sc.BUDGET_INVENTED: self.invented}
        if self.allowed:
            out[sc.BUDGET_ALLOWED] = list(self.allowed)
        if self.max_assumed is not None:
            out[sc.BUDGET_MAX_ASSUMED] = self.max_assumed
        if self.max_invented is not None:
            out[sc.BUDGET_MAX_INVENTED] = self.max_invented
        if self.violations:
            out[sc.VIOLATIONS] = list(self.violations)
        return out


__all__ = ["DEFAULT_ALLOW", "Budget", "Verdict"]
