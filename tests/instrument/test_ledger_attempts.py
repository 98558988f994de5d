"""``agent.retry.number``: 0 on the first call of a tool with given arguments in a run, then 1, 2, … —
counted per tool and per argument values, and bounded like the ledger (past ``max_entries``
signatures the oldest half is forgotten, and a forgotten call counts from 0 again).

Through ``@op.tool`` and ``op.run`` with the real SDK.
"""

from __future__ import annotations

from typing import Any

import otel_provenance as op
from instrument_helpers import Traced


def retry_numbers(traced: Traced, name: str) -> list[Any]:
    return [s.attributes["agent.retry.number"] for s in traced.spans if s.name == f"execute_tool {name}"]


def test_retries_count_per_tool_and_per_argument_values(traced):
    @op.tool(side_effect="read", tracer_provider=traced.provider)
    def fetch(ticket: str) -> None:
        return None

    @op.tool(side_effect="read", tracer_provider=traced.provider)
    def close(ticket: str) -> None:
        return None

    with op.run():
        for ticket in ("T-1", "T-1", "T-2", "T-1", "T-2"):
            fetch(ticket=ticket)
        close(ticket="T-1")  # the same arguments to another tool: a first call
        close(ticket="T-1")
    assert retry_numbers(traced, "fetch") == [0, 1, 0, 2, 1]
    assert retry_numbers(traced, "close") == [0, 1]


def test_each_run_counts_its_own_retries(traced):
    @op.tool(side_effect="read", tracer_provider=traced.provider)
    def fetch(ticket: str) -> None:
        return None

    with op.run():
        fetch(ticket="T-1")
    with op.run():
        fetch(ticket="T-1")
    assert retry_numbers(traced, "fetch") == [0, 0]


def test_past_the_bound_the_oldest_half_of_the_call_signatures_is_forgotten(traced):
    @op.tool(side_effect="read", tracer_provider=traced.provider)
    def fetch(ticket: str) -> None:
        return None

    calls = ["s0", "s1", "s2", "s3", "s3", "s4", "s2", "s1", "s0", "s3", "s4"]
    with op.run(ledger_max_entries=4):
        for ticket in calls:
            fetch(ticket=ticket)
    # s4 is the 5th signature: s0 and s1 (the oldest half of 5) are forgotten and count from 0 again;
    # s0 coming back makes 5 again, and s2 and s3 go.
    assert retry_numbers(traced, "fetch") == [0, 0, 0, 0, 1, 0, 1, 0, 0, 0, 1]
