"""What a person reads from the command line (#37): each message as a user meets it, through ``run``
with real files."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from contract_runs import CONTRACT, WRITE, export_runs, triage_run
from offline_helpers import reference_runs, write_jsonl
from otel_provenance.cli import run


def cli(*argv: object) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = run([str(a) for a in argv], out, err)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture
def traces(tmp_path: Path) -> Path:
    good, bad = reference_runs()
    return write_jsonl(good + bad, tmp_path / "runs.jsonl")


def test_a_misspelt_option_is_named_with_the_closest_known_one(tmp_path: Path, traces: Path) -> None:
    contract = tmp_path / "c.yaml"
    contract.write_text(CONTRACT)
    code, out, err = cli("gate", "check", "--contrat", contract, "--release", "v1", traces)
    assert code == 1 and out == ""
    assert "unknown option --contrat (did you mean --contract?)" in err
    assert "required" not in err

    code, _, err = cli("audit", traces, "--max-asumed", "1")
    assert code == 1 and "unknown option --max-asumed (did you mean --max-assumed?)" in err

    code, _, err = cli("mine", "--aproved", traces)  # a required option misspelt
    assert code == 1 and "unknown option --aproved (did you mean --approved?)" in err

    code, _, err = cli("routes", "list", "--contract", contract, "--zzzz")  # nothing close
    assert code == 1 and "unknown option --zzzz" in err and "did you mean" not in err

    code, _, err = cli("audit", traces, "--jbos", "2")  # letters swapped
    assert code == 1 and "unknown option --jbos (did you mean --jobs?)" in err
    code, _, err = cli("audit", traces, "--bogus")  # shares only the dashes and two letters with --jobs
    assert code == 1 and "unknown option --bogus" in err and "did you mean" not in err


def test_a_misspelt_command_is_named_with_the_closest_one() -> None:
    code, _, err = cli("aduit", "x.jsonl")
    assert code == 1 and "invalid choice: 'aduit'" in err and "(did you mean audit?)" in err
    code, _, err = cli("gate", "chek")
    assert code == 1 and "(did you mean check?)" in err


def test_options_argparse_accepts_are_still_accepted(tmp_path: Path, traces: Path) -> None:
    code, out, err = cli("audit", traces, "--max-ass", "5", "--format=json")  # an abbreviation, NAME=VALUE
    assert code in (0, 2), err
    assert json.loads(out)["verdict"]


def test_audit_help_says_allow_exempts_assumed_arguments_only() -> None:
    code, out, _ = cli("audit", "--help")
    assert code == 0
    text = " ".join(out.split())  # argparse wraps the help text
    assert "--allow ARG" in text and "assumed arguments only" in text and "invented one always counts" in text


def test_mine_for_a_release_without_runs_lists_the_releases_found(tmp_path: Path) -> None:
    good, _ = reference_runs("1.0.0")
    other, _ = reference_runs("2.0.0")
    traces = write_jsonl(good + other, tmp_path / "approved.jsonl")
    out_file = tmp_path / "contract.yaml"
    code, _, err = cli("mine", "--approved", traces, "--release", "9.9.9", "-o", out_file)
    assert code == 1 and not out_file.exists()
    assert "for release 9.9.9 (found: 1.0.0 (1 run), 2.0.0 (1 run))" in err


def test_gate_check_for_a_release_without_runs_lists_the_releases_found(tmp_path: Path) -> None:
    contract = tmp_path / "c.yaml"
    contract.write_text(CONTRACT)
    traces = tmp_path / "runs.jsonl"
    export_runs([triage_run("a", release="v1"), triage_run("b", release="v2")], str(traces))
    code, out, _ = cli("gate", "check", "--contract", contract, "--release", "9.9.9", traces)
    assert code == 3
    assert "no runs of release 9.9.9 were found" in out and "v1 (1 run), v2 (1 run)" in out


def test_audit_json_findings_match_its_verdict(traces: Path, tmp_path: Path) -> None:
    code, out, _ = cli("audit", traces, "--format", "json")
    doc = json.loads(out)
    assert code == 2 and doc["verdict"] == "fail"
    run_findings = [f for r in doc["runs"] for f in r["findings"]]
    assert run_findings and doc["findings"] == run_findings  # each run's, gathered at the top
    assert any(f["verdict"] == "fail" for f in doc["findings"])

    good, _ = reference_runs()
    clean = write_jsonl(good, tmp_path / "good.jsonl")
    code, out, _ = cli("audit", clean, "--format", "json")
    doc = json.loads(out)
    assert (code, doc["verdict"], doc["findings"]) == (0, "pass", [])

    code, out, _ = cli("audit", clean, "--format", "json", "--max-assumed", "0")
    doc = json.loads(out)
    assert code == 2 and doc["verdict"] == "fail" and doc["findings"]


def test_routes_list_shows_each_familys_steps_and_counts(tmp_path: Path) -> None:
    runs = [triage_run(f"u{i}") for i in range(4)] + [
        triage_run("e0", extra=[("ticket.escalate", WRITE), ("oncall.page", WRITE)])
    ]
    traces = tmp_path / "approved.jsonl"
    export_runs(runs, str(traces))
    contract = tmp_path / "contract.yaml"
    code, _, err = cli("mine", "--approved", traces, "-o", contract)
    assert code == 0, err
    code, out, _ = cli("routes", "list", "--contract", contract)
    assert code == 0
    lines = out.splitlines()
    pending = next(i for i, line in enumerate(lines) if "  pending" in line)
    family = lines[pending + 1 : pending + 3]
    assert family[0].startswith("    steps: ") and "ticket.escalate ×1" in family[0]
    assert "oncall.page ×1" in family[0]
    assert family[1].startswith("    edges: ") and "→" in family[1]
