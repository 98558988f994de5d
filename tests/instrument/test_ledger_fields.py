"""Single leaves and field paths: keys of a result that are data (an email, a number with a fraction,
a tuple, None, a boolean) are exported as ``*``; a bare result of exactly ``MAX_TEXT_LENGTH`` characters
is remembered and a longer one is not; values that can never be evidence (bytes, objects, empty texts)
do not use up the room a result has in the ledger.

Through ``@op.tool`` and ``op.run`` with the real SDK.
"""

from __future__ import annotations

import datetime
import enum
import uuid
from typing import Any

import pytest

import otel_provenance as op
from instrument_helpers import Traced, argument_attributes
from otel_provenance.instrument.evidence import projections as pj
from otel_provenance.instrument.evidence.ledger import Ledger


def tools(traced: Traced, result: Any):
    @op.tool(side_effect="read", tracer_provider=traced.provider)
    def fetch() -> Any:
        return result

    attrs = argument_attributes(traced)

    return fetch, attrs


def test_a_key_that_is_data_is_exported_as_a_star(traced):
    fetch, attrs = tools(traced, {"users": {"alice@example.com": {"id": "USER-000123"}}})
    with op.run():
        fetch()
        got = attrs(user="USER-000123")["user"]
    assert (got["kind"], got["source_field"]) == ("observed", "users.*.id")


@pytest.mark.parametrize("key", [1.5, None, (1, 2), True, b"raw"], ids=repr)
def test_a_key_that_is_neither_text_nor_an_integer_is_exported_as_a_star(traced, key):
    fetch, attrs = tools(traced, {"prices": {key: "PRICE-TAG-0042", "n": {key: {"dry_run": True}}}})
    with op.run():
        fetch()
        got = attrs(price="PRICE-TAG-0042", dry_run=True)
    assert (got["price"]["kind"], got["price"]["source_field"]) == ("observed", "prices.*")
    assert (got["dry_run"]["kind"], got["dry_run"]["source_field"]) == ("observed", "prices.n.*.dry_run")


def test_a_bare_result_of_the_longest_remembered_length_is_remembered_and_a_longer_one_is_not(traced):
    longest = "L" * pj.MAX_TEXT_LENGTH
    over = "O" * (pj.MAX_TEXT_LENGTH + 1)

    @op.tool(side_effect="read", tracer_provider=traced.provider)
    def read(name: str) -> str:
        return longest if name == "longest" else over

    _, attrs = tools(traced, None)
    with op.run():
        read(name="longest")
        read(name="over")
        got = attrs(longest=longest, over=over)
    assert (got["longest"]["kind"], got["longest"]["source_tool"]) == ("observed", "read")
    assert got["over"]["kind"] == "assumed"


class Blank(enum.Enum):
    NONE = ""
    EMPTY = ""  # an alias of NONE
    UNSET = " ".strip()


class Opaque:
    """An object with no stable text form."""


@pytest.mark.parametrize(
    "never_evidence",
    [
        pytest.param([b"\x00\x01", b"\x02", b"\x03"], id="bytes"),
        pytest.param([Opaque(), Opaque(), Opaque()], id="objects"),
        pytest.param([Blank.NONE, Blank.EMPTY, Blank.UNSET], id="empty-enum-values"),
    ],
)
def test_values_that_are_never_evidence_do_not_use_up_the_room_of_a_result(traced, never_evidence):
    """A bound of 4: the result dict takes one unit, so three such values would leave no room."""
    result = {f"field_{n}": value for n, value in enumerate(never_evidence)}
    result["ticket"] = "TICKET-AFTER-THEM"
    fetch, attrs = tools(traced, result)
    with op.run(ledger_max_entries=4):
        fetch()
        got = attrs(ticket="TICKET-AFTER-THEM")["ticket"]
    assert (got["kind"], got["source_field"]) == ("observed", "ticket")


SHA1 = "9fceb02d0ae598e95dc970b74767f19372d61af8"


def bare(traced: Traced, value: Any):
    @op.tool(side_effect="read", tracer_provider=traced.provider)
    def read() -> Any:
        return value

    return read, tools(traced, None)[1]


def test_a_bare_object_id_result_is_matched_by_its_prefix(traced):
    read, attrs = bare(traced, SHA1)
    with op.run():
        read()
        got = attrs(short=SHA1[:7])["short"]
    assert (got["kind"], got["projection"], got["source_tool"]) == ("observed", "git_sha_prefix", "read")


def test_a_hex_prefix_of_a_bare_text_that_is_no_object_id_is_not_evidence(traced):
    read, attrs = bare(traced, "cafebabe-deadbeef-report")
    with op.run():
        read()
        got = attrs(value="cafebabe", whole="cafebabe-deadbeef-report")
    assert got["value"]["kind"] == "assumed"
    assert (got["whole"]["kind"], got["whole"]["projection"]) == ("observed", "exact")


def test_a_bare_result_that_normalises_matches_exactly_and_by_its_normal_form(traced):
    read, attrs = bare(traced, "./reports//q3.pdf")
    with op.run():
        read()
        got = attrs(raw="./reports//q3.pdf", normal="reports/q3.pdf")
    assert (got["raw"]["kind"], got["raw"]["projection"]) == ("observed", "exact")
    assert (got["normal"]["kind"], got["normal"]["projection"]) == ("observed", "path_normalised")


def test_dates_and_ids_in_a_result_take_one_unit_of_room_each(traced):
    """A bound of 4: the dict, the date, the UUID and the ticket fill it exactly; all are kept."""
    reference = uuid.UUID("12345678-1234-5678-1234-567812345678")
    fetch, attrs = tools(
        traced, {"when": datetime.date(2026, 1, 2), "ref": reference, "ticket": "TICKET-LAST-ONE"}
    )
    with op.run(ledger_max_entries=4):
        fetch()
        got = attrs(when="2026-01-02", ref=str(reference), ticket="TICKET-LAST-ONE")
    assert {name: got[name]["kind"] for name in got} == {n: "observed" for n in ("when", "ref", "ticket")}


def test_a_date_or_id_inside_a_result_names_its_tool_span_and_field_path(traced):
    reference = uuid.UUID("87654321-4321-8765-4321-876543218765")
    audit = {"created": datetime.date(2026, 3, 4), "ref": reference}
    fetch, attrs = tools(traced, {"meta": {"audit": audit}})
    with op.run():
        fetch()
        got = attrs(created="2026-03-04", ref=str(reference))
    span_id = format(traced.span("fetch").context.span_id, "016x")
    for name in ("created", "ref"):
        assert (got[name]["kind"], got[name]["source_tool"]) == ("observed", "fetch")
        assert got[name]["source_span_id"] == span_id
        assert got[name]["source_field"] == f"meta.audit.{name}"


def test_a_bare_date_result_is_remembered(traced):
    read, attrs = bare(traced, datetime.date(2026, 5, 6))
    with op.run():
        read()
        got = attrs(day="2026-05-06")["day"]
    assert (got["kind"], got["source_tool"]) == ("observed", "read")


def test_items_a_generator_tool_yields_are_named_by_their_position(traced):
    @op.tool(side_effect="read", tracer_provider=traced.provider)
    def stream() -> Any:
        yield "ITEM-A-0001"
        yield "ITEM-B-0002"

    _, attrs = tools(traced, None)
    with op.run():
        assert list(stream()) == ["ITEM-A-0001", "ITEM-B-0002"]
        got = attrs(first="ITEM-A-0001", second="ITEM-B-0002")
    span_id = format(traced.span("stream").context.span_id, "016x")
    for name, position in (("first", "0"), ("second", "1")):
        assert (got[name]["kind"], got[name]["source_tool"]) == ("observed", "stream")
        assert (got[name]["source_field"], got[name]["source_span_id"]) == (position, span_id)


def test_a_bare_value_remembered_under_a_field_prefix_is_named_by_the_whole_prefix():
    """What the MCP wrapper does for a text content block: ``content.<index>``."""
    ledger = Ledger(100)
    ledger.remember("mcp_tool", "CONTENT-TEXT-0001", "s1", field_prefix=("content", 0))
    ledger.remember("mcp_tool", uuid.UUID(int=7), "s1", field_prefix=("content", 1, "ref"))
    ledger.remember("plain", "BARE-TEXT-0002", "s2")
    ref = str(uuid.UUID(int=7))
    fields = {text: ledger.lookup(text).observation.field for text in ("CONTENT-TEXT-0001", ref)}
    assert fields == {"CONTENT-TEXT-0001": "content.0", ref: "content.1.ref"}
    assert ledger.lookup("BARE-TEXT-0002").observation.field == "*"  # no field name: exported as *
