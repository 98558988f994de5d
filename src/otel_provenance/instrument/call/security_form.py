"""The decision on a tool span in the GenAI security conventions' form (``gen_ai.security.*``, proposal
names, status Development) and its ``gen_ai.security.finding`` events: rule names, never values."""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from typing import Any

from ... import semconv as sc
from .decision import Decision

#: ``gen_ai.security.risk.category`` of an objection, by its rule (the part before the first ``:``).
_RISK = {
    "max_untrusted": "prompt_injection",
    "egress": "sensitive_information_disclosure",
    "provenance_fault": "_OTHER",
}


def security_decision(decision: Decision, essential: Mapping[str, Any]) -> dict[str, Any]:
    """The decision in the GenAI conventions' security form (``gen_ai.security.*``), on the tool span
    itself: ``deny`` (blocked), ``warn`` (objections, advisory) or ``allow``. Rule names only."""
    kind = (
        sc.DECISION_DENY
        if decision.blocked
        else sc.DECISION_WARN
        if decision.violations
        else sc.DECISION_ALLOW
    )
    out: dict[str, Any] = {sc.SECURITY_DECISION_TYPE: kind, sc.GUARDIAN_NAME: sc.GUARDIAN}
    if decision.violations:  # what was objected to, and why (an allowed call: the decision alone)
        out[sc.SECURITY_TARGET_TYPE] = sc.TARGET_TOOL_CALL
        call_id = essential.get(sc.GEN_AI_TOOL_CALL_ID)
        if call_id is not None:
            out[sc.SECURITY_TARGET_ID] = call_id
        out[sc.SECURITY_DECISION_REASON], out[sc.SECURITY_POLICY_ID] = _reasons(tuple(decision.violations))
    return out


@lru_cache(maxsize=1024)
def _reasons(violations: tuple[str, ...]) -> tuple[str, str]:
    """``gen_ai.security.decision.reason`` and ``.policy.id`` of a decision's violations. A blocked
    call repeats the same violations call after call (#45): their rules are parsed once."""
    return ", ".join(dict.fromkeys(rule_of(r) for r in violations)), rule_of(violations[0])


def rule_of(reason: str) -> str:
    """``contract:<id>:<CODE>`` → ``contract:<id>``; ``max_assumed:<arg>=assumed`` → ``max_assumed``."""
    parts = reason.split(":")
    return ":".join(parts[:2]) if parts[0] == "contract" and len(parts) > 1 else parts[0]


def finding_event(reason: str, blocked: bool) -> dict[str, Any]:
    """One ``gen_ai.security.finding`` event: the objection's rule, category and severity, no value."""
    return dict(_finding(reason, blocked))


@lru_cache(maxsize=1024)
def _finding(reason: str, blocked: bool) -> tuple[tuple[str, Any], ...]:
    """:func:`finding_event`'s items, made once per reason (#45). The metadata is a tuple: the SDK
    stores a list attribute as a tuple anyway, and a tuple shared between calls cannot be changed."""
    rule = rule_of(reason)
    return (
        (sc.SECURITY_RISK_CATEGORY, _RISK.get(rule.split(":", 1)[0], "excessive_agency")),
        (sc.SECURITY_RISK_SEVERITY, "high" if blocked else "medium"),
        (sc.SECURITY_POLICY_ID, rule),
        (sc.SECURITY_RISK_METADATA, (reason,)),
    )


__all__ = ["finding_event", "rule_of", "security_decision"]
