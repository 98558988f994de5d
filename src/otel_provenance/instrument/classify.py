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

import dataclasses
import decimal
import json
import re
from collections.abc import Iterable, Mapping
from typing import Any, NamedTuple

from .. import semconv as sc
from . import projections as pj
from .delegation import delegation
from .digest import keyed_digest
from .fieldpaths import CallerName
from .ledger import LOCAL_CALL, Ledger, Match, words_of
from .settings import Settings, get_settings
from .textforms import destinations_in, looks_like_destination

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
                match = _match_scalar(name, value, pj.TEXT, ledger, floor, "", judged) or _embedded(
                    value, ledger, floor
                )
                results.append(_provenance(name, digest, match, match.projection if match else None))
                continue
            if type(value) is int and name not in invented:
                # fast path for the next most common: a plain int (its text needs no normalising)
                text = int.__repr__(value)
                match = _match_scalar(name, text, pj.NUMBER, ledger, floor, "", judged)
                results.append(
                    _provenance(name, keyed_digest(text, key), match, match.projection if match else None)
                )
                continue
            results.append(_classify_one(name, value, ledger, name in invented, key, floor, judged))
        except Exception as exc:  # an object that cannot be examined: unsourced, fail closed
            faults.append(f"{name}={type(exc).__name__}")
            results.append(ArgumentProvenance(name, sc.KIND_ASSUMED, keyed_digest(f"\x00fault:{name}", key)))
    destinations, references = _value_checks(results, arguments)
    short = _below_the_floor(results, arguments, ledger, floor)
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
    match = _match_key(data_key, ledger, floor, judged)
    if match is None:
        return ArgumentProvenance(name, sc.KIND_ASSUMED, found.digest)
    if found.kind == sc.KIND_OBSERVED and not match.trusted:
        return _provenance(name, found.digest, match, found.projection)
    return found


def _below_the_floor(
    results: list[ArgumentProvenance], arguments: Mapping[str, Any], ledger: Ledger | None, floor: int
) -> frozenset[str]:
    """The assumed scalar arguments whose value the run did see, but which are shorter than the
    short-value floor and were not found under their own name: the floor decided them (a violation
    says so, ``…=assumed:short_value``; never the value)."""
    if ledger is None or floor <= 0:
        return _NONE
    short: set[str] = set()
    for argument in results:
        if argument.kind != sc.KIND_ASSUMED or argument.name not in arguments:
            continue
        found = pj.leaf_text(arguments[argument.name])
        if found is not None and 0 < len(found[0]) < floor and ledger.lookup(found[0], found[1]) is not None:
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
        match = _match_scalar(name, text, kind, ledger, floor, "", judged)
        if match is None and kind == pj.TEXT:
            match = _embedded(text, ledger, floor)
        projection = match.projection if match else None
        if match is not None and isinstance(value, decimal.Decimal):  # a number a framework coerced
            projection = pj.combine(projection or pj.EXACT, pj.DECIMAL)
        return _provenance(name, digest, match, projection)
    leaves = _structure_leaves(value, name)
    digest = keyed_digest(_digest_text(value, leaves), key)
    if is_invented:
        return ArgumentProvenance(name, sc.KIND_INVENTED, digest)
    if ledger is None or not leaves or leaves is _TOO_BIG:
        if value is True or value is False:
            return _provenance(name, digest, _match_flag(name, value, ledger), None)
        return ArgumentProvenance(name, sc.KIND_ASSUMED, digest)
    first: Match | None = None
    for leaf_name, leaf_value, container in leaves:
        if leaf_name is None:  # a mapping key: a value the body receives as much as the items
            match = _match_key(leaf_value, ledger, floor, judged)
        elif (leaf := pj.leaf_text(leaf_value)) is None:
            match = _match_flag(leaf_name, leaf_value, ledger)
        else:
            match = _match_scalar(leaf_name, leaf[0], leaf[1], ledger, floor, container, judged)
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


def _match_scalar(
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
    match = ledger.lookup(text, kind)
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


def _embedded(text: str, ledger: Ledger | None, floor: int) -> Match | None:
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


def _match_key(key: Any, ledger: Ledger | None, floor: int, judged: bool = True) -> Match | None:
    """A mapping key of an argument is evidence when the run observed it as a value (in a result, a
    result's keys, the request, a text) or as a field name of a result or of the inputs: a key
    nobody returned — ``{"eve@evil.example": "admin"}`` — is the caller's own guess."""
    if ledger is None:
        return None
    found = pj.leaf_text(key)
    if found is not None and (
        match := _match_scalar(_KEY_NAME, found[0], found[1], ledger, floor, "", judged)
    ):
        return match
    return ledger.match_name(key)


def _match_flag(name: str, value: Any, ledger: Ledger | None) -> Match | None:
    """Booleans are evidence only as a field of the same name (``dry_run`` in the run's inputs)."""
    if ledger is None or not isinstance(value, bool):
        return None
    return ledger.match_flag(name, value)


_TOO_BIG: list = []


def structure_leaves(value: Any) -> list[tuple[str | None, Any, str]] | None:
    """:func:`_structure_leaves` of a value, or None when it is too big or too deep to examine."""
    leaves = _structure_leaves(value)
    return None if leaves is _TOO_BIG else leaves


def _structure_leaves(value: Any, root: str = "") -> list[tuple[str | None, Any, str]]:
    """Scalar leaves of a dict/list/tuple/set/dataclass/pydantic model as (own field name, value, name
    of the list it is an item of — ``root`` for the argument itself — or ""), then its mapping keys
    as (None, key, ""); [] if not a structure."""
    leaves: list[tuple[str | None, Any, str]] = []
    keys: list[tuple[str | None, Any, str]] = []
    stack: list[tuple[str, Any, int, str]] = [(root, value, 0, "")]
    seen: set[int] = set()
    while stack:
        name, item, depth, container = stack.pop()
        children = _children(item)
        if children is None:
            if item is not value:
                leaves.append((name, item, container))
                if len(leaves) + len(keys) > MAX_STRUCTURE_LEAVES:
                    return _TOO_BIG
            continue
        if depth >= MAX_STRUCTURE_DEPTH or id(item) in seen:
            return _TOO_BIG
        seen.add(id(item))
        keys.extend((None, k, "") for k in _data_keys(item))
        holder = name if isinstance(item, list | tuple | set | frozenset) else ""
        stack.extend((str(k), v, depth + 1, holder) for k, v in reversed(children))
    if len(leaves) + len(keys) > MAX_STRUCTURE_LEAVES:
        return _TOO_BIG
    return leaves + keys


def _children(item: Any) -> list[tuple[Any, Any]] | None:
    if isinstance(item, Mapping):
        return list(item.items())
    if isinstance(item, list | tuple):
        return list(enumerate(item))
    if isinstance(item, set | frozenset):  # members have no position: named ``*``, in a stable order
        return [("*", member) for member in _ordered(item)]
    if dataclasses.is_dataclass(item) and not isinstance(item, type):
        return [(f.name, getattr(item, f.name, None)) for f in dataclasses.fields(item)]
    names = pj.model_fields(item)
    if names is not None:  # a pydantic model: its fields, like a dataclass's, and its extra fields
        fields = [(name, getattr(item, name, None)) for name in names]
        extra = pj.model_extra(item)
        return fields + list(extra.items()) if extra else fields
    return None


def _data_keys(item: Any) -> Iterable[Any]:
    """The keys of a structure that are values, not a declared schema: a mapping's keys, the names
    of a pydantic model's extra fields (``extra="allow"``)."""
    if isinstance(item, Mapping):
        return item.keys()
    if pj.model_fields(item) is not None:
        return pj.model_extra(item) or ()
    return ()


def _ordered(members: set | frozenset) -> list[Any]:
    """A set's members in an order that does not depend on the process's hash seed."""
    try:
        return sorted(members, key=lambda m: (type(m).__name__, _sort_text(m)))
    except Exception:  # members that cannot be compared or shown: their own order
        return list(members)


def _sort_text(member: Any) -> str:
    found = pj.leaf_text(member)
    return found[0] if found is not None else repr(member)


def _digest_text(value: Any, leaves: list[tuple[str, Any, str]]) -> str:
    """Text digested for a non-scalar argument: canonical JSON of its normalised leaves."""
    if value is None:
        return _NONE_TEXT
    if value is True:
        return _TRUE_TEXT
    if value is False:
        return _FALSE_TEXT
    if isinstance(value, bytes | bytearray) and len(value) <= 1 << 20:
        return "\x00bytes:" + value.hex()
    if leaves is _TOO_BIG or _children(value) is None:
        return f"\x00object:{type(value).__qualname__}:{id(value)}"
    return json.dumps(_normalised_tree(value), sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _normalised_tree(value: Any) -> Any:
    children = _children(value)
    if children is None:
        if isinstance(value, bytes | bytearray):  # by content, as a bytes argument (not "opaque")
            return _digest_text(value, [])
        found = pj.leaf_text(value)
        if found is None:
            return None if value is None else bool(value) if isinstance(value, bool) else "\x00opaque"
        return pj.normalise(found[0]) if found[1] == pj.TEXT else found[0]
    if isinstance(value, list | tuple | set | frozenset):
        return [_normalised_tree(v) for _, v in children]
    return {str(k): _normalised_tree(v) for k, v in children}


__all__ = ["STRUCTURE", "ArgumentProvenance", "Classification", "classify_arguments"]
