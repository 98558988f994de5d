"""The HTML report, without a browser: the run view's marks, the layout, escaping of hostile trace
values, and same evidence → same bytes. (``test_report_html_browser.py`` opens it in Chromium.)"""

from __future__ import annotations

import io
import json
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from contract_runs import READ, WRITE, RunBuilder, export_runs, triage_run
from otel_provenance import semconv
from otel_provenance.cli import run as cli_run
from otel_provenance.offline.contracts import parse_contract
from otel_provenance.offline.fingerprint import edge_counts, fingerprint, step_counts
from otel_provenance.offline.gate import check_release, decide
from otel_provenance.offline.model import Run
from otel_provenance.offline.report import render_html
from otel_provenance.offline.report.layout import lanes, layered
from otel_provenance.offline.report.run_view import run_view
from otel_provenance.offline.report.witnesses import WitnessKeeper

AT = "2026-01-31T12:00:00Z"


def _contract(route_model: Run, extra_rules: str = "") -> str:
    steps = "".join(f"\n          {json.dumps(k)}: {n}" for k, n in sorted(step_counts(route_model).items()))
    edges = "".join(
        f"\n          - {{from: {json.dumps(a)}, to: {json.dumps(b)}, count: {n}}}"
        for (a, b), n in sorted(edge_counts(route_model).items())
    )
    return f"""\
version: 1
name: triage
gate: {{min_runs: 1}}
rules:
  - id: route
    type: approved_routes
    similarity: "1"
    families:
      - id: usual
        status: approved
        fingerprints: ["{fingerprint(route_model)}"]
        steps:{steps}
        edges:{edges}
  - id: one_update
    type: cardinality
    code: DUPLICATE_SIDE_EFFECT
    select: {{step: ticket.update}}
    max: 1
{extra_rules}"""


def _marks(view, step):
    return [n.marks for n in view.tree.nodes if n.step == step]


def test_missing_extra_and_duplicated_steps_are_marked() -> None:
    contract = parse_contract(_contract(triage_run("model")))
    view = run_view(triage_run("bad", skip_check=True, writes=2, status_kind="invented"), contract)
    assert view.route is not None and view.route.id == "usual"
    # The skipped check: a placeholder in the run, and missing in the route.
    assert _marks(view, "permissions.check") == [("missing",)]
    assert [n.marks for n in view.route.tree.nodes if n.step == "permissions.check"] == [("missing",)]
    # Both writes are duplicated side effects; the second (in time) has no place in the route.
    assert _marks(view, "ticket.update") == [("duplicated",), ("duplicated", "extra")]
    # An invented argument is flagged on its call.
    flagged = [n.flagged_args for n in view.tree.nodes if n.step == "ticket.update"]
    assert flagged == [(("status", "invented"),), (("status", "invented"),)]
    # The approved shape itself carries no marks.
    clean = run_view(triage_run("good"), contract)
    assert all(not n.marks for n in clean.tree.nodes)
    assert all(not n.marks for n in clean.route.tree.nodes)


#: The triage agent's steps in the order they run (``contract_runs.triage_run``).
TRIAGE_ORDER = (
    "ticket.triage",
    "ticket.fetch",
    "ticket.classify",
    "permissions.check",
    "ticket.update",
    "customer.notify",
)


def _route_order(view) -> list[str]:
    steps = {n.key: n.step for n in view.route.tree.nodes}
    children = dict(view.route.tree.children)
    order: list[str] = []
    for root in view.route.tree.roots:
        order += [steps[root]] + [steps[k] for k in children.get(root, ())]
    return order


def test_the_approved_route_is_drawn_in_the_runs_time_order_and_missing_steps_last() -> None:
    """A family records no order, and its canonical route lists steps by name (customer.notify
    first): beside a run, the steps the run made follow the run's calls in time; those it skipped
    come after them, as their placeholders do in the run's column."""
    contract = parse_contract(_contract(triage_run("model")))
    assert _route_order(run_view(triage_run("good"), contract)) == list(TRIAGE_ORDER)
    assert _route_order(run_view(triage_run("bad", skip_check=True), contract)) == [
        "ticket.triage",
        "ticket.fetch",
        "ticket.classify",
        "ticket.update",
        "customer.notify",
        "permissions.check",
    ]


def _run_order(view) -> list[str]:
    return [p.key for p in layered(view.tree.roots, view.tree.child_map())]


def test_a_mined_family_is_drawn_in_its_own_order_and_a_skipped_step_where_it_belongs() -> None:
    """#49: ``mine`` records the order the family's steps began (``order``), so the route is drawn
    in it whatever the compared run did, and the run's placeholder for a skipped check stands where
    the route has the check — before the write — instead of after the calls that happened."""
    from otel_provenance.offline.mine import mine_contract

    contract = parse_contract(mine_contract([triage_run(f"model-{i}") for i in range(3)], "triage"))
    (family,) = [f for r in contract.rules if r.type == "approved_routes" for f in r.params["families"]]
    assert family.order == TRIAGE_ORDER
    view = run_view(triage_run("bad", skip_check=True), contract)
    assert _route_order(view) == list(family.order)
    steps = {n.key: n.step for n in view.tree.nodes}
    drawn = [steps[k] for k in _run_order(view)]
    assert drawn == list(family.order)  # the placeholder of permissions.check before ticket.update
    assert [n.marks for n in view.tree.nodes if n.step == "permissions.check"] == [("missing",)]


def test_a_blocked_call_did_not_happen() -> None:
    """A blocked call is marked blocked: it neither counts as a duplicate nor stands in for the step."""
    contract = parse_contract(_contract(triage_run("model")))
    blocked = {semconv.TOOL_STATUS: semconv.TOOL_STATUS_BLOCKED}
    once = triage_run("once", extra=[("ticket.update", {**WRITE, **blocked})])
    view = run_view(once, contract)
    assert _marks(view, "ticket.update") == [("blocked",), ()]
    only_blocked = triage_run("only", writes=0, extra=[("ticket.update", {**WRITE, **blocked})])
    view = run_view(only_blocked, contract)
    assert sorted(_marks(view, "ticket.update")) == [("blocked",), ("missing",)]


def test_data_flow_edges_follow_source_span_ids() -> None:
    b = RunBuilder("flow")
    lookup = b.add("order.lookup", attrs=READ)
    b.add(
        "payment.refund",
        attrs={
            **WRITE,
            semconv.arg_attr("amount", semconv.ARG_SOURCE_SPAN_ID_SUFFIX): lookup,
            semconv.arg_attr("amount", semconv.ARG_KIND_SUFFIX): "observed",
            semconv.arg_attr("note", semconv.ARG_SOURCE_SPAN_ID_SUFFIX): "0123456789abcdef",
            semconv.arg_attr("note", semconv.ARG_KIND_SUFFIX): "observed",
        },
    )
    run = b.run()
    view = run_view(run, parse_contract(_contract(run)))
    assert [(f.source, f.consumer, f.args) for f in view.flows] == [
        (f"s:{lookup}", view.flows[0].consumer, ("amount",))
    ]
    assert [(d.arg, d.source_span_id, d.reason) for d in view.dangling] == [
        ("note", "0123456789abcdef", "missing")
    ]


@given(st.lists(st.tuples(st.integers(0, 40), st.integers(0, 40)), max_size=30))
def test_lanes_never_share_a_row(spans) -> None:
    assigned = lanes(spans)
    for i, a in enumerate(spans):
        for j, b in enumerate(spans[:i]):
            if assigned[i] == assigned[j]:
                assert max(a) < min(b) or max(b) < min(a)
    assert lanes(spans) == assigned


def test_layered_is_pre_order_and_places_each_node_once() -> None:
    placed = layered(["a", "x"], {"a": ["b", "c"], "b": ["d"], "c": ["b"]})
    assert [(p.key, p.row, p.depth) for p in placed] == [
        ("a", 0, 0),
        ("b", 1, 1),
        ("d", 2, 2),
        ("c", 3, 1),
        ("x", 4, 0),
    ]


HOSTILE = '"><script>alert(1)</script><img src=x onerror=alert(2)>\x00\x07\ud800&amp;'
ALLOWED_TAGS = {
    "html", "head", "meta", "title", "style", "body", "h1", "h2", "h3", "h4", "p", "span", "dl", "dt", "dd",
    "code", "table", "thead", "tbody", "tr", "th", "td", "ul", "li", "a", "b", "section", "figure",
    "svg", "desc", "defs", "marker", "path", "g", "rect", "text", "tspan",
}  # fmt: skip


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: set[str] = set()
        self.attrs: set[str] = set()
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs) -> None:
        self.tags.add(tag)
        self.attrs.update(name for name, _ in attrs)
        self.text.extend(value or "" for _, value in attrs)

    def handle_data(self, data) -> None:
        self.text.append(data)


def _hostile_result():
    b = RunBuilder("hostile")
    lookup = b.add(HOSTILE, attrs=READ)
    b.add(
        "ticket.update",
        attrs={
            **WRITE,
            semconv.RUN_ID: HOSTILE,
            semconv.arg_attr(HOSTILE, semconv.ARG_SOURCE_SPAN_ID_SUFFIX): lookup,
            semconv.arg_attr(HOSTILE, semconv.ARG_KIND_SUFFIX): "invented",
            semconv.arg_attr("x", semconv.ARG_SOURCE_SPAN_ID_SUFFIX): HOSTILE,
        },
    )
    b.add("ticket.update", attrs={**WRITE, semconv.SIDE_EFFECT: "write"})
    run = b.run()
    run = Run(HOSTILE, run.spans)
    contract = parse_contract(_contract(triage_run("model")))
    keeper = WitnessKeeper()
    result = decide(check_release([run], contract, "v1", AT, evaluator=keeper), contract)
    return result, keeper.runs


def test_hostile_trace_values_are_text_never_markup() -> None:
    result, runs = _hostile_result()
    assert result.decision == "fail"
    page = render_html(result, runs)
    page.encode("utf-8")  # lone surrogates and control characters were replaced
    assert "<script" not in page and "<img" not in page and "\x00" not in page
    parser = _Tags()
    parser.feed(page)
    assert parser.tags <= ALLOWED_TAGS, parser.tags - ALLOWED_TAGS
    assert not any(name.startswith("on") for name in parser.attrs)
    shown = "".join(parser.text)
    assert '"><script>alert(1)</script><img src=x onerror=alert(2)>' in shown  # as text, visibly
    assert "<svg" in page and 'class="run-graph"' in page


def test_same_evidence_same_bytes_in_any_order_and_any_number_of_processes(tmp_path: Path) -> None:
    contract = tmp_path / "c.yaml"
    contract.write_text(_contract(triage_run("model")))
    runs = [triage_run(f"r{i}", skip_check=i % 2 == 0, writes=1 + i % 3) for i in range(8)]
    export_runs(runs[:4], str(tmp_path / "a.jsonl"))
    export_runs(runs[4:], str(tmp_path / "b.jsonl"))
    base = ["gate", "check", "--contract", str(contract), "--release", "v1", "--completed-at", AT]
    pages = []
    for n, extra in enumerate(
        (["a.jsonl", "b.jsonl"], ["b.jsonl", "a.jsonl"], ["--jobs", "2", "a.jsonl", "b.jsonl"])
    ):
        out = tmp_path / f"report-{n}.html"
        argv = [
            *base,
            "--report-html",
            str(out),
            *(str(tmp_path / e) if e.endswith(".jsonl") else e for e in extra),
        ]
        assert cli_run(argv, io.StringIO(), io.StringIO()) == 2
        pages.append(out.read_bytes())
    assert pages[0] == pages[1] == pages[2]
    # Which failing runs are drawn follows the SDK's random trace ids; runs drawn alike are merged
    # into one figure that names the others, so figures plus merged runs cover every drawn run.
    figures = pages[0].count(b'<svg xmlns="http://www.w3.org/2000/svg" class="run-graph"')
    merged = sum(int(n) - 1 for n in re.findall(rb"Drawn once for (\d+) identical runs", pages[0]))
    assert figures >= 2 and figures + merged >= 3
    assert b"DUPLICATED SIDE EFFECT" in pages[0] and b"MISSING" in pages[0]


def test_gate_merge_names_the_runs_it_cannot_draw(tmp_path: Path) -> None:
    contract = tmp_path / "c.yaml"
    contract.write_text(_contract(triage_run("model")))
    export_runs([triage_run(f"r{i}", writes=2) for i in range(4)], str(tmp_path / "t.jsonl"))
    base = ["gate", "check", "--contract", str(contract), "--release", "v1", "--completed-at", AT]
    partials = []
    for i in (1, 2):
        partial = tmp_path / f"p{i}.json"
        argv = [*base, "--shard", f"{i}/2", "--partial", str(partial), str(tmp_path / "t.jsonl")]
        assert cli_run(argv, io.StringIO(), io.StringIO()) == 0
        partials.append(str(partial))
    page = tmp_path / "merged.html"
    argv = ["gate", "merge", "--contract", str(contract), "--report-html", str(page), *partials]
    assert cli_run(argv, io.StringIO(), io.StringIO()) == 2
    text = page.read_text()
    assert "were not available to this report" in text and 'class="run-graph"' not in text


def test_diff_draws_b_beside_a(tmp_path: Path) -> None:
    export_runs([triage_run("a")], str(tmp_path / "a.jsonl"))
    export_runs([triage_run("b", skip_check=True, writes=2)], str(tmp_path / "b.jsonl"))
    pages = []
    for name in ("one.html", "two.html"):
        argv = [
            "diff",
            str(tmp_path / "a.jsonl"),
            str(tmp_path / "b.jsonl"),
            "--report-html",
            str(tmp_path / name),
        ]
        assert cli_run(argv, io.StringIO(), io.StringIO()) == 0
        pages.append((tmp_path / name).read_text())
    assert pages[0] == pages[1]
    page = pages[0]
    assert page.count('data-step="permissions.check" data-marks="missing"') == 2  # in B, and in A's panel
    assert page.count('data-step="ticket.update" data-marks="duplicated') == 2
    assert "<td>only in A</td><td><code>permissions.check</code>" in page
    assert "<td>only in B</td><td><code>ticket.update</code>" in page


def test_a_blocked_call_of_the_reference_run_is_not_missing() -> None:
    from otel_provenance.offline.report.run_view import run_view_against

    blocked = {semconv.TOOL_STATUS: semconv.TOOL_STATUS_BLOCKED}
    a = triage_run("a", extra=[("ticket.delete", {**WRITE, **blocked})])
    view = run_view_against(triage_run("b"), a)
    assert all(not n.marks for n in view.tree.nodes)
    assert [n.marks for n in view.route.tree.nodes if n.step == "ticket.delete"] == [("blocked",)]


@settings(max_examples=40, deadline=None)
@given(st.text(min_size=1, max_size=40))
def test_any_step_name_is_shown_as_text(name: str) -> None:
    b = RunBuilder("any")
    b.add(name, attrs=WRITE)
    b.add(name, attrs=WRITE)
    run = b.run()
    contract = parse_contract(_contract(triage_run("model")))
    keeper = WitnessKeeper()
    result = decide(check_release([run], contract, "v1", AT, evaluator=keeper), contract)
    page = render_html(result, keeper.runs)
    page.encode("utf-8")
    parser = _Tags()
    parser.feed(page)
    assert parser.tags <= ALLOWED_TAGS
    assert not any(attr.startswith("on") for attr in parser.attrs)


def test_a_huge_run_is_cut_and_says_so() -> None:
    b = RunBuilder("huge")
    for i in range(400):
        b.add(f"step.{i % 7}", attrs=READ)
    view = run_view(b.run(), parse_contract(_contract(triage_run("model"))))
    from otel_provenance.offline.report.svg import MAX_NODES, run_figure

    svg = run_figure(view, "r")
    assert svg.count('<g class="node') <= MAX_NODES + len(view.route.tree.nodes)
    assert "more node(s) not drawn" in svg


@pytest.mark.parametrize("jobs", [(), ("--jobs", "2")], ids=["one-process", "two-shards"])
def test_audit_draws_the_failing_runs(tmp_path: Path, jobs: tuple[str, ...]) -> None:
    """In one process and folded from two shards (the failing runs each shard kept, merged: #50)."""
    blocked = {semconv.TOOL_STATUS: semconv.TOOL_STATUS_BLOCKED}
    kind = {semconv.arg_attr("ticket_id", semconv.ARG_KIND_SUFFIX): "observed"}
    bad = triage_run("bad", extra=[("ticket.delete", {**WRITE, **blocked, **kind})])
    export_runs([triage_run("good"), bad], str(tmp_path / "a.jsonl"))
    export_runs([triage_run(f"more{i}", status_kind="invented") for i in range(2)], str(tmp_path / "b.jsonl"))
    pages = []
    for order in (("a", "b"), ("b", "a")):
        page = tmp_path / f"audit-{order[0]}.html"
        argv = ["audit", *(str(tmp_path / f"{n}.jsonl") for n in order), "--report-html", str(page), *jobs]
        assert cli_run(argv, io.StringIO(), io.StringIO()) == 2
        pages.append(page.read_text())
    assert pages[0] == pages[1]
    page = pages[0]
    assert "<td><code>blocked_call</code></td>" in page
    assert page.count('class="run-graph"') == 1  # only the run with the blocked call fails
    assert 'data-step="ticket.delete" data-marks="blocked"' in page
    assert "FAIL</span></h1>" in page


@pytest.mark.parametrize("jobs", [(), ("--jobs", "2")], ids=["one-process", "two-shards"])
def test_audit_draws_a_failing_run_behind_more_passing_runs_than_it_draws(
    tmp_path: Path, jobs: tuple[str, ...]
) -> None:
    """The page draws up to 12 failing runs, those with the smallest run ids: passing runs are not
    candidates, so 13 passing runs whose run ids sort before the one failing run do not push it out."""
    blocked = {semconv.TOOL_STATUS: semconv.TOOL_STATUS_BLOCKED}
    kind = {semconv.arg_attr("ticket_id", semconv.ARG_KIND_SUFFIX): "observed"}
    bad = triage_run("bad", extra=[("ticket.delete", {**WRITE, **blocked, **kind})])
    runs = [triage_run(f"good{i:02}") for i in range(13)] + [bad]
    number = {run.run_id: n for n, run in enumerate(runs, start=1)}  # trace ids 1…14: the failing one last
    export_runs(runs, str(tmp_path / "runs.jsonl"), trace_id=lambda run: number[run.run_id])
    page = tmp_path / "audit.html"
    argv = ["audit", str(tmp_path / "runs.jsonl"), "--report-html", str(page), *jobs]
    assert cli_run(argv, io.StringIO(), io.StringIO()) == 2
    html = page.read_text()
    assert html.count('class="run-graph"') == 1
    assert f"{len(runs):032x}" in html and 'data-step="ticket.delete" data-marks="blocked"' in html


RUNS = [triage_run(f"p{i}", skip_check=i % 3 == 0, writes=1 + (i % 4 == 1)) for i in range(12)]


@settings(max_examples=25, deadline=None)
@given(st.permutations(RUNS))
def test_the_kept_runs_do_not_depend_on_arrival_order(runs) -> None:
    """The keeper holds a superset of the drawn runs, the same set whatever order runs arrive in."""
    from otel_provenance.offline.report.witnesses import witness_run_ids

    contract = parse_contract(_contract(triage_run("model")))
    keeper = WitnessKeeper()
    result = decide(check_release(runs, contract, "v1", AT, evaluator=keeper), contract)
    drawn = witness_run_ids(result)
    assert drawn and set(drawn) <= set(keeper.runs)
    reference = WitnessKeeper()
    check_release(RUNS, contract, "v1", AT, evaluator=reference)
    assert set(keeper.runs) == set(reference.runs)
