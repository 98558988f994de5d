"""The ledger, normalisation and every named projection, the short-value floor and the bound."""

from __future__ import annotations

import dataclasses
import hashlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import otel_provenance as op
from instrument_helpers import arg_attrs
from otel_provenance.instrument.base.settings import configure_settings
from otel_provenance.instrument.evidence import projections as pj
from otel_provenance.instrument.evidence.classify import classify_arguments
from otel_provenance.instrument.evidence.ledger import Ledger

SETTINGS = configure_settings(digest_key=bytes(range(32)), environ={})


def classify(ledger: Ledger | None, invented=frozenset(), **arguments):
    result = classify_arguments("t", arguments, ledger, invented=invented, settings=SETTINGS)
    return {a.name: a for a in result.arguments}


@dataclasses.dataclass
class Commit:
    sha: str
    files: list[str]


def test_nested_results_and_field_paths():
    ledger = Ledger(1000)
    ledger.remember(
        "search",
        {
            "hits": [{"issue": {"id": "PROJ-1234", "labels": ("bug", "crash-on-start")}}],
            "commit": Commit(sha="3f1c2a9d8e7b6a5f4e3d2c1b0a9f8e7d6c5b4a39", files=["src/main.py"]),
        },
        "00000000000000aa",
    )
    got = classify(ledger, issue="PROJ-1234", label="crash-on-start", path="src/main.py")
    assert got["issue"].source_field == "hits.0.issue.id"
    assert got["label"].source_field == "hits.0.issue.labels.1"
    assert got["path"].source_field == "commit.files.0"
    assert {a.kind for a in got.values()} == {"observed"}
    assert got["issue"].source_tool == "search" and got["issue"].source_span_id == "00000000000000aa"


def test_bulk_listing_field_paths():
    ledger = Ledger(100_000)
    files = [f"file_{i:05d}.txt" for i in range(5000)]
    ledger.remember("ls", {"files": files}, "01")
    got = classify(ledger, a=files[4321], b="file_99999.txt")
    assert (got["a"].kind, got["a"].source_field) == ("observed", "files.4321")
    assert got["b"].kind == "assumed"


@pytest.mark.parametrize("empty", [None, "", {}, [], (), {"files": []}, {"a": None, "b": ""}])
def test_empty_results_add_nothing(empty):
    ledger = Ledger(10)
    ledger.remember("ls", empty, "01", call_arguments={"root": "/srv/data"})
    assert len(ledger) == 0
    assert classify(ledger, root="/srv/data/x.txt")["root"].kind == "assumed"


def test_path_normalisation_matches_both_ways_and_is_named():
    ledger = Ledger(100)
    ledger.remember("ls", {"files": ["./app.py", "src//pkg/mod.py", "docs/"]}, "01")
    got = classify(ledger, a="app.py", b="./app.py", c="src/pkg/./mod.py", d="docs")
    assert got["a"].projection == "path_normalised"
    assert got["b"].projection == "exact"
    assert got["c"].projection == "path_normalised"
    assert got["d"].projection == "path_normalised"
    assert classify(ledger, e="src/other/../pkg/mod.py")["e"].kind == "assumed"  # '..' never resolved


def test_path_join_of_listing_root_and_entry():
    ledger = Ledger(100)
    ledger.remember(
        "ls", {"entries": ["config.yaml", "main.py"]}, "span-ls", call_arguments={"root": "./srv/app"}
    )
    ledger.remember("other", {"names": ["elsewhere.txt"]}, "span-other")
    got = classify(ledger, p="srv/app/main.py", q="srv/app/elsewhere.txt", r="tmp/main.py")
    assert (got["p"].kind, got["p"].projection, got["p"].source_field) == (
        "observed",
        "path_join",
        "entries.1",
    )
    assert got["q"].kind == "assumed"  # entry from another call than the root
    assert got["r"].kind == "assumed"  # root never observed


def test_path_join_root_in_same_result():
    ledger = Ledger(100)
    ledger.remember("ls", {"root": "/var/www", "files": ["index.html"]}, "s1")
    ledger.remember("whoami", {"user": "alice", "files": ["notes.txt"]}, "s2")
    got = classify(ledger, p="/var/www/index.html", q="alice/notes.txt")
    assert (got["p"].kind, got["p"].projection) == ("observed", "path_join")
    assert got["q"].kind == "assumed"  # 'user' is not a root field: no join of unrelated values


def test_git_sha_prefix_needs_seven_hex_digits():
    sha = "9fceb02d0ae598e95dc970b74767f19372d61af8"
    ledger = Ledger(100)
    ledger.remember("rev_parse", {"head": sha}, "s1")
    got = classify(
        ledger, full=sha, short=sha[:7], upper=sha[:10].upper(), tiny=sha[:6], wrong="9fceb02d0ae598e9ffff"
    )
    assert got["full"].projection == "exact"
    assert (got["short"].kind, got["short"].projection, got["short"].source_field) == (
        "observed",
        "git_sha_prefix",
        "head",
    )
    assert got["upper"].kind == "observed"
    assert got["tiny"].kind == "assumed"
    assert got["wrong"].kind == "assumed"


def test_nfc_projection():
    ledger = Ledger(100)
    ledger.remember("ls", ["Cafe\u0301 menu.pdf"], "s1")  # NFD
    got = classify(ledger, a="Caf\u00e9 menu.pdf")
    assert (got["a"].kind, got["a"].projection) == ("observed", "nfc")


def test_canonical_json_projection():
    ledger = Ledger(100)
    ledger.remember("get", {"payload": '{"b": 2, "a": [1, 2]}'}, "s1")
    got = classify(ledger, a='{"a":[1,2],"b":2}', b='{"a":[2,1],"b":2}')
    assert (got["a"].kind, got["a"].projection) == ("observed", "canonical_json")
    assert got["b"].kind == "assumed"


def test_url_normalised_projection():
    ledger = Ledger(100)
    ledger.remember("search", {"url": "HTTPS://Example.COM:443"}, "s1")
    got = classify(ledger, a="https://example.com/", b="https://example.com/other", c="http://example.com/")
    assert (got["a"].kind, got["a"].projection) == ("observed", "url_normalised")
    assert got["b"].kind == "assumed"
    assert got["c"].kind == "assumed"  # scheme is meaning, not spelling


def test_number_as_text_projection():
    ledger = Ledger(100)
    ledger.remember("lookup", {"order": {"id": 918273}}, "s1")
    got = classify(ledger, as_text="918273", as_int=918273)
    assert (got["as_text"].kind, got["as_text"].projection) == ("observed", "number_as_text")
    assert got["as_int"].projection == "exact"


def test_short_value_floor_and_field_name_exemption():
    ledger = Ledger(100)
    ledger.remember("page", {"count": 7, "flag": "a", "limit": 5, "dry_run": True}, "s1")
    got = classify(ledger, page=7, x="a", limit=5, dry_run=True, force=True)
    assert got["page"].kind == "assumed"  # "7" is observed, but too short to be evidence by value
    assert got["x"].kind == "assumed"
    assert (got["limit"].kind, got["limit"].source_field) == ("observed", "limit")  # same field name
    assert got["dry_run"].kind == "observed"
    assert got["force"].kind == "assumed"  # booleans are never evidence by value alone


def test_short_value_floor_is_configurable():
    ledger = Ledger(100)
    ledger.remember("page", {"code": "ab"}, "s1")
    low = configure_settings(digest_key=bytes(range(32)), min_value_length=2, environ={})
    got = classify_arguments("t", {"x": "ab"}, ledger, settings=low)
    assert got.arguments[0].kind == "observed"
    assert classify(ledger, x="ab")["x"].kind == "assumed"


def test_structured_argument_is_observed_only_when_every_leaf_is():
    ledger = Ledger(100)
    ledger.remember("get", {"user": {"email": "ann@example.com", "team": "payments"}}, "s1")
    got = classify(
        ledger,
        whole={"email": "ann@example.com", "team": "payments"},
        mixed={"email": "ann@example.com", "team": "guessed-team"},
        empty={},
    )
    assert (got["whole"].kind, got["whole"].projection) == ("observed", "structure")
    assert got["mixed"].kind == "assumed"
    assert got["empty"].kind == "assumed"


def test_invented_is_never_treated_as_observed():
    ledger = Ledger(100)
    ledger.remember("ls", ["report.txt"], "s1")
    got = classify(ledger, invented=frozenset({"new_name"}), new_name="report.txt")
    assert got["new_name"].kind == "invented"
    assert got["new_name"].source_tool is None


def test_ledger_bound_evicts_oldest_and_reports_full():
    ledger = Ledger(max_entries=3)
    for i in range(3):
        ledger.remember("t", {"v": f"value-{i}"}, f"s{i}")
    assert not ledger.full
    ledger.remember("t", {"v": "value-3"}, "s3")
    assert ledger.full and len(ledger) == 3
    got = classify(ledger, old="value-0", new="value-3")
    assert got["old"].kind == "assumed" and got["new"].kind == "observed"
    result = classify_arguments("t", {"x": "value-3"}, ledger, settings=SETTINGS)
    assert result.attributes()["agent.ledger.full"] is True


def test_ledger_memory_stays_flat_over_a_long_run():
    ledger = Ledger(max_entries=1000)
    for batch in range(50):
        ledger.remember("ls", [f"b{batch}-f{i}.txt" for i in range(200)], f"s{batch}")
    assert len(ledger) <= 1000
    assert classify(ledger, last="b49-f199.txt")["last"].kind == "observed"


def test_odd_values_never_raise():
    cyclic: dict = {"name": "cyclic-value"}
    cyclic["self"] = cyclic
    fan_out: dict = {"v": "fan-out-value"}
    fan_out["a"] = fan_out["b"] = fan_out  # 2**depth paths: the room bound must cut it off
    deep: list = []
    node = deep
    for _ in range(500):
        node.append([])
        node = node[0]
    ledger = Ledger(1000)
    for result in (
        fan_out,
        cyclic,
        deep,
        "x" * 1_000_000,
        object(),
        b"bytes",
        float("nan"),
        {1: {2: 3}},
        {(1, 2): "t"},
    ):
        ledger.remember("odd", result, "s1")
    assert classify(ledger, a="cyclic-value")["a"].kind == "observed"
    got = classify(ledger, c=cyclic, d=deep, h="x" * 1_000_000, o=object(), b=b"raw", n=float("inf"))
    assert {a.kind for a in got.values()} == {"assumed"}
    assert all(len(a.digest) == 32 for a in got.values())


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=30),
    lambda children: (
        st.lists(children, max_size=5) | st.dictionaries(st.text(max_size=8), children, max_size=5)
    ),
    max_leaves=30,
)


@given(result=json_values, argument=json_values)
@settings(max_examples=200, deadline=None)
def test_remember_and_classify_never_raise(result, argument):
    ledger = Ledger(50)
    ledger.remember("t", result, "s1")
    got = classify_arguments("t", {"arg": argument}, ledger, settings=SETTINGS)
    assert got.arguments[0].kind in ("observed", "assumed")
    assert not got.faults


@given(st.text(max_size=40))
def test_normalisation_is_idempotent(text):
    once = pj.normalise(text)
    assert pj.normalise(once) == once


@given(st.lists(st.text(min_size=5, max_size=20), min_size=1, max_size=20), st.text(min_size=5, max_size=20))
@settings(max_examples=200, deadline=None)
def test_no_false_observed_for_values_that_normalise_differently(observed, argument):
    ledger = Ledger(1000)
    ledger.remember("t", observed, "s1")
    kind = classify(ledger, a=argument)["a"].kind
    if kind == "observed":
        arg_norm = pj.normalise(argument)
        joins = {pj.normalise(o) for o in observed}
        assert (
            arg_norm in joins
            or any(arg_norm.endswith("/" + j) for j in joins)
            or any(o.startswith(arg_norm) for o in joins)
        )


def test_digests_are_keyed_and_change_with_the_key():
    a = configure_settings(digest_key=bytes(range(32)), environ={})
    b = configure_settings(digest_key=bytes(range(32, 64)), environ={})
    value = "482916"
    da = classify_arguments("t", {"pin": value}, None, settings=a).arguments[0].digest
    db = classify_arguments("t", {"pin": value}, None, settings=b).arguments[0].digest
    assert da != db
    for plain in (hashlib.sha256(value.encode()).hexdigest(), hashlib.blake2b(value.encode()).hexdigest()):
        assert da not in plain and db not in plain
    assert classify_arguments("t", {"pin": value}, None, settings=a).arguments[0].digest == da


def test_allow_list_fields_are_tagged_but_not_counted(traced):
    effects: list[str] = []

    @op.tool(side_effect="write", tracer_provider=traced.provider)
    def open_ticket(title: str, body: str, project: str) -> None:
        effects.append(project)

    @op.tool(side_effect="write", budget=op.Budget(allow={"note"}), tracer_provider=traced.provider)
    def annotate(note: str, title: str) -> None:
        effects.append(note)

    with op.run(inputs={"project": "PAYMENTS"}):
        open_ticket(title="Crash on start", body="Steps to reproduce...", project="PAYMENTS")
        with pytest.raises(op.ProvenanceError) as blocked:
            annotate(note="free text", title="not allowed here")
    assert effects == ["PAYMENTS"]
    span = traced.span("open_ticket")
    assert arg_attrs(span, "title")["kind"] == "assumed"
    assert span.attributes["agent.budget.assumed"] == 0
    assert blocked.value.violations == ("max_assumed:title=assumed",)


def test_invented_budget(traced):
    @op.tool(
        side_effect="write",
        invented={"new_name"},
        budget=op.Budget(max_invented=1),
        tracer_provider=traced.provider,
    )
    def create_file(folder: str, new_name: str) -> None:
        return None

    @op.tool(
        side_effect="write",
        invented={"a", "b"},
        budget=op.Budget(max_invented=1),
        tracer_provider=traced.provider,
    )
    def create_two(a: str, b: str) -> None:
        return None

    with op.run(inputs={"folder": "reports"}):
        create_file(folder="reports", new_name="q3-summary.md")
        with pytest.raises(op.ProvenanceError) as blocked:
            create_two(a="first-new.md", b="second-new.md")
    span = traced.span("create_file")
    assert arg_attrs(span, "new_name")["kind"] == "invented"
    assert span.attributes["agent.budget.invented"] == 1
    assert span.attributes["agent.budget.max_invented"] == 1
    assert blocked.value.violations == ("max_invented:a=invented", "max_invented:b=invented")


def test_every_projection_is_documented():
    from pathlib import Path

    docs = (Path(__file__).resolve().parents[2] / "docs" / "provenance.md").read_text()
    for name in pj.PROJECTIONS:
        assert f"`{name}`" in docs, name


def test_a_listing_with_json_text_entries_is_indexed_by_their_canonical_form():
    """A flat list of strings takes the one-pass path only when no entry could change under
    normalisation: an entry that is JSON text (or starts with a dot) must still be canonicalised."""
    ledger = Ledger(1000)
    names = [f"entry-{i}" for i in range(64)]  # long enough for the one-pass path
    ledger.remember("list", {"items": ['{"b": 2, "a": 1}', *names]}, "s1")
    got = classify(ledger, a='{"a":1,"b":2}', b="entry-7", c='{"a":2,"b":1}')
    assert (got["a"].kind, got["a"].projection) == ("observed", "canonical_json")
    assert (got["b"].kind, got["b"].projection) == ("observed", "exact")
    assert got["c"].kind == "assumed"
