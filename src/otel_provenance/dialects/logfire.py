"""logfire (Pydantic): its OpenAI Agents instrumentation names an agent run and a tool call only by a
message template — constants of logfire's code — and the template's ``name`` argument (the agent's or
the tool's name: identity there, kept by the allow-list; anywhere else a template or a ``name`` may hold
a user's words). ``logfire.msg`` is the message with its arguments formatted in, ``logfire.logging_args``
a logging call's arguments, ``exception.logfire.data`` a validation error's input, ``request_data`` /
``response_data`` its OpenAI / Anthropic integrations' bodies. Its scope names (``logfire.openai`` …)
are known by the model SDK's word; ``logfire`` alone also names an application's own spans, so its LLM
integrations' ``events`` (the messages, written without a namespace) is what tells such a span an AI
library made it (#50)."""

from __future__ import annotations

from typing import Final

from .dialect import Dialect

MSG_TEMPLATE: Final = "logfire.msg_template"
TOOL_TEMPLATE: Final = "Function: {name}"
AGENT_TEMPLATE: Final = "Agent run: {name!r}"
NAME: Final = "name"

DIALECT = Dialect(
    name="logfire",
    tool_marks=((MSG_TEMPLATE, TOOL_TEMPLATE),),
    agent_marks=((MSG_TEMPLATE, AGENT_TEMPLATE),),
    marked_tool_name_keys=(NAME,),
    identity_keys=(MSG_TEMPLATE, NAME),
    content_keys=frozenset(
        {"logfire.msg", "logfire.logging_args", "exception.logfire.data", "request_data", "response_data"}
    ),
    bare_keys=frozenset({"events"}),
)
