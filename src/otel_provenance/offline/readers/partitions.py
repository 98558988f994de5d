"""Trace files cut into partitions that separate processes read: the worker side of ``DaskSource``.

A partition is a whole file, or — for an uncompressed JSON Lines file larger than the block size —
a byte range of it. A line belongs to the range it starts in, so ranges cut anywhere still give
each line to exactly one partition. Gzip, protobuf and single-document JSON files are one
partition each (they cannot be entered in the middle).

Reading a partition goes through the same ``TraceFile`` code as ``iter_runs`` (sniffing, framing,
the cut-off last line, span conversion), so a partition yields exactly the units and spans the
single-process reader sees there. Two passes, as in ``iter_runs``:

1. :func:`index_partition` — the ``(trace id, agent.run.id)`` links of the partition (a byte scan
   for JSON Lines), how many lines/records it has, and whether its last line was cut off; when some
   partition holds span links, :func:`link_partition` gives its part of the link graph.
2. :func:`split_partition` — its spans, converted and sorted into buckets by run key (given by the
   caller, who joined every partition's links), for the per-bucket step that builds whole runs.

Each returns plain data or a :class:`Failed` carrying the error message: input errors are answers,
not worker crashes, so the cluster never retries them.
"""

from __future__ import annotations

import dataclasses
import hashlib
import itertools
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field

from ... import semconv
from ...errors import OtelProvenanceError, TraceReadError
from ..linked_runs import TraceLinks
from ..model import Span
from ..runs import RunKeys, run_value
from . import _convert, locations, otlp_json
from ._compressed import GZIP_MAGIC, ReadLimits
from ._zstd_frames import starts_zstd
from .otlp_json import SIGNAL_EMPTY, SIGNAL_TRACES
from .report import IncompleteFile, ReadReport, SkippedRecords, check_signals
from .tracefile import FORMAT_JSONL, TraceFile, Unconfirmed, Unit


@dataclass(frozen=True, slots=True)
class Partition:
    source: str  # the path or URL, as given (it names the file in messages and reports)
    start: int | None = None  # byte range of a JSON Lines file; None: the whole file
    end: int | None = None


@dataclass(frozen=True, slots=True)
class Failed:
    """An error a task met in the input: the command reports it and exits 1."""

    message: str


@dataclass(frozen=True, slots=True)
class Indexed:
    links: frozenset[tuple[str, str | None]]
    units: int  # lines (JSON Lines: every line, blank ones too) or records read
    incomplete: IncompleteFile | None  # line numbers relative to the partition
    traces: int = 0  # trace requests (lines or records)
    skipped: SkippedRecords | None = None  # other signals' requests, judged per file by the caller
    linked: bool = False  # a unit may hold span links: the caller then asks for them (link_partition)


@dataclass(slots=True)
class Split:
    buckets: dict[int, dict[str, list[Span]]] = field(default_factory=dict)  # bucket -> run key -> spans
    spans: int = 0
    missed: set[tuple[str, str | None]] = field(default_factory=set)  # links the index did not have
    # run key -> pairs the index made that no span on their line carries (``tracefile.judge``)
    unconfirmed: dict[str, list[Unconfirmed]] = field(default_factory=dict)
    unknown_values: int = 0  # attribute values of a kind the reader does not know, left out
    beside: Counter[str] = field(default_factory=Counter)  # other signals held beside spans, left out


# Workers read with the default decompression limits (OTEL_PROVENANCE_READ_* apply in the client's
# process only; compressed files are read whole by one worker).
_LIMITS = ReadLimits()


def bucket_of(run_key: str, buckets: int) -> int:
    digest = hashlib.blake2b(run_key.encode("utf-8"), digest_size=8).digest()
    return int.from_bytes(digest, "big") % buckets


def plan(source: str, block_size: int) -> list[Partition] | Failed:
    """The partitions of one file: byte ranges of a large uncompressed JSON Lines file, else whole."""
    try:
        tf = TraceFile(source, _LIMITS)
        if tf.format != FORMAT_JSONL or tf.size <= block_size:
            return [Partition(source)]
        if compressed(source):  # read whole
            return [Partition(source)]
    except OtelProvenanceError as exc:
        return Failed(str(exc))
    except OSError as exc:
        return Failed(str(TraceReadError(source, f"cannot read file ({exc.strerror or type(exc).__name__})")))
    edges = [*range(0, tf.size, block_size), tf.size]
    return [Partition(source, a, b) for a, b in itertools.pairwise(edges)]


def compressed(source: str) -> bool:
    """Whether the file is a gzip or zstd stream (which cannot be entered in the middle)."""
    with locations.open_binary(source) as f:
        head = f.read(4)
    return head.startswith(GZIP_MAGIC) or starts_zstd(head)


class _Counted:
    """The lines of a byte range, counted as they are read."""

    def __init__(self, part: Partition, limit: int | None) -> None:
        self.part, self.limit, self.count = part, limit, 0

    def __iter__(self) -> Iterator[bytes]:
        start, end = self.part.start or 0, self.part.end or 0
        with locations.open_binary(self.part.source) as f:
            if start > 0:
                f.seek(start - 1)
                f.readline()  # the line that began before the range belongs to the range before
            position = f.tell()
            while position < end and self.count != self.limit:
                line = f.readline()
                if not line:
                    return
                self.count += 1
                position += len(line)
                yield line


def _units(tf: TraceFile, part: Partition, report: ReadReport, limit: int | None) -> Iterator[Unit]:
    if part.start is None:
        yield from tf.units(report, tf.source, limit)
        return
    try:
        yield from tf._jsonl_units(_Counted(part, limit), report, tf.source)  # type: ignore[arg-type]
    except OSError as exc:
        raise TraceReadError(tf.source, f"read failed ({type(exc).__name__})") from None


def index_partition(
    part: Partition, run_attribute: str = semconv.RUN_ID, limits: ReadLimits = _LIMITS
) -> Indexed | Failed:
    """The partition's run index (``run_attribute`` names runs: see ``TraceFile.index``)."""
    report = ReadReport()
    try:
        tf = TraceFile(part.source, limits)
        links: set[tuple[str, str | None]] = set()
        signals: Counter[str] = Counter()
        units, linked = 0, False
        if part.start is None:
            for unit in _units(tf, part, report, None):
                units += 1
                signals[unit.signal] += 1
                pairs, has_links = tf.index(unit, run_attribute)
                links |= pairs
                linked = linked or has_links
        else:
            lines = _Counted(part, None)
            for unit in tf._jsonl_units(lines, report, tf.source):  # type: ignore[arg-type]
                signals[unit.signal] += 1
                pairs, has_links = tf.index(unit, run_attribute)
                links |= pairs
                linked = linked or has_links
            units = lines.count
    except OtelProvenanceError as exc:
        return Failed(str(exc))
    except OSError as exc:
        return Failed(str(TraceReadError(part.source, f"read failed ({type(exc).__name__})")))
    traces = signals.pop(SIGNAL_TRACES, 0)
    signals.pop(SIGNAL_EMPTY, None)
    skipped = tf.skipped_records(signals) if signals else None
    cut = report.incomplete[0] if report.incomplete else None
    return Indexed(frozenset(links), units, cut, traces, skipped, linked)


def link_partition(part: Partition, units: int, limits: ReadLimits = _LIMITS) -> TraceLinks | Failed:
    """The partition's part of the link graph (``offline.linked_runs``): asked for only when some
    partition's index found span links."""
    links = TraceLinks()
    try:
        tf = TraceFile(part.source, limits)
        for unit in _units(tf, part, ReadReport(), units):
            if unit.signal == SIGNAL_TRACES:
                links.add_spans(tf.spans(unit))
    except OtelProvenanceError as exc:
        return Failed(str(exc))
    except OSError as exc:
        return Failed(str(TraceReadError(part.source, f"read failed ({type(exc).__name__})")))
    return links


def split_partition(
    part: Partition,
    first_line: int,
    units: int,
    run_of: dict[str, str],
    known: frozenset[tuple[str, str]],
    buckets: int,
    owners: dict[str, int] | None = None,
    run_attribute: str = semconv.RUN_ID,
    limits: ReadLimits = _LIMITS,
) -> Split | Failed:
    """The partition's spans by bucket and run key. ``run_of`` maps each trace the index saw here to
    its run; ``known`` holds the run-id links it saw; ``owners``, when given, the bucket of each of
    those runs (else a hash of its key). A span telling more (a link the byte scan missed) is
    reported in ``missed``, and the caller redoes this pass with the joined runs."""
    split = Split()
    try:
        tf = TraceFile(part.source, limits)
        unknown_before, beside_before = _convert.unknown_values, otlp_json.beside.copy()
        for unit in _units(tf, part, ReadReport(), units):
            if unit.line is not None and first_line:
                unit = dataclasses.replace(unit, line=unit.line + first_line)
            spans, doubts = tf.run_spans(unit, None, run_attribute)
            for trace_id, run_id in doubts:
                doubted = run_of.get(trace_id, trace_id)
                split.unconfirmed.setdefault(doubted, []).append((trace_id, run_id, tf.source, unit.line))
            split.spans += len(spans)
            for span in spans:
                trace = span.trace_id
                own = run_value(span, run_attribute)
                key = run_of.get(trace)
                if key is None or (own is not None and (trace, own) not in known):
                    split.missed.add((trace, own))
                    key = key or own or trace
                bucket = owners.get(key) if owners is not None else None
                by_run = split.buckets.setdefault(bucket_of(key, buckets) if bucket is None else bucket, {})
                members = by_run.get(key)
                if members is None:
                    by_run[key] = [span]
                else:
                    members.append(span)
        split.unknown_values = _convert.unknown_values - unknown_before
        split.beside = otlp_json.beside - beside_before
    except OtelProvenanceError as exc:
        return Failed(str(exc))
    except OSError as exc:
        return Failed(str(TraceReadError(part.source, f"read failed ({type(exc).__name__})")))
    return split


def join_indexes(indexed: list[Indexed]) -> RunKeys:
    """The run keys of the whole input: every partition's links joined (``runs.RunKeys``)."""
    keys = RunKeys()
    for ix in indexed:
        for trace_id, run_id in ix.links:
            keys.link(trace_id, run_id)
    return keys


def judge_signals(parts: list[Partition], indexed: list[Indexed], report: ReadReport) -> None:
    """Other signals' requests, per file as the single-process reader counts them (a file with
    none but those is left out, with a note)."""
    files: dict[str, tuple[Counter[str], int, str]] = {}
    for part, ix in zip(parts, indexed, strict=True):
        counts, traces, unit = files.setdefault(part.source, (Counter(), 0, "lines"))
        if ix.skipped is not None:
            counts.update(dict(ix.skipped.counts))
            unit = ix.skipped.unit
        files[part.source] = (counts, traces + ix.traces, unit)
    for source, (counts, traces, unit) in files.items():
        if counts:
            check_signals(SkippedRecords(source, tuple(sorted(counts.items())), unit), traces, report)


def first_lines(parts: list[Partition], indexed: list[Indexed], report: ReadReport) -> list[int]:
    """Each partition's first line number in its file (0 for whole files); the cut-off last lines
    the indexes found go to ``report``, numbered in their files."""
    lines, line_in_file, previous = [], 0, None
    for part, ix in zip(parts, indexed, strict=True):
        if part.source != previous:
            line_in_file, previous = 0, part.source
        lines.append(line_in_file if part.start is not None else 0)
        if ix.incomplete is not None:
            cut = ix.incomplete
            line = None if cut.line is None else cut.line + lines[-1]
            report.incomplete.append(IncompleteFile(cut.source, line, cut.problem))
        line_in_file += ix.units
    return lines
