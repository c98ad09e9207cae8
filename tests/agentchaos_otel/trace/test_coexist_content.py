"""Captured content in the GenAI conventions' message format, read back in any format; failed episodes red.

The format check builds the ``opentelemetry-util-genai`` message types (the conventions' Python
models as upstream ships them) from what we record: their constructors reject a missing or an
unknown field, so a message that is not role + parts (+ finish_reason on output) fails here.
"""

from __future__ import annotations

import json
from typing import Any

import httpx2
import openai
import pytest
from opentelemetry.trace import StatusCode
from opentelemetry.util.genai.types import InputMessage, OutputMessage, Text, ToolCallRequest, ToolCallResponse

from agentchaos_otel import attributes as A
from agentchaos_otel.episode_scope import episode
from agentchaos_otel.inject.transport import ChaosTransport
from agentchaos_otel.records import StepRecord
from agentchaos_otel.trace import messages
from diagnosers.observe import observe_step
from tests.agentchaos_otel.faults.test_anthropic_stream_catalog import MODEL, TOOLS, sync_client
from tests.conftest import WEATHER_TOOL

pytestmark = pytest.mark.coexist

PART_TYPES = {"text": Text, "tool_call": ToolCallRequest, "tool_call_response": ToolCallResponse}


def conventions_messages(raw: str, *, output: bool) -> list[Any]:
    """The recorded JSON as upstream's message models; raises on anything off the schema."""
    out = []
    for m in json.loads(raw):
        parts = [PART_TYPES[p["type"]](**p) for p in m.pop("parts")]
        out.append(OutputMessage(parts=parts, **m) if output else InputMessage(parts=parts, **m))
    return out


@pytest.fixture
def capture(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(A.CAPTURE_CONTENT_ENV, "true")


def _chat_span(exporter: Any) -> Any:
    (span,) = [s for s in exporter.get_finished_spans() if s.attributes.get(A.GEN_AI_OPERATION_NAME) == A.OP_CHAT]
    return span


CONVERSATION = [
    {"role": "system", "content": "You answer weather questions."},
    {"role": "user", "content": "TOOL weather in Paris? 1"},
    {"role": "assistant", "content": None, "tool_calls": [{"id": "call_1", "type": "function", "function": {
        "name": "get_weather", "arguments": "{\"city\": \"Paris-1\"}"}}]},
    {"role": "tool", "tool_call_id": "call_1", "content": "{\"temp_c\": 21}"},
    {"role": "user", "content": "TOOL and tomorrow? 2"},
]


def test_openai_content_is_role_and_parts(capture: None, mode_server: Any, memory_tracing: Any) -> None:
    provider, exporter = memory_tracing
    transport = ChaosTransport(httpx2.HTTPTransport(), tracer_provider=provider)
    with openai.OpenAI(base_url=mode_server.base_url, api_key="sk-test", max_retries=0,
                       http_client=httpx2.Client(transport=transport)) as client:
        with episode("c", tracer_provider=provider):
            client.chat.completions.create(model="sim-core-test", messages=CONVERSATION, tools=[WEATHER_TOOL])
    span = _chat_span(exporter)
    inputs = conventions_messages(span.attributes[A.GEN_AI_INPUT_MESSAGES], output=False)
    assert [m.role for m in inputs] == ["system", "user", "assistant", "tool", "user"]
    call = inputs[2].parts[0]
    assert isinstance(call, ToolCallRequest) and call.arguments == {"city": "Paris-1"} and call.id == "call_1"
    assert isinstance(inputs[3].parts[0], ToolCallResponse) and inputs[3].parts[0].id == "call_1"
    (out,) = conventions_messages(span.attributes[A.GEN_AI_OUTPUT_MESSAGES], output=True)
    assert out.role == "assistant" and out.finish_reason == "tool_call"
    assert isinstance(out.parts[0], ToolCallRequest) and out.parts[0].name == "get_weather"
    assert A.GEN_AI_SYSTEM_INSTRUCTIONS not in span.attributes, "OpenAI keeps system messages in the history"


def test_anthropic_system_goes_to_system_instructions(capture: None, mode_server: Any, memory_tracing: Any) -> None:
    provider, exporter = memory_tracing
    with sync_client(mode_server.root_url, provider) as client:
        with episode("c", tracer_provider=provider):
            client.messages.create(model=MODEL, max_tokens=256, tools=TOOLS, system="Be brief.", messages=[
                {"role": "user", "content": "TOOL weather? 1"},
                {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "get_weather",
                                                   "input": {"city": "Oslo"}}]},
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "sunny"},
                                             {"type": "text", "text": "TEXT thanks 2"}]}])
    span = _chat_span(exporter)
    assert json.loads(span.attributes[A.GEN_AI_SYSTEM_INSTRUCTIONS]) == [{"type": "text", "content": "Be brief."}]
    inputs = conventions_messages(span.attributes[A.GEN_AI_INPUT_MESSAGES], output=False)
    assert [type(p) for p in inputs[2].parts] == [ToolCallResponse, Text] and inputs[2].parts[0].response == "sunny"
    (out,) = conventions_messages(span.attributes[A.GEN_AI_OUTPUT_MESSAGES], output=True)
    assert out.finish_reason == "stop" and isinstance(out.parts[0], Text) and out.parts[0].content


def test_nothing_is_captured_unless_asked(mode_server: Any, memory_tracing: Any,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(A.CAPTURE_CONTENT_ENV, raising=False)
    provider, exporter = memory_tracing
    transport = ChaosTransport(httpx2.HTTPTransport(), tracer_provider=provider)
    with openai.OpenAI(base_url=mode_server.base_url, api_key="sk-test", max_retries=0,
                       http_client=httpx2.Client(transport=transport)) as client:
        client.chat.completions.create(model="sim-core-test", messages=CONVERSATION)
    attrs = _chat_span(exporter).attributes
    assert not {A.GEN_AI_INPUT_MESSAGES, A.GEN_AI_OUTPUT_MESSAGES, A.GEN_AI_SYSTEM_INSTRUCTIONS} & set(attrs)


WIRE_OUTPUT = [{"role": "assistant", "content": "Looking it up.", "finish_reason": "tool_calls", "tool_calls": [
    {"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\": \"Rome\"}"}}]}]


def test_readers_accept_the_conventions_and_the_older_wire_shape() -> None:
    parts = [messages.output_message("Looking it up.", WIRE_OUTPUT[0]["tool_calls"], ["tool_calls"])]
    new_text, new_calls, new_reasons = messages.read_output(json.dumps(parts))
    old_text, old_calls, old_reasons = messages.read_output(json.dumps(WIRE_OUTPUT))
    assert new_text == old_text == "Looking it up."
    assert [json.loads(c["function"]["arguments"]) for c in new_calls] == [{"city": "Rome"}]
    assert [c["function"]["name"] for c in new_calls] == [c["function"]["name"] for c in old_calls]
    assert new_reasons == ["tool_call"] and old_reasons == ["tool_calls"]
    wire_inputs = messages.read_input(json.dumps(messages.input_messages("openai", {"messages": CONVERSATION})[0]))
    assert [m["role"] for m in wire_inputs] == [m["role"] for m in CONVERSATION]
    assert wire_inputs[3] == {"role": "tool", "tool_call_id": "call_1", "content": "{\"temp_c\": 21}"}


def test_diagnosers_observe_the_same_step_from_either_format() -> None:
    def observed(output: Any) -> Any:
        step = StepRecord(step=0, span_id="s", kind="llm", name="chat", start_ns=0, end_ns=1,
                          attributes={A.GEN_AI_OPERATION_NAME: "chat", A.GEN_AI_OUTPUT_MESSAGES: json.dumps(output)})
        o = observe_step(step, 0)
        return o.content_length, o.tool_call_count, o.tool_names, o.args_valid, o.response_digest

    new = [messages.output_message("Looking it up.", WIRE_OUTPUT[0]["tool_calls"], ["tool_calls"])]
    assert observed(new) == observed(WIRE_OUTPUT)
    assert observed(new)[1] == 1


@pytest.mark.parametrize(("success", "status"), [(False, StatusCode.ERROR), (True, StatusCode.UNSET)])
def test_failed_episode_root_has_status_error(success: bool, status: StatusCode, memory_tracing: Any) -> None:
    provider, exporter = memory_tracing
    with episode("e", tracer_provider=provider) as ep:
        ep.set_outcome(success=success)
    (root,) = exporter.get_finished_spans()
    assert root.status.status_code == status
    assert bool(root.status.description) is (not success)
