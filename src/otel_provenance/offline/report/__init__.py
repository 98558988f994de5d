"""Reports of a gate decision, an audit and a diff: text (terminal), canonical JSON, JUnit XML,
SARIF 2.1.0, Markdown (PR comment), and self-contained HTML pages that draw the failing runs.

Every renderer is a pure function of its result: same evidence → same bytes. Which renderer draws
which subject in which format, and the flag that writes it, is one table: ``formats.FORMATS``.
"""

from __future__ import annotations

from .formats import FORMATS, DiffReport, ReportContext, ReportFormat, formats_for, render
from .json_report import render_json, report_data
from .junit import render_junit
from .markdown import render_markdown
from .sarif import render_sarif
from .text import render_text

__all__ = [
    "FORMATS",
    "DiffReport",
    "ReportContext",
    "ReportFormat",
    "formats_for",
    "render",
    "render_html",
    "render_json",
    "render_junit",
    "render_markdown",
    "render_sarif",
    "render_text",
    "report_data",
]


def __getattr__(name: str) -> object:
    """``render_html`` is loaded when asked for: the HTML pages stay out of a gate's start-up."""
    if name == "render_html":
        from .html import render_html

        return render_html
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
