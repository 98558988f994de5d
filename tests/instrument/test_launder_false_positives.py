"""Fewer false positives (#36): legitimate writes that used to be blocked now run, each through a named
projection of docs/provenance.md, and none of those projections turns a guess into "observed".

For each case: the write a framework or a tool makes legitimately — a number coerced to ``Decimal``,
a date-time written with ``Z``, a UUID in upper case, a ``set[str]``, a value inside prose or a
subprocess's stdout, a plain object's attribute — runs and is tagged with its projection; and a
property draws guesses that are not the observed value and checks each stays ``assumed``.
Through ``@op.tool`` and ``op.run`` on the real SDK.
"""

from __future__ import annotations

import datetime as dt
import decimal
import subprocess
import sys
import types
import uuid
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import otel_provenance as op
from instrument_helpers import Traced, arg_attrs

UPPER_UUID = "6F9619FF-8B86-D011-B42D-00C04FC964FF"


class Flow:
    """A read tool returning ``result``, a write tool that records it ran, a read tool ``use`` that
    tags any value (never blocked)."""

    def __init__(self, traced: Traced, result: Any, trust: str = "values") -> None:
        self.traced = traced
        self.ran: list[Any] = []
        ran = self.ran

        @op.tool(side_effect="read", trust=trust, tracer_provider=traced.provider)
        def fetch() -> Any:
            return result

        @op.tool(side_effect="write", tracer_provider=traced.provider)
        def write(value: Any) -> str:
            ran.append(value)
            return "written"

        @op.tool(side_effect="read", tracer_provider=traced.provider)
        def use(value: Any) -> None:
            return None

        self.fetch, self.write, self.use = fetch, write, use

    def writes(self, value: Any) -> dict[str, object]:
        """Inside a run that fetched the result: ``write(value)`` runs; its argument's attributes."""
        with op.run():
            self.fetch()
            assert self.write(value=value) == "written"
        assert self.ran[-1] is value
        return arg_attrs(self.traced.span("write"), "value")

    def kind(self, value: Any) -> str:
        with op.run():
            self.fetch()
            self.use(value=value)
        return str(arg_attrs(self.traced.span("use"), "value")["kind"])


@pytest.fixture(scope="module")
def module_traced() -> Traced:
    """One provider for the property tests (a fixture per example would be rebuilt each time)."""
    return Traced()


# -- decimal -------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("result", "value", "projection"),
    [
        ({"amount": 1250.5}, decimal.Decimal("1250.50"), "decimal"),
        ({"amount": 1250}, decimal.Decimal("1250.00"), "decimal"),
        ({"amount": "1,250.50"}, decimal.Decimal("1250.50"), "decimal+number_normalised"),
        ({"amount": decimal.Decimal("1250.50")}, 1250.5, "decimal"),
        ({"amount": decimal.Decimal("1250.00")}, "1,250.00", "decimal+number_normalised"),
    ],
    ids=["float-seen", "int-seen", "text-seen", "decimal-seen-float-passed", "decimal-seen-text-passed"],
)
def test_a_number_coerced_to_decimal_is_observed(traced, result, value, projection):
    attrs = Flow(traced, result).writes(value)
    assert (attrs["kind"], attrs["projection"], attrs["source_field"]) == ("observed", projection, "amount")


@settings(max_examples=60)
@given(
    st.decimals(allow_nan=False, allow_infinity=False, places=2).filter(
        lambda d: d != decimal.Decimal("1250.5")
    )
)
def test_a_guessed_decimal_stays_assumed(module_traced, guess):
    flow = Flow(module_traced, {"amount": decimal.Decimal("1250.50"), "fee": 1250.5})
    assert flow.kind(guess) == "assumed"


# -- a date-time written with Z ------------------------------------------------------------------------
UTC = dt.UTC
INSTANT = dt.datetime(2026, 5, 10, 14, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("result", "value"),
    [
        ({"start": "2026-05-10T14:00:00Z"}, INSTANT),
        ({"start": "2026-05-10T14:00:00.000Z"}, INSTANT),
        ({"start": "2026-05-10t14:00:00z"}, INSTANT),
        ({"start": "2026-05-10T16:00:00+02:00"}, "2026-05-10T14:00:00Z"),
        ({"start": INSTANT}, "2026-05-10T14:00Z"),
    ],
    ids=["Z", "milliseconds", "lower-case", "offset-seen", "datetime-seen"],
)
def test_a_datetime_written_with_z_is_observed(traced, result, value):
    attrs = Flow(traced, result).writes(value)
    assert (attrs["kind"], attrs["projection"]) == ("observed", "datetime_normalised")


@settings(max_examples=60)
@given(
    st.datetimes(
        min_value=dt.datetime(2000, 1, 1), max_value=dt.datetime(2100, 1, 1), timezones=st.just(UTC)
    ).filter(lambda d: d.replace(microsecond=0) != INSTANT)
)
def test_a_guessed_instant_stays_assumed(module_traced, guess):
    flow = Flow(module_traced, {"start": "2026-05-10T14:00:00Z", "note": "Sync on 2026-05-10T14:00:00Z."})
    assert flow.kind(guess.replace(microsecond=0)) == "assumed"
    assert flow.kind(guess.strftime("%Y-%m-%dT%H:%M:%SZ")) == "assumed"


# -- a UUID in upper case ------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("result", "value", "projection"),
    [
        ({"id": UPPER_UUID}, uuid.UUID(UPPER_UUID), "uuid_normalised"),
        ({"id": UPPER_UUID}, UPPER_UUID.lower(), "uuid_normalised"),
        ({"id": UPPER_UUID.lower()}, UPPER_UUID, "uuid_normalised"),
        ({"ids": [UPPER_UUID] + [f"row-{i}" for i in range(40)]}, UPPER_UUID.lower(), "uuid_normalised"),
        ({"id": uuid.UUID(UPPER_UUID)}, UPPER_UUID, "uuid_normalised"),
    ],
    ids=["uuid-passed", "lower-passed", "upper-passed", "in-a-long-listing", "uuid-seen"],
)
def test_a_uuid_in_the_other_case_is_observed(traced, result, value, projection):
    attrs = Flow(traced, result).writes(value)
    assert (attrs["kind"], attrs["projection"]) == ("observed", projection)


@settings(max_examples=60)
@given(st.uuids().filter(lambda u: u != uuid.UUID(UPPER_UUID)), st.booleans())
def test_a_guessed_uuid_stays_assumed(module_traced, guess, upper):
    flow = Flow(module_traced, {"id": UPPER_UUID})
    assert flow.kind(str(guess).upper() if upper else guess) == "assumed"


# -- set[str] ------------------------------------------------------------------------------------------
TAGS = ["billing-team", "urgent-fix", "q3-report"]


@pytest.mark.parametrize("make", [set, frozenset], ids=["set", "frozenset"])
def test_a_set_of_observed_strings_is_observed(traced, make):
    attrs = Flow(traced, {"tags": TAGS}).writes(make(TAGS[:2]))
    assert (attrs["kind"], attrs["projection"]) == ("observed", "structure")


def test_sets_with_the_same_members_have_the_same_digest(traced):
    flow = Flow(traced, {"tags": TAGS})
    first = flow.writes({"billing-team", "urgent-fix", "q3-report"})["digest"]
    second = flow.writes({"q3-report", "billing-team", "urgent-fix"})["digest"]
    other = flow.writes({"q3-report", "billing-team"})["digest"]
    assert first == second != other


@settings(max_examples=60)
@given(st.sets(st.text(min_size=4, max_size=12), min_size=1, max_size=4).filter(lambda s: not s <= set(TAGS)))
def test_a_set_with_a_guessed_member_stays_assumed(module_traced, guess):
    flow = Flow(module_traced, {"tags": TAGS})
    assert flow.kind(guess | {TAGS[0]}) == "assumed"


# -- values inside prose and stdout --------------------------------------------------------------------
PROSE = [
    ("single-line", {"stdout": "ACC-778899\n"}, "ACC-778899", "in_text"),
    ("tab", {"stdout": "ACC-778899\tactive\n"}, "ACC-778899", "in_text"),
    ("logfmt", {"stdout": "id=ACC-778899 status=ok"}, "ACC-778899", "in_text"),
    ("env", {"stdout": 'OUT_DIR="/srv/out"\nMODE=fast'}, "/srv/out", "in_text"),
    ("typographic-quotes", {"text": "Use \u201cACC-778899\u201d from now on."}, "ACC-778899", "in_text"),
    ("path-in-prose", {"stdout": "wrote ./out/report.txt\n"}, "out/report.txt", "path_normalised+in_text"),
    ("bytes-stdout", {"stdout": b"report-2026.txt\nnotes.md\n"}, "report-2026.txt", "bytes_text+in_text"),
    ("bytes-whole", b"ACC-778899", "ACC-778899", "bytes_text"),
]


@pytest.mark.parametrize(
    ("result", "value", "projection"), [case[1:] for case in PROSE], ids=[case[0] for case in PROSE]
)
def test_a_value_inside_prose_or_stdout_is_observed(traced, result, value, projection):
    """From a tool declared ``trust="trusted"``: the user or the system wrote every word of it."""
    attrs = Flow(traced, result, trust="trusted").writes(value)
    assert (attrs["kind"], attrs["projection"]) == ("observed", projection)


@pytest.mark.parametrize(
    ("result", "value", "projection"),
    [case[1:] for case in PROSE if "in_text" in case[3]],
    ids=[case[0] for case in PROSE if "in_text" in case[3]],
)
def test_a_value_inside_a_text_of_an_undeclared_tool_is_untrusted(traced, result, value, projection):
    """At the default ``values`` trust (#44) the words inside a text are not evidence: whoever wrote
    the text chose them. The value is ``untrusted`` — a read may use it, a write refuses it."""
    flow = Flow(traced, result)
    assert flow.kind(value) == "untrusted"
    assert arg_attrs(traced.span("use"), "value")["projection"] == projection
    with op.run():
        flow.fetch()
        with pytest.raises(op.ProvenanceError, match="max_untrusted:value=untrusted"):
            flow.write(value=value)
    assert not flow.ran


def test_a_whole_value_of_an_undeclared_tool_is_observed(traced):
    attrs = Flow(traced, {"stdout": "ACC-778899"}).writes("ACC-778899")
    assert (attrs["kind"], attrs["projection"]) == ("observed", "exact")


def test_the_stdout_of_a_real_subprocess_is_evidence(traced):
    """``subprocess.run`` as a tool returns bytes, or a ``CompletedProcess``: both are read. The
    build is the application's own: its output is declared ``trusted``."""
    script = "print('created build-2026.tar.gz'); print('id=REL-44120')"

    @op.tool(side_effect="read", trust="trusted", tracer_provider=traced.provider)
    def build() -> bytes:
        return subprocess.run([sys.executable, "-c", script], capture_output=True, check=True).stdout

    @op.tool(side_effect="read", trust="trusted", tracer_provider=traced.provider)
    def build_process() -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)

    @op.tool(side_effect="write", tracer_provider=traced.provider)
    def publish(artifact: str, release: str) -> str:
        return "published"

    with op.run():
        build()
        assert publish(artifact="build-2026.tar.gz", release="REL-44120") == "published"
    with op.run():
        build_process()
        assert publish(artifact="build-2026.tar.gz", release="REL-44120") == "published"
    assert arg_attrs(traced.span("publish"), "release")["projection"] == "object_attribute+in_text"


def test_binary_bytes_are_not_read_as_text(traced):
    flow = Flow(traced, {"blob": b"\x00\x01ACC-778899\x02", "bad": b"\xffACC-778899"})
    assert flow.kind("ACC-778899") == "assumed"


@settings(max_examples=80)
@given(st.text(min_size=4, max_size=20))
def test_a_guess_that_is_not_a_whole_token_of_the_output_stays_assumed(module_traced, guess):
    output = "id=ACC-778899 status=ok\nwrote ./out/report.txt\n\u201cQ3-PLAN\u201d"
    whole = {
        "ACC-778899",
        "status=ok",
        "ok",
        "id=ACC-778899",
        "out/report.txt",
        "./out/report.txt",
        "Q3-PLAN",
    }
    flow = Flow(module_traced, {"stdout": output.encode(), "text": output})
    if guess.strip() not in whole and guess not in whole:
        assert flow.kind(guess) == "assumed"


@pytest.mark.parametrize("part", ["778899", "ACC-7788", "ACC", "report.txt", "out/report", "Q3"])
def test_a_part_of_a_token_is_not_inside_the_output(traced, part):
    flow = Flow(traced, {"stdout": "id=ACC-778899 status=ok\nwrote ./out/report.txt \u201cQ3-PLAN\u201d"})
    assert flow.kind(part) == "assumed"


# -- plain objects' attributes -------------------------------------------------------------------------
class Account:
    def __init__(self) -> None:
        self.number = "ACC-778899"
        self.owner = {"email": "bob@example.com"}
        self._token = "SECRET-TOKEN-1234"  # private: an object's machinery, not its data


@pytest.mark.parametrize(
    ("result", "value", "field"),
    [
        (Account(), "ACC-778899", "number"),
        (Account(), "bob@example.com", "owner.email"),
        (types.SimpleNamespace(account="ACC-778899"), "ACC-778899", "account"),
        ({"accounts": [Account()]}, "ACC-778899", "accounts.0.number"),
    ],
    ids=["attribute", "nested", "namespace", "inside-a-list"],
)
def test_a_plain_objects_attribute_is_observed(traced, result, value, field):
    attrs = Flow(traced, result).writes(value)
    assert (attrs["kind"], attrs["projection"], attrs["source_field"]) == (
        "observed",
        "object_attribute",
        field,
    )


def test_private_attributes_classes_and_functions_are_not_read(traced):
    flow = Flow(
        traced,
        {
            "account": Account(),
            "cls": Account,
            "fn": test_private_attributes_classes_and_functions_are_not_read,
        },
    )
    assert flow.kind("SECRET-TOKEN-1234") == "assumed"
    assert flow.kind("ACC-778899") == "observed"


@settings(max_examples=60)
@given(st.text(min_size=4, max_size=16).filter(lambda t: t not in ("ACC-778899", "bob@example.com")))
def test_a_guess_is_not_an_attribute(module_traced, guess):
    flow = Flow(module_traced, Account())
    assert flow.kind(guess) == "assumed"


def test_an_object_an_unsourced_argument_echoes_is_not_evidence(traced):
    """An object is walked like a dataclass when remembered: its echoed attributes are echoes too."""
    ran: list[str] = []

    @op.tool(side_effect="read", tracer_provider=traced.provider)
    def validate(account: Any) -> Any:
        return types.SimpleNamespace(account=account, valid=False, checked="TCK-FRESH-9")

    @op.tool(side_effect="write", tracer_provider=traced.provider)
    def close(account: str) -> str:
        ran.append(account)
        return "closed"

    with op.run():
        validate(account=types.SimpleNamespace(number="ACC-GUESS-1"))
        validate(account="ACC-GUESS-2")
        for guess in ("ACC-GUESS-1", "ACC-GUESS-2"):
            with pytest.raises(op.ProvenanceError):
                close(account=guess)
        assert close(account="TCK-FRESH-9") == "closed"
    assert ran == ["TCK-FRESH-9"]
