"""Every offline result in one word — pass, fail, insufficient, error — with the exit code it means.

A rule's verdict on a run, an audit, a run's status and a release's decision are all an
:class:`Outcome`. One spelling differs by where it is written, as reports and the JSON Schema of the
reports always had it: a rule or an audit lacks *evidence* (``insufficient_evidence``, the value), a
run or a release has too little *data* (``insufficient_data``, :attr:`Outcome.decision`).
"""

from __future__ import annotations

import enum
from collections.abc import Collection
from typing import Final


class Outcome(enum.StrEnum):
    PASS = "pass"
    FAIL = "fail"
    INSUFFICIENT = "insufficient_evidence"
    ERROR = "error"

    @property
    def exit_code(self) -> int:
        """0 pass · 2 fail · 3 insufficient · 1 error: nothing but a pass exits 0, nothing but a
        failed threshold exits 2."""
        return _EXIT_CODES[self]

    @property
    def decision(self) -> str:
        """How a run's status and a release's decision spell it (``insufficient_data``)."""
        return INSUFFICIENT_DATA if self is Outcome.INSUFFICIENT else self.value

    @classmethod
    def of(cls, text: str) -> Outcome:
        """The outcome ``text`` names, in either spelling."""
        return cls.INSUFFICIENT if text == INSUFFICIENT_DATA else cls(text)


INSUFFICIENT_DATA: Final = "insufficient_data"
_EXIT_CODES: Final = {Outcome.PASS: 0, Outcome.FAIL: 2, Outcome.INSUFFICIENT: 3, Outcome.ERROR: 1}


def worst(outcomes: Collection[Outcome]) -> Outcome:
    """The worst of ``outcomes``: error, then fail, then insufficient; pass when none is worse. How a
    run's status is made from its rules' verdicts, and the guard's verdict on a run from its parts."""
    return next((outcome for outcome in _WORST_FIRST if outcome in outcomes), Outcome.PASS)


_WORST_FIRST: Final = (Outcome.ERROR, Outcome.FAIL, Outcome.INSUFFICIENT)
