"""What ``Ledger.remember`` promises around a result: the echo rule holds even when walking the result
fails part-way, the deepest remembered level is ``MAX_DEPTH``, and a call's arguments are kept (for the
``path_join`` projection) exactly when its result was remembered — also when it only re-observed known
values or was one bare value — and not when it added nothing.

Through ``@op.tool`` and ``op.run`` with the real SDK where it reaches.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Mapping
from typing import Any

import pytest

import otel_provenance as op
from instrument_helpers import argument_attributes
from otel_provenance.instrument.evidence.ledger import MAX_DEPTH, Ledger


class Unreadable(Mapping):
    """A mapping whose items cannot be listed (a lazy view over a closed connection, say)."""

    def __getitem__(self, key: str) -> Any:
        raise KeyError(key)

    def __iter__(self) -> Iterator[str]:
        raise RuntimeError("connection closed")

    def __len__(self) -> int:
        return 1

    def items(self):
        raise RuntimeError("connection closed")


def test_an_echo_stays_unsourced_when_walking_the_rest_of_the_result_fails(traced, caplog):
    @op.tool(side_effect="read", tracer_provider=traced.provider)
    def validate(account: str) -> dict:
        return {"account": account, "ticket": "TICKET-FRESH-9", "details": Unreadable()}

    @op.tool(side_effect="write", tracer_provider=traced.provider)
    def transfer(account: str) -> str:
        return "sent"

    attrs = argument_attributes(traced)
    with caplog.at_level(logging.WARNING), op.run():
        validate(account="ACC-GUESSED-1")  # assumed: nothing observed it
        got = attrs(account="ACC-GUESSED-1", ticket="TICKET-FRESH-9")
        with pytest.raises(op.ProvenanceError):
            transfer(account="ACC-GUESSED-1")
    assert got["account"]["kind"] == "assumed"
    assert (got["ticket"]["kind"], got["ticket"]["source_tool"]) == ("observed", "validate")
    assert "could not remember" not in caplog.text  # what was indexed is kept, quietly


def nested(levels: int, leaf: str) -> dict:
    """``levels`` dicts, one inside the other; the innermost holds ``leaf``."""
    value: dict = {"leaf": leaf}
    for _ in range(levels - 1):
        value = {"inner": value}
    return value


def test_a_leaf_at_the_deepest_remembered_level_is_remembered_and_one_deeper_is_not():
    ledger = Ledger(1000)
    ledger.remember("deep", nested(MAX_DEPTH + 1, "DEEPEST-KEPT"), "s1")
    ledger.remember("deeper", nested(MAX_DEPTH + 2, "TOO-DEEP-LOST"), "s2")
    match = ledger.lookup("DEEPEST-KEPT")
    assert match is not None
    assert match.observation.field == ".".join(["inner"] * MAX_DEPTH + ["leaf"])
    assert ledger.lookup("TOO-DEEP-LOST") is None


def test_a_listing_that_only_reobserves_known_entries_still_joins_with_its_root(traced):
    """One entry, already observed: the listing adds no entry but re-observes one (its smallest case)."""

    @op.tool(side_effect="read", tracer_provider=traced.provider)
    def ls(root: str) -> list:
        return ["setup.cfg"]

    attrs = argument_attributes(traced)
    with op.run(inputs={"config": "setup.cfg"}):  # the entry is known before the listing
        ls(root="srv/app")
        got = attrs(path="srv/app/setup.cfg")["path"]
    assert (got["kind"], got["projection"], got["source_tool"]) == ("observed", "path_join", "ls")


def test_a_bare_string_result_joins_with_the_root_argument_of_its_call(traced):
    @op.tool(side_effect="read", tracer_provider=traced.provider)
    def newest(directory: str) -> str:
        return "report-2026.pdf"

    attrs = argument_attributes(traced)
    with op.run():
        newest(directory="archive/reports")
        got = attrs(path="archive/reports/report-2026.pdf")["path"]
    assert (got["kind"], got["projection"], got["source_tool"]) == ("observed", "path_join", "newest")


def test_calls_whose_results_add_nothing_do_not_push_a_listings_root_out(traced):
    """The arguments of at most max(16, bound // 10) calls are kept; calls that returned nothing
    to remember must not take those places."""

    @op.tool(side_effect="read", tracer_provider=traced.provider)
    def ls(root: str) -> dict:
        return {"entries": ["main.py"]}

    @op.tool(side_effect="read", tracer_provider=traced.provider)
    def ping(target: str) -> dict:
        return {}

    attrs = argument_attributes(traced)
    with op.run(ledger_max_entries=100):
        ls(root="srv/app")
        for n in range(20):
            ping(target=f"host-{n:02d}.internal")
        got = attrs(path="srv/app/main.py")["path"]
    assert (got["kind"], got["projection"]) == ("observed", "path_join")


def test_calls_without_a_non_empty_text_argument_do_not_take_a_place(traced):
    @op.tool(side_effect="read", tracer_provider=traced.provider)
    def ls(root: str) -> dict:
        return {"entries": ["main.py"]}

    @op.tool(side_effect="read", tracer_provider=traced.provider)
    def ping(target: str, attempt: int) -> dict:
        return {"reply": f"PONG-{attempt:04d}"}

    attrs = argument_attributes(traced)
    with op.run(ledger_max_entries=100):
        ls(root="srv/app")
        for n in range(20):
            ping(target="", attempt=n)  # remembered, but nothing a path could be joined with
        got = attrs(path="srv/app/main.py")["path"]
    assert (got["kind"], got["projection"]) == ("observed", "path_join")


def test_a_root_given_next_to_arguments_that_are_not_text_still_joins(traced):
    @op.tool(side_effect="read", tracer_provider=traced.provider)
    def ls(root: str, depth: int, patterns: list, hidden: bool) -> dict:
        return {"entries": ["notes.txt"]}

    attrs = argument_attributes(traced)
    with op.run():
        ls(root="~", depth=2, patterns=["*.txt"], hidden=False)  # a one-character root
        got = attrs(path="~/notes.txt")["path"]
    assert (got["kind"], got["projection"], got["source_tool"]) == ("observed", "path_join", "ls")


def join_kinds(attrs, numbers) -> dict[int, object]:
    return {n: attrs(path=f"dir{n:02d}/file{n:02d}.txt")["path"]["kind"] for n in numbers}


@pytest.mark.parametrize(("bound", "kept"), [(100, 16), (200, 20)])
def test_the_arguments_of_the_most_recent_calls_are_kept_and_the_oldest_half_forgotten(traced, bound, kept):
    """``max(16, bound // 10)`` calls keep their arguments; one more drops the oldest half."""

    @op.tool(side_effect="read", tracer_provider=traced.provider)
    def ls(root: str) -> dict:
        return {"entries": [root.replace("dir", "file") + ".txt"]}

    attrs = argument_attributes(traced)
    with op.run(ledger_max_entries=bound):
        for n in range(kept):
            ls(root=f"dir{n:02d}")
        full_table = join_kinds(attrs, [0, kept - 1])
        ls(root=f"dir{kept:02d}")  # one call too many: the oldest half of kept + 1 go
        dropped = (kept + 1) // 2
        after = join_kinds(attrs, [0, dropped - 1, dropped, kept])
    assert full_table == {0: "observed", kept - 1: "observed"}
    assert after == {0: "assumed", dropped - 1: "assumed", dropped: "observed", kept: "observed"}


def test_a_result_that_cannot_be_remembered_is_named_in_a_warning_and_counts_as_unseen(traced, caplog):
    """An unsourced argument whose items cannot be listed: its echoes cannot be told apart, so the
    result is not remembered at all (its values stay unsourced), and the warning names the tool and
    the error's type, never a value."""

    @op.tool(side_effect="read", tracer_provider=traced.provider)
    def search(query: Any) -> dict:
        return {"ticket": "TICKET-FRESH-7"}

    attrs = argument_attributes(traced)
    with caplog.at_level(logging.WARNING), op.run():
        search(query=Unreadable())
        got = attrs(ticket="TICKET-FRESH-7")
    assert got["ticket"]["kind"] == "assumed"
    assert [r.getMessage() for r in caplog.records if "could not remember" in r.getMessage()] == [
        "search: could not remember the result (RuntimeError)"
    ]
