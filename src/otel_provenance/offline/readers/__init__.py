"""Read OTLP trace files into the span model, streaming.

Formats, sniffed per file from its bytes (never from its name); gzip and zstd undone transparently
(zstd needs the ``zstd`` extra), within ``ReadLimits`` on how far they may expand:

- **OTLP JSON Lines** — one ``ExportTraceServiceRequest`` per line: the official
  ``FileSpanExporter`` and the Collector file exporter. Streamed line by line.
- **A single OTLP JSON document** (e.g. pretty-printed). Read whole: memory ~ that file.
- **OTLP protobuf** — a serialised ``ExportTraceServiceRequest`` (or several concatenated). Read
  whole, parsed one ``ResourceSpans`` at a time.
- **Length-prefixed records** — the Collector file exporter with ``format: proto`` or with
  ``compression: zstd``: each request preceded by its length in 4 big-endian bytes, each protobuf or
  (compressed) JSON, each possibly zstd-compressed on its own (the exporter's legacy compression).
  Streamed record by record.

JSON may use the OTLP/JSON lowerCamelCase names or proto3's snake_case names, and the pre-1.0
``instrumentationLibrarySpans``/``instrumentationLibrary``; a duplicate member name is an error.
``{}`` is an empty request. A file the Collector shared between pipelines holds logs and metrics
requests too: those are skipped and counted in ``ReadReport.skipped`` (never silently), but a file
holding no traces at all is an error — it is the wrong file. Attribute values of an unknown kind
(``stringValueStrindex``) leave the attribute out and are counted in ``ReadReport.unknown_values``.

``read_spans`` yields spans in file order. ``iter_runs`` yields whole runs with memory bounded by
the largest run, not the file: a first pass indexes, per run key, the last line that mentions it
(a cheap byte scan for JSON Lines); the second pass converts, holds each run's spans and emits the
run once its last line has been read. The index itself costs ~100-150 bytes per run key (run ids
and trace ids, the traces packed into arrays once indexed: ``runs.PackedTraces``), so memory grows
slowly with the number of runs, never with their spans. Runs come
out in the order of their last line (ties by run id) — deterministic for the same files. Should the
index ever miss a mention, the run is held to the end of input, and a run that turns up again after
it was emitted is an error, never a split.

Problems raise ``TraceReadError`` naming file, line (or byte offset) and what was wrong; runs
that are not evidence raise ``InvalidEvidenceError``. An exception can surface after some runs
were yielded: consumers must not act on a partial iteration.

**Incomplete files.** A last line (or protobuf record) cut off mid-write — the writer was killed —
is *incomplete input*. Without a ``ReadReport`` that raises ``TraceReadError``. With one, the
complete records are read and the cut is recorded in ``report.incomplete``; the caller must then
treat its result as evidence with a known gap (the CLI never passes such input: see docs/offline.md).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Final

from ... import semconv
from ...errors import TraceReadError
from ..linked_runs import TraceLinks, join_linked_traces
from ..model import Run, Span
from ..runs import RunKeys, by_attribute, in_release, make_run, run_value
from ..sessions import SessionCheck, overlaps
from . import _convert, otlp_json
from ._compressed import ReadLimits
from .otlp_json import SIGNAL_TRACES
from .report import IncompleteFile, Progress, ReadReport, SkippedRecords, check_signals, not_runs_note
from .tracefile import DECODERS, DEFAULT_LIMITS, Decoder, TraceFile, Unconfirmed, Unit, judge, sniff_format

__all__ = [
    "DECODERS",
    "Decoder",
    "IncompleteFile",
    "Progress",
    "ReadLimits",
    "ReadReport",
    "SkippedRecords",
    "check_signals",
    "iter_runs",
    "not_runs_note",
    "read_spans",
    "sniff_format",
]

_EMITTED: Final = -1


def _convert_unit(
    tf: TraceFile, unit: Unit, report: ReadReport | None, keep, run_attribute: str | None = None
) -> tuple[list[Span], set[tuple[str, str]]]:
    """The unit's spans, counted into ``report``; with ``run_attribute``, read as the second pass of
    the run index reads them, with the pairs no span here carries (``TraceFile.run_spans``)."""
    before, beside = _convert.unknown_values, otlp_json.beside.copy()
    if run_attribute is None:
        spans, unconfirmed = tf.spans(unit, keep), set()
    else:
        spans, unconfirmed = tf.run_spans(unit, keep, run_attribute)
    if report is not None:
        report.spans += len(spans)
        report.unknown_values += _convert.unknown_values - before
        report.beside.update(otlp_json.beside - beside)
    return spans, unconfirmed


def read_spans(
    paths: Iterable[str | Path],
    *,
    report: ReadReport | None = None,
    keep: Callable[[str], bool] | None = None,
    limits: ReadLimits | None = None,
) -> Iterator[Span]:
    """Every span of every file, in file order; with ``keep``, only spans whose run key it accepts."""
    for path in paths:
        tf = TraceFile(str(path), limits or DEFAULT_LIMITS)
        if report is not None:
            report.files += 1
        for unit in tf.units(report, f"reading {tf.source}", count=True):
            yield from _convert_unit(tf, unit, report, keep)[0]


def _late_link(
    keys: RunKeys,
    trace_id: str,
    run_id: str,
    pending: dict[str, list[Span]],
    last_mention: dict[str, int],
    ends_at: dict[int, list[str]],
    unconfirmed: dict[str, list[Unconfirmed]],
) -> str | None:
    """Join ``trace_id``'s run and ``run_id``'s run, neither yet emitted; the joined run's name."""
    a, b = keys.run_of(trace_id), keys.resolve(run_id)
    if _EMITTED in (last_mention.get(a), last_mention.get(b)):
        return None
    keys.link(trace_id, run_id)
    joined = keys.run_of(trace_id)
    members = pending.pop(a, []) + pending.pop(b, [])
    if members:
        pending[joined] = members
    doubts = unconfirmed.pop(a, []) + unconfirmed.pop(b, [])
    if doubts:
        unconfirmed[joined] = doubts
    ends = [last_mention.pop(k) for k in (a, b) if k in last_mention]
    for where in ends:
        ends_at[where] = [k for k in ends_at[where] if k not in (a, b)]
    if ends:
        last_mention[joined] = max(ends)
        ends_at[max(ends)].append(joined)
    return joined


def _hold(
    spans: list[Span],
    keys: RunKeys,
    run_attribute: str,
    pending: dict[str, list[Span]],
    last_mention: dict[str, int],
    ends_at: dict[int, list[str]],
    source: str,
    line: int | None,
    unconfirmed: dict[str, list[Unconfirmed]],
) -> None:
    """One unit's spans, each onto the list of its run in ``pending``. A run is looked up once per
    trace and run value in the unit: the spans of a trace sit in few units, many to a unit."""
    held: dict[tuple[str, str | None], list[Span]] = {}  # (trace, run value) -> its run's list
    for span in spans:
        own = run_value(span, run_attribute)
        members = held.get((span.trace_id, own))
        if members is not None:
            members.append(span)
            continue
        key = keys.run_of(span.trace_id)
        if own and keys.resolve(own) != key:
            # The byte scan missed this link (an unusual key order): join the two runs now.
            key = _late_link(keys, span.trace_id, own, pending, last_mention, ends_at, unconfirmed)
            if key is None:
                raise TraceReadError(
                    source,
                    f"span {span.span_id}: agent.run.id joins trace {span.trace_id} to a run "
                    "that was already emitted",
                    line,
                )
            held.clear()  # the joined runs' lists are one new list
        if last_mention.get(key) == _EMITTED:
            problem = f"run {key} has spans after the point where the index saw it end"
            raise TraceReadError(source, problem, line)
        members = pending.get(key)
        if members is None:
            members = pending[key] = [span]
        else:
            members.append(span)
        held[(span.trace_id, own)] = members


def _trace_links(files: list[TraceFile], unit_counts: list[int], report: ReadReport | None) -> TraceLinks:
    """The link graph of the input (a read of its own, made only when some unit holds span links)."""
    links = TraceLinks()
    for tf, count in zip(files, unit_counts, strict=True):
        for unit in tf.units(report, f"linking {tf.source}", limit=count):
            if unit.signal == SIGNAL_TRACES:
                links.add_spans(tf.spans(unit))
    return links


def iter_runs(
    paths: Iterable[str | Path],
    release: str | None = None,
    *,
    report: ReadReport | None = None,
    keep: Callable[[str], bool] | None = None,
    limits: ReadLimits | None = None,
    run_attribute: str = semconv.RUN_ID,
) -> Iterator[Run]:
    """Validated runs of ``release`` (all when None), each emitted once its last line is read.

    ``run_attribute`` names the attribute that joins traces into runs (see ``offline.runs``).

    ``keep(run_id)`` is a parallelism hook: spans of runs it rejects are not even converted, so N
    processes each keeping a disjoint share (e.g. by a hash of the run id) split the work. Every
    line is still parsed in every process, and a malformed span is reported by the process whose
    share it falls in (or by all, when its run key cannot be told)."""
    files = [TraceFile(str(p), limits or DEFAULT_LIMITS) for p in paths]
    keys = RunKeys()
    trace_last: dict[int | str, int] = {}  # trace -> ordinal of the last unit that mentions it
    unit_counts: list[int] = []
    ordinal = 0
    linked = False  # a unit may hold span links: they are followed before runs are cut
    for tf in files:
        before = ordinal
        for unit in tf.units(report, f"indexing {tf.source}", count=True):
            ordinal += 1
            pairs, has_links = tf.index(unit, run_attribute)
            linked = linked or has_links
            for trace_id, run_id in pairs:
                key = keys.key(trace_id)
                keys.link_key(key, run_id)
                trace_last[key] = ordinal
        unit_counts.append(ordinal - before)
    custom = run_attribute != semconv.RUN_ID
    check = SessionCheck(run_attribute, *keys.named_counts()) if custom else None
    if report is not None:
        report.sessions = check
    if linked:
        joins = join_linked_traces(keys, _trace_links(files, unit_counts, report))
        if report is not None and (joins.joined or joins.refused):
            report.links = joins
    last_mention: dict[str, int] = {}  # run -> ordinal of the last unit that mentions any of its traces
    for key, where in trace_last.items():
        run = keys.run_of_key(key)
        if last_mention.get(run, 0) < where:
            last_mention[run] = where
    del trace_last  # the index is what bounds memory: keep only what the second pass needs
    keys.pack()
    ends_at: dict[int, list[str]] = defaultdict(list)
    for key, where in last_mention.items():
        ends_at[where].append(key)
    # A span's raw run key is its agent.run.id: with another run attribute, shards filter whole runs.
    shard_keep = None if keep is None or custom else (lambda raw_key: keep(keys.resolve(raw_key)))
    emit_keep = keep if custom else None

    pending: dict[str, list[Span]] = {}
    unconfirmed: dict[str, list[Unconfirmed]] = {}  # run -> pairs its spans must carry (tracefile.judge)
    ordinal = 0
    for tf, count in zip(files, unit_counts, strict=True):
        if report is not None:
            report.files += 1
        for unit in tf.units(report, f"reading {tf.source}", limit=count):
            ordinal += 1
            spans, doubts = _convert_unit(tf, unit, report, shard_keep, run_attribute)
            for trace_id, run_id in doubts:
                key = keys.run_of(trace_id)
                if keep is None or keep(key):  # another process's run is judged there
                    unconfirmed.setdefault(key, []).append((trace_id, run_id, tf.source, unit.line))
            _hold(
                spans, keys, run_attribute, pending, last_mention, ends_at, tf.source, unit.line, unconfirmed
            )
            for key in sorted(ends_at.pop(ordinal, ())):
                last_mention[key] = _EMITTED
                members = pending.pop(key, None)
                doubted = unconfirmed.pop(key, None)
                if doubted:
                    judge(doubted, members or [])
                if members:
                    run = make_run(key, members, tf.source)
                    if in_release(run, release) and (emit_keep is None or emit_keep(key)):
                        _check_session(check, run)
                        yield run
    for key in sorted(unconfirmed):  # runs without a span here (the pairs name span-less traces)
        judge(unconfirmed.pop(key), pending.get(key, []))
    for key in sorted(pending):  # keys the index did not see: held to the end
        run = make_run(key, pending.pop(key), files[-1].source if files else None)
        if in_release(run, release) and (emit_keep is None or emit_keep(key)):
            _check_session(check, run)
            yield run


def _check_session(check: SessionCheck | None, run: Run) -> None:
    """Note a run whose traces, joined by ``--run-attribute``, overlap in time (``offline.sessions``)."""
    if check is not None and by_attribute(run, check.attribute) and overlaps(run):
        check.overlapping.append(run.run_id)
