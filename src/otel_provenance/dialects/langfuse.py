"""Langfuse's SDK: every observation's and trace's input, output and metadata (whole namespaces)."""

from __future__ import annotations

from .dialect import Dialect

DIALECT = Dialect(
    name="langfuse",
    content_keys=frozenset({"langfuse.observation", "langfuse.trace"}),
    scope_words=("langfuse",),
    key_prefixes=("langfuse.",),
)
