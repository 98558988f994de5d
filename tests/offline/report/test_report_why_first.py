"""The HTML report as a person reads it (#37), through the command line with real files: the decision,
then each finding with its failing run drawn beside the closest approved route, then the rules;
argument names and kinds whole and coloured by standing; identical runs drawn once and counted; the
diff page's "only in A" / "only in B"; and never a value of a tool argument or result.
(``test_report_html_browser.py`` checks positions at 1280×800 in Chromium.)"""

from __future__ import annotations

import io
import re
from html.parser import HTMLParser
from pathlib import Path

from test_report_html import AT, _contract

from contract_runs import WRITE, export_runs, triage_run
from otel_provenance import semconv
from otel_provenance.cli import run as cli_run
from otel_provenance.offline.report.witnesses import PER_RULE

LONG_ARG = "customer_shipping_address_verification_reference_for_the_regional_warehouse"
SECRET = "s3cr3t-VALUE-never-shown"


def _gate_page(tmp_path: Path, runs) -> str:
    contract = tmp_path / "c.yaml"
    contract.write_text(_contract(triage_run("model")))
    export_runs(runs, str(tmp_path / "t.jsonl"))
    page = tmp_path / "report.html"
    argv = ["gate", "check", "--contract", contract, "--release", "v1", "--completed-at", AT,
            tmp_path / "t.jsonl", "--report-html", page]  # fmt: skip
    assert cli_run([str(a) for a in argv], io.StringIO(), io.StringIO()) == 2
    return page.read_text()


class _NodeText(HTMLParser):
    """The text of each ``g.node`` (its lines joined), by step."""

    def __init__(self) -> None:
        super().__init__()
        self.nodes: list[tuple[str, str]] = []
        self.depth = 0

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "g" and "node" in (attrs.get("class") or "").split():
            self.nodes.append((attrs["data-step"], ""))
            self.depth = 1
        elif self.depth and tag == "g":
            self.depth += 1
        self.in_title = tag == "title"

    def handle_endtag(self, tag):
        if self.depth and tag == "g":
            self.depth -= 1
        if tag == "title":
            self.in_title = False

    def handle_data(self, data):
        if self.depth and not getattr(self, "in_title", False):
            step, text = self.nodes[-1]
            self.nodes[-1] = (step, text + data)


def test_the_page_shows_why_first_and_the_rules_last(tmp_path: Path) -> None:
    page = _gate_page(tmp_path, [triage_run("bad", writes=2)])
    h1, finding = page.index("<h1>"), page.index('<p class="finding">')
    graph, rules = page.index('class="run-graph"'), page.index("<h2>Rules</h2>")
    assert h1 < page.index("Decision</dt>") < finding < graph < rules
    assert "Closest approved route: family usual" in page[graph:rules]


def test_argument_names_and_kinds_are_whole_coloured_and_never_values(tmp_path: Path) -> None:
    arg = lambda name: semconv.arg_attr(name, semconv.ARG_KIND_SUFFIX)  # noqa: E731
    update = {
        arg(LONG_ARG): "assumed",
        arg("note"): "invented",
        arg("reason"): "assumed",
        semconv.BUDGET_ALLOWED: ("reason",),
        "gen_ai.tool.call.arguments": f'{{"{LONG_ARG}": "{SECRET}"}}',
        "gen_ai.tool.call.result": SECRET,
    }
    page = _gate_page(tmp_path, [triage_run("bad", writes=2, update_attrs=update)])
    assert SECRET not in page
    parser = _NodeText()
    parser.feed(page)
    updates = [text for step, text in parser.nodes if step == "ticket.update" and "tool ·" in text]
    assert len(updates) == 2 and all(f"{LONG_ARG} (assumed)" in text for text in updates)  # whole, wrapped
    assert "…" not in "".join(text for _, text in parser.nodes)
    assert re.search(r'<tspan class="arg arg-violating">customer_shipping', page)
    assert '<tspan class="arg arg-violating">note (invented)' in page
    assert '<tspan class="arg arg-allowed">reason (assumed)' in page
    assert "<code>reason</code> of <code>ticket.update</code>" in page
    assert "no tool result supplied it; allowed by the call's budget, not counted" in page
    assert '<tspan class="arg arg-observed">ticket_id (observed)' in page
    for standing in ("observed", "allowed", "violating"):
        assert re.search(f'<li class="arg-legend"><svg [^>]*><text class="arg arg-{standing}"', page)


def test_identical_failing_runs_are_drawn_once_and_counted(tmp_path: Path) -> None:
    # with the other run, as many failing runs as a rule may draw (the SDK picks the ids: any order)
    same = [triage_run(f"same-{i}", writes=2) for i in range(PER_RULE - 1)]
    page = _gate_page(tmp_path, [*same, triage_run("other", skip_check=True)])
    assert page.count('<svg xmlns="http://www.w3.org/2000/svg" class="run-graph"') == 2
    assert f"Drawn once for {PER_RULE - 1} identical runs" in page
    links = set(re.findall(r'href="#(run-\d+)"', page))
    assert len(links) == 2  # every witness of the identical runs links to their one drawing


def test_the_diff_page_says_only_in_a_and_only_in_b(tmp_path: Path) -> None:
    export_runs([triage_run("a")], str(tmp_path / "a.jsonl"))
    export_runs(
        [triage_run("b", skip_check=True, extra=[("ticket.escalate", WRITE)])], str(tmp_path / "b.jsonl")
    )
    page_path = tmp_path / "diff.html"
    argv = ["diff", tmp_path / "a.jsonl", tmp_path / "b.jsonl", "--report-html", page_path]
    assert cli_run([str(a) for a in argv], io.StringIO(), io.StringIO()) == 0
    page = page_path.read_text()
    assert "MISSING" not in page and "EXTRA" not in page
    parser = _NodeText()
    parser.feed(page)
    assert [t for s, t in parser.nodes if s == "permissions.check"] and all(
        "ONLY IN A" in t for s, t in parser.nodes if s == "permissions.check"
    )
    assert any("ONLY IN B" in t for s, t in parser.nodes if s == "ticket.escalate")
    assert "<b>ONLY IN A</b>: a step of run A that run B lacks" in page
