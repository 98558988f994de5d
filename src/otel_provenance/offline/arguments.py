"""What a tool span says about its arguments' provenance, read once for every offline check.

``argument_kinds`` — the ``agent.arg.<name>.kind`` of each argument; ``lost_kinds`` — the counts the
span kept when some of those attributes were evicted. The audit, the contract rules and the miner all
read provenance through these two, so they agree on what a span's provenance is.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from operator import itemgetter
from typing import Any, Final

from .. import semconv
from .model import Span, attribute_map

_KIND_SUFFIX: Final = semconv.ARG_KIND_SUFFIX
_SHORTEST: Final = len(semconv.ARG_PREFIX) + len(_KIND_SUFFIX)  # a name of at least one character


def argument_kinds(span: Span) -> dict[str, str] | None:
    """``{argument name: kind}`` from the span's ``agent.arg.*.kind`` attributes (in the order of
    their keys); None when the span carries no provenance at all (no kind and no
    ``agent.budget.assumed`` counter) or a kind this package does not write (evidence that cannot be
    read is never read as a pass).

    Which keys are kinds depends only on the span's keys, and the spans of one tool carry the same
    keys run after run: so the keys are sorted out once per *layout* (the tuple of a span's keys, in
    arrival order; :func:`_layout`), and each span only reads its kinds' values."""
    case = argument_case(attribute_map(span.attributes))
    return None if case is None else dict(zip(*case, strict=True))


def argument_case(attributes: Mapping[str, Any]) -> tuple[tuple[str, ...], tuple[Any, ...]] | None:
    """:func:`argument_kinds` of a span's attribute mapping as (argument names, their kinds), two
    tuples, without building the dict: what a check that keeps its verdicts by case reads (the
    names tuple is shared by every span of one key layout)."""
    keys = tuple(attributes)
    layout = _LAYOUTS.get(keys)
    if layout is None:
        layout = _layout(keys)
    kind_keys, names, counted = layout
    if not kind_keys:
        return ((), ()) if counted else None
    values = tuple([attributes[key] for key in kind_keys])
    for value in values:
        if value not in _KINDS:
            return None
    return names, values


_Layout = tuple[tuple[str, ...], tuple[str, ...], bool]
_LAYOUTS: Final[dict[tuple[str, ...], _Layout]] = {}
_LAYOUTS_KEPT: Final = 4096  # layouts remembered (a bound: keys may vary span to span)
_KINDS: Final = semconv.ARG_KINDS


def _layout(keys: tuple[str, ...]) -> _Layout:
    """(the kind keys among ``keys``, sorted; the argument names they carry; whether ``keys`` holds the
    ``agent.budget.assumed`` counter), remembered for the next span with the same keys."""
    prefix = semconv.ARG_PREFIX
    # semconv.split_arg_attr tries ".kind" first: a key ending in it is a kind, whatever its name
    kind_keys = tuple(
        sorted(k for k in keys if len(k) > _SHORTEST and k.endswith(_KIND_SUFFIX) and k.startswith(prefix))
    )
    names = tuple(key[len(prefix) : -len(_KIND_SUFFIX)] for key in kind_keys)
    layout = (kind_keys, names, semconv.BUDGET_ASSUMED in keys)
    if len(_LAYOUTS) >= _LAYOUTS_KEPT:
        _LAYOUTS.clear()
    _LAYOUTS[keys] = layout
    return layout


def case_reader(keys: tuple[str, ...], more: tuple[str, ...]) -> Callable[[Mapping[str, Any]], tuple]:
    """For the spans whose attributes have ``keys`` (in this order): a function giving, as one tuple,
    the values of their kind keys (those :func:`argument_case` reads) and of the keys of ``more`` they
    hold — everything a verdict on the span's provenance reads besides ``keys`` — found in C. A new
    object each time: a caller may key what it decides by it, standing for ``keys``."""
    layout = _LAYOUTS.get(keys)
    kind_keys = (layout if layout is not None else _layout(keys))[0]
    read = kind_keys + tuple(key for key in more if key in keys)
    if not read:
        return lambda attributes: ()
    return itemgetter(*read) if len(read) > 1 else itemgetter(read[0], read[0])  # a tuple either way


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
