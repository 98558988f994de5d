"""Where runs come from: one ``TraceSource`` protocol, and the sources that read in this process.

A source yields whole runs (``runs()``), runs a :class:`~..fold.RunFold` over them (``fold()``) and
keeps a :class:`ReadReport` of what it read (files, spans) and what it had to skip (files cut off
mid-write). The CLI picks a source from its arguments in one place (``cli/_sources.py``); the
commands only see this protocol, so a new backend is a new module implementing it.

- :class:`FileSource` — OTLP files: local paths, globs or fsspec URLs (see ``locations``).
- :class:`SigNozSource` — one release's traces from SigNoz's query API.
- ``dask_cluster.DaskSource`` — the same files read, grouped and folded on a Dask cluster.
- ``pool.PoolSource`` — the same files read in N processes, each folding its share of the runs.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, Protocol, TypeVar, runtime_checkable

from ... import semconv
from ..model import Run
from ..readers import ReadLimits, ReadReport, iter_runs, locations
from ..release import DEFAULT_RELEASE_ATTRIBUTE
from ..runs import group_runs, in_release
from .fold import RunFold

P = TypeVar("P")


@runtime_checkable
class TraceSource(Protocol):
    """Runs from somewhere, with a report of what was read and skipped."""

    report: ReadReport

    def runs(self) -> Iterator[Run]:
        """Every validated run, each once (an exception may come after some runs: do not act on those)."""
        ...

    def fold(self, fold: RunFold[P]) -> P:
        """``fold`` over every run; the same value whatever the source's grouping of the work."""
        ...


def agent_runs(runs: Iterable[Run], report: ReadReport) -> Iterator[Run]:
    """The agent runs of ``runs`` (``Run.is_agent_run``); the others are counted in ``report``. Every
    source applies this, so that every command leaves out, and counts, the traces that are no run."""
    for run in runs:
        if run.is_agent_run:
            yield run
        else:
            report.not_runs += 1


class FileSource:
    """OTLP trace files (JSON Lines, JSON, protobuf; gzip fine), streamed run by run in this process."""

    def __init__(
        self,
        paths: Sequence[str],
        release: str | None = None,
        *,
        keep: Callable[[str], bool] | None = None,
        progress: Callable[[str, int, int], None] | None = None,
        release_attribute: str = DEFAULT_RELEASE_ATTRIBUTE,
        run_attribute: str = semconv.RUN_ID,
        limits: ReadLimits | None = None,
    ) -> None:
        self.paths = list(paths)
        self.release = release
        self.release_attribute = release_attribute
        self.run_attribute = run_attribute
        self.limits = limits
        self.keep = keep  # a shard's filter on run ids: other shards' spans are never converted
        self.report = ReadReport(progress=progress)

    def runs(self) -> Iterator[Run]:
        read = dict(report=self.report, keep=self.keep, limits=self.limits, run_attribute=self.run_attribute)
        runs = agent_runs(iter_runs(locations.expand(self.paths), **read), self.report)
        yield from (r for r in runs if in_release(r, self.release, self.release_attribute))

    def fold(self, fold: RunFold[P]) -> P:
        return fold.over(self.runs())


class SigNozSource:
    """The traces of one release read from SigNoz's query API (``readers.signoz``).

    A query API answer has no torn last line, so the report is always complete; anything the reader
    cannot trust (auth, bad query, a server it cannot read absence from) raises instead."""

    def __init__(
        self,
        url: str,
        release: str,
        start_ms: int,
        end_ms: int,
        run_attribute: str = semconv.RUN_ID,
        **options: Any,
    ) -> None:
        self.url = url
        self.run_attribute = run_attribute
        self.release = release
        self.window = (start_ms, end_ms)
        self.options = options
        self.report = ReadReport()

    def runs(self) -> Iterator[Run]:
        from ..readers.signoz import read_signoz

        start, end = self.window
        spans = list(read_signoz(self.url, release=self.release, start_ms=start, end_ms=end, **self.options))
        self.report.spans += len(spans)
        runs = group_runs(spans, run_attribute=self.run_attribute, report=self.report)
        # Not filtered by release: a run that also holds other releases' spans is counted as such.
        yield from agent_runs(runs, self.report)

    def fold(self, fold: RunFold[P]) -> P:
        return fold.over(self.runs())
