"""Read OTLP trace files into the span model, streaming.

Formats, sniffed per file from its bytes (never from its name), gzip undone transparently:

- **OTLP JSON Lines** — one ``ExportTraceServiceRequest`` per line: the official
  ``FileSpanExporter`` and the Collector file exporter. Streamed line by line.
- **A single OTLP JSON document** (e.g. pretty-printed). Read whole: memory ~ that file.
- **OTLP protobuf** — a serialised ``ExportTraceServiceRequest`` (or several concatenated). Read
  whole, parsed one ``ResourceSpans`` at a time.

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

import gzip
import json
import re
import zlib
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Final

from ... import semconv
from ...errors import TraceReadError
from ..model import Run, Span
from ..runs import RunKeys, in_release, make_run
from . import _convert, locations, otlp_json, otlp_proto

__all__ = ["IncompleteFile", "ReadReport", "iter_runs", "read_spans", "sniff_format"]

Progress = Callable[[str, int, int], None]
"""``progress(label, bytes_done, bytes_total)``, called now and then while a file is read."""

_JSON_START: Final = re.compile(rb'\s*\{\s*(?:"[^"\\\x00-\x1f]*"\s*:|\})')
_SNIFF_BYTES: Final = 4096
_PROGRESS_EVERY: Final = 2048
_EMITTED: Final = -1

FORMAT_JSONL: Final = "otlp-json-lines"
FORMAT_JSON: Final = "otlp-json"
FORMAT_PROTO: Final = "otlp-protobuf"
FORMAT_EMPTY: Final = "empty"
FORMAT_BOM: Final = "json-with-bom"  # not readable: named so the error can say why
FORMAT_TEXT: Final = "text"  # not readable: text that is not OTLP JSON


@dataclass(frozen=True, slots=True)
class IncompleteFile:
    """A file whose last record was cut off; its complete records were read."""

    source: str
    line: int | None
    problem: str

    def __str__(self) -> str:
        where = f"{self.source}:{self.line}" if self.line is not None else self.source
        return f"{where}: {self.problem}"


@dataclass(slots=True)
class ReadReport:
    """What a read found short of an error. Passing one also opts in to reading incomplete files."""

    progress: Progress | None = None
    incomplete: list[IncompleteFile] = field(default_factory=list)
    files: int = 0
    spans: int = 0

    @property
    def complete(self) -> bool:
        return not self.incomplete


@dataclass(frozen=True, slots=True)
class _Unit:
    line: int | None  # 1-based line (JSON), None for protobuf records
    offset: int  # byte offset in the (decompressed) file
    payload: Any  # raw JSON line bytes, a parsed JSON document, or a protobuf record


def _open(path: str) -> IO[bytes]:
    raw = locations.open_binary(path)  # a local path, or an fsspec URL
    if raw.read(2) == b"\x1f\x8b":
        raw.seek(0)
        return gzip.GzipFile(fileobj=raw, mode="rb")
    raw.seek(0)
    return raw


def _position(f: IO[bytes]) -> int:
    inner = getattr(f, "fileobj", None)  # gzip: progress in compressed bytes
    return (inner or f).tell()


def _close(f: IO[bytes]) -> None:
    inner = getattr(f, "fileobj", None)
    f.close()
    if inner is not None:
        inner.close()


class _TraceFile:
    """One input file: its format, and its records ("units") for either pass."""

    def __init__(self, path: str) -> None:
        self.source = path
        try:
            self.size = locations.size(path)
            f = _open(path)
            try:
                self.format = _sniff(f)
            finally:
                _close(f)
        except OSError as exc:
            raise TraceReadError(path, f"cannot read file ({exc.strerror or type(exc).__name__})") from None
        except (EOFError, gzip.BadGzipFile, zlib.error, ValueError) as exc:
            raise TraceReadError(path, f"corrupt or truncated gzip data ({type(exc).__name__})") from None

    def units(self, report: ReadReport | None, label: str, limit: int | None = None) -> Iterator[_Unit]:
        try:
            f = _open(self.source)
        except OSError as exc:
            raise TraceReadError(
                self.source, f"cannot read file ({exc.strerror or type(exc).__name__})"
            ) from None
        try:
            if self.format == FORMAT_JSONL:
                yield from self._jsonl_units(f, report, label, limit)
            elif self.format == FORMAT_JSON:
                yield from self._document_units(f, limit)
            elif self.format == FORMAT_PROTO:
                yield from self._proto_units(f, report, limit)
            elif self.format == FORMAT_BOM:
                raise TraceReadError(self.source, "starts with a UTF-8 byte-order mark (remove it)", 1)
            elif self.format == FORMAT_TEXT:
                raise TraceReadError(self.source, "text that is neither OTLP JSON nor OTLP protobuf", 1)
        except EOFError:  # gzip stream cut off: the lines before the cut were read
            self._incomplete(report, None, "the gzip data ends early (was the writer stopped mid-write?)")
        except (gzip.BadGzipFile, zlib.error, OSError) as exc:
            problem = "corrupt gzip data" if isinstance(f, gzip.GzipFile) else "read failed"
            raise TraceReadError(self.source, f"{problem} ({type(exc).__name__})") from None
        finally:
            _close(f)
        if report is not None and report.progress is not None:
            report.progress(label, self.size, self.size)

    def _incomplete(self, report: ReadReport | None, line: int | None, problem: str) -> None:
        if report is None:
            raise TraceReadError(self.source, f"incomplete file: {problem}", line)
        if all(known.source != self.source for known in report.incomplete):  # once, though read twice
            report.incomplete.append(IncompleteFile(self.source, line, problem))

    def _jsonl_units(
        self, f: IO[bytes], report: ReadReport | None, label: str, limit: int | None
    ) -> Iterator[_Unit]:
        progress = report.progress if report is not None else None
        offset = 0
        count = 0
        if limit == 0:
            return
        for line_no, raw in enumerate(f, 1):
            here = offset
            offset += len(raw)
            if len(raw) < 3 and not raw.strip():
                continue
            if not raw.endswith(b"\n"):  # the last line: complete but unterminated, or cut off
                try:
                    json.loads(raw)
                except (ValueError, RecursionError):
                    self._incomplete(
                        report, line_no, "the last line is cut off (was the writer stopped mid-write?)"
                    )
                    return
            count += 1
            yield _Unit(line_no, here, raw)
            if count == limit:  # the second pass stops where the first one did, without reading on
                return
            if progress is not None and line_no % _PROGRESS_EVERY == 0:
                progress(label, _position(f), self.size)

    def _document_units(self, f: IO[bytes], limit: int | None) -> Iterator[_Unit]:
        try:
            doc = json.loads(f.read())
        except json.JSONDecodeError as exc:
            raise TraceReadError(
                self.source, f"invalid JSON ({exc.msg}, column {exc.colno})", exc.lineno
            ) from None
        except (ValueError, RecursionError) as exc:
            raise TraceReadError(self.source, f"invalid JSON ({type(exc).__name__})") from None
        if limit is None or limit > 0:
            yield _Unit(None, 0, doc)

    def _proto_units(self, f: IO[bytes], report: ReadReport | None, limit: int | None) -> Iterator[_Unit]:
        data = f.read()
        count = 0
        try:
            for offset, record in otlp_proto.resource_span_records(data):
                if count == limit:
                    return
                count += 1
                yield _Unit(None, offset, record)
        except otlp_proto.Truncated as exc:
            self._incomplete(report, None, f"the protobuf data ends inside the record at byte {exc.offset}")
        except _convert._Bad as exc:
            raise TraceReadError(self.source, str(exc)) from None

    def spans(self, unit: _Unit, keep: Callable[[str], bool] | None = None) -> list[Span]:
        try:
            if self.format == FORMAT_PROTO:
                return otlp_proto.spans_from_record(unit.payload, keep)
            doc = unit.payload
            if self.format == FORMAT_JSONL:
                try:
                    doc = json.loads(doc)
                except json.JSONDecodeError as exc:
                    raise _convert._Bad(f"invalid JSON ({exc.msg}, column {exc.colno})") from None
                except (ValueError, RecursionError) as exc:
                    raise _convert._Bad(f"invalid JSON ({type(exc).__name__})") from None
            return otlp_json.spans_from_request(doc, keep)
        except _convert._Bad as exc:
            problem = str(exc) if self.format != FORMAT_PROTO else f"record at byte {unit.offset}: {exc}"
            raise TraceReadError(self.source, problem, unit.line) from None

    def links(self, unit: _Unit) -> set[tuple[str, str | None]]:
        """(trace id, agent.run.id or None) pairs in a unit, for the run index."""
        if self.format == FORMAT_JSONL:
            return otlp_json.raw_links(unit.payload)
        out: set[tuple[str, str | None]] = set()
        for span in self.spans(unit):
            run_id = span.attributes.get(semconv.RUN_ID)
            out.add((span.trace_id, run_id if isinstance(run_id, str) and run_id else None))
        return out


def _sniff(f: IO[bytes]) -> str:
    head = f.read(_SNIFF_BYTES)
    if not head.strip():
        return FORMAT_EMPTY if not f.read(1) else FORMAT_JSONL
    if head.startswith(b"\xef\xbb\xbf"):
        return FORMAT_BOM
    if not _JSON_START.match(head):
        first = head.lstrip()[:1]
        if first in (b"{", b"["):  # JSON, just not an OTLP object: let the JSON reader say what is wrong
            return FORMAT_JSON if b"\n" in head.strip() and first == b"[" else FORMAT_JSONL
        if _looks_like_text(head):
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
    """UTF-8 with no control bytes but whitespace: no protobuf trace request looks like that."""
    try:
        text = head.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return all(ch.isprintable() or ch in "\t\r\n" for ch in text)


def sniff_format(path: str | Path) -> str:
    """The format ``read_spans`` would read ``path`` as (one of the ``FORMAT_*`` names)."""
    return _TraceFile(str(path)).format


def read_spans(
    paths: Iterable[str | Path],
    *,
    report: ReadReport | None = None,
    keep: Callable[[str], bool] | None = None,
) -> Iterator[Span]:
    """Every span of every file, in file order; with ``keep``, only spans whose run key it accepts."""
    for path in paths:
        tf = _TraceFile(str(path))
        if report is not None:
            report.files += 1
        for unit in tf.units(report, f"reading {tf.source}"):
            spans = tf.spans(unit, keep)
            if report is not None:
                report.spans += len(spans)
            yield from spans


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
) -> Iterator[Run]:
    """Validated runs of ``release`` (all when None), each emitted once its last line is read.

    ``keep(run_id)`` is a parallelism hook: spans of runs it rejects are not even converted, so N
    processes each keeping a disjoint share (e.g. by a hash of the run id) split the work. Every
    line is still parsed in every process, and a malformed span is reported by the process whose
    share it falls in (or by all, when its run key cannot be told)."""
    files = [_TraceFile(str(p)) for p in paths]
    keys = RunKeys()
    trace_last: dict[int | str, int] = {}  # trace -> ordinal of the last unit that mentions it
    unit_counts: list[int] = []
    ordinal = 0
    for tf in files:
        before = ordinal
        for unit in tf.units(report, f"indexing {tf.source}"):
            ordinal += 1
            for trace_id, run_id in tf.links(unit):
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
    shard_keep = None if keep is None else (lambda raw_key: keep(keys.resolve(raw_key)))

    pending: dict[str, list[Span]] = {}
    ordinal = 0
    for tf, count in zip(files, unit_counts, strict=True):
        if report is not None:
            report.files += 1
        for unit in tf.units(report, f"reading {tf.source}", limit=count):
            ordinal += 1
            spans = tf.spans(unit, shard_keep)
            if report is not None:
                report.spans += len(spans)
            for span in spans:
                key = keys.run_of(span.trace_id)
                own = span.attributes.get(semconv.RUN_ID)
                if isinstance(own, str) and own and keys.resolve(own) != key:
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
                    if in_release(run, release):
                        yield run
    for key in sorted(pending):  # keys the index did not see: held to the end
        run = make_run(key, pending.pop(key), files[-1].source if files else None)
        if in_release(run, release):
            yield run
