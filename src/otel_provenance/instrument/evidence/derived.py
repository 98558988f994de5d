"""Derived values: a date, a time or an amount the agent computed from values the run sourced (#44).

A model rarely copies every value: it ends a one-hour meeting an hour after it starts, books "the 11th
of January" in the year the user means, refunds "the difference" or adds 10 %. Such a value is found
nowhere, so a plain lookup calls it ``assumed``; trusting the model's arithmetic blindly would let any
number through. Instead the arithmetic is *re-done* here, from **operands** the run sourced — the
user's request and inputs, whole values of results, the words of trusted texts (never a value found
only where an outsider may have written it) — and the argument is sourced only when it is one of the
results (projection ``derived``):

* **Dates** (``d:`` keys): a date is a sourced date plus or minus a sourced whole number of days
  (``for 3 days``, ``a week``); or a month and day the request wrote without a year
  (``October 15th``), in any year.
* **Instants** (``dt:`` keys): a date and time on a sourced date, at a sourced time of that date plus
  or minus a sourced duration (``at 12:00 … for one hour`` gives ``13:00``; an event moved to 10:00
  keeps its length), or at the day's start or end (``00:00``, ``23:59``: an all-day entry); or, when
  nothing sourced a time on that date at all — the user named only the day — at any time: a reminder
  "on October 15th" at 09:00 is the agent's to place, the day is not.
* **Numbers**: one or two operations (``+ − × ÷``), each between a sourced number and a number the
  *user* gave — one written in the request or the inputs (``12.00 in total``), or its half, third or
  quarter (``our share``), or a percentage the request wrote applied to the sourced number (``10%``,
  ``19.5%``: ``a × p/100``, ``a × (1 ± p/100)``). Compared exactly after rounding both to the cent.
  Sourced numbers are at most the :data:`MAX_NUMBERS` most recent, so chance matches stay rare; an
  amount is a payload — what decides where money goes is its recipient, which no derivation sources.

Pure: the ledger hands in its operands (:class:`Operands`); nothing here reads a ledger.
"""

from __future__ import annotations

import datetime as _dt
import re
from collections.abc import Iterable
from decimal import Decimal, InvalidOperation
from typing import Any, Final

from . import textforms as tf

DERIVED: Final = "derived"  # the projection (``projections.DERIVED``)
MAX_NUMBERS: Final = 64  # the most recent sourced numbers an amount may be computed from
RECENT: Final = 64  # of which the newest may take a second operation
MAX_DAYS: Final = 31  # a date may be a sourced date plus or minus this many days at most
SHARES: Final = (Decimal(2), Decimal(3), Decimal(4))  # a request's number split: "our share"
_CENT: Final = Decimal("0.01")
_NAN: Final = Decimal("NaN")

_WORD_NUMBERS: Final = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
    "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12,
}  # fmt: skip
MAX_MINUTES: Final = 24 * 60  # a duration of a time of day: at most a day
_DAY_EDGES: Final = frozenset({_dt.time(0, 0), _dt.time(23, 59), _dt.time(23, 59, 59)})
_CLOCK_DURATION: Final = re.compile(
    r"\b(?P<n>\d{1,4}|" + "|".join(_WORD_NUMBERS) + r")[\s-]+(?P<unit>hours?|hrs?|minutes?|mins?)\b",
    re.IGNORECASE,
)
_WEEKDAYS: Final = {
    name: number
    for number, names in enumerate(
        (("monday",), ("tuesday",), ("wednesday",), ("thursday",), ("friday",), ("saturday",), ("sunday",))
    )
    for name in names
}  # fmt: skip
_OFFSETS: Final = {"today": 0, "tonight": 0, "tomorrow": 1, "yesterday": -1}
_RELATIVE_DAY: Final = re.compile(
    r"\b(?:" + "|".join(sorted({*_WEEKDAYS, *_OFFSETS}, key=len, reverse=True)) + r")\b"
    r"|(?<![\w.])(?P<ordinal>\d{1,2})(?:st|nd|rd|th)\b",
    re.IGNORECASE,
)
_DAYS_PER: Final = {"day": 1, "days": 1, "week": 7, "weeks": 7, "night": 1, "nights": 1}
_DURATION: Final = re.compile(
    r"\b(?P<n>\d{1,3}|" + "|".join(_WORD_NUMBERS) + r")[\s-]+(?P<unit>days?|weeks?|nights?)\b", re.IGNORECASE
)
_PERCENT: Final = re.compile(r"(?<![\w.])(?P<p>\d{1,3}(?:\.\d{1,3})?)\s?(?:%|percent\b)", re.IGNORECASE)
_MONTH_DAY: Final = re.compile(
    r"(?<![\w-])(?:(?P<m1>" + tf.MONTH_PATTERN + r")\s+(?P<d1>\d{1,2})(?:st|nd|rd|th)?"
    r"|(?:the\s+)?(?P<d2>\d{1,2})(?:st|nd|rd|th)?\s+(?:of\s+)?(?P<m2>" + tf.MONTH_PATTERN + r"))"
    r"(?![\w-])",
    re.IGNORECASE,
)


class Operands:
    """What a run sourced that a derived value may be computed from. Built by the ledger; read here."""

    __slots__ = (
        "dates", "days_of_month", "durations", "month_days", "numbers", "offsets", "percents",
        "request_numbers", "spans", "times", "weekdays",
    )  # fmt: skip

    def __init__(self) -> None:
        self.dates: dict[_dt.date, str] = {}  # sourced calendar date -> the main-index key it came from
        self.times: dict[_dt.date, set[_dt.time]] = {}  # sourced times of day, by date
        self.durations: set[_dt.timedelta] = set()  # "one hour", "90 minutes"; a record's end - start
        self.month_days: dict[tuple[int, int], str] = {}  # (month, day) written without a year
        self.spans: set[int] = set()  # whole numbers of days written in trusted texts ("3 days")
        self.weekdays: set[int] = set()  # "on Saturday": 0 (Monday) to 6
        self.days_of_month: set[int] = set()  # "the 18th"
        self.offsets: set[int] = set()  # "today" 0, "tomorrow" 1, "yesterday" -1
        self.numbers: dict[Decimal, str] = {}  # sourced number (to the cent) -> key, newest last
        self.request_numbers: dict[Decimal, str] = {}  # numbers written in the request or inputs
        self.percents: set[Decimal] = set()

    def any_for(self, dates: bool) -> bool:
        """Whether anything here may be an operand of a date (``dates``) or of a number."""
        return bool(self.dates or self.month_days) if dates else bool(self.numbers)

    @classmethod
    def merged(cls, parts: list[Operands]) -> Operands:
        """One view of several ledgers' operands (a run's, its untrusted results', an enclosing run's)."""
        if len(parts) == 1:
            return parts[0]
        out = cls()
        for part in reversed(parts):  # the nearest ledger's keys win
            for day, key in part.dates.items():
                out.dates[day] = key
            for day, times in part.times.items():
                out.times.setdefault(day, set()).update(times)
            out.durations |= part.durations
            out.month_days.update(part.month_days)
            out.spans |= part.spans
            out.weekdays |= part.weekdays
            out.days_of_month |= part.days_of_month
            out.offsets |= part.offsets
            out.numbers.update(part.numbers)
            out.request_numbers.update(part.request_numbers)
            out.percents |= part.percents
        return out

    def add_text(self, key: str, text: str, *, request: bool) -> None:
        """The words of a text whose words are evidence: its dates, numbers, durations, percentages."""
        for form in tf.dates_in_text(text) + list(tf.date_forms(text)):
            self._add_form(key, form)
        for match in _MONTH_DAY.finditer(text):
            month = tf.month_number(match["m1"] or match["m2"])
            day = int(match["d1"] or match["d2"])
            if month is not None and 1 <= day <= 31:
                self.month_days.setdefault((month, day), key)
        for match in _CLOCK_DURATION.finditer(text):
            count = match["n"].lower()
            number = _WORD_NUMBERS.get(count) or int(count)
            minutes = number * (60 if match["unit"].lower().startswith("h") else 1)
            if 0 < minutes <= MAX_MINUTES:
                self.durations.add(_dt.timedelta(minutes=minutes))
        for match in _DURATION.finditer(text):
            count = match["n"].lower()
            number = _WORD_NUMBERS.get(count) or int(count)
            days = number * _DAYS_PER[match["unit"].lower()]
            if 0 < days <= MAX_DAYS:
                self.spans.add(days)
        for match in _RELATIVE_DAY.finditer(text):
            word = match[0].lower()
            if word in _OFFSETS:
                self.offsets.add(_OFFSETS[word])
            elif word in _WEEKDAYS:
                self.weekdays.add(_WEEKDAYS[word])
            else:
                day = int(match["ordinal"])
                if 1 <= day <= 31:
                    self.days_of_month.add(day)
        for match in _PERCENT.finditer(text):
            self.percents.add(Decimal(match["p"]))
        for token in tf.tokens(text):
            number = tf.number_form(token)
            if number is not None:
                self.add_number(key, Decimal(number[len(tf.NUMBER_KEY) :]), request=request)

    def add_value(self, key: str, text: str) -> None:
        """A whole value (a field of a result): a date or a number, if it is one."""
        for form in tf.date_forms(text):
            self._add_form(key, form)
        number = tf.number_form(text)
        if number is not None:
            self.add_number(key, Decimal(number[len(tf.NUMBER_KEY) :]), request=False)

    def add_number(self, key: str, number: Decimal, *, request: bool) -> None:
        if not number.is_finite():
            return
        cents = _cents(number)
        numbers = self.numbers
        numbers.pop(cents, None)  # newest last
        numbers[cents] = key
        if len(numbers) > MAX_NUMBERS:
            del numbers[next(iter(numbers))]
        if request:
            self.request_numbers[cents] = key

    def add_length(self, start: str, end: str) -> None:
        """Two date-and-time values of one record (an event's start and end): its length is a duration
        a rescheduled copy may keep."""
        first, second = tf.date_forms(start), tf.date_forms(end)
        if len(first) > 1 and len(second) > 1:
            length = _instant(second[1]) - _instant(first[1])
            if _dt.timedelta(0) < length <= _dt.timedelta(minutes=MAX_MINUTES):
                self.durations.add(length)

    def _add_form(self, key: str, form: str) -> None:
        if form.startswith(tf.DATE_KEY):
            self.dates.setdefault(_dt.date.fromisoformat(form[len(tf.DATE_KEY) :]), key)
        elif form.startswith(tf.DATETIME_KEY):
            moment = _instant(form)
            self.dates.setdefault(moment.date(), key)
            self.times.setdefault(moment.date(), set()).add(moment.time())


def derive_date(text: str, operands: Operands) -> str | None:
    """The main-index key of the operand a date or date-and-time argument is derived from, or None."""
    forms = tf.date_forms(text)
    if not forms:
        return None
    day = _dt.date.fromisoformat(forms[0][len(tf.DATE_KEY) :])
    found = operands.dates.get(day) or operands.month_days.get((day.month, day.day))
    if found is not None and len(forms) > 1 and not _time_sourced(_instant(forms[1]), operands):
        return None
    if found is not None:
        return found
    for span in operands.spans:
        for other in (day - _dt.timedelta(days=span), day + _dt.timedelta(days=span)):
            found = operands.dates.get(other)
            if found is not None:
                return found
    if day.weekday() in operands.weekdays or day.day in operands.days_of_month or operands.offsets:
        for anchor, key in operands.dates.items():  # "on Saturday", "the 18th", "tomorrow" from a date
            after = (day - anchor).days
            if (
                after in operands.offsets
                or (0 < after <= 7 and day.weekday() in operands.weekdays)
                or (0 < after <= 31 and day.day in operands.days_of_month)
            ):
                return key if len(forms) < 2 or _time_sourced(_instant(forms[1]), operands) else None
    return None


def _time_sourced(moment: _dt.datetime, operands: Operands) -> bool:
    """A time of day on a sourced date: at a sourced time of that date, plus or minus a sourced
    duration; at the day's start or end; or any time when nothing sourced a time on that date."""
    times = operands.times.get(moment.date())
    clock = moment.time().replace(tzinfo=None)
    if not times or clock in _DAY_EDGES:
        return True
    for known in times:
        base = _dt.datetime.combine(moment.date(), known.replace(tzinfo=None))
        plain = moment.replace(tzinfo=None)
        if base == plain or any(plain in (base + d, base - d) for d in operands.durations):
            return True
    return False


def _instant(form: str) -> _dt.datetime:
    return _dt.datetime.fromisoformat(form[len(tf.DATETIME_KEY) :])


def derive_number(text: str, operands: Operands) -> str | None:
    """The main-index key of an operand a number argument is computed from, or None: ``a op s`` or
    ``(a op s) op t`` — ``a`` any sourced number; ``s`` and ``t`` the user's: a number of the request
    (or a half, a third or a quarter of one: "our share of the 12.00") or a percentage of the request
    applied to ``a`` (``a × p/100``, ``a × (1 ± p/100)``). One side of every operation is the user's."""
    form = tf.number_form(text)
    if form is None or not operands.numbers:
        return None
    target = _cents(Decimal(form[len(tf.NUMBER_KEY) :]))
    pool = operands.numbers  # a number found as it is is a lookup's, with the short-value floor
    requested = list(operands.request_numbers)
    small = {*requested, *(_cents(r / k) for r in requested for k in SHARES)}
    found = _one_step(target, pool, small, operands.percents)
    if found is not None:
        return found
    for c in requested:  # (a op s) op c
        for partial, op in _partials(target, c):
            if partial in (0, target, c) or _cents(op(partial)) != target:
                continue  # "x - x + t" is no computation: the value as it is is a lookup's
            if found := _one_step(partial, pool, small, operands.percents, (c, target)):
                return found
    return None


def _one_step(
    target: Decimal,
    pool: dict[Decimal, str],
    small: set[Decimal],
    percents: Iterable[Decimal],
    used: tuple[Decimal, ...] = (),
) -> str | None:
    """``target`` is one operation over a pooled number ``a`` and a number ``s`` of the user's, or a
    percentage of ``a``: the key of ``a``, or None. Every candidate is checked by doing the operation,
    exactly, to the cent."""
    cancels = target in _CANCELLED
    for a, key in reversed(pool.items()):
        if a == target or not a or a in used:
            continue  # the value itself, nothing to compute from, or an operand used already
        banned = (0, target, *used, a) if cancels else (0, target, *used)  # a − a, a ÷ a: nothing
        for b, op in _partials(target, a):
            if b in small and b not in banned and _cents(op(b)) == target:
                return key
        for b in small:  # a product or quotient rounded to the cent has no exact inverse: try each
            if b not in banned and target in (_cents(a * b), _cents(a / b), _cents(b / a)):
                return key
        for p in percents:
            share = a * p / 100
            if target in (_cents(share), _cents(a + share), _cents(a - share)):
                return key
    return None


_CANCELLED = frozenset({Decimal(0), Decimal(1)})


def _partials(target: Decimal, a: Decimal) -> list[tuple[Decimal, Any]]:
    """Candidates ``b`` (to the cent) with ``a + b``, ``a − b``, ``b − a``, ``a × b``, ``a ÷ b`` or
    ``b ÷ a`` near ``target``, each with the operation that must give ``target`` exactly from it."""
    out: list[tuple[Decimal, Any]] = [
        (_cents(target - a), lambda b: a + b),
        (_cents(a - target), lambda b: a - b),
        (_cents(target + a), lambda b: b - a),
    ]
    if a:
        out.append((_cents(target / a), lambda b: a * b))
        out.append((_cents(target * a), lambda b: b / a))
    if target:
        out.append((_cents(a / target), lambda b: a / b if b else _NAN))
    return out


def _cents(number: Decimal) -> Decimal:
    try:
        return number.quantize(_CENT)
    except InvalidOperation:  # too large to hold cents: compared as it is
        return number


__all__ = ["DERIVED", "Operands", "derive_date", "derive_number"]
