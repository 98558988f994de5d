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
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Final

from ... import semconv
from ..aggregate import RunFinding
from ..audit import AuditReport, RunAudit
from ..audit import Finding as AuditFinding
from ..contracts.outcomes import Witness
from ..gate import GateResult
from ..model import Run
from ..outcome import INSUFFICIENT_DATA, Outcome

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
_HEX_TRACE: Final = re.compile(r"[0-9a-f]{32}")
_PRECEDENCE: Final = (Outcome.ERROR, Outcome.FAIL, Outcome.INSUFFICIENT)


@dataclass(frozen=True, slots=True)
class RunRef:
    """Where a run lives: the trace and span its verdict is put on (its agent's root span)."""

    trace_id: str
    span_id: str | None


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

    def attributes(self) -> dict[str, str | tuple[str, ...]]:
        """The record's attributes, exactly these keys (a dashboard depends on them)."""
        return {
            semconv.GEN_AI_EVALUATION_NAME: self.name,
            semconv.GEN_AI_EVALUATION_SCORE_LABEL: self.label,
            semconv.GEN_AI_EVALUATION_EXPLANATION: self.explanation,
            semconv.FINDING_CODE: self.code,
            semconv.RULE_ID: self.rule_id,
            semconv.RUN_ID: self.run_id,
            semconv.FINDING_WITNESS_SPAN_IDS: self.witness_span_ids,
        }


def run_ref(run: Run) -> RunRef:
    """The span a run's verdict goes on: its agent's root span (``invoke_agent``), else its first
    root span, else its first span — in the order the spans are sorted, so the same for any read."""
    spans = sorted(run.spans, key=lambda s: (s.start_ns, s.trace_id, s.span_id))
    roots = [s for s in spans if not s.parent_span_id]
    agents = [s for s in roots if semconv.is_agent_span(s.attributes)]
    chosen = (agents or roots or spans or [None])[0]
    if chosen is None:
        return RunRef(run.trace_ids[0], None) if run.trace_ids else RunRef("", None)
    return RunRef(chosen.trace_id, chosen.span_id)


def gate_evaluations(result: GateResult, refs: Mapping[str, RunRef]) -> tuple[Evaluation, ...]:
    """One record per finding (rule id order, then the aggregate's finding order), then one per
    evaluated run (run id order). ``refs`` places runs without findings (read beside the gate)."""
    records: list[Evaluation] = []
    by_run: dict[str, list[tuple[str, RunFinding]]] = {}
    for verdict in result.verdicts:
        rule = verdict.rule
        for finding in verdict.tally.findings:
            by_run.setdefault(finding.run_id, []).append((rule.id, finding))
            trace_id, span_id, spans = _placed(finding.witnesses, finding.trace_ids, refs.get(finding.run_id))
            records.append(
                Evaluation(
                    rule.id,
                    LABELS[Outcome(finding.status)],
                    _content_free(finding.message, finding.witnesses),
                    rule.code,
                    rule.id,
                    finding.run_id,
                    trace_id,
                    span_id,
                    spans,
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
            )
        )
    counted = {status: n for status, n in result.aggregate.run_counts if n}
    if derived != counted:  # never export a verdict the gate did not reach
        raise ValueError(
            f"run verdicts from the findings {derived} disagree with the gate's counts {counted}"
        )
    return tuple(records)


def audit_evaluations(report: AuditReport) -> tuple[Evaluation, ...]:
    """One record per finding of each run (run id order), then one per run's verdict. Audit-wide
    findings (``no_runs``, ``no_tool_calls``) concern no run and no trace: they are not records."""
    records: list[Evaluation] = []
    verdicts: list[Evaluation] = []
    for audit in report.runs:
        ref = _audit_ref(audit)
        for finding in audit.findings:
            records.append(_audit_record(finding, ref))
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
            )
        )
    return (*records, *verdicts)


def _audit_ref(audit: RunAudit) -> RunRef | None:
    traces = sorted({c.trace_id for c in audit.calls} | {f.trace_id for f in audit.findings if f.trace_id})
    if traces:
        return RunRef(traces[0], None)
    return RunRef(audit.run_id, None) if _HEX_TRACE.fullmatch(audit.run_id) else None


def _audit_record(finding: AuditFinding, ref: RunRef | None) -> Evaluation:
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
    )


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
