"""What a rule type is: the one declaration the DSL, the evaluator, the gate and the schema test read.

Each rule module declares its types as ``RuleType`` values; ``contracts.rules.REGISTRY`` collects
them (like ``jsonschema``'s one dict of keyword → function). Adding a rule type means a checker, a
``RuleType`` in its module, its ``$defs`` entry in ``schema.json`` and its paragraph in
docs/contracts.md — a test keeps the last two in step with the registry.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .model import Rule
from .outcomes import Checker

Fail = Callable[[str, str], Exception]
"""``fail(key, problem)`` → the contract error to raise, located at ``key`` of the rule."""


class Absence(enum.Enum):
    """How the gate judges a rule whose selected step no run of the release contains."""

    JUDGED = "judged"  # the rule itself fails a run that lacks the step (a minimum count)
    VACUOUS = "vacuous"  # the rule would pass vacuously: the release-level verdict is insufficient
    IRRELEVANT = "irrelevant"  # absence is the point (forbidden) or the rule selects no single step


class AtCall(enum.Enum):
    """When the call-time guard (``instrument/call/guard.py``) can decide a rule type, and on what."""

    STEP = "step"  # before a call, from the calls of its step (a count) or the call alone (per span)
    RUN = "run"  # before a call, from the whole run so far (a path)
    END = "end"  # only when the run ends (a minimum, a required edge)
    OFFLINE = "offline"  # offline only (a route is drawn over every span of the trace)


Passes = Callable[[Any], bool]
"""``passes(evidence)``: true only when the rule's checker would yield nothing on that run."""


@dataclass(frozen=True, slots=True)
class RuleType:
    """``compile(rule)``, when given, turns a rule into a :data:`Passes` test (or None for a rule it
    cannot shortcut): the evaluator asks it first and runs the checker only when it is false, so the
    checker stays the one place findings are written while most runs — those that pass — are decided
    from counts the evidence shares among all rules (``RunEvidence.tally``)."""

    name: str
    checker: Checker
    default_code: str
    absence: Callable[[Rule], Absence]
    validate: Callable[[dict[str, Any], Fail], None] | None = None
    compile: Callable[[Rule], Passes | None] | None = None
    #: what the call-time guard makes of the type (one table, read by the guard, #45)
    at_call: AtCall = AtCall.END
    #: the type judges span attributes: at call time, only those a call starts with
    reads_attributes: bool = False
    #: the parameter (``select``, ``to``) whose selector's step, when a run does not take it, leaves the
    #: checker nothing to find (no call to judge, nothing undecided): the evaluator passes such a run
    #: without asking the rule
    passes_without_step: str | None = None


def always(absence: Absence) -> Callable[[Rule], Absence]:
    return lambda rule: absence
