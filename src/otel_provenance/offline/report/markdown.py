"""A Markdown summary for a pull-request comment: decision, the findings with their trace ids (those
that name a step first, ``reading_order``), then a table of the rules that did not pass (the ones
that passed folded away: a mined contract has dozens). Findings come before the tables (#49): a
comment that opened with a 25-row table put what to fix below it.

Every value read from the traces or the contract — the release (``service.version``), other
releases, rule ids and codes, finding messages (step names, attribute values), run, trace and span
ids — is written so that it stays text (#50): in a code span whose fence no backtick inside can close,
or as text whose Markdown and HTML punctuation is escaped, on one line, and with an ``@`` that
mentions nobody. A crafted ``service.version`` cannot add a heading, an image, a link, a mention or an
HTML comment that hides the rest of the comment.
"""

from __future__ import annotations

import re

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
        f"Release {code(agg.release)} · contract {code(result.contract.name)} · {agg.evaluated} run(s) "
        f"evaluated ({counts['pass']} pass, {counts['fail']} fail, {counts['insufficient_data']} "
        f"insufficient, {counts['error']} error)"
        + (f" · left out: {text(found_releases(agg))}" if agg.other_releases else ""),
    ]
    problems = reading_order(v for v in result.verdicts if v.status != "pass")
    passed = [v for v in result.verdicts if v.status == "pass"]
    if problems:
        out += ["", "### Findings", ""]
        for v in problems:
            shown = [f for f in v.tally.findings if f.status != "pass"]
            messages = sorted({f.message for f in shown}) or [v.reason]
            rule = f"- **{text(v.rule.code)}** ({code(v.rule.id)})"
            if v.rate is not None and messages != [v.reason]:  # the rate's verdict, then its runs
                out.append(f"{rule} {text(v.reason)}")
            for message in messages:
                out.append(f"{rule} {text(message)}")
                runs = [f for f in shown if f.message == message]
                run_ids = sorted({f.run_id for f in runs})
                first = set(run_ids[:_MAX_RUNS])
                for f in (f for f in runs if f.run_id in first):
                    spans = sorted({s for w in f.witnesses for s in w.span_ids})
                    span_text = f", spans {', '.join(code(s) for s in spans)}" if spans else ""
                    out.append(f"  - trace {', '.join(code(t) for t in f.trace_ids)}{span_text}")
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
            f"| {code(v.rule.id, cell=True)} | {code(v.rule.code, cell=True)} | {v.status} | {c['fail']} | "
            f"{c['insufficient_evidence']} | {c['error']} |"
        )
    return rows


_LINE_BREAKS = re.compile(r"[\x00-\x1f\x7f\u0085\u2028\u2029]+")  # a new line starts a new block
_BACKTICKS = re.compile(r"`+")
_SYNTAX = re.compile(r"([\\`*_\[\]<>&|~])")  # what can open inline Markdown or HTML mid-line
_AUTOLINK = re.compile(r"(?i)(?<=\bwww)\.|(?<=[a-z]):(?=//)")  # GFM links "www." and "scheme://" bare
_MENTION = re.compile(r"@(?=\w)")


def code(value: object, *, cell: bool = False) -> str:
    """``value`` as a code span, on one line: inside one, Markdown, HTML, links and mentions are text.
    The fence is longer than any run of backticks inside (CommonMark), and in a table ``cell`` a pipe
    is escaped (GFM splits cells at every unescaped ``|``, inside code spans too)."""
    content = _LINE_BREAKS.sub(" ", str(value))
    if cell:
        content = content.replace("|", "\\|")
    longest = max((len(run) for run in _BACKTICKS.findall(content)), default=0)
    fence = "`" * (longest + 1)
    if not content.strip(" "):  # only spaces are kept as they are (and an empty span is no span)
        content = content or " "
    elif content[0] in "` " or content[-1] in "` ":  # CommonMark strips one space a side
        content = f" {content} "
    return f"{fence}{content}{fence}"


def text(value: object) -> str:
    """``value`` as plain text, on one line (so no block — a heading, a quote, a list — can start):
    what opens inline Markdown or HTML backslash-escaped (emphasis, code, links and images, HTML and
    its comments, autolinks in angle brackets, table pipes, strikethrough), the bare links GFM makes
    of ``www.`` and ``scheme://`` broken, and a zero-width space after an ``@`` that would mention
    someone (an escaped ``@`` still renders as one)."""
    escaped = _SYNTAX.sub(r"\\\1", _LINE_BREAKS.sub(" ", str(value)))
    escaped = _AUTOLINK.sub(lambda m: "\\" + m.group(0), escaped)
    return _MENTION.sub("@\u200b", escaped)
