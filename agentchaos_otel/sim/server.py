"""A simulated OpenAI-compatible chat-completions server on loopback, that also speaks Anthropic Messages.

The toolkit's injectors, annotators, stores and diagnosers have to be exercised end to end on
machines with no LLM and no network. This server speaks the real wire formats over real HTTP
(non-streaming and SSE streaming, tool calls, logprobs, usage, ``max_tokens`` cuts, provider-shaped
errors): ``/v1/chat/completions`` and, through ``messages_api``, ``/v1/messages``, so the official
``openai`` and ``anthropic`` SDKs and our transport wrappers run unmodified against it; a pluggable
:class:`~agentchaos_otel.sim.policy.Policy` decides what the simulated model says.

Every response is labelled simulated (model ids start with ``sim-``, ``system_fingerprint`` is
``"simulated"``, header ``x-agentchaos-simulated: 1``) and must never be presented as evidence
about real models.

The server keeps no conversation state: each response is a function of the server seed and the
request body (the random stream is derived from a digest of the generation-relevant fields), so
concurrent episodes are reproducible whatever order their requests arrive in.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import random
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from agentchaos_otel.seeds import derive_seed
from agentchaos_otel.sim import messages_api
from agentchaos_otel.sim.logprobs import MAX_TOP_LOGPROBS, count_tokens, token_logprobs, tokenize
from agentchaos_otel.sim.policy import Policy, Turn, message_text

SIMULATED_FINGERPRINT = "simulated"
SIMULATED_HEADER = "x-agentchaos-simulated"
SIM_MODEL_PREFIX = "sim-"
MAX_CHOICES = 8
MAX_BODY_BYTES = 32 * 1024 * 1024

# Fields that decide what the simulated model says. Transport options (stream, logprobs,
# max_tokens, ...) are left out so that e.g. a streamed and a non-streamed request with the same
# conversation get the same answer, which is what fault-injection comparisons need.
_GENERATION_FIELDS = ("model", "messages", "tools", "tool_choice", "seed", "temperature", "top_p",
                      "response_format", "functions", "function_call")


class RequestError(Exception):
    """A request the server refuses, rendered as an OpenAI-shaped error body."""

    def __init__(self, status: int, message: str, *, param: str | None = None, code: str | None = None,
                 type_: str = "invalid_request_error") -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.param = param
        self.code = code
        self.type = type_

    def body(self) -> dict[str, Any]:
        return {"error": {"message": self.message, "type": self.type, "param": self.param,
                          "code": self.code}}



def request_digest(request: dict[str, Any]) -> str:
    """Digest of the generation-relevant part of a request body."""
    relevant = {k: request.get(k) for k in _GENERATION_FIELDS if k in request}
    text = json.dumps(relevant, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def response_model(requested: str) -> str:
    return requested if requested.startswith(SIM_MODEL_PREFIX) else SIM_MODEL_PREFIX + requested


def prompt_tokens(request: dict[str, Any]) -> int:
    """Prompt size under the simulated tokenizer, with a small per-message overhead like real chat formats."""
    total = 0
    for m in request.get("messages") or []:
        if not isinstance(m, dict):
            continue
        total += 4 + count_tokens(message_text(m)) + count_tokens(str(m.get("name") or ""))
        for call in m.get("tool_calls") or []:
            fn = call.get("function") if isinstance(call, dict) else None
            if isinstance(fn, dict):
                total += count_tokens(str(fn.get("name") or ""))
                total += count_tokens(str(fn.get("arguments") or ""))
    if request.get("tools"):
        total += count_tokens(json.dumps(request["tools"], default=str))
    return total + 3


# --- Generation --------------------------------------------------------------------------------


@dataclass
class _Call:
    id: str
    name: str
    arguments: str
    name_tokens: list[str]
    arg_tokens: list[str]


@dataclass
class _Choice:
    index: int
    content: str | None
    content_tokens: list[str]
    calls: list[_Call]
    finish_reason: str
    uncertainty: float
    logprobs: list[dict[str, Any]] | None = None

    @property
    def completion_tokens(self) -> int:
        return len(self.content_tokens) + sum(len(c.name_tokens) + len(c.arg_tokens) for c in self.calls)


@dataclass
class _Completion:
    id: str
    created: int
    model: str
    choices: list[_Choice]
    prompt_tokens: int
    options: dict[str, Any] = field(default_factory=dict)

    @property
    def usage(self) -> dict[str, Any]:
        completion = sum(c.completion_tokens for c in self.choices)
        return {"prompt_tokens": self.prompt_tokens, "completion_tokens": completion,
                "total_tokens": self.prompt_tokens + completion,
                "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
                "completion_tokens_details": {"reasoning_tokens": 0, "audio_tokens": 0,
                                              "accepted_prediction_tokens": 0,
                                              "rejected_prediction_tokens": 0}}


def _int_option(request: dict[str, Any], name: str, lo: int, hi: int | None) -> int | None:
    value = request.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < lo or (hi is not None and value > hi):
        bound = f" and {hi}" if hi is not None else ""
        raise RequestError(400, f"Invalid value for '{name}': expected an integer between {lo}{bound}, "
                                f"got {value!r}.", param=name, code="invalid_value")
    return value


def validate(request: Any) -> dict[str, Any]:
    """Check the fields the simulation relies on, rejecting what the real API would reject."""
    if not isinstance(request, dict):
        raise RequestError(400, "The request body must be a JSON object.")
    model = request.get("model")
    if not isinstance(model, str) or not model:
        raise RequestError(400, "you must provide a model parameter", param="model",
                           code="missing_required_parameter")
    messages = request.get("messages")
    if not isinstance(messages, list) or not messages:
        raise RequestError(400, "'messages' must be a non-empty array.", param="messages",
                           code="invalid_value")
    if any(not isinstance(m, dict) or not isinstance(m.get("role"), str) for m in messages):
        raise RequestError(400, "Each message must be an object with a 'role'.", param="messages",
                           code="invalid_value")
    tools = request.get("tools")
    if tools is not None and not isinstance(tools, list):
        raise RequestError(400, "'tools' must be an array.", param="tools", code="invalid_type")
    stream = bool(request.get("stream"))
    if request.get("stream_options") is not None and not stream:
        raise RequestError(400, "The 'stream_options' parameter is only allowed when 'stream' is enabled.",
                           param="stream_options", code="invalid_value")
    top = _int_option(request, "top_logprobs", 0, MAX_TOP_LOGPROBS)
    if top and not request.get("logprobs"):
        raise RequestError(400, "'logprobs' must be set to true when 'top_logprobs' is used.",
                           param="logprobs", code="invalid_value")
    n = _int_option(request, "n", 1, MAX_CHOICES) or 1
    max_tokens = _int_option(request, "max_completion_tokens", 1, None)
    if max_tokens is None:
        max_tokens = _int_option(request, "max_tokens", 1, None)
    stop = request.get("stop")
    stops = [stop] if isinstance(stop, str) else [s for s in stop or [] if isinstance(s, str) and s]
    opts = request.get("stream_options") if isinstance(request.get("stream_options"), dict) else {}
    return {"model": model, "stream": stream, "n": n, "max_tokens": max_tokens, "stops": stops,
            "logprobs": bool(request.get("logprobs")), "top_logprobs": top or 0,
            "include_usage": bool(opts.get("include_usage"))}


def _normalise_turn(turn: Any) -> Turn:
    """Accept what a sloppy policy returns without letting it crash the handler."""
    if not isinstance(turn, Turn):
        raise TypeError(f"policy returned {type(turn).__name__}, expected Turn")
    content = turn.content if turn.content is None or isinstance(turn.content, str) else str(turn.content)
    calls = [(str(name), args if isinstance(args, dict) else {}) for name, args in turn.tool_calls]
    return Turn(content=content, tool_calls=calls, finish_reason=turn.finish_reason,
                uncertainty=float(turn.uncertainty))


def _apply_limits(choice: _Choice, stops: list[str], max_tokens: int | None) -> None:
    """Cut at stop sequences, then at the token budget, as a real server does while generating."""
    if stops and choice.content:
        cut = min((i for i in (choice.content.find(s) for s in stops) if i >= 0), default=-1)
        if cut >= 0:
            choice.content = choice.content[:cut]
            choice.content_tokens = tokenize(choice.content)
            choice.calls = []
            choice.finish_reason = "stop"
    if max_tokens is None or choice.completion_tokens <= max_tokens:
        return
    budget = max_tokens
    if len(choice.content_tokens) >= budget:
        choice.content_tokens = choice.content_tokens[:budget]
        choice.content = "".join(choice.content_tokens)
        choice.calls = []
    else:
        budget -= len(choice.content_tokens)
        kept: list[_Call] = []
        for call in choice.calls:
            if budget <= len(call.name_tokens):
                break
            budget -= len(call.name_tokens)
            if len(call.arg_tokens) > budget:
                call.arg_tokens = call.arg_tokens[:budget]
                call.arguments = "".join(call.arg_tokens)
                kept.append(call)
                break
            budget -= len(call.arg_tokens)
            kept.append(call)
        choice.calls = kept
    choice.finish_reason = "length"


def generate(policy: Policy, request: dict[str, Any], seed: int) -> _Completion:
    """The whole simulated completion for a validated request; deterministic in (seed, request)."""
    opts = validate(request)
    digest = request_digest(request)
    choices = []
    for index in range(opts["n"]):
        rng = random.Random(derive_seed("policy", seed, digest, index))
        turn = _normalise_turn(policy.respond(request, rng))
        id_rng = random.Random(derive_seed("ids", seed, digest, index))
        calls = []
        for name, args in turn.tool_calls:
            arguments = json.dumps(args, ensure_ascii=False, default=str)
            calls.append(_Call(f"call_{id_rng.getrandbits(96):024x}", name, arguments,
                               tokenize(name), tokenize(arguments)))
        content = turn.content
        if content is None and not calls:
            content = ""
        choice = _Choice(index, content, tokenize(content), calls, turn.resolved_finish_reason,
                         min(1.0, max(0.0, turn.uncertainty)))
        _apply_limits(choice, opts["stops"], opts["max_tokens"])
        if opts["logprobs"]:
            tokens = choice.content_tokens + [t for c in choice.calls for t in c.name_tokens + c.arg_tokens]
            lp_rng = random.Random(derive_seed("logprobs", seed, digest, index))
            choice.logprobs = token_logprobs(tokens, choice.uncertainty, lp_rng, opts["top_logprobs"])
        choices.append(choice)
    return _Completion(id=f"chatcmpl-sim{digest[:8]}{derive_seed('id', seed, digest) & (2**64 - 1):016x}",
                       created=int(time.time()), model=response_model(opts["model"]), choices=choices,
                       prompt_tokens=prompt_tokens(request), options=opts)


def _tool_call_json(call: _Call) -> dict[str, Any]:
    return {"id": call.id, "type": "function", "function": {"name": call.name, "arguments": call.arguments}}


def completion_body(c: _Completion) -> dict[str, Any]:
    """The non-streaming ``chat.completion`` object."""
    choices = []
    for ch in c.choices:
        message: dict[str, Any] = {"role": "assistant", "content": ch.content if (ch.content or not ch.calls)
                                   else None, "refusal": None, "annotations": []}
        if ch.calls:
            message["tool_calls"] = [_tool_call_json(call) for call in ch.calls]
        logprobs = {"content": ch.logprobs, "refusal": None} if ch.logprobs is not None else None
        choices.append({"index": ch.index, "message": message, "logprobs": logprobs,
                        "finish_reason": ch.finish_reason})
    return {"id": c.id, "object": "chat.completion", "created": c.created, "model": c.model,
            "system_fingerprint": SIMULATED_FINGERPRINT, "service_tier": "default",
            "choices": choices, "usage": c.usage}


def completion_chunks(c: _Completion) -> Iterator[dict[str, Any]]:
    """The ``chat.completion.chunk`` objects of a streamed response, in order, without ``[DONE]``."""
    include_usage = c.options.get("include_usage", False)

    def chunk(index: int, delta: dict[str, Any], *, finish: str | None = None,
              logprobs: list[dict[str, Any]] | None = None) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": c.id, "object": "chat.completion.chunk", "created": c.created, "model": c.model,
            "system_fingerprint": SIMULATED_FINGERPRINT, "service_tier": "default",
            "choices": [{"index": index, "delta": delta,
                         "logprobs": {"content": logprobs, "refusal": None} if logprobs is not None else None,
                         "finish_reason": finish}]}
        if include_usage:
            out["usage"] = None
        return out

    for ch in c.choices:
        pos = 0

        def take(n: int, _ch: _Choice = ch) -> list[dict[str, Any]] | None:
            nonlocal pos
            if _ch.logprobs is None:
                return None
            part = _ch.logprobs[pos:pos + n]
            pos += n
            return part

        yield chunk(ch.index, {"role": "assistant", "content": "" if ch.content is not None else None,
                               "refusal": None})
        for token in ch.content_tokens:
            yield chunk(ch.index, {"content": token}, logprobs=take(1))
        for i, call in enumerate(ch.calls):
            yield chunk(ch.index, {"tool_calls": [{"index": i, "id": call.id, "type": "function",
                                                   "function": {"name": call.name, "arguments": ""}}]},
                        logprobs=take(len(call.name_tokens)))
            for start in range(0, len(call.arg_tokens), 3):
                piece = call.arg_tokens[start:start + 3]
                delta = {"tool_calls": [{"index": i, "function": {"arguments": "".join(piece)}}]}
                yield chunk(ch.index, delta, logprobs=take(len(piece)))
        yield chunk(ch.index, {}, finish=ch.finish_reason)
    if include_usage:
        yield {"id": c.id, "object": "chat.completion.chunk", "created": c.created, "model": c.model,
               "system_fingerprint": SIMULATED_FINGERPRINT, "service_tier": "default", "choices": [],
               "usage": c.usage}


# --- HTTP ----------------------------------------------------------------------------------------


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body go out in separate writes; avoid 40 ms ACK stalls
    timeout = 120  # idle keep-alive connections must not pin handler threads forever
    server_version = "agentchaos-sim/0.1"
    sim: SimulatedModelServer  # set on the subclass made per server

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        """Silence the per-request stderr lines; tests and campaigns run thousands of requests."""

    def handle(self) -> None:
        """A client that hangs up mid-response (a cut stream, a timeout) is normal here, not an error."""
        try:
            super().handle()
        except (ConnectionError, TimeoutError):
            self.close_connection = True

    # -- plumbing
    def _common_headers(self, request_id: str) -> None:
        self.send_header("x-request-id", request_id)
        self.send_header("request-id", request_id)  # Anthropic's name for it
        self.send_header(SIMULATED_HEADER, "1")
        self.send_header("openai-processing-ms", "1")
        self.send_header("x-ratelimit-limit-requests", "10000")
        self.send_header("x-ratelimit-remaining-requests", "9999")
        self.send_header("x-ratelimit-limit-tokens", "10000000")
        self.send_header("x-ratelimit-remaining-tokens", "9999000")

    def _send_json(self, status: int, body: dict[str, Any], request_id: str) -> None:
        data = json.dumps(body, ensure_ascii=False).encode("utf-8")
        encoding = None
        if self.sim.gzip_responses and "gzip" in (self.headers.get("accept-encoding") or ""):
            data, encoding = gzip.compress(data, mtime=0), "gzip"
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        if encoding:
            self.send_header("content-encoding", encoding)
        self._common_headers(request_id)
        self.end_headers()
        self.wfile.write(data)

    def _send_error(self, err: RequestError, request_id: str) -> None:
        self._send_json(err.status, err.body(), request_id)

    def _read_body(self) -> bytes:
        if "chunked" in (self.headers.get("transfer-encoding") or "").lower():
            parts = []
            total = 0
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    break
                total += size
                if total > MAX_BODY_BYTES:
                    raise RequestError(413, "Request body too large.")
                parts.append(self.rfile.read(size))
                self.rfile.readline()
            return b"".join(parts)
        length = int(self.headers.get("content-length") or 0)
        if length > MAX_BODY_BYTES:
            raise RequestError(413, "Request body too large.")
        return self.rfile.read(length) if length > 0 else b""

    def _path(self) -> str:
        return self.path.split("?", 1)[0].rstrip("/")

    # -- routes
    def do_GET(self) -> None:  # noqa: N802 - stdlib naming
        request_id = self.sim._next_request_id()
        path = self._path()
        models = self.sim.model_ids()
        if path == "/v1/models":
            self._send_json(200, {"object": "list", "data": [self._model_obj(m) for m in models]}, request_id)
        elif path.startswith("/v1/models/") and path[len("/v1/models/"):] in models:
            self._send_json(200, self._model_obj(path[len("/v1/models/"):]), request_id)
        elif path.startswith("/v1/models/"):
            self._send_error(RequestError(404, f"The model '{path[len('/v1/models/'):]}' does not exist",
                                          param="model", code="model_not_found"), request_id)
        elif path in ("/v1/chat/completions", messages_api.MESSAGES_PATH):
            self._send_error(RequestError(405, f"Method Not Allowed: use POST for {path}."), request_id)
        else:
            self._not_found(request_id)

    def do_POST(self) -> None:  # noqa: N802 - stdlib naming
        request_id = self.sim._next_request_id()
        try:
            raw = self._read_body()
        except RequestError as err:
            self.close_connection = True
            self._send_error(err, request_id)
            return
        except (ValueError, OSError):
            self.close_connection = True
            self._send_error(RequestError(400, "Could not read the request body."), request_id)
            return
        if self._path() == messages_api.MESSAGES_PATH:
            self._messages(raw, request_id)
            return
        if self._path() != "/v1/chat/completions":
            self._not_found(request_id)
            return
        try:
            try:
                request = json.loads(raw.decode("utf-8"))
            except (UnicodeDecodeError, json.JSONDecodeError) as exc:
                raise RequestError(400, "We could not parse the JSON body of your request. (HINT: This "
                                        "likely means you aren't using your HTTP library correctly. The "
                                        f"OpenAI API expects a JSON payload.) Parser said: {exc}") from None
            completion = generate(self.sim.policy, request, self.sim.seed)
        except RequestError as err:
            self._send_error(err, request_id)
            return
        except Exception as exc:  # a policy bug must become a 500, not a dropped connection
            self._send_error(RequestError(500, f"The simulated model failed: {type(exc).__name__}: {exc}",
                                          type_="server_error"), request_id)
            return
        if completion.options["stream"]:
            self._stream(completion, request_id)
        else:
            self._send_json(200, completion_body(completion), request_id)

    def _messages(self, raw: bytes, request_id: str) -> None:
        """``/v1/messages``: the same generation, in and out of the Messages wire format."""
        try:
            try:
                request = json.loads(raw.decode("utf-8"))
            except (UnicodeDecodeError, json.JSONDecodeError) as exc:
                raise messages_api.MessagesRequestError(400, f"There was an error parsing the body: {exc}") from None
            completion = generate(self.sim.policy, messages_api.to_chat_request(request), self.sim.seed)
        except messages_api.MessagesRequestError as err:
            self._send_json(err.status, err.body(), request_id)
            return
        except RequestError as err:
            self._send_json(err.status, messages_api.error_body(err.status, err.message), request_id)
            return
        except Exception as exc:  # a policy bug must become a 500, not a dropped connection
            self._send_json(500, messages_api.error_body(500, f"The simulated model failed: {exc}"), request_id)
            return
        if completion.options["stream"]:
            self._stream_events(messages_api.message_events(completion), request_id)
        else:
            self._send_json(200, messages_api.message_body(completion), request_id)

    def do_PUT(self) -> None:  # noqa: N802 - stdlib naming
        self._not_found(self.sim._next_request_id())

    do_DELETE = do_PATCH = do_PUT  # noqa: N815

    def _not_found(self, request_id: str) -> None:
        self._send_error(RequestError(404, f"Invalid URL ({self.command} {self.path})", code="unknown_url"),
                         request_id)

    def _model_obj(self, model: str) -> dict[str, Any]:
        return {"id": model, "object": "model", "created": 0, "owned_by": "agentchaos-simulated"}

    def _stream(self, completion: _Completion, request_id: str) -> None:
        events = ((None, chunk) for chunk in completion_chunks(completion))
        self._stream_events(events, request_id, done=True)

    def _stream_events(self, events: Iterator[tuple[str | None, dict[str, Any]]], request_id: str, *,
                       done: bool = False) -> None:
        """SSE over chunked transfer; ``event:`` lines for named events, ``data: [DONE]`` for chat."""
        self.send_response(200)
        self.send_header("content-type", "text/event-stream; charset=utf-8")
        self.send_header("cache-control", "no-cache")
        self.send_header("transfer-encoding", "chunked")
        self._common_headers(request_id)
        self.end_headers()
        try:
            for name, data in events:
                head = f"event: {name}\n" if name else ""
                self._write_chunk(f"{head}data: {json.dumps(data, ensure_ascii=False)}\n\n".encode())
            if done:
                self._write_chunk(b"data: [DONE]\n\n")
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True  # the client stopped reading; nothing else to do

    def _write_chunk(self, data: bytes) -> None:
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 128


class SimulatedModelServer:
    """A simulated model on loopback, driven by a policy. Use as a context manager.

    ``base_url`` is what the ``openai`` SDK takes, ``root_url`` what the ``anthropic`` SDK takes
    (it appends ``/v1/messages`` itself).

    ``gzip_responses`` makes non-streaming replies gzip-encoded when the client accepts it, as
    real providers do, so that code handling encoded bodies can be tested.
    """

    def __init__(self, policy: Policy, *, seed: int = 0, host: str = "127.0.0.1", port: int = 0,
                 gzip_responses: bool = False) -> None:
        name = getattr(policy, "name", "")
        if not isinstance(name, str) or not name.startswith(SIM_MODEL_PREFIX):
            raise ValueError(f"a simulated policy's name must start with '{SIM_MODEL_PREFIX}', got {name!r}")
        self.policy = policy
        self.seed = seed
        self.host = host
        self.port = port
        self.gzip_responses = gzip_responses
        self._lock = threading.Lock()
        self._count = 0
        self._httpd: _Server | None = None
        self._thread: threading.Thread | None = None

    @property
    def request_count(self) -> int:
        return self._count

    @property
    def base_url(self) -> str:
        if self._httpd is None:
            raise RuntimeError("the simulated model server is not running")
        return f"{self.root_url}/v1"

    @property
    def root_url(self) -> str:
        if self._httpd is None:
            raise RuntimeError("the simulated model server is not running")
        return f"http://{self.host}:{self.port}"

    def model_ids(self) -> list[str]:
        return [self.policy.name]

    def _next_request_id(self) -> str:
        with self._lock:
            self._count += 1
            n = self._count
        return "req_sim" + hashlib.sha256(f"request|{self.seed}|{n}".encode()).hexdigest()[:24]

    def start(self) -> SimulatedModelServer:
        if self._httpd is not None:
            return self
        handler = type("_BoundHandler", (_Handler,), {"sim": self})
        self._httpd = _Server((self.host, self.port), handler)
        self.port = self._httpd.server_address[1]
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                        name=f"sim-model-server:{self.port}", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._httpd is None:
            return
        self._httpd.shutdown()
        self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._httpd = None
        self._thread = None

    def __enter__(self) -> SimulatedModelServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
