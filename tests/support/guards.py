"""Hand-built requests and responses for the guard tests, and a loopback server that replays them."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

ORDER_TOOL = {"type": "function", "function": {
    "name": "place_order", "description": "Buy or sell shares",
    "parameters": {"type": "object", "additionalProperties": False,
                   "properties": {"symbol": {"type": "string", "pattern": "^[A-Z]+$"},
                                  "amount": {"type": "integer", "minimum": 1},
                                  "side": {"enum": ["buy", "sell"]}},
                   "required": ["symbol", "amount"]}}}
ANTHROPIC_ORDER_TOOL = {"name": "place_order", "description": "Buy or sell shares",
                        "input_schema": ORDER_TOOL["function"]["parameters"]}


def chat_request(**extra: Any) -> dict[str, Any]:
    return {"model": "m", "messages": [{"role": "user", "content": "buy 3 NVDA"}], "tools": [ORDER_TOOL], **extra}


def tool_call(arguments: Any, name: str = "place_order", call_id: str = "call_1") -> dict[str, Any]:
    args = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": args}}


def completion(content: str | None = None, *, tool_calls: list[dict[str, Any]] | None = None,
               finish_reason: str = "stop", refusal: str | None = None) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": content, "refusal": refusal}
    if tool_calls:
        message["tool_calls"] = tool_calls
    return {"id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "m",
            "choices": [{"index": 0, "message": message, "finish_reason": finish_reason}],
            "usage": {"prompt_tokens": 5, "completion_tokens": 5, "total_tokens": 10}}


def message(blocks: list[dict[str, Any]], stop_reason: str = "end_turn") -> dict[str, Any]:
    return {"id": "msg_1", "type": "message", "role": "assistant", "model": "m", "content": blocks,
            "stop_reason": stop_reason, "stop_sequence": None, "usage": {"input_tokens": 5, "output_tokens": 5}}


class ReplayServer:
    """Answers each POST with the next queued JSON body (the last one repeats); counts requests."""

    def __init__(self, bodies: list[dict[str, Any]]) -> None:
        self.bodies = list(bodies)
        self.requests: list[dict[str, Any]] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server's name)
                length = int(self.headers.get("content-length") or 0)
                outer.requests.append(json.loads(self.rfile.read(length) or b"{}"))
                body = outer.bodies[min(len(outer.requests), len(outer.bodies)) - 1]
                data = json.dumps(body).encode()
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"


@contextmanager
def replay_server(bodies: list[dict[str, Any]]) -> Iterator[ReplayServer]:
    server = ReplayServer(bodies)
    server._thread.start()
    try:
        yield server
    finally:
        server._server.shutdown()
        server._server.server_close()
