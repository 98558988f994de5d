"""The ledger's second index: tokens of texts, and the normal forms of dates and numbers.

The ledger's main index answers "was this exact value returned?" with one dict probe. Two questions
need more: "was this value written *inside* a longer text?" (an address in an e-mail body, a file
name in the user's request — projection ``in_text``) and "was this date or number written in another
form?" (``May 10, 2026`` for ``2026-05-10`` — ``datetime_normalised``; ``1,250.00`` for ``1250`` —
``number_normalised``). The rules are :mod:`.textforms`'.

Built **lazily**: remembering a result costs this index nothing; the ledger hands it the texts
remembered since it last read (sentences, texts that start with a digit or a currency sign) the first
time a lookup misses the main index. A run whose arguments all match exactly never pays for it.
Entries point at main-index keys, never at sources: a key's observation is resolved when matched, so
the newest source of a text wins here as in the main index, and a text the main index evicted is not
matched. Bounded like the ledger: past ``max_entries`` the older half of the tokens and forms go.

Texts whose words are not evidence (remembered from a ``values`` source, #44) are indexed apart and
looked at last: a value written in both the user's request and an e-mail's body is found in the
request, and one found only inside the body is reported as such (``trusted`` False).
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import islice

from . import projections as pj
from . import textforms as tf

MAX_KEYS_PER_TOKEN = 4  # texts kept per token, newest last: a common word's older texts are dropped

# main-index key -> its text before normalisation (None: evicted, or not a text)
Resolve = Callable[[str], "str | None"]


class TextIndex:
    """Tokens and normal forms of the texts a ledger has handed over."""

    __slots__ = ("_folded", "_forms", "_tokens", "_weak_forms", "_weak_tokens", "max_entries")

    def __init__(self, max_entries: int) -> None:
        self.max_entries = max_entries
        self._tokens: dict[str, list[str]] = {}  # token -> main-index keys of texts holding it
        self._forms: dict[str, tuple[str, bool]] = {}  # form key -> (main-index key, found inside a text)
        self._weak_tokens: dict[str, list[str]] = {}  # the same, for texts whose words are not evidence
        self._weak_forms: dict[str, tuple[str, bool]] = {}
        self._folded: dict[str, list[str]] = {}  # case-folded tokens of the user's own words

    @property
    def empty(self) -> bool:
        return not self._tokens and not self._forms and not self._weak_tokens and not self._weak_forms

    def add(self, key: str, text: str, vouched: bool = True, users: bool = False) -> None:
        """Index the tokens and forms of ``text``, remembered under the main-index ``key``; ``vouched``:
        its words are evidence (its source is trusted as a whole), not only the text as a whole;
        ``users``: the user's own words (the request, the inputs), also found in another case."""
        if users:
            for token in dict.fromkeys(piece.casefold() for piece in tf.tokens(text)):
                keys = self._folded.setdefault(token, [])
                if not keys or keys[-1] != key:
                    keys.append(key)
                    del keys[:-MAX_KEYS_PER_TOKEN]
        if vouched:
            tokens, forms = self._tokens, self._forms
        else:
            tokens, forms = self._weak_tokens, self._weak_forms
        pieces = tf.tokens(text)
        if pieces != [text]:  # a sentence, or a token in punctuation or space: what is written inside
            for token in dict.fromkeys(pieces):
                norm = pj.normalise(token)  # ``./out/a.txt`` is found as ``out/a.txt`` too
                for indexed in (token,) if norm is token else (token, norm):
                    keys = tokens.get(indexed)
                    if keys is None:
                        tokens[indexed] = [key]
                    elif keys[-1] != key:
                        keys.append(key)
                        if len(keys) > MAX_KEYS_PER_TOKEN:
                            del keys[0]
                number = tf.number_form(token)
                if number is not None and number[len(tf.NUMBER_KEY) :] != token:
                    forms[number] = (key, True)
            if len(pieces) > 1:
                for form in tf.dates_in_text(text):
                    forms[form] = (key, True)
        for form in tf.date_forms(text):  # the whole text is a date: not "inside" a text
            self._forms[form] = (key, False)  # a whole value: evidence wherever it was remembered
        number = tf.number_form(text)
        if number is not None and number[len(tf.NUMBER_KEY) :] != text:
            self._forms[number] = (key, False)
        for table in (tokens, forms, self._forms, self._folded):
            if len(table) > self.max_entries:
                for old in list(islice(table, len(table) // 2)):
                    del table[old]

    def find_in_text(self, value: str, resolve: Resolve) -> tuple[str, tuple[str, ...], bool] | None:
        """The main-index key of the newest text holding ``value`` on token boundaries, or None; with
        the normalisation steps a token needed to equal a one-token value (``./out/a.txt``), and
        whether the text's words are evidence (vouched texts are searched first)."""
        token = tf.first_token(value)
        if not token:
            return None
        for tokens, vouched in ((self._tokens, True), (self._weak_tokens, False)):
            for key in reversed(tokens.get(token, ())):
                text = resolve(key)
                if text is None or text == value:
                    continue
                if tf.in_text(value, text):
                    return key, (), vouched
                if token == value:  # one token, written in the text in another normal form
                    for piece in tf.tokens(text):
                        norm, steps = pj.normalise_steps(piece)
                        if steps and norm == value:
                            return key, steps, vouched
        found = self.find_in_users_words(value, resolve)
        return (*found, True) if found is not None else None

    def find_in_users_words(self, value: str, resolve: Resolve) -> tuple[str, tuple[str, ...]] | None:
        """The main-index key of the user's own text (the request, the inputs) holding ``value`` on
        token boundaries — as written, else in another case (``casefold``: the user's "family reunion"
        as a title) — with the steps; or None."""
        token = tf.first_token(value)
        if not token:
            return None
        folded = value.casefold()
        for key in reversed(self._folded.get(token.casefold(), ())):
            text = resolve(key)
            if text is None:
                continue
            if tf.in_text(value, text):
                return key, ()
            if tf.in_text(folded, text.casefold()):
                return key, (pj.CASEFOLD,)
        return None

    def find_form(self, form: str, resolve: Resolve) -> tuple[str, bool, bool] | None:
        """``(main-index key, inside a text, evidence)`` of the newest text with this date/number form,
        or None: vouched texts and whole values first, then inside texts whose words are not evidence."""
        for forms, vouched in ((self._forms, True), (self._weak_forms, False)):
            found = forms.get(form)
            if found is not None and resolve(found[0]) is not None:
                return found[0], found[1], vouched
        return None


__all__ = ["TextIndex"]
