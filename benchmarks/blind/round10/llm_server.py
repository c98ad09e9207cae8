"""A loopback OpenAI-compatible server in the manner of less commonly imitated providers and gateways.

Each persona has its public base path, model name, response id shape and extra members; the
answers come from the SIMULATED model (``model.decide``) and the episode's LLM fault, if any, is
applied here: HTTP statuses with the provider's error body, dropped connections, slow replies,
error objects in 200 replies, odd finish reasons, garbled or emptied arguments, replayed answers,
cut streams and errors inside streams.
"""

from __future__ import annotations

import asyncio
import json
import random
import threading
from dataclasses import dataclass
from typing import Any

from benchmarks.blind.round10.forms import ALL_FORMS
from benchmarks.blind.round10.model import decide


@dataclass(frozen=True)
class Persona:
    name: str
    base: str
    model: str
    id_prefix: str
    extra: dict[str, Any]


PERSONAS = [
    Persona("bedrock", "/openai/v1", "openai.gpt-oss-120b-1:0", "chatcmpl-", {}),
    Persona("bedrock-access-gateway", "/api/v1", "anthropic.claude-3-5-sonnet-20241022-v2:0", "chatcmpl-", {}),
    Persona("vertex", "/v1/projects/data-prod/locations/us-central1/endpoints/openapi",
            "google/gemini-2.0-flash-001", "",
            {"system_fingerprint": ""}),
    Persona("hf-router", "/v1", "meta-llama/Llama-3.3-70B-Instruct:nebius", "", {"system_fingerprint": "3.2.1-native"}),
    Persona("github-models", "/inference", "openai/gpt-4.1-mini", "chatcmpl-", {"prompt_filter_results": []}),
    Persona("nebius", "/v1", "meta-llama/Meta-Llama-3.1-70B-Instruct", "chatcmpl-", {"prompt_logprobs": None}),
    Persona("scaleway", "/v1", "llama-3.3-70b-instruct", "chatcmpl-", {}),
    Persona("ovhcloud", "/api/openai_compat/v1", "Meta-Llama-3_3-70B-Instruct", "chatcmpl-", {}),
    Persona("cohere-compat", "/compatibility/v1", "command-a-03-2025", "", {}),
    Persona("ai21", "/studio/v1", "jamba-large", "chat-", {"meta": {"requestDurationMillis": 412}}),
    Persona("upstage", "/v1", "solar-pro2", "", {}),
    Persona("friendli", "/serverless/v1", "meta-llama-3.3-70b-instruct", "", {}),
    Persona("baseten", "/v1", "deepseek-ai/DeepSeek-V3-0324", "", {}),
    Persona("modal-vllm", "/v1", "Qwen/Qwen2.5-32B-Instruct", "chatcmpl-", {"kv_transfer_params": None}),
    Persona("runpod-vllm", "/v2/x7k2p9q4r1s8t3/openai/v1", "mistralai/Mistral-Small-24B-Instruct-2501",
            "chatcmpl-", {}),
    Persona("lorax", "/v1", "mistralai/Mistral-7B-Instruct-v0.3", "", {}),
    Persona("writer", "/v1", "palmyra-x5", "", {}),
]

LOCK = threading.Lock()
EPISODES: dict[str, Any] = {}   # task id -> EpisodeState (agent.py)


def _completion(state: Any, message: dict[str, Any], finish: str) -> dict[str, Any]:
    p = state.persona
    n = state.llm_n
    body = {"id": f"{p.id_prefix}{state.rng_hex(n)}", "object": "chat.completion", "created": 1765000000 + n,
            "model": p.model, "choices": [{"index": 0, "message": message, "finish_reason": finish,
                                           "logprobs": None}],
            "usage": {"prompt_tokens": 300 + 40 * n, "completion_tokens": 25, "total_tokens": 325 + 40 * n}}
    body.update(p.extra)
    return body


def _message(state: Any, request: dict[str, Any]) -> tuple[dict[str, Any], str]:
    d = decide(state.actions, request.get("messages", []), state.slip, state.patience)
    if "final" in d:
        return {"role": "assistant", "content": d["final"]}, "stop"
    tool, args = d.get("call") or d["raw_call"]
    raw = args if "raw_call" in d else json.dumps(args)
    call_id = f"call_{state.rng_hex(1000 + state.llm_n)[:20]}"
    return ({"role": "assistant", "content": None,
             "tool_calls": [{"id": call_id, "type": "function", "function": {"name": tool, "arguments": raw}}]},
            "tool_calls")


def _garble(raw: str, how: str, rng: random.Random) -> str:
    args = json.loads(raw)
    for k, v in args.items():
        if isinstance(v, str) and v:
            if how == "mojibake_args":
                args[k] = (v[:2] + "é" + v[2:]).encode("utf-8").decode("latin-1")
            elif how == "symbols_args":
                chars = list(v)
                for i in range(0, len(chars), 4):
                    chars[i] = chr(0x2600 + rng.randrange(256))
                args[k] = "".join(chars)
            break
    return json.dumps(args, ensure_ascii=False)


async def _send(send: Any, status: int, body: bytes, ctype: str = "application/json",
                headers: list[tuple[bytes, bytes]] | None = None) -> None:
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", ctype.encode()), (b"content-length", str(len(body)).encode()),
                            *(headers or [])]})
    await send({"type": "http.response.body", "body": body})


def _chunks(state: Any, message: dict[str, Any], finish: str | None) -> list[bytes]:
    p = state.persona
    base = {"id": f"{p.id_prefix}{state.rng_hex(state.llm_n)}", "object": "chat.completion.chunk",
            "created": 1765000000, "model": p.model}
    out = [{**base, "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}]}]
    if message.get("tool_calls"):
        tc = message["tool_calls"][0]
        raw = tc["function"]["arguments"]
        out.append({**base, "choices": [{"index": 0, "delta": {"tool_calls": [
            {"index": 0, "id": tc["id"], "type": "function",
             "function": {"name": tc["function"]["name"], "arguments": ""}}]},
            "finish_reason": None}]})
        for i in range(0, len(raw), 12):
            out.append({**base, "choices": [{"index": 0, "delta": {"tool_calls": [
                {"index": 0, "function": {"arguments": raw[i:i + 12]}}]}, "finish_reason": None}]})
    else:
        text = message.get("content") or ""
        for i in range(0, len(text), 16):
            out.append({**base, "choices": [{"index": 0, "delta": {"content": text[i:i + 16]}, "finish_reason": None}]})
    if finish:
        out.append({**base, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}],
                    "usage": {"prompt_tokens": 300, "completion_tokens": 25, "total_tokens": 325}})
    return [b"data: " + json.dumps(c).encode() + b"\n\n" for c in out]


def _tool_steps(state: Any, message: dict[str, Any], request: dict[str, Any]) -> None:
    """Each tool call the answer carries becomes a tool step of the agent (run, or refused by the SDK)."""
    known = {t.get("function", {}).get("name") for t in request.get("tools") or []}
    with LOCK:
        for tc in message.get("tool_calls") or []:
            name = tc["function"]["name"]
            if name in known:
                state.pending.append((len(state.events), name))
                state.events.append(("tool", name))


class App:
    """Raw ASGI, so that a connection can be dropped after the status line."""

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        body = b""
        while True:
            msg = await receive()
            body += msg.get("body", b"")
            if not msg.get("more_body"):
                break
        headers = {k.decode().lower(): v.decode() for k, v in scope["headers"]}
        with LOCK:
            state = EPISODES.get(headers.get("x-episode", ""))
        if state is None or not scope["path"].endswith("/chat/completions"):
            await _send(send, 404, b'{"error": "no such route"}')
            return
        request = json.loads(body)
        stream = bool(request.get("stream"))
        with LOCK:
            n = state.llm_n
            state.llm_n += 1
            state.events.append(("llm", ""))
            state.pending.clear()   # the previous answer's tool calls have all run (or failed) by now
        fault = state.llm_fault(n)
        form = ALL_FORMS[fault.form] if fault else None
        how = form.how if form else ""
        retry = [(b"retry-after-ms", b"20")]
        if how == "status":
            ctype = form.extra.get("ctype", "application/json")
            await _send(send, form.extra["status"], form.text.encode(), ctype,
                        retry + ([(b"retry-after", b"0")] if form.extra["status"] == 429 else []))
            return
        if how == "drop":
            await send({"type": "http.response.start", "status": 200,
                        "headers": [(b"content-type", b"application/json"), (b"content-length", b"900")]})
            await send({"type": "http.response.body", "body": b'{"id": "', "more_body": True})
            raise ConnectionResetError("dropped on purpose")
        if how == "slow_timeout":
            await asyncio.sleep(state.timeout + 0.4)
        if how == "slow_deadline":
            await asyncio.sleep(state.deadline + 0.5)
        if how == "slow_benign":
            await asyncio.sleep(0.35)
        if how == "stale" and state.last_reply is not None:
            # the Agents SDK does not run a tool call whose id it has already seen: no tool step
            await _send(send, 200, state.last_reply)
            return
        if how == "body200":
            await _send(send, 200, form.text.encode())
            return
        message, finish = _message(state, request)
        if how in ("content", "finish_filter", "empty"):
            message = {"role": "assistant", "content": form.text if how != "empty" else ""}
            finish = "content_filter" if how == "finish_filter" else "stop"
        elif how in ("finish_length", "stream_length"):
            message = {"role": "assistant", "content": "I'll check the warehouse first and then upd"}
            finish = "length"
        elif how in ("mojibake_args", "symbols_args", "args_empty", "args_cut") and message.get("tool_calls"):
            f = message["tool_calls"][0]["function"]
            if how == "args_empty":
                f["arguments"] = "{}"
            elif how == "args_cut":
                f["arguments"] = f["arguments"][: max(3, len(f["arguments"]) * 3 // 10)]
                finish = "length"
            else:
                f["arguments"] = _garble(f["arguments"], how, random.Random(n))
        if how not in ("stream_error", "slow_timeout", "slow_deadline"):   # answers the agent never got
            _tool_steps(state, message, request)
        if not stream:
            reply = json.dumps(_completion(state, message, finish)).encode()
            state.last_reply = reply
            await _send(send, 200, reply)
            return
        chunks = _chunks(state, message, None if how.startswith("stream_cut") else finish)
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-type", b"text/event-stream"), (b"cache-control", b"no-cache")]})
        if how.startswith("stream_cut"):
            chunks = chunks[: max(2, len(chunks) // 2)]
        elif how == "stream_error":
            chunks = chunks[:2] + [b"data: " + form.text.encode() + b"\n\n"]
        for c in chunks:
            await send({"type": "http.response.body", "body": c, "more_body": True})
        if not how.startswith("stream_cut"):
            await send({"type": "http.response.body", "body": b"data: [DONE]\n\n", "more_body": True})
        await send({"type": "http.response.body", "body": b""})
