"""A check on ``--run-attribute``: does the attribute that joins traces into runs identify runs? (#47)

``--run-attribute session.id`` (or ``gen_ai.conversation.id``) joins the traces that share a value into
one run: right for a producer that sets the id per conversation or task, wrong for one that stamps a
single id on everything a process does — Agno puts one ``session.id`` on every run of a process, so
every run of the input would read as one. Nothing in a trace says which producer meant what, so the
check looks for what no single run does, and says it on stderr (it never changes a verdict):

- **one value for every trace**: the attribute joined all of two or more traces into a single run;
- **traces that overlap in time**: within one run, two traces whose agent work (agent invocation and
  tool spans) overlaps — a run's turns follow one another; a "session" running agents at once is a
  process or a user, not a run.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final

from .. import dialects
from .model import Run, attribute_map

#: Runs named in the note about overlapping traces (all are counted).
NAMED_RUNS: Final = 3


@dataclass(slots=True)
class SessionCheck:
    """How ``--run-attribute KEY`` grouped the input, and what in that grouping no run does."""

    attribute: str
    traces: int = 0  # traces that carry a value of the attribute
    runs: int = 0  # runs those traces were joined into
    overlapping: list[str] = field(default_factory=list)  # runs holding traces that overlap in time

    @property
    def one_value(self) -> bool:
        return self.runs == 1 and self.traces > 1

    def add(self, other: SessionCheck) -> None:
        """The overlaps another process found in its share of the runs (the counts are the input's)."""
        self.overlapping.extend(other.overlapping)

    def notes(self) -> list[str]:
        key = f"--run-attribute {self.attribute}"
        out = [f"{key} joined {self.traces} trace(s) that carry it into {self.runs} run(s)"]
        if self.one_value:
            out.append(
                f"{key}: every trace carries the same value, so all {self.traces} are one run: if each is "
                f"a task of its own, {self.attribute} names a process or a user, not a run (Agno stamps one "
                "session.id on every run of a process) — read without --run-attribute (one run per trace)"
            )
        if self.overlapping:
            named = ", ".join(sorted(self.overlapping)[:NAMED_RUNS])
            out.append(
                f"{key}: {len(self.overlapping)} run(s) hold traces whose agent work overlaps in time "
                f"(e.g. {named}): a run's turns follow one another, so {self.attribute} does not identify "
                "one run there"
            )
        return out


def overlaps(run: Run) -> bool:
    """Whether two traces of ``run`` hold agent work (agent invocation or tool spans) that overlaps in
    time: each trace's work spans from its first start to its last end."""
    extent: dict[str, tuple[int, int]] = {}
    for span in run.spans:
        attributes = attribute_map(span.attributes)
        if dialects.is_agent_span(attributes) or dialects.is_tool_span(attributes):
            start, end = extent.get(span.trace_id, (span.start_ns, span.end_ns))
            extent[span.trace_id] = (min(start, span.start_ns), max(end, span.end_ns))
    latest = None  # the latest end among the traces that started before
    for start, end in sorted(extent.values()):
        if latest is not None and start < latest:
            return True
        latest = end if latest is None else max(latest, end)
    return False
