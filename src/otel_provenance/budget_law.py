"""The one provenance-budget law, shared by the online and the offline half.

A tool call's arguments are counted by kind: ``assumed`` ones (a value the agent never saw) against
``max_assumed``, ``invented`` ones (a value the tool declared the model may propose) against
``max_invented``. An *allow-list* names arguments — annotation fields the model is meant to write,
such as ``comment`` or ``reason`` — that do not count; ``ALLOW_REACH`` says for which kinds. The
call is over budget for every kind whose count exceeds its limit (``None`` = no limit).

``op.Budget`` (online), ``audit``, the ``provenance_budgets`` contract rule and ``diff`` (offline)
all decide with these functions, so a call over budget online is over budget in every report. The
tool span records the argument names its allow-list exempted (``agent.budget.allowed``), so offline
checks apply exactly the list the tool applied.

Pure: imports nothing but ``semconv``.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from typing import Final

from . import semconv

ALLOW_REACH: Final = frozenset({semconv.KIND_ASSUMED})
"""The kinds an allow-listed argument is exempt from. ``assumed`` only: an ``invented`` argument is
declared on the tool and bounded by ``max_invented`` alone — allowing it again would double-exempt."""


@dataclass(frozen=True, slots=True)
class Limits:
    max_assumed: int | None = None
    max_invented: int | None = None


@dataclass(frozen=True, slots=True)
class ArgumentCount:
    """Argument names by how the law counts them, each sorted."""

    assumed: tuple[str, ...] = ()  # counted against max_assumed
    invented: tuple[str, ...] = ()  # counted against max_invented
    allowed: tuple[str, ...] = ()  # of a kind in reach, exempted by the allow-list

    def counted(self, kind: str) -> tuple[str, ...]:
        return self.assumed if kind == semconv.KIND_ASSUMED else self.invented


def count_arguments(
    kinds: Iterable[tuple[str, str]], allow: Collection[str] = (), reach: Collection[str] = ALLOW_REACH
) -> ArgumentCount:
    """Count ``(name, kind)`` pairs; a name in ``allow`` whose kind is in ``reach`` is not counted."""
    assumed: list[str] = []
    invented: list[str] = []
    allowed: list[str] = []
    for name, kind in kinds:
        if kind not in (semconv.KIND_ASSUMED, semconv.KIND_INVENTED):
            continue
        if name in allow and kind in reach:
            allowed.append(name)
        elif kind == semconv.KIND_ASSUMED:
            assumed.append(name)
        else:
            invented.append(name)
    return ArgumentCount(tuple(sorted(assumed)), tuple(sorted(invented)), tuple(sorted(allowed)))


def over_budget(count: ArgumentCount, limits: Limits) -> tuple[str, ...]:
    """The kinds (``assumed``, ``invented``, in that order) whose count exceeds its limit."""
    over = []
    if limits.max_assumed is not None and len(count.assumed) > limits.max_assumed:
        over.append(semconv.KIND_ASSUMED)
    if limits.max_invented is not None and len(count.invented) > limits.max_invented:
        over.append(semconv.KIND_INVENTED)
    return tuple(over)


def allowed_on_span(attributes: Mapping[str, object]) -> frozenset[str]:
    """The argument names a tool span's budget allowed (``agent.budget.allowed``); empty when absent."""
    value = attributes.get(semconv.BUDGET_ALLOWED)
    if isinstance(value, str):
        return frozenset({value})
    if isinstance(value, (tuple, list)):
        return frozenset(v for v in value if isinstance(v, str))
    return frozenset()


def limits_on_span(attributes: Mapping[str, object]) -> Limits:
    """The limits a tool span's budget applied online (``agent.budget.max_*``); None when not recorded."""

    def limit(key: str) -> int | None:
        value = attributes.get(key)
        return value if isinstance(value, int) and not isinstance(value, bool) else None

    return Limits(limit(semconv.BUDGET_MAX_ASSUMED), limit(semconv.BUDGET_MAX_INVENTED))
