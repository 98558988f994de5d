"""smolagents (OpenInference's instrumentation; its tool calls are read by the ``openinference`` row)."""

from __future__ import annotations

from .dialect import Dialect

DIALECT = Dialect(
    name="smolagents",
    content_keys=frozenset({"smolagents.task", "smolagents.additional_args"}),
    scope_words=("smolagents",),
    key_prefixes=("smolagents.",),
)
