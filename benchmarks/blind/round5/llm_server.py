"""A loopback OpenAI-compatible chat-completions server whose answers come from the SIMULATED clerk.

It speaks the wire format the OpenAI-compatible providers share (JSON replies and SSE streams with
``data: [DONE]``, ``tool_calls`` deltas, ``finish_reason``, ``{"error": {...}}`` objects), dressed
as the provider of the episode's profile (ids, model names, extra members). The failure form armed
for a request attempt is applied here, as that provider or a gateway in front of it would answer.
Every request attempt of the current episode is logged as a step, in order.
"""

from __future__ import annotations

import hashlib
import json
import socket
import struct
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from benchmarks.blind.round5.model import Temperament, clerk

SLOW_SECONDS = 3.5  # a slow reply: far beyond the agent's 3 s patience
BENIGN_SLOW = 1.2  # a slow reply the agent waits out
TIMEOUT_SLEEP = 5.6  # longer than the client's 5 s read timeout

PROFILES: dict[str, dict[str, Any]] = {
    "groq": {
        "path": "/openai/v1",
        "model": "llama-3.3-70b-versatile",
        "retries": 2,
        "id": "chatcmpl-{h}",
        "extra": {"x_groq": {"id": "req_{h}"}},
    },
    "mistral": {"path": "/v1", "model": "mistral-large-latest", "retries": 2, "id": "{h}", "extra": {}},
    "deepseek": {
        "path": "/v1",
        "model": "deepseek-chat",
        "retries": 2,
        "id": "{h}",
        "extra": {"system_fingerprint": "fp_3a5770e1b4_prod0225"},
    },
    "together": {
        "path": "/v1",
        "model": "meta-llama/Llama-3.3-70B-Instruct-Turbo",
        "retries": 2,
        "id": "{h}-LAX",
        "extra": {"prompt": []},
    },
    "fireworks": {
        "path": "/inference/v1",
        "model": "accounts/fireworks/models/llama-v3p3-70b-instruct",
        "retries": 1,
        "id": "{h}",
        "extra": {},
    },
    "openrouter": {
        "path": "/api/v1",
        "model": "qwen/qwen-2.5-72b-instruct",
        "retries": 1,
        "id": "gen-{h}",
        "extra": {"provider": "DeepInfra"},
    },
    "azure": {
        "path": "/openai/v1",
        "model": "gpt-4o-ap-prod",
        "retries": 2,
        "id": "chatcmpl-{h}",
        "extra": {"prompt_filter_results": [{"prompt_index": 0, "content_filter_results": {}}]},
    },
    "vllm": {
        "path": "/v1",
        "model": "Qwen/Qwen2.5-32B-Instruct",
        "retries": 1,
        "id": "chatcmpl-{h}",
        "extra": {"prompt_logprobs": None},
    },
    "ollama": {
        "path": "/v1",
        "model": "qwen2.5:14b",
        "retries": 0,
        "id": "chatcmpl-{n}",
        "extra": {"system_fingerprint": "fp_ollama"},
    },
    "litellm": {"path": "/v1", "model": "ap-clerk", "retries": 2, "id": "chatcmpl-{h}", "extra": {}},
    "cloudflare": {
        "path": "/v1/8f1c2d3e/ap-gateway/compat",
        "model": "workers-ai/@cf/meta/llama-3.3-70b-instruct-fp8-fast",
        "retries": 1,
        "id": "chatcmpl-{h}",
        "extra": {},
    },
    "portkey": {"path": "/v1", "model": "@openai-prod/gpt-4o-mini", "retries": 1, "id": "chatcmpl-{h}", "extra": {}},
}


@dataclass
class Current:
    """The episode the server is serving: its prompt, the clerk's temperament, and the armed forms."""

    task_id: str = ""
    profile: str = "vllm"
    temperament: Temperament = field(default_factory=Temperament)
    llm_faults: dict[int, dict[str, Any]] = field(default_factory=dict)
    attempts: int = 0
    log: list[tuple[Any, ...]] = field(default_factory=list)
    fired: list[tuple[int, str]] = field(default_factory=list)
    last_body: bytes | None = None


def _mojibake(s: str) -> str:
    return s.encode("utf-8").decode("cp1252", errors="replace")


def _spoil_args(kind: str, name: str, args: dict[str, Any]) -> str:
    a = dict(args)
    if kind == "args_mojibake":
        for k, v in a.items():
            if isinstance(v, str) and not v.isascii():
                a[k] = _mojibake(v)
        return json.dumps(a, ensure_ascii=False)
    if kind == "args_replacement":
        for k in ("invoice_id", "vendor_id", "account", "currency"):
            if isinstance(a.get(k), str):
                v = a[k]
                a[k] = v[: len(v) // 2] + "\ufffd" + v[len(v) // 2 + 1 :]
                break
        return json.dumps(a, ensure_ascii=False)
    if kind == "args_symbols":
        for k in ("bank_txn_id", "invoice_id", "email", "vendor_id", "account", "date"):
            if isinstance(a.get(k), str):
                v = a[k]
                a[k] = v[:3] + "\u2602" + v[4:7] + "\u264f" + v[8:]
                break
        return json.dumps(a, ensure_ascii=False)
    raise ValueError(kind)


class ChatServer:
    """The server thread and the state of the episode it is serving."""

    def __init__(self) -> None:
        self.cur = Current()
        self.lock = threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a: Any) -> None:  # quiet
                pass

            def do_POST(self) -> None:
                n = int(self.headers.get("content-length") or 0)
                body = json.loads(self.rfile.read(n) or b"{}")
                try:
                    outer.serve(self, body)
                except (BrokenPipeError, ConnectionResetError):
                    pass

        class Quiet(ThreadingHTTPServer):
            def handle_error(self, request: Any, client_address: Any) -> None:  # a client that hung up
                pass

        self.httpd = Quiet(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def begin(self, cur: Current) -> None:
        with self.lock:
            self.cur = cur

    def close(self) -> None:
        self.httpd.shutdown()

    # --- the scripted decision -------------------------------------------------------------
    def decide(self, messages: list[dict[str, Any]]) -> tuple[str, Any, int]:
        """Replay the clerk over the conversation; the next action and its index."""
        prompt = next(m["content"] for m in messages if m["role"] == "user")
        gen = clerk(prompt, self.cur.temperament)
        action = next(gen)
        n = 0
        seen: set[str] = set()
        i = 0
        while i < len(messages):
            m = messages[i]
            if m["role"] == "assistant" and m.get("tool_calls"):
                call_id = m["tool_calls"][0]["id"]
                result = ""
                if i + 1 < len(messages) and messages[i + 1]["role"] == "tool":
                    result = messages[i + 1].get("content") or ""
                    i += 1
                if call_id not in seen:
                    seen.add(call_id)
                    action = gen.send(result)
                    n += 1
            i += 1
        return action[0], action[1], n

    # --- replies -----------------------------------------------------------------------------
    def _ids(self, n: int) -> tuple[str, str]:
        h = hashlib.sha1(f"{self.cur.task_id}:{n}".encode()).hexdigest()
        prof = PROFILES[self.cur.profile]
        return prof["id"].format(h=h[:29], n=int(h[:3], 16)), f"call_{h[:24]}"

    def message(self, kind: str, payload: Any, n: int) -> tuple[dict[str, Any], str]:
        _, call_id = self._ids(n)
        if kind == "final":
            return {"role": "assistant", "content": payload}, "stop"
        name, args = payload
        text = args if kind == "raw" else json.dumps(args, ensure_ascii=False)
        return {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": call_id, "type": "function", "function": {"name": name, "arguments": text}}],
        }, "tool_calls"

    def completion(self, msg: dict[str, Any], finish: str | None, n: int, **choice_extra: Any) -> dict[str, Any]:
        rid, _ = self._ids(n)
        prof = PROFILES[self.cur.profile]
        out = {
            "id": rid,
            "object": "chat.completion",
            "created": 1796500000 + n,
            "model": prof["model"],
            "choices": [{"index": 0, "message": msg, "logprobs": None, "finish_reason": finish, **choice_extra}],
            "usage": {"prompt_tokens": 900 + 140 * n, "completion_tokens": 38, "total_tokens": 938 + 140 * n},
        }
        extra = json.loads(json.dumps(prof["extra"]).replace("{h}", rid[-12:]))
        out.update(extra)
        return out

    def serve(self, h: BaseHTTPRequestHandler, body: dict[str, Any]) -> None:
        with self.lock:
            cur = self.cur
            attempt = cur.attempts
            cur.attempts += 1
            cur.log.append(("llm", attempt))
            form = cur.llm_faults.get(attempt)
            if form is not None:
                cur.fired.append((attempt, form["id"]))
        kind, payload, n = self.decide(body.get("messages", []))
        msg, finish = self.message(kind, payload, n)
        stream = bool(body.get("stream"))
        fk = form["kind"] if form else None
        p = form.get("params", {}) if form else {}
        # connection-level and status forms
        if fk == "drop":
            h.close_connection = True
            return
        if fk == "reset":
            h.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            h.close_connection = True
            return
        if fk == "sleep":
            time.sleep(TIMEOUT_SLEEP)
        if fk == "slow":
            time.sleep(SLOW_SECONDS if not p.get("benign") else BENIGN_SLOW)
        if fk == "http":
            data = p["text"].encode() if "text" in p else json.dumps(p["body"]).encode()
            self._send(h, p["status"], data, p.get("ctype", "application/json"), p.get("headers", {}))
            return
        if fk == "body200":
            self._send(h, 200, json.dumps(p["body"]).encode(), "application/json")
            return
        if fk == "stale" and cur.last_body is not None:
            self._send(h, 200, cur.last_body, "application/json")
            return
        # forms on the message itself
        extra: dict[str, Any] = {}
        if fk == "content":
            msg, finish = {"role": "assistant", "content": p["text"]}, "stop"
        elif fk == "choice_error":
            msg, finish, extra = {"role": "assistant", "content": ""}, "error", {"error": p["error"]}
        elif fk == "filter":
            msg, finish = {"role": "assistant", "content": None}, "content_filter"
            if self.cur.profile == "azure":
                extra = {"content_filter_results": {"violence": {"filtered": True, "severity": "medium"}}}
        elif fk in ("length", "stream_length"):
            if msg.get("tool_calls"):
                a = msg["tool_calls"][0]["function"]["arguments"]
                msg["tool_calls"][0]["function"]["arguments"] = a[: int(len(a) * 0.4)]
            else:
                msg["content"] = msg["content"][: int(len(msg["content"]) * 0.5)]
            finish = "length"
        elif fk == "empty":
            msg, finish = {"role": "assistant", "content": ""}, "stop"
        elif fk == "empty_tool_calls":
            msg, finish = {"role": "assistant", "content": None, "tool_calls": []}, "tool_calls"
        elif fk == "args_schema" and msg.get("tool_calls"):
            msg["tool_calls"][0]["function"]["arguments"] = json.dumps(p["args"])
        elif fk == "args_empty" and msg.get("tool_calls"):
            msg["tool_calls"][0]["function"]["arguments"] = "{}"
        elif fk in ("args_mojibake", "args_replacement", "args_symbols", "stream_mojibake") and msg.get("tool_calls"):
            fn = msg["tool_calls"][0]["function"]
            fn["arguments"] = _spoil_args(
                "args_mojibake" if fk == "stream_mojibake" else fk, fn["name"], json.loads(fn["arguments"])
            )
        if stream:
            self._stream(h, msg, finish, n, fk, p)
            return
        data = json.dumps(self.completion(msg, finish, n, **extra), ensure_ascii=False).encode()
        if fk == "partial":
            h.send_response(200)
            h.send_header("content-type", "application/json")
            h.send_header("content-length", str(len(data)))
            h.end_headers()
            h.wfile.write(data[: len(data) // 3])
            h.wfile.flush()
            h.close_connection = True
            return
        with self.lock:
            cur.last_body = data
        self._send(h, 200, data, "application/json")

    def _send(
        self, h: BaseHTTPRequestHandler, status: int, data: bytes, ctype: str, headers: dict[str, str] | None = None
    ) -> None:
        h.send_response(status)
        h.send_header("content-type", ctype)
        h.send_header("content-length", str(len(data)))
        h.send_header("x-request-id", hashlib.sha1(data).hexdigest()[:20])
        for k, v in (headers or {}).items():
            h.send_header(k, v)
        h.end_headers()
        h.wfile.write(data)

    def _stream(
        self,
        h: BaseHTTPRequestHandler,
        msg: dict[str, Any],
        finish: str | None,
        n: int,
        fk: str | None,
        p: dict[str, Any],
    ) -> None:
        rid, _ = self._ids(n)
        model = PROFILES[self.cur.profile]["model"]

        def chunk(delta: dict[str, Any], fin: str | None = None) -> bytes:
            c = {
                "id": rid,
                "object": "chat.completion.chunk",
                "created": 1796500000 + n,
                "model": model,
                "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": fin}],
            }
            return b"data: " + json.dumps(c, ensure_ascii=False).encode() + b"\n\n"

        events = [chunk({"role": "assistant", "content": ""})]
        if msg.get("tool_calls"):
            tc = msg["tool_calls"][0]
            a = tc["function"]["arguments"]
            events.append(
                chunk(
                    {
                        "tool_calls": [
                            {
                                "index": 0,
                                "id": tc["id"],
                                "type": "function",
                                "function": {"name": tc["function"]["name"], "arguments": ""},
                            }
                        ]
                    }
                )
            )
            step = max(1, len(a) // 3 + 1)
            for i in range(0, len(a), step):
                events.append(chunk({"tool_calls": [{"index": 0, "function": {"arguments": a[i : i + step]}}]}))
        elif msg.get("content"):
            c = msg["content"]
            step = max(1, len(c) // 4 + 1)
            for i in range(0, len(c), step):
                events.append(chunk({"content": c[i : i + step]}))
        events.append(chunk({}, finish))
        done = b"data: [DONE]\n\n"
        h.send_response(200)
        h.send_header("content-type", "text/event-stream")
        h.send_header("cache-control", "no-cache")
        h.send_header("connection", "close")
        h.end_headers()
        h.close_connection = True
        w = h.wfile
        if fk == "stream_no_chunks":
            w.write(done)
            return
        if fk == "stream_cut":
            for e in events[: max(2, len(events) // 2)]:
                w.write(e)
            w.flush()
            return
        if fk == "stream_done_early":
            for e in events[: max(2, len(events) // 2)]:
                w.write(e)
            w.write(done)
            return
        if fk == "stream_error":
            for e in events[:2]:
                w.write(e)
            w.write(b"data: " + json.dumps(p["body"]).encode() + b"\n\n")
            return
        for i, e in enumerate(events):
            w.write(e)
            if fk == "stream_stall" and i == 1:
                w.flush()
                time.sleep(SLOW_SECONDS if not p.get("benign") else BENIGN_SLOW)
        w.write(done)
