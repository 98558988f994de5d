"""Classify a call's arguments against a run's ledger: observed / assumed / invented / untrusted, and
span attributes.

This is the one place that decides an argument's kind; the ``@op.tool`` decorator and the span processor
for third-party GenAI tool spans both call :func:`classify_arguments`. It never raises for odd values
(any JSON-ish value, huge strings, cycles, exotic objects): a value that cannot be examined is
``assumed`` (fail closed) and listed in ``faults``.

Rules, in order: an argument declared ``invented`` is ``invented`` (never looked up, never silently
observed). A scalar is ``observed`` when the ledger matches it (exactly or through a named projection)
and either its text reaches the short-value floor or the observed field has the argument's own name
(``limit=5`` matches ``{"limit": 5}``, not any 5; ``event_id="7"`` matches ``{"id": "7"}``, projection
``id_alias``; a value found inside a longer text never matches by field name). Booleans and None are
never evidence by value alone. A dict/list/tuple/set/dataclass/pydantic-model argument is ``observed``
when every one of its leaves is (projection ``structure``; source fields are the first leaf's), each
leaf matched by its own field name (field by field), and so is every mapping key and every name of a
pydantic model's extra fields — observed as a value, or as a field name a result or the inputs used
(the body receives the keys: ``roles={"eve@evil.example": "admin"}``). A ``**kwargs`` key that is data
(named ``<name>.<position>``) is matched beside its value. A value the ledger found only in results of
tools declared untrusted is ``untrusted`` instead of ``observed`` (a structure, when any leaf is; its
source is then the first untrusted leaf's), and so is an unmatched text that carries, as a token, a
destination found only there (projection ``embedded``: ``"Verify at https://evil.example/login"``).
Everything else is ``assumed``. A value written in the run's request is evidence at any length.

An ``assumed`` text argument whose whole value looks like a destination (an e-mail address, a URL, an
IBAN, a long account number: :func:`.textforms.looks_like_destination`) is listed in
``Classification.destinations``: the budget never exempts it as free text. An ``untrusted`` one that
is a single token and no destination (a reference copied from an invoice) is listed in
``Classification.references``: an allowed argument holding it is exempt (``budget_law.VETTED_REACH``).
"""

from __future__ import annotations

import decimal
import re
from collections.abc import Mapping
from typing import Any

from ... import semconv as sc
from ..base.settings import Settings, get_settings
from . import projections as pj
from .classification import ArgumentProvenance, Classification
from .delegation import delegation
from .digest import keyed_digest
from .fieldpaths import CallerName
from .ledger import LOCAL_CALL, Ledger, Match
from .matching import embedded, judge_scalar, match_flag, match_key, match_scalar
from .structures import TOO_BIG, digest_text, structure_walk
from .textforms import looks_like_destination

STRUCTURE = pj.STRUCTURE
MAX_STRUCTURE_LEAVES = 256
MAX_STRUCTURE_DEPTH = 16
_NONE_TEXT = "\x00null"
_TRUE_TEXT = "\x00true"
_FALSE_TEXT = "\x00false"
_ID_FIELDS = frozenset({"id", "id_"})
_WORDS = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+").findall


def classify_arguments(
    tool: str,
    arguments: Mapping[str, Any],
    ledger: Ledger | None,
    *,
    invented: frozenset[str] | set[str] = frozenset(),
    settings: Settings | None = None,
    judged: bool = True,
) -> Classification:
    """Classify ``arguments`` (name -> value, only those actually passed) against ``ledger``.

    ``ledger`` None means "no run": nothing is observed. Never raises for odd values. ``judged``:
    a budget counts these arguments (a write, an egress argument, an enforced budget) — only then are
    the guard's second chances sought for an unsourced one (the user's words at any length, a derived
    value, a delegated source: #44); a read that is only tagged is spared that work.
    """
    settings = settings or get_settings()
    key = settings.digest_key
    floor = settings.min_value_length
    results = []
    faults = []
    caller_named: list[str] = []
    looked: dict[str, tuple[str, int, bool]] = {}  # name -> (text, kind, found?) (the fast paths')
    for name, value in arguments.items():
        data_key = None
        if type(name) is not str and isinstance(name, CallerName):
            caller_named.append(str(name))
            data_key = name.key
        name = str(name)
        try:
            if data_key is not None:  # a ``**kwargs`` key that is data: the key is classified too
                results.append(_with_key(name, value, data_key, ledger, name in invented, key, floor, judged))
                continue
            if type(value) is str and name not in invented and len(value) <= pj.MAX_TEXT_LENGTH:
                # fast path for the most common argument: a plain string
                digest = keyed_digest(pj.normalise(value), key)
                match = _scalar(name, value, pj.TEXT, ledger, floor, judged, looked) or embedded(
                    value, ledger, floor
                )
                results.append(_provenance(name, digest, match, match.projection if match else None))
                continue
            if type(value) is int and name not in invented:
                # fast path for the next most common: a plain int (its text needs no normalising)
                text = int.__repr__(value)
                match = _scalar(name, text, pj.NUMBER, ledger, floor, judged, looked)
                results.append(
                    _provenance(name, keyed_digest(text, key), match, match.projection if match else None)
                )
                continue
            results.append(_classify_one(name, value, ledger, name in invented, key, floor, judged))
        except Exception as exc:  # an object that cannot be examined: unsourced, fail closed
            faults.append(f"{name}={type(exc).__name__}")
            results.append(ArgumentProvenance(name, sc.KIND_ASSUMED, keyed_digest(f"\x00fault:{name}", key)))
    destinations, references = _value_checks(results, arguments)
    short = _below_the_floor(results, arguments, ledger, floor, looked)
    delegated, asked = delegation(results, arguments, ledger) if judged else (_NONE, _NONE)
    return Classification(
        tool=tool,
        arguments=tuple(results),
        key_id=settings.key_id,
        ledger_full=bool(ledger is not None and ledger.full),
        faults=tuple(faults),
        destinations=destinations,
        references=references,
        short=short,
        caller_named=frozenset(caller_named) if caller_named else _NONE,
        delegated=delegated,
        asked=asked,
    )


_NONE: frozenset[str] = frozenset()
_NONE_LOOKED: Mapping[str, tuple[str, int, bool]] = {}


def _with_key(
    name: str,
    value: Any,
    data_key: Any,
    ledger: Ledger | None,
    is_invented: bool,
    key: bytes,
    floor: int,
    judged: bool = True,
) -> ArgumentProvenance:
    """A ``**kwargs`` argument whose key is data (``grant(**{"eve@evil.example": "admin"})``, named
    ``roles.0``): the body receives both, so it is sourced only when both are."""
    found = _classify_one(name, value, ledger, is_invented, key, floor, judged)
    if found.kind not in (sc.KIND_OBSERVED, sc.KIND_UNTRUSTED):
        return found
    match = match_key(data_key, ledger, floor, judged)
    if match is None:
        return ArgumentProvenance(name, sc.KIND_ASSUMED, found.digest)
    if found.kind == sc.KIND_OBSERVED and not match.trusted:
        return _provenance(name, found.digest, match, found.projection)
    return found


def _scalar(
    name: str,
    text: str,
    kind: int,
    ledger: Ledger | None,
    floor: int,
    judged: bool,
    looked: dict[str, tuple[str, int, bool]],
) -> Match | None:
    """:func:`.matching.match_scalar`, noting in ``looked`` whether the ledger found ``text`` as
    ``kind`` at all (for :func:`_below_the_floor`, which would look it up again)."""
    if ledger is None or not text:
        return None
    found = ledger.lookup(text, kind)
    looked[name] = (text, kind, found is not None)
    return judge_scalar(name, text, kind, found, ledger, floor, "", judged)


def _below_the_floor(
    results: list[ArgumentProvenance],
    arguments: Mapping[str, Any],
    ledger: Ledger | None,
    floor: int,
    looked: Mapping[str, tuple[str, int, bool]] = _NONE_LOOKED,
) -> frozenset[str]:
    """The assumed scalar arguments whose value the run did see, but which are shorter than the
    short-value floor and were not found under their own name: the floor decided them (a violation
    says so, ``…=assumed:short_value``; never the value). ``looked``: what the classification's
    own lookups found, by argument name: the same text as the same kind is not looked up again."""
    if ledger is None or floor <= 0:
        return _NONE
    short: set[str] = set()
    for argument in results:
        if argument.kind != sc.KIND_ASSUMED or argument.name not in arguments:
            continue
        found = pj.leaf_text(arguments[argument.name])
        if found is None or not 0 < len(found[0]) < floor:
            continue
        made = looked.get(argument.name)
        if made is not None and made[0] == found[0] and made[1] == found[1]:
            seen = made[2]
        else:
            seen = ledger.lookup(found[0], found[1]) is not None
        if seen:
            short.add(argument.name)
    return frozenset(short) if short else _NONE


def _value_checks(
    results: list[ArgumentProvenance], arguments: Mapping[str, Any]
) -> tuple[frozenset[str], frozenset[str]]:
    """What the budget reads of the values of unsourced text arguments: the assumed ones that are, as
    a whole, an e-mail address, a URL, an IBAN (never exempt as free text); the untrusted ones that
    are one token and no destination (a reference number: an allowed argument holding one may be
    exempt; an outsider's sentence or link may not)."""
    destinations: list[str] = []
    references: list[str] = []
    for a in results:
        if a.kind == sc.KIND_OBSERVED or a.kind == sc.KIND_INVENTED:
            continue
        value = arguments.get(a.name)
        if type(value) is not str:
            continue
        if a.kind == sc.KIND_ASSUMED:
            if looks_like_destination(value):
                destinations.append(a.name)
        elif len(value.split()) == 1 and not looks_like_destination(value):
            references.append(a.name)
    return (
        frozenset(destinations) if destinations else _NONE,
        frozenset(references) if references else _NONE,
    )


def _classify_one(
    name: str,
    value: Any,
    ledger: Ledger | None,
    is_invented: bool,
    key: bytes,
    floor: int,
    judged: bool = True,
) -> ArgumentProvenance:
    found = pj.leaf_text(value)
    if found is not None:
        text, kind = found
        digest = keyed_digest(pj.normalise(text) if len(text) <= pj.MAX_TEXT_LENGTH else text, key)
        if is_invented:
            return ArgumentProvenance(name, sc.KIND_INVENTED, digest)
        match = match_scalar(name, text, kind, ledger, floor, "", judged)
        if match is None and kind == pj.TEXT:
            match = embedded(text, ledger, floor)
        projection = match.projection if match else None
        if match is not None and isinstance(value, decimal.Decimal):  # a number a framework coerced
            projection = pj.combine(projection or pj.EXACT, pj.DECIMAL)
        return _provenance(name, digest, match, projection)
    leaves = structure_walk(value, name)
    digest = keyed_digest(digest_text(value, leaves), key)
    if is_invented:
        return ArgumentProvenance(name, sc.KIND_INVENTED, digest)
    if ledger is None or not leaves or leaves is TOO_BIG:
        if value is True or value is False:
            return _provenance(name, digest, match_flag(name, value, ledger), None)
        return ArgumentProvenance(name, sc.KIND_ASSUMED, digest)
    first: Match | None = None
    for leaf_name, leaf_value, container in leaves:
        if leaf_name is None:  # a mapping key: a value the body receives as much as the items
            match = match_key(leaf_value, ledger, floor, judged)
        elif (leaf := pj.leaf_text(leaf_value)) is None:
            match = match_flag(leaf_name, leaf_value, ledger)
        else:
            match = match_scalar(leaf_name, leaf[0], leaf[1], ledger, floor, container, judged)
        if match is None:
            return ArgumentProvenance(name, sc.KIND_ASSUMED, digest)
        if (
            first is None
            or (first.trusted and not match.trusted)
            or (not match.trusted and _directed(first, ledger) and not _directed(match, ledger))
        ):
            # the source recorded: the first leaf's, or the first untrusted leaf's — one the user did
            # not direct, when there is one (a structure is delegated only when all of it is)
            first = match
    return _provenance(name, digest, first, STRUCTURE)


def _directed(match: Match, ledger: Ledger) -> bool:
    span_id = match.observation.span_id  # the ledger's id of the call (a local one included)
    return bool(span_id) and ledger.directed(span_id)


def _provenance(name: str, digest: str, match: Match | None, projection: str | None) -> ArgumentProvenance:
    if match is None:
        return ArgumentProvenance(name, sc.KIND_ASSUMED, digest)
    obs = match.observation
    span_id = obs.span_id if obs.span_id and not obs.span_id.startswith(LOCAL_CALL) else None
    return ArgumentProvenance(
        name,
        sc.KIND_OBSERVED if match.trusted else sc.KIND_UNTRUSTED,
        digest,
        obs.tool,
        obs.field,
        span_id,
        projection,
        obs.span_id or None,
    )


__all__ = ["STRUCTURE", "ArgumentProvenance", "Classification", "classify_arguments"]
