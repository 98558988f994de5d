"""AutoGen AgentChat, the default team: two ``AssistantAgent``\\ s in a ``RoundRobinGroupChat``,
one tool call a turn (see ``autogen_native``)."""

from __future__ import annotations

from pathlib import Path

import autogen_native
from refund import Call


def produce(out: Path, release: str, scripts: list[list[Call]]) -> None:
    autogen_native.produce(out, release, scripts, "team")
