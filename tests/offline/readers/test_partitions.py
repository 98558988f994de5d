"""Byte ranges of a JSON Lines file give each line to exactly one partition, wherever the cuts fall."""

from __future__ import annotations

from itertools import pairwise
from pathlib import Path

from benchmarks import tracegen
from hypothesis import given, settings
from hypothesis import strategies as st

from offline_helpers import reference_runs, write_jsonl
from otel_provenance.offline.readers import ReadReport, read_spans
from otel_provenance.offline.readers.partitions import (
    Failed,
    Partition,
    index_partition,
    plan,
    split_partition,
)


def _read_once(path: Path, parts: list[Partition]) -> list:
    """Index and split each range as the workers do; each range's spans, in order."""
    indexed = [index_partition(p) for p in parts]
    assert not any(isinstance(ix, Failed) for ix in indexed), indexed
    assert sum(ix.units for ix in indexed) == path.read_bytes().count(b"\n")
    whole = list(read_spans([path], report=ReadReport()))
    run_of = {span.trace_id: span.trace_id for span in whole}
    spans = []
    first = 0
    for part, ix in zip(parts, indexed, strict=True):
        split = split_partition(part, first, ix.units, run_of, frozenset(), 1)
        assert not isinstance(split, Failed)
        spans += [s for by_run in split.buckets.values() for members in by_run.values() for s in members]
        first += ix.units
    assert sorted(spans, key=lambda s: s.span_id) == sorted(whole, key=lambda s: s.span_id)
    return indexed


@settings(max_examples=20, deadline=None)
@given(block=st.integers(min_value=300, max_value=30_000), blanks=st.booleans())
def test_every_line_and_span_is_read_once_whatever_the_block_size(tmp_path_factory, block, blanks) -> None:
    directory = tmp_path_factory.getbasetemp() / "partitions"
    directory.mkdir(exist_ok=True)
    path = directory / f"traces-{blanks}.jsonl"
    if not path.exists():
        tracegen.write_jsonl(path, seed=4, release="v1", runs=2)
        text = path.read_text()
        if blanks:  # blank lines count as lines (for line numbers) but hold no spans
            text = text.replace("\n", "\n\n", 2)
        path.write_text(text)
    parts = plan(str(path), block)
    assert not isinstance(parts, Failed)
    assert len(parts) == -(-path.stat().st_size // block)  # ceil: the file is cut into ranges
    _read_once(path, parts)


def _many_lines(directory: Path) -> Path:
    """Spans one per line and two per line, with blank lines between and after them."""
    path = directory / "lines.jsonl"
    if not path.exists():
        good, bad = reference_runs()
        lines = write_jsonl(good, directory / "a.jsonl", batch=1).read_bytes().splitlines(keepends=True)
        lines += write_jsonl(bad, directory / "b.jsonl", batch=2).read_bytes().splitlines(keepends=True)
        lines[1:1] = [b"\n"]
        lines[4:4] = [b"  \n", b"\n"]
        path.write_bytes(b"".join(lines) + b"\n")
    return path


@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_a_cut_at_a_line_start_or_beside_one_gives_each_line_to_the_range_it_starts_in(
    tmp_path_factory, data
) -> None:
    """The generated file above is a single line of spans (``tracegen`` writes 512 spans a line), so no
    line ever starts inside a later range there. Here ranges cut a file of many lines — blank ones too —
    exactly at a line's start, at its newline just before, or one byte into it: each line is read by the
    range it starts in, and by no other."""
    directory = tmp_path_factory.getbasetemp() / "partitions"
    directory.mkdir(exist_ok=True)
    path = _many_lines(directory)
    data_bytes = path.read_bytes()
    size = len(data_bytes)
    starts = [0] + [i + 1 for i, byte in enumerate(data_bytes) if byte == 0x0A and i + 1 < size]
    assert len(starts) > 8
    near_a_start = st.sampled_from(starts[1:]).flatmap(lambda s: st.sampled_from([s - 1, s, s + 1]))
    cuts = data.draw(st.lists(near_a_start | near_a_start | st.integers(1, size - 1), min_size=1, max_size=6))
    edges = sorted({0, size, *cuts})
    parts = [Partition(str(path), a, b) for a, b in pairwise(edges)]
    indexed = _read_once(path, parts)
    assert [ix.units for ix in indexed] == [sum(a <= s < b for s in starts) for a, b in pairwise(edges)]
