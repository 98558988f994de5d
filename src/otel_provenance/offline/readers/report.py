"""What a read found short of an error: files cut off mid-write, other signals left out, counts.

Passing a :class:`ReadReport` to a reader also opts in to reading incomplete files (their complete
records are read and the cut recorded) and to leaving out files of other signals with a note.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from ...errors import TraceReadError
from ..linked_runs import LinkJoins
from ..sessions import SessionCheck
from . import otlp_json

Progress = Callable[[str, int, int], None]
"""``progress(label, bytes_done, bytes_total)``, called now and then while a file is read."""


@dataclass(frozen=True, slots=True)
class IncompleteFile:
    """A file whose last record was cut off; its complete records were read."""

    source: str
    line: int | None
    problem: str

    def __str__(self) -> str:
        where = f"{self.source}:{self.line}" if self.line is not None else self.source
        return f"{where}: {self.problem}"


@dataclass(frozen=True, slots=True)
class SkippedRecords:
    """Requests of another signal (logs, metrics) in a trace file, skipped: e.g. a Collector file
    exporter shared by the traces, logs and metrics pipelines."""

    source: str
    counts: tuple[tuple[str, int], ...]  # (signal, requests), sorted by signal
    unit: str  # "lines" or "records"
    holds_traces: bool = True
    """False: the file holds no trace request at all, and is left out whole (see ``check_signals``)."""

    @property
    def tally(self) -> str:
        """What was skipped: "12 logs lines, 3 metrics lines"."""
        return ", ".join(
            f"{n} {signal} {self.unit if n != 1 else self.unit[:-1]}" for signal, n in self.counts
        )

    @property
    def problem(self) -> str:
        """Why a file without traces is left out: what it holds instead."""
        if len(self.counts) == 1:
            ((signal, _),) = self.counts
            key = next(k for k, s in otlp_json._OTHER_SIGNALS if s == signal)
            return f"a {signal} file ({key}), not traces"
        return f"holds no traces: {self.tally}"

    def __str__(self) -> str:
        if not self.holds_traces:
            return f"{self.source}: {self.problem} (left out)"
        return f"{self.source}: skipped {self.tally} (not traces)"


@dataclass(slots=True)
class ReadReport:
    """What a read found short of an error. Passing one also opts in to reading incomplete files."""

    progress: Progress | None = None
    incomplete: list[IncompleteFile] = field(default_factory=list)
    files: int = 0
    spans: int = 0
    skipped: list[SkippedRecords] = field(default_factory=list)
    unknown_values: int = 0
    """Attributes left out because their value was of a kind the reader does not know."""
    not_runs: int = 0
    """Traces (or ``--run-attribute`` groups) left out because they are no agent run
    (``Run.is_agent_run``): neither an agent invocation span nor a tool call."""
    beside: Counter[str] = field(default_factory=Counter)
    """Other signals found beside the spans of a request (spans and logs in one document), by signal:
    the spans are read, the rest left out and counted."""
    links: LinkJoins | None = None
    """What span links joined into runs that span traces, and the joins refused (``linked_runs``);
    None when they joined and refused nothing."""
    sessions: SessionCheck | None = None
    """How ``--run-attribute KEY`` grouped the traces, and what in it no run does (``sessions``)."""

    @property
    def complete(self) -> bool:
        return not self.incomplete

    def notes(self) -> list[str]:
        """What was skipped or left out, one line each, for the user (never an error: counted)."""
        out = [str(s) for s in self.skipped]
        if self.unknown_values:
            out.append(
                f"{self.unknown_values} attribute value(s) of an unknown kind (e.g. stringValueStrindex) "
                "were left out"
            )
        if self.beside:
            held = ", ".join(f"{signal} in {n} request(s)" for signal, n in sorted(self.beside.items()))
            out.append(f"left out other signals held beside traces ({held}); their spans were read")
        if self.links is not None:
            out.extend(self.links.notes())
        if self.sessions is not None:
            out.extend(self.sessions.notes())
        if self.not_runs:
            out.append(not_runs_note(self.not_runs))
        return out


def not_runs_note(count: int) -> str:
    """The note for traces that are no agent run, left out of every command."""
    return (
        f"left out {count} trace(s) that are no agent run: neither an agent invocation span nor a tool "
        "call (an agent being built, an MCP handshake, a plain request)"
    )


def check_signals(skipped: SkippedRecords, traces: int, report: ReadReport | None) -> None:
    """Record a file's requests of other signals in ``report``. A file that holds no trace request at
    all is left out with a note naming what it holds — a Collector's file exporter writes every signal,
    and ``op.configure()`` writes its metrics file beside its span file, so a folder or a glob of them
    is normal input; a command that finds no traces in any input then has no runs, and says so.
    Without a ``report`` nothing could say the file was left out, so it is an error instead."""
    if not skipped.counts:
        return
    if not traces:
        skipped = replace(skipped, holds_traces=False)
        if report is None:
            raise TraceReadError(skipped.source, skipped.problem)
    if report is not None:
        report.skipped.append(skipped)
