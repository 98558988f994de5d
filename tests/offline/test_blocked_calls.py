"""A blocked call did not happen: it satisfies no requirement, is no side effect, and is bounded by a
mined ``blocked_calls`` rule. Traces come from real ``@op.tool`` calls on the plain OTel SDK, written
by the official JSON file exporter."""

from __future__ import annotations

import contextlib
import dataclasses
import io
from pathlib import Path

import pytest
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import otel_provenance as op
from contract_runs import triage_run
from offline_helpers import write_jsonl
from otel_provenance import semconv
from otel_provenance.cli import run as cli
from otel_provenance.offline.contracts import parse_contract
from otel_provenance.offline.evaluate import evaluate
from otel_provenance.offline.model import Attributes, Run
from otel_provenance.offline.readers import iter_runs


def record(path: Path, release: str, runs: int, *, guess: bool) -> Path:
    """``runs`` ticket runs; with ``guess`` the agent closes a ticket id it never saw (blocked)."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource.create({"service.name": "desk", "service.version": release}))
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("desk")

    @op.tool(side_effect="read", tracer_provider=provider)
    def fetch_ticket(queue: str) -> dict:
        return {"ticket_id": "TCK-004711", "queue": queue}

    @op.tool(side_effect="write", tracer_provider=provider)
    def close_ticket(ticket_id: str, reason: str) -> dict:
        return {"closed": True}

    for _ in range(runs):
        with (
            op.run(inputs={"queue": "billing"}),
            tracer.start_as_current_span(
                "invoke_agent desk", attributes={"gen_ai.operation.name": "invoke_agent"}
            ),
        ):
            ticket = fetch_ticket(queue="billing")
            ticket_id = "TCK-999999" if guess else ticket["ticket_id"]
            with contextlib.suppress(op.ProvenanceError):  # the agent carries on; the call never ran
                close_ticket(ticket_id=ticket_id, reason="customer asked")
    provider.shutdown()
    return write_jsonl(list(exporter.get_finished_spans()), path, batch=3)


@pytest.fixture(scope="module")
def mined(tmp_path_factory) -> tuple[Path, str]:
    d = tmp_path_factory.mktemp("blocked")
    approved = record(d / "approved.jsonl", "1.0", 4, guess=False)
    out = d / "contract.yaml"
    assert cli(["mine", "--approved", str(approved), "-o", str(out)], io.StringIO(), io.StringIO()) == 0
    return out, out.read_text()


def test_the_miner_bounds_blocked_calls_and_respects_the_allow_list(mined):
    _, text = mined
    contract = parse_contract(text)
    blocked = contract.rule("blocked_calls")
    assert blocked.type == "blocked_calls" and blocked.params["max"] == 0 and blocked.code == "BLOCKED_CALL"
    provenance = contract.rule("provenance.close_ticket")
    # reason is on op.Budget's default allow-list: the span recorded it, the miner respects it.
    assert provenance.params["allow"] == ("reason",)
    assert provenance.params["max_assumed"] == 0


def test_a_release_whose_writes_were_all_blocked_fails(tmp_path, mined):
    contract, _ = mined
    bad = record(tmp_path / "bad.jsonl", "2.0", 3, guess=True)
    assert all(s.blocked for r in iter_runs([bad]) for s in r.spans if s.tool_name == "close_ticket"), (
        "the writes were blocked online"
    )
    out = io.StringIO()
    code = cli(
        ["gate", "check", "--contract", str(contract), "--release", "2.0", str(bad)], out, io.StringIO()
    )
    text = out.getvalue()
    assert code == 2, text
    assert "MISSING_PREREQUISITE (required.close_ticket) close_ticket is required at least 1 time(s)" in text
    assert "BLOCKED_CALL (blocked_calls) 1 of the run's tool calls were blocked" in text


def test_the_good_behaviour_passes(tmp_path, mined):
    contract, _ = mined
    good = record(tmp_path / "good.jsonl", "2.1", 3, guess=False)
    out = io.StringIO()
    code = cli(
        ["gate", "check", "--contract", str(contract), "--release", "2.1", str(good)], out, io.StringIO()
    )
    assert code == 0, out.getvalue()


def _blocked(run: Run, step: str) -> Run:
    """``run`` with every call of ``step`` marked blocked (its budget refused it)."""

    def block(span):
        attrs = Attributes({**dict(span.attributes.items_unordered()), semconv.TOOL_STATUS: "blocked"})
        return dataclasses.replace(span, attributes=attrs)

    return Run(run.run_id, tuple(block(s) if s.tool_name == step else s for s in run.spans))


RULES = {
    "required_spans": "type: required_spans\n    select: {step: permissions.check}",
    "cardinality_min": "type: cardinality\n    select: {step: permissions.check}\n    min: 1",
    "required_edges": "type: required_edges\n    parent: {step: ticket.triage}\n"
    "    child: {step: permissions.check}",
    "required_ancestry": "type: required_ancestry\n    ancestor: {step: ticket.triage}\n"
    "    descendant: {step: permissions.check}\n    min: 1",
    "forbidden_paths": "type: forbidden_paths\n    to: {step: ticket.update}\n"
    "    unless_preceded_by: {step: permissions.check}",
}


@pytest.mark.parametrize("name", sorted(RULES))
def test_a_blocked_call_never_satisfies_a_prerequisite(name):
    contract = parse_contract(f"version: 1\nname: t\nrules:\n  - id: r\n    {RULES[name]}\n")
    run = triage_run("ok")
    assert evaluate(run, contract).status == "pass"
    assert evaluate(_blocked(run, "permissions.check"), contract).status == "fail"


def test_a_blocked_write_is_no_side_effect_but_a_forbidden_attempt_is_still_forbidden():
    at_most = parse_contract(
        "version: 1\nname: t\nrules:\n  - id: r\n    type: cardinality\n"
        "    select: {step: ticket.update}\n    max: 1\n"
    )
    twice = triage_run("w", writes=2)
    assert evaluate(twice, at_most).status == "fail"
    assert evaluate(_blocked(twice, "ticket.update"), at_most).status == "pass"
    forbidden = parse_contract(
        "version: 1\nname: t\nrules:\n  - id: r\n    type: forbidden_spans\n"
        "    select: {step: ticket.update}\n"
    )
    assert evaluate(_blocked(triage_run("f"), "ticket.update"), forbidden).status == "fail"
