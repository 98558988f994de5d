"""The contract at call time: what a person approved stops the bad call before it runs.

The same contract file the gate reads (``op.configure(contract=...)`` or ``op.run(contract=...)``) is
judged here by the same code — :func:`otel_provenance.offline.evaluate.evaluate_rule` over the
offline span model — on the run so far plus the call about to be made. Each call the run makes is
kept as the span the offline reader will build from its export (the same attributes; a blocked call
``agent.tool.status=blocked``); a call still running counts as having happened, so two refunds
started together are still two.

Which part of each rule is decided before each call and which when the run ends:
:mod:`.rule_views` (and docs/guard.md's table).

The run seen here is the run's tool calls under one root, in the order they were decided; spans of
other instrumentations (model calls, framework spans) are not in it. A rule about them is judged
offline only.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterable, Mapping
from dataclasses import replace
from pathlib import Path
from types import MappingProxyType
from typing import Any, NamedTuple

from ... import semconv as sc
from ...errors import ConfigurationError, ContractError
from ...offline.contracts.dsl import load_contract
from ...offline.contracts.evidence import RunEvidence
from ...offline.contracts.model import Contract, Rule
from ...offline.contracts.selectors import Selector
from ...offline.evaluate import evaluate_rule, evaluate_safely
from ...offline.model import Attributes, Run, Span, Status, StatusCode
from ...offline.outcome import Outcome, worst
from ...offline.stepkey import step_key
from .decision import Objection
from .policy import policies_from_contract, policy_objections
from .rule_views import ATTRIBUTE_RULES, SCOPE_STEP, at_call, at_end, selected_step

_TRACE = "0" * 31 + "1"
_ROOT = "f" * 16
_RUNNING = 2**63 - 1  # the end of a call still running: it happens before nothing
REASON_PREFIX = "contract"
_REASON = REASON_PREFIX + ":"
#: the run's span when nothing else is known of it: (name, attributes)
_AGENT: tuple[str, Mapping[str, Any]] = (sc.INVOKE_AGENT, MappingProxyType({}))


class ContractGuard:
    """A loaded contract, split once into the rules decided at each call and the whole contract
    judged when a run ends. Shared by every run (``op.configure``) or made for one (``op.run``)."""

    __slots__ = (
        "_by_step",
        "_dropped",
        "_for_any",
        "_ids",
        "_keep",
        "_memo",
        "at_end",
        "name",
        "policies",
        "timed",
    )

    def __init__(self, contract: Contract) -> None:
        self.policies = policies_from_contract(contract)  # the contract's argument-value policies
        # the contract's name and the start of its digest: which reviewed version judged the run
        self.name = f"{contract.name}@{contract.digest.removeprefix('sha256:')[:12]}"
        self._ids = frozenset(rule.id for rule in contract.rules)
        views = [(rule, at_call(rule)) for rule in contract.rules]
        decided = [(rule, view) for rule, view in views if view is not None]
        ends = (end for rule, view in views if (end := at_end(rule, view)) is not None)
        self.at_end = replace(contract, rules=tuple(ends))
        # judged again on the calls' real times when the run ends (:meth:`RunGuard.judge_run`)
        self.timed = replace(contract, rules=tuple(r for r, view in decided if "duration" in view.params))
        self._keep = _mentioned(contract)  # volatile keys a rule of this contract reads after all
        self._dropped: dict[str, bool] = {}  # attribute key -> whether project() leaves it out
        self._memo: dict[tuple, Any] = {}  # judgements of calls and runs alike in what rules read
        # per step, the pairs that can name a call of it, in contract order: worked out once here
        self._for_any = tuple(pair for pair in decided if selected_step(pair[1]) is None)
        steps = {step for _, view in decided if (step := selected_step(view)) is not None}
        self._by_step: dict[str, tuple[tuple[Rule, Rule], ...]] = {
            step: tuple(pair for pair in decided if selected_step(pair[1]) in (step, None)) for step in steps
        }

    def rule_ids(self, reasons: Iterable[str]) -> set[str]:
        """The ids of this contract's rules among objections' ``reasons`` (``contract:<id>:<code>``;
        an id holds no colon): an enclosing run's contract, a policy or a budget names none of them."""
        named = {r.split(":")[1] for r in reasons if r.startswith(_REASON) and r.count(":") == 2}
        return named & self._ids

    def rules_for(self, step: str | None) -> tuple[tuple[Rule, Rule], ...]:
        """The (rule, call-time view) pairs that can name a call of ``step``, in contract order."""
        return self._by_step.get(step, self._for_any) if step is not None else self._for_any

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

    def project(self, attributes: Attributes) -> Attributes:
        """``attributes`` without the per-call identifiers no rule of this contract reads (call and
        run ids, digests, where a value was found): what a count or a per-span rule can see. Calls
        alike in everything else are judged alike, so the judgement is kept (:meth:`judge_counts`)."""
        dropped = self._dropped
        out = {}
        for key, value in attributes.items_unordered():
            drop = dropped.get(key)
            if drop is None:
                drop = key not in self._keep and _volatile(key)
                if len(dropped) < _MEMO_SIZE:
                    dropped[key] = drop
            if not drop:
                out[key] = value
        return Attributes.adopt(out)

    def judge_whole(
        self, calls: tuple[Attributes, ...], root: tuple[str, Mapping[str, Any]] = _AGENT
    ) -> RunVerdict:
        """The rules only the whole run decides, on a run of calls with (projected) attributes, in
        the order they were decided, made under ``root``, the run's span (name, attributes): the one
        ``op.run`` opened (``invoke_agent ticket-triage``) or the caller's it nests under, which a
        rule may name as the calls' parent. They read counts, attributes and parents, never times,
        so a run of calls alike in all of that is judged once (bounded)."""
        name, attributes = root
        kept = {key: value for key, value in attributes.items() if key in self._keep}  # what rules name
        root_span = Span(
            _TRACE, _ROOT, None, name, start_ns=1, end_ns=_RUNNING,
            attributes=Attributes({sc.GEN_AI_OPERATION_NAME: sc.INVOKE_AGENT, **kept}),
        )  # fmt: skip
        key = ("run", name, root_span.attributes, calls)
        verdict = self._memo.get(key)
        if verdict is None:
            result = evaluate_safely(_flat_run(calls, root_span), self.at_end)
            failed = tuple(rule.rule_id for rule in result.rules if rule.status is not Outcome.PASS)
            verdict = RunVerdict(result.status, failed)
            self.remember(key, verdict)
        return verdict  # type: ignore[return-value]

    def remembered(self, key: tuple | None) -> Any:
        """A judgement kept under ``key`` (None when there is none, or no key)."""
        return self._memo.get(key) if key is not None else None

    def remember(self, key: tuple, value: Any) -> None:
        if len(self._memo) >= _MEMO_SIZE:
            self._memo.clear()
        self._memo[key] = value

    def judge_counts(
        self, step: str | None, same: tuple[Attributes, ...], candidate: Attributes, rules: list
    ) -> tuple[Objection, ...]:
        """The objections of ``rules`` — counts and per-span rules, which read only the calls of the
        candidate's step and no time — to a call with (projected) ``candidate`` attributes after calls
        of its step with ``same``. Judged once per distinct case and kept (bounded)."""
        key = (step, same, candidate)
        found = self._memo.get(key)
        if found is None:
            run = _flat_run((*same, candidate))
            found = tuple(_objections(rules, RunEvidence(run), run.spans[-1]))
            self.remember(key, found)
        return found  # type: ignore[return-value]


class RunGuard:
    """One run's calls as the offline model sees them, and the contract judged on them."""

    __slots__ = (
        "_before",
        "_calls",
        "_ended",
        "_lock",
        "_projected",
        "_root",
        "_spans",
        "_steps",
        "_unenforced",
        "guard",
        "outer",
        "run_id",
    )

    def __init__(self, guard: ContractGuard, run_id: str) -> None:
        self.guard = guard
        self.run_id = run_id
        # the enclosing run's guard, for a nested run naming a contract of its own: both judge its calls
        self.outer: RunGuard | None = None
        self._lock = threading.Lock()
        self._spans: list[Span] = []
        self._steps: list[str] = []  # each span's step key, as selectors name steps
        self._projected: list[Attributes] = []  # each span's attributes as counts see them
        self._ended: set[int] = set()  # indices of the calls that have ended
        self._before: list[frozenset[int]] = []  # per call: the calls that had ended when it began
        self._calls: dict[int, int] = {}  # id(ToolCall) -> index of its span in _spans
        self._unenforced: set[str] = set()  # ids of the rules a call ran over, advisory only
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
                attributes=Attributes.adopt(attributes),
            )  # fmt: skip
            projected = self.guard.project(candidate.attributes)
            # the step as the offline evaluator names it: the tool's name with volatile parts taken
            # out (``billing.v20240620.refund`` is ``billing.v{id}.refund``), which selectors name
            step = step_key(candidate)
            found.extend(self._judge(candidate, projected, step))
            self._calls[id(call)] = len(self._spans)
            self._spans.append(candidate)
            self._steps.append(step)
            self._projected.append(projected)
            self._before.append(frozenset(self._ended))
        if self.outer is not None:
            found.extend(self.outer.objections(call))
        return found

    def _judge(self, candidate: Span, projected: Attributes, step: str) -> list[Objection]:
        counts, paths, timed = [], [], []
        for rule, view in self.guard.rules_for(step):
            if view.type in ATTRIBUTE_RULES and view.params["attribute"] not in candidate.attributes:
                continue  # an attribute set after the call: judged when the run ends
            if view.type in SCOPE_STEP:
                counts.append((rule, view))
            else:
                (timed if "duration" in view.params else paths).append((rule, view))
        found: list[Objection] = []
        if counts:
            # the calls a count can select: those of the candidate's step, or every call when a rule
            # selects by attributes alone (``select: {attributes: {agent.side_effect: write}}``)
            every = any(selected_step(view) is None for _, view in counts)
            calls = zip(self._steps, self._projected, strict=True)
            same = tuple(a for s, a in calls if every or s == step)
            found.extend(self.guard.judge_counts(step, same, projected, counts))
        if paths:
            # A path reads the order of calls too: which had ended when each began. Runs alike in
            # that and in what the rules read are judged once.
            order = tuple(zip(self._projected, self._before, strict=True))
            key = ("path", step, order, projected, frozenset(self._ended))
            judged = self.guard.remembered(key)
            if judged is None:
                run = Run(self.run_id, (self._root, *self._spans, candidate))
                judged = tuple(_objections(paths, RunEvidence(run), candidate))
                self.guard.remember(key, judged)
            found.extend(judged)
        if timed:  # a numeric budget over durations: judged every time, on the time spent so far
            run = self._so_far(candidate.start_ns, replace(candidate, end_ns=candidate.start_ns))
            found.extend(_objections(timed, RunEvidence(run), candidate))
        return found

    def _so_far(self, now: int, *candidate: Span) -> Run:
        """The run with the time its calls have taken until ``now``: a call still running has run
        until now, the candidate (and the run's own span, whose start is not known here) for no time
        yet. A lower bound of what the run will have spent, so a duration budget blocks a call only
        when the run has already spent more than it allows, never for time not yet spent."""
        spans = [replace(s, end_ns=now) if s.end_ns == _RUNNING else s for s in self._spans]
        root = replace(self._root, start_ns=now, end_ns=now)
        return Run(self.run_id, (root, *spans, *candidate))

    # -- after each call ----------------------------------------------------------------------------
    def ended(self, call: Any, status: str, error_type: str | None = None) -> None:
        """Record how ``call`` ended (``ok`` / ``error`` / ``blocked``), as its exported span says."""
        if self.outer is not None:
            self.outer.ended(call, status, error_type)
        with self._lock:
            index = self._calls.pop(id(call), None)
            if index is None:
                return
            span = self._spans[index]
            changes: dict[str, Any] = {sc.TOOL_STATUS: status}
            if error_type is not None:
                changes[sc.ERROR_TYPE] = error_type
            violations = call.decision.violations
            if violations:
                changes[sc.VIOLATIONS] = tuple(violations)
                if status != sc.TOOL_STATUS_BLOCKED:  # it ran over them: advisory, or nobody enforced them
                    self._unenforced.update(self.guard.rule_ids(violations))
            code = StatusCode.UNSET if status == sc.TOOL_STATUS_OK else StatusCode.ERROR
            self._spans[index] = Span(
                span.trace_id, span.span_id, span.parent_span_id, span.name,
                start_ns=span.start_ns, end_ns=max(time.time_ns(), span.start_ns), status=Status(code),
                attributes=Attributes.adopt({**dict(span.attributes.items_unordered()), **changes}),
            )  # fmt: skip
            self._ended.add(index)
            projected = self._projected[index]  # the changes are no per-call identifiers
            self._projected[index] = Attributes.adopt({**dict(projected.items_unordered()), **changes})

    # -- when the run ends --------------------------------------------------------------------------
    def judge_run(self, root: tuple[str, Mapping[str, Any]] = _AGENT) -> RunVerdict:
        """The rules only the whole run decides, on the run's calls (those still running count as
        running) under ``root``, the run's span (name, attributes): the rest were judged before each
        call, and named on the call's span — but for a duration budget, which the calls' time decides
        only once they have ended. A call-time rule a call ran over without it being enforced
        (``enforce=False``: the objection was advisory) fails the run: nobody decided otherwise; one
        a person approved the call past does not."""
        with self._lock:
            calls = tuple(self._projected)
            timed = self.guard.timed
            run = self._so_far(time.time_ns()) if timed.rules else None
            failed = set(self._unenforced)
        verdict = self.guard.judge_whole(calls, root)
        statuses = {verdict.status, Outcome.FAIL.decision if failed else Outcome.PASS.decision}
        if run is not None:
            # a duration budget is judged again on the time the calls took: the last one may overrun it
            result = evaluate_safely(run, timed)
            failed.update(rule.rule_id for rule in result.rules if rule.status is not Outcome.PASS)
            statuses.add(result.status)
        if not failed:
            return verdict
        status = worst({Outcome.of(s) for s in statuses}).decision
        return RunVerdict(status, tuple(sorted(failed.union(verdict.failed))))


def _objections(rules: list, evidence: RunEvidence, candidate: Span) -> list[Objection]:
    """An objection for each rule that fails on ``evidence`` with a finding naming ``candidate``."""
    found: list[Objection] = []
    for rule, view in rules:
        result = evaluate_rule(view, evidence)
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


#: Per-call identifiers and where a value was found: no count or per-span rule reads them unless a
#: contract names them in a selector or an ``attribute``.
_VOLATILE = frozenset(
    {sc.GEN_AI_TOOL_CALL_ID, sc.TOOL_CALL_ID, sc.RUN_ID, sc.SECURITY_TARGET_ID, sc.DIGEST_KEY_ID}
)
_VOLATILE_ARG_SUFFIXES = (
    sc.ARG_DIGEST_SUFFIX,
    sc.ARG_SOURCE_SPAN_ID_SUFFIX,
    sc.ARG_SOURCE_FIELD_SUFFIX,
    sc.ARG_SOURCE_TOOL_SUFFIX,
    sc.ARG_PROJECTION_SUFFIX,
)
_MEMO_SIZE = 4096
_COUNT_ROOT = Span(
    _TRACE, _ROOT, None, sc.INVOKE_AGENT, start_ns=1, end_ns=_RUNNING,
    attributes=Attributes({sc.GEN_AI_OPERATION_NAME: sc.INVOKE_AGENT}),
)  # fmt: skip


def _flat_run(calls: tuple[Attributes, ...], root: Span = _COUNT_ROOT) -> Run:
    """Calls with these (projected) attributes, one after another under ``root``, in this order: a
    run for the rules that read counts, attributes and parents but no times."""
    spans = [root]
    for n, attributes in enumerate(calls, 1):
        spans.append(Span(_TRACE, format(n, "016x"), _ROOT, "", start_ns=n + 1, attributes=attributes))
    return Run("", tuple(spans))


def _volatile(key: str) -> bool:
    return key in _VOLATILE or (key.startswith(sc.ARG_PREFIX) and key.endswith(_VOLATILE_ARG_SUFFIXES))


def _mentioned(contract: Contract) -> frozenset[str]:
    """Every attribute key a rule of ``contract`` names: in a selector, or as its ``attribute``."""
    keys: set[str] = set()
    for rule in contract.rules:
        for value in rule.params.values():
            if isinstance(value, Selector):
                keys.update(key for key, _ in value.attributes)
        if isinstance(rule.params.get("attribute"), str):
            keys.add(rule.params["attribute"])
    return frozenset(keys)


def _call_attributes(call: Any) -> dict[str, Any]:
    """The attributes the call's span starts with, as the offline reader will read them."""
    attributes: dict[str, Any] = {}
    for source in (call.attributes, call.essential, call.spec.span_attributes):
        for key, value in source.items():
            attributes[key] = tuple(value) if isinstance(value, list) else value
    attributes[sc.GEN_AI_TOOL_NAME] = call.spec.name
    attributes[sc.GEN_AI_OPERATION_NAME] = sc.EXECUTE_TOOL
    return attributes


class RunVerdict(NamedTuple):
    """The whole-run rules' verdict on a run: ``pass`` / ``fail`` / ``insufficient_data`` / ``error``,
    and the ids of the rules that did not pass."""

    status: str
    failed: tuple[str, ...]

    def attributes(self) -> Mapping[str, Any]:
        """``agent.guard.run.verdict`` and ``agent.guard.run.failed`` (when any rule did not pass)."""
        out: dict[str, Any] = {sc.GUARD_RUN_VERDICT: self.status}
        if self.failed:
            out[sc.GUARD_RUN_FAILED] = list(self.failed)
        return out


__all__ = ["ContractGuard", "RunGuard", "RunVerdict"]
