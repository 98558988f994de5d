"""Rules that name no step are judged before every call (#50): a selector by attributes alone
(``select: {attributes: {agent.side_effect: write}}``), or no selector at all (a ``numeric_budgets``
rule over every span, as docs/contracts.md's token budget is written). Whichever tool the agent calls
— one another rule names, or one no rule names — such a rule is judged on it.
"""

from __future__ import annotations

from functools import partial

import pytest
from contract_guard_calls import contract_file, refused

import otel_provenance as op
from instrument_helpers import Traced

CUSTOMER = "cus-50377"


class Crm:
    """A read and two writes; ``log`` is what reached the CRM, in order."""

    def __init__(self, traced: Traced) -> None:
        self.log: list[str] = []
        provider = traced.provider

        @op.tool(name="crm.lookup", side_effect="read", tracer_provider=provider)
        def lookup(customer_id: str) -> dict:
            self.log.append("lookup")
            return {"customer_id": customer_id, "tier": "gold"}

        @op.tool(name="crm.note", side_effect="write", tracer_provider=provider)
        def note(customer_id: str) -> dict:
            self.log.append("note")
            return {"noted": True}

        @op.tool(name="crm.close", side_effect="write", tracer_provider=provider)
        def close(customer_id: str) -> dict:
            self.log.append("close")
            return {"closed": True}

        self.lookup, self.note, self.close = lookup, note, close

    def calls(self, *tools) -> list[tuple[str, ...]]:
        """Call each tool for the customer; the objections of those the guard blocked."""
        return refused([partial(tool, customer_id=CUSTOMER) for tool in tools])


READ_ONLY = "{id: read-only, type: forbidden_spans, select: {attributes: {agent.side_effect: write}}}"
ONE_LOOKUP = "{id: one-lookup, type: cardinality, select: {step: crm.lookup}, max: 1}"


@pytest.mark.parametrize(
    "rules", [(READ_ONLY,), (ONE_LOOKUP, READ_ONLY)], ids=["alone", "beside-a-step-rule"]
)
def test_a_rule_selecting_by_attributes_alone_blocks_every_tool_it_selects(tmp_path, rules):
    traced = Traced()
    crm = Crm(traced)
    with op.run(
        inputs={"customer_id": CUSTOMER},
        contract=contract_file(tmp_path, *rules, name="crm"),
        tracer_provider=traced.provider,
    ):
        blocked = crm.calls(crm.lookup, crm.note, crm.close)
    assert crm.log == ["lookup"]
    assert blocked == [("contract:read-only:FORBIDDEN_STEP",)] * 2


def test_a_budget_over_every_span_is_judged_before_any_tool_is_called(tmp_path):
    """At most one retry in the whole run, whatever the tool: the second repeated call is refused."""
    retries = "{id: one-retry, type: numeric_budgets, attribute: agent.retry.number, aggregate: sum, max: 1}"
    traced = Traced()
    crm = Crm(traced)
    with op.run(
        inputs={"customer_id": CUSTOMER},
        contract=contract_file(tmp_path, retries, name="crm"),
        tracer_provider=traced.provider,
    ):
        blocked = crm.calls(crm.lookup, crm.lookup, crm.note, crm.note)
    assert crm.log == ["lookup", "lookup", "note"]
    assert blocked == [("contract:one-retry:BUDGET_EXCEEDED",)]
