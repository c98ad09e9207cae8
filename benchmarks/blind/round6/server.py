"""The loopback servers, run in their own process: an OpenAI-compatible chat API and an MCP server.

The chat API is a small HTTP/1.1 server on asyncio streams (so it can also reset a connection, stop
a body half-way, stall a stream or never answer). It speaks for one of several providers (base
path, model names, id shapes, extra members) and its answers are the SIMULATED model's
(``model.decide``). The MCP server (official ``mcp`` SDK, Streamable HTTP) serves four of the nine
tools. Both read the corpus plan from the seed, apply the plan's forms and log every attempt and
every fault into the task's world file.

``python -m benchmarks.blind.round6.server --seed S --size N --worlds DIR --port-file F``
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import random
from pathlib import Path
from typing import Any

import uvicorn
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import ToolAnnotations

from . import world
from .forms import ALL_FORMS, Form
from .model import decide
from .plan import EpisodePlan, Fault, ToolFaults, episode_plans
from .tools import fill, shown_for

CALL_INDEX = "desk.example/call-index"   # the agent's own count of this tool's calls, in _meta
SILENT_S = 6.0
SLOW_S = 2.4
STALL_S = 3.0

PROFILES: dict[str, dict[str, Any]] = {
    "xai": {"model": "grok-3-mini", "id": "uuid", "extra": {"system_fingerprint": "fp_6d3f0a1c9b"}},
    "perplexity": {"model": "sonar-pro", "id": "uuid", "extra": {"citations": [], "search_results": []}},
    "cerebras": {
        "model": "llama-3.3-70b",
        "id": "chatcmpl",
        "extra": {
            "system_fingerprint": "fp_e1b2c3d4",
            "time_info": {"queue_time": 0.0001, "prompt_time": 0.002, "completion_time": 0.01, "total_time": 0.015},
        },
    },
    "sambanova": {"model": "Meta-Llama-3.3-70B-Instruct", "id": "uuid", "extra": {}},
    "nim": {"model": "meta/llama-3.1-70b-instruct", "id": "chat", "extra": {}},
    "tgi": {"model": "tgi", "id": "empty", "extra": {"system_fingerprint": "3.0.1-sha-bb9095a"}},
    "llamacpp": {
        "model": "gpt-3.5-turbo",
        "id": "chatcmpl",
        "extra": {"timings": {"prompt_n": 412, "predicted_n": 61, "predicted_per_second": 38.2}},
    },
    "lmstudio": {
        "model": "qwen2.5-7b-instruct",
        "id": "chatcmpl",
        "extra": {"stats": {}, "system_fingerprint": "qwen2.5-7b-instruct"},
    },
    "baseten": {"model": "deepseek-ai/DeepSeek-V3-0324", "id": "chatcmpl", "extra": {}},
    "gemini": {"model": "gemini-2.0-flash", "id": "gemini", "extra": {}},
    "bedrock": {"model": "openai.gpt-oss-120b-1:0", "id": "chatcmpl", "extra": {}},
    "databricks": {"model": "databricks-meta-llama-3-3-70b-instruct", "id": "chatcmpl", "extra": {}},
    "kong": {"model": "gpt-4o-mini", "id": "chatcmpl", "extra": {"system_fingerprint": "fp_kong"}},
    "helicone": {"model": "gpt-4o-mini", "id": "chatcmpl", "extra": {"system_fingerprint": "fp_b705f0c291"}},
}
BASE_PATHS = {
    "xai": "/v1",
    "perplexity": "",
    "cerebras": "/v1",
    "sambanova": "/v1",
    "nim": "/v1",
    "tgi": "/v1",
    "llamacpp": "/v1",
    "lmstudio": "/v1",
    "baseten": "/v1",
    "gemini": "/v1beta/openai",
    "bedrock": "/openai/v1",
    "databricks": "/serving-endpoints",
    "kong": "/travel-desk/llm",
    "helicone": "/v1",
}


def _h(*parts: Any) -> str:
    return hashlib.sha256(":".join(map(str, parts)).encode()).hexdigest()


def _response_id(provider: str, key: str) -> str:
    h = _h(key)
    shape = PROFILES[provider]["id"]
    if shape == "uuid":
        return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}"
    if shape == "chat":
        return f"chat-{h[:32]}"
    if shape == "empty":
        return ""
    if shape == "gemini":
        return h[:27]
    return f"chatcmpl-{h[:29]}"


def _args_op(op: str, args: str, key: str) -> str:
    rng = random.Random(key)
    if op == "empty_args":
        return "{}"
    if op == "cut_json":
        return args[: max(2, int(len(args) * 0.4))]
    if op == "foreign_keys":
        return json.dumps({"query": "rebook disrupted traveller", "search_recency_filter": "day"})
    data = json.loads(args)

    def change(v: str) -> str:
        if op == "cut_strings":
            return v[: max(1, int(len(v) * 0.3))]
        chars = list(v)
        for _ in range(max(1, len(chars) // 5)):
            i = rng.randrange(len(chars) + 1)
            piece = {"replacement_chars": "\ufffd", "mojibake": "Ã¢â‚¬", "symbols": chr(rng.randint(0x2600, 0x26FF))}[
                op
            ]
            chars.insert(i, piece)
        return "".join(chars)

    return json.dumps({k: change(v) if isinstance(v, str) else v for k, v in data.items()}, ensure_ascii=False)


class ChatServer:
    """The OpenAI-compatible side."""

    def __init__(self, plans: dict[str, EpisodePlan], worlds: Path) -> None:
        self.plans = plans
        self.worlds = worlds
        self.attempts: dict[tuple[str, int], int] = {}
        self.fired: dict[tuple[str, int], int] = {}
        self.last: dict[str, tuple[str, dict[str, Any]]] = {}

    # -- HTTP plumbing -------------------------------------------------------------------------
    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                lines = head.decode("latin-1").split("\r\n")
                headers = {k.strip().lower(): v.strip() for k, v in (ln.split(":", 1) for ln in lines[1:] if ":" in ln)}
                body = await reader.readexactly(int(headers.get("content-length", "0")))
                keep = await self.respond(lines[0], headers, body, writer)
                if not keep:
                    break
        except (asyncio.IncompleteReadError, ConnectionError, asyncio.LimitOverrunError):
            pass
        finally:
            if not writer.is_closing():
                writer.close()

    @staticmethod
    async def send(writer: asyncio.StreamWriter, status: int, body: bytes, headers: dict[str, str]) -> None:
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
        }.get(status, "Unknown")
        hs = {"content-type": "application/json", **headers, "content-length": str(len(body))}
        writer.write(
            f"HTTP/1.1 {status} {reason}\r\n".encode()
            + "".join(f"{k}: {v}\r\n" for k, v in hs.items()).encode()
            + b"\r\n"
            + body
        )
        await writer.drain()

    # -- one request -----------------------------------------------------------------------------
    async def respond(
        self, request_line: str, headers: dict[str, str], body: bytes, writer: asyncio.StreamWriter
    ) -> bool:
        task = headers.get("x-desk-task", "")
        ep = self.plans.get(task)
        if ep is None or "chat/completions" not in request_line:
            await self.send(writer, 404, b'{"error":{"message":"unknown route"}}', {})
            return True
        req = json.loads(body)
        messages = req["messages"]
        turn = sum(1 for m in messages if m.get("role") == "assistant")
        attempt = self.attempts.get((task, turn), 0)
        self.attempts[(task, turn)] = attempt + 1
        fault = self.active(ep, task, turn, attempt, messages)
        form = ALL_FORMS[fault.form] if fault else None
        path = self.worlds / f"{task}.sqlite"
        world.log_fault(path, "llm", turn, attempt, "", 0, form.name if form else "")
        prof = PROFILES[ep.provider]
        key = f"{task}:{turn}"
        rid = _response_id(ep.provider, key)
        stream = bool(req.get("stream"))
        # the model's move
        task_spec = json.loads(next(m for m in messages if m["role"] == "user")["content"].split("TICKET:", 1)[1])
        calls, final = decide(ep, task_spec, messages)
        message: dict[str, Any] = {"role": "assistant", "content": final or None}
        if calls:
            message["tool_calls"] = [
                {
                    "id": f"call_{_h(task, turn, i)[:24]}",
                    "type": "function",
                    "function": {"name": name, "arguments": args if isinstance(args, str) else json.dumps(args)},
                }
                for i, (name, args) in enumerate(calls)
            ]
        finish = "tool_calls" if calls else "stop"
        if form is not None and form.kind == "stale" and task in self.last:
            rid, message = self.last[task]
            finish = "tool_calls" if message.get("tool_calls") else "stop"
        else:
            self.last[task] = (rid, message)
        if form is None or form.kind in ("stale", "slow", "stall"):
            if form is not None and form.kind == "slow":
                await asyncio.sleep(SLOW_S)
            return await self.deliver(writer, ep, prof, rid, message, finish, stream, form)
        k = form.kind
        if k == "http":
            hs = dict(form.headers)
            await self.send(writer, form.status, fill(form.text, key, {}).encode(), hs)
            return True
        if k == "reset":
            writer.transport.abort()
            return False
        if k == "half_body":
            full = json.dumps(self.completion(prof, rid, message, finish)).encode()
            writer.write(
                b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: "
                + str(len(full)).encode()
                + b"\r\n\r\n"
                + full[: len(full) // 2]
            )
            await writer.drain()
            writer.transport.abort()
            return False
        if k == "silent":
            await asyncio.sleep(SILENT_S)
            writer.transport.abort()
            return False
        if k == "body200":
            await self.send(writer, 200, fill(form.text, key, {}).encode(), {})
            return True
        if k == "content":
            message, finish = {"role": "assistant", "content": fill(form.text, key, {})}, "stop"
        elif k == "finish":
            finish = form.extra["finish"]
            if form.extra.get("empty"):
                text = ""
            elif finish == "length":
                plan_text = final or (
                    f"Next I will call {calls[0][0]} with the details gathered so far, then "
                    "continue with the remaining travellers and confirm everything at the end."
                )
                text = plan_text[: int(len(plan_text) * form.extra.get("cut", 0.3))]
            else:
                text = form.text
            message = {"role": "assistant", "content": text}
        elif k == "args" and message.get("tool_calls"):
            tc = message["tool_calls"][0]
            tc["function"]["arguments"] = _args_op(form.extra["op"], tc["function"]["arguments"], key)
            if form.extra["op"] in ("cut_json", "cut_strings"):
                finish = "length"
        elif k == "stream_empty":
            message, finish = {"role": "assistant", "content": ""}, "stop"
        return await self.deliver(writer, ep, prof, rid, message, finish, stream, form)

    def active(
        self, ep: EpisodePlan, task: str, turn: int, attempt: int, messages: list[dict[str, Any]]
    ) -> Fault | None:
        for idx, f in enumerate(ep.faults):
            if not f.trigger:
                continue
            at = self.fired.get((task, idx))
            if at is None and self.matches(f.trigger, turn, messages):
                self.fired[(task, idx)] = at = turn
            if at == turn and (f.all_attempts or attempt == 0):
                return f
        return None

    @staticmethod
    def matches(trigger: tuple, turn: int, messages: list[dict[str, Any]]) -> bool:
        if trigger[0] == "turn":
            return turn == trigger[1]
        _, tool, occ = trigger
        if not messages or messages[-1].get("role") != "tool":
            return False
        assistants = [m for m in messages if m.get("role") == "assistant"]
        last_names = [c["function"]["name"] for c in assistants[-1].get("tool_calls") or []]
        total = sum(1 for m in assistants for c in m.get("tool_calls") or [] if c["function"]["name"] == tool)
        return tool in last_names and total == occ + 1

    @staticmethod
    def completion(prof: dict[str, Any], rid: str, message: dict[str, Any], finish: str) -> dict[str, Any]:
        return {
            "id": rid,
            "object": "chat.completion",
            "created": 1765000800,
            "model": prof["model"],
            "choices": [{"index": 0, "message": message, "finish_reason": finish, "logprobs": None}],
            "usage": {"prompt_tokens": 812, "completion_tokens": 64, "total_tokens": 876},
            **prof["extra"],
        }

    async def deliver(
        self,
        writer: asyncio.StreamWriter,
        ep: EpisodePlan,
        prof: dict[str, Any],
        rid: str,
        message: dict[str, Any],
        finish: str,
        stream: bool,
        form: Form | None,
    ) -> bool:
        if not stream:
            await self.send(
                writer,
                200,
                json.dumps(self.completion(prof, rid, message, finish)).encode(),
                {"x-request-id": rid or "none"},
            )
            return True
        writer.write(
            b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\n"
            b"transfer-encoding: chunked\r\n\r\n"
        )

        def chunk(delta: dict[str, Any], fin: str | None = None) -> bytes:
            obj = {
                "id": rid,
                "object": "chat.completion.chunk",
                "created": 1765000800,
                "model": prof["model"],
                "choices": [{"index": 0, "delta": delta, "finish_reason": fin, "logprobs": None}],
            }
            return f"data: {json.dumps(obj)}\n\n".encode()

        def frame(data: bytes) -> bytes:
            return f"{len(data):x}\r\n".encode() + data + b"\r\n"

        events = [chunk({"role": "assistant", "content": ""})]
        text = message.get("content") or ""
        for i in range(0, len(text), 24):
            events.append(chunk({"content": text[i : i + 24]}))
        for i, tc in enumerate(message.get("tool_calls") or []):
            events.append(
                chunk(
                    {
                        "tool_calls": [
                            {
                                "index": i,
                                "id": tc["id"],
                                "type": "function",
                                "function": {"name": tc["function"]["name"], "arguments": ""},
                            }
                        ]
                    }
                )
            )
            a = tc["function"]["arguments"]
            for j in range(0, len(a), 20):
                events.append(chunk({"tool_calls": [{"index": i, "function": {"arguments": a[j : j + 20]}}]}))
        kind = form.kind if form else ""
        cut = max(2, len(events) // 2)
        if kind == "stream_cut":
            for e in events[:cut]:
                writer.write(frame(e))
            if form and form.extra.get("done"):
                writer.write(frame(b"data: [DONE]\n\n"))
            writer.write(b"0\r\n\r\n")
            await writer.drain()
            return True
        if kind == "stream_mid_event":
            for e in events[:cut]:
                writer.write(frame(e))
            writer.write(frame(events[cut][: len(events[cut]) // 2]))
            await writer.drain()
            writer.transport.abort()
            return False
        if kind == "stream_error":
            for e in events[:cut]:
                writer.write(frame(e))
            writer.write(frame(f"data: {form.text}\n\n".encode()))
            writer.write(b"0\r\n\r\n")
            await writer.drain()
            return True
        for i, e in enumerate(events):
            writer.write(frame(e))
            if kind == "stall" and i == cut:
                await writer.drain()
                await asyncio.sleep(STALL_S)
        writer.write(frame(chunk({}, finish)))
        writer.write(frame(b"data: [DONE]\n\n"))
        writer.write(b"0\r\n\r\n")
        try:
            await writer.drain()
        except ConnectionError:
            return False
        return True


def build_mcp(plans: dict[str, EpisodePlan], worlds: Path) -> MCPServer:
    server = MCPServer(
        "travel-desk-tools", log_level="ERROR", instructions="Traveller profiles, fare rules, seat holds, rebooking."
    )
    faults: dict[str, ToolFaults] = {}

    def call(name: str, args: dict[str, Any], ctx: Context) -> str:
        task = (ctx.headers or {}).get("x-desk-task", "")
        ep = plans[task]
        tf = faults.setdefault(task, ToolFaults(ep))
        meta = ctx.request_context.meta or {}
        index = meta.get(CALL_INDEX)
        occ, fault = tf.next(name, args, int(index) if index is not None else None)
        path = worlds / f"{task}.sqlite"
        form = ALL_FORMS[fault.form] if fault else None
        if form is not None:
            world.log_fault(path, "tool", 0, 0, name, occ, form.name)
        if form is not None and form.kind != "data":
            raise ToolError(shown_for(form, f"{task}:{name}:{occ}", args, None).text)
        try:
            result = world.run_tool(path, name, args, str(occ))
        except world.ToolError as exc:
            raise ToolError(str(exc)) from None
        if form is not None:
            return shown_for(form, f"{task}:{name}:{occ}", args, result).text
        return json.dumps(result)

    ro = ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False)
    destructive = ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=False)

    @server.tool(annotations=ro, structured_output=False)
    def get_traveller(traveller_id: str, ctx: Context) -> str:
        """A traveller's profile: booking reference, fare paid, cabin policy, seat preference, contact channel."""
        return call("get_traveller", {"traveller_id": traveller_id}, ctx)

    @server.tool(annotations=ro, structured_output=False)
    def get_fare_rules(fare_id: str, ctx: Context) -> str:
        """The rules of a fare: change fee and whether a fare difference is refunded."""
        return call("get_fare_rules", {"fare_id": fare_id}, ctx)

    @server.tool(annotations=destructive, structured_output=False)
    def hold_seat(flight_id: str, traveller_id: str, ctx: Context, seat_pref: str = "any") -> str:
        """Hold a seat on a flight for a traveller (the hold lapses quickly: rebook right after)."""
        return call("hold_seat", {"flight_id": flight_id, "traveller_id": traveller_id, "seat_pref": seat_pref}, ctx)

    @server.tool(annotations=destructive, structured_output=False)
    def rebook_flight(booking_ref: str, flight_id: str, hold_id: str, ctx: Context) -> str:
        """Move a booking onto a flight using a seat hold; returns the new confirmation."""
        return call("rebook_flight", {"booking_ref": booking_ref, "flight_id": flight_id, "hold_id": hold_id}, ctx)

    return server


async def serve(seed: int, size: int, worlds: Path, port_file: Path) -> None:
    plans = {p.task_id: p for p in episode_plans(seed, size)}
    chat = ChatServer(plans, worlds)
    tcp = await asyncio.start_server(chat.handle, "127.0.0.1", 0, limit=2**22)
    chat_port = tcp.sockets[0].getsockname()[1]
    app = build_mcp(plans, worlds).streamable_http_app(streamable_http_path="/mcp", stateless_http=False)
    config = uvicorn.Config(app, host="127.0.0.1", port=0, log_level="error", lifespan="on")
    mcp_server = uvicorn.Server(config)
    task = asyncio.create_task(mcp_server.serve())
    while not mcp_server.started:
        await asyncio.sleep(0.05)
    mcp_port = mcp_server.servers[0].sockets[0].getsockname()[1]
    port_file.write_text(json.dumps({"chat": chat_port, "mcp": mcp_port}))
    async with tcp:
        await asyncio.gather(tcp.serve_forever(), task)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seed", type=int, required=True)
    ap.add_argument("--size", type=int, required=True)
    ap.add_argument("--worlds", type=Path, required=True)
    ap.add_argument("--port-file", type=Path, required=True)
    a = ap.parse_args()
    asyncio.run(serve(a.seed, a.size, a.worlds, a.port_file))


if __name__ == "__main__":
    main()
