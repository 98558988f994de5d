"""A Markdown summary for a pull-request comment: decision, the findings with their trace ids (those
that name a step first, ``reading_order``), then a table of the rules that did not pass (the ones
that passed folded away: a mined contract has dozens). Findings come before the tables (#49): a
comment that opened with a 25-row table put what to fix below it."""

from __future__ import annotations

from ..gate import GateResult, RuleVerdict, found_releases
from .reading_order import reading_order
from .text import HEADLINES

_MAX_RUNS = 5


def render_markdown(result: GateResult) -> str:
    agg = result.aggregate
    counts = dict(agg.run_counts)
    out = [
        f"## Trajectory gate: `{result.decision}`",
        "",
        HEADLINES[result.decision],
        "",
        f"Release `{agg.release}` · contract `{result.contract.name}` · {agg.evaluated} run(s) evaluated "
        f"({counts['pass']} pass, {counts['fail']} fail, {counts['insufficient_data']} insufficient, "
        f"{counts['error']} error)" + (f" · left out: {found_releases(agg)}" if agg.other_releases else ""),
    ]
    problems = reading_order(v for v in result.verdicts if v.status != "pass")
    passed = [v for v in result.verdicts if v.status == "pass"]
    if problems:
        out += ["", "### Findings", ""]
        for v in problems:
            shown = [f for f in v.tally.findings if f.status != "pass"]
            messages = sorted({f.message for f in shown}) or [v.reason]
            if v.rate is not None and messages != [v.reason]:  # the rate's verdict, then its runs
                out.append(f"- **{v.rule.code}** (`{v.rule.id}`) {v.reason}")
            for message in messages:
                out.append(f"- **{v.rule.code}** (`{v.rule.id}`) {message}")
                runs = [f for f in shown if f.message == message]
                run_ids = sorted({f.run_id for f in runs})
                first = set(run_ids[:_MAX_RUNS])
                for f in (f for f in runs if f.run_id in first):
                    spans = sorted({s for w in f.witnesses for s in w.span_ids})
                    span_text = f", spans {', '.join(f'`{s}`' for s in spans)}" if spans else ""
                    out.append(f"  - trace {', '.join(f'`{t}`' for t in f.trace_ids)}{span_text}")
                if len(run_ids) > _MAX_RUNS:
                    out.append(f"  - … and {len(run_ids) - _MAX_RUNS} more run(s)")
        out += ["", "### Rules", "", *_table(problems)]
    if passed:
        out += ["", f"<details><summary>{len(passed)} rule(s) passed</summary>", "", *_table(passed)]
        out += ["", "</details>"]
    return "\n".join(out) + "\n"


def _table(verdicts: list[RuleVerdict]) -> list[str]:
    rows = [
        "| rule | code | status | failing runs | insufficient runs | errors |",
        "|---|---|---|---|---|---|",
    ]
    for v in verdicts:
        c = dict(v.tally.counts)
        rows.append(
            f"| `{v.rule.id}` | `{v.rule.code}` | {v.status} | {c['fail']} | "
            f"{c['insufficient_evidence']} | {c['error']} |"
        )
    return rows
