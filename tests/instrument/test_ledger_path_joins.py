"""The ``path_join`` projection: ``root/entry`` is observed when ``entry`` came from one tool call and
``root`` was an argument of that same call or a root-naming field of that same result. Every ``/`` of
the argument is a candidate cut, tried left to right; the projection also names any normalisation the
argument itself needed.

Through ``@op.tool`` and ``op.run`` with the real SDK; ``use`` shows how a path is classified.
"""

from __future__ import annotations

import otel_provenance as op
from instrument_helpers import argument_attributes
from otel_provenance.instrument.base.settings import configure_settings
from otel_provenance.instrument.evidence.classify import classify_arguments
from otel_provenance.instrument.evidence.ledger import Ledger

SETTINGS = configure_settings(digest_key=bytes(range(32)), environ={})


def test_an_entry_with_slashes_joins_with_the_listing_root_at_the_first_cut(traced):
    @op.tool(side_effect="read", tracer_provider=traced.provider)
    def ls(root: str) -> dict:
        return {"entries": ["pkg/mod.py", "pkg/util/io.py"]}

    attrs = argument_attributes(traced)
    with op.run():
        ls(root="srv")
        got = attrs(first="srv/pkg/mod.py", second="srv/pkg/util/io.py", elsewhere="tmp/pkg/mod.py")
    assert (got["first"]["kind"], got["first"]["projection"], got["first"]["source_field"]) == (
        "observed",
        "path_join",
        "entries.0",
    )
    assert (got["second"]["kind"], got["second"]["source_field"]) == ("observed", "entries.1")
    assert got["elsewhere"]["kind"] == "assumed"


def test_a_join_of_an_argument_that_needed_normalising_names_both_steps(traced):
    @op.tool(side_effect="read", tracer_provider=traced.provider)
    def ls(root: str) -> dict:
        return {"entries": ["main.py"]}

    @op.tool(side_effect="read", tracer_provider=traced.provider)
    def tree() -> dict:
        return {"base": "www", "files": ["index.html"]}

    attrs = argument_attributes(traced)
    with op.run():
        ls(root="srv/app")
        tree()
        got = attrs(by_argument="./srv/app//main.py", by_field="www/./index.html", plain="srv/app/main.py")
    assert (got["by_argument"]["kind"], got["by_argument"]["projection"]) == (
        "observed",
        "path_normalised+path_join",
    )
    assert (got["by_field"]["kind"], got["by_field"]["projection"]) == (
        "observed",
        "path_normalised+path_join",
    )
    assert got["by_field"]["source_tool"] == "tree"
    assert got["plain"]["projection"] == "path_join"


def test_a_cut_whose_entry_has_no_root_is_passed_over_for_a_later_cut_that_joins(traced):
    """``web/index.html`` was observed by a call without arguments and without a root field, so the
    first cut (``projects`` + ``web/index.html``) joins nothing; the second (``projects/web`` +
    ``index.html``) does. Neither cut may fail the classification."""

    @op.tool(side_effect="read", tracer_provider=traced.provider)
    def recent() -> dict:
        return {"recent": ["web/index.html"]}

    @op.tool(side_effect="read", tracer_provider=traced.provider)
    def ls(root: str) -> dict:
        return {"entries": ["index.html"]}

    attrs = argument_attributes(traced)
    with op.run():
        recent()
        ls(root="projects/web")
        got = attrs(path="projects/web/index.html")["path"]
    assert (got["kind"], got["projection"], got["source_tool"]) == ("observed", "path_join", "ls")


def test_a_path_whose_entry_came_from_a_call_without_a_root_is_assumed_without_a_fault():
    ledger = Ledger(100)
    ledger.remember("recent", {"recent": ["index.html"]}, "s1")  # no call arguments, no root field
    result = classify_arguments("t", {"path": "tmp/index.html"}, ledger, settings=SETTINGS)
    assert result.kinds() == {"path": "assumed"}
    assert result.faults == ()


def test_a_listing_of_the_filesystem_root_joins_with_its_entries(traced):
    """Root ``/`` and entry ``workspace`` make ``/workspace`` (the cut at position 0)."""

    @op.tool(side_effect="read", tracer_provider=traced.provider)
    def ls(root: str) -> dict:
        return {"entries": ["workspace", "etc/hosts"]}

    @op.tool(side_effect="read", tracer_provider=traced.provider)
    def tree() -> dict:
        return {"root": "/", "files": ["srv/data"]}

    attrs = argument_attributes(traced)
    with op.run():
        ls(root="/")
        tree()
        got = attrs(entry="/workspace", nested="/etc/hosts", by_field="/srv/data", other="/home/alice")
    for name, tool, field in (
        ("entry", "ls", "entries.0"),
        ("nested", "ls", "entries.1"),
        ("by_field", "tree", "files.0"),
    ):
        assert (got[name]["kind"], got[name]["projection"]) == ("observed", "path_join"), name
        assert (got[name]["source_tool"], got[name]["source_field"]) == (tool, field)
    assert got["other"]["kind"] == "assumed"
