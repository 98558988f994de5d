"""The Vercel AI SDK (``ai``, the TypeScript SDK's ``experimental_telemetry``; keys as its 4.x and 5.x
releases write them, seen in the SDK's telemetry documentation and source): its tracer's scope is named
``ai`` and every key it writes starts ``ai.`` — its spans carry no GenAI marker beside them, so the
default stripping knows them only by these (#50). ``ai.prompt`` covers ``ai.prompt.messages``,
``ai.prompt.tools`` and ``ai.prompt.toolChoice``; ``ai.telemetry.metadata`` and
``ai.request.headers`` are the application's own telemetry metadata and request headers. Its tool
calls are not read as calls here (no trace it wrote is among the evidence yet): only its content is
stripped."""

from __future__ import annotations

from .dialect import Dialect

DIALECT = Dialect(
    name="vercel_ai",
    content_keys=frozenset(
        {
            "ai.prompt",
            "ai.response.text",
            "ai.response.toolCalls",
            "ai.response.object",
            "ai.response.reasoning",
            "ai.response.providerMetadata",
            "ai.toolCall.args",
            "ai.toolCall.result",
            "ai.toolCall.input",
            "ai.toolCall.output",
            "ai.value",
            "ai.values",
            "ai.embedding",
            "ai.embeddings",
            "ai.schema",
            "ai.telemetry.metadata",
            "ai.request.headers",
        }
    ),
    scope_names=frozenset({"ai"}),
    key_prefixes=("ai.",),
)
