"""What a rule checker yields and what a rule's verdict on one run looks like.

A checker is a small generator (``jsonschema``-style): it yields a ``Violation`` for each thing in
the run that breaks the rule and an ``Unknown`` for each thing it cannot decide because evidence is
missing. The verdict follows from what was yielded: any violation → ``fail``; else any unknown →
``insufficient_evidence``; else ``pass``. A checker never returns a status itself, so it cannot
turn missing evidence into a pass by accident.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from ..model import Attributes, Run, Span
from .model import Rule


@dataclass(frozen=True, slots=True)
class Witness:
    """Where the proof is: a trace, the spans (possibly none, e.g. for a step that never ran) and
    observed counts or attribute values as JSON-safe data (no floats)."""

    trace_id: str
    span_ids: tuple[str, ...] = ()
    observed: tuple[tuple[str, Any], ...] = ()


@dataclass(frozen=True, slots=True)
class Violation:
    message: str
    witnesses: tuple[Witness, ...]


@dataclass(frozen=True, slots=True)
class Unknown:
    message: str
    witnesses: tuple[Witness, ...]


Observation = Violation | Unknown


def jsonable(value: object) -> Any:
    """An attribute value as canonical-JSON-safe data: floats and decimals become their exact
    decimal text, bytes become hex, arrays lists, maps dicts."""
    if value is None or isinstance(value, (str, bool, int)):
        return value
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, bytes):
        return value.hex()
    if isinstance(value, Attributes):
        return {k: jsonable(v) for k, v in value.items_sorted()}
    if isinstance(value, tuple):
        return [jsonable(v) for v in value]
    return str(value)


def span_witness(span: Span, **observed: object) -> Witness:
    return Witness(
        span.trace_id, (span.span_id,), tuple(sorted((k, jsonable(v)) for k, v in observed.items()))
    )


def spans_witnesses(spans: list[Span], **observed: object) -> tuple[Witness, ...]:
    """One witness per trace, naming every listed span of that trace (sorted)."""
    by_trace: dict[str, list[str]] = {}
    for span in spans:
        by_trace.setdefault(span.trace_id, []).append(span.span_id)
    obs = tuple(sorted((k, jsonable(v)) for k, v in observed.items()))
    return tuple(Witness(t, tuple(sorted(ids)), obs) for t, ids in sorted(by_trace.items()))


Checker = Callable[[Rule, Any], Iterator[Observation]]


def run_witnesses(run: Run, **observed: object) -> tuple[Witness, ...]:
    """One witness per trace of the run, naming no span: evidence of something that is absent."""
    obs = tuple(sorted((k, jsonable(v)) for k, v in observed.items()))
    return tuple(Witness(t, (), obs) for t in run.trace_ids)
