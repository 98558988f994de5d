"""`audit`, `diff`, `fingerprint` on real SDK output: the reference fixture, budgets, exit codes."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest
from opentelemetry.trace import format_span_id

from offline_helpers import (
    Arg,
    Recorder,
    reference_runs,
    span_id_hex,
    tool_attributes,
    write_jsonl,
    write_proto,
)
from otel_provenance import semconv
from otel_provenance.cli import run


class TTY(io.StringIO):
    def isatty(self) -> bool:
        return True


def cli(*argv: object, stderr: io.StringIO | None = None) -> tuple[int, str, str]:
    out, err = io.StringIO(), stderr if stderr is not None else io.StringIO()
    code = run([str(a) for a in argv], out, err)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture
def reference(tmp_path: Path) -> tuple[Path, Path, str]:
    good, bad = reference_runs()
    list_files = next(s for s in good if s.name == "execute_tool list_files")
    return (
        write_jsonl(good, tmp_path / "good.jsonl"),
        write_jsonl(bad, tmp_path / "bad.jsonl"),
        format_span_id(list_files.context.span_id),
    )


def test_audit_reference_fixture(reference: tuple[Path, Path, str]) -> None:
    good, bad, list_files_id = reference
    code, out, err = cli("audit", "--verbose", good, bad)  # every run call by call (#49)
    assert code == 2, err
    assert f"    path: observed from list_files files.0 (span {list_files_id})" in out
    assert "patch_file" in out and "status blocked  BLOCKED" in out
    assert "FAIL blocked_call: patch_file was blocked before it ran (comment=assumed, path=assumed)" in out
    assert out.rstrip().endswith("FAIL")
    assert cli("audit", good)[0] == 0
    assert cli("audit", bad)[0] == 2


def test_audit_json(reference: tuple[Path, Path, str]) -> None:
    good, bad, list_files_id = reference
    code, out, _ = cli("audit", "--format", "json", good, bad)
    doc = json.loads(out)
    assert code == 2 and doc["verdict"] == "fail" and doc["complete_input"] is True
    calls = [c for r in doc["runs"] for c in r["calls"]]
    path_args = [a for c in calls for a in c["args"] if a["name"] == "path"]
    assert {(a["kind"], a["source_tool"], a["source_span_id"]) for a in path_args} == {
        ("observed", "list_files", list_files_id),
        ("assumed", None, None),
    }
    assert [f["code"] for r in doc["runs"] for f in r["findings"]] == ["blocked_call"]


def test_diff_reference_fixture(reference: tuple[Path, Path, str]) -> None:
    good, bad, _ = reference
    code, out, _ = cli("diff", good, bad)
    assert code == 0
    assert "    path: observed → assumed" in out and "    status: ok → blocked" in out
    assert "comment" not in out  # unchanged kinds are not reported
    assert out.rstrip().endswith("1 changed, 0 appeared, 0 disappeared, 1 unchanged")
    code, out, _ = cli("diff", "--format", "json", good, bad)
    doc = json.loads(out)
    (changed,) = [p for p in doc["pairs"] if p["changed"]]
    assert changed["changes"] == [{"arg": "path", "before": "observed", "after": "assumed"}]


def test_diff_pairs_repeated_calls_optimally_and_reports_appeared(tmp_path: Path) -> None:
    def record(kinds: list[str], extra: bool) -> Path:
        rec = Recorder()
        with rec.span("agent") as root:
            for kind in kinds:
                with rec.span(
                    "execute_tool fetch", tool_attributes("fetch", {"url": Arg(kind)}), parent=root
                ):
                    pass
            if extra:
                with rec.span(
                    "execute_tool delete", tool_attributes("delete", {"path": Arg("invented")}), parent=root
                ):
                    pass
        return write_jsonl(rec.spans(), tmp_path / f"{len(kinds)}{extra}.jsonl")

    a = record(["assumed", "observed"], extra=False)
    b = record(["observed", "observed", "assumed"], extra=True)
    code, out, _ = cli("diff", a, b)
    assert code == 0
    assert "→ assumed" not in out and "observed → " not in out  # both A calls find an identical partner
    assert "+ delete" in out and "(only in B)  path=invented" in out and "+ fetch" in out
    assert out.rstrip().endswith("0 changed, 2 appeared, 0 disappeared, 2 unchanged")


def test_diff_needs_one_run_per_side(reference: tuple[Path, Path, str], tmp_path: Path) -> None:
    good, bad, _ = reference
    both = tmp_path / "both.jsonl"
    both.write_bytes(good.read_bytes() + bad.read_bytes())
    code, _, err = cli("diff", both, bad)
    assert code == 1 and "holds 2 runs" in err and "--run-a" in err
    run_id = json.loads(cli("audit", "--format", "json", good)[1])["runs"][0]["run_id"]
    assert cli("diff", "--run-a", run_id, both, bad)[0] == 0


def test_fingerprint_command(reference: tuple[Path, Path, str]) -> None:
    good, bad, _ = reference
    code, out, _ = cli("fingerprint", good, bad)
    lines = out.splitlines()
    assert code == 0 and len(lines) == 2
    fingerprints = {line.split()[1] for line in lines}
    assert len(fingerprints) == 1 and next(iter(fingerprints)).startswith("v1:")  # same route, blocked or not
    assert all(line.endswith("  3 steps") for line in lines)
    code, out, _ = cli("fingerprint", "--canonical", good)
    assert out.splitlines()[1:] == ['    "invoke_agent fixer"', '      "list_files"', '      "patch_file"']
    doc = json.loads(cli("fingerprint", "--format", "json", "--canonical", good)[1])
    assert doc["runs"][0]["canonical"].startswith('"invoke_agent fixer"\n')


def _single_tool(tmp_path: Path, attrs: dict, name: str = "t.jsonl") -> Path:
    rec = Recorder()
    with rec.span("agent") as root, rec.span("execute_tool x", attrs, parent=root):
        pass
    return write_jsonl(rec.spans(), tmp_path / name)


def test_budgets_from_flags(tmp_path: Path, reference: tuple[Path, Path, str]) -> None:
    good, _, _ = reference
    code, out, _ = cli("audit", "--max-assumed", "0", good)
    assert code == 2 and "assumed_over_budget: patch_file: 1 assumed argument(s) (comment), budget 0" in out
    assert cli("audit", "--max-assumed", "0", "--allow", "comment", good)[0] == 0
    assert cli("audit", "--max-assumed", "0", "--budget", "patch_file=1", good)[0] == 0
    assert cli("audit", "--budget", "patch_file", good)[0] == 1
    assert cli("audit", "--max-assumed", "-1", good)[0] == 1
    invented = _single_tool(tmp_path, tool_attributes("x", {"q": Arg("invented")}))
    code, out, _ = cli("audit", "--verbose", invented)
    assert code == 0 and "q: invented (review)" in out and "review (invented arguments): x.q" in out
    assert cli("audit", "--max-invented", "0", invented)[0] == 2


def test_dangling_source_fails(tmp_path: Path) -> None:
    path = _single_tool(
        tmp_path, tool_attributes("x", {"p": Arg("observed", "list_files", "0", "00000000000000ff")})
    )
    code, out, _ = cli("audit", path)
    assert code == 2 and "dangling_source: x: source of p (00000000000000ff) is not in the run" in out


def test_source_that_had_not_finished_is_dangling(tmp_path: Path) -> None:
    rec = Recorder()
    with (
        rec.span("execute_tool outer", tool_attributes("outer", {})) as outer,
        rec.span(
            "execute_tool inner",
            tool_attributes("inner", {"p": Arg("observed", "outer", "x", span_id_hex(outer))}),
            parent=outer,
        ),
    ):
        pass
    code, out, _ = cli("audit", write_jsonl(rec.spans(), tmp_path / "t.jsonl"))
    assert code == 2 and "had not finished when the call started" in out


@pytest.mark.parametrize(
    ("attrs", "expect"),
    [
        ({semconv.GEN_AI_OPERATION_NAME: "execute_tool", semconv.GEN_AI_TOOL_NAME: "x"}, "no_provenance"),
        (tool_attributes("x", {"p": Arg("guessed")}), "unknown_kind"),
        ({semconv.GEN_AI_OPERATION_NAME: semconv.INVOKE_AGENT}, "no_tool_calls"),  # an agent run, no tool
    ],
)
def test_insufficient_evidence_exits_3(tmp_path: Path, attrs: dict, expect: str) -> None:
    code, out, _ = cli("audit", _single_tool(tmp_path, attrs))
    assert code == 3 and expect in out and out.rstrip().endswith("INSUFFICIENT")


def test_zero_runs_exit_3(tmp_path: Path) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    assert cli("audit", empty)[0] == 3
    assert cli("fingerprint", empty)[0] == 3
    assert cli("audit", "--release", "nope", _single_tool(tmp_path, tool_attributes("x", {})))[0] == 3
    # a trace that is no agent run (neither an agent span nor a tool call) is left out, and said so
    code, out, err = cli("audit", _single_tool(tmp_path, {"plain": "span"}))
    assert code == 3 and "INSUFFICIENT no_runs: the input holds no run" in out
    assert "left out 1 trace(s) that are no agent run" in err


def test_zero_argument_tool_with_budget_counters_is_instrumented(tmp_path: Path) -> None:
    attrs = tool_attributes("now", {}, **{semconv.BUDGET_ASSUMED: 0, semconv.BUDGET_INVENTED: 0})
    code, out, _ = cli("audit", "--verbose", _single_tool(tmp_path, attrs))
    assert code == 0 and "(no arguments)" in out


def test_a_status_alone_is_not_provenance(tmp_path: Path) -> None:
    # e.g. a foreign tool span whose arguments were never recorded: it ran, nothing was classified
    code, _, _ = cli("audit", _single_tool(tmp_path, tool_attributes("wire_money", {})))
    assert code == 3


def test_lost_argument_kinds_are_never_a_pass(tmp_path: Path) -> None:
    # The span counts one assumed argument, but its agent.arg.* attributes were evicted.
    attrs = tool_attributes("read", {}, **{semconv.BUDGET_ASSUMED: 1, semconv.BUDGET_INVENTED: 0})
    code, out, _ = cli("audit", "--max-assumed", "0", _single_tool(tmp_path, attrs))
    assert code == 3 and "lost" in out


def test_violations_recorded_in_advisory_mode_fail_the_audit(tmp_path: Path) -> None:
    attrs = tool_attributes(
        "patch_file",
        {"path": Arg("assumed")},
        **{semconv.BUDGET_ASSUMED: 1, semconv.VIOLATIONS: ("max_assumed:path=assumed",)},
    )
    code, out, _ = cli("audit", _single_tool(tmp_path, attrs))
    assert code == 2 and "recorded violations" in out


def test_incomplete_input_never_passes(reference: tuple[Path, Path, str], tmp_path: Path) -> None:
    good, bad, _ = reference
    torn = tmp_path / "torn.jsonl"
    data = good.read_bytes()
    torn.write_bytes(data + data.splitlines(keepends=True)[0][:40])  # a cut line after complete ones
    code, out, err = cli("audit", "--verbose", torn)
    assert code == 3 and "incomplete input" in err and "cannot pass" in err
    assert "patch_file" in out  # the complete lines were read
    torn_bad = tmp_path / "torn_bad.jsonl"
    torn_bad.write_bytes(bad.read_bytes() + b'{"resourceSpans":[{"res')
    assert cli("audit", torn_bad)[0] == 2  # a failure found in the complete part stands
    assert cli("fingerprint", torn)[0] == 3
    assert cli("diff", torn, bad)[0] == 3
    doc = json.loads(cli("audit", "--format", "json", torn)[1])
    assert doc["complete_input"] is False and doc["verdict"] == "pass" and doc["exit_code"] == 3


def test_unreadable_input_exits_1(tmp_path: Path) -> None:
    garbage = tmp_path / "g.jsonl"
    garbage.write_text('{"resourceSpans": 5}\n')
    for command in ("audit", "fingerprint"):
        code, out, err = cli(command, garbage)
        assert code == 1 and out == "" and "resourceSpans is not an array" in err
    assert cli("audit", tmp_path / "missing.jsonl")[0] == 1
    assert cli("diff", garbage, garbage)[0] == 1


def test_protobuf_input_reads_the_same(reference: tuple[Path, Path, str], tmp_path: Path) -> None:
    good_spans, bad_spans = reference_runs()
    pb = write_proto(good_spans + bad_spans, tmp_path / "all.pb")
    jsonl = write_jsonl(good_spans + bad_spans, tmp_path / "all.jsonl", batch=4)
    assert cli("audit", pb)[1] == cli("audit", jsonl)[1]
    assert cli("fingerprint", pb)[1] == cli("fingerprint", jsonl)[1]


def test_progress_only_on_a_terminal(reference: tuple[Path, Path, str]) -> None:
    good, _, _ = reference
    assert cli("audit", good)[2] == ""
    tty = TTY()
    code, _, err = cli("audit", good, stderr=tty)
    assert code == 0 and "%" in err and "\r" in err


def test_real_subprocess(reference: tuple[Path, Path, str]) -> None:
    good, bad, _ = reference
    exe = Path(sys.executable).with_name("otel-provenance")
    done = subprocess.run(
        [str(exe), "audit", "--verbose", str(good), str(bad)], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 2 and "path: observed from list_files" in done.stdout and done.stderr == ""
