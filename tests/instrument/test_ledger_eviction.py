"""The ledger's bound: past ``max_entries`` the oldest entries go, down to three quarters of the bound,
and what is kept still matches through every projection (the git object id prefix index included)."""

from __future__ import annotations

import otel_provenance as op
from instrument_helpers import arg_attrs

SHA = "9fceb02d0ae598e95dc970b74767f19372d61af8"


def test_overflow_drops_the_oldest_down_to_three_quarters_and_keeps_the_object_id_prefixes(traced):
    @op.tool(side_effect="read", tracer_provider=traced.provider)
    def fetch(n: int) -> dict:
        return {"value": f"value-{n:04d}-x"}

    @op.tool(side_effect="read", tracer_provider=traced.provider)
    def rev_parse() -> dict:
        return {"head": SHA}

    @op.tool(side_effect="read", tracer_provider=traced.provider)
    def use(value: str) -> None:
        return None

    def kind(value: str) -> dict[str, object]:
        use(value=value)
        return arg_attrs(traced.span("use"), "value")

    with op.run(ledger_max_entries=8):
        for n in range(8):
            fetch(n=n)  # 8 entries: at the bound, nothing evicted yet
        assert kind("value-0000-x")["kind"] == "observed"
        assert "agent.ledger.full" not in traced.span("use").attributes
        rev_parse()  # the 9th entry: the oldest go until 6 (three quarters of 8) are left
        kinds = {n: kind(f"value-{n:04d}-x")["kind"] for n in range(8)}
        short = kind(SHA[:7])
    assert kinds == {n: "assumed" if n < 3 else "observed" for n in range(8)}
    assert traced.span("use").attributes["agent.ledger.full"] is True
    assert (short["kind"], short["projection"], short["source_field"]) == (
        "observed",
        "git_sha_prefix",
        "head",
    )
