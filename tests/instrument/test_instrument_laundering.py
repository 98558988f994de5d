"""Fail-closed without laundering or false positives (#18 points 6 and 10, pydantic/dataclass of 9).

* An assumed argument that a read tool echoes back stays assumed: the write tool taking it is blocked.
* A pydantic model (and a dataclass) whose fields are all observed is observed, field by field.
* A nested ``op.run`` sees what the enclosing run observed (and not the other way round).
"""

from __future__ import annotations

import dataclasses

import pytest
from pydantic import BaseModel

import otel_provenance as op
from instrument_helpers import arg_attrs


def test_an_echoed_assumed_argument_stays_assumed(traced):
    @op.tool(side_effect="read", tracer_provider=traced.provider)
    def validate_account(account: str) -> dict:
        return {"account": account, "valid": False}

    @op.tool(side_effect="write", tracer_provider=traced.provider)
    def transfer(account: str, valid: bool) -> str:
        return "sent"

    with op.run(inputs={"amount": 10}):
        validate_account(account="ACC-GUESSED-1")  # the model made this up
        with pytest.raises(op.ProvenanceError):
            transfer(account="ACC-GUESSED-1", valid=False)
    assert arg_attrs(traced.span("transfer"), "account")["kind"] == "assumed"
    assert traced.span("transfer").attributes["agent.tool.status"] == "blocked"


def test_an_echo_of_an_observed_argument_and_other_result_fields_still_count(traced):
    @op.tool(side_effect="read", tracer_provider=traced.provider)
    def lookup(account: str) -> dict:
        return {"account": account, "owner_id": "OWNER-77"}

    @op.tool(side_effect="write", tracer_provider=traced.provider)
    def notify(account: str, owner_id: str) -> str:
        return "ok"

    with op.run(inputs={"account": "ACC-FROM-USER"}):
        lookup(account="ACC-FROM-USER")
        assert notify(account="ACC-FROM-USER", owner_id="OWNER-77") == "ok"
    attrs = arg_attrs(traced.span("notify"), "account")
    assert attrs["kind"] == "observed"
    assert arg_attrs(traced.span("notify"), "owner_id")["source_tool"] == "lookup"


def test_an_echo_does_not_overwrite_an_earlier_observation_of_the_same_value(traced):
    @op.tool(side_effect="read", tracer_provider=traced.provider)
    def search(q: str) -> list:
        return [{"id": "DOC-12345"}]

    @op.tool(side_effect="read", tracer_provider=traced.provider)
    def echo(doc: str, note: str) -> dict:
        return {"doc": doc, "note": note}

    @op.tool(side_effect="write", tracer_provider=traced.provider)
    def publish(note: str) -> str:
        return "ok"

    with op.run(inputs={"q": "find things"}):
        search(q="find things")
        echo(doc="DOC-12345", note="GUESSED-NOTE")
        with pytest.raises(op.ProvenanceError):
            publish(note="GUESSED-NOTE")
    assert arg_attrs(traced.span("echo"), "doc")["kind"] == "observed"


class Transfer(BaseModel):
    account: str
    amount: int


@dataclasses.dataclass
class TransferDC:
    account: str
    amount: int


@pytest.mark.parametrize("make", [Transfer, TransferDC], ids=["pydantic", "dataclass"])
def test_a_structured_argument_whose_fields_are_all_observed_is_not_blocked(traced, make):
    @op.tool(side_effect="write", tracer_provider=traced.provider)
    def pay(order: object) -> str:
        return "paid"

    with op.run(inputs={"account": "ACC-0001", "amount": 250}):
        assert pay(order=make(account="ACC-0001", amount=250)) == "paid"
        with pytest.raises(op.ProvenanceError):
            pay(order=make(account="ACC-9999", amount=250))  # one field guessed: blocked
    spans = [s for s in traced.spans if s.name == "execute_tool pay"]
    assert [arg_attrs(s, "order")["kind"] for s in spans] == ["observed", "assumed"]
    assert arg_attrs(spans[0], "order")["projection"] == "structure"


def test_a_pydantic_result_is_remembered_field_by_field(traced):
    @op.tool(side_effect="read", tracer_provider=traced.provider)
    def quote() -> Transfer:
        return Transfer(account="ACC-QUOTED-7", amount=99)

    @op.tool(side_effect="write", tracer_provider=traced.provider)
    def pay(account: str) -> str:
        return "paid"

    with op.run():
        quote()
        assert pay(account="ACC-QUOTED-7") == "paid"
    assert arg_attrs(traced.span("pay"), "account")["source_field"] == "account"


def test_a_nested_run_inherits_the_enclosing_runs_observations(traced):
    @op.tool(side_effect="read", tracer_provider=traced.provider)
    def find(q: str) -> dict:
        return {"ticket": "TICKET-4242"}

    @op.tool(side_effect="write", tracer_provider=traced.provider)
    def close(ticket: str) -> str:
        return "closed"

    with op.run(inputs={"q": "broken login"}, run_id="outer"):
        find(q="broken login")
        with op.run(inputs={"extra": "NESTED-ONLY-1"}, run_id="inner"):
            assert close(ticket="TICKET-4242") == "closed"  # observed by the enclosing run
            find(q="NESTED-ONLY-1")
        with pytest.raises(op.ProvenanceError):  # the nested run's inputs do not leak outwards
            close(ticket="NESTED-ONLY-1")
    inner_close = next(s for s in traced.spans if s.name == "execute_tool close")
    assert inner_close.attributes["agent.run.id"] == "inner"
    assert arg_attrs(inner_close, "ticket")["source_tool"] == "find"


def test_reentering_runs_never_forms_a_parent_cycle(traced):
    @op.tool(side_effect="read", tracer_provider=traced.provider)
    def probe(value: str) -> None:
        return None

    a, b = op.run(run_id="a"), op.run(run_id="b")
    with b, a, b:
        probe(value="NOWHERE-OBSERVED")  # a miss walks the parents: must terminate
    assert arg_attrs(traced.span("probe"), "value")["kind"] == "assumed"
