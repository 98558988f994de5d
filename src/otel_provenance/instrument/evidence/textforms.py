"""Text forms: values inside a sentence, the normal forms of dates and numbers, destination-like values.

Pure functions the ledger and the classifier share, so that a value is read the same way when it is
remembered and when an argument is compared with it:

* **Tokens.** A text is split on whitespace; a *token* is one piece with opening punctuation
  (``( [ { < " ' *``, the back-tick and the typographic ``“ ‘ « „``) stripped from its start and
  closing punctuation (``. , ; : ! ? ) ] } > " ' *``, the back-tick and ``” ’ »``) from its end; the
  value of a ``name=value`` token is a token too. :func:`in_text` finds a value
  inside a text only on token boundaries: ``bob@example.com`` is in ``"write to <bob@example.com>."``
  but ``example.com`` is not in ``"bob@example.com"`` nor in ``"mail.example.com"``.
* **Dates and times** (:func:`date_forms`, :func:`dates_in_text`). Recognised forms: ISO 8601
  (``2026-05-10``, ``2026-05-10T14:00``, ``2026-05-10 14:00:00.5``, with ``Z`` or ``±HH:MM``; RFC 3339's
  lower-case ``t`` and ``z`` too),
  year-first with slashes (``2026/05/10``), and English month names, full or abbreviated, day first or
  month first (``10 May 2026``, ``May 10, 2026``, ``Sun, 10 May 2026 14:00:00 +0000`` — the e-mail
  ``Date`` header — ``May 10th, 2026 at 2:30 pm``). Day/month orders that are ambiguous
  (``05/10/2026``) are **not** read: a projection must never pick a meaning. Each found date gives a
  key ``d:YYYY-MM-DD`` (the calendar date as written) and, with a time, ``dt:YYYY-MM-DDTHH:MM:SS``
  (the same instant: a time with an offset is converted to UTC and written ``…+00:00``; a time
  without one stays local and never equals a time with one). Inside a longer text, a date and a
  time of day written apart (``on May 27, 2026 from 10:30 to 11:00``) also give the instants of
  each date with each time (``2026-05-27T10:30:00``, ``2026-05-27T11:00:00``), local.
* **Numbers** (:func:`number_form`): a decimal written with a currency sign (``$ € £``), comma
  thousands groups of three digits (``1,250``, ``1,250.00``), or trailing zeros (``45.90``) has the
  key ``n:`` + its plain decimal (``1250``, ``45.9``) — English notation; ``1.250,00`` is not read,
  nor is ``042``.
* **Destinations** (:func:`looks_like_destination`): a whole value that is an e-mail address, a URL,
  an IBAN or a long account/phone/card number; :func:`destinations_in` finds such tokens inside a
  text.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import re
import unicodedata
from decimal import Decimal, InvalidOperation
from itertools import islice
from typing import Final

OPENING: Final = "([{<\"'*`\u201c\u2018\u00ab\u201e"  # with the typographic quotes “ ‘ « „
CLOSING: Final = ".,;:!?)]}>\"'*`\u201d\u2019\u00bb"  # ” ’ »
_LEFT_OK: Final = re.compile(r"(?:^|\s|=)[" + re.escape(OPENING) + r"]*$")
_RIGHT_OK: Final = re.compile(r"[" + re.escape(CLOSING) + r"]*(?:\s|$)|\.(?=[A-Z][a-z])")
# a sentence that ends without its space: "see www.example.com.They said" ends a token at ".T"
_RUN_ON: Final = re.compile(r"(?<=[a-z0-9])\.(?=[A-Z][a-z])")
LEFT_CONTEXT: Final = 16  # opening punctuation considered before a value (more is not a token boundary)

DATE_KEY: Final = "d:"
DATETIME_KEY: Final = "dt:"
NUMBER_KEY: Final = "n:"

_MONTHS: Final = {
    name: number
    for number, names in enumerate(
        (
            ("january", "jan"),
            ("february", "feb"),
            ("march", "mar"),
            ("april", "apr"),
            ("may",),
            ("june", "jun"),
            ("july", "jul"),
            ("august", "aug"),
            ("september", "sep", "sept"),
            ("october", "oct"),
            ("november", "nov"),
            ("december", "dec"),
        ),
        start=1,
    )
    for name in names
}
_MONTH: Final = r"(?:" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
MONTH_PATTERN: Final = _MONTH  # an English month name, full or abbreviated (derived values read it)


def month_number(name: str) -> int | None:
    """1-12 for an English month name, full or abbreviated (``Sept.``), else None."""
    return _MONTHS.get(name.lower().rstrip("."))


_TIME: Final = (
    r"(?:,?\s+(?:at\s+)?(?P<h>\d{1,2})(?::(?P<mi>\d{2})(?::(?P<s>\d{2}))?)?\s*(?P<ampm>[ap]\.?m\.?)?"
    r"(?:\s*(?P<tz>Z|UTC|GMT|[+-]\d{2}:?\d{2}))?)?"
)
_NAMED_DATE: Final = re.compile(
    r"(?<![\w-])(?:(?P<d1>\d{1,2})(?:st|nd|rd|th)?\s+(?P<m1>" + _MONTH + r"),?\s+(?P<y1>\d{4})"
    r"|(?P<m2>" + _MONTH + r")\s+(?P<d2>\d{1,2})(?:st|nd|rd|th)?,?\s+(?P<y2>\d{4}))" + _TIME + r"(?![\w-])",
    re.IGNORECASE,
)
_ISO_DATE: Final = re.compile(
    r"(?<![\w-])(?P<y>\d{4})(?P<sep>[-/])(?P<mo>\d{2})(?P=sep)(?P<d>\d{2})"
    r"(?:[Tt ](?P<h>\d{2}):(?P<mi>\d{2})(?::(?P<s>\d{2})(?:\.(?P<fr>\d{1,6}))?)?"
    r"(?P<tz>[Zz]|[+-]\d{2}:?\d{2})?)?(?![\w-])"
)
_NUMBER: Final = re.compile(r"[$€£]?\s?(?P<n>(?:[1-9]\d{0,2}(?:,\d{3})+|0|[1-9]\d*)(?:\.\d+)?)")
_TIME_OF_DAY: Final = re.compile(
    r"(?<![\w:.])(?P<h>\d{1,2})"
    r"(?::(?P<mi>\d{2})(?::(?P<s>\d{2}))?\s*(?P<ampm>[ap]\.?m\.?)?|\s*(?P<ampm2>[ap]\.?m\.?))(?![\w:])",
    re.IGNORECASE,
)
MAX_DATES_TIMES: Final = 16  # dates and times each, per text, combined into instants
_DESTINATION: Final = re.compile(
    r"[^@\s<>()\[\],;:\"']+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+"  # an e-mail address
    r"|(?:[A-Za-z][A-Za-z0-9+.-]*://|www\.)\S+"  # a URL
    r"|[A-Z]{2}\d{2}(?: ?[A-Z0-9]){11,30}"  # an IBAN
    r"|\+?\d(?:[ -]?\d){7,}"  # a long account, card or phone number
)


def nfc(text: str) -> str:
    return text if text.isascii() else unicodedata.normalize("NFC", text)


def first_token(value: str) -> str | None:
    """The token a value starts with, as it would be indexed from a text; None for an empty value."""
    head = value.split(None, 1)
    if not head:
        return None
    token = head[0].lstrip(OPENING).rstrip(CLOSING)
    return token or None


def tokens(text: str) -> list[str]:
    """The non-empty tokens of a text (whitespace-split, boundary punctuation stripped), and the
    value of each ``name=value`` token (``id=ACC-1``, ``--out=report.txt``: ``ACC-1``,
    ``report.txt``), as logfmt, environment listings and command lines write them; and the pieces of
    two sentences written without the space between (``www.example.com.They``)."""
    out = []
    for piece in text.split():
        token = piece.lstrip(OPENING).rstrip(CLOSING)
        if token:
            out.append(token)
            name, equals, value = token.partition("=")
            if equals and name and (value := value.lstrip(OPENING)):
                out.append(value)
            if "." in token and _RUN_ON.search(token):  # two sentences without the space between
                out.extend(part for part in _RUN_ON.split(token) if part)
    return out


def in_text(value: str, text: str) -> bool:
    """Whether ``value`` occurs in ``text`` on token boundaries (both NFC); an ``=`` before it is a
    boundary too (the value of a ``name=value`` token)."""
    value, text = nfc(value), nfc(text)
    if not value or value != value.strip():
        return False
    start = text.find(value)
    while start >= 0:
        end = start + len(value)
        if _LEFT_OK.search(text, max(0, start - LEFT_CONTEXT), start) and _RIGHT_OK.match(text, end):
            return True
        start = text.find(value, start + 1)
    return False


def number_form(text: str) -> str | None:
    """``n:`` + the plain decimal of a number written as text (see the module docstring), or None."""
    match = _NUMBER.fullmatch(text.strip())
    if match is None:
        return None
    try:
        number = Decimal(match["n"].replace(",", ""))
    except InvalidOperation:  # pragma: no cover - the pattern only admits decimals
        return None
    if number == number.to_integral_value():
        return NUMBER_KEY + str(int(number))
    return NUMBER_KEY + format(number.normalize(), "f")


def date_forms(text: str) -> tuple[str, ...]:
    """The date keys of a text that is, as a whole, a date or a date and time; ``()`` otherwise."""
    text = text.strip()
    for pattern in (_ISO_DATE, _NAMED_DATE):
        match = pattern.fullmatch(text)
        if match is not None:
            return _keys(match)
    return ()


def dates_in_text(text: str) -> list[str]:
    """The date keys of every date (and time) written inside a longer text, and the local instants
    of each date with each time of day written elsewhere in it."""
    out: list[str] = []
    taken: list[tuple[int, int]] = []  # a time inside a written date-and-time belongs to that date
    for pattern in (_ISO_DATE, _NAMED_DATE):
        for match in pattern.finditer(text):
            out.extend(_keys(match))
            taken.append(match.span())
    dates = [key[len(DATE_KEY) :] for key in dict.fromkeys(out) if key.startswith(DATE_KEY)]
    if dates:
        times = []
        found = (m for m in _TIME_OF_DAY.finditer(text) if not any(a <= m.start() < b for a, b in taken))
        for match in islice(found, MAX_DATES_TIMES):
            groups = dict(match.groupdict())
            groups["ampm"] = groups["ampm"] or groups.pop("ampm2")
            times.append(groups)
        for day in dates[:MAX_DATES_TIMES]:
            date = _dt.date.fromisoformat(day)
            for groups in times:
                with contextlib.suppress(ValueError):
                    out.append(DATETIME_KEY + _instant(date, groups))
    return out


def _keys(match: re.Match[str]) -> tuple[str, ...]:
    groups = match.groupdict()
    try:
        if "y" in groups:
            year, month, day = int(groups["y"]), int(groups["mo"]), int(groups["d"])
        else:
            year = int(groups["y1"] or groups["y2"])
            month = _MONTHS[(groups["m1"] or groups["m2"]).lower().rstrip(".")]
            day = int(groups["d1"] or groups["d2"])
        date = _dt.date(year, month, day)
        keys = [DATE_KEY + date.isoformat()]
        hour = groups.get("h")
        if hour is not None and (groups.get("mi") is not None or groups.get("ampm")):
            keys.append(DATETIME_KEY + _instant(date, groups))
    except (ValueError, KeyError, OverflowError):
        return ()
    return tuple(keys)


def _instant(date: _dt.date, groups: dict[str, str | None]) -> str:
    hour = int(groups["h"] or 0)
    ampm = (groups.get("ampm") or "").lower().replace(".", "")
    if ampm:
        if not 1 <= hour <= 12:
            raise ValueError("12-hour clock")
        hour = hour % 12 + (12 if ampm == "pm" else 0)
    fraction = groups.get("fr") or ""
    moment = _dt.datetime(
        date.year,
        date.month,
        date.day,
        hour,
        int(groups.get("mi") or 0),
        int(groups.get("s") or 0),
        int(fraction.ljust(6, "0")) if fraction else 0,
    )
    zone = groups.get("tz")
    if zone:
        moment = moment.replace(tzinfo=_zone(zone)).astimezone(_dt.UTC)
    return moment.isoformat()


def _zone(text: str) -> _dt.tzinfo:
    if text.upper() in ("Z", "UTC", "GMT"):
        return _dt.UTC
    digits = text[1:].replace(":", "")
    offset = _dt.timedelta(hours=int(digits[:2]), minutes=int(digits[2:]))
    return _dt.timezone(-offset if text[0] == "-" else offset)


def looks_like_destination(value: str) -> bool:
    """Whether a whole value is an e-mail address, a URL, an IBAN or a long account/phone number — not
    a date written with digits (``2026-06-12`` has eight of them, and sends nothing anywhere).

    In any of the spellings that still send data there (#50): wrapped in a token's punctuation
    (``<bob@example.com>``, ``"GB33…",``), as a ``mailto:`` link, with invisible format characters
    (a zero-width space) or compatibility forms (full-width letters, ``＠``) in it, and an IBAN in
    lower case when its check digits hold (so that a lower-case slug is not one by chance)."""
    text = destination_text(value)
    if not text or len(text) > 2048 or not _may_be_destination(text):
        return False
    if _DESTINATION.fullmatch(text) is not None:
        return not (text[0].isdigit() and date_forms(text))
    return _IBAN_ANY_CASE.fullmatch(text) is not None and _iban_checks(text)


def destination_text(value: str) -> str:
    """The text a value sends data to: stripped, without format characters, in compatibility form
    (NFKC), unwrapped from a token's punctuation, without a ``mailto:`` scheme — how two spellings of
    one destination are compared."""
    text = value.strip()
    if not text.isascii():
        text = unicodedata.normalize("NFKC", "".join(c for c in text if unicodedata.category(c) != "Cf"))
        text = text.strip()
    if len(text.split()) == 1:
        text = text.lstrip(OPENING).rstrip(CLOSING)
        if text[:7].lower() == "mailto:":
            text = text[7:].partition("?")[0]
    return text


_IBAN_ANY_CASE: Final = re.compile(r"[A-Za-z]{2}\d{2}(?: ?[A-Za-z0-9]){11,30}")


def _iban_checks(text: str) -> bool:
    """ISO 13616's check: the IBAN, its first four characters moved to the end and letters read as
    10-35, is 1 modulo 97."""
    compact = text.replace(" ", "").upper()
    digits = "".join(str(int(c, 36)) for c in compact[4:] + compact[:4])
    return int(digits) % 97 == 1


def destination_form(value: str) -> str | None:
    """``email``, ``url``, ``iban`` or ``number`` for a whole value that is a destination of that form
    (:func:`looks_like_destination`), else None."""
    if not looks_like_destination(value):
        return None
    text = destination_text(value)
    if "@" in text and "://" not in text:
        return "email"
    if "://" in text or text[:4].lower() == "www.":
        return "url"
    return "iban" if text[:2].isalpha() else "number"


def destinations_in(text: str) -> list[str]:
    """The tokens of a text that look like destinations (:func:`looks_like_destination`)."""
    if text.isascii() and not _ascii_may_hold_destination(text):
        return []
    return [token for token in tokens(text) if looks_like_destination(token)]


_DIGIT: Final = re.compile(r"[0-9]")


def _ascii_may_hold_destination(text: str) -> bool:
    """:func:`_may_be_destination` over a whole ASCII text: every token, and what
    :func:`destination_text` keeps of it, is a piece of the text, so a text without an @, a scheme,
    ``www.`` or a digit in eight characters or more holds no destination (checked before splitting
    it: most texts a tool returns are not destinations). A text with other characters is split and
    checked token by token (NFKC can make an @ of a full-width one)."""
    return (
        "@" in text or "://" in text or "www." in text or (len(text) >= 8 and _DIGIT.search(text) is not None)
    )


def _may_be_destination(token: str) -> bool:
    """A cheap test before the pattern: an @, a scheme, www., or 8 characters or more that end in a
    digit or have digits in third and fourth place (an IBAN)."""
    return (
        "@" in token
        or "://" in token
        or token[:4] == "www."
        or (len(token) >= 8 and (token[-1].isdigit() or token[2:4].isdigit()))
    )


__all__ = [
    "DATETIME_KEY",
    "DATE_KEY",
    "NUMBER_KEY",
    "date_forms",
    "dates_in_text",
    "destination_form",
    "destination_text",
    "destinations_in",
    "first_token",
    "in_text",
    "looks_like_destination",
    "nfc",
    "number_form",
    "tokens",
]
