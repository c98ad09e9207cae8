"""Real HTTP faults: error responses as the providers really send them, and transport exceptions.

AgentChaos keeps status 200 and writes the error into the content; SDK retry logic (status
codes, ``Retry-After``, connection errors) is then never exercised. These faults exercise it,
so their bodies and headers copy what OpenAI and Anthropic actually return: an SDK that parses
the error body (``openai.RateLimitError.body``, ``anthropic.APIStatusError.body``) must find the
fields it expects, and a 502 from the proxy in front of the API is an HTML page, not JSON.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from dataclasses import dataclass

from agentchaos_otel.faults import catalog as C
from agentchaos_otel.faults.catalog import FaultSpec

EXCEPTION_NAMES = ("ConnectError", "ReadTimeout", "RemoteProtocolError", "ConnectTimeout", "WriteTimeout",
                   "PoolTimeout", "ReadError", "WriteError")
_EXCEPTION_MESSAGES = {
    "ConnectError": "[Errno 111] Connection refused",
    "ConnectTimeout": "timed out",
    "ReadTimeout": "The read operation timed out",
    "WriteTimeout": "The write operation timed out",
    "PoolTimeout": "timed out waiting for a connection from the pool",
    "RemoteProtocolError": "Server disconnected without sending a response.",
    "ReadError": "[Errno 104] Connection reset by peer",
    "WriteError": "[Errno 32] Broken pipe",
}

REASONS = {400: "Bad Request", 401: "Unauthorized", 403: "Forbidden", 404: "Not Found",
           408: "Request Timeout", 409: "Conflict", 413: "Payload Too Large", 422: "Unprocessable Entity",
           429: "Too Many Requests",
           500: "Internal Server Error", 502: "Bad Gateway", 503: "Service Unavailable",
           504: "Gateway Time-out", 529: "Overloaded"}

# (type, code, message) of OpenAI's error object per status.
_OPENAI_ERRORS: dict[int, tuple[str, str | None, str]] = {
    400: ("invalid_request_error", None, "Invalid request."),
    401: ("invalid_request_error", "invalid_api_key", "Incorrect API key provided."),
    403: ("invalid_request_error", "unsupported_country_region_territory",
          "Country, region, or territory not supported"),
    404: ("invalid_request_error", "model_not_found",
          "The model does not exist or you do not have access to it."),
    429: ("requests", "rate_limit_exceeded", ""),  # message built with the limit and retry time
    500: ("server_error", None, "The server had an error while processing your request. Sorry about that!"),
    503: ("server_error", None, "The server is overloaded or not ready yet."),
    504: ("server_error", None, "The server did not respond in time. Please retry your request."),
}

# (type, message) of Anthropic's error object per status.
_ANTHROPIC_ERRORS: dict[int, tuple[str, str]] = {
    400: ("invalid_request_error", "Invalid request."),
    401: ("authentication_error", "invalid x-api-key"),
    403: ("permission_error", "Your API key does not have permission to use the specified resource."),
    404: ("not_found_error", "The requested resource could not be found."),
    413: ("request_too_large", "Request exceeds the maximum allowed number of bytes."),
    429: ("rate_limit_error", ""),
    500: ("api_error", "Internal server error"),
    503: ("api_error", "Service Unavailable"),
    504: ("api_error", "Gateway timeout"),
    529: ("overloaded_error", "Overloaded"),
}

@dataclass(frozen=True)
class ErrorResponse:
    status: int
    headers: dict[str, str]
    body: bytes

    @property
    def content_type(self) -> str:
        return self.headers.get("content-type", "")


def exception_class_name(spec: FaultSpec) -> str:
    """The httpx/httpx2 exception class to raise for ``spec``; "" when it is not an exception fault.

    The transport raises it from whichever module its request came from, so only a name is
    returned.
    """
    if spec.op != C.OP_RAISE:
        return ""
    name = str(spec.param("exception", "ConnectError"))
    if name not in EXCEPTION_NAMES:
        raise ValueError(f"fault {spec.name!r}: unsupported exception {name!r}; "
                         f"expected one of {', '.join(EXCEPTION_NAMES)}")
    return name


def exception_message(spec: FaultSpec) -> str:
    """The message a real occurrence of the exception carries (what the SDK wraps and logs)."""
    name = exception_class_name(spec)
    return str(spec.param("message") or _EXCEPTION_MESSAGES.get(name, ""))


def proxy_html(status: int, server: str) -> bytes:
    """The error page nginx/Cloudflare put in front of an API return when the upstream fails."""
    title = f"{status} {REASONS.get(status, 'Error')}"
    return (f"<html>\r\n<head><title>{title}</title></head>\r\n<body>\r\n"
            f"<center><h1>{title}</h1></center>\r\n<hr><center>{server}</center>\r\n</body>\r\n</html>\r\n").encode()


def _json(value: object) -> bytes:
    return json.dumps(value).encode("utf-8")


def _duration(seconds: float) -> str:
    """OpenAI's compact duration notation used in reset headers and messages: 1s, 1.5s, 120ms."""
    if seconds < 1:
        return f"{int(round(seconds * 1000))}ms"
    return f"{seconds:g}s"


def _openai_body(status: int, retry_after: float, model: str, request_id: str) -> bytes:
    err_type, code, message = _OPENAI_ERRORS.get(
        status, ("server_error", None, f"HTTP {status}: {REASONS.get(status, 'Error')}"))
    if status == 429:
        message = (f"Rate limit reached for {model} in organization org-agentchaos on requests per min "
                   f"(RPM): Limit 500, Used 500, Requested 1. Please try again in {_duration(retry_after)}. "
                   "Visit https://platform.openai.com/account/rate-limits to learn more.")
    return _json({"error": {"message": message, "type": err_type, "param": None, "code": code}})


def _anthropic_body(status: int, retry_after: float, model: str, request_id: str) -> bytes:
    fallback = ("api_error", f"HTTP {status}: {REASONS.get(status, '')}")
    err_type, message = _ANTHROPIC_ERRORS.get(status, fallback)
    if status == 429:
        message = ("This request would exceed the rate limit for your organization of 50 requests per "
                   "minute. For details, refer to: https://docs.claude.com/en/api/rate-limits. You can see "
                   "the response headers for current usage. Please reduce the prompt length or the maximum "
                   "tokens requested, or try again later.")
    return _json({"type": "error", "error": {"type": err_type, "message": message}, "request_id": request_id})


def _openai_headers(status: int, retry_after: float, asked_retry_after: bool) -> dict[str, str]:
    if status == 429:
        return {
            "retry-after": f"{retry_after:g}",
            "x-ratelimit-limit-requests": "500",
            "x-ratelimit-remaining-requests": "0",
            "x-ratelimit-reset-requests": _duration(retry_after),
            "x-ratelimit-limit-tokens": "30000",
            "x-ratelimit-remaining-tokens": "29000",
            "x-ratelimit-reset-tokens": "2ms",
        }
    # 503 overload answers may carry one; only when asked.
    return {"retry-after": f"{retry_after:g}"} if asked_retry_after else {}


def _anthropic_headers(status: int, retry_after: float, asked_retry_after: bool) -> dict[str, str]:
    headers = {"retry-after": f"{retry_after:g}"} if status in (429, 529) or asked_retry_after else {}
    if status == 429:
        headers.update({
            "anthropic-ratelimit-requests-limit": "50",
            "anthropic-ratelimit-requests-remaining": "0",
            "anthropic-ratelimit-tokens-limit": "40000",
            "anthropic-ratelimit-tokens-remaining": "39000",
        })
    return headers


@dataclass(frozen=True)
class ErrorStyle:
    """How one provider shapes an error answer: request-id header and format, body, headers."""

    request_id_header: str
    request_id_prefix: str
    request_id_alphabet: str
    request_id_length: int
    body: Callable[[int, float, str, str], bytes]  # (status, retry_after, model, request id)
    headers: Callable[[int, float, bool], dict[str, str]]  # (status, retry_after, asked for one)
    proxy_server: str = "cloudflare"

    def request_id(self, rng: random.Random | None) -> str:
        rng = rng or random.Random(0)
        return self.request_id_prefix + "".join(rng.choice(self.request_id_alphabet)
                                                for _ in range(self.request_id_length))


ERROR_STYLES: dict[str, ErrorStyle] = {
    "openai": ErrorStyle("x-request-id", "req_", "0123456789abcdef", 32, _openai_body, _openai_headers),
    "anthropic": ErrorStyle("request-id", "req_011C",
                            "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789", 20,
                            _anthropic_body, _anthropic_headers),
}


def error_response(spec: FaultSpec, provider: str, *, model: str | None = None,
                   rng: random.Random | None = None) -> ErrorResponse | None:
    """The status, headers and body a provider returns for the spec's status; None for non-HTTP ops.

    ``rng`` only feeds the request id header; without it the id is fixed, which keeps the function
    pure and its output reproducible.
    """
    if spec.op != C.OP_HTTP_ERROR:
        return None
    style = ERROR_STYLES.get(provider)
    if style is None:
        raise ValueError(f"unknown provider {provider!r}; expected 'openai' or 'anthropic'")
    status = int(spec.param("status", 500))
    retry_after = float(spec.param("retry_after", 1))
    request_id = style.request_id(rng)
    if "body" in spec.params:
        return _custom_response(spec, style, status, request_id)
    if status in (502, 504) and spec.param("html", True):
        server = str(spec.param("server", style.proxy_server))
        return ErrorResponse(status, {"content-type": "text/html", "server": server}, proxy_html(status, server))
    headers = {"content-type": "application/json", style.request_id_header: request_id}
    headers.update(style.headers(status, retry_after, "retry_after" in spec.params))
    body = style.body(status, retry_after, model or "gpt-4o", request_id)
    return ErrorResponse(status, headers, body)


def sniff_content_type(text: str) -> str:
    """The content type a server would label ``text`` with: HTML page, JSON object, or plain text."""
    head = text.lstrip()[:64].lower()
    if head.startswith(("<!doctype html", "<html")):
        return "text/html"
    if head.startswith(("{", "[")):
        return "application/json"
    return "text/plain; charset=utf-8"


def _custom_response(spec: FaultSpec, style: ErrorStyle, status: int, request_id: str) -> ErrorResponse:
    """An error response with exactly the body the spec gives (``params["body"]``).

    Held-out variants need bodies the provider defaults never produce: a bare "Internal Server
    Error" from the ASGI server, Envoy's plain-text 503, an API gateway's JSON. Such a response
    carries only what that origin would send: the provider's request-id header only on a JSON
    body (the provider wrote it), ``retry-after`` only when the spec asks for it, ``server`` when
    it names one.
    """
    body = str(spec.params["body"])
    headers = {"content-type": str(spec.param("content_type") or sniff_content_type(body))}
    if spec.param("server"):
        headers["server"] = str(spec.param("server"))
    if headers["content-type"].startswith("application/json") and spec.param("request_id", True):
        headers[style.request_id_header] = request_id
    if "retry_after" in spec.params:
        headers["retry-after"] = f"{float(spec.params['retry_after']):g}"
    return ErrorResponse(status, headers, body.encode("utf-8"))
