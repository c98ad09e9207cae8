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
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from agentchaos_otel.sim import messages_api
from agentchaos_otel.sim.completions import (
    MAX_BODY_BYTES,
    SIM_MODEL_PREFIX,
    SIMULATED_HEADER,
    Completion,
    RequestError,
    completion_body,
    completion_chunks,
    generate,
)
from agentchaos_otel.sim.policy import Policy

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

    def _stream(self, completion: Completion, request_id: str) -> None:
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
