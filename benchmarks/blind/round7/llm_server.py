"""A loopback Anthropic-compatible Messages server (JSON and SSE) that plays the SIMULATED model.

Written on asyncio streams, not a web framework, because it must answer the way real endpoints and
gateways misbehave: reset connections, streams cut mid-event, ``event: error`` inside a 200
stream, HTML pages from a gateway, error objects in 200 bodies, slow replies. Each request names
its episode in a header; the episode's plan says which provider it imitates (paths, ids, model
names, error bodies) and which attempt meets which form.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from benchmarks.blind.round7 import model
from benchmarks.blind.round7.forms import BY_NAME, Form

CLIENT_TIMEOUT = 2.0
SLOW_LATENCY = 1.8

PROVIDERS: dict[str, dict[str, str]] = {
    "bedrock": {"base": "/bedrock", "model": "anthropic.claude-sonnet-4-20250514-v1:0", "id": "msg_bdrk_01"},
    "vertex": {
        "base": "/vertex/v1/projects/freight-ops/locations/us-east5/publishers/anthropic",
        "model": "claude-sonnet-4@20250514",
        "id": "msg_vrtx_01",
    },
    "azure_foundry": {"base": "/anthropic", "model": "claude-sonnet-4-5", "id": "msg_01"},
    "openrouter": {"base": "/api", "model": "anthropic/claude-sonnet-4", "id": "gen-1765000000-"},
    "litellm": {"base": "", "model": "bedrock-claude-sonnet", "id": "chatcmpl-"},
    "portkey": {"base": "", "model": "claude-3-7-sonnet-latest", "id": "msg_01"},
    "cloudflare_gateway": {
        "base": "/v1/3f2c9a/freight-gw/anthropic",
        "model": "claude-sonnet-4-20250514",
        "id": "msg_01",
    },
    "deepseek": {"base": "/anthropic", "model": "deepseek-chat", "id": ""},
    "moonshot": {"base": "/anthropic", "model": "kimi-k2-0905-preview", "id": "chatcmpl-"},
    "zhipu": {"base": "/api/anthropic", "model": "glm-4.6", "id": "msg_2025"},
    "minimax": {"base": "/anthropic", "model": "MiniMax-M2", "id": "05"},
}


@dataclass
class LlmFault:
    """One form on the model side: when it starts and on how many consecutive attempts it fires."""

    form: str
    trigger: tuple[str, Any]  # ("attempt", n) | ("tool", name) | ("after_tool", name)
    repeat: int = 1
    fired: int = 0

    @property
    def spec(self) -> Form:
        return BY_NAME[self.form]


@dataclass
class EpisodePlan:
    task_id: str
    provider: str
    persona: model.Persona
    faults: list[LlmFault] = field(default_factory=list)
    pause_at: int = -1
    attempts: int = 0
    last_reply: dict[str, Any] | None = None
    fired: list[tuple[int, str]] = field(default_factory=list)


def _h(*parts: Any) -> str:
    return hashlib.sha256("|".join(map(str, parts)).encode()).hexdigest()


def _mojibake(s: str) -> str:
    if any(ord(c) > 127 for c in s):
        return s.encode("utf-8").decode("latin-1")
    return "".join(chr(0x2600 + (ord(c) % 200)) if i % 4 == 1 else c for i, c in enumerate(s))


class MessagesServer:
    """The server: ``await start()``, register plans, ``close()``."""

    def __init__(self) -> None:
        self.plans: dict[str, EpisodePlan] = {}
        self.server: asyncio.base_events.Server | None = None
        self.port = 0

    async def start(self) -> None:
        self.server = await asyncio.start_server(self._conn, "127.0.0.1", 0)
        self.port = self.server.sockets[0].getsockname()[1]

    async def close(self) -> None:
        if self.server is not None:
            self.server.close()

    async def _conn(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                lines = head.decode("latin-1").split("\r\n")
                headers = {k.strip().lower(): v.strip() for k, v in (ln.split(":", 1) for ln in lines[1:] if ":" in ln)}
                body = await reader.readexactly(int(headers.get("content-length", "0")))
                keep = await self._handle(headers, json.loads(body or b"{}"), writer)
                if not keep:
                    break
        except (asyncio.IncompleteReadError, ConnectionError, asyncio.LimitOverrunError, asyncio.CancelledError):
            pass
        except Exception as exc:  # a bug of ours: say so rather than look like a fault
            import sys
            import traceback

            traceback.print_exception(exc, file=sys.stderr)
            raise
        finally:
            if not writer.transport.is_closing():
                writer.close()

    # -- replies ---------------------------------------------------------------------------
    def _message(self, plan: EpisodePlan, attempt: int, reply: model.Reply) -> dict[str, Any]:
        p = PROVIDERS[plan.provider]
        h = _h(plan.task_id, attempt)
        blocks = []
        for i, b in enumerate(reply.blocks):
            if b["type"] == "tool_use":
                prefix = "call_" if plan.provider in ("deepseek", "moonshot", "zhipu") else "toolu_01"
                b = {"type": "tool_use", "id": prefix + _h(h, i)[:22], "name": b["name"], "input": b["input"]}
            blocks.append(b)
        out_tokens = 12 + len(json.dumps(blocks)) // 4
        msg: dict[str, Any] = {
            "id": p["id"] + h[:24],
            "type": "message",
            "role": "assistant",
            "model": p["model"],
            "content": blocks,
            "stop_reason": reply.stop_reason,
            "stop_sequence": None,
            "usage": {"input_tokens": 800 + 37 * attempt, "output_tokens": out_tokens},
        }
        if plan.provider == "openrouter":
            msg["provider"] = "Anthropic"
        if plan.provider == "deepseek":
            msg["usage"]["cache_read_input_tokens"] = 640
        if plan.provider in ("azure_foundry", "vertex", "bedrock"):
            msg["usage"]["cache_creation_input_tokens"] = 0
        return msg

    async def _handle(self, headers: dict[str, str], req: dict[str, Any], w: asyncio.StreamWriter) -> bool:
        plan = self.plans[headers["x-episode"]]
        attempt = plan.attempts
        plan.attempts += 1
        stream = bool(req.get("stream"))
        natural = model.decide(req["messages"], plan.persona)
        fault = self._pick(plan, attempt, natural, stream)
        if attempt == plan.pause_at and fault is None and natural.stop_reason == "tool_use":
            natural = model.Reply(
                [{"type": "text", "text": "Checking carrier cut-off times before continuing."}], "pause_turn"
            )
        if fault is None:
            msg = self._message(plan, attempt, natural)
            plan.last_reply = msg
            return await self._send_message(w, msg, stream, plan)
        f = fault.spec
        plan.fired.append((attempt, f.name))
        kind, x = f.kind, f.extra
        if kind == "reset":
            w.transport.abort()
            return False
        if kind == "slow_timeout":
            await asyncio.sleep(CLIENT_TIMEOUT + 0.7)
            w.transport.abort()
            return False
        if kind in ("status", "status_html"):
            hdrs = {"content-type": "application/json"}
            if kind == "status_html":
                payload = x["html"].encode()
                hdrs["content-type"] = "text/html; charset=utf-8" if x["html"].startswith("<") else "text/plain"
            else:
                payload = json.dumps(x["body"]).encode()
            if plan.provider == "bedrock":
                hdrs["x-amzn-errortype"] = (
                    f"{x.get('etype', 'InternalServerException')}:http://internal.amazon.com/coral/com.amazon.bedrock/"
                )
                hdrs["x-amzn-requestid"] = _h(plan.task_id, attempt)[:8] + "-" + _h(attempt)[:4]
            if plan.provider == "cloudflare_gateway":
                hdrs["cf-ray"] = _h(plan.task_id, attempt)[:16] + "-IAD"
            await self._send(w, x["status"], payload, hdrs)
            return True
        if kind == "body200":
            await self._send(w, 200, json.dumps(x["body"]).encode(), {"content-type": "application/json"})
            return True
        if kind == "stale" and plan.last_reply is not None:
            return await self._send_message(w, plan.last_reply, stream, plan)
        if kind in ("stream_error", "stream_cut"):
            msg = self._message(plan, attempt, natural)
            return await self._send_broken_stream(w, msg, kind, x)
        msg = self._message(plan, attempt, natural)
        if kind == "slow_latency":
            await asyncio.sleep(SLOW_LATENCY)
        elif kind in ("content_text", "schema_text"):
            msg["content"] = [{"type": "text", "text": x["text"]}]
            msg["stop_reason"] = "end_turn"
        elif kind == "empty":
            msg["content"] = []
            msg["stop_reason"] = "end_turn"
        elif kind == "refusal":
            msg["content"] = []
            msg["stop_reason"] = "refusal"
        elif kind == "max_tokens":
            for b in msg["content"]:
                if b["type"] == "tool_use":
                    b["input"] = {
                        k: (v[: max(1, int(len(v) * 0.3))] if isinstance(v, str) and k != "order_id" else v)
                        for k, v in b["input"].items()
                    }
                    b["input"] = dict(list(b["input"].items())[: max(1, len(b["input"]) - 2)])
                elif b["type"] == "text":
                    b["text"] = b["text"][: max(1, int(len(b["text"]) * 0.3))]
            msg["stop_reason"] = "max_tokens"
        elif kind in ("schema_args", "empty_args", "corrupt_args"):
            for b in msg["content"]:
                if b["type"] != "tool_use":
                    continue
                if kind == "schema_args":
                    b["input"] = {"query": f"{b['name']} for current order", "options": {"verbose": True}}
                elif kind == "empty_args":
                    b["input"] = {}
                else:
                    b["input"] = {
                        k: (_mojibake(v) if k in ("street", "city", "message") else v) for k, v in b["input"].items()
                    }
                break
        plan.last_reply = msg
        return await self._send_message(w, msg, stream, plan)

    def _pick(self, plan: EpisodePlan, attempt: int, natural: model.Reply, stream: bool) -> LlmFault | None:
        for f in plan.faults:
            if f.fired >= f.repeat:
                continue
            if f.fired == 0:
                kind = f.spec.kind
                if kind in ("stream_error", "stream_cut") and not stream:
                    continue
                tag, arg = f.trigger
                names = [b["name"] for b in natural.blocks if b["type"] == "tool_use"]
                prev = [b["name"] for b in (plan.last_reply or {}).get("content", []) if b.get("type") == "tool_use"]
                if tag == "attempt" and attempt < arg:
                    continue
                if tag == "tool" and arg not in names:
                    continue
                if tag == "after_tool" and arg not in prev:
                    continue
            f.fired += 1
            return f
        return None

    # -- wire ------------------------------------------------------------------------------
    async def _send(self, w: asyncio.StreamWriter, status: int, payload: bytes, hdrs: dict[str, str]) -> None:
        reason = {
            200: "OK",
            400: "Bad Request",
            401: "Unauthorized",
            403: "Forbidden",
            404: "Not Found",
            408: "Request Timeout",
            422: "Unprocessable Entity",
            429: "Too Many Requests",
            500: "Internal Server Error",
            502: "Bad Gateway",
            503: "Service Unavailable",
            504: "Gateway Timeout",
            524: "A Timeout Occurred",
            529: "Site Overloaded",
        }.get(status, "Error")
        head = f"HTTP/1.1 {status} {reason}\r\ncontent-length: {len(payload)}\r\nconnection: keep-alive\r\n"
        head += "".join(f"{k}: {v}\r\n" for k, v in hdrs.items()) + "\r\n"
        w.write(head.encode() + payload)
        await w.drain()

    async def _send_message(
        self, w: asyncio.StreamWriter, msg: dict[str, Any], stream: bool, plan: EpisodePlan
    ) -> bool:
        rid = {"request-id": "req_011C" + _h(msg["id"])[:20]}
        if not stream:
            await self._send(w, 200, json.dumps(msg).encode(), {"content-type": "application/json", **rid})
            return True
        await self._stream_events(w, _events(msg), rid)
        return True

    async def _stream_events(
        self,
        w: asyncio.StreamWriter,
        events: list[tuple[str, dict[str, Any]]],
        rid: dict[str, str],
        after: Callable[[], Awaitable[None]] | None = None,
        finish: bool = True,
    ) -> None:
        head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n"
        head += "cache-control: no-cache\r\n" + "".join(f"{k}: {v}\r\n" for k, v in rid.items()) + "\r\n"
        w.write(head.encode())
        for name, data in events:
            chunk = f"event: {name}\ndata: {json.dumps(data)}\n\n".encode()
            w.write(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
        await w.drain()
        if after is not None:
            await after()
        if finish:
            w.write(b"0\r\n\r\n")
            await w.drain()

    async def _send_broken_stream(
        self, w: asyncio.StreamWriter, msg: dict[str, Any], kind: str, x: dict[str, Any]
    ) -> bool:
        events = _events(msg)
        cut = [e for e in events if e[0] not in ("message_delta", "message_stop")]
        rid = {"request-id": "req_011C" + _h(msg["id"])[:20]}
        if kind == "stream_error":
            body = {"type": "error", "error": {"type": x["etype"], "message": x["message"]}}
            await self._stream_events(w, [*cut[: max(2, len(cut) // 2)], ("error", body)], rid)
            return True
        how = x["how"]
        if how == "early":
            await self._stream_events(w, cut[:1], rid)
            return True
        if how == "clean":
            await self._stream_events(w, cut[: max(2, len(cut) - 1)], rid)
            return True

        async def tear() -> None:
            partial = (
                b'event: content_block_delta\ndata: {"type": "content_block_delta", "index": 0, "delta": {"type": "inp'
            )
            w.write(f"{len(partial) + 40:x}\r\n".encode() + partial)
            await w.drain()
            w.transport.abort()

        await self._stream_events(w, cut[: max(2, len(cut) // 2)], rid, after=tear, finish=False)
        return False


def _events(msg: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    start = {**msg, "content": [], "stop_reason": None, "usage": {**msg["usage"], "output_tokens": 1}}
    ev: list[tuple[str, dict[str, Any]]] = [("message_start", {"type": "message_start", "message": start})]
    for i, b in enumerate(msg["content"]):
        if b["type"] == "text":
            ev.append(
                (
                    "content_block_start",
                    {"type": "content_block_start", "index": i, "content_block": {"type": "text", "text": ""}},
                )
            )
            text = b["text"]
            for j in range(0, len(text), 48):
                ev.append(
                    (
                        "content_block_delta",
                        {
                            "type": "content_block_delta",
                            "index": i,
                            "delta": {"type": "text_delta", "text": text[j : j + 48]},
                        },
                    )
                )
        else:
            ev.append(
                (
                    "content_block_start",
                    {
                        "type": "content_block_start",
                        "index": i,
                        "content_block": {"type": "tool_use", "id": b["id"], "name": b["name"], "input": {}},
                    },
                )
            )
            raw = json.dumps(b["input"])
            for j in range(0, len(raw), 40):
                ev.append(
                    (
                        "content_block_delta",
                        {
                            "type": "content_block_delta",
                            "index": i,
                            "delta": {"type": "input_json_delta", "partial_json": raw[j : j + 40]},
                        },
                    )
                )
        ev.append(("content_block_stop", {"type": "content_block_stop", "index": i}))
        if i == 0:
            ev.append(("ping", {"type": "ping"}))
    ev.append(
        (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": msg["stop_reason"], "stop_sequence": msg.get("stop_sequence")},
                "usage": {"output_tokens": msg["usage"]["output_tokens"]},
            },
        )
    )
    ev.append(("message_stop", {"type": "message_stop"}))
    return ev
