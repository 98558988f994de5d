"""Which part of each contract rule the guard decides before each call, and which when the run ends.

**Decided before each call** — the rules a prefix of the run can already break, whatever comes after:
``forbidden_spans``, the maxima of ``cardinality`` (its minimum waits for the end), ``retry_budgets``,
``forbidden_paths``, ``provenance_budgets``, ``numeric_budgets`` and the attribute rules
(``allowed_values``, ``attribute_constraints``) over attributes the call carries when it starts
(idempotency, side effect, data domain, argument kinds). A rule *blocks a call* when judging the
run so far plus that call fails it with a finding that names that call — so a call is never blocked
for what an earlier one did. The objection names the rule id and code (``contract:<id>:<CODE>``).

**Decided when the run ends** — everything else (``required_spans``, ``required_edges``,
``required_ancestry``, ``blocked_calls``, a ``cardinality`` minimum, attribute rules over attributes
set after the call, and — whole — a per-call rule whose selector tests one, ``agent.tool.status:
error``) is judged on the run's calls and the verdict recorded on the run's span
(``agent.guard.run.verdict``, ``agent.guard.run.failed``) and as a metric — never a raise after the
fact. A call-time rule is not judged again there: a call a person approved past it stands; one that
ran over it unenforced (``enforce=False``) fails the run (:meth:`.guard.RunGuard.judge_run`).
``approved_routes`` is judged offline only (:data:`OFFLINE_ONLY`).

The split is the rule types' own declaration (``RuleType.at_call``, ``RuleType.reads_attributes``),
read here once; ``tests/instrument/test_guard_rule_types.py`` ties the two.
"""

from __future__ import annotations

from dataclasses import replace
from types import MappingProxyType

from ... import semconv as sc
from ...offline.contracts.model import Rule
from ...offline.contracts.rules import REGISTRY
from ...offline.contracts.ruletype import AtCall
from ...offline.contracts.selectors import Selector

#: Rule types a prefix of a run can break for good (after any view :func:`at_call` takes of them),
#: what each reads, and which are judged offline only — all declared once, on the rule type
#: (``RuleType.at_call``, ``RuleType.reads_attributes``; ``tests/instrument/test_guard_rule_types.py``).
AT_CALL = frozenset(name for name, t in REGISTRY.items() if t.at_call in (AtCall.STEP, AtCall.RUN))
ATTRIBUTE_RULES = frozenset(name for name, t in REGISTRY.items() if t.reads_attributes)
OFFLINE_ONLY = frozenset(name for name, t in REGISTRY.items() if t.at_call is AtCall.OFFLINE)
#: Attributes every call carries when it starts (the rest — status, error type — are set after it).
CALL_TIME_ATTRIBUTES = frozenset(
    {
        sc.SIDE_EFFECT,
        sc.DATA_DOMAIN,
        sc.IDEMPOTENCY_PRESENT,
        sc.RETRY_NUMBER,
        sc.GEN_AI_TOOL_NAME,
        sc.GEN_AI_TOOL_TYPE,
        sc.RUN_ID,
        sc.BUDGET_ASSUMED,
        sc.BUDGET_INVENTED,
    }
)
#: What each rule type reads of the run, so that a call is judged on no more of the run than that (the
#: verdict on the call is the same; ``tests/instrument/test_guard_law.py`` holds it to the offline
#: evaluator on the whole run): the calls of the same step — a count, or a per-span rule (which reads
#: the call alone), or every call for one whose selector names no step; or the whole run so far — a path.
SCOPE_STEP = frozenset(name for name, t in REGISTRY.items() if t.at_call is AtCall.STEP)


def at_call(rule: Rule) -> Rule | None:
    """The part of ``rule`` a run so far can break, or None when only the whole run decides it."""
    if rule.type not in AT_CALL:
        return None
    if rule.type == "cardinality":
        params = dict(rule.params)
        high = params.pop("exact", None)
        params.pop("min", None)
        if high is not None:
            params["max"] = high
        if "max" not in params:
            return None
        return replace(rule, params=MappingProxyType(params))
    return rule


def at_end(rule: Rule, view: Rule | None) -> Rule | None:
    """The part of ``rule`` left for the run's end, given its call-time ``view``: none of what is
    decided before each call — a call a person let through it is not failed again there — so of a
    ``cardinality`` only its minimum (``exact`` is a minimum too); None when nothing is left. A
    rule the calls cannot be judged on when they start (:func:`decided_at_call`) is left whole."""
    if rule.type in OFFLINE_ONLY:
        return None
    if view is None or not decided_at_call(rule):
        return rule
    if view is rule:
        return None
    params = dict(rule.params)  # a cardinality: its maximum was decided at each call
    low = params.pop("exact", None)
    params.pop("max", None)
    if low is not None:
        params["min"] = low
    return replace(rule, params=MappingProxyType(params)) if params.get("min") else None


def decided_at_call(rule: Rule) -> bool:
    """Whether the call-time judgement of ``rule`` is all of it: not an attribute rule over an
    attribute set after the call, nor a per-call rule whose selector tests one (``agent.tool.status:
    error``: unknown when the call starts, so never the call a finding names) — those are judged
    again, whole, when the run ends."""
    if rule.type in ATTRIBUTE_RULES and not known_at_call(rule.params["attribute"]):
        return False
    if rule.type not in SCOPE_STEP:
        return True  # a path's selectors: judged before each call only (docs/guard.md)
    selectors = (v for v in rule.params.values() if isinstance(v, Selector))
    return all(known_at_call(key) for selector in selectors for key, _ in selector.attributes)


def known_at_call(attribute: str) -> bool:
    return attribute in CALL_TIME_ATTRIBUTES or attribute.startswith(sc.ARG_PREFIX)


def selected_step(rule: Rule) -> str | None:
    """The step key a call must have for the rule to name it (None: any call may be)."""
    selector = rule.params.get("to" if rule.type == "forbidden_paths" else "select")
    return None if selector is None else selector.step


__all__ = [
    "ATTRIBUTE_RULES",
    "AT_CALL",
    "CALL_TIME_ATTRIBUTES",
    "OFFLINE_ONLY",
    "SCOPE_STEP",
    "at_call",
    "at_end",
    "decided_at_call",
    "known_at_call",
    "selected_step",
]
