"""Findings and run verdicts as evaluation records: plain frozen data, ready to go beside the traces.

``gate check --export-findings`` and ``audit --export-findings`` send one record per finding and one
per run's verdict to the backend the traces came from, in the GenAI conventions' evaluation form
(event ``gen_ai.evaluation.result``), linked to the run's trace and the first span that proves it, so
a trace view shows the verdict on the trace. This module only builds the records — pure, no SDK, no
clock (the caller passes the time), the same records for the same evidence; ``cli/_export.py`` sends
them with the official OTLP exporters.

What a record may say is what the reports already say, minus values: rule ids, codes, run, trace and
span ids, counts and the finding's message. A message that quotes an attribute value a contract rule
constrains (``attribute_constraints``, ``allowed_values``: "… has K = V; …") has that value cut out,
because the attribute could hold content a third-party instrumentation left on a span (a tool's
arguments): the record says the value was not exported, and the report files still show it.

A run's verdict follows from its findings exactly as ``evaluate`` combines rules (error, then fail,
then insufficient, else pass); the counts are checked against the aggregate's own, so a record can
never say a run passed that the gate counted otherwise.

Each record names what it judged (#48): the release (``agent.finding.release``: a dashboard filters by it,
not by the gate's own version), the contract (name and digest), the rule and the run. Its id
(``agent.finding.id``) is a digest of the command, release, contract name, run, rule and the
finding's place among that rule's findings on that run: a re-run of the same judgement gives the same
ids, so a backend that keeps one record per id (and the logs reader, which keeps each run's newest
records) updates instead of piling up copies. The contract's digest is not in the id: re-running after
editing the contract (a route approved) updates the findings, and the digest says which version
judged. A failing finding of a rule that bounds a number carries that number as
``gen_ai.evaluation.score.value`` (:data:`SCORED`).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING, Final

from ... import dialects, semconv
from ..aggregate import RunFinding
from ..contracts.outcomes import Witness
from ..gate import GateResult
from ..model import Run
from ..outcome import INSUFFICIENT_DATA, Outcome

if TYPE_CHECKING:  # an audit's names only: the gate, which exports through here, loads no audit
    from ..audit import AuditReport, RunAudit
    from ..audit import Finding as AuditFinding

#: ``gen_ai.evaluation.score.label`` of each outcome (the conventions ask for a low-cardinality label).
LABELS: Final = {
    Outcome.PASS: "pass",
    Outcome.FAIL: "fail",
    Outcome.INSUFFICIENT: "insufficient",
    Outcome.ERROR: "error",
}
RUN_VERDICT_CODE: Final = "RUN_VERDICT"  # agent.finding.code of a run's verdict
AUDIT_RULE_PREFIX: Final = "audit."  # an audit finding's rule id: audit.<code>, e.g. audit.blocked_call
WITHHELD: Final = "(value not exported)"
ID_LENGTH: Final = 32  # hex digits of agent.finding.id
#: The observed numbers each rule type bounds, read from a failing finding's witness (their sum: a
#: provenance budget's overrun may name several kinds) as its ``gen_ai.evaluation.score.value``.
#: Rule types without one (a missing attribute, a disallowed value, an ordering) get no score.
SCORED: Final = {
    "required_spans": ("count",),
    "forbidden_spans": ("count",),
    "cardinality": ("count",),
    "retry_budgets": ("retries",),
    "blocked_calls": ("blocked",),
    "numeric_budgets": ("max", "sum"),
    "approved_routes": ("similarity",),  # "4/7": the closest approved family's similarity
    "provenance_budgets": semconv.ARG_KINDS,
}
_HEX_TRACE: Final = re.compile(r"[0-9a-f]{32}")
_PRECEDENCE: Final = (Outcome.ERROR, Outcome.FAIL, Outcome.INSUFFICIENT)


@dataclass(frozen=True, slots=True)
class RunRef:
    """Where a run lives: the trace and span its verdict is put on (its agent's root span)."""

    trace_id: str
    span_id: str | None


@dataclass(frozen=True, slots=True)
class Judged:
    """What a command judged, the same on each of its records: the release (None: an audit of every
    release) and the contract (None: an audit, which has none)."""

    command: str  # "gate" | "audit": part of the record id
    release: str | None = None
    contract_name: str | None = None
    contract_digest: str | None = None


@dataclass(frozen=True, slots=True)
class Evaluation:
    """One ``gen_ai.evaluation.result`` record: a finding, or a run's verdict."""

    name: str  # gen_ai.evaluation.name: the rule id, or RUN_EVALUATION
    label: str  # pass | fail | insufficient | error
    explanation: str
    code: str
    rule_id: str
    run_id: str
    trace_id: str | None  # 32 hex digits; None: no trace to put it beside
    span_id: str | None  # 16 hex digits: the first witness span (or the run's root for a verdict)
    witness_span_ids: tuple[str, ...]
    judged: Judged
    ordinal: int = 0  # its place among the findings of its rule on its run (part of the record id)
    score: float | None = None  # gen_ai.evaluation.score.value, where the rule bounds a number

    @property
    def record_id(self) -> str:
        """``agent.finding.id``: the same for the same judgement whenever it is made (module doc)."""
        j = self.judged
        key = [j.command, j.release, j.contract_name, self.run_id, self.rule_id, self.ordinal]
        return hashlib.sha256(json.dumps(key).encode()).hexdigest()[:ID_LENGTH]

    def attributes(self) -> dict[str, str | float | tuple[str, ...]]:
        """The record's attributes (docs/findings.md lists them; a dashboard depends on them): the
        release, the contract and the score only when there is one."""
        out: dict[str, str | float | tuple[str, ...]] = {
            semconv.GEN_AI_EVALUATION_NAME: self.name,
            semconv.GEN_AI_EVALUATION_SCORE_LABEL: self.label,
            semconv.GEN_AI_EVALUATION_EXPLANATION: self.explanation,
            semconv.FINDING_CODE: self.code,
            semconv.RULE_ID: self.rule_id,
            semconv.RUN_ID: self.run_id,
            semconv.FINDING_WITNESS_SPAN_IDS: self.witness_span_ids,
            semconv.FINDING_ID: self.record_id,
        }
        optional = (
            (semconv.EVALUATED_RELEASE, self.judged.release),
            (semconv.CONTRACT_NAME, self.judged.contract_name),
            (semconv.CONTRACT_DIGEST, self.judged.contract_digest),
            (semconv.GEN_AI_EVALUATION_SCORE_VALUE, self.score),
        )
        out.update((key, value) for key, value in optional if value is not None)
        return out


def run_ref(run: Run) -> RunRef:
    """The span a run's verdict goes on: its agent's root span (``invoke_agent``), else its first
    root span, else its first span — in the order the spans are sorted, so the same for any read."""
    spans = sorted(run.spans, key=lambda s: (s.start_ns, s.trace_id, s.span_id))
    roots = [s for s in spans if not s.parent_span_id]
    agents = [s for s in roots if dialects.is_agent_span(s.attributes)]
    chosen = (agents or roots or spans or [None])[0]
    if chosen is None:
        return RunRef(run.trace_ids[0], None) if run.trace_ids else RunRef("", None)
    return RunRef(chosen.trace_id, chosen.span_id)


def gate_evaluations(result: GateResult, refs: Mapping[str, RunRef]) -> tuple[Evaluation, ...]:
    """One record per finding (rule id order, then the aggregate's finding order), then one per
    evaluated run (run id order). ``refs`` places runs without findings (read beside the gate)."""
    records: list[Evaluation] = []
    by_run: dict[str, list[tuple[str, RunFinding]]] = {}
    contract = result.contract
    judged = Judged("gate", result.aggregate.release, contract.name, contract.digest)
    for verdict in result.verdicts:
        rule = verdict.rule
        for finding in verdict.tally.findings:
            earlier = by_run.setdefault(finding.run_id, [])
            ordinal = sum(1 for rule_id, _ in earlier if rule_id == rule.id)
            earlier.append((rule.id, finding))
            trace_id, span_id, spans = _placed(finding.witnesses, finding.trace_ids, refs.get(finding.run_id))
            outcome = Outcome(finding.status)
            records.append(
                Evaluation(
                    rule.id,
                    LABELS[outcome],
                    _content_free(finding.message, finding.witnesses),
                    rule.code,
                    rule.id,
                    finding.run_id,
                    trace_id,
                    span_id,
                    spans,
                    judged,
                    ordinal,
                    _score(rule.type, finding.witnesses) if outcome is Outcome.FAIL else None,
                )
            )
    derived: dict[str, int] = {}
    for run_id in result.aggregate.run_ids:
        findings = by_run.get(run_id, [])
        outcome = _run_outcome(Outcome(f.status) for _, f in findings)
        derived[outcome.decision] = derived.get(outcome.decision, 0) + 1
        witnesses = tuple(w for _, f in findings for w in f.witnesses)
        traces = tuple(t for _, f in findings for t in f.trace_ids)
        ref = refs.get(run_id)
        trace_id, span_id, spans = _placed(witnesses, traces, ref)
        if ref is not None:  # a verdict goes on the run's own root span when the run was read here
            trace_id, span_id = ref.trace_id or trace_id, ref.span_id or span_id
        rules = sorted({rule_id for rule_id, f in findings if f.status != Outcome.PASS.value})
        records.append(
            Evaluation(
                semconv.RUN_EVALUATION,
                LABELS[outcome],
                _run_explanation(outcome, rules),
                RUN_VERDICT_CODE,
                semconv.RUN_EVALUATION,
                run_id,
                trace_id,
                span_id,
                spans,
                judged,
            )
        )
    counted = {status: n for status, n in result.aggregate.run_counts if n}
    if derived != counted:  # never export a verdict the gate did not reach
        raise ValueError(
            f"run verdicts from the findings {derived} disagree with the gate's counts {counted}"
        )
    return tuple(records)


def audit_evaluations(report: AuditReport, release: str | None = None) -> tuple[Evaluation, ...]:
    """One record per finding of each run (run id order), then one per run's verdict. Audit-wide
    findings (``no_runs``, ``no_tool_calls``) concern no run and no trace: they are not records.
    ``release``: the one release audited (``audit --release``), else None."""
    records: list[Evaluation] = []
    verdicts: list[Evaluation] = []
    judged = Judged("audit", release)
    for audit in report.runs:
        ref = _audit_ref(audit)
        seen: dict[str, int] = {}
        for finding in audit.findings:
            ordinal = seen.get(finding.code, 0)
            seen[finding.code] = ordinal + 1
            records.append(_audit_record(finding, ref, judged, ordinal))
        verdict = audit.verdict
        spans = tuple(sorted({f.span_id for f in audit.findings if f.span_id}))
        failing = sorted({f.code for f in audit.findings if f.verdict is not Outcome.PASS})
        verdicts.append(
            Evaluation(
                semconv.RUN_EVALUATION,
                LABELS[verdict],
                _run_explanation(verdict, [AUDIT_RULE_PREFIX + code for code in failing]),
                RUN_VERDICT_CODE,
                semconv.RUN_EVALUATION,
                audit.run_id,
                ref.trace_id if ref else None,
                (ref.span_id if ref else None) or (spans[0] if spans else None),
                spans,
                judged,
            )
        )
    return (*records, *verdicts)


def _audit_ref(audit: RunAudit) -> RunRef | None:
    traces = sorted({c.trace_id for c in audit.calls} | {f.trace_id for f in audit.findings if f.trace_id})
    if traces:
        return RunRef(traces[0], None)
    return RunRef(audit.run_id, None) if _HEX_TRACE.fullmatch(audit.run_id) else None


def _audit_record(finding: AuditFinding, ref: RunRef | None, judged: Judged, ordinal: int) -> Evaluation:
    rule_id = AUDIT_RULE_PREFIX + finding.code
    return Evaluation(
        rule_id,
        LABELS[finding.verdict],
        finding.message,  # names tools, arguments and kinds — never a value (offline/audit.py)
        finding.code,
        rule_id,
        finding.run_id,
        finding.trace_id or (ref.trace_id if ref else None),
        finding.span_id,
        (finding.span_id,) if finding.span_id else (),
        judged,
        ordinal,
    )


def _score(rule_type: str, witnesses: Iterable[Witness]) -> float | None:
    """The number a failing finding's rule bounded (:data:`SCORED`), from the first witness that
    observed it; None when the rule type bounds none or the witness does not say."""
    keys = SCORED.get(rule_type, ())
    for witness in witnesses:
        found = [value for key, value in witness.observed if key in keys and not isinstance(value, bool)]
        if found:
            try:
                return float(sum(Fraction(str(value)) for value in found))
            except (ValueError, ZeroDivisionError):
                return None
    return None


def _placed(
    witnesses: Iterable[Witness], trace_ids: Iterable[str], ref: RunRef | None
) -> tuple[str | None, str | None, tuple[str, ...]]:
    """(trace, first witness span, every witness span): the first witness that names a span places
    the record; without one, the first witness's trace, the run's first trace, or where it was read."""
    witnesses = tuple(witnesses)
    spans = tuple(dict.fromkeys(s for w in witnesses for s in w.span_ids))
    for witness in witnesses:
        if witness.span_ids:
            return witness.trace_id, witness.span_ids[0], spans
    traces = [w.trace_id for w in witnesses if w.trace_id] + list(trace_ids)
    if traces:
        return traces[0], None, spans
    return (ref.trace_id or None, None, spans) if ref else (None, None, spans)


def _run_outcome(statuses: Iterable[Outcome]) -> Outcome:
    seen = set(statuses)
    return next((o for o in _PRECEDENCE if o in seen), Outcome.PASS)


def _run_explanation(outcome: Outcome, rules: list[str]) -> str:
    if outcome is Outcome.PASS:
        return "every rule passed on this run"
    named = ", ".join(rules) if rules else "none named"
    status = INSUFFICIENT_DATA if outcome is Outcome.INSUFFICIENT else outcome.value
    return f"run verdict {status}: rule(s) without a pass: {named}"


def _content_free(message: str, witnesses: Iterable[Witness]) -> str:
    """``message`` with every quoted attribute value cut out, but whole numbers and booleans (a float
    or a decimal is observed as text, so it goes too: over-withholding costs a number, never content)."""
    for witness in witnesses:
        for key, value in witness.observed:
            if value is None or isinstance(value, bool | int):  # counts and flags are not content
                continue
            message = re.sub(rf"(?<=\b{re.escape(key)} = ).*?(?=; |$)", WITHHELD, message, flags=re.DOTALL)
    return message
