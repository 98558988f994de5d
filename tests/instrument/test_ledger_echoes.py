"""Echoes do not launder, for structured arguments too (docs/provenance.md, "Echoes are not evidence").

A read tool called with an unsourced (assumed) dict, list, dataclass or pydantic argument that returns
the argument's leaves must leave the ledger as it was for those leaves, while every other field of its
result is remembered as evidence. Through ``@op.tool`` and ``op.run`` with the real SDK; a later read
tool ``use`` shows how each value is classified then.
"""

from __future__ import annotations

import dataclasses
import datetime
import uuid
from typing import Any

import pydantic

import otel_provenance as op
from instrument_helpers import Traced, arg_attrs
from otel_provenance.instrument.evidence.ledger import MAX_DEPTH, Ledger

FRESH = "TCK-FRESH-000123"


class Tools:
    """``echo(request)`` returns its argument next to a fresh ticket; ``use(**values)`` classifies."""

    def __init__(self, traced: Traced, shape=lambda request: {"request": request, "ticket": FRESH}):
        self.traced = traced

        @op.tool(side_effect="read", tracer_provider=traced.provider)
        def echo(request: Any) -> Any:
            return shape(request)

        @op.tool(side_effect="read", tracer_provider=traced.provider)
        def use(**values: Any) -> None:
            return None

        self.echo = echo
        self._use = use

    def kinds(self, **values: Any) -> dict[str, str]:
        """Each value's kind when passed to a tool now (one call per value, under its own name)."""
        out = {}
        for name, value in values.items():
            self._use(**{name: value})
            out[name] = arg_attrs(self.traced.span("use"), name)["kind"]
        return out


@dataclasses.dataclass
class Transfer:
    account: str
    when: datetime.date
    reference: uuid.UUID
    dry_run: bool = False


class Customer(pydantic.BaseModel):
    email: str
    vip: bool
    segment: str = "retail"


def test_echoed_leaves_of_an_unsourced_dict_stay_unsourced_and_the_rest_is_evidence(traced):
    tools = Tools(traced)
    request = {
        "account": "ACCT-4242-GUESS",
        "tags": ["vip-guess", 31337, float("nan")],
        "options": {"dry_run": True, "limit": 2.5, "note": None, "path": "./guess/report.txt"},
    }
    with op.run():
        tools.echo(request=request)
        assert arg_attrs(traced.span("echo"), "request")["kind"] == "assumed"
        kinds = tools.kinds(
            account="ACCT-4242-GUESS",
            tag="vip-guess",
            number=31337,
            dry_run=True,  # a flag under its own field name: evidence, were it not an echo
            limit=2.5,  # a short number under its own field name: likewise
            path="guess/report.txt",  # the normalised form the result is indexed under
            ticket=FRESH,
        )
    assert kinds == {
        "account": "assumed",
        "tag": "assumed",
        "number": "assumed",
        "dry_run": "assumed",
        "limit": "assumed",
        "path": "assumed",
        "ticket": "observed",
    }


def test_an_echoed_leaf_that_was_observed_before_keeps_its_first_source(traced):
    """A structure with one observed and one guessed leaf is unsourced as a whole; its echo must not
    move the observed leaf's source to the echoing tool (the ledger is left as it was)."""
    tools = Tools(traced)

    @op.tool(side_effect="read", tracer_provider=traced.provider)
    def accounts() -> dict:
        return {"account": "ACCT-1111-SEEN", "active": True}

    with op.run():
        accounts()
        tools.echo(request={"account": "ACCT-1111-SEEN", "active": True, "team": "guessed-team"})
        tools.kinds(account="ACCT-1111-SEEN")
        first = arg_attrs(traced.span("use"), "account")
        tools.kinds(active=True)
        flag = arg_attrs(traced.span("use"), "active")
        assert tools.kinds(team="guessed-team", ticket=FRESH) == {"team": "assumed", "ticket": "observed"}
    assert (first["kind"], first["source_tool"], first["source_field"]) == ("observed", "accounts", "account")
    assert (flag["kind"], flag["source_tool"]) == ("observed", "accounts")


def test_echoed_fields_of_an_unsourced_dataclass_and_pydantic_model_stay_unsourced(traced):
    tools = Tools(traced)
    reference = uuid.UUID("6f1c2a9d-8e7b-4a5f-9e3d-2c1b0a9f8e7d")
    transfer = Transfer("ACCT-7777-GUESS", datetime.date(2031, 5, 17), reference, dry_run=True)
    customer = Customer(email="guess@example.com", vip=True)
    with op.run():
        tools.echo(request=transfer)
        tools.echo(request=customer)
        tools.echo(request=reference)  # a scalar that is not a plain str/int: its own text
        kinds = tools.kinds(
            account="ACCT-7777-GUESS",
            when="2031-05-17",
            reference=str(reference),
            dry_run=True,
            email="guess@example.com",
            vip=True,
            segment="retail",
            ticket=FRESH,
        )
    assert kinds == {
        "account": "assumed",
        "when": "assumed",
        "reference": "assumed",
        "dry_run": "assumed",
        "email": "assumed",
        "vip": "assumed",
        "segment": "assumed",
        "ticket": "observed",
    }


@dataclasses.dataclass
class Draft:
    subject: str
    status: str = dataclasses.field(init=False)  # never set: reading it raises AttributeError


def test_a_structure_with_an_unset_field_is_still_remembered_without_its_echoes(traced):
    """A dataclass field declared ``init=False`` and never set, or a pydantic model built without a
    required field, has no value: the echo rule skips it instead of failing the whole remember."""
    tools = Tools(traced)
    partial = Customer.model_construct(email="partial@example.com")  # no ``vip``
    with op.run():
        tools.echo(request=Draft("draft-subject-guess"))
        assert tools.kinds(subject="draft-subject-guess", ticket=FRESH) == {
            "subject": "assumed",
            "ticket": "observed",
        }
    with op.run():
        tools.echo(request=partial)
        assert tools.kinds(email="partial@example.com", ticket=FRESH) == {
            "email": "assumed",
            "ticket": "observed",
        }


def test_a_leaf_at_the_deepest_remembered_level_is_not_laundered_by_its_echo(traced):
    """A result is remembered down to containers at depth ``MAX_DEPTH``; the echo rule must look at
    least as deep into an argument, or the deepest leaf of an echoed argument becomes evidence."""
    tools = Tools(traced, shape=lambda request: {"ticket": FRESH, "n": request["n"]})
    deepest: dict = {"leaf": "DEEP-GUESS-0001"}
    request = deepest
    for _ in range(MAX_DEPTH):
        request = {"n": request}  # ``deepest`` sits at depth MAX_DEPTH in both argument and result
    with op.run():
        tools.echo(request=request)
        kinds = tools.kinds(leaf="DEEP-GUESS-0001", ticket=FRESH)
    assert kinds == {"leaf": "assumed", "ticket": "observed"}


def test_a_cyclic_unsourced_argument_does_not_stop_the_result_being_remembered(traced):
    tools = Tools(traced, shape=lambda request: {"ticket": FRESH, "account": request["account"]})
    cyclic: dict = {"account": "CYC-GUESS-0001"}
    cyclic["self"] = cyclic
    with op.run():
        tools.echo(request=cyclic)
        kinds = tools.kinds(account="CYC-GUESS-0001", ticket=FRESH)
    assert kinds == {"account": "assumed", "ticket": "observed"}


def test_an_echoed_list_of_flags_stays_unsourced(traced):
    """Booleans are evidence by field name; in a list their name is the position, in the argument
    (``flags.0``) as in the result. An echo of a guessed list of flags must not make it observed."""
    tools = Tools(traced, shape=lambda request: {"flags": request, "ticket": FRESH})
    with op.run():
        tools.echo(request=[True, False])
        tools.echo(request=(False, True, True))
        kinds = tools.kinds(listed=[True, False], tupled=(False, True, True), ticket=FRESH)
    assert kinds == {"listed": "assumed", "tupled": "assumed", "ticket": "observed"}


def test_an_echoed_set_of_flags_stays_unsourced(traced):
    """A set's members have no position: flags in a result's set are remembered under ``*``, and
    the echo rule must undo them under the same name."""
    tools = Tools(traced, shape=lambda request: {"members": request, "ticket": FRESH})
    with op.run():
        tools.echo(request=frozenset({True, "SET-GUESS-0001"}))
        kinds = tools.kinds(star={"*": True}, member="SET-GUESS-0001", ticket=FRESH)
    assert kinds == {"star": "assumed", "member": "assumed", "ticket": "observed"}


def test_echoed_plain_arguments_stay_unsourced_through_a_tool(traced):
    """The plain-int, plain-str and bool fast paths of the echo rule, through ``@op.tool``."""
    tools = Tools(traced)

    @op.tool(side_effect="read", tracer_provider=traced.provider)
    def validate(number: int, account: str, dry_run: bool) -> dict:
        return {"number": number, "account": account, "dry_run": dry_run, "ticket": FRESH}

    with op.run():
        validate(number=918273, account="ACCT-9191-GUESS", dry_run=True)
        kinds = tools.kinds(number=918273, account="ACCT-9191-GUESS", dry_run=True, ticket=FRESH)
    assert kinds == {"number": "assumed", "account": "assumed", "dry_run": "assumed", "ticket": "observed"}


SEEN = {"code": "a", "count": 7, "label": "ACCT-SEEN-1", "ref": "REF-SEEN-2", "dry_run": True}
LONG, BLOB = "L" * 8192, "M" * 8192  # the longest texts remembered
UNSOURCED = {  # in this order: each fast path is followed by echoes the later paths must undo
    "count": 7,  # observed before (short, so unsourced under another name): its entry is restored
    "number": 918273,
    "label": "ACCT-SEEN-1",
    "absent": "never-echoed-guess",  # not in the result: nothing to undo
    "code": "./a",  # normalises to the observed "a"
    "path": "./guess/a.txt",
    "long": LONG,
    "verbose": True,  # not in the result
    "dry_run": True,  # observed before: restored
    "force": False,
    "request": {"ref": "REF-SEEN-2", "note": None, "deep": "./guess/b.txt", "blob": BLOB, "on": True},
}


def test_the_echo_rule_restores_what_the_ledger_held_and_adds_nothing():
    """Each echoed text or flag is put back exactly as it was: an earlier observation keeps its source,
    a value never observed is absent again, and no placeholder entry is left counting towards the bound
    (``max_entries`` is reached exactly without the ledger reporting itself full)."""
    bound = 32
    ledger = Ledger(bound)
    ledger.remember("seen", SEEN, "s0")
    result = {k: v for k, v in UNSOURCED.items() if k not in ("absent", "verbose")}
    ledger.remember("echo", {**result, "ticket": FRESH}, "s1", unsourced=UNSOURCED)

    for text, kind in (("a", 0), ("7", 1), ("ACCT-SEEN-1", 0), ("REF-SEEN-2", 0)):
        match = ledger.lookup(text, kind)
        assert match is not None, text
        assert (match.observation.tool, match.observation.span_id) == ("seen", "s0"), text
    assert ledger.flag("dry_run", True).tool == "seen"
    for text in ("918273", "guess/a.txt", "guess/b.txt", LONG, BLOB):
        assert ledger.lookup(text) is None, text[:20]
    assert ledger.flag("force", False) is None and ledger.flag("on", True) is None
    assert ledger.lookup(FRESH).observation.tool == "echo"
    assert len(ledger) == 5  # the four seen texts and the ticket

    ledger.remember("fill", {f"field_{i}": f"filler-{i:04d}" for i in range(bound - 5)}, "s2")
    ledger.remember("fill", {f"flag_{i}": True for i in range(bound - 1)}, "s3")
    assert len(ledger) == bound and not ledger.full
