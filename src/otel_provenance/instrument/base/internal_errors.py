"""Our own bugs are loud under pytest and quiet in users' applications.

The online half must never break the application it observes: a failure inside the span processor,
the ledger bookkeeping or the metrics is logged (by type) and swallowed. Swallowed under test too, a
bug in that code shows only as a missing attribute or a dropped span, if a test happens to look.
So, as Logfire's ``log_internal_error`` does, every place that swallows an error first calls
:func:`reraise_own_bug_under_pytest`: while pytest runs a test, an error **this package's own code
raised** propagates; in an application it returns and the caller logs and carries on.

"Our own" is read from where the error was raised: the innermost frame of its traceback belongs to a
module of this package. An error raised inside a user's object — an exporter, a processor, a mapping
that fails when read, a result that cannot be walked — is the user's, and stays swallowed under test
as in production: tests that inject such failures check exactly that. So is an ``OSError`` wherever it
is raised: a full disk or a closed socket is the environment's, not a bug. (An error raised inside a
library we called wrongly is not caught this way; it is logged like a user's.)

Failures of the wrapped processors themselves never come here: handing a span on to them is the fan-out
of :mod:`.fanout`, which always swallows (logged once), under test as in production.
"""

from __future__ import annotations

import os
from typing import Final

from ... import environment

#: Set by pytest while it runs a test (set-up, call and tear-down), in this process and its children.
PYTEST_CURRENT_TEST: Final = environment.PYTEST_CURRENT_TEST
_PACKAGE: Final = __name__.split(".", 1)[0]


def raised_by_this_package(error: BaseException) -> bool:
    """Whether ``error`` is a bug of this package: not an ``OSError``, and the innermost frame of its
    traceback is one of this package's modules."""
    tb = error.__traceback__
    if tb is None or isinstance(error, OSError):
        return False
    while tb.tb_next is not None:
        tb = tb.tb_next
    module = tb.tb_frame.f_globals.get("__name__")
    return isinstance(module, str) and (module == _PACKAGE or module.startswith(_PACKAGE + "."))


def under_pytest() -> bool:
    return PYTEST_CURRENT_TEST in os.environ


def reraise_own_bug_under_pytest(error: BaseException) -> None:
    """Call in an ``except`` block about to swallow ``error``: re-raises it when pytest is running and
    this package raised it; otherwise returns, and the caller logs it and carries on."""
    if under_pytest() and raised_by_this_package(error):
        raise error


__all__ = ["raised_by_this_package", "reraise_own_bug_under_pytest", "under_pytest"]
