"""What the ledger keeps about a result's containers, not its leaves: the field names it used (a mapping
key of an argument may be one), the keys that are data, and what a record holding an ``id`` is.

Remembering notes each field name once per result, at the first container using it, and keeps a
record's type, working out what it is only when one of its ids is looked up (case 3 of the
benchmarks: a 5 MB result has ~58k containers). These hold what that must not change.
"""

from __future__ import annotations

import dataclasses

import pytest

import otel_provenance as op
from instrument_helpers import Traced, arg_attrs
from otel_provenance.instrument.evidence.ledger import Ledger


@pytest.fixture
def traced() -> Traced:
    return Traced()


def test_a_field_name_first_used_by_a_later_container_is_noted_and_every_data_key_is_a_value():
    ledger = Ledger(1000)
    ledger.remember(
        "list_members",
        [
            {"id": "M-1", "role": "admin"},
            {"id": "M-2", "role": "viewer", "team": "payments"},
            {"id": "M-3", "ann@example.com": "owner"},
            {"id": "M-4", "bob@example.com": "owner"},
        ],
        "s1",
    )
    team = ledger.match_name("team")
    assert team is not None and team.observation.field == "1.team"
    role = ledger.match_name("role")  # used again by later containers: still its first
    assert role is not None and role.observation.field == "0.role"
    for position, address in ((2, "ann@example.com"), (3, "bob@example.com")):
        found = ledger.lookup(address)
        assert found is not None and found.observation.field == f"{position}.*"
    assert ledger.match_name("nobody") is None


def test_a_later_result_using_a_field_name_becomes_its_source():
    ledger = Ledger(1000)
    ledger.remember("first", [{"owner": "x"}], "s1")
    ledger.remember("second", {"rows": [{"owner": "y"}, {"owner": "z"}]}, "s2")
    found = ledger.match_name("owner")
    assert found is not None
    assert (found.observation.tool, found.observation.span_id, found.observation.field) == (
        "second",
        "s2",
        "rows.0.owner",
    )


@dataclasses.dataclass
class CalendarEvent:
    id: str
    title: str


@dataclasses.dataclass
class CloudDriveFile:
    id: str
    name: str


def test_a_record_that_is_an_object_is_the_kind_its_class_names(traced):
    """Records of both kinds in one result, under one field: only the class tells a file's id 7 from
    an event's id 13 (the red team's ``delete_file("13")``)."""

    @op.tool(side_effect="read", trust="trusted", tracer_provider=traced.provider)
    def search() -> dict:
        return {"hits": [CalendarEvent("13", "Stand-up"), CloudDriveFile("7", "notes.txt")]}

    deleted: list[str] = []

    @op.tool(side_effect="write", tracer_provider=traced.provider)
    def delete_file(file_id: str) -> str:
        deleted.append(file_id)
        return "deleted"

    with op.run():
        search()
        assert delete_file(file_id="7") == "deleted"
        got = arg_attrs(traced.span("delete_file"), "file_id")
        assert (got["projection"], got["source_field"]) == ("id_alias", "hits.1.id")
        with pytest.raises(op.ProvenanceError, match="file_id=assumed:short_value"):
            delete_file(file_id="13")
    assert deleted == ["7"]


def test_a_record_under_a_key_that_is_data_is_named_by_the_field_above_it(traced):
    @op.tool(side_effect="read", trust="trusted", tracer_provider=traced.provider)
    def shared() -> dict:
        return {
            "files": {"ann@example.com": {"id": "7"}},
            "events": {"ann@example.com": {"id": "13"}},
        }

    @op.tool(side_effect="write", tracer_provider=traced.provider)
    def delete_file(file_id: str) -> str:
        return "deleted"

    with op.run():
        shared()
        assert delete_file(file_id="7") == "deleted"
        assert arg_attrs(traced.span("delete_file"), "file_id")["source_field"] == "files.*.id"
        with pytest.raises(op.ProvenanceError, match="file_id=assumed:short_value"):
            delete_file(file_id="13")


@dataclasses.dataclass
class Seat:
    row: str
    number: int


def test_a_field_name_of_records_in_a_list_is_noted_at_the_first_record():
    ledger = Ledger(1000)
    ledger.remember("list_seats", [Seat("A", 1), Seat("B", 2)], "s1")
    for name in ("row", "number"):
        found = ledger.match_name(name)
        assert found is not None and found.observation.field == f"0.{name}"
