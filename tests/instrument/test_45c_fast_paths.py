"""The fast paths of one ``@op.tool`` call (#45) answer as the general paths they skip.

- :func:`.delegation.destinations_returned` reads a flat ``dict`` of scalars in one pass
  (``_flat_texts``) instead of walking it, and remembers the destinations of short texts;
- :func:`.entries.echo_of` shares one :class:`.entries.Echo` between calls whose unsourced arguments
  are the same plain scalars, and an echo remembers its answers (what it withholds, and which of a
  mapping's keys it keeps: :func:`.remembering._unechoed`);
- :func:`.classify._below_the_floor` reads the lookups the classification's fast paths made of a
  plain ``str`` or ``int`` argument instead of looking its text up again.

Each is held equal to the general path twice: called directly on generated inputs, and through the
public API — the same calls in ``op.run`` with the fast paths on and then switched off, exporting the
same spans (attributes, events, status) and leaving the same ledger behind.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any
from unittest import mock

from hypothesis import given, settings
from hypothesis import strategies as st

import otel_provenance as op
from instrument_helpers import Traced
from otel_provenance import semconv as sc
from otel_provenance.instrument.evidence import classify, delegation, ledger, remembering
from otel_provenance.instrument.evidence.classify import Classification, classify_arguments
from otel_provenance.instrument.evidence.entries import TOO_BIG_TO_EXAMINE, Echo, echo_of
from otel_provenance.instrument.evidence.fieldpaths import echo_targets
from otel_provenance.instrument.evidence.ledger import Ledger

DESTINATIONS = (
    "eve@evil.example",
    "https://evil.example/login",
    "www.evil.example",
    "GB33BUKB20201555555555",
    "+49 30 901820-0",
    "12345678901",
    "see https://evil.example/x now",
)
texts = st.one_of(
    st.sampled_from(DESTINATIONS),
    st.text(alphabet="ab-Z09 ./@:_", max_size=14),
    st.text(max_size=6),
)
scalars = st.one_of(texts, st.integers(-(10**12), 10**12), st.booleans(), st.none())
names = st.text(alphabet="abcxyz_", min_size=1, max_size=6)
flat_dicts = st.dictionaries(st.one_of(names, texts), scalars, max_size=6)
others = st.one_of(
    st.floats(allow_nan=True),
    st.lists(scalars, max_size=3),
    st.dictionaries(names, scalars, max_size=2),
    st.binary(max_size=4),
)


@settings(max_examples=300)
@given(flat_dicts, st.integers(0, 8))
def test_a_flat_result_has_the_destinations_the_walk_finds(result: dict, limit: int) -> None:
    assert delegation.destinations_returned(result, limit) == delegation._walked_destinations(result, limit)
    assert delegation.destinations_returned(result, limit) == delegation._walked_destinations(result, limit)


@settings(max_examples=200)
@given(st.dictionaries(st.one_of(names, st.integers()), st.one_of(scalars, others), max_size=5))
def test_any_other_result_takes_the_walk(result: dict) -> None:
    flat = delegation._flat_texts(result)
    mixed = any(type(k) is not str for k in result) or any(
        v is not None and type(v) not in (str, int, bool) for v in result.values()
    )
    assert (flat is None) == mixed
    assert delegation.destinations_returned(result, 64) == delegation._walked_destinations(result, 64)


def _general_echo(unsourced: dict, limit: int) -> Any:
    """What the ledger made of a call's unsourced arguments before echoes were shared."""
    targets = echo_targets(unsourced, limit)
    if targets is None:
        return TOO_BIG_TO_EXAMINE
    return Echo(*targets) if targets[0] or targets[1] else None


@settings(max_examples=300)
@given(
    st.dictionaries(names, st.one_of(scalars, scalars, others), max_size=4),
    st.lists(texts, max_size=6),
    st.integers(0, 6),
)
def test_a_shared_echo_withholds_what_a_fresh_one_does(unsourced: dict, probes: list, limit: int) -> None:
    fresh = _general_echo(unsourced, limit)
    probes = [*probes, *(str(v) for v in unsourced.values()), *unsourced]
    for _ in range(2):  # the second time from the memo (and from the echo's remembered answers)
        shared = echo_of(unsourced, limit)
        if fresh is None or fresh is TOO_BIG_TO_EXAMINE:
            assert shared is fresh
            continue
        assert isinstance(shared, Echo)
        assert (shared.keys, shared.flags, shared.names) == (fresh.keys, fresh.flags, fresh.names)
        assert [shared.withholds(p) for p in probes] == [fresh.withholds(p) for p in probes]


def test_only_plain_scalars_share_an_echo() -> None:
    guesses = echo_of({"reason": "check the imports", "offset": 0}, 10)
    assert isinstance(guesses, Echo)
    assert echo_of({"reason": "check the imports", "offset": 0}, 10) is guesses  # by value
    assert echo_of({"offset": 1}, 10).keys != echo_of({"offset": True}, 10).keys  # 1 == True: not one echo
    assert echo_of({"items": ["a"]}, 10) is not echo_of({"items": ["a"]}, 10)  # a container: afresh
    assert echo_of({"items": ["a", "b"]}, 1) is TOO_BIG_TO_EXAMINE
    assert echo_of({"flag": None}, 10) is None  # withholds nothing
    assert echo_of({"n": 2**64}, 10) is not echo_of({"n": 2**64}, 10)  # a big int: afresh, not kept
    assert echo_of({"n": 2**62}, 10) is echo_of({"n": 2**62}, 10)


@contextlib.contextmanager
def _general_paths() -> Iterator[None]:
    with (
        mock.patch.object(delegation, "_flat_texts", lambda result: None),
        mock.patch.object(delegation, "MEMO_TEXT", -1),
        mock.patch.object(ledger, "echo_of", _general_echo),
    ):
        yield


_VOLATILE = frozenset({sc.TOOL_CALL_ID, sc.GEN_AI_TOOL_CALL_ID, sc.RUN_ID, sc.SECURITY_TARGET_ID})


def _scenario(arguments: dict, result: dict, asked: Any, probes: list) -> tuple[list, list]:
    """Spans (ids by position) and the run's lookups after ``fetch(**arguments)`` twice (returning
    ``result``), each probe passed to a read tool and to a write tool, in a run whose request holds
    ``asked``."""
    traced = Traced()

    @op.tool(side_effect="read", tracer_provider=traced.provider)
    def fetch(**values: Any) -> dict:
        return dict(result)

    @op.tool(side_effect="read", tracer_provider=traced.provider)
    def use(**values: Any) -> None:
        return None

    @op.tool(side_effect="write", tracer_provider=traced.provider)
    def send(**values: Any) -> None:
        return None

    lookups = []
    with op.run(inputs={"ask": asked}) as run:
        fetch(**arguments)
        fetch(**arguments)
        for name, value in probes:
            use(**{name: value})
            with contextlib.suppress(op.ProvenanceError):
                send(**{name: value})
            text = str(value)
            found = run.ledger.lookup(text)
            lookups.append(None if found is None else (found.observation.tool, found.observation.field))
    spans = traced.spans
    ids = {format(s.context.span_id, "016x"): i for i, s in enumerate(spans)}

    def plain(value: Any) -> Any:
        if isinstance(value, tuple):
            return tuple(plain(v) for v in value)
        return ids.get(value, value) if isinstance(value, str) else value

    exported = [
        (
            s.name,
            {k: plain(v) for k, v in s.attributes.items() if k not in _VOLATILE},
            [(e.name, dict(e.attributes or {})) for e in s.events],
            s.status.status_code,
            s.status.description,
        )
        for s in spans
    ]
    return exported, lookups


@settings(max_examples=60)
@given(
    st.dictionaries(names, scalars, max_size=3),
    flat_dicts,
    st.booleans(),
    st.lists(st.tuples(names, scalars), max_size=3),
)
def test_calls_export_and_remember_as_the_general_paths(
    arguments: dict, result: dict, directed: bool, extra: list
) -> None:
    # directed: an argument comes from the run's request, so what the call returns is a named source
    asked = next(iter(arguments.values()), None) if directed else None
    probes = [*((k, v) for k, v in result.items() if type(k) is str and k.isidentifier()), *extra]
    probes += [("x", v) for v in result.values()] + [("x", k) for k in result]
    fast = _scenario(arguments, result, asked, probes)
    with _general_paths():
        general = _scenario(arguments, result, asked, probes)
    assert fast == general


@settings(max_examples=300)
@given(
    st.dictionaries(names, scalars, min_size=1, max_size=3),
    st.lists(st.dictionaries(st.one_of(names, texts, st.integers(0, 99)), st.none(), max_size=5), max_size=4),
)
def test_a_shared_echo_keeps_the_names_a_fresh_one_keeps(unsourced: dict, results: list) -> None:
    shared = echo_of(unsourced, 100)
    if not isinstance(shared, Echo):
        return
    for result in [*results, *results]:  # the second time from the shared echo's memo
        fresh = _general_echo(unsourced, 100)  # a new echo: worked out afresh
        kept = remembering._unechoed(result.keys(), shared)
        assert list(kept) == list(remembering._unechoed(result.keys(), fresh))


def _classified(classification: Classification) -> tuple:
    return (
        classification.arguments,
        classification.short,
        classification.destinations,
        classification.references,
        classification.delegated,
        classification.asked,
    )


@settings(max_examples=300)
@given(
    st.dictionaries(
        names, st.one_of(scalars, st.integers(0, 999), st.text(alphabet="ab1", max_size=3)), max_size=4
    ),
    st.dictionaries(
        names, st.one_of(scalars, st.integers(0, 999), st.text(alphabet="ab1", max_size=3)), max_size=4
    ),
    st.booleans(),
)
def test_the_floor_reads_the_classifications_own_lookups(seen: dict, arguments: dict, judged: bool) -> None:
    """A short argument the run did see: decided by the floor from the lookup its classification
    made, as when it was looked up again."""
    run = Ledger(1000)
    run.remember("listing", {**seen, "items": list(seen.values())}, "00000000000000aa")
    once = classify_arguments("t", arguments, run, judged=judged)
    plain = classify._below_the_floor
    with mock.patch.object(
        classify,
        "_below_the_floor",
        lambda results, named, ledger, floor, looked: plain(results, named, ledger, floor),
    ):
        again = classify_arguments("t", arguments, run, judged=judged)
    assert _classified(once) == _classified(again)


def test_names_that_compare_equal_are_not_kept_for_one_another() -> None:
    """``1 == True``: a result keyed ``True`` keeps its own name beside an echo of ``1``, not the
    names remembered for a result keyed ``1``."""
    shared = echo_of({"offset": 1}, 100)
    assert isinstance(shared, Echo)
    assert list(remembering._unechoed({1: None}.keys(), shared)) == []  # "1" echoes the argument
    assert list(remembering._unechoed({True: None}.keys(), shared)) == [True]  # a flag's name: kept


def test_the_floor_looks_again_when_two_names_read_alike() -> None:
    """``{"1": 5, 1: "ab"}`` both classify as ``1``: the floor reads ``arguments["1"]`` (5), so the
    lookup the fast path made of ``"ab"`` is not taken for it."""
    run = Ledger(1000)
    run.remember("listing", {"n": 5}, "00000000000000aa")
    named = {"1": 5, 1: "ab"}
    assert classify_arguments("t", named, run).short == frozenset({"1"})
