"""``partitions.plan``: which files are cut into byte ranges (large uncompressed JSON Lines) and which
are read whole by one worker (small files, compressed files, protobuf), and the answer for a file
that cannot be read (a ``Failed`` naming it, never a worker crash)."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest
import zstandard

from offline_helpers import Recorder, write_proto
from otel_provenance.offline.readers import partitions
from otel_provenance.offline.readers.partitions import (
    Failed,
    Partition,
    index_partition,
    plan,
    split_partition,
)
from partition_files import VanishingAfterSniff, line, span, tid, write


def _jsonl(tmp_path: Path, name: str = "t.jsonl") -> Path:
    return write(tmp_path / name, *(line(span(n, n, f"r{n}")) for n in range(1, 5)))


def test_a_file_no_larger_than_the_block_is_one_whole_partition(tmp_path: Path) -> None:
    path = _jsonl(tmp_path)
    size = path.stat().st_size
    assert plan(str(path), size) == [Partition(str(path))]
    assert plan(str(path), size + 1) == [Partition(str(path))]
    assert plan(str(path), size - 1) == [
        Partition(str(path), 0, size - 1),
        Partition(str(path), size - 1, size),
    ]


def test_byte_ranges_cover_the_file_end_to_end(tmp_path: Path) -> None:
    path = _jsonl(tmp_path)
    size = path.stat().st_size
    parts = plan(str(path), 100)
    assert not isinstance(parts, Failed)
    assert [(p.source, p.start, p.end) for p in parts] == [
        (str(path), a, min(a + 100, size)) for a in range(0, size, 100)
    ]


def _compressed(tmp_path: Path) -> list[Path]:
    data = _jsonl(tmp_path, "plain.jsonl").read_bytes()
    gz = tmp_path / "t.jsonl.gz"
    gz.write_bytes(gzip.compress(data))
    zst = tmp_path / "t.jsonl.zst"
    zst.write_bytes(zstandard.ZstdCompressor().compress(data))
    return [gz, zst]


@pytest.mark.parametrize("kind", ["gzip", "zstd"])
def test_a_compressed_json_lines_file_is_one_partition_whatever_its_size(tmp_path: Path, kind: str) -> None:
    """It cannot be entered in the middle: one worker reads it whole, with the default limits."""
    path = _compressed(tmp_path)[["gzip", "zstd"].index(kind)]
    assert plan(str(path), 16) == [Partition(str(path))]
    ix = index_partition(Partition(str(path)))
    assert not isinstance(ix, Failed)
    runs = {(tid(n), f"r{n}") for n in range(1, 5)}
    assert (ix.links, ix.units) == (frozenset(runs | {(tid(n), None) for n in range(1, 5)}), 4)
    split = split_partition(Partition(str(path)), 0, ix.units, dict(runs), frozenset(runs), 1)
    assert not isinstance(split, Failed)
    assert split.spans == 4 and not split.missed


def test_a_protobuf_file_is_one_partition_whatever_its_size(tmp_path: Path) -> None:
    rec = Recorder()
    for n in range(3):
        with rec.span(f"execute_tool step{n}", {"agent.run.id": "r1"}):
            pass
    path = write_proto(rec.spans(), tmp_path / "t.pb")
    assert path.stat().st_size > 16
    assert plan(str(path), 16) == [Partition(str(path))]


def test_a_missing_file_is_a_failed_answer_naming_it(tmp_path: Path) -> None:
    missing = tmp_path / "nope.jsonl"
    assert plan(str(missing), 100) == Failed(f"{missing}: cannot read file (No such file or directory)")


def test_a_file_gone_after_its_sniff_is_a_failed_answer_naming_it(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(partitions, "TraceFile", VanishingAfterSniff)
    path = _jsonl(tmp_path)
    assert plan(str(path), 100) == Failed(f"{path}: cannot read file (No such file or directory)")


def test_a_url_gone_after_its_sniff_names_the_error_type_when_it_has_no_text(monkeypatch) -> None:
    """fsspec raises ``FileNotFoundError(path)``, with no ``strerror``: the message names the type."""
    fsspec = pytest.importorskip("fsspec")
    monkeypatch.setattr(partitions, "TraceFile", VanishingAfterSniff)
    url = "memory://partition-plan/gone.jsonl"
    with fsspec.open(url, "wb") as f:
        f.write("".join(line(span(n, n)) for n in range(1, 4)).encode())
    assert plan(url, 50) == Failed(f"{url}: cannot read file (FileNotFoundError)")
