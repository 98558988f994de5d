"""@op.tool through the real SDK: call shapes, span shape, blocking before the body, errors by type only."""

from __future__ import annotations

import asyncio

import pytest
from opentelemetry.sdk.trace import ReadableSpan, SpanLimits, SpanProcessor
from opentelemetry.trace import SpanKind, StatusCode

import otel_provenance as op
from instrument_helpers import Traced, arg_attrs
from otel_provenance.instrument.base.settings import ENV_DIGEST_KEY, reset_settings


def make_tools(t: Traced, effects: list):
    @op.tool(side_effect="read", tracer_provider=t.provider)
    def list_files(root: str) -> dict:
        return {"root": root, "files": ["app.py", "tests/test_app.py"]}

    @op.tool(
        side_effect="write",
        data_domain="repo",
        budget=op.Budget(max_assumed=0, allow={"comment"}),
        tracer_provider=t.provider,
    )
    def patch_file(path: str, comment: str) -> dict:
        effects.append(path)
        return {"patched": True}

    return list_files, patch_file


def test_reference_fixture_good_run_observed_bad_run_blocked_before_body(traced):
    effects: list[str] = []
    list_files, patch_file = make_tools(traced, effects)
    with op.run(inputs={"root": "."}) as run:
        listing = list_files(root=".")
        patch_file(path=listing["files"][0], comment="keep tests green")
        with pytest.raises(op.ProvenanceError) as blocked:
            patch_file(path="prod.env", comment="looks important")
    assert effects == ["app.py"]  # the blocked body never ran
    assert isinstance(blocked.value, PermissionError)
    assert blocked.value.violations == ("max_assumed:path=assumed",)
    assert "prod.env" not in str(blocked.value) and "looks important" not in str(blocked.value)

    listing_span = traced.span("list_files")
    good, bad = traced.span("patch_file", 0), traced.span("patch_file", 1)
    assert arg_attrs(listing_span, "root")["kind"] == "observed"
    assert arg_attrs(listing_span, "root")["source_tool"] == "input"
    path = arg_attrs(good, "path")
    assert path["kind"] == "observed"
    assert path["source_tool"] == "list_files"
    assert path["source_field"] == "files.0"
    assert path["source_span_id"] == format(listing_span.context.span_id, "016x")
    assert path["projection"] == "exact"
    assert good.attributes["agent.tool.status"] == "ok"
    assert good.attributes["agent.run.id"] == run.run_id == bad.attributes["agent.run.id"]

    assert bad.status.status_code is StatusCode.ERROR
    assert bad.status.description == "ProvenanceError"
    assert bad.attributes["agent.tool.status"] == "blocked"
    assert bad.attributes["error.type"] == "otel_provenance.errors.ProvenanceError"
    assert tuple(bad.attributes["agent.violations"]) == ("max_assumed:path=assumed",)
    assert bad.attributes["agent.budget.assumed"] == 1
    assert bad.attributes["agent.budget.max_assumed"] == 0
    assert arg_attrs(bad, "path")["kind"] == "assumed"
    assert arg_attrs(bad, "comment")["kind"] == "assumed"  # tagged, but allow-listed: not counted


def test_span_shape_follows_genai_conventions(traced):
    list_files, _ = make_tools(traced, [])
    with op.run():
        list_files("src")
    span = traced.span("list_files")
    assert span.name == "execute_tool list_files"
    assert span.kind is SpanKind.INTERNAL
    attrs = span.attributes
    assert attrs["gen_ai.operation.name"] == "execute_tool"
    assert attrs["gen_ai.tool.name"] == "list_files"
    assert attrs["gen_ai.tool.type"] == "function"
    assert str(attrs["agent.tool.call.id"]).startswith("call_")  # its own id: no framework gave one
    assert "gen_ai.tool.call.id" not in attrs  # the model's id of the call, which there is none of
    assert attrs["agent.side_effect"] == "read"
    assert attrs["agent.retry.number"] == 0
    assert attrs["agent.idempotency.present"] is False
    assert attrs["agent.digest.key_id"]
    assert "agent.data_domain" not in attrs
    assert span.status.status_code is StatusCode.UNSET


def test_operation_name_is_set_at_span_creation(traced):
    seen = {}

    class Recorder(SpanProcessor):
        def on_start(self, span, parent_context=None):
            seen.update(span.attributes)

    traced.provider.add_span_processor(Recorder())
    list_files, _ = make_tools(traced, [])
    list_files(".")
    assert seen["gen_ai.operation.name"] == "execute_tool"
    assert seen["gen_ai.tool.name"] == "list_files"


def test_async_tool(traced):
    @op.tool(side_effect="write", tracer_provider=traced.provider)
    async def send(to: str) -> str:
        await asyncio.sleep(0)
        return "sent"

    async def main():
        async with op.run(inputs={"to": "alice@example.com"}):
            assert await send(to="alice@example.com") == "sent"
            with pytest.raises(op.ProvenanceError):
                await send(to="mallory@example.com")

    asyncio.run(main())
    assert arg_attrs(traced.span("send", 0), "to")["kind"] == "observed"
    assert traced.span("send", 1).attributes["agent.tool.status"] == "blocked"


def test_generator_tool_span_covers_iteration_and_items_are_remembered(traced):
    @op.tool(side_effect="read", tracer_provider=traced.provider)
    def walk(root: str):
        for name in ("alpha.txt", "beta.txt"):
            yield {"name": name}

    @op.tool(side_effect="write", tracer_provider=traced.provider)
    def delete(path: str) -> None:
        return None

    with op.run(inputs={"root": "data"}):
        gen = walk("data")
        assert traced.spans == ()  # nothing happens before iteration starts
        names = [item["name"] for item in gen]
        delete(path="beta.txt")
    assert names == ["alpha.txt", "beta.txt"]
    walk_span = traced.span("walk")
    assert walk_span.attributes["agent.tool.status"] == "ok"
    path = arg_attrs(traced.span("delete"), "path")
    assert (path["kind"], path["source_tool"], path["source_field"]) == ("observed", "walk", "1.name")
    assert path["source_span_id"] == format(walk_span.context.span_id, "016x")


def test_generator_tool_nested_spans_are_children_and_early_close_ends_span(traced):
    @op.tool(tracer_provider=traced.provider)
    def inner(n: int) -> int:
        return n

    @op.tool(tracer_provider=traced.provider)
    def numbers(limit: int):
        for i in range(limit):
            yield inner(i)

    gen = numbers(10)
    assert next(gen) == 0
    assert next(gen) == 1
    gen.close()
    outer = traced.span("numbers")
    assert outer.end_time is not None
    for child in [s for s in traced.spans if s.name == "execute_tool inner"]:
        assert child.parent.span_id == outer.context.span_id


def test_blocked_generator_raises_at_call_and_body_never_starts(traced):
    started = []

    @op.tool(side_effect="write", tracer_provider=traced.provider)
    def stream_writes(target: str):
        started.append(target)
        yield 1

    with op.run(), pytest.raises(op.ProvenanceError):
        stream_writes("guessed-target")
    assert started == []
    assert traced.span("stream_writes").attributes["agent.tool.status"] == "blocked"


def test_async_generator_tool(traced):
    @op.tool(side_effect="read", tracer_provider=traced.provider)
    async def pages(query: str):
        for i in range(3):
            await asyncio.sleep(0)
            yield {"id": f"ticket-{i:04d}"}

    @op.tool(side_effect="write", tracer_provider=traced.provider)
    async def close_ticket(ticket_id: str) -> bool:
        return True

    async def main():
        async with op.run(inputs={"query": "open bugs"}):
            ids = [page["id"] async for page in pages("open bugs")]
            await close_ticket(ticket_id=ids[2])
            with pytest.raises(op.ProvenanceError):
                await close_ticket(ticket_id="ticket-9999")
        return ids

    assert asyncio.run(main()) == ["ticket-0000", "ticket-0001", "ticket-0002"]
    assert traced.span("pages").attributes["agent.tool.status"] == "ok"
    ticket = arg_attrs(traced.span("close_ticket", 0), "ticket_id")
    assert (ticket["kind"], ticket["source_field"]) == ("observed", "2.id")


def test_generator_error_is_recorded_by_type(traced):
    @op.tool(tracer_provider=traced.provider)
    def failing():
        yield 1
        raise LookupError("secret-in-message-7781")

    with pytest.raises(LookupError):
        list(failing())
    span = traced.span("failing")
    assert span.attributes["agent.tool.status"] == "error"
    assert span.attributes["error.type"] == "LookupError"
    assert span.status.description == "LookupError"


def test_methods_classmethods_staticmethods(traced):
    class Repo:
        prefix = "repo"

        def __init__(self) -> None:
            self.writes: list[str] = []

        @op.tool(side_effect="read", tracer_provider=traced.provider)
        def ls(self, folder: str) -> list[str]:
            return [f"{folder}/main.py"]

        @op.tool(side_effect="write", tracer_provider=traced.provider)
        def write(self, path: str) -> None:
            self.writes.append(path)

        @classmethod
        @op.tool(name="repo_kind", tracer_provider=traced.provider)
        def kind(cls, label: str) -> str:
            return f"{cls.prefix}:{label}"

        @op.tool(tracer_provider=traced.provider)
        @staticmethod
        def helper(value: str) -> str:
            return value.upper()

    repo = Repo()
    with op.run(inputs={"folder": "pkg"}):
        paths = repo.ls("pkg")
        repo.write(paths[0])
        assert Repo.kind("label") == "repo:label"
        assert repo.helper("abc") == "ABC"
        assert Repo.helper("abc") == "ABC"
    assert repo.writes == ["pkg/main.py"]
    ls_span = traced.span("ls")
    assert set(k for k in ls_span.attributes if k.startswith("agent.arg.") and k.endswith(".kind")) == {
        "agent.arg.folder.kind"
    }  # self is not an argument
    assert arg_attrs(traced.span("write"), "path")["kind"] == "observed"
    assert arg_attrs(traced.span("repo_kind"), "label")["kind"] == "assumed"
    assert len([s for s in traced.spans if s.name == "execute_tool helper"]) == 2


def test_decorator_without_parentheses_and_name_override(traced):
    @op.tool
    def bare(x: str) -> str:
        return x

    @op.tool(name="renamed", tracer_provider=traced.provider)
    def original(x: str) -> str:
        return x

    assert bare("value") == "value"  # global (no-op) provider: the call still works
    assert original("value") == "value"
    assert bare.__name__ == "bare"
    assert traced.span("renamed").attributes["gen_ai.tool.name"] == "renamed"


def test_defaults_are_not_classified_and_varargs_are_named(traced):
    @op.tool(tracer_provider=traced.provider)
    def search(query: str, limit: int = 10, *extra: str, **options: str) -> None:
        return None

    search("needle", 10, "x1", "x2", mode="fast")
    search("needle")
    first, second = traced.span("search", 0), traced.span("search", 1)
    kinds = {k for k in first.attributes if k.endswith(".kind")}
    assert kinds == {f"agent.arg.{n}.kind" for n in ("query", "limit", "extra.0", "extra.1", "mode")}
    assert {k for k in second.attributes if k.endswith(".kind")} == {"agent.arg.query.kind"}


def test_body_exception_recorded_by_type_only(traced):
    @op.tool(tracer_provider=traced.provider)
    def explode(token: str) -> None:
        raise ValueError(f"bad token {token}")

    with pytest.raises(ValueError, match="bad token"):
        explode("tok-123456")
    span = traced.span("explode")
    assert span.status.status_code is StatusCode.ERROR
    assert span.status.description == "ValueError"
    assert span.attributes["error.type"] == "ValueError"
    assert span.attributes["agent.tool.status"] == "error"
    (event,) = span.events
    assert event.name == "exception"
    assert dict(event.attributes) == {"exception.type": "ValueError"}


def test_write_tool_outside_a_run_fails_closed(traced):
    effects: list[str] = []
    _, patch_file = make_tools(traced, effects)
    with pytest.raises(op.ProvenanceError):
        patch_file(path="app.py", comment="no run, nothing observed")
    assert effects == []
    assert "agent.run.id" not in traced.span("patch_file").attributes


def test_two_hundred_arguments_keep_essential_attributes(traced):
    names = [f"a{i:03d}" for i in range(200)]
    namespace: dict = {}
    exec(f"def wide({', '.join(n + ': str' for n in names)}):\n    return None", namespace)
    wide = op.tool(namespace["wide"], tracer_provider=traced.provider)
    with op.run():
        wide(*[f"value-{i}" for i in range(200)])
    attrs = traced.span("wide").attributes
    assert len(attrs) <= 128
    for key in (
        "gen_ai.operation.name",
        "gen_ai.tool.name",
        "agent.tool.status",
        "agent.budget.assumed",
        "agent.tool.call.id",
        "agent.retry.number",
        "agent.digest.key_id",
    ):
        assert key in attrs, key
    assert attrs["gen_ai.operation.name"] == "execute_tool"
    assert attrs["gen_ai.tool.name"] == "wide"
    assert attrs["agent.budget.assumed"] == 200  # counted in full even though not every kind fits


def test_essentials_survive_attributes_added_by_the_body():
    t = Traced(span_limits=SpanLimits(max_span_attributes=40))

    @op.tool(tracer_provider=t.provider)
    def noisy(a: str, b: str) -> None:
        from opentelemetry import trace

        span = trace.get_current_span()
        for i in range(60):
            span.set_attribute(f"user.attr.{i}", i)

    noisy("first-value", "second-value")
    attrs = t.span("noisy").attributes
    assert attrs["gen_ai.operation.name"] == "execute_tool"
    assert attrs["gen_ai.tool.name"] == "noisy"
    assert attrs["agent.tool.status"] == "ok"


def test_provenance_fault_blocks_write_tools_and_is_recorded_on_others(traced, monkeypatch):
    effects: list[str] = []
    list_files, patch_file = make_tools(traced, effects)
    monkeypatch.setenv(ENV_DIGEST_KEY, "short")  # invalid: the machinery cannot digest anything
    reset_settings()
    try:
        with pytest.raises(op.ConfigurationError, match=ENV_DIGEST_KEY):
            op.run()  # a run refuses to start on bad configuration, loudly
        assert list_files("x")["files"]  # read tool runs
        with pytest.raises(op.ProvenanceError):
            patch_file(path="app.py", comment="c")
    finally:
        monkeypatch.delenv(ENV_DIGEST_KEY)
        reset_settings()
    assert effects == []
    read_span, write_span = traced.span("list_files"), traced.span("patch_file")
    assert tuple(read_span.attributes["agent.violations"]) == ("provenance_fault:ConfigurationError",)
    assert read_span.attributes["agent.tool.status"] == "ok"
    assert write_span.attributes["agent.tool.status"] == "blocked"


def test_bad_decorator_arguments_are_named():
    with pytest.raises(op.ConfigurationError, match="side_effect"):
        op.tool(side_effect="delete", name="remover")  # a named tool is checked before the def
    with pytest.raises(op.ConfigurationError, match="invented"):
        op.tool(invented="filename")(lambda filename: None)
    with pytest.raises(op.ConfigurationError, match=r"Budget\.allow"):
        op.Budget(allow="comment")
    with pytest.raises(op.ConfigurationError, match="max_assumed"):
        op.Budget(max_assumed=-1)
    with pytest.raises(op.ConfigurationError, match="inputs"):
        op.run(inputs=["root"])


def test_method_called_through_the_class_does_not_classify_self(traced):
    class Repo:
        @op.tool(tracer_provider=traced.provider)
        def ls(self, folder: str) -> list[str]:
            return [folder]

    repo = Repo()
    for _ in range(3):
        assert Repo.ls(repo, "pkg") == ["pkg"]
    kinds = {k for s in traced.spans for k in s.attributes if k.endswith(".kind")}
    assert kinds == {"agent.arg.folder.kind"}


def test_decorated_tools_keep_their_introspection():
    import inspect

    @op.tool
    async def fetch(url: str) -> str:
        return url

    @op.tool
    def rows(table: str):
        yield table

    @op.tool
    async def pages(query: str):
        yield query

    assert inspect.iscoroutinefunction(fetch)
    assert inspect.isgeneratorfunction(rows)
    assert inspect.isasyncgenfunction(pages)
    assert list(inspect.signature(fetch).parameters) == ["url"]
    assert fetch.__name__ == "fetch"


# -- mistakes caught where they are made: at decoration, naming the function and the bad name --------


def test_side_effect_typo_names_the_function_and_echoes_the_value():
    with pytest.raises(op.ConfigurationError) as caught:

        @op.tool(side_effect="writes")
        def patch_file(path: str) -> None: ...

    assert str(caught.value) == (
        "op.tool(patch_file): side_effect='writes' is not one of 'none', 'read', 'write'"
    )


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (
            {"idempotency_key": "request_id"},
            "op.tool(refund): idempotency_key names 'request_id', which is not a parameter of refund "
            "(parameters: amount, order_id)",
        ),
        (
            {"invented": {"filename", "amount"}},
            "op.tool(refund): invented names 'filename', which is not a parameter of refund "
            "(parameters: amount, order_id)",
        ),
        (
            {"budget": op.Budget(max_assumed=0, allow={"comment"})},
            "op.tool(refund): budget allow names 'comment', which is not a parameter of refund "
            "(parameters: amount, order_id)",
        ),
    ],
)
def test_option_naming_no_parameter_is_an_error_at_decoration(options, message):
    with pytest.raises(op.ConfigurationError) as caught:

        @op.tool(side_effect="write", **options)
        def refund(order_id: str, amount: int) -> None: ...

    assert str(caught.value) == message


def test_option_names_that_do_match_are_accepted():
    @op.tool(side_effect="write", idempotency_key="key", invented={"name"}, budget=op.Budget(allow={"note"}))
    def create(name: str, note: str, key: str) -> None: ...

    @op.tool(invented={"anything"})  # **kwargs accepts any name
    def flexible(**fields: str) -> None: ...

    @op.tool(invented={"parts.0"})  # *parts is classified as parts.0, parts.1, ...
    def joined(*parts: str) -> None: ...

    @op.tool(side_effect="write")  # the default allow list is generic: not checked
    def plain(target: str) -> None: ...

    with pytest.raises(op.ConfigurationError, match=r"'parts\.x', which is not a parameter"):
        op.tool(invented={"parts.x"})(joined.__wrapped__)


def test_a_write_tool_outside_any_run_says_how_to_open_one(traced):
    ran = []

    @op.tool(side_effect="write", tracer_provider=traced.provider)
    def delete_branch(branch: str) -> None:
        ran.append(branch)

    with pytest.raises(op.ProvenanceError) as caught:
        delete_branch(branch="main")
    assert ran == []  # still blocked
    assert str(caught.value) == (
        "delete_branch: blocked by provenance budget (max_assumed:branch=assumed): no op.run is active, "
        "so no argument can have been observed; call tools inside `with op.run(inputs={...}):` "
        "(or `async with`), declaring the task's inputs there"
    )
    with op.run(inputs={"branch": "main"}):
        delete_branch(branch="main")
    assert ran == ["main"]


def test_sync_tool_span_is_current_in_the_body_and_nested_tools_are_its_children():
    from opentelemetry import trace

    t = Traced()
    inside = []

    @op.tool(tracer_provider=t.provider)
    def inner(n: int) -> int:
        return n

    @op.tool(tracer_provider=t.provider)
    def outer(n: int) -> int:
        inside.append(trace.get_current_span().get_span_context().span_id)
        return inner(n)

    assert outer(3) == 3
    outer_span, inner_span = t.span("outer"), t.span("inner")
    assert inside == [outer_span.context.span_id]
    assert inner_span.parent is not None and inner_span.parent.span_id == outer_span.context.span_id


def test_a_tool_method_names_its_arguments_however_it_is_called():
    """Bound, through the class (wrapt hands over a partial), by keyword, and a tool function later
    bound as a method: ``self`` is never an argument of a bound call, and is one of a plain call."""
    t = Traced()

    class Files:
        @op.tool(tracer_provider=t.provider)
        def read(self, folder: str) -> str:
            return folder

    @op.tool(tracer_provider=t.provider)
    def listing(self, folder: str) -> str:
        return folder

    class Listings:
        ls = listing

    files = Files()
    files.read("/srv/a")
    Files.read(files, "/srv/b")
    Files.read(files, folder="/srv/c")
    listing(files, "/srv/d")
    Listings().ls("/srv/e")
    listing(files, "/srv/f")

    def kinds(span: ReadableSpan) -> set[str]:
        return {k for k in span.attributes if k.endswith(".kind")}

    assert [kinds(t.span("read", i)) for i in range(3)] == [{"agent.arg.folder.kind"}] * 3
    assert [kinds(t.span("listing", i)) for i in range(3)] == [
        {"agent.arg.self.kind", "agent.arg.folder.kind"},
        {"agent.arg.folder.kind"},
        {"agent.arg.self.kind", "agent.arg.folder.kind"},
    ]


def test_calling_a_tool_method_through_its_class_does_not_keep_the_instance_alive():
    import gc
    import weakref

    t = Traced()

    class Session:
        @op.tool(tracer_provider=t.provider)
        def fetch(self, key: str) -> str:
            return key

    through_class, through_instance = Session(), Session()
    Session.fetch(through_class, "k-1")
    through_instance.fetch("k-2")
    alive = [weakref.ref(through_class), weakref.ref(through_instance)]
    del through_class, through_instance
    gc.collect()
    assert [ref() for ref in alive] == [None, None]


def test_the_data_domain_is_on_every_span_of_the_tool():
    t = Traced()

    @op.tool(data_domain="billing", tracer_provider=t.provider)
    def invoice(number: str) -> str:
        return number

    invoice("INV-1")
    invoice("INV-2")
    assert [t.span("invoice", i).attributes["agent.data_domain"] for i in range(2)] == ["billing"] * 2


def test_options_given_positionally_are_refused_saying_how_to_pass_them():
    with pytest.raises(op.ConfigurationError) as caught:
        op.tool("refund")
    assert str(caught.value) == "op.tool: expected a function; use op.tool(...) with keyword arguments"


def test_a_bad_option_name_is_reported_against_the_function_its_tool_name_and_its_parameters():
    with pytest.raises(op.ConfigurationError) as caught:

        @op.tool(name="refund_tool", invented={"note"})
        def refund(order_id: str) -> None: ...

    assert str(caught.value) == (
        "op.tool(refund_tool): invented names 'note', which is not a parameter of refund "
        "(parameters: order_id)"
    )
    with pytest.raises(op.ConfigurationError) as caught:

        @op.tool(invented={"note"})
        def ping() -> None: ...

    assert str(caught.value) == (
        "op.tool(ping): invented names 'note', which is not a parameter of ping (parameters: none)"
    )

    class Lookup:  # a callable object has no __name__: the tool's name stands for it
        def __call__(self, key: str) -> str:
            return key

    with pytest.raises(op.ConfigurationError) as caught:
        op.tool(name="lookup", invented={"note"})(Lookup())
    assert str(caught.value) == (
        "op.tool(lookup): invented names 'note', which is not a parameter of lookup (parameters: key)"
    )


def test_arguments_are_named_for_any_callable_a_tool_wraps():
    """A keyword-only parameter left at its default, a callable object, a builtin with no signature
    (positional arguments by position), and ``**kwargs`` whose keys are not names (by position: a key
    chosen by the caller may be content, and attribute names are exported)."""
    t = Traced()

    @op.tool(tracer_provider=t.provider)
    def remove(path: str, *, force: bool = False) -> str:
        return path

    class Lookup:
        def __call__(self, key: str) -> str:
            return key

    @op.tool(tracer_provider=t.provider)
    def tag(**labels: str) -> None: ...

    lookup = op.tool(name="lookup", tracer_provider=t.provider)(Lookup())
    largest = op.tool(name="largest", tracer_provider=t.provider)(max)
    remove("/srv/tmp/old.log")
    assert lookup("customer-42") == "customer-42"
    assert largest(3, -7, key=abs) == -7
    tag(**{"team": "billing", "ann@example.com": "owner"})

    def names(tool: str) -> set[str]:
        return {
            k.split(".kind")[0].removeprefix("agent.arg.")
            for k in t.span(tool).attributes
            if k.endswith(".kind")
        }

    assert names("remove") == {"path"}
    assert names("lookup") == {"key"}
    assert names("largest") == {"args.0", "args.1", "key"}
    assert names("tag") == {"team", "labels.1"}
    assert not any("example.com" in key for key in t.span("tag").attributes)


def test_a_call_that_does_not_fit_the_signature_still_names_what_it_can_and_the_body_raises():
    """The same name given twice, or a keyword the function does not take: the body's TypeError is
    the caller's answer, and the span names positional arguments by position and keywords by name
    (by position under ``kwargs`` when the key is not a name)."""
    t = Traced()

    @op.tool(tracer_provider=t.provider)
    def rename(path: str) -> str:
        return path

    with pytest.raises(TypeError):
        rename("/srv/a", path="/srv/b")  # type: ignore[misc]
    with pytest.raises(TypeError):
        rename("/srv/a", **{"to": "/srv/c", "not a name": "/srv/d"})  # type: ignore[call-arg]

    def names(index: int) -> set[str]:
        span = t.span("rename", index)
        return {
            k.removeprefix("agent.arg.").removesuffix(".kind") for k in span.attributes if k.endswith(".kind")
        }

    assert names(0) == {"args.0", "path"}
    assert names(1) == {"args.0", "to", "kwargs.1"}


def test_a_blocked_call_outside_a_run_lists_every_violation(traced):
    @op.tool(side_effect="write", tracer_provider=traced.provider)
    def move(source: str, target: str) -> None: ...

    with pytest.raises(op.ProvenanceError) as caught:
        move(source="/srv/a", target="/srv/b")
    assert str(caught.value).startswith(
        "move: blocked by provenance budget (max_assumed:source=assumed, max_assumed:target=assumed): "
        "no op.run is active"
    )


def test_essentials_survive_attributes_added_by_a_body_that_then_fails():
    t = Traced(span_limits=SpanLimits(max_span_attributes=40))

    @op.tool(tracer_provider=t.provider)
    def noisy(a: str) -> None:
        from opentelemetry import trace

        span = trace.get_current_span()
        for i in range(60):
            span.set_attribute(f"user.attr.{i}", i)
        raise KeyError(a)

    with pytest.raises(KeyError):
        noisy("first-value")
    attrs = t.span("noisy").attributes
    assert (attrs["gen_ai.tool.name"], attrs["agent.tool.status"], attrs["error.type"]) == (
        "noisy",
        "error",
        "KeyError",
    )


def test_a_source_whose_span_was_not_recorded_is_named_without_a_span_id():
    """A tool traced by a provider that records nothing (the API's no-op) still feeds the run's
    ledger; a later recorded call names its tool and field, and no all-zero span id."""
    from opentelemetry.trace import NoOpTracerProvider

    t = Traced()

    @op.tool(side_effect="read", tracer_provider=NoOpTracerProvider())
    def lookup() -> dict:
        return {"ticket": "TICKET-000123"}

    @op.tool(side_effect="read", tracer_provider=t.provider)
    def close(ticket: str) -> None: ...

    with op.run():
        lookup()
        close("TICKET-000123")
    attrs = arg_attrs(t.span("close"), "ticket")
    assert (attrs["kind"], attrs["source_tool"]) == ("observed", "lookup")
    assert "source_span_id" not in attrs


def test_a_block_the_short_value_floor_decided_says_so_and_never_the_value(traced):
    """#37: a value the run did see, shorter than the floor and not found under the argument's own
    name, is assumed — and the violation says the floor decided it (no value)."""

    @op.tool(name="refund", side_effect="write", tracer_provider=traced.provider)
    def refund(order_id: str, amount: int) -> None:
        raise AssertionError("a blocked call never runs")

    with op.run(inputs={"order": {"order_id": "ORD-7701", "total": 120}}):
        with pytest.raises(op.ProvenanceError) as seen_but_short:
            refund(order_id="ORD-7701", amount=120)
        with pytest.raises(op.ProvenanceError) as never_seen:
            refund(order_id="ORD-7701", amount=987)
    assert seen_but_short.value.violations == ("max_assumed:amount=assumed:short_value",)
    assert never_seen.value.violations == ("max_assumed:amount=assumed",)
    assert "120" not in str(seen_but_short.value)


def test_a_bare_tool_says_once_at_decoration_that_it_never_blocks(caplog):
    """#37: a bare ``@op.tool`` tags and never blocks — it says so where it is written (INFO)."""
    with caplog.at_level("INFO", logger="otel_provenance"):

        @op.tool
        def lookup(order_id: str) -> dict:
            return {}

        @op.tool(side_effect="write")
        def refund(order_id: str) -> None:
            return None

    notes = [r.getMessage() for r in caplog.records if "never blocked" in r.getMessage()]
    assert notes == [
        "op.tool(lookup): no side effect and no budget declared: its arguments are tagged, never "
        "blocked (side_effect='write', or budget=op.Budget(enforce=True), blocks)"
    ]
