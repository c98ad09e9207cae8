"""A loopback OpenAI-compatible chat-completions server that misbehaves the way providers do.

The "model" behind it is a small script: it asks for one tool per question, reads the answers
from the tool messages, and writes the final answer. A tool message it cannot read makes it give
up, unless the system prompt tells it to try once more (``agent.RETRY_ONCE``), and then to skip
the question if that fails too (``agent.SKIP_AFTER_RETRY``). Per episode (told apart by the
``x-episode`` request header the harness's client sends) at most one request is answered with a
failure form from ``forms.LLM_FORMS``, and the script may make one mistake of its own (a slip,
``SLIPS``: no fault of the API or the tools); the harness learns the steps they hit through the
episode's :class:`StepClock`. SIMULATED.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from benchmarks.corpora.misbehaving.agent import RETRY_ONCE, SKIP_AFTER_RETRY
from benchmarks.corpora.misbehaving.world import parse_questions

TIMEOUT_SLEEP_S = 1.3  # longer than the agent's client timeout (corpus.CLIENT_TIMEOUT_S)


@dataclass
class StepClock:
    """Counts the episode's LLM requests and tool calls in the order they happen."""

    value: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def tick(self) -> int:
        with self.lock:
            v = self.value
            self.value += 1
            return v


# The scripted model's own mistakes (docs/taxonomy.md: not faults, labelled none): a wrong value in
# the answer, giving up, a declared parameter left out or of the wrong type, a tool that does not exist, arguments
# that are not JSON, and for JSON tasks prose, a fenced block or prose around the JSON.
SLIPS = ("wrong_answer", "give_up", "wrong_parameter", "unknown_tool", "bad_json_arguments", "prose_not_json",
         "json_in_fence", "json_in_prose")
JSON_SLIPS = frozenset({"prose_not_json", "json_in_fence", "json_in_prose"})
FINAL_SLIPS = frozenset({"wrong_answer"}) | JSON_SLIPS


@dataclass
class EpisodePlan:
    clock: StepClock
    llm_form: str | None = None
    at_call: int = -1
    slip: str | None = None
    slip_at: int = -1  # the LLM call the slip happens at (final-answer slips: the final turn)
    llm_calls: int = 0
    fired_step: int | None = None
    fired_messages: str | None = None  # the request the form answered, to see an SDK retry of it
    retried: bool = False  # the same request came again right after the form (an SDK retry)
    slipped: bool = False


def _tool_messages(messages: list[dict[str, Any]]) -> list[str]:
    return [m.get("content") or "" for m in messages if m.get("role") == "tool"]


def _read(text: str, field_name: str) -> str | None:
    try:
        obj = json.loads(text)
    except (ValueError, TypeError):
        return None
    if isinstance(obj, dict) and field_name in obj and obj[field_name] is not None:
        return str(obj[field_name])
    return None


def model_turn(request: dict[str, Any], slip: str | None = None) -> dict[str, Any]:
    """The scripted model's next message: {"content": str} or {"tool_call": (name, args)}.

    ``slip``: make this turn's own mistake (``SLIPS``) when the turn allows it."""
    messages = [m for m in request.get("messages") or [] if isinstance(m, dict)]
    user = next((m.get("content") for m in messages if m.get("role") == "user"), "") or ""
    system = next((m.get("content") for m in messages if m.get("role") == "system"), "") or ""
    questions = parse_questions(user if isinstance(user, str) else "")
    if not questions:
        return {"content": "I can only help with the listed questions."}
    retry = isinstance(system, str) and RETRY_ONCE in system
    skip = isinstance(system, str) and SKIP_AFTER_RETRY in system
    answers: list[str] = []
    qi, failures = 0, 0
    for text in _tool_messages(messages):
        if qi >= len(questions):
            break
        value = _read(text, questions[qi].field)
        if value is not None:
            answers.append(value)
            qi, failures = qi + 1, 0
            continue
        failures += 1
        if retry and failures == 1:
            continue  # the next tool message is the retry
        if skip:
            answers.append("unavailable")
            qi, failures = qi + 1, 0
            continue
        return {"content": f"Sorry, I could not complete the request: the {questions[qi].tool} lookup did not "
                           "return a usable result."}
    if qi < len(questions):
        q = questions[qi]
        if slip == "give_up":
            return {"content": "I'm not able to finish this right now."}
        if slip == "wrong_parameter":  # leaves one out, or (a single parameter) gives it the wrong type
            keys = list(q.args)
            bad = {k: q.args[k] for k in keys[:-1]} if len(keys) > 1 else {keys[0]: [q.args[keys[0]]]}
            return {"tool_call": (q.tool, bad)}
        if slip == "unknown_tool":
            return {"tool_call": (q.tool.replace("get_", "fetch_"), q.args)}
        if slip == "bad_json_arguments":
            return {"tool_call": (q.tool, "{" + ", ".join(f"{k}: {v}" for k, v in q.args.items()) + "}")}
        return {"tool_call": (q.tool, q.args)}
    if slip == "wrong_answer":
        answers[-1] = _off_by_one(answers[-1])
    wants_json = (request.get("response_format") or {}).get("type") in ("json_object", "json_schema")
    if wants_json:
        body = json.dumps({"answers": answers})
        if slip == "prose_not_json":
            return {"content": "The answers are " + ", ".join(answers) + "."}
        if slip == "json_in_fence":
            return {"content": f"```json\n{body}\n```"}
        if slip == "json_in_prose":
            return {"content": f"Sure! Here is the JSON you asked for:\n{body}\nLet me know if you need more."}
        return {"content": body}
    lines = [f"{i + 1}. {q.text} Answer: {a}" for i, (q, a) in enumerate(zip(questions, answers, strict=True))]
    return {"content": "Here is what I found \u2014 from live lookups.\n" + "\n".join(lines)}


def _off_by_one(value: str) -> str:
    try:
        return str(int(value) + 1)
    except ValueError:
        try:
            return str(round(float(value) + 1.0, 2))
        except ValueError:
            return value + "s"


def _usage(request: dict[str, Any], content: str, args: str = "") -> dict[str, int]:
    prompt = sum(len(json.dumps(m)) for m in request.get("messages") or []) // 4
    completion = max(1, (len(content) + len(args)) // 4)
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True
    server: MisbehavingServer  # type: ignore[assignment]

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - quiet
        return

    def _send(self, status: int, body: bytes, ctype: str = "application/json",
              headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("content-type", ctype)
        self.send_header("content-length", str(len(body)))
        self.send_header("x-request-id", f"req_{self.server.counter()}")
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(body)

    def _json(self, status: int, obj: Any, headers: dict[str, str] | None = None) -> None:
        self._send(status, json.dumps(obj).encode(), headers=headers)

    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        length = int(self.headers.get("content-length") or 0)
        try:
            request = json.loads(self.rfile.read(length) or b"{}")
        except ValueError:
            self._json(400, {"error": {"message": "invalid JSON body", "type": "invalid_request_error",
                                       "param": None, "code": None}})
            return
        plan = self.server.plans.get(self.headers.get("x-episode", ""))
        form = slip = None
        if plan is not None:
            step = plan.clock.tick()
            call = plan.llm_calls
            plan.llm_calls += 1
            sent = json.dumps(request.get("messages"), sort_keys=True)
            if plan.fired_messages is not None and call == plan.at_call + 1 and sent == plan.fired_messages:
                plan.retried = True
            if plan.llm_form is not None and call == plan.at_call:
                form = plan.llm_form
                plan.fired_step = step
                plan.fired_messages = sent
            if plan.slip is not None and (call == plan.slip_at or plan.slip in FINAL_SLIPS):
                slip = plan.slip
        self.server.respond(self, request, form, slip, plan)


class MisbehavingServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.plans: dict[str, EpisodePlan] = {}
        self._n = 0
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"

    def counter(self) -> int:
        with self._lock:
            self._n += 1
            return self._n

    def __enter__(self) -> MisbehavingServer:
        self._thread = threading.Thread(target=self.serve_forever, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.shutdown()
        self.server_close()

    # -- answers ---------------------------------------------------------------------------------
    def respond(self, h: _Handler, request: dict[str, Any], form: str | None, slip: str | None = None,
                plan: EpisodePlan | None = None) -> None:
        turn = model_turn(request, slip)
        if plan is not None and slip is not None and turn != model_turn(request):
            plan.slipped = True
        content = turn.get("content")
        call = turn.get("tool_call")
        rid = f"chatcmpl-{self.counter():06d}"
        model = str(request.get("model") or "mb-model")
        args = (call[1] if isinstance(call[1], str) else json.dumps(call[1])) if call else ""
        message: dict[str, Any] = {"role": "assistant", "content": content}
        if call:
            message = {"role": "assistant", "content": None, "tool_calls": [
                {"id": f"call_{rid[-6:]}", "type": "function", "function": {"name": call[0], "arguments": args}}]}
        finish = "tool_calls" if call else "stop"
        if request.get("stream"):
            self._stream(h, request, rid, model, message, finish, form)
            return
        body: dict[str, Any] = {"id": rid, "object": "chat.completion", "created": 1773480000, "model": model,
                                "choices": [{"index": 0, "message": message, "finish_reason": finish,
                                             "logprobs": None}],
                                "usage": _usage(request, content or "", args)}
        if form is None:
            h._json(200, body)
            return
        self._failure(h, request, body, form)

    def _failure(self, h: _Handler, request: dict[str, Any], body: dict[str, Any], form: str) -> None:
        from benchmarks.corpora.misbehaving.forms import AWS_ALB_503, CLOUDFLARE_504, NGINX_502, openai_error
        from benchmarks.corpora.misbehaving.forms_heldout import heldout_llm_failure

        held = heldout_llm_failure(form, request, body)
        if held is not None:
            status, obj, kind = held
            if kind == "html":
                h._send(status, str(obj).encode(), "text/html")
            else:
                h._json(status, obj)
            return
        choice = body["choices"][0]
        msg = choice["message"]
        if form == "openai_500":
            h._json(500, openai_error("The server had an error while processing your request. Sorry about that!",
                                      "server_error", None))
        elif form == "openai_503_overloaded":
            h._json(503, openai_error("The engine is currently overloaded, please try again later.",
                                      "server_error", None))
        elif form == "anthropic_529_overloaded":
            h._json(529, {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}})
        elif form == "gateway_502_html":
            h._send(502, NGINX_502.encode(), "text/html")
        elif form == "gateway_504_html":
            h._send(504, CLOUDFLARE_504.encode(), "text/html; charset=UTF-8")
        elif form == "alb_503_html":
            h._send(503, AWS_ALB_503.encode(), "text/html")
        elif form == "openai_429_rpm":
            h._json(429, openai_error(
                "Rate limit reached for gpt-4o-mini in organization org-x1y2z3 on requests per min (RPM): "
                "Limit 3, Used 3, Requested 1. Please try again in 20s.", "requests", "rate_limit_exceeded"),
                headers={"retry-after": "20", "x-ratelimit-remaining-requests": "0"})
        elif form == "openai_429_quota":
            h._json(429, openai_error("You exceeded your current quota, please check your plan and billing "
                                      "details.", "insufficient_quota", "insufficient_quota"))
        elif form == "azure_400_content_filter":
            err = openai_error("The response was filtered due to the prompt triggering Azure OpenAI's content "
                               "management policy. Please modify your prompt and retry.", None, "content_filter",
                               "prompt")
            err["error"]["status"] = 400
            err["error"]["innererror"] = {"code": "ResponsibleAIPolicyViolation", "content_filter_result": {
                "hate": {"filtered": False, "severity": "safe"}, "violence": {"filtered": True, "severity": "medium"}}}
            h._json(400, err)
        elif form == "azure_finish_content_filter":
            choice["message"] = {"role": "assistant", "content": None}
            choice["finish_reason"] = "content_filter"
            choice["content_filter_results"] = {"violence": {"filtered": True, "severity": "medium"}}
            h._json(200, body)
        elif form == "error_object_in_200":
            h._json(200, openai_error("Internal error", "internal_error", "500"))
        elif form == "openrouter_error_in_200":
            h._json(200, {"id": body["id"], "error": {"message": "Provider returned error", "code": 502,
                                                      "metadata": {"provider_name": "upstream"}}})
        elif form == "choices_empty":
            body["choices"] = []
            h._json(200, body)
        elif form == "choices_missing":
            del body["choices"]
            h._json(200, body)
        elif form == "message_null":
            choice["message"] = None
            h._json(200, body)
        elif form == "content_empty_stop":
            choice["message"] = {"role": "assistant", "content": ""}
            h._json(200, body)
        elif form in ("finish_length", "usage_at_max_tokens"):
            text = msg.get("content") or ""
            choice["message"] = {"role": "assistant", "content": text[: max(1, int(len(text) * 0.35))]}
            limit = int(request.get("max_tokens") or request.get("max_completion_tokens") or 256)
            body["usage"]["completion_tokens"] = limit
            choice["finish_reason"] = "length" if form == "finish_length" else "stop"
            h._json(200, body)
        elif form in ("tool_args_cut", "tool_args_cut_stop"):
            for c in msg.get("tool_calls") or []:
                c["function"]["arguments"] = c["function"]["arguments"][: max(3, len(c["function"]["arguments"]) // 2)]
            choice["finish_reason"] = "length" if form == "tool_args_cut" else "tool_calls"
            h._json(200, body)
        elif form == "json_in_fence":
            msg["content"] = f"```json\n{msg.get('content')}\n```"
            h._json(200, body)
        elif form == "json_in_prose":
            msg["content"] = (f"Sure! Here is the JSON you asked for:\n{msg.get('content')}\n"
                              "Let me know if you need more.")
            h._json(200, body)
        elif form == "sparse_replacement_chars":
            msg["content"] = _replace_digits(msg.get("content") or "", "\ufffd")
            h._json(200, body)
        elif form == "cp1252_mojibake":
            msg["content"] = _mojibake(msg.get("content") or "")
            h._json(200, body)
        elif form == "connection_reset":
            _reset(h)
        elif form == "body_cut_short":
            raw = json.dumps(body).encode()
            h.send_response(200)
            h.send_header("content-type", "application/json")
            h.send_header("content-length", str(len(raw)))
            h.end_headers()
            h.wfile.write(raw[: len(raw) // 3])
            h.wfile.flush()
            _reset(h)
        elif form == "openai_401_invalid_key":
            h._json(401, openai_error("Incorrect API key provided: sk-mb-****. You can find your API key at "
                                      "https://platform.openai.com/account/api-keys.", "invalid_request_error",
                                      "invalid_api_key"))
        elif form == "openai_404_model_not_found":
            h._json(404, openai_error(f"The model `{request.get('model')}` does not exist or you do not have access "
                                      "to it.", "invalid_request_error", "model_not_found"))
        elif form == "openai_400_context_length":
            h._json(400, openai_error("This model's maximum context length is 128000 tokens. However, your "
                                      "messages resulted in 131072 tokens. Please reduce the length of the "
                                      "messages.", "invalid_request_error", "context_length_exceeded", "messages"))
        elif form == "finish_safety":  # a Gemini-backed gateway passing its finish reason through
            choice["message"] = {"role": "assistant", "content": None}
            choice["finish_reason"] = "SAFETY"
            h._json(200, body)
        elif form == "finish_guardrail_intervened":  # a Bedrock-backed gateway
            choice["message"] = {"role": "assistant", "content": "Sorry, the model cannot answer this question."}
            choice["finish_reason"] = "guardrail_intervened"
            h._json(200, body)
        elif form == "choice_error_finish_error":  # OpenRouter: an error during generation
            choice["message"] = {"role": "assistant", "content": ""}
            choice["finish_reason"] = "error"
            choice["error"] = {"code": 429, "message": "Upstream provider rate limit exceeded",
                               "metadata": {"provider_name": "upstream"}}
            h._json(200, body)
        elif form == "error_in_200_with_grpc_status":  # a Google-style error body behind a 200
            h._json(200, {"error": {"code": 504, "message": "Deadline expired before operation could complete.",
                                    "status": "DEADLINE_EXCEEDED"}})
        elif form == "client_timeout":
            time.sleep(TIMEOUT_SLEEP_S)
            try:
                h._json(200, body)
            except OSError:
                pass
        else:
            raise ValueError(f"no LLM form {form!r}")

    def _stream(self, h: _Handler, request: dict[str, Any], rid: str, model: str, message: dict[str, Any],
                finish: str, form: str | None) -> None:
        def chunk(delta: dict[str, Any], fr: str | None = None) -> bytes:
            obj = {"id": rid, "object": "chat.completion.chunk", "created": 1773480000, "model": model,
                   "choices": [{"index": 0, "delta": delta, "finish_reason": fr}]}
            return f"data: {json.dumps(obj)}\n\n".encode()

        parts = [chunk({"role": "assistant", "content": ""})]
        if message.get("tool_calls"):
            c = message["tool_calls"][0]
            parts.append(chunk({"tool_calls": [{"index": 0, "id": c["id"], "type": "function",
                                                "function": {"name": c["function"]["name"], "arguments": ""}}]}))
            a = c["function"]["arguments"]
            for i in range(0, len(a), 8):
                parts.append(chunk({"tool_calls": [{"index": 0, "function": {"arguments": a[i:i + 8]}}]}))
        else:
            text = message.get("content") or ""
            for i in range(0, len(text), 12):
                parts.append(chunk({"content": text[i:i + 12]}))
        parts.append(chunk({}, finish))
        parts.append(b"data: [DONE]\n\n")
        if form in ("stream_stops", "stream_stops_after_tool_delta"):
            parts = parts[: max(2, (len(parts) - 2) * 2 // 5)]
        elif form == "stream_error_event":  # a proxy reporting an upstream failure mid-stream
            parts = parts[: max(2, (len(parts) - 2) // 2)] + [
                b'data: {"error": {"message": "Internal server error", "type": "server_error"}}\n\n']
        h.send_response(200)
        h.send_header("content-type", "text/event-stream")
        h.send_header("connection", "close")
        h.end_headers()
        for p in parts:
            h.wfile.write(p)
        h.wfile.flush()
        h.close_connection = True


def _replace_digits(text: str, repl: str) -> str:
    """Every third digit and a few letters become ``repl``: sparse damage in a long text."""
    out, seen = [], 0
    for i, ch in enumerate(text):
        if ch.isdigit():
            seen += 1
            out.append(repl if seen % 3 == 1 else ch)
        elif ch.isalpha() and i % 53 == 0:
            out.append(repl)
        else:
            out.append(ch)
    return "".join(out)


def _mojibake(text: str) -> str:
    """UTF-8 bytes read as Windows-1252 (the em dash becomes ``â€”``), digits damaged alongside."""
    mangled = text.encode("utf-8").decode("cp1252", "replace")
    return _replace_digits(mangled, "\u00e2\u20ac\u2122")


def _reset(h: _Handler) -> None:
    """Close the socket with RST (SO_LINGER 0), as a crashed upstream or a load balancer does."""
    try:
        h.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
        h.connection.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    h.close_connection = True
