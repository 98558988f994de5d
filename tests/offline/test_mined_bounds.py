"""Mined bounds on every step an approved run took, and how the gate reads a step no run of a release
takes (#47): a mined bound on an optional step holds; a hand-written rule on a step no run takes is
still insufficient, with the misspelling hint.

Runs are written by the real SDK the way agent frameworks write them (an ``invoke_agent`` root and
``execute_tool`` spans, no ``agent.*`` attribute), read back from OTLP JSON Lines by the command line.
"""

from __future__ import annotations

import io
from pathlib import Path

import yaml

from offline_helpers import Recorder, write_jsonl
from otel_provenance import semconv
from otel_provenance.cli import run as cli_run

COMMON = ["fetch", "build", "test"]
WITH_LINT = ["fetch", "build", "lint", "test"]
MISSPELLED = "(a misspelled step?)"


def cli(*argv: object) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    code = cli_run([str(a) for a in argv], out, err)
    return code, out.getvalue() + err.getvalue()


def _write(path: Path, release: str, routes: list[list[str]]) -> Path:
    rec = Recorder(release=release)
    for tools in routes:
        with rec.span("invoke_agent ci", {semconv.GEN_AI_OPERATION_NAME: semconv.INVOKE_AGENT}) as root:
            for tool in tools:
                attributes = {
                    semconv.GEN_AI_OPERATION_NAME: semconv.EXECUTE_TOOL,
                    semconv.GEN_AI_TOOL_NAME: tool,
                }
                with rec.span(f"execute_tool {tool}", attributes, parent=root):
                    pass
    return write_jsonl(rec.spans(), path)


def _rules(contract: Path) -> dict[str, dict]:
    return {r["id"]: r for r in yaml.safe_load(contract.read_text())["rules"]}


def _gate(contract: Path, release: str, traces: Path) -> tuple[int, str]:
    at = ("--completed-at", "2026-12-01T00:00:00Z")
    return cli("gate", "check", "--contract", contract, "--release", release, *at, traces)


def _with_rule(contract: Path, rule: dict, out: Path) -> Path:
    document = yaml.safe_load(contract.read_text())
    document["rules"].append(rule)
    document.pop("seal")  # edited by hand: no longer the miner's sealed text
    out.write_text(yaml.safe_dump(document, sort_keys=False))
    return out


def test_a_release_taking_only_the_common_route_passes_a_contract_with_an_optional_step(
    tmp_path: Path,
) -> None:
    approved = _write(tmp_path / "approved.jsonl", "1.0.0", [COMMON] * 20 + [WITH_LINT] * 5)
    contract = tmp_path / "c.yaml"
    code, text = cli("mine", "--approved", approved, "-o", contract)
    assert code == 0, text
    rules = _rules(contract)
    assert (rules["at_most.lint"]["max"], rules["at_most.lint"]["support"]) == (1, 5)  # the optional step
    assert "required.lint" not in rules

    common = _write(tmp_path / "common.jsonl", "2.0.0", [COMMON] * 5)
    code, text = _gate(contract, "2.0.0", common)
    assert code == 0, text
    assert MISSPELLED not in text

    # the bound still bounds: a release that lints twice fails it
    twice = _write(tmp_path / "twice.jsonl", "3.0.0", [[*WITH_LINT, "lint"]] * 5)
    code, text = _gate(contract, "3.0.0", twice)
    assert code == 2 and "(at_most.lint) lint occurred 2 times" in text, text


def test_a_hand_written_rule_on_a_step_no_approved_run_had_is_still_insufficient(tmp_path: Path) -> None:
    approved = _write(tmp_path / "approved.jsonl", "1.0.0", [COMMON] * 20 + [WITH_LINT] * 5)
    mined = tmp_path / "c.yaml"
    assert cli("mine", "--approved", approved, "-o", mined)[0] == 0
    common = _write(tmp_path / "common.jsonl", "2.0.0", [COMMON] * 5)
    for step in ("lnit", "lint"):  # a typo, and a rule a person wrote on the optional step
        rule = {"id": f"hand.{step}", "type": "cardinality", "select": {"step": step}, "max": 1}
        contract = _with_rule(mined, rule, tmp_path / f"{step}.yaml")
        code, text = _gate(contract, "2.0.0", common)
        assert code == 3, text
        assert (
            f"(hand.{step}) selects step '{step}', which no run of this release contains {MISSPELLED}" in text
        )


def test_mine_write_bounds_steps_that_only_pending_families_take_and_says_so(tmp_path: Path) -> None:
    """Traces cut one run per tool call (a team read trace by trace): four families tie, each of one
    tool. Every declared write is bounded all the same, and mine says why the contract looks so."""
    tools = ("lookup_order", "check_fraud", "issue_refund", "notify_customer")
    approved = _write(tmp_path / "approved.jsonl", "1.0.0", [[tool] for tool in tools] * 10)
    contract = tmp_path / "c.yaml"
    writes = [arg for tool in tools for arg in ("--write", tool)]
    code, text = cli("mine", "--approved", approved, *writes, "-o", contract)
    assert code == 0, text
    rules = _rules(contract)
    for tool in tools:
        bound = rules[f"at_most.{tool}"]
        assert (bound["code"], bound["max"], bound["support"]) == ("DUPLICATE_SIDE_EFFECT", 1, 10)
    assert "4 route families tie at 10 run(s) each" in text
    (families,) = [r["families"] for r in rules.values() if r["type"] == "approved_routes"]
    (mined,) = [f for f in families if f["status"] == "approved"]
    elsewhere = sorted(set(tools) - set(mined["steps"]))
    assert len(elsewhere) == 3
    assert f"no run of the approved family {mined['id']} takes 3 tool step(s)" in text
    assert all(f"{tool} (--write) in route-" in text for tool in elsewhere)

    twice = _write(tmp_path / "twice.jsonl", "2.0.0", [[elsewhere[0]] * 2] * 3)
    code, text = _gate(contract, "2.0.0", twice)
    assert code == 2 and f"(at_most.{elsewhere[0]}) {elsewhere[0]} occurred 2 times" in text, text


def test_one_route_family_mines_without_notes(tmp_path: Path) -> None:
    approved = _write(tmp_path / "approved.jsonl", "1.0.0", [COMMON] * 5)
    code, text = cli("mine", "--approved", approved, "-o", tmp_path / "c.yaml")
    assert code == 0 and "warning" not in text, text
