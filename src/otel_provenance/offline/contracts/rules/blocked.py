"""``blocked_calls``: how many tool calls per run their provenance budget refused.

A blocked call (``agent.tool.status = blocked``) did not happen — no other rule counts it as a step
that ran — but it is evidence of its own: the agent tried to act on arguments it could not source.
The miner proposes this rule at the approved runs' maximum (normally 0). A selected tool span with
no ``agent.tool.status`` cannot be told apart, and an incomplete run may hide blocked calls: both
are insufficient evidence when they could push the count over the limit.
"""

from __future__ import annotations

from collections.abc import Iterator

from .... import semconv
from ..evidence import RunEvidence, tally_key
from ..model import Rule
from ..outcomes import Observation, Unknown, Violation, spans_witnesses
from ..ruletype import Absence, Passes, RuleType, always


def check_blocked_calls(rule: Rule, ev: RunEvidence) -> Iterator[Observation]:
    limit: int = rule.params["max"]
    selector = rule.params.get("select")
    label = selector.describe() if selector is not None else "tool calls"
    matched, undecided = ev.select(selector)
    calls = [s for s in matched if s.is_tool]
    blocked = [s for s in calls if s.blocked]
    silent = [s for s in calls if semconv.TOOL_STATUS not in s.attributes]
    if len(blocked) > limit:
        yield Violation(
            f"{len(blocked)} of the run's {label} were blocked by their provenance budget (the calls never "
            f"ran); the contract permits at most {limit} per run.",
            spans_witnesses(blocked, blocked=len(blocked)),
        )
        return
    doubtful = silent + [s for s in undecided if s.is_tool]
    if doubtful and len(blocked) + len(doubtful) > limit:
        yield Unknown(
            f"{len(doubtful)} of the run's {label} carry no {semconv.TOOL_STATUS} (or lack a selector "
            "attribute); blocked calls cannot be counted.",
            spans_witnesses(doubtful, blocked=len(blocked)),
        )
    elif not ev.complete:
        yield Unknown(
            f"cannot count blocked {label}: the run is incomplete ({len(ev.orphans)} span(s) have a "
            "parent that is not in the trace).",
            spans_witnesses(list(ev.orphans), blocked=len(blocked)),
        )


def _compile_blocked(rule: Rule) -> Passes:
    """Blocked calls, with every call that might be one, within the limit, and the run complete."""
    limit, selector = rule.params["max"], rule.params.get("select")
    if selector is None:  # every span: their unsettled tool calls alone, not every step's tally
        return lambda ev: ev.unsettled_tools <= limit and ev.complete

    key = tally_key(selector)

    def passes(ev: RunEvidence) -> bool:
        t = ev.tallies[key]
        return t.blocked_tools + t.silent_tools + t.unknown_tools <= limit and ev.complete

    return passes


RULE_TYPES = (
    RuleType(
        "blocked_calls",
        check_blocked_calls,
        "BLOCKED_CALL",
        always(Absence.VACUOUS),
        compile=_compile_blocked,
    ),
)
