"""Which spans are LLM calls, tool executions or agents, whoever wrote them.

One rule for the span processors and the live predictor, kept identical to the store's
``span_roles`` view (``store/schema.py`` writes it in SQL): GenAI operations
(``gen_ai.operation.name``), OpenInference span kinds (``openinference.span.kind``) and
OpenLLMetry's ``llm.request.type``. It reads only attributes set when a span starts, which is
when the processors must decide.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agentchaos_otel import attributes as A

LLM, TOOL, AGENT = "llm", "tool", "agent"


def span_role(attributes: Mapping[str, Any] | None) -> str | None:
    """'llm', 'tool', 'agent' or None."""
    if not attributes:
        return None
    op = attributes.get(A.GEN_AI_OPERATION_NAME)
    oi_kind = str(attributes.get(A.OI_SPAN_KIND) or "").upper()
    if op in A.LLM_OPERATIONS or oi_kind == A.OI_KIND_LLM or attributes.get(A.LLM_REQUEST_TYPE) in A.LLM_REQUEST_TYPES:
        return LLM
    if op == A.OP_EXECUTE_TOOL or oi_kind == A.OI_KIND_TOOL:
        return TOOL
    if op == A.OP_INVOKE_AGENT or oi_kind == A.OI_KIND_AGENT:
        return AGENT
    return None


def step_kind(attributes: Mapping[str, Any] | None) -> str | None:
    """'llm' or 'tool' for spans that are steps of an episode, else None."""
    role = span_role(attributes)
    return role if role in (LLM, TOOL) else None
