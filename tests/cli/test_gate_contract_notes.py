"""`gate check` says on stderr what the contract's reader noted — an unsealed contract, whose cut copy
could not be told from a whole one — and says nothing for a sealed one."""

from __future__ import annotations

import io
from pathlib import Path

import yaml

from contract_runs import export_runs, triage_run
from otel_provenance.cli import run
from otel_provenance.offline import dump_document

DOCUMENT = {
    "version": 1,
    "name": "triage",
    "rules": [{"id": "once", "type": "cardinality", "select": {"step": "ticket.update"}, "max": 1}],
}


def _check(contract: Path, traces: Path) -> tuple[int, str]:
    err = io.StringIO()
    argv = ["gate", "check", "--contract", str(contract), "--release", "v1", str(traces)]
    return run([*argv, "--completed-at", "2026-12-01T00:00:00Z"], io.StringIO(), err), err.getvalue()


def test_an_unsealed_contract_is_noted_and_a_sealed_one_is_not(tmp_path: Path) -> None:
    traces = tmp_path / "t.jsonl"
    export_runs([triage_run("r1")], str(traces))
    unsealed, sealed = tmp_path / "unsealed.yaml", tmp_path / "sealed.yaml"
    unsealed.write_text(yaml.safe_dump(DOCUMENT))
    sealed.write_text(dump_document(DOCUMENT))

    code, err = _check(unsealed, traces)
    assert code == 0 and f"{unsealed}: the contract has no seal" in err
    code, err = _check(sealed, traces)
    assert code == 0 and "seal" not in err
