"""Hand-built traces for the import/export tests: one failed episode in every file format.

The episode: a tool call for the weather, the tool's answer, then a reply that is a provider error
page written as text (the rule diagnoser calls that ``error`` at step 2). Span attributes come from
the same annotate functions the live instrumentation uses, through the real OTel SDK.
"""

from __future__ import annotations

import base64
import json
from typing import Any

from google.protobuf.json_format import MessageToDict
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, Status, StatusCode

from agentchaos_otel import attributes as A
from agentchaos_otel import tool_signals
from agentchaos_otel.trace import annotate

ERROR_TEXT = "[API ERROR] HTTP 500: Internal Server Error. The server had an error while processing your request."
TOOL_CALL = {"id": "call_1", "type": "function",
             "function": {"name": "get_weather", "arguments": json.dumps({"city": "Paris"})}}
TOOL_RESULT = json.dumps({"city": "Paris", "temperature": 21, "conditions": "sunny"})
USER = {"role": "user", "content": "What is the weather in Paris?"}


def trajectory(task_id: str = "traj-1", success: bool = False) -> dict[str, Any]:
    """An OpenAI-style message list with an outcome."""
    return {"task_id": task_id, "model": "gpt-test", "success": success, "messages": [
        {"role": "system", "content": "You answer weather questions."},
        USER,
        {"role": "assistant", "content": None, "tool_calls": [TOOL_CALL]},
        {"role": "tool", "tool_call_id": "call_1", "content": TOOL_RESULT},
        {"role": "assistant", "content": ERROR_TEXT},
    ]}


def sdk_spans(task_id: str = "otlp-1") -> list[ReadableSpan]:
    """The episode as real SDK spans (our names: invoke_agent root, chat and execute_tool steps)."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource.create({"service.name": "built-agent"}))
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("agentchaos_otel")
    root_attrs = {A.GEN_AI_OPERATION_NAME: A.OP_INVOKE_AGENT, A.GEN_AI_AGENT_NAME: "agent", A.TASK_ID: task_id,
                  A.CONDITION: "built", A.SEED: 3, A.EPISODE_SUCCESS: False}
    with tracer.start_as_current_span("invoke_agent agent", attributes=root_attrs) as root:
        messages: list[dict[str, Any]] = [USER]
        for step, message in enumerate(({"role": "assistant", "content": None, "tool_calls": [TOOL_CALL]},
                                        None, {"role": "assistant", "content": ERROR_TEXT})):
            if message is None:
                attrs = {A.GEN_AI_OPERATION_NAME: A.OP_EXECUTE_TOOL, A.GEN_AI_TOOL_NAME: "get_weather",
                         A.GEN_AI_TOOL_CALL_ID: "call_1", A.STEP: step, A.TOOL_CALL_INDEX: 0,
                         "custom.unknown.attribute": "kept"}
                attrs.update(tool_signals.tool_result_signals(TOOL_RESULT))
                with tracer.start_as_current_span("execute_tool get_weather", attributes=attrs):
                    pass
                messages.append({"role": "tool", "tool_call_id": "call_1", "content": TOOL_RESULT})
                continue
            attrs = annotate.request_attributes(A.PROVIDER_OPENAI, {"model": "gpt-test", "messages": messages})
            finish = "tool_calls" if message.get("tool_calls") else "stop"
            view = annotate.view_openai({"choices": [{"message": message, "finish_reason": finish}],
                                         "usage": {"prompt_tokens": 20, "completion_tokens": 9}})
            attrs.update(annotate.response_attributes(view, None))
            attrs[A.STEP] = step
            with tracer.start_as_current_span("chat gpt-test", kind=SpanKind.CLIENT, attributes=attrs) as sp:
                sp.add_event("gen_ai.choice", {"index": 0})
            messages.append(message)
        root.set_status(Status(StatusCode.ERROR, "the task's outcome is a failure"))
    provider.shutdown()
    return list(exporter.get_finished_spans())


def otlp_json_line(spans: list[ReadableSpan]) -> str:
    """One line of the Collector's file exporter: OTLP/JSON with hex ids."""
    doc = MessageToDict(encode_spans(spans))
    for rs in doc["resourceSpans"]:
        for ss in rs["scopeSpans"]:
            for sp in ss["spans"]:
                for key in ("traceId", "spanId", "parentSpanId"):
                    if key in sp:
                        sp[key] = base64.b64decode(sp[key]).hex()
    return json.dumps(doc)


def otlp_json_base64(spans: list[ReadableSpan]) -> str:
    """protobuf's generic JSON mapping (ids base64), as MessageToJson writes it."""
    return json.dumps(MessageToDict(encode_spans(spans)))


def otlp_protobuf_stream(spans: list[ReadableSpan]) -> bytes:
    """The Collector's ``format: proto`` file: length-prefixed messages."""
    body = encode_spans(spans).SerializeToString()
    return len(body).to_bytes(4, "big") + body


def phoenix_spans(trace_id: str = "ab" * 16) -> list[dict[str, Any]]:
    """Spans as Phoenix's API returns them for an OpenInference-instrumented agent."""
    def ctx(n: int) -> dict[str, str]:
        return {"trace_id": trace_id, "span_id": f"{n:016x}"}

    t0 = "2026-11-02T10:00:00.000000+00:00"
    return [
        {"name": "Agent", "context": ctx(1), "parent_id": None, "span_kind": "AGENT", "start_time": t0,
         "end_time": "2026-11-02T10:00:03.000000+00:00", "status_code": "ERROR", "status_message": "failed",
         "attributes": {"openinference": {"span": {"kind": "AGENT"}}, "agent": {"name": "px-agent"},
                        "input": {"value": "What is the weather in Paris?"}},
         "events": []},
        {"name": "ChatCompletion", "context": ctx(2), "parent_id": f"{1:016x}", "span_kind": "LLM",
         "start_time": "2026-11-02T10:00:00.100000+00:00", "end_time": "2026-11-02T10:00:00.900000+00:00",
         "status_code": "OK", "status_message": "",
         "attributes": {"llm": {"model_name": "gpt-test", "token_count": {"prompt": 20, "completion": 9},
                                "output_messages": [{"message": {"role": "assistant", "tool_calls": [
                                    {"tool_call": {"function": {"name": "get_weather",
                                                                "arguments": json.dumps({"city": "Paris"})}}}]}}]},
                        "output": {"value": json.dumps({"choices": [{"message": {
                            "role": "assistant", "tool_calls": [TOOL_CALL]}, "finish_reason": "tool_calls"}]}),
                            "mime_type": "application/json"},
                        "custom": {"unknown": "kept"}},
         "events": []},
        {"name": "get_weather", "context": ctx(3), "parent_id": f"{1:016x}", "span_kind": "TOOL",
         "start_time": "2026-11-02T10:00:01.000000+00:00", "end_time": "2026-11-02T10:00:01.200000+00:00",
         "status_code": "OK", "status_message": "",
         "attributes": {"tool": {"name": "get_weather"}, "output": {"value": TOOL_RESULT}}, "events": []},
        {"name": "ChatCompletion", "context": ctx(4), "parent_id": f"{1:016x}", "span_kind": "LLM",
         "start_time": "2026-11-02T10:00:01.300000+00:00", "end_time": "2026-11-02T10:00:02.000000+00:00",
         "status_code": "OK", "status_message": "",
         "attributes": {"llm": {"model_name": "gpt-test", "token_count": {"prompt": 40, "completion": 30},
                                "output_messages": [{"message": {"role": "assistant", "content": ERROR_TEXT}}]},
                        "output": {"value": ERROR_TEXT, "mime_type": "text/plain"}},
         "events": [{"name": "first token", "timestamp": "2026-11-02T10:00:01.400000+00:00", "attributes": {}}]},
    ]
