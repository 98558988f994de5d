"""Partial gate results (``gate check --shard --partial`` then ``gate merge``): what merging adds up,
what it refuses and why, and what a partial file must hold to be read back."""

from __future__ import annotations

import dataclasses
import json

import pytest

from contract_runs import RunBuilder, triage_run
from otel_provenance.errors import TraceReadError
from otel_provenance.offline.aggregate import Aggregate, canonical_json
from otel_provenance.offline.contracts import parse_contract
from otel_provenance.offline.gate import Shard, check_release

AT = "2026-01-31T12:00:00Z"
CONTRACT = parse_contract(
    "version: 1\nname: t\nrules:\n"
    "  - id: one_write\n    type: cardinality\n    select: {step: ticket.update}\n    max: 1\n"
    "  - id: checked\n    type: required_spans\n    select: {step: permissions.check}\n"
)


def _part(*runs, release="v2"):
    return check_release(list(runs), CONTRACT, release, AT)


def test_merging_adds_every_count_and_keeps_every_finding_and_input_note():
    a = _part(triage_run("a1", "v2"), triage_run("a2", "v2", writes=2), triage_run("x", "v1"))
    a = a.with_incomplete_inputs(["a.jsonl:3: cut"]).with_steps_seen(["only.in.a"], 0)
    b = _part(triage_run("b1", "v2", skip_check=True), triage_run("y", "v1"), triage_run("z", "v3"))
    b = b.with_incomplete_inputs(["b.jsonl:9: cut"])
    merged = a.merge(b)
    assert merged.run_ids == tuple(sorted(a.run_ids + b.run_ids))
    assert dict(merged.run_counts) == {"pass": 1, "fail": 2, "insufficient_data": 0, "error": 0}
    assert merged.other_releases == (("v1", 2), ("v3", 1))
    assert merged.incomplete_inputs == ("a.jsonl:3: cut", "b.jsonl:9: cut")
    assert "only.in.a" in merged.steps_seen and "ticket.update" in merged.steps_seen
    assert merged.tool_spans == a.tool_spans + b.tool_spans
    assert merged.rules["one_write"].count("fail") == 1 and merged.rules["one_write"].count("pass") == 2
    assert merged.rules["checked"].count("fail") == 1
    findings = merged.rules["one_write"].findings + merged.rules["checked"].findings
    failing = {triage_run("a2", "v2").run_id, triage_run("b1", "v2").run_id}
    assert sorted(f.run_id for f in findings) == sorted(failing)
    assert b.merge(a).to_json() == merged.to_json()


@pytest.mark.parametrize(
    ("field", "value", "words"),
    [
        ("contract_digest", "0" * 64, "contract digest"),
        ("release", "v9", "release"),
        ("completed_at", "2027-01-01T00:00:00Z", "completed at"),
    ],
)
def test_partials_of_another_contract_release_or_time_are_not_merged(field, value, words):
    a = _part(triage_run("a", "v2"))
    other = dataclasses.replace(_part(triage_run("b", "v2")), **{field: value})
    with pytest.raises(ValueError) as info:
        a.merge(other)
    assert str(info.value) == f"cannot merge partial results with different {words}"


def test_partials_of_different_rule_sets_are_not_merged_but_an_empty_one_is_neutral():
    a = _part(triage_run("a", "v2"))
    fewer = Aggregate.empty(CONTRACT.digest, ["one_write"], "v2", AT)
    with pytest.raises(ValueError) as info:
        a.merge(fewer)
    assert str(info.value) == "cannot merge partial results of different rule sets"
    none = Aggregate.empty(CONTRACT.digest, [], "v2", AT)
    assert a.merge(none).to_json() == a.to_json() == none.merge(a).to_json()


def test_a_run_in_two_partials_is_named_and_refused():
    a = _part(triage_run("a", "v2"), triage_run("b", "v2"))
    b = _part(triage_run("b", "v2"), triage_run("a", "v2"), triage_run("c", "v2"))
    with pytest.raises(ValueError) as info:
        a.merge(b)
    first = min(triage_run("a", "v2").run_id, triage_run("b", "v2").run_id)
    assert str(info.value) == f"run {first} occurs in two partial results; each run must be in one shard"


def test_a_partial_file_reads_back_to_the_same_value():
    a = _part(triage_run("a", "v2", writes=2), triage_run("b", "v2"), triage_run("x", "v1"))
    a = a.with_incomplete_inputs(["a.jsonl:3: cut"]).with_steps_seen(["s"], 4)
    back = Aggregate.from_json(a.to_json(), "p.json")
    assert back == a
    assert back.to_json() == a.to_json()


def _broken(edit) -> str:
    data = json.loads(_part(triage_run("a", "v2", writes=2)).to_json())
    edit(data)
    with pytest.raises(TraceReadError) as info:
        Aggregate.from_json(json.dumps(data), "p.json")
    return str(info.value)


def test_a_file_that_is_not_a_partial_result_is_refused_with_the_reason():
    assert _broken(lambda d: d.update(format="otel-provenance/gate-partial/v1")) == (
        "p.json: not a valid partial gate result (ValueError: not a otel-provenance/gate-partial/v3 file)"
    )
    assert _broken(lambda d: d.pop("tool_spans")) == (
        "p.json: not a valid partial gate result (KeyError: 'tool_spans')"
    )

    def floated(d):
        d["rules"]["one_write"]["findings"][0]["witnesses"][0]["observed"]["count"] = 2.0

    assert _broken(floated) == (
        "p.json: not a valid partial gate result (ValueError: partial results never contain floats)"
    )


def test_canonical_json_refuses_a_float_anywhere():
    for data in (1.5, {"a": {"b": 0.5}}, [1, [2.0]], ("x", 0.1)):
        with pytest.raises(TypeError, match=r"^canonical JSON holds no floats$"):
            canonical_json(data)
    text = canonical_json({"b": [1, "é"], "a": None})
    assert text == '{\n  "a": null,\n  "b": [\n    1,\n    "é"\n  ]\n}\n'


def test_check_release_counts_tool_spans_steps_and_the_runs_it_left_out_by_label():
    disputed = RunBuilder("disputed", release=None)
    disputed.add("ticket.fetch", attrs={"service.version": "v7"})
    disputed.add("ticket.update", attrs={"service.version": "v8"})
    runs = [
        triage_run("a", "v2"),
        triage_run("b", "v2", writes=2),
        triage_run("old", "v1"),
        triage_run("none", None),
        disputed.run(),
    ]
    aggregate = _part(*runs)
    assert aggregate.run_ids == tuple(sorted([runs[0].run_id, runs[1].run_id]))
    assert aggregate.tool_spans == 5 + 6  # fetch, classify, check, update(s), notify
    assert aggregate.steps_seen == (
        "customer.notify",
        "permissions.check",
        "ticket.classify",
        "ticket.fetch",
        "ticket.triage",
        "ticket.update",
    )
    assert aggregate.other_releases == (
        ("(disagreeing: v7, v8)", 1),
        ("(no service.version)", 1),
        ("v1", 1),
    )


def test_check_release_keeps_only_the_runs_of_its_shard():
    runs = [triage_run(f"r{i}", "v2") for i in range(8)]
    shards = [check_release(runs, CONTRACT, "v2", AT, shard=Shard(i, 3)) for i in (1, 2, 3)]
    for i, part in enumerate(shards, start=1):
        assert part.run_ids == tuple(sorted(r.run_id for r in runs if Shard(i, 3).owns(r.run_id)))
    assert sorted(sum((p.run_ids for p in shards), ())) == sorted(r.run_id for r in runs)
    assert sum(p.tool_spans for p in shards) == 8 * 5


def test_check_release_reads_the_release_from_the_attribute_it_is_told():
    b = RunBuilder("custom", release="v2")
    b.add("ticket.update", attrs={"deploy.id": "d-9"})
    run = b.run()
    assert _part(run).evaluated == 1
    other = check_release([run], CONTRACT, "d-9", AT, release_attribute="deploy.id")
    assert other.evaluated == 1
    assert check_release([run], CONTRACT, "v2", AT, release_attribute="deploy.id").other_releases == (
        ("d-9", 1),
    )
