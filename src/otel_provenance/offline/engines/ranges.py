"""``--jobs N`` by byte ranges: each process reads, converts and folds its own part of the input (#46).

The partitions are those the Dask engine reads (``readers.partitions``): an uncompressed JSON Lines
file cut into byte ranges at line boundaries (a line belongs to the range it starts in), any other
file whole. The work has two rounds in the same processes:

1. **index** — each partition's ``(trace id, run id)`` links (:func:`~..readers.partitions.index_partition`,
   the byte scan ``iter_runs`` makes). The parent joins them into run keys, follows span links when
   some partition holds them, and marks each run *owned* by the one partition that mentions it, or
   *crossing* when several do.
2. **fold** (:func:`fold_range`) — each partition converts its spans; the runs it owns are built,
   validated and folded there, and only the spans of crossing runs come back. The parent builds and
   folds those few runs itself and merges every partial with the fold's own ``merge``.

So every line is decoded once, in one process, instead of once in every process (hashing run ids to
processes made each of them decode every line). A gzip or zstd file cannot be entered in the
middle: input holding one is read the older way (``pool``), with the decompression limits; so is
input the byte scan misjudged (a span whose run id its index missed), which is then read again.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from ... import semconv
from ...errors import OtelProvenanceError
from ..model import Run, Span
from ..readers import ReadLimits, locations, partitions
from ..readers.partitions import Failed, Partition, plan, split_partition
from ..runs import by_attribute, in_release, make_run
from ..sessions import overlaps
from .fold import RunFold

_OWNED, _CROSSING = 0, 1  # the two buckets of a partition's split
#: The largest byte range a process reads at once: it holds the spans of its range until they are
#: folded, so a range is bounded like a Dask partition, not by the input's size over N.
MAX_RANGE = 16 * 2**20


def plan_ranges(paths: list[str], jobs: int) -> tuple[list[str], list[Partition]] | None:
    """The files of ``paths`` and their partitions for ``jobs`` processes: each uncompressed JSON
    Lines file cut into ranges of about ``1/jobs`` of the input (at most ``MAX_RANGE``); None when a
    file is compressed or cannot be planned (the caller then reads the older way, which reports any
    error as one process does)."""
    try:
        files = locations.expand(paths)
        if not files or any(partitions.compressed(f) for f in files):
            return None
        block = max(1, min(MAX_RANGE, math.ceil(sum(locations.size(f) for f in files) / jobs)))
    except (OtelProvenanceError, OSError):
        return None
    parts: list[Partition] = []
    for source in files:
        planned = plan(source, block)
        if isinstance(planned, Failed):
            return None
        parts.extend(planned)
    return files, parts


@dataclass
class Folded:
    """What folding some whole runs gave: the value, traces that are no agent run, and (with
    ``--run-attribute``) the runs whose traces overlap in time (``offline.sessions``)."""

    value: Any
    not_runs: int = 0
    overlapping: list[str] = field(default_factory=list)


@dataclass
class RangePart:
    """One partition's answer: its owned runs folded, the crossing runs' spans, and what it read."""

    folded: Folded | None
    crossing: dict[str, list[Span]]
    spans: int
    unknown_values: int
    beside: Counter[str]
    missed: bool  # the index missed a link: the answer is not used (the input is read again)


def fold_runs(
    groups: dict[str, list[Span]],
    source_of: Callable[[str], str],
    fold: RunFold[Any],
    release: str | None,
    release_attribute: str,
    run_attribute: str,
) -> Folded:
    """Whole runs from their spans, validated and folded as ``FileSource`` folds them: every run is
    checked for overlapping traces (with another run attribute), the agent runs of the release are
    folded. ``source_of(run key)`` names the file an invalid run is reported in."""
    folded = Folded(None)
    custom = run_attribute != semconv.RUN_ID

    def runs() -> Iterator[Run]:  # one run at a time: the evaluator's check of it is then a cache hit
        for key in sorted(groups):
            run = make_run(key, groups.pop(key), source_of(key))
            if custom and by_attribute(run, run_attribute) and overlaps(run):
                folded.overlapping.append(run.run_id)
            if not run.is_agent_run:
                folded.not_runs += 1
            elif in_release(run, release, release_attribute):
                yield run

    folded.value = fold.over(runs())
    return folded


def fold_range(
    part: Partition,
    first_line: int,
    units: int,
    run_of: dict[str, str],
    known: frozenset[tuple[str, str]],
    crossing: frozenset[str],
    job: tuple[RunFold[Any], str | None, str, str, ReadLimits],
) -> RangePart | Failed:
    """In a process: the partition's spans converted and split into the runs it owns, folded here,
    and those of ``crossing`` runs, sent back. ``job`` is (fold, release, release attribute, run
    attribute, read limits)."""
    fold, release, release_attribute, run_attribute, limits = job
    owners = {run: _CROSSING if run in crossing else _OWNED for run in run_of.values()}
    split = split_partition(part, first_line, units, run_of, known, 2, owners, run_attribute, limits)
    if isinstance(split, Failed):
        return split
    if split.missed:
        return RangePart(None, {}, 0, 0, Counter(), True)
    try:
        owned = split.buckets.get(_OWNED, {})
        folded = fold_runs(owned, lambda _: part.source, fold, release, release_attribute, run_attribute)
    except OtelProvenanceError as exc:
        return Failed(str(exc))
    pieces = split.buckets.get(_CROSSING, {})
    return RangePart(folded, pieces, split.spans, split.unknown_values, split.beside, False)


def gather_crossing(answers: list[RangePart]) -> dict[str, list[Span]]:
    """The crossing runs' spans from every partition, in input order."""
    groups: dict[str, list[Span]] = defaultdict(list)
    for answer in answers:
        for key, spans in answer.crossing.items():
            groups[key].extend(spans)
    return dict(groups)
