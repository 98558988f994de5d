"""Byte ranges of a JSON Lines file give each line to exactly one partition, wherever the cuts fall."""

from __future__ import annotations

from benchmarks import tracegen
from hypothesis import given, settings
from hypothesis import strategies as st

from otel_provenance.offline.readers import ReadReport, read_spans
from otel_provenance.offline.readers.partitions import Failed, index_partition, plan, split_partition


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
    lines = path.read_bytes().count(b"\n")
    parts = plan(str(path), block)
    assert not isinstance(parts, Failed)
    assert len(parts) == -(-path.stat().st_size // block)  # ceil: the file is cut into ranges
    indexed = [index_partition(p) for p in parts]
    assert sum(ix.units for ix in indexed) == lines
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
