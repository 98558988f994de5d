"""One trace file: its format, sniffed from its bytes, and its records ("units") for either pass.

Formats are one table, :data:`DECODERS`: a :class:`Decoder` per format names it, reads its units,
says what a unit is called in notes ("lines", "records") and — for a format the built-in sniff does
not know — claims the files that are its own from their first bytes. A new trace file format is a
decoder function and one row (docs/offline.md, "Adding a trace file format").
"""

from __future__ import annotations

import codecs
import gzip
import json
import re
import zlib
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Final

from ... import semconv
from ...errors import TraceReadError
from ..model import Span
from ..runs import run_value
from . import _convert, _json, _msgspec, locations, otlp_json, otlp_proto, rawindex
from ._compressed import ReadLimits, open_input, position, truncated, zstd_decompress_record
from ._zstd_frames import ZSTD_MAGIC
from .report import IncompleteFile, ReadReport, SkippedRecords, check_signals

_JSON_START: Final = re.compile(rb'\s*\{\s*(?:"[^"\\\x00-\x1f]*"\s*:|\})')
_SNIFF_BYTES: Final = 4096
_PROGRESS_EVERY: Final = 2048
DEFAULT_LIMITS: Final = ReadLimits()

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
JSON_RAW: Final = "json-raw"  # bytes of one JSON request
JSON_DOC: Final = "json-doc"  # a parsed JSON request
PB_RECORD: Final = "pb-record"  # one serialised ResourceSpans
SKIP: Final = "skip"  # a request of another signal (payload None)


@dataclass(frozen=True, slots=True)
class Unit:
    line: int | None  # 1-based line (JSON), None for protobuf records
    offset: int  # protobuf: byte offset in the (decompressed) file of the record or its length prefix
    kind: str
    payload: Any
    signal: str = _TRACES


def _pairs(spans: list[Span], run_attribute: str) -> set[tuple[str, str | None]]:
    """The index's pairs from parsed spans, as the byte scans give them: each trace alone, and with
    each run value its spans carry."""
    pairs = {(span.trace_id, run_value(span, run_attribute)) for span in spans}
    pairs.update([(trace_id, None) for trace_id, _ in pairs])
    return pairs


Unconfirmed = tuple[str, str, str, "int | None"]  # trace id, run id, source, line


def judge(unconfirmed: list[Unconfirmed], members: list[Span]) -> None:
    """A run is whole: each pair the index's byte search made for one of its traces (``run_spans``)
    must be carried by one of its spans, or the search joined runs the spans keep apart — an error
    naming the line, never two runs read as one."""
    told = _pairs(members, semconv.RUN_ID)
    for trace_id, run_id, source, line in sorted(unconfirmed, key=lambda u: (u[2], u[3] or 0, u[0], u[1])):
        if (trace_id, run_id) not in told:
            raise TraceReadError(
                source,
                f"agent.run.id {run_id!r} is written outside the attributes of trace {trace_id}'s spans "
                "(in an event, a link, a nested list, a scope, another signal's record or a member this "
                "reader does not know), where the run index, which reads a compact line by its bytes, "
                "takes it for theirs: the runs it would join cannot be told apart. Write the run id on "
                "spans only, or the line with blanks between members (such lines are parsed whole)",
                line,
            )


class TraceFile:
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
    ) -> Iterator[Unit]:
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
            units = DECODERS[self.format].units(self, f, report, label)
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
                        self.incomplete(report, None, problem)
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
        return SkippedRecords(self.source, tuple(sorted(skipped.items())), DECODERS[self.format].unit)

    def incomplete(self, report: ReadReport | None, line: int | None, problem: str) -> None:
        if report is None:
            raise TraceReadError(self.source, f"incomplete file: {problem}", line)
        if all(known.source != self.source for known in report.incomplete):  # once, though read twice
            report.incomplete.append(IncompleteFile(self.source, line, problem))

    def _jsonl_units(self, f: IO[bytes], report: ReadReport | None, label: str) -> Iterator[Unit]:
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
                    self.incomplete(report, line_no, problem + " (was the writer stopped mid-write?)")
                    return
            yield Unit(line_no, 0, JSON_RAW, raw, otlp_json.raw_signal(raw))  # named by its line
            if progress is not None and line_no % _PROGRESS_EVERY == 0:
                progress(label, position(f), self.size)

    def _document_units(self, f: IO[bytes]) -> Iterator[Unit]:
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
            otlp_json.refuse_lone_surrogates(raw, doc)
            signal = otlp_json.request_signal(doc)
        except _convert._Bad as exc:
            raise TraceReadError(self.source, str(exc)) from None
        yield Unit(None, 0, JSON_DOC if signal == _TRACES else SKIP, doc, signal)

    def _proto_units(self, f: IO[bytes], report: ReadReport | None) -> Iterator[Unit]:
        data = f.read()
        try:
            signal = otlp_proto.signal_of(data)
        except _convert._Bad:
            signal = _TRACES  # cut off or malformed: the record reader below says where
        if signal not in (_TRACES, _EMPTY):
            yield Unit(None, 0, SKIP, None, signal)
            return
        yield from self._records(data, None, report)

    def _records(self, data: bytes, frame: int | None, report: ReadReport | None) -> Iterator[Unit]:
        """The ``ResourceSpans`` records of one request: a whole file, or a length-prefixed record
        that starts at byte ``frame``."""
        base = frame or 0
        try:
            for offset, record in otlp_proto.resource_span_records(data):
                # errors name the length-prefixed record in a framed file, else the byte in the file
                yield Unit(None, base if frame is not None else offset, PB_RECORD, record)
        except otlp_proto.Truncated as exc:
            self.incomplete(
                report, None, f"the protobuf data ends inside the record at byte {base + exc.offset}"
            )
        except _convert._Bad as exc:
            where = "" if frame is None else f"record at byte {frame}: "
            raise TraceReadError(self.source, f"{where}{exc}") from None

    def _framed_units(self, f: IO[bytes], report: ReadReport | None, label: str) -> Iterator[Unit]:
        progress = report.progress if report is not None else None
        try:
            for n, (offset, payload) in enumerate(otlp_proto.frames(f), 1):
                where = f"record at byte {offset}"
                if payload[:4] == ZSTD_MAGIC:  # the exporter's legacy per-record compression
                    payload = zstd_decompress_record(payload, self.source, self.limits, where)
                if payload.lstrip()[:1] == b"{":
                    yield Unit(None, offset, JSON_RAW, payload, otlp_json.raw_signal(payload))
                else:
                    try:
                        signal = otlp_proto.signal_of(payload)
                    except _convert._Bad as exc:
                        raise TraceReadError(self.source, f"{where}: {exc}") from None
                    if signal == _TRACES:
                        yield from self._records(payload, offset, None)
                    elif signal != _EMPTY:
                        yield Unit(None, offset, SKIP, None, signal)
                if progress is not None and n % _PROGRESS_EVERY == 0:
                    progress(label, position(f), self.size)
        except otlp_proto.Truncated as exc:
            self.incomplete(report, None, f"the data ends inside the record at byte {exc.offset}")

    def spans(self, unit: Unit, keep: Callable[[str], bool] | None = None) -> list[Span]:
        return self._read(unit, keep)[0]

    def run_spans(
        self, unit: Unit, keep: Callable[[str], bool] | None = None, run_attribute: str = semconv.RUN_ID
    ) -> tuple[list[Span], set[tuple[str, str]]]:
        """:meth:`spans`, read after :meth:`index` read the same unit, and the (trace, run id) pairs
        the index's byte search made here that no span here carries: each must be carried by a span
        of that trace's run, judged when the run is whole (:func:`judge`). The search reads a compact
        line's run ids as its spans' own; what else can hold one — an event, a link, a nested list,
        a scope's attributes, a member the reader does not know, another signal's records — the fast
        decoder takes as untyped (or leaves to the strict reader), and only such lines are compared."""
        spans, typed = self._read(unit, keep)
        if typed or unit.kind != JSON_RAW or run_attribute != semconv.RUN_ID:
            return spans, set()
        return spans, self._unconfirmed(unit.payload, spans, keep)

    @staticmethod
    def _unconfirmed(
        line: bytes, spans: list[Span], keep: Callable[[str], bool] | None
    ) -> set[tuple[str, str]]:
        if keep is None and line.count(rawindex.TRACE_MENTION) == len(spans):
            carried = sum(1 for span in spans if semconv.RUN_ID in span.attributes)
            if line.count(rawindex.RUN_ID_KEY) <= carried:
                return set()  # one span per cut, every run id key a span's own: each in its span's cut
        if rawindex.escapes_a_name(line):
            return set()  # the index read this line's parsed spans
        found = rawindex.compact_index(line)
        if found is None:
            return set()  # the index read this line's parsed spans
        told = _pairs(spans, semconv.RUN_ID)
        return {(trace_id, run_id) for trace_id, run_id in found - told if run_id is not None}

    def _read(self, unit: Unit, keep: Callable[[str], bool] | None) -> tuple[list[Span], bool]:
        """The unit's spans, and whether they came typed throughout (``_msgspec.decoded``): true of
        every unit but a JSON line the fast decoder did not read so."""
        try:
            if unit.kind == PB_RECORD:
                return otlp_proto.spans_from_record(unit.payload, keep), True
            if unit.kind == SKIP:
                return [], True
            doc = unit.payload
            if unit.kind == JSON_RAW:
                decoded = _msgspec.decoded(doc, keep)
                if decoded is not None:
                    return decoded
                fast = _json.loads_fast(doc)
                if fast is not None:
                    unknown = _convert.unknown_values
                    try:
                        return self._request_spans(fast, unit, keep), False
                    except _convert._Bad:  # parsed again strictly below: the same error, same words
                        _convert.unknown_values = unknown
                strict = _json.loads(doc)
                otlp_json.refuse_lone_surrogates(doc, strict)  # orjson refuses them: only here
                return self._request_spans(strict, unit, keep), False
            return otlp_json.spans_from_request(doc, keep), True
        except _convert._Bad as exc:
            problem = (
                str(exc)
                if unit.line is not None or self.format == FORMAT_JSON
                else (f"record at byte {unit.offset}: {exc}")
            )
            raise TraceReadError(self.source, problem, unit.line) from None

    @staticmethod
    def _request_spans(doc: Any, unit: Unit, keep: Callable[[str], bool] | None) -> list[Span]:
        if otlp_json.request_signal(doc) != _TRACES and unit.signal != _TRACES:
            return []  # another signal's request, counted when the file was indexed
        return otlp_json.spans_from_request(doc, keep)

    def links(self, unit: Unit, run_attribute: str = semconv.RUN_ID) -> set[tuple[str, str | None]]:
        """(trace id, run attribute value or None) pairs in a unit, for the run index. The byte scan
        knows only ``agent.run.id``; another run attribute (it may sit on the resource) is parsed."""
        return self.index(unit, run_attribute)[0]

    def index(
        self, unit: Unit, run_attribute: str = semconv.RUN_ID
    ) -> tuple[set[tuple[str, str | None]], bool]:
        """:meth:`links`, and whether the unit may hold span links (on a raw line, the index scan
        looks for the member name ``"links"`` too: a line without it holds none), which the run
        index then follows (``offline.linked_runs``)."""
        if unit.signal != _TRACES:
            return set(), False
        if unit.kind != JSON_RAW:
            spans = self.spans(unit)
        elif run_attribute != semconv.RUN_ID:
            return _pairs(self.spans(unit), run_attribute), rawindex.LINKS_MEMBER in unit.payload
        else:
            line = unit.payload
            if not rawindex.escapes_a_name(line):  # names or ids spelt so are ones the search cannot see
                compact = rawindex.compact_index(line)
                if compact is not None:
                    return compact, False
            try:  # spelt otherwise: which span a run id is written in is the parsed spans' to say
                spans = self.spans(unit)
            except TraceReadError:
                # the byte scan indexes it; the conversion pass names its problem where it always has
                return rawindex.raw_index(line)
        return _pairs(spans, run_attribute), any(span.links for span in spans)


def _cut_message(compression: str) -> str:
    return f"the {compression} data ends early"


def _is_decompression_error(exc: BaseException) -> bool:
    return isinstance(exc, (gzip.BadGzipFile, zlib.error)) or type(exc).__name__ in ("ZstdError",)


def _sniff(f: IO[bytes]) -> str:
    head = f.read(_SNIFF_BYTES)
    for decoder in DECODERS.values():
        if decoder.claims is not None and decoder.claims(head):
            return decoder.name
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
    return TraceFile(str(path), limits or DEFAULT_LIMITS).format


Units = Callable[[TraceFile, IO[bytes], ReadReport | None, str], Iterator[Unit]]


@dataclass(frozen=True, slots=True)
class Decoder:
    """One trace file format: its name (what ``sniff_format`` says), how its units are read from the
    opened (decompressed) file, what a unit is called in notes, and — for a format the built-in sniff
    does not know — ``claims(head)``: whether a file starting with these bytes (up to 4,096) is one.

    ``units(file, stream, report, label)`` yields :class:`Unit` s: a raw JSON request (``JSON_RAW``,
    named by its line), a parsed one (``JSON_DOC``), a serialised ``ResourceSpans`` (``PB_RECORD``),
    or another signal's request (``SKIP``). A record cut off at the end goes to
    ``file.incomplete(report, line, problem)``; anything else wrong raises ``TraceReadError``."""

    name: str
    units: Units
    unit: str = "records"
    claims: Callable[[bytes], bool] | None = None


TEXT_REFUSED: Final = (
    "text that is neither OTLP JSON nor OTLP protobuf (not a trace file? name only the trace files,"
    " e.g. DIR/*.jsonl rather than DIR)"
)


def _refused(problem: str) -> Units:
    def units(file: TraceFile, stream: IO[bytes], report: ReadReport | None, label: str) -> Iterator[Unit]:
        raise TraceReadError(file.source, problem, 1)

    return units


def _nothing(file: TraceFile, stream: IO[bytes], report: ReadReport | None, label: str) -> Iterator[Unit]:
    stream.read(1)  # empty, yet read to its end: a compressed stream may be cut before its first byte
    return iter(())


DECODERS: Final[dict[str, Decoder]] = {
    decoder.name: decoder
    for decoder in (
        Decoder(
            FORMAT_JSONL,
            lambda file, stream, report, label: file._jsonl_units(stream, report, label),
            "lines",
        ),
        Decoder(FORMAT_JSON, lambda file, stream, report, label: file._document_units(stream), "lines"),
        Decoder(FORMAT_PROTO, lambda file, stream, report, label: file._proto_units(stream, report)),
        Decoder(FORMAT_FRAMED, lambda file, stream, report, label: file._framed_units(stream, report, label)),
        Decoder(FORMAT_BOM, _refused("starts with a UTF-8 byte-order mark (remove it)")),
        Decoder(FORMAT_TEXT, _refused(TEXT_REFUSED)),
        Decoder(FORMAT_EMPTY, _nothing),
    )
}
"""Every trace file format, by name: the table ``TraceFile`` reads (a new format is one more row)."""
