"""Delegation: what of a source the user named may feed a write, and what a person must see (#44).

"Pay the bill in bill.txt", "invite Dora — her address is on her web page", "create an event for the
reunion from the e-mails about it": the user tells the agent to act on what an outsider wrote. The
value the write needs is then found only there — ``untrusted`` — and refusing it refuses the task.
An injection looks the same from inside the source: the attacker's IBAN sits in the bill beside the
landlord's. What tells them apart is *what the user said*, so a delegated value is judged by it.

* **Delegated.** An ``untrusted`` argument whose source is the result of a call the user *directed*:
  one of that call's arguments came from the run's request or inputs (``read_file("bill.txt")``,
  ``get_webpage("www.dora-website.com")``, ``search_emails("family reunion")``), or was delegated in
  turn (:meth:`.ledger.Ledger.directed`). Anything else found only in outsiders' content stays
  untrusted: reading a source is not acting on it.
* **Anchored.** The call's other arguments show the user asked for *this* write: at least one of them
  is ``observed`` from the user's own words — the request or the inputs (``user="Dora"`` from "Invite
  Dora"; ``title="Family Reunion"``). Not from a result, however trusted: an attacker's write can copy
  a date from the transaction list as easily as the user's; it cannot put words in the request.
* **Unique.** A destination (an e-mail address, a URL, an IBAN, a long number) must be the only one
  of its form in what the call it was taken from returned: the bill holds one IBAN, Dora's page one
  address. An attacker who plants his own beside it makes two — and the choice a person's — in the
  same text, in another field of the page (its footer) or in another record of the result (a second
  e-mail the search found, #50).

A delegated argument that is anchored — and, for a destination, unique — is **accepted**: it counts
like an observed one (the span records it in ``agent.budget.delegated``). Any other delegated
argument is **asked**: the call waits for a person, shown the value beside its source
(``delegated:<name>``); only an approval lets it run. What is not delegated is judged as before.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from ... import semconv as sc
from ...budget_law import is_destination_name
from . import projections as pj
from .fieldpaths import MEMO_SIZE, MEMO_TEXT, children
from .structures import structure_leaves
from .textforms import destination_form, destination_text, destinations_in

if TYPE_CHECKING:
    from .classify import ArgumentProvenance
    from .ledger import Ledger

_NONE: frozenset[str] = frozenset()
#: More words than this, copied as they are into a call that sends to someone, are an outsider's
#: message relayed (a reply whose body is the attacker's paragraph), not a label (``Feedback scores``).
MESSAGE_WORDS = 3


def delegation(
    results: list[ArgumentProvenance], arguments: Mapping[str, Any], ledger: Ledger | None
) -> tuple[frozenset[str], frozenset[str]]:
    """``(accepted, asked)``: the call's delegated arguments, split as the module docstring says."""
    if ledger is None:
        return _NONE, _NONE
    delegated = [
        a for a in results if a.kind == sc.KIND_UNTRUSTED and a.source_call and ledger.directed(a.source_call)
    ]
    if not delegated:
        return _NONE, _NONE
    names = {a.name for a in delegated}
    anchored = any(_users(a, arguments.get(a.name), ledger) for a in results if a.name not in names)
    sends = any(is_destination_name(a.name) for a in results)
    accepted: list[str] = []
    asked: list[str] = []
    for a in delegated:
        texts = text_leaves(arguments.get(a.name))
        destination = texts is None or _says_where(a, texts, sends)
        if anchored and (not destination or (texts is not None and _unique(texts, ledger))):
            accepted.append(a.name)
        else:
            asked.append(a.name)
    return frozenset(accepted) or _NONE, frozenset(asked) or _NONE


def _users(a: ArgumentProvenance, value: Any, ledger: Ledger) -> bool:
    """Whether an argument is the user's own words: observed from the request or the inputs, or a
    text written there too (a trusted result may hold it as well: ``title="Family Reunion"``)."""
    if a.kind != sc.KIND_OBSERVED:
        return False
    if a.source_tool == sc.SOURCE_INPUT:
        return True
    return isinstance(value, str) and ledger.said_by_user(value) is not None


def _says_where(a: ArgumentProvenance, texts: list[str], sends: bool) -> bool:
    """Whether a delegated argument decides where data goes: a destination's name (``recipient``,
    ``url``), a value that is or holds a destination (also inside a list or a text), or — in a call
    that sends to someone — an outsider's message copied as it is (more than :data:`MESSAGE_WORDS`
    words)."""
    return (
        is_destination_name(a.name)
        or pj.EMBEDDED in (a.projection or "")
        or any(destinations_in(text) for text in texts)
        or (sends and any(len(text.split()) > MESSAGE_WORDS for text in texts))
    )


def _unique(texts: Iterable[str], ledger: Ledger) -> bool:
    """Every text is one destination, the only one of its form in what the call it was found in
    returned (every text of that result, at any depth: :func:`destinations_returned`)."""
    for text in texts:
        form = destination_form(text)
        if form is None:
            return False
        match = ledger.lookup(text)
        if match is None:
            return False
        returned = ledger.returned_destinations(match.observation.span_id)
        same = {token for kind, token in returned if kind == form} if returned is not None else None
        if same != {destination_text(text)}:
            return False
    return True


def destinations_returned(result: Any, limit: int) -> frozenset[tuple[str, str]] | None:
    """``(form, destination text)`` for every destination written in a result — in any text leaf at any
    depth, in a mapping key, in bytes read as UTF-8 — for :func:`_unique`. None when the result holds
    more than ``limit`` containers and items (then no destination from it is unique: fail closed)."""
    if type(result) is dict and len(result) <= limit and (texts := _flat_texts(result)) is not None:
        return frozenset(found for text in texts for found in _destinations_of(text))
    return _walked_destinations(result, limit)


def _walked_destinations(result: Any, limit: int) -> frozenset[tuple[str, str]] | None:
    """:func:`destinations_returned` by the general walk: any result."""
    found: set[tuple[str, str]] = set()
    stack: list[Any] = [result]
    seen: set[int] = set()
    room = limit
    while stack:
        value = stack.pop()
        kind = type(value)
        if kind is bool or value is None:  # never a destination: spared the container checks
            continue
        items = None if kind is str or kind is int else children(value)
        if items is None:
            text = value if kind is str else _text_of(value)
            if text is not None:
                for token in destinations_in(text):
                    found.add((destination_form(token) or "", destination_text(token)))
            continue
        if id(value) in seen:
            continue
        seen.add(id(value))
        keyed = isinstance(value, Mapping)
        for key, item in items:
            room -= 1
            if room < 0:
                return None
            if keyed:
                stack.append(key)
            stack.append(item)
    return frozenset(found)


def _flat_texts(result: dict) -> list[str] | None:
    """The texts of a flat ``dict`` of scalars under ``str`` keys — each key, each ``str`` and ``int``
    value (a bool or None is never a destination) — as the general walk of
    :func:`destinations_returned` reads them; None for anything else (the general walk then).
    The common result (``{"lines": 120, "encoding": "utf-8", "truncated": False}``) is read in one
    pass, without the walk's stack and container checks (#45)."""
    texts: list[str] = []
    for key, item in result.items():
        if type(key) is not str:
            return None
        texts.append(key)
        kind = type(item)
        if kind is str:
            texts.append(item)
        elif kind is int:
            texts.append(int.__repr__(item))
        elif kind is not bool and item is not None:
            return None
    return texts


_DESTINATIONS: dict[str, tuple[tuple[str, str], ...]] = {}


def _destinations_of(text: str) -> tuple[tuple[str, str], ...]:
    """``(form, destination text)`` of each destination in ``text``, remembered for short texts: a
    result's field names and small values repeat call after call, and the answer is a pure function
    of the text."""
    found = _DESTINATIONS.get(text)
    if found is None:
        tokens = destinations_in(text)
        found = tuple((destination_form(token) or "", destination_text(token)) for token in tokens)
        if len(text) <= MEMO_TEXT:  # the echo keys' bounds (fieldpaths)
            if len(_DESTINATIONS) >= MEMO_SIZE:
                _DESTINATIONS.clear()
            _DESTINATIONS[text] = found
    return found


def _text_of(value: Any) -> str | None:
    found = pj.leaf_text(value)
    if found is not None:
        return found[0]
    if isinstance(value, bytes | bytearray):
        return bytes(value).decode("utf-8", "replace")
    return None


def text_leaves(value: Any) -> list[str] | None:
    """The text leaves of an argument (itself, or a list's or a mapping's items); None for a value too
    big or too deep to examine (then it counts as a destination: fail closed)."""
    if isinstance(value, str):
        return [value]
    leaves = structure_leaves(value)
    if leaves is None:
        return None
    return [leaf for _, leaf, _ in leaves if isinstance(leaf, str)]


__all__ = ["delegation", "destinations_returned", "text_leaves"]
