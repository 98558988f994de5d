"""Attribute names shared by the online half (instrument/) and the offline half (offline/).

Both halves, and every user's contract file, depend on these strings; change one and old traces stop
matching. The GenAI, ``error.*`` and ``service.*`` names are the OpenTelemetry semantic conventions'
own strings, written here rather than imported: the ``opentelemetry-semantic-conventions`` release an
application has installed may predate some of them (``gen_ai.tool.call.arguments`` arrived in 0.55b0),
and the offline half must not need an OTel package at all. A test checks them against that package.
"""

from __future__ import annotations

from typing import Final

# --- GenAI conventions (execute_tool and invoke_agent spans) ---------------------------------------
GEN_AI_OPERATION_NAME: Final = "gen_ai.operation.name"
GEN_AI_TOOL_NAME: Final = "gen_ai.tool.name"
GEN_AI_TOOL_CALL_ID: Final = "gen_ai.tool.call.id"  # the model's (the framework's) call id, only
# this package's own id for a call the framework gave none (#48: an invented value in a standard key)
TOOL_CALL_ID: Final = "agent.tool.call.id"
GEN_AI_TOOL_TYPE: Final = "gen_ai.tool.type"
GEN_AI_TOOL_DESCRIPTION: Final = "gen_ai.tool.description"
GEN_AI_TOOL_CALL_ARGUMENTS: Final = "gen_ai.tool.call.arguments"
GEN_AI_TOOL_CALL_RESULT: Final = "gen_ai.tool.call.result"
GEN_AI_AGENT_NAME: Final = "gen_ai.agent.name"
GEN_AI_PROVIDER_NAME: Final = "gen_ai.provider.name"  # invoke_agent: the model's provider (#35)
GEN_AI_CONVERSATION_ID: Final = "gen_ai.conversation.id"  # invoke_agent: the session/thread (#35)
ERROR_TYPE: Final = "error.type"
SERVICE_NAME: Final = "service.name"
SERVICE_VERSION: Final = "service.version"

EXECUTE_TOOL: Final = "execute_tool"  # gen_ai.operation.name of a tool call
TOOL_SPAN_PREFIX: Final = EXECUTE_TOOL + " "  # span name is "execute_tool {gen_ai.tool.name}"
INVOKE_AGENT: Final = "invoke_agent"  # gen_ai.operation.name of an agent run (op.run's root span)

# --- MCP conventions (the client's execute_tool span carries the MCP keys, per the MCP semconv) --------
MCP_METHOD_NAME: Final = "mcp.method.name"
MCP_PROTOCOL_VERSION: Final = "mcp.protocol.version"
MCP_SESSION_ID: Final = "mcp.session.id"
MCP_TOOLS_CALL: Final = "tools/call"
MCP_TOOL_ERROR: Final = "tool_error"  # error.type of a CallToolResult with isError set

# --- Provenance, per passed argument ---------------------------------------------------------------
ARG_PREFIX: Final = "agent.arg."
ARG_KIND_SUFFIX: Final = ".kind"
ARG_SOURCE_TOOL_SUFFIX: Final = ".source_tool"
ARG_SOURCE_FIELD_SUFFIX: Final = ".source_field"
ARG_SOURCE_SPAN_ID_SUFFIX: Final = ".source_span_id"
ARG_PROJECTION_SUFFIX: Final = ".projection"
ARG_DIGEST_SUFFIX: Final = ".digest"
ARG_SUFFIXES: Final = (
    ARG_KIND_SUFFIX,
    ARG_SOURCE_TOOL_SUFFIX,
    ARG_SOURCE_FIELD_SUFFIX,
    ARG_SOURCE_SPAN_ID_SUFFIX,
    ARG_PROJECTION_SUFFIX,
    ARG_DIGEST_SUFFIX,
)

KIND_OBSERVED: Final = "observed"
KIND_ASSUMED: Final = "assumed"
KIND_INVENTED: Final = "invented"
# the value was found only in results of tools declared to return untrusted content (#34)
KIND_UNTRUSTED: Final = "untrusted"
ARG_KINDS: Final = (KIND_OBSERVED, KIND_ASSUMED, KIND_INVENTED, KIND_UNTRUSTED)

# a tool's declared trust in its own results (``@op.tool(trust=...)``): not an attribute, an option
# (#44) ``values``, the default: whole values are evidence, the words inside its texts are not;
# ``trusted``: its texts' words too; ``untrusted``: nothing of it is evidence for a write
TRUST_VALUES: Final = "values"
TRUST_TRUSTED: Final = "trusted"
TRUST_UNTRUSTED: Final = "untrusted"
TRUST_LEVELS: Final = (TRUST_VALUES, TRUST_TRUSTED, TRUST_UNTRUSTED)

SOURCE_INPUT: Final = "input"  # source_tool of a run's declared inputs
SOURCE_REQUEST: Final = "request"  # source_field of the run's declared request text (op.run(request=...))
PROJECTION_EXACT: Final = "exact"

DIGEST_KEY_ID: Final = "agent.digest.key_id"
TOOL_STATUS: Final = "agent.tool.status"
TOOL_STATUS_OK: Final = "ok"
TOOL_STATUS_BLOCKED: Final = "blocked"
TOOL_STATUS_ERROR: Final = "error"
BUDGET_ASSUMED: Final = "agent.budget.assumed"
BUDGET_MAX_ASSUMED: Final = "agent.budget.max_assumed"
BUDGET_INVENTED: Final = "agent.budget.invented"
BUDGET_MAX_INVENTED: Final = "agent.budget.max_invented"
BUDGET_UNTRUSTED: Final = "agent.budget.untrusted"
BUDGET_MAX_UNTRUSTED: Final = "agent.budget.max_untrusted"
BUDGET_ALLOWED: Final = "agent.budget.allowed"  # argument names the budget's allow-list exempted (string[])
# argument names the tool declared egress: judged like a write's destination, even on a read (#44)
BUDGET_EGRESS: Final = "agent.budget.egress"
# argument names a person was asked about (a destination delegated by the user's request, #44)
BUDGET_ASKED: Final = "agent.budget.asked"
# argument names accepted as delegated: taken from a source the user named, in a call the user's own
# words shaped (#44; instrument/evidence/delegation.py)
BUDGET_DELEGATED: Final = "agent.budget.delegated"
VIOLATIONS: Final = "agent.violations"
LEDGER_FULL: Final = "agent.ledger.full"  # the run's ledger evicted entries before this call

# --- The guard: a person asked before the call (absent when no approval was asked) --------------------
GUARD_APPROVAL: Final = "agent.guard.approval"
APPROVAL_APPROVED: Final = "approved"
APPROVAL_DENIED: Final = "denied"  # the approver answered anything but True, or there is no approver
APPROVAL_TIMEOUT: Final = "timeout"  # no answer before the deadline
APPROVAL_ERROR: Final = "error"  # the approver raised (or could not be asked)
APPROVAL_OUTCOMES: Final = (APPROVAL_APPROVED, APPROVAL_DENIED, APPROVAL_TIMEOUT, APPROVAL_ERROR)

# --- Behaviour (trajectory side) -------------------------------------------------------------------
SIDE_EFFECT: Final = "agent.side_effect"
SIDE_EFFECTS: Final = ("none", "read", "write")
DATA_DOMAIN: Final = "agent.data_domain"
RETRY_NUMBER: Final = "agent.retry.number"
IDEMPOTENCY_PRESENT: Final = "agent.idempotency.present"
RUN_ID: Final = "agent.run.id"

# --- The guard (the contract at call time; docs/guard.md) -------------------------------------------
# On the tool span, with the names a security-guardrail *proposal* gives (open-telemetry/semantic-conventions
# PR #3233, closed unmerged; its successor, semantic-conventions-genai PR #427, renames several): in no
# released convention and not in the genai repository's main (#48: docs/guard.md says so). The decision
# on the protected span itself, one ``gen_ai.security.finding`` event per objection.
SECURITY_DECISION_TYPE: Final = "gen_ai.security.decision.type"  # allow | deny | warn
SECURITY_DECISION_REASON: Final = "gen_ai.security.decision.reason"  # rule names, never values
SECURITY_TARGET_TYPE: Final = "gen_ai.security.target.type"  # tool_call
SECURITY_TARGET_ID: Final = "gen_ai.security.target.id"  # the call's gen_ai.tool.call.id, when it has one
SECURITY_POLICY_ID: Final = "gen_ai.security.policy.id"  # the rule that objected
GUARDIAN_NAME: Final = "gen_ai.guardian.name"
SECURITY_FINDING_EVENT: Final = "gen_ai.security.finding"
SECURITY_RISK_CATEGORY: Final = "gen_ai.security.risk.category"
SECURITY_RISK_SEVERITY: Final = "gen_ai.security.risk.severity"
SECURITY_RISK_METADATA: Final = "gen_ai.security.risk.metadata"
DECISION_ALLOW: Final = "allow"
DECISION_DENY: Final = "deny"
DECISION_WARN: Final = "warn"
TARGET_TOOL_CALL: Final = "tool_call"
GUARDIAN: Final = "otel-provenance"
# On the run's span when it ends: the whole contract judged on the run's calls.
GUARD_RUN_VERDICT: Final = "agent.guard.run.verdict"  # pass | fail | insufficient_data | error
GUARD_RUN_FAILED: Final = "agent.guard.run.failed"  # rule ids that did not pass (string[])
GUARD_CONTRACT: Final = "agent.guard.contract"  # <name>@<first 12 of its digest>: the contract that judged


def arg_attr(name: str, suffix: str) -> str:
    """``agent.arg.<name><suffix>``, e.g. ``arg_attr("path", ARG_KIND_SUFFIX)``."""
    return f"{ARG_PREFIX}{name}{suffix}"


def split_arg_attr(key: str) -> tuple[str, str] | None:
    """Inverse of :func:`arg_attr`: ``(name, suffix)`` or ``None`` if ``key`` is not an argument key.

    Argument names may contain dots, so the suffix is matched from the right.
    """
    if not key.startswith(ARG_PREFIX):
        return None
    rest = key[len(ARG_PREFIX) :]
    for suffix in ARG_SUFFIXES:
        if rest.endswith(suffix) and len(rest) > len(suffix):
            return rest[: -len(suffix)], suffix
    return None


# --- Findings back beside the traces (#38): one log record per finding and per run's verdict, in the
# GenAI conventions' evaluation form (event ``gen_ai.evaluation.result``: semantic-conventions v1.38.0
# added it; since v1.42.0 it lives in open-telemetry/semantic-conventions-genai, model/gen-ai/events.yaml,
# status development). A SigNoz dashboard panel reads exactly these keys (docs/signoz.md).
EVALUATION_RESULT_EVENT: Final = "gen_ai.evaluation.result"
GEN_AI_EVALUATION_NAME: Final = "gen_ai.evaluation.name"  # the rule id; RUN_EVALUATION for a run's verdict
GEN_AI_EVALUATION_SCORE_LABEL: Final = "gen_ai.evaluation.score.label"  # pass | fail | insufficient | error
GEN_AI_EVALUATION_EXPLANATION: Final = "gen_ai.evaluation.explanation"  # the finding's content-free message
# double: the number the rule bounded (a count, retries, a sum, a similarity); only where a rule has one
GEN_AI_EVALUATION_SCORE_VALUE: Final = "gen_ai.evaluation.score.value"
FINDING_CODE: Final = "agent.finding.code"  # the rule's code, e.g. MISSING_PREREQUISITE
RULE_ID: Final = "agent.rule.id"
FINDING_WITNESS_SPAN_IDS: Final = "agent.finding.witness_span_ids"  # string[]: the spans that prove it
# (#48) what a record judged, so a backend can find it by release and update it on a re-run:
FINDING_ID: Final = "agent.finding.id"  # 32 hex: the same on every re-run of the same judgement
# the release judged (the runs' service.version), not the gate's; in the finding namespace because
# every ``agent.*`` name here is one the allow-list keeps on any span, and ``agent.release`` is a
# name an application may give its own attribute (the refund demo's summary log record does)
EVALUATED_RELEASE: Final = "agent.finding.release"
CONTRACT_NAME: Final = "agent.contract.name"  # the contract that judged (its ``name``)
CONTRACT_DIGEST: Final = "agent.contract.digest"  # sha256 of its canonical document (64 hex)
RUN_EVALUATION: Final = "otel-provenance.run"  # gen_ai.evaluation.name of a run's verdict
GATE_SERVICE_NAME: Final = "otel-provenance-gate"  # resource service.name of the records
