"""The decision before a tool call runs: may it run, and which rules did it break?

One place decides, for every caller: ``@op.tool`` and every client gate (through
:class:`.lifecycle.ToolCall`) before the call, and the span processor for other libraries' tool
spans after it (:mod:`.thirdparty`, which passes ``enforce=False``: that tool has already run). The
law itself — counting arguments against a budget — is :meth:`.budget.Budget.check`; this module
turns its verdict, or the failure of the machinery that should have given one, into a
:class:`Decision`. Every other source of evidence consulted before the call — the contract a person
approved (:mod:`.guard`), argument-value policies, a tool that always needs approval — hands its
:class:`Objection` values to :func:`join`: one decision, whatever raised the objection.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, NamedTuple

from ... import semconv as sc
from ..evidence.classify import Classification
from .budget import RULE_DELEGATED, RULE_FAULT, Budget, Verdict

RULE_NEEDS_APPROVAL = "needs_approval"  # an ask of the tool's own: needs_approval:<tool>
RULE_APPROVAL = "approval"  # a person was asked and did not approve: approval:<outcome>


class Objection(NamedTuple):
    """One reason, found before the call, why it should not run as it is. ``reason`` is
    ``<rule>:<detail>`` — a rule id, a finding code, argument names — never a value. ``ask``: a person
    may approve the call instead of it being blocked."""

    reason: str
    ask: bool = False


class Decision(NamedTuple):
    """Whether a call may run, and why not. ``violations`` name rules, arguments and kinds — never
    values. ``verdict`` is the budget's, or None when the machinery failed before giving one.
    ``asks`` are the objections a person may overrule: the call runs only if they approve it
    (:func:`answered`: approved, they are gone; denied, they stay beside the block)."""

    violations: tuple[str, ...]
    blocked: bool
    verdict: Verdict | None = None
    asks: tuple[str, ...] = ()

    def attributes(self) -> Mapping[str, Any]:
        """The decision's span attributes: ``agent.budget.*`` and ``agent.violations`` (when any)."""
        out: dict[str, Any] = dict(self.verdict.attributes()) if self.verdict is not None else {}
        if self.violations:
            out[sc.VIOLATIONS] = list(self.violations)
        return out


def decide(
    classification: Classification,
    *,
    budget: Budget,
    side_effect: str,
    enforce: bool,
    egress: frozenset[str] = frozenset(),
) -> Decision:
    """The budget's verdict on a classified call. ``enforce=False`` only tags: nothing is blocked.
    ``egress``: the tool's arguments that send data out, judged like a write's destination."""
    if egress:
        verdict = budget.check(classification, side_effect, enforce_globally=enforce, egress=egress)
    else:  # a Budget subclass of the application's may not take ``egress``
        verdict = budget.check(classification, side_effect, enforce_globally=enforce)
    decision = Decision(verdict.violations, verdict.blocked, verdict)
    asked = getattr(verdict, "asked", ())
    if asked:  # destinations the user delegated: a person sees each value and its source
        asks = [Objection(f"{RULE_DELEGATED}:{name}", ask=True) for name in asked]
        decision = join(decision, asks, enforce=enforce)
    return decision


def join(decision: Decision, objections: Iterable[Objection], *, enforce: bool) -> Decision:
    """``decision`` with ``objections`` added. An objection blocks when ``enforce`` (the global setting:
    ``False`` only tags); one a person may overrule is an ask instead, unless the call is blocked
    anyway. The reasons keep their order and are listed once."""
    blocking = [o.reason for o in objections if not o.ask]
    asking = [o.reason for o in objections if o.ask]
    if not blocking and not asking:
        return decision
    violations = tuple(dict.fromkeys((*decision.violations, *blocking, *asking)))
    blocked = decision.blocked or (enforce and bool(blocking))
    asks = tuple(dict.fromkeys(asking)) if enforce and not blocked else ()
    return Decision(violations, blocked, decision.verdict, asks)


def answered(decision: Decision, outcome: str) -> Decision:
    """``decision`` once a person was asked about its asks. ``approved``: the call runs, and the asks
    are no longer violations (a person overruled them). Any other outcome blocks it, with
    ``approval:<outcome>`` added to the violations; the asks stay, naming what was not approved."""
    if outcome == sc.APPROVAL_APPROVED:
        rest = tuple(v for v in decision.violations if v not in decision.asks)
        return Decision(rest, decision.blocked, decision.verdict)
    violations = (*decision.violations, f"{RULE_APPROVAL}:{outcome}")
    return Decision(violations, True, decision.verdict, decision.asks)


def decide_fault(error: BaseException, *, side_effect: str) -> Decision:
    """Fail closed when the provenance machinery failed: a write is blocked, any other call runs, and
    both record ``provenance_fault:<ErrorType>``. Whatever the enforcement setting: the settings may be
    what failed."""
    return Decision((f"{RULE_FAULT}:{type(error).__name__}",), side_effect == "write")


__all__ = [
    "RULE_APPROVAL",
    "RULE_NEEDS_APPROVAL",
    "Decision",
    "Objection",
    "answered",
    "decide",
    "decide_fault",
    "join",
]
