"""Which spans a rule is about: by step key and/or by attribute values.

Matching is three-valued. A span that fits every test ``MATCH``es; one that contradicts a test
does ``NOT`` match; a *tool* span that lacks an attribute the selector tests is ``UNKNOWN`` — the
evidence needed to decide is missing, so the rule cannot pass on it. Non-tool spans (the agent's
root span, model calls) never carry the behaviour attributes, so for them an absent attribute is
simply no match.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from ..model import ABSENT, Span
from .rational import exact_number

Scalar = str | int | bool


class Match(enum.Enum):
    NOT = 0
    MATCH = 1
    UNKNOWN = 2


@dataclass(frozen=True, slots=True)
class Selector:
    """``step`` is a step key (see ``offline.stepkey``); ``attributes`` are exact (key, value) tests."""

    step: str | None = None
    attributes: tuple[tuple[str, Scalar], ...] = ()

    @classmethod
    def from_document(cls, data: dict) -> Selector:
        attrs = data.get("attributes", {})
        return cls(step=data.get("step"), attributes=tuple(sorted(attrs.items())))

    def to_document(self) -> dict:
        out: dict = {}
        if self.step is not None:
            out["step"] = self.step
        if self.attributes:
            out["attributes"] = dict(self.attributes)
        return out

    def match(self, span: Span, step: str) -> Match:
        if self.step is not None and step != self.step:
            return Match.NOT
        unknown = False
        for key, expected in self.attributes:
            actual = span.attributes.get(key, ABSENT)
            if actual is ABSENT:
                if not span.is_tool:
                    return Match.NOT
                unknown = True
            elif not values_equal(actual, expected):
                return Match.NOT
        return Match.UNKNOWN if unknown else Match.MATCH

    def describe(self) -> str:
        """Human label used in finding messages: the step key, else ``span[key=value,…]``."""
        tests = ",".join(f"{k}={_show(v)}" for k, v in self.attributes)
        if self.step is not None:
            return f"{self.step}[{tests}]" if tests else self.step
        return f"span[{tests}]"


def values_equal(actual: object, expected: Scalar) -> bool:
    """Typed equality: booleans equal only booleans, numbers compare exactly, strings as strings."""
    if isinstance(expected, bool) or isinstance(actual, bool):
        return isinstance(expected, bool) and isinstance(actual, bool) and actual == expected
    if isinstance(expected, int):
        number = exact_number(actual)
        return number is not None and number == expected
    return isinstance(actual, str) and actual == expected


def _show(value: Scalar) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)
