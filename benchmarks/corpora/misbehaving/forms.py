"""Failure forms, written from the error formats providers, gateways and web APIs document.

Each form has a label in the diagnosis taxonomy (docs/taxonomy.md: ``fault_type``, ``target``)
and a ``family`` for per-family reporting. The taxonomy's rules decide where two labels look
defensible:

- an HTTP error status of the model API is read as the taxonomy says: 429 ``rate_limit``,
  401/403 ``auth``, 404 ``not_found``, 400/422 ``invalid_request``, 408/504 ``timeout`` (a
  gateway's 504 page included), other 5xx ``http_error``; a provider's content-filter refusal is
  ``content_filter`` whether it comes as HTTP 400 or as a finish reason;
- an error object delivered inside an HTTP 200 is an error of what it reports (``error`` when it
  says no more); a 200 with no usable message (missing or empty ``choices``, ``message: null``,
  empty text) is ``empty``;
- a reply cut at a token limit, and tool-call arguments cut part-way, are ``truncate``;
- a socket reset or a body shorter than announced is ``connection``; a streamed reply that stops
  without its end is ``stream_cut``; no answer within the client's timeout is ``timeout``;
- tool results: an error a tool reports takes the label of what it reports (``rate_limit``,
  ``timeout``, ``connection``, ``auth``, ``not_found``, ``invalid_request``, else ``error``), in
  whatever shape; a result flagged partial is ``truncated``; a body cut part-way is
  ``malformed_json``; nothing at all is ``empty``.

The model's own slips (prose where JSON was asked, a wrong parameter, a wrong answer) are not
failure forms: they are ``slips`` of the scripted model (``server.SLIPS``), labelled ``none``.
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
    Form("gateway_504_html", "timeout", "http", "http"),
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
    Form("sparse_replacement_chars", "corrupt", "content", "corrupt"),
    Form("cp1252_mojibake", "corrupt", "content", "corrupt"),
    Form("connection_reset", "connection", "http", "connection"),
    Form("body_cut_short", "connection", "http", "connection"),
    Form("client_timeout", "timeout", "http", "connection"),
    Form("stream_stops", "stream_cut", "stream", "stream", needs_stream=True),
    Form("stream_stops_after_tool_delta", "stream_cut", "stream", "stream", needs_stream=True),
    # codes and reasons beyond the status line
    Form("openai_401_invalid_key", "auth", "http", "http"),
    Form("openai_404_model_not_found", "not_found", "http", "http"),
    Form("openai_400_context_length", "invalid_request", "http", "http"),
    Form("finish_safety", "content_filter", "content", "filter"),
    Form("finish_guardrail_intervened", "content_filter", "content", "filter"),
    Form("choice_error_finish_error", "rate_limit", "content", "body"),
    Form("error_in_200_with_grpc_status", "timeout", "content", "body"),
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
    # status objects, codes, XML, in-band flags and runtime errors (issue: meaning from published vocabularies)
    Form("k8s_status_forbidden", "auth", "tool_result", "tool_error"),
    Form("grpc_status_not_found", "not_found", "tool_result", "tool_error"),
    Form("jsonrpc_invalid_params", "invalid_request", "tool_result", "tool_error"),
    Form("soap_fault_receiver", "error", "tool_result", "tool_error"),
    Form("s3_xml_slow_down", "rate_limit", "tool_result", "tool_error"),
    Form("status_throttled_flag", "rate_limit", "tool_result", "tool_error"),
    Form("oauth_invalid_token", "auth", "tool_result", "tool_error"),
    Form("postgres_undefined_table", "not_found", "tool_result", "tool_error"),
    Form("go_dial_connection_refused", "connection", "tool_result", "tool_connection"),
    Form("java_socket_timeout", "timeout", "tool_result", "tool_error"),
    Form("node_econnreset", "connection", "tool_result", "tool_connection"),
    Form("mcp_is_error_result", "timeout", "tool_result", "tool_error"),
    Form("search_timed_out_partial", "truncated", "tool_result", "tool_data"),
    Form("raises_permission_error", "auth", "tool_result", "tool_error"),
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
    if form == "k8s_status_forbidden":  # metav1.Status
        return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                "message": f'{tool} "lookup" is forbidden: User "system:serviceaccount:agents:bot" cannot get '
                           "resource", "reason": "Forbidden", "details": {"kind": tool}, "code": 403}
    if form == "grpc_status_not_found":  # google.rpc.Status as JSON
        return {"error": {"code": 5, "message": "Requested entity was not found.", "details": []}}
    if form == "jsonrpc_invalid_params":
        return {"jsonrpc": "2.0", "id": 11, "error": {"code": -32602, "message": "Invalid params",
                                                       "data": {"field": "city"}}}
    if form == "soap_fault_receiver":  # SOAP 1.2
        return ('<?xml version="1.0"?><env:Envelope xmlns:env="http://www.w3.org/2003/05/soap-envelope">'
                "<env:Body><env:Fault><env:Code><env:Value>env:Receiver</env:Value></env:Code><env:Reason>"
                '<env:Text xml:lang="en">Processing error in the backend</env:Text></env:Reason></env:Fault>'
                "</env:Body></env:Envelope>")
    if form == "s3_xml_slow_down":
        return ('<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>SlowDown</Code><Message>Please reduce your '
                "request rate.</Message><RequestId>4442587FB7D0A2F9</RequestId></Error>")
    if form == "status_throttled_flag":
        return {"status": "throttled", "retry_after": 5, "data": None}
    if form == "oauth_invalid_token":  # RFC 6750
        return {"error": "invalid_token", "error_description": "The access token expired"}
    if form == "postgres_undefined_table":
        return f'ERROR:  relation "{tool}_v2" does not exist\nLINE 1: SELECT * FROM {tool}_v2 WHERE ...'
    if form == "go_dial_connection_refused":
        return 'Get "http://10.0.4.17:8080/v1/lookup": dial tcp 10.0.4.17:8080: connect: connection refused'
    if form == "java_socket_timeout":
        return ("java.net.SocketTimeoutException: Read timed out\n\tat java.base/sun.nio.ch.NioSocketImpl.timedRead"
                "(NioSocketImpl.java:288)\n\tat com.example.Lookup.fetch(Lookup.java:41)")
    if form == "node_econnreset":
        return "Error: read ECONNRESET\n    at TCP.onStreamRead (node:internal/stream_base_commons:217:20)"
    if form == "mcp_is_error_result":  # CallToolResult
        return {"content": [{"type": "text", "text": "Upstream request timeout"}], "isError": True}
    if form == "raises_permission_error":
        raise PermissionError(13, "Permission denied")
    if form == "empty_string":
        return ""
    if form == "empty_object":
        return {}
    raise ValueError(f"no tool form {form!r}")


def cut_json(value: Any, share: float) -> str:
    """A JSON body cut part-way, as a client sees a response whose connection dropped."""
    text = json.dumps(value)
    return text[: max(2, int(len(text) * share))]


def partial_result(value: Any) -> Any:
    """A search-style answer that timed out part-way and says so, keeping what it found
    (Elasticsearch's ``timed_out`` beside its hits): ``value`` with the flag and half its members."""
    keys = list(value)
    kept = {k: value[k] for k in keys[: max(1, len(keys) // 2)]}
    return {"took": 30001, "timed_out": True, **kept}
