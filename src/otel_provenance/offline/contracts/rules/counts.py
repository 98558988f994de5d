"""How often a step occurs in a run: ``required_spans``, ``forbidden_spans``, ``cardinality``.

Blocked calls did not happen: ``required_spans`` and ``cardinality`` count only calls that ran.
``required_spans`` also leaves retries out (``agent.retry.number`` above 0: the same call again), so a
release that retries less still meets a requirement; ``cardinality`` counts them (a retried write is a
duplicate side effect). ``forbidden_spans`` counts attempts too — trying a forbidden step is the
violation.

All three are one bounds check: the run has ``n`` spans that surely match and ``u`` that might
(they lack a selector attribute), and, when the trace is incomplete, possibly more we cannot see.
Outside the bounds for every possibility → violation; inside for every possibility → pass;
otherwise the evidence is insufficient.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ..evidence import RunEvidence, tally_key
from ..model import Rule
from ..outcomes import Observation, Unknown, Violation, spans_witnesses
from ..ruletype import Absence, AtCall, Fail, Passes, RuleType, always


def check_required_spans(rule: Rule, ev: RunEvidence) -> Iterator[Observation]:
    yield from _bounds(rule, ev, low=rule.params.get("min", 1), high=None, first_attempts=True)


def check_forbidden_spans(rule: Rule, ev: RunEvidence) -> Iterator[Observation]:
    yield from _bounds(rule, ev, low=0, high=0, attempts=True)


def check_cardinality(rule: Rule, ev: RunEvidence) -> Iterator[Observation]:
    if "exact" in rule.params:
        yield from _bounds(rule, ev, low=rule.params["exact"], high=rule.params["exact"], exact=True)
    else:
        yield from _bounds(rule, ev, low=rule.params.get("min", 0), high=rule.params.get("max"))


def _compile_bounds(rule: Rule) -> Passes:
    """The pass test of :func:`_bounds` for each of the three types, from the shared tally: the count
    is within its bounds for every possibility the evidence leaves open."""
    key, params = tally_key(rule.params["select"]), rule.params
    if rule.type == "forbidden_spans":
        return lambda ev: ev.complete and not (t := ev.tallies[key]).matched and not t.unknown
    if rule.type == "required_spans":
        low = params.get("min", 1)
        return lambda ev: ev.tallies[key].first >= low
    low = params.get("exact", params.get("min", 0))
    high = params.get("exact", params.get("max"))
    if high is None:
        return lambda ev: ev.tallies[key].occurred >= low

    def passes(ev: RunEvidence) -> bool:
        t = ev.tallies[key]
        return low <= t.occurred and t.occurred + t.occurred_unknown <= high and ev.complete

    return passes


def has_minimum(rule: Rule) -> bool:
    return bool(rule.params.get("min") or rule.params.get("exact"))


def _validate_cardinality(params: dict[str, Any], fail: Fail) -> None:
    if "exact" in params and ("min" in params or "max" in params):
        raise fail("exact", "use either exact or min/max, not both")
    if "min" in params and "max" in params and params["min"] > params["max"]:
        raise fail("min", f"min {params['min']} is greater than max {params['max']}")


RULE_TYPES = (
    RuleType(
        "required_spans",
        check_required_spans,
        "MISSING_PREREQUISITE",
        always(Absence.JUDGED),
        compile=_compile_bounds,
    ),
    RuleType(
        "forbidden_spans",
        check_forbidden_spans,
        "FORBIDDEN_STEP",
        always(Absence.IRRELEVANT),
        compile=_compile_bounds,
        at_call=AtCall.STEP,
    ),
    RuleType(
        "cardinality",
        check_cardinality,
        "UNEXPECTED_STEP_COUNT",
        lambda rule: Absence.JUDGED if has_minimum(rule) else Absence.VACUOUS,
        _validate_cardinality,
        _compile_bounds,
        at_call=AtCall.STEP,  # its maximum; a minimum waits for the end (guard.py takes that view)
    ),
)


def _bounds(
    rule: Rule,
    ev: RunEvidence,
    low: int,
    high: int | None,
    exact: bool = False,
    attempts: bool = False,
    first_attempts: bool = False,
) -> Iterator[Observation]:
    selector = rule.params["select"]
    label = selector.describe()
    matched, unknown = ev.select(selector) if attempts else ev.occurred(selector)
    if first_attempts:
        matched, unknown = [s for s in matched if not s.is_retry], [s for s in unknown if not s.is_retry]
    n, u = len(matched), len(unknown)
    most = None if not ev.complete else n + u  # None: unbounded (spans may be missing)
    if high is not None and n > high:
        if high == 0:
            message = f"{label} is forbidden but occurred {n} time(s)."
        elif exact:
            message = f"{label} occurred {n} time(s); the contract requires exactly {high} per run."
        else:
            message = f"{label} occurred {n} times; the contract permits at most {high} per run."
        yield Violation(message, spans_witnesses(matched, count=n))
        return
    if most is not None and most < low:
        if exact:
            message = f"{label} occurred {n} time(s); the contract requires exactly {low} per run."
        else:
            message = f"{label} is required at least {low} time(s) but occurred {n} time(s)."
        yield Violation(message, spans_witnesses(matched, count=n) or ev.witnesses(count=n))
        return
    sure_low = n >= low
    sure_high = high is None or (most is not None and most <= high)
    if sure_low and sure_high:
        return
    if u:
        reason = f"{u} span(s) lack an attribute needed to tell whether they are {label}"
        yield Unknown(f"cannot count {label}: {reason}.", spans_witnesses(unknown, count=n, undecided=u))
    else:
        yield Unknown(
            f"cannot count {label}: the run is incomplete ({len(ev.orphans)} span(s) have a "
            "parent that is not in the trace).",
            spans_witnesses(list(ev.orphans), count=n),
        )
