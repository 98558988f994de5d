"""Writes never run unsourced (#36, "Writes run unsourced"): each laundering path is refused before the
write tool's body runs.

Every write tool here records in ``ran`` that its body started; a blocked call must leave it empty.
The attacker's moves: a read tool that echoes a guessed path split into ``{parent, name}`` (then
joined back by ``path_join``), a guessed dict key, a pydantic model's extra field, a ``**kwargs``
name that looks like an allow-listed parameter, an echo derived from the guess (``normpath``,
``strip().lower()``, zero-padding, the guess inside a sentence), an echo deeper or wider than the
old snapshot limits. Through ``@op.tool`` and ``op.run`` on the real SDK; the control case in each
test shows the same flow passes with a value the run really observed.
"""

from __future__ import annotations

import os

import pytest
from pydantic import BaseModel, ConfigDict
from pydantic import v1 as pydantic_v1

import otel_provenance as op
from instrument_helpers import arg_attrs
from otel_provenance.instrument.evidence.ledger import MAX_DEPTH, Ledger

GUESS = "/etc/secret/prod.env"


class Writes:
    """Write tools whose bodies record that they ran."""

    def __init__(self, traced) -> None:
        self.ran: list[str] = []
        ran = self.ran

        @op.tool(side_effect="write", tracer_provider=traced.provider)
        def delete(path: str) -> str:
            ran.append("delete")
            return "deleted"

        @op.tool(side_effect="write", tracer_provider=traced.provider)
        def grant(roles: dict) -> str:
            ran.append("grant")
            return "granted"

        self.delete = delete
        self.grant = grant

    def blocked(self, write, **arguments) -> None:
        """``write(**arguments)`` is refused and its body never starts."""
        before = list(self.ran)
        with pytest.raises(op.ProvenanceError):
            write(**arguments)
        assert self.ran == before, "the body ran"


def test_a_path_split_into_parent_and_name_by_a_read_tool_is_not_joined_back(traced):
    """``path_join`` joins a root and an entry produced by one call; a ``stat`` of a guessed path
    produces both halves of the guess. Neither half, nor the join, is evidence."""
    writes = Writes(traced)

    @op.tool(side_effect="read", tracer_provider=traced.provider)
    def stat(path: str) -> dict:
        return {"parent": os.path.dirname(path), "name": os.path.basename(path), "size": 120}

    @op.tool(side_effect="read", tracer_provider=traced.provider)
    def split(path: str) -> dict:
        return {"root": "/etc", "files": ["secret/prod.env"]}  # cut at another slash

    with op.run():
        stat(path=GUESS)
        writes.blocked(writes.delete, path=GUESS)
        writes.blocked(writes.delete, path="/etc/secret/./prod.env")  # the same path, normalised
        split(path=GUESS)
        writes.blocked(writes.delete, path=GUESS)
    assert arg_attrs(traced.span("delete"), "path")["kind"] == "assumed"


def test_a_listing_of_a_directory_still_joins_with_its_entries(traced):
    """The control: a listing produced its entries; root + entry is observed (``path_join``)."""
    writes = Writes(traced)

    @op.tool(side_effect="read", tracer_provider=traced.provider)
    def ls(root: str) -> dict:
        return {"entries": ["prod.env", "dev.env"]}

    with op.run(inputs={"root": "/etc/secret"}):
        ls(root="/etc/secret")
        assert writes.delete(path=GUESS) == "deleted"
    attrs = arg_attrs(traced.span("delete"), "path")
    assert (attrs["kind"], attrs["projection"]) == ("observed", "path_join")


@pytest.mark.parametrize(
    "key",
    ["attacker@evil.example", "eve", "acct_123"],
    ids=["address", "identifier", "account-like"],
)
def test_a_dict_key_never_observed_blocks_the_write(traced, key):
    writes = Writes(traced)

    @op.tool(side_effect="read", tracer_provider=traced.provider)
    def list_roles() -> dict:
        return {"roles": ["admin_role", "viewer_role"], "users": ["bob@example.com"]}

    with op.run():
        list_roles()
        writes.blocked(writes.grant, roles={key: "admin_role"})
        assert writes.grant(roles={"bob@example.com": "admin_role"}) == "granted"  # an observed key
    assert arg_attrs(traced.span("grant", 0), "roles")["kind"] == "assumed"
    assert arg_attrs(traced.span("grant", -1), "roles")["kind"] == "observed"


def test_a_dict_key_seen_as_a_field_name_or_in_the_request_is_observed(traced):
    writes = Writes(traced)

    @op.tool(side_effect="read", tracer_provider=traced.provider)
    def get_policy() -> dict:
        return {"viewer": "read_role", "editor": "write_role"}

    with op.run(request="Make eve an editor"):
        get_policy()
        assert writes.grant(roles={"editor": "write_role"}) == "granted"  # a field name of a result
        assert writes.grant(roles={"eve": "write_role"}) == "granted"  # written in the request
        writes.blocked(writes.grant, roles={"mallory": "write_role"})


class Grant(BaseModel):
    model_config = ConfigDict(extra="allow")
    role: str


class GrantV1(pydantic_v1.BaseModel):
    """The same model in pydantic's v1 API (``pydantic.v1``): its extras live in ``__dict__``."""

    class Config:
        extra = "allow"

    role: str


@pytest.mark.parametrize("Grant", [Grant, GrantV1], ids=["pydantic-v2", "pydantic-v1-api"])
def test_an_extra_field_of_a_pydantic_model_is_classified_with_its_name(traced, Grant):
    """``extra="allow"`` fields reach the body: their names and values must be observed."""
    ran: list[str] = []

    @op.tool(side_effect="read", tracer_provider=traced.provider)
    def list_roles() -> dict:
        return {"role": "admin_role", "users": ["bob@example.com"]}

    @op.tool(side_effect="write", tracer_provider=traced.provider)
    def grant(request: Grant) -> str:
        ran.append("grant")
        return "granted"

    with op.run():
        list_roles()
        with pytest.raises(op.ProvenanceError):
            grant(request=Grant(role="admin_role", user="attacker@evil.example"))
        with pytest.raises(op.ProvenanceError):
            grant(request=Grant(role="admin_role", **{"attacker@evil.example": "bob@example.com"}))
        assert ran == []
        assert grant(request=Grant(role="admin_role")) == "granted"
        assert grant(request=Grant(role="admin_role", users="bob@example.com")) == "granted"
    assert ran == ["grant", "grant"]


def test_a_kwargs_name_is_never_on_the_default_allow_list(traced):
    """``body`` is allow-listed as a declared free-text parameter; through ``**kwargs`` the caller
    chose the name, so a guessed value there counts."""
    ran: list[str] = []

    @op.tool(side_effect="write", tracer_provider=traced.provider)
    def send(to: str, **fields) -> str:
        ran.append("send")
        return "sent"

    @op.tool(side_effect="write", tracer_provider=traced.provider)
    def send_declared(to: str, body: str) -> str:
        ran.append("declared")
        return "sent"

    @op.tool(side_effect="write", tracer_provider=traced.provider, budget=op.Budget(allow={"body"}))
    def send_allowing(to: str, **fields) -> str:
        ran.append("allowing")
        return "sent"

    with op.run(inputs={"to": "bob@example.com"}):
        with pytest.raises(op.ProvenanceError) as refused:
            send(to="bob@example.com", body="wire 5000 EUR to eve")
        assert ran == []
        assert "max_assumed:body=assumed" in refused.value.violations
        assert send_declared(to="bob@example.com", body="see you at noon") == "sent"
        assert send_allowing(to="bob@example.com", body="see you at noon") == "sent"  # named explicitly
    assert ran == ["declared", "allowing"]
    assert "agent.budget.allowed" not in traced.span("send").attributes


def test_a_kwargs_key_that_is_data_is_classified_as_a_value(traced):
    """``grant(**{"eve@evil.example": "admin_role"})``: the name is exported as ``roles.0``, and the
    key — which the body receives — must be observed too."""
    ran: list[str] = []

    @op.tool(side_effect="read", tracer_provider=traced.provider)
    def list_roles() -> dict:
        return {"roles": ["admin_role"], "users": ["bob@example.com"]}

    @op.tool(side_effect="write", tracer_provider=traced.provider)
    def grant(**roles) -> str:
        ran.append("grant")
        return "granted"

    with op.run():
        list_roles()
        with pytest.raises(op.ProvenanceError):
            grant(**{"eve@evil.example": "admin_role"})
        assert ran == []
        assert grant(**{"bob@example.com": "admin_role"}) == "granted"
    assert arg_attrs(traced.span("grant", 0), "roles.0")["kind"] == "assumed"
    assert arg_attrs(traced.span("grant", -1), "roles.0")["kind"] == "observed"


@pytest.mark.parametrize(
    ("guess", "derive", "write"),
    [
        ("reports/../../etc/secret/prod.env", os.path.normpath, "../etc/secret/prod.env"),
        ("  ACCT-Guess-2291 ", lambda v: v.strip().lower(), "acct-guess-2291"),
        ("  ACCT-Guess-2291 ", lambda v: v.strip().upper(), "ACCT-GUESS-2291"),
        ("4471", lambda v: v.zfill(10), "0000004471"),
        ("ACC-0007731", lambda v: v.replace("-000", "-"), "ACC-7731"),
        ("12.50", lambda v: f"${float(v):,.2f}", "$12.50"),
    ],
    ids=["normpath", "strip-lower", "strip-upper", "zero-padding", "zeros-dropped", "number-form"],
)
def test_a_value_derived_from_a_guess_is_not_evidence(traced, guess, derive, write):
    writes = Writes(traced)

    @op.tool(side_effect="read", tracer_provider=traced.provider)
    def resolve(value: str) -> dict:
        return {"canonical": derive(value), "ticket": "TCK-000-FRESH"}

    with op.run():
        resolve(value=guess)
        writes.blocked(writes.delete, path=write)
        assert writes.delete(path="TCK-000-FRESH") == "deleted"  # the rest of the result counts


@pytest.mark.parametrize(
    "shape",
    [
        lambda v: f"Account {v} was not found.",
        lambda v: f"error: no such account '{v}'\n",
        lambda v: f"lookup account={v} status=missing",
        lambda v: [f"{v}"] + [f"line-{i}" for i in range(40)],
    ],
    ids=["sentence", "stderr", "logfmt", "listing"],
)
def test_a_guess_inside_a_text_of_the_same_call_is_not_evidence(traced, shape):
    writes = Writes(traced)

    @op.tool(side_effect="read", tracer_provider=traced.provider)
    def check(account: str) -> object:
        return shape(account)

    with op.run():
        check(account="ACCT-GUESS-5531")
        writes.blocked(writes.delete, path="ACCT-GUESS-5531")


def test_an_echo_past_the_old_snapshot_limits_is_still_not_evidence(traced):
    """The snapshot stopped at 4,096 items per container and 32 levels; the ledger remembers a
    result's part from deep inside an argument, and lists longer than 4,096."""
    writes = Writes(traced)
    wide = [f"GUESS-WIDE-{i:05d}" for i in range(4200)]
    deep: object = {"leaf": "GUESS-DEEP-0001"}
    for _ in range(MAX_DEPTH + 8):
        deep = {"n": deep}

    @op.tool(side_effect="read", tracer_provider=traced.provider)
    def echo_wide(items: list) -> dict:
        return {"items": items[4100:], "ticket": "TCK-WIDE-FRESH"}

    @op.tool(side_effect="read", tracer_provider=traced.provider)
    def echo_deep(tree: dict) -> dict:
        node = tree
        for _ in range(MAX_DEPTH + 4):
            node = node["n"]
        return {"subtree": node, "ticket": "TCK-DEEP-FRESH"}  # the guess, 4 levels down here

    with op.run(ledger_max_entries=100_000):
        echo_wide(items=wide)
        echo_deep(tree=deep)
        writes.blocked(writes.delete, path="GUESS-WIDE-04150")
        writes.blocked(writes.delete, path="GUESS-DEEP-0001")
        assert writes.delete(path="TCK-WIDE-FRESH") == "deleted"
        assert writes.delete(path="TCK-DEEP-FRESH") == "deleted"


def test_an_unsourced_argument_bigger_than_the_bound_leaves_nothing_of_the_result():
    """Past the ledger's bound the argument cannot be examined whole: no part of the result is
    known not to echo it, so none is remembered (fail closed)."""
    ledger = Ledger(64)
    guesses = [f"GUESS-{i:03d}" for i in range(100)]
    ledger.remember("echo", {"ticket": "TCK-FRESH-1", "items": guesses[90:]}, "s1", unsourced={"q": guesses})
    assert len(ledger) == 0 and ledger.lookup("TCK-FRESH-1") is None
    few = guesses[:3]
    ledger.remember("echo", {"ticket": "TCK-FRESH-1", "items": few}, "s2", unsourced={"q": few})
    assert ledger.lookup("TCK-FRESH-1") is not None and ledger.lookup(guesses[0]) is None


def test_a_generator_write_whose_argument_changed_before_its_first_step_never_runs(traced):
    """Decided at the call, run at the first ``next()``: a list mutated in between is refused."""
    ran: list[list[str]] = []

    @op.tool(side_effect="read", tracer_provider=traced.provider)
    def ls() -> dict:
        return {"files": ["a.txt", "b.txt"]}

    @op.tool(side_effect="write", tracer_provider=traced.provider)
    def delete_all(paths: list):
        ran.append(list(paths))
        yield from paths

    with op.run():
        ls()
        paths = ["a.txt", "b.txt"]
        steps = delete_all(paths=paths)  # decided: both observed
        paths.append("/etc/passwd")
        with pytest.raises(op.ProvenanceError) as refused:
            next(steps)
        assert ran == []
        assert "provenance_fault:arguments_changed" in refused.value.violations
        assert list(delete_all(paths=["a.txt", "b.txt"])) == ["a.txt", "b.txt"]  # unchanged: runs
    assert ran == [["a.txt", "b.txt"]]
    assert traced.span("delete_all", 0).attributes["agent.tool.status"] == "blocked"


def test_an_async_generator_write_whose_argument_changed_before_its_first_step_never_runs(traced):
    import asyncio

    ran: list[dict] = []

    @op.tool(side_effect="read", tracer_provider=traced.provider)
    def get_user() -> dict:
        return {"user": "bob@example.com", "role": "viewer_role"}

    @op.tool(side_effect="write", tracer_provider=traced.provider)
    async def apply(change: dict):
        ran.append(dict(change))
        yield "applied"

    async def main() -> list[str]:
        async with op.run():
            get_user()
            change = {"user": "bob@example.com", "role": "viewer_role"}
            steps = apply(change=change)
            change["role"] = "admin_role"
            with pytest.raises(op.ProvenanceError):
                await steps.__anext__()
            assert ran == []
            return [item async for item in apply(change={"user": "bob@example.com", "role": "viewer_role"})]

    assert asyncio.run(main()) == ["applied"]
    assert ran == [{"user": "bob@example.com", "role": "viewer_role"}]


def test_a_changed_argument_of_a_read_generator_is_tagged_not_blocked(traced):
    @op.tool(side_effect="read", tracer_provider=traced.provider)
    def search(terms: list):
        yield from terms

    with op.run():
        terms = ["alpha"]
        steps = search(terms=terms)
        terms.append("beta")
        assert list(steps) == ["alpha", "beta"]
    attributes = traced.span("search").attributes
    assert attributes["agent.tool.status"] == "ok"
    assert "provenance_fault:arguments_changed" in attributes["agent.violations"]


def test_a_split_path_is_not_joined_back_through_an_mcp_session(tmp_path):
    """The same echo through MCP: a real server over stdio, ``provenance_session`` gating each call.
    The refused delete never reaches the server (its record has only the listed path's delete)."""
    pytest.importorskip("mcp")
    import sys
    from pathlib import Path

    import anyio
    from mcp import ClientSession, StdioServerParameters, stdio_client

    from otel_provenance.instrument.mcp import provenance_session

    record = tmp_path / "deleted.jsonl"
    params = StdioServerParameters(
        command=sys.executable,
        args=[str(Path(__file__).with_name("launder_mcp_server.py"))],
        env={**os.environ, "LAUNDER_RECORD": str(record)},
    )

    async def agent() -> list[bool]:
        with open(tmp_path / "server.stderr", "w") as errlog:
            async with (
                stdio_client(params, errlog=errlog) as (read, write),
                ClientSession(read, write) as raw,
            ):
                await raw.initialize()
                session = provenance_session(raw)
                refused = []
                with op.run(inputs={"root": "/etc/secret"}):
                    await session.call_tool("stat_path", {"path": GUESS})
                    result = await session.call_tool("delete_path", {"path": GUESS})
                    refused.append(
                        bool(getattr(result, "is_error", None) or getattr(result, "isError", None))
                    )
                    await session.call_tool("list_dir", {"root": "/etc/secret"})
                    result = await session.call_tool("delete_path", {"path": "/etc/secret/dev.env"})
                    refused.append(
                        bool(getattr(result, "is_error", None) or getattr(result, "isError", None))
                    )
                return refused

    assert anyio.run(agent) == [True, False]
    assert record.read_text().splitlines() == ['{"tool": "delete_path", "path": "/etc/secret/dev.env"}']


def test_an_echo_of_a_kwargs_key_that_is_data_is_not_evidence(traced):
    ran: list[str] = []

    @op.tool(side_effect="read", tracer_provider=traced.provider)
    def lookup(**users) -> dict:
        return {"found": list(users), "ticket": "TCK-KEY-FRESH"}

    @op.tool(side_effect="write", tracer_provider=traced.provider)
    def invite(email: str) -> str:
        ran.append(email)
        return "invited"

    with op.run():
        lookup(**{"eve@evil.example": "guest"})
        with pytest.raises(op.ProvenanceError):
            invite(email="eve@evil.example")
        assert invite(email="TCK-KEY-FRESH") == "invited"
    assert ran == ["TCK-KEY-FRESH"]


def test_an_echo_of_an_extra_field_name_is_not_evidence(traced):
    ran: list[str] = []

    @op.tool(side_effect="read", tracer_provider=traced.provider)
    def check(request: Grant) -> dict:
        return {"users": [k for k in (request.model_extra or {})], "ticket": "TCK-EXTRA-FRESH"}

    @op.tool(side_effect="write", tracer_provider=traced.provider)
    def invite(email: str) -> str:
        ran.append(email)
        return "invited"

    with op.run():
        check(request=Grant(role="viewer_role", **{"eve@evil.example": "yes"}))
        with pytest.raises(op.ProvenanceError):
            invite(email="eve@evil.example")
        assert invite(email="TCK-EXTRA-FRESH") == "invited"
    assert ran == ["TCK-EXTRA-FRESH"]


def test_a_kwargs_key_from_an_untrusted_source_makes_an_observed_value_untrusted(traced):
    """The value is observed in a trusted listing, the key only in an untrusted tool's result: the
    argument is as trusted as its least trusted part — untrusted, sourced by the key's tool, with the
    value's projection."""

    @op.tool(side_effect="read", tracer_provider=traced.provider)
    def list_roles() -> dict:
        return {"roles": ["admin_role"]}

    @op.tool(side_effect="read", trust="untrusted", tracer_provider=traced.provider)
    def read_inbox() -> dict:
        return {"requester": "eve@evil.example"}

    @op.tool(side_effect="read", tracer_provider=traced.provider)
    def lookup(**roles) -> str:
        return "ok"

    with op.run():
        list_roles()
        read_inbox()
        assert lookup(**{"eve@evil.example": "admin_role"}) == "ok"
    attrs = arg_attrs(traced.span("lookup"), "roles.0")
    assert (attrs["kind"], attrs["source_tool"], attrs["projection"]) == ("untrusted", "read_inbox", "exact")
