"""The compressed file as the decompressor sees it (``_compressed._SmallReads``): small reads, so the
bytes counted as consumed are not inflated by read-ahead, and the file protocol passed through."""

from __future__ import annotations

import io

from otel_provenance.offline.readers import _compressed


def test_the_decompressors_view_of_the_file_reads_small_chunks_and_seeks_as_asked() -> None:
    data = bytes(range(256)) * 64
    small = _compressed._SmallReads(io.BytesIO(data))
    assert small.readable()
    assert small.read() == data[: small.CHUNK]  # never more than one chunk at a time
    assert small.seek(10) == 10 and small.read(3) == data[10:13]  # from the start by default
    assert small.seek(2, io.SEEK_CUR) == 15 and small.tell() == 15
    assert small.seek(-1, io.SEEK_END) == len(data) - 1 and small.read(5) == data[-1:]


def test_a_gzip_file_with_an_empty_extra_field_reads_whole(tmp_path) -> None:
    """gzip's FEXTRA flag with a zero-length field (valid; some writers set it) makes the decompressor
    ask the file for 0 bytes: that read must return nothing, not a chunk of the deflate stream."""
    import gzip

    from otel_provenance.offline.readers import ReadReport, read_spans

    line = b'{"resourceSpans": []}\n'
    packed = gzip.compress(line * 3)
    with_extra = packed[:3] + bytes([packed[3] | 0x04]) + packed[4:10] + b"\x00\x00" + packed[10:]
    assert gzip.decompress(with_extra) == line * 3  # the standard library reads it
    path = tmp_path / "extra.jsonl.gz"
    path.write_bytes(with_extra)
    report = ReadReport()
    assert list(read_spans([path], report=report)) == []
    assert report.incomplete == [] and report.files == 1
    small = _compressed._SmallReads(io.BytesIO(b"abc"))
    assert small.read(0) == b"" and small.read(1) == b"a"


def test_corrupt_gzip_is_named_where_the_decompressor_found_it(tmp_path) -> None:
    """A flipped byte in the deflate data is met while the format is sniffed; one in the trailer's
    checksum only once the whole stream was read. Either way the file is refused, and says why."""
    import gzip
    import json

    import pytest

    from otel_provenance.errors import TraceReadError
    from otel_provenance.offline.readers import iter_runs, read_spans

    span = {"traceId": "0af7651916cd43dd8448eb211c80319c", "spanId": "b7ad6b7169203331", "name": "s"}
    line = json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]}) + "\n"
    packed = gzip.compress((line * 200).encode(), mtime=0)
    for at, problem in (
        (30, "corrupt or truncated compressed data (error)"),  # zlib.error, in the first block
        (len(packed) - 6, "corrupt compressed data (BadGzipFile)"),  # the CRC-32 does not match
    ):
        path = tmp_path / f"t{at}.jsonl.gz"
        path.write_bytes(packed[:at] + bytes([packed[at] ^ 0xFF]) + packed[at + 1 :])
        for read in (read_spans, iter_runs):
            with pytest.raises(TraceReadError) as caught:
                list(read([path]))
            assert (caught.value.source, caught.value.problem) == (str(path), problem)
