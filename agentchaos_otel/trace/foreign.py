"""Spans written by other instrumentations, mapped onto the attributes this project reads.

Agents are traced by the GenAI conventions' instrumentations (``opentelemetry-instrumentation-
openai-v2``, OpenLLMetry's ``openai`` and ``anthropic`` instrumentations) and by OpenInference;
each names the same facts differently (``gen_ai.tool.name`` or ``tool.name``, ``gen_ai.usage.
output_tokens`` or ``llm.token_count.completion``) and none records this project's content-free
signals (``agentchaos.response.*``, ``agentchaos.tool.*``). This module is the one place that
knows the mapping, so the store's SQL views (``store/schema.py``) and the diagnosers' per-step
observations (``diagnosers/observe.py``) cannot disagree about it:

- ``SOURCES``: for each fact, the attribute names that carry it, in precedence order (ours and the
  GenAI conventions' first). The views coalesce them in SQL; Python readers use ``first_present``
  or ``first_truthy``, as each reader documents.
- ``derive_llm`` / ``derive_tool``: when a span lacks our signals but carries captured content
  (GenAI ``gen_ai.output.messages``, OpenInference ``llm.output_messages.*`` or ``output.value``),
  the same signals computed from that content by ``signals``, the functions our transport uses.

Which spans are LLM calls, tool executions or agents is ``trace/kinds.py`` (and its SQL twin,
the ``span_roles`` view); both read the operation, span-kind and request-type names defined in
``attributes.py``. Nothing here reads ground-truth attributes (``agentchaos.fault.*``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agentchaos_otel import attributes as A
from agentchaos_otel import signals, tool_signals
from agentchaos_otel.trace import messages as genai_messages

# Fact -> attribute names that carry it, in precedence order.
PROVIDER = (A.GEN_AI_PROVIDER_NAME, A.GEN_AI_SYSTEM, A.OI_LLM_PROVIDER, A.OI_LLM_SYSTEM)
REQUEST_MODEL = (A.GEN_AI_REQUEST_MODEL, A.OI_LLM_MODEL_NAME)
RESPONSE_MODEL = (A.GEN_AI_RESPONSE_MODEL, A.OI_LLM_MODEL_NAME)
FINISH_REASONS = (A.GEN_AI_RESPONSE_FINISH_REASONS, A.OI_LLM_FINISH_REASON)
INPUT_TOKENS = (A.GEN_AI_USAGE_INPUT_TOKENS, A.OI_LLM_TOKEN_COUNT_PROMPT)
OUTPUT_TOKENS = (A.GEN_AI_USAGE_OUTPUT_TOKENS, A.OI_LLM_TOKEN_COUNT_COMPLETION)
TOOL_NAME = (A.GEN_AI_TOOL_NAME, A.OI_TOOL_NAME)
TOOL_DESCRIPTION = (A.GEN_AI_TOOL_DESCRIPTION, A.OI_TOOL_DESCRIPTION)
TOOL_CALL_ID = (A.GEN_AI_TOOL_CALL_ID, A.OI_TOOL_CALL_ID)
TOOL_RESULT = (A.GEN_AI_TOOL_CALL_RESULT, A.OI_OUTPUT_VALUE)
TOOL_ARGUMENTS = (A.GEN_AI_TOOL_CALL_ARGUMENTS, A.OI_INPUT_VALUE)
AGENT_NAME = (A.GEN_AI_AGENT_NAME, A.OI_AGENT_NAME)
HTTP_STATUS = (A.RESPONSE_STATUS_CODE, A.HTTP_RESPONSE_STATUS_CODE)

SOURCES: dict[str, tuple[str, ...]] = {
    "provider": PROVIDER, "request_model": REQUEST_MODEL, "response_model": RESPONSE_MODEL,
    "finish_reasons": FINISH_REASONS, "input_tokens": INPUT_TOKENS, "output_tokens": OUTPUT_TOKENS,
    "tool_name": TOOL_NAME, "tool_call_id": TOOL_CALL_ID, "tool_result": TOOL_RESULT,
    "tool_arguments": TOOL_ARGUMENTS, "agent_name": AGENT_NAME, "http_status": HTTP_STATUS,
}

_MISSING = object()


def first_present(attrs: Mapping[str, Any], names: tuple[str, ...], default: Any = None) -> Any:
    """The value of the first of ``names`` that ``attrs`` has (whatever the value), else ``default``."""
    for name in names:
        value = attrs.get(name, _MISSING)
        if value is not _MISSING:
            return value
    return default


def first_truthy(attrs: Mapping[str, Any], names: tuple[str, ...]) -> Any:
    """The first non-empty value among ``names`` (an empty name is no name), else None."""
    for name in names:
        value = attrs.get(name)
        if value:
            return value
    return None


def output_message(attrs: Mapping[str, Any]) -> tuple[str | None, list[dict[str, Any]], list[str]] | None:
    """(text, tool calls, finish reasons) from captured output content, GenAI or OpenInference."""
    captured = genai_messages.read_output(attrs.get(A.GEN_AI_OUTPUT_MESSAGES))  # conventions' or wire format
    if captured is not None:
        return captured
    prefix = A.OI_LLM_OUTPUT_MESSAGES_PREFIX
    oi = {k[len(prefix):]: v for k, v in attrs.items() if k.startswith(prefix)}
    if oi:
        text = oi.get("0.message.content")
        calls: list[dict[str, Any]] = []
        for i in range(16):
            name = oi.get(f"0.message.tool_calls.{i}.tool_call.function.name")
            if name is None:
                break
            calls.append({"function": {"name": name, "arguments": oi.get(
                f"0.message.tool_calls.{i}.tool_call.function.arguments", "")}})
        return (text if isinstance(text, str) else None), calls, []
    body = genai_messages.loads_or_none(attrs.get(A.OI_OUTPUT_VALUE))
    if isinstance(body, dict) and isinstance(body.get("choices"), list) and body["choices"]:
        ch = body["choices"][0] if isinstance(body["choices"][0], dict) else {}
        msg = ch.get("message") or {}
        text = msg.get("content")
        calls = [c for c in msg.get("tool_calls") or [] if isinstance(c, dict)]
        fr = [str(ch["finish_reason"])] if ch.get("finish_reason") else []
        return (text if isinstance(text, str) else None), calls, fr
    return None


def body_finish_reasons(attrs: Mapping[str, Any]) -> list[str]:
    """Finish reasons from a raw response body recorded as OpenInference ``output.value``."""
    body = genai_messages.loads_or_none(attrs.get(A.OI_OUTPUT_VALUE))
    if isinstance(body, dict) and isinstance(body.get("choices"), list):
        return [str(c["finish_reason"]) for c in body["choices"]
                if isinstance(c, dict) and c.get("finish_reason")]
    return []


def has_llm_signals(attrs: Mapping[str, Any]) -> bool:
    """Whether an LLM span already carries our response signals (our transport wrote it)."""
    return A.RESPONSE_CONTENT_LENGTH in attrs or A.RESPONSE_TOOL_CALL_COUNT in attrs


def has_tool_signals(attrs: Mapping[str, Any]) -> bool:
    """Whether a tool span already carries our result signals."""
    return A.TOOL_RESULT_LENGTH in attrs or A.TOOL_RESULT_IS_JSON in attrs


def derive_llm(attrs: dict[str, Any]) -> dict[str, Any]:
    """``attrs`` plus our response signals computed from captured content when it lacks them
    (``attrs`` itself when it has them or carries no content to compute them from)."""
    if has_llm_signals(attrs):
        return attrs
    out = output_message(attrs)
    if out is None:
        return attrs
    text, calls, fr = out
    fr = fr or body_finish_reasons(attrs)
    derived = dict(attrs)
    derived.update(signals.content_signals(text))
    derived.update(signals.tool_call_signals(calls, None))
    derived.setdefault(A.RESPONSE_DIGEST, signals.canonical_json_digest(
        {"text": text or "", "tools": [[(c.get("function") or {}).get("name"),
                                        (c.get("function") or {}).get("arguments")] for c in calls]}))
    if fr and not attrs.get(A.GEN_AI_RESPONSE_FINISH_REASONS):
        derived[A.GEN_AI_RESPONSE_FINISH_REASONS] = fr
    inputs = genai_messages.read_input(attrs.get(A.GEN_AI_INPUT_MESSAGES))
    if inputs is not None and A.RESPONSE_TOOL_ARGS_UNGROUNDED not in attrs:
        derived.update(signals.argument_grounding(calls, inputs))
    return derived


def tool_message_content(result: Any) -> Any:
    """What the tool answered, when the captured output is the framework's message that carries it.

    OpenInference's LangChain tracer records a LangGraph tool run's output as the serialized
    ``ToolMessage`` (``{"type": "tool", "data": {"content": ..., "tool_call_id": ..., "status":
    ...}}``): the tool's own answer is its ``content`` (text, or text blocks)."""
    if isinstance(result, str):  # parsed only when it can be one: the signals parse the result anyway
        if not (result[:1] == "{" and '"tool_call_id"' in result):
            return result
        value = tool_signals.parsed_result(result)
    else:
        value = result
    if not (isinstance(value, dict) and value.get("type") == "tool" and isinstance(data := value.get("data"), dict)
            and "content" in data and "tool_call_id" in data):
        return result
    content = data["content"]
    if isinstance(content, list) and all(isinstance(b, dict) and b.get("type") == "text" for b in content):
        return "".join(str(b.get("text", "")) for b in content)
    return content


def derive_tool(attrs: dict[str, Any]) -> dict[str, Any]:
    """``attrs`` plus our tool-result signals computed from the captured result when it lacks them."""
    if has_tool_signals(attrs):
        return attrs
    result = first_present(attrs, TOOL_RESULT)
    if result is None:
        return attrs
    result = tool_message_content(result)
    derived = dict(attrs)
    derived.update(signals.tool_result_signals(result))
    args = first_present(attrs, TOOL_ARGUMENTS)
    if args is not None:
        if A.TOOL_RESULT_ECHO_MISMATCH not in attrs:
            derived[A.TOOL_RESULT_ECHO_MISMATCH] = signals.echo_mismatches(args, result)
        if A.TOOL_ARGS_DIGEST not in attrs:  # an identical retry is told by its arguments
            derived[A.TOOL_ARGS_DIGEST] = tool_signals.args_digest(tool_signals.parsed_result(args))
    return derived
