"""Two model providers on loopback, on one raw asyncio HTTP/1.1 server of our own.

``POST /v1/chat/completions`` speaks OpenAI Chat Completions (JSON and SSE); ``POST /v1/messages`` speaks the
Anthropic Messages API (JSON and SSE events). The answer comes from the scripted model (``scripted.decide``) for
the episode named by the ``x-r2-episode`` header; the episode's scenario may then make the provider (or a
gateway in front of it) misbehave: an error status with the vendor's body and headers, an error inside a 200, a
vendor stop reason, corruption in transit, a replayed answer, a cut or stalled stream, a reset connection, a
hang or a slow answer. A raw server (not a framework) is what lets us reset sockets and cut chunked bodies.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import random
import socket
import struct
import threading
from dataclasses import dataclass, field
from typing import Any

from .forms import FORMS, Form
from .runtime import REGISTRY, EpisodeRuntime
from .scripted import Final, Obs, ToolCall, decide
from .world import REGIONS

OA_MODEL_FALLBACK = "gpt-4.1-mini"


@dataclass
class Reply:
    text: str | None
    calls: list[dict[str, Any]]
    finish: str
    choice_extra: dict[str, Any] = field(default_factory=dict)
    top_extra: dict[str, Any] = field(default_factory=dict)
    headers: dict[str, str] = field(default_factory=dict)
    partial_input: bool = False


# ---------------------------------------------------------------------- conversation -> turns
def _turns_openai(rt: EpisodeRuntime, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    turns: list[dict[str, Any]] = []
    for m in messages:
        role = m.get("role")
        if role == "assistant":
            turns.append({"results": []})
        elif role == "tool" and turns:
            c = m.get("content")
            if isinstance(c, list):
                c = "".join(p.get("text", "") for p in c if isinstance(p, dict))
            turns[-1]["results"].append(Obs(text=c or "", is_error=str(c or "").startswith("Error")))
    for i, t in enumerate(turns):
        t["origin"] = rt.delivered.get(i, {}).get("origin", "model")
    return turns


def _turns_anthropic(rt: EpisodeRuntime, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    turns: list[dict[str, Any]] = []
    for m in messages:
        role = m.get("role")
        content = m.get("content")
        if role == "assistant":
            turns.append({"results": []})
        elif role == "user" and turns and isinstance(content, list):
            for b in content:
                if isinstance(b, dict) and b.get("type") == "tool_result":
                    c = b.get("content")
                    if isinstance(c, list):
                        c = "".join(p.get("text", "") for p in c if isinstance(p, dict))
                    turns[-1]["results"].append(Obs(text=c or "", is_error=bool(b.get("is_error"))))
    for i, t in enumerate(turns):
        t["origin"] = rt.delivered.get(i, {}).get("origin", "model")
    return turns


def _hid(*parts: Any, n: int = 24) -> str:
    return hashlib.sha1(":".join(str(p) for p in parts).encode()).hexdigest()[:n]


# ---------------------------------------------------------------------- in-transit transformations
def _cut_args(args_text: str) -> str:
    cut = max(3, int(len(args_text) * 0.45))
    out = args_text[:cut]
    try:
        json.loads(out)
        out = out[:-2]
    except ValueError:
        pass
    return out


def _partial_input(args: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in args.items():
        if isinstance(v, str):
            out[k] = v[: max(2, len(v) // 2)]
            break
        out[k] = v
    return out


def _map_strings(args: dict[str, Any], fn: Any) -> dict[str, Any]:
    return {k: (fn(v) if isinstance(v, str) else v) for k, v in args.items()}


def _symbols(rng: random.Random) -> Any:
    def f(s: str) -> str:
        chars = list(s)
        for i in range(len(chars)):
            if rng.random() < 0.22:
                chars[i] = chr(rng.randint(0x2600, 0x26FF))
        if chars and "".join(chars) == s:
            chars[len(chars) // 2] = chr(rng.randint(0x2600, 0x26FF))
        return "".join(chars)
    return f


def _replacement(s: str) -> str:
    if len(s) < 4:
        return s + "\ufffd"
    i = len(s) // 2
    return s[: i - 1] + "\ufffd\ufffd" + s[i + 1:]


def _wrong_args(rt: EpisodeRuntime, name: str, args: dict[str, Any]) -> dict[str, Any]:
    w = rt.world
    a = dict(args)
    if name == "page_oncall":
        handles = sorted({p["handle"] for r in w.oncall.values() for p in (r["primary"], r["secondary"])})
        a["handle"] = next(h for h in handles if h != args.get("handle"))
    elif name == "restart_service":
        a["region"] = next(r for r in REGIONS if r != args.get("region"))
    elif name == "scale_service":
        a["replicas"] = max(1, int(args.get("replicas") or 3) - 3)
    elif name in ("get_service_status", "query_metrics", "search_logs"):
        a["service"] = next(s for s in sorted(w.services) if s != args.get("service"))
    elif name == "rollback_deploy":
        s = w.services.get(args.get("service", ""))
        hist = s.history if s else []
        a["to_version"] = hist[0] if hist and hist[0] != args.get("to_version") else "v0.0.1"
    elif name == "get_oncall":
        from .world import TEAMS
        a["team"] = next(t for t in TEAMS if t != args.get("team"))
    elif name == "create_incident":
        a["service"] = next(s for s in sorted(w.services) if s != args.get("service"))
    elif name == "get_runbook":
        a["alert_name"] = next(n for n in sorted(w.runbooks) if n != args.get("alert_name"))
    return a


def build_reply(rt: EpisodeRuntime, provider: str, action: Any, turn: int) -> Reply:
    tid = rt.spec["task_id"]
    if isinstance(action, ToolCall):
        cid = ("call_" if provider == "openai" else "toolu_01") + _hid(tid, turn, action.name, n=22)
        text = action.lead if provider == "anthropic" else None
        return Reply(text=text, calls=[{"id": cid, "name": action.name, "args": action.args_text(),
                                        "obj": dict(action.args)}], finish="tool_calls")
    assert isinstance(action, Final)
    return Reply(text=action.text, calls=[], finish="stop")


def apply_body_fault(rt: EpisodeRuntime, form: Form, reply: Reply, seed: str) -> Reply:
    k = form.kind
    p = form.params
    rng = random.Random(seed)
    if k == "truncate_text":
        t = reply.text or ""
        reply.text = t[: max(1, int(len(t) * 0.4))]
        reply.finish = p.get("finish", "length")
    elif k == "truncate_args":
        for c in reply.calls:
            c["args"] = _cut_args(c["args"])
            c["obj"] = _partial_input(c["obj"])
        reply.finish = "length"
        reply.partial_input = True
    elif k == "filter":
        reply.calls = []
        reply.text = p.get("text")
        reply.finish = p.get("finish", "content_filter")
        reply.choice_extra = {"content_filter_results": {
            "hate": {"filtered": False, "severity": "safe"}, "self_harm": {"filtered": False, "severity": "safe"},
            "sexual": {"filtered": False, "severity": "safe"}, "violence": {"filtered": True, "severity": "medium"}}}
    elif k == "empty":
        reply.calls = []
        reply.text = ""
        reply.finish = "stop"
    elif k == "mojibake":
        reply.text = (reply.text or "").encode("utf-8").decode("cp1252", errors="replace")
    elif k in ("replacement_args", "symbols_args"):
        fn = _replacement if k == "replacement_args" else _symbols(rng)
        for c in reply.calls:
            c["obj"] = _map_strings(c["obj"], fn)
            c["args"] = json.dumps(c["obj"], ensure_ascii=False)
    elif k == "wrong_args":
        for c in reply.calls:
            c["obj"] = _wrong_args(rt, c["name"], c["obj"])
            c["args"] = json.dumps(c["obj"])
        reply.headers["x-cache-status"] = "Hit"
    elif k == "schema_content":
        reply.calls = []
        reply.text = json.dumps(p["obj"])
        reply.finish = "stop"
    elif k == "schema_args":
        for c in reply.calls:
            c["obj"] = {p["wrap"]: c["obj"]}
            c["args"] = json.dumps(c["obj"])
    elif k == "finish_error":
        reply.calls = []
        reply.text = ""
        reply.finish = "error"
        reply.choice_extra = {"error": {"code": 502, "message": "Provider returned error",
                                        "metadata": {"provider_name": "Together", "raw": "upstream timed out"}}}
    return reply


# ---------------------------------------------------------------------- wire formats
ANTH_FINISH = {"stop": "end_turn", "tool_calls": "tool_use", "length": "max_tokens"}


def openai_json(rt: EpisodeRuntime, reply: Reply, model: str, rid: str, created: int) -> dict[str, Any]:
    msg: dict[str, Any] = {"role": "assistant", "content": reply.text, "refusal": None}
    if reply.calls:
        msg["tool_calls"] = [{"id": c["id"], "type": "function", "function": {"name": c["name"],
                                                                               "arguments": c["args"]}}
                             for c in reply.calls]
    choice = {"index": 0, "message": msg, "logprobs": None, "finish_reason": reply.finish, **reply.choice_extra}
    out_tokens = max(1, len(reply.text or "") // 4 + sum(len(c["args"]) // 4 for c in reply.calls))
    body = {"id": f"chatcmpl-{rid}", "object": "chat.completion", "created": created, "model": model,
            "system_fingerprint": "fp_r2" + rid[:8], "choices": [choice],
            "usage": {"prompt_tokens": 420 + 35 * len(rt.delivered), "completion_tokens": out_tokens,
                      "total_tokens": 420 + 35 * len(rt.delivered) + out_tokens}}
    if reply.choice_extra.get("content_filter_results"):
        body["prompt_filter_results"] = [{"prompt_index": 0, "content_filter_results": {
            "hate": {"filtered": False, "severity": "safe"}, "jailbreak": {"filtered": False, "detected": False}}}]
    body.update(reply.top_extra)
    return body


def openai_sse(body: dict[str, Any]) -> list[tuple[str | None, str]]:
    choice = body["choices"][0]
    msg = choice["message"]
    base = {"id": body["id"], "object": "chat.completion.chunk", "created": body["created"], "model": body["model"],
            "system_fingerprint": body.get("system_fingerprint")}

    def chunk(delta: dict[str, Any], finish: Any = None, extra: dict[str, Any] | None = None) -> tuple[None, str]:
        c = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish, **(extra or {})}
        return (None, json.dumps({**base, "choices": [c]}))

    out = [chunk({"role": "assistant", "content": "", "refusal": None})]
    text = msg.get("content") or ""
    for i in range(0, len(text), 14):
        out.append(chunk({"content": text[i:i + 14]}))
    for idx, tc in enumerate(msg.get("tool_calls") or []):
        out.append(chunk({"tool_calls": [{"index": idx, "id": tc["id"], "type": "function",
                                          "function": {"name": tc["function"]["name"], "arguments": ""}}]}))
        a = tc["function"]["arguments"]
        for i in range(0, len(a), 18):
            out.append(chunk({"tool_calls": [{"index": idx, "function": {"arguments": a[i:i + 18]}}]}))
    extra = {k: v for k, v in choice.items() if k not in ("index", "message", "logprobs", "finish_reason")}
    out.append(chunk({}, choice["finish_reason"], extra))
    out.append((None, "[DONE]"))
    return out


def anthropic_json(rt: EpisodeRuntime, reply: Reply, model: str, rid: str) -> dict[str, Any]:
    content: list[dict[str, Any]] = []
    if reply.text:
        content.append({"type": "text", "text": reply.text})
    for c in reply.calls:
        content.append({"type": "tool_use", "id": c["id"], "name": c["name"], "input": c["obj"]})
    out_tokens = max(1, len(reply.text or "") // 4 + sum(len(c["args"]) // 4 for c in reply.calls))
    return {"id": f"msg_01{rid[:22]}", "type": "message", "role": "assistant", "model": model, "content": content,
            "stop_reason": ANTH_FINISH.get(reply.finish, reply.finish), "stop_sequence": None,
            "usage": {"input_tokens": 512 + 40 * len(rt.delivered), "output_tokens": out_tokens,
                      "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0, "service_tier": "standard"}}


def anthropic_sse(body: dict[str, Any], reply: Reply) -> list[tuple[str | None, str]]:
    start = {**body, "content": [], "stop_reason": None, "stop_sequence": None,
             "usage": {**body["usage"], "output_tokens": 1}}
    ev: list[tuple[str | None, str]] = [("message_start", json.dumps({"type": "message_start", "message": start}))]
    idx = 0
    for block in body["content"]:
        if block["type"] == "text":
            ev.append(("content_block_start", json.dumps({"type": "content_block_start", "index": idx,
                                                          "content_block": {"type": "text", "text": ""}})))
            if idx == 0:
                ev.append(("ping", json.dumps({"type": "ping"})))
            t = block["text"]
            for i in range(0, len(t), 16):
                ev.append(("content_block_delta", json.dumps({"type": "content_block_delta", "index": idx,
                                                              "delta": {"type": "text_delta", "text": t[i:i + 16]}})))
        else:
            ev.append(("content_block_start", json.dumps({"type": "content_block_start", "index": idx,
                                                          "content_block": {"type": "tool_use", "id": block["id"],
                                                                            "name": block["name"], "input": {}}})))
            raw = next((c["args"] for c in reply.calls if c["id"] == block["id"]), json.dumps(block["input"]))
            if not reply.partial_input:
                raw = json.dumps(block["input"])
            for i in range(0, len(raw), 20):
                ev.append(("content_block_delta", json.dumps({"type": "content_block_delta", "index": idx, "delta": {
                    "type": "input_json_delta", "partial_json": raw[i:i + 20]}})))
        ev.append(("content_block_stop", json.dumps({"type": "content_block_stop", "index": idx})))
        idx += 1
    ev.append(("message_delta", json.dumps({"type": "message_delta", "delta": {
        "stop_reason": body["stop_reason"], "stop_sequence": None},
        "usage": {"output_tokens": body["usage"]["output_tokens"]}})))
    ev.append(("message_stop", json.dumps({"type": "message_stop"})))
    return ev


def sse_bytes(events: list[tuple[str | None, str]]) -> list[bytes]:
    out = []
    for name, data in events:
        s = (f"event: {name}\n" if name else "") + f"data: {data}\n\n"
        out.append(s.encode())
    return out


# ---------------------------------------------------------------------- HTTP plumbing
REASONS = {200: "OK", 400: "Bad Request", 401: "Unauthorized", 402: "Payment Required", 403: "Forbidden",
           404: "Not Found", 413: "Payload Too Large", 429: "Too Many Requests", 500: "Internal Server Error",
           502: "Bad Gateway", 503: "Service Unavailable", 504: "Gateway Timeout", 529: "Overloaded"}


class Conn:
    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.r, self.w = reader, writer

    async def send_head(self, status: int, headers: dict[str, str]) -> None:
        lines = [f"HTTP/1.1 {status} {REASONS.get(status, 'Status')}"]
        lines += [f"{k}: {v}" for k, v in headers.items()]
        self.w.write(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1"))
        await self.w.drain()

    async def send_full(self, status: int, headers: dict[str, str], body: bytes) -> None:
        await self.send_head(status, {**headers, "content-length": str(len(body)), "connection": "close"})
        self.w.write(body)
        await self.w.drain()

    async def chunk(self, data: bytes) -> None:
        self.w.write(b"%x\r\n" % len(data) + data + b"\r\n")
        await self.w.drain()

    async def end_chunks(self) -> None:
        self.w.write(b"0\r\n\r\n")
        await self.w.drain()

    def reset(self) -> None:
        sock = self.w.get_extra_info("socket")
        if sock is not None:
            try:
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            except OSError:
                pass
        self.w.transport.abort()

    async def close(self) -> None:
        try:
            self.w.close()
            await self.w.wait_closed()
        except (ConnectionError, OSError):
            pass


async def read_request(reader: asyncio.StreamReader) -> tuple[str, str, dict[str, str], bytes] | None:
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError):
        return None
    lines = head.decode("latin-1").split("\r\n")
    method, path, _ = lines[0].split(" ", 2)
    headers = {}
    for ln in lines[1:]:
        if ":" in ln:
            k, v = ln.split(":", 1)
            headers[k.strip().lower()] = v.strip()
    n = int(headers.get("content-length", "0") or 0)
    body = await reader.readexactly(n) if n else b""
    return method, path, headers, body


def _fmt(v: Any, subs: dict[str, str]) -> Any:
    if isinstance(v, str):
        for k, s in subs.items():
            v = v.replace("{" + k + "}", s)
        return v
    if isinstance(v, dict):
        return {k: _fmt(x, subs) for k, x in v.items()}
    if isinstance(v, list):
        return [_fmt(x, subs) for x in v]
    return v


class ModelServer:
    """The loopback provider; ``port`` is set once it listens."""

    def __init__(self) -> None:
        self.port = 0
        self.loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._server: asyncio.base_events.Server | None = None
        self._ready = threading.Event()

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="r2-model-server", daemon=True)
        self._thread.start()
        self._ready.wait(10)

    def _run(self) -> None:
        self.loop = asyncio.new_event_loop()
        asyncio.set_event_loop(self.loop)

        async def main() -> None:
            self._server = await asyncio.start_server(self._handle, "127.0.0.1", 0, limit=1 << 22)
            self.port = self._server.sockets[0].getsockname()[1]
            self._ready.set()
            async with self._server:
                await self._server.serve_forever()

        try:
            self.loop.run_until_complete(main())
        except asyncio.CancelledError:
            pass

    def stop(self) -> None:
        if self.loop and self._server:
            self.loop.call_soon_threadsafe(self._server.close)
            for t in asyncio.all_tasks(self.loop):
                self.loop.call_soon_threadsafe(t.cancel)

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        conn = Conn(reader, writer)
        try:
            req = await read_request(reader)
            if req is None:
                return
            method, path, headers, body = req
            await self._dispatch(conn, method, path, headers, body)
        except (ConnectionError, asyncio.IncompleteReadError, OSError):
            pass
        finally:
            if not writer.is_closing():
                await conn.close()

    async def _dispatch(self, conn: Conn, method: str, path: str, headers: dict[str, str], raw: bytes) -> None:
        provider = "openai" if path.endswith("/chat/completions") else "anthropic" if path.endswith("/messages") \
            else None
        rt = REGISTRY.get(headers.get("x-r2-episode", ""))
        if method != "POST" or provider is None or rt is None:
            await conn.send_full(404, {"content-type": "application/json"},
                                 b'{"error": {"message": "Not found", "type": "invalid_request_error"}}')
            return
        req = json.loads(raw or b"{}")
        stream = bool(req.get("stream"))
        model = req.get("model") or OA_MODEL_FALLBACK
        msgs = req.get("messages") or []
        turns = _turns_openai(rt, msgs) if provider == "openai" else _turns_anthropic(rt, msgs)
        turn = len(turns)
        spec = rt.spec
        action, m = decide(spec["task"], spec.get("reactions", {}), spec.get("quirk"), turns)
        key = f"tool:{action.name}#{m.counts[action.name]}" if isinstance(action, ToolCall) else "final"
        attempt, fault = rt.begin_llm(turn, key)
        tid = spec["task_id"]
        rid = _hid(tid, turn, attempt, n=24)
        created = 1774770000 + 7 * len(rt.events)
        form = FORMS[fault["form"]] if fault else None
        subs = {"rid": f"req_{rid[:20]}", "model": model, "retry_ms": str(spec.get("retry_ms", 60)),
                "retry_s": str(spec.get("retry_s", 1))}

        # ---- faults that replace the exchange
        if form is not None:
            k = form.kind
            if k == "http":
                p = form.params
                body = p["body"]
                data = (json.dumps(_fmt(body, subs)) if not isinstance(body, str) else _fmt(body, subs)).encode()
                hdrs = {"content-type": p["ctype"], "date": "Sun, 29 Mar 2026 09:55:00 GMT",
                        **_fmt(p.get("headers", {}), subs)}
                await conn.send_full(p["status"], hdrs, data)
                return
            if k == "reset":
                conn.reset()
                return
            if k == "disconnect":
                return
            if k == "hang":
                await asyncio.sleep(form.params["delay"])
                return
            if k == "slow":
                await asyncio.sleep(form.params["delay"])
            if k == "stale" and rt.last_body is not None:
                rt.delivered[turn] = {"origin": "foreign"}
                await self._send(conn, provider, stream, rt.last_body["json"], rt.last_body["reply"], {}, None)
                return
            if k == "error_in_200":
                data = json.dumps({"error": {"message": "upstream model server returned an invalid response",
                                             "type": "upstream_error", "param": None, "code": "bad_response_status_code"
                                             }}).encode()
                await conn.send_full(200, {"content-type": "application/json", "x-oneapi-request-id": rid}, data)
                return

        reply = build_reply(rt, provider, action, turn)
        if form is not None and form.kind not in ("slow", "stale") and not form.kind.startswith("stream"):
            reply = apply_body_fault(rt, form, reply, seed=f"{tid}:{turn}:{attempt}")
        if provider == "openai":
            body = openai_json(rt, reply, model, rid, created)
        else:
            body = anthropic_json(rt, reply, model, rid)
        rt.delivered[turn] = {"origin": "model"}
        rt.last_body = {"json": body, "reply": reply}
        await self._send(conn, provider, stream, body, reply, reply.headers, form)

    async def _send(self, conn: Conn, provider: str, stream: bool, body: dict[str, Any], reply: Reply,
                    extra_headers: dict[str, str], form: Form | None) -> None:
        if provider == "openai":
            base = {"x-request-id": f"req_{body['id'][-20:]}", "openai-processing-ms": "412",
                    "x-ratelimit-remaining-requests": "4999", "openai-version": "2020-10-01"}
        else:
            base = {"request-id": f"req_011{body['id'][-21:]}", "anthropic-ratelimit-requests-remaining": "3999",
                    "anthropic-organization-id": "0f3c2a9e-5d1b-4e7a-9c3d-2b8e6f1a4c70"}
        base.update(extra_headers)
        if not stream:
            await conn.send_full(200, {"content-type": "application/json", **base}, json.dumps(body).encode())
            return
        events = openai_sse(body) if provider == "openai" else anthropic_sse(body, reply)
        await conn.send_head(200, {"content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache",
                                   "transfer-encoding": "chunked", "connection": "close", **base})
        frames = sse_bytes(events)
        kind = form.kind if form is not None else ""
        cut_at = max(2, len(frames) // 2)
        for i, fr in enumerate(frames):
            if kind == "stream_cut" and i == cut_at:
                await conn.end_chunks()
                return
            if kind == "stream_cut_mid" and i == cut_at:
                await conn.chunk(fr[: max(8, len(fr) // 2)])
                await asyncio.sleep(0.01)
                conn.reset()
                return
            if kind == "stream_stall" and i == cut_at:
                await asyncio.sleep(form.params["delay"])  # type: ignore[union-attr]
                conn.reset()
                return
            if kind == "stream_error" and i == cut_at:
                obj = form.params["obj"]  # type: ignore[union-attr]
                if provider == "openai":
                    err = {"id": body["id"], "object": "chat.completion.chunk", "created": body["created"],
                           "model": body["model"], **obj,
                           "choices": [{"index": 0, "delta": {"content": ""}, "finish_reason": "error"}]}
                    await conn.chunk(f"data: {json.dumps(err)}\n\n".encode())
                    await conn.chunk(b"data: [DONE]\n\n")
                else:
                    await conn.chunk(f"event: error\ndata: {json.dumps(obj)}\n\n".encode())
                await conn.end_chunks()
                return
            await conn.chunk(fr)
        await conn.end_chunks()
