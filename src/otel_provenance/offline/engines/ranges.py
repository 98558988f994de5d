"""Partitions read, converted and folded where they are, by ``--jobs N`` and by Dask alike (#46).

The partitions are ``readers.partitions``'s: an uncompressed JSON Lines file cut into byte ranges at
line boundaries (a line belongs to the range it starts in), any other file whole. An engine runs
two rounds of tasks, one per partition, and does the rest here:

1. **index** — each partition's ``(trace id, run id)`` links (:func:`~..readers.partitions.index_partition`,
   the byte scan ``iter_runs`` makes). :func:`join_runs` joins them into run keys (following span
   links when some partition holds them, through a round the engine runs), and :func:`assign`
   marks each run *owned* by the one partition that mentions it, or *crossing* when several do.
2. **fold** (:func:`fold_range`) — each partition converts its spans; the runs it owns are built,
   validated and folded there, and only the spans of crossing runs come back.
   :func:`fold_partitions` builds and folds those few runs itself and merges every partial with
   the fold's own ``merge``; when a partition's spans told more than its index (a link the byte
   scan missed), the links are joined and the round is run again.

So every line is decoded once, in one task, and no run's spans move but those of runs that cross a
partition's edge. ``pool`` runs the tasks in its processes, ``dask_cluster`` on the cluster's
workers. ``pool`` reads input holding a gzip or zstd file the older way (a whole compressed file
would be one process's work); a Dask worker reads it as one partition.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, TypeVar

from ... import semconv
from ...errors import OtelProvenanceError
from ..linked_runs import TraceLinks, join_linked_traces
from ..model import Run, Span
from ..readers import ReadLimits, ReadReport, locations, partitions
from ..readers.partitions import Failed, Indexed, Partition, plan, split_partition
from ..readers.tracefile import Unconfirmed, judge
from ..runs import RunKeys, by_attribute, in_release, make_run
from ..sessions import SessionCheck, overlaps
from .fold import RunFold

P = TypeVar("P")
Link = tuple[str, str | None]

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


@dataclass(frozen=True)
class Job:
    """What every fold task needs besides its partition: sent once to each process or worker."""

    fold: RunFold[Any]
    release: str | None
    release_attribute: str
    run_attribute: str = semconv.RUN_ID
    limits: ReadLimits = field(default_factory=ReadLimits)


@dataclass(frozen=True)
class Assigned:
    """One partition's share of the joined runs: its traces' run keys, the run-id links its index
    saw, and which of its runs cross into another partition (the others it owns)."""

    first_line: int
    units: int
    run_of: dict[str, str]
    known: frozenset[tuple[str, str]]
    crossing: frozenset[str]


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
    missed: set[Link]  # links the index did not have: the answer is not used (the round is run again)
    unconfirmed: dict[str, list[Unconfirmed]] = field(default_factory=dict)  # of the crossing runs


def fold_runs(
    groups: dict[str, list[Span]],
    source_of: Callable[[str], str],
    job: Job,
    unconfirmed: dict[str, list[Unconfirmed]] | None = None,
) -> Folded:
    """Whole runs from their spans, validated and folded as ``FileSource`` folds them: every run is
    checked for overlapping traces (with another run attribute), the agent runs of the release are
    folded. ``source_of(run key)`` names the file an invalid run is reported in; ``unconfirmed``
    holds, per run, the pairs of the index its spans must carry (``readers.tracefile.judge``)."""
    folded = Folded(None)
    custom = job.run_attribute != semconv.RUN_ID
    doubts = unconfirmed or {}
    for key in sorted(doubts):
        judge(doubts[key], groups.get(key, []))

    def runs() -> Iterator[Run]:  # one run at a time: the evaluator's check of it is then a cache hit
        for key in sorted(groups):
            run = make_run(key, groups.pop(key), source_of(key))
            if custom and by_attribute(run, job.run_attribute) and overlaps(run):
                folded.overlapping.append(run.run_id)
            if not run.is_agent_run:
                folded.not_runs += 1
            elif in_release(run, job.release, job.release_attribute):
                yield run

    folded.value = job.fold.over(runs())
    return folded


def fold_range(part: Partition, share: Assigned, job: Job) -> RangePart | Failed:
    """In a process or worker: the partition's spans converted and split into the runs it owns,
    folded here, and those of crossing runs, sent back."""
    owners = {run: _CROSSING if run in share.crossing else _OWNED for run in share.run_of.values()}
    where = (part, share.first_line, share.units, share.run_of, share.known)
    split = split_partition(*where, 2, owners, job.run_attribute, job.limits)
    if isinstance(split, Failed):
        return split
    if split.missed:
        return RangePart(None, {}, 0, 0, Counter(), split.missed)
    owned = split.buckets.get(_OWNED, {})
    doubts = {key: pairs for key, pairs in split.unconfirmed.items() if owners.get(key) != _CROSSING}
    try:
        folded = fold_runs(owned, lambda _: part.source, job, doubts)
    except OtelProvenanceError as exc:
        return Failed(str(exc))
    pieces = split.buckets.get(_CROSSING, {})
    crossing_doubts = {key: pairs for key, pairs in split.unconfirmed.items() if owners.get(key) == _CROSSING}
    return RangePart(folded, pieces, split.spans, split.unknown_values, split.beside, set(), crossing_doubts)


def join_runs(
    parts: list[Partition],
    indexed: list[Indexed],
    found: ReadReport,
    run_attribute: str,
    link_graphs: Callable[[], list[TraceLinks]],
) -> RunKeys:
    """The run keys of the whole input from the partitions' indexes, as one process joins them: other
    signals and cut-off last lines noted in ``found``, with another run attribute its counts, and,
    when some partition holds span links, the traces they join (``link_graphs`` runs the round of
    :func:`~..readers.partitions.link_partition` tasks)."""
    partitions.judge_signals(parts, indexed, found)
    keys = partitions.join_indexes(indexed)
    if run_attribute != semconv.RUN_ID:
        found.sessions = SessionCheck(run_attribute, *keys.named_counts())
    if any(ix.linked for ix in indexed):  # span links join traces into runs (linked_runs)
        links = TraceLinks()
        for graph in link_graphs():
            links.update(graph)
        joins = join_linked_traces(keys, links)
        found.links = joins if joins.joined or joins.refused else None
    return keys


def assign(
    indexed: list[Indexed], lines: list[int], keys: RunKeys, extra: dict[int, set[Link]]
) -> tuple[list[Assigned], dict[str, int]]:
    """Each partition's share of the runs (``lines``: its first line in its file; ``extra``: links a
    partition's spans told beyond its index), and the last partition that mentions each run (an
    invalid crossing run is reported in its file, as one process reports it where the run ends)."""
    links = [ix.links | extra.get(i, set()) for i, ix in enumerate(indexed)]
    last: dict[str, int] = {}
    crossing: set[str] = set()
    for i, mentioned in enumerate(links):
        for trace_id, _ in mentioned:
            run = keys.run_of(trace_id)
            if last.setdefault(run, i) != i:
                crossing.add(run)
            last[run] = i
    shares = []
    for i, (ix, mentioned) in enumerate(zip(indexed, links, strict=True)):
        run_of = {trace_id: keys.run_of(trace_id) for trace_id, _ in mentioned}
        known = frozenset((t, r) for t, r in mentioned if r is not None)
        mine = frozenset(run for run in run_of.values() if run in crossing)
        shares.append(Assigned(lines[i], ix.units, run_of, known, mine))
    return shares, last


def fold_partitions(
    parts: list[Partition],
    indexed: list[Indexed],
    keys: RunKeys,
    job: Job,
    found: ReadReport,
    fold_round: Callable[[list[Assigned]], list[RangePart]],
) -> Any:
    """``job.fold`` over every partition: ``fold_round`` runs :func:`fold_range` on each partition
    with its share (answers in order, the first input error raised); the crossing runs are folded
    here, every partial merged, and what the partitions read added to ``found``."""
    lines = partitions.first_lines(parts, indexed, found)
    extra: dict[int, set[Link]] = {}
    for _ in range(2):
        shares, last = assign(indexed, lines, keys, extra)
        answers = fold_round(shares)
        missed = {i: answer.missed for i, answer in enumerate(answers) if answer.missed}
        if not missed:
            break
        for i, links in missed.items():  # the byte scan missed a link: join it, run the round again
            extra.setdefault(i, set()).update(links)
            for trace_id, run_id in links:
                keys.link(trace_id, run_id)
    else:
        raise OtelProvenanceError("internal error: run keys still unresolved after joining missed links")
    groups = _gather_crossing(answers)
    doubts: dict[str, list[Unconfirmed]] = defaultdict(list)
    for answer in answers:
        for key, pairs in answer.unconfirmed.items():
            doubts[key].extend(pairs)
    rest = fold_runs(groups, lambda run: parts[last[run]].source, job, doubts)
    value = rest.value
    for answer in answers:
        assert answer.folded is not None  # only a missed link leaves a partition unfolded
        value = job.fold.merge(value, answer.folded.value)
        found.spans += answer.spans
        found.unknown_values += answer.unknown_values
        found.beside.update(answer.beside)
    for folded in [*(answer.folded for answer in answers if answer.folded is not None), rest]:
        found.not_runs += folded.not_runs
        if found.sessions is not None:
            found.sessions.overlapping.extend(folded.overlapping)
    return value


def _gather_crossing(answers: list[RangePart]) -> dict[str, list[Span]]:
    """The crossing runs' spans from every partition, in input order."""
    groups: dict[str, list[Span]] = defaultdict(list)
    for answer in answers:
        for key, spans in answer.crossing.items():
            groups[key].extend(spans)
    return dict(groups)
