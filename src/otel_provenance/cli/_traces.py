"""A command's trace input: the chosen source, progress on a terminal, incomplete-input warnings.

Incomplete input (a file whose last line or record was cut off) is read up to the cut, a warning
names each file, and the command's result can then never be a pass: see ``cap_for_incomplete``.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Iterator, Sequence
from typing import TypeVar

from .. import semconv
from ..offline.engines.fold import RunFold
from ..offline.engines.source import TraceSource
from ..offline.model import Run
from ..offline.readers import ReadReport
from ..offline.release import DEFAULT_RELEASE_ATTRIBUTE
from . import _interrupt
from ._common import EXIT_INSUFFICIENT, EXIT_PASS, IO
from ._sources import open_source

P = TypeVar("P")


class _Progress:
    """``label NN%`` rewritten in place on stderr; only used when stderr is a terminal."""

    def __init__(self, io: IO) -> None:
        self.io = io
        self.shown = False
        self.last: tuple[str, int] | None = None

    def __call__(self, label: str, done: int, total: int) -> None:
        percent = 100 if total <= 0 else min(100, done * 100 // total)
        if (label, percent) == self.last:
            return
        self.last = (label, percent)
        self.io.stderr.write(f"\r{label[-60:]}: {percent:3d}%\x1b[K")
        self.io.stderr.flush()
        self.shown = True

    def clear(self) -> None:
        if self.shown:
            self.io.stderr.write("\r\x1b[K")
            self.io.stderr.flush()
            self.shown = False


class TraceInput:
    """The runs of whichever source the arguments chose, with a report of what the read found."""

    def __init__(
        self,
        io: IO,
        args: argparse.Namespace,
        paths: Sequence[str],
        release: str | None = None,
        keep: Callable[[str], bool] | None = None,
    ) -> None:
        self.io = io
        self._progress = _Progress(io) if io.is_tty else None
        self.source: TraceSource = open_source(args, paths, release, keep=keep, progress=self._on_progress)

    def _on_progress(self, label: str, done: int, total: int) -> None:
        """Called now and then while the source reads: where a Ctrl-C Python swallowed stops it."""
        _interrupt.check()
        if self._progress is not None:
            self._progress(label, done, total)

    @property
    def report(self) -> ReadReport:
        return self.source.report

    def runs(self) -> Iterator[Run]:
        try:
            yield from self.source.runs()
        finally:
            self._clear()

    def fold(self, fold: RunFold[P]) -> P:
        try:
            return self.source.fold(fold)
        finally:
            self._clear()

    def _clear(self) -> None:
        if self._progress is not None:
            self._progress.clear()

    def warn_incomplete(self) -> None:
        """Warn about what the read found short of an error that asks for a look — cut-off files, values
        that could not be read, links that could not join, a ``--run-attribute`` that may not identify
        runs — and note the rest (other signals, traces that are no run, what was joined): normal input
        holds them, so they are no warning (#49)."""
        for incomplete in self.report.incomplete:
            self.io.warn(f"incomplete input: {incomplete} — the complete records before it were read")
        warnings = self.report.warnings()
        for note in self.report.notes():
            (self.io.warn if note in warnings else self.io.note)(note)

    def cap_for_incomplete(self, code: int) -> int:
        """A pass on incomplete input becomes insufficient data (3); fail and error stand."""
        if code == EXIT_PASS and not self.report.complete:
            self.io.warn("the input is incomplete, so this result cannot pass (exit 3)")
            return EXIT_INSUFFICIENT
        return code


def add_traces_and_release(parser) -> None:  # argparse.ArgumentParser
    """The trace files a command reads, ``--release`` and ``--release-attribute``."""
    parser.add_argument(
        "traces",
        nargs="+",
        metavar="TRACES",
        help="OTLP JSON(L) or protobuf files, gzip ok (paths, globs, folders or fsspec URLs)",
    )
    parser.add_argument("--release", help="only runs whose service.version is RELEASE")
    add_release_attribute(parser)


def add_release_attribute(parser) -> None:  # argparse.ArgumentParser
    parser.add_argument(
        "--release-attribute",
        default=DEFAULT_RELEASE_ATTRIBUTE,
        metavar="KEY",
        help="resource (or span) attribute that names a run's release, read from the agent's own "
        f"spans (default: {DEFAULT_RELEASE_ATTRIBUTE})",
    )


def add_run_attribute(parser) -> None:  # argparse.ArgumentParser
    parser.add_argument(
        "--run-attribute",
        default=semconv.RUN_ID,
        metavar="KEY",
        help="attribute whose value joins traces into one run, e.g. gen_ai.conversation.id or "
        f"session.id (span, else resource; default {semconv.RUN_ID}: one run per trace otherwise)",
    )


def add_format(parser) -> None:  # argparse.ArgumentParser
    parser.add_argument(
        "--format", choices=("text", "json"), default="text", help="output format (default text)"
    )
