"""Attribute values on selected spans: ``attribute_constraints`` and ``allowed_values``.

An absent attribute is insufficient evidence (the rule cannot be checked), except for the
``exists`` operator, whose whole point is presence.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from fractions import Fraction
from typing import Any

from ...model import ABSENT
from ..evidence import RunEvidence
from ..model import Rule
from ..outcomes import Observation, Unknown, Violation, span_witness, spans_witnesses
from ..rational import RATIONAL_PATTERN, exact_number, format_exact, parse_rational
from ..ruletype import Absence, AtCall, Fail, Passes, RuleType, always
from ..selectors import values_equal
from ..typing import INTEGER, check_value_type, known_type

_JUDGED = 4096  # values a compiled rule keeps judged
_COMPARE = {
    "<": lambda a, b: a < b,
    "<=": lambda a, b: a <= b,
    ">": lambda a, b: a > b,
    ">=": lambda a, b: a >= b,
}


def check_attribute_constraints(rule: Rule, ev: RunEvidence) -> Iterator[Observation]:
    attr, op = rule.params["attribute"], rule.params["op"]
    value = rule.params.get("value")
    label = rule.params["select"].describe()
    matched, undecided = ev.select(rule.params["select"])
    missing = []
    for span in matched:
        actual = span.attributes.get(attr, ABSENT)
        if actual is ABSENT:
            if op == "exists":
                yield Violation(f"{label} lacks {attr}, which the contract requires.", (span_witness(span),))
            else:
                missing.append(span)
            continue
        if op == "exists":
            continue
        if not _holds(actual, op, value):
            shown = format_exact(value) if isinstance(value, Fraction) else _show(value)
            yield Violation(
                f"{label} has {attr} = {_show_actual(actual)}; the contract requires {attr} {op} {shown}.",
                (span_witness(span, **{attr: actual}),),
            )
    yield from _unknowns(label, attr, missing, undecided)


def check_allowed_values(rule: Rule, ev: RunEvidence) -> Iterator[Observation]:
    attr, allowed = rule.params["attribute"], rule.params["values"]
    label = rule.params["select"].describe()
    matched, undecided = ev.select(rule.params["select"])
    missing = []
    for span in matched:
        actual = span.attributes.get(attr, ABSENT)
        if actual is ABSENT:
            missing.append(span)
        elif not any(values_equal(actual, v) for v in allowed):
            shown = ", ".join(_show(v) for v in allowed)
            yield Violation(
                f"{label} has {attr} = {_show_actual(actual)}; the contract allows only {shown}.",
                (span_witness(span, **{attr: actual}),),
            )
    yield from _unknowns(label, attr, missing, undecided)


def _compile_values(rule: Rule) -> Passes:
    """Every selected span holds the attribute with a value the rule accepts (any value for
    ``exists``), nothing undecided. Values repeat from run to run, so each is judged once (bounded);
    a value is kept with its type, as ``1`` and ``true`` are equal keys to a dict but not to a rule."""
    attr, selector = rule.params["attribute"], rule.params["select"]
    if rule.type == "allowed_values":
        allowed = rule.params["values"]
        accepts = lambda actual: any(values_equal(actual, v) for v in allowed)  # noqa: E731
    elif rule.params["op"] == "exists":
        accepts = lambda actual: True  # noqa: E731
    else:
        op, value = rule.params["op"], rule.params.get("value")
        accepts = lambda actual: _holds(actual, op, value)  # noqa: E731
    judged: dict[tuple[type, object], bool] = {}

    def passes(ev: RunEvidence) -> bool:
        matched, undecided = ev.selection(selector)
        if undecided:
            return False
        for span in matched:
            actual = span.attributes.get(attr, ABSENT)
            if actual is ABSENT:
                return False
            key = (actual.__class__, actual)
            try:
                verdict = judged.get(key)
            except TypeError:  # an unhashable value (a signalling NaN): judged afresh
                verdict = key = None
            if verdict is None:
                verdict = accepts(actual)
                if key is not None:
                    if len(judged) >= _JUDGED:
                        judged.clear()
                    judged[key] = verdict
            if not verdict:
                return False
        return True

    return passes


def _unknowns(label: str, attr: str, missing: list, undecided: list) -> Iterator[Observation]:
    if missing:
        yield Unknown(
            f"{label} lacks {attr} on {len(missing)} span(s); the rule cannot be checked.",
            spans_witnesses(missing, missing_attribute=attr),
        )
    if undecided:
        yield Unknown(
            f"cannot tell whether {len(undecided)} span(s) are {label}.", spans_witnesses(undecided)
        )


def _holds(actual: object, op: str, value: object) -> bool:
    if op in _COMPARE:
        number = exact_number(actual)
        return number is not None and _COMPARE[op](number, value)
    equal = _equal(actual, value)
    return equal if op == "=" else not equal


def _equal(actual: object, value: object) -> bool:
    """Typed equality; a numeric attribute also equals a rational string (``"0.5"``) exactly."""
    number = exact_number(actual)
    if number is not None and isinstance(value, str) and _is_rational(value):
        return number == parse_rational(value)
    return values_equal(actual, value)  # type: ignore[arg-type]


def _is_rational(text: str) -> bool:
    return re.match(RATIONAL_PATTERN, text) is not None


def _show(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _show_actual(value: object) -> str:
    number = exact_number(value)
    return format_exact(number) if number is not None and not isinstance(value, int) else _show(value)


def _validate_constraint(params: dict[str, Any], fail: Fail) -> None:
    op = params["op"]
    if op == "exists":
        if "value" in params:
            raise fail("value", "'exists' takes no value")
        return
    if "value" not in params:
        raise fail("op", f"operator {op!r} needs a value")
    value = params["value"]
    if op in ("<", "<=", ">", ">="):
        try:
            params["value"] = parse_rational(value)
        except ValueError:
            raise fail("value", f'operator {op!r} compares numbers; write an integer or "1/20"') from None
        kind = known_type(params["attribute"])
        if kind is not None and kind != INTEGER:
            raise fail("op", f"operator {op!r} compares numbers, but {params['attribute']} is {kind}")
        return
    check_value_type(params["attribute"], value, lambda problem: fail("value", problem))


def _validate_allowed(params: dict[str, Any], fail: Fail) -> None:
    for value in params["values"]:
        check_value_type(params["attribute"], value, lambda problem: fail("values", problem))


RULE_TYPES = (
    RuleType(
        "attribute_constraints",
        check_attribute_constraints,
        "ATTRIBUTE_CONSTRAINT",
        always(Absence.VACUOUS),
        _validate_constraint,
        _compile_values,
        at_call=AtCall.STEP,
        reads_attributes=True,
        passes_without_step="select",
    ),
    RuleType(
        "allowed_values",
        check_allowed_values,
        "DISALLOWED_VALUE",
        always(Absence.VACUOUS),
        _validate_allowed,
        _compile_values,
        at_call=AtCall.STEP,
        reads_attributes=True,
        passes_without_step="select",
    ),
)
