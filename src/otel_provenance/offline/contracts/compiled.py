"""A contract's compiled tests as one test per run: does every rule pass?

Most runs of a release pass every rule, and each rule's compiled test (``RuleType.compile``) is cheap;
what is left is asking 35 of them per run. :class:`AllPass` asks fewer: the rules that count one step
(:data:`TALLIED`) read nothing but that step's tally and whether the run is complete, so their verdict
together is kept per step and per such pair of values — which the runs of a release repeat — and
the rules of a step are decided by one look-up. The other rules are asked as the evaluator asks
them. True means every rule passes (each test true, or skipped where the evaluator skips it); False
means nothing (a rule fails, or a test raised): the evaluator then asks each rule on its own, the
one place results and errors are made (``evaluate._evaluate_planned``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from .evidence import COUNTS, RunEvidence, tally_key
from .model import Rule
from .ruletype import Passes
from .selectors import Selector

TALLIED: Final = frozenset(
    {"required_spans", "forbidden_spans", "cardinality", "retry_budgets", "blocked_calls"}
)
"""Rule types whose compiled test, for a ``select`` naming a step alone, reads only
``evidence.tallies[tally_key(select)]`` — its counts (``COUNTS``) — and ``evidence.complete``."""

_KEPT: Final = 4096  # verdicts a step keeps (a bound: a hostile file may vary its counts)


class _Group:
    """The tallied rules selecting one step: their tests, those asked when the run lacks the step,
    and their verdict together by (the step's counts, the run's completeness)."""

    __slots__ = ("absent", "step", "tests", "verdicts")

    def __init__(self, step: str) -> None:
        self.step = step
        self.tests: list[Passes] = []
        self.absent: list[Passes] = []  # without the rules the evaluator passes when the step is absent
        self.verdicts: dict[tuple, bool] = {}


class AllPass:
    """``all_pass(evidence)``: True only when every rule of the plan passes on the run (see module)."""

    __slots__ = ("_groups", "_others")

    def __init__(self, groups: tuple[_Group, ...], others: tuple[tuple[Passes, str | None], ...]) -> None:
        self._groups = groups
        self._others = others

    @classmethod
    def of(cls, plan: Sequence[tuple[Rule, Passes | None, str | None]]) -> AllPass | None:
        """The test of a plan — each rule, its compiled test and the step whose absence passes it —,
        or None when a rule has no test (it is always checked: only its checker can pass it)."""
        groups: dict[str, _Group] = {}
        others: list[tuple[Passes, str | None]] = []
        for rule, passes, without in plan:
            if passes is None:
                return None
            select = rule.params.get("select")
            if rule.type in TALLIED and isinstance(select, Selector) and tally_key(select).__class__ is str:
                group = groups.get(select.step)  # type: ignore[arg-type]
                if group is None:
                    group = groups[select.step] = _Group(select.step)  # type: ignore[index]
                group.tests.append(passes)
                if without is None:
                    group.absent.append(passes)
            else:
                others.append((passes, without))
        return cls(tuple(groups.values()), tuple(others))

    def __call__(self, evidence: RunEvidence) -> bool:
        try:
            tallies, present = evidence.tallies, evidence.by_step
            for group in self._groups:
                key = (tallies[group.step][COUNTS], evidence.complete)
                verdict = group.verdicts.get(key)
                if verdict is None:
                    tests = group.tests if group.step in present else group.absent
                    verdict = all([passes(evidence) for passes in tests])
                    if len(group.verdicts) >= _KEPT:
                        group.verdicts.clear()
                    group.verdicts[key] = verdict
                if not verdict:
                    return False
            for passes, without in self._others:
                if (without is None or without in present) and not passes(evidence):
                    return False
        except Exception:  # the evaluator asks the rule again, and makes the exception its error
            return False
        return True
