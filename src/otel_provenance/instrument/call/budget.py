"""Provenance budgets: how many unsourced (assumed), proposed (invented) and untrusted arguments a
tool accepts.

Defaults follow the side effect: a ``side_effect="write"`` tool allows zero assumed and zero untrusted
arguments and blocks (fail closed); other tools are tagged and never blocked unless given an explicit
budget with ``enforce=True``. Arguments on the allow-list (free text meant to be written by the model:
``body``, ``subject``, ``message``, ``content``, ``comment`` … — :data:`DEFAULT_ALLOW`) are classified
and tagged like any other but do not count against ``max_assumed``; they do count against
``max_untrusted`` (an outsider's words copied verbatim) unless its value is a single token that is
no destination (a reference number copied from an invoice: ``Classification.references``); and an
allowed argument is not exempt when its name says where data goes
(``budget_law.is_destination_name``) or its assumed value looks like a destination (an e-mail
address, a URL, an IBAN: ``Classification.destinations``) — free text may be written, but never
decides where data goes. The default list names declared parameters only: a name the caller chose
through ``**kwargs`` (``Classification.caller_named``) is never on it; an explicit ``allow`` may
name one. The counting and the decision are the one law in
``otel_provenance.budget_law``, which the offline checks apply too. The span records the exempted names
(``agent.budget.allowed``) so that offline checks apply exactly this list.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from ... import semconv as sc
from ...budget_law import Limits, count_arguments, egress_unsourced, over_budget
from ...errors import ConfigurationError
from ..evidence.classify import Classification

DEFAULT_ALLOW: frozenset[str] = frozenset(
    {
        "body", "comment", "commit_message", "content", "description", "message", "reason", "subject",
        "summary", "text", "title",
    }
)  # fmt: skip
RULE_MAX_ASSUMED = "max_assumed"
#: After an assumed argument's violation when the short-value floor decided it: the run did see the
#: value, but it is shorter than the floor and was not found under the argument's own name.
SHORT_VALUE_HINT = ":short_value"
RULE_MAX_INVENTED = "max_invented"
RULE_MAX_UNTRUSTED = "max_untrusted"
RULE_FAULT = "provenance_fault"
RULE_EGRESS = "egress"  # an egress argument (a URL a read fetches) that is assumed or untrusted
#: An ask: a destination taken from a source the user's request named (``delegated:<argument>``).
RULE_DELEGATED = "delegated"
_RULES = {
    sc.KIND_ASSUMED: RULE_MAX_ASSUMED,
    sc.KIND_INVENTED: RULE_MAX_INVENTED,
    sc.KIND_UNTRUSTED: RULE_MAX_UNTRUSTED,
}


@dataclass(frozen=True, slots=True)
class Budget:
    """``op.Budget(max_assumed=, max_invented=, allow=, enforce=, max_untrusted=)``.

    ``None`` means "default for the tool's side effect": ``max_assumed`` and ``max_untrusted`` 0 for
    write tools and no limit otherwise; ``max_invented`` no limit; ``enforce`` True for write tools,
    False (advisory) otherwise. ``allow`` replaces the default allow-list when given.
    """

    max_assumed: int | None = None
    max_invented: int | None = None
    allow: frozenset[str] | Iterable[str] | None = field(default=DEFAULT_ALLOW)
    enforce: bool | None = None
    max_untrusted: int | None = None

    def __post_init__(self) -> None:
        for name in ("max_assumed", "max_invented", "max_untrusted"):
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
        self,
        classification: Classification,
        side_effect: str,
        *,
        enforce_globally: bool = True,
        egress: frozenset[str] = frozenset(),
    ) -> Verdict:
        """Count the call's arguments against this budget and decide whether to block it. ``egress``:
        the tool's arguments that send data out (``@op.tool(egress=...)``), judged like a write's
        destination whatever the side effect: an assumed or untrusted one is a violation, enforced
        unless this budget says ``enforce=False``."""
        write = side_effect == "write"
        allow: frozenset[str] = self.allow  # type: ignore[assignment]  # normalised in __post_init__
        if classification.caller_named and allow is DEFAULT_ALLOW:  # ``**kwargs`` names: not the list's
            allow = allow - classification.caller_named
        if classification.destinations:  # free text whose value looks like a destination: not exempt
            allow = allow - classification.destinations
        max_assumed = self.max_assumed if self.max_assumed is not None else (0 if write else None)
        max_untrusted = self.max_untrusted if self.max_untrusted is not None else (0 if write else None)
        enforce = (self.enforce if self.enforce is not None else write) and enforce_globally
        vetted: frozenset[str] = allow & classification.references if classification.references else _NONE
        # taken from a source the user named (#44): accepted, or for a person to decide when this
        # budget counts it (a write's, or an egress argument)
        delegated = classification.delegated
        asked = classification.asked & egress
        if max_untrusted is not None and enforce:
            asked = asked | classification.asked
        count = count_arguments(
            [(a.name, a.kind) for a in classification.arguments],
            allow,
            vetted=vetted,
            approved=delegated | asked if delegated or asked else _NONE,
        )
        over = over_budget(count, _limits(max_assumed, self.max_invented, max_untrusted))
        short = classification.short
        violations = [
            f"{_RULES[kind]}:{name}={kind}{SHORT_VALUE_HINT if name in short else ''}"
            for kind in over
            for name in count.counted(kind)
        ]
        violations.extend(f"{RULE_FAULT}:{fault}" for fault in classification.faults)
        enforced = bool(violations) and enforce
        if egress:
            kinds = classification.kinds()
            outward = [
                f"{RULE_EGRESS}:{name}={kinds[name]}"
                for name in egress_unsourced(kinds.items(), egress - asked - delegated)
            ]
            if outward:
                violations.extend(outward)
                enforced = enforced or ((self.enforce is not False) and enforce_globally)
        return Verdict(
            assumed=len(count.assumed),
            invented=len(count.invented),
            max_assumed=max_assumed,
            max_invented=self.max_invented,
            violations=tuple(violations),
            blocked=enforced,
            allowed=count.allowed,
            untrusted=len(count.untrusted),
            max_untrusted=max_untrusted,
            egress=tuple(sorted(egress)),
            asked=tuple(sorted(asked)),
            delegated=tuple(sorted(delegated)),
        )


_NONE: frozenset[str] = frozenset()
_LIMITS: dict[tuple[int | None, int | None, int | None], Limits] = {}


def _limits(max_assumed: int | None, max_invented: int | None, max_untrusted: int | None) -> Limits:
    """One immutable ``Limits`` per triple (a few per process): not rebuilt on every call."""
    key = (max_assumed, max_invented, max_untrusted)
    limits = _LIMITS.get(key)
    if limits is None:
        limits = Limits(max_assumed, max_invented, max_untrusted)
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
    untrusted: int = 0
    max_untrusted: int | None = None
    egress: tuple[str, ...] = ()  # argument names the tool declared egress
    asked: tuple[str, ...] = ()  # delegated, not accepted: a person decides (``delegated:<name>`` asks)
    delegated: tuple[str, ...] = ()  # delegated and accepted: the user's words shaped the call

    def attributes(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            sc.BUDGET_ASSUMED: self.assumed,
            sc.BUDGET_INVENTED: self.invented,
            sc.BUDGET_UNTRUSTED: self.untrusted,
        }
        if self.allowed:
            out[sc.BUDGET_ALLOWED] = list(self.allowed)
        if self.egress:
            out[sc.BUDGET_EGRESS] = list(self.egress)
        if self.asked:
            out[sc.BUDGET_ASKED] = list(self.asked)
        if self.delegated:
            out[sc.BUDGET_DELEGATED] = list(self.delegated)
        if self.max_assumed is not None:
            out[sc.BUDGET_MAX_ASSUMED] = self.max_assumed
        if self.max_invented is not None:
            out[sc.BUDGET_MAX_INVENTED] = self.max_invented
        if self.max_untrusted is not None:
            out[sc.BUDGET_MAX_UNTRUSTED] = self.max_untrusted
        if self.violations:
            out[sc.VIOLATIONS] = list(self.violations)
        return out


__all__ = ["DEFAULT_ALLOW", "Budget", "Verdict"]
