"""Real HTTP faults reach the openai SDK exactly as a provider's own errors would."""

from __future__ import annotations

import json
import random
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx
import httpx2
import openai
import pytest

from agentchaos_otel.faults.catalog import get_fault
from agentchaos_otel.faults.http import (
    ErrorResponse,
    error_response,
    exception_class_name,
    exception_message,
    proxy_html,
)

COMPLETION = {
    "id": "chatcmpl-ok", "object": "chat.completion", "created": 1741569952, "model": "gpt-4o-2024-08-06",
    "choices": [{"index": 0, "message": {"role": "assistant", "content": "Recovered.", "refusal": None},
                 "logprobs": None, "finish_reason": "stop"}],
    "usage": {"prompt_tokens": 5, "completion_tokens": 2, "total_tokens": 7},
}


class _Replay(ThreadingHTTPServer):
    """A loopback server answering each POST with the next queued response."""

    def __init__(self, responses: list[ErrorResponse]) -> None:
        self.responses = list(responses)
        self.requests = 0
        super().__init__(("127.0.0.1", 0), _Handler)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_POST(self) -> None:  # noqa: N802 - http.server's naming
        server: _Replay = self.server  # type: ignore[assignment]
        self.rfile.read(int(self.headers.get("content-length", "0")))
        server.requests += 1
        reply = server.responses.pop(0)
        self.send_response(reply.status)
        for key, value in reply.headers.items():
            self.send_header(key, value)
        self.send_header("content-length", str(len(reply.body)))
        self.end_headers()
        self.wfile.write(reply.body)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def replay() -> Iterator[Any]:
    servers: list[_Replay] = []

    def start(responses: list[ErrorResponse]) -> _Replay:
        server = _Replay(responses)
        threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


def _client(server: _Replay, retries: int) -> openai.OpenAI:
    return openai.OpenAI(base_url=server.base_url, api_key="sk-test", max_retries=retries)


def _ask(client: openai.OpenAI) -> Any:
    return client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": "hi"}])


OK = ErrorResponse(200, {"content-type": "application/json"}, json.dumps(COMPLETION).encode())


def test_429_is_a_rate_limit_error_with_openai_body_and_headers(replay: Any) -> None:
    err = error_response(get_fault("http_429"), "openai", model="gpt-4o")
    assert err is not None
    server = replay([err])
    with pytest.raises(openai.RateLimitError) as info:
        _ask(_client(server, 0))
    exc = info.value
    assert exc.status_code == 429 and exc.code == "rate_limit_exceeded" and exc.type == "requests"
    assert isinstance(exc.body, dict) and set(exc.body) == {"message", "type", "param", "code"}
    assert "Rate limit reached for gpt-4o" in exc.body["message"] and "try again in 1s" in exc.body["message"]
    headers = exc.response.headers
    assert headers["retry-after"] == "1" and headers["x-ratelimit-remaining-requests"] == "0"
    assert headers["x-ratelimit-reset-requests"] == "1s" and headers["x-request-id"].startswith("req_")


def test_sdk_retries_after_429_and_then_succeeds(replay: Any) -> None:
    spec = get_fault("http_429").variant("http_429_fast", params={"retry_after": 0.01})
    err = error_response(spec, "openai")
    assert err is not None and err.headers["retry-after"] == "0.01"
    server = replay([err, OK])
    result = _ask(_client(server, 1))
    assert result.choices[0].message.content == "Recovered."
    assert server.requests == 2


@pytest.mark.parametrize("name,status", [("http_500", 500), ("http_503", 503)])
def test_5xx_are_server_errors_with_openai_body(replay: Any, name: str, status: int) -> None:
    err = error_response(get_fault(name), "openai")
    assert err is not None and err.status == status and err.content_type == "application/json"
    server = replay([err])
    with pytest.raises(openai.InternalServerError) as info:
        _ask(_client(server, 0))
    assert info.value.status_code == status and info.value.type == "server_error"
    assert info.value.body == json.loads(err.body)["error"]


def test_502_is_a_proxy_html_page(replay: Any) -> None:
    err = error_response(get_fault("http_502"), "openai")
    assert err is not None and err.status == 502 and err.content_type == "text/html"
    assert b"<title>502 Bad Gateway</title>" in err.body and b"cloudflare" in err.body
    server = replay([err])
    with pytest.raises(openai.InternalServerError) as info:
        _ask(_client(server, 0))
    assert info.value.status_code == 502
    assert "502 Bad Gateway" in info.value.response.text
    nginx = get_fault("http_502").variant("http_502_nginx", params={"server": "nginx/1.24.0"})
    assert b"<center>nginx/1.24.0</center>" in error_response(nginx, "anthropic").body  # type: ignore[union-attr]


@pytest.mark.parametrize("name,status,err_type", [("http_429", 429, "rate_limit_error"),
                                                  ("http_500", 500, "api_error"),
                                                  ("http_503", 503, "api_error")])
def test_anthropic_error_shape(name: str, status: int, err_type: str) -> None:
    err = error_response(get_fault(name), "anthropic", rng=random.Random(1))
    assert err is not None and err.status == status
    body = json.loads(err.body)
    assert body["type"] == "error" and body["error"]["type"] == err_type and body["error"]["message"]
    assert body["request_id"] == err.headers["request-id"] and body["request_id"].startswith("req_")
    if status == 429:
        assert err.headers["retry-after"] == "1"
        assert err.headers["anthropic-ratelimit-requests-remaining"] == "0"
        assert not any(k.startswith("x-ratelimit") for k in err.headers)


def test_overloaded_529_variant_for_anthropic() -> None:
    spec = get_fault("http_503").variant("http_529", params={"status": 529})
    body = json.loads(error_response(spec, "anthropic").body)  # type: ignore[union-attr]
    assert body["error"] == {"type": "overloaded_error", "message": "Overloaded"}


def test_request_ids_are_reproducible_from_a_seed() -> None:
    spec = get_fault("http_500")
    a = error_response(spec, "openai", rng=random.Random(3))
    b = error_response(spec, "openai", rng=random.Random(3))
    c = error_response(spec, "openai", rng=random.Random(4))
    assert a == b and a is not None and c is not None
    assert a.headers["x-request-id"] != c.headers["x-request-id"]


def test_non_http_ops_give_no_error_response() -> None:
    for name in ("latency_2s", "compound_slow_response", "http_connect_error", "llm_error_single",
                 "stream_cut"):
        assert error_response(get_fault(name), "openai") is None
    with pytest.raises(ValueError, match="provider"):
        error_response(get_fault("http_500"), "cohere")


@pytest.mark.parametrize("name,cls,base", [("http_connect_error", "ConnectError", "TransportError"),
                                           ("http_read_timeout", "ReadTimeout", "TimeoutException"),
                                           ("http_remote_protocol_error", "RemoteProtocolError",
                                            "TransportError")])
def test_exception_names_exist_in_httpx_and_httpx2(name: str, cls: str, base: str) -> None:
    spec = get_fault(name)
    assert exception_class_name(spec) == cls and exception_message(spec)
    for module in (httpx, httpx2):
        request = module.Request("POST", "http://127.0.0.1/v1/chat/completions")
        exc = getattr(module, cls)(exception_message(spec), request=request)
        assert isinstance(exc, getattr(module, base)) and exc.request is request


class _Raising(httpx2.BaseTransport):
    """Stands in for the network failing underneath the SDK."""

    def __init__(self, name: str, message: str) -> None:
        self.name, self.message = name, message

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        raise getattr(httpx2, self.name)(self.message, request=request)


@pytest.mark.parametrize("name,sdk_error", [("http_connect_error", openai.APIConnectionError),
                                            ("http_read_timeout", openai.APITimeoutError),
                                            ("http_remote_protocol_error", openai.APIConnectionError)])
def test_exceptions_surface_as_the_sdk_connection_errors(name: str, sdk_error: type[Exception]) -> None:
    spec = get_fault(name)
    client = openai.OpenAI(base_url="http://127.0.0.1:9/v1", api_key="sk-test", max_retries=0,
                           http_client=httpx2.Client(transport=_Raising(exception_class_name(spec),
                                                                         exception_message(spec))))
    with pytest.raises(sdk_error):
        _ask(client)


def test_non_exception_ops_have_no_exception_name() -> None:
    assert exception_class_name(get_fault("http_500")) == ""
    assert exception_class_name(get_fault("latency_2s")) == ""
    bad = get_fault("http_connect_error").variant("bad", params={"exception": "KeyboardInterrupt"})
    with pytest.raises(ValueError, match="unsupported exception"):
        exception_class_name(bad)


def test_proxy_html_uses_crlf_like_real_servers() -> None:
    page = proxy_html(504, "nginx")
    assert page.startswith(b"<html>\r\n") and b"504 Gateway Time-out" in page
