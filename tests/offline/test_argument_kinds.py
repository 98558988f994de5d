"""``argument_kinds`` reads a span's ``agent.arg.<name>.kind`` attributes by the layout of its keys
(sorted out once per tuple of keys, #46): spans that share a layout — or carry the same keys in another
order — must read exactly as a plain scan of every key reads them."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from otel_provenance import semconv
from otel_provenance.offline.arguments import argument_kinds
from otel_provenance.offline.model import Attributes, Span

KEYS = (
    "agent.arg.id.kind",
    "agent.arg.body.kind",
    "agent.arg.a.b.kind",  # a dotted name
    "agent.arg..kind",  # no name at all: not a kind
    "agent.arg.id.source_tool",
    "agent.args.kind",
    "x.agent.arg.id.kind",
    semconv.BUDGET_ASSUMED,
    semconv.TOOL_STATUS,
)
VALUES = st.sampled_from([*semconv.ARG_KINDS, "guessed", 0, 1, True, ("observed",)])


def scanned(attributes: dict) -> dict[str, str] | None:
    """Every key looked at in turn: the reading the layout must reproduce."""
    prefix, suffix = semconv.ARG_PREFIX, semconv.ARG_KIND_SUFFIX
    found = []
    for key, value in attributes.items():
        if len(key) > len(prefix) + len(suffix) and key.startswith(prefix) and key.endswith(suffix):
            if value not in semconv.ARG_KINDS:
                return None
            found.append((key, value))
    if not found and semconv.BUDGET_ASSUMED not in attributes:
        return None
    return {key[len(prefix) : -len(suffix)]: value for key, value in sorted(found)}


def span(attributes: dict) -> Span:
    return Span("0" * 32, "1" * 16, None, "tool", attributes=Attributes.adopt(dict(attributes)))


layouts = st.lists(st.sampled_from(KEYS), unique=True)


@given(
    keys=layouts,
    first=st.lists(VALUES, min_size=9, max_size=9),
    again=st.lists(VALUES, min_size=9, max_size=9),
)
def test_spans_of_one_layout_read_as_a_scan_of_their_keys(keys, first, again) -> None:
    for values in (first, again, first):  # the layout is remembered after the first span
        attributes = dict(zip(keys, values, strict=False))
        assert argument_kinds(span(attributes)) == scanned(attributes)
        reordered = dict(reversed(list(attributes.items())))  # another layout of the same keys
        assert argument_kinds(span(reordered)) == scanned(attributes)


def test_names_come_in_the_order_of_their_keys() -> None:
    kinds = argument_kinds(span({"agent.arg.z.kind": "observed", "agent.arg.a.kind": "assumed"}))
    assert list(kinds.items()) == [("a", "assumed"), ("z", "observed")]
