"""Which spans are LLM calls, tool executions or agents, whoever wrote them.

One rule for the span processors and the live predictor, kept identical to the store's
``span_roles`` view (``store/schema.py`` writes it in SQL): GenAI operations
(``gen_ai.operation.name``), OpenInference span kinds (``openinference.span.kind``) and
OpenLLMetry's ``llm.request.type``. A span marked as an episode root (``agentchaos.episode.root``)
is an agent whatever else it carries: other instrumentations write onto the current span (LiteLLM's
callback sets ``gen_ai.operation.name=chat`` on it), and an episode must not turn into a step.

The processors decide at span start (``step_kind_at_start``, which also reads the conventions'
span name ``execute_tool {tool}``, for instrumentations that set their attributes later) and
again on a span's final attributes; the views always read the final ones.

The server's side of an MCP request (a SERVER span with ``mcp.method.name``, which the ``mcp``
SDK 2.x marks ``execute_tool`` for tool calls) is the tool running as the server sees it, not a
step of the agent: the agent's step is the client span (``tools/call {tool}``, ours). The SDK's
own client span (``MCP send ...``) carries no GenAI operation and is no step either.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agentchaos_otel import attributes as A

LLM, TOOL, AGENT = "llm", "tool", "agent"


def is_server_side(attributes: Mapping[str, Any], span_kind: Any = None) -> bool:
    """An MCP server's span of a request (``span_kind``: an OTel ``SpanKind`` or its name)."""
    return A.MCP_METHOD_NAME in attributes and getattr(span_kind, "name", span_kind) == "SERVER"


# Every key a role is read from: a span with none of them (most spans of an application: web
# requests, queries, HTTP calls) is answered by one pass over its keys instead of a failed lookup
# per key (the SDK's attribute mapping raises and catches KeyError for each missing one).
_ROLE_KEYS = frozenset({A.MCP_METHOD_NAME, A.EPISODE_ROOT, A.GEN_AI_OPERATION_NAME, A.OI_SPAN_KIND,
                        A.LLM_REQUEST_TYPE})


def span_role(attributes: Mapping[str, Any] | None, span_kind: Any = None) -> str | None:
    """'llm', 'tool', 'agent' or None."""
    if not attributes:
        return None
    present = _ROLE_KEYS.intersection(attributes)  # then no lookup of a key the span does not have
    if not present or (A.MCP_METHOD_NAME in present and is_server_side(attributes, span_kind)):
        return None
    if A.EPISODE_ROOT in present and attributes.get(A.EPISODE_ROOT):
        return AGENT
    op = attributes.get(A.GEN_AI_OPERATION_NAME) if A.GEN_AI_OPERATION_NAME in present else None
    oi_kind = str(attributes.get(A.OI_SPAN_KIND) or "").upper() if A.OI_SPAN_KIND in present else ""
    if op in A.LLM_OPERATIONS or oi_kind == A.OI_KIND_LLM \
            or (A.LLM_REQUEST_TYPE in present and attributes.get(A.LLM_REQUEST_TYPE) in A.LLM_REQUEST_TYPES):
        return LLM
    if op == A.OP_EXECUTE_TOOL or oi_kind == A.OI_KIND_TOOL:
        return TOOL
    if op == A.OP_INVOKE_AGENT or oi_kind == A.OI_KIND_AGENT:
        return AGENT
    return None


def step_kind(attributes: Mapping[str, Any] | None, span_kind: Any = None) -> str | None:
    """'llm' or 'tool' for spans that are steps of an episode, else None."""
    role = span_role(attributes, span_kind)
    return role if role in (LLM, TOOL) else None


_TOOL_NAME_PREFIX = A.OP_EXECUTE_TOOL + " "


def step_kind_at_start(attributes: Mapping[str, Any] | None, name: str, span_kind: Any = None) -> str | None:
    """``step_kind``, or 'tool' for a span named ``execute_tool {tool}`` whose attributes come later."""
    kind = step_kind(attributes, span_kind)
    if kind is None and name.startswith(_TOOL_NAME_PREFIX) and span_role(attributes, span_kind) is None \
            and getattr(span_kind, "name", span_kind) != "SERVER":
        return TOOL
    return kind
