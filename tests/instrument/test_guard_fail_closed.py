"""Fail-closed paths that a planted one-line bug could open without any test noticing (issue #17).

Through ``@op.tool`` and ``op.run`` with the real SDK, as a user would call them.
"""

from __future__ import annotations

import pytest

import otel_provenance as op
from instrument_helpers import Unreadable, arg_attrs


def test_an_argument_that_cannot_be_examined_is_assumed_never_observed(traced):
    @op.tool(side_effect="read", tracer_provider=traced.provider)
    def lookup(query: dict) -> dict:
        return {"ok": True}

    with op.run(inputs={"query": {"id": "ACCT-0001"}}):
        lookup(query=Unreadable(id="ACCT-0001"))
    attrs = arg_attrs(traced.span("lookup"), "query")
    assert attrs["kind"] == "assumed"
    assert "source_tool" not in attrs


def test_a_classification_fault_blocks_a_write_even_within_its_assumed_budget(traced):
    ran: list[str] = []

    @op.tool(side_effect="write", budget=op.Budget(max_assumed=5), tracer_provider=traced.provider)
    def update(record: dict) -> dict:
        ran.append("update")
        return {"ok": True}

    with op.run(), pytest.raises(op.ProvenanceError) as blocked:
        update(record=Unreadable(id="ACCT-0001"))
    assert ran == []
    assert "provenance_fault:record=RuntimeError" in blocked.value.violations
    span = traced.span("update")
    assert "provenance_fault:record=RuntimeError" in span.attributes["agent.violations"]


def test_max_assumed_one_allows_exactly_one_unsourced_argument(traced):
    ran: list[tuple[str, ...]] = []

    @op.tool(side_effect="write", budget=op.Budget(max_assumed=1, allow=()), tracer_provider=traced.provider)
    def transfer(source: str, target: str, memo: str = "") -> dict:
        ran.append((source, target))
        return {"ok": True}

    @op.tool(side_effect="read", tracer_provider=traced.provider)
    def accounts() -> dict:
        return {"source": "ACCT-1111", "target": "ACCT-2222"}

    with op.run():
        listed = accounts()
        transfer(source=listed["source"], target="ACCT-9999")  # one assumed: at the limit, runs
        with pytest.raises(op.ProvenanceError) as blocked:
            transfer(source="ACCT-8888", target="ACCT-9999")  # two assumed: over it
    assert ran == [("ACCT-1111", "ACCT-9999")]
    assert set(blocked.value.violations) == {"max_assumed:source=assumed", "max_assumed:target=assumed"}


def test_a_root_from_one_result_is_not_joined_with_an_entry_from_another(traced):
    ran: list[str] = []

    @op.tool(side_effect="read", tracer_provider=traced.provider)
    def list_dir() -> dict:
        return {"root": "/srv/reports", "files": ["q3.csv"]}

    @op.tool(side_effect="read", tracer_provider=traced.provider)
    def list_secrets() -> dict:
        return {"files": ["master.key"]}

    @op.tool(side_effect="write", tracer_provider=traced.provider)
    def delete(path: str) -> dict:
        ran.append(path)
        return {"deleted": True}

    with op.run():
        list_dir()
        list_secrets()
        delete(path="/srv/reports/q3.csv")  # root and entry of one listing: observed (path_join)
        with pytest.raises(op.ProvenanceError):
            delete(path="/srv/reports/master.key")  # root of one listing, entry of another
    assert ran == ["/srv/reports/q3.csv"]
    first, second = traced.span("delete", 0), traced.span("delete", 1)
    assert arg_attrs(first, "path")["projection"] == "path_join"
    assert arg_attrs(second, "path")["kind"] == "assumed"


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"max_assumed": True}, "Budget.max_assumed: must be None or an integer >= 0"),
        ({"max_assumed": 1.0}, "Budget.max_assumed: must be None or an integer >= 0"),
        ({"max_invented": -1}, "Budget.max_invented: must be None or an integer >= 0"),
        ({"allow": "comment"}, "Budget.allow: must be a collection of argument names, e.g. {'comment'}"),
        ({"allow": {"comment", ""}}, "Budget.allow: every entry must be a non-empty argument name"),
        ({"allow": {"comment", 7}}, "Budget.allow: every entry must be a non-empty argument name"),
        ({"enforce": "yes"}, "Budget.enforce: must be None, True or False"),
    ],
)
def test_a_budget_that_cannot_mean_what_it_says_is_refused_with_its_field(kwargs, message):
    with pytest.raises(op.ConfigurationError) as refused:
        op.Budget(**kwargs)
    assert str(refused.value) == message


def test_allow_none_means_the_default_allow_list(traced):
    @op.tool(side_effect="write", budget=op.Budget(allow=None), tracer_provider=traced.provider)
    def close(ticket: str, comment: str) -> dict:
        return {"closed": True}

    with op.run(inputs={"ticket": "TICKET-0042"}):
        close(ticket="TICKET-0042", comment="resolved by the customer")  # comment: assumed but allowed
    assert arg_attrs(traced.span("close"), "comment")["kind"] == "assumed"
