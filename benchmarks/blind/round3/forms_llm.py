# ruff: noqa: E501  (the forms quote published texts whole; cutting them would change what they are)
"""Failure forms on the model API side, as the loopback server delivers them.

Each form imitates what a real provider, gateway or proxy sends (``source`` cites its public
documentation). ``kind`` says how the server applies it (see :mod:`model`); ``label`` is the
taxonomy label: a status of the model API's own response by the status rule (429 ``rate_limit``,
401/403 ``auth``, 404 ``not_found``, 400/422 ``invalid_request``, 408/504 ``timeout``, other 5xx
``http_error``), a text delivered in a 200 reply by its meaning, a JSON error object as the
message content ``schema``, an error object instead of the completion by its meaning.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class LlmForm:
    id: str
    family: str
    label: str
    surface: str           # http | content | tool_calls | stream
    source: str
    kind: str
    params: dict[str, Any] = field(default_factory=dict)
    side: str = "llm"
    stream: bool | None = None   # True: needs a streaming agent; False: a non-streaming one


S_OPENAI = "https://platform.openai.com/docs/guides/error-codes/api-errors"
S_AZURE = "https://learn.microsoft.com/en-us/azure/ai-services/openai/reference"
S_AZURE_CF = "https://learn.microsoft.com/en-us/azure/ai-services/openai/concepts/content-filter"
S_ANTHROPIC = "https://docs.anthropic.com/en/api/errors"
S_GEMINI = "https://ai.google.dev/gemini-api/docs/troubleshooting"
S_MISTRAL = "https://docs.mistral.ai/api/"
S_GROQ = "https://console.groq.com/docs/errors"
S_OPENROUTER = "https://openrouter.ai/docs/api-reference/errors"
S_OR_STREAM = "https://openrouter.ai/docs/api-reference/streaming"
S_VLLM = "https://docs.vllm.ai/en/latest/serving/openai_compatible_server.html"
S_OLLAMA = "https://github.com/ollama/ollama/blob/main/docs/api.md#errors"
S_LITELLM = "https://docs.litellm.ai/docs/proxy/users"
S_TGI = "https://huggingface.co/docs/text-generation-inference/en/reference/api_reference"
S_BEDROCK = "https://docs.aws.amazon.com/bedrock/latest/APIReference/CommonErrors.html"
S_NGINX = "https://nginx.org/en/docs/http/ngx_http_proxy_module.html"
S_CF = "https://developers.cloudflare.com/support/troubleshooting/http-status-codes/cloudflare-5xx-errors/"
S_ALB = "https://docs.aws.amazon.com/elasticloadbalancing/latest/application/load-balancer-troubleshooting.html"
S_ENVOY = "https://www.envoyproxy.io/docs/envoy/latest/configuration/http/http_conn_man/response_code_details"
S_CHAT = "https://platform.openai.com/docs/api-reference/chat/object"
S_STREAM = "https://platform.openai.com/docs/api-reference/chat-streaming"
S_SSE = "https://html.spec.whatwg.org/multipage/server-sent-events.html#event-stream-interpretation"
S_HTTPX = "https://www.python-httpx.org/exceptions/"
S_UNICODE = "https://www.unicode.org/charts/PDF/UFFF0.pdf"
S_MOJIBAKE = "https://docs.python.org/3/howto/unicode.html#encodings"
S_FUNCS = "https://platform.openai.com/docs/guides/function-calling"

NGINX_502 = ("<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway</h1></center>\r\n"
             "<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n")
NGINX_504 = ("<html>\r\n<head><title>504 Gateway Time-out</title></head>\r\n<body>\r\n<center><h1>504 Gateway Time-out</h1>"
             "</center>\r\n<hr><center>nginx/1.25.3</center>\r\n</body>\r\n</html>\r\n")
ALB_503 = ("<html>\r\n<head><title>503 Service Temporarily Unavailable</title></head>\r\n<body>\r\n<center><h1>503 Service "
           "Temporarily Unavailable</h1></center>\r\n</body>\r\n</html>\r\n")
CF_524 = ("<!DOCTYPE html>\n<html><head><title>api.llm-gateway.example | 524: A timeout occurred</title></head><body>"
          "<h1>A timeout occurred <span>Error code 524</span></h1><p>The origin web server timed out responding to this request."
          "</p><p>Cloudflare Ray ID: 8a1f3c0d5e6b7a89</p></body></html>")


def _http(id_: str, family: str, label: str, source: str, status: int, body: Any, *,
          ctype: str = "application/json", headers: dict[str, str] | None = None) -> LlmForm:
    return LlmForm(id_, family, label, "http", source, "http",
                   {"status": status, "body": body, "ctype": ctype, "headers": headers or {}})


def _oai(message: str, type_: str | None, code: str | None, param: str | None = None) -> dict[str, Any]:
    return {"error": {"message": message, "type": type_, "param": param, "code": code}}


LLM_FORMS: tuple[LlmForm, ...] = (
    # --- the model API answers with an HTTP error status of its own ------------------------------
    _http("openai_429_tpm", "openai_api", "rate_limit", S_OPENAI, 429, _oai(
        "Rate limit reached for gpt-4o-mini in organization org-Shop on tokens per min (TPM): Limit 200000, Used 199412, "
        "Requested 1873. Please try again in 384ms. Visit https://platform.openai.com/account/rate-limits to learn more.",
        "tokens", "rate_limit_exceeded"), headers={"retry-after-ms": "40", "x-ratelimit-remaining-tokens": "0"}),
    _http("openai_429_quota", "openai_api", "rate_limit", S_OPENAI, 429, _oai(
        "You exceeded your current quota, please check your plan and billing details. For more information on this error, "
        "read the docs: https://platform.openai.com/docs/guides/error-codes/api-errors.", "insufficient_quota",
        "insufficient_quota"), headers={"retry-after-ms": "40"}),
    _http("openai_401_key", "openai_api", "auth", S_OPENAI, 401, _oai(
        "Incorrect API key provided: sk-proj-********************************Qx7A. You can find your API key at "
        "https://platform.openai.com/account/api-keys.", "invalid_request_error", "invalid_api_key")),
    _http("openai_404_model", "openai_api", "not_found", S_OPENAI, 404, _oai(
        "The model `gpt-4o-mini-2024-07-18-ft` does not exist or you do not have access to it.", "invalid_request_error",
        "model_not_found")),
    _http("openai_400_context", "openai_api", "invalid_request", S_OPENAI, 400, _oai(
        "This model's maximum context length is 128000 tokens. However, your messages resulted in 131207 tokens. Please "
        "reduce the length of the messages.", "invalid_request_error", "context_length_exceeded", "messages")),
    _http("openai_500", "openai_api", "http_error", S_OPENAI, 500, _oai(
        "The server had an error while processing your request. Sorry about that!", "server_error", None)),
    _http("openai_503_overloaded", "openai_api", "http_error", S_OPENAI, 503, _oai(
        "The engine is currently overloaded, please try again later.", "server_error", None)),
    _http("azure_429", "azure_openai", "rate_limit", S_AZURE, 429, {"error": {"code": "429", "message":
        "Requests to the ChatCompletions_Create Operation under Azure OpenAI API version 2024-10-21 have exceeded token rate "
        "limit of your current OpenAI S0 pricing tier. Please retry after 1 second. Please go here: https://aka.ms/oai/quotaincrease "
        "if you would like to further increase the default rate limit."}}, headers={"retry-after-ms": "40"}),
    _http("azure_401", "azure_openai", "auth", S_AZURE, 401, {"error": {"code": "401", "message":
        "Access denied due to invalid subscription key or wrong API endpoint. Make sure to provide a valid key for an active "
        "subscription and use a correct regional API endpoint for your resource."}}),
    _http("azure_404_deployment", "azure_openai", "not_found", S_AZURE, 404, {"error": {"code": "DeploymentNotFound",
        "message": "The API deployment for this resource does not exist. If you created the deployment within the last 5 "
        "minutes, please wait a moment and try again."}}),
    _http("anthropic_529", "anthropic", "http_error", S_ANTHROPIC, 529,
          {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}),
    _http("anthropic_403", "anthropic", "auth", S_ANTHROPIC, 403,
          {"type": "error", "error": {"type": "permission_error", "message": "Your API key does not have permission to use the specified resource."}}),
    _http("anthropic_500", "anthropic", "http_error", S_ANTHROPIC, 500,
          {"type": "error", "error": {"type": "api_error", "message": "Internal server error"}}),
    _http("anthropic_429", "anthropic", "rate_limit", S_ANTHROPIC, 429,
          {"type": "error", "error": {"type": "rate_limit_error", "message": "Number of request tokens has exceeded your per-minute rate limit"}},
          headers={"retry-after": "0"}),
    _http("gemini_429", "gemini", "rate_limit", S_GEMINI, 429, [{"error": {"code": 429, "message":
        "Resource has been exhausted (e.g. check quota).", "status": "RESOURCE_EXHAUSTED"}}]),
    _http("gemini_503", "gemini", "http_error", S_GEMINI, 503, [{"error": {"code": 503, "message":
        "The model is overloaded. Please try again later.", "status": "UNAVAILABLE"}}]),
    _http("gemini_400", "gemini", "invalid_request", S_GEMINI, 400, [{"error": {"code": 400, "message":
        "* GenerateContentRequest.tools[0].function_declarations[3].parameters.properties[amount_cents].type: must be specified",
        "status": "INVALID_ARGUMENT"}}]),
    _http("gemini_403", "gemini", "auth", S_GEMINI, 403, [{"error": {"code": 403, "message":
        "Method doesn't allow unregistered callers (callers without established identity). Please use API Key or other form of "
        "API consumer identity to call this API.", "status": "PERMISSION_DENIED"}}]),
    _http("mistral_422", "mistral", "invalid_request", S_MISTRAL, 422, {"object": "error", "message": {"detail": [{"type":
        "extra_forbidden", "loc": ["body", "parallel_tool_calls"], "msg": "Extra inputs are not permitted"}]},
        "type": "invalid_request_error", "param": None, "code": None}),
    _http("mistral_429", "mistral", "rate_limit", S_MISTRAL, 429, {"message": "Requests rate limit exceeded"},
          headers={"retry-after": "0"}),
    _http("groq_429", "groq", "rate_limit", S_GROQ, 429, _oai(
        "Rate limit reached for model `llama-3.3-70b-versatile` in organization `org_01hq` service tier `on_demand` on tokens "
        "per minute (TPM): Limit 6000, Used 5873, Requested 1207. Please try again in 10.8s.", "tokens", "rate_limit_exceeded"),
        headers={"retry-after": "0"}),
    _http("groq_503", "groq", "http_error", S_GROQ, 503, _oai("Service Unavailable", "internal_server_error", "service_unavailable")),
    _http("openrouter_402", "openrouter", "rate_limit", S_OPENROUTER, 402, {"error": {"code": 402, "message":
        "This request requires more credits, or fewer max_tokens. You requested up to 4096 tokens, but can only afford 1283."}}),
    _http("openrouter_408", "openrouter", "timeout", S_OPENROUTER, 408, {"error": {"code": 408, "message": "Your request timed out"}}),
    _http("openrouter_502", "openrouter", "http_error", S_OPENROUTER, 502, {"error": {"code": 502, "message":
        "Your chosen model is down or we received an invalid response from it", "metadata": {"provider_name": "DeepInfra"}}}),
    _http("openrouter_503", "openrouter", "http_error", S_OPENROUTER, 503, {"error": {"code": 503, "message":
        "No allowed providers are available for the selected model."}}),
    _http("vllm_400_context", "vllm", "invalid_request", S_VLLM, 400, {"object": "error", "message":
        "This model's maximum context length is 8192 tokens. However, you requested 9311 tokens (7263 in the messages, 2048 "
        "in the completion). Please reduce the length of the messages or completion.", "type": "BadRequestError", "param": None, "code": 400}),
    _http("vllm_404_model", "vllm", "not_found", S_VLLM, 404, {"object": "error", "message":
        "The model `shop-agent-v2` does not exist.", "type": "NotFoundError", "param": None, "code": 404}),
    _http("ollama_404", "ollama", "not_found", S_OLLAMA, 404, {"error": "model \"qwen2.5:14b\" not found, try pulling it first"}),
    _http("ollama_500", "ollama", "http_error", S_OLLAMA, 500, {"error": "llama runner process has terminated: signal: killed"}),
    _http("litellm_401", "litellm_proxy", "auth", S_LITELLM, 401, {"error": {"message":
        "Authentication Error, Invalid proxy server token passed. Received API Key = sk-...7f2c, Key Hash (Token) =2b1e0c. "
        "Unable to find token in cache or `LiteLLM_VerificationTokenTable`", "type": "auth_error", "param": "None", "code": "401"}}),
    _http("litellm_429", "litellm_proxy", "rate_limit", S_LITELLM, 429, {"error": {"message":
        "LiteLLM Rate Limit Handler for rate limit type = key. Crossed TPM / RPM / Max Parallel Request Limit. current rpm: 61, "
        "rpm limit: 60", "type": "None", "param": "None", "code": "429"}}, headers={"retry-after": "0"}),
    _http("tgi_422", "tgi", "invalid_request", S_TGI, 422, {"error":
        "Input validation error: `inputs` tokens + `max_new_tokens` must be <= 8192. Given: 7912 `inputs` tokens and 1024 "
        "`max_new_tokens`", "error_type": "validation"}),
    _http("tgi_429", "tgi", "rate_limit", S_TGI, 429, {"error": "Model is overloaded", "error_type": "overloaded"}),
    _http("bedrock_429", "bedrock_gateway", "rate_limit", S_BEDROCK, 429,
          {"message": "Too many requests, please wait before trying again."}, headers={"x-amzn-errortype": "ThrottlingException"}),
    _http("bedrock_408", "bedrock_gateway", "timeout", S_BEDROCK, 408,
          {"message": "Model has timed out in processing the request. Try your request again."},
          headers={"x-amzn-errortype": "ModelTimeoutException"}),
    _http("bedrock_403", "bedrock_gateway", "auth", S_BEDROCK, 403,
          {"message": "You don't have access to the model with the specified model ID."},
          headers={"x-amzn-errortype": "AccessDeniedException"}),
    _http("nginx_502_status", "nginx", "http_error", S_NGINX, 502, NGINX_502, ctype="text/html"),
    _http("nginx_504_status", "nginx", "timeout", S_NGINX, 504, NGINX_504, ctype="text/html"),
    _http("cf_524_status", "cloudflare", "http_error", S_CF, 524, CF_524, ctype="text/html"),
    _http("alb_503_status", "aws_alb", "http_error", S_ALB, 503, ALB_503, ctype="text/html"),
    _http("envoy_503_status", "envoy", "http_error", S_ENVOY, 503,
          "upstream connect error or disconnect/reset before headers. reset reason: connection failure", ctype="text/plain"),
    _http("envoy_504_status", "envoy", "timeout", S_ENVOY, 504, "upstream request timeout", ctype="text/plain"),
    # --- no conversation with the server ---------------------------------------------------------
    LlmForm("conn_closed", "transport", "connection", "http", S_HTTPX, "drop"),
    LlmForm("conn_reset", "transport", "connection", "http", S_HTTPX, "reset"),
    LlmForm("read_stall", "transport", "timeout", "http", S_HTTPX, "stall", stream=False),
    # --- a 200 reply whose content is an error text ----------------------------------------------
    LlmForm("content_nginx_502", "proxy_in_body", "error", "content", S_NGINX, "content", {"text": NGINX_502}),
    LlmForm("content_nginx_504", "proxy_in_body", "timeout", "content", S_NGINX, "content", {"text": NGINX_504}),
    LlmForm("content_cf_522", "proxy_in_body", "timeout", "content", S_CF, "content", {"text":
        "error code: 522\nConnection timed out: the initial connection between Cloudflare's network and the origin web server timed out."}),
    LlmForm("content_envoy_reset", "proxy_in_body", "connection", "content", S_ENVOY, "content", {"text":
        "upstream connect error or disconnect/reset before headers. reset reason: remote connection failure, transport failure "
        "reason: delayed connect error: 111"}),
    LlmForm("content_or_rate", "openrouter", "rate_limit", "content", S_OPENROUTER, "content", {"text":
        "Rate limit exceeded: free-models-per-day. Add 10 credits to unlock 1000 free model requests per day"}),
    LlmForm("content_http500_text", "gateway_text", "error", "content", S_OPENAI, "content", {"text":
        "HTTP 500 Internal Server Error: upstream model worker returned an unexpected exception (request id req_{req})"}),
    LlmForm("content_json_error", "format_slip", "schema", "content", S_CHAT, "content", {"text":
        '{"error": {"message": "The server had an error while processing your request. Sorry about that!", "type": "server_error"}}'}),
    LlmForm("content_policy_object", "format_slip", "schema", "content", S_AZURE_CF, "content", {"text":
        '{"code": "content_filter", "message": "The response was filtered due to the prompt triggering Azure OpenAI\'s content '
        'management policy.", "status": 400}'}),
    LlmForm("body_error_object", "error_in_200", "error", "content", S_OPENROUTER, "body", {"body":
        {"error": {"code": 500, "message": "Internal Server Error", "metadata": {"provider_name": "Together"}}}}, stream=False),
    LlmForm("body_rate_object", "error_in_200", "rate_limit", "content", S_OPENROUTER, "body", {"body":
        {"error": {"code": 429, "message": "Provider returned error: rate limited upstream, please retry shortly",
                   "metadata": {"provider_name": "Fireworks"}}}}, stream=False),
    LlmForm("body_timeout_object", "error_in_200", "timeout", "content", S_OPENROUTER, "body", {"body":
        {"error": {"code": 408, "message": "Request timed out while waiting for the provider"}}}, stream=False),
    # --- finish reasons and the model's output changed in transit --------------------------------
    LlmForm("finish_content_filter", "finish_reason", "content_filter", "content", S_CHAT, "filter", {}),
    LlmForm("finish_content_filter_azure", "azure_openai", "content_filter", "content", S_AZURE_CF, "filter",
            {"results": {"hate": {"filtered": False, "severity": "safe"}, "violence": {"filtered": True, "severity": "medium"}}}),
    LlmForm("finish_length", "finish_reason", "truncate", "content", S_CHAT, "length", {"keep": 0.35}),
    LlmForm("finish_length_short", "finish_reason", "truncate", "content", S_CHAT, "length", {"keep": 0.15}),
    LlmForm("empty_content", "empty_reply", "empty", "content", S_CHAT, "empty", {"content": ""}),
    LlmForm("null_content", "empty_reply", "empty", "content", S_CHAT, "empty", {"content": None}),
    LlmForm("mojibake_latin1", "mojibake", "corrupt", "content", S_MOJIBAKE, "mojibake", {"codec": "latin-1"}),
    LlmForm("mojibake_cp1252", "mojibake", "corrupt", "content", S_MOJIBAKE, "mojibake", {"codec": "cp1252"}),
    LlmForm("replacement_chars", "mojibake", "corrupt", "content", S_UNICODE, "replacement", {}),
    LlmForm("args_symbols", "tool_args", "corrupt", "tool_calls", S_FUNCS, "args", {"how": "symbols"}),
    LlmForm("args_emptied", "tool_args", "error", "tool_calls", S_FUNCS, "args", {"how": "empty"}),
    LlmForm("args_undeclared", "tool_args", "schema", "tool_calls", S_FUNCS, "args", {"how": "undeclared"}),
    LlmForm("args_cut", "tool_args", "truncate", "tool_calls", S_FUNCS, "args", {"how": "cut"}),
    LlmForm("args_wrong_amount", "tool_args", "wrong_value", "tool_calls", S_FUNCS, "args", {"how": "amount"}),
    LlmForm("args_wrong_order", "tool_args", "wrong_value", "tool_calls", S_FUNCS, "args", {"how": "order"}),
    LlmForm("stale_repeat", "stale_cache", "stale", "content", S_CHAT, "stale", {}),
    # --- streamed replies --------------------------------------------------------------------------
    LlmForm("stream_cut_no_done", "sse_stream", "stream_cut", "stream", S_STREAM, "cut", {"done": False}, stream=True),
    LlmForm("stream_cut_with_done", "sse_stream", "stream_cut", "stream", S_STREAM, "cut", {"done": True}, stream=True),
    LlmForm("stream_cut_mid_event", "sse_stream", "stream_cut", "stream", S_SSE, "cut", {"mid_event": True}, stream=True),
    LlmForm("stream_reset", "sse_stream", "stream_cut", "stream", S_HTTPX, "cut", {"abort": True}, stream=True),
    LlmForm("stream_stalled", "sse_stream", "stream_cut", "stream", S_STREAM, "stalled", {}, stream=True),
    LlmForm("stream_error_event", "sse_stream", "error", "stream", S_STREAM, "sse_error", {"event":
        {"error": {"message": "The server had an error while processing your request. Sorry about that!", "type": "server_error",
                   "param": None, "code": None}}}, stream=True),
    LlmForm("stream_or_error_chunk", "openrouter", "error", "stream", S_OR_STREAM, "sse_error", {"event":
        {"id": "gen-{req}", "object": "chat.completion.chunk", "created": 1767225600, "model": "shop-model",
         "error": {"code": "server_error", "message": "Provider returned error"},
         "choices": [{"index": 0, "delta": {"content": ""}, "finish_reason": "error"}]}}, stream=True),
    LlmForm("stream_length", "sse_stream", "truncate", "stream", S_STREAM, "length", {"keep": 0.3}, stream=True),
    LlmForm("stream_content_filter", "sse_stream", "content_filter", "stream", S_STREAM, "filter", {}, stream=True),
    LlmForm("stream_symbols", "sse_stream", "corrupt", "stream", S_STREAM, "replacement", {"symbols": True}, stream=True),
    # --- slow replies the agent would not wait for -----------------------------------------------
    LlmForm("slow_reply", "slow_model", "latency", "http", S_OPENAI, "slow", {"where": "head"}, stream=False),
    LlmForm("slow_first_token", "slow_model", "latency", "stream", S_STREAM, "slow", {"where": "head"}, stream=True),
    LlmForm("slow_stream_gap", "slow_model", "latency", "stream", S_STREAM, "slow", {"where": "gap"}, stream=True),
)

RETRYABLE_STATUS = frozenset({408, 409, 429}) | frozenset(range(500, 600))


def sdk_retries(form: LlmForm) -> bool:
    """Whether the openai SDK repeats a request that met this form (its documented retry policy)."""
    if form.kind == "http":
        return int(form.params["status"]) in RETRYABLE_STATUS
    return form.kind in ("drop", "reset", "stall")
