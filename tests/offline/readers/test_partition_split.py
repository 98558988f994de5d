"""``partitions.split_partition``: a partition's spans sorted by run key into buckets, every span once;
a link the index did not give is reported (``missed``) for the client to join and split again; errors
name the line in the whole file; the split reads no further than the index counted."""

from __future__ import annotations

from pathlib import Path

import pytest

from otel_provenance.errors import TraceReadError
from otel_provenance.offline.readers import read_spans
from otel_provenance.offline.readers.partitions import (
    Failed,
    Partition,
    bucket_of,
    index_partition,
    plan,
    split_partition,
)
from partition_files import VanishingAfterSniff, line, members, sid, span, tid, whole, write


def test_a_run_keys_bucket_is_a_fixed_function_of_the_key() -> None:
    """Workers in other processes must put a run's spans in the same bucket, so the bucket is a fixed
    hash (blake2b, 8 bytes, big-endian, modulo the bucket count), not Python's salted ``hash()``."""
    assert [bucket_of(k, 64) for k in ("run-1", "r1", "ünïcode")] == [7, 48, 13]
    assert bucket_of("ünïcode", 1_000_003) == 689_380
    keys = [f"run-{n}" for n in range(1000)]
    for buckets in (1, 3, 64):
        assert {type(bucket_of(k, buckets)) for k in keys} == {int}
        assert {bucket_of(k, buckets) for k in keys} == set(range(buckets))


def _file(tmp_path: Path) -> Path:
    return write(
        tmp_path / "t.jsonl",
        line(span(1, 1, "r1"), span(2, 2)),  # trace 2: joined to r1 by a span elsewhere
        line(span(3, 3)),  # a trace without a run id is its own run
        line(span(1, 4, "r1"), span(2, 5)),
    )


def test_spans_are_sorted_by_run_key_into_the_keys_bucket(tmp_path: Path) -> None:
    path = _file(tmp_path)
    run_of = {tid(1): "r1", tid(2): "r1", tid(3): tid(3)}
    split = split_partition(whole(path), 0, 3, run_of, frozenset({(tid(1), "r1")}), 4)
    assert not isinstance(split, Failed)
    assert (split.spans, split.missed) == (5, set())
    expected: dict[int, dict[str, list[str]]] = {}
    for key, ids in (("r1", [1, 2, 4, 5]), (tid(3), [3])):
        expected.setdefault(bucket_of(key, 4), {})[key] = [sid(n) for n in ids]
    assert {
        b: {k: [s.span_id for s in spans] for k, spans in by_run.items()}
        for b, by_run in split.buckets.items()
    } == expected


def test_a_run_id_the_index_did_not_see_is_reported_missed(tmp_path: Path) -> None:
    """An escaped ``agent.run.id`` key is invisible to the byte scan: the index saw trace 2 alone.
    The span goes under the key the client gave (the client joins the missed link and splits again)."""
    path = write(tmp_path / "t.jsonl", line(span(2, 2)), line(span(2, 3, "r1", hidden=True)))
    split = split_partition(whole(path), 0, 2, {tid(2): tid(2)}, frozenset(), 1)
    assert not isinstance(split, Failed)
    assert split.missed == {(tid(2), "r1")}
    assert members(split) == {tid(2): [sid(2), sid(3)]}


def test_a_trace_the_index_did_not_see_is_missed_and_keyed_by_its_run_id_else_its_trace(
    tmp_path: Path,
) -> None:
    path = write(tmp_path / "t.jsonl", line(span(5, 5, "r5"), span(6, 6)))
    split = split_partition(whole(path), 0, 1, {}, frozenset(), 2)
    assert not isinstance(split, Failed)
    assert split.missed == {(tid(5), "r5"), (tid(6), None)}
    assert members(split) == {"r5": [sid(5)], tid(6): [sid(6)]}


def test_a_run_id_that_is_not_a_non_empty_string_links_nothing(tmp_path: Path) -> None:
    """``agent.run.id`` names a run only as a non-empty string (as ``runs.run_value`` reads it)."""
    path = write(
        tmp_path / "t.jsonl",
        line(span(7, 7, value={"intValue": "5"}), span(8, 8, ""), span(9, 9, value={"boolValue": True})),
    )
    run_of = {tid(n): tid(n) for n in (7, 8, 9)}
    split = split_partition(whole(path), 0, 1, run_of, frozenset(), 1)
    assert not isinstance(split, Failed)
    assert split.missed == set()
    assert members(split) == {tid(n): [sid(n)] for n in (7, 8, 9)}


def test_a_bad_span_is_a_failed_answer_naming_its_line_in_the_whole_file(tmp_path: Path) -> None:
    """The split of a byte range numbers its lines from the range's first line in the file."""
    bad = span(4, 4).replace(tid(4), "not-a-trace-id")
    path = write(tmp_path / "t.jsonl", line(span(1, 1)), "\n", line(span(2, 2)), line(span(3, 3)), line(bad))
    with pytest.raises(TraceReadError) as info:
        list(read_spans([path]))
    expected = str(info.value)
    assert expected.startswith(f"{path}:5: ")
    parts = plan(str(path), 60)
    assert not isinstance(parts, Failed) and len(parts) > 3
    first, answers = 0, []
    for part in parts:
        ix = index_partition(part)
        assert not isinstance(ix, Failed)
        answers.append(split_partition(part, first, ix.units, {}, frozenset(), 1))
        first += ix.units
    assert [a for a in answers if isinstance(a, Failed)] == [Failed(expected)]
    assert next(p for p, a in zip(parts, answers, strict=True) if isinstance(a, Failed)).start > 0


def test_the_split_of_a_growing_file_stops_where_its_index_did(tmp_path: Path) -> None:
    """A file still being written: lines appended after the index are not read by the split, so the
    client's counts (spans, line numbers of the next partitions) stay those of the index."""
    path = write(tmp_path / "t.jsonl", line(span(1, 1)), line(span(2, 2)))
    ix = index_partition(whole(path))
    assert not isinstance(ix, Failed) and ix.units == 2
    with path.open("a") as f:
        f.write(line(span(3, 3)))
    split = split_partition(whole(path), 0, ix.units, {tid(1): tid(1), tid(2): tid(2)}, frozenset(), 1)
    assert not isinstance(split, Failed)
    assert (split.spans, split.missed) == (2, set())


def test_the_split_of_a_range_reads_no_more_lines_than_it_is_given(tmp_path: Path) -> None:
    path = write(tmp_path / "t.jsonl", line(span(1, 1)), line(span(2, 2)), line(span(3, 3)))
    split = split_partition(Partition(str(path), 0, path.stat().st_size), 0, 2, {}, frozenset(), 1)
    assert members(split) == {tid(1): [sid(1)], tid(2): [sid(2)]}


def test_a_range_whose_file_is_gone_after_the_sniff_is_a_failed_answer(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr("otel_provenance.offline.readers.partitions.TraceFile", VanishingAfterSniff)
    path = write(tmp_path / "t.jsonl", line(span(1, 1)), line(span(2, 2)))
    answer = split_partition(Partition(str(path), 0, 10), 0, 1, {}, frozenset(), 1)
    assert answer == Failed(f"{path}: read failed (FileNotFoundError)")
