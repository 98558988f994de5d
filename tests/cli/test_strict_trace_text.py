"""Strict Unicode and ids at the readers, seen from the commands (issue #36): a lone surrogate in a
trace file was accepted and crashed ``audit``/``diff`` when they printed it; an all-zero parent id
read as "no parent". Both are refused now, with ``file:line`` (JSON) or the record (protobuf)."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

from blocking_agent import write_runs
from offline_helpers import Recorder
from otel_provenance.cli import run as cli_run


def cli(*argv: object) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = cli_run([str(a) for a in argv], out, err)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_runs(tmp_path_factory.mktemp("strict") / "v1.jsonl", "v1", 1, "bad")


def _spelled(exported: Path, tmp_path: Path, old: str, new: str) -> Path:
    text = exported.read_text()
    assert old in text
    path = tmp_path / "t.jsonl"
    path.write_text(text.replace(old, new, 1))
    return path


@pytest.mark.parametrize("command", [("audit",), ("fingerprint",), ("diff",)], ids=lambda c: c[0])
def test_a_lone_surrogate_is_refused_naming_file_and_line(exported, tmp_path: Path, command) -> None:
    bad = _spelled(exported, tmp_path, '"stringValue":"patch_file"', '"stringValue":"patch_\\ud800file"')
    line = 1 + next(i for i, text in enumerate(bad.read_text().splitlines()) if "\\ud800" in text)
    inputs = (bad, exported) if command[0] == "diff" else (bad,)
    code, out, err = cli(*command, *inputs)
    assert code == 1, out + err
    assert f"{bad}:{line}: the string at resourceSpans[0].scopeSpans[0].spans[0].attributes[" in err
    assert "holds a lone surrogate (not valid Unicode)" in err and "internal error" not in err
    (out + err).encode("utf-8")  # printable: what was said holds no surrogate


def test_a_surrogate_pair_is_one_character_and_reads(exported, tmp_path: Path) -> None:
    good = _spelled(exported, tmp_path, '"stringValue":"patch_file"', '"stringValue":"patch_\\ud83d\\ude00"')
    code, out, err = cli("audit", good)
    assert code == 2, err  # the blocked call, read and judged
    assert "patch_\U0001f600" in out


def test_a_lone_surrogate_in_a_json_document_is_refused(exported, tmp_path: Path) -> None:
    doc = json.loads(exported.read_text().splitlines()[0])
    doc["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["name"] = "x\ud800"
    path = tmp_path / "doc.json"
    path.write_text(json.dumps(doc, indent=2))
    code, _, err = cli("audit", path)
    assert code == 1 and f"{path}: the string at resourceSpans[0].scopeSpans[0].spans[0].name" in err


def test_an_all_zero_parent_id_in_json_is_refused(exported, tmp_path: Path) -> None:
    text = exported.read_text()
    parent = json.loads(text.splitlines()[0])["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["parentSpanId"]
    bad = _spelled(exported, tmp_path, f'"parentSpanId":"{parent}"', '"parentSpanId":"0000000000000000"')
    code, out, err = cli("audit", bad)
    assert code == 1, out + err
    assert f"{bad}:1: " in err and "parentSpanId is all zeros (invalid)" in err


def test_an_all_zero_parent_id_in_protobuf_is_refused(tmp_path: Path) -> None:
    recorder = Recorder("v1")
    with recorder.span("invoke_agent a") as root, recorder.span("chat", parent=root):
        pass
    request = encode_spans(recorder.spans())
    child = next(s for s in request.resource_spans[0].scope_spans[0].spans if s.parent_span_id)
    child.parent_span_id = bytes(8)
    path = tmp_path / "t.pb"
    path.write_bytes(request.SerializeToString())
    code, out, err = cli("fingerprint", path)
    assert code == 1, out + err
    assert "parent_span_id is all zeros (invalid)" in err
