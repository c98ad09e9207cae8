"""The loopback OpenAI-compatible server: the SIMULATED model behind imitated providers and gateways.

Every request is one LLM step of its episode (the ``X-Episode`` header names it). The server asks
the scripted model for its reply, then sends it in the episode provider's shape (ids, extra
members, stream comments), or in place of it the failure form the plan puts on this turn and
attempt: an HTTP error with the provider's body, an error object in a 200, an odd finish reason,
an error inside the stream, a cut stream, a dropped connection, a reply slower than the client's
timeout, a stall, a stale repeat, garbled or emptied arguments.
"""

from __future__ import annotations

import hashlib
import json
import random
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from benchmarks.blind.round9.forms import Form
from benchmarks.blind.round9.model import Persona, Reply, decide
from benchmarks.blind.round9.providers import Provider
from benchmarks.blind.round9.tools import Run

CREATED = 1765700000


@dataclass
class Session:
    """What the server knows of one episode."""

    run: Run
    persona: Persona
    provider: Provider
    llm_faults: dict[tuple[int, int], Form]
    timeout: float
    seed: int
    seen: Counter[int] = field(default_factory=Counter)
    last_body: dict[str, Any] | None = None
    last_stream: list[str] | None = None


def _rid(p: Provider, key: str) -> str:
    h = hashlib.sha256(key.encode()).hexdigest()
    if p.name == "deepseek":
        return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}"
    if p.name == "zhipu":
        return f"2026121408{h[:18]}"
    if p.name == "minimax":
        return h[:32]
    if p.name == "openrouter":
        return f"gen-{int(h[:8], 16)}-{h[8:28]}"
    return p.id_prefix + h[:24]


def _cut_point(args: str) -> int:
    """Where a cut leaves the first argument's value unfinished."""
    at = args.find('": "')
    return min(len(args) - 1, at + 6) if at >= 0 else max(1, len(args) // 2)


def _garble(args: dict[str, Any], rng: random.Random, symbols: bool) -> dict[str, Any]:
    out = {}
    for k, v in args.items():
        if isinstance(v, str) and len(v) > 2:
            cut = rng.randrange(1, len(v) - 1)
            mark = chr(rng.randrange(0x2600, 0x26FF)) if symbols else "\ufffd"
            out[k] = v[:cut] + mark + v[cut:]
        else:
            out[k] = v
    return out


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: Sim

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
        return

    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))) or b"{}")
        s = self.server.sessions[self.headers.get("x-episode", "")]
        if not self.path.endswith(s.provider.base_path + "/chat/completions"):
            self._send(404, {"error": {"message": f"no route {self.path}"}})
            return
        turn = sum(1 for m in body.get("messages", []) if m.get("role") == "assistant")
        with s.run.lock:
            s.seen[turn] += 1
            attempt = s.seen[turn]
        step = s.run.next_step()
        s.run.llm_steps.append(step)
        form = s.llm_faults.get((turn, attempt))
        if form is not None:
            s.run.fired.append(("llm", step, form))
        reply = decide(s.run.items, s.persona, body.get("messages", []))
        key = f"{s.seed}/{turn}/{attempt}"
        self._answer(s, body, reply, form, key)

    # -- answering --------------------------------------------------------------------------------
    def _answer(self, s: Session, req: dict[str, Any], reply: Reply, form: Form | None, key: str) -> None:
        stream = bool(req.get("stream"))
        kind = form.kind if form else ""
        p = s.provider
        if kind == "drop":
            self.close_connection = True
            self.connection.shutdown(2)
            return
        if kind == "sleep":
            time.sleep(s.timeout + 2.5)
        elif kind == "slow" and not stream:
            time.sleep(min(1.0, s.timeout / 4))
        if kind == "http":
            assert form is not None
            headers = {"retry-after": "1"} if form.status == 429 and p.name in ("openrouter", "litellm") else {}
            ctype = "text/html" if form.body.startswith("<") else "application/json"
            self._send(form.status, form.body, headers, ctype)
            return
        if kind == "body200":
            assert form is not None
            self._send(200, form.body)
            return
        if kind == "stale" and (s.last_body is not None or s.last_stream is not None):
            if stream and s.last_stream is not None:
                self._stream(s.last_stream)
            elif s.last_body is not None:
                self._send(200, s.last_body)
            return
        rng = random.Random(key)
        calls = [(c.name, c.raw if c.raw is not None else json.dumps(c.args)) for c in reply.calls]
        text, finish = reply.text, ("tool_calls" if calls else "stop")
        if kind == "finish":
            assert form is not None
            text = text[: max(0, len(text) // 3)] if form.finish == "length" else ""
            if form.finish == "length" and not text:
                text = "Let me check the patient's eligib"
            calls, finish = [], form.finish
        elif kind == "args_cut" and calls:
            name, args = calls[0]
            calls, finish = [(name, args[: _cut_point(args)])], "length"
        elif kind in ("corrupt", "corrupt_text") and calls:
            calls = [(c.name, json.dumps(_garble(c.args, rng, kind == "corrupt_text"), ensure_ascii=False))
                     for c in reply.calls]
        elif kind == "empty":
            text, calls, finish = "", [], "stop"
        elif kind == "schema_content":
            text, calls, finish = json.dumps({"error": {"message": "Upstream provider returned 503",
                                                        "code": 503}}), [], "stop"
        elif kind == "schema_args" and calls:
            calls = [(calls[0][0], json.dumps({"query": reply.calls[0].args.get("patient_id", "patient")}))]
        elif kind == "args_empty" and calls:
            calls = [(calls[0][0], "{}")] + calls[1:]
        rid = _rid(p, key)
        ids = [f"call_{hashlib.sha256(f'{key}/{i}'.encode()).hexdigest()[:24]}" for i in range(len(calls))]
        if stream:
            events = self._chunks(p, rid, req, text, calls, ids, finish)
            if kind in ("cut", "cut_mid", "stream_error", "slow"):
                assert form is not None
                events = self._break(events, form, s, bool(calls))
                self._stream(events, stall=s.timeout + 2.5 if kind == "slow" else 0.0)
                return
            s.last_stream = events
            self._stream(events)
            return
        msg: dict[str, Any] = {"role": "assistant", "content": text or (None if calls else "")}
        if calls:
            msg["tool_calls"] = [{"id": i, "type": "function", "function": {"name": n, "arguments": a}}
                                 for i, (n, a) in zip(ids, calls, strict=True)]
        choice = {"index": 0, "message": msg, "finish_reason": finish, **p.choice_extra}
        if "native_finish_reason" in choice:
            choice["native_finish_reason"] = {"stop": "end_turn", "tool_calls": "tool_use",
                                              "length": "max_tokens"}.get(finish, finish.upper())
        out = {"id": rid, "object": "chat.completion", "created": CREATED, "model": req.get("model", p.model),
               "choices": [choice], "usage": {"prompt_tokens": 900, "completion_tokens": 40, "total_tokens": 940,
                                              **p.usage_extra}, **p.extra}
        if p.name == "zhipu":
            out["request_id"] = rid
        s.last_body = out
        self._send(200, out)

    def _chunks(self, p: Provider, rid: str, req: dict[str, Any], text: str, calls: list[tuple[str, str]],
                ids: list[str], finish: str) -> list[str]:
        base = {"id": rid, "object": "chat.completion.chunk", "created": CREATED, "model": req.get("model", p.model),
                **{k: v for k, v in p.extra.items() if k != "base_resp"}}
        out = [f": {p.stream_comment[2:]}"] if p.stream_comment else []

        def chunk(delta: dict[str, Any], fin: str | None = None, **more: Any) -> str:
            return json.dumps({**base, "choices": [{"index": 0, "delta": delta, "finish_reason": fin}], **more})

        out.append(chunk({"role": "assistant", "content": ""}))
        for i in range(0, len(text), 24):
            out.append(chunk({"content": text[i:i + 24]}))
        for n, ((name, args), cid) in enumerate(zip(calls, ids, strict=True)):
            out.append(chunk({"tool_calls": [{"index": n, "id": cid, "type": "function",
                                              "function": {"name": name, "arguments": ""}}]}))
            half = _cut_point(args)
            for part in (args[:half], args[half:]):
                out.append(chunk({"tool_calls": [{"index": n, "function": {"arguments": part}}]}))
        out.append(chunk({}, finish, usage={"prompt_tokens": 900, "completion_tokens": 40, "total_tokens": 940}))
        out.append("[DONE]")
        return out

    def _break(self, events: list[str], form: Form, s: Session, has_calls: bool) -> list[str]:
        body = [e for e in events if not e.startswith(":")]
        if has_calls:  # through the first part of the first call's arguments, cut inside its first value
            keep = next(n for n, e in enumerate(body) if '"arguments": ""' in e) + 2
        else:
            keep = max(2, len(body) // 2)
        head = [e for e in events if e.startswith(":")] + body[:keep]
        if form.kind == "cut":
            return head
        if form.kind == "cut_mid":
            return [*head, body[keep][: len(body[keep]) // 2] + "\x00CUT"]
        if form.kind == "slow":
            return [*head, "\x00STALL", *body[keep:]]
        err = json.loads(form.body)
        last = json.loads(body[1])
        last["choices"] = [{"index": 0, "delta": {"content": ""}, "finish_reason": form.finish,
                            "native_finish_reason": form.finish}]
        return [*head, json.dumps({**last, **err})]

    def _stream(self, events: list[str], stall: float = 0.0) -> None:
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.send_header("connection", "close")
        self.end_headers()
        self.close_connection = True
        try:
            for e in events:
                if e == "\x00STALL":
                    self.wfile.flush()
                    time.sleep(stall)
                    continue
                if e.endswith("\x00CUT"):
                    self.wfile.write(("data: " + e[:-4]).encode())
                    break
                line = e if e.startswith(":") else "data: " + e
                self.wfile.write((line + "\n\n").encode())
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            pass

    def _send(self, status: int, payload: Any, headers: dict[str, str] | None = None,
              ctype: str = "application/json") -> None:
        data = payload.encode() if isinstance(payload, str) else json.dumps(payload).encode()
        try:
            self.send_response(status)
            self.send_header("content-type", ctype)
            self.send_header("content-length", str(len(data)))
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass


class Sim(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), Handler)
        self.sessions: dict[str, Session] = {}
        self.thread = threading.Thread(target=self.serve_forever, daemon=True)
        self.thread.start()

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that closed its kept-alive connection is not an error of the server."""
        import sys

        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)

    @property
    def port(self) -> int:
        return int(self.server_address[1])

    def close(self) -> None:
        self.shutdown()
        self.server_close()
