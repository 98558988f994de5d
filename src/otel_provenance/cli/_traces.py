"""Reading trace files for the offline commands: progress on a terminal, incomplete-file warnings.

Incomplete input (a file whose last line or record was cut off) is read up to the cut, a warning
names each file, and the command's result can then never be a pass: see ``cap_for_incomplete``.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from .. import semconv
from ..offline.model import Run
from ..offline.readers import ReadLimits, ReadReport, iter_runs
from ..offline.runs import group_runs
from ._common import EXIT_INSUFFICIENT, EXIT_PASS, IO, UsageError

_LIMIT_VARIABLES = {
    "OTEL_PROVENANCE_READ_MAX_BYTES": ("max_bytes", int),
    "OTEL_PROVENANCE_READ_MAX_RATIO": ("max_ratio", float),
}


def read_limits(environ: Mapping[str, str] = os.environ) -> ReadLimits:
    """Decompression limits, from ``OTEL_PROVENANCE_READ_MAX_BYTES`` / ``_MAX_RATIO`` when set."""
    values: dict[str, Any] = {}
    for variable, (name, kind) in _LIMIT_VARIABLES.items():
        text = environ.get(variable)
        if text:
            try:
                values[name] = kind(text)
            except ValueError:
                raise UsageError(f"{variable} must be a number, got {text[:40]!r}") from None
    try:
        return ReadLimits(**values)
    except ValueError as exc:
        raise UsageError(str(exc)) from None


def add_run_attribute(parser) -> None:  # argparse.ArgumentParser
    parser.add_argument(
        "--run-attribute",
        default=semconv.RUN_ID,
        metavar="KEY",
        help="attribute whose value joins traces into one run, e.g. gen_ai.conversation.id or "
        f"session.id (span, else resource; default {semconv.RUN_ID}: one run per trace otherwise)",
    )


class _Progress:
    """``label NN%`` rewritten in place on stderr; only used when stderr is a terminal."""

    def __init__(self, io: IO) -> None:
        self.io = io
        self.shown = False
        self.last = -1

    def __call__(self, label: str, done: int, total: int) -> None:
        percent = 100 if total <= 0 else min(100, done * 100 // total)
        if percent == self.last:
            return
        self.last = percent
        self.io.stderr.write(f"\r{label[-60:]}: {percent:3d}%\x1b[K")
        self.io.stderr.flush()
        self.shown = True

    def clear(self) -> None:
        if self.shown:
            self.io.stderr.write("\r\x1b[K")
            self.io.stderr.flush()
            self.shown = False


class TraceInput:
    """The runs of some trace files, read once, with a report of what the read found."""

    def __init__(
        self,
        io: IO,
        paths: Sequence[str],
        release: str | None = None,
        keep: Callable[[str], bool] | None = None,
        run_attribute: str = semconv.RUN_ID,
    ) -> None:
        self.io = io
        self.paths = list(paths)
        self.release = release
        self.keep = keep  # a shard's filter on run ids: other shards' spans are never converted
        self.run_attribute = run_attribute
        self.limits = read_limits()
        self._progress = _Progress(io) if io.is_tty else None
        self.report = ReadReport(progress=self._progress)

    def runs(self) -> Iterator[Run]:
        try:
            yield from iter_runs(
                self.paths,
                self.release,
                report=self.report,
                keep=self.keep,
                limits=self.limits,
                run_attribute=self.run_attribute,
            )
        finally:
            if self._progress is not None:
                self._progress.clear()

    def warn_incomplete(self) -> None:
        """Warn about what the read found short of an error: cut-off files, skipped other signals."""
        for incomplete in self.report.incomplete:
            self.io.warn(f"incomplete input: {incomplete} — the complete records before it were read")
        for note in self.report.notes():
            self.io.warn(note)

    def cap_for_incomplete(self, code: int) -> int:
        """A pass on incomplete input becomes insufficient data (3); fail and error stand."""
        if code == EXIT_PASS and not self.report.complete:
            self.io.warn("the input is incomplete, so this result cannot pass (exit 3)")
            return EXIT_INSUFFICIENT
        return code


class SigNozInput:
    """The runs of one release read from SigNoz's query API: the same interface as TraceInput.

    A query API answer has no torn last line, so the report is always complete; anything the reader
    cannot trust (auth, bad query, a server it cannot read absence from) raises instead."""

    def __init__(
        self,
        io: IO,
        url: str,
        release: str,
        start_ms: int,
        end_ms: int,
        run_attribute: str = semconv.RUN_ID,
        **options: Any,
    ) -> None:
        self.io = io
        self.url = url
        self.release = release
        self.window = (start_ms, end_ms)
        self.run_attribute = run_attribute
        self.options = options
        self.report = ReadReport()

    def runs(self) -> Iterator[Run]:
        from ..offline.readers.signoz import read_signoz

        start, end = self.window
        spans = read_signoz(self.url, release=self.release, start_ms=start, end_ms=end, **self.options)
        yield from group_runs(spans, self.release, self.run_attribute)

    def warn_incomplete(self) -> None:
        pass

    def cap_for_incomplete(self, code: int) -> int:
        return code


def add_format(parser) -> None:  # argparse.ArgumentParser
    parser.add_argument(
        "--format", choices=("text", "json"), default="text", help="output format (default text)"
    )
