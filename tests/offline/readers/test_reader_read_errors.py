"""A read that fails part-way, and what the format sniff makes of JSON that is not an OTLP object.

Storage that fails mid-read (a connection reset on s3://, a disk error) cannot be produced for real
here, so it comes from a real fsspec filesystem whose files fail after the first bytes of their
second opening — the sniff reads the file whole, the reading pass then fails. The reader must name
the file and the failure, and let anything that is not a read or decompression error through as it is.
"""

from __future__ import annotations

import gzip
import io
import json
import zlib
from pathlib import Path

import pytest

from otel_provenance.errors import TraceReadError
from otel_provenance.offline.readers import ReadReport, iter_runs, read_spans

fsspec = pytest.importorskip("fsspec")
from fsspec.implementations.memory import MemoryFileSystem  # noqa: E402


class _FailsAfter(io.RawIOBase):
    """The file's bytes up to ``after``, then ``error`` on every read."""

    def __init__(self, data: bytes, after: int, error: BaseException) -> None:
        self.data, self.after, self.error, self.pos = data, after, error, 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        self.pos = offset if whence == io.SEEK_SET else self.pos + offset
        return self.pos

    def tell(self) -> int:
        return self.pos

    def readinto(self, buffer) -> int:
        if self.pos >= self.after:
            raise self.error
        chunk = self.data[self.pos : min(self.after, self.pos + len(buffer))]
        buffer[: len(chunk)] = chunk
        self.pos += len(chunk)
        return len(chunk)


class FlakyFileSystem(MemoryFileSystem):
    """``flaky://``: a memory filesystem whose files fail after 200 bytes from their second opening."""

    protocol = "flaky"
    store: dict = {}  # noqa: RUF012 - fsspec's MemoryFileSystem keeps its files on the class
    pseudo_dirs = [""]  # noqa: RUF012
    error: BaseException = OSError("unset")
    opened: dict[str, int] = {}  # noqa: RUF012

    def _open(self, path, mode="rb", **kwargs):
        f = super()._open(path, mode, **kwargs)
        if "r" not in mode:
            return f
        count = self.opened[path] = self.opened.get(path, 0) + 1
        return f if count == 1 else io.BufferedReader(_FailsAfter(f.getvalue(), 200, self.error))


fsspec.register_implementation("flaky", FlakyFileSystem, clobber=True)


def _lines(count: int) -> bytes:
    span = {"traceId": "1" * 32, "name": "s", "startTimeUnixNano": "1", "endTimeUnixNano": "2"}
    return "".join(
        json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [{**span, "spanId": f"{n:016x}"}]}]}]}) + "\n"
        for n in range(1, count + 1)
    ).encode()


def _flaky(name: str, data: bytes, error: BaseException) -> str:
    FlakyFileSystem.store.clear()
    FlakyFileSystem.opened.clear()
    FlakyFileSystem.error = error
    url = f"flaky://reads/{name}"
    with fsspec.open(url, "wb") as f:
        f.write(data)
    return url


def test_a_read_error_mid_file_is_named_never_a_short_read() -> None:
    url = _flaky("t.jsonl", _lines(40), ConnectionResetError(104, "Connection reset by peer"))
    with pytest.raises(TraceReadError) as caught:
        list(read_spans([url]))
    assert str(caught.value) == f"{url}: read failed (ConnectionResetError)"


def test_a_decompressor_failing_mid_file_is_named_as_corrupt_data() -> None:
    url = _flaky("t.jsonl", _lines(40), zlib.error("invalid stored block lengths"))
    with pytest.raises(TraceReadError) as caught:
        list(read_spans([url]))
    assert str(caught.value) == f"{url}: corrupt compressed data (error)"


def test_any_other_failure_mid_file_is_not_disguised_as_a_data_error() -> None:
    url = _flaky("t.jsonl", _lines(40), RuntimeError("a bug, not the data"))
    with pytest.raises(RuntimeError, match="a bug, not the data"):
        list(read_spans([url]))


def test_a_cut_compressed_file_is_incomplete_with_the_reason_spelled_out(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl.gz"
    whole = gzip.compress(_lines(40))
    path.write_bytes(whole[: len(whole) - 8])  # the trailer (CRC and size) is missing: every line is whole
    report = ReadReport()
    assert len(list(iter_runs([path], report=report))) == 1
    (cut,) = report.incomplete
    assert (cut.source, cut.line) == (str(path), None)
    assert cut.problem == "the gzip data ends early (was the writer stopped mid-write?)"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # JSON, not an OTLP object: each line is judged as a request, the first blank line skipped
        (b"\n[1, 2]\n", ":2: not a JSON object (expected an OTLP ExportTraceServiceRequest)"),
        (b"[1]\n", ":1: not a JSON object (expected an OTLP ExportTraceServiceRequest)"),
        # an array over several lines is one document
        (b"[1]\n[2]\n", ":2: invalid JSON (Extra data, column 1)"),
        # an object whose first name is escaped: still one request per line
        (b'{"\\u0061":1}\n{"\\u0062":2}\n', ":1: no resourceSpans: not an OTLP ExportTraceServiceRequest"),
    ],
)
def test_json_that_is_no_otlp_object_is_judged_by_the_json_reader(tmp_path: Path, text, expected) -> None:
    path = tmp_path / "t.json"
    path.write_bytes(text)
    with pytest.raises(TraceReadError) as caught:
        list(read_spans([path]))
    assert str(caught.value) == f"{path}{expected}"


def test_a_missing_url_is_named_by_the_error_type() -> None:
    """fsspec raises ``FileNotFoundError(path)`` with no ``strerror``: the message names the type."""
    url = "memory://read-errors/nowhere.jsonl"
    with pytest.raises(TraceReadError) as caught:
        list(read_spans([url]))
    assert str(caught.value) == f"{url}: cannot read file (FileNotFoundError)"
