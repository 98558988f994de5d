"""Classifying arguments that are not a plain string or int: paths, floats, UUIDs, long texts,
structures, flags, and arguments named as invented — each with its source and its digest."""

from __future__ import annotations

import uuid
from pathlib import PurePosixPath

from otel_provenance.instrument.base.settings import configure_settings
from otel_provenance.instrument.evidence.classify import classify_arguments
from otel_provenance.instrument.evidence.digest import keyed_digest
from otel_provenance.instrument.evidence.ledger import Ledger

KEY = bytes(range(32))
SETTINGS = configure_settings(digest_key=KEY, environ={})
SPAN = "00000000000000ab"


def classify(ledger: Ledger | None, invented: frozenset[str] = frozenset(), **arguments):
    result = classify_arguments("t", arguments, ledger, invented=invented, settings=SETTINGS)
    return {a.name: a for a in result.arguments}


def ledger_of(result: object) -> Ledger:
    ledger = Ledger(1000)
    ledger.remember("search", result, SPAN)
    return ledger


def digest_alone(value: object) -> str:
    return classify(None, arg=value)["arg"].digest


def test_a_path_a_float_and_a_uuid_seen_in_a_result_are_observed_with_their_source() -> None:
    ident = uuid.UUID("12345678-1234-5678-1234-567812345678")
    ledger = ledger_of({"file": "/srv/data/report.csv", "score": 12.75, "ticket": str(ident)})
    got = classify(ledger, p=PurePosixPath("/srv/data/report.csv"), s=12.75, u=ident)
    for name, field in (("p", "file"), ("s", "score"), ("u", "ticket")):
        a = got[name]
        assert (a.name, a.kind, a.source_tool, a.source_field, a.source_span_id, a.projection) == (
            name,
            "observed",
            "search",
            field,
            SPAN,
            "exact",
        ), name
        assert a.digest == digest_alone(
            {"p": PurePosixPath("/srv/data/report.csv"), "s": 12.75, "u": ident}[name]
        )


def test_a_path_no_result_held_is_assumed() -> None:
    got = classify(ledger_of({"file": "/srv/data/report.csv"}), p=PurePosixPath("/srv/data/other.csv"))
    assert (got["p"].kind, got["p"].source_tool) == ("assumed", None)


def test_an_invented_argument_is_invented_with_the_digest_it_would_have_had() -> None:
    values = {"text": "a//b", "path": PurePosixPath("/x/y"), "tree": {"k": [1, "v"]}, "flag": True}
    for name, value in values.items():
        a = classify(ledger_of({"k": [1, "v"], "text": "a//b"}), invented=frozenset({name}), **{name: value})[
            name
        ]
        assert (a.name, a.kind, a.source_tool) == (name, "invented", None), name
        assert a.digest == digest_alone(value), name


def test_texts_up_to_the_length_limit_are_normalised_before_digesting_longer_ones_are_not() -> None:
    at_limit = "a//b" + "c" * (8192 - 4)
    over = at_limit + "c"
    invented = frozenset({"x"})
    assert classify(None, invented, x=at_limit)["x"].digest == keyed_digest("a/b" + "c" * 8188, KEY)
    assert classify(None, invented, x=over)["x"].digest == keyed_digest(over, KEY)
    assert classify(None, invented, x="a//b")["x"].digest == keyed_digest("a/b", KEY)
    assert classify(None, x=over)["x"].digest == keyed_digest(over, KEY)


def test_a_structure_whose_every_leaf_was_seen_is_observed_as_a_structure() -> None:
    ledger = ledger_of({"hits": [{"id": "PROJ-1234", "dry_run": False}]})
    value = {"id": "PROJ-1234", "dry_run": False}
    a = classify(ledger, q=value)["q"]
    assert (a.kind, a.projection, a.source_tool, a.source_field) == (
        "observed",
        "structure",
        "search",
        "hits.0.id",
    )
    assert a.digest == digest_alone(value)


def test_a_structure_with_one_unseen_leaf_is_assumed_with_its_digest() -> None:
    ledger = ledger_of({"hits": [{"id": "PROJ-1234", "dry_run": False}]})
    for value in ({"id": "PROJ-1234", "dry_run": True}, {"id": "PROJ-9999", "dry_run": False}):
        a = classify(ledger, q=value)["q"]
        assert (a.kind, a.digest) == ("assumed", digest_alone(value)), value


def test_a_flag_is_observed_only_as_a_field_of_the_same_name_and_value() -> None:
    ledger = ledger_of({"dry_run": False})
    got = classify(ledger, dry_run=False, other=False, now=True)
    assert (got["dry_run"].kind, got["dry_run"].source_field) == ("observed", "dry_run")
    assert got["dry_run"].digest == keyed_digest("\x00false", KEY)
    assert got["other"].kind == "assumed" and got["now"].kind == "assumed"


def test_a_text_leaf_of_a_structure_is_matched_through_its_normalised_form() -> None:
    ledger = ledger_of({"file": "/srv/data/report.csv"})
    a = classify(ledger, q={"file": "/srv/./data//report.csv"})["q"]
    assert (a.kind, a.source_field) == ("observed", "file")


def test_a_short_value_counts_only_as_a_field_of_the_same_name() -> None:
    ledger = ledger_of({"ratio": 1.5})
    got = classify(ledger, ratio=1.5, other=1.5)
    assert (got["ratio"].kind, got["ratio"].source_field) == ("observed", "ratio")
    assert got["other"].kind == "assumed"


def test_a_text_leaf_of_a_structure_is_matched_by_sha_prefix_and_by_path_join_like_a_plain_argument() -> None:
    """A leaf is looked up as the text it is: an abbreviated commit of a full one a result listed, and a
    path joined from a listed directory and a listed file name, count inside a structure too."""
    sha = "0123456789abcdef0123456789abcdef01234567"
    ledger = ledger_of({"commit": sha, "root": "/srv/repo", "files": ["src/app.py"]})
    got = classify(
        ledger,
        short=sha[:10],
        joined="/srv/repo/src/app.py",
        q={"commit": sha[:10]},
        r={"files": "/srv/repo/src/app.py"},
    )
    assert [got[name].kind for name in ("short", "joined", "q", "r")] == ["observed"] * 4
    assert (got["q"].source_field, got["q"].projection) == ("commit", "structure")
    assert (got["r"].source_field, got["r"].projection) == ("files.0", "structure")
