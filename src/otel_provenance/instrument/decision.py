"""The decision before a tool call runs: may it run, and which rules did it break?

One place decides, for every caller: ``@op.tool`` and every client gate (through
:class:`.lifecycle.ToolCall`) before the call, and the span processor for other libraries' tool
spans after it (:mod:`.thirdparty`, which passes ``enforce=False``: that tool has already run). The
law itself — counting arguments against a budget — is :meth:`.budget.Budget.check`; this module
turns its verdict, or the failure of the machinery that should have given one, into a
:class:`Decision`. A later rule checked before the call (a contract's) joins the decision here.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

from .. import semconv as sc
from .budget import RULE_FAULT, Budget, Verdict
from .classify import Classification


class Decision(NamedTuple):
    """Whether a call may run, and why not. ``violations`` name rules, arguments and kinds — never
    values. ``verdict`` is the budget's, or None when the machinery failed before giving one."""

    violations: tuple[str, ...]
    blocked: bool
    verdict: Verdict | None = None

    def attributes(self) -> Mapping[str, Any]:
        """The decision's span attributes: ``agent.budget.*`` and ``agent.violations`` (when any)."""
        if self.verdict is not None:
            return self.verdict.attributes()
        return {sc.VIOLATIONS: list(self.violations)} if self.violations else {}


def decide(classification: Classification, *, budget: Budget, side_effect: str, enforce: bool) -> Decision:
    """The budget's verdict on a classified call. ``enforce=False`` only tags: nothing is blocked."""
    verdict = budget.check(classification, side_effect, enforce_globally=enforce)
    return Decision(verdict.violations, verdict.blocked, verdict)


def decide_fault(error: BaseException, *, side_effect: str) -> Decision:
    """Fail closed when the provenance machinery failed: a write is blocked, any other call runs, and
    both record ``provenance_fault:<ErrorType>``. Whatever the enforcement setting: the settings may be
    what failed."""
    return Decision((f"{RULE_FAULT}:{type(error).__name__}",), side_effect == "write")


__all__ = ["Decision", "decide", "decide_fault"]
