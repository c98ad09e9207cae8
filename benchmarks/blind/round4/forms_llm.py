# ruff: noqa: E501  (a table of published wordings and their sources, one per line)
"""Model-API failure forms in Anthropic's shape (and the Bedrock / Vertex / gateway wrappers).

``kind`` says how the loopback server delivers it (see ``server.py``); ``retried`` is how many
consecutive attempts the form hits when it persists (the SDK retries 408/429/5xx and lost
connections twice; the agent retries a broken stream once; the rest end the call at once).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class LlmForm:
    name: str
    family: str
    label: str
    target: str
    kind: str
    source: str
    params: dict[str, Any] = field(default_factory=dict)

    @property
    def persist(self) -> int:
        if self.kind == "http":
            return 3 if self.params["status"] in (408, 409, 429) or self.params["status"] >= 500 else 1
        if self.kind in ("conn", "timeout"):
            return 3
        if self.kind in ("stream_cut", "sse_error"):
            return 2
        return 1

    @property
    def needs_stream(self) -> bool:
        return self.kind in ("stream_cut", "sse_error", "stall", "corrupt_delta", "first_byte")

    @property
    def needs_plain(self) -> bool:
        return self.kind in ("body200",)


ERR = "https://docs.anthropic.com/en/api/errors"
STREAM = "https://docs.anthropic.com/en/docs/build-with-claude/streaming"
STOP = "https://docs.anthropic.com/en/api/handling-stop-reasons"
BEDROCK = "https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_InvokeModel.html#API_runtime_InvokeModel_Errors"
VERTEX = "https://cloud.google.com/vertex-ai/generative-ai/docs/error-code-429"
VERTEX_ERR = "https://cloud.google.com/vertex-ai/docs/general/troubleshooting"


def _a(kind: str, msg: str) -> str:
    return json.dumps({"type": "error", "error": {"type": kind, "message": msg}, "request_id": "req_011CSHoEeqs5C35K2UUqR7Fy"})


def _g(code: int, status: str, msg: str) -> str:
    return json.dumps({"error": {"code": code, "message": msg, "status": status}})


NGINX_502 = "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n"
NGINX_504 = "<html>\r\n<head><title>504 Gateway Time-out</title></head>\r\n<body>\r\n<center><h1>504 Gateway Time-out</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n"
CF_502 = "<!DOCTYPE html>\n<html><head><title>api.internal | 502: Bad gateway</title></head><body><h1>Bad gateway</h1><span>Error code 502</span><p>The web server reported a bad gateway error.</p><p>Cloudflare Ray ID: 8e1f2a3b4c5d6e7f</p></body></html>"
ALB_503 = "<html>\r\n<head><title>503 Service Temporarily Unavailable</title></head>\r\n<body>\r\n<center><h1>503 Service Temporarily Unavailable</h1></center>\r\n</body>\r\n</html>\r\n"

FORMS: list[LlmForm] = [
    # Anthropic API HTTP statuses with its error objects
    LlmForm("a_429_rate_limit_error", "anthropic_http", "rate_limit", "http", "http", ERR, {"status": 429, "body": _a("rate_limit_error", "This request would exceed the rate limit for your organization of 50,000 input tokens per minute.")}),
    LlmForm("a_529_overloaded_error", "anthropic_http", "http_error", "http", "http", ERR, {"status": 529, "body": _a("overloaded_error", "Overloaded")}),
    LlmForm("a_500_api_error", "anthropic_http", "http_error", "http", "http", ERR, {"status": 500, "body": _a("api_error", "Internal server error")}),
    LlmForm("a_401_authentication_error", "anthropic_http", "auth", "http", "http", ERR, {"status": 401, "body": _a("authentication_error", "invalid x-api-key")}),
    LlmForm("a_403_permission_error", "anthropic_http", "auth", "http", "http", ERR, {"status": 403, "body": _a("permission_error", "Your API key does not have permission to use the specified resource.")}),
    LlmForm("a_404_not_found_error", "anthropic_http", "not_found", "http", "http", ERR, {"status": 404, "body": _a("not_found_error", "model: claude-ops-responder-2026")}),
    LlmForm("a_400_prompt_too_long", "anthropic_http", "invalid_request", "http", "http", ERR, {"status": 400, "body": _a("invalid_request_error", "prompt is too long: 212894 tokens > 200000 maximum")}),
    LlmForm("a_413_request_too_large", "anthropic_http", "invalid_request", "http", "http", ERR, {"status": 413, "body": _a("request_too_large", "Request exceeds the maximum allowed number of bytes.")}),
    LlmForm("a_504_timeout_error", "anthropic_http", "timeout", "http", "http", ERR, {"status": 504, "body": _a("timeout_error", "Request timed out")}),
    LlmForm("lb_503_html", "anthropic_http", "http_error", "http", "http", "https://docs.aws.amazon.com/elasticloadbalancing/latest/application/load-balancer-troubleshooting.html#http-503-issues", {"status": 503, "body": ALB_503, "ctype": "text/html"}),
    LlmForm("cloudflare_502_html", "anthropic_http", "http_error", "http", "http", "https://developers.cloudflare.com/support/troubleshooting/cloudflare-errors/troubleshooting-cloudflare-5xx-errors/#502-bad-gateway-or-504-gateway-timeout", {"status": 502, "body": CF_502, "ctype": "text/html"}),
    # Bedrock and Vertex in front of the model
    LlmForm("bedrock_throttling", "bedrock", "rate_limit", "http", "http", BEDROCK, {"status": 429, "body": json.dumps({"message": "Too many requests, please wait before trying again."}), "headers": {"x-amzn-ErrorType": "ThrottlingException:http://internal.amazon.com/coral/com.amazon.bedrock/"}}),
    LlmForm("bedrock_model_timeout", "bedrock", "timeout", "http", "http", BEDROCK, {"status": 408, "body": json.dumps({"message": "Model has timed out in processing the request. Try your request again."}), "headers": {"x-amzn-ErrorType": "ModelTimeoutException:http://internal.amazon.com/coral/com.amazon.bedrock/"}}),
    LlmForm("bedrock_service_unavailable", "bedrock", "http_error", "http", "http", BEDROCK, {"status": 503, "body": json.dumps({"message": "Bedrock is unable to process your request."}), "headers": {"x-amzn-ErrorType": "ServiceUnavailableException:http://internal.amazon.com/coral/com.amazon.bedrock/"}}),
    LlmForm("bedrock_access_denied", "bedrock", "auth", "http", "http", BEDROCK, {"status": 403, "body": json.dumps({"message": "You don't have access to the model with the specified model ID."}), "headers": {"x-amzn-ErrorType": "AccessDeniedException:http://internal.amazon.com/coral/com.amazon.coral.service/"}}),
    LlmForm("bedrock_validation", "bedrock", "invalid_request", "http", "http", BEDROCK, {"status": 400, "body": json.dumps({"message": "messages.3.content.0.tool_result.tool_use_id: Input should be a valid string"}), "headers": {"x-amzn-ErrorType": "ValidationException:http://internal.amazon.com/coral/com.amazon.bedrock/"}}),
    LlmForm("bedrock_internal", "bedrock", "http_error", "http", "http", BEDROCK, {"status": 500, "body": json.dumps({"message": "The system encountered an unexpected error during processing. Try your request again."}), "headers": {"x-amzn-ErrorType": "InternalServerException:http://internal.amazon.com/coral/com.amazon.bedrock/"}}),
    LlmForm("vertex_resource_exhausted", "vertex", "rate_limit", "http", "http", VERTEX, {"status": 429, "body": _g(429, "RESOURCE_EXHAUSTED", "Quota exceeded for aiplatform.googleapis.com/online_prediction_input_tokens_per_minute_per_base_model with base model: anthropic-claude. Please submit a quota increase request.")}),
    LlmForm("vertex_unavailable", "vertex", "http_error", "http", "http", VERTEX_ERR, {"status": 503, "body": _g(503, "UNAVAILABLE", "The service is currently unavailable.")}),
    LlmForm("vertex_internal", "vertex", "http_error", "http", "http", VERTEX_ERR, {"status": 500, "body": _g(500, "INTERNAL", "Internal error encountered.")}),
    LlmForm("vertex_permission_denied", "vertex", "auth", "http", "http", VERTEX_ERR, {"status": 403, "body": _g(403, "PERMISSION_DENIED", "Permission 'aiplatform.endpoints.predict' denied on resource '//aiplatform.googleapis.com/projects/ops-prod/locations/us-east5/publishers/anthropic/models/claude' (or it may not exist).")}),
    LlmForm("vertex_model_not_found", "vertex", "not_found", "http", "http", VERTEX_ERR, {"status": 404, "body": _g(404, "NOT_FOUND", "Publisher Model `projects/ops-prod/locations/us-east5/publishers/anthropic/models/claude-ops@20261001` not found.")}),
    LlmForm("vertex_deadline_exceeded", "vertex", "timeout", "http", "http", VERTEX_ERR, {"status": 504, "body": _g(504, "DEADLINE_EXCEEDED", "Deadline expired before operation could complete.")}),
    # error objects as the whole body of a 200 reply, and error events inside a stream
    LlmForm("body200_overloaded_error", "anthropic_body", "error", "content", "body200", ERR, {"body": _a("overloaded_error", "Overloaded")}),
    LlmForm("body200_api_error", "anthropic_body", "error", "content", "body200", ERR, {"body": _a("api_error", "Internal server error")}),
    LlmForm("body200_rate_limit_error", "anthropic_body", "rate_limit", "content", "body200", ERR, {"body": _a("rate_limit_error", "Number of concurrent connections has exceeded your rate limit.")}),
    LlmForm("sse_error_overloaded", "anthropic_sse", "error", "stream", "sse_error", STREAM, {"error": {"type": "overloaded_error", "message": "Overloaded"}}),
    LlmForm("sse_error_api_error", "anthropic_sse", "error", "stream", "sse_error", STREAM, {"error": {"type": "api_error", "message": "Internal server error"}}),
    LlmForm("sse_error_rate_limit", "anthropic_sse", "rate_limit", "stream", "sse_error", STREAM, {"error": {"type": "rate_limit_error", "message": "Output tokens per minute exceeded"}}),
    LlmForm("bedrock_stream_exception", "bedrock", "error", "stream", "sse_error", "https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_InvokeModelWithResponseStream.html", {"error": {"type": "modelStreamErrorException", "message": "The model stream encountered an error. Try your request again."}}),
    # a gateway's error text delivered as the assistant's message
    LlmForm("content_nginx_502", "gateway_text", "error", "content", "content_text", "https://nginx.org/en/docs/http/ngx_http_proxy_module.html", {"text": NGINX_502}),
    LlmForm("content_nginx_504", "gateway_text", "timeout", "content", "content_text", "https://nginx.org/en/docs/http/ngx_http_proxy_module.html#proxy_read_timeout", {"text": NGINX_504}),
    LlmForm("content_envoy_reset", "gateway_text", "connection", "content", "content_text", "https://www.envoyproxy.io/docs/envoy/latest/configuration/http/http_conn_man/response_code_details", {"text": "upstream connect error or disconnect/reset before headers. reset reason: remote connection failure, transport failure reason: delayed connect error: 111"}),
    LlmForm("content_cloudflare_524", "gateway_text", "timeout", "content", "content_text", "https://developers.cloudflare.com/support/troubleshooting/cloudflare-errors/troubleshooting-cloudflare-5xx-errors/#error-524-a-timeout-occurred", {"text": "error code: 524"}),
    LlmForm("content_litellm_overloaded", "gateway_text", "error", "content", "content_text", "https://docs.litellm.ai/docs/exception_mapping", {"text": "litellm.InternalServerError: AnthropicException - Overloaded. Handle with `litellm.InternalServerError`."}),
    LlmForm("content_http_503_line", "gateway_text", "error", "content", "content_text", "https://www.rfc-editor.org/rfc/rfc9110#name-503-service-unavailable", {"text": "HTTP/1.1 503 Service Unavailable"}),
    LlmForm("content_rate_limited_line", "gateway_text", "rate_limit", "content", "content_text", "https://www.rfc-editor.org/rfc/rfc6585#section-4", {"text": "429 Too Many Requests: upstream rate limit exceeded, retry after 20s"}),
    LlmForm("content_bedrock_throttling", "gateway_text", "rate_limit", "content", "content_text", BEDROCK, {"text": "An error occurred (ThrottlingException) when calling the InvokeModel operation (reached max retries: 4): Too many requests, please wait before trying again."}),
    LlmForm("content_unauthorized_line", "gateway_text", "auth", "content", "content_text", "https://www.rfc-editor.org/rfc/rfc9110#name-401-unauthorized", {"text": "401 Unauthorized: invalid x-api-key"}),
    LlmForm("content_openresty_500", "gateway_text", "error", "content", "content_text", "https://openresty.org/en/", {"text": "<html>\r\n<head><title>500 Internal Server Error</title></head>\r\n<body>\r\n<center><h1>500 Internal Server Error</h1></center>\r\n<hr><center>openresty</center>\r\n</body>\r\n</html>"}),
    # stop reasons and odd content
    LlmForm("stop_max_tokens_text", "stop_reason", "truncate", "content", "max_tokens_text", STOP, {}),
    LlmForm("stop_max_tokens_tool_input", "stop_reason", "truncate", "tool_calls", "max_tokens_tool", STOP, {}),
    LlmForm("stop_context_window_exceeded", "stop_reason", "truncate", "content", "context_window", STOP, {}),
    LlmForm("stop_refusal", "stop_reason", "content_filter", "content", "refusal", STOP, {}),
    LlmForm("stop_refusal_stream", "stop_reason", "content_filter", "stream", "refusal", STOP, {"stream": True}),
    LlmForm("empty_content_list", "model_output", "empty", "content", "empty", "https://docs.anthropic.com/en/api/messages", {"blocks": []}),
    LlmForm("empty_text_block", "model_output", "empty", "content", "empty", "https://docs.anthropic.com/en/api/messages", {"blocks": [{"type": "text", "text": ""}]}),
    LlmForm("empty_stream_message", "model_output", "empty", "stream", "empty", STREAM, {"blocks": [], "stream": True}),
    LlmForm("corrupt_args_replacement_char", "model_output", "corrupt", "tool_calls", "corrupt_args", "https://www.unicode.org/charts/PDF/UFFF0.pdf", {"style": "fffd"}),
    LlmForm("corrupt_args_symbols", "model_output", "corrupt", "tool_calls", "corrupt_args", "https://www.unicode.org/charts/PDF/U2600.pdf", {"style": "symbols"}),
    LlmForm("corrupt_args_mojibake", "model_output", "corrupt", "tool_calls", "corrupt_args", "https://docs.python.org/3/howto/unicode.html", {"style": "mojibake"}),
    LlmForm("corrupt_stream_deltas", "model_output", "corrupt", "stream", "corrupt_delta", STREAM, {}),
    LlmForm("schema_args_wrong_param", "model_output", "schema", "tool_calls", "schema_args", "https://docs.anthropic.com/en/docs/agents-and-tools/tool-use/implement-tool-use", {"input": {"wrong_param": "unexpected_value"}}),
    LlmForm("schema_args_foreign_names", "model_output", "schema", "tool_calls", "schema_args", "https://docs.anthropic.com/en/docs/agents-and-tools/tool-use/implement-tool-use", {"input": {"target": "{first}", "options": {"dry_run": False}}}),
    LlmForm("schema_content_policy_json", "model_output", "schema", "content", "content_text", "https://docs.anthropic.com/en/docs/test-and-evaluate/strengthen-guardrails/reduce-hallucinations", {"text": json.dumps({"error": "content_policy_violation", "message": "This response has been filtered."})}),
    LlmForm("schema_content_error_object", "model_output", "schema", "content", "content_text", ERR, {"text": _a("overloaded_error", "Overloaded")}),
    LlmForm("args_emptied", "model_output", "error", "tool_calls", "empty_args", "https://docs.anthropic.com/en/docs/agents-and-tools/tool-use/implement-tool-use", {}),
    LlmForm("stale_previous_reply", "stale_cache", "stale", "content", "stale", "https://developers.cloudflare.com/ai-gateway/configuration/caching/", {}),
    LlmForm("stale_previous_reply_stream", "stale_cache", "stale", "stream", "stale", "https://docs.litellm.ai/docs/proxy/caching", {"stream": True}),
    # streams that end before their end
    LlmForm("stream_cut_mid_text", "anthropic_stream", "stream_cut", "stream", "stream_cut", STREAM, {"at": "text"}),
    LlmForm("stream_cut_mid_tool_json", "anthropic_stream", "stream_cut", "stream", "stream_cut", STREAM, {"at": "json"}),
    LlmForm("stream_cut_abrupt_close", "anthropic_stream", "stream_cut", "stream", "stream_cut", STREAM, {"at": "json", "abrupt": True}),
    LlmForm("stream_cut_after_message_start", "anthropic_stream", "stream_cut", "stream", "stream_cut", STREAM, {"at": "start"}),
    LlmForm("stream_cut_mid_event", "anthropic_stream", "stream_cut", "stream", "stream_cut", STREAM, {"at": "mid_event", "abrupt": True}),
    LlmForm("stream_no_message_stop", "anthropic_stream", "stream_cut", "stream", "stream_cut", STREAM, {"at": "before_stop"}),
    # no answer at all, or a late one
    LlmForm("conn_closed_without_response", "transport", "connection", "http", "conn", "https://www.python-httpx.org/exceptions/", {"how": "close"}),
    LlmForm("conn_reset_by_peer", "transport", "connection", "http", "conn", "https://man7.org/linux/man-pages/man7/tcp.7.html", {"how": "reset"}),
    LlmForm("read_timeout_silence", "transport", "timeout", "http", "timeout", "https://github.com/anthropics/anthropic-sdk-python#timeouts", {}),
    LlmForm("slow_reply", "latency", "latency", "http", "slow", "https://docs.anthropic.com/en/api/rate-limits", {}),
    LlmForm("slow_stream_stall", "latency", "latency", "stream", "stall", STREAM, {}),
    LlmForm("slow_first_byte_stream", "latency", "latency", "stream", "first_byte", STREAM, {}),
]
# Not a failure: the API pauses a long turn and the agent sends it back to continue (used in
# successes only).
PAUSE_TURN = LlmForm("pause_turn_continued", "stop_reason", "none", "content", "pause_turn", STOP, {})
LLM_FORMS: dict[str, LlmForm] = {f.name: f for f in [*FORMS, PAUSE_TURN]}
