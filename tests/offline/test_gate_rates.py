"""Failing-run rates with a confidence (#38): releases with known failing rates over 5 to 200 runs.

A rule "fail when the failing-run rate is above 1/10 with 95 % confidence" must never fail a release
that never fails, must fail a release that fails 30 % of its runs once there are enough runs, and
otherwise says INSUFFICIENT with the further runs that could decide — in every report format. The
sweep runs the gate's own functions on evaluated runs; some sizes go through real trace files
written by the OTel SDK and the CLI, sharded and merged as well as in one process.
"""

from __future__ import annotations

import io
import json
import random
import xml.etree.ElementTree as ET
from fractions import Fraction
from functools import cache, reduce
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from contract_runs import AT, export_runs, triage_run
from otel_provenance.cli import run as cli_run
from otel_provenance.offline.aggregate import Aggregate
from otel_provenance.offline.contracts import parse_contract
from otel_provenance.offline.contracts.confidence import at_least_tail, at_most_tail
from otel_provenance.offline.evaluate import evaluate_safely
from otel_provenance.offline.gate import Shard, check_release, decide
from otel_provenance.offline.report import (
    render_json,
    render_junit,
    render_markdown,
    render_sarif,
    render_text,
)
from otel_provenance.offline.report.html import render_html
from otel_provenance.offline.runs import group_runs

RATE_CONTRACT = """\
version: 1
name: triage-rates
gate:
  max_failing_rate: "1/10"
  confidence: "0.95"
rules:
  - id: skipped_check
    type: required_spans
    select: {step: permissions.check}
"""
RATES = {"0%": Fraction(0), "5%": Fraction(5, 100), "30%": Fraction(30, 100)}
ALPHA = Fraction(5, 100)


def _fails(i: int, rate: Fraction) -> bool:
    """Run ``i`` fails when the count of failing runs at ``rate`` steps up: every prefix of ``n``
    runs then holds exactly ``floor(n · rate)`` failing runs, a known rate with no randomness."""
    return (i + 1) * rate // 1 > i * rate // 1


def _runs(rate: Fraction, n: int, release: str = "v2"):
    return [triage_run(f"r{i:03d}", release, skip_check=_fails(i, rate)) for i in range(n)]


@cache
def _results(label: str):
    contract = parse_contract(RATE_CONTRACT)
    return contract, [evaluate_safely(run, contract) for run in _runs(RATES[label], 200)]


def _decided(label: str, n: int):
    contract, results = _results(label)
    aggregate = Aggregate.empty(contract.digest, (r.id for r in contract.rules), "v2", AT)
    aggregate = aggregate.add_all(results[:n]).with_steps_seen({"permissions.check"}, tool_spans=n)
    return decide(aggregate, contract)


def _expected(failing: int, n: int) -> str:
    """The decision by the textbook definition, summed term by term (independent of the gate's code)."""
    from math import comb

    p = Fraction(1, 10)
    upper = sum(comb(n, i) * p**i * (1 - p) ** (n - i) for i in range(failing, n + 1))
    lower = sum(comb(n, i) * p**i * (1 - p) ** (n - i) for i in range(0, failing + 1))
    return "fail" if upper <= ALPHA else "pass" if lower <= ALPHA else "insufficient_data"


@pytest.mark.parametrize("label", sorted(RATES))
def test_the_sweep_over_5_to_200_runs(label: str) -> None:
    rate = RATES[label]
    decisions = {}
    for n in range(5, 201):
        result = _decided(label, n)
        failing = n * rate // 1
        assert result.decision == _expected(int(failing), n), (label, n)
        verdict = result.verdicts[0]
        assert (verdict.rate.judgement.runs, verdict.rate.judgement.failing) == (n, failing)
        if result.decision == "insufficient_data":
            to_pass, to_fail = result.further_runs
            assert to_fail is not None and to_fail >= 1
            assert to_pass is not None and to_pass >= 1
            assert f"{to_pass} more run(s) could pass it" in render_text(result)
        decisions[n] = result.decision
    if label == "0%":
        assert "fail" not in decisions.values()
        assert decisions[28] == "insufficient_data" and decisions[29] == "pass"  # 0.9^29 ≤ 1/20 < 0.9^28
        assert all(d == "pass" for n, d in decisions.items() if n >= 29)
    elif label == "5%":
        assert "fail" not in decisions.values() and decisions[200] == "pass"
    else:  # small samples sway (4 of 14 fail it, 4 of 15 do not); from 17 runs on it always fails
        assert "pass" not in decisions.values()
        assert max(n for n, d in decisions.items() if d != "fail") == 16
        assert decisions[14] == "fail" and decisions[15] == "insufficient_data"


def test_the_further_runs_are_the_fewest_that_decide() -> None:
    """At 0 failing of 5 runs, 24 more passing runs make 29 (0.9^29 ≤ 1/20), 23 do not; at 3 failing
    of 20, 3 more failing runs fail the rule and 2 do not."""
    p = Fraction(1, 10)
    zero = _decided("0%", 5).verdicts[0].rate
    assert zero.runs_to_pass == 24
    assert at_most_tail(0, 5 + 24, p) <= ALPHA < at_most_tail(0, 5 + 23, p)
    contract = parse_contract(RATE_CONTRACT)
    runs = [triage_run(f"x{i}", "v2", skip_check=i < 3) for i in range(20)]
    rate = decide(check_release(runs, contract, "v2", AT), contract).verdicts[0].rate
    assert at_least_tail(3 + rate.runs_to_fail, 20 + rate.runs_to_fail, p) <= ALPHA
    assert at_least_tail(3 + rate.runs_to_fail - 1, 20 + rate.runs_to_fail - 1, p) > ALPHA
    assert (
        at_most_tail(3, 20 + rate.runs_to_pass, p) <= ALPHA < at_most_tail(3, 20 + rate.runs_to_pass - 1, p)
    )


def test_every_report_format_names_the_further_runs() -> None:
    result = _decided("0%", 10)
    assert result.decision == "insufficient_data"
    to_pass, to_fail = result.further_runs
    phrase = f"{to_pass} more run(s) could pass it"
    assert phrase in render_text(result) and phrase in render_markdown(result)
    assert phrase in render_html(result, {})
    data = json.loads(render_json(result))
    assert data["further_runs"] == {"to_pass": to_pass, "to_fail": to_fail}
    rule = data["rules"][0]
    assert rule["thresholds"] == {
        "confidence": "19/20",
        "max_failing_rate": "1/10",
        "max_insufficient_fraction": "0",
    }
    assert rule["rate"]["runs_to_pass"] == to_pass and rule["rate"]["runs"] == 10
    assert rule["rate"]["pass_tail"] == "0.348678"  # 0.9^10, rounded for reading
    skipped = ET.fromstring(render_junit(result)).find(".//skipped")
    assert skipped is not None and phrase in skipped.get("message")
    sarif = json.loads(render_sarif(result, "c.yaml"))
    (rate_result,) = sarif["runs"][0]["results"]
    assert rate_result["level"] == "warning" and phrase in rate_result["message"]["text"]
    assert rate_result["properties"]["rate"]["runs_to_fail"] == to_fail
    assert sarif["runs"][0]["properties"]["further_runs"] == {"to_pass": to_pass, "to_fail": to_fail}


def test_a_failing_rate_reports_the_rate_and_the_failing_runs() -> None:
    result = _decided("30%", 40)
    assert result.decision == "fail"
    text = render_text(result)
    assert (
        "MISSING_PREREQUISITE (skipped_check) 12 failing of 40 run(s): the failing-run rate is above " in text
    )
    assert "0.1 at 95 % confidence." in text
    assert text.count("occurred 0 time(s)") == 1  # the runs' finding, once, with its proofs
    sarif = json.loads(render_sarif(result))
    assert [r["level"] for r in sarif["runs"][0]["results"]].count("error") == 13  # the rate and 12 runs


def test_runs_without_evidence_count_against_each_verdict() -> None:
    """An unknown run is a failing one for the pass test and a passing one for the fail test, and a
    contract that allows no run without evidence cannot pass however many runs follow."""
    text = RATE_CONTRACT.replace(
        'confidence: "0.95"', 'confidence: "0.95"\n  max_insufficient_fraction: "1/5"'
    )
    contract = parse_contract(text)
    runs = [triage_run(f"p{i}", "v2") for i in range(40)] + [triage_run("u", "v2", orphan=True)]
    runs += [triage_run("u2", "v2", orphan=True, skip_check=True)]
    rule = decide(check_release(runs, contract, "v2", AT), contract).verdicts[0]
    assert rule.tally.count("insufficient_evidence") >= 1
    judgement = rule.rate.judgement
    assert judgement.pass_tail == at_most_tail(judgement.failing + judgement.unknown, 42, Fraction(1, 10))
    strict = parse_contract(RATE_CONTRACT)
    verdict = decide(check_release(runs, strict, "v2", AT), strict).verdicts[0]
    assert verdict.status == "insufficient_data" and verdict.rate.runs_to_pass is None
    assert "no number of further runs can pass it" in verdict.reason


def _cli(*argv) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = cli_run([str(a) for a in argv], out, err)
    return code, out.getvalue(), err.getvalue()


@pytest.mark.parametrize(("label", "n", "code"), [("0%", 5, 3), ("30%", 30, 2), ("0%", 30, 0), ("5%", 20, 3)])
def test_real_trace_files_through_the_cli(tmp_path: Path, label: str, n: int, code: int) -> None:
    traces = tmp_path / "traces.jsonl"
    export_runs(_runs(RATES[label], n), str(traces))
    contract = tmp_path / "c.yaml"
    contract.write_text(RATE_CONTRACT)
    reports = {
        "--report-json": tmp_path / "g.json",
        "--junit": tmp_path / "g.xml",
        "--sarif": tmp_path / "g.sarif",
        "--markdown": tmp_path / "g.md",
        "--report-html": tmp_path / "g.html",
    }
    flags = [part for flag, path in reports.items() for part in (flag, path)]
    exit_code, out, err = _cli(
        "gate", "check", "--contract", contract, "--release", "v2", "--completed-at", AT, traces, *flags
    )
    assert exit_code == code, err
    data = json.loads(reports["--report-json"].read_text())
    assert data["runs"]["evaluated"] == n
    if code == 3:
        to_pass = data["further_runs"]["to_pass"]
        phrase = f"{to_pass} more run(s) could pass it"
        for path in (reports["--junit"], reports["--sarif"], reports["--markdown"], reports["--report-html"]):
            assert phrase in path.read_text(), path
        assert phrase in out
    else:
        assert "further_runs" not in data

    # sharded and merged: the same reports and the same exit code as one process
    partials = []
    for i in (1, 2, 3):
        partial = tmp_path / f"p{i}.json"
        assert (
            _cli(
                "gate",
                "check",
                "--contract",
                contract,
                "--release",
                "v2",
                "--completed-at",
                AT,
                "--shard",
                f"{i}/3",
                "--partial",
                partial,
                traces,
            )[0]
            == 0
        )
        partials.append(partial)
    merged = tmp_path / "merged.json"
    assert (
        _cli("gate", "merge", "--contract", contract, *reversed(partials), "--report-json", merged)[0] == code
    )
    assert merged.read_bytes() == reports["--report-json"].read_bytes()


# -- the same evidence, the same bytes -----------------------------------------------------------

_VARIANTS = ({}, {"skip_check": True}, {"orphan": True}, {"writes": 2})
_SHUFFLE_CONTRACT = RATE_CONTRACT.replace(
    'confidence: "0.95"', 'confidence: "0.95"\n  max_insufficient_fraction: "1/4"'
) + (
    "  - id: one_write\n    type: cardinality\n    select: {step: ticket.update}\n    max: 1\n"
    '    thresholds: {max_failing_rate: "1/5", confidence: "9/10"}\n'
)


def _every_report(spans, shards: int = 1) -> tuple[str, ...]:
    contract = parse_contract(_SHUFFLE_CONTRACT, "c.yaml")
    runs = group_runs(spans)
    parts = [
        Aggregate.from_json(
            check_release(runs, contract, "v2", AT, Shard(i, shards)).for_shard(i, shards).to_json(), "p"
        )
        for i in range(1, shards + 1)
    ]
    aggregate = reduce(lambda a, b: a.merge(b), parts)
    if shards == 1:
        aggregate = check_release(runs, contract, "v2", AT)
    result = decide(aggregate, contract)
    return (
        render_text(result),
        render_json(result),
        render_junit(result),
        render_sarif(result, "c.yaml"),
        render_markdown(result),
        render_html(result, {}),
    )


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    variants=st.lists(st.sampled_from(range(len(_VARIANTS))), min_size=0, max_size=40),
    seed=st.integers(0, 2**32),
    shards=st.integers(1, 4),
)
def test_shuffled_runs_and_sharded_merges_give_byte_identical_reports(variants, seed, shards) -> None:
    spans = [s for i, v in enumerate(variants) for s in triage_run(f"r{i}", "v2", **_VARIANTS[v]).spans]
    baseline = _every_report(spans)
    shuffled = list(spans)
    random.Random(seed).shuffle(shuffled)
    assert _every_report(shuffled, shards) == baseline  # HTML draws no run here: {} in both


def test_further_runs_are_named_only_when_more_runs_of_the_release_could_decide() -> None:
    contract = parse_contract(RATE_CONTRACT)
    none_of_release = decide(check_release(_runs(RATES["0%"], 3, "v1"), contract, "v2", AT), contract)
    assert none_of_release.decision == "insufficient_data" and none_of_release.further_runs is None
    assert "further_runs" not in json.loads(render_json(none_of_release))
    few = RATE_CONTRACT.replace("gate:\n", "gate:\n  min_runs: 40\n")
    short = parse_contract(few)
    result = decide(check_release(_runs(RATES["0%"], 10), short, "v2", AT), short)
    assert result.decision == "insufficient_data" and result.further_runs == (30, result.further_runs[1])
    assert result.reason.startswith("10 run(s) found; the contract needs 40; 30 more run(s) could pass it")


def test_an_undecided_rate_lists_its_failing_runs_as_the_evidence_so_far() -> None:
    result = _decided("30%", 12)  # 3 failing of 12: neither shown above nor at most 1/10
    assert result.decision == "insufficient_data"
    failing = [triage_run(f"r{i:03d}", "v2") for i in range(12) if _fails(i, RATES["30%"])]
    traces = [run.trace_ids[0] for run in failing]
    assert len(traces) == 3
    for report in (
        render_text(result),
        render_junit(result),
        render_markdown(result),
        render_html(result, {}),
    ):
        assert all(trace in report for trace in traces)
    assert "3 failing of 12 run(s): the runs show the failing-run rate neither above nor at most 0.1" in (
        render_text(result)
    )


def test_an_undecided_rate_draws_its_failing_runs_in_the_html_report(tmp_path: Path) -> None:
    """The evidence so far is drawn, not only listed: a person sees what the failing runs did while
    the rate is undecided (the three failing runs are alike: drawn once, the others counted)."""
    traces = tmp_path / "traces.jsonl"
    export_runs(_runs(RATES["30%"], 12), str(traces))
    contract = tmp_path / "c.yaml"
    contract.write_text(RATE_CONTRACT)
    page = tmp_path / "g.html"
    code, _, err = _cli(
        "gate", "check", "--contract", contract, "--release", "v2", "--completed-at", AT, traces,
        "--report-html", page,
    )  # fmt: skip
    assert code == 3, err
    html = page.read_text()
    assert html.count('class="run"') == 1 and "<svg" in html
    assert "Drawn once for 3 identical runs" in html


TIE_CONTRACT = RATE_CONTRACT.replace('max_failing_rate: "1/10"', 'max_failing_rate: "1/2"').replace(
    'confidence: "0.95"', 'confidence: "3/4"'
)


@pytest.mark.parametrize(
    ("failing", "n", "code", "further"),
    [
        (2, 2, 2, None),  # P(X >= 2 | 2, 1/2) = 1/4 = alpha: fails, exactly at the tie
        (0, 2, 0, None),  # P(X <= 0 | 2, 1/2) = 1/4 = alpha: passes, exactly at the tie
        (1, 1, 3, ("to_fail", 1)),  # one more failing run makes 2 of 2: the tie, and a fail
        (0, 1, 3, ("to_pass", 1)),  # one more passing run makes 0 of 2: the tie, and a pass
    ],
    ids=["fail-at-the-tie", "pass-at-the-tie", "one-run-to-the-fail-tie", "one-run-to-the-pass-tie"],
)
def test_a_tail_probability_equal_to_alpha_decides(tmp_path: Path, failing, n, code, further) -> None:
    """#50: the rule fails when P(X >= k) <= alpha and passes when P(X <= k) <= alpha — "at most", so
    a tail exactly at alpha (rate 1/2, confidence 3/4: alpha 1/4) decides, at the CLI and in the count
    of further runs that would."""
    runs = [triage_run(f"t{i}", "v2", skip_check=i < failing) for i in range(n)]
    traces = tmp_path / "traces.jsonl"
    export_runs(runs, str(traces))
    contract = tmp_path / "c.yaml"
    contract.write_text(TIE_CONTRACT)
    report = tmp_path / "g.json"
    exit_code, _, err = _cli(
        "gate", "check", "--contract", contract, "--release", "v2", "--completed-at", AT, traces,
        "--report-json", report,
    )  # fmt: skip
    assert exit_code == code, err
    data = json.loads(report.read_text())
    if further is not None:
        assert data["further_runs"][further[0]] == further[1]
