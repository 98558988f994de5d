"""``partitions.index_partition`` and the byte ranges it reads: each line of a JSON Lines file belongs
to exactly one range (the one it starts in), wherever the cuts fall; a partition's links, line count
and cut-off last line are what the single-process reader sees there."""

from __future__ import annotations

from pathlib import Path

import pytest

from otel_provenance.offline.readers import IncompleteFile, SkippedRecords
from otel_provenance.offline.readers.partitions import (
    Failed,
    Indexed,
    Partition,
    index_partition,
    join_indexes,
    plan,
    split_partition,
)
from partition_files import (
    VanishingAfterSniff,
    line,
    members,
    span,
    split_args,
    tid,
    whole,
    whole_spans,
    write,
)

CUT = "the last line is cut off (was the writer stopped mid-write?)"

LINES = [
    line(span(1, 1, "r1"), span(2, 2)),
    "\n",  # blank lines count as lines (for line numbers) but hold no spans
    "\n",
    line(span(2, 3, "r1")),  # joins trace 2 to run r1, three lines after its first span
    line(span(3, 4)),
    line(span(1, 5, "r1"), span(4, 6, "r4")),
]
LINKS = frozenset(
    {
        (tid(1), None),
        (tid(1), "r1"),
        (tid(2), None),
        (tid(2), "r1"),
        (tid(3), None),
        (tid(4), None),
        (tid(4), "r4"),
    }
)
RUNS = {"r1": [f"{n:016x}" for n in (1, 2, 3, 5)], tid(3): [f"{4:016x}"], "r4": [f"{6:016x}"]}


def _blocks(size: int) -> list[int]:
    """Cuts at byte 1, 2, 3…, at line starts (also one byte either side), and one byte before the end."""
    starts, at = [], 0
    for text in LINES:
        at += len(text)
        starts.append(at)
    return sorted({1, 2, 3, 5, 8, 13, size - 1} | {s + d for s in starts[:-1] for d in (-1, 0, 1)})


def test_ranges_cut_anywhere_give_each_line_to_exactly_one_partition(tmp_path: Path) -> None:
    path = write(tmp_path / "t.jsonl", *LINES)
    size = path.stat().st_size
    for block in _blocks(size):
        parts = plan(str(path), block)
        assert not isinstance(parts, Failed) and all(p.start is not None for p in parts), block
        indexed = [index_partition(p) for p in parts]
        assert all(isinstance(ix, Indexed) for ix in indexed), block
        assert sum(ix.units for ix in indexed) == len(LINES), block
        assert frozenset().union(*(ix.links for ix in indexed)) == LINKS, block
        keys = join_indexes(indexed)
        runs: dict[str, list[str]] = {}
        first = 0
        for part, ix in zip(parts, indexed, strict=True):
            run_of, known = split_args(ix, keys)
            split = split_partition(part, first, ix.units, run_of, known, 3)
            assert not isinstance(split, Failed) and not split.missed, block
            for key, ids in members(split).items():
                runs.setdefault(key, []).extend(ids)
            first += ix.units
        assert runs == RUNS, block
    assert sorted(i for ids in RUNS.values() for i in ids) == sorted(whole_spans(path))


def test_a_whole_file_index_holds_its_links_and_counts_its_lines(tmp_path: Path) -> None:
    path = write(
        tmp_path / "t.jsonl", line(span(1, 1, "r1"), span(2, 2)), line(span(2, 3, "r1")), line(span(3, 4))
    )
    assert plan(str(path), path.stat().st_size) == [whole(path)]
    links = frozenset({(tid(1), None), (tid(1), "r1"), (tid(2), None), (tid(2), "r1"), (tid(3), None)})
    assert index_partition(whole(path)) == Indexed(links, 3, None, 3)


def test_a_cut_off_last_line_is_reported_with_its_line_not_failed(tmp_path: Path) -> None:
    """A writer stopped mid-write: the complete lines are indexed, the cut-off one is noted."""
    path = write(tmp_path / "t.jsonl", line(span(1, 1, "r1")), line(span(2, 2)), '{"resourceSpans": [{"res')
    assert index_partition(whole(path)) == Indexed(
        frozenset({(tid(1), None), (tid(1), "r1"), (tid(2), None)}), 2, IncompleteFile(str(path), 3, CUT), 2
    )


def test_a_cut_off_last_line_in_a_byte_range_is_noted_at_its_line_in_the_range(tmp_path: Path) -> None:
    """Line numbers are relative to the range (the client adds the range's first line); the split of
    that range reads its complete lines and does not fail on the cut-off one."""
    first = line(span(1, 1, "r1"))
    path = write(tmp_path / "t.jsonl", first, line(span(2, 2)), '{"resourceSpans": [{"res')
    part = Partition(str(path), len(first), path.stat().st_size)
    ix = index_partition(part)
    assert ix == Indexed(frozenset({(tid(2), None)}), 2, IncompleteFile(str(path), 2, CUT), 1)
    split = split_partition(part, 1, ix.units, {tid(2): tid(2)}, frozenset(), 2)
    assert members(split) == {tid(2): [f"{2:016x}"]}


def test_a_missing_file_is_a_failed_answer_naming_it(tmp_path: Path) -> None:
    missing = tmp_path / "nope.jsonl"
    message = f"{missing}: cannot read file (No such file or directory)"
    assert index_partition(Partition(str(missing))) == Failed(message)
    assert index_partition(Partition(str(missing), 0, 10)) == Failed(message)


def test_a_range_whose_file_is_gone_after_the_sniff_is_a_failed_answer(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr("otel_provenance.offline.readers.partitions.TraceFile", VanishingAfterSniff)
    path = write(tmp_path / "t.jsonl", *LINES)
    assert index_partition(Partition(str(path), 0, 10)) == Failed(f"{path}: read failed (FileNotFoundError)")


@pytest.mark.parametrize("end", [1, 2])
def test_a_range_reads_the_lines_that_start_in_it_and_no_others(tmp_path: Path, end: int) -> None:
    """The first range owns the first line however little of it lies inside; the next owns none of it."""
    path = write(tmp_path / "t.jsonl", *LINES)
    size = path.stat().st_size
    head, tail = (
        index_partition(Partition(str(path), 0, end)),
        index_partition(Partition(str(path), end, size)),
    )
    assert isinstance(head, Indexed) and isinstance(tail, Indexed)
    assert (head.units, tail.units) == (1, len(LINES) - 1)


def test_a_range_counts_its_trace_lines_and_other_signals_and_its_split_the_unknown_values(
    tmp_path: Path,
) -> None:
    """What the client needs to judge a file as one process does: trace lines, other signals' lines
    (an empty request is neither), and attribute values of an unknown kind left out by the split."""
    first = line(span(1, 1, "r1"))
    unknown = line(span(2, 2, value={"stringValueStrindex": 3}))
    logs, metrics = '{"resourceLogs": []}\n', '{"resourceMetrics": []}\n'
    path = write(tmp_path / "t.jsonl", first, logs, "{}\n", unknown, metrics, logs, line(span(3, 3)))
    part = Partition(str(path), len(first), path.stat().st_size)
    ix = index_partition(part)
    assert isinstance(ix, Indexed)
    assert (ix.units, ix.traces) == (6, 2)
    assert ix.skipped == SkippedRecords(str(path), (("logs", 2), ("metrics", 1)), "lines")
    split = split_partition(part, 1, ix.units, {tid(2): tid(2), tid(3): tid(3)}, frozenset(), 2)
    assert (split.spans, split.unknown_values) == (2, 1)
    clean = Partition(str(path), 0, len(first))
    assert index_partition(clean).skipped is None
    assert split_partition(clean, 0, 1, {tid(1): "r1"}, frozenset({(tid(1), "r1")}), 2).unknown_values == 0


@pytest.mark.parametrize("ranged", [False, True])
def test_a_partition_of_other_signals_alone_counts_no_trace_line(tmp_path: Path, ranged: bool) -> None:
    """The client adds the partitions' trace counts to tell a logs file from an empty trace file:
    a partition holding no trace line counts 0 of them (a number, so the sum stays one)."""
    logs = '{"resourceLogs": []}\n'
    path = write(tmp_path / "t.jsonl", logs, logs)
    part = Partition(str(path), 0, path.stat().st_size) if ranged else Partition(str(path))
    ix = index_partition(part)
    assert isinstance(ix, Indexed)
    assert (ix.units, ix.traces) == (2, 0) and type(ix.traces) is int
    assert ix.skipped == SkippedRecords(str(path), (("logs", 2),), "lines")
