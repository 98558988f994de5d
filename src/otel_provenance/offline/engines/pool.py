"""``PoolSource``: the trace files read by N processes of this machine, each folding its share of runs.

Uncompressed input is split by bytes (``ranges``, #46): each process indexes, converts and folds
its own partitions (byte ranges of JSON Lines files at line boundaries, other files whole), and
only the spans of runs that cross a partition's edge come back, to be folded here. So each line is
decoded once, by one process.

Input holding a gzip or zstd file (it cannot be entered in the middle) is read the older way: each
process reads every file but converts only the spans of the runs whose run id hashes to its shard
(``gate.Shard``), folds those runs, and sends back the partial value with what its read found. In
both ways the partials are merged with the fold's own ``merge``, which is exact for every fold in
``fold.py`` (tested byte for byte against one process), so N changes the time, never the result.

What each process's report holds, the older way, and how the reports add up: every process sees
every file and every request, so files, skipped other signals, signals held beside spans and the
traces span links joined are taken from the first process alone; spans, attribute values of an
unknown kind and traces that are no run are counted only for the runs a process converts, so they
are summed; a file cut off mid-write is noted once, whoever saw it.

Ctrl-C: the workers ignore SIGINT; the parent alone gets ``KeyboardInterrupt`` and terminates and
reaps them at once (waiting for the pool would wait for every shard's read), so none is left behind.
The same holds in each round of the byte-range way (index, links, fold).

A fold and its arguments go to the processes by pickling: the folds of ``fold.py`` are partial
applications of module-level functions, and a contract pickles as plain frozen data.
"""

from __future__ import annotations

import signal
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from ... import semconv
from ...errors import OtelProvenanceError
from ..gate import Shard
from ..linked_runs import TraceLinks
from ..model import Run
from ..readers import ReadLimits, ReadReport
from ..readers.partitions import Failed, Indexed, Partition, index_partition, link_partition
from ..release import DEFAULT_RELEASE_ATTRIBUTE
from ..sessions import SessionCheck
from . import ranges
from .fold import RunFold
from .source import FileSource

if TYPE_CHECKING:
    from concurrent.futures import Future, ProcessPoolExecutor

P = TypeVar("P")

#: How often the parent calls the progress callback while its processes fold (the CLI's callback is
#: also where a Ctrl-C that Python swallowed stops the command).
_HEARTBEAT_S = 0.2


@dataclass(frozen=True)
class _Part:
    """One process's answer: its partial value and what its read found (or the error it met)."""

    value: Any
    report: ReadReport | None
    error: str | None = None


class PoolSource:
    """Trace files (paths, globs, folders, fsspec URLs) read in ``jobs`` processes of this machine."""

    def __init__(
        self,
        paths: Sequence[str],
        jobs: int,
        release: str | None = None,
        *,
        progress: Callable[[str, int, int], None] | None = None,
        release_attribute: str = DEFAULT_RELEASE_ATTRIBUTE,
        run_attribute: str = semconv.RUN_ID,
        limits: ReadLimits | None = None,
    ) -> None:
        if jobs < 1:
            raise ValueError("jobs must be at least 1")
        self.paths = list(paths)
        self.jobs = jobs
        self.release = release
        self.release_attribute = release_attribute
        self.run_attribute = run_attribute
        self.limits = limits
        self.report = ReadReport(progress=progress)

    def _files(self, keep: Callable[[str], bool] | None = None) -> FileSource:
        return FileSource(
            self.paths,
            self.release,
            keep=keep,
            release_attribute=self.release_attribute,
            run_attribute=self.run_attribute,
            limits=self.limits,
        )

    def fold(self, fold: RunFold[P]) -> P:
        # concurrent.futures (and logging, and multiprocessing) is loaded for --jobs N only, not by
        # every gate that imports this module
        from concurrent.futures import ProcessPoolExecutor

        pool = ProcessPoolExecutor(max_workers=self.jobs, initializer=_leave_interrupts_to_the_parent)
        try:
            planned = ranges.plan_ranges(self.paths, self.jobs)
            if planned is not None:
                value, found = self._fold_ranges(pool, *planned, fold)
                reports = [found]
            else:  # compressed input: every process reads every line
                shards = [pool.submit(_fold_shard, self, fold, i) for i in range(1, self.jobs + 1)]
                answers = self._gather(shards)
                failed = next((p.error for p in answers if p.error is not None), None)
                if failed is not None:
                    raise OtelProvenanceError(failed)
                value = answers[0].value
                for part in answers[1:]:
                    value = fold.merge(value, part.value)
                reports = [p.report for p in answers if p.report is not None]
        except BaseException:  # Ctrl-C (KeyboardInterrupt) or an error: stop the workers now
            _stop(pool)
            raise
        pool.shutdown()
        self._add(reports)
        return value

    def _gather(self, futures: list[Future[Any]]) -> list[Any]:
        """The futures' results in order; the progress callback hears from the parent a few times a
        second meanwhile (the CLI's callback is also where a swallowed Ctrl-C stops the command)."""
        from concurrent.futures import FIRST_EXCEPTION, wait  # with the pool: for --jobs N only

        while True:
            done, waiting = wait(futures, timeout=_HEARTBEAT_S, return_when=FIRST_EXCEPTION)
            if self.report.progress is not None:
                self.report.progress(f"{self.jobs} processes", len(done), len(futures))
            for future in done:
                future.result()  # a worker's crash (not an input error: those come back as answers)
            if not waiting:
                return [future.result() for future in futures]

    def _fold_ranges(
        self, pool: ProcessPoolExecutor, files: list[str], parts: list[Partition], fold: RunFold[P]
    ) -> tuple[P, ReadReport]:
        """``fold`` with each partition read, converted and folded by one process (``ranges``)."""
        found = ReadReport()
        limits = self.limits or ReadLimits()
        indexed: list[Indexed] = _answers(
            self._gather([pool.submit(index_partition, p, self.run_attribute, limits) for p in parts])
        )

        def link_graphs() -> list[TraceLinks]:
            units = [ix.units for ix in indexed]
            graphs = [pool.submit(link_partition, p, n, limits) for p, n in zip(parts, units, strict=True)]
            return _answers(self._gather(graphs))

        keys = ranges.join_runs(parts, indexed, found, self.run_attribute, link_graphs)
        job = ranges.Job(fold, self.release, self.release_attribute, self.run_attribute, limits)

        def fold_round(shares: list[ranges.Assigned]) -> list[ranges.RangePart]:
            pairs = zip(parts, shares, strict=True)
            return _answers(self._gather([pool.submit(ranges.fold_range, p, s, job) for p, s in pairs]))

        value = ranges.fold_partitions(parts, indexed, keys, job, found, fold_round)
        found.files = len(files)
        return value, found

    def runs(self) -> Iterator[Run]:
        """Every run, read in this process (the processes pay off for folds, which they merge)."""
        files = self._files()
        try:
            yield from files.runs()
        finally:
            self._add([files.report])

    def _add(self, reports: list[ReadReport]) -> None:
        report, first = self.report, reports[0]
        report.files += first.files
        report.skipped.extend(first.skipped)
        report.beside.update(first.beside)
        report.links = first.links  # every process joins the same traces: the index is the input's
        checks = [part.sessions for part in reports if part.sessions is not None]
        if checks:  # the counts are the index's, the same in each; each process checks its own runs
            report.sessions = SessionCheck(checks[0].attribute, checks[0].traces, checks[0].runs)
            for check in checks:
                report.sessions.add(check)
        for part in reports:
            report.spans += part.spans
            report.unknown_values += part.unknown_values
            report.not_runs += part.not_runs
            known = {str(item) for item in report.incomplete}
            report.incomplete.extend(item for item in part.incomplete if str(item) not in known)

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["report"] = ReadReport()  # a progress callback does not cross processes
        return state


def _leave_interrupts_to_the_parent() -> None:
    """In each worker: ignore SIGINT. Ctrl-C reaches the terminal's whole process group; the parent
    alone turns it into KeyboardInterrupt and stops the workers (``_stop``), so no worker prints a
    traceback of its own or keeps working after the command has ended."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _stop(pool: ProcessPoolExecutor) -> None:
    """End the pool at once: cancel what has not started and terminate the workers mid-fold (their
    partial values are thrown away; nothing of theirs is written), then reap them, so that none is
    left orphaned. ``shutdown(wait=True)`` would wait for every shard to finish reading."""
    workers = list((getattr(pool, "_processes", None) or {}).values())  # the executor's own record
    manager = getattr(pool, "_executor_manager_thread", None)
    pool.shutdown(wait=False, cancel_futures=True)
    for worker in workers:
        if worker.is_alive():
            worker.terminate()
    for worker in workers:
        worker.join(timeout=5)
        if worker.is_alive():
            worker.kill()
            worker.join(timeout=5)
    if manager is not None:
        # The executor's manager thread closes its wake-up pipe once it sees the workers gone; were it
        # still doing so at interpreter exit, the executor's exit hook would write to the closing pipe
        # (Python 3.11: "OSError: Bad file descriptor" printed after "interrupted").
        manager.join(timeout=5)


def _answers(answers: list[Any]) -> list[Any]:
    """``answers``, or the first input error among them raised (as one process raises it)."""
    failed = next((a for a in answers if isinstance(a, Failed)), None)
    if failed is not None:
        raise OtelProvenanceError(failed.message)
    return answers


def _fold_shard(source: PoolSource, fold: RunFold[Any], index: int) -> _Part:
    """One process: shard ``index`` of ``source.jobs``, folded (an input error is returned, since
    exceptions with extra fields do not cross processes intact)."""
    shard = Shard(index, source.jobs)
    files = source._files(keep=shard.owns)
    try:
        value = files.fold(fold)
    except OtelProvenanceError as exc:
        return _Part(None, None, str(exc))
    files.report.progress = None
    return _Part(value, files.report)
