"""The OpenTelemetry GenAI semantic conventions (what ``@op.tool`` writes, and every producer that
follows them: util-genai, OpenLLMetry's newer instrumentations, Microsoft Agent Framework …).

``gen_ai.operation.name`` is decisive: a span that names another GenAI operation is that operation,
whatever another producer's marks say. The content keys follow semantic-conventions v1.41.1 (the last
release that held the GenAI registry) plus the memory keys of open-telemetry/semantic-conventions-genai,
where the GenAI conventions have lived since (docs/stripping.md); ``gen_ai.prompt`` also covers that
registry's ``gen_ai.prompt.variable.<key>``.
"""

from __future__ import annotations

from .. import semconv
from .dialect import Dialect, ToolCallRecord

DIALECT = Dialect(
    name="genai",
    kind_key=semconv.GEN_AI_OPERATION_NAME,
    decisive=True,
    tool_marks=((semconv.GEN_AI_OPERATION_NAME, semconv.EXECUTE_TOOL),),
    agent_marks=((semconv.GEN_AI_OPERATION_NAME, semconv.INVOKE_AGENT),),
    tool_name_keys=(semconv.GEN_AI_TOOL_NAME,),
    calls=ToolCallRecord(semconv.GEN_AI_TOOL_CALL_ARGUMENTS, semconv.GEN_AI_TOOL_CALL_RESULT),
    content_keys=frozenset(
        {
            semconv.GEN_AI_TOOL_CALL_ARGUMENTS,
            semconv.GEN_AI_TOOL_CALL_RESULT,
            "gen_ai.tool.definitions",
            semconv.GEN_AI_TOOL_DESCRIPTION,
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
    ),
    content_events=frozenset(
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
    ),
    scope_words=("gen_ai", "genai"),
    key_prefixes=("gen_ai.",),
)
