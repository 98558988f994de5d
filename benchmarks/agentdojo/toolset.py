"""AgentDojo's tools as a real integration would expose them to ``@op.tool``.

An AgentDojo tool takes environment objects (``Annotated[Inbox, Depends("inbox")]``) beside the
arguments the model chooses. The model never chose the environment, so it must not be classified:
for each tool a function is made whose signature (``__signature__``, which ``@op.tool`` reads like
any signature) is only the model's parameters, with their defaults, and whose body does what
AgentDojo's ``FunctionsRuntime.run_function`` does — validate the arguments against the tool's
input schema, add the environment's dependencies, call the tool — and returns the tool's raw value
(pydantic models, lists, strings), so the run's ledger remembers it as it would in an application.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import otel_provenance as op

from .integration import Declarations


class CurrentRun:
    """The environment the current run acts on (one per run; the tools are made once per suite)."""

    __slots__ = ("bodies_run", "environment")

    def __init__(self) -> None:
        self.environment: Any = None
        self.bodies_run = 0  # how many tool bodies ran: a blocked call must not add one


def model_facing(function: Any, current: CurrentRun) -> Callable[..., Any]:
    """``function`` (an AgentDojo ``Function``) as a plain function of the model's arguments only."""
    original = inspect.signature(function.run)
    parameters = [p for name, p in original.parameters.items() if name not in function.dependencies]
    names = [p.name for p in parameters]

    def call(*args: Any, **kwargs: Any) -> Any:
        current.bodies_run += 1
        passed = dict(zip(names, args, strict=False)) | kwargs
        arguments = function.parameters.model_validate(passed).model_dump()
        environment = current.environment
        dependencies = {
            name: dependency.extract_dep_from_env(environment)
            for name, dependency in function.dependencies.items()
        }
        return function.run(**arguments, **dependencies)

    call.__signature__ = inspect.Signature(parameters)  # type: ignore[attr-defined]
    call.__name__ = call.__qualname__ = function.name
    call.__doc__ = function.description
    call.__module__ = getattr(function.run, "__module__", __name__)
    return call


def guarded_tools(
    functions: list[Any],
    declarations: Declarations,
    current: CurrentRun,
    tracer_provider: Any,
) -> dict[str, Callable[..., Any]]:
    """Each tool decorated with ``@op.tool(**its declared options)``; a tool left undeclared is an error
    (the integration must say what every tool does)."""
    missing = sorted(f.name for f in functions if f.name not in declarations)
    if missing:
        raise ValueError(f"integration: no declaration for tool(s) {', '.join(missing)}")
    return {
        f.name: op.tool(tracer_provider=tracer_provider, **declarations[f.name])(model_facing(f, current))
        for f in functions
    }


def runtime_tools(functions: list[Any], current: CurrentRun) -> dict[str, Callable[..., Any]]:
    """The same tools run by AgentDojo's own ``FunctionsRuntime``, with no ``@op.tool``: the
    reference the wrapped tools must match, and the ceiling of what the replay can do unguarded."""
    from agentdojo.functions_runtime import FunctionsRuntime

    runtime = FunctionsRuntime(functions)

    def caller(name: str) -> Callable[..., Any]:
        def call(**kwargs: Any) -> Any:
            current.bodies_run += 1
            result, _ = runtime.run_function(current.environment, name, kwargs, raise_on_error=True)
            return result

        return call

    return {f.name: caller(f.name) for f in functions}


__all__ = ["CurrentRun", "guarded_tools", "model_facing", "runtime_tools"]
