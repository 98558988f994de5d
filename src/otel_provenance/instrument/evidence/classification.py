"""A call's classification: where each passed argument came from (:class:`ArgumentProvenance`) and
what the budget reads of them (:class:`Classification`), with the span attributes they become."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, NamedTuple

from ... import semconv as sc
from . import projections as pj

STRUCTURE = pj.STRUCTURE
MAX_STRUCTURE_LEAVES = 256
MAX_STRUCTURE_DEPTH = 16
_NONE_TEXT = "\x00null"
_TRUE_TEXT = "\x00true"
_FALSE_TEXT = "\x00false"
_ID_FIELDS = frozenset({"id", "id_"})
_WORDS = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+").findall


class ArgumentProvenance(NamedTuple):
    """Where one argument came from. ``digest`` is keyed; nothing here is a value."""

    name: str
    kind: str
    digest: str
    source_tool: str | None = None
    source_field: str | None = None
    source_span_id: str | None = None
    projection: str | None = None
    source_call: str | None = None  # the ledger's id of the source call (its span id, or a local one)


class Classification:
    """The provenance of every passed argument of one call (treat as immutable)."""

    __slots__ = (
        "arguments",
        "asked",
        "caller_named",
        "delegated",
        "destinations",
        "faults",
        "key_id",
        "ledger_full",
        "references",
        "short",
        "tool",
    )

    def __init__(
        self,
        tool: str,
        arguments: tuple[ArgumentProvenance, ...],
        key_id: str,
        ledger_full: bool = False,
        faults: tuple[str, ...] = (),
        destinations: frozenset[str] = frozenset(),
        references: frozenset[str] = frozenset(),
        short: frozenset[str] = frozenset(),
        caller_named: frozenset[str] = frozenset(),
        delegated: frozenset[str] = frozenset(),
        asked: frozenset[str] = frozenset(),
    ) -> None:
        self.tool = tool
        self.arguments = arguments
        self.key_id = key_id
        self.ledger_full = ledger_full
        self.faults = faults
        self.destinations = destinations  # assumed arguments whose value looks like a destination
        self.references = references  # untrusted arguments whose value is one token, no destination
        self.short = short  # assumed arguments the run did see, too short to count by value alone
        self.caller_named = caller_named  # names the caller chose (``**kwargs``): never default-allowed
        # untrusted arguments taken from a source the user named (#44, :mod:`.delegation`): accepted
        # (the user's words shaped this call) or to be asked of a person
        self.delegated = delegated
        self.asked = asked

    def __repr__(self) -> str:
        return f"Classification(tool={self.tool!r}, kinds={self.kinds()!r})"

    @property
    def assumed(self) -> int:
        return sum(1 for a in self.arguments if a.kind == sc.KIND_ASSUMED)

    @property
    def invented(self) -> int:
        return sum(1 for a in self.arguments if a.kind == sc.KIND_INVENTED)

    @property
    def untrusted(self) -> int:
        return sum(1 for a in self.arguments if a.kind == sc.KIND_UNTRUSTED)

    def kinds(self) -> dict[str, str]:
        return {a.name: a.kind for a in self.arguments}

    def unsourced(self, arguments: Mapping[str, Any]) -> dict[str, Any]:
        """The values of arguments that are not ``observed`` — assumed, invented or untrusted — for
        :meth:`Ledger.remember`'s echo rule: a trusted tool echoing an untrusted value does not make
        it trusted."""
        names = {a.name for a in self.arguments if a.kind != sc.KIND_OBSERVED}
        # keyed as passed: a ``**kwargs`` name keeps the caller's key it stands for (``CallerName``)
        return {name: value for name, value in arguments.items() if name in names}

    def signature(self) -> tuple[tuple[str, str], ...]:
        """Argument names and digests, order-free: equal for a retry of the same call."""
        return tuple(sorted((a.name, a.digest) for a in self.arguments))

    def attributes(self, max_attributes: int | None = None) -> dict[str, Any]:
        """``agent.arg.*`` attributes plus ``agent.digest.key_id`` (and ``agent.ledger.full``).

        With ``max_attributes``, the most important attributes are kept: the key id, then every
        argument's kind (unsourced ones first), then data-flow sources, then projections and digests.
        """
        out: dict[str, Any] = {sc.DIGEST_KEY_ID: self.key_id}
        if self.ledger_full:
            out[sc.LEDGER_FULL] = True
        arguments = self.arguments
        if max_attributes is None or len(out) + 6 * len(arguments) <= max_attributes:  # all fits
            for arg in arguments:
                kind_key, tool_key, field_key, span_key, projection_key, digest_key = _keys(arg.name)
                out[kind_key] = arg.kind
                if arg.source_tool is not None:
                    out[tool_key] = arg.source_tool
                    out[field_key] = arg.source_field
                    if arg.source_span_id:
                        out[span_key] = arg.source_span_id
                    out[projection_key] = arg.projection
                out[digest_key] = arg.digest
            return out
        layers: list[list[tuple[str, Any]]] = [[], [], [], []]
        for arg in sorted(arguments, key=lambda a: a.kind == sc.KIND_OBSERVED):
            kind_key, tool_key, field_key, span_key, projection_key, digest_key = _keys(arg.name)
            layers[0].append((kind_key, arg.kind))
            if arg.source_tool is not None:
                if arg.source_span_id:
                    layers[1].append((span_key, arg.source_span_id))
                layers[1].append((tool_key, arg.source_tool))
                layers[2].append((field_key, arg.source_field))
                layers[2].append((projection_key, arg.projection))
            layers[3].append((digest_key, arg.digest))
        limit = max(0, max_attributes)
        for layer in layers:
            for key, value in layer:
                if len(out) >= limit:
                    return out
                out[key] = value
        return out


_KEY_CACHE: dict[str, tuple[str, ...]] = {}
_SUFFIXES = (
    sc.ARG_KIND_SUFFIX,
    sc.ARG_SOURCE_TOOL_SUFFIX,
    sc.ARG_SOURCE_FIELD_SUFFIX,
    sc.ARG_SOURCE_SPAN_ID_SUFFIX,
    sc.ARG_PROJECTION_SUFFIX,
    sc.ARG_DIGEST_SUFFIX,
)


def _keys(name: str) -> tuple[str, ...]:
    """The six ``agent.arg.<name>.*`` keys (cached: argument names repeat call after call)."""
    keys = _KEY_CACHE.get(name)
    if keys is None:
        keys = tuple(sc.arg_attr(name, suffix) for suffix in _SUFFIXES)
        if len(_KEY_CACHE) < 4096:
            _KEY_CACHE[name] = keys
    return keys


__all__ = ["ArgumentProvenance", "Classification"]
