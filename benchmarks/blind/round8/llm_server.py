"""The loopback OpenAI-compatible server: the SIMULATED model's replies, in each provider's dialect,
and the model-side faults (HTTP errors, errors in 200 bodies and inside streams, odd finish
reasons, cut and stalled streams, slow and stale replies, damaged tool calls).
"""

from __future__ import annotations

import json
import socket
import string
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from .model import Reply
from .providers import extras, response_id
from .runtime import REGISTRY, FaultSpec, Runtime

SLOW_REPLY_S = 3.0       # a slow reply in a latency episode (its deadline is shorter)
RENAMES = {"to": "recipient", "body": "message", "subject": "title", "query": "q", "status": "state",
           "note": "comment", "phone": "phoneNumber", "email": "emailAddress", "channel": "medium",
           "service": "serviceName", "severity": "priority", "summary": "description", "reason": "memo",
           "ticket_id": "ticketId", "order_id": "orderId", "customer_id": "customerId", "amount_cents": "amountCents"}
SYMBOLS = "☂☃☄★☆☇☈☉☊☋☌☍☎☏☐☑☒☓"


def _corrupt_text(text: str, variant: str, seed: int) -> str:
    chars = list(text)
    if len(chars) < 3:
        return text + ("\ufffd" if variant == "replacement" else SYMBOLS[seed % len(SYMBOLS)])
    for j in range(max(1, len(chars) // 6)):
        pos = (seed * 7 + j * 5) % len(chars)
        chars[pos] = "\ufffd" if variant == "replacement" else SYMBOLS[(seed + j) % len(SYMBOLS)]
    return "".join(chars)


def _damage(reply: Reply, spec: FaultSpec, seed: int) -> Reply:
    """The reply as the fault leaves it (tool calls and content are (id, name, args) / text)."""
    f = spec.form
    calls = list(reply.tool_calls)
    if f.mech == "content200":
        return Reply(string.Template(f.payload).safe_substitute(rid=f"req_{seed:08x}"), [], "stop")
    if f.mech == "empty":
        return Reply("", [], "stop")
    if f.mech == "args_empty" and calls:
        calls[0] = (calls[0][0], calls[0][1], "{}")
        return Reply(None, calls, reply.finish_reason)
    if f.mech == "args_schema" and calls:
        cid, name, args = calls[0]
        calls[0] = (cid, name, json.dumps({RENAMES.get(k, k + "_value"): v for k, v in json.loads(args).items()}))
        return Reply(None, calls, reply.finish_reason)
    if f.mech == "corrupt":
        if calls:
            out = []
            for cid, name, args in calls:
                value = json.loads(args)
                value = {k: _corrupt_text(v, f.opts["variant"], seed + i) if isinstance(v, str) else v
                         for i, (k, v) in enumerate(value.items())}
                out.append((cid, name, json.dumps(value, ensure_ascii=False)))
            return Reply(None, out, reply.finish_reason)
        return Reply(_corrupt_text(reply.content or "", f.opts["variant"], seed), [], reply.finish_reason)
    if f.mech == "finish":
        finish = f.opts["finish"]
        if finish in ("length", "model_length"):
            if calls:
                cid, name, args = calls[-1]
                return Reply(None, calls[:-1] + [(cid, name, args[: int(len(args) * 0.4)])], finish)
            text = reply.content or ""
            return Reply(text[: int(len(text) * 0.4)], [], finish)
        return Reply("", [], finish)
    return reply


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.0"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
        return

    def _send(self, status: int, body: bytes, ctype: str, headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("content-type", ctype)
        self.send_header("content-length", str(len(body)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        try:
            self.wfile.write(body)
        except OSError:
            pass

    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        length = int(self.headers.get("content-length") or 0)
        req = json.loads(self.rfile.read(length) or b"{}")
        rt = REGISTRY.get(self.headers.get("x-desk-run", ""))
        if rt is None or not self.path.split("?")[0].endswith("/chat/completions"):
            self._send(404, b'{"error":{"message":"Unknown route","type":"invalid_request_error"}}',
                       "application/json")
            return
        messages = req.get("messages") or []
        turn = sum(1 for m in messages if m.get("role") == "assistant")
        step = rt.next_step("llm", "chat")
        spec = rt.llm_fault(turn, step)
        self.serve(rt, req, messages, turn, step, spec)

    def serve(self, rt: Runtime, req: dict[str, Any], messages: list[dict[str, Any]], turn: int, step: int,
              spec: FaultSpec | None) -> None:
        mech = spec.form.mech if spec else ""
        if mech == "disconnect":
            self.close_connection = True
            try:
                self.connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            return
        if mech == "read_timeout":
            time.sleep(rt.timeout + 0.5)
        if mech == "http":
            assert spec is not None
            status = int(spec.form.opts["status"])
            headers = {"retry-after-ms": "20"} if status in (408, 429) or status >= 500 else {}
            body = string.Template(spec.form.payload).safe_substitute(rid=rt.rid(step))
            self._send(status, body.encode(), spec.form.opts.get("ctype", "application/json"), headers)
            return
        if mech == "body200":
            assert spec is not None
            body = string.Template(spec.form.payload).safe_substitute(rid=rt.rid(step))
            self._send(200, body.encode(), "application/json")
            return
        if mech == "latency":
            time.sleep(SLOW_REPLY_S)
        if rt.slow_turn == turn and not spec:
            time.sleep(rt.slow_s)
        if mech == "stale" and rt.last_reply is not None:
            reply, rid = rt.last_reply
        else:
            reply = rt.model.decide(messages)
            rid = response_id(rt.provider, f"{rt.task_id}/{turn}")
            rt.last_reply = (reply, rid)
            if spec:
                reply = _damage(reply, spec, step)
        usage = {"prompt_tokens": 180 + 45 * len(messages), "completion_tokens": 12 + 9 * len(reply.tool_calls),
                 "total_tokens": 0}
        usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
        model = req.get("model") or ""
        if req.get("stream"):
            self.stream(rt, reply, rid, model, usage, spec, req)
        else:
            message: dict[str, Any] = {"role": "assistant", "content": reply.content}
            if reply.tool_calls:
                message["tool_calls"] = [{"id": i, "type": "function", "function": {"name": n, "arguments": a}}
                                         for i, n, a in reply.tool_calls]
            choice: dict[str, Any] = {"index": 0, "message": message, "finish_reason": reply.finish_reason,
                                      "logprobs": None}
            if rt.provider == "azure":
                choice["content_filter_results"] = _filter_results(reply.finish_reason)
            body = {"id": rid, "object": "chat.completion", "created": 1765000000 + turn, "model": model,
                    "choices": [choice], "usage": usage, **extras(rt.provider, usage, reply.finish_reason)}
            self._send(200, json.dumps(body, ensure_ascii=False).encode(), "application/json")

    def stream(self, rt: Runtime, reply: Reply, rid: str, model: str, usage: dict[str, int],
               spec: FaultSpec | None, req: dict[str, Any]) -> None:
        base = {"id": rid, "object": "chat.completion.chunk", "created": 1765000000, "model": model}

        def chunk(delta: dict[str, Any], finish: str | None = None, **more: Any) -> bytes:
            choice: dict[str, Any] = {"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}
            if rt.provider == "azure" and finish:
                choice["content_filter_results"] = _filter_results(finish)
            return b"data: " + json.dumps({**base, "choices": [choice], **more}, ensure_ascii=False).encode() + b"\n\n"

        events = [chunk({"role": "assistant", "content": ""})]
        text = reply.content or ""
        pieces = [text[i:i + 24] for i in range(0, len(text), 24)]
        events += [chunk({"content": p}) for p in pieces]
        for idx, (cid, name, args) in enumerate(reply.tool_calls):
            events.append(chunk({"tool_calls": [{"index": idx, "id": cid, "type": "function",
                                                 "function": {"name": name, "arguments": ""}}]}))
            for j in range(0, len(args), 20):
                events.append(chunk({"tool_calls": [{"index": idx, "function": {"arguments": args[j:j + 20]}}]}))
        final = [chunk({}, reply.finish_reason)]
        if (req.get("stream_options") or {}).get("include_usage"):
            tail = {**base, "choices": [], "usage": usage, **extras(rt.provider, usage, reply.finish_reason)}
            final.append(b"data: " + json.dumps(tail).encode() + b"\n\n")
        done = [b"data: [DONE]\n\n"]
        mech = spec.form.mech if spec else ""
        variant = spec.form.opts.get("variant") if spec else None
        if mech == "cut" and variant == "no_done":
            out = [b"".join(events[: max(2, len(events) // 2)])]
        elif mech == "cut" and variant == "done_no_finish":
            out = [b"".join(events + done)]
        elif mech == "cut" and variant == "empty":
            out = []
        elif mech == "cut" and variant == "stall":
            out = [b"".join(events[: max(2, len(events) // 2)]), b"STALL"]
        elif mech == "stream_error":
            assert spec is not None
            out = [b"".join(events[:2]) + b"data: " + spec.form.payload.encode() + b"\n\n"]
        else:
            out = [b"".join(events + final + done)]
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.end_headers()
        try:
            for part in out:
                if part == b"STALL":
                    time.sleep(rt.timeout + 0.6)
                    continue
                self.wfile.write(part)
                self.wfile.flush()
        except OSError:
            pass
        self.close_connection = True


def _filter_results(finish: str | None) -> dict[str, Any]:
    res = {k: {"filtered": False, "severity": "safe"} for k in ("hate", "self_harm", "sexual", "violence")}
    if finish == "content_filter":
        res["violence"] = {"filtered": True, "severity": "medium"}
    return res


class LoopbackModelServer:
    """The server on an ephemeral loopback port, in a daemon thread."""

    def __init__(self) -> None:
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self) -> LoopbackModelServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
