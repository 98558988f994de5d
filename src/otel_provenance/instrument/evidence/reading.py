"""How the ledger answers: one value's observation, lookups through trusted sources before untrusted
ones, the text index's matches (values inside texts, dates and numbers in other forms), the user's own
words, path joins — and which calls the user directed and what a derived value is computed from."""

from __future__ import annotations

import contextlib
import decimal
from itertools import islice
from typing import TYPE_CHECKING, Any

from ...semconv import SOURCE_INPUT
from . import derived as dv
from . import projections as pj
from . import textforms as tf
from .entries import (
    FORM_STARTS,
    HAS_DIGIT,
    HAS_SPACE,
    KEY,
    KIND_BITS,
    MAX_PATH_SPLITS,
    ROOT_FIELDS,
    TOKEN_EDGES,
    UNVOUCHED,
    ListSource,
    Match,
    Observation,
    via_names,
)
from .fieldpaths import field_path

if TYPE_CHECKING:
    from .ledger import Ledger

_UNDERIVED_MEMO = 1024  # texts nothing derived, remembered with the operands' versions


class Reading:
    """The reading half of :class:`.ledger.Ledger` (a mixin: the state is the ledger's)."""

    # -- reading --------------------------------------------------------------------------------------
    def observation(self, key: str) -> Observation | None:
        """The observation stored under a normalised text, or None."""
        entry = self._index.get(key)
        if entry is None:
            return None
        if type(entry) is ListSource:
            return entry.observation(key)
        tool, span_id, parent, leaf_key, text, kind = entry
        field = field_path(parent, leaf_key)
        if kind <= KIND_BITS:
            return Observation(tool, span_id, field, key if text is None else text, kind, parent=parent)
        text = key if text is None else text
        return Observation(
            tool, span_id, field, text, kind & KIND_BITS, via_names(kind), not kind & UNVOUCHED, parent
        )

    def flag(self, name: str, value: bool) -> Observation | None:
        """A boolean observed in a field called ``name`` (booleans are evidence only by field name)."""
        entry = self._flags.get((name, value))
        if entry is None:
            return self.parent.flag(name, value) if self.parent is not None else None
        tool, span_id, parent, key = entry
        return Observation(
            tool, span_id, field_path(parent, key), "true" if value else "false", pj.TEXT, parent=parent
        )

    def match_flag(self, name: str, value: bool) -> Match | None:
        """:meth:`flag` through the trusted sources, then the untrusted ones (``Match.trusted``)."""
        found = self.flag(name, value)
        if found is not None:
            return Match(found, pj.EXACT)
        ledger: Ledger | None = self
        while ledger is not None:
            if ledger._untrusted is not None and (found := ledger._untrusted.flag(name, value)) is not None:
                return Match(found, pj.EXACT, trusted=False)
            ledger = ledger.parent
        return None

    def name(self, name: Any) -> Observation | None:
        """A field name some result (or the inputs) used: a mapping key of an argument may be one."""
        entry = self._names.get(name)
        if entry is None:
            return self.parent.name(name) if self.parent is not None else None
        tool, span_id, parent = entry
        return Observation(tool, span_id, field_path(parent, name), str(name), pj.TEXT, parent=parent)

    def match_name(self, name: Any) -> Match | None:
        """:meth:`name` through the trusted sources, then the untrusted ones (``Match.trusted``)."""
        try:
            found = self.name(name)
        except TypeError:  # an unhashable key
            return None
        if found is not None:
            return Match(found, pj.EXACT)
        ledger: Ledger | None = self
        while ledger is not None:
            if ledger._untrusted is not None and (found := ledger._untrusted.name(name)) is not None:
                return Match(found, pj.EXACT, trusted=False)
            ledger = ledger.parent
        return None

    def lookup(self, text: str, kind: int = pj.TEXT) -> Match | None:
        """Match an argument's text against everything observed; ``kind`` is TEXT or NUMBER.

        Trusted sources first: this ledger, then the enclosing runs' (``parent``); only then the
        untrusted results of each, in the same order — a match there has ``trusted=False``. A value
        found in this ledger only inside a text whose words are not evidence (a ``values`` source)
        is ``trusted=False`` too, and comes after every trusted match. A match
        in the result of a call that had the argument (or a form of it) among its unsourced arguments
        is an echo, whatever the route — inside a text, joined from a path's pieces — and no match.
        """
        ledger: Ledger | None = self
        unvouched: Match | None = None  # found only inside a text whose words are not evidence
        while ledger is not None:
            if (found := ledger._lookup(text, kind)) is not None and not ledger._echoed(text, found):
                if found.trusted:
                    return found
                unvouched = unvouched or found
            ledger = ledger.parent
        if unvouched is not None:
            return unvouched
        ledger = self
        while ledger is not None:
            untrusted = ledger._untrusted
            if (
                untrusted is not None
                and (found := untrusted._lookup(text, kind)) is not None
                and not untrusted._echoed(text, found)
            ):
                found.trusted = False
                return found
            ledger = ledger.parent
        return None

    def _echoed(self, text: str, found: Match) -> bool:
        """Whether ``text`` echoes an unsourced argument of the call whose result ``found`` is in."""
        spans = self._echo_spans
        if not spans:
            return False
        keys = spans.get(found.observation.span_id)
        return keys is not None and pj.is_echo(text, keys)

    def _lookup(self, text: str, kind: int) -> Match | None:
        if not text or len(text) > pj.MAX_TEXT_LENGTH:
            return None
        key = pj.normalise(text)
        steps = () if key is text else pj.normalise_steps(text)[1]
        found = self.observation(key)
        if found is not None:
            how = "" if found.kind == kind else pj.RESULT_KEY if found.kind == KEY else pj.NUMBER_AS_TEXT
            if found.text == text:
                projection = pj.combine(how or pj.EXACT, found.via) if found.via else how or pj.EXACT
            else:
                projection = pj.combine(steps, pj.normalise_steps(found.text)[1], how or (), found.via)
            return Match(found, projection)
        if kind == pj.TEXT:
            prefix = pj.sha_prefix(key)
            if prefix is not None:
                for full in reversed(self._shas.get(prefix[:7], ())):
                    if full.startswith(prefix) and (hit := self.observation(full)) is not None:
                        return Match(hit, pj.combine(steps, pj.GIT_SHA_PREFIX))
            if pj.looks_like_path(key) and (joined := self._join(key, steps)) is not None:
                return joined
        number = tf.number_form(text) if not text.isdigit() and HAS_DIGIT(text) else None
        if number is not None:  # a number written in another form, remembered as a number
            plain = number[len(tf.NUMBER_KEY) :]
            if plain != text and (hit := self.observation(plain)) is not None:
                return Match(hit, pj.combine(pj.NUMBER_NORMALISED, hit.via))
        if self._texts.empty and self._scanned >= len(self._index):
            return None  # no text of this ledger holds tokens or forms: nothing more to look at
        with self._lock:
            return self._in_texts(text, kind)

    def _in_texts(self, text: str, kind: int) -> Match | None:
        """The second index (:mod:`.textindex`): a number or a date written in another form, then a
        value written inside a longer text, on token boundaries."""
        self._read_new_texts()
        if self._texts.empty:
            return None
        resolve = self._text_of
        number = tf.number_form(text) if HAS_DIGIT(text) else None
        if number is not None and (form := self._texts.find_form(number, resolve)) is not None:
            return self._form_match(form, pj.NUMBER_NORMALISED)
        if kind == pj.TEXT and HAS_DIGIT(text):
            dates = tf.date_forms(text)
            if dates and (form := self._texts.find_form(dates[-1], resolve)) is not None:
                return self._form_match(form, pj.DATETIME_NORMALISED)
        found = self._texts.find_in_text(text, resolve)
        if found is None:
            return None
        hit = self.observation(found[0])
        if hit is None:  # pragma: no cover - resolve() saw the key a moment ago, under the lock
            return None
        number = () if kind == pj.TEXT else pj.NUMBER_AS_TEXT
        return Match(hit, pj.combine(pj.IN_TEXT, found[1], number, hit.via), found[2])

    def _form_match(self, form: tuple[str, bool, bool], projection: str) -> Match | None:
        hit = self.observation(form[0])
        if hit is None:  # pragma: no cover - find_form() resolved the key a moment ago, under the lock
            return None
        # a whole value in another form counts at ``values``; written inside an unvouched text, not
        return Match(hit, pj.combine(projection, pj.IN_TEXT if form[1] else (), hit.via), form[2])

    def _read_new_texts(self) -> None:
        """Hand the text index the texts remembered since it last read (the main index keeps its
        insertion order): sentences, and texts that start with a digit or a currency sign."""
        index = self._index
        if self._scanned >= len(index):
            return
        add = self._texts.add
        edges = TOKEN_EDGES
        for key, entry in islice(index.items(), self._scanned, None):
            if type(entry) is tuple and entry[5] & KIND_BITS != pj.NUMBER:
                text = key if entry[4] is None else entry[4]
                if (
                    text[0] in FORM_STARTS
                    or text[0] in edges
                    or text[-1] in edges
                    or "=" in text
                    or HAS_SPACE(text)
                ):
                    add(key, text, not entry[5] & UNVOUCHED, entry[0] == SOURCE_INPUT)
        self._scanned = len(index)

    def said_by_user(self, text: str) -> Match | None:
        """``text`` as the user wrote it, inside the run's request or inputs (in any letter case), at
        any length: the user's own words are no chance match (this run's, or an enclosing one's)."""
        ledger: Ledger | None = self
        while ledger is not None:
            if not ledger._users_words:  # no request or inputs text: nothing to search
                ledger = ledger.parent
                continue
            with ledger._lock:
                ledger._read_new_texts()
                found = ledger._texts.find_in_users_words(text, ledger._text_of)
                hit = ledger.observation(found[0]) if found is not None else None
            if found is not None and hit is not None:
                return Match(hit, pj.combine(pj.IN_TEXT, found[1]))
            ledger = ledger.parent
        return None

    # -- directed calls and derived values ----------------------------------------------------------
    def direct(self, span_id: str, returned: frozenset[tuple[str, str]] | None = None) -> None:
        """Mark a call the user directed: one of its arguments came from the run's request or inputs
        (``read_file("bill.txt")`` for "pay the bill in bill.txt"), or was delegated in turn.
        ``returned``: the destinations its result holds (:func:`.delegation.destinations_returned`;
        a generator's items add theirs), None when they are not known — then none of them is unique."""
        if span_id:
            with self._lock:
                directed = self._directed
                if span_id in directed:
                    known = directed[span_id]
                    returned = None if known is None or returned is None else known | returned
                directed[span_id] = returned
                if len(directed) > self.max_entries:
                    directed.clear()  # fail closed: nothing is delegated any more

    def returned_destinations(self, span_id: str) -> frozenset[tuple[str, str]] | None:
        """The destinations a directed call returned, as :meth:`direct` was told (None: unknown)."""
        ledger: Ledger | None = self
        while ledger is not None:
            if span_id in ledger._directed:
                return ledger._directed[span_id]
            ledger = ledger.parent
        return None

    def directed(self, span_id: str) -> bool:
        """Whether the call with this span id was directed by the user, in this run or an enclosing one."""
        ledger: Ledger | None = self
        while ledger is not None:
            if span_id in ledger._directed:
                return True
            ledger = ledger.parent
        return False

    def derive(self, text: str, kind: int) -> Match | None:
        """A date, a time or an amount computed from what the run sourced (:mod:`.derived`): the
        operand it was derived from, projection ``derived``; or None."""
        dates = tf.date_forms(text) if kind == pj.TEXT and HAS_DIGIT(text) else ()
        if not dates and kind != pj.NUMBER:  # an amount is a number; a text of digits is an id
            return None
        sources: list[Ledger] = []
        ledger: Ledger | None = self
        while ledger is not None:
            sources.extend(s for s in (ledger, ledger._untrusted) if s is not None)
            ledger = ledger.parent
        for source in sources:
            with source._lock:
                source._read_operands()
        # nothing derived this text from these operands before: nothing will (a pure function of
        # the text and the operands, which only grow): an offset=0 on every call is computed once
        versions = tuple(s._operands_version for s in sources)
        if self._underived.get((text, kind)) == versions:
            return None
        parts = [s._operands for s in sources if s._operands.any_for(bool(dates))]
        if not parts or (not dates and not any(p.request_numbers or p.percents for p in parts)):
            return None  # nothing to compute it from (an amount needs a number of the user's)
        operands = dv.Operands.merged(parts)  # a duration here, a time there
        key = dv.derive_date(text, operands) if dates else dv.derive_number(text, operands)
        if key is None:
            if len(self._underived) >= _UNDERIVED_MEMO:
                self._underived.clear()
            self._underived[(text, kind)] = versions
            return None
        for source in sources:  # the operand's own ledger: keys are unique to the ledger that made them
            hit = source.observation(key)
            if hit is not None:
                # computed from an outsider's words (a directed call's result): as untrusted as they are
                whole = bool(tf.date_forms(hit.text)) or tf.number_form(hit.text) is not None
                entry = source._index.get(key)
                unvouched = type(entry) is tuple and bool(entry[5] & UNVOUCHED) and not whole
                return Match(hit, pj.combine(dv.DERIVED, hit.via), not (source._outsider or unvouched))
        return None

    def _read_operands(self) -> None:
        """Hand :attr:`_operands` what was remembered since it last read: whole dates and numbers of
        trusted sources; the dates, numbers, durations and percentages written in texts whose words
        are evidence — and in what directed calls returned (the user named that source)."""
        index = self._index
        if self._operands_scanned >= len(index):
            return
        operands, outsider, directed = self._operands, self._outsider, self._directed
        moments: dict[tuple, str] = {}  # (span id, record path) -> its first date-and-time
        for key, entry in islice(index.items(), self._operands_scanned, None):
            if type(entry) is not tuple:
                continue
            tool, span_id, parent, _, raw, kind = entry
            users = tool == SOURCE_INPUT or span_id in directed
            if outsider and not users:
                continue
            text = key if raw is None else raw
            if len(text) >= 16 and text[4:5] == "-" and HAS_DIGIT(text[:1]):  # an event's start, end
                first = moments.setdefault((span_id, parent), text)
                if first is not text:
                    operands.add_length(first, text)
            if kind & KIND_BITS == pj.NUMBER:
                with contextlib.suppress(decimal.InvalidOperation):
                    operands.add_number(key, decimal.Decimal(text), request=users)
            elif (not kind & UNVOUCHED and not outsider) or users:  # its words are evidence
                if HAS_DIGIT(text) or HAS_SPACE(text):
                    operands.add_text(key, text, request=users)
            elif HAS_DIGIT(text):  # a whole value only
                operands.add_value(key, text)
        self._operands_scanned = len(index)
        self._operands_version += 1

    def _text_of(self, key: str) -> str | None:
        """The text a main-index key was remembered from, if it is still there as a text."""
        entry = self._index.get(key)
        if type(entry) is not tuple or entry[5] & KIND_BITS == pj.NUMBER:
            return None
        return key if entry[4] is None else entry[4]

    def _join(self, key: str, steps: tuple[str, ...]) -> Match | None:
        start = 0  # an absolute path's first cut is at 0: root "/" (a listing of the filesystem root)
        for _ in range(MAX_PATH_SPLITS):
            cut = key.find("/", start)
            if cut < 0:
                return None
            start = cut + 1
            head, tail = key[:cut] or "/", key[cut + 1 :]
            entry = self.observation(tail) if tail else None
            if entry is None:
                continue
            head_entry = self._index.get(head)
            if (
                type(head_entry) is tuple
                and head_entry[1] == entry.span_id
                and str(head_entry[3]) in ROOT_FIELDS
            ):
                return Match(entry, pj.combine(steps, pj.PATH_JOIN))
            if any(pj.normalise(text) == head for text in self._calls.get(entry.span_id, ())):
                return Match(entry, pj.combine(steps, pj.PATH_JOIN))
        return None


__all__ = ["Reading"]
