"""A loopback server that speaks Anthropic's Messages API for the SIMULATED model.

``POST /v1/messages`` answers with a JSON message or, when the request asks for ``stream``, with
the SSE event sequence of the Messages streaming API (``message_start``, ``content_block_start``,
``content_block_delta`` with ``text_delta`` / ``input_json_delta``, ``content_block_stop``,
``message_delta``, ``message_stop``; ``ping``; ``error``), over chunked transfer encoding. The
episode's plan (``registry.Script``) says which turn and attempt gets which failure form.
"""

from __future__ import annotations

import hashlib
import json
import socket
import struct
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from benchmarks.blind.round4 import model, registry
from benchmarks.blind.round4.forms_llm import LLM_FORMS, LlmForm
from benchmarks.blind.round4.model import Call, Final
from benchmarks.blind.round4.tools import PARAMS

MODEL = "claude-ops-responder-2026"
SLOW_SECONDS = 1.9  # a slow reply: the agent's per-call budget is 1.2 s
SILENCE_SECONDS = 3.6  # longer than the client's 3.0 s read timeout
RETRY_AFTER_MS = "15"


def _hid(*parts: Any) -> str:
    return hashlib.sha1("|".join(map(str, parts)).encode()).hexdigest()


def _slip(action: Call | Final, slip: str | None, script: registry.Script) -> Call | Final:
    """The model's own mistakes, as scheduled by the plan."""
    if slip is None:
        return action
    if slip == "give_up":
        return Final("I am not confident I can finish this safely; handing it back to the on-call engineer.")
    if slip == "prose" and isinstance(action, Call):
        return Final(f"{action.text} I'll call {action.name} for that next.")
    if not isinstance(action, Call):
        if slip == "wrong_final":
            return Final(
                action.text.replace("E_", "E_UPSTREAM_", 1) if "E_" in action.text else action.text + " (0 items)"
            )
        return action
    args = dict(action.input)
    if slip == "bad_args":
        args.pop(next(k for k in reversed(list(args)) if k in PARAMS[action.name]))
        return Call(action.name, args, action.text)
    if slip == "unknown_tool":
        return Call(
            {"query_metrics": "get_service_health", "search_logs": "query_logs"}.get(action.name, f"{action.name}_v2"),
            args,
            action.text,
        )
    if slip == "bad_json":
        return Call(action.name, args, action.text + "\x00badjson")
    if slip == "wrong_arg":
        if action.name == "scale_service":
            args["replicas"] = int(args["replicas"]) + 1
        elif action.name == "page_oncall":
            args["team"] = "platform" if args["team"] != "platform" else "identity"
        elif action.name == "create_ticket":
            args["priority"] = {"P1": "P2", "P2": "P3", "P3": "P2", "P4": "P3"}[args["priority"]]
        elif action.name == "update_incident":
            args["status"] = "resolved"
        elif action.name == "rollback":
            args["version"] = script.world.services[args["service"]].running
        return Call(action.name, args, action.text)
    raise ValueError(f"unknown slip {slip}")


def message_for(script: registry.Script, turn: int, action: Call | Final) -> dict[str, Any]:
    blocks: list[dict[str, Any]] = []
    if isinstance(action, Call):
        text = action.text.replace("\x00badjson", "")
        if text:
            blocks.append({"type": "text", "text": text})
        blocks.append(
            {
                "type": "tool_use",
                "id": "toolu_01" + _hid(script.task_id, turn)[:22],
                "name": action.name,
                "input": action.input,
                **({"_bad_json": True} if "\x00badjson" in action.text else {}),
            }
        )
        stop = "tool_use"
    else:
        blocks.append({"type": "text", "text": action.text})
        stop = "end_turn"
    out_tokens = 12 + sum(len(json.dumps(b)) // 4 for b in blocks)
    return {
        "id": "msg_01" + _hid(script.task_id, turn, "m")[:22],
        "type": "message",
        "role": "assistant",
        "model": MODEL,
        "content": blocks,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": {"input_tokens": 900 + 140 * turn, "output_tokens": out_tokens},
    }


def _first_text_arg(block: dict[str, Any]) -> str:
    return next((k for k, v in block["input"].items() if isinstance(v, str)), "")


def _garble(value: str, style: str) -> str:
    if style == "fffd":
        return "".join("\ufffd" if i % 3 == 1 else c for i, c in enumerate(value))
    if style == "symbols":
        return "".join(c + chr(0x2600 + (i * 7) % 256) if i % 2 == 0 else c for i, c in enumerate(value))
    return value[:2] + "Ã©â€™" + value[2:] + "Â"


def _tool_block(msg: dict[str, Any]) -> dict[str, Any] | None:
    return next((b for b in msg["content"] if b["type"] == "tool_use"), None)


def apply_content_fault(msg: dict[str, Any], form: LlmForm) -> dict[str, Any]:
    """The message as the failure form delivers it (forms that keep a 200 JSON/SSE message)."""
    msg = json.loads(json.dumps(msg))
    kind, p = form.kind, form.params
    text = " ".join(b["text"] for b in msg["content"] if b["type"] == "text") or "Working on it."
    if kind == "content_text":
        msg.update(content=[{"type": "text", "text": p["text"]}], stop_reason="end_turn")
    elif kind in ("max_tokens_text", "context_window"):
        msg.update(
            content=[{"type": "text", "text": text[: max(6, int(len(text) * 0.3))]}],
            stop_reason="max_tokens" if kind == "max_tokens_text" else "model_context_window_exceeded",
        )
    elif kind == "max_tokens_tool":
        tb = _tool_block(msg)
        tb["input"] = {k: (v[: max(1, int(len(v) * 0.3))] if isinstance(v, str) else v) for k, v in tb["input"].items()}
        msg["stop_reason"] = "max_tokens"
    elif kind == "refusal":
        msg.update(content=[{"type": "text", "text": text.split(" ")[0]}], stop_reason="refusal")
    elif kind == "empty":
        msg.update(content=list(p["blocks"]), stop_reason="end_turn")
    elif kind in ("corrupt_args", "corrupt_delta"):
        tb = _tool_block(msg)
        key = _first_text_arg(tb)
        tb["input"][key] = _garble(tb["input"][key], p.get("style", "symbols"))
    elif kind == "schema_args":
        tb = _tool_block(msg)
        first = str(next(iter(tb["input"].values())))
        tb["input"] = json.loads(json.dumps(p["input"]).replace("{first}", first))
    elif kind == "empty_args":
        _tool_block(msg)["input"] = {}
    return msg


def sse_events(msg: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    start = dict(
        msg,
        content=[],
        stop_reason=None,
        stop_sequence=None,
        usage={"input_tokens": msg["usage"]["input_tokens"], "output_tokens": 1},
    )
    events: list[tuple[str, dict[str, Any]]] = [
        ("message_start", {"type": "message_start", "message": start}),
        ("ping", {"type": "ping"}),
    ]
    for i, b in enumerate(msg["content"]):
        if b["type"] == "text":
            events.append(
                (
                    "content_block_start",
                    {"type": "content_block_start", "index": i, "content_block": {"type": "text", "text": ""}},
                )
            )
            t = b["text"]
            for j in range(0, max(len(t), 1), 24):
                events.append(
                    (
                        "content_block_delta",
                        {
                            "type": "content_block_delta",
                            "index": i,
                            "delta": {"type": "text_delta", "text": t[j : j + 24]},
                        },
                    )
                )
        else:
            events.append(
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
            if b.get("_bad_json"):
                raw = raw.replace('"', "'", 2)[:-1]  # the model wrote it so: not JSON
            step = max(1, len(raw) // 3 + 1)
            for j in range(0, len(raw), step):
                events.append(
                    (
                        "content_block_delta",
                        {
                            "type": "content_block_delta",
                            "index": i,
                            "delta": {"type": "input_json_delta", "partial_json": raw[j : j + step]},
                        },
                    )
                )
        events.append(("content_block_stop", {"type": "content_block_stop", "index": i}))
    events.append(
        (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": msg["stop_reason"], "stop_sequence": None},
                "usage": {"output_tokens": msg["usage"]["output_tokens"]},
            },
        )
    )
    events.append(("message_stop", {"type": "message_stop"}))
    return events


def _clean(msg: dict[str, Any]) -> dict[str, Any]:
    return dict(msg, content=[{k: v for k, v in b.items() if k != "_bad_json"} for b in msg["content"]])


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        return

    def _send(
        self, status: int, body: bytes, ctype: str = "application/json", headers: dict[str, str] | None = None
    ) -> None:
        self.send_response(status)
        self.send_header("content-type", ctype)
        self.send_header("content-length", str(len(body)))
        self.send_header("request-id", "req_01" + _hid(time.monotonic_ns())[:22])
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(body)

    def _chunk(self, data: bytes) -> None:
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()

    def _stream(self, msg: dict[str, Any], form: LlmForm | None) -> None:
        events = sse_events(msg)
        kind = form.kind if form else None
        if kind == "first_byte":
            time.sleep(SLOW_SECONDS)
        self.send_response(200)
        self.send_header("content-type", "text/event-stream; charset=utf-8")
        self.send_header("cache-control", "no-cache")
        self.send_header("transfer-encoding", "chunked")
        self.send_header("request-id", "req_01" + _hid(time.monotonic_ns())[:22])
        self.end_headers()
        cut_at, abrupt = len(events), False
        if kind == "stream_cut":
            at = form.params["at"]
            abrupt = bool(form.params.get("abrupt"))
            if at == "start":
                cut_at = 2
            elif at == "before_stop":
                cut_at = len(events) - 1
            else:
                want = "input_json_delta" if at in ("json", "mid_event") else "text_delta"
                idx = [i for i, (_, e) in enumerate(events) if e.get("delta", {}).get("type") == want]
                if not idx:
                    idx = [i for i, (_, e) in enumerate(events) if e["type"] == "content_block_delta"] or [1]
                cut_at = idx[0] + 1
        error_at = None
        if kind == "sse_error":
            deltas = [i for i, (_, e) in enumerate(events) if e["type"] == "content_block_delta"]
            error_at = deltas[0] + 1 if deltas else 2
            cut_at = error_at
        for i, (name, data) in enumerate(events[:cut_at]):
            raw = f"event: {name}\ndata: {json.dumps(data)}\n\n".encode()
            if kind == "stream_cut" and form.params["at"] == "mid_event" and i == cut_at - 1:
                self._chunk(raw[: len(raw) // 2])
                break
            self._chunk(raw)
            if kind == "stall" and i == 2:
                time.sleep(SLOW_SECONDS)
        if error_at is not None:
            err = {"type": "error", "error": form.params["error"]}
            self._chunk(f"event: error\ndata: {json.dumps(err)}\n\n".encode())
        if abrupt:
            self._hang_up(reset=False)
            return
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def _hang_up(self, reset: bool) -> None:
        self.close_connection = True
        try:
            if reset:
                self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            else:
                self.wfile.flush()
                self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    def do_POST(self) -> None:  # noqa: N802 (http.server's name)
        body = json.loads(self.rfile.read(int(self.headers["content-length"])))
        script = registry.get(body["metadata"]["user_id"])
        messages = body["messages"]
        turn = sum(1 for m in messages if m["role"] == "assistant")
        attempt = script.attempts.get(turn, 0)
        script.attempts[turn] = attempt + 1
        stream = bool(body.get("stream"))
        ev = script.event(kind="llm", turn=turn, attempt=attempt, stream=stream)
        fault = script.llm_faults.get(turn)
        form = LLM_FORMS[fault.form] if fault is not None and attempt < fault.times else None
        if form is not None:
            ev.update(fault=form.name, role=fault.role)
            if (
                (form.needs_stream and not stream)
                or (form.needs_plain and stream)
                or (form.params.get("stream") is not None and form.params["stream"] != stream)
            ):
                ev["mismatch"] = True
        kind = form.kind if form else None
        if kind == "conn":
            self._hang_up(reset=form.params["how"] == "reset")
            return
        if kind == "timeout":
            time.sleep(SILENCE_SECONDS)
            self._hang_up(reset=False)
            return
        if kind == "http":
            p = form.params
            headers = dict(p.get("headers", {}))
            if form.persist > 1:
                headers["retry-after-ms"] = RETRY_AFTER_MS
            self._send(p["status"], p["body"].encode(), p.get("ctype", "application/json"), headers)
            return
        if kind == "pause_turn":
            msg = message_for(script, turn, Final("Still gathering context for this step."))
            msg["stop_reason"] = "pause_turn"
            script.replies.append((turn, msg))
            ev["reply"] = "pause_turn"
            self._stream(msg, None) if stream else self._send(200, json.dumps(msg).encode())
            return
        if kind == "body200":
            self._send(200, form.params["body"].encode())
            return
        if kind == "stale" and script.replies:
            msg = script.replies[-1][1]
        else:
            action = _slip(model.next_action(messages, script.temper), script.temper.slips.get(turn), script)
            msg = message_for(script, turn, action)
            if (
                isinstance(action, Call)
                and form is not None
                and form.kind in ("max_tokens_tool", "corrupt_args", "corrupt_delta", "schema_args", "empty_args")
                or form is not None
                and form.kind in ("content_text", "max_tokens_text", "context_window", "refusal", "empty")
            ):
                msg = apply_content_fault(msg, form)
            elif form is not None and form.kind not in ("slow", "stall", "first_byte", "sse_error", "stream_cut"):
                ev["mismatch"] = True
        if form is None or form.kind not in ("sse_error", "stream_cut"):
            script.replies.append((turn, msg))
        ev["reply"] = "tool_use" if _tool_block(msg) else msg["stop_reason"]
        if kind == "slow":
            time.sleep(SLOW_SECONDS)
        try:
            if stream:
                self._stream(msg, form)
            else:
                self._send(200, json.dumps(_clean(msg)).encode())
        except (BrokenPipeError, ConnectionResetError):
            pass


class _QuietServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        return  # a client that hung up after a cut reply is expected here


class ModelServer:
    """The Messages API on 127.0.0.1 in a background thread."""

    def __init__(self) -> None:
        self.httpd = _QuietServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, name="messages-api", daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def __enter__(self) -> ModelServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
