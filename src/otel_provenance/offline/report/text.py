"""The terminal report: the decision, then one line per finding (``CODE (rule id) message``) with
the trace and span ids that prove it indented below — the findings that name a step first
(``reading_order``).

Each line is printed as one line (:func:`printable`, #50): a value from the traces — the release, a
run id, a step name or attribute value a finding quotes — that holds a line break, an escape
sequence or an invisible format character has it shown escaped (``\n``, ``\x1b``, ``\u202e``), so
it cannot start a line of its own in a CI log (a fake ``PASS``, a ``::`` workflow command) or
rewrite the terminal."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Final

from ..aggregate import RunFinding
from ..gate import (
    GateResult,
    RuleVerdict,
    found_releases,
)
from ..outcome import Outcome
from .reading_order import reading_order

_HEADLINE: Final = {
    Outcome.PASS: "PASS: This release met every trajectory threshold.",
    Outcome.FAIL: "FAIL: This release exceeded one or more trajectory thresholds.",
    Outcome.INSUFFICIENT: "INSUFFICIENT DATA: The traces hold too little evidence to decide this release.",
    Outcome.ERROR: "ERROR: This release could not be evaluated; an error is never a pass.",
}
HEADLINES: Final = {outcome.decision: line for outcome, line in _HEADLINE.items()}  # by decision
MAX_PROOFS: Final = 5  # proof lines per finding; the JSON report has all of them


def render_text(result: GateResult) -> str:
    lines = [HEADLINES[result.decision]]
    enough_runs = 0 < result.aggregate.evaluated >= result.contract.min_runs
    sections = (
        ("Findings:", "fail", "fail"),
        ("Insufficient evidence:", "insufficient_data", "insufficient_evidence"),
        ("Errors:", "error", "error"),
    )
    for title, verdict_status, finding_status in sections:
        section = [
            line
            for verdict in reading_order(result.verdicts)
            if verdict.status == verdict_status
            for line in _finding_lines(verdict, finding_status, enough_runs)
        ]
        if section:
            lines += [title, *section]
    agg = result.aggregate
    lines += [f"Incomplete input: {item}" for item in agg.incomplete_inputs]
    counts = dict(agg.run_counts)
    lines.append(
        f"Runs of release {agg.release}: {agg.evaluated} evaluated — {counts['pass']} pass, "
        f"{counts['fail']} fail, {counts['insufficient_data']} insufficient data, {counts['error']} error"
        + (
            f" ({agg.other_release_runs} run(s) of other releases left out: {found_releases(agg)})."
            if agg.other_releases
            else " (no runs of other releases)."
        )
    )
    if result.decision != Outcome.PASS.decision:
        lines.append(f"Decision: {result.decision} — {result.reason}.")
    return "".join(printable(line) + "\n" for line in lines)


def printable(line: str) -> str:
    """``line`` with every character that is not printable — a line break, an escape, a control or
    invisible format character — written as its escape, so that it stays one line as it reads."""
    return line if line.isprintable() else "".join(ch if ch.isprintable() else ascii(ch)[1:-1] for ch in line)


def listed(verdict: RuleVerdict, status: str) -> frozenset[str]:
    """The finding statuses a report lists under ``verdict`` in its ``status`` section: that one,
    and for an undecided failing-run rate also its failing runs — the evidence so far."""
    if verdict.rate is not None and verdict.status == Outcome.INSUFFICIENT.decision:
        return frozenset({status, Outcome.FAIL.value})
    return frozenset({status})


def _finding_lines(verdict: RuleVerdict, status: str, enough_runs: bool) -> Iterator[str]:
    groups: dict[str, list[RunFinding]] = {}
    shown = listed(verdict, status)
    for finding in verdict.tally.findings:
        if finding.status in shown:
            groups.setdefault(finding.message, []).append(finding)
    if verdict.rate is not None or (not groups and enough_runs):
        # a release-level verdict: a failing-run rate (with the runs that could decide it) always,
        # else e.g. a step no run contains
        yield f"{verdict.rule.code} ({verdict.rule.id}) {verdict.reason}."
    # With too few runs, every rule is explained by the decision line instead.
    for message, findings in sorted(groups.items(), key=lambda kv: (-_runs(kv[1]), kv[0])):
        yield f"{verdict.rule.code} ({verdict.rule.id}) {message}"
        shown = sorted({f.run_id for f in findings})[:MAX_PROOFS]  # proofs of MAX_PROOFS runs
        for finding in findings:
            if finding.run_id in shown:
                yield from proof_lines(finding)
        more = _runs(findings) - len(shown)
        if more:
            yield f"  … and {more} more run(s) (see the JSON report)"


def _runs(findings: list[RunFinding]) -> int:
    """How many runs the findings are about (a run can have several findings with one message)."""
    return len({f.run_id for f in findings})


def proof_lines(finding: RunFinding) -> Iterator[str]:
    if not finding.witnesses:
        yield f"  run {finding.run_id}: traces {', '.join(finding.trace_ids)}"
    for w in finding.witnesses:
        spans = f" spans {', '.join(w.span_ids)}" if w.span_ids else ""
        yield f"  trace {w.trace_id}{spans} (run {finding.run_id})"
