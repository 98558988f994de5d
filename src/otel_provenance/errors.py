"""One exception tree for the whole package.

::

    OtelProvenanceError
     ├── ProvenanceError        (+ PermissionError)  a tool call blocked before its body ran
     ├── ConfigurationError     (+ ValueError)       bad argument or OTEL_PROVENANCE_* setting
     ├── TraceReadError         (+ ValueError)       unreadable trace input: names file, line, problem
     │    └── InvalidEvidenceError                   readable, but not evidence (duplicate ids, cycles)
     ├── ContractError          (+ ValueError)       a contract that does not parse: names line, column
     └── QueryError             (+ ConnectionError)  a trace backend (SigNoz) refused or failed

Each class also inherits the matching builtin so callers that already catch ``PermissionError`` or
``ValueError`` keep working. Messages name the problem and where it is, never a value of a tool
argument, tool result, prompt or model output.
"""

from __future__ import annotations

from collections.abc import Sequence


class OtelProvenanceError(Exception):
    """Base of every exception this package raises on purpose."""


class ProvenanceError(OtelProvenanceError, PermissionError):
    """A tool call was blocked before its body ran: over its provenance budget, against the run's
    contract (docs/guard.md), or by another check made before the call.

    ``violations`` holds strings like ``"max_assumed:path=assumed"`` or
    ``"contract:refund-once:DUPLICATE_SIDE_EFFECT"``: rule, argument name, kind or finding code —
    never a value.
    """

    def __init__(self, tool: str, violations: Sequence[str], message: str | None = None) -> None:
        self.tool = tool
        self.violations = tuple(violations)
        budget_only = all(v.split(":", 1)[0] in _BUDGET_RULES for v in self.violations)
        by = "provenance budget" if budget_only else "the guard"
        super().__init__(message or f"{tool}: blocked by {by} ({', '.join(self.violations)})")


_BUDGET_RULES = frozenset({"max_assumed", "max_invented", "max_untrusted", "egress", "provenance_fault"})


class ConfigurationError(OtelProvenanceError, ValueError):
    """An argument or environment setting is invalid."""


class TraceReadError(OtelProvenanceError, ValueError):
    """Trace input could not be read. ``source`` is the file (or URL), ``line`` is 1-based or None."""

    def __init__(self, source: str, problem: str, line: int | None = None) -> None:
        self.source = source
        self.line = line
        self.problem = problem
        where = f"{source}:{line}" if line is not None else source
        super().__init__(f"{where}: {problem}")


class InvalidEvidenceError(TraceReadError):
    """The input parsed, but cannot be evidence: duplicate span ids in a trace, a cycle, a self-parent."""


class ContractError(OtelProvenanceError, ValueError):
    """A contract file is invalid. ``line``/``column`` are 1-based when known."""

    def __init__(self, source: str, problem: str, line: int | None = None, column: int | None = None) -> None:
        self.source = source
        self.line = line
        self.column = column
        self.problem = problem
        where = source
        if line is not None:
            where += f":{line}"
            if column is not None:
                where += f":{column}"
        super().__init__(f"{where}: {problem}")


class QueryError(OtelProvenanceError, ConnectionError):
    """A trace backend query failed; the message says what to fix. Never contains credentials."""


__all__ = [
    "ConfigurationError",
    "ContractError",
    "InvalidEvidenceError",
    "OtelProvenanceError",
    "ProvenanceError",
    "QueryError",
    "TraceReadError",
]
