"""The room of one walk: a result is walked for at most ``max_entries`` units, one per container and
one per non-empty leaf, checked after each unit, so a result that is too big is cut where the room ran
out (not indexed whole and then evicted). ``None`` fields cost nothing, a nested container is entered
only while there is room, and nesting is cut below ``MAX_DEPTH``.

Through the ledger's public methods (``remember``, ``observation``, ``lookup``, ``full``), as the
``@op.tool`` decorators use them.
"""

from __future__ import annotations

import enum
import uuid
from typing import Any

import pytest

from otel_provenance.instrument.evidence import projections as pj
from otel_provenance.instrument.evidence.ledger import MAX_DEPTH, Ledger
from otel_provenance.instrument.evidence.trust import source_trust

# Values a tool may return as enum members: each one's text is its value.
ENTRY = enum.StrEnum("Entry", {f"E{i:02d}": f"entry_{i:02d}.txt" for i in range(40)})

LEAF_KINDS = {
    "text": lambda i: f"value-{i:02d}",
    "int": lambda i: 100_000 + i,
    "float": lambda i: 1000.5 + i,
    "uuid": lambda i: uuid.UUID(int=0x1234_5678_0000 + i),
}


def text_of(value: Any) -> str:
    found = pj.leaf_text(value)
    assert found is not None
    return found[0]


def remembered(ledger: Ledger, values: list[Any]) -> list[bool]:
    """For each value: is its text in the ledger now?"""
    return [ledger.observation(text_of(value)) is not None for value in values]


def nested(value: Any, levels: int) -> Any:
    """``value`` wrapped in ``levels`` one-field dicts, so it is walked at depth ``levels``."""
    for _ in range(levels):
        value = {"d": value}
    return value


@pytest.mark.parametrize("kind", sorted(LEAF_KINDS))
def test_a_result_bigger_than_the_bound_is_cut_where_the_room_ran_out(kind):
    """Bound 4: the dict costs one unit, then three leaves fit; the walk stops there, so the first
    three values are kept, the rest never indexed, and nothing had to be evicted."""
    values = [LEAF_KINDS[kind](i) for i in range(10)]
    ledger = Ledger(4)
    ledger.remember("fetch", {f"k{i}": value for i, value in enumerate(values)}, "01")
    assert remembered(ledger, values) == [True] * 3 + [False] * 7
    assert len(ledger) == 3
    assert not ledger.full


def test_a_listing_as_long_as_the_bound_keeps_all_but_its_last_entry():
    """The list itself costs a unit: with bound 40, a listing of 39 entries fits whole (the bulk
    path), one of 40 entries loses its last entry, as the per-leaf walk charges it."""
    fits = [f"file_{i:03d}.txt" for i in range(39)]
    ledger = Ledger(40)
    ledger.remember("ls", fits, "01")
    assert remembered(ledger, fits) == [True] * 39

    exact = [f"file_{i:03d}.txt" for i in range(40)]
    ledger = Ledger(40)
    ledger.remember("ls", exact, "01")
    assert remembered(ledger, exact) == [True] * 39 + [False]
    assert not ledger.full


def test_a_nested_container_is_not_entered_once_the_room_is_spent():
    """Bound 1: the outer dict takes the only unit, so the dict inside it is not walked; bound 2
    leaves room for the inner dict and its value."""
    result = {"outer": {"id": "value-1"}}
    tight = Ledger(1)
    tight.remember("fetch", result, "01")
    assert tight.observation("value-1") is None
    assert len(tight) == 0

    roomy = Ledger(2)
    roomy.remember("fetch", result, "01")
    assert roomy.observation("value-1") is not None


@pytest.mark.parametrize("bound", [1, 2, 3, 4])
def test_none_fields_cost_no_room(bound):
    """Adding ``None`` fields around the values of a result changes nothing about which values a
    bounded walk remembers."""
    values = ["value-a", "value-b", "value-c"]
    plain = Ledger(bound)
    plain.remember("fetch", {"a": values[0], "b": values[1], "c": values[2]}, "01")
    padded = Ledger(bound)
    padded.remember(
        "fetch", {"n0": None, "a": values[0], "n1": None, "b": values[1], "n2": None, "c": values[2]}, "01"
    )
    assert remembered(padded, values) == remembered(plain, values)


def test_a_listing_re_observed_up_to_the_bound_still_joins_with_its_root():
    """A second listing that only repeats known entries, and fills the walk's room, adds no entry to
    the ledger, yet it was observed: its call's root argument joins with its entries."""
    ledger = Ledger(2)
    ledger.remember("ls", ["alpha.txt", "beta.txt"], "01")  # room 2: the list, then alpha.txt
    before = len(ledger)
    ledger.remember("ls", ["alpha.txt", "beta.txt"], "02", call_arguments={"root": "/srv"})
    assert len(ledger) == before == 1
    match = ledger.lookup("/srv/alpha.txt")
    assert match is not None
    assert (match.projection, match.observation.span_id) == (pj.PATH_JOIN, "02")


def test_a_listing_of_str_enum_members_at_the_deepest_level_is_remembered_whole():
    """A listing of 32 or more ``StrEnum`` members is indexed as a listing of plain strings, even
    when it sits at ``MAX_DEPTH``; one level deeper, nesting is cut and nothing is remembered."""
    members = list(ENTRY)[:32]
    deepest = Ledger(1000)
    deepest.remember("ls", nested(members, MAX_DEPTH), "01")
    assert remembered(deepest, members) == [True] * 32
    hit = deepest.lookup("entry_05.txt")
    assert hit is not None
    assert (hit.projection, hit.observation.field) == (pj.EXACT, "d." * MAX_DEPTH + "5")

    too_deep = Ledger(1000)
    too_deep.remember("ls", nested(members, MAX_DEPTH + 1), "01")
    assert len(too_deep) == 0


# An untrusted inbox whose ``id`` and ``meta`` fields the system sets (``trusted_fields``): the walk
# looks for those fields at any depth, and takes in whatever a named field holds.
INBOX = source_trust("op.tool(read_inbox)", "untrusted", trusted_fields=["id", "meta"])


def trusted_match(result: Any, value: str) -> bool:
    ledger = Ledger(1000)
    ledger.remember("read_inbox", result, "01", trust=INBOX)
    match = ledger.lookup(value)
    return match is not None and match.trusted


def test_a_system_field_is_found_down_to_the_depth_limit_and_not_below_it():
    """The search for a named field goes down ``MAX_DEPTH`` levels like every walk: an ``id`` in the
    record at that depth is trusted evidence, one level deeper it is not (only untrusted, if at all)."""
    assert trusted_match(nested({"id": "msg-7781"}, MAX_DEPTH), "msg-7781")
    assert not trusted_match(nested({"id": "msg-7781"}, MAX_DEPTH + 1), "msg-7781")


def test_what_a_system_field_holds_is_walked_down_to_the_same_depth_limit():
    """Inside a named field the walk goes on counting its depth from the field's: a leaf whose record
    sits at ``MAX_DEPTH`` (the field at depth 1) is trusted evidence, one level deeper it is cut."""
    assert trusted_match({"meta": nested({"x": "leaf-42"}, MAX_DEPTH - 1)}, "leaf-42")
    assert not trusted_match({"meta": nested({"x": "leaf-42"}, MAX_DEPTH)}, "leaf-42")
