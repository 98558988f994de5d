"""Run ids the byte search cannot place: spans whose attributes are written before their ``traceId``,
keys spelt with JSON escapes (``"agent.run\\u002eid"``, ``"trace\\u0049d"``).

``iter_runs`` indexes, per run, the last line that mentions it. A line in the compact spelling every
known writer uses is indexed by substring search, pairing each run id with its span's ``traceId``;
a line spelt otherwise — a span's attributes before its trace id, an escaped key — is indexed from
its parsed spans, so the index holds the links the spans tell and no other: the joined runs hold
every span, end at the later of their ends, and nothing is emitted early or joined late. (The
second pass can still join a link the index missed, ``readers._late_link``: only for a line the
first pass could not parse, whose error the second pass then reports.)
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from otel_provenance.offline.readers import iter_runs, read_spans

T0, T1, T2, T3, T9 = (f"{n:032x}" for n in (0xA0, 0xA1, 0xA2, 0xA3, 0xA9))


def _span(trace_id: str, n: int, run_id: str | None = None, hidden: str = "") -> dict:
    """A span; ``hidden`` names what the byte scan must not pair: "run" (its attributes are written
    before its trace id), or, spelt with escapes the index reads by parsing the line, "escaped-run"
    (the run id's key) and "escaped-trace+run" (the trace id's key too)."""
    span: dict = {
        "traceId": trace_id,
        "spanId": f"{n:016x}",
        "name": f"execute_tool step{n}",
        "kind": 1,
        "startTimeUnixNano": str(n),
        "endTimeUnixNano": str(n + 1),
    }
    if run_id is not None:
        span["attributes"] = [{"key": "agent.run.id", "value": {"stringValue": run_id}}]
    return {"__hidden": hidden, **span}


def _line(*spans: dict) -> str:
    texts = []
    for span in spans:
        hidden = span.pop("__hidden")
        if hidden == "run":  # the attributes first: the byte scan pairs the run id with no trace
            span = {"attributes": span.pop("attributes"), **span}
        text = json.dumps(span)
        if hidden.startswith("escaped") and "run" in hidden:
            text = text.replace('"agent.run.id"', '"agent.run\\u002eid"')
        if hidden.startswith("escaped") and "trace" in hidden:
            text = text.replace('"traceId"', '"trace\\u0049d"')
        texts.append(text)
    request = '{"resourceSpans": [{"resource": {}, "scopeSpans": [{"scope": {}, "spans": [%s]}]}]}'
    return request % ", ".join(texts) + "\n"


def _write(tmp_path: Path, *lines: str) -> Path:
    path = tmp_path / "t.jsonl"
    path.write_text("".join(lines))
    return path


def _runs(path: Path) -> list[tuple[str, list[str]]]:
    return [(run.run_id, sorted(s.span_id for s in run.spans)) for run in iter_runs([path])]


def _ids(*ns: int) -> list[str]:
    return sorted(f"{n:016x}" for n in ns)


def test_a_hidden_run_id_joins_the_held_spans_of_both_runs_and_ends_at_the_later_end(tmp_path: Path) -> None:
    """Trace T2 is first seen without a run id, then one of its spans names run r1 under an escaped
    key. Both runs have spans held by then; the joined run holds all of them and is emitted at T2's
    last line (after r1's), while r0, which ends on r1's last line, is still emitted there."""
    path = _write(
        tmp_path,
        _line(_span(T1, 1, "r1")),
        _line(_span(T2, 2)),
        _line(_span(T2, 3, "r1", hidden="run")),
        _line(_span(T1, 4, "r1"), _span(T0, 10, "r0")),
        _line(_span(T2, 5)),
        _line(_span(T9, 90, "r9")),
    )
    assert _runs(path) == [("r0", _ids(10)), ("r1", _ids(1, 2, 3, 4, 5)), ("r9", _ids(90))]
    assert len(list(read_spans([path]))) == 7


def test_two_hidden_links_to_one_run_before_its_first_visible_span(tmp_path: Path) -> None:
    """The first late link finds no span held for either side; the second joins a trace to the run
    the first one formed. The joined run is emitted at r1's last line, before r9."""
    path = _write(
        tmp_path,
        _line(_span(T2, 2, "r1", hidden="run")),
        _line(_span(T3, 3, "r1", hidden="run")),
        _line(_span(T1, 1, "r1")),
        _line(_span(T9, 90, "r9")),
    )
    assert _runs(path) == [("r1", _ids(1, 2, 3)), ("r9", _ids(90))]


def test_a_hidden_link_after_the_runs_first_line_joins_it_before_it_is_emitted(tmp_path: Path) -> None:
    """The index, which reads this line's spans, knows T2 is r1's: r1 ends at line 2, not at line 1
    (the byte scan paired the run id with no trace, r1 was emitted at line 1 and the link refused)."""
    path = _write(
        tmp_path,
        _line(_span(T1, 1, "r1")),
        _line(_span(T2, 2, "r1", hidden="run")),
    )
    assert _runs(path) == [("r1", _ids(1, 2))]


def test_a_run_id_written_before_its_trace_id_is_never_paired_with_the_span_before_it(tmp_path: Path) -> None:
    """Two runs in one line, the second span's attributes before its trace id: the byte scan paired
    r2 with T1 (the nearest trace id before it) and read the two runs as one."""
    path = _write(tmp_path, _line(_span(T1, 1, "r1"), _span(T2, 2, "r2", hidden="run")))
    assert _runs(path) == [("r1", _ids(1)), ("r2", _ids(2))]


@pytest.mark.parametrize("hidden", ["escaped-run", "escaped-trace+run"])
def test_a_link_spelt_with_escapes_is_indexed_not_joined_late(tmp_path: Path, hidden: str) -> None:
    """Keys written with escapes, which the byte scan cannot see: the line is indexed from its parsed
    spans, so T2 is known to be r1's from the start and nothing is emitted early (with the trace id's
    key escaped too, T2's own run used to be emitted at the first line and the link refused)."""
    path = _write(
        tmp_path,
        _line(_span(T2, 2)),
        _line(_span(T2, 3, "r1", hidden=hidden)),
        _line(_span(T1, 1, "r1")),
    )
    assert _runs(path) == [("r1", _ids(1, 2, 3))]
    assert len(list(read_spans([path]))) == 3
