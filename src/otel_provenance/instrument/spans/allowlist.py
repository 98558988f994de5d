"""The allow-list: the only keys that leave the process in ``StripOptions(mode="allowlist")``.

A deny-list always trails the ecosystem — every new instrumentation invents keys for prompts and tool
payloads. The allow-list inverts that: a key leaves only when it is known to carry no content. Kept are

* this package's own ``agent.*`` vocabulary (decided in :mod:`.redaction`, it holds no values);
* identity, timing, status and size attributes of the OpenTelemetry GenAI, HTTP, database, RPC and
  messaging conventions, and the resource attributes that name the service and where it runs;
* keys the user names (``StripOptions(allow=...)``).

Each kept key also has a value rule, so an allowed key cannot smuggle free text: numbers must be
numbers, identifiers short single-line strings, and a URL keeps only its origin
(``scheme://host[:port]``) — its path, query and fragment can hold arguments. Everything else is
removed, including keys the conventions define for free text (``db.query.text``, ``db.statement``,
``url.query``, ``exception.message``, ``error.message``). The lists below are the documentation's
source of truth: docs/stripping.md repeats them.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final
from urllib.parse import urlsplit

from ... import dialects

#: Longest identifier value kept (a model name, a route template, a service name).
MAX_IDENTIFIER_LENGTH: Final = 256

#: Returned by :func:`clean_value` when the value does not fit the key's rule: drop the key.
DROP: Final = object()


def _identifier(value: Any) -> Any:
    if isinstance(value, bool):
        return DROP
    if isinstance(value, int):
        return value
    if (
        isinstance(value, str)
        and 0 < len(value) <= MAX_IDENTIFIER_LENGTH
        and value.isprintable()  # no newlines, tabs or control characters: not a paragraph
    ):
        return value
    return DROP


#: A type's name (``ValueError``, ``openai.RateLimitError``, ``java.net.SocketTimeoutException``,
#: ``Net::ReadTimeout``, ``mod.Outer.<locals>.Inner``) or a short code (``500``, ``timeout``,
#: ``_OTHER``, ``E11000``): one token of identifier characters — never a message (#50: an error message
#: in a foreign ``error.type`` quoted the call's arguments). Neither a ``/`` (a path or a URL — what a
#: lookup error quotes — is no type's name) nor a run of six digits (an account, order or phone number
#: is no code): what ``str(error)`` gives for ``LookupError(path)`` or ``KeyError(account)``.
_TYPE_NAME: Final = re.compile(r"(?!.*\d{6})[\w.$:<>\[\]-]{1,256}")
#: A code given as a whole number: short, as above (``500``, a gRPC code, an errno).
_MAX_CODE: Final = 999_999


def is_type_name(value: Any) -> bool:
    """Whether ``value`` is a type's name or a short code (a whole number: ``500``), not a message
    (:data:`_TYPE_NAME`)."""
    if isinstance(value, int) and not isinstance(value, bool):
        return -_MAX_CODE <= value <= _MAX_CODE
    return isinstance(value, str) and _TYPE_NAME.fullmatch(value) is not None


def _type_name(value: Any) -> Any:
    return value if is_type_name(value) else DROP


def _identifiers(value: Any) -> Any:
    if isinstance(value, str):
        return _identifier(value)
    if isinstance(value, Sequence) and not isinstance(value, bytes | bytearray) and len(value) <= 64:
        items = tuple(_identifier(item) for item in value)
        return DROP if any(item is DROP for item in items) or not items else items
    return DROP


def _reasons(value: Any) -> Any:
    """A decision's reasons: rule names and argument names joined by commas — one printable line, no
    value (``max_assumed, contract:refund-once``), longer than an identifier when many objected."""
    return value if isinstance(value, str) and 0 < len(value) <= 4096 and value.isprintable() else DROP


def _number(value: Any) -> Any:
    return value if isinstance(value, int | float) and not isinstance(value, bool) else DROP


def _flag(value: Any) -> Any:
    return value if isinstance(value, bool) else DROP


def _origin(value: Any) -> Any:
    """``scheme://host[:port]`` of a URL: no user info, path, query or fragment."""
    if not isinstance(value, str) or len(value) > 8192:
        return DROP
    try:
        parts = urlsplit(value)
        host, port = parts.hostname, parts.port
    except ValueError:
        return DROP
    if not parts.scheme or not host:
        return DROP
    host = f"[{host}]" if ":" in host else host
    return f"{parts.scheme}://{host}" + (f":{port}" if port is not None else "")


ID, IDS, NUMBER, FLAG, ORIGIN, TYPE, REASONS = (
    _identifier,
    _identifiers,
    _number,
    _flag,
    _origin,
    _type_name,
    _reasons,
)
Rule = Callable[[Any], Any]

#: GenAI conventions: identity, request parameters that are numbers, usage, status. The first block
#: and the next follow semantic-conventions v1.41.1 (the last release that held the GenAI registry);
#: the last the content-free keys added since in open-telemetry/semantic-conventions-genai.
GENAI_KEYS: Final[Mapping[str, Rule]] = {
    "gen_ai.operation.name": ID,
    "gen_ai.provider.name": ID,
    "gen_ai.system": ID,
    "gen_ai.request.model": ID,
    "gen_ai.response.model": ID,
    "gen_ai.response.id": ID,
    "gen_ai.response.finish_reasons": IDS,
    "gen_ai.request.max_tokens": NUMBER,
    "gen_ai.request.temperature": NUMBER,
    "gen_ai.request.top_p": NUMBER,
    "gen_ai.request.top_k": NUMBER,
    "gen_ai.request.frequency_penalty": NUMBER,
    "gen_ai.request.presence_penalty": NUMBER,
    "gen_ai.request.seed": NUMBER,
    "gen_ai.request.choice.count": NUMBER,
    "gen_ai.request.encoding_formats": IDS,
    "gen_ai.usage.input_tokens": NUMBER,
    "gen_ai.usage.output_tokens": NUMBER,
    "gen_ai.usage.cache_read.input_tokens": NUMBER,
    "gen_ai.usage.cache_creation.input_tokens": NUMBER,
    "gen_ai.token.type": ID,
    "gen_ai.output.type": ID,
    "gen_ai.tool.name": ID,
    "gen_ai.tool.call.id": ID,
    "gen_ai.tool.type": ID,
    "gen_ai.agent.id": ID,
    "gen_ai.agent.name": ID,
    "gen_ai.conversation.id": ID,
    "gen_ai.data_source.id": ID,
    "gen_ai.embeddings.dimension.count": NUMBER,
    "gen_ai.evaluation.name": ID,
    "gen_ai.evaluation.score.value": NUMBER,
    "gen_ai.evaluation.score.label": ID,
    # in v1.41.1 too, but missing here before #35
    "gen_ai.agent.version": ID,
    "gen_ai.workflow.name": ID,
    "gen_ai.request.stream": FLAG,
    "gen_ai.response.time_to_first_chunk": NUMBER,
    "gen_ai.usage.reasoning.output_tokens": NUMBER,
    # open-telemetry/semantic-conventions-genai only: content-free keys newer than v1.41.1
    "gen_ai.conversation.compacted": FLAG,
    "gen_ai.request.reasoning.level": ID,
    "gen_ai.request.previous_response.id": ID,
    "gen_ai.request.stream_cursor": ID,
    "gen_ai.response.status": ID,
    "gen_ai.retrieval.top_k": NUMBER,
    "gen_ai.memory.store.id": ID,
    "gen_ai.memory.record.id": ID,
    "gen_ai.memory.record.count": NUMBER,
    "gen_ai.usage.cache_write.input_tokens": NUMBER,
    **{
        f"gen_ai.usage.{modality}.{count}": NUMBER
        for modality in ("text", "image", "audio")
        for count in ("input_tokens", "output_tokens", "cache_read.input_tokens")
    },
    # the GenAI security conventions' decision (proposal names, status Development): what this
    # package's guard writes on a tool span and in its ``gen_ai.security.finding`` events — rule and
    # argument names, never a value (#45: the decision survives every stripping mode)
    "gen_ai.security.decision.type": ID,
    "gen_ai.security.decision.reason": REASONS,
    "gen_ai.security.target.type": ID,
    "gen_ai.security.target.id": ID,
    "gen_ai.security.policy.id": ID,
    "gen_ai.security.risk.category": ID,
    "gen_ai.security.risk.severity": ID,
    "gen_ai.security.risk.metadata": IDS,
    "gen_ai.guardian.name": ID,
    # the producers' span-kind markers (enumerations) and where they name a tool (from code; both
    # halves find a tool span's tool by them): every row of otel_provenance.dialects
    **{key: ID for key in (*dialects.KIND_KEYS, *dialects.TOOL_NAME_KEYS)},
    "traceloop.workflow.name": ID,  # OpenLLMetry's workflow, named in code
}

#: HTTP and URL conventions (current and deprecated names). Full URLs keep only their origin.
HTTP_KEYS: Final[Mapping[str, Rule]] = {
    "http.request.method": ID,
    "http.response.status_code": NUMBER,
    "http.route": ID,
    "url.template": ID,
    "url.scheme": ID,
    "url.full": ORIGIN,
    "http.url": ORIGIN,
    "server.address": ID,
    "server.port": NUMBER,
    "network.protocol.name": ID,
    "network.protocol.version": ID,
    "network.transport": ID,
    "http.request.body.size": NUMBER,
    "http.response.body.size": NUMBER,
    "http.request.resend_count": NUMBER,
    "http.method": ID,
    "http.status_code": NUMBER,
    "http.scheme": ID,
    "net.peer.name": ID,
    "net.peer.port": NUMBER,
}

#: Database conventions: system, names and counts — never the query text or its parameters.
DB_KEYS: Final[Mapping[str, Rule]] = {
    "db.system": ID,
    "db.system.name": ID,
    "db.namespace": ID,
    "db.collection.name": ID,
    "db.operation.name": ID,
    "db.operation.batch.size": NUMBER,
    "db.query.summary": ID,
    "db.response.status_code": ID,
    "db.response.returned_rows": NUMBER,
    "db.stored_procedure.name": ID,
    "db.name": ID,
    "db.operation": ID,
    "db.sql.table": ID,
}

#: RPC conventions (gRPC, JSON-RPC): system, service, method, status.
RPC_KEYS: Final[Mapping[str, Rule]] = {
    "rpc.system": ID,
    "rpc.service": ID,
    "rpc.method": ID,
    "rpc.grpc.status_code": NUMBER,
    "rpc.jsonrpc.version": ID,
    "rpc.jsonrpc.request_id": ID,
    "rpc.jsonrpc.error_code": NUMBER,
    "mcp.method.name": ID,
    "mcp.session.id": ID,
    "mcp.protocol.version": ID,
}

#: Messaging conventions: system, operation, destination names, ids and sizes — never the body.
MESSAGING_KEYS: Final[Mapping[str, Rule]] = {
    "messaging.system": ID,
    "messaging.operation.name": ID,
    "messaging.operation.type": ID,
    "messaging.destination.name": ID,
    "messaging.destination.template": ID,
    "messaging.destination.partition.id": ID,
    "messaging.consumer.group.name": ID,
    "messaging.client.id": ID,
    "messaging.message.id": ID,
    "messaging.message.conversation_id": ID,
    "messaging.batch.message_count": NUMBER,
    "messaging.message.body.size": NUMBER,
    "messaging.message.envelope.size": NUMBER,
}

#: Errors and exceptions: the type only (messages and stack traces quote values).
ERROR_KEYS: Final[Mapping[str, Rule]] = {
    "error.type": TYPE,
    "exception.type": TYPE,
    "exception.escaped": FLAG,
    "otel.status_code": ID,
}

#: Resource attributes naming the service and where it runs (not content: set by the operator).
RESOURCE_KEYS: Final[Mapping[str, Rule]] = {
    **{
        key: ID
        for key in (
            "service.name",
            "service.version",
            "service.namespace",
            "service.instance.id",
            "deployment.environment",
            "deployment.environment.name",
            "telemetry.sdk.name",
            "telemetry.sdk.language",
            "telemetry.sdk.version",
            "telemetry.distro.name",
            "telemetry.distro.version",
            "host.name",
            "host.id",
            "host.arch",
            "host.type",
            "os.type",
            "os.name",
            "os.version",
            "process.runtime.name",
            "process.runtime.version",
            "cloud.provider",
            "cloud.platform",
            "cloud.region",
            "cloud.availability_zone",
            "cloud.account.id",
            "k8s.cluster.name",
            "k8s.namespace.name",
            "k8s.node.name",
            "k8s.pod.name",
            "k8s.pod.uid",
            "k8s.deployment.name",
            "k8s.container.name",
            "container.id",
            "container.name",
            "container.image.name",
            "faas.name",
            "faas.version",
        )
    },
    "process.pid": NUMBER,
}

ALLOWED_KEYS: Final[Mapping[str, Rule]] = {
    **GENAI_KEYS,
    **HTTP_KEYS,
    **DB_KEYS,
    **RPC_KEYS,
    **MESSAGING_KEYS,
    **ERROR_KEYS,
    **RESOURCE_KEYS,
}


def is_allowed_key(key: str) -> bool:
    return key in ALLOWED_KEYS


def clean_value(key: str, value: Any) -> Any:
    """``value`` as it may leave under ``key`` (maybe reduced, e.g. a URL to its origin), or :data:`DROP`."""
    rule = ALLOWED_KEYS.get(key)
    return DROP if rule is None else rule(value)


__all__ = ["ALLOWED_KEYS", "DROP", "MAX_IDENTIFIER_LENGTH", "clean_value", "is_allowed_key"]
