"""LangChain / LangGraph (instrumented by OpenInference, OpenLLMetry or the official GenAI
instrumentation, which the rows of those read) and LangSmith's OpenTelemetry exporter, which writes
request bodies and the tool's docstring into ``gen_ai.*`` keys of its own."""

from __future__ import annotations

from .dialect import Dialect

DIALECT = Dialect(
    name="langchain",
    content_keys=frozenset(
        {"gen_ai.request.extra_body", "gen_ai.request.extra_query", "gen_ai.serialized.doc"}
    ),
    scope_words=("langchain", "langgraph", "langsmith"),
    key_prefixes=("langsmith.",),
)
