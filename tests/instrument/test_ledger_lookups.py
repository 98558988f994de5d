"""Lookups: a projection names every step between an argument and what was observed (the argument's
own normalisation, the stored value's, text vs number, the object id prefix), also through an
enclosing run's ledger; an argument longer than the longest remembered text is never matched, not
even by a path join; and a miss is a plain miss, never a classification fault.
"""

from __future__ import annotations

from typing import Any

import otel_provenance as op
from instrument_helpers import arg_attrs
from otel_provenance.instrument.base.settings import configure_settings
from otel_provenance.instrument.evidence import projections as pj
from otel_provenance.instrument.evidence.classify import classify_arguments
from otel_provenance.instrument.evidence.ledger import Ledger

SETTINGS = configure_settings(digest_key=bytes(range(32)), environ={})
SHA1 = "9fceb02d0ae598e95dc970b74767f19372d61af8"


def classify(ledger: Ledger, **arguments: Any):
    return classify_arguments("t", arguments, ledger, settings=SETTINGS)


def test_an_argument_that_normalises_to_a_stored_value_names_its_own_step():
    ledger = Ledger(100)
    ledger.remember("ls", {"file": "app/main.py", "count": 1500}, "s1")
    got = {a.name: a for a in classify(ledger, path="./app//main.py", count="1500/", sha=SHA1).arguments}
    assert (got["path"].kind, got["path"].projection) == ("observed", "path_normalised")
    assert (got["count"].kind, got["count"].projection) == ("observed", "path_normalised+number_as_text")


def test_an_object_id_prefix_that_needed_normalising_names_both_steps():
    ledger = Ledger(100)
    ledger.remember("rev_parse", {"head": SHA1}, "s1")
    got = classify(ledger, short=SHA1[:8] + "/").arguments[0]
    assert (got.kind, got.projection) == ("observed", "path_normalised+git_sha_prefix")


def test_hex_looking_and_path_looking_misses_are_plain_misses_without_a_fault():
    ledger = Ledger(100)
    ledger.remember("rev_parse", {"head": SHA1}, "s1")
    result = classify(ledger, a="cafebabe1234", b="DEADBEEF", c="tmp/cafebabe")
    assert result.kinds() == {"a": "assumed", "b": "assumed", "c": "assumed"}
    assert result.faults == ()


def test_an_over_long_argument_is_never_matched_not_even_by_a_path_join():
    entry = "x" * (pj.MAX_TEXT_LENGTH - 4)  # remembered: within the limit
    ledger = Ledger(100)
    ledger.remember("ls", {"entries": [entry, "notes.txt"]}, "s1", call_arguments={"root": "srv/data"})
    joined = classify(ledger, path="srv/data/notes.txt").arguments[0]
    over = classify(ledger, path="srv/data/" + entry)  # 9 + MAX - 4 characters: over the limit
    assert (joined.kind, joined.projection) == ("observed", "path_join")
    assert over.kinds() == {"path": "assumed"}
    assert classify(ledger, path=entry).arguments[0].projection == "exact"


def test_matches_through_the_enclosing_run_keep_their_kind_and_projection(traced):
    @op.tool(side_effect="read", tracer_provider=traced.provider)
    def use(**values: Any) -> None:
        return None

    outer = op.run(inputs={"order": 100_017, "ticket": "TICKET-4242", "head": SHA1, "total": 12.5})
    with outer, op.run():  # the nested run observed nothing itself
        got = {}
        for name, value in (
            ("order", 100_017),
            ("ticket", "TICKET-4242"),
            ("head", SHA1[:9]),
            ("total", "12.5"),
        ):
            use(**{name: value})
            got[name] = arg_attrs(traced.span("use"), name)
    assert {name: (got[name]["kind"], got[name]["projection"]) for name in got} == {
        "order": ("observed", "exact"),
        "ticket": ("observed", "exact"),
        "head": ("observed", "git_sha_prefix"),
        "total": ("observed", "number_as_text"),
    }
