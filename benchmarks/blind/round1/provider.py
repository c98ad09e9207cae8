"""Loopback OpenAI Chat Completions provider driven by the scripted model.

``POST /v1/chat/completions`` (JSON or SSE). The episode being run is set on the server by the
harness (episodes run one at a time); for each request the episode's scripted model decides the
turn, the episode's fault plan may pick a failure form, and the form renders the HTTP answer
through the ``Ctx`` helpers below (status, body, headers, SSE chunks, cut streams, resets).
"""

from __future__ import annotations

import copy
import hashlib
import json
import socket
import struct
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from .model import Action

CREATED_BASE = 1725270000

VENDOR_HEADERS = {
    "openai": lambda c: {
        "openai-organization": "org-k3yc9qhlwp2vxs1t",
        "openai-processing-ms": str(180 + 37 * (c.idx % 9)),
        "openai-version": "2020-10-01",
        "x-request-id": "req_" + c.hid("rq", 32),
        "x-ratelimit-limit-requests": "500",
        "x-ratelimit-remaining-requests": "499",
    },
    "azure": lambda c: {
        "apim-request-id": c.uuid(),
        "x-ms-region": "Sweden Central",
        "x-ratelimit-remaining-requests": "119",
        "x-ms-rai-invoked": "true",
        "x-ms-deployment-name": c.model,
    },
    "gemini": lambda c: {"server": "scaffolding on HTTPServer2", "vary": "Origin, X-Origin, Referer"},
    "vllm": lambda c: {"server": "uvicorn"},
    "ollama": lambda c: {},
    "litellm": lambda c: {
        "x-litellm-version": "1.52.6",
        "x-litellm-model-id": c.hid("m", 16),
        "x-litellm-response-cost": "0.00021",
    },
    "openrouter": lambda c: {"x-generation-id": "gen-" + c.hid("g", 22)},
    "anthropic": lambda c: {"request-id": "req_" + c.hid("a", 24), "server": "cloudflare"},
    "bedrock": lambda c: {"x-litellm-version": "1.52.6", "x-amzn-requestid": c.uuid()},
}


class Ctx:
    """What a failure form may do with the current request."""

    def __init__(
        self, handler: BaseHTTPRequestHandler, body: dict[str, Any], action: Action, run: Any, idx: int
    ) -> None:
        self.h, self.body, self.action, self.run, self.idx = handler, body, action, run, idx
        self.stream = bool(body.get("stream"))
        self.model = str(body.get("model", "model"))
        self.cid = "chatcmpl-" + self.hid("c", 29)
        self.created = CREATED_BASE + 11 * idx + run.ordinal * 1000

    # ---- ids
    def hid(self, salt: str, n: int) -> str:
        return hashlib.sha256(f"{self.run.task_id}:{self.idx}:{salt}".encode()).hexdigest()[:n]

    def uuid(self) -> str:
        return str(uuid.UUID(self.hid("uuid", 32)))

    def sleep(self, s: float) -> None:
        time.sleep(s)

    def _headers(self, extra: dict[str, str] | None) -> dict[str, str]:
        hs = dict(VENDOR_HEADERS.get(self.run.vendor, VENDOR_HEADERS["openai"])(self))
        if self.run.gateway_close:
            hs["connection"] = "close"
        hs.update(extra or {})
        return hs

    # ---- plain answers
    def send_bytes(self, status: int, data: bytes, ctype: str, extra: dict[str, str] | None = None) -> None:
        h = self.h
        h.send_response(status)
        h.send_header("content-type", ctype)
        for k, v in self._headers(extra).items():
            h.send_header(k, v)
        h.send_header("content-length", str(len(data)))
        h.end_headers()
        h.wfile.write(data)
        h.wfile.flush()
        if self.run.gateway_close:
            h.close_connection = True

    def send_json(self, status: int, obj: Any, extra: dict[str, str] | None = None) -> None:
        self.send_bytes(status, json.dumps(obj, ensure_ascii=False).encode(), "application/json", extra)

    # ---- completions
    def action_copy(self) -> Action:
        return copy.deepcopy(self.action)

    def blank(self, content: str | None = None) -> Action:
        return Action(content, [], [])

    def completion(
        self, a: Action, finish: str | None = None, choice_extra: dict | None = None, top_extra: dict | None = None
    ) -> dict[str, Any]:
        msg: dict[str, Any] = {"role": "assistant", "content": a.content, "refusal": None}
        if a.tool_calls:
            msg["tool_calls"] = [
                {"id": tc["id"], "type": "function", "function": {"name": tc["name"], "arguments": tc["arguments"]}}
                for tc in a.tool_calls
            ]
        fr = finish or ("tool_calls" if a.tool_calls else "stop")
        choice = {"index": 0, "message": msg, "logprobs": None, "finish_reason": fr}
        choice.update(choice_extra or {})
        ptoks = 220 + 41 * self.idx
        ctoks = max(1, len(json.dumps(msg)) // 4)
        out = {
            "id": self.cid,
            "object": "chat.completion",
            "created": self.created,
            "model": self.model,
            "choices": [choice],
            "usage": {"prompt_tokens": ptoks, "completion_tokens": ctoks, "total_tokens": ptoks + ctoks},
            "system_fingerprint": "fp_" + self.hid("fp", 10),
        }
        out.update(top_extra or {})
        return out

    def chunks(self, a: Action, finish: str | None = None, choice_extra: dict | None = None) -> list[dict[str, Any]]:
        base = {
            "id": self.cid,
            "object": "chat.completion.chunk",
            "created": self.created,
            "model": self.model,
            "system_fingerprint": "fp_" + self.hid("fp", 10),
        }

        def ch(delta: dict, fr: str | None = None, extra: dict | None = None) -> dict:
            c = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": fr}
            c.update(extra or {})
            return dict(base, choices=[c])

        out = [ch({"role": "assistant", "content": "" if a.content is None else ""})]
        if a.content:
            t = a.content
            for i in range(0, len(t), 9):
                out.append(ch({"content": t[i : i + 9]}))
        for k, tc in enumerate(a.tool_calls):
            out.append(
                ch(
                    {
                        "tool_calls": [
                            {
                                "index": k,
                                "id": tc["id"],
                                "type": "function",
                                "function": {"name": tc["name"], "arguments": ""},
                            }
                        ]
                    }
                )
            )
            args = tc["arguments"]
            for i in range(0, len(args), 14):
                out.append(ch({"tool_calls": [{"index": k, "function": {"arguments": args[i : i + 14]}}]}))
        fr = finish or ("tool_calls" if a.tool_calls else "stop")
        out.append(ch({}, fr, choice_extra))
        return out

    def send_completion(
        self,
        a: Action,
        finish: str | None = None,
        choice_extra: dict | None = None,
        top_extra: dict | None = None,
        extra: dict[str, str] | None = None,
        record: bool = False,
    ) -> None:
        if record:
            self.run.delivered.append(self.completion(a, finish))
        if self.stream:
            self.sse_begin(extra)
            for c in self.chunks(a, finish, choice_extra):
                self.sse_chunk(c)
            self.sse_raw(b"data: [DONE]\n\n")
            self.sse_end()
        else:
            self.send_json(200, self.completion(a, finish, choice_extra, top_extra), extra)

    def send_stale(self, which: int, extra: dict[str, str]) -> None:
        payload = copy.deepcopy(self.run.delivered[which])
        if self.stream:
            m = payload["choices"][0]["message"]
            a = Action(
                m.get("content"),
                [
                    {"id": t["id"], "name": t["function"]["name"], "arguments": t["function"]["arguments"]}
                    for t in m.get("tool_calls") or []
                ],
            )
            saved = (self.cid, self.created)
            self.cid, self.created = payload["id"], payload["created"]
            self.send_completion(a, payload["choices"][0]["finish_reason"], extra=extra)
            self.cid, self.created = saved
        else:
            self.send_json(200, payload, extra)

    # ---- SSE
    def sse_begin(self, extra: dict[str, str] | None = None) -> None:
        h = self.h
        h.send_response(200)
        h.send_header("content-type", "text/event-stream; charset=utf-8")
        h.send_header("cache-control", "no-cache")
        for k, v in self._headers(extra).items():
            h.send_header(k, v)
        h.send_header("transfer-encoding", "chunked")
        h.end_headers()

    def _chunk(self, data: bytes) -> None:
        self.h.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.h.wfile.flush()

    def sse_chunk(self, obj: dict[str, Any]) -> None:
        self._chunk(f"data: {json.dumps(obj, ensure_ascii=False)}\n\n".encode())

    def sse_raw(self, data: bytes) -> None:
        self._chunk(data)

    def sse_end(self) -> None:
        self.h.wfile.write(b"0\r\n\r\n")
        self.h.wfile.flush()
        if self.run.gateway_close:
            self.h.close_connection = True

    # ---- connection faults
    def abort(self) -> None:
        """Close the connection without ending the chunked body."""
        self.h.close_connection = True
        try:
            self.h.wfile.flush()
            self.h.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    def disconnect(self) -> None:
        self.abort()

    def reset(self) -> None:
        self.h.close_connection = True
        try:
            self.h.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self.h.connection.close()
        except OSError:
            pass


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "uvicorn"
    sys_version = ""

    def log_message(self, *args: Any) -> None:
        pass

    def send_response(self, code: int, message: str | None = None) -> None:  # no Server/Date noise from http.server
        self.log_request(code)
        self.send_response_only(code, message)
        self.send_header("date", "Mon, 02 Sep 2024 10:14:03 GMT")

    def do_POST(self) -> None:
        n = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(n)
        run = self.server.owner.current  # type: ignore[attr-defined]
        if run is None or not self.path.endswith("/chat/completions"):
            self.send_response(404)
            self.send_header("content-length", "0")
            self.end_headers()
            return
        body = json.loads(raw)
        run.serve_llm(self, body)


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):  # clients hanging up mid-answer are part of the game
        pass


class Provider:
    """A ThreadingHTTPServer on 127.0.0.1 (one for the provider, extra ones for 'gateways' that die)."""

    def __init__(self) -> None:
        self.current: Any = None
        self.httpd = _Server(("127.0.0.1", 0), _Handler)
        self.httpd.daemon_threads = True
        self.httpd.owner = self  # type: ignore[attr-defined]
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_port}/v1"

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
