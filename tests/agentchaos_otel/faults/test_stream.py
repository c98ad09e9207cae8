"""SSE parsing, assembly, re-emission and every stream fault, checked against the openai SDK."""

from __future__ import annotations

import json
import random
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import openai
import pytest

from agentchaos_otel.faults.anthropic import apply_response_fault as anthropic_fault
from agentchaos_otel.faults.catalog import get_fault
from agentchaos_otel.faults.messages_stream import assemble_message
from agentchaos_otel.faults.stream import (
    Stall,
    StreamFaulter,
    assemble_chat_completion,
    render_chat_completion_sse,
)
from agentchaos_otel.sse import DONE, SSEEvent, SSEParser

HEAD = {"id": "chatcmpl-BzQ4mS1xk5nBf0Pq7XUvT2yL9cHdA", "object": "chat.completion.chunk",
        "created": 1741569952,
        "model": "gpt-4o-2024-08-06", "service_tier": "default", "system_fingerprint": "fp_f9f4fb6dbf"}
TOKENS = ["The", " weather", " in", " Paris", " is", " 25", "°C", " and", " sunny", "."]
USAGE = {"prompt_tokens": 19, "completion_tokens": 10, "total_tokens": 29,
         "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
         "completion_tokens_details": {"reasoning_tokens": 0, "audio_tokens": 0,
                                       "accepted_prediction_tokens": 0, "rejected_prediction_tokens": 0}}


def _line(chunk: dict[str, Any]) -> bytes:
    return b"data: " + json.dumps(chunk, separators=(",", ":"), ensure_ascii=False).encode() + b"\n\n"


def _chunk(delta: dict[str, Any], finish: str | None = None, logprobs: Any = None) -> dict[str, Any]:
    return {**HEAD, "choices": [{"index": 0, "delta": delta, "logprobs": logprobs, "finish_reason": finish}],
            "usage": None}


def _lp(token: str, i: int) -> dict[str, Any]:
    return {"token": token, "logprob": -0.02 * i, "bytes": list(token.encode()),
            "top_logprobs": [{"token": token, "logprob": -0.02 * i, "bytes": list(token.encode())},
                             {"token": "x", "logprob": -3.5, "bytes": [120]}]}


def text_stream(tokens: list[str] = TOKENS, finish: str = "stop") -> bytes:
    """A streamed answer as OpenAI sends it with logprobs and stream_options.include_usage."""
    out = [_line(_chunk({"role": "assistant", "content": "", "refusal": None}, logprobs={"content": [],
                                                                                       "refusal": None}))]
    for i, token in enumerate(tokens):
        out.append(_line(_chunk({"content": token}, logprobs={"content": [_lp(token, i)], "refusal": None})))
    out.append(_line(_chunk({}, finish)))
    out.append(_line({**HEAD, "choices": [], "usage": USAGE}))
    out.append(DONE)
    return b"".join(out)


WEATHER_PARTS = ['{"', "location", '":"', "Paris", ", France", '","', "unit", '":"', "celsius", '"}']
TIME_PARTS = ['{"', "timezone", '":"', "Europe/Paris", '"}']


def tool_stream() -> bytes:
    """Two parallel tool calls streamed fragment by fragment."""
    first = {"index": 0, "id": "call_w1", "type": "function",
             "function": {"name": "get_weather", "arguments": ""}}
    out = [_line(_chunk({"role": "assistant", "content": None, "refusal": None, "tool_calls": [first]}))]
    out += [_line(_chunk({"tool_calls": [{"index": 0, "function": {"arguments": p}}]}))
            for p in WEATHER_PARTS]
    out.append(_line(_chunk({"tool_calls": [{"index": 1, "id": "call_t2", "type": "function",
                                             "function": {"name": "get_time", "arguments": ""}}]})))
    out += [_line(_chunk({"tool_calls": [{"index": 1, "function": {"arguments": p}}]})) for p in TIME_PARTS]
    out.append(_line(_chunk({}, "tool_calls")))
    out.append(_line({**HEAD, "choices": [], "usage": USAGE}))
    out.append(DONE)
    return b"".join(out)


def parse_all(raw: bytes, seed: int = 0) -> list[SSEEvent]:
    """Feed in random-sized pieces, as a network would deliver them."""
    rng = random.Random(seed)
    parser, events, i = SSEParser(), [], 0
    while i < len(raw):
        step = rng.randint(1, 40)
        events += parser.feed(raw[i:i + step])
        i += step
    return events + parser.close()


def run(name: str, raw: bytes, seed: int = 0, **params: Any) -> tuple[list[bytes | Stall], StreamFaulter]:
    spec = get_fault(name)
    if params:
        spec = spec.variant(name + "_v", params=params)
    faulter = StreamFaulter(spec, random.Random(seed))
    items: list[bytes | Stall] = []
    for event in parse_all(raw, seed):
        items += faulter.process(event)
    items += faulter.finish()
    return items, faulter


def seen(items: list[bytes | Stall]) -> bytes:
    return b"".join(i for i in items if isinstance(i, bytes))


def assembled(data: bytes) -> dict[str, Any]:
    return assemble_chat_completion(parse_all(data, 99))


# --- parser -----------------------------------------------------------------------------------
def test_parser_is_independent_of_how_bytes_are_split() -> None:
    raw = text_stream()
    whole = SSEParser()
    reference = whole.feed(raw) + whole.close()
    one = SSEParser()
    byte_by_byte = [e for i in range(len(raw)) for e in one.feed(raw[i:i + 1])] + one.close()
    assert reference == byte_by_byte == parse_all(raw, 5)
    assert b"".join(e.raw for e in reference) == raw
    assert len(reference) == len(TOKENS) + 4 and reference[-1].is_done


def test_parser_handles_crlf_split_across_feeds_comments_names_and_multiline_data() -> None:
    raw = b": keep-alive\r\n\r\nevent: ping\r\nid: 7\r\ndata: {\"a\":\r\ndata: 1}\r\n\r\ndata: x\r"
    parser = SSEParser()
    events = parser.feed(raw[:15]) + parser.feed(raw[15:]) + parser.feed(b"\n\r\n") + parser.close()
    assert [e.has_data for e in events] == [False, True, True]
    assert events[1].event == "ping" and events[1].id == "7" and events[1].data == '{"a":\n1}'
    assert events[1].json() == {"a": 1} and events[0].json() is None
    assert events[2].data == "x" and events[2].complete
    assert b"".join(e.raw for e in events) == raw + b"\n\r\n"


def test_trailing_bytes_come_back_incomplete_and_are_not_assembled() -> None:
    raw = text_stream()
    tail = b'data: {"id":"chatcmpl-x","choices":[{"index":0,"delta":{"content":"!!"}'
    cut = raw[: raw.index(b"data: [DONE]")] + tail
    events = parse_all(cut)
    assert not events[-1].complete and events[-1].raw.endswith(b'{"content":"!!"}')
    assert assemble_chat_completion(events)["choices"][0]["message"]["content"] == "".join(TOKENS)
    parser = SSEParser()
    parser.close()
    with pytest.raises(RuntimeError):
        parser.feed(b"data: 1\n\n")


# --- assemble / render ------------------------------------------------------------------------
def test_assemble_text_stream_like_a_non_streamed_completion() -> None:
    body = assembled(text_stream())
    assert body["id"] == HEAD["id"] and body["model"] == HEAD["model"] and body["created"] == HEAD["created"]
    assert body["object"] == "chat.completion" and body["system_fingerprint"] == "fp_f9f4fb6dbf"
    choice = body["choices"][0]
    assert choice["message"] == {"role": "assistant", "content": "".join(TOKENS), "refusal": None}
    assert choice["finish_reason"] == "stop" and body["usage"] == USAGE
    assert [e["token"] for e in choice["logprobs"]["content"]] == TOKENS


def test_assemble_parallel_tool_calls() -> None:
    body = assembled(tool_stream())
    message = body["choices"][0]["message"]
    assert message["content"] is None and body["choices"][0]["finish_reason"] == "tool_calls"
    calls = message["tool_calls"]
    assert [(c["id"], c["function"]["name"]) for c in calls] == [("call_w1", "get_weather"),
                                                                  ("call_t2", "get_time")]
    assert json.loads(calls[0]["function"]["arguments"]) == {"location": "Paris, France", "unit": "celsius"}
    assert json.loads(calls[1]["function"]["arguments"]) == {"timezone": "Europe/Paris"}


def test_assemble_stops_at_done() -> None:
    raw = text_stream() + _line(_chunk({"content": "after done"}))
    assert assembled(raw)["choices"][0]["message"]["content"] == "".join(TOKENS)
    assert assemble_chat_completion([])["choices"] == []


@pytest.mark.parametrize("make", [text_stream, tool_stream])
def test_render_round_trips_with_assemble(make: Any) -> None:
    body = assembled(make())
    again = assembled(render_chat_completion_sse(body))
    assert again == body
    assert assembled(render_chat_completion_sse(again, chunk_chars=3)) == body


def test_render_one_chunk_per_logprob_token_and_fixed_size_otherwise() -> None:
    body = assembled(text_stream())
    per_token = [e for e in parse_all(render_chat_completion_sse(body)) if e.json()]
    assert len(per_token) == 1 + len(TOKENS) + 1 + 1  # role, tokens, finish, usage
    body["choices"][0]["logprobs"] = None
    body["choices"][0]["message"]["content"] = "x" * 40
    sized = [e for e in parse_all(render_chat_completion_sse(body, chunk_chars=16, include_usage=False))
             if e.json()]
    assert [len(e.json()["choices"][0]["delta"].get("content") or "") for e in sized] == [0, 16, 16, 8, 0]
    assert all("usage" not in e.json() for e in sized)
    with pytest.raises(ValueError):
        render_chat_completion_sse(body, chunk_chars=0)


# --- the openai SDK reading our streams over a loopback server --------------------------------
class _SSEServer(ThreadingHTTPServer):
    def __init__(self, payload: bytes) -> None:
        self.payload = payload
        super().__init__(("127.0.0.1", 0), _SSEHandler)


class _SSEHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_POST(self) -> None:  # noqa: N802
        self.rfile.read(int(self.headers.get("content-length", "0")))
        payload: bytes = self.server.payload  # type: ignore[attr-defined]
        self.send_response(200)
        self.send_header("content-type", "text/event-stream; charset=utf-8")
        self.send_header("content-length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def sdk_stream() -> Iterator[Any]:
    servers: list[_SSEServer] = []

    def read(payload: bytes) -> list[Any]:
        server = _SSEServer(payload)
        servers.append(server)
        threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()
        client = openai.OpenAI(base_url=f"http://127.0.0.1:{server.server_address[1]}/v1", api_key="sk-test",
                               max_retries=0)
        stream = client.chat.completions.create(model="gpt-4o", stream=True,
                                                messages=[{"role": "user", "content": "weather?"}])
        return list(stream)

    yield read
    for server in servers:
        server.shutdown()
        server.server_close()


def _sdk_text(chunks: list[Any]) -> str:
    return "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)


def test_sdk_reads_rendered_stream(sdk_stream: Any) -> None:
    body = assembled(tool_stream())
    body["choices"][0]["message"]["content"] = "Checking both."
    chunks = sdk_stream(render_chat_completion_sse(body))
    assert _sdk_text(chunks) == "Checking both."
    args = {}
    for c in chunks:
        for call in (c.choices[0].delta.tool_calls or []) if c.choices else []:
            args[call.index] = args.get(call.index, "") + (call.function.arguments or "")
    assert json.loads(args[0]) == {"location": "Paris, France", "unit": "celsius"}
    assert chunks[-1].usage is not None and chunks[-1].usage.completion_tokens == 10


def test_sdk_sees_cut_and_truncated_streams(sdk_stream: Any) -> None:
    cut = sdk_stream(seen(run("stream_cut_no_done", text_stream())[0]))
    assert _sdk_text(cut) == "".join(TOKENS[:3])
    assert all(c.choices[0].finish_reason is None for c in cut)
    truncated = sdk_stream(seen(run("stream_truncate", text_stream())[0]))
    assert _sdk_text(truncated) == "".join(TOKENS[:3])
    assert [c.choices[0].finish_reason for c in truncated if c.choices][-1] == "length"


# --- faults -----------------------------------------------------------------------------------
@pytest.mark.parametrize("name,done", [("stream_cut", True), ("stream_cut_no_done", False)])
def test_cut_after_three_payload_chunks(name: str, done: bool) -> None:
    raw = text_stream()
    items, faulter = run(name, raw)
    out = seen(items)
    assert faulter.changed and out.endswith(DONE) is done
    body = assembled(out)
    assert body["choices"][0]["message"]["content"] == "".join(TOKENS[:3])
    assert body["choices"][0]["finish_reason"] is None and body["usage"] is None
    events = parse_all(raw)
    kept = b"".join(e.raw for e in events[:4])  # role chunk + 3 tokens, byte-identical
    assert out == kept + (DONE if done else b"")


def test_cut_of_a_short_stream_drops_its_finish_chunk() -> None:
    items, faulter = run("stream_cut", text_stream(TOKENS[:2]))
    body = assembled(seen(items))
    assert faulter.changed and body["choices"][0]["message"]["content"] == "".join(TOKENS[:2])
    assert body["choices"][0]["finish_reason"] is None


def test_cut_mid_tool_call_leaves_invalid_arguments() -> None:
    items, _ = run("stream_cut", tool_stream(), after_chunks=4)
    calls = assembled(seen(items))["choices"][0]["message"]["tool_calls"]
    assert calls[0]["function"]["arguments"] == "".join(WEATHER_PARTS[:3])
    with pytest.raises(ValueError):
        json.loads(calls[0]["function"]["arguments"])


def test_truncate_ends_with_length_keeps_usage_and_done() -> None:
    items, faulter = run("stream_truncate", text_stream())
    out = seen(items)
    body = assembled(out)
    assert faulter.changed and out.endswith(DONE)
    assert body["choices"][0]["message"]["content"] == "".join(TOKENS[:3])
    assert body["choices"][0]["finish_reason"] == "length" and body["usage"] == USAGE
    assert body["id"] == HEAD["id"] and body["model"] == HEAD["model"]


def test_truncate_is_a_no_op_when_the_provider_already_hit_the_limit() -> None:
    raw = text_stream(TOKENS[:2], finish="length")
    items, faulter = run("stream_truncate", raw)
    assert not faulter.changed and seen(items) == raw


def test_corrupt_replaces_a_fifth_of_every_content_delta() -> None:
    raw = text_stream()
    items, faulter = run("stream_corrupt", raw, seed=3)
    body = assembled(seen(items))
    assert faulter.changed and body["choices"][0]["finish_reason"] == "stop" and body["usage"] == USAGE
    deltas = [e.json()["choices"][0] for e in parse_all(seen(items)) if e.json() and e.json()["choices"]]
    content = [d for d in deltas if d["delta"].get("content")]
    assert len(content) == len(TOKENS)
    for token, d in zip(TOKENS, content, strict=True):
        new = d["delta"]["content"]
        changed = [y for x, y in zip(token, new, strict=True) if x != y]
        assert len(changed) == max(1, int(len(token) * 0.2))
        assert all(0x2600 <= ord(y) <= 0x26FF for y in changed)
        assert d["logprobs"] is None
    assert run("stream_corrupt", raw, seed=3)[0] == items
    assert run("stream_corrupt", raw, seed=4)[0] != items


def test_corrupt_mojibake_mode_changes_only_non_ascii_deltas() -> None:
    items, faulter = run("stream_corrupt", text_stream(), mode="mojibake")
    assert faulter.changed
    assert assembled(seen(items))["choices"][0]["message"]["content"] == "".join(TOKENS).replace("°", "Â°")


def test_drop_tool_calls_turns_the_call_into_an_empty_stop() -> None:
    items, faulter = run("stream_drop_tool_calls", tool_stream())
    body = assembled(seen(items))
    message = body["choices"][0]["message"]
    assert faulter.changed and "tool_calls" not in message and message["content"] is None
    assert body["choices"][0]["finish_reason"] == "stop" and body["usage"] == USAGE
    assert seen(items).endswith(DONE)


def test_drop_tool_calls_leaves_a_text_stream_byte_identical() -> None:
    raw = text_stream()
    items, faulter = run("stream_drop_tool_calls", raw)
    assert not faulter.changed and seen(items) == raw


def test_empty_stream_with_and_without_done() -> None:
    items, faulter = run("stream_empty", text_stream())
    assert faulter.changed and seen(items) == DONE
    items, faulter = run("stream_empty", text_stream(), done=False)
    assert faulter.changed and seen(items) == b""
    assert assembled(b"")["choices"] == []


def test_stall_before_the_second_payload_chunk_and_nothing_else_changes() -> None:
    raw = text_stream()
    items, faulter = run("stream_stall", raw)
    stalls = [i for i, item in enumerate(items) if isinstance(item, Stall)]
    assert len(stalls) == 1 and items[stalls[0]] == Stall(5.0) and faulter.changed
    events = parse_all(raw)
    assert items[stalls[0] + 1] == events[2].raw  # role chunk, 1st token, [stall], 2nd token
    assert seen(items) == raw


def test_stall_on_a_stream_without_enough_payload_waits_before_finish() -> None:
    items, faulter = run("stream_stall", text_stream(TOKENS[:1]), before_chunk=5, seconds=0.5)
    assert Stall(0.5) in items and faulter.changed


@pytest.mark.parametrize("name", ["stream_cut", "stream_truncate", "stream_corrupt", "stream_drop_tool_calls",
                                  "stream_stall"])
def test_unknown_events_pass_through_byte_identical(name: str) -> None:
    events = parse_all(text_stream())
    extra = [b": OPENROUTER PROCESSING\n\n", b"event: ping\ndata: not json\n\n", b'data: {"note":1}\n\n']
    raw = events[0].raw + events[1].raw + b"".join(extra) + b"".join(e.raw for e in events[2:])
    out = seen(run(name, raw)[0])
    assert b"".join(extra) in out


def test_azure_filter_chunks_and_extra_fields_survive() -> None:
    azure_first = {"id": "", "object": "", "created": 0, "model": "", "choices": [],
                   "prompt_filter_results": [{"prompt_index": 0, "content_filter_results": {}}]}
    raw = _line(azure_first) + text_stream()
    out = seen(run("stream_cut", raw)[0])
    assert out.startswith(_line(azure_first))
    assert assembled(out)["choices"][0]["message"]["content"] == "".join(TOKENS[:3])
    padded = text_stream().replace(b'"usage":null}', b'"usage":null,"obfuscation":"Zx9"}')
    final = [e.json() for e in parse_all(seen(run("stream_truncate", padded)[0])) if e.json()]
    length = [c for c in final if c["choices"] and c["choices"][0]["finish_reason"] == "length"]
    assert len(length) == 1 and length[0]["obfuscation"] == "Zx9" and length[0]["id"] == HEAD["id"]


def test_truncate_closes_every_choice_of_a_multi_choice_stream() -> None:
    second = text_stream().replace(b'"index":0,"delta"', b'"index":1,"delta"')
    events0, events1 = parse_all(text_stream()), parse_all(second)
    interleaved = b"".join(a.raw + b.raw for a, b in zip(events0[:-3], events1[:-3], strict=True))
    raw = interleaved + events0[-2].raw + DONE
    body = assembled(seen(run("stream_truncate", raw, after_chunks=4)[0]))
    assert [c["finish_reason"] for c in body["choices"]] == ["length", "length"]
    assert [c["message"]["content"] for c in body["choices"]] == ["".join(TOKENS[:2])] * 2


def test_stream_faulter_refuses_non_stream_specs() -> None:
    with pytest.raises(ValueError, match="not a stream fault"):
        StreamFaulter(get_fault("llm_error_single"), random.Random(0))
    bad = get_fault("stream_corrupt").variant("stream_corrupt_bad", params={"mode": "rot13"})
    with pytest.raises(ValueError, match="corruption mode"):
        StreamFaulter(bad, random.Random(0))


# --- Anthropic Messages streams -----------------------------------------------------------------
def _anthropic_event(kind: str, data: dict[str, Any]) -> bytes:
    return f"event: {kind}\ndata: {json.dumps({'type': kind, **data})}\n\n".encode()


def anthropic_stream() -> bytes:
    """A streamed Messages response with a text block and a tool_use block, as the API sends it."""
    parts = [
        _anthropic_event("message_start", {"message": {
            "id": "msg_014p7gG3wDgGV9EUtLvnow3U", "type": "message", "role": "assistant",
            "model": "claude-sonnet-4-5-20250929", "content": [], "stop_reason": None, "stop_sequence": None,
            "usage": {"input_tokens": 472, "output_tokens": 2}}}),
        _anthropic_event("content_block_start", {"index": 0, "content_block": {"type": "text", "text": ""}}),
        b'event: ping\ndata: {"type": "ping"}\n\n',
        _anthropic_event("content_block_delta", {"index": 0, "delta": {"type": "text_delta",
                                                                       "text": "Let me "}}),
        _anthropic_event("content_block_delta", {"index": 0, "delta": {"type": "text_delta",
                                                                       "text": "check the weather."}}),
        _anthropic_event("content_block_stop", {"index": 0}),
        _anthropic_event("content_block_start", {"index": 1, "content_block": {
            "type": "tool_use", "id": "toolu_01T1x1fJ34qAmk2tNTrN7Up6", "name": "get_weather", "input": {}}}),
    ]
    for piece in ['{"location":', ' "San Fra', 'ncisco, CA"', ', "unit": "fahrenheit"}']:
        parts.append(_anthropic_event("content_block_delta", {"index": 1, "delta": {
            "type": "input_json_delta", "partial_json": piece}}))
    parts += [
        _anthropic_event("content_block_stop", {"index": 1}),
        _anthropic_event("message_delta", {"delta": {"stop_reason": "tool_use", "stop_sequence": None},
                                           "usage": {"output_tokens": 89}}),
        _anthropic_event("message_stop", {}),
    ]
    return b"".join(parts)


def test_assemble_anthropic_stream() -> None:
    body = assemble_message(parse_all(anthropic_stream()))
    assert body["id"] == "msg_014p7gG3wDgGV9EUtLvnow3U" and body["model"] == "claude-sonnet-4-5-20250929"
    assert body["content"] == [
        {"type": "text", "text": "Let me check the weather."},
        {"type": "tool_use", "id": "toolu_01T1x1fJ34qAmk2tNTrN7Up6", "name": "get_weather",
         "input": {"location": "San Francisco, CA", "unit": "fahrenheit"}}]
    assert body["stop_reason"] == "tool_use" and body["usage"] == {"input_tokens": 472, "output_tokens": 89}
    out = anthropic_fault(get_fault("tool_schema_single"), body, rng=random.Random(0))
    assert out["content"][1]["input"] == {"wrong_param": "unexpected_value"}


def test_cut_anthropic_stream_keeps_the_partial_tool_input_visible() -> None:
    raw = anthropic_stream()
    cut = raw[: raw.index(b"ncisco, CA")]
    cut = cut[: cut.rindex(b"event: content_block_delta")]
    body = assemble_message(parse_all(cut))
    assert body["content"][1]["input"] == '{"location": "San Fra' and body["stop_reason"] is None


def test_openai_stream_faults_leave_anthropic_events_alone() -> None:
    raw = anthropic_stream()
    for name in ("stream_cut", "stream_truncate", "stream_corrupt", "stream_drop_tool_calls"):
        items, faulter = run(name, raw)
        assert seen(items) == raw and not faulter.changed
