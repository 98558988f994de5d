"""Gate reports: text (terminal), canonical JSON, JUnit XML, SARIF 2.1.0, Markdown (PR comment),
and a self-contained HTML page that draws the failing runs beside their approved route.

Every renderer is a pure function of a ``GateResult``: same evidence → same bytes.
"""

from __future__ import annotations

from .html import render_html
from .json_report import render_json, report_data
from .junit import render_junit
from .markdown import render_markdown
from .sarif import render_sarif
from .text import render_text

__all__ = [
    "render_html",
    "render_json",
    "render_junit",
    "render_markdown",
    "render_sarif",
    "render_text",
    "report_data",
]
