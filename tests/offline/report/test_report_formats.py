"""One table of report formats (``offline/report/formats.py``) that ``gate``, ``audit`` and ``diff`` read.

A new format is one module and one row: done here — a CSV renderer written as a module of its own, one
row added to the table — and every command that can draw its subject offers its flag and writes it.
"""

from __future__ import annotations

import importlib.util
import io
import textwrap
from pathlib import Path

import pytest

from contract_runs import AT, CONTRACT, export_runs, triage_run
from otel_provenance.cli import run as cli_run
from otel_provenance.offline.report import formats

CSV_MODULE = textwrap.dedent(
    '''
    """A gate decision as CSV: one line per rule."""

    def render_csv(result, context):
        lines = ["rule,status"] + [f"{v.rule.id},{v.status}" for v in result.verdicts]
        return "\\n".join(lines) + "\\n"
    '''
)


def cli(*argv: object) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = cli_run([str(a) for a in argv], out, err)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture
def release(tmp_path: Path) -> tuple[Path, Path]:
    traces = tmp_path / "t.jsonl"
    export_runs([triage_run(f"r{i}", "v2", writes=1 + i % 2) for i in range(4)], str(traces))
    contract = tmp_path / "c.yaml"
    contract.write_text(CONTRACT)
    return contract, traces


def test_a_new_format_is_one_module_and_one_row(tmp_path: Path, release, monkeypatch) -> None:
    module_path = tmp_path / "csv_report.py"
    module_path.write_text(CSV_MODULE)
    spec = importlib.util.spec_from_file_location("csv_report", module_path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    row = formats.ReportFormat(
        "csv", "--report-csv", "write a CSV of the rules", {formats.GATE: module.render_csv}
    )
    monkeypatch.setattr(formats, "FORMATS", (*formats.FORMATS, row))

    contract, traces = release
    out = tmp_path / "gate.csv"
    code, _, err = cli("gate", "check", "--contract", contract, "--release", "v2", "--completed-at", AT,
                       traces, "--report-csv", out)  # fmt: skip
    assert code == 2, err
    assert out.read_text().splitlines()[0] == "rule,status"
    assert "duplicate_write,fail" in out.read_text()
    # a command that cannot draw the subject does not offer the flag
    code, _, err = cli("audit", traces, "--report-csv", tmp_path / "a.csv")
    assert code == 1 and "unknown option --report-csv" in err


@pytest.mark.parametrize("subject", [formats.GATE, formats.AUDIT, formats.DIFF])
def test_every_command_offers_every_format_of_its_subject(subject: str) -> None:
    command = {"gate": ("gate", "check"), "audit": ("audit",), "diff": ("diff",)}[subject]
    _, help_text, _ = cli(*command, "--help")
    for fmt in formats.formats_for(subject):
        if fmt.flag is not None:
            assert fmt.flag in help_text, (subject, fmt.name)
    assert formats.formats_for(formats.GATE)[0].name == "text"


def test_audit_and_diff_write_json_files_as_they_print_them(tmp_path: Path, release) -> None:
    _, traces = release
    report = tmp_path / "audit.json"
    code, printed, _ = cli("audit", traces, "--format", "json", "--report-json", report)
    assert report.read_text() == printed and '"exit_code"' in printed
    a = tmp_path / "a.jsonl"
    export_runs([triage_run("one", "v2")], str(a))
    report = tmp_path / "diff.json"
    code, printed, _ = cli("diff", a, a, "--format", "json", "--report-json", report)
    assert code == 0 and report.read_text() == printed and '"identical": true' in printed
