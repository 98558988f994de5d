"""Argument-value policies, judged before a tool call runs: ``op.Policy`` and ``op.Input`` (#34).

A policy says which argument *values* a tool accepts — a JSON Schema for the arguments, numeric
bounds, allowed and denied patterns — and how much a run may spend through it: the sum of one
numeric argument over the run's calls (``run_sum``) and the number of calls (``run_count``). It is
declared in code (``@op.tool(policy=op.Policy(...))``, MCP's ``ToolPolicy(policy=...)``) or in a
contract's ``policies:`` section (:func:`policies_from_contract`); what it may say, and how it is
checked, is the one law in :mod:`otel_provenance.policy_law`.

A tool's policies are one of its ``ToolSpec.checks``: :class:`PolicyCheck` runs in the *decide*
step of the tool-call lifecycle and yields one :class:`.decision.Objection` per violation — blocking,
or an ask when the policy says ``on_violation="ask"``. The violation names the argument and the check
(``policy:amount:maximum``), never the value.

**What a run has spent.** Totals are kept per outermost ``op.run`` scope — the run the call is made
in, or the run it is nested in (a sub-agent's calls spend the run's limit, #50) — per tool and per
:class:`Policy` object. Only calls that ran count: a call
that passes is counted when it is decided (so two concurrent calls cannot both spend the last of a
limit), and given back if it is then refused (blocked by another check, or an ask a person denied:
:meth:`.lifecycle.ToolCall.refuse`). A call that is already blocked counts nothing. Judging and
counting happen under the run's lock: threads and asyncio tasks of one run share its totals, other
runs never see them. Outside any run there is nothing to count against: a call is judged alone (its
own value against a ``run_sum`` number, one call against ``run_count``), and a limit read from the
run's inputs (:class:`Input`) fails, since there are none.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import TYPE_CHECKING, Any, TypedDict

from ...errors import ConfigurationError
from ...policy_law import (
    CALLS,
    CHECK_RUN_COUNT,
    CHECK_RUN_SUM,
    FIELDS,
    Input,
    PolicyLaw,
    PolicyProblem,
    compile_policy,
    exact,
    format_path,
    reason,
)
from ..base.settings import get_settings
from .current import current_run
from .decision import Objection

if TYPE_CHECKING:
    from .runscope import RunScope

_log = logging.getLogger("otel_provenance")
_MISSING = object()
_CREATING = threading.Lock()  # makes a run's totals once, whichever thread asks first

Number = int | float | Fraction | str


class ArgumentChecks(TypedDict, total=False):
    """The checks on one argument (``Policy(arguments={"amount": {...}})``)."""

    minimum: Number
    exclusive_minimum: Number
    maximum: Number
    exclusive_maximum: Number
    patterns: Sequence[str]  # the value is a string that fully matches one of them
    denied_patterns: Sequence[str]  # the value is a string that fully matches none of them
    run_sum: Number | Input  # the run's calls that ran pass at most this much in all


@dataclass(frozen=True, eq=False)
class Policy:
    """``op.Policy(schema=, arguments=, run_count=, on_violation=)``: the argument values one tool
    accepts, checked before each call. Checked and compiled when made; a mistake raises
    :class:`ConfigurationError` naming the field (``Policy.arguments.amount.maximum: ...``).

    - ``schema``: a JSON Schema (draft 2020-12 unless it names another ``$schema``) for the call's
      arguments as an object, by the names the span gives them; violated keywords are named by their
      JSON pointer (``policy:schema:/properties/to/format``). Needs ``jsonschema``.
    - ``arguments``: per argument name, :class:`ArgumentChecks` — ``minimum``, ``exclusive_minimum``,
      ``maximum``, ``exclusive_maximum`` (a value that is not a number fails them), ``patterns``
      (Python regular expressions, full match: the value must be a string matching one),
      ``denied_patterns`` (a string matching none), ``run_sum`` (a number, or ``op.Input(path)``: the
      total of this argument over the run's calls that ran; a call without it, or with a negative
      value, fails). A check on an argument the call did not pass is not made, except ``run_sum``.
    - ``run_count``: at most this many calls of the tool per run.
    - ``on_violation``: ``"block"`` (default) or ``"ask"`` (a person may approve the call).

    Totals are kept per policy object: make a policy once (at decoration) and reuse it.
    """

    schema: Mapping[str, Any] | None = None
    arguments: Mapping[str, ArgumentChecks] | None = None
    run_count: int | None = None
    on_violation: str = "block"
    law: PolicyLaw = field(init=False, repr=False)

    def __post_init__(self) -> None:
        data = {name: getattr(self, name) for name in FIELDS}
        try:
            law = compile_policy(data)
        except PolicyProblem as exc:
            where = f"Policy.{format_path(exc.path)}" if exc.path else "Policy"
            raise ConfigurationError(f"{where}: {exc.problem}") from None
        object.__setattr__(self, "law", law)

    @classmethod
    def from_document(cls, data: Mapping[str, Any]) -> Policy:
        """A policy from its plain data, as a contract's ``policies:`` section writes it."""
        if not isinstance(data, Mapping):
            raise ConfigurationError("Policy: expected a mapping of policy fields")
        unknown = sorted(set(data) - set(FIELDS))
        if unknown:
            raise ConfigurationError(f"Policy.{unknown[0]}: unknown key (allowed: {', '.join(FIELDS)})")
        return cls(**data)

    @property
    def argument_names(self) -> frozenset[str]:
        """The arguments this policy checks by name."""
        return frozenset(a.name for a in self.law.arguments)


def as_policies(policy: Any, where: str) -> tuple[Policy, ...]:
    """``None``, one :class:`Policy` or a list of them, as a tuple; anything else is refused."""
    if policy is None:
        return ()
    if isinstance(policy, Policy):
        return (policy,)
    if isinstance(policy, list | tuple) and all(isinstance(p, Policy) for p in policy):
        return tuple(policy)
    raise ConfigurationError(f"{where}: expected an op.Policy or a list of them")


def policy_checks(policies: Sequence[Policy]) -> tuple[PolicyCheck, ...]:
    """The ``ToolSpec.checks`` entry for ``policies`` (none when there are none)."""
    return (PolicyCheck(policies),) if policies else ()


def policies_from_contract(contract: Any) -> dict[str, tuple[Policy, ...]]:
    """The ``policies:`` section of a parsed contract (a ``Contract``, or its ``document``) as
    ``{tool name: (Policy, ...)}``. Make it once per contract and keep it: totals are kept per
    policy object. A contract without the section gives ``{}``."""
    document = getattr(contract, "document", contract)
    section = document.get("policies") if isinstance(document, Mapping) else None
    out: dict[str, tuple[Policy, ...]] = {}
    for tool, entry in (section or {}).items():
        entries = entry if isinstance(entry, list) else [entry]
        out[tool] = tuple(Policy.from_document(e) for e in entries)
    return out


class PolicyCheck:
    """A tool's policies as one of its ``ToolSpec.checks``: judged together, counted once."""

    __slots__ = ("policies",)

    def __init__(self, policies: Iterable[Policy]) -> None:
        self.policies = tuple(policies)

    def __call__(self, call: Any) -> list[Objection]:
        return policy_objections(call, self.policies)


def policy_objections(call: Any, policies: Sequence[Policy]) -> list[Objection]:
    """The objections of ``policies`` to ``call`` (a :class:`.lifecycle.ToolCall`, bound and
    decided so far), and — when the call will run — what it spends, counted in its run."""
    arguments: Mapping[str, Any] = call.arguments
    found = [Objection(r, p.law.ask) for p in policies for r in p.law.judge(arguments)]
    spending = [p for p in policies if p.law.spends]
    if not spending:
        return found
    tool: str = call.spec.name
    scope = current_run()
    if scope is None:  # nothing to count against: the call is judged alone
        for policy in spending:
            found.extend(Objection(r, policy.law.ask) for r in _alone(tool, policy.law, arguments))
        return found
    totals = _totals(scope)
    with totals.lock:
        spends: list[tuple[Any, Fraction]] = []
        for policy in spending:
            law = policy.law
            for argument in law.arguments:
                if argument.run_sum is None:
                    continue
                key = (tool, policy, argument.name)
                amount = exact(arguments.get(argument.name, _MISSING))
                limit = _limit(tool, argument.name, argument.run_sum, scope)
                if amount is None or amount < 0 or limit is None or totals.spent.get(key, 0) + amount > limit:
                    found.append(Objection(reason(argument.name, CHECK_RUN_SUM), law.ask))
                if amount is not None and amount > 0:
                    spends.append((key, amount))
            if law.run_count is not None:
                key = (tool, policy, None)
                if totals.spent.get(key, 0) + 1 > law.run_count:
                    found.append(Objection(reason(CALLS, CHECK_RUN_COUNT), law.ask))
                spends.append((key, Fraction(1)))
        blocks = call.decision.blocked or (get_settings().enforce and any(not o.ask for o in found))
        if not blocks:  # the call will run (or go to a person): count it now, give it back if refused
            totals.count(spends)
            call.on_refuse.append(lambda: totals.give_back(spends))
    return found


def _alone(tool: str, law: PolicyLaw, arguments: Mapping[str, Any]) -> list[str]:
    """A call outside any run against the spending limits: its own value, one call."""
    out: list[str] = []
    for argument in law.arguments:
        if argument.run_sum is None:
            continue
        amount = exact(arguments.get(argument.name, _MISSING))
        limit = _limit(tool, argument.name, argument.run_sum, None)
        if amount is None or amount < 0 or limit is None or amount > limit:
            out.append(reason(argument.name, CHECK_RUN_SUM))
    if law.run_count is not None and law.run_count < 1:
        out.append(reason(CALLS, CHECK_RUN_COUNT))
    return out


def _limit(tool: str, name: str, run_sum: Fraction | Input, scope: RunScope | None) -> Fraction | None:
    """A ``run_sum`` limit: the number, or the run's input it names (None: no such number, fails)."""
    if isinstance(run_sum, Fraction):
        return run_sum
    limit = run_sum.read(scope.inputs if scope is not None else None)
    if limit is None:
        _log.warning(
            "%s: policy run_sum of %s: the run declares no number at input %r, so the check fails",
            tool,
            name,
            run_sum.path,
        )
    return limit


class _RunTotals:
    """What one run's calls have spent, by (tool, policy, argument name; None for the call count)."""

    __slots__ = ("lock", "spent")

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.spent: dict[tuple[str, Policy, str | None], Fraction] = {}

    def count(self, spends: list[tuple[Any, Fraction]]) -> None:
        """Add what a call spends; the caller holds :attr:`lock` (it judged the call under it)."""
        for key, amount in spends:
            self.spent[key] = self.spent.get(key, 0) + amount

    def give_back(self, spends: list[tuple[Any, Fraction]]) -> None:
        """Take back what a call that did not run had been counted for."""
        with self.lock:
            for key, amount in spends:
                self.spent[key] -= amount


def _totals(scope: RunScope) -> _RunTotals:
    while scope.enclosing is not None:  # a nested run spends the outermost run's totals
        scope = scope.enclosing
    totals = scope.policy_totals
    if totals is None:
        with _CREATING:
            totals = scope.policy_totals
            if totals is None:
                totals = scope.policy_totals = _RunTotals()
    return totals


__all__ = [
    "ArgumentChecks",
    "Input",
    "Policy",
    "PolicyCheck",
    "as_policies",
    "policies_from_contract",
    "policy_checks",
    "policy_objections",
]
