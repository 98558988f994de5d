"""Computations over runs written as map-reduce, so any trace source can run them its own way.

A :class:`RunFold` is ``over`` (any runs → a partial result) and ``merge`` (two partials → one,
associative and commutative up to the value). A source that reads runs in one process calls
``over`` once on all of them; a distributed source calls it on each group of whole runs and merges
the partials in a tree. ``merge(over(a), over(b)) == over(a + b)`` for disjoint runs is what makes
the two give the same result; the folds here are tested byte for byte on both paths.

Every function here is pure and module-level, so a fold pickles to another process by reference.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Generic, TypeVar

from ..aggregate import Aggregate
from ..contracts.model import Contract
from ..evaluate import RunResult, evaluate_safely
from ..fingerprint import canonical_form, fingerprint
from ..gate import Shard, check_release
from ..model import Run
from ..outcome import Outcome
from ..release import DEFAULT_RELEASE_ATTRIBUTE
from ..report.witnesses import SmallestRuns

if TYPE_CHECKING:
    from ..audit import Budgets, RunAudit

P = TypeVar("P")

FingerprintRow = tuple[str, str, int, str | None]
"""(run id, fingerprint, step count, canonical form or None)."""


@dataclass(frozen=True)
class RunFold(Generic[P]):
    over: Callable[[Iterable[Run]], P]
    merge: Callable[[P, P], P]


def gate_fold(
    contract: Contract,
    release: str,
    completed_at: str | None = None,
    shard: Shard | None = None,
    evaluator: Callable[[Run, Contract], RunResult] = evaluate_safely,
    release_attribute: str = DEFAULT_RELEASE_ATTRIBUTE,
) -> RunFold[Aggregate]:
    """``gate check``: per-rule tallies of the release's runs (``Aggregate.merge`` is exact)."""
    return RunFold(
        partial(
            check_release,
            contract=contract,
            release=release,
            completed_at=completed_at,
            shard=shard,
            evaluator=evaluator,
            release_attribute=release_attribute,
        ),
        Aggregate.merge,
    )


def _fingerprint_rows(runs: Iterable[Run], canonical: bool) -> list[FingerprintRow]:
    rows = [
        (run.run_id, fingerprint(run), len(run.spans), canonical_form(run) if canonical else None)
        for run in runs
    ]
    return sorted(rows)


def _merge_rows(a: list[FingerprintRow], b: list[FingerprintRow]) -> list[FingerprintRow]:
    return sorted(a + b)


def fingerprint_fold(canonical: bool = False) -> RunFold[list[FingerprintRow]]:
    """``fingerprint``: one row per run, sorted by run id."""
    return RunFold(partial(_fingerprint_rows, canonical=canonical), _merge_rows)


@dataclass(frozen=True)
class AuditPartial:
    audits: tuple[RunAudit, ...]
    """Each run's audit, by run id."""
    failing: tuple[Run, ...]
    """The failing runs with the smallest run ids, at most ``keep``, by run id (``--report-html``)."""


def _audit_runs(runs: Iterable[Run], budgets: Budgets, keep: int) -> AuditPartial:
    from ..audit import audit_run  # loaded by the fold that uses it: not a part of the gate's start-up

    audits: list[RunAudit] = []
    failing = SmallestRuns(keep)
    for run in runs:
        result = audit_run(run, budgets)
        audits.append(result)
        if keep and result.verdict is Outcome.FAIL:
            failing.offer(run)
    return _sorted(audits, failing)


def _merge_audits(a: AuditPartial, b: AuditPartial, keep: int) -> AuditPartial:
    failing = SmallestRuns(keep)
    for run in (*a.failing, *b.failing):
        failing.offer(run)
    return _sorted([*a.audits, *b.audits], failing)


def _sorted(audits: list[RunAudit], failing: SmallestRuns) -> AuditPartial:
    kept = tuple(failing.runs[run_id] for run_id in sorted(failing.runs))
    return AuditPartial(tuple(sorted(audits, key=lambda a: a.run_id)), kept)


def audit_fold(budgets: Budgets, keep: int = 0) -> RunFold[AuditPartial]:
    """``audit``: every run's audit, and the ``keep`` failing runs ``--report-html`` draws."""
    return RunFold(partial(_audit_runs, budgets=budgets, keep=keep), partial(_merge_audits, keep=keep))


def _listed(runs: Iterable[Run]) -> list[Run]:
    return list(runs)


def _concat(a: list[Run], b: list[Run]) -> list[Run]:
    return a + b


COLLECT: RunFold[list[Run]] = RunFold(_listed, _concat)
"""Every run, as one list (a source's ``runs()`` may use it per group of runs)."""
