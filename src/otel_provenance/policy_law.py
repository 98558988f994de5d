"""The one argument-value policy law, shared by the online and the offline half.

A *policy* judges the values of one tool call's arguments before the call runs (issue #34, the
guard). It is written the same way in code (``op.Policy(...)``) and in a contract's ``policies:``
section, as plain data::

    {"schema": {...},                            # a JSON Schema for the arguments object
     "arguments": {"amount": {"minimum": 0, "maximum": 500, "run_sum": {"input": "order.amount"}},
                   "to": {"patterns": [".*@example\\.com"], "denied_patterns": ["ceo@.*"]}},
     "run_count": 3,                             # at most 3 calls of the tool per run
     "on_violation": "block"}                    # or "ask": a person may approve the call

:func:`compile_policy` checks such data and compiles it once (regular expressions, the schema's
validator, exact numbers); both halves call it, so a policy the contract parser accepts is exactly a
policy ``op.Policy`` accepts, with the same words for what is wrong (:class:`PolicyProblem`: where,
as a path inside the policy, and what). The online half judges calls with the compiled
:class:`PolicyLaw` (``instrument/call/policy.py`` keeps the per-run totals); the offline half only
validates: values never reach traces, so a policy is judged online only.

A violation is named ``policy:<argument>:<check>`` (``policy:amount:maximum``,
``policy:to:pattern``, ``policy:amount:run_sum``), ``policy:calls:run_count``, or
``policy:schema:<JSON pointer of the failing keyword in the schema>`` — never the value, and never
the schema validator's message (it quotes the value).

Numbers are exact: limits and argument values are compared as fractions (a float argument by its
exact binary value). A limit is an integer, a float, a ``Decimal``/``Fraction`` in code, or an exact
number's text (``"0.05"``, ``"1/20"``) as a contract writes it.

Pure: imports only ``errors``, neither half; ``jsonschema`` is imported when a policy has a schema.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction
from typing import Any, Final

from .errors import ConfigurationError

PREFIX: Final = "policy"
"""The rule part of every policy violation: ``policy:<argument>:<check>``."""
CALLS: Final = "calls"
"""The argument part of the run-count violation (``policy:calls:run_count``): the calls themselves."""
SCHEMA: Final = "schema"
ON_VIOLATION: Final = ("block", "ask")
FIELDS: Final = ("schema", "arguments", "run_count", "on_violation")
BOUNDS: Final = ("minimum", "exclusive_minimum", "maximum", "exclusive_maximum")
ARGUMENT_FIELDS: Final = (*BOUNDS, "patterns", "denied_patterns", "run_sum")
CHECK_PATTERN: Final = "pattern"
CHECK_DENIED: Final = "denied_pattern"
CHECK_RUN_SUM: Final = "run_sum"
CHECK_RUN_COUNT: Final = "run_count"
MAX_SCHEMA_REASONS: Final = 8
"""At most this many schema violations are named per call (each a keyword of the schema)."""

_RATIONAL: Final = re.compile(r"-?[0-9]+(\.[0-9]+|/[1-9][0-9]*)?")
_MAX_TEXT: Final = 64  # an exact number's text, as contracts bound it
_MAX_EXPONENT: Final = 400  # a Decimal beyond 10^±400 is not made exact (10^999999 would take seconds)
Path = tuple[str | int, ...]


class PolicyProblem(ConfigurationError):
    """A policy that cannot mean what it says. ``path`` is where, inside the policy's plain data
    (``("arguments", "amount", "maximum")``); ``problem`` says what, in the contract's words."""

    def __init__(self, path: Path, problem: str) -> None:
        self.path = path
        self.problem = problem
        super().__init__(f"{format_path(path)}: {problem}" if path else problem)


def format_path(path: Path) -> str:
    """``("arguments", "amount", "maximum")`` → ``arguments.amount.maximum``; indexes as ``[0]``."""
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else part)
    return text


@dataclass(frozen=True, slots=True)
class Input:
    """A limit read from the run's declared inputs (``op.run(inputs=...)``) at each call:
    ``op.Input("order.amount")`` is ``inputs["order"]["amount"]``; a segment of digits indexes a list.
    In a contract: ``run_sum: {input: order.amount}``."""

    path: str

    def __post_init__(self) -> None:
        if not isinstance(self.path, str) or not self.path or "" in self.path.split("."):
            raise PolicyProblem((), "an input is named by a dotted path such as 'order.amount'")

    def read(self, inputs: Mapping[str, Any] | None) -> Fraction | None:
        """The input's exact value, or None if the run declared no such number."""
        value: Any = inputs
        for segment in self.path.split("."):
            if isinstance(value, Mapping) and segment in value:
                value = value[segment]
            elif isinstance(value, list | tuple) and segment.isdigit() and int(segment) < len(value):
                value = value[int(segment)]
            else:
                return None
        return exact(value)


def exact(value: Any) -> Fraction | None:
    """An argument's value as an exact number: int, finite float, ``Decimal`` or ``Fraction``
    (never a bool, never a numeric string). None for anything else."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | Fraction):
        return Fraction(value)
    if isinstance(value, float):
        return Fraction(value) if math.isfinite(value) else None
    if isinstance(value, Decimal) and value.is_finite() and abs(value.adjusted()) <= _MAX_EXPONENT:
        return Fraction(value)
    return None  # another type, NaN, an infinity, or a Decimal too large or small to compare cheaply


def reason(argument: str, check: str) -> str:
    """The violation of ``check`` on ``argument``: ``policy:amount:maximum``."""
    return f"{PREFIX}:{argument}:{check}"


@dataclass(frozen=True, slots=True)
class ArgumentLaw:
    """The checks on one argument, compiled. ``patterns`` is None when no allowed pattern is set."""

    name: str
    bounds: tuple[tuple[str, Fraction], ...]
    patterns: tuple[re.Pattern[str], ...] | None
    denied_patterns: tuple[re.Pattern[str], ...]
    run_sum: Fraction | Input | None

    def failed(self, value: Any) -> Iterator[str]:
        """The names of the value checks ``value`` fails (bounds, patterns; not ``run_sum``)."""
        if self.bounds:
            number = exact(value)
            for check, limit in self.bounds:
                if number is None or not _within(check, number, limit):
                    yield check
        if self.patterns is not None and not (
            isinstance(value, str)
            and all(any(p.fullmatch(form) for p in self.patterns) for form in _written_forms(value))
        ):
            yield CHECK_PATTERN
        if self.denied_patterns and not (
            isinstance(value, str)
            and not any(p.fullmatch(form) for p in self.denied_patterns for form in _denied_forms(value))
        ):
            yield CHECK_DENIED


def _written_forms(value: str) -> tuple[str, ...]:
    """The value as written and as it reads (#50): in compatibility form (NFKC: full-width letters),
    without invisible format characters (a zero-width space). An allowed pattern must match both."""
    if value.isascii():
        return (value,)
    normal = unicodedata.normalize("NFKC", "".join(c for c in value if unicodedata.category(c) != "Cf"))
    return (value,) if normal == value else (value, normal)


def _denied_forms(value: str) -> tuple[str, ...]:
    """The forms a denied pattern must match none of: :func:`_written_forms` and each case-folded
    (``CEO@…`` is ``ceo@…`` to a mail server, ``ＣＥＯ`` too)."""
    forms = _written_forms(value)
    return tuple(dict.fromkeys((*forms, *(form.casefold() for form in forms))))


def _within(check: str, number: Fraction, limit: Fraction) -> bool:
    if check == "minimum":
        return number >= limit
    if check == "exclusive_minimum":
        return number > limit
    if check == "maximum":
        return number <= limit
    return number < limit  # exclusive_maximum


@dataclass(frozen=True, slots=True)
class PolicyLaw:
    """One policy, compiled: what :func:`compile_policy` made of its plain data."""

    arguments: tuple[ArgumentLaw, ...]
    validator: Any  # the schema's jsonschema validator, or None
    run_count: int | None
    ask: bool

    @property
    def spends(self) -> bool:
        """Whether calls spend from a run's totals (``run_count``, a ``run_sum``)."""
        return self.run_count is not None or any(a.run_sum is not None for a in self.arguments)

    def judge(self, arguments: Mapping[str, Any]) -> list[str]:
        """The violations of the value checks and the schema by ``arguments`` (a call's arguments by
        name), in a fixed order. Absent arguments are not judged by value checks (the schema's
        ``required`` requires them). What a run has spent (``run_sum``, ``run_count``) is judged by
        the caller, which keeps the totals."""
        out = [
            reason(law.name, check)
            for law in self.arguments
            if law.name in arguments
            for check in law.failed(arguments[law.name])
        ]
        if self.validator is not None:
            out.extend(schema_reasons(self.validator, arguments))
        return out


def schema_reasons(validator: Any, arguments: Mapping[str, Any]) -> list[str]:
    """``policy:schema:<pointer>`` for each schema keyword ``arguments`` fail (at most
    :data:`MAX_SCHEMA_REASONS`, sorted). The validator's messages quote values: they are never read.
    A validator that fails on the value (an input nested beyond its recursion limit…) is a failure
    of the schema as a whole: ``policy:schema:``."""
    try:
        pointers = {_pointer(error.schema_path) for error in validator.iter_errors(arguments)}
    except Exception:
        return [reason(SCHEMA, "")]
    return [reason(SCHEMA, p) for p in sorted(pointers)[:MAX_SCHEMA_REASONS]]


def _pointer(path: Any) -> str:
    """RFC 6901 JSON pointer of a path in the schema: ``/properties/amount/maximum``."""
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in path)


# -- compiling: checks the plain data and turns it into a PolicyLaw -------------------------------


def compile_policy(data: Any) -> PolicyLaw:
    """Check one policy's plain data and compile it; raise :class:`PolicyProblem` for the first
    problem, in the order the fields are listed in :data:`FIELDS`."""
    if not isinstance(data, Mapping):
        raise PolicyProblem((), "expected a mapping of policy fields")
    _known(data, FIELDS, ())
    if not any(data.get(k) is not None for k in ("schema", "arguments", "run_count")):
        raise PolicyProblem((), "names no check: give schema, arguments or run_count")
    validator = _schema(data["schema"]) if data.get("schema") is not None else None
    arguments = data.get("arguments")
    laws: list[ArgumentLaw] = []
    if arguments is not None:
        if not isinstance(arguments, Mapping) or not arguments:
            raise PolicyProblem(("arguments",), "expected a mapping of argument name to its checks")
        for name, checks in arguments.items():
            if not isinstance(name, str) or not name:
                raise PolicyProblem(("arguments",), "argument names must be non-empty strings")
            laws.append(_argument(name, checks))
    run_count = data.get("run_count")
    if run_count is not None and (type(run_count) is not int or run_count < 0):  # a bool is no count
        raise PolicyProblem(("run_count",), "expected an integer >= 0")
    on_violation = data.get("on_violation", "block")
    if on_violation not in ON_VIOLATION:
        raise PolicyProblem(("on_violation",), f"must be one of {', '.join(map(repr, ON_VIOLATION))}")
    return PolicyLaw(tuple(laws), validator, run_count, on_violation == "ask")


def _known(data: Mapping[str, Any], allowed: tuple[str, ...], path: Path) -> None:
    for key in data:
        if key not in allowed:
            raise PolicyProblem((*path, key), f"unknown key {key!r} (allowed: {', '.join(sorted(allowed))})")


def _argument(name: str, checks: Any) -> ArgumentLaw:
    path: Path = ("arguments", name)
    if not isinstance(checks, Mapping) or not checks:
        raise PolicyProblem(path, f"expected a mapping of checks ({', '.join(ARGUMENT_FIELDS)})")
    _known(checks, ARGUMENT_FIELDS, path)
    bounds = tuple((b, _limit(checks[b], (*path, b))) for b in BOUNDS if checks.get(b) is not None)
    for low, low_value in (b for b in bounds if b[0].endswith("minimum")):
        for high, high_value in (b for b in bounds if b[0].endswith("maximum")):
            inclusive = low == "minimum" and high == "maximum"
            if low_value > high_value or (not inclusive and low_value == high_value):
                relation = "below" if inclusive else "not above"
                raise PolicyProblem((*path, high), f"no value passes: {high} is {relation} {low}")
    patterns = _patterns(checks.get("patterns"), (*path, "patterns"))
    denied = _patterns(checks.get("denied_patterns"), (*path, "denied_patterns"))
    run_sum = checks.get("run_sum")
    if run_sum is not None:
        run_sum = _run_sum(run_sum, (*path, "run_sum"))
    return ArgumentLaw(name, bounds, patterns, denied or (), run_sum)


def _limit(value: Any, path: Path) -> Fraction:
    """An exact limit: a number, or an exact number's text (``"0.05"``, ``"1/20"``)."""
    if isinstance(value, str) and len(value) <= _MAX_TEXT and _RATIONAL.fullmatch(value):
        return Fraction(value)
    number = exact(value)
    if number is None:
        raise PolicyProblem(path, 'expected an exact number: an integer or a string like "1/20" or "0.05"')
    return number


def _patterns(value: Any, path: Path) -> tuple[re.Pattern[str], ...] | None:
    if value is None:
        return None
    if isinstance(value, str | bytes) or not isinstance(value, Sequence) or not value:
        raise PolicyProblem(path, "expected a non-empty list of regular expressions")
    compiled: list[re.Pattern[str]] = []
    for index, pattern in enumerate(value):
        if not isinstance(pattern, str):
            raise PolicyProblem((*path, index), "expected a regular expression (a string)")
        try:
            compiled.append(re.compile(pattern))
        except re.error as exc:
            raise PolicyProblem((*path, index), f"not a regular expression: {exc.msg} at {exc.pos}") from None
    return tuple(compiled)


def _run_sum(value: Any, path: Path) -> Fraction | Input:
    if isinstance(value, Input):
        return value
    if isinstance(value, Mapping):
        _known(value, ("input",), path)
        try:
            return Input(value.get("input"))  # type: ignore[arg-type]
        except PolicyProblem as exc:
            raise PolicyProblem((*path, "input"), exc.problem) from None
    limit = _limit(value, path)
    if limit < 0:
        raise PolicyProblem(path, "must be at least 0")
    return limit


def _schema(schema: Any) -> Any:
    """The schema's validator (its ``$schema`` dialect, else draft 2020-12), the schema checked first.
    A tuple is an array and any mapping an object, as JSON would carry them."""
    if not isinstance(schema, Mapping):
        raise PolicyProblem(("schema",), "expected a JSON Schema (a mapping)")
    try:
        import jsonschema
        from jsonschema import validators
    except ModuleNotFoundError as exc:
        if exc.name != "jsonschema":
            raise
        raise PolicyProblem(
            ("schema",), "an argument schema needs jsonschema: pip install 'otel-provenance[policy]'"
        ) from None
    import copy

    schema = copy.deepcopy(dict(schema))  # later changes to the caller's dict change nothing
    cls = validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    try:
        cls.check_schema(schema)
    except jsonschema.SchemaError as exc:
        raise PolicyProblem(("schema", *exc.path), f"not a valid JSON Schema: {exc.message}") from None
    checker = cls.TYPE_CHECKER.redefine_many(
        {
            "array": lambda _, value: isinstance(value, list | tuple),
            "object": lambda _, value: isinstance(value, Mapping),
        }
    )
    return validators.extend(cls, type_checker=checker)(schema)


__all__ = [
    "ARGUMENT_FIELDS",
    "BOUNDS",
    "CALLS",
    "CHECK_RUN_COUNT",
    "CHECK_RUN_SUM",
    "FIELDS",
    "ON_VIOLATION",
    "PREFIX",
    "ArgumentLaw",
    "Input",
    "PolicyLaw",
    "PolicyProblem",
    "compile_policy",
    "exact",
    "reason",
    "schema_reasons",
]
