"""What a tool's results are worth as evidence: the ``trust`` options of ``@op.tool``, ``ToolSpec`` and
MCP's ``ToolPolicy``, checked in one place.

Trust follows who *wrote* a value, not who stores it (#44). Three levels:

* ``values`` — the default. The system stores these results, but someone outside may have written
  any text in them (an e-mail body, an event's description, a channel's name, a payment's subject).
  A whole value — an id, an address or an amount in a field of its own, a name in a list — is
  evidence; the words *inside* a text are not (a value found only there is ``untrusted``).
* ``trusted`` — the application vouches for every word: the user or the system wrote all of it (the
  app's own configuration, a database of its own). Values written inside its texts are evidence too.
* ``untrusted`` — content someone outside wrote (a web page, a mail, a shared document): a value
  found only here is ``untrusted``, which a write does not accept by default.

Field- and record-level refinements, where the schema knows who wrote what:

* ``trusted_fields`` (with ``untrusted``) — fields the *system* sets, not the content's author (a
  message's ``id``, its ``date``), by their own name anywhere in the result: trusted, as declared;
* ``trusted_records`` (with ``untrusted``) — a predicate over each *record* (each item of a list
  result, or the result itself) that says the user or the system wrote it (``lambda e:
  e["organizer"] == me``; a payment the user sent): such a record is trusted as a whole, its words
  included. Vouch by who *wrote* a record, never by who owns or stores it: a spreadsheet in the
  user's drive can hold rows customers wrote. A predicate that raises says "no".
* ``untrusted_fields`` (with ``values`` or ``trusted``) — fields an outsider writes in otherwise
  system-made records (a payment's ``subject``, a message's ``body``, a ``sender``): their values
  are ``untrusted``, whole or inside a text.

Not a field the system sets: a sender picks their own address, an organiser their invitees, a
payer their account — naming ``from``, ``participants`` or ``sender`` in ``trusted_fields`` would
let an outsider become a destination.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any, NamedTuple

from ... import semconv as sc
from ...errors import ConfigurationError


class SourceTrust(NamedTuple):
    """A tool's trust in its own results (made by :func:`source_trust`). ``trusted``: not declared
    untrusted; ``words``: the words inside its texts are evidence too (``trust="trusted"``)."""

    trusted: bool = True
    fields: frozenset[str] = frozenset()
    records: Callable[[Any], Any] | None = None
    words: bool = False
    untrusted_fields: frozenset[str] = frozenset()

    @property
    def level(self) -> str:
        if not self.trusted:
            return sc.TRUST_UNTRUSTED
        return sc.TRUST_TRUSTED if self.words else sc.TRUST_VALUES

    def records_of(self, result: Any, prefix: tuple) -> Iterator[tuple[tuple, Any, bool]]:
        """``(field prefix, record, written by the user or the system)`` for each record of a result:
        the items of a list or tuple, else the result itself."""
        if isinstance(result, list | tuple):
            for index, item in enumerate(result):
                yield (*prefix, index), item, self._vouched(item)
        else:
            yield prefix, result, self._vouched(result)

    def _vouched(self, record: Any) -> bool:
        try:
            return bool(self.records(record)) if self.records is not None else False
        except Exception:  # a record the predicate cannot read is not vouched for: fail closed
            return False


VALUES = SourceTrust()
"""The default: whole values are evidence, the words inside texts are not."""
TRUSTED = SourceTrust(words=True)
"""Every word is evidence: the run's declared inputs and request, ``trust="trusted"`` tools."""


def source_trust(
    owner: str,
    trust: Any = sc.TRUST_VALUES,
    trusted_fields: Iterable[str] | None = (),
    trusted_records: Callable[[Any], Any] | None = None,
    untrusted_fields: Iterable[str] | None = (),
) -> SourceTrust:
    """Check the options; errors name ``owner`` (``op.tool(read_inbox)``, ``ToolPolicy``)."""
    if trust is None:
        trust = sc.TRUST_VALUES
    if trust not in sc.TRUST_LEVELS:
        raise ConfigurationError(
            f"{owner}: trust={trust!r} is not one of {', '.join(map(repr, sc.TRUST_LEVELS))}"
        )
    fields = _names(owner, "trusted_fields", trusted_fields)
    outsiders = _names(owner, "untrusted_fields", untrusted_fields)
    if trusted_records is not None and not callable(trusted_records):
        raise ConfigurationError(f"{owner}: trusted_records must be a function of one record")
    if trust == sc.TRUST_UNTRUSTED:
        if outsiders:
            raise ConfigurationError(
                f"{owner}: untrusted_fields is for trust='values' or 'trusted' (every field of an "
                "untrusted tool is untrusted already)"
            )
        return SourceTrust(False, fields, trusted_records)
    if fields or trusted_records is not None:
        raise ConfigurationError(
            f"{owner}: trusted_fields and trusted_records are only for trust='untrusted'"
        )
    words = trust == sc.TRUST_TRUSTED
    if outsiders:
        return SourceTrust(True, words=words, untrusted_fields=outsiders)
    return TRUSTED if words else VALUES


def _names(owner: str, option: str, names: Iterable[str] | None) -> frozenset[str]:
    names = names or ()
    if isinstance(names, str) or not all(isinstance(n, str) and n for n in names):
        raise ConfigurationError(f"{owner}: {option} must be a collection of field names")
    return frozenset(names)


__all__ = ["TRUSTED", "VALUES", "SourceTrust", "source_trust"]
