"""What a tool's results are worth as evidence: the ``trust`` options of ``@op.tool``, ``ToolSpec`` and
MCP's ``ToolPolicy``, checked in one place.

Most tools return what the system produced (a row, a listing, an order): **trusted**. Some return
content someone outside wrote — an e-mail, a web page, a shared document, a chat message, another
agent's free text: **untrusted**. A value found only there makes a later argument ``untrusted``, which
a write does not accept by default. Authorship is rarely the whole result's, so two refinements:

* ``trusted_fields`` — fields the *system* sets, not the content's author (a message's ``id``, its
  ``date``), by their own name anywhere in the result: their values stay trusted;
* ``trusted_records`` — a predicate over each *record* (each item of a list result, or the result
  itself) that says the user or the system wrote it (``lambda e: e["organizer"] == me``; a payment
  the user sent): such a record is trusted as a whole. A predicate that raises says "no".

Not a field the author chooses: a sender picks their own address, an organiser their invitees, a
payer their account — naming ``from``, ``participants`` or ``sender`` would let an outsider become a
destination.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any, NamedTuple

from .. import semconv as sc
from ..errors import ConfigurationError


class SourceTrust(NamedTuple):
    """A tool's trust in its own results (made by :func:`source_trust`)."""

    trusted: bool = True
    fields: frozenset[str] = frozenset()
    records: Callable[[Any], Any] | None = None

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


TRUSTED = SourceTrust()


def source_trust(
    owner: str,
    trust: Any = sc.TRUST_TRUSTED,
    trusted_fields: Iterable[str] | None = (),
    trusted_records: Callable[[Any], Any] | None = None,
) -> SourceTrust:
    """Check the three options; errors name ``owner`` (``op.tool(read_inbox)``, ``ToolPolicy``)."""
    if trust not in sc.TRUST_LEVELS:
        raise ConfigurationError(
            f"{owner}: trust={trust!r} is not one of {', '.join(map(repr, sc.TRUST_LEVELS))}"
        )
    fields = trusted_fields or ()
    if isinstance(fields, str) or not all(isinstance(n, str) and n for n in fields):
        raise ConfigurationError(f"{owner}: trusted_fields must be a collection of field names")
    if trusted_records is not None and not callable(trusted_records):
        raise ConfigurationError(f"{owner}: trusted_records must be a function of one record")
    if trust == sc.TRUST_TRUSTED:
        if fields or trusted_records is not None:
            raise ConfigurationError(
                f"{owner}: trusted_fields and trusted_records are only for trust='untrusted'"
            )
        return TRUSTED
    return SourceTrust(False, frozenset(fields), trusted_records)


__all__ = ["TRUSTED", "SourceTrust", "source_trust"]
