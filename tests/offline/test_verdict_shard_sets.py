"""`gate merge` never decides without every shard (#36): a partial result records its shard index
and the shard count, and a set with a shard missing, a shard given twice, mixed shard counts or a
partial from before shards were recorded is exit 1 naming what is wrong — never exit 0.

Real files and the real CLI: ``gate check --shard I/N --partial OUT`` writes the partials.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from contract_runs import export_runs, triage_run
from otel_provenance.cli import run as cli_run
from otel_provenance.offline.aggregate import Aggregate
from otel_provenance.offline.gate import Shard

AT = "2026-01-31T12:00:00Z"
CONTRACT = (
    "version: 1\nname: t\nrules:\n"
    "  - id: one_write\n    type: cardinality\n    select: {step: ticket.update}\n    max: 1\n"
    "gate:\n  min_runs: 1\n"
)


def _cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    return cli_run(list(argv), out, err), out.getvalue(), err.getvalue()


@pytest.fixture
def sharded(tmp_path: Path) -> tuple[Path, list[Path], int]:
    """Three shards of 12 runs, of which exactly one fails (two writes); the index of its shard."""
    runs = [triage_run(f"r{i}", "v2") for i in range(11)] + [triage_run("bad", "v2", writes=2)]
    traces = tmp_path / "t.jsonl"
    export_runs(runs, str(traces))
    contract = tmp_path / "c.yaml"
    contract.write_text(CONTRACT)
    partials = []
    for i in (1, 2, 3):
        part = tmp_path / f"p{i}.json"
        code, out, err = _cli(
            "gate", "check", "--contract", str(contract), "--release", "v2", "--completed-at", AT,
            "--shard", f"{i}/3", "--partial", str(part), str(traces),
        )  # fmt: skip
        assert code == 0 and out.startswith("PARTIAL: "), err
        partials.append(part)
    failing = next(i for i in (1, 2, 3) if Shard(i, 3).owns(triage_run("bad", "v2").run_id))
    return contract, partials, failing


def _merge(contract: Path, *partials: Path) -> tuple[int, str, str]:
    return _cli("gate", "merge", "--contract", str(contract), *(str(p) for p in partials))


def test_a_partial_records_its_shard_and_the_whole_set_decides(sharded) -> None:
    contract, partials, _ = sharded
    for i, part in enumerate(partials, 1):
        assert json.loads(part.read_text())["shard"] == {"count": 3, "indexes": [i]}
    assert _merge(contract, *reversed(partials))[0] == 2  # the failing run's shard is there: fail


def test_a_merge_without_any_one_shard_never_passes_and_names_it(sharded) -> None:
    contract, partials, failing = sharded
    for missing in (1, 2, 3):
        given = [p for i, p in enumerate(partials, 1) if i != missing]
        code, out, err = _merge(contract, *given)
        assert code == 1, (missing, failing, out)
        assert f"missing shard(s) {missing}/3" in err
        assert "PASS" not in out.upper()
    code, _, err = _merge(contract, partials[0])
    assert code == 1 and "missing shard(s) 2/3, 3/3 (given: 1/3)" in err


def test_a_shard_given_twice_is_refused_even_when_it_holds_no_run(sharded, tmp_path: Path) -> None:
    contract, partials, _ = sharded
    code, _, err = _merge(contract, *partials, partials[1])
    assert code == 1 and "shard 2/3 occurs in two partial results" in err
    empty = Aggregate.from_json(partials[0].read_text(), "p")  # a shard that owned no run of v2
    for shard in (1, 2):
        path = tmp_path / f"empty{shard}.json"
        path.write_text(
            Aggregate.empty(empty.contract_digest, empty.rules, "v2", AT).for_shard(shard, 2).to_json()
        )
    code, _, err = _merge(contract, tmp_path / "empty1.json", tmp_path / "empty1.json")
    assert code == 1 and "shard 1/2 occurs in two partial results" in err
    assert _merge(contract, tmp_path / "empty1.json", tmp_path / "empty2.json")[0] != 1


def test_partials_of_different_shard_counts_are_refused(sharded, tmp_path: Path) -> None:
    contract, partials, _ = sharded
    other = Aggregate.from_json(partials[0].read_text(), "p").for_shard(2, 4)
    (tmp_path / "four.json").write_text(other.to_json())
    code, _, err = _merge(contract, *partials, tmp_path / "four.json")
    assert code == 1 and "different shard counts (3 and 4)" in err


def test_a_partial_from_before_shards_were_recorded_is_refused_with_what_to_rerun(
    sharded, tmp_path: Path
) -> None:
    contract, partials, _ = sharded
    old = []
    for i, part in enumerate(partials, 1):
        data = json.loads(part.read_text())
        del data["shard"]
        data["format"] = "otel-provenance/gate-partial/v2"
        path = tmp_path / f"old{i}.json"
        path.write_text(json.dumps(data))
        old.append(path)
    code, _, err = _merge(contract, *old)
    assert code == 1
    assert "records neither its shard index nor the shard count" in err
    assert "re-run every shard" in err and "--shard I/N --partial OUT" in err
    data = json.loads(partials[0].read_text())
    data["shard"] = {"count": 0, "indexes": []}  # a value that was never a shard's
    (tmp_path / "unsharded.json").write_text(json.dumps(data))
    code, _, err = _merge(contract, tmp_path / "unsharded.json")
    assert code == 1 and "is not a shard's partial result" in err
    for bad in (
        {"count": 3, "indexes": [4]},
        {"count": 3, "indexes": [2, 1]},
        {"count": "3", "indexes": [1]},
    ):
        data["shard"] = bad
        (tmp_path / "bad.json").write_text(json.dumps(data))
        code, _, err = _merge(contract, tmp_path / "bad.json")
        assert code == 1 and "not a valid partial gate result" in err, bad
