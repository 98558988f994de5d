"""Step keys: what a span *did*, with the identifiers that vary from run to run taken out.

A step is ``gen_ai.tool.name`` for a tool span, else the span name. Volatile parts are replaced by
placeholders so that ``order.lookup 4711`` and ``order.lookup 98765432`` are the same step:

- ISO-8601 dates and timestamps → ``{ts}``
- UUIDs, hex runs of 12+ characters, hex runs of 8+ containing a digit, and runs of 4+ decimal
  digits (order numbers, epoch times) → ``{id}``. One placeholder for all of them on purpose: an
  order number may have 7 digits today and 8 tomorrow, and a random hex id can be all digits.

Short numbers stay (``v2``, ``gpt-4``, ``retry 1``): they usually name a thing, not an instance.
"""

from __future__ import annotations

import re
import threading
from functools import lru_cache
from typing import Final, NamedTuple

from ..dialects import tool_name
from .model import Attributes, Run, Span, attribute_map, says_tool

_UUID: Final = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
_TIMESTAMP: Final = re.compile(
    r"[0-9]{4}-[0-9]{2}-[0-9]{2}"
    r"(?:[T ][0-9]{2}:[0-9]{2}(?::[0-9]{2}(?:[.,][0-9]+)?)?(?:Z|[+-][0-9]{2}:?[0-9]{2})?)?"
)
_HEX_RUN: Final = re.compile(
    r"(?<![0-9A-Za-z])(?:[0-9a-fA-F]{12,}|(?=[0-9a-fA-F]*[0-9])[0-9a-fA-F]{8,11})(?![0-9A-Za-z])"
)
_DIGIT_RUN: Final = re.compile(r"[0-9]{4,}")
UNNAMED: Final = "<unnamed>"


@lru_cache(maxsize=8192)  # step names repeat across spans and runs
def normalise(name: str) -> str:
    """``name`` with volatile identifiers replaced by ``{ts}`` and ``{id}``."""
    name = _UUID.sub("{id}", name)
    name = _TIMESTAMP.sub("{ts}", name)
    name = _HEX_RUN.sub("{id}", name)
    return _DIGIT_RUN.sub("{id}", name) or UNNAMED


def step_key(span: Span) -> str:
    """The span's step: its tool name for tool spans, else its name; normalised; never empty."""
    if span.is_tool:
        tool = tool_name(attribute_map(span.attributes))  # Span.tool_name, without its property call
        if tool:
            return normalise(tool)
    return normalise(span.name)


class RunIndex(NamedTuple):
    """What one walk over a run's spans finds for every stage after it: each span's step, the spans
    of each step (in span order) and the tool calls (``Span.is_tool``, in span order). Shared:
    read it, never change it."""

    steps: dict[str, str]  # span id -> step key
    by_step: dict[str, list[Span]]
    tools: list[Span]


class _Last(threading.local):
    run: Run | None = None
    index: RunIndex | None = None


_LAST = _Last()


def run_steps(run: Run) -> dict[str, str]:
    """``{span id: step key}`` for every span of ``run``. The last run's is reused (the gate, the
    rule evidence and the fingerprint ask for the same run in a row); the caller must not mutate it."""
    return run_index(run).steps


def run_index(run: Run) -> RunIndex:
    """The run's :class:`RunIndex`; the last run's is reused, as :func:`run_steps`'s."""
    last = _LAST
    if last.run is not run:
        last.index = _index(run.spans)
        last.run = run
    return last.index  # type: ignore[return-value]


def _index(spans: tuple[Span, ...]) -> RunIndex:
    """:func:`step_key` of every span, inlined, with the spans grouped by step and the tool calls
    picked out in the same walk: it runs once per span of every run the gate reads, and a span's
    tool decision is already kept on its attributes (``says_tool``)."""
    steps: dict[str, str] = {}
    by_step: dict[str, list[Span]] = {}
    tools: list[Span] = []
    for span in spans:
        step = None
        if not span.echo:  # Span.is_tool
            attributes = span.attributes
            tool = attributes._tool if attributes.__class__ is Attributes else None  # type: ignore[attr-defined]
            if tool or (tool is None and says_tool(attributes)):
                tools.append(span)
                name = tool_name(attribute_map(attributes))
                if name:
                    step = normalise(name)
        if step is None:
            step = normalise(span.name)
        steps[span.span_id] = step
        group = by_step.get(step)
        if group is None:
            by_step[step] = [span]
        else:
            group.append(span)
    return RunIndex(steps, by_step, tools)
