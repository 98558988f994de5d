"""Which spans make one run: a trace is one run; traces that share agent.run.id are one run.

Spans without a run id (the agent's root span, a downstream service's server span) must stay in
their trace's run — otherwise a run looks incomplete and every rule about it is unjudgeable.
"""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from offline_helpers import Recorder, tool_attributes, write_jsonl, write_proto
from offline_helpers import json_kv as _kv
from offline_helpers import json_tool_span as _tool
from otel_provenance import semconv
from otel_provenance.offline.readers import iter_runs, read_spans
from otel_provenance.offline.runs import group_runs


def _agent_run(rec: Recorder, run_id: str | None, tools: int = 3) -> None:
    """A root without a run id, tool spans with it, and a service span under the last tool."""
    with rec.span("refund.request") as root:
        for i in range(tools):
            with rec.span(
                f"execute_tool t{i}", tool_attributes(f"t{i}", {}, run_id=run_id), parent=root
            ) as t:
                if i == tools - 1:
                    with rec.span("payment POST /refund", {"agent.side_effect": "write"}, parent=t):
                        pass


def test_spans_without_run_id_join_their_traces_run(tmp_path):
    rec = Recorder()
    _agent_run(rec, "run-a")
    _agent_run(rec, "run-b")
    spans = rec.spans()
    path = write_jsonl(spans, tmp_path / "t.jsonl", batch=2)
    runs = list(iter_runs([path]))
    assert [r.run_id for r in runs] == ["run-a", "run-b"] or sorted(r.run_id for r in runs) == [
        "run-a",
        "run-b",
    ]
    for run in runs:
        assert len(run.spans) == 5
        ids = {s.span_id for s in run.spans}
        assert all(s.parent_span_id is None or s.parent_span_id in ids for s in run.spans)
    assert sorted(r.run_id for r in group_runs(read_spans([path]))) == ["run-a", "run-b"]


def test_a_run_id_joins_several_traces(tmp_path):
    rec = Recorder()
    _agent_run(rec, "run-x", tools=2)
    _agent_run(rec, "run-x", tools=2)  # a second trace of the same run
    _agent_run(rec, None, tools=1)  # a trace without any run id is a run of its own
    spans = rec.spans()
    for path in (write_jsonl(spans, tmp_path / "a.jsonl", batch=3), write_proto(spans, tmp_path / "a.pb")):
        runs = sorted(iter_runs([path]), key=lambda r: r.run_id)
        assert len(runs) == 2
        joined = next(r for r in runs if r.run_id == "run-x")
        assert len(joined.trace_ids) == 2 and len(joined.spans) == 8
        alone = next(r for r in runs if r.run_id != "run-x")
        assert alone.run_id == alone.trace_ids[0] and len(alone.spans) == 3


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10_000), batch=st.integers(1, 7))
def test_streaming_grouping_equals_grouping_everything(tmp_path_factory, seed, batch):
    rng = random.Random(seed)
    rec = Recorder()
    for i in range(5):
        _agent_run(rec, rng.choice([None, f"run-{i}", "run-shared"]), tools=rng.randint(1, 3))
    spans = rec.spans()
    rng.shuffle(spans)
    path = write_jsonl(spans, tmp_path_factory.mktemp("g") / "s.jsonl", batch=batch)
    streamed = sorted(iter_runs([path]), key=lambda r: r.run_id)
    whole = group_runs(read_spans([path]))
    assert streamed == whole
    for run in whole:  # every span's parent is in its run: nothing was split off
        ids = {s.span_id for s in run.spans}
        assert all(s.parent_span_id in ids for s in run.spans if s.parent_span_id)
        assert (
            any(s.attributes.get(semconv.RUN_ID) == run.run_id for s in run.spans)
            or run.run_id in run.trace_ids
        )


def _expected_runs(spans) -> dict[str, list[str]]:
    """Run id -> span ids, worked out from scratch: traces that share a run id are one run, named by
    the smallest run id among them; a trace without any is a run of its own, named by its trace id."""
    carried: dict[str, set[str]] = {}
    for span in spans:
        run_id = span.attributes.get(semconv.RUN_ID)
        carried.setdefault(format(span.context.trace_id, "032x"), set()).update([run_id] if run_id else [])
    groups: list[tuple[set[str], set[str]]] = []  # (traces, run ids), merged until no two share a run id
    for trace, run_ids in carried.items():
        traces, ids = {trace}, set(run_ids)
        for other in [g for g in groups if g[1] & ids]:
            groups.remove(other)
            traces |= other[0]
            ids |= other[1]
        groups.append((traces, ids))
    name = {trace: min(ids) if ids else trace for traces, ids in groups for trace in traces}
    expected: dict[str, list[str]] = {}
    for span in spans:
        expected.setdefault(name[format(span.context.trace_id, "032x")], []).append(
            format(span.context.span_id, "016x")
        )
    return {run: sorted(ids) for run, ids in expected.items()}


def _traces_drawing_run_ids(traces: list[list[str | None]]):
    """One trace per list: a root and a tool span per run id drawn (None: the span carries none)."""
    rec = Recorder()
    for run_ids in traces:
        with rec.span("refund.request") as root:
            for i, run_id in enumerate(run_ids):
                with rec.span(f"execute_tool t{i}", tool_attributes(f"t{i}", {}, run_id=run_id), parent=root):
                    pass
    return rec.spans()


@settings(max_examples=40, deadline=None)
@given(
    traces=st.lists(
        st.lists(st.sampled_from([None, "run-a", "run-b", "run-c", "run-d"]), min_size=1, max_size=3),
        min_size=1,
        max_size=5,
    ),
    batch=st.integers(1, 7),
    seed=st.integers(0, 10_000),
)
def test_a_trace_carrying_two_run_ids_joins_their_runs_streamed_or_not(tmp_path_factory, traces, batch, seed):
    """The runs above carry one run id per trace, so no trace ever joins two run ids into one run: here
    each tool span draws its own, and the runs must be the traces joined through shared run ids, named
    by the smallest — streamed or grouped whole, whatever the order of the lines."""
    spans = _traces_drawing_run_ids(traces)
    random.Random(seed).shuffle(spans)
    path = write_jsonl(spans, tmp_path_factory.mktemp("j") / "s.jsonl", batch=batch)
    expected = _expected_runs(spans)
    streamed = sorted(iter_runs([path]), key=lambda r: r.run_id)
    assert {run.run_id: sorted(s.span_id for s in run.spans) for run in streamed} == expected
    assert streamed == group_runs(read_spans([path]))


# JSON may write any character as a \u escape; no writer escapes an ASCII letter or digit, but the
# readers must read such a line as JSON does. Escaped there, a member name or a trace id is one the
# run index's byte scan cannot see, and it paired a run id with another span's trace.
_A, _C = "0af7651916cd43dd8448eb211c80319c", "5b8efff798038103d269b633813fc60c"


def _request(*spans: dict) -> str:
    return json.dumps(
        {"resourceSpans": [{"resource": {}, "scopeSpans": [{"scope": {}, "spans": list(spans)}]}]}
    )


def _grouped(path) -> tuple[list[tuple[str, list[str]]], list[tuple[str, list[str]]]]:
    """(run id, trace ids) of each run, streamed and grouped whole."""

    def shape(runs):
        return sorted((r.run_id, sorted({s.trace_id for s in r.spans})) for r in runs)

    return shape(iter_runs([path])), shape(group_runs(read_spans([path])))


_TWO_RUNS = _request(_tool(_A, "00f067aa0ba902b7", "r2"), _tool(_C, "00f067aa0ba902b8", "r1"))
_LINKED = _request(
    {
        **_tool(_A, "00f067aa0ba902b7", "r1"),
        "name": "invoke_agent a",
        "attributes": _kv(**{"gen_ai.operation.name": "invoke_agent", "agent.run.id": "r1"}),
    },
    _tool(_C, "00f067aa0ba902b8", links=[{"traceId": _A, "spanId": "00f067aa0ba902b7"}]),
)


@pytest.mark.parametrize(
    ("line", "runs"),
    [
        pytest.param(  # the second span's trace id, its first character escaped
            _TWO_RUNS.replace(f'"{_C}"', '"\\u0035' + _C[1:] + '"'),
            [("r1", [_C]), ("r2", [_A])],
            id="trace-id",
        ),
        pytest.param(  # its member name
            _TWO_RUNS.replace(f'"traceId": "{_C}"', f'"trace\\u0049d": "{_C}"'),
            [("r1", [_C]), ("r2", [_A])],
            id="traceId-member",
        ),
        pytest.param(  # a run id's key
            _TWO_RUNS.replace(
                '"agent.run.id", "value": {"stringValue": "r1"}',
                '"agent\\u002erun.id", "value": {"stringValue": "r1"}',
            ),
            [("r1", [_C]), ("r2", [_A])],
            id="run-id-key",
        ),
        pytest.param(  # the links member: the tool's trace joins the run its link reaches
            _LINKED.replace('"links"', '"lin\\u006bs"'),
            [("r1", [_A, _C])],
            id="links-member",
        ),
    ],
)
def test_names_and_ids_written_with_escapes_group_runs_as_json_reads_them(tmp_path, line, runs):
    assert "\\u00" in line  # the spelling under test is there
    path = tmp_path / "t.jsonl"
    path.write_text(line + "\n")
    streamed, whole = _grouped(path)
    assert streamed == whole == runs


_ESCAPABLE = re.compile(r'"traceId":\s*"[0-9a-f]{32}"|"(?:traceId|spanId|agent\.run\.id)"')


def _escape_some(text: str, rng: random.Random) -> str:
    """``text`` with some characters of its trace ids and of the names ``traceId``, ``spanId`` and
    ``agent.run.id`` written as \\u escapes (JSON reads the same text)."""

    def escape(match: re.Match) -> str:
        whole = match.group(0)
        if rng.random() < 0.5:
            return whole
        at = rng.randrange(1, len(whole) - 1)
        if whole[at] in '": ':
            return whole
        return whole[:at] + f"\\u{ord(whole[at]):04x}" + whole[at + 1 :]

    return _ESCAPABLE.sub(escape, text)


# The official exporter's files of traces drawing run ids, each line re-spelt (see _respelt).
_RESPELLINGS = {
    "traces": st.lists(
        st.lists(st.sampled_from([None, "run-a", "run-b", "run-c"]), min_size=1, max_size=3),
        min_size=1,
        max_size=4,
    ),
    "batch": st.integers(1, 5),
    "seed": st.integers(0, 10_000),
}


def _respelt(folder, traces, batch: int, seed: int, respell) -> tuple[Path, Path]:
    """Write the traces with the official exporter, re-spell each line with ``respell(line, rng)``,
    and hold the runs streamed from the re-spelt file to those drawn and to the parsed spans'; the
    re-spelt file and the plain one."""
    spans = _traces_drawing_run_ids(traces)
    rng = random.Random(seed)
    rng.shuffle(spans)
    plain = write_jsonl(spans, folder / "plain.jsonl", batch=batch)
    respelt = folder / "respelt.jsonl"
    respelt.write_text("".join(respell(line, rng) + "\n" for line in plain.read_text().splitlines()))
    streamed = sorted(iter_runs([respelt]), key=lambda r: r.run_id)
    assert {run.run_id: sorted(s.span_id for s in run.spans) for run in streamed} == _expected_runs(spans)
    assert streamed == group_runs(read_spans([respelt]))
    return respelt, plain


@settings(max_examples=40, deadline=None)
@given(**_RESPELLINGS)
def test_escaped_names_and_ids_group_runs_as_the_plain_spelling(tmp_path_factory, traces, batch, seed):
    """Files of the official exporter, some of their trace ids and member names re-spelt with escapes:
    the runs, streamed or grouped whole, are those of the plain file."""
    escaped, plain = _respelt(tmp_path_factory.mktemp("e"), traces, batch, seed, _escape_some)
    event("escapes: " + ("some" if "\\u00" in escaped.read_text() else "none"))
    assert group_runs(read_spans([escaped])) == group_runs(read_spans([plain]))


# Where a run id sits in a line: the run index pairs a span's agent.run.id with that span's trace,
# and nothing else with any — a span's attributes written before its trace id, or an agent.run.id
# among a scope's or a resource's attributes (which name no run: only a span's own do), were paired
# with the trace of the span before them, and two runs were read as one.
def _compact(request: dict) -> str:
    return json.dumps(request, separators=(",", ":"))


def _attributes_first(span: dict) -> dict:
    return {"attributes": span["attributes"], **span}


def _scopes(*scopes: tuple[list[dict], list[dict]], resource: list[dict] | None = None) -> dict:
    """One resource's spans, one scope per (scope attributes, spans)."""
    scope_spans = [{"scope": {"name": "s", "attributes": attrs}, "spans": spans} for attrs, spans in scopes]
    return {"resource": {"attributes": resource or []}, "scopeSpans": scope_spans}


@pytest.mark.parametrize(
    ("request_", "runs"),
    [
        pytest.param(  # the second span's attributes first, the span before it in the same line
            {
                "resourceSpans": [
                    _scopes(
                        (
                            [],
                            [
                                _tool(_A, "00f067aa0ba902b7", "r1"),
                                _attributes_first(_tool(_C, "00f067aa0ba902b8", "r2")),
                            ],
                        )
                    )
                ]
            },
            [("r1", [_A]), ("r2", [_C])],
            id="attributes-before-trace-id",
        ),
        pytest.param(  # a later scope's attributes, the span before it carrying no run id
            {
                "resourceSpans": [
                    _scopes(
                        ([], [_tool(_A, "00f067aa0ba902b7")]),
                        (_kv(**{"agent.run.id": "r2"}), [_tool(_C, "00f067aa0ba902b8", "r1")]),
                    )
                ]
            },
            [("r1", [_C]), (_A, [_A])],
            id="later-scope",
        ),
        pytest.param(  # the same, the scope with no span of its own, at the line's end
            {
                "resourceSpans": [
                    _scopes(([], [_tool(_A, "00f067aa0ba902b7")]), (_kv(**{"agent.run.id": "r2"}), []))
                ]
            },
            [(_A, [_A])],
            id="trailing-scope",
        ),
        pytest.param(  # a later resource's attributes
            {
                "resourceSpans": [
                    _scopes(([], [_tool(_A, "00f067aa0ba902b7")])),
                    _scopes(
                        ([], [_tool(_C, "00f067aa0ba902b8", "r1")]), resource=_kv(**{"agent.run.id": "r2"})
                    ),
                ]
            },
            [("r1", [_C]), (_A, [_A])],
            id="later-resource",
        ),
    ],
)
def test_a_run_id_outside_its_spans_attributes_is_paired_with_no_other_trace(tmp_path, request_, runs):
    """Compactly written, as every known writer does (the index's substring search reads such lines)."""
    path = tmp_path / "t.jsonl"
    path.write_text(_compact(request_) + "\n")
    streamed, whole = _grouped(path)
    assert streamed == whole == sorted(runs)


def _rearranged(line: str, rng: random.Random) -> str:
    """One line of the official exporter, re-cut: its spans' members in a random order, each span in a
    scope or resource of its own or not, scopes and resources carrying run ids of their own, compact."""
    request = json.loads(line)
    spans = [span for rs in request["resourceSpans"] for ss in rs["scopeSpans"] for span in ss["spans"]]
    resources: list[dict] = []
    for span in spans:
        items = list(span.items())
        if rng.random() < 0.4:
            rng.shuffle(items)
        span = dict(items)
        if not resources or rng.random() < 0.3:
            resources.append({"resource": {"attributes": []}, "scopeSpans": []})
            if rng.random() < 0.5:
                resources[-1]["resource"]["attributes"] = _kv(
                    **{"agent.run.id": rng.choice(["run-a", "run-x"])}
                )
        scopes = resources[-1]["scopeSpans"]
        if not scopes or rng.random() < 0.3:
            attrs = _kv(**{"agent.run.id": rng.choice(["run-b", "run-y"])}) if rng.random() < 0.5 else []
            scopes.append({"scope": {"name": "s", "attributes": attrs}, "spans": []})
        scopes[-1]["spans"].append(span)
    if rng.random() < 0.3:  # a scope with no spans, after the last
        resources[-1]["scopeSpans"].append(
            {"scope": {"attributes": _kv(**{"agent.run.id": "run-z"})}, "spans": []}
        )
    return _compact({"resourceSpans": resources})


@settings(max_examples=40, deadline=None)
@given(**_RESPELLINGS)
def test_run_ids_wherever_written_group_runs_as_the_parsed_spans_do(tmp_path_factory, traces, batch, seed):
    """Files of the official exporter, re-cut so that run ids sit where no span's attributes are and
    spans write their members in any order: the runs streamed are those of the parsed spans, which
    are those of the plain file (a scope's or a resource's run id names no run)."""
    _respelt(tmp_path_factory.mktemp("r"), traces, batch, seed, _rearranged)
