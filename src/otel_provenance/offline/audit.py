"""Offline provenance audit: were the arguments of each tool call sourced, within budget?

Pure functions over runs. Per tool span (``gen_ai.operation.name = execute_tool``) the audit reads
the ``agent.arg.<name>.*`` attributes and reports every argument by kind with its source, and
these findings:

===================== ======= ==================================================================
code                  effect  meaning
===================== ======= ==================================================================
blocked_call          fail    ``agent.tool.status = blocked``: the online budget stopped the call
dangling_source       fail    a ``source_span_id`` not in the run, malformed, or not finished
                              before the call started
assumed_over_budget   fail    more assumed arguments than the budget allows
invented_over_budget  fail    more invented arguments than the budget allows
untrusted_over_budget fail    more untrusted arguments than the budget allows
no_provenance         insuff. a tool span with no provenance attributes at all (uninstrumented)
unknown_kind          insuff. an argument whose ``kind`` is missing or not observed/assumed/invented/
                              untrusted
unknown_status        insuff. an instrumented tool span without ``agent.tool.status``: it may have
                              been blocked (the gate's ``blocked_calls`` counts it as insufficient too)
no_tool_calls         insuff. (whole audit only) not one tool call in any run
no_runs               insuff. (whole audit only) the input held no run
===================== ======= ==================================================================

A tool span counts as instrumented when it carries any ``agent.arg.<name>.<field>`` attribute, or
``agent.tool.status`` / ``agent.budget.*`` (a zero-argument tool has no ``agent.arg.*``).
Invented arguments are listed for review by name — values never reach a trace.

Budgets are per call (like ``op.Budget``): ``Budgets(default=ToolBudget(...), tools={...})``;
``None`` means unlimited. Counting and deciding is the one law of ``otel_provenance.budget_law``
(shared with ``op.Budget`` and the ``provenance_budgets`` rule): the names a tool span records as
allowed (``agent.budget.allowed``) plus ``ToolBudget.allow`` are exempt, for the kinds in
``ALLOW_REACH`` (assumed only). A trace from before the ``untrusted`` kind existed simply has none.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Final

from .. import semconv
from ..budget_law import Limits, allowed_on_span, count_arguments, over_budget
from .arguments import lost_kinds
from .graph import CausalGraph
from .model import Run, Span
from .outcome import Outcome

UNKNOWN_KIND: Final = "unknown"

BLOCKED_CALL: Final = "blocked_call"
DANGLING_SOURCE: Final = "dangling_source"
ASSUMED_OVER_BUDGET: Final = "assumed_over_budget"
INVENTED_OVER_BUDGET: Final = "invented_over_budget"
UNTRUSTED_OVER_BUDGET: Final = "untrusted_over_budget"
OVER_BUDGET: Final = {
    semconv.KIND_ASSUMED: ASSUMED_OVER_BUDGET,
    semconv.KIND_INVENTED: INVENTED_OVER_BUDGET,
    semconv.KIND_UNTRUSTED: UNTRUSTED_OVER_BUDGET,
}
NO_PROVENANCE: Final = "no_provenance"
UNKNOWN_KIND_FINDING: Final = "unknown_kind"
UNKNOWN_STATUS: Final = "unknown_status"
NO_TOOL_CALLS: Final = "no_tool_calls"
NO_RUNS: Final = "no_runs"
LOST_EVIDENCE: Final = "lost_evidence"
RECORDED_VIOLATION: Final = "recorded_violation"

_EVIDENCE_KEYS: Final = (  # agent.tool.status alone is not provenance: a span can carry it unclassified
    semconv.BUDGET_ASSUMED,
    semconv.BUDGET_MAX_ASSUMED,
    semconv.BUDGET_INVENTED,
    semconv.BUDGET_MAX_INVENTED,
    semconv.BUDGET_UNTRUSTED,
    semconv.BUDGET_MAX_UNTRUSTED,
)


@dataclass(frozen=True, slots=True)
class ToolBudget:
    """Per-call limits; ``allow`` names arguments that may be assumed without counting (added to the
    names the span itself records as allowed)."""

    max_assumed: int | None = None
    max_invented: int | None = None
    allow: frozenset[str] = frozenset()
    max_untrusted: int | None = None


@dataclass(frozen=True, slots=True)
class Budgets:
    default: ToolBudget = ToolBudget()
    tools: Mapping[str, ToolBudget] = field(default_factory=lambda: MappingProxyType({}))

    def for_tool(self, tool: str) -> ToolBudget:
        return self.tools.get(tool, self.default)

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        """Pickled with ``tools`` as a plain dict (a ``mappingproxy`` does not pickle): the audit
        fold goes to other processes (``engines.pool``)."""
        return _budgets, (self.default, dict(self.tools))


def _budgets(default: ToolBudget, tools: dict[str, ToolBudget]) -> Budgets:
    return Budgets(default, MappingProxyType(tools))


@dataclass(frozen=True, slots=True)
class ArgEvidence:
    name: str
    kind: str  # observed | assumed | invented | untrusted | unknown
    source_tool: str | None = None
    source_field: str | None = None
    source_span_id: str | None = None
    projection: str | None = None


@dataclass(frozen=True, slots=True)
class Finding:
    code: str
    verdict: Outcome  # FAIL or INSUFFICIENT
    run_id: str
    trace_id: str | None
    span_id: str | None
    tool: str | None
    args: tuple[str, ...]
    message: str  # names tools, arguments and kinds — never a value


@dataclass(frozen=True, slots=True)
class ToolCallAudit:
    span_id: str
    trace_id: str
    tool: str
    status: str | None  # agent.tool.status, None when absent
    instrumented: bool
    args: tuple[ArgEvidence, ...]

    def by_kind(self, kind: str) -> tuple[ArgEvidence, ...]:
        return tuple(a for a in self.args if a.kind == kind)


@dataclass(frozen=True, slots=True)
class RunAudit:
    run_id: str
    release: str | None
    calls: tuple[ToolCallAudit, ...]
    findings: tuple[Finding, ...]

    @property
    def verdict(self) -> Outcome:
        return _combine(f.verdict for f in self.findings)


@dataclass(frozen=True, slots=True)
class AuditReport:
    runs: tuple[RunAudit, ...]
    findings: tuple[Finding, ...]  # audit-wide ones (no_runs, no_tool_calls); per-run ones are in runs

    @property
    def verdict(self) -> Outcome:
        return _combine([f.verdict for f in self.findings] + [r.verdict for r in self.runs])


def _combine(verdicts: Iterable[Outcome]) -> Outcome:
    seen = set(verdicts)
    if Outcome.FAIL in seen:
        return Outcome.FAIL
    if Outcome.INSUFFICIENT in seen:
        return Outcome.INSUFFICIENT
    return Outcome.PASS


def _str_attr(span: Span, key: str) -> str | None:
    value = span.attributes.get(key)
    return value if isinstance(value, str) else None


_FIELD_INDEX: Final = {suffix: i for i, suffix in enumerate(semconv.ARG_SUFFIXES)}
_KIND, _TOOL, _FIELD, _SPAN, _PROJECTION = (
    _FIELD_INDEX[semconv.ARG_KIND_SUFFIX],
    _FIELD_INDEX[semconv.ARG_SOURCE_TOOL_SUFFIX],
    _FIELD_INDEX[semconv.ARG_SOURCE_FIELD_SUFFIX],
    _FIELD_INDEX[semconv.ARG_SOURCE_SPAN_ID_SUFFIX],
    _FIELD_INDEX[semconv.ARG_PROJECTION_SUFFIX],
)


def arguments(span: Span) -> tuple[ArgEvidence, ...]:
    """The span's ``agent.arg.*`` evidence, one entry per argument name, sorted by name.

    A field whose value is not a string counts as absent (a non-string kind is an unknown kind)."""
    found: dict[str, list[str | None]] = {}
    for key, value in span.attributes.items_unordered():
        if key.startswith(semconv.ARG_PREFIX):
            parsed = semconv.split_arg_attr(key)
            if parsed is not None:
                fields = found.get(parsed[0])
                if fields is None:
                    fields = found[parsed[0]] = [None] * len(_FIELD_INDEX)
                fields[_FIELD_INDEX[parsed[1]]] = value if isinstance(value, str) else None
    out = []
    for name in sorted(found):
        fields = found[name]
        kind, source_span = fields[_KIND], fields[_SPAN]
        out.append(
            ArgEvidence(
                name=name,
                kind=kind if kind in semconv.ARG_KINDS else UNKNOWN_KIND,
                source_tool=fields[_TOOL],
                source_field=fields[_FIELD],
                source_span_id=source_span.lower() if source_span is not None else None,
                projection=fields[_PROJECTION],
            )
        )
    return tuple(out)


def _instrumented(span: Span, args: tuple[ArgEvidence, ...]) -> bool:
    return bool(args) or any(k in span.attributes for k in _EVIDENCE_KEYS)


def audit_run(run: Run, budgets: Budgets | None = None) -> RunAudit:
    """Audit every tool call of ``run`` against ``budgets`` (unlimited when None)."""
    budgets = budgets or Budgets()
    graph = CausalGraph.of(run)
    dangling_by_span: dict[str, list] = {}
    for d in graph.dangling_sources:
        dangling_by_span.setdefault(d.consumer_span_id, []).append(d)
    calls: list[ToolCallAudit] = []
    findings: list[Finding] = []

    def finding(code: str, verdict: Outcome, call: ToolCallAudit, args: Iterable[str], message: str) -> None:
        findings.append(
            Finding(code, verdict, run.run_id, call.trace_id, call.span_id, call.tool, tuple(args), message)
        )

    for span in run.spans:
        if not span.is_tool:
            continue
        args = arguments(span)
        call = ToolCallAudit(
            span_id=span.span_id,
            trace_id=span.trace_id,
            tool=span.tool_name or span.name,
            status=_str_attr(span, semconv.TOOL_STATUS),
            instrumented=_instrumented(span, args),
            args=args,
        )
        calls.append(call)
        if not call.instrumented:
            finding(
                NO_PROVENANCE,
                Outcome.INSUFFICIENT,
                call,
                (),
                f"{call.tool} has no provenance attributes (is the ProvenanceSpanProcessor installed?)",
            )
            continue
        if call.status is None:  # the status was lost on the way: a blocked call must not read as a pass
            finding(
                UNKNOWN_STATUS,
                Outcome.INSUFFICIENT,
                call,
                (),
                f"{call.tool} carries no {semconv.TOOL_STATUS}: whether it ran or was blocked cannot be told",
            )
        elif call.status == semconv.TOOL_STATUS_BLOCKED:
            finding(
                BLOCKED_CALL,
                Outcome.FAIL,
                call,
                tuple(a.name for a in call.args),
                f"{call.tool} was blocked before it ran "
                f"({', '.join(f'{a.name}={a.kind}' for a in call.args) or 'no arguments'})",
            )
        for d in dangling_by_span.get(span.span_id, ()):
            why = {
                "missing": "is not in the run",
                "malformed": "is not a span id",
                "not_before": "had not finished when the call started",
            }[d.reason]
            finding(
                DANGLING_SOURCE,
                Outcome.FAIL,
                call,
                (d.arg,),
                f"{call.tool}: source of {d.arg} ({d.source_span_id or '?'}) {why}",
            )
        names: dict[str, list[str]] = {}
        for a in call.args:
            names.setdefault(a.kind, []).append(a.name)
        unknown = names.get(UNKNOWN_KIND)
        if unknown:
            finding(
                UNKNOWN_KIND_FINDING,
                Outcome.INSUFFICIENT,
                call,
                unknown,
                f"{call.tool}: no valid kind for {', '.join(unknown)}",
            )
        violations = span.attributes.get(semconv.VIOLATIONS)
        if isinstance(violations, tuple) and violations and call.status != semconv.TOOL_STATUS_BLOCKED:
            finding(  # e.g. advisory mode: the call ran, but the online check found it over budget
                RECORDED_VIOLATION,
                Outcome.FAIL,
                call,
                (),
                f"{call.tool} ran with recorded violations: {', '.join(map(str, violations))}",
            )
        lost = lost_kinds(span, (a.kind for a in call.args))
        if lost is not None:
            finding(
                LOST_EVIDENCE,
                Outcome.INSUFFICIENT,
                call,
                (),
                f"{call.tool}: the span counts "
                f"{' and '.join(f'{n} {kind}' for kind, n in lost.items() if n)} argument(s) but "
                "names fewer; their agent.arg.* attributes were lost (span attribute limit?)",
            )
        budget = budgets.for_tool(call.tool)
        recorded = allowed_on_span(span.attributes)
        count = count_arguments(
            ((a.name, a.kind) for a in call.args), budget.allow | recorded, vetted=recorded
        )
        limits = Limits(budget.max_assumed, budget.max_invented, budget.max_untrusted)
        for kind in over_budget(count, limits):
            counted = count.counted(kind)
            code, limit = OVER_BUDGET[kind], limits.limit(kind)
            allowed = f"; allowed: {', '.join(count.allowed)}" if count.allowed else ""
            finding(
                code,
                Outcome.FAIL,
                call,
                counted,
                f"{call.tool}: {len(counted)} {kind} argument(s) ({', '.join(counted)}), "
                f"budget {limit}{allowed}",
            )
    return RunAudit(run.run_id, run.release, tuple(calls), tuple(findings))


def audit_runs(runs: Iterable[Run], budgets: Budgets | None = None) -> AuditReport:
    """Audit each run; the report lists runs by run id and adds audit-wide findings."""
    audits = sorted((audit_run(r, budgets) for r in runs), key=lambda a: a.run_id)
    return aggregate(audits)


def aggregate(audits: Iterable[RunAudit]) -> AuditReport:
    """Combine per-run audits (sorted by run id here) into one report."""
    ordered = tuple(sorted(audits, key=lambda a: a.run_id))
    extra: list[Finding] = []
    if not ordered:
        extra.append(
            Finding(NO_RUNS, Outcome.INSUFFICIENT, "", None, None, None, (), "the input holds no run")
        )
    elif not any(a.calls for a in ordered):
        extra.append(
            Finding(
                NO_TOOL_CALLS,
                Outcome.INSUFFICIENT,
                "",
                None,
                None,
                None,
                (),
                "no run has a tool call (gen_ai.operation.name=execute_tool)",
            )
        )
    return AuditReport(ordered, tuple(extra))
