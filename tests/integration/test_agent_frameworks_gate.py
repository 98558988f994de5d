"""The refund-twice bug caught in traces that real agent frameworks wrote themselves.

Each producer in ``tests/agent_traces/`` drives a refund agent with its framework's own OpenTelemetry
support and a stub model, and writes through the official OTLP JSON file exporter — this package
takes no part in writing them. For each producer, four releases (``agent_traces/refund.py``):

- 1.0.0 ``approved`` — mined into a contract, ``issue_refund`` declared a write (``--write``);
- 1.1.0 ``like`` — the same behaviour: passes (exit 0);
- 2.0.0 ``regressed`` — the fraud check skipped and the refund paid twice: fails (exit 2) naming both;
- 2.1.0 ``duplicate`` — only the refund paid twice: fails (exit 2) naming the duplicate.

Every release's traces are in one directory, as a team keeps them; the gate picks its release. The
traces carry no ``agent.*`` attribute at all: what the contract knows, mining learned from the
framework's own spans.

A producer's tests run where its framework is installed: the newest set has all but AutoGen's, whose
autogen-core pins ``protobuf~=5.29``; AutoGen's run in the ``autogen`` case of
``scripts/install_check.sh`` (``-k autogen``), and skip elsewhere saying so (``interop.require``).
"""

from __future__ import annotations

import io
import json
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import yaml

from interop import optional, require
from otel_provenance.cli import run as cli_run

HERE = Path(__file__).parents[1] / "agent_traces"
sys.path.insert(0, str(HERE))
import refund  # noqa: E402  (the scripts every producer's stub model follows)

#: producer module -> the package it needs (the interop extra installs all but AutoGen: interop.ELSEWHERE)
PRODUCERS = {
    "pydantic_ai_native": "pydantic_ai",
    "openai_agents_openinference": "openinference.instrumentation.openai_agents",
    "openai_agents_logfire": "logfire",
    "langgraph_openllmetry": "opentelemetry.instrumentation.langchain",
    "langgraph_openinference": "openinference.instrumentation.langchain",
    "smolagents_openinference": "openinference.instrumentation.smolagents",
    "agent_framework_native": "agent_framework",
    "autogen_team": "autogen_agentchat",
    "autogen_single": "autogen_agentchat",
    "autogen_team_iterations": "autogen_agentchat",
}
RELEASES = {
    "approved": ("1.0.0", 4),
    "like": ("1.1.0", 3),
    "regressed": ("2.0.0", 3),
    "duplicate": ("2.1.0", 3),
}
COMPLETED = "2026-12-01T00:00:00Z"


def cli(*argv: object) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = cli_run([str(a) for a in argv], out, err)
    return code, out.getvalue(), err.getvalue()


def _produce(producer: str, variant: str, folder: Path) -> None:
    release, runs = RELEASES[variant]
    out = folder / f"{variant}.jsonl"
    command = [sys.executable, str(HERE / "run.py"), producer, variant, release, str(runs), str(out)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, f"{producer} {variant}: {done.stderr[-3000:]}"


@pytest.fixture(scope="module")
def traces(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """producer -> a directory holding its four releases' trace files, written once for the module, for
    each producer whose framework is installed here (the others' tests skip, saying why)."""
    root = tmp_path_factory.mktemp("agent-traces")
    folders = {p: root / p for p, module in PRODUCERS.items() if optional(module) is not None}
    for folder in folders.values():
        folder.mkdir()
    jobs = [(p, v, folders[p]) for p in folders for v in RELEASES]
    with ThreadPoolExecutor(max_workers=2) as pool:
        list(pool.map(lambda job: _produce(*job), jobs))
    return folders


@pytest.fixture(scope="module")
def contracts(traces: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """producer -> the contract mined from its approved release, issue_refund declared a write."""
    root = tmp_path_factory.mktemp("contracts")
    out = {}
    for producer, folder in traces.items():
        path = root / f"{producer}.yaml"
        code, _, err = cli(
            "mine", "--approved", folder, "--release", "1.0.0", "--write", "issue_refund", "-o", path
        )
        assert code == 0, f"{producer}: {err}"
        out[producer] = path
    return out


def _gate(contract: Path, release: str, folder: Path) -> tuple[int, str]:
    code, out, err = cli(
        "gate", "check", "--contract", contract, "--release", release, "--completed-at", COMPLETED, folder
    )
    return code, out + err


def _findings(text: str) -> set[tuple[str, str]]:
    """(code, rule id) of each finding line of the text report."""
    found = set()
    for line in text.splitlines():
        head = line.split(" ", 2)
        if len(head) >= 2 and head[0].isupper() and head[1].startswith("(") and head[1].endswith(")"):
            found.add((head[0], head[1][1:-1]))
    return found


@pytest.mark.parametrize("producer", list(PRODUCERS))
def test_mined_from_the_framework_own_spans(producer: str, contracts: dict[str, Path]) -> None:
    require(PRODUCERS[producer])
    rules = {r["id"]: r for r in yaml.safe_load(contracts[producer].read_text())["rules"]}
    assert rules["required.check_fraud"]["type"] == "required_spans"
    refund = rules["at_most.issue_refund"]
    assert (refund["type"], refund["code"], refund["max"]) == ("cardinality", "DUPLICATE_SIDE_EFFECT", 1)
    # every tool step is bounded, reads too, under the generic code
    lookup = rules["at_most.lookup_order"]
    assert (lookup["code"], lookup["max"]) == ("UNEXPECTED_STEP_COUNT", 1)
    (routes,) = [r for r in rules.values() if r["type"] == "approved_routes"]
    assert [f["status"] for f in routes["families"]] == ["approved"]  # one route, no setup traces


@pytest.mark.parametrize("producer", list(PRODUCERS))
def test_a_release_like_the_approved_one_passes(
    producer: str, traces: dict[str, Path], contracts: dict[str, Path]
) -> None:
    require(PRODUCERS[producer])
    code, text = _gate(contracts[producer], "1.1.0", traces[producer])
    assert code == 0, text
    assert "Runs of release 1.1.0: 3 evaluated — 3 pass" in text


@pytest.mark.parametrize("producer", list(PRODUCERS))
def test_the_regressed_release_fails_naming_the_skipped_check_and_the_duplicate_write(
    producer: str, traces: dict[str, Path], contracts: dict[str, Path]
) -> None:
    require(PRODUCERS[producer])
    code, text = _gate(contracts[producer], "2.0.0", traces[producer])
    assert code == 2, text
    found = _findings(text)
    assert ("MISSING_PREREQUISITE", "required.check_fraud") in found, text
    assert ("DUPLICATE_SIDE_EFFECT", "at_most.issue_refund") in found, text
    assert "issue_refund occurred 2 times; the contract permits at most 1 per run." in text


@pytest.mark.parametrize("producer", list(PRODUCERS))
def test_the_duplicate_only_release_fails_naming_the_duplicate(
    producer: str, traces: dict[str, Path], contracts: dict[str, Path]
) -> None:
    require(PRODUCERS[producer])
    code, text = _gate(contracts[producer], "2.1.0", traces[producer])
    assert code == 2, text
    found = _findings(text)
    assert ("DUPLICATE_SIDE_EFFECT", "at_most.issue_refund") in found, text
    assert not any(code == "MISSING_PREREQUISITE" for code, _ in found), text


AUTOGEN = [p for p in PRODUCERS if p.startswith("autogen_")]


@pytest.mark.parametrize("variant", list(RELEASES))
@pytest.mark.parametrize("producer", AUTOGEN)
def test_autogen_runs_and_tool_calls_equal_the_truth(
    producer: str, variant: str, traces: dict[str, Path]
) -> None:
    """However AutoGen cuts a run into traces (a trace per agent turn and per message in a team, joined
    by span links), every command reads as many runs as the agent made, each with the calls it made."""
    require(PRODUCERS[producer])
    release, runs = RELEASES[variant]
    code, out, err = cli("audit", "--format", "json", "--release", release, traces[producer])
    assert code == 3, err  # no provenance on the framework's own spans: the audit cannot pass
    read = json.loads(out)["runs"]
    assert len(read) == runs, err
    truth = sorted(tuple(name for name, _ in calls) for calls in refund.scripts(variant, runs))
    assert sorted(tuple(call["tool"] for call in run["calls"]) for run in read) == truth
    if producer == "autogen_team":
        assert re.search(r"span links joined \d+ trace\(s\) into \d+ run\(s\)", err), err


@pytest.mark.parametrize("producer", AUTOGEN)
def test_autogen_without_a_declaration_gates_every_release_right(
    producer: str, traces: dict[str, Path], tmp_path: Path
) -> None:
    """``mine`` without ``--write``: the duplicate is still caught, as a step count."""
    require(PRODUCERS[producer])
    contract = tmp_path / "c.yaml"
    code, _, err = cli("mine", "--approved", traces[producer], "--release", "1.0.0", "-o", contract)
    assert code == 0, err
    code, text = _gate(contract, "1.1.0", traces[producer])
    assert code == 0, text
    code, text = _gate(contract, "2.0.0", traces[producer])
    assert code == 2, text
    assert {
        ("MISSING_PREREQUISITE", "required.check_fraud"),
        ("UNEXPECTED_STEP_COUNT", "at_most.issue_refund"),
    } <= (_findings(text)), text
    code, text = _gate(contract, "2.1.0", traces[producer])
    assert code == 2, text
    found = _findings(text)
    assert ("UNEXPECTED_STEP_COUNT", "at_most.issue_refund") in found, text
    assert not any(code == "MISSING_PREREQUISITE" for code, _ in found), text


def test_without_a_declaration_the_duplicate_still_fails_as_a_step_count(
    traces: dict[str, Path], tmp_path: Path
) -> None:
    """No signal says issue_refund is a write: the bound is mined anyway, under the generic code."""
    require(PRODUCERS["openai_agents_openinference"])
    folder = traces["openai_agents_openinference"]
    contract = tmp_path / "c.yaml"
    code, _, err = cli("mine", "--approved", folder / "approved.jsonl", "-o", contract)
    assert code == 0, err
    code, text = _gate(contract, "2.1.0", folder)
    assert code == 2, text
    assert ("UNEXPECTED_STEP_COUNT", "at_most.issue_refund") in _findings(text)


def test_a_write_declared_for_a_tool_no_run_calls_is_refused(traces: dict[str, Path], tmp_path: Path) -> None:
    require(PRODUCERS["pydantic_ai_native"])
    folder = traces["pydantic_ai_native"]
    code, _, err = cli(
        "mine", "--approved", folder / "approved.jsonl", "--write", "issue_refnud", "-o", tmp_path / "c.yaml"
    )
    assert code == 1
    assert "--write issue_refnud: no approved run calls such a tool" in err
    assert "check_fraud, issue_refund, lookup_order, notify_customer" in err
    assert not (tmp_path / "c.yaml").exists()
