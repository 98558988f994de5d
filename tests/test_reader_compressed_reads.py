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
