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

    __slots__ = ("_forms", "_tokens", "max_entries")

    def __init__(self, max_entries: int) -> None:
        self.max_entries = max_entries
        self._tokens: dict[str, list[str]] = {}  # token -> main-index keys of texts holding it
        self._forms: dict[str, tuple[str, bool]] = {}  # form key -> (main-index key, found inside a text)

    @property
    def empty(self) -> bool:
        return not self._tokens and not self._forms

    def add(self, key: str, text: str) -> None:
        """Index the tokens and forms of ``text``, remembered under the main-index ``key``."""
        tokens, forms = self._tokens, self._forms
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
            forms[form] = (key, False)
        number = tf.number_form(text)
        if number is not None and number[len(tf.NUMBER_KEY) :] != text:
            forms[number] = (key, False)
        for table in (tokens, forms):
            if len(table) > self.max_entries:
                for old in list(islice(table, len(table) // 2)):
                    del table[old]

    def find_in_text(self, value: str, resolve: Resolve) -> tuple[str, tuple[str, ...]] | None:
        """The main-index key of the newest text holding ``value`` on token boundaries, or None; with
        the normalisation steps a token needed to equal a one-token value (``./out/a.txt``)."""
        token = tf.first_token(value)
        for key in reversed(self._tokens.get(token, ()) if token else ()):
            text = resolve(key)
            if text is None or text == value:
                continue
            if tf.in_text(value, text):
                return key, ()
            if token == value:  # one token, written in the text in another normal form
                for piece in tf.tokens(text):
                    norm, steps = pj.normalise_steps(piece)
                    if steps and norm == value:
                        return key, steps
        return None

    def find_form(self, form: str, resolve: Resolve) -> tuple[str, bool] | None:
        """``(main-index key, inside a text)`` of the newest text with this date/number form, or None."""
        found = self._forms.get(form)
        if found is None or resolve(found[0]) is None:
            return None
        return found


__all__ = ["TextIndex"]
