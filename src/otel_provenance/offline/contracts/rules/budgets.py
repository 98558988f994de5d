"""Per-run budgets: ``retry_budgets``, ``numeric_budgets``, ``provenance_budgets``."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from fractions import Fraction
from typing import Any

from .... import semconv
from ....budget_law import COUNTED_KINDS, Limits, allowed_on_span, count_arguments, over_budget
from ...arguments import COUNTERS, argument_case, case_reader, lost_kinds
from ...model import ABSENT, Span, attribute_map
from ..evidence import RunEvidence, tally_key
from ..model import Rule
from ..outcomes import Observation, Unknown, Violation, spans_witnesses
from ..rational import exact_number, format_exact
from ..ruletype import Absence, AtCall, Fail, Passes, RuleType, always

_DURATION_SCALE = {"ns": 1, "ms": 10**6, "s": 10**9}
_DECIDED = 4096  # cases a compiled provenance rule keeps decided
_CASE_KEYS = (semconv.BUDGET_ALLOWED, *(key for _, key in COUNTERS))  # what a call's verdict reads


def check_retry_budgets(rule: Rule, ev: RunEvidence) -> Iterator[Observation]:
    """Per selected step: retries = max(highest ``agent.retry.number``, repeated calls − 1)."""
    limit = rule.params["max_retries"]
    matched, undecided = ev.select(rule.params["select"])
    groups: dict[str, list[Span]] = {}
    for span in matched:
        groups.setdefault(ev.step(span), []).append(span)
    missing: list[Span] = []
    for step, spans in sorted(groups.items()):
        numbers = [span.attributes.get(semconv.RETRY_NUMBER, ABSENT) for span in spans]
        known = [n for n in numbers if _is_count(n)]
        retries = max([len(spans) - 1, *known])
        if retries > limit:
            yield Violation(
                f"{step} was retried {retries} time(s) ({len(spans)} call(s)); the contract "
                f"permits at most {limit}.",
                spans_witnesses(spans, calls=len(spans), retries=retries),
            )
        elif len(known) < len(spans):
            missing.extend(s for s, n in zip(spans, numbers, strict=True) if not _is_count(n))
    if missing:
        yield Unknown(
            f"{len(missing)} span(s) lack {semconv.RETRY_NUMBER}; retries cannot be counted.",
            spans_witnesses(missing, missing_attribute=semconv.RETRY_NUMBER),
        )
    if undecided:
        yield Unknown(
            f"cannot tell whether {len(undecided)} span(s) are {rule.params['select'].describe()}.",
            spans_witnesses(undecided),
        )


def _compile_retries(rule: Rule) -> Passes | None:
    """A step's retries within the limit, every retry number known, nothing undecided (one step:
    a selector without a step groups its spans by step, which the tally does not)."""
    selector, limit = rule.params["select"], rule.params["max_retries"]
    if selector.step is None:
        return None
    key = tally_key(selector)

    def passes(ev: RunEvidence) -> bool:
        t = ev.tallies[key]
        return (
            not t.unknown
            and not t.retry_missing
            and (not t.matched or max(t.matched - 1, t.retry_max) <= limit)
        )

    return passes


def _is_count(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def check_numeric_budgets(rule: Rule, ev: RunEvidence) -> Iterator[Observation]:
    """The sum or maximum, over the selected spans, of a numeric attribute or of span duration."""
    selector = rule.params.get("select")
    limit: Fraction = rule.params["max"]
    aggregate = rule.params["aggregate"]
    attr = rule.params.get("attribute")
    what = attr if attr else f"duration ({rule.params['duration']})"
    label = selector.describe() if selector else "all spans"
    matched, undecided = ev.select(selector)
    values: list[tuple[Span, Fraction]] = []
    missing: list[Span] = []
    for span in matched:
        value = _measure(span, attr, rule.params.get("duration"))
        if value is not None:
            values.append((span, value))
        elif (
            selector is not None or attr is None
        ):  # with no selector, spans without the attribute don't count
            missing.append(span)
    limit_text = format_exact(limit)
    if aggregate == "max":
        over = [(s, v) for s, v in values if v > limit]
        if over:
            top = max(v for _, v in over)
            yield Violation(
                f"the largest {what} over {label} is {format_exact(top)}; the contract permits at most "
                f"{limit_text} per run.",
                spans_witnesses([s for s, _ in over], max=format_exact(top)),
            )
            return
    else:
        total = sum((v for _, v in values), Fraction(0))
        if not missing and not undecided and total > limit:
            yield Violation(
                f"the sum of {what} over {label} is {format_exact(total)}; the contract permits at "
                f"most {limit_text} per run.",
                spans_witnesses([s for s, _ in values], sum=format_exact(total)),
            )
            return
    if missing:
        yield Unknown(
            f"{len(missing)} span(s) of {label} have no numeric {what}; the budget cannot be checked.",
            spans_witnesses(missing),
        )
    if undecided:
        yield Unknown(
            f"cannot tell whether {len(undecided)} span(s) are {label}.", spans_witnesses(undecided)
        )


def _measure(span: Span, attr: str | None, unit: str | None) -> Fraction | None:
    if attr is not None:
        return exact_number(span.attributes.get(attr, ABSENT))
    if span.end_ns < span.start_ns or span.start_ns == 0:
        return None
    return Fraction(span.end_ns - span.start_ns, _DURATION_SCALE[unit or "ns"])


def check_provenance_budgets(rule: Rule, ev: RunEvidence) -> Iterator[Observation]:
    """Per selected tool call: how many arguments were ``assumed`` / ``invented`` (never sourced) /
    ``untrusted`` (found only in untrusted results), counted and decided by ``budget_law``. The
    allow-list is the rule's ``allow`` when it has one (the miner writes the names the approved runs'
    tools allowed), else the names the span records as allowed by its own budget
    (``agent.budget.allowed``) — what the tool applied online."""
    law = Limits(
        rule.params.get("max_assumed"), rule.params.get("max_invented"), rule.params.get("max_untrusted")
    )
    limits = {kind: law.limit(kind) for kind in COUNTED_KINDS}
    rule_allow: frozenset[str] | None = frozenset(rule.params["allow"]) if "allow" in rule.params else None
    matched, undecided = ev.select(rule.params["select"])
    silent: list[Span] = []
    for span in matched:
        kinds = ev.argument_kinds(span)
        if kinds is None:
            silent.append(span)
            continue
        lost = lost_kinds(span, kinds.values())
        if lost is not None:  # attributes evicted: the span's own counters are the evidence left
            counted = lost
            over = [k for k, limit in sorted(limits.items()) if limit is not None and counted[k] > limit]
            if over:
                yield Violation(
                    f"{ev.step(span)} counts {', '.join(f'{counted[k]} {k}' for k in over)} argument(s); "
                    "the contract permits fewer (their names were lost with evicted attributes).",
                    spans_witnesses([span], **{k: counted[k] for k in over}),
                )
            else:
                silent.append(span)
            continue
        allow = rule_allow if rule_allow is not None else allowed_on_span(span.attributes)
        count = count_arguments(kinds.items(), allow, vetted=allowed_on_span(span.attributes))
        for kind in over_budget(count, law):
            names = count.counted(kind)
            allowed = f" ({', '.join(count.allowed)} allowed)" if count.allowed else ""
            yield Violation(
                f"{ev.step(span)} has {len(names)} {kind} argument(s) "
                f"({', '.join(names)}){allowed}; the contract permits at most {limits[kind]}.",
                spans_witnesses([span], **{kind: len(names), "arguments": ",".join(names)}),
            )
    if silent:
        yield Unknown(
            f"{len(silent)} tool span(s) carry no (or incomplete) argument provenance "
            "(agent.arg.*.kind); the budget cannot be checked.",
            spans_witnesses(silent),
        )
    if undecided:
        yield Unknown(
            f"cannot tell whether {len(undecided)} span(s) are {rule.params['select'].describe()}.",
            spans_witnesses(undecided),
        )


def _compile_provenance(rule: Rule) -> Passes:
    """Every selected call within the budget, nothing undecided. A call's verdict depends only on its
    argument kinds, the names its span allowed and its counters, so it is decided once per such case
    and kept (bounded). The case is read as the values of the keys it is made of — the span's kind keys
    (``argument_case``) and the allow-list and counters it holds — which one ``itemgetter`` per key
    layout reads (``arguments.case_reader``): most spans are then decided by two look-ups."""
    law = Limits(
        rule.params.get("max_assumed"), rule.params.get("max_invented"), rule.params.get("max_untrusted")
    )
    rule_allow: frozenset[str] | None = frozenset(rule.params["allow"]) if "allow" in rule.params else None
    selector = rule.params["select"]
    decided: dict[tuple, bool] = {}
    readers: dict[tuple[str, ...], Callable[[Mapping[str, Any]], tuple]] = {}

    def within(span: Span) -> bool:
        """The call has known argument kinds (``argument_kinds``), within the budget."""
        attributes = attribute_map(span.attributes)
        keys = tuple(attributes)
        read = readers.get(keys)
        if read is None:
            if len(readers) >= _DECIDED:
                readers.clear()
            read = readers[keys] = case_reader(keys, _CASE_KEYS)
        # the case as read (the keys, by their layout's reader — one object per layout, kept alive by
        # the verdicts keyed by it —; the argument kinds, the allow-list and the counters' values, with
        # their types: ``True`` and ``1`` are equal keys to a dict but not to the budget), decided once
        got = read(attributes)
        key = (read, got, tuple(list(map(type, got))))  # from a list, as runs._ordered's parents
        try:
            verdict = decided.get(key)
        except TypeError:  # an unhashable value: decided afresh
            verdict = key = None
        if verdict is None:
            verdict = _within(span, attributes, law, rule_allow)
            if key is not None:
                if len(decided) >= _DECIDED:
                    decided.clear()
                decided[key] = verdict
        return verdict

    def passes(ev: RunEvidence) -> bool:
        matched, undecided = ev.selection(selector)
        if undecided:
            return False
        return all(map(within, matched))

    return passes


def _within(
    span: Span, attributes: Mapping[str, Any], law: Limits, rule_allow: frozenset[str] | None
) -> bool:
    """A call's verdict, worked out: it has known argument kinds (``argument_kinds``), within the
    budget, and no count above the names it kept."""
    case = argument_case(attributes)
    if case is None:
        return False  # no provenance, or a kind this package does not write
    kinds = dict(zip(*case, strict=True))
    if lost_kinds(span, kinds.values()) is not None:
        return False  # a count over the names kept: the checker words it
    vetted = allowed_on_span(attributes)
    allow = rule_allow if rule_allow is not None else vetted
    return not over_budget(count_arguments(kinds.items(), allow, vetted=vetted), law)


def _validate_numeric(params: dict[str, Any], fail: Fail) -> None:
    if "attribute" in params and "duration" in params:
        raise fail("duration", "use either attribute or duration, not both")


RULE_TYPES = (
    RuleType(
        "retry_budgets",
        check_retry_budgets,
        "RETRY_BUDGET_EXCEEDED",
        always(Absence.VACUOUS),
        compile=_compile_retries,
        at_call=AtCall.STEP,
        passes_without_step="select",
    ),
    RuleType(
        "numeric_budgets",
        check_numeric_budgets,
        "BUDGET_EXCEEDED",
        always(Absence.VACUOUS),
        _validate_numeric,
        at_call=AtCall.RUN,
    ),
    RuleType(
        "provenance_budgets",
        check_provenance_budgets,
        "UNSOURCED_ARGUMENTS",
        always(Absence.VACUOUS),
        compile=_compile_provenance,
        at_call=AtCall.STEP,
        passes_without_step="select",
    ),
)
