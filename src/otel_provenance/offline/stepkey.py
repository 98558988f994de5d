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
from typing import Final

from ..dialects import tool_name
from .model import Run, Span, attribute_map

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


class _Last(threading.local):
    run: Run | None = None
    steps: dict[str, str] = {}  # noqa: RUF012 - replaced per thread, never mutated


_LAST = _Last()


def run_steps(run: Run) -> dict[str, str]:
    """``{span id: step key}`` for every span of ``run``. The last run's is reused (the gate, the
    rule evidence and the fingerprint ask for the same run in a row); the caller must not mutate it."""
    last = _LAST
    if last.run is not run:
        last.steps = {span.span_id: step_key(span) for span in run.spans}
        last.run = run
    return last.steps
