"""The Markdown report is posted as a pull-request comment and a job summary: what the traces say must
stay text there (#50, red team round 4). A crafted ``service.version`` (the release), another run's
release label and an attribute value quoted by a finding carry a heading that says ``pass``, a
tracking image, a link, an @mention, a bare URL and an unclosed ``<!--`` that would hide the rest of the
comment. Through ``gate check --markdown`` on traces written by the OTel SDK; the Markdown is read
back with a CommonMark parser (markdown-it-py, with GFM's tables and strikethrough). The text reports
(``gate check``, ``audit``: what a CI log shows) print each such value on its own line's terms: a line
break or an escape sequence in it cannot start a line (a fake ``PASS``, a ``::error::`` workflow
command) or rewrite the terminal."""

from __future__ import annotations

import io
import re
from pathlib import Path

from markdown_it import MarkdownIt

from contract_runs import AT, CONTRACT, export_runs, triage_run
from otel_provenance import semconv
from otel_provenance.cli import run as cli_run

HOSTILE = (
    "2.0`\n\n## `pass`: every rule passed\n![seen](https://track.example/p.png) [approve](https://evil.example)"
    " @octocat www.evil.example https://evil.example/x *bold* | cell | ~~gone~~ <b>html</b> <!-- the rest"
)
OTHER = "9.9 ![x](https://track.example/o.png) @someone <!--"
VALUE = "yes](https://evil.example) <img src=x onerror=alert(1)> @admins\r\n# heading"


def _markdown(tmp_path: Path) -> str:
    runs = [
        triage_run("r0", HOSTILE, writes=2, update_attrs={semconv.IDEMPOTENCY_PRESENT: VALUE}),
        triage_run("r1", HOSTILE, skip_check=True),
        triage_run("r2", HOSTILE),
        triage_run("o1", OTHER),
    ]
    traces = tmp_path / "t.jsonl"
    export_runs(runs, str(traces))
    contract = tmp_path / "c.yaml"
    contract.write_text(CONTRACT)
    out = tmp_path / "gate.md"
    code = cli_run(
        ["gate", "check", "--contract", str(contract), "--release", HOSTILE, "--completed-at", AT,
         "--markdown", str(out), str(traces)],
        io.StringIO(), io.StringIO(),
    )  # fmt: skip
    assert code == 2
    return out.read_text()


def _tokens(markdown: str):
    parser = MarkdownIt("commonmark").enable(["table", "strikethrough"])
    for token in parser.parse(markdown):
        yield token
        yield from token.children or ()


def _outside_code(markdown: str) -> str:
    """The Markdown with its code spans taken out (a fence of n backticks closes at n backticks)."""
    return re.sub(r"(`+)(?:(?!\1).)*?\1", "", markdown)


def test_a_crafted_release_and_quoted_values_stay_text_in_the_pull_request_comment(tmp_path: Path) -> None:
    markdown = _markdown(tmp_path)
    tokens = list(_tokens(markdown))
    kinds = [t.type for t in tokens]
    headings = [tokens[i + 1].content for i, t in enumerate(tokens) if t.type == "heading_open"]
    assert headings == ["Trajectory gate: `fail`", "Findings", "Rules"]  # no heading from the traces
    assert "image" not in kinds and "link_open" not in kinds and "s_open" not in kinds
    html = [t.content for t in tokens if t.type in ("html_inline", "html_block")]
    assert all(h.startswith(("<details>", "</details>")) for h in html), html  # only the fold's own
    assert "em_open" not in kinds and "strong_open" in kinds  # the finding codes' bold, nothing else
    code_spans = [t.content for t in tokens if t.type == "code_inline"]
    assert re.sub(r"\n+", " ", HOSTILE) in code_spans  # the release, whole, as text (on one line)
    # the rest of the comment is still there after every crafted value: the last finding's proof, the
    # rules table after the findings (#49) and the passed rules' fold closing the comment
    lines = markdown.rstrip().splitlines()
    last_proof = max(i for i, line in enumerate(lines) if line.startswith("  - trace "))
    assert lines[last_proof + 1 : last_proof + 3] == ["", "### Rules"] and lines[-1] == "</details>"
    bare = _outside_code(markdown)
    assert not re.search(r"@\w", bare)  # no @mention outside code: GitHub would notify
    assert not re.search(r"(?<!\\):(?=//)", bare) and not re.search(r"www(?!\\)\.", bare)  # no bare link
    assert "\r" not in markdown


def test_the_table_keeps_its_columns_whatever_a_rule_id_holds() -> None:
    """A pipe inside a table cell's code span is escaped (GFM splits cells at every unescaped pipe)."""
    from otel_provenance.offline.report.markdown import code, text

    parser = MarkdownIt("commonmark").enable(["table"])
    row = f"| {code('a|b', cell=True)} | {code('`x`', cell=True)} |"
    html = parser.render(f"| rule | code |\n|---|---|\n{row}\n")
    assert html.count("<td>") == 2 and "<code>a|b</code>" in html and "<code>`x`</code>" in html
    assert parser.render(text("x <!-- y")).strip() == "<p>x &lt;!-- y</p>"
    assert parser.render(f"see {code('')} here").strip() == "<p>see <code> </code> here</p>"


def test_a_crafted_release_cannot_start_a_line_of_its_own_in_the_text_reports(tmp_path: Path) -> None:
    crafted = "2.0\n::error file=app.py::all rules passed\nPASS\x1b[2J\x1b[32m\u202egnissap"
    traces = tmp_path / "t.jsonl"
    export_runs([triage_run("r0", crafted, skip_check=True), triage_run("r1", crafted)], str(traces))
    contract = tmp_path / "c.yaml"
    contract.write_text(CONTRACT)
    gate_out, audit_out = io.StringIO(), io.StringIO()
    gate = [
        "gate",
        "check",
        "--contract",
        str(contract),
        "--release",
        crafted,
        "--completed-at",
        AT,
        str(traces),
    ]
    assert cli_run(gate, gate_out, io.StringIO()) == 2
    assert cli_run(["audit", str(traces)], audit_out, io.StringIO()) == 3
    for printed in (gate_out.getvalue(), audit_out.getvalue()):
        lines = printed.splitlines()
        assert not [line for line in lines if line.startswith(("::", "PASS"))], printed
        assert all(line.isprintable() for line in lines)
        assert "2.0\\n::error file=app.py::all rules passed\\nPASS\\x1b[2J\\x1b[32m\\u202egnissap" in printed
