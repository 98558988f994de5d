"""``op.run(ledger_max_entries=...)``: an integer >= 1, refused otherwise with a message naming the
setting; the smallest bound, 1, keeps the newest entry and reports the ledger full."""

from __future__ import annotations

import pytest

import otel_provenance as op
from instrument_helpers import Traced, arg_attrs


@pytest.mark.parametrize("bound", [0, -3, True, False, 2.5, "10", 10.0])
def test_a_ledger_bound_that_is_not_an_integer_of_at_least_one_is_refused(bound):
    with pytest.raises(op.ConfigurationError) as error:
        op.run(ledger_max_entries=bound)
    assert str(error.value) == "ledger max_entries: must be an integer >= 1"


def test_a_ledger_bound_of_one_keeps_the_newest_entry_and_reports_full():
    traced = Traced()

    @op.tool(side_effect="read", tracer_provider=traced.provider)
    def fetch() -> dict:
        return {"ticket": "TICKET-SECOND"}

    @op.tool(side_effect="read", tracer_provider=traced.provider)
    def use(value: str) -> None:
        return None

    with op.run(inputs={"ticket": "TICKET-FIRST"}, ledger_max_entries=1):
        use(value="TICKET-FIRST")
        first = arg_attrs(traced.span("use"), "value")["kind"]
        assert "agent.ledger.full" not in traced.span("use").attributes
        fetch()
        kinds = {}
        for value in ("TICKET-FIRST", "TICKET-SECOND"):
            use(value=value)
            kinds[value] = arg_attrs(traced.span("use"), "value")["kind"]
    assert first == "observed"
    assert kinds == {"TICKET-FIRST": "assumed", "TICKET-SECOND": "observed"}
    assert traced.span("use").attributes["agent.ledger.full"] is True
