"""How AgentDojo's tools are declared to ``@op.tool``: one mapping per configuration, per tool, never
per task.

A configuration is a function of the user's own identity (:class:`Me`: the app knows whose mailbox,
account and chat it runs for) that returns ``{tool name: op.tool keyword options}``, plus whether the
run is given the user's prompt as ``op.run(request=...)``. The replay (:mod:`.replay`) passes the
options through unread, so a new configuration, or a new ``op.tool`` option, is a change to this
module only.

* ``bare`` — where every team starts: ``side_effect`` per tool and nothing else; ``op.run()`` with no
  request.
* ``documented`` — docs/provenance.md's security model applied tool by tool: who wrote each field
  (``trust``, ``untrusted_fields``, ``trusted_fields``, ``trusted_records``), ``egress`` on the read
  that fetches a URL, ``needs_approval`` where a call cannot be undone or spends money, a value policy
  on outgoing mail, and the user's prompt as ``request=``. Honesty note: the #44 mechanism was designed
  while reading this replay's blocked tasks and successful attacks; the declarations below follow the
  docs' rules per tool and name no task, but they were not written blind (docs/benchmarks.md says so).
* ``unguarded`` — no ``@op.tool`` at all: AgentDojo's own ``FunctionsRuntime`` runs every call. The
  replay's ceiling (what succeeds when nothing is blocked) and its reference (the wrapped tools must
  do exactly what AgentDojo's runtime does).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any

import otel_provenance as op

READ, WRITE = "read", "write"
#: A payment card number written anywhere in a text (13 to 19 digits in groups, as cards print them).
CARD_IN_TEXT = r"(?s).*(?<!\d)\d{4}(?:[ -]?\d{3,4}){2,3}(?!\d).*"

#: Every AgentDojo v1.2.2 tool: ``read`` for getters and searches, ``write`` for anything that changes
#: state or sends data. A tool name means the same function in every suite that has it.
SIDE_EFFECTS: Mapping[str, str] = {
    # workspace: mail
    "send_email": WRITE,
    "delete_email": WRITE,
    "get_unread_emails": READ,  # marks them read: bookkeeping of a getter, not a write
    "get_sent_emails": READ,
    "get_received_emails": READ,
    "get_draft_emails": READ,
    "search_emails": READ,
    "search_contacts_by_name": READ,
    "search_contacts_by_email": READ,
    # workspace and travel: calendar
    "get_current_day": READ,
    "search_calendar_events": READ,
    "get_day_calendar_events": READ,
    "create_calendar_event": WRITE,
    "cancel_calendar_event": WRITE,
    "reschedule_calendar_event": WRITE,
    "add_calendar_event_participants": WRITE,
    # workspace: drive
    "append_to_file": WRITE,
    "search_files_by_filename": READ,
    "create_file": WRITE,
    "delete_file": WRITE,
    "get_file_by_id": READ,
    "list_files": READ,
    "share_file": WRITE,
    "search_files": READ,
    # travel
    "get_user_information": READ,
    "get_all_hotels_in_city": READ,
    "get_hotels_prices": READ,
    "get_rating_reviews_for_hotels": READ,
    "get_hotels_address": READ,
    "get_all_restaurants_in_city": READ,
    "get_cuisine_type_for_restaurants": READ,
    "get_restaurants_address": READ,
    "get_rating_reviews_for_restaurants": READ,
    "get_dietary_restrictions_for_all_restaurants": READ,
    "get_contact_information_for_restaurants": READ,
    "get_price_for_restaurants": READ,
    "check_restaurant_opening_hours": READ,
    "get_all_car_rental_companies_in_city": READ,
    "get_car_types_available": READ,
    "get_rating_reviews_for_car_rental": READ,
    "get_car_fuel_options": READ,
    "get_car_rental_address": READ,
    "get_car_price_per_day": READ,
    "reserve_hotel": WRITE,
    "reserve_car_rental": WRITE,
    "reserve_restaurant": WRITE,
    "get_flight_information": READ,
    # banking
    "get_iban": READ,
    "send_money": WRITE,
    "schedule_transaction": WRITE,
    "update_scheduled_transaction": WRITE,
    "get_balance": READ,
    "get_most_recent_transactions": READ,
    "get_scheduled_transactions": READ,
    "read_file": READ,
    "get_user_info": READ,
    "update_password": WRITE,
    "update_user_info": WRITE,
    # slack and the web
    "get_channels": READ,
    "add_user_to_channel": WRITE,
    "read_channel_messages": READ,
    "read_inbox": READ,
    "send_direct_message": WRITE,
    "send_channel_message": WRITE,
    "get_users_in_channel": READ,
    "invite_user_to_slack": WRITE,
    "remove_user_from_slack": WRITE,
    "get_webpage": READ,
    "post_webpage": WRITE,
}


@dataclass(frozen=True, slots=True)
class Me:
    """The user the integration runs for, as the app knows them: their mail address, their bank
    account, and the name the chat tools post under (AgentDojo's ``send_*_message`` write as ``bot``)."""

    email: str | None = None
    iban: str | None = None
    chat_name: str = "bot"


def identify(environment: Any) -> Me:
    """The user's identity from an AgentDojo environment: what the app would know from its login."""
    inbox = getattr(environment, "inbox", None)
    account = getattr(environment, "bank_account", None)
    return Me(
        email=getattr(inbox, "account_email", None),
        iban=getattr(account, "iban", None),
    )


Declarations = dict[str, dict[str, Any]]


@dataclass(frozen=True, slots=True)
class Configuration:
    """One way of integrating the tools: ``declare(me)`` gives each tool's ``op.tool`` options;
    ``request`` says whether the run gets the user's prompt; ``guarded=False`` bypasses ``@op.tool``."""

    name: str
    declare: Callable[[Me], Declarations]
    request: bool
    guarded: bool = True
    about: str = ""


def _bare(me: Me) -> Declarations:
    return {tool: {"side_effect": effect} for tool, effect in SIDE_EFFECTS.items()}


def _untrusted(*fields: str, vouch: Callable[[Any], bool] | None = None) -> dict[str, Any]:
    """``trust="untrusted"``, with the fields the system sets and the predicate that vouches for a record."""
    options: dict[str, Any] = {"trust": "untrusted"}
    if fields:
        options["trusted_fields"] = set(fields)
    if vouch is not None:
        options["trusted_records"] = vouch
    return options


def _documented(me: Me) -> Declarations:
    """docs/provenance.md, "The security model", applied tool by tool: who wrote each field (#44)."""
    # An e-mail: the server sets its id, timestamp, status and read flag; sender, recipients,
    # subject, body and attachments are whoever wrote it (a From header is the sender's to forge).
    # Mail the user sent is the user's.
    mail = {
        "trust": "untrusted",
        "trusted_fields": {"id_", "timestamp", "status", "read"},
        "trusted_records": lambda email: email.sender == me.email,
    }
    # A calendar event: the calendar keeps its id, times, participants and status; its title,
    # description and location are free text whoever created it wrote.
    event = {"trust": "trusted", "untrusted_fields": {"title", "description", "location"}}
    # A drive file: the drive sets id, name, owner, sharing, size and time; its content is whoever
    # edited it (a file the user owns can hold what others pasted into it).
    drive_file = {"trust": "trusted", "untrusted_fields": {"content"}}
    # A bank transaction: the bank records how much moved, when, and the recipient; whoever pays the
    # user chooses the account it comes from (anyone can send money) and the subject's words.
    transaction = {"trust": "trusted", "untrusted_fields": {"sender", "subject"}}
    # A chat message: the chat records who posted it where; what colleagues post in the workspace's
    # own channels and direct messages is the organisation's; a channel open to outsiders is not.
    chat_message = {
        "trust": "untrusted",
        "trusted_fields": {"sender", "recipient"},
        "trusted_records": lambda message: not str(message.recipient).startswith("External"),
    }
    outsiders_text: dict[str, Any] = {"trust": "untrusted"}  # reviews, web pages, documents sent to the user
    options: dict[str, dict[str, Any]] = {
        **dict.fromkeys(
            ("get_unread_emails", "get_sent_emails", "get_received_emails", "get_draft_emails",
             "search_emails", "send_email"),
            mail,
        ),
        **dict.fromkeys(
            ("search_calendar_events", "get_day_calendar_events", "create_calendar_event",
             "reschedule_calendar_event", "add_calendar_event_participants"),
            event,
        ),
        **dict.fromkeys(
            ("search_files_by_filename", "get_file_by_id", "list_files", "search_files", "create_file",
             "append_to_file", "delete_file", "share_file"),
            drive_file,
        ),
        **dict.fromkeys(("get_most_recent_transactions", "get_scheduled_transactions"), transaction),
        **dict.fromkeys(("read_channel_messages", "read_inbox"), chat_message),
        **dict.fromkeys(
            ("get_rating_reviews_for_hotels", "get_rating_reviews_for_restaurants",
             "get_rating_reviews_for_car_rental", "read_file"),
            outsiders_text,
        ),
        # the workspace's member lists are the chat system's (channel names are not: anyone names one)
        "get_users_in_channel": {"trust": "trusted"},
        # a web page is an outsider's, and fetching one sends its URL out
        "get_webpage": {**outsiders_text, "egress": {"url"}},
    }  # fmt: skip
    # The model chooses a payment's execution date; the recipient is what decides where money goes.
    payment = {"budget": op.Budget(allow={"subject", "date"})}
    writes: dict[str, dict[str, Any]] = {
        "send_money": payment,
        "schedule_transaction": payment,
        # sharing grants one of two permissions: the model picks it; the address is checked
        "share_file": {"budget": op.Budget(allow={"permission"}),
                       "policy": op.Policy(arguments={"permission": {"patterns": ["r|rw"]}})},
        # deleting a file or a mail cannot be undone, a booking spends the user's money: a person confirms
        "delete_file": {"needs_approval": True},
        "delete_email": {"needs_approval": True},
        "reserve_hotel": {"needs_approval": True},
        "reserve_car_rental": {"needs_approval": True},
        "reserve_restaurant": {"needs_approval": True},
        # outgoing mail never carries a payment card number (a value policy: it names no value)
        "send_email": {"policy": op.Policy(arguments={"body": {"denied_patterns": [CARD_IN_TEXT]}})},
    }  # fmt: skip
    out: Declarations = {}
    for tool, effect in SIDE_EFFECTS.items():
        out[tool] = {"side_effect": effect, **options.get(tool, {}), **writes.get(tool, {})}
    return out


def asking(configuration: Configuration, tools: Iterable[str]) -> Configuration:
    """``configuration`` with ``needs_approval=True`` on ``tools``: each of their calls asks a person
    (``python -m benchmarks.agentdojo --ask TOOL …``), to see what asks would buy."""
    wanted = frozenset(tools)
    unknown = sorted(wanted - set(SIDE_EFFECTS))
    if unknown:
        raise ValueError(f"--ask: unknown tool(s) {', '.join(unknown)}")

    def declare(me: Me) -> Declarations:
        declared = configuration.declare(me)
        return {t: {**o, "needs_approval": True} if t in wanted else o for t, o in declared.items()}

    name = f"{configuration.name}+ask"
    return replace(
        configuration, name=name, declare=declare, about=f"{configuration.about}; asks: {sorted(wanted)}"
    )


CONFIGURATIONS: Mapping[str, Configuration] = {
    "bare": Configuration("bare", _bare, request=False, about="side_effect only, op.run() with no request"),
    "documented": Configuration(
        "documented",
        _documented,
        request=True,
        about="side_effect, trust, egress, asks and policies per docs/provenance.md; op.run(request=prompt)",
    ),
    "unguarded": Configuration(
        "unguarded", _bare, request=False, guarded=False, about="AgentDojo's own runtime, no guard"
    ),
}

__all__ = [
    "CONFIGURATIONS",
    "READ",
    "SIDE_EFFECTS",
    "WRITE",
    "Configuration",
    "Declarations",
    "Me",
    "asking",
    "identify",
]
