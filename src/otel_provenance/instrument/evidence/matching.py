"""Matching one scalar of an argument against the ledger, as evidence: the short-value floor and the
names that may lift it, the user's own words, derived values, destinations embedded in free text,
mapping keys and flags."""

from __future__ import annotations

import re
from typing import Any

from ... import semconv as sc
from . import projections as pj
from .ledger import Ledger, Match, words_of
from .textforms import destinations_in

STRUCTURE = pj.STRUCTURE
MAX_STRUCTURE_LEAVES = 256
MAX_STRUCTURE_DEPTH = 16
_NONE_TEXT = "\x00null"
_TRUE_TEXT = "\x00true"
_FALSE_TEXT = "\x00false"
_ID_FIELDS = frozenset({"id", "id_"})
_WORDS = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+").findall


def match_scalar(
    name: str,
    text: str,
    kind: int,
    ledger: Ledger | None,
    floor: int,
    container: str = "",
    judged: bool = True,
) -> Match | None:
    """The ledger's match for one scalar, if it is evidence: long enough, or matched by field name
    (``container``: the name of the list the scalar is an item of, for the ``id_alias`` of
    ``file_ids=["3"]``), or written in the run's request (the user's own words: no floor)."""
    if ledger is None or not text:
        return None
    return judge_scalar(name, text, kind, ledger.lookup(text, kind), ledger, floor, container, judged)


def judge_scalar(
    name: str,
    text: str,
    kind: int,
    match: Match | None,
    ledger: Ledger,
    floor: int,
    container: str = "",
    judged: bool = True,
) -> Match | None:
    """:func:`match_scalar` given the ledger's lookup of ``text`` as ``kind`` (``match``), made by the caller:
    a classification that needs the lookup again (:func:`.classify._below_the_floor`) makes it once."""
    if match is not None and not _counts(name, text, match, ledger, floor, container):
        match = None  # short, and not under a name that says what it is
    if match is not None and match.trusted:
        return match
    if not judged:  # only tagged: no second chance is sought
        return match
    # unmatched, short or untrusted: the user's own words (at any length), then a value computed
    # from what the run sourced (re-done, so no floor)
    said = ledger.said_by_user(text)
    if said is not None:
        return said
    derived = ledger.derive(text, kind)
    return derived if derived is not None else match


def _counts(name: str, text: str, match: Match, ledger: Ledger, floor: int, container: str) -> bool:
    """Whether a match is evidence for an argument: long enough; or short, but in the run's request,
    or found as a whole under a field of the argument's own name — or, in a source trusted word for
    word (the inputs, a ``trust="trusted"`` tool, a vouched record), under a field that names what
    the argument names: a list of them (``users`` for ``user``), another name of a person for a
    person (``sender`` for ``recipient``), the ``id`` of a record of the kind a ``<thing>_id`` names."""
    obs = match.observation
    if len(text) >= floor or (obs.tool == sc.SOURCE_INPUT and obs.field == sc.SOURCE_REQUEST):
        return True
    if not match.by_field:  # a short value inside a text: not evidence
        return False
    field_name = obs.field_name
    if field_name == name and not name.isdigit():
        return True
    if not obs.vouched:  # the names below are read only where the words are trusted (#44)
        return False
    if field_name in _ID_FIELDS:
        thing = _id_of(name) or _id_of(container)
        if thing is not None and thing in ledger.record_words(obs):
            match.projection = pj.combine(match.projection, pj.ID_ALIAS)
            return True
        return False
    if field_name.isdigit():  # an item of a list: named by the list, or by the tool that listed it
        head, _, _ = obs.field.rpartition(".")
        field_name = head.rpartition(".")[2] if head else obs.tool
    return _same_kind(name, field_name)


def _same_kind(name: str, field: str) -> bool:
    """``user`` and ``users`` / ``get_users_in_channel``; a person and a person (``recipient`` and
    ``sender``, ``participants`` and ``members``)."""
    wanted = _WORDS(name)
    if not wanted:
        return False
    last = wanted[-1].lower()
    words = words_of(field)
    return last in words or (last in PERSON_WORDS and not PERSON_WORDS.isdisjoint(words))


#: Words that name a person in a field or an argument: a short name (``Bob``) under one is a person's.
PERSON_WORDS = frozenset(
    {
        "user", "users", "member", "members", "participant", "participants", "recipient", "recipients",
        "sender", "author", "owner", "organizer", "invitee", "invitees", "assignee", "username", "person",
        "people", "contact", "contacts", "colleague", "colleagues",
    }
)  # fmt: skip


def _id_of(name: str) -> str | None:
    """The thing an argument names the id of — ``file_id``, ``fileId``, ``calendar_event_id`` (or a
    list of them: ``file_ids``, ``fileIds``) -> ``file``, ``file``, ``event`` — or None. Its id is
    evidence only when found as the ``id`` of a record of that kind (:func:`.ledger.record_words`):
    a calendar event's id 13 is no file's."""
    stem = name[:-1] if name.endswith(("_ids", "Ids")) else name
    if stem.endswith("_id") and len(stem) > 3:
        head = stem[:-3]
    elif stem.endswith("Id") and stem[-3:-2].islower():
        head = stem[:-2]
    else:
        return None
    words = _WORDS(head)
    return words[-1].lower() if words else None


def embedded(text: str, ledger: Ledger | None, floor: int) -> Match | None:
    """An unmatched text that carries a destination — an e-mail address, a URL, an IBAN, a long
    number, as a token — found only in untrusted results: the text is ``untrusted`` (projection
    ``embedded``), whatever the model wrote around it. Free text never decides where data goes."""
    if ledger is None or len(text) > pj.MAX_TEXT_LENGTH or not ledger.has_untrusted:
        return None
    for token in destinations_in(text):
        match = ledger.lookup(token, pj.TEXT)
        if match is not None and not match.trusted and len(token) >= floor:
            match.projection = pj.combine(match.projection, pj.EMBEDDED)
            return match
    return None


_KEY_NAME = "\x00key"  # a mapping key has no field name of its own: the floor's name rule never applies


def match_key(key: Any, ledger: Ledger | None, floor: int, judged: bool = True) -> Match | None:
    """A mapping key of an argument is evidence when the run observed it as a value (in a result, a
    result's keys, the request, a text) or as a field name of a result or of the inputs: a key
    nobody returned — ``{"eve@evil.example": "admin"}`` — is the caller's own guess."""
    if ledger is None:
        return None
    found = pj.leaf_text(key)
    if found is not None and (
        match := match_scalar(_KEY_NAME, found[0], found[1], ledger, floor, "", judged)
    ):
        return match
    return ledger.match_name(key)


def match_flag(name: str, value: Any, ledger: Ledger | None) -> Match | None:
    """Booleans are evidence only as a field of the same name (``dry_run`` in the run's inputs)."""
    if ledger is None or not isinstance(value, bool):
        return None
    return ledger.match_flag(name, value)


__all__ = ["PERSON_WORDS", "embedded", "judge_scalar", "match_flag", "match_key", "match_scalar"]
