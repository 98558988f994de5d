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
and trace ids), so memory grows slowly with the number of runs, never with their spans. Runs come
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

import codecs
import gzip
import json
import re
import zlib
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import IO, Any, Final

from ... import semconv
from ...errors import TraceReadError
from ..model import Run, Span
from ..runs import RunKeys, in_release, make_run, run_value
from . import _convert, _json, locations, otlp_json, otlp_proto
from ._compressed import ReadLimits, open_input, position, truncated, zstd_decompress_record
from ._zstd_frames import ZSTD_MAGIC

__all__ = [
    "IncompleteFile",
    "ReadLimits",
    "ReadReport",
    "SkippedRecords",
    "iter_runs",
    "read_spans",
    "sniff_format",
]

Progress = Callable[[str, int, int], None]
"""``progress(label, bytes_done, bytes_total)``, called now and then while a file is read."""

_JSON_START: Final = re.compile(rb'\s*\{\s*(?:"[^"\\\x00-\x1f]*"\s*:|\})')
_SNIFF_BYTES: Final = 4096
_PROGRESS_EVERY: Final = 2048
_EMITTED: Final = -1
_DEFAULT_LIMITS: Final = ReadLimits()

FORMAT_JSONL: Final = "otlp-json-lines"
FORMAT_JSON: Final = "otlp-json"
FORMAT_PROTO: Final = "otlp-protobuf"
FORMAT_FRAMED: Final = "otlp-length-prefixed"
FORMAT_EMPTY: Final = "empty"
FORMAT_BOM: Final = "json-with-bom"  # not readable: named so the error can say why
FORMAT_TEXT: Final = "text"  # not readable: text that is not OTLP JSON

_TRACES: Final = otlp_json.SIGNAL_TRACES
_EMPTY: Final = otlp_json.SIGNAL_EMPTY
# How a unit's payload is held
_JSON_RAW: Final = "json-raw"  # bytes of one JSON request
_JSON_DOC: Final = "json-doc"  # a parsed JSON request
_PB_RECORD: Final = "pb-record"  # one serialised ResourceSpans
_SKIP: Final = "skip"  # a request of another signal (payload None)


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
        if self.not_runs:
            out.append(not_runs_note(self.not_runs))
        return out


def not_runs_note(count: int) -> str:
    """The note for traces that are no agent run, left out of every command."""
    return (
        f"left out {count} trace(s) that are no agent run: neither an agent invocation span nor a tool "
        "call (an agent being built, an MCP handshake, a plain request)"
    )


@dataclass(frozen=True, slots=True)
class _Unit:
    line: int | None  # 1-based line (JSON), None for protobuf records
    offset: int  # protobuf: byte offset in the (decompressed) file of the record or its length prefix
    kind: str
    payload: Any
    signal: str = _TRACES


class _TraceFile:
    """One input file: its format, and its records ("units") for either pass."""

    def __init__(self, path: str, limits: ReadLimits) -> None:
        self.source = path
        self.limits = limits
        try:
            self.size = locations.size(path)
            f = open_input(path, limits)
            try:
                self.format = _sniff(f)
            finally:
                f.close()
        except OSError as exc:
            raise TraceReadError(path, f"cannot read file ({exc.strerror or type(exc).__name__})") from None
        except Exception as exc:
            if not _is_decompression_error(exc):
                raise
            raise TraceReadError(
                path, f"corrupt or truncated compressed data ({type(exc).__name__})"
            ) from None

    def units(
        self, report: ReadReport | None, label: str, limit: int | None = None, count: bool = False
    ) -> Iterator[_Unit]:
        """The file's units; with ``count``, requests of other signals are counted into ``report``
        and a file with nothing but other signals is an error."""
        try:
            f = open_input(self.source, self.limits)
        except OSError as exc:
            raise TraceReadError(
                self.source, f"cannot read file ({exc.strerror or type(exc).__name__})"
            ) from None
        skipped: Counter[str] = Counter()
        traces = 0
        try:
            if self.format == FORMAT_JSONL:
                units = self._jsonl_units(f, report, label)
            elif self.format == FORMAT_JSON:
                units = self._document_units(f)
            elif self.format == FORMAT_PROTO:
                units = self._proto_units(f, report)
            elif self.format == FORMAT_FRAMED:
                units = self._framed_units(f, report, label)
            elif self.format == FORMAT_BOM:
                raise TraceReadError(self.source, "starts with a UTF-8 byte-order mark (remove it)", 1)
            elif self.format == FORMAT_TEXT:
                raise TraceReadError(self.source, "text that is neither OTLP JSON nor OTLP protobuf", 1)
            else:  # empty, yet read to its end: a compressed stream may be cut before its first byte
                f.read(1)
                units = iter(())
            if limit != 0:  # 0: the index found nothing in this file, so there is nothing to read again
                for seen, unit in enumerate(units, 1):
                    if unit.signal == _TRACES:
                        traces += 1
                    elif unit.signal != _EMPTY:
                        skipped[unit.signal] += 1
                    yield unit
                    if seen == limit:  # the second pass stops where the first one did, without reading on
                        break
                else:
                    cut = truncated(f)
                    if cut:  # a compressed stream cut off: the records before the cut were read
                        problem = _cut_message(cut) + " (was the writer stopped mid-write?)"
                        self._incomplete(report, None, problem)
        except TraceReadError:
            raise
        except Exception as exc:
            if not isinstance(exc, OSError) and not _is_decompression_error(exc):
                raise
            problem = (
                "read failed"
                if isinstance(exc, OSError) and not _is_decompression_error(exc)
                else "corrupt compressed data"
            )
            raise TraceReadError(self.source, f"{problem} ({type(exc).__name__})") from None
        finally:
            f.close()
        if count:
            self._count(report, skipped, traces)
        if report is not None and report.progress is not None:
            report.progress(label, self.size, self.size)

    def _count(self, report: ReadReport | None, skipped: Counter[str], traces: int) -> None:
        if skipped:
            check_signals(self.skipped_records(skipped), traces, report)

    def skipped_records(self, skipped: Counter[str]) -> SkippedRecords:
        unit = "lines" if self.format in (FORMAT_JSONL, FORMAT_JSON) else "records"
        return SkippedRecords(self.source, tuple(sorted(skipped.items())), unit)

    def _incomplete(self, report: ReadReport | None, line: int | None, problem: str) -> None:
        if report is None:
            raise TraceReadError(self.source, f"incomplete file: {problem}", line)
        if all(known.source != self.source for known in report.incomplete):  # once, though read twice
            report.incomplete.append(IncompleteFile(self.source, line, problem))

    def _jsonl_units(self, f: IO[bytes], report: ReadReport | None, label: str) -> Iterator[_Unit]:
        progress = report.progress if report is not None else None
        for line_no, raw in enumerate(f, 1):
            if raw.isspace():  # a blank line, whatever its whitespace (stops at a line's first byte)
                continue
            if not raw.endswith(b"\n"):  # the last line: complete but unterminated, or cut off
                try:
                    json.loads(raw)
                except (ValueError, RecursionError):
                    cut = truncated(f)
                    problem = _cut_message(cut) if cut else "the last line is cut off"
                    self._incomplete(report, line_no, problem + " (was the writer stopped mid-write?)")
                    return
            yield _Unit(line_no, 0, _JSON_RAW, raw, otlp_json.raw_signal(raw))  # named by its line
            if progress is not None and line_no % _PROGRESS_EVERY == 0:
                progress(label, position(f), self.size)

    def _document_units(self, f: IO[bytes]) -> Iterator[_Unit]:
        raw = f.read()
        try:
            doc = _json.loads(raw)
        except _json.DuplicateMember as exc:
            line = _json.line_of_duplicate(raw.decode("utf-8", "replace"))
            raise TraceReadError(self.source, str(exc), line) from None
        except _convert._Bad as exc:
            line = None
            try:
                json.loads(raw)
            except json.JSONDecodeError as err:
                line = err.lineno
            except (ValueError, RecursionError):
                pass
            raise TraceReadError(self.source, str(exc), line) from None
        try:
            signal = otlp_json.request_signal(doc)
        except _convert._Bad as exc:
            raise TraceReadError(self.source, str(exc)) from None
        yield _Unit(None, 0, _JSON_DOC if signal == _TRACES else _SKIP, doc, signal)

    def _proto_units(self, f: IO[bytes], report: ReadReport | None) -> Iterator[_Unit]:
        data = f.read()
        try:
            signal = otlp_proto.signal_of(data)
        except _convert._Bad:
            signal = _TRACES  # cut off or malformed: the record reader below says where
        if signal not in (_TRACES, _EMPTY):
            yield _Unit(None, 0, _SKIP, None, signal)
            return
        yield from self._records(data, None, report)

    def _records(self, data: bytes, frame: int | None, report: ReadReport | None) -> Iterator[_Unit]:
        """The ``ResourceSpans`` records of one request: a whole file, or a length-prefixed record
        that starts at byte ``frame``."""
        base = frame or 0
        try:
            for offset, record in otlp_proto.resource_span_records(data):
                # errors name the length-prefixed record in a framed file, else the byte in the file
                yield _Unit(None, base if frame is not None else offset, _PB_RECORD, record)
        except otlp_proto.Truncated as exc:
            self._incomplete(
                report, None, f"the protobuf data ends inside the record at byte {base + exc.offset}"
            )
        except _convert._Bad as exc:
            where = "" if frame is None else f"record at byte {frame}: "
            raise TraceReadError(self.source, f"{where}{exc}") from None

    def _framed_units(self, f: IO[bytes], report: ReadReport | None, label: str) -> Iterator[_Unit]:
        progress = report.progress if report is not None else None
        try:
            for n, (offset, payload) in enumerate(otlp_proto.frames(f), 1):
                where = f"record at byte {offset}"
                if payload[:4] == ZSTD_MAGIC:  # the exporter's legacy per-record compression
                    payload = zstd_decompress_record(payload, self.source, self.limits, where)
                if payload.lstrip()[:1] == b"{":
                    yield _Unit(None, offset, _JSON_RAW, payload, otlp_json.raw_signal(payload))
                else:
                    try:
                        signal = otlp_proto.signal_of(payload)
                    except _convert._Bad as exc:
                        raise TraceReadError(self.source, f"{where}: {exc}") from None
                    if signal == _TRACES:
                        yield from self._records(payload, offset, None)
                    elif signal != _EMPTY:
                        yield _Unit(None, offset, _SKIP, None, signal)
                if progress is not None and n % _PROGRESS_EVERY == 0:
                    progress(label, position(f), self.size)
        except otlp_proto.Truncated as exc:
            self._incomplete(report, None, f"the data ends inside the record at byte {exc.offset}")

    def spans(self, unit: _Unit, keep: Callable[[str], bool] | None = None) -> list[Span]:
        try:
            if unit.kind == _PB_RECORD:
                return otlp_proto.spans_from_record(unit.payload, keep)
            if unit.kind == _SKIP:
                return []
            doc = unit.payload
            if unit.kind == _JSON_RAW:
                fast = _json.loads_fast(doc)
                if fast is not None:
                    unknown = _convert.unknown_values
                    try:
                        return self._request_spans(fast, unit, keep)
                    except _convert._Bad:  # parsed again strictly below: the same error, same words
                        _convert.unknown_values = unknown
                return self._request_spans(_json.loads(doc), unit, keep)
            return otlp_json.spans_from_request(doc, keep)
        except _convert._Bad as exc:
            problem = (
                str(exc)
                if unit.line is not None or self.format == FORMAT_JSON
                else (f"record at byte {unit.offset}: {exc}")
            )
            raise TraceReadError(self.source, problem, unit.line) from None

    @staticmethod
    def _request_spans(doc: Any, unit: _Unit, keep: Callable[[str], bool] | None) -> list[Span]:
        if otlp_json.request_signal(doc) != _TRACES and unit.signal != _TRACES:
            return []  # another signal's request, counted when the file was indexed
        return otlp_json.spans_from_request(doc, keep)

    def links(self, unit: _Unit, run_attribute: str = semconv.RUN_ID) -> set[tuple[str, str | None]]:
        """(trace id, run attribute value or None) pairs in a unit, for the run index. The byte scan
        knows only ``agent.run.id``; another run attribute (it may sit on the resource) is parsed."""
        if unit.signal != _TRACES:
            return set()
        if unit.kind == _JSON_RAW and run_attribute == semconv.RUN_ID:
            return otlp_json.raw_links(unit.payload)
        return {(span.trace_id, run_value(span, run_attribute)) for span in self.spans(unit)}


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


def _cut_message(compression: str) -> str:
    return f"the {compression} data ends early"


def _is_decompression_error(exc: BaseException) -> bool:
    return isinstance(exc, (gzip.BadGzipFile, zlib.error)) or type(exc).__name__ in ("ZstdError",)


def _sniff(f: IO[bytes]) -> str:
    head = f.read(_SNIFF_BYTES)
    if not head.strip():
        return FORMAT_EMPTY if not f.read(1) else FORMAT_JSONL
    if head.startswith(b"\xef\xbb\xbf"):
        return FORMAT_BOM
    if not _JSON_START.match(head):
        first = head.lstrip()[:1]
        text = _looks_like_text(head)
        # Only here: JSON text (whitespace, "{}", then "{"; "[", a line end, "  {") can look like a
        # length and a record too. Text that starts like JSON is JSON: such a length would mean a
        # record of hundreds of MB, and the length of one under 16 MiB starts with a zero byte.
        if otlp_proto.looks_framed(head) and not (text and first in (b"{", b"[")):
            return FORMAT_FRAMED
        if first in (b"{", b"["):  # JSON, just not an OTLP object: let the JSON reader say what is wrong
            return FORMAT_JSON if b"\n" in head.strip() and first == b"[" else FORMAT_JSONL
        if text:
            return FORMAT_TEXT
        return FORMAT_PROTO
    f.seek(0)
    first = f.readline()
    while first and not first.strip():
        first = f.readline()
    try:
        json.loads(first)
        return FORMAT_JSONL
    except (ValueError, RecursionError):
        pass
    following = f.readline()
    while following and not following.strip():
        following = f.readline()
    # A single line that does not parse is a JSON Lines file whose only line was cut off.
    return FORMAT_JSON if following else FORMAT_JSONL


def _looks_like_text(head: bytes) -> bool:
    """UTF-8 with no control bytes but whitespace: no protobuf trace request looks like that. A
    character cut off at the end of ``head`` (the sniff reads a fixed number of bytes) is no fault."""
    try:
        text = codecs.getincrementaldecoder("utf-8")().decode(head, final=False)
    except UnicodeDecodeError:
        return False
    return all(ch.isprintable() or ch in "\t\r\n" for ch in text)


def sniff_format(path: str | Path, limits: ReadLimits | None = None) -> str:
    """The format ``read_spans`` would read ``path`` as (one of the ``FORMAT_*`` names)."""
    return _TraceFile(str(path), limits or _DEFAULT_LIMITS).format


def _convert_unit(tf: _TraceFile, unit: _Unit, report: ReadReport | None, keep) -> list[Span]:
    before, beside = _convert.unknown_values, otlp_json.beside.copy()
    spans = tf.spans(unit, keep)
    if report is not None:
        report.spans += len(spans)
        report.unknown_values += _convert.unknown_values - before
        report.beside.update(otlp_json.beside - beside)
    return spans


def read_spans(
    paths: Iterable[str | Path],
    *,
    report: ReadReport | None = None,
    keep: Callable[[str], bool] | None = None,
    limits: ReadLimits | None = None,
) -> Iterator[Span]:
    """Every span of every file, in file order; with ``keep``, only spans whose run key it accepts."""
    for path in paths:
        tf = _TraceFile(str(path), limits or _DEFAULT_LIMITS)
        if report is not None:
            report.files += 1
        for unit in tf.units(report, f"reading {tf.source}", count=True):
            yield from _convert_unit(tf, unit, report, keep)


def _late_link(
    keys: RunKeys,
    trace_id: str,
    run_id: str,
    pending: dict[str, list[Span]],
    last_mention: dict[str, int],
    ends_at: dict[int, list[str]],
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
    ends = [last_mention.pop(k) for k in (a, b) if k in last_mention]
    for where in ends:
        ends_at[where] = [k for k in ends_at[where] if k not in (a, b)]
    if ends:
        last_mention[joined] = max(ends)
        ends_at[max(ends)].append(joined)
    return joined


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
    files = [_TraceFile(str(p), limits or _DEFAULT_LIMITS) for p in paths]
    keys = RunKeys()
    trace_last: dict[int | str, int] = {}  # trace -> ordinal of the last unit that mentions it
    unit_counts: list[int] = []
    ordinal = 0
    for tf in files:
        before = ordinal
        for unit in tf.units(report, f"indexing {tf.source}", count=True):
            ordinal += 1
            for trace_id, run_id in tf.links(unit, run_attribute):
                key = keys.key(trace_id)
                keys.link_key(key, run_id)
                trace_last[key] = ordinal
        unit_counts.append(ordinal - before)
    last_mention: dict[str, int] = {}  # run -> ordinal of the last unit that mentions any of its traces
    for key, where in trace_last.items():
        run = keys.run_of_key(key)
        if last_mention.get(run, 0) < where:
            last_mention[run] = where
    del trace_last  # the index is what bounds memory: keep only what the second pass needs
    ends_at: dict[int, list[str]] = defaultdict(list)
    for key, where in last_mention.items():
        ends_at[where].append(key)
    custom = run_attribute != semconv.RUN_ID
    # A span's raw run key is its agent.run.id: with another run attribute, shards filter whole runs.
    shard_keep = None if keep is None or custom else (lambda raw_key: keep(keys.resolve(raw_key)))
    emit_keep = keep if custom else None

    pending: dict[str, list[Span]] = {}
    ordinal = 0
    for tf, count in zip(files, unit_counts, strict=True):
        if report is not None:
            report.files += 1
        for unit in tf.units(report, f"reading {tf.source}", limit=count):
            ordinal += 1
            spans = _convert_unit(tf, unit, report, shard_keep)
            for span in spans:
                key = keys.run_of(span.trace_id)
                own = run_value(span, run_attribute)
                if own and keys.resolve(own) != key:
                    # The byte scan missed this link (an unusual key order): join the two runs now.
                    key = _late_link(keys, span.trace_id, own, pending, last_mention, ends_at)
                    if key is None:
                        raise TraceReadError(
                            tf.source,
                            f"span {span.span_id}: agent.run.id joins trace {span.trace_id} to a run "
                            "that was already emitted",
                            unit.line,
                        )
                if last_mention.get(key) == _EMITTED:
                    raise TraceReadError(
                        tf.source,
                        f"run {key} has spans after the point where the index saw it end",
                        unit.line,
                    )
                members = pending.get(key)
                if members is None:
                    pending[key] = [span]
                else:
                    members.append(span)
            for key in sorted(ends_at.pop(ordinal, ())):
                last_mention[key] = _EMITTED
                members = pending.pop(key, None)
                if members:
                    run = make_run(key, members, tf.source)
                    if in_release(run, release) and (emit_keep is None or emit_keep(key)):
                        yield run
    for key in sorted(pending):  # keys the index did not see: held to the end
        run = make_run(key, pending.pop(key), files[-1].source if files else None)
        if in_release(run, release) and (emit_keep is None or emit_keep(key)):
            yield run
