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


def test_what_each_record_is_goes_with_the_entries_of_its_call(traced):
    """A run that reads record after record (files, events, each with an ``id``) keeps what each record
    is (for typed id aliases) only while its call's entries are in the bounded ledger: memory stays
    flat however many results arrive (it grew by every record of every result before)."""

    @op.tool(side_effect="read", tracer_provider=traced.provider)
    def list_files(page: int) -> dict:
        return {"files": [{"id": f"{page}-{i}", "name": f"f{page}-{i}.txt"} for i in range(40)]}

    with op.run(ledger_max_entries=200) as run:
        held = []
        for page in range(60):
            list_files(page=page)
            held.append(len(run.ledger._records))
    # 80 entries a call, 200 at most: the records of the three or four calls the ledger still holds
    # (before, the records had a bound of their own, the ledger's 200, and outlived their entries)
    assert max(held[10:]) <= 4 * 40, held


def test_the_echoes_of_unsourced_arguments_are_bounded_with_the_ledger(traced):
    """Each call that echoes an unsourced argument keeps its echo keys (so that the echo is never
    evidence); past the bound the oldest calls' keys go too: memory stays flat, and the latest echo
    is still refused as a source."""

    @op.tool(side_effect="read", tracer_provider=traced.provider)
    def search(query: str) -> dict:
        return {"query": query, "hits": 0}

    @op.tool(side_effect="read", tracer_provider=traced.provider)
    def use(value: str) -> None:
        return None

    with op.run(ledger_max_entries=8) as run:
        held = []
        for n in range(40):
            search(query=f"query-{n:04d}-x")
            held.append(len(run.ledger._echo_spans))
        use(value="query-0039-x")
    assert max(held) <= 8 and held[-1] >= 1, held
    assert arg_attrs(traced.span("use"), "value")["kind"] == "assumed"
