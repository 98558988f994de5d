"""Model SDKs and agent frameworks known only by their instrumentation scope's name: the keys they
write are the GenAI conventions' (the ``genai`` row's) — OpenLLMetry's
``opentelemetry.instrumentation.openai``, logfire's ``logfire.anthropic``, ``llama_index``'s,
Microsoft Agent Framework's, AutoGen's, Strands' …"""

from __future__ import annotations

from .dialect import Dialect

DIALECT = Dialect(
    name="sdks",
    scope_words=(
        "openai",
        "anthropic",
        "llama_index",
        "llamaindex",
        "litellm",
        "bedrock",
        "vertexai",
        "google_genai",
        "agent_framework",
        "semantic_kernel",
        "autogen",
        "strands",
        "mistral",
        "cohere",
        "ollama",
        "groq",
        "azure.ai",
    ),
)
