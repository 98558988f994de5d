"""The contract at call time: what a person approved stops the bad call before it runs.

The same contract file the gate reads (``op.configure(contract=...)`` or ``op.run(contract=...)``) is
judged here by the same code — :func:`otel_provenance.offline.evaluate.evaluate_rule` over the
offline span model — on the run so far plus the call about to be made. Each call the run makes is
kept as the span the offline reader will build from its export (the same attributes; a blocked call
``agent.tool.status=blocked``); a call still running counts as having happened, so two refunds
started together are still two.

**Decided before each call** — the rules a prefix of the run can already break, whatever comes after:
``forbidden_spans``, the maxima of ``cardinality`` (its minimum waits for the end), ``retry_budgets``,
``forbidden_paths``, ``provenance_budgets``, ``numeric_budgets`` and the attribute rules
(``allowed_values``, ``attribute_constraints``) over attributes the call carries when it starts
(idempotency, side effect, data domain, argument kinds). A rule *blocks a call* when judging the
run so far plus that call fails it with a finding that names that call — so a call is never blocked
for what an earlier one did. The objection names the rule id and code (``contract:<id>:<CODE>``).

**Decided when the run ends** — everything else (``required_spans``, ``required_edges``,
``required_ancestry``, ``approved_routes``, ``blocked_calls``, a ``cardinality`` minimum, attribute
rules over attributes set after the call): the whole contract is judged on the run's calls and the
verdict recorded on the run's span (``agent.guard.run.verdict``, ``agent.guard.run.failed``) and as
a metric — never a raise after the fact.

The run seen here is the run's tool calls under one root, in the order they were decided; spans of
other instrumentations (model calls, framework spans) are not in it. A rule about them is judged
offline only.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from types import MappingProxyType
from typing import Any

from .. import semconv as sc
from ..errors import ConfigurationError, ContractError
from ..offline.contracts.dsl import load_contract
from ..offline.contracts.evidence import RunEvidence
from ..offline.contracts.model import Contract, Rule
from ..offline.evaluate import RunResult, evaluate_rule, evaluate_safely
from ..offline.model import Attributes, Run, Span, Status, StatusCode
from ..offline.outcome import Outcome
from .decision import Objection
from .policy import policies_from_contract, policy_objections

#: Rule types a prefix of a run can break for good (after any view :func:`_at_call` takes of them).
AT_CALL = frozenset(
    {
        "forbidden_spans",
        "cardinality",
        "retry_budgets",
        "forbidden_paths",
        "provenance_budgets",
        "numeric_budgets",
        "allowed_values",
        "attribute_constraints",
    }
)
_ATTRIBUTE_RULES = frozenset({"allowed_values", "attribute_constraints"})
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
#: the call alone); or the whole run so far — a path.
_SCOPE_STEP = frozenset(
    {
        "forbidden_spans",
        "cardinality",
        "retry_budgets",
        "provenance_budgets",
        "allowed_values",
        "attribute_constraints",
    }
)
_TRACE = "0" * 31 + "1"
_ROOT = "f" * 16
_RUNNING = 2**63 - 1  # the end of a call still running: it happens before nothing
REASON_PREFIX = "contract"


def _at_call(rule: Rule) -> Rule | None:
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


def _decided_at_call(rule: Rule) -> bool:
    """Whether the call-time judgement of ``rule`` is all of it: not an attribute rule over an
    attribute set after the call (judged again when the run ends)."""
    if rule.type not in _ATTRIBUTE_RULES:
        return True
    attribute = rule.params["attribute"]
    return attribute in CALL_TIME_ATTRIBUTES or attribute.startswith(sc.ARG_PREFIX)


def _selected_step(rule: Rule) -> str | None:
    """The step a call must be for the rule to name it (None: any call may be)."""
    selector = rule.params.get("to" if rule.type == "forbidden_paths" else "select")
    return None if selector is None else selector.step


class ContractGuard:
    """A loaded contract, split once into the rules decided at each call and the whole contract
    judged when a run ends. Shared by every run (``op.configure``) or made for one (``op.run``)."""

    __slots__ = ("_by_step", "_for_any", "at_call", "at_end", "contract", "name", "policies")

    def __init__(self, contract: Contract) -> None:
        self.contract = contract
        self.policies = policies_from_contract(contract)  # the contract's argument-value policies
        # the contract's name and the start of its digest: which reviewed version judged the run
        self.name = f"{contract.name}@{contract.digest.removeprefix('sha256:')[:12]}"
        at_call = [(rule, view) for rule in contract.rules if (view := _at_call(rule)) is not None]
        self.at_call: tuple[tuple[Rule, Rule], ...] = tuple(at_call)
        whole = {rule.id for rule, view in at_call if view is rule and _decided_at_call(rule)}
        self.at_end = replace(contract, rules=tuple(r for r in contract.rules if r.id not in whole))
        self._for_any = tuple(pair for pair in at_call if _selected_step(pair[1]) is None)
        self._by_step: dict[str, tuple[tuple[Rule, Rule], ...]] = {}
        for pair in at_call:
            step = _selected_step(pair[1])
            if step is not None:
                self._by_step[step] = (*self._by_step.get(step, ()), pair)

    def rules_for(self, step: str | None) -> tuple[tuple[Rule, Rule], ...]:
        """The (rule, call-time view) pairs that can name a call of ``step``, in contract order."""
        named = self._by_step.get(step, ()) if step is not None else ()
        if not self._for_any:
            return named
        order = {rule.id: n for n, (rule, _) in enumerate(self.at_call)}
        return tuple(sorted((*named, *self._for_any), key=lambda pair: order[pair[0].id]))

    @classmethod
    def load(cls, contract: str | os.PathLike[str] | Contract | ContractGuard, where: str) -> ContractGuard:
        """A guard for ``contract``: a path to a contract file, or a parsed contract. A contract that
        cannot be read is a :class:`ConfigurationError` naming ``where`` and the contract's problem."""
        if isinstance(contract, ContractGuard):
            return contract
        if isinstance(contract, Contract):
            return cls(contract)
        if not isinstance(contract, str | os.PathLike):
            raise ConfigurationError(f"{where}(contract=...): expected a contract file path")
        try:
            return cls(load_contract(Path(contract)))
        except ContractError as exc:
            raise ConfigurationError(f"{where}(contract=...): {exc}") from None

    def for_run(self, run_id: str) -> RunGuard:
        return RunGuard(self, run_id)


class RunGuard:
    """One run's calls as the offline model sees them, and the contract judged on them."""

    __slots__ = ("_calls", "_lock", "_root", "_spans", "guard", "run_id")

    def __init__(self, guard: ContractGuard, run_id: str) -> None:
        self.guard = guard
        self.run_id = run_id
        self._lock = threading.Lock()
        self._spans: list[Span] = []
        self._calls: dict[int, int] = {}  # id(ToolCall) -> index of its span in _spans
        root_attributes = {sc.GEN_AI_OPERATION_NAME: sc.INVOKE_AGENT, sc.RUN_ID: run_id}
        self._root = Span(
            _TRACE,
            _ROOT,
            None,
            sc.INVOKE_AGENT,
            start_ns=1,
            end_ns=_RUNNING,
            attributes=Attributes(root_attributes),
        )

    # -- before each call ---------------------------------------------------------------------------
    def objections(self, call: Any) -> list[Objection]:
        """The contract's objections to ``call`` (a :class:`.lifecycle.ToolCall`, bound, classified and
        budgeted). The call joins the run here, as running; :meth:`ended` records how it ended."""
        policies = self.guard.policies.get(call.spec.name)
        found = policy_objections(call, policies) if policies else []
        attributes = _call_attributes(call)
        with self._lock:
            span_id = format(len(self._spans) + 1, "016x")
            now = max(time.time_ns(), self._spans[-1].start_ns + 1 if self._spans else 2)
            candidate = Span(
                _TRACE, span_id, _ROOT, call.spec.span_name, start_ns=now, end_ns=_RUNNING,
                attributes=Attributes(attributes),
            )  # fmt: skip
            found.extend(self._judge(candidate))
            self._calls[id(call)] = len(self._spans)
            self._spans.append(candidate)
        return found

    def _judge(self, candidate: Span) -> list[Objection]:
        step = candidate.tool_name
        rules = self.guard.rules_for(step)
        if not rules:
            return []
        evidence: dict[str, RunEvidence] = {}

        def of(scope: str) -> RunEvidence:
            if scope not in evidence:
                if scope == "step":
                    same = (s for s in self._spans if s.tool_name == step)
                    spans: tuple[Span, ...] = (self._root, *same, candidate)
                else:
                    spans = (self._root, *self._spans, candidate)
                evidence[scope] = RunEvidence(Run(self.run_id, spans))
            return evidence[scope]

        found: list[Objection] = []
        for rule, view in rules:
            if view.type in _ATTRIBUTE_RULES and view.params["attribute"] not in candidate.attributes:
                continue  # an attribute set after the call: judged when the run ends
            scope = "step" if view.type in _SCOPE_STEP else "run"
            result = evaluate_rule(view, of(scope))
            if result.status is not Outcome.FAIL:
                continue
            if any(
                candidate.span_id in witness.span_ids
                for finding in result.findings
                if finding.status is Outcome.FAIL
                for witness in finding.witnesses
            ):
                ask = rule.params.get("on_violation") == "ask"
                found.append(Objection(f"{REASON_PREFIX}:{rule.id}:{rule.code}", ask))
        return found

    # -- after each call ----------------------------------------------------------------------------
    def ended(self, call: Any, status: str, error_type: str | None = None) -> None:
        """Record how ``call`` ended (``ok`` / ``error`` / ``blocked``), as its exported span says."""
        with self._lock:
            index = self._calls.pop(id(call), None)
            if index is None:
                return
            span = self._spans[index]
            attributes = dict(span.attributes.items_unordered())
            attributes[sc.TOOL_STATUS] = status
            if error_type is not None:
                attributes[sc.ERROR_TYPE] = error_type
            violations = call.decision.violations
            if violations:
                attributes[sc.VIOLATIONS] = tuple(violations)
            code = StatusCode.UNSET if status == sc.TOOL_STATUS_OK else StatusCode.ERROR
            end = max(time.time_ns(), span.start_ns)
            self._spans[index] = replace(
                span, attributes=Attributes(attributes), end_ns=end, status=Status(code)
            )

    # -- when the run ends --------------------------------------------------------------------------
    def judge_run(self) -> RunResult:
        """The rules only the whole run decides, on the run's calls (those still running count as
        running): the rest were judged before each call, and named on the call's span."""
        with self._lock:
            spans = (replace(self._root, end_ns=max(time.time_ns(), 2)), *self._spans)
        return evaluate_safely(Run(self.run_id, spans), self.guard.at_end)


def _call_attributes(call: Any) -> dict[str, Any]:
    """The attributes the call's span starts with, as the offline reader will read them."""
    attributes: dict[str, Any] = {}
    for source in (call.attributes, call.essential, call.spec.span_attributes):
        for key, value in source.items():
            attributes[key] = tuple(value) if isinstance(value, list) else value
    attributes[sc.GEN_AI_TOOL_NAME] = call.spec.name
    attributes[sc.GEN_AI_OPERATION_NAME] = sc.EXECUTE_TOOL
    return attributes


def run_verdict_attributes(result: RunResult) -> Mapping[str, Any]:
    """``agent.guard.run.verdict`` and ``agent.guard.run.failed`` (the rule ids that did not pass)."""
    failed = [rule.rule_id for rule in result.rules if rule.status is not Outcome.PASS]
    out: dict[str, Any] = {sc.GUARD_RUN_VERDICT: str(result.status)}
    if failed:
        out[sc.GUARD_RUN_FAILED] = failed
    return out


__all__ = ["AT_CALL", "ContractGuard", "RunGuard", "run_verdict_attributes"]
