"""Model-API failure forms of OpenAI-compatible providers and gateways (not OpenAI itself).

``kind`` says how the loopback server delivers the form: ``http`` (a status with the provider's
body), ``drop`` / ``reset`` / ``partial`` (the connection goes away), ``sleep`` (longer than the
client's timeout), ``body200`` (an error object as the whole 200 body), ``content`` (the message
content replaced, tool calls gone), ``choice_error``, ``filter``, ``length``, ``empty``,
``args_*`` (the tool call's arguments changed), ``stale``, ``slow``, and ``stream_*``.
"""

from __future__ import annotations

from typing import Any

GROQ = "https://console.groq.com/docs/errors and https://console.groq.com/docs/rate-limits"
MISTRAL = "https://docs.mistral.ai/api/"
DEEPSEEK = "https://api-docs.deepseek.com/quick_start/error_codes"
TOGETHER = "https://docs.together.ai/docs/error-codes"
FIREWORKS = "https://docs.fireworks.ai/troubleshooting/status-error-codes/http-status-codes"
OPENROUTER = "https://openrouter.ai/docs/api-reference/errors"
AZURE = "https://learn.microsoft.com/en-us/azure/ai-services/openai/reference"
AZURE_CF = "https://learn.microsoft.com/en-us/azure/ai-services/openai/concepts/content-filter"
VLLM = "https://docs.vllm.ai/en/latest/serving/openai_compatible_server.html"
OLLAMA = "https://github.com/ollama/ollama/blob/main/docs/openai.md and https://github.com/ollama/ollama/blob/main/docs/api.md#errors"
LITELLM = "https://docs.litellm.ai/docs/proxy/users and https://docs.litellm.ai/docs/exception_mapping"
CLOUDFLARE = "https://developers.cloudflare.com/support/troubleshooting/http-status-codes/cloudflare-5xx-errors/"
PORTKEY = "https://portkey.ai/docs/product/ai-gateway/request-timeouts"
SSE = "https://html.spec.whatwg.org/multipage/server-sent-events.html"
CHAT = "https://platform.openai.com/docs/api-reference/chat/object (the wire format these providers copy)"
HTTPX = "https://www.python-httpx.org/exceptions/"

FORMS: list[dict[str, Any]] = []


def _f(fid: str, family: str, label: str, where: str, kind: str, source: str, **params: Any) -> None:
    FORMS.append(
        {
            "id": fid,
            "family": family,
            "label": label,
            "side": "llm",
            "where": where,
            "kind": kind,
            "source": source,
            "params": params,
        }
    )


def _err(message: str, type_: str | None, code: Any, **extra: Any) -> dict[str, Any]:
    return {"error": {"message": message, "type": type_, "code": code, **extra}}


# HTTP statuses of the providers, with their bodies
_f(
    "groq_429_tpm",
    "llm_http_status",
    "rate_limit",
    "http",
    "http",
    GROQ,
    status=429,
    body=_err(
        "Rate limit reached for model `llama-3.3-70b-versatile` in organization `org_01hq8x` service tier "
        "`on_demand` on tokens per minute (TPM): Limit 12000, Used 11742, Requested 1630. Please try again "
        "in 6.86s. Visit https://console.groq.com/docs/rate-limits for more information.",
        "tokens",
        "rate_limit_exceeded",
    ),
    headers={"retry-after": "1"},
)
_f(
    "mistral_429",
    "llm_http_status",
    "rate_limit",
    "http",
    "http",
    MISTRAL,
    status=429,
    body={
        "object": "error",
        "message": "Requests rate limit exceeded",
        "type": "rate_limited",
        "param": None,
        "code": "1300",
    },
)
_f(
    "deepseek_402_balance",
    "llm_http_status",
    "rate_limit",
    "http",
    "http",
    DEEPSEEK,
    status=402,
    body=_err("Insufficient Balance", "unknown_error", "invalid_request_error", param=None),
)
_f(
    "deepseek_503_overloaded",
    "llm_http_status",
    "http_error",
    "http",
    "http",
    DEEPSEEK,
    status=503,
    body=_err("Server overloaded, please try again later.", "server_error", "server_overloaded"),
)
_f(
    "together_500",
    "llm_http_status",
    "http_error",
    "http",
    "http",
    TOGETHER,
    status=500,
    body=_err("Internal server error", "server_error", None),
)
_f(
    "fireworks_404_model",
    "llm_http_status",
    "not_found",
    "http",
    "http",
    FIREWORKS,
    status=404,
    body={
        "error": {
            "object": "error",
            "type": "invalid_request_error",
            "code": "NOT_FOUND",
            "message": "Model not found, inaccessible, and/or not deployed",
        }
    },
)
_f(
    "openrouter_401",
    "llm_http_status",
    "auth",
    "http",
    "http",
    OPENROUTER,
    status=401,
    body={"error": {"message": "No auth credentials found", "code": 401}},
)
_f(
    "openrouter_502_provider",
    "llm_http_status",
    "http_error",
    "http",
    "http",
    OPENROUTER,
    status=502,
    body={
        "error": {
            "message": "Provider returned error",
            "code": 502,
            "metadata": {"provider_name": "DeepInfra", "raw": "upstream error"},
        }
    },
)
_f(
    "azure_429_tier",
    "llm_http_status",
    "rate_limit",
    "http",
    "http",
    AZURE,
    status=429,
    body={
        "error": {
            "code": "429",
            "message": "Requests to the ChatCompletions_Create Operation under Azure OpenAI "
            "API version 2024-10-21 have exceeded token rate limit of your current OpenAI S0 pricing tier. "
            "Please retry after 1 second.",
        }
    },
    headers={"retry-after": "1"},
)
_f(
    "azure_400_content_filter",
    "llm_http_status",
    "content_filter",
    "http",
    "http",
    AZURE_CF,
    status=400,
    body={
        "error": {
            "message": "The response was filtered due to the prompt triggering Azure OpenAI's content "
            "management policy. Please modify your prompt and retry.",
            "type": None,
            "param": "prompt",
            "code": "content_filter",
            "status": 400,
            "innererror": {
                "code": "ResponsibleAIPolicyViolation",
                "content_filter_result": {
                    "hate": {"filtered": False, "severity": "safe"},
                    "violence": {"filtered": True, "severity": "medium"},
                },
            },
        }
    },
)
_f(
    "azure_401_key",
    "llm_http_status",
    "auth",
    "http",
    "http",
    AZURE,
    status=401,
    body={
        "error": {
            "code": "401",
            "message": "Access denied due to invalid subscription key or wrong API endpoint. "
            "Make sure to provide a valid key for an active subscription and use a correct regional API "
            "endpoint for your resource.",
        }
    },
)
_f(
    "azure_404_deployment",
    "llm_http_status",
    "not_found",
    "http",
    "http",
    AZURE,
    status=404,
    body={
        "error": {
            "code": "DeploymentNotFound",
            "message": "The API deployment for this resource does not exist. "
            "If you created the deployment within the last 5 minutes, please wait a moment and try again.",
        }
    },
)
_f(
    "vllm_400_context",
    "llm_http_status",
    "invalid_request",
    "http",
    "http",
    VLLM,
    status=400,
    body={
        "object": "error",
        "message": "This model's maximum context length is 8192 tokens. However, you "
        "requested 9012 tokens (6964 in the messages, 2048 in the completion). Please reduce the length of the "
        "messages or completion.",
        "type": "BadRequestError",
        "param": None,
        "code": 400,
    },
)
_f(
    "ollama_404_model",
    "llm_http_status",
    "not_found",
    "http",
    "http",
    OLLAMA,
    status=404,
    body={"error": 'model "qwen2.5:14b" not found, try pulling it first'},
)
_f(
    "ollama_500_runner",
    "llm_http_status",
    "http_error",
    "http",
    "http",
    OLLAMA,
    status=500,
    body={"error": "llama runner process has terminated: signal: killed"},
)
_f(
    "litellm_429_budget",
    "llm_http_status",
    "rate_limit",
    "http",
    "http",
    LITELLM,
    status=429,
    body=_err(
        "LiteLLM Rate Limit Handler for rate limit type = key. Crossed TPM / RPM / Max Parallel Request "
        "Limit. current rpm: 61, rpm limit: 60, current tpm: 48120, tpm limit: 100000",
        "None",
        "429",
        param="None",
    ),
)
_f(
    "litellm_401_token",
    "llm_http_status",
    "auth",
    "http",
    "http",
    LITELLM,
    status=401,
    body=_err(
        "Authentication Error, Invalid proxy server token passed. Unable to find token in cache or "
        "`LiteLLM_VerificationTokenTable`",
        "auth_error",
        "401",
        param="None",
    ),
)
_f(
    "litellm_500_mapped",
    "llm_http_status",
    "http_error",
    "http",
    "http",
    LITELLM,
    status=500,
    body=_err("litellm.InternalServerError: Hosted_vllmException - Connection error.", None, "500"),
)
_f(
    "cloudflare_524",
    "llm_http_status",
    "http_error",
    "http",
    "http",
    CLOUDFLARE,
    status=524,
    text="error code: 524",
    ctype="text/plain",
)
_f(
    "cloudflare_502_page",
    "llm_http_status",
    "http_error",
    "http",
    "http",
    CLOUDFLARE,
    status=502,
    text="<!DOCTYPE html><html><head><title>ai-gw.example.com | 502: Bad gateway</title></head><body>"
    "<h1>Bad gateway</h1><span>Error code 502</span><p>The web server reported a bad gateway error.</p>"
    "<p>Cloudflare Ray ID: 8f1c2d3e4a5b6c7d</p></body></html>",
    ctype="text/html",
)
_f(
    "portkey_408",
    "llm_http_status",
    "timeout",
    "http",
    "http",
    PORTKEY,
    status=408,
    body=_err("Request exceeded the timeout sent in the request: 30000ms", "timeout_error", None, param=None),
)
_f(
    "gateway_504_page",
    "llm_http_status",
    "timeout",
    "http",
    "http",
    CLOUDFLARE,
    status=504,
    text="<html><head><title>504 Gateway Time-out</title></head><body><center><h1>504 Gateway Time-out</h1>"
    "</center></body></html>",
    ctype="text/html",
)
_f(
    "mistral_422_extra",
    "llm_http_status",
    "invalid_request",
    "http",
    "http",
    MISTRAL,
    status=422,
    body={
        "object": "error",
        "message": {
            "detail": [
                {
                    "type": "extra_forbidden",
                    "loc": ["body", "parallel_tool_calls"],
                    "msg": "Extra inputs are not permitted",
                    "input": True,
                }
            ]
        },
        "type": "invalid_request_error",
        "param": None,
        "code": None,
    },
)
_f(
    "groq_403_org",
    "llm_http_status",
    "auth",
    "http",
    "http",
    GROQ,
    status=403,
    body=_err(
        "Organization has been restricted. Please reach out to support if you believe this was in error.",
        "invalid_request_error",
        "organization_restricted",
    ),
)
# the connection goes away
_f("disconnect_before_headers", "llm_connection", "connection", "http", "drop", HTTPX)
_f("tcp_reset", "llm_connection", "connection", "http", "reset", HTTPX)
_f("body_cut_short", "llm_connection", "connection", "http", "partial", HTTPX)
_f("read_timeout", "llm_connection", "timeout", "http", "sleep", HTTPX)
# errors delivered inside a 200
_f(
    "openrouter_200_error_body",
    "llm_error_in_200",
    "error",
    "content",
    "body200",
    OPENROUTER,
    body={
        "error": {
            "message": "Upstream error from provider",
            "code": 502,
            "metadata": {"provider_name": "Together", "raw": '{"error":"bad gateway"}'},
        }
    },
)
_f(
    "gateway_200_rate_limited_body",
    "llm_error_in_200",
    "rate_limit",
    "content",
    "body200",
    LITELLM,
    body=_err(
        "RateLimitError: all deployments in model group 'gpt-oss-120b' are cooling down", "rate_limit_error", "429"
    ),
)
_f(
    "openrouter_choice_error",
    "llm_error_in_200",
    "error",
    "content",
    "choice_error",
    OPENROUTER,
    error={"code": 502, "message": "Provider disconnected unexpectedly"},
)
_f(
    "cloudflare_502_in_content",
    "llm_error_in_200",
    "error",
    "content",
    "content",
    CLOUDFLARE,
    text="<html><head><title>502 Bad Gateway</title></head><body><center><h1>502 Bad Gateway</h1></center>"
    "<hr><center>cloudflare</center></body></html>",
)
_f(
    "gateway_504_in_content",
    "llm_error_in_200",
    "timeout",
    "content",
    "content",
    CLOUDFLARE,
    text="504 Gateway Time-out\nThe upstream server did not respond in time.",
)
_f(
    "litellm_exception_in_content",
    "llm_error_in_200",
    "error",
    "content",
    "content",
    LITELLM,
    text="litellm.InternalServerError: AnthropicException - Overloaded. Handle with `litellm.InternalServerError`.",
)
_f(
    "ollama_errno_in_content",
    "llm_error_in_200",
    "timeout",
    "content",
    "content",
    OLLAMA,
    text='Error: Post "http://127.0.0.1:41233/completion": [Errno 110] Connection timed out',
)
_f(
    "portkey_json_error_as_content",
    "llm_schema",
    "schema",
    "content",
    "content",
    "https://portkey.ai/docs/api-reference/inference-api/error-codes",
    text='{"error":{"message":"All providers in the fallback chain failed","type":"server_error"}}',
)
_f(
    "azure_policy_json_as_content",
    "llm_schema",
    "schema",
    "content",
    "content",
    AZURE_CF,
    text='{"error":"content_policy_violation","message":"The output was withheld by the policy filter."}',
)
_f(
    "args_unknown_keys",
    "llm_schema",
    "schema",
    "tool_calls",
    "args_schema",
    CHAT,
    args={"query": "open items", "limit": 25},
)
_f("args_emptied", "llm_tool_calls", "error", "tool_calls", "args_empty", CHAT)
# finish reasons
_f("azure_finish_content_filter", "llm_finish_reason", "content_filter", "content", "filter", AZURE_CF)
_f("deepseek_finish_content_filter", "llm_finish_reason", "content_filter", "content", "filter", DEEPSEEK)
_f("length_final_summary", "llm_finish_reason", "truncate", "content", "length", CHAT)
_f("length_tool_args", "llm_finish_reason", "truncate", "tool_calls", "length", VLLM)
_f("ollama_length", "llm_finish_reason", "truncate", "content", "length", OLLAMA)
_f("empty_stop", "llm_finish_reason", "empty", "content", "empty", CHAT)
_f("tool_calls_empty_array", "llm_finish_reason", "empty", "tool_calls", "empty_tool_calls", VLLM)
# garbled and repeated answers
_f("mojibake_payee", "llm_corrupt", "corrupt", "tool_calls", "args_mojibake", "https://en.wikipedia.org/wiki/Mojibake")
_f(
    "replacement_chars_id",
    "llm_corrupt",
    "corrupt",
    "tool_calls",
    "args_replacement",
    "https://www.unicode.org/charts/PDF/UFFF0.pdf",
)
_f(
    "symbols_in_args",
    "llm_corrupt",
    "corrupt",
    "tool_calls",
    "args_symbols",
    "https://www.unicode.org/charts/PDF/U2600.pdf",
)
_f(
    "gateway_cache_replay",
    "llm_stale",
    "stale",
    "content",
    "stale",
    "https://developers.cloudflare.com/ai-gateway/features/caching/",
)
# slowness
_f(
    "slow_reply",
    "llm_latency",
    "latency",
    "http",
    "slow",
    "https://docs.vllm.ai/en/latest/serving/metrics.html (queue time)",
)
# streams
_f("stream_cut_no_done", "llm_stream", "stream_cut", "stream", "stream_cut", SSE)
_f("stream_done_without_finish", "llm_stream", "stream_cut", "stream", "stream_done_early", SSE)
_f("stream_only_done", "llm_stream", "stream_cut", "stream", "stream_no_chunks", SSE)
_f(
    "stream_error_event",
    "llm_stream",
    "error",
    "stream",
    "stream_error",
    OPENROUTER,
    body=_err("Provider returned error", "server_error", "502"),
)
_f(
    "stream_error_event_rate",
    "llm_stream",
    "rate_limit",
    "stream",
    "stream_error",
    GROQ,
    body=_err(
        "Rate limit reached for model on requests per minute (RPM): Limit 30, Used 30",
        "requests",
        "rate_limit_exceeded",
    ),
)
_f("stream_length", "llm_stream", "truncate", "stream", "stream_length", SSE)
_f("stream_mojibake", "llm_stream", "corrupt", "stream", "stream_mojibake", SSE)
_f("stream_stall", "llm_stream", "latency", "stream", "stream_stall", SSE)

BY_ID = {f["id"]: f for f in FORMS}
