"""Long flat listings (32 strings or more): the ledger's bulk path must remember them exactly as the
per-leaf path would — every entry under its normalised text, with its tool, span id, field path and
kind, object ids in the prefix index, over-long entries left out — and fall back to the per-leaf path
whenever an entry is not a plain ASCII string that normalisation leaves unchanged.

Through ``@op.tool`` and ``op.run`` with the real SDK: ``ls`` returns the listing, ``use`` shows how a
value is classified afterwards.
"""

from __future__ import annotations

from typing import Any

import pytest

import otel_provenance as op
from instrument_helpers import Traced, arg_attrs
from otel_provenance.instrument.evidence import projections as pj
from otel_provenance.instrument.evidence.ledger import Ledger

SHA1 = "9fceb02d0ae598e95dc970b74767f19372d61af8"  # 40 hex digits (a git object id)
SHA256 = "3b18e512dba79e4c8300dd08aeb37f8e728b8dad3b18e512dba79e4c8300dd08"  # 64 hex digits


def names(count: int = 40) -> list[str]:
    """Plain entries: ASCII, no slash, shorter than an object id (the bulk path's typical input)."""
    return [f"entry_{i:03d}.txt" for i in range(count)]


def with_entry(entry: Any, position: int, count: int = 40) -> list[Any]:
    """A listing of ``count`` plain entries where the one at ``position`` (-1: last) is ``entry``."""
    listing: list[Any] = names(count)
    listing[position] = entry
    return listing


class Tools:
    """``ls()`` returns a given result; ``kind_of(name=value)`` classifies a value passed afterwards."""

    def __init__(self, traced: Traced) -> None:
        self.traced = traced
        self.result: Any = None

        @op.tool(side_effect="read", tracer_provider=traced.provider)
        def ls() -> Any:
            return self.result

        @op.tool(side_effect="read", tracer_provider=traced.provider)
        def use(**values: Any) -> None:
            return None

        self.ls = ls
        self._use = use

    def ls_span_id(self) -> str:
        return format(self.traced.span("ls").context.span_id, "016x")

    def attrs(self, **values: Any) -> dict[str, dict[str, object]]:
        out = {}
        for name, value in values.items():
            self._use(**{name: value})
            out[name] = arg_attrs(self.traced.span("use"), name)
        return out


@pytest.fixture
def tools() -> Tools:
    return Tools(Traced())


def test_an_entry_of_a_long_listing_names_its_tool_span_field_and_exact_projection(tools):
    listing = names()
    tools.result = {"data": {"files": listing}}
    with op.run():
        tools.ls()
        got = tools.attrs(first=listing[17], again=listing[17], other=listing[3])
    span_id = tools.ls_span_id()
    assert got["first"] == got["again"]  # the positions resolved on the first lookup are reused
    for name, position in (("first", 17), ("other", 3)):
        attrs = got[name]
        assert attrs["kind"] == "observed"
        assert attrs["source_tool"] == "ls"
        assert attrs["source_span_id"] == span_id
        assert attrs["source_field"] == f"data.files.{position}"
        assert attrs["projection"] == "exact"


def test_a_long_top_level_listing_names_entries_by_position_alone(tools):
    tools.result = names()
    with op.run():
        tools.ls()
        got = tools.attrs(value="entry_021.txt")["value"]
    assert (got["kind"], got["source_field"], got["projection"]) == ("observed", "21", "exact")


# Each listing has exactly one entry that path normalisation changes, and nothing else that would:
# every one of the bulk path's checks must send it to the per-leaf path on its own.
ONE_ENTRY_TO_NORMALISE = [
    pytest.param("documents/", -1, "documents", id="trailing-slash-last"),
    pytest.param("documents/", 20, "documents", id="trailing-slash-inside"),
    pytest.param("src//main.py", 20, "src/main.py", id="double-slash"),
    pytest.param("src/./main.py", 20, "src/main.py", id="dot-segment"),
    pytest.param("sources/.", 20, "sources", id="trailing-dot-segment-inside"),
    pytest.param("sources/.", -1, "sources", id="trailing-dot-segment-last"),
    pytest.param("./app.py", 20, "app.py", id="leading-dot"),
]


@pytest.mark.parametrize(("entry", "position", "normalised"), ONE_ENTRY_TO_NORMALISE)
def test_a_long_listing_entry_that_normalises_is_matched_by_its_normal_form(
    tools, entry, position, normalised
):
    tools.result = {"files": with_entry(entry, position)}
    index = position % 40
    with op.run():
        tools.ls()
        got = tools.attrs(normal=normalised, raw=entry, plain="entry_005.txt")
    assert (got["normal"]["kind"], got["normal"]["projection"]) == ("observed", "path_normalised")
    assert got["normal"]["source_field"] == f"files.{index}"
    assert (got["raw"]["kind"], got["raw"]["projection"]) == ("observed", "exact")
    assert (got["plain"]["kind"], got["plain"]["source_field"]) == ("observed", "files.5")


@pytest.mark.parametrize("gap", [" ", "\n", "\t", "\r"], ids=["space", "newline", "tab", "return"])
def test_a_long_listing_with_one_sentence_is_read_by_the_text_index(tools, gap):
    """An entry of words (any one kind of white space alone) goes the per-leaf way, so a value inside
    it is found on its token boundaries, as in any other text — and, the words of a text being no
    evidence at the default trust (#44), found as ``untrusted``."""
    tools.result = {"lines": with_entry(f"Please{gap}pay{gap}INV-22317{gap}today", 20)}
    with op.run():
        tools.ls()
        got = tools.attrs(invoice="INV-22317", plain="entry_005.txt")["invoice"]
    assert (got["kind"], got["projection"], got["source_field"]) == ("untrusted", "in_text", "lines.20")


def test_a_long_listing_of_plain_paths_is_remembered_as_it_is(tools):
    """Slashes alone need no normalisation: every path is matched exactly, with its position."""
    listing = [f"src/pkg_{i:02d}/mod.py" for i in range(40)]
    tools.result = {"files": listing}
    with op.run():
        tools.ls()
        got = tools.attrs(last=listing[-1], inside=listing[12])
    assert (got["last"]["kind"], got["last"]["projection"], got["last"]["source_field"]) == (
        "observed",
        "exact",
        "files.39",
    )
    assert (got["inside"]["kind"], got["inside"]["source_field"]) == ("observed", "files.12")


@pytest.mark.parametrize(
    ("sha", "position"),
    [
        pytest.param(SHA1, 7, id="sha1-inside"),
        pytest.param(SHA1, -1, id="sha1-last"),
        pytest.param(SHA256, 7, id="sha256-inside"),
    ],
)
def test_an_object_id_in_a_long_listing_is_matched_by_its_prefix(tools, sha, position):
    """The other entries are shorter than the id, so it is the longest entry of the listing."""
    tools.result = {"commits": with_entry(sha, position)}
    with op.run():
        tools.ls()
        got = tools.attrs(short=sha[:7], longer=sha[:12].upper(), full=sha, plain="entry_002.txt")
    for name in ("short", "longer"):
        assert (got[name]["kind"], got[name]["projection"]) == ("observed", "git_sha_prefix")
        assert got[name]["source_field"] == f"commits.{position % 40}"
    assert (got["full"]["kind"], got["full"]["projection"]) == ("observed", "exact")
    assert got["plain"]["kind"] == "observed"


def test_an_object_id_among_longer_entries_is_still_matched_by_its_prefix(tools):
    listing = [f"refs/heads/feature-branch-with-a-long-name-{i:03d}" for i in range(40)]
    listing[30] = SHA1
    tools.result = {"refs": listing}
    with op.run():
        tools.ls()
        got = tools.attrs(short=SHA1[:8])["short"]
    assert (got["kind"], got["projection"], got["source_field"]) == ("observed", "git_sha_prefix", "refs.30")


def test_a_long_list_of_numbers_is_remembered_entry_by_entry(tools):
    tools.result = {"orders": [100_000 + i for i in range(40)]}
    with op.run():
        tools.ls()
        got = tools.attrs(order=100_017, text="100033")
    assert (got["order"]["kind"], got["order"]["projection"]) == ("observed", "exact")
    assert got["order"]["source_field"] == "orders.17"
    assert (got["text"]["kind"], got["text"]["projection"]) == ("observed", "number_as_text")


def test_a_long_listing_with_a_non_string_entry_is_remembered_entry_by_entry(tools):
    tools.result = {"files": [*with_entry(None, 0), 7_654_321]}
    with op.run():
        tools.ls()
        got = tools.attrs(name="entry_030.txt", number=7_654_321)
    assert (got["name"]["kind"], got["name"]["source_field"]) == ("observed", "files.30")
    assert (got["number"]["kind"], got["number"]["source_field"]) == ("observed", "files.40")


def test_a_long_listing_with_a_decomposed_unicode_entry_matches_its_composed_form(tools):
    decomposed = "cafe\u0301-menu.txt"
    tools.result = {"files": with_entry(decomposed, 11)}
    with op.run():
        tools.ls()
        got = tools.attrs(composed="caf\u00e9-menu.txt", plain="entry_012.txt")
    assert (got["composed"]["kind"], got["composed"]["projection"]) == ("observed", "nfc")
    assert got["composed"]["source_field"] == "files.11"
    assert (got["plain"]["kind"], got["plain"]["source_field"]) == ("observed", "files.12")


def test_a_long_listing_of_composed_unicode_entries_is_remembered(tools):
    listing = [f"r\u00e9sum\u00e9_{i:03d}.pdf" for i in range(40)]
    tools.result = {"files": listing}
    with op.run():
        tools.ls()
        got = tools.attrs(value=listing[25])["value"]
    assert (got["kind"], got["projection"], got["source_field"]) == ("observed", "exact", "files.25")


def test_an_empty_entry_in_a_long_listing_is_skipped_and_the_rest_remembered(tools):
    tools.result = {"files": with_entry("", 0)}
    with op.run():
        tools.ls()
        got = tools.attrs(value="entry_039.txt")["value"]
    assert (got["kind"], got["source_field"]) == ("observed", "files.39")


def test_an_over_long_entry_of_a_long_listing_is_not_remembered():
    over_long = "x" * (pj.MAX_TEXT_LENGTH + 1)
    ledger = Ledger(1000)
    ledger.remember("ls", {"files": with_entry(over_long, 3)}, "s1")
    assert len(ledger) == 39
    assert ledger.lookup("entry_004.txt") is not None


def test_an_entry_of_exactly_the_longest_remembered_length_is_remembered():
    longest = "y" * pj.MAX_TEXT_LENGTH
    ledger = Ledger(1000)
    ledger.remember("ls", {"files": with_entry(longest, 3)}, "s1")
    assert len(ledger) == 40
    match = ledger.lookup(longest)
    assert match is not None and match.observation.field == "files.3"


def test_an_unsourced_value_echoed_in_a_long_listing_stays_unsourced(tools):
    guess = "guessed_name.txt"
    tools.result = {"files": with_entry(guess, 9)}

    @op.tool(side_effect="read", tracer_provider=tools.traced.provider)
    def search(q: str) -> dict:
        return {"files": with_entry(q, 9)}

    with op.run():
        search(q=guess)  # assumed: nothing observed it
        got = tools.attrs(echo=guess, other="entry_010.txt")
    assert got["echo"]["kind"] == "assumed"
    assert (got["other"]["kind"], got["other"]["source_tool"]) == ("observed", "search")


@pytest.mark.parametrize("bound", range(40, 46))
def test_a_long_listing_costs_the_same_room_on_the_bulk_and_the_per_leaf_path(bound: int) -> None:
    """A result is remembered up to the ledger's bound, one unit per container and per value: a field
    after a long listing is remembered or not whichever path the listing took."""
    remembered = []
    for listing in (names(), with_entry("entrée", 0)):  # plain ASCII: bulk; an accent: per-leaf
        ledger = Ledger(bound)
        ledger.remember("ls", {"files": listing, "tail": "TAIL-VALUE-0001"}, "00000000000000ab")
        remembered.append(ledger.lookup("TAIL-VALUE-0001") is not None)
    assert remembered[0] == remembered[1]
    assert remembered[0] is (bound >= 43)  # the map, the list, its 40 entries, then the tail
