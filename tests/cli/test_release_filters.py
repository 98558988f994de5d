"""``--release`` of ``audit``, ``mine``, ``fingerprint`` and ``fetch`` never admits a run that has no
release (no ``service.version`` on the agent's spans) — issue #36: planting exactly that bug in
``offline/release.py`` went unnoticed. Each command reads one run of release v1 beside one run with
no release whose call was blocked (so an admitted stranger changes every command's answer)."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from blocking_agent import write_runs
from otel_provenance.cli import run as cli_run


def cli(*argv: object) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = cli_run([str(a) for a in argv], out, err)
    return code, out.getvalue(), err.getvalue()


def _run_ids(path: Path) -> set[str]:
    code, out, err = cli("fingerprint", "--format", "json", path)
    assert code == 0, err
    return {row["run_id"] for row in json.loads(out)["runs"]}


@pytest.fixture(scope="module")
def inputs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, str, str]:
    folder = tmp_path_factory.mktemp("releases")
    released = write_runs(folder / "v1.jsonl", "v1", 1, "good")
    unreleased = write_runs(folder / "none.jsonl", None, 1, "bad")
    [released_id], [unreleased_id] = _run_ids(released), _run_ids(unreleased)
    return released, unreleased, released_id, unreleased_id


def test_the_run_without_a_release_is_in_the_input(inputs) -> None:
    released, unreleased, released_id, unreleased_id = inputs
    code, out, _ = cli("fingerprint", "--format", "json", released, unreleased)
    assert code == 0 and {r["run_id"] for r in json.loads(out)["runs"]} == {released_id, unreleased_id}
    assert cli("audit", unreleased)[0] == 2  # its blocked call fails an audit that reads it


def test_audit_release_leaves_out_a_run_without_a_release(inputs) -> None:
    released, unreleased, released_id, unreleased_id = inputs
    code, out, err = cli("audit", "--release", "v1", released, unreleased)
    assert code == 0, out + err
    assert f"run {released_id} release v1: PASS" in out and unreleased_id not in out + err
    assert "summary: 1 run(s)" in out


def test_fingerprint_release_leaves_out_a_run_without_a_release(inputs) -> None:
    released, unreleased, released_id, _ = inputs
    code, out, err = cli("fingerprint", "--release", "v1", "--format", "json", released, unreleased)
    assert code == 0, err
    assert [r["run_id"] for r in json.loads(out)["runs"]] == [released_id]


def test_mine_release_leaves_out_a_run_without_a_release(inputs, tmp_path: Path) -> None:
    released, unreleased, _, _ = inputs
    contract = tmp_path / "c.yaml"
    code, out, err = cli("mine", "--release", "v1", "--approved", released, unreleased, "-o", contract)
    assert code == 0, err
    assert "Mined 1 approved run(s)" in out + err
    # the blocked call of the stranger would have raised the mined blocked-call limit
    assert "max: 0" in contract.read_text().split("type: blocked_calls", 1)[1].split("- id:", 1)[0]


def test_mine_release_with_only_unreleased_runs_writes_nothing(inputs, tmp_path: Path) -> None:
    _, unreleased, _, _ = inputs
    contract = tmp_path / "c.yaml"
    code, _, err = cli("mine", "--release", "v1", "--approved", unreleased, "-o", contract)
    assert code == 1 and "no agent runs found" in err and "(no service.version)" in err
    assert not contract.exists()


def test_fetch_release_leaves_out_a_run_without_a_release(inputs, tmp_path: Path) -> None:
    released, unreleased, released_id, unreleased_id = inputs
    out_file = tmp_path / "fetched.jsonl"
    code, _, err = cli("fetch", "--release", "v1", released, unreleased, "-o", out_file)
    assert code == 0, err
    assert _run_ids(out_file) == {released_id}
    assert unreleased_id not in out_file.read_text()
