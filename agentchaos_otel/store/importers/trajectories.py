"""OpenAI-style message-list trajectories with an outcome, as episodes.

A saved agent run is often just the conversation: ``{"messages": [...], "success": false}`` (also
``outcome`` / ``passed`` / ``resolved`` / ``reward``; ``task_id`` or ``id``; ``model``; ``tools``;
``condition``). Each one becomes one episode: an ``invoke_agent`` root, one ``chat`` span per
assistant message (its request being the messages before it) and one ``execute_tool`` span per
tool message. Span attributes are computed by the same functions the live instrumentation uses
(``trace.annotate``, ``trace.signals``, ``trace.tool_signals``), so diagnosers and predictors see
the same signals as for a traced run; message content itself is stored only when
``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT`` asks for it, as for live spans.

Ids are derived from a digest of the trajectory, so importing the same file twice stores it
once. Messages rarely carry times: unless a message has ``timestamp`` (ISO or epoch), the spans
are laid 1 ms apart from the file's modification time and the root says
``agentchaos.import.synthetic_timing=true`` (durations then say nothing about latency).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

from agentchaos_otel import attributes as A
from agentchaos_otel import signals, tool_signals
from agentchaos_otel.store.importers.openinference import time_ns
from agentchaos_otel.store.importers.otlp_files import key_values, rows_from_json_doc, trace_document
from agentchaos_otel.store.receivers.otlp_http import BadPayload
from agentchaos_otel.trace import annotate

FORMAT = "messages"
SCOPE = "agentchaos_otel.import.messages"
_TRUE = frozenset({"success", "succeeded", "pass", "passed", "resolved", "ok", "true", "1", "yes"})
_FALSE = frozenset({"failure", "failed", "fail", "error", "unresolved", "false", "0", "no"})
_STEP_NS = 1_000_000


def is_trajectory(record: Any) -> bool:
    return isinstance(record, Mapping) and isinstance(record.get("messages"), list)


def outcome(record: Mapping[str, Any]) -> bool | None:
    """True / False / None (unknown) from the usual outcome fields."""
    for key in ("success", "outcome", "passed", "resolved", "status"):
        value = record.get(key)
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.strip().lower() in _TRUE | _FALSE:
            return value.strip().lower() in _TRUE
    reward = record.get("reward", record.get("score"))
    if isinstance(reward, (int, float)) and not isinstance(reward, bool):
        return reward > 0
    return None


def _digest(value: Any) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True, default=str).encode()).hexdigest()


def _content_text(content: Any) -> str | None:
    """Message content as text: strings, or the text parts of a parts list."""
    if content is None or isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(p.get("text", "")) for p in content if isinstance(p, Mapping) and p.get("type") in
                       ("text", "output_text", None))
    return json.dumps(content, ensure_ascii=False, default=str)


class _Builder:
    def __init__(self, trace_id: str, base_ns: int) -> None:
        self.trace_id = trace_id
        self.clock = base_ns
        self.spans: list[dict[str, Any]] = []
        self.synthetic = False

    def span_id(self, index: int) -> str:
        return hashlib.sha256(f"{self.trace_id}:{index}".encode()).hexdigest()[:16]

    def times(self, message: Mapping[str, Any]) -> tuple[int, int]:
        stamp = message.get("timestamp", message.get("created_at"))
        start = time_ns(stamp) if stamp is not None else None
        if start is None:
            self.synthetic = True
            start = self.clock + _STEP_NS
        end = start + _STEP_NS // 2
        self.clock = max(self.clock, end)
        return start, end

    def add(self, name: str, index: int, parent: str | None, start: int, end: int, attrs: dict[str, Any],
            error: str | None = None) -> str:
        sid = self.span_id(index)
        span: dict[str, Any] = {"traceId": self.trace_id, "spanId": sid, "name": name,
                                "kind": 3 if name.startswith(A.OP_CHAT) else 1,
                                "startTimeUnixNano": str(start), "endTimeUnixNano": str(end),
                                "attributes": key_values(attrs), "status": {"code": 2 if error else 0,
                                                                            "message": error or ""}}
        if parent:
            span["parentSpanId"] = parent
        self.spans.append(span)
        return sid


def _llm_attrs(model: str | None, prefix: list[dict[str, Any]], message: Mapping[str, Any],
               tools: list[dict[str, Any]] | None, step: int) -> dict[str, Any]:
    req: dict[str, Any] = {"messages": prefix}
    if model:
        req["model"] = model
    if tools:
        req["tools"] = tools
    calls = [c for c in message.get("tool_calls") or [] if isinstance(c, Mapping)]
    finish = message.get("finish_reason") or ("tool_calls" if calls else "stop")
    body = {"choices": [{"message": {"role": "assistant", "content": _content_text(message.get("content")),
                                     "tool_calls": calls}, "finish_reason": finish}],
            "usage": message.get("usage") or {}, "model": model}
    view = annotate.view_openai(body)
    attrs = annotate.request_attributes(A.PROVIDER_OPENAI, req)
    attrs.update(annotate.response_attributes(view, tools))
    attrs.update(signals.argument_grounding(view.tool_calls, prefix))
    attrs[A.STEP] = step
    return attrs


def rows_from_trajectory(record: Mapping[str, Any], *, source: str, base_ns: int) -> list[dict[str, Any]]:
    messages = [m for m in record["messages"] if isinstance(m, Mapping)]
    if not messages:
        raise BadPayload("trajectory has no messages")
    task_id = str(record.get("task_id") or record.get("id") or f"import-{_digest(record)[:12]}")
    model = record.get("model") if isinstance(record.get("model"), str) else None
    tools = [t for t in record.get("tools") or [] if isinstance(t, Mapping)] or None
    b = _Builder(_digest(record)[:32], base_ns)
    root_index = 0
    root_start = b.clock
    step = 0
    call_names: dict[str, tuple[str, Any]] = {}
    root_id = b.span_id(root_index)
    tool_index = 0
    for i, m in enumerate(messages):
        role = m.get("role")
        if role == "assistant":
            start, end = b.times(m)
            attrs = _llm_attrs(model, [dict(x) for x in messages[:i]], m, tools, step)
            for c in m.get("tool_calls") or []:
                fn = (c or {}).get("function") or {}
                call_names[str((c or {}).get("id"))] = (str(fn.get("name") or "tool"), fn.get("arguments"))
            b.add(A.chat_span_name(model), i + 1, root_id, start, end, attrs)
            step += 1
        elif role in ("tool", "function"):
            start, end = b.times(m)
            call_id = m.get("tool_call_id")
            name, args = call_names.get(str(call_id), (str(m.get("name") or "tool"), None))
            result = _content_text(m.get("content"))
            attrs: dict[str, Any] = {A.GEN_AI_OPERATION_NAME: A.OP_EXECUTE_TOOL, A.GEN_AI_TOOL_NAME: name,
                                     A.STEP: step, A.TOOL_CALL_INDEX: tool_index}
            if call_id:
                attrs[A.GEN_AI_TOOL_CALL_ID] = str(call_id)
            parsed_args = tool_signals.parsed_result(args) if args is not None else {}
            attrs.update(tool_signals.call_signals(parsed_args))
            attrs.update(tool_signals.tool_result_signals(result))
            attrs[A.TOOL_RESULT_ECHO_MISMATCH] = signals.echo_mismatches(parsed_args, result)
            if annotate.content_capture_enabled():
                attrs[A.GEN_AI_TOOL_CALL_ARGUMENTS] = args if isinstance(args, str) else json.dumps(args)
                attrs[A.GEN_AI_TOOL_CALL_RESULT] = result or ""
            b.add(A.tool_span_name(name), i + 1, root_id, start, end, attrs)
            step += 1
            tool_index += 1
    success = outcome(record)
    agent = str(record.get("agent_name") or "agent")
    root: dict[str, Any] = {A.GEN_AI_OPERATION_NAME: A.OP_INVOKE_AGENT, A.GEN_AI_AGENT_NAME: agent,
                            A.TASK_ID: task_id, A.IMPORT_FORMAT: FORMAT, A.IMPORT_SOURCE: source,
                            A.IMPORT_SYNTHETIC_TIMING: b.synthetic}
    if isinstance(record.get("condition"), str):
        root[A.CONDITION] = record["condition"]
    if isinstance(record.get("seed"), int):
        root[A.SEED] = record["seed"]
    if success is not None:
        root[A.EPISODE_SUCCESS] = success
    error = None if success is not False else "the task's outcome is a failure"
    b.add(A.agent_span_name(agent), root_index, None, root_start, b.clock + _STEP_NS, root, error=error)
    return rows_from_json_doc(trace_document(b.spans, {A.SERVICE_NAME: "agentchaos-import"}, SCOPE))
