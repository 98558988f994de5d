"""The refund demo's failing release as an HTML report, opened in real headless Chromium.

The demo runs as in the README (five services as processes, mine, gate); ``gate check
--report-html`` writes the page; Chromium (the system package, driven by Playwright) opens it from
the file. The page must load without a console error or a single network request, and the witness
run's SVG must show the skipped ``fraud.check`` as missing and both ``payment.refund`` calls as a
duplicated side effect — in colour and in words. Screenshots go to ``out/test-artifacts/``.
Skipped, with the reason, where no Chromium or no Playwright is installed (``.ci/run`` installs both).
"""

from __future__ import annotations

import io
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from interop import logs_sdk
from otel_provenance.cli import run as cli_run

ROOT = Path(__file__).resolve().parents[3]
DEMO = ROOT / "examples" / "refund_agent" / "demo.py"
ARTIFACTS = ROOT / "out" / "test-artifacts"
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def _chromium() -> str:
    path = shutil.which("chromium") or shutil.which("chromium-browser")
    if path is None:
        pytest.skip("no Chromium on PATH (apt-get install chromium): the browser test is skipped")
    return path


@pytest.fixture(scope="module")
def demo_report(tmp_path_factory) -> Path:
    """The demo's release 2.0.0 gated with ``--report-html``."""
    out = tmp_path_factory.mktemp("refund-demo-html")
    proc = subprocess.run(
        [sys.executable, str(DEMO), "--out", str(out)], capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 2, proc.stdout[-2000:] + proc.stderr[-2000:]
    page = out / "report-2.0.0.html"
    files = sorted(str(p) for p in (out / "release-2.0.0").glob("*.jsonl"))
    argv = ["gate", "check", "--contract", str(out / "contract.yaml"), "--release", "2.0.0"]
    argv += ["--completed-at", "2026-01-01T00:00:00Z", "--report-html", str(page), *files]
    assert cli_run(argv, io.StringIO(), io.StringIO()) == 2
    again = out / "again.html"
    argv[argv.index(str(page))] = str(again)
    assert cli_run(argv, io.StringIO(), io.StringIO()) == 2
    assert again.read_bytes() == page.read_bytes()  # same evidence, same bytes
    return page


@pytest.fixture(scope="module")
def demo_diff_and_audit(demo_report) -> tuple[Path, Path]:
    """``diff`` of an approved run and a 2.0.0 run, and ``audit`` of release 2.0.0, as pages."""
    from otel_provenance.offline.otlp_json_writer import write_jsonl
    from otel_provenance.offline.readers import iter_runs

    out = demo_report.parent
    sides = []
    for name in ("approved", "release-2.0.0"):
        run = min(iter_runs(sorted((out / name).glob("*.jsonl"))), key=lambda r: r.run_id)
        path = out / f"one-{name}.jsonl"
        with path.open("w", encoding="utf-8") as f:
            write_jsonl(run.spans, f)
        sides.append(str(path))
    diff_page, audit_page = out / "diff.html", out / "audit.html"
    assert cli_run(["diff", *sides, "--report-html", str(diff_page)], io.StringIO(), io.StringIO()) == 0
    files = sorted(str(p) for p in (out / "release-2.0.0").glob("*.jsonl"))
    code = cli_run(["audit", *files, "--report-html", str(audit_page)], io.StringIO(), io.StringIO())
    assert code in (0, 2, 3) and audit_page.exists()
    return diff_page, audit_page


@pytest.fixture
def browser_page(tmp_path):
    """A fresh Chromium page that records console messages, page errors, requests and dialogs."""
    chromium = _chromium()
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.skip("Playwright is not installed (pip install -e '.[test]'): the browser test is skipped")
    with sync_playwright() as p:
        context = p.chromium.launch_persistent_context(
            str(tmp_path / "profile"),  # a fresh profile
            executable_path=chromium,
            headless=True,
            args=FLAGS,
            viewport={"width": 1400, "height": 1000},
        )
        try:
            page = context.new_page()
            page.seen = {"console": [], "errors": [], "requests": [], "dialogs": []}  # type: ignore[attr-defined]
            page.on("console", lambda m: page.seen["console"].append((m.type, m.text)))
            page.on("pageerror", lambda e: page.seen["errors"].append(str(e)))
            page.on("request", lambda r: page.seen["requests"].append(r.url))
            page.on("dialog", lambda d: (page.seen["dialogs"].append(d.message), d.dismiss()))
            yield page
        finally:
            context.close()


def _open(page, path: Path) -> None:
    url = path.resolve().as_uri()
    page.goto(url, wait_until="load")
    page.wait_for_timeout(200)  # let late console messages (e.g. CSP reports) arrive
    assert page.seen["errors"] == []
    assert [m for m in page.seen["console"] if m[0] in ("error", "warning")] == []
    assert page.seen["requests"] == [url]  # the page itself and nothing else
    assert page.seen["dialogs"] == []


@logs_sdk  # the demo's agent ships its log records through the logs processor
def test_the_demo_report_shows_the_missing_check_and_the_double_refund(demo_report, browser_page) -> None:
    page = browser_page
    _open(page, demo_report)
    assert page.locator("h1").inner_text().strip() == "Trajectory gate: FAIL"
    svg = page.locator("svg.run-graph").first
    missing = svg.locator('g.node[data-step="fraud.check"][data-marks~="missing"]')
    assert missing.count() == 2  # a placeholder in the run, and the route's own node
    for i in range(missing.count()):
        assert missing.nth(i).is_visible()
        assert "MISSING" in missing.nth(i).text_content()
    duplicated = svg.locator('g.node[data-step="payment.refund"][data-marks~="duplicated"]')
    assert duplicated.count() == 2
    for i in range(2):
        assert duplicated.nth(i).is_visible()
        assert "DUPLICATED SIDE EFFECT" in duplicated.nth(i).text_content()
        fill = duplicated.nth(i).locator("rect").evaluate("e => getComputedStyle(e).fill")
        assert fill == "rgb(254, 226, 226)"  # the stylesheet applied: marked in colour too
    plain = svg.locator('g.node[data-step="payment.refund"]:not([data-marks~="duplicated"])')
    assert plain.count() == 1  # the approved route refunds once
    assert svg.locator("path.flow").count() >= 5  # argument data flow is drawn
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "report-html-page.png"), full_page=True)
    page.locator("section.run").first.screenshot(path=str(ARTIFACTS / "report-html-run.png"))
    assert (ARTIFACTS / "report-html-run.png").stat().st_size > 10_000


def test_a_report_of_hostile_trace_values_runs_nothing_and_fetches_nothing(tmp_path, browser_page) -> None:
    from test_report_html import _hostile_result

    from otel_provenance.offline.report import render_html

    result, runs = _hostile_result()
    path = tmp_path / "hostile.html"
    path.write_text(render_html(result, runs), encoding="utf-8")
    _open(browser_page, path)
    assert browser_page.locator("script, img, iframe, object, embed").count() == 0
    assert "<script>alert(1)</script>" in browser_page.locator("body").inner_text()


@logs_sdk  # the demo's agent ships its log records through the logs processor
def test_the_diff_and_audit_pages_open_cleanly(demo_diff_and_audit, browser_page) -> None:
    diff_page, audit_page = demo_diff_and_audit
    _open(browser_page, diff_page)
    svg = browser_page.locator("svg.run-graph")
    assert svg.locator('g.node[data-step="fraud.check"][data-marks~="missing"]').count() == 2
    assert svg.locator('g.node[data-step="payment.refund"][data-marks~="duplicated"]').count() == 2
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    browser_page.locator("section.run").first.screenshot(path=str(ARTIFACTS / "diff-html-run.png"))
    browser_page.seen["requests"].clear()
    _open(browser_page, audit_page)
    assert browser_page.locator("h1").inner_text().startswith("Provenance audit:")


@logs_sdk  # the demo's agent ships its log records through the logs processor
def test_the_report_opens_with_the_decision_and_the_first_findings_graph(demo_report, browser_page) -> None:
    """Why first (#37): at 1280×800 the decision and the first finding's failing run, drawn beside
    its approved route, are on the first screen — above the rule table."""
    page = browser_page
    page.set_viewport_size({"width": 1280, "height": 800})
    _open(page, demo_report)
    decision = page.locator("h1 .decision").bounding_box()
    assert decision is not None and decision["y"] + decision["height"] <= 800
    first_finding = page.locator("p.finding").first.bounding_box()
    graph = page.locator("section.run svg.run-graph").first
    box = graph.bounding_box()
    assert first_finding is not None and box is not None
    assert first_finding["y"] < box["y"] < 800, box  # the graph follows its finding, on screen
    first_node = graph.locator("g.node rect").first.bounding_box()
    assert first_node is not None and first_node["y"] + first_node["height"] <= 800
    assert graph.locator(".panel-title").nth(1).text_content().startswith("Closest approved route")
    rules = page.locator("h2", has_text="Rules").bounding_box()
    assert rules is not None and rules["y"] > box["y"] + box["height"]  # the rule table comes after
    _labels_are_whole(page)
    # arguments: names and kinds, coloured by standing, with a legend
    observed = graph.locator("tspan.arg-observed").first
    assert "(observed)" in observed.text_content()
    legend = page.locator("ul.legend").first
    for standing in ("observed", "allowed", "violating"):
        assert legend.locator(f"li.arg-legend text.arg-{standing}").count() == 1
    fills = {
        s: legend.locator(f"text.arg-{s}").evaluate("e => getComputedStyle(e).fill")
        for s in ("observed", "allowed", "violating")
    }
    assert len(set(fills.values())) == 3, fills
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "report-html-first-screen.png"))


def _labels_are_whole(page) -> None:
    """Every node's text is inside its box and whole: nothing cut with an ellipsis or overflowing."""
    overflowing = page.evaluate(
        """() => [...document.querySelectorAll('svg.run-graph g.node')].flatMap(g => {
            const r = g.querySelector('rect').getBBox();
            return [...g.querySelectorAll('text')].filter(t => {
                const b = t.getBBox();
                return b.x + b.width > r.x + r.width + 0.5 || b.y + b.height > r.y + r.height + 0.5
                    || t.textContent.includes('…');
            }).map(t => t.textContent);
        })"""
    )
    assert overflowing == []


@logs_sdk  # the demo's agent ships its log records through the logs processor
def test_the_diff_page_says_only_in_a_and_only_in_b(demo_diff_and_audit, browser_page) -> None:
    diff_page, _ = demo_diff_and_audit
    _open(browser_page, diff_page)
    svg = browser_page.locator("svg.run-graph")
    missing = svg.locator('g.node[data-step="fraud.check"][data-marks~="missing"]')
    assert missing.count() == 2
    assert all("ONLY IN A" in missing.nth(i).text_content() for i in range(2))
    assert "MISSING" not in svg.first.text_content()
    legend = browser_page.locator("ul.legend").inner_text()
    assert "ONLY IN A" in legend and "ONLY IN B" in legend and "MISSING" not in legend
    _labels_are_whole(browser_page)


#: The approved refund route, in the order its steps run (#49).
APPROVED_ORDER = (
    "policy.retrieve",
    "order.lookup",
    "fraud.check",
    "refund.calculate",
    "payment.refund",
    "customer.notify",
)


@logs_sdk  # the demo's agent ships its log records through the logs processor
def test_the_first_finding_on_screen_names_a_step_and_the_approved_route_reads_in_its_order(
    demo_report, browser_page
) -> None:
    """#49, at 1280×800: the first finding on the first screen is one that names a step (the double
    refund), not the route's similarity (last on the page); the approved route beside the failing
    run is drawn in its own order — the checks before the payment — and the run's missing checks
    stand where the route has them, not after the calls that happened."""
    page = browser_page
    page.set_viewport_size({"width": 1280, "height": 800})
    _open(page, demo_report)
    heading = page.locator("h3", has=page.locator("code")).first
    box = heading.bounding_box()
    assert box is not None and box["y"] + box["height"] <= 800
    assert heading.inner_text().startswith("DUPLICATE_SIDE_EFFECT (at_most.payment.refund)")
    first = page.locator("p.finding").first
    assert first.inner_text() == "payment.refund occurred 2 times; the contract permits at most 1 per run."
    found = first.bounding_box()
    assert found is not None and found["y"] + found["height"] <= 800
    codes = [c.strip() for c in page.locator("h3 > code").all_inner_texts()]
    assert codes[-1] == "UNAPPROVED_ROUTE" and codes.count("UNAPPROVED_ROUTE") == 1

    run_panel, route_panel = (page.locator("svg.run-graph").first.locator("g.panel").nth(i) for i in (0, 1))

    def tops(panel) -> dict[str, float]:
        out = {}
        for step in APPROVED_ORDER:
            rect = panel.locator(f'g.node[data-step="{step}"] rect').first.bounding_box()
            assert rect is not None, step
            out[step] = rect["y"]
        return out

    route = tops(route_panel)
    assert sorted(APPROVED_ORDER, key=route.__getitem__) == list(APPROVED_ORDER), route
    in_run = tops(run_panel)  # the placeholders of policy.retrieve and fraud.check included
    assert sorted(APPROVED_ORDER, key=in_run.__getitem__) == list(APPROVED_ORDER), in_run
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "report-html-first-screen-49.png"))
    page.locator("section.run").first.screenshot(path=str(ARTIFACTS / "report-html-route-order.png"))
