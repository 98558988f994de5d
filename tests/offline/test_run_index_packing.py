"""The run index packs a whole file's traces into sorted arrays (``runs.PackedTraces``) once it is
built. Packed, it must answer exactly as the dict it replaces: for trace ids that share a low half
(found by bisection on it), keys that cannot be packed (non-hex trace ids, more than 128 bits), and
traces linked after packing."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from otel_provenance.offline.readers import iter_runs
from otel_provenance.offline.runs import PackedTraces, RunKeys

_LOW_HALF = (1 << 64) - 1

keys = st.one_of(
    st.integers(0, 3).map(lambda high: (high << 64) | 5),  # same low half, different high halves
    st.integers(0, (1 << 128) - 1),
    st.integers(1 << 128, 1 << 130),  # a hex trace id longer than 32 digits
    st.text("xyz", min_size=1, max_size=3),  # a trace id that is not hex
)
runs = st.sampled_from(["", "run-a", "run-b"])


@given(st.dictionaries(keys, runs), st.lists(st.tuples(keys, runs)), st.lists(keys))
def test_packed_traces_answer_as_the_dict_they_replace(
    traces: dict[int | str, str], later: list[tuple[int | str, str]], asked: list[int | str]
) -> None:
    packed = PackedTraces(traces)
    expected = dict(traces)
    for key, run in later:
        packed[key] = run
        expected[key] = run
    for key in [*expected, *asked]:
        assert packed.get(key) == expected.get(key)
        assert packed.get(key, "none") == expected.get(key, "none")
        assert (key in packed) == (key in expected)
    assert sorted(packed.values()) == sorted(expected.values())


def test_run_keys_name_the_same_runs_once_packed() -> None:
    keys = RunKeys()
    shared_low = [f"{high:016x}{7:016x}" for high in range(4)]
    for trace_id, run_id in zip(shared_low, ["run-b", None, "run-a", "run-b"], strict=True):
        keys.link(trace_id, run_id)
    keys.link("not-hex", "run-c")
    before = [keys.run_of(t) for t in [*shared_low, "not-hex", "f" * 32]]
    keys.pack()
    assert [keys.run_of(t) for t in [*shared_low, "not-hex", "f" * 32]] == before
    assert keys.named_counts() == (4, 3)
    keys.link(shared_low[1], "run-a")  # a late link joins the unnamed trace to run-a
    keys.link(shared_low[2], "run-b")  # and run-a to run-b: run-a names both
    assert [keys.run_of(t) for t in shared_low] == ["run-a"] * 4


def test_traces_that_differ_only_in_their_high_half_keep_their_own_runs(tmp_path: Path) -> None:
    def line(trace: int, span: int, run_id: str | None) -> str:
        attributes = [{"key": "agent.run.id", "value": {"stringValue": run_id}}] if run_id else []
        spans = [
            {
                "traceId": f"{trace:032x}",
                "spanId": f"{span:016x}",
                "name": "s",
                "startTimeUnixNano": str(span),
                "endTimeUnixNano": str(span + 1),
                "attributes": attributes,
            }
        ]
        return json.dumps({"resourceSpans": [{"resource": {}, "scopeSpans": [{"spans": spans}]}]}) + "\n"

    highs = (3, 0, 2)
    named = [line((high << 64) | 9, n, f"run-{high}") for n, high in enumerate(highs, start=1)]
    unnamed = [line((high << 64) | 9, n + 3, None) for n, high in enumerate(highs, start=1)]
    path = tmp_path / "t.jsonl"
    path.write_text("".join(named + unnamed))  # the spans without a run id are found by trace
    found = {run.run_id: [s.span_id for s in run.spans] for run in iter_runs([path])}
    assert found == {f"run-{high}": [f"{n:016x}", f"{n + 3:016x}"] for n, high in enumerate(highs, start=1)}


def test_keys_sharing_a_low_half_are_bisected_among_themselves_only() -> None:
    """The high halves are sorted only within a run of equal low halves: the bisection on them must
    stop where that run ends, not go on into the (unsorted) high halves of the keys after it."""
    shared = [(0 << 64) | 5, (2 << 64) | 5]
    after = [(0 << 64) | 6, (0 << 64) | 7, (0 << 64) | 8]
    traces = {key: f"run-{n}" for n, key in enumerate(shared + after)}
    packed = PackedTraces(traces)
    for key, run in traces.items():
        assert packed.get(key) == run and key in packed
    for absent in ((1 << 64) | 5, (3 << 64) | 5, (2 << 64) | 6):
        assert packed.get(absent) is None and absent not in packed
