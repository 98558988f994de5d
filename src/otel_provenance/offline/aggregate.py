"""Per-rule tallies over many runs, as a value that merges associatively and commutatively.

``Aggregate.of(results)`` tallies run results; ``a.merge(b)`` adds two tallies. Findings are kept
in one canonical order and run ids are kept to refuse counting a run twice, so merging shards in
any grouping or order gives the same value — and the same bytes from ``to_json``.

A partial result of ``gate check --shard I/N`` records its shard (``for_shard``): merging refuses a
shard given twice or partials of different shard counts, and ``missing_shards`` names the shards a
merged value still lacks, so a merge can never decide without the shard that held a failing run.
Partials of format v2 (before shards were recorded, #36) are refused with what to re-run.

A partial carries every rule's counts per status, which is all a failing-run rate with a confidence
(#38) is decided from: ``gate.decide`` reads the merged counts exactly as one process's, so v3 holds
what it needs (and a contract with a rate cannot be read by a version that wrote older partials).
"""

from __future__ import annotations

import itertools
import json
import re
import sys
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from operator import attrgetter
from typing import Any, Final

from ..errors import TraceReadError
from .contracts.outcomes import Witness
from .evaluate import RunResult
from .outcome import Outcome

PARTIAL_FORMAT: Final = "otel-provenance/gate-partial/v3"
_UNSHARDED_FORMATS: Final = ("otel-provenance/gate-partial/v2",)  # partials that did not record their shard
RUN_STATUSES: Final = tuple(o.decision for o in Outcome)  # a run's status, as reports spell it
RULE_STATUSES: Final = tuple(s.value for s in Outcome)
_PASS: Final = Outcome.PASS.value
_PASSED: Final = Outcome.PASS.decision  # a run's status when every rule passed it (``evaluate._result``)
_RULE_ID: Final = attrgetter("rule_id")


_SPAN_ID_HEX: Final = 16  # every span id the readers give: 16 lowercase hex digits
_LOWER_HEX: Final = re.compile(r"[0-9a-f]*").fullmatch

PackedWitness = tuple[str, "bytes | tuple[str, ...]", tuple[tuple[str, Any], ...]]


class RunFinding:
    """A finding of one rule on one run, with the ids that prove it.

    Kept packed: an aggregate holds every finding of a release until the report is written, and a
    retry or count finding names every call of its step — 16-character span ids, a Python string
    each. Each witness's span ids are kept as one ``bytes`` (``_pack_ids``), unpacked when
    ``witnesses`` is read; messages, which repeat from run to run, are interned."""

    __slots__ = ("_packed", "message", "run_id", "status", "trace_ids")

    run_id: str
    trace_ids: tuple[str, ...]
    status: str  # fail | insufficient_evidence | error
    message: str
    _packed: tuple[PackedWitness, ...]

    def __init__(
        self,
        run_id: str,
        trace_ids: tuple[str, ...],
        status: str,
        message: str,
        witnesses: tuple[Witness, ...],
    ) -> None:
        self.run_id, self.trace_ids, self.status = run_id, trace_ids, status
        self.message = sys.intern(message)  # runs share a message word for word (few counts differ)
        self._packed = tuple((w.trace_id, _pack_ids(w.span_ids), w.observed) for w in witnesses)

    @property
    def witnesses(self) -> tuple[Witness, ...]:
        return tuple(Witness(trace, _unpack_ids(ids), observed) for trace, ids, observed in self._packed)

    def _fields(self) -> tuple[Any, ...]:
        return (self.run_id, self.trace_ids, self.status, self.message, self._packed)

    def __eq__(self, other: object) -> bool:
        return self._fields() == other._fields() if isinstance(other, RunFinding) else NotImplemented

    def __hash__(self) -> int:
        return hash(self._fields())

    def __repr__(self) -> str:
        return (
            f"RunFinding(run_id={self.run_id!r}, trace_ids={self.trace_ids!r}, status={self.status!r}, "
            f"message={self.message!r}, witnesses={self.witnesses!r})"
        )

    def __reduce__(self) -> tuple[Any, ...]:
        return (RunFinding, (self.run_id, self.trace_ids, self.status, self.message, self.witnesses))

    def sort_key(self) -> tuple[str, str, str, str]:
        proof = json.dumps([witness_json(w) for w in self.witnesses], sort_keys=True)
        return (self.run_id, self.status, self.message, proof)


def _pack_ids(ids: tuple[str, ...]) -> bytes | tuple[str, ...]:
    """Span ids as the bytes their hex digits spell (8 a span), when every one is 16 lowercase hex
    digits — which ``bytes.hex`` gives back exactly; any other ids as they are."""
    joined = "".join(ids) if all(i.__class__ is str and len(i) == _SPAN_ID_HEX for i in ids) else None
    if joined is not None and _LOWER_HEX(joined):
        return bytes.fromhex(joined)
    return ids


def _unpack_ids(ids: bytes | tuple[str, ...]) -> tuple[str, ...]:
    if ids.__class__ is bytes:
        text = ids.hex()  # type: ignore[union-attr]
        return tuple(text[i : i + _SPAN_ID_HEX] for i in range(0, len(text), _SPAN_ID_HEX))
    return ids  # type: ignore[return-value]


@dataclass(frozen=True, slots=True)
class RuleTally:
    counts: tuple[tuple[str, int], ...]  # (rule status, runs), every status present
    findings: tuple[RunFinding, ...]

    def count(self, status: str) -> int:
        return dict(self.counts)[status]


def _empty_counts(names: Iterable[str]) -> dict[str, int]:
    return dict.fromkeys(names, 0)


@dataclass(frozen=True)
class Aggregate:
    contract_digest: str
    release: str
    completed_at: str | None
    run_ids: tuple[str, ...]  # evaluated runs of the release, sorted
    other_releases: tuple[tuple[str, int], ...]  # runs left out, per release label (sorted)
    run_counts: tuple[tuple[str, int], ...]
    rules: Mapping[str, RuleTally] = field(default_factory=dict)
    incomplete_inputs: tuple[str, ...] = ()  # inputs read only up to a cut ("file:line: problem"), sorted
    steps_seen: tuple[str, ...] = ()  # step keys present in the evaluated runs, sorted
    tool_spans: int = 0  # tool spans (execute_tool) in the evaluated runs: none means nothing to judge
    shard_count: int = 0  # N of `--shard I/N` for a shard's partial result; 0: not a shard's result
    shards: tuple[int, ...] = ()  # the shard indexes (1-based) merged into this value, sorted

    @classmethod
    def empty(
        cls, contract_digest: str, rule_ids: Iterable[str], release: str, completed_at: str | None
    ) -> Aggregate:
        tallies = {r: RuleTally(tuple(_empty_counts(RULE_STATUSES).items()), ()) for r in sorted(rule_ids)}
        return cls(
            contract_digest,
            release,
            completed_at,
            (),
            (),
            tuple(_empty_counts(RUN_STATUSES).items()),
            tallies,
        )

    def add_all(self, results: Iterable[RunResult]) -> Aggregate:
        """This aggregate plus every result (pure). Tallies in one pass and sorts findings once."""
        run_counts = dict(self.run_counts)
        tallies = {rid: (dict(t.counts), list(t.findings)) for rid, t in self.rules.items()}
        run_ids = list(self.run_ids)
        passed: Counter[tuple[str, ...]] = Counter()  # runs that passed every rule, by their rule ids

        def tally_of(rule_id: str) -> tuple[dict[str, int], list[RunFinding]]:
            tally = tallies.get(rule_id)
            if tally is None:
                tally = tallies[rule_id] = (_empty_counts(RULE_STATUSES), [])
            return tally

        for result in results:
            run_ids.append(result.run_id)
            run_counts[result.status] += 1
            if result.status == _PASSED:  # most runs: every rule passed, nothing to keep but a count
                passed[tuple(map(_RULE_ID, result.rules))] += 1
                continue
            for r in result.rules:
                counts, findings = tally_of(r.rule_id)
                counts[r.status._value_] += 1
                if r.findings:  # most rules pass most runs
                    findings.extend(
                        RunFinding(result.run_id, result.trace_ids, f.status._value_, f.message, f.witnesses)
                        for f in r.findings
                    )
        for rule_ids, runs in passed.items():
            for rule_id in rule_ids:
                tally_of(rule_id)[0][_PASS] += runs
        run_ids.sort()  # neighbours once sorted: no set of every run id beside the list (peak memory)
        if any(a == b for a, b in itertools.pairwise(run_ids)):
            raise ValueError("a run id occurs twice among the results")
        rules = {
            rid: RuleTally(tuple(c.items()), tuple(sorted(f, key=RunFinding.sort_key)))
            for rid, (c, f) in sorted(tallies.items())
        }
        return Aggregate(
            self.contract_digest,
            self.release,
            self.completed_at,
            tuple(run_ids),
            self.other_releases,
            tuple(run_counts.items()),
            rules,
            self.incomplete_inputs,
            self.steps_seen,
            self.tool_spans,
            self.shard_count,
            self.shards,
        )

    def with_other_releases(self, counts: Mapping[str, int]) -> Aggregate:
        """Count runs left out because they belong to another release (``counts``: label → runs)."""
        return replace(self, other_releases=_add_counts(self.other_releases, counts.items()))

    @property
    def other_release_runs(self) -> int:
        return sum(n for _, n in self.other_releases)

    def with_steps_seen(self, steps: Iterable[str], tool_spans: int = 0) -> Aggregate:
        return replace(
            self,
            steps_seen=tuple(sorted(set(self.steps_seen) | set(steps))),
            tool_spans=self.tool_spans + tool_spans,
        )

    def with_incomplete_inputs(self, inputs: Iterable[str]) -> Aggregate:
        """Record inputs that were cut off: such evidence has a known gap and can never pass."""
        return replace(self, incomplete_inputs=tuple(sorted(set(self.incomplete_inputs) | set(inputs))))

    def for_shard(self, index: int, count: int) -> Aggregate:
        """This value as the partial result of shard ``index`` of ``count``."""
        if not 1 <= index <= count:
            raise ValueError(f"shard {index}/{count}: I must be between 1 and N")
        return replace(self, shard_count=count, shards=(index,))

    @property
    def missing_shards(self) -> tuple[int, ...]:
        """The shards of ``shard_count`` not merged into this value (none for an unsharded value)."""
        return tuple(i for i in range(1, self.shard_count + 1) if i not in self.shards)

    def merge(self, other: Aggregate) -> Aggregate:
        for name in ("contract_digest", "release", "completed_at"):
            if getattr(self, name) != getattr(other, name):
                raise ValueError(f"cannot merge partial results with different {name.replace('_', ' ')}")
        if self.shard_count != other.shard_count:
            counts = sorted((self.shard_count, other.shard_count))
            raise ValueError(
                f"cannot merge partial results of different shard counts ({counts[0]} and {counts[1]})"
                if counts[0]
                else "cannot merge a shard's partial result with a value that records no shard"
            )
        repeated = set(self.shards) & set(other.shards)
        if repeated:
            raise ValueError(
                f"shard {min(repeated)}/{self.shard_count} occurs in two partial results; "
                "give each shard's partial once"
            )
        if set(self.rules) != set(other.rules) and self.rules and other.rules:
            raise ValueError("cannot merge partial results of different rule sets")
        overlap = set(self.run_ids) & set(other.run_ids)
        if overlap:
            raise ValueError(
                f"run {min(overlap)} occurs in two partial results; each run must be in one shard"
            )
        rules = {}
        for rule_id in sorted(set(self.rules) | set(other.rules)):
            a, b = self.rules.get(rule_id), other.rules.get(rule_id)
            if a is None or b is None:
                rules[rule_id] = a or b  # type: ignore[assignment]
                continue
            counts = {k: v + dict(b.counts)[k] for k, v in a.counts}
            findings = tuple(sorted(a.findings + b.findings, key=RunFinding.sort_key))
            rules[rule_id] = RuleTally(tuple(counts.items()), findings)
        run_counts = tuple((k, v + dict(other.run_counts)[k]) for k, v in self.run_counts)
        return Aggregate(
            self.contract_digest,
            self.release,
            self.completed_at,
            tuple(sorted(self.run_ids + other.run_ids)),
            _add_counts(self.other_releases, other.other_releases),
            run_counts,
            rules,
            tuple(sorted(set(self.incomplete_inputs) | set(other.incomplete_inputs))),
            tuple(sorted(set(self.steps_seen) | set(other.steps_seen))),
            self.tool_spans + other.tool_spans,
            self.shard_count,
            tuple(sorted(self.shards + other.shards)),
        )

    @property
    def evaluated(self) -> int:
        return len(self.run_ids)

    # -- partial files ----------------------------------------------------------------------------

    def to_json(self, places: Mapping[str, tuple[str, str | None]] | None = None) -> str:
        """The partial file's text; ``places``: where each run lives (its trace and the span its
        verdict goes on), kept for ``gate merge --export-findings`` (read back by ``run_places``)."""
        data: dict[str, Any] = {
            "format": PARTIAL_FORMAT,
            "contract_digest": self.contract_digest,
            "release": self.release,
            "completed_at": self.completed_at,
            "run_ids": list(self.run_ids),
            "other_releases": dict(self.other_releases),
            "incomplete_inputs": list(self.incomplete_inputs),
            "steps_seen": list(self.steps_seen),
            "tool_spans": self.tool_spans,
            "shard": {"count": self.shard_count, "indexes": list(self.shards)},
            "runs": dict(self.run_counts),
            "rules": {
                rid: {"counts": dict(t.counts), "findings": [finding_json(f) for f in t.findings]}
                for rid, t in sorted(self.rules.items())
            },
        }
        if places:
            data["run_places"] = {run: [trace, span] for run, (trace, span) in sorted(places.items())}
        return canonical_json(data)

    @classmethod
    def from_json(cls, text: str, source: str) -> Aggregate:
        try:
            data = json.loads(text)
            if data.get("format") in _UNSHARDED_FORMATS:
                raise TraceReadError(
                    source,
                    f"a {data['format']} partial result records neither its shard index nor the shard "
                    "count, so a missing shard could not be noticed; re-run every shard with this "
                    "version (gate check --shard I/N --partial OUT)",
                )
            if data.get("format") != PARTIAL_FORMAT:
                raise ValueError(f"not a {PARTIAL_FORMAT} file")
            shard_count, shards = _shard_from_json(data["shard"])
            rules = {
                rid: RuleTally(
                    tuple((s, int(t["counts"][s])) for s in RULE_STATUSES),
                    tuple(_finding_from_json(f) for f in t["findings"]),
                )
                for rid, t in data["rules"].items()
            }
            return cls(
                str(data["contract_digest"]),
                str(data["release"]),
                data["completed_at"],
                tuple(str(r) for r in data["run_ids"]),
                _add_counts((), ((str(k), int(v)) for k, v in data["other_releases"].items())),
                tuple((s, int(data["runs"][s])) for s in RUN_STATUSES),
                rules,
                tuple(sorted(str(i) for i in data["incomplete_inputs"])),
                tuple(sorted(str(i) for i in data["steps_seen"])),
                int(data["tool_spans"]),
                shard_count,
                shards,
            )
        except TraceReadError:
            raise
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise TraceReadError(
                source, f"not a valid partial gate result ({type(exc).__name__}: {exc})"
            ) from None


_TRACE_ID: Final = re.compile(r"[0-9a-f]{32}")
_SPAN_ID: Final = re.compile(r"[0-9a-f]{16}")


def run_places(text: str, source: str) -> dict[str, tuple[str, str | None]]:
    """Where each run of a partial file lives — ``{run id: (trace id, span id or None)}``, as
    ``Aggregate.to_json(places=...)`` wrote it; empty for a partial that records none."""
    try:
        places = json.loads(text).get("run_places", {})
        if not isinstance(places, dict):
            raise ValueError("run_places must be an object")
        out: dict[str, tuple[str, str | None]] = {}
        for run_id, place in places.items():
            if not isinstance(place, list) or len(place) != 2:
                raise ValueError(f"the place of run {run_id!r} must be [trace id, span id or null]")
            trace, span = place
            if not (isinstance(trace, str) and _TRACE_ID.fullmatch(trace)):
                raise ValueError(f"the trace id of run {run_id!r} is not 32 lowercase hex digits")
            if span is not None and not (isinstance(span, str) and _SPAN_ID.fullmatch(span)):
                raise ValueError(f"the span id of run {run_id!r} is not 16 lowercase hex digits")
            out[run_id] = (trace, span)
        return out
    except (ValueError, AttributeError) as exc:
        problem = f"not a valid partial gate result ({type(exc).__name__}: {exc})"
        raise TraceReadError(source, problem) from None


def _shard_from_json(data: dict[str, Any]) -> tuple[int, tuple[int, ...]]:
    count, indexes = data["count"], data["indexes"]
    if type(count) is not int or not isinstance(indexes, list) or any(type(i) is not int for i in indexes):
        raise ValueError("shard count and indexes must be integers")
    if count < 0 or indexes != sorted(set(indexes)) or any(not 1 <= i <= count for i in indexes):
        raise ValueError(f"shard indexes {indexes} do not fit a shard count of {count}")
    return count, tuple(indexes)


def _add_counts(a: Iterable[tuple[str, int]], b: Iterable[tuple[str, int]]) -> tuple[tuple[str, int], ...]:
    total: dict[str, int] = dict(a)
    for label, n in b:
        total[label] = total.get(label, 0) + n
    return tuple(sorted((k, v) for k, v in total.items() if v))


def finding_json(finding: RunFinding) -> dict[str, Any]:
    return {
        "run_id": finding.run_id,
        "trace_ids": list(finding.trace_ids),
        "status": finding.status,
        "message": finding.message,
        "witnesses": [witness_json(w) for w in finding.witnesses],
    }


def witness_json(witness: Witness) -> dict[str, Any]:
    return {
        "trace_id": witness.trace_id,
        "span_ids": list(witness.span_ids),
        "observed": dict(witness.observed),
    }


def _finding_from_json(data: dict[str, Any]) -> RunFinding:
    witnesses = tuple(
        Witness(
            str(w["trace_id"]),
            tuple(w["span_ids"]),
            tuple(sorted((k, _freeze(v)) for k, v in w["observed"].items())),
        )
        for w in data["witnesses"]
    )
    return RunFinding(
        str(data["run_id"]), tuple(data["trace_ids"]), str(data["status"]), str(data["message"]), witnesses
    )


def _freeze(value: Any) -> Any:
    if isinstance(value, float):
        raise ValueError("partial results never contain floats")
    return value


def canonical_json(data: Any) -> str:
    """The one JSON text of ``data``: sorted keys, two-space indent, UTF-8, newline-terminated.
    Refuses floats, so every number in a report is exact."""
    _refuse_floats(data)
    return json.dumps(data, sort_keys=True, indent=2, ensure_ascii=False) + "\n"


def _refuse_floats(data: Any) -> None:
    if isinstance(data, float):
        raise TypeError("canonical JSON holds no floats")
    if isinstance(data, dict):
        for v in data.values():
            _refuse_floats(v)
    elif isinstance(data, (list, tuple)):
        for v in data:
            _refuse_floats(v)
