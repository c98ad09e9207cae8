"""Failure forms, written from the error formats providers, gateways and web APIs document.

Each form has a label in the catalog's taxonomy (``fault_type``, ``target``) and a ``family``
for per-family reporting. Where two labels are defensible the choice is written here:

- an HTTP error status is ``http_error`` whatever its wording (a gateway's ``504 Gateway
  Time-out`` page included), except ``429`` (``rate_limit``) and a provider's content-filter
  refusal (``content_filter``, whether it comes as HTTP 400 or as ``finish_reason``);
- an error object delivered inside an HTTP 200 is ``error``; a 200 with no usable message
  (missing or empty ``choices``, ``message: null``, empty text) is ``empty``;
- a reply cut at a token limit, and tool-call arguments cut part-way, are ``truncate``;
- a reply not in the format the request asked for (JSON wrapped in a fence or in prose) is
  ``schema``;
- a socket reset or a body shorter than announced is ``connection``; a streamed reply that stops
  without its end is ``stream_cut``; no answer within the client's timeout is ``timeout``;
- tool results: timeouts and rate limits by meaning are ``timeout`` / ``rate_limit``, other
  failures reported by the tool are ``error``, a tool call whose socket was reset is
  ``connection``, a body cut part-way is ``malformed_json``, nothing at all is ``empty``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Form:
    name: str
    fault_type: str
    target: str
    family: str
    # LLM forms: needs a streamed request / a JSON-mode task; tool forms: whether the tool raises.
    needs_stream: bool = False
    needs_json: bool = False


def openai_error(message: str, type_: str | None, code: str | None, param: str | None = None) -> dict[str, Any]:
    """The OpenAI API's error object (https://platform.openai.com/docs/guides/error-codes)."""
    return {"error": {"message": message, "type": type_, "param": param, "code": code}}


NGINX_502 = ("<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway"
             "</h1></center>\r\n<hr><center>nginx/1.25.3</center>\r\n</body>\r\n</html>\r\n")
CLOUDFLARE_504 = ("<!DOCTYPE html>\n<html lang=\"en-US\"><head><title>api.example.com | 504: Gateway time-out"
                  "</title></head><body><div id=\"cf-error-details\"><h1>Gateway time-out</h1><span>Error code "
                  "504</span><p>The web server reported a gateway time-out error.</p><p>Cloudflare Ray ID: "
                  "8a1f2c3d4e5f6071</p></div></body></html>")
AWS_ALB_503 = ("<html>\r\n<head><title>503 Service Temporarily Unavailable</title></head>\r\n<body>\r\n<center>"
               "<h1>503 Service Temporarily Unavailable</h1></center>\r\n</body>\r\n</html>\r\n")

# --- What the provider (the chat-completions endpoint) does wrong ------------------------------
LLM_FORMS: tuple[Form, ...] = (
    Form("openai_500", "http_error", "http", "http"),
    Form("openai_503_overloaded", "http_error", "http", "http"),
    Form("anthropic_529_overloaded", "http_error", "http", "http"),
    Form("gateway_502_html", "http_error", "http", "http"),
    Form("gateway_504_html", "http_error", "http", "http"),
    Form("alb_503_html", "http_error", "http", "http"),
    Form("openai_429_rpm", "rate_limit", "http", "http"),
    Form("openai_429_quota", "rate_limit", "http", "http"),
    Form("azure_400_content_filter", "content_filter", "http", "filter"),
    Form("azure_finish_content_filter", "content_filter", "content", "filter"),
    Form("error_object_in_200", "error", "content", "body"),
    Form("openrouter_error_in_200", "error", "content", "body"),
    Form("choices_empty", "empty", "content", "body"),
    Form("choices_missing", "empty", "content", "body"),
    Form("message_null", "empty", "content", "body"),
    Form("content_empty_stop", "empty", "content", "body"),
    Form("finish_length", "truncate", "content", "length"),
    Form("usage_at_max_tokens", "truncate", "content", "length"),
    Form("tool_args_cut", "truncate", "tool_calls", "length"),
    Form("tool_args_cut_stop", "truncate", "tool_calls", "length"),
    Form("json_in_fence", "schema", "content", "format", needs_json=True),
    Form("json_in_prose", "schema", "content", "format", needs_json=True),
    Form("sparse_replacement_chars", "corrupt", "content", "corrupt"),
    Form("cp1252_mojibake", "corrupt", "content", "corrupt"),
    Form("connection_reset", "connection", "http", "connection"),
    Form("body_cut_short", "connection", "http", "connection"),
    Form("client_timeout", "timeout", "http", "connection"),
    Form("stream_stops", "stream_cut", "stream", "stream", needs_stream=True),
    Form("stream_stops_after_tool_delta", "stream_cut", "stream", "stream", needs_stream=True),
)

# --- What a tool returns or raises ---------------------------------------------------------------
TOOL_FORMS: tuple[Form, ...] = (
    Form("problem_json_429", "rate_limit", "tool_result", "tool_error"),
    Form("slack_ratelimited", "rate_limit", "tool_result", "tool_error"),
    Form("google_resource_exhausted", "rate_limit", "tool_result", "tool_error"),
    Form("aws_throttling", "rate_limit", "tool_result", "tool_error"),
    Form("graphql_rate_limited", "rate_limit", "tool_result", "tool_error"),
    Form("cloudflare_code_10013", "rate_limit", "tool_result", "tool_error"),
    Form("text_429_retry_after", "rate_limit", "tool_result", "tool_error"),
    Form("status_error_timed_out", "timeout", "tool_result", "tool_error"),
    Form("graphql_deadline", "timeout", "tool_result", "tool_error"),
    Form("problem_json_504", "timeout", "tool_result", "tool_error"),
    Form("curl_operation_timed_out", "timeout", "tool_result", "tool_error"),
    Form("nested_etimedout", "timeout", "tool_result", "tool_error"),
    Form("raises_timeout", "timeout", "tool_result", "tool_error"),
    Form("problem_json_500", "error", "tool_result", "tool_error"),
    Form("success_false_internal", "error", "tool_result", "tool_error"),
    Form("graphql_internal", "error", "tool_result", "tool_error"),
    Form("text_exception_line", "error", "tool_result", "tool_error"),
    Form("raises_connection_reset", "connection", "tool_result", "tool_connection"),
    Form("body_cut_json", "malformed_json", "tool_result", "tool_data"),
    Form("empty_string", "empty", "tool_result", "tool_data"),
    Form("empty_object", "empty", "tool_result", "tool_data"),
)


class ToolRaised(Exception):
    """Marker base so the fixture can tell its own raises apart (never caught by the agent)."""


def tool_failure(form: str, tool: str) -> Any:
    """What a failing tool returns for one form (a string is the body as the tool received it);
    raises for the forms that raise."""
    if form == "problem_json_429":  # RFC 7807 / RFC 9457
        return {"type": "https://api.example.com/problems/too-many-requests", "title": "Too Many Requests",
                "status": 429, "detail": "You have exceeded 100 requests per minute for this key.",
                "instance": f"/v2/{tool}/requests/7f3a"}
    if form == "slack_ratelimited":
        return {"ok": False, "error": "ratelimited"}
    if form == "google_resource_exhausted":
        return {"error": {"code": 429, "message": "Quota exceeded for quota metric 'Read requests' and limit "
                          "'Read requests per minute per user' of service 'sheets.googleapis.com'.",
                          "status": "RESOURCE_EXHAUSTED"}}
    if form == "aws_throttling":
        return {"__type": "com.amazonaws.dynamodb.v20120810#ThrottlingException", "message": "Rate exceeded"}
    if form == "graphql_rate_limited":
        return {"data": None, "errors": [{"type": "RATE_LIMITED", "message": "API rate limit exceeded for "
                                          "user ID 48213."}]}
    if form == "cloudflare_code_10013":
        return {"success": False, "errors": [{"code": 10013, "message": "Rate limited. Please wait and "
                                              "consider throttling your request speed"}], "result": None}
    if form == "text_429_retry_after":
        return "429 Too Many Requests: retry after 12 seconds"
    if form == "status_error_timed_out":
        return {"status": "error", "message": "Upstream request timed out after 30000 ms"}
    if form == "graphql_deadline":
        return {"data": None, "errors": [{"message": "context deadline exceeded",
                                          "extensions": {"code": "DEADLINE_EXCEEDED"}}]}
    if form == "problem_json_504":
        return {"type": "about:blank", "title": "Gateway Timeout", "status": 504,
                "detail": "The upstream service did not answer in time."}
    if form == "curl_operation_timed_out":
        return "curl: (28) Operation timed out after 10001 milliseconds with 0 bytes received"
    if form == "nested_etimedout":
        return {"ok": False, "error": {"code": "ETIMEDOUT", "message": "connect ETIMEDOUT 10.0.4.17:443"}}
    if form == "raises_timeout":
        raise TimeoutError("The read operation timed out")
    if form == "problem_json_500":
        return {"type": "https://api.example.com/problems/internal", "title": "Internal Server Error",
                "status": 500, "detail": "An unexpected condition prevented the request from being fulfilled."}
    if form == "success_false_internal":
        return {"success": False, "error": {"code": "INTERNAL", "message": "Unexpected failure in backend"}}
    if form == "graphql_internal":
        return {"data": {tool: None}, "errors": [{"message": "Internal server error",
                                                  "path": [tool], "extensions": {"code": "INTERNAL_SERVER_ERROR"}}]}
    if form == "text_exception_line":
        return "Exception: backend returned an unexpected response (code 5001)"
    if form == "raises_connection_reset":
        raise ConnectionResetError(104, "Connection reset by peer")
    if form == "empty_string":
        return ""
    if form == "empty_object":
        return {}
    raise ValueError(f"no tool form {form!r}")


def cut_json(value: Any, share: float) -> str:
    """A JSON body cut part-way, as a client sees a response whose connection dropped."""
    text = json.dumps(value)
    return text[: max(2, int(len(text) * share))]
