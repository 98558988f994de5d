"""Reports of a gate decision, an audit and a diff: text (terminal), canonical JSON, JUnit XML,
SARIF 2.1.0, Markdown (PR comment), and self-contained HTML pages that draw the failing runs.

Every renderer is a pure function of its result: same evidence → same bytes. Which renderer draws
which subject in which format, and the flag that writes it, is one table: ``formats.FORMATS``.
"""

from __future__ import annotations

from .._lazy import lazy_names

#: Where each public name lives, imported when asked for: a gate that prints its text report loads
#: no other renderer (start-up is paid on every gate in CI, issue #46).
_PUBLIC = {
    "FORMATS": "formats",
    "DiffReport": "formats",
    "ReportContext": "formats",
    "ReportFormat": "formats",
    "formats_for": "formats",
    "render": "formats",
    "render_html": "html",
    "render_json": "json_report",
    "render_junit": "junit",
    "render_markdown": "markdown",
    "render_sarif": "sarif",
    "render_text": "text",
    "report_data": "json_report",
}

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


__getattr__ = lazy_names(__name__, _PUBLIC, globals())
