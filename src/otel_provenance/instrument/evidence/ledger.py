"""The run-scoped ledger: every non-empty leaf that tools of one run returned, indexed by normalised value.

``remember`` walks a result (dicts, lists, tuples, sets, dataclasses) and stores each scalar leaf under
its normalised text (see :mod:`.projections`) with the tool, the field path (``files.0``) and the span id
of the tool span. No digest is computed here: digests are made only for values used as arguments, so
remembering a large listing costs a dict insertion per leaf. A flat list of plain strings (the typical
listing) is indexed in bulk with C-level operations; its field paths are resolved only on a match.

Echoes do not launder. A value a tool returns that equals one of the *unsourced* (assumed, invented
or untrusted) arguments of that same call keeps the argument's kind: ``remember(..., unsourced=...)``
leaves the ledger as it was for those values, so ``lookup(account)`` returning
``{"account": account, "valid": False}`` does not turn an assumed account into an observed one.
"Equals" is compared by :func:`~.projections.echo_key` — a form derived from the guess (case, space,
``normpath``, zero-padding, a number's other form) or a piece of a guessed path is an echo too — over
the whole argument up to the ledger's bound (:func:`.fieldpaths.echo_targets`; an argument past it
leaves nothing of the result remembered). Each call's echo keys are kept (``_echo_spans``) so that a
match reached any other way — inside a text, joined from a path's pieces — in that call's result is
refused at lookup. An echo of an *observed* argument is remembered as usual (it was evidence already).

A nested ``op.run`` gives its ledger the enclosing run's as ``parent``: lookups that miss locally
ask the parent, so values observed by the enclosing run count inside the nested one (not the
other way round: what the nested run observes stays in its own ledger).

Trust. Results of a tool declared ``trust="untrusted"`` (e-mail bodies, web pages, another agent's
free text) go to a second ledger of their own (``remember(..., trust=...)``, :mod:`.trust`), except
the records the tool vouches for (``trusted_records``) and the fields it names as set by the system
rather than the content's author (``trusted_fields``: an ``id``, a ``date``). A lookup asks every
trusted source first — this ledger, then its parents — and only then the untrusted ones, and marks
what it found there (``Match.trusted``): a value found in both a trusted and an untrusted result is
observed from the trusted one.

Beyond equal values (and the projections of :mod:`.projections`), a lookup that misses finds a value
written inside a longer text on token boundaries (``in_text``), a date or number written in another
form (``datetime_normalised``, ``number_normalised``) — :mod:`.textindex`, built lazily — and a
string key of a result dict that is data rather than a field name (an e-mail address, a file name:
``result_key``). The field names of results are kept too (``match_name``): a mapping key of an
argument is evidence when a result used it as a field name.

The ledger is bounded: past ``max_entries`` the oldest entries are dropped (down to three quarters of
the bound, so the cost stays amortised O(1)) and ``full`` turns true, which tool spans report as
``agent.ledger.full``.
Lookups are O(1) in the size of the ledger (dict probes; a path join probes once per ``/``).
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Mapping
from typing import Any

from ...semconv import SOURCE_INPUT
from . import derived as dv
from .entries import (
    LOCAL_CALL,
    TOO_BIG_TO_EXAMINE,
    UNVOUCHED,
    Echo,
    Match,
    Observation,
    drop_older_half,
    echo_of,
    record_words,
    words_of,
)
from .fieldpaths import MAX_DEPTH, safe_names, safe_segment
from .reading import Reading
from .remembering import Remembering
from .textindex import TextIndex
from .trust import TRUSTED, VALUES, SourceTrust


class Ledger(Remembering, Reading):
    """What one run has observed. Safe to share between the threads of one run."""

    def __init__(self, max_entries: int | None = None) -> None:
        if max_entries is None:
            from ..base.settings import get_settings

            max_entries = get_settings().ledger_max_entries
        if isinstance(max_entries, bool) or not isinstance(max_entries, int) or max_entries < 1:
            from ...errors import ConfigurationError

            raise ConfigurationError("ledger max_entries: must be an integer >= 1")
        self.max_entries = max_entries
        self.evicted = 0
        self._index: dict[str, Any] = {}  # normalised text -> entry tuple | ListSource
        self._shas: dict[str, list[str]] = {}  # first 7 hex digits -> full object ids
        self._calls: dict[str, tuple[str, ...]] = {}  # span id -> string arguments of that call
        self._attempts: dict[tuple, int] = {}
        self._flags: dict[tuple[str, bool], tuple] = {}  # (field name, bool) -> (tool, span, path, key)
        self._names: dict[Any, tuple] = {}  # field name of a result -> (tool, span, path)
        # (span id, path of a record with an ``id``) -> its type (what it is: :func:`record_words`)
        self._records: dict[tuple[str, tuple], type] = {}
        self._noted: set[str] = set()  # per walk: :meth:`.remembering.Remembering._walk`
        self._echo_spans: dict[str, frozenset[str]] = {}  # span id -> echo keys of its unsourced arguments
        self._lock = threading.Lock()
        self._texts = TextIndex(max_entries)  # tokens and date/number forms, read lazily
        self._scanned = 0  # how many main-index entries (in insertion order) the text index has read
        self._untrusted: Ledger | None = None  # results of tools declared untrusted
        self._unvouched = False  # whether a result whose words are not evidence was remembered
        self._outsider = False  # this is a run's ledger of untrusted results
        self._users_words = False  # the run's request or inputs were remembered here
        # span ids of calls the user directed (an argument from the request or inputs, or delegated):
        # what they returned may be acted on (#44, :mod:`.derived`, delegation); shared with _untrusted.
        # Each with the destinations its result holds, (form, token) — None: too big to know (#50)
        self._directed: dict[str, frozenset[tuple[str, str]] | None] = {}
        self._operands = dv.Operands()  # what derived values may be computed from, read lazily
        self._operands_scanned = 0
        self._operands_version = 0  # grows each time _operands gains entries (never goes back)
        # (text, kind) -> the operands' versions when nothing derived it: asked again, unchanged
        self._underived: dict[tuple[str, int], tuple[int, ...]] = {}
        self.parent: Ledger | None = None  # the enclosing run's ledger (nested op.run), read-only here

    # -- state ----------------------------------------------------------------------------------------
    @property
    def full(self) -> bool:
        """True once entries were evicted: a value missing now may have been observed earlier."""
        return self.evicted > 0 or (self._untrusted is not None and self._untrusted.evicted > 0)

    @property
    def has_untrusted(self) -> bool:
        """Whether this run or an enclosing one has remembered anything a value may be ``untrusted``
        by: a result of an untrusted tool, or a text whose words are not evidence."""
        ledger: Ledger | None = self
        while ledger is not None:
            if ledger._untrusted is not None or ledger._unvouched:
                return True
            ledger = ledger.parent
        return False

    def untrusted(self) -> Ledger:
        """The ledger of this run's untrusted results (made on first use)."""
        ledger = self._untrusted
        if ledger is None:
            with self._lock:
                ledger = self._untrusted
                if ledger is None:
                    ledger = Ledger(self.max_entries)
                    ledger._outsider = True
                    ledger._directed = self._directed
                    self._untrusted = ledger
        return ledger

    def __len__(self) -> int:
        return len(self._index)

    # -- writing --------------------------------------------------------------------------------------
    def remember(
        self,
        tool: str,
        result: Any,
        span_id: str,
        *,
        field_prefix: tuple = (),
        call_arguments: Mapping[str, Any] | None = None,
        unsourced: Mapping[str, Any] | None = None,
        trust: SourceTrust = VALUES,
    ) -> None:
        """Index every non-empty scalar leaf of ``result``. Never raises for odd values.

        ``call_arguments`` (the arguments of the call that produced ``result``) enable the ``path_join``
        projection: a listing's root argument joined with one of its entries. ``unsourced`` (name ->
        value of the call's unsourced arguments: not observed): echoes of these values — equal, or
        derived by case, space, path or zero-padding changes, or a piece of a path — are not evidence;
        when they are too big to examine, nothing of the result is. ``trust`` (:mod:`.trust`): at
        ``values`` (the default) the words inside the result's texts are not evidence of their own
        (found only there, a value is ``untrusted``); at ``trusted`` they are. An untrusted
        ``trust``: the result goes to the untrusted ledger, but for the records it vouches for and
        the fields it names (by their own name, anywhere), which stay here: a vouched record as
        ``trusted`` (the user or the system wrote it), a named field at ``values``. Fields named
        ``untrusted_fields`` go to the untrusted ledger, whatever the level.
        """
        if tool == SOURCE_INPUT:
            self._users_words = True
        echo = None
        if unsourced:
            echo = echo_of(unsourced, self.max_entries)
            if echo is TOO_BIG_TO_EXAMINE:
                return  # any part of the result may echo an argument too big to examine: fail closed
        self._remember(tool, result, span_id, field_prefix, call_arguments, echo, trust)

    def _remember(
        self,
        tool: str,
        result: Any,
        span_id: str,
        field_prefix: tuple,
        call_arguments: Mapping[str, Any] | None,
        echo: Echo | None,
        trust: SourceTrust,
    ) -> None:
        if not trust.trusted:
            if trust.records is not None:
                for prefix, record, vouched in trust.records_of(result, field_prefix):
                    self._remember(
                        tool,
                        record,
                        span_id,
                        prefix,
                        call_arguments,
                        echo,
                        TRUSTED if vouched else trust._replace(records=None),
                    )
                return
            self.untrusted()._remember(tool, result, span_id, field_prefix, call_arguments, echo, TRUSTED)
            if not trust.fields:
                return
        # the words of a ``values`` source are not evidence; those of the fields an untrusted tool
        # names as the system's (``trusted_fields``: an id, a date) are: the application vouched
        via = 0 if trust.words or not trust.trusted else UNVOUCHED
        if via:
            self._unvouched = True
        outsiders: list[tuple[tuple, Any]] = []
        with self._lock:
            before = len(self._index)
            room = self.max_entries
            if echo is not None and echo.keys:
                self._echo_spans[span_id] = echo.keys
                if len(self._echo_spans) > self.max_entries:
                    drop_older_half(self._echo_spans)
            # field names this walk noted (each is noted once per result, at the first container
            # using it; an identifier is never data, so a container of noted names has no data key)
            self._noted = set()
            with contextlib.suppress(Exception):  # an exotic container: keep what was indexed
                if not trust.trusted:
                    room = self._walk_fields(
                        tool, span_id, result, field_prefix, 0, room, trust.fields, echo, via
                    )
                elif trust.untrusted_fields:
                    room = self._walk_split(
                        tool,
                        span_id,
                        result,
                        field_prefix,
                        0,
                        room,
                        trust.untrusted_fields,
                        outsiders,
                        echo,
                        via,
                    )
                else:
                    room = self._walk(tool, span_id, result, field_prefix, 0, room, echo, via)
            added = len(self._index) != before or room < self.max_entries - 1
            if added and call_arguments:
                self._remember_call(span_id, call_arguments)
            if len(self._index) > self.max_entries:
                self._evict()
            if len(self._flags) > self.max_entries:
                drop_older_half(self._flags)
                self.evicted += 1
            if len(self._records) > self.max_entries:
                drop_older_half(self._records)
            if len(self._names) > self.max_entries:  # a name lost makes a mapping key unsourced: fails closed
                drop_older_half(self._names)
        if outsiders:  # fields an outsider writes, in records the system made: the untrusted ledger's
            untrusted = self.untrusted()
            for path, item in outsiders:
                untrusted._remember(tool, item, span_id, path, call_arguments, echo, TRUSTED)

    def next_attempt(self, tool: str, signature: tuple) -> int:
        """0 on the first call of ``tool`` with these argument digests in this run, then 1, 2, ..."""
        key = (tool, signature)
        with self._lock:
            attempt = self._attempts.get(key, 0)
            self._attempts[key] = attempt + 1
            if len(self._attempts) > self.max_entries:
                drop_older_half(self._attempts)
        return attempt


__all__ = [
    "LOCAL_CALL",
    "MAX_DEPTH",
    "Ledger",
    "Match",
    "Observation",
    "record_words",
    "safe_names",
    "safe_segment",
    "words_of",
]
