"""What a tool span says about its arguments' provenance, read once for every offline check.

``argument_kinds`` — the ``agent.arg.<name>.kind`` of each argument; ``lost_kinds`` — the counts the
span kept when some of those attributes were evicted. The audit, the contract rules and the miner all
read provenance through these two, so they agree on what a span's provenance is.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Final

from .. import semconv
from .model import Span

_KIND_SUFFIX: Final = semconv.ARG_KIND_SUFFIX
_SHORTEST: Final = len(semconv.ARG_PREFIX) + len(_KIND_SUFFIX)  # a name of at least one character


def argument_kinds(span: Span) -> dict[str, str] | None:
    """``{argument name: kind}`` from the span's ``agent.arg.*.kind`` attributes (in the order of
    their keys); None when the span carries no provenance at all (no kind and no
    ``agent.budget.assumed`` counter) or a kind this package does not write (evidence that cannot be
    read is never read as a pass)."""
    found: list[tuple[str, str]] = []
    prefix = semconv.ARG_PREFIX
    for key, value in span.attributes.items_unordered():
        # semconv.split_arg_attr tries ".kind" first: a key ending in it is a kind, whatever its name
        if len(key) > _SHORTEST and key.endswith(_KIND_SUFFIX) and key.startswith(prefix):
            if value not in semconv.ARG_KINDS:
                return None
            found.append((key, value))
    if not found and semconv.BUDGET_ASSUMED not in span.attributes:
        return None
    found.sort()
    return {key[len(prefix) : -len(_KIND_SUFFIX)]: value for key, value in found}


COUNTERS: Final = (
    (semconv.KIND_ASSUMED, semconv.BUDGET_ASSUMED),
    (semconv.KIND_INVENTED, semconv.BUDGET_INVENTED),
    (semconv.KIND_UNTRUSTED, semconv.BUDGET_UNTRUSTED),
)
"""Each counted kind and the span attribute that counts it (a trace from before ``untrusted`` existed
has no ``agent.budget.untrusted``: zero)."""


def lost_kinds(span: Span, kinds: Iterable[str]) -> dict[str, int] | None:
    """``{kind: count}`` as counted on the span (assumed, invented, untrusted) when that is more than
    its ``agent.arg.*.kind`` attributes name — they were lost (the SDK's attribute limit evicts the
    oldest keys) — else None.

    The online half counts assumed arguments outside the tool's allow-list, so with nothing lost the
    counter is never above the named assumed arguments."""
    named = Counter(kinds)
    counted = {kind: _count(span, key) for kind, key in COUNTERS}
    if any(counted[kind] > named[kind] for kind in counted):
        return counted
    return None


def _count(span: Span, key: str) -> int:
    value = span.attributes.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else 0
