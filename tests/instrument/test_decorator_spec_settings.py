"""@op.tool's options, checked at decoration with messages a user can act on, and how the tool's name,
call shape and argument names follow from the decorated function."""

from __future__ import annotations

import asyncio
import functools

import pytest
from opentelemetry import trace
from opentelemetry.trace import StatusCode

import otel_provenance as op
from instrument_helpers import Traced, arg_attrs


def refused(**options) -> str:
    """The message of the ConfigurationError that ``op.tool(**options)`` raises on a plain function."""

    def fetch(path: str) -> str:
        return path

    with pytest.raises(op.ConfigurationError) as caught:
        op.tool(**options)(fetch)
    return str(caught.value)


@pytest.mark.parametrize("name", ["", 5])
def test_a_tool_name_must_be_a_non_empty_string(name):
    """name="" or a non-string name is refused at decoration, saying what a name must be."""
    with pytest.raises(op.ConfigurationError) as caught:
        op.tool(name=name)
    assert str(caught.value) == "op.tool(name=...): expected a non-empty string"


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"data_domain": 5}, "op.tool(fetch): data_domain must be a string"),
        ({"budget": {"max_assumed": 0}}, "op.tool(fetch): budget must be an op.Budget"),
        ({"idempotency_key": 1}, "op.tool(fetch): idempotency_key must be an argument name"),
        ({"invented": "path"}, "op.tool(fetch): invented must be a collection of argument names"),
        ({"invented": ["path", 2]}, "op.tool(fetch): invented must be a collection of argument names"),
    ],
)
def test_an_option_of_the_wrong_type_is_refused_naming_the_tool_and_the_option(options, message):
    """Each mistyped option is refused with a message naming the tool and what the option takes,
    both when the tool is named up front (checked before ``def``) and when it takes the function's name."""
    with pytest.raises(op.ConfigurationError) as caught:
        op.tool(name="fetch", **options)
    assert str(caught.value) == message
    assert refused(**options) == message


def test_invented_none_means_no_invented_arguments():
    """``invented=None`` is accepted like the default: the tool works and no argument is invented."""
    traced = Traced()

    @op.tool(invented=None, tracer_provider=traced.provider)
    def rename(new_name: str) -> str:
        return new_name

    assert op.tool(name="rename", invented=None) is not None
    assert rename("fresh-name") == "fresh-name"
    assert arg_attrs(traced.span("rename"), "new_name")["kind"] == "assumed"


@pytest.mark.parametrize(
    "func",
    [
        functools.partial(lambda root, path: path, "/srv"),
        type("Lookup", (), {"__call__": lambda self, p: p})(),
    ],
    ids=["partial", "callable-object"],
)
def test_a_callable_without_a_name_must_be_given_one(func):
    """A callable without ``__name__`` (a partial, a callable object) is refused until named, then
    traced under the given name."""
    with pytest.raises(op.ConfigurationError) as caught:
        op.tool(func)
    assert str(caught.value) == "op.tool(name=...): expected a non-empty string"

    traced = Traced()
    lookup = op.tool(func, name="lookup", tracer_provider=traced.provider)
    assert lookup("a.txt") == "a.txt"
    assert traced.span("lookup").attributes["gen_ai.tool.name"] == "lookup"


def test_async_static_and_class_methods_keep_their_span_open_while_they_run():
    """@op.tool over ``@staticmethod``/``@classmethod`` on ``async def``: the span is current in the
    body and an error raised there is recorded on it, as for a plain async function."""
    traced = Traced()
    seen: list[int] = []

    class Store:
        @op.tool(tracer_provider=traced.provider)
        @staticmethod
        async def fetch(key: str) -> str:
            seen.append(trace.get_current_span().get_span_context().span_id)
            return key

        @op.tool(tracer_provider=traced.provider)
        @classmethod
        async def drop(cls, key: str) -> None:
            seen.append(trace.get_current_span().get_span_context().span_id)
            raise KeyError(key)

    assert asyncio.run(Store.fetch("k1")) == "k1"
    with pytest.raises(KeyError):
        asyncio.run(Store.drop("k2"))
    fetch, drop = traced.span("fetch"), traced.span("drop")
    assert seen == [fetch.context.span_id, drop.context.span_id]
    assert fetch.attributes["agent.tool.status"] == "ok"
    assert drop.attributes["agent.tool.status"] == "error"
    assert drop.attributes["error.type"] == "KeyError"
    assert drop.status.status_code is StatusCode.ERROR


def test_an_option_naming_no_parameter_of_a_classmethod_is_refused():
    """Option names are checked against the parameters of a classmethod's function as well."""
    with pytest.raises(
        op.ConfigurationError, match=r"invented names 'nme', which is not a parameter of rename"
    ):

        class Files:
            @op.tool(invented=("nme",))
            @classmethod
            def rename(cls, name: str) -> None:
                return None


def test_a_call_missing_an_argument_names_the_arguments_it_passed():
    """A call that cannot bind (a required argument missing) still names what it passed by parameter
    name, and the body's TypeError is recorded."""
    traced = Traced()

    @op.tool(tracer_provider=traced.provider)
    def move(source: str, target: str) -> None:
        return None

    with pytest.raises(TypeError):
        move("a.txt")
    span = traced.span("move")
    assert arg_attrs(span, "source")["kind"] == "assumed"
    assert not any(k.startswith("agent.arg.args.") for k in span.attributes)
    assert span.attributes["error.type"] == "TypeError"


def test_positional_only_parameters_are_named_by_their_own_names():
    """A positional-only parameter is named after itself, not after the parameter that follows it."""
    traced = Traced()

    @op.tool(tracer_provider=traced.provider)
    def read(path: str, /, mode: str = "r") -> str:
        return path

    with op.run(inputs={"path": "notes.txt"}):
        read("notes.txt")
        read("notes.txt", mode="rb")
    first, second = traced.span("read", 0), traced.span("read", 1)
    assert arg_attrs(first, "path")["kind"] == "observed"
    assert arg_attrs(first, "mode") == {}
    assert arg_attrs(second, "path")["kind"] == "observed"
    assert arg_attrs(second, "mode")["kind"] == "assumed"
