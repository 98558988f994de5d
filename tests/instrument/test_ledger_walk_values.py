"""What the ledger's walk stores for each kind of value: the longest text kept, object ids (and only
object ids) in the prefix index, floats under the same text as an argument float, mappings and sets
that are not plain dicts, the field name of a bare result, and the root-listing path join.

Through the ledger's public methods and, where the exported attributes matter, ``@op.tool`` with the
real SDK.
"""

from __future__ import annotations

import collections
import types
import uuid

import pytest

import otel_provenance as op
from instrument_helpers import argument_attributes
from otel_provenance.instrument.evidence import projections as pj
from otel_provenance.instrument.evidence.ledger import Ledger

SHA1 = "9fceb02d0ae598e95dc970b74767f19372d61af8"  # 40 hex digits (a git object id)
SHA256 = "3b18e512dba79e4c8300dd08aeb37f8e728b8dad3b18e512dba79e4c8300dd08"  # 64 hex digits


def test_a_text_of_exactly_the_maximum_length_is_remembered():
    """``MAX_TEXT_LENGTH`` is inclusive: a leaf of exactly 8,192 characters is kept, one more is not."""
    longest = "a" * pj.MAX_TEXT_LENGTH
    ledger = Ledger(100)
    ledger.remember("read", {"body": longest, "other": "b" * (pj.MAX_TEXT_LENGTH + 1)}, "01")
    match = ledger.lookup(longest)
    assert match is not None and match.projection == pj.EXACT
    assert match.observation.field == "body"
    assert len(ledger) == 1


@pytest.mark.parametrize(
    "text",
    [
        "deadbeefcafe-is-a-long-title-and-not-an-object-id",  # the plain-text path
        "deadbeefcafe/is/a/long/path/and/not/an/object/id.txt",  # the normalising path
    ],
)
def test_a_long_text_that_starts_with_hex_digits_is_no_object_id(text):
    """Only 40- or 64-digit object ids answer abbreviated ids: a long text that merely starts with
    hex digits does not make its first digits ``observed``."""
    assert len(text) >= 40
    ledger = Ledger(100)
    ledger.remember("search", {"title": text}, "01")
    assert ledger.observation(text) is not None
    assert ledger.lookup("deadbeefcafe") is None
    assert ledger.lookup("deadbee") is None


@pytest.mark.parametrize("sha", [SHA1, SHA256])
def test_an_object_id_reached_by_path_normalisation_answers_its_prefix(sha):
    """``./<id>`` normalises to the id itself, which then answers an abbreviated id like any id
    observed as it is."""
    ledger = Ledger(100)
    ledger.remember("ls", {"ref": f"./{sha}", "other": "unrelated-value"}, "01")
    for prefix in (sha[:7], sha[:12], sha[:7].upper()):
        match = ledger.lookup(prefix)
        assert match is not None, prefix
        assert match.projection == pj.GIT_SHA_PREFIX
        assert (match.observation.field, match.observation.text) == ("ref", f"./{sha}")
    assert ledger.lookup("0123456") is None


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (200.0, "200"),
        (-7.0, "-7"),
        (2.0**53 - 1, "9007199254740991"),
        (2.0**53, "9007199254740992.0"),
        (-(2.0**53), "-9007199254740992.0"),
        (2.0**60, "1.152921504606847e+18"),
        (12.5, "12.5"),
    ],
)
def test_a_float_field_is_remembered_under_the_text_an_argument_float_gets(value, text):
    """Integral floats below 2**53 read as integers (``200.0`` is ``200``), larger ones by ``repr``
    (they may not be exact integers): the same text :func:`projections.leaf_text` gives an argument,
    so the float passed on matches exactly."""
    assert pj.leaf_text(value) == (text, pj.NUMBER)
    ledger = Ledger(100)
    ledger.remember("quote", {"total": value}, "01")
    match = ledger.lookup(text, pj.NUMBER)
    assert match is not None and match.projection == pj.EXACT
    assert match.observation.field == "total"
    assert len(ledger) == 1


@pytest.mark.parametrize(
    "mapping",
    [
        types.MappingProxyType({"id": "value-1", "inner": {"name": "value-2"}}),
        collections.OrderedDict(id="value-1", inner={"name": "value-2"}),
    ],
    ids=["mappingproxy", "ordereddict"],
)
def test_a_mapping_that_is_not_a_plain_dict_is_walked_field_by_field(mapping):
    ledger = Ledger(100)
    ledger.remember("fetch", mapping, "01")
    assert ledger.observation("value-1").field == "id"
    assert ledger.observation("value-2").field == "inner.name"


@pytest.mark.parametrize("container", [set, frozenset])
def test_members_of_a_set_are_remembered_under_the_field_name_star(container):
    """A set's members have no position: fields of texts and flags of booleans both call them ``*``."""
    ledger = Ledger(100)
    ledger.remember("labels", {"tags": container({"alpha-tag", "beta-tag", True})}, "01")
    assert ledger.observation("alpha-tag").field == "tags.*"
    assert ledger.observation("beta-tag").field == "tags.*"
    flag = ledger.flag("*", True)
    assert flag is not None and flag.field == "tags.*"
    assert ledger.flag("*", False) is None


@pytest.mark.parametrize(
    "value", ["plain-value-1", uuid.UUID(int=0xABCDEF), 123456, 12.5], ids=["str", "uuid", "int", "float"]
)
def test_a_bare_result_has_no_field_name_whatever_its_type(value):
    """A tool that returns one scalar (not a structure) gives its value no field name: its field path
    is exported as ``*``, for a UUID as for a plain string."""
    text, kind = pj.leaf_text(value)
    ledger = Ledger(100)
    ledger.remember("lookup", value, "01")
    match = ledger.lookup(text, kind)
    assert match is not None
    assert (match.observation.field, match.observation.field_name) == ("*", "*")


def test_a_bare_uuid_result_exports_the_source_field_star(traced):
    @op.tool(side_effect="read", tracer_provider=traced.provider)
    def new_id() -> uuid.UUID:
        return uuid.UUID(int=0xABCDEF)

    attrs = argument_attributes(traced)
    with op.run():
        new_id()
        got = attrs(ident=str(uuid.UUID(int=0xABCDEF)))
    assert (got["ident"]["kind"], got["ident"]["source_tool"], got["ident"]["source_field"]) == (
        "observed",
        "new_id",
        "*",
    )


def test_a_root_listing_joined_with_a_doubled_slash_joins_with_its_entries(traced):
    """``f"{root}/{entry}"`` with root ``/`` gives ``//srv/data``: the cut right after the leading
    ``/`` is tried too, so it joins like ``/srv/data``."""

    @op.tool(side_effect="read", tracer_provider=traced.provider)
    def ls(root: str) -> dict:
        return {"entries": ["srv/data", "etc/hosts"]}

    attrs = argument_attributes(traced)
    with op.run():
        ls(root="/")
        got = attrs(naive="//srv/data", nested="//etc/hosts", other="//home/alice")
    for name, field in (("naive", "entries.0"), ("nested", "entries.1")):
        assert (got[name]["kind"], got[name]["projection"], got[name]["source_field"]) == (
            "observed",
            "path_join",
            field,
        ), name
    assert got["other"]["kind"] == "assumed"
