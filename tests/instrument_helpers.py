"""Shared helpers for tests/test_instrument_*.py: a real SDK provider with an in-memory exporter."""

from __future__ import annotations

import contextlib
import secrets
from collections.abc import Callable, Iterator
from typing import Any

from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanContext, TraceFlags

from otel_provenance.instrument.base import settings as settings_module


class Traced:
    """A TracerProvider whose finished spans are kept in memory."""

    def __init__(self, **provider_kwargs) -> None:
        self.exporter = InMemorySpanExporter()
        self.provider = TracerProvider(**provider_kwargs)
        self.provider.add_span_processor(SimpleSpanProcessor(self.exporter))

    @property
    def spans(self) -> tuple[ReadableSpan, ...]:
        return self.exporter.get_finished_spans()

    def span(self, tool: str, index: int = -1) -> ReadableSpan:
        matching = [s for s in self.spans if s.name == f"execute_tool {tool}"]
        assert matching, f"no span for {tool}; have {[s.name for s in self.spans]}"
        return matching[index]


@contextlib.contextmanager
def settings(**values) -> Iterator[settings_module.Settings]:
    """Install settings for the duration of a block, then go back to the environment's."""
    installed = settings_module.configure_settings(environ={}, **values)
    try:
        yield installed
    finally:
        settings_module.reset_settings()


def arg_attrs(span: ReadableSpan, name: str) -> dict[str, object]:
    prefix = f"agent.arg.{name}."
    return {k[len(prefix) :]: v for k, v in span.attributes.items() if k.startswith(prefix)}


def argument_attributes(traced: Traced) -> Callable[..., dict[str, dict[str, object]]]:
    """``attrs(name=value, ...)``: each value passed to a read tool ``use`` in turn, and the
    ``agent.arg.<name>.*`` attributes its span got (kind, source, projection, ...), by name."""
    import otel_provenance as op

    @op.tool(side_effect="read", tracer_provider=traced.provider)
    def use(**values: Any) -> None:
        return None

    def attrs(**values: Any) -> dict[str, dict[str, object]]:
        out = {}
        for name, value in values.items():
            use(**{name: value})
            out[name] = arg_attrs(traced.span("use"), name)
        return out

    return attrs


def fresh_canary() -> str:
    """A fresh value that must never reach exported bytes (fresh per call: mutmut forks warm
    processes, and a cached value would hide a mutant)."""
    return f"canary-{secrets.token_hex(8)}"


def span_context(*, remote: bool = False) -> SpanContext:
    """A sampled span context with fresh random ids."""
    return SpanContext(
        trace_id=secrets.randbits(128) | 1,
        span_id=secrets.randbits(64) | 1,
        is_remote=remote,
        trace_flags=TraceFlags(TraceFlags.SAMPLED),
    )


class Unreadable(dict):
    """An argument whose examination raises (a lazy mapping whose backend is gone)."""

    def items(self):
        raise RuntimeError("backend closed")

    def __iter__(self):
        raise RuntimeError("backend closed")
