"""The one provenance-budget law, shared by the online and the offline half.

A tool call's arguments are counted by kind: ``assumed`` ones (a value the agent never saw) against
``max_assumed``, ``invented`` ones (a value the tool declared the model may propose) against
``max_invented``, ``untrusted`` ones (a value seen only in results of tools declared to return
untrusted content: e-mail bodies, web pages, another agent's free text) against ``max_untrusted``.
An *allow-list* names arguments — annotation fields the model is meant to write, such as ``comment``
or ``body`` — that do not count; ``ALLOW_REACH`` says for which kinds (``assumed`` only). An
allowed argument whose *value* the tool checked online and found to be a single token that is no
destination (a reference number copied from an invoice: ``vetted``) is exempt from ``untrusted``
too (``VETTED_REACH``); an outsider's sentence or link never is, and neither is a vetted name the
allow-list in force does not hold. A name that looks like a destination
(``to``, ``recipient``, ``url``, ``iban``, ``path`` …, :func:`is_destination_name`) is never exempt,
whatever the lists say: free text may be written, but it never decides where data goes. The call is
over budget for every kind whose count exceeds its limit (``None`` = no limit).

``op.Budget`` (online), ``audit``, the ``provenance_budgets`` contract rule and ``diff`` (offline)
all decide with these functions, so a call over budget online is over budget in every report. The
tool span records the argument names its allow-list exempted (``agent.budget.allowed``), so offline
checks apply exactly the list the tool applied (those names are the offline ``vetted`` names: the tool
saw their values); a span without ``agent.budget.max_untrusted`` (a
trace from before the kind existed) has no untrusted limit and no untrusted argument.

Pure: imports nothing but ``semconv``.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from typing import Final

from . import semconv

ALLOW_REACH: Final = frozenset({semconv.KIND_ASSUMED})
"""The kinds an allow-listed argument is exempt from. ``assumed`` only: an ``invented`` argument is
declared on the tool and bounded by ``max_invented`` alone — allowing it again would double-exempt;
an ``untrusted`` one carries text an outsider wrote, and writing an attacker's words verbatim is
exactly what the untrusted budget is for."""

VETTED_REACH: Final = frozenset({semconv.KIND_UNTRUSTED})
"""The kinds beyond ``ALLOW_REACH`` an allowed argument is exempt from when it is also *vetted*: its
value was checked online (one token, no destination) and the span records it allowed."""

COUNTED_KINDS: Final = (semconv.KIND_ASSUMED, semconv.KIND_INVENTED, semconv.KIND_UNTRUSTED)
"""The kinds the law counts, in the order it reports them."""

DESTINATION_WORDS: Final = frozenset(
    {
        "to", "cc", "bcc", "recipient", "recipients", "receiver", "email", "emails", "address",
        "addresses", "url", "urls", "uri", "link", "links", "href", "endpoint", "webhook", "iban",
        "bic", "swift", "account", "destination", "dest", "target", "channel", "phone", "host",
        "domain", "path", "folder", "directory", "dir", "bucket",
    }
)  # fmt: skip
"""The last word of an argument name (``reply_to``, ``recipient_email``, ``target_url``) that makes
it a destination: where the call sends, stores or publishes data."""

DESTINATION_NAMES: Final = frozenset({"account_number", "phone_number", "routing_number", "card_number"})
"""Whole argument names that are destinations though their last word is not."""

_WORDS: Final = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])")


@functools.lru_cache(maxsize=4096)  # argument names repeat call after call (#45)
def is_destination_name(name: str) -> bool:
    """Whether an argument name says where data goes: its last word (snake_case or camelCase) is one
    of ``DESTINATION_WORDS``, or the whole name is one of ``DESTINATION_NAMES``."""
    lowered = name.lower()
    if lowered in DESTINATION_NAMES:
        return True
    words = _WORDS.findall(name)
    return bool(words) and words[-1].lower() in DESTINATION_WORDS


@dataclass(frozen=True, slots=True)
class Limits:
    max_assumed: int | None = None
    max_invented: int | None = None
    max_untrusted: int | None = None

    def limit(self, kind: str) -> int | None:
        if kind == semconv.KIND_ASSUMED:
            return self.max_assumed
        if kind == semconv.KIND_INVENTED:
            return self.max_invented
        return self.max_untrusted


@dataclass(frozen=True, slots=True)
class ArgumentCount:
    """Argument names by how the law counts them, each sorted."""

    assumed: tuple[str, ...] = ()  # counted against max_assumed
    invented: tuple[str, ...] = ()  # counted against max_invented
    allowed: tuple[str, ...] = ()  # of a kind in reach, exempted by the allow-list
    untrusted: tuple[str, ...] = ()  # counted against max_untrusted

    def counted(self, kind: str) -> tuple[str, ...]:
        if kind == semconv.KIND_ASSUMED:
            return self.assumed
        if kind == semconv.KIND_INVENTED:
            return self.invented
        return self.untrusted


def count_arguments(
    kinds: Iterable[tuple[str, str]],
    allow: Collection[str] = (),
    reach: Collection[str] = ALLOW_REACH,
    vetted: Collection[str] = (),
    approved: Collection[str] = (),
) -> ArgumentCount:
    """Count ``(name, kind)`` pairs; a name in ``allow`` whose kind is in ``reach`` — or in
    ``VETTED_REACH``, when the name is ``vetted`` too — is not counted, unless the name is a
    destination (:func:`is_destination_name`). A name in ``approved`` is not counted at all: a person
    was shown its value and its source and let the call run (``agent.budget.asked``)."""
    counted: dict[str, list[str]] = {kind: [] for kind in COUNTED_KINDS}
    allowed: list[str] = []
    for name, kind in kinds:
        names = counted.get(kind)
        if names is None or name in approved:
            continue
        exempt = name in allow and (kind in reach or (kind in VETTED_REACH and name in vetted))
        if exempt and not is_destination_name(name):
            allowed.append(name)
        else:
            names.append(name)
    return ArgumentCount(
        tuple(sorted(counted[semconv.KIND_ASSUMED])),
        tuple(sorted(counted[semconv.KIND_INVENTED])),
        tuple(sorted(allowed)),
        tuple(sorted(counted[semconv.KIND_UNTRUSTED])),
    )


def over_budget(count: ArgumentCount, limits: Limits) -> tuple[str, ...]:
    """The kinds (``assumed``, ``invented``, ``untrusted``, in that order) whose count exceeds its
    limit."""
    over = []
    for kind in COUNTED_KINDS:
        limit = limits.limit(kind)
        if limit is not None and len(count.counted(kind)) > limit:
            over.append(kind)
    return tuple(over)


EGRESS_KINDS: Final = frozenset({semconv.KIND_ASSUMED, semconv.KIND_UNTRUSTED})
"""The kinds an *egress* argument may not have (#44): an argument of a read that sends data out of
the process — a URL to fetch, an address to query — is judged like a write's destination, at zero:
an unsourced or outsider-chosen one is where an injected instruction exfiltrates through a read."""


def egress_unsourced(kinds: Iterable[tuple[str, str]], egress: Collection[str]) -> tuple[str, ...]:
    """The ``egress`` argument names whose kind is in ``EGRESS_KINDS``, sorted (no allow-list reaches
    them: they say where data goes)."""
    if not egress:
        return ()
    return tuple(sorted(name for name, kind in kinds if name in egress and kind in EGRESS_KINDS))


def egress_on_span(attributes: Mapping[str, object]) -> frozenset[str]:
    """The argument names a tool span's tool declared egress (``agent.budget.egress``); empty when absent."""
    return _names_on_span(attributes, semconv.BUDGET_EGRESS)


def approved_on_span(attributes: Mapping[str, object]) -> frozenset[str]:
    """The argument names the budget does not count on a tool span: those accepted as delegated
    (``agent.budget.delegated``), and those a person was asked about (``agent.budget.asked``) when the
    answer was ``approved`` (``agent.guard.approval``)."""
    accepted = _names_on_span(attributes, semconv.BUDGET_DELEGATED)
    if attributes.get(semconv.GUARD_APPROVAL) != semconv.APPROVAL_APPROVED:
        return accepted
    return accepted | _names_on_span(attributes, semconv.BUDGET_ASKED)


def allowed_on_span(attributes: Mapping[str, object]) -> frozenset[str]:
    """The argument names a tool span's budget allowed (``agent.budget.allowed``); empty when absent."""
    return _names_on_span(attributes, semconv.BUDGET_ALLOWED)


def _names_on_span(attributes: Mapping[str, object], key: str) -> frozenset[str]:
    value = attributes.get(key)
    if isinstance(value, str):
        return frozenset({value})
    if isinstance(value, (tuple, list)):
        return frozenset(v for v in value if isinstance(v, str))
    return frozenset()


def limits_on_span(attributes: Mapping[str, object]) -> Limits:
    """The limits a tool span's budget applied online (``agent.budget.max_*``); None when not recorded."""

    def limit(key: str) -> int | None:
        value = attributes.get(key)
        return value if isinstance(value, int) and not isinstance(value, bool) else None

    return Limits(
        limit(semconv.BUDGET_MAX_ASSUMED),
        limit(semconv.BUDGET_MAX_INVENTED),
        limit(semconv.BUDGET_MAX_UNTRUSTED),
    )
