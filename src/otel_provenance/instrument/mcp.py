"""MCP tool calls with provenance: wrap an ``mcp.ClientSession`` once, and every ``call_tool`` is gated.

``provenance_session(session)`` returns a proxy of the session (``isinstance`` still holds, every other
method is the session's own) whose ``call_tool``:

1. finds the tool's ``side_effect``: a :class:`ToolPolicy` override by tool name, else the tool's MCP
   annotations from ``list_tools`` (cached, and re-read on every listing): ``readOnlyHint`` →
   ``read``; anything else — ``destructiveHint``, no hint, a tool missing from the listing — →
   ``write`` (fail closed);
2. classifies the arguments against the current ``op.run`` ledger and checks the budget — the same
   lifecycle as ``@op.tool`` (:class:`.lifecycle.ToolCall`) — *before* the request is sent;
3. asks the approver when the tool's policy says it needs approval (``ToolPolicy(needs_approval=...)``,
   the lifecycle's ask step): anything but an explicit ``True`` blocks the call;
   if blocked: ends an ``execute_tool {name}`` span with ``agent.tool.status=blocked`` and returns an
   MCP tool error (``isError`` result whose text names arguments and kinds, never values), or raises
   :class:`ProvenanceError` when ``on_blocked="raise"``. The server never receives the request;
4. otherwise sends the request with the span current (the MCP SDK's own client span and the server's
   span nest under it) and remembers the result — ``structuredContent``, and each text block, parsed
   as JSON where it is JSON — in the run's ledger, so later calls (MCP or ``@op.tool``) can be
   observed from it. A result with ``isError`` ends the span with ``error.type=tool_error`` and is not
   remembered.

The span follows the MCP semantic conventions' advice for an outer tool span: the MCP keys
(``mcp.method.name``, ``mcp.protocol.version``, ``mcp.session.id`` when given) go on the GenAI
``execute_tool`` span. From protocol revision 2026-07-28 on, MCP has no sessions: a session that
negotiated it never gets ``mcp.session.id``, even when ``session_id`` is given. Argument names are
the model's choice: identifier-like names are kept, any other becomes ``arguments.<position>`` (a
key can itself be data).

MCP annotations are hints from the server. For a server you do not trust, state ``side_effect`` in a
:class:`ToolPolicy`: an override always wins over the annotations.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import wrapt
from opentelemetry import trace

from .. import semconv as sc
from ..dialects.calls import named_by_schema, property_names
from ..errors import ConfigurationError, ProvenanceError
from .call.approval import needs_approval_check
from .call.budget import Budget
from .call.decision import RULE_APPROVAL
from .call.lifecycle import ToolCall, ToolSpec
from .call.policy import Policy, as_policies, policy_checks
from .evidence.ledger import safe_names
from .evidence.trust import source_trust

_log = logging.getLogger("otel_provenance")
ON_BLOCKED = ("error_result", "raise")
READ_ONLY_HINT = ("read_only_hint", "readOnlyHint")  # mcp 2.x attribute name, then 1.x
_MAX_RELISTED = 256
#: The tool name a call is exported under (span name, ``gen_ai.tool.name``, metrics) when the server's
#: listing does not hold the name it was called by: that name is the model's output — an injected
#: text can make it anything, a value included — and no tool of the server carries it.
UNLISTED_TOOL = "_unlisted"
#: the first MCP revision without sessions (revisions are dates: later ones compare greater)
SESSIONLESS_FROM = "2026-07-28"


@dataclass(frozen=True)
class ToolPolicy:
    """Per-tool settings of a wrapped MCP session, by tool name: ``tools={"delete": ToolPolicy(...)}``.

    ``side_effect`` overrides the tool's annotations (``None``: derive it from them); the rest mean
    what they mean on ``@op.tool`` (``needs_approval``'s function gets the arguments by the names the
    span gives them; ``policy``: an ``op.Policy`` or a list of them on the values of the arguments,
    judged before the request is sent; ``trust``: who wrote the tool's results — ``"values"``, the
    default, ``"trusted"`` or ``"untrusted"``; ``trusted_fields``: the fields of an untrusted tool's
    results the server sets, not that content's author; ``trusted_records``: a predicate over each
    record that says the user or the server wrote it; ``untrusted_fields``: the fields an outsider
    writes in an otherwise server-made result; ``egress``: the arguments through which a call sends
    data out, judged like a write's destination).
    """

    side_effect: str | None = None
    budget: Budget | None = None
    invented: frozenset[str] | Iterable[str] = field(default=frozenset())
    data_domain: str | None = None
    idempotency_key: str | None = None
    needs_approval: bool | Callable[[Mapping[str, Any]], bool] = False
    policy: Policy | tuple[Policy, ...] | None = None
    trust: str = sc.TRUST_VALUES
    trusted_fields: frozenset[str] | Iterable[str] = field(default=frozenset())
    trusted_records: Callable[[Any], Any] | None = None
    untrusted_fields: frozenset[str] | Iterable[str] = field(default=frozenset())
    egress: frozenset[str] | Iterable[str] = field(default=frozenset())

    def __post_init__(self) -> None:
        if self.side_effect is not None and self.side_effect not in sc.SIDE_EFFECTS:
            raise ConfigurationError(
                f"ToolPolicy.side_effect: must be None or one of {', '.join(sc.SIDE_EFFECTS)}"
            )
        checked = source_trust(
            "ToolPolicy", self.trust, self.trusted_fields, self.trusted_records, self.untrusted_fields
        )
        object.__setattr__(self, "trusted_fields", checked.fields)
        object.__setattr__(self, "untrusted_fields", checked.untrusted_fields)
        egress = self.egress or ()
        if isinstance(egress, str) or not all(isinstance(n, str) and n for n in egress):
            raise ConfigurationError("ToolPolicy: egress must be a collection of argument names")
        object.__setattr__(self, "egress", frozenset(egress))
        invented = () if self.invented is None else self.invented  # None: none, as on op.tool
        if isinstance(invented, str) or not all(isinstance(n, str) for n in invented):
            raise ConfigurationError("ToolPolicy.invented: must be a collection of argument names")
        object.__setattr__(self, "invented", frozenset(invented))
        needs_approval_check(self.needs_approval, "ToolPolicy")  # a wrong value fails here
        object.__setattr__(self, "policy", as_policies(self.policy, "ToolPolicy.policy"))


_DEFAULT_POLICY = ToolPolicy()


def provenance_session(
    session: Any,
    *,
    tools: Mapping[str, ToolPolicy] | None = None,
    on_blocked: str = "error_result",
    session_id: str | Callable[[], str | None] | None = None,
    tracer_provider: trace.TracerProvider | None = None,
) -> Any:
    """Wrap an initialised ``mcp.ClientSession`` so every ``call_tool`` carries provenance and budgets.

    ``tools`` maps tool names to :class:`ToolPolicy` overrides. ``on_blocked`` is ``"error_result"``
    (default: the model gets an MCP tool error and the agent loop goes on) or ``"raise"``
    (:class:`ProvenanceError`). ``session_id`` (a string, or a callable such as the streamable HTTP
    transport's ``get_session_id``) becomes ``mcp.session.id``.
    """
    if not all(callable(getattr(session, m, None)) for m in ("call_tool", "list_tools")):
        raise ConfigurationError("provenance_session: expected an mcp.ClientSession (call_tool, list_tools)")
    if on_blocked not in ON_BLOCKED:
        raise ConfigurationError(
            f"provenance_session(on_blocked=...): must be one of {', '.join(ON_BLOCKED)}"
        )
    policies = dict(tools or {})
    for name, policy in policies.items():
        if not isinstance(name, str) or not isinstance(policy, ToolPolicy):
            raise ConfigurationError(
                f"provenance_session(tools=...): expected tool name -> ToolPolicy, got {name!r}"
            )
    if session_id is not None and not (isinstance(session_id, str) or callable(session_id)):
        raise ConfigurationError("provenance_session(session_id=...): expected a string or a callable")
    return _ProvenanceSession(session, policies, on_blocked, session_id, tracer_provider)


def side_effect_of(tool: Any) -> str:
    """``read`` for a tool annotated ``readOnlyHint: true``; ``write`` for every other tool."""
    annotations = getattr(tool, "annotations", None)
    if annotations is None:
        return "write"
    for name in READ_ONLY_HINT:
        if getattr(annotations, name, None) is True:
            return "read"
    return "write"


class _ProvenanceSession(wrapt.ObjectProxy):
    """The wrapped session. State lives in ``_self_`` attributes (wrapt's rule for proxy-own state)."""

    def __init__(self, session, policies, on_blocked, session_id, tracer_provider) -> None:
        super().__init__(session)
        self._self_policies: dict[str, ToolPolicy] = policies
        self._self_on_blocked: str = on_blocked
        self._self_session_id = session_id
        self._self_tracer_provider = tracer_provider
        self._self_side_effects: dict[str, str] | None = None  # tool name -> side effect, from listing
        self._self_declared: dict[str, frozenset[str]] = {}  # tool name -> its input schema's names
        self._self_relisted: set[str] = set()
        self._self_specs: dict[str, ToolSpec] = {}

    # -- listing ----------------------------------------------------------------------------------------
    async def list_tools(self, *args: Any, **kwargs: Any) -> Any:
        """The session's ``list_tools``; what it lists also refreshes the cached annotations."""
        result = await self.__wrapped__.list_tools(*args, **kwargs)
        self._self_absorb(getattr(result, "tools", ()), complete=False)
        return result

    def _self_absorb(self, listed: Iterable[Any], *, complete: bool) -> None:
        known = {} if complete or self._self_side_effects is None else dict(self._self_side_effects)
        declared = {} if complete else dict(self._self_declared)
        for tool in listed:
            known[tool.name] = side_effect_of(tool)
            declared[tool.name] = _schema_names(tool)
        self._self_side_effects = known
        self._self_declared = declared
        self._self_specs = {
            n: s
            for n, s in self._self_specs.items()
            if s.side_effect == self._self_side_effect_now(n) and s.name == self._self_label(n)
        }

    def _self_label(self, name: str) -> str:
        """The name a call of ``name`` is exported under: its own when a policy names it, when the
        server's listing holds it or when no listing could be read; else :data:`UNLISTED_TOOL`."""
        if name in self._self_policies or self._self_side_effects is None or name in self._self_side_effects:
            return name
        return UNLISTED_TOOL

    async def _self_list_all(self) -> None:
        """List every page once. A server that cannot list leaves every tool at ``write``."""
        listed: list[Any] = []
        try:
            page = await self.__wrapped__.list_tools()
            listed.extend(page.tools)
            seen: set[str] = set()
            while (cursor := getattr(page, "next_cursor", None) or getattr(page, "nextCursor", None)) and (
                cursor not in seen
            ):
                seen.add(cursor)
                page = await self._self_next_page(cursor)
                listed.extend(page.tools)
        except Exception as exc:
            _log.warning("MCP list_tools failed (%s): unlisted tools count as write", type(exc).__name__)
        self._self_absorb(listed, complete=True)

    async def _self_next_page(self, cursor: str) -> Any:
        try:  # mcp 2.x takes the request params, 1.x a cursor keyword
            from mcp import types

            return await self.__wrapped__.list_tools(params=types.PaginatedRequestParams(cursor=cursor))
        except (TypeError, AttributeError):
            return await self.__wrapped__.list_tools(cursor=cursor)

    def _self_side_effect_now(self, name: str) -> str:
        policy = self._self_policies.get(name, _DEFAULT_POLICY)
        if policy.side_effect is not None:
            return policy.side_effect
        return (self._self_side_effects or {}).get(name, "write")

    async def _self_spec(self, name: str) -> ToolSpec:
        """The spec of ``name``, listing the tools first when its side effect must come from them."""
        policy = self._self_policies.get(name, _DEFAULT_POLICY)
        if policy.side_effect is None and (
            self._self_side_effects is None
            or (name not in self._self_side_effects and name not in self._self_relisted)
        ):
            if self._self_side_effects is not None:
                if len(self._self_relisted) >= _MAX_RELISTED:  # names a model keeps inventing: no more lists
                    return self._self_spec_for(name, policy)
                self._self_relisted.add(name)  # a tool added since the listing: list once more
            await self._self_list_all()
        return self._self_spec_for(name, policy)

    def _self_spec_for(self, name: str, policy: ToolPolicy) -> ToolSpec:
        """The cached spec of ``name``, made from the policy and the listed annotations if new."""
        spec = self._self_specs.get(name)
        if spec is None:
            approval = needs_approval_check(policy.needs_approval, f"ToolPolicy({name})")
            spec = ToolSpec(
                self._self_label(name),
                side_effect=self._self_side_effect_now(name),
                data_domain=policy.data_domain,
                budget=policy.budget,
                invented=policy.invented,
                idempotency_key=policy.idempotency_key,
                tracer_provider=self._self_tracer_provider,
                tool_type="extension",
                span_attributes=self._self_span_attributes(),
                checks=(
                    *policy_checks(policy.policy),  # type: ignore[arg-type]
                    *((approval,) if approval is not None else ()),
                ),
                trust=policy.trust,
                trusted_fields=policy.trusted_fields,
                trusted_records=policy.trusted_records,
                untrusted_fields=policy.untrusted_fields,
                egress=policy.egress,
            )
            if len(self._self_specs) < 1024:
                self._self_specs[name] = spec
        return spec

    def _self_argument_names(self, name: str) -> frozenset[str] | None:
        """The argument names a call of ``name`` exports as they are (any other goes by position,
        ``arguments.<i>``): those the tool's listed input schema declares and those its policy names.
        The names in a call are the model's choice and can be data; the server's schema says which
        are parameters. None — identifier-like names kept — when no listing holds the tool and it is
        not unlisted either (a server that cannot list, a tool only a policy names)."""
        declared = self._self_declared.get(name)
        if declared is None and self._self_label(name) != UNLISTED_TOOL:
            return None
        policy = self._self_policies.get(name, _DEFAULT_POLICY)
        named = {
            *policy.invented,
            *policy.egress,
            *((policy.idempotency_key,) if policy.idempotency_key else ()),
        }
        return (declared or frozenset()).union(named)

    def _self_span_attributes(self) -> dict[str, Any]:
        attributes: dict[str, Any] = {sc.MCP_METHOD_NAME: sc.MCP_TOOLS_CALL}
        version = getattr(self.__wrapped__, "protocol_version", None)
        if not isinstance(version, str):
            initialized = getattr(self.__wrapped__, "initialize_result", None)
            version = getattr(initialized, "protocol_version", None) or getattr(
                initialized, "protocolVersion", None
            )
        if isinstance(version, str) and version:
            attributes[sc.MCP_PROTOCOL_VERSION] = version
            if version >= SESSIONLESS_FROM:  # no session to name
                return attributes
        session_id = self._self_session_id
        if callable(session_id):
            try:
                session_id = session_id()
            except Exception:
                session_id = None
        if isinstance(session_id, str) and session_id:
            attributes[sc.MCP_SESSION_ID] = session_id
        return attributes

    # -- calling ----------------------------------------------------------------------------------------
    async def call_tool(
        self, name: str, arguments: Mapping[str, Any] | None = None, *args: Any, **kwargs: Any
    ) -> Any:
        """``ClientSession.call_tool``, gated by provenance before the request is sent."""
        spec = await self._self_spec(name)
        names = self._self_argument_names(name)
        call = ToolCall(spec, lambda: _named_arguments(arguments, names))
        await call.ask_async()  # a person, when the policy asks for one; a denial blocks
        if call.blocked:
            if self._self_on_blocked == "raise":
                raise call.refuse()  # no local naming it: its traceback would hold it (a cycle, #45)
            return _blocked_result(call.refuse())
        call.start()
        result = await call.run_async(self.__wrapped__.call_tool, name, arguments, *args, **kwargs)
        if _flag(result, "is_error", "isError"):
            call.finish_error(error_type=sc.MCP_TOOL_ERROR)
            return result
        _remember(call, result)
        call.finish()
        return result


def _named_arguments(arguments: Mapping[str, Any] | None, names: frozenset[str] | None) -> dict[str, Any]:
    if arguments is None:
        return {}
    if not isinstance(arguments, Mapping):
        raise TypeError("MCP tool arguments must be an object")
    if names is None:
        return safe_names(arguments, "arguments")
    return named_by_schema(arguments, "arguments", names)


def _schema_names(tool: Any) -> frozenset[str]:
    """The parameter names a listed tool's input schema declares (``inputSchema`` in mcp 1.x,
    ``input_schema`` in 2.x); none when it declares none."""
    schema = getattr(tool, "input_schema", None) or getattr(tool, "inputSchema", None)
    return property_names(schema) or frozenset()


def _flag(result: Any, *names: str) -> bool:
    return any(getattr(result, n, None) is True for n in names)


def _remember(call: ToolCall, result: Any) -> None:
    """Text blocks first (``content.<i>``), then ``structuredContent`` (its own field paths win)."""
    for index, block in enumerate(getattr(result, "content", None) or ()):
        text = getattr(block, "text", None)
        if isinstance(text, str) and text:
            call.remember(_parse_json(text), ("content", index))
    structured = getattr(result, "structured_content", None)
    if structured is None:
        structured = getattr(result, "structuredContent", None)
    if structured is not None:
        call.remember(structured)


def _parse_json(text: str) -> Any:
    if not text or text[0] not in '{["-0123456789tfn':
        return text
    try:
        return json.loads(text)
    except ValueError:
        return text


def _blocked_result(error: ProvenanceError) -> Any:
    """An MCP tool error the model can read: tool, rules, argument names and kinds — never values."""
    from mcp import types

    hint = (
        "A person did not approve it."
        if any(v.startswith(f"{RULE_APPROVAL}:") for v in error.violations)
        else "Use values observed from earlier tool results or given as the run's inputs."
    )
    message = f"Tool call refused before it was sent: {error}. {hint}"
    return types.CallToolResult.model_validate(
        {"content": [{"type": "text", "text": message}], "isError": True}
    )


__all__ = ["ON_BLOCKED", "ToolPolicy", "provenance_session", "side_effect_of"]
