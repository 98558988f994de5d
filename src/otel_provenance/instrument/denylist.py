"""The default deny-list: keys that hold content in what current agent stacks write, and the matcher.

Each set is named after who writes it; docs/stripping.md records the survey (library, version, keys)
they come from. A name covers its flattened and nested sub-keys because it is matched as a run of
whole dot-separated parts anywhere in a key path; a part ``*`` matches any one part. Names live in a
trie over their parts (:func:`name_trie`), so :func:`contains_name` is linear in a key's length.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Final

#: GenAI semantic conventions: opt-in content attributes and their deprecated forms. The names follow
#: semantic-conventions v1.41.1 (the last release that held the GenAI registry) plus the memory keys of
#: open-telemetry/semantic-conventions-genai, where the GenAI conventions have lived since (see
#: docs/stripping.md). ``gen_ai.prompt`` also covers that registry's ``gen_ai.prompt.variable.<key>``.
GENAI_CONTENT_KEYS: Final = frozenset(
    {
        "gen_ai.tool.call.arguments",
        "gen_ai.tool.call.result",
        "gen_ai.tool.definitions",
        "gen_ai.tool.description",
        "gen_ai.input.messages",
        "gen_ai.output.messages",
        "gen_ai.system_instructions",
        "gen_ai.retrieval.query.text",
        "gen_ai.retrieval.documents",
        "gen_ai.memory.query.text",  # the search query used to retrieve memories
        "gen_ai.memory.records",  # the memory records stored or retrieved
        "gen_ai.evaluation.explanation",
        # #36: content keys found leaking (newer registries and vendors writing into gen_ai.*)
        "gen_ai.tool.input",
        "gen_ai.tool.output",
        "gen_ai.agent.invocation_input",
        "gen_ai.agent.invocation_output",
        "gen_ai.agent.description",  # free text the application wrote about its agent
        "gen_ai.event.content",  # Azure AI Agents tracing: the message JSON on its gen_ai.* events
        # deprecated, still emitted; as names they also cover OpenLLMetry's flattened
        # gen_ai.prompt.{i}.content / gen_ai.completion.{i}.content (and gen_ai.prompt.name).
        "gen_ai.prompt",
        "gen_ai.completion",
    }
)

#: OpenLLMetry (Traceloop) content attributes.
OPENLLMETRY_CONTENT_KEYS: Final = frozenset(
    {
        "traceloop.entity.input",
        "traceloop.entity.output",
        "traceloop.prompt.template",
        "traceloop.prompt.template_variables",
        "llm.prompts",
        "llm.completions",
        "llm.request.functions",
        "db.query.result.document",  # vector-DB instrumentations: retrieved documents
    }
)

#: OpenInference (Arize / Phoenix) content attributes.
OPENINFERENCE_CONTENT_KEYS: Final = frozenset(
    {
        "input.value",
        "output.value",
        "llm.input_messages",
        "llm.output_messages",
        "llm.prompts",
        "llm.prompt_template.template",
        "llm.prompt_template.variables",
        "llm.tools",
        "message.content",
        "message.contents",
        "tool_call.function.arguments",
        "llm.function_call",  # the function-call arguments JSON
        "tool.description",
        "tool.parameters",
        "tool.json_schema",
        "retrieval.documents",
        "embedding.embeddings",
        "document.content",
        "reranker.query",
        "reranker.input_documents",
        "reranker.output_documents",
    }
)

#: Pydantic AI / Logfire tool and agent content attributes. ``model_request_parameters`` (every
#: model-request span, all instrumentation versions) holds the instructions, tool descriptions and
#: output-schema descriptions. Logfire: ``logfire.msg`` is the message with its arguments formatted
#: in, ``logfire.logging_args`` a logging call's arguments, ``exception.logfire.data`` a validation
#: error's input, ``request_data`` / ``response_data`` its OpenAI / Anthropic integrations' bodies.
PYDANTIC_AI_CONTENT_KEYS: Final = frozenset(
    {
        "tool_arguments",
        "tool_response",
        "final_result",
        "all_messages_events",
        "pydantic_ai.all_messages",
        "model_request_parameters",
        "logfire.msg",
        "logfire.logging_args",
        "exception.logfire.data",
        "request_data",
        "response_data",
    }
)

#: OpenLLMetry's framework instrumentations (LangChain/LangGraph tasks, MCP, CrewAI), OpenInference's
#: smolagents instrumentation and LangSmith's OpenTelemetry exporter; see the survey
#: in docs/stripping.md. CrewAI's instrumentation writes ``str()`` of whole agents, tasks and results.
FRAMEWORK_CONTENT_KEYS: Final = frozenset(
    {
        "gen_ai.task.input",
        "gen_ai.task.output",
        "mcp.request.argument",
        "mcp.response.value",
        "crewai.*.result",
        "crewai.crew.tasks_output",
        "crewai.crew.tasks",
        "crewai.crew.agents",
        "crewai.agent.goal",
        "crewai.agent.backstory",
        "crewai.task.description",
        "crewai.task.expected_output",
        "crewai.task.output",
        "crewai.task.context",
        "smolagents.task",
        "smolagents.additional_args",
        # LangSmith's OpenTelemetry exporter: request bodies and the tool's docstring
        "gen_ai.request.extra_body",
        "gen_ai.request.extra_query",
        "gen_ai.serialized.doc",
        # Langfuse's SDK: every observation and trace input, output and metadata (whole namespaces)
        "langfuse.observation",
        "langfuse.trace",
        # Haystack's tracer: each component's and the pipeline's inputs and outputs
        "haystack.component.input",
        "haystack.component.output",
        "haystack.pipeline.input_data",
        "haystack.pipeline.output_data",
    }
)

#: Google ADK (``gcp.vertex.agent.*``) and MLflow tracing content attributes.
VENDOR_CONTENT_KEYS: Final = frozenset(
    {
        "gcp.vertex.agent.tool_call_args",
        "gcp.vertex.agent.tool_response",
        "gcp.vertex.agent.llm_request",
        "gcp.vertex.agent.llm_response",
        "gcp.vertex.agent.data",
        "mlflow.spanInputs",
        "mlflow.spanOutputs",
        "mlflow.chat.tools",
        "mlflow.chat.messages",
        "mlflow.traceInputs",
        "mlflow.traceOutputs",
        "mlflow.trace.intermediate_outputs",
    }
)

#: The Vercel AI SDK's telemetry (``ai.*``; #50): prompts, responses, tool calls, embedded values,
#: output schemas, and the application's own telemetry metadata and request headers. ``ai.prompt``
#: covers ``ai.prompt.messages``, ``ai.prompt.tools`` and ``ai.prompt.toolChoice``.
VERCEL_AI_CONTENT_KEYS: Final = frozenset(
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
)

DEFAULT_FORBIDDEN_KEYS: Final = (
    GENAI_CONTENT_KEYS
    | OPENLLMETRY_CONTENT_KEYS
    | OPENINFERENCE_CONTENT_KEYS
    | PYDANTIC_AI_CONTENT_KEYS
    | FRAMEWORK_CONTENT_KEYS
    | VENDOR_CONTENT_KEYS
    | VERCEL_AI_CONTENT_KEYS
)

#: Events whose whole payload is content; they are dropped entirely (span events and log records).
DEFAULT_CONTENT_EVENTS: Final = frozenset(
    {
        "gen_ai.client.inference.operation.details",
        "gen_ai.user.message",
        "gen_ai.assistant.message",
        "gen_ai.system.message",
        "gen_ai.tool.message",
        "gen_ai.choice",
        "gen_ai.content.prompt",
        "gen_ai.content.completion",
        # Azure AI Agents tracing: events carrying gen_ai.event.content
        "gen_ai.developer.message",
        "gen_ai.run.step.message_creation",
        "gen_ai.run.step.tool_calls",
    }
)


WILDCARD: Final = "*"
_END: Final = None  # trie key marking the end of a name (parts are strings, never None)


def name_trie(names: Iterable[str]) -> dict:
    """Names as a trie over their dot-separated parts; ``_END`` marks where a name ends."""
    root: dict = {}
    for name in names:
        node = root
        for part in name.split("."):
            node = node.setdefault(part, {})
        node[_END] = True
    return root


def contains_name(parts: Sequence[str], trie: dict) -> tuple[bool, int]:
    """Whether a name occurs in ``parts`` as a run of whole parts, and the trie steps it took.

    From each start part the walk follows at most the longest name's length of trie edges (plus its
    wildcard branches), so the cost is linear in ``len(parts)``: no sub-range is built or hashed.
    """
    steps = 0
    count = len(parts)
    for start in range(count):
        frontier = (trie,)
        index = start
        while frontier and index < count:
            part = parts[index]
            following = []
            for node in frontier:
                for child in (node.get(part), node.get(WILDCARD)):
                    steps += 1
                    if child is None:
                        continue
                    if _END in child:
                        return True, steps
                    following.append(child)
            frontier = tuple(following)
            index += 1
    return False, steps
