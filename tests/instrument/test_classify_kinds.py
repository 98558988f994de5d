"""Kinds the fast paths must not change: an invented number stays invented, an argument that cannot
be examined still gets a digest, and a classification says which tool it is for."""

from __future__ import annotations

import secrets

import otel_provenance as op
from instrument_helpers import Traced, Unreadable, arg_attrs
from otel_provenance.instrument.evidence.classify import classify_arguments


def test_an_invented_number_is_invented_even_when_a_result_showed_it():
    t = Traced()
    quantity = 10_000 + secrets.randbelow(10**6)

    @op.tool(side_effect="read", tracer_provider=t.provider)
    def stock() -> dict:
        return {"quantity": quantity, "sku": "SKU-1234"}

    @op.tool(side_effect="read", invented={"new_quantity", "new_sku"}, tracer_provider=t.provider)
    def propose(new_quantity: int, new_sku: str) -> str:
        return "proposed"

    with op.run():
        found = stock()
        propose(new_quantity=found["quantity"], new_sku=found["sku"])
    span = t.span("propose")
    assert arg_attrs(span, "new_quantity")["kind"] == "invented"
    assert arg_attrs(span, "new_sku")["kind"] == "invented"


def test_an_argument_that_cannot_be_examined_gets_a_digest_per_name_so_its_retry_is_counted():
    t = Traced()

    @op.tool(side_effect="read", tracer_provider=t.provider)
    def lookup(query: dict) -> dict:
        return {"ok": True}

    with op.run():
        lookup(query=Unreadable(id="ACCT-0001"))
        lookup(query=Unreadable(id="ACCT-0002"))
    first, second = (arg_attrs(t.span("lookup", i), "query") for i in (0, 1))
    assert first["kind"] == second["kind"] == "assumed"
    assert isinstance(first["digest"], str) and first["digest"] == second["digest"]
    assert t.span("lookup", 1).attributes["agent.retry.number"] == 1


def test_a_classification_names_its_tool_and_kinds():
    classification = classify_arguments("lookup", {"account": "ACCT-0001"}, None)
    assert classification.tool == "lookup"
    assert repr(classification) == "Classification(tool='lookup', kinds={'account': 'assumed'})"
