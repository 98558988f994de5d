"""Every report format in one table: which renderer draws each subject in it, and its file flag.

Three subjects are reported: a gate decision (``GateResult``), an audit (``AuditReport``) and a diff
(:class:`DiffReport`). A row of :data:`FORMATS` is one format — its name, the command-line flag that
writes it to a file (``--report-json FILE``; ``None``: printed only), and a renderer per subject it
can draw. ``gate check``, ``gate merge``, ``audit`` and ``diff`` read this table for their flags and
their output, so **a new format is one module and one row here** (docs/offline.md, "Adding a report
format"). A renderer is ``render(result, context) -> str``, pure: the same evidence gives the same
bytes.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from ..model import Run
from ..outcome import Outcome

if TYPE_CHECKING:
    from ..audit import AuditReport
    from ..diff import RunDiff
    from ..gate import GateResult

GATE: Final = "gate"
AUDIT: Final = "audit"
DIFF: Final = "diff"
EXIT_INSUFFICIENT: Final = Outcome.INSUFFICIENT.exit_code  # "cannot pass": an audit then says no PASS


@dataclass(frozen=True, slots=True)
class ReportContext:
    """What a renderer may need beside the result: the runs an HTML page draws, the contract's path
    (SARIF locates findings in it), whether the input was complete, and the command's exit code."""

    runs: Mapping[str, Run] | None = None
    contract_path: str | None = None
    complete: bool = True
    exit_code: int | None = None
    verbose: bool = False  # the terminal report lists everything (``audit --verbose``)


@dataclass(frozen=True, slots=True)
class DiffReport:
    """What ``diff`` reports: the two runs and their paired calls, or why there was nothing to compare."""

    run_a: Run | None
    run_b: Run | None
    diff: RunDiff | None
    source_a: str = "A"
    source_b: str = "B"
    complete: bool = True
    nothing: str | None = None


Renderer = Callable[[Any, ReportContext], str]


@dataclass(frozen=True, slots=True)
class ReportFormat:
    name: str
    flag: str | None  # the option that writes it to FILE; None: printed only
    help: str
    renderers: Mapping[str, Renderer]  # subject -> renderer
    printable: bool = False  # may be printed instead of the text (--format)


def _audit_text(report: AuditReport, context: ReportContext) -> str:
    """With exit code 3 no line says PASS; a verdict of pass then capped (incomplete input) says why."""
    can_pass = context.exit_code != EXIT_INSUFFICIENT
    capped = not can_pass and report.verdict is Outcome.PASS
    return _render_audit_text(report, can_pass, capped=capped, verbose=context.verbose)


def _later(module: str, name: str) -> Callable[..., str]:
    """The renderer ``module.name``, imported when it first draws: a gate that prints its text
    report loads no JUnit, SARIF, audit, diff or HTML renderer (the HTML pages hold drawings,
    scripts and styles) — start-up is paid on every gate in CI (issue #46)."""

    def render(*args: Any, **kwargs: Any) -> str:
        return str(getattr(importlib.import_module(f"{__package__}.{module}"), name)(*args, **kwargs))

    return render


_render_text = _later("text", "render_text")
_render_json = _later("json_report", "render_json")
_render_junit = _later("junit", "render_junit")
_render_sarif = _later("sarif", "render_sarif")
_render_markdown = _later("markdown", "render_markdown")
_render_audit_text = _later("audit_text", "render_audit_text")
_render_audit_json = _later("audit_text", "render_audit_json")
_render_diff_text = _later("diff_text", "render_diff_text")
_render_diff_json = _later("diff_text", "render_diff_json")
_render_html = _later("html", "render_html")
_render_audit_html = _later("audit_html", "render_audit_html")
_render_diff_html = _later("diff_html", "render_diff_html")


def _drawn_gate(result: GateResult, context: ReportContext) -> str:
    return _render_html(result, context.runs)


def _drawn_audit(report: AuditReport, context: ReportContext) -> str:
    return _render_audit_html(report, context.runs, context.complete)


def _drawn_diff(report: DiffReport, context: ReportContext) -> str:
    if report.run_a is None or report.run_b is None or report.diff is None:
        raise ValueError(f"nothing to draw: {report.nothing}")
    return _render_diff_html(report.run_a, report.run_b, report.diff, report.source_a, report.source_b)


FORMATS: Final[tuple[ReportFormat, ...]] = (
    ReportFormat(
        "text",
        None,
        "the terminal report",
        {
            GATE: lambda result, context: _render_text(result),
            AUDIT: _audit_text,
            DIFF: lambda report, context: _render_diff_text(report),
        },
        printable=True,
    ),
    ReportFormat(
        "json",
        "--report-json",
        "write the canonical JSON report",
        {
            GATE: lambda result, context: _render_json(result),
            AUDIT: lambda report, context: _render_audit_json(report, context.complete, context.exit_code),
            DIFF: lambda report, context: _render_diff_json(report),
        },
        printable=True,
    ),
    ReportFormat(
        "junit", "--junit", "write a JUnit XML report", {GATE: lambda result, context: _render_junit(result)}
    ),
    ReportFormat(
        "sarif",
        "--sarif",
        "write a SARIF 2.1.0 report",
        {GATE: lambda result, context: _render_sarif(result, context.contract_path)},
    ),
    ReportFormat(
        "markdown",
        "--markdown",
        "write a Markdown summary (for a pull-request comment)",
        {GATE: lambda result, context: _render_markdown(result)},
    ),
    ReportFormat(
        "html",
        "--report-html",
        "write a self-contained HTML report that draws failing runs (gate: beside their approved route; "
        "diff: B beside A)",
        {
            GATE: _drawn_gate,
            AUDIT: _drawn_audit,
            DIFF: _drawn_diff,
        },
    ),
)


def formats_for(subject: str) -> tuple[ReportFormat, ...]:
    """The formats that can draw ``subject`` (``gate``, ``audit`` or ``diff``), in table order."""
    return tuple(f for f in FORMATS if subject in f.renderers)


def render(
    subject: str, name: str, result: GateResult | AuditReport | DiffReport, context: ReportContext
) -> str:
    """``result`` drawn in format ``name``."""
    for fmt in FORMATS:
        if fmt.name == name and subject in fmt.renderers:
            return fmt.renderers[subject](result, context)
    raise KeyError(f"no {name} renderer for {subject}")
