"""Files the CLI writes keep an existing file's permissions, and a new file gets the umask default.

The writes are atomic (a sibling temporary file renamed over the target); the temporary file must
not leave its private ``0600`` on a contract or report the user shares.
"""

from __future__ import annotations

import io
import os
import re
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from contract_runs import export_runs, triage_run
from otel_provenance.cli import run as cli_run

CLEAN = {"path": "clean", "score": 0.1}


@contextmanager
def umask(mask: int) -> Iterator[None]:
    old = os.umask(mask)
    try:
        yield
    finally:
        os.umask(old)


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def _cli(*argv: str) -> int:
    return cli_run(list(argv), io.StringIO(), io.StringIO())


def _traces(tmp_path: Path) -> Path:
    traces = tmp_path / "approved.jsonl"
    export_runs([triage_run(f"a-{i}") for i in range(5)], str(traces))
    return traces


def test_new_files_get_the_umask_default_and_existing_files_keep_their_mode(tmp_path: Path) -> None:
    traces = _traces(tmp_path)
    contract = tmp_path / "contract.yaml"
    with umask(0o027):
        assert _cli("mine", "--approved", str(traces), "-o", str(contract)) == 0
    assert _mode(contract) == 0o640  # 0o666 & ~0o027
    with umask(0o022):
        assert _cli("mine", "--approved", str(traces), "-o", str(tmp_path / "second.yaml")) == 0
    assert _mode(tmp_path / "second.yaml") == 0o644

    os.chmod(contract, 0o664)  # a group-writable contract in a shared repository
    with umask(0o077):
        assert _cli("mine", "--approved", str(traces), "-o", str(contract)) == 0
        assert _mode(contract) == 0o664
        pending = re.findall(r"(route-[0-9a-f]+)", contract.read_text())
        assert pending
        assert _cli("routes", "approve", "--contract", str(contract), pending[0]) == 0
        assert _mode(contract) == 0o664

        report = tmp_path / "report.json"
        report.write_text("{}")
        os.chmod(report, 0o644)
        code = _cli(
            "gate", "check", "--contract", str(contract), "--release", "any",
            "--completed-at", "2026-01-01T00:00:00Z", "--report-json", str(report), str(traces),
        )  # fmt: skip
        assert code in (0, 2, 3)
        assert report.read_text() != "{}"
        assert _mode(report) == 0o644
        fresh = tmp_path / "fresh.json"
        _cli(
            "gate", "check", "--contract", str(contract), "--release", "any",
            "--completed-at", "2026-01-01T00:00:00Z", "--report-json", str(fresh), str(traces),
        )  # fmt: skip
        assert _mode(fresh) == 0o600  # 0o666 & ~0o077: the user's own umask asked for private
    assert not [p.name for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temporary file left
