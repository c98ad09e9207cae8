"""OpenAI-compatible providers and gateways the loopback server imitates, and their failure forms.

Each provider has its base path, model name, response-id shape, extra members and stream quirks as
its public documentation shows them; its forms are the errors, finish reasons and odd replies that
documentation describes. Generic forms (cut streams, dropped connections, slow or stale replies,
garbled arguments) can hit any of them.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from benchmarks.blind.round9.forms import Form


@dataclass(frozen=True)
class Provider:
    name: str
    base_path: str
    model: str
    id_prefix: str
    source: str
    extra: dict[str, Any] = field(default_factory=dict)
    choice_extra: dict[str, Any] = field(default_factory=dict)
    usage_extra: dict[str, Any] = field(default_factory=dict)
    stream_comment: str = ""


PROVIDERS = [
    Provider("openrouter", "/api/v1", "anthropic/claude-3.5-haiku", "gen-", "https://openrouter.ai/docs/api-reference/errors",
             {"provider": "Anthropic"}, {"native_finish_reason": "end_turn"}, {}, ": OPENROUTER PROCESSING"),
    Provider("deepseek", "", "deepseek-chat", "", "https://api-docs.deepseek.com/quick_start/error_codes",
             {"system_fingerprint": "fp_3a5770e1b4_prod0820_fp8_kvcache"}, {"logprobs": None},
             {"prompt_cache_hit_tokens": 0, "prompt_cache_miss_tokens": 0}, ": keep-alive"),
    Provider("dashscope", "/compatible-mode/v1", "qwen-plus", "chatcmpl-",
             "https://help.aliyuncs.com/en/model-studio/error-code", {"system_fingerprint": None}, {"logprobs": None}),
    Provider("moonshot", "/v1", "kimi-k2-0905-preview", "chatcmpl-",
             "https://platform.moonshot.ai/docs/api/chat#error-handling", {}, {}, {"cached_tokens": 0}),
    Provider("zhipu", "/api/paas/v4", "glm-4-plus", "", "https://docs.bigmodel.cn/cn/faq/api-code",
             {"request_id": ""}, {}),
    Provider("minimax", "/v1", "MiniMax-Text-01", "", "https://platform.minimax.io/docs/api-reference/errorcode",
             {"base_resp": {"status_code": 0, "status_msg": ""}}, {}),
    Provider("qianfan", "/v2", "ernie-4.0-turbo-8k", "as-", "https://cloud.baidu.com/doc/qianfan-api/s/3m9b5lqft",
             {}, {"flag": 0}),
    Provider("portkey", "/v1", "gpt-4o-mini", "chatcmpl-", "https://portkey.ai/docs/api-reference/inference-api/error-codes",
             {"provider": "openai"}, {}),
    Provider("helicone", "/v1", "gpt-4o-mini", "chatcmpl-", "https://docs.helicone.ai/features/advanced-usage/caching",
             {}, {}),
    Provider("workers_ai", "/client/v4/accounts/3f9d1c0a7b/ai/v1", "@cf/meta/llama-3.3-70b-instruct-fp8-fast",
             "id-", "https://developers.cloudflare.com/workers-ai/platform/errors/", {}, {}),
    Provider("cf_ai_gateway", "/v1/3f9d1c0a7b/frontdesk/compat", "openai/gpt-4o-mini", "chatcmpl-",
             "https://developers.cloudflare.com/ai-gateway/features/caching/", {}, {}),
    Provider("litellm", "", "frontdesk-gpt", "chatcmpl-", "https://docs.litellm.ai/docs/proxy/error_diagnosis",
             {"system_fingerprint": None}, {}),
    Provider("kong", "/openai/v1", "gpt-4o-mini", "chatcmpl-", "https://developer.konghq.com/ai-gateway/", {}, {}),
    Provider("deepinfra", "/v1/openai", "meta-llama/Meta-Llama-3.1-70B-Instruct", "chatcmpl-",
             "https://deepinfra.com/docs/advanced/openai_api", {}, {}, {"estimated_cost": 0.00021}),
    Provider("novita", "/v3/openai", "meta-llama/llama-3.1-70b-instruct", "chatcmpl-",
             "https://novita.ai/docs/guides/llm-api", {}, {}),
    Provider("hyperbolic", "/v1", "meta-llama/Llama-3.3-70B-Instruct", "chatcmpl-",
             "https://docs.hyperbolic.xyz/docs/rest-api", {}, {}),
]
BY_NAME = {p.name: p for p in PROVIDERS}


def _e(message: str, typ: str | None = None, code: Any = None, **more: Any) -> str:
    return json.dumps({"error": {"message": message, "type": typ, "param": None, "code": code, **more}})


def _lf(name: str, provider: str, label: str, target: str, kind: str, body: str = "", status: int = 200,
        finish: str = "", source: str = "") -> Form:
    src = source or (BY_NAME[provider].source if provider else "")
    return Form(name, f"llm_{provider or 'generic'}", label, target, src, kind, body, status, finish=finish,
                provider=provider)


CF_502 = ("<!DOCTYPE html>\n<html><head><title>api.frontdesk.example | 502: Bad gateway</title></head><body>"
          "<div id=\"cf-error-details\"><h1>Bad gateway</h1><span>Error code 502</span><p>Visit cloudflare.com for "
          "more information.</p><span>Cloudflare Ray ID: 8e7b2c1d5a3f9e10</span></div></body></html>")
CF_520 = ("<!DOCTYPE html>\n<html><head><title>520: Web server is returning an unknown error</title></head><body>"
          "<h1>Web server is returning an unknown error</h1><span>Error code 520</span>"
          "<span>Cloudflare Ray ID: 8e7b2c1d5a3f9e11</span></body></html>")
GENERIC = "https://platform.openai.com/docs/guides/error-codes/api-errors"

LLM_FORMS: list[Form] = [
    # OpenRouter
    _lf("openrouter_429", "openrouter", "rate_limit", "http", "http", json.dumps({"error": {
        "code": 429, "message": "Rate limit exceeded: free-models-per-min. ", "metadata": {"headers": {
            "X-RateLimit-Limit": "20", "X-RateLimit-Remaining": "0", "X-RateLimit-Reset": "1765700460000"}}}}), 429),
    _lf("openrouter_502_relayed", "openrouter", "http_error", "http", "http", json.dumps({"error": {
        "code": 502, "message": "Provider returned error", "metadata": {"provider_name": "Anthropic", "raw":
            "{\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}"}}}), 502),
    _lf("openrouter_408", "openrouter", "timeout", "http", "http", json.dumps({"error": {
        "code": 408, "message": "Your request timed out"}}), 408),
    _lf("openrouter_200_error", "openrouter", "error", "content", "body200", json.dumps({"error": {
        "code": 502, "message": "Provider returned error", "metadata": {"provider_name": "Together",
                                                                          "raw": "upstream connect error"}},
        "user_id": "user_2p9XkQ"})),
    _lf("openrouter_stream_error", "openrouter", "error", "stream", "stream_error", json.dumps({"error": {
        "code": "server_error", "message": "Provider disconnected unexpectedly"}}), finish="error"),
    _lf("openrouter_length", "openrouter", "truncate", "content", "finish", finish="length"),
    _lf("openrouter_content_filter", "openrouter", "content_filter", "content", "finish", finish="content_filter"),
    # DeepSeek
    _lf("deepseek_503", "deepseek", "http_error", "http", "http", _e(
        "Server overloaded, please try again later.", "server_busy"), 503),
    _lf("deepseek_429", "deepseek", "rate_limit", "http", "http", _e(
        "Rate Limit Reached", "rate_limit_reached_error"), 429),
    _lf("deepseek_401", "deepseek", "auth", "http", "http", _e(
        "Authentication Fails, Your api key: ****a1b2 is invalid", "authentication_error", "invalid_request_error"),
        401),
    _lf("deepseek_422", "deepseek", "invalid_request", "http", "http", _e(
        "Invalid Parameters: tools[3].function.parameters is not a valid JSON schema", "invalid_request_error"),
        422),
    _lf("deepseek_insufficient_resource", "deepseek", "error", "content", "finish",
        finish="insufficient_system_resource"),
    _lf("deepseek_500", "deepseek", "http_error", "http", "http", _e("Server Error", "api_error"), 500),
    # DashScope (Qwen, compatible mode)
    _lf("dashscope_throttling", "dashscope", "rate_limit", "http", "http", json.dumps({"error": {
        "message": "Requests rate limit exceeded, please try again later.", "type": "Throttling.RateQuota",
        "param": None, "code": "Throttling.RateQuota"}, "request_id": "1ce1e1c7-4f1d-9d6b-8b0d-2f54ec2f33ab"}), 429),
    _lf("dashscope_inspection", "dashscope", "content_filter", "http", "http", json.dumps({"error": {
        "message": "Output data may contain inappropriate content.", "type": "data_inspection_failed",
        "param": None, "code": "data_inspection_failed"}, "request_id": "b1d2"}), 400),
    _lf("dashscope_internal", "dashscope", "http_error", "http", "http", json.dumps({"error": {
        "message": "An error occurred in model serving, error message is: [Internal server error!]",
        "type": "InternalError.Algo", "param": None, "code": "InternalError.Algo"}, "request_id": "c3e4"}), 500),
    _lf("dashscope_invalid", "dashscope", "invalid_request", "http", "http", json.dumps({"error": {
        "message": "Range of input length should be [1, 129024]", "type": "InvalidParameter", "param": None,
        "code": "InvalidParameter"}, "request_id": "d5f6"}), 400),
    # Moonshot / Kimi
    _lf("moonshot_rpm", "moonshot", "rate_limit", "http", "http", _e(
        "Your account org-7c1d request reached organization max RPM: 3, please try again after 1 seconds",
        "rate_limit_reached_error"), 429),
    _lf("moonshot_overloaded", "moonshot", "rate_limit", "http", "http", _e(
        "The engine is currently overloaded, please try again later", "engine_overloaded_error"), 429),
    _lf("moonshot_high_risk", "moonshot", "content_filter", "http", "http", _e(
        "The request was rejected because it was considered high risk", "content_filter"), 400),
    _lf("moonshot_token_limit", "moonshot", "invalid_request", "http", "http", _e(
        "Invalid request: Your request exceeded model token limit: 8192", "invalid_request_error"), 400),
    _lf("moonshot_server_error", "moonshot", "http_error", "http", "http", _e(
        "Internal server error", "server_error"), 500),
    # Zhipu GLM
    _lf("zhipu_sensitive", "zhipu", "content_filter", "content", "finish", finish="sensitive"),
    _lf("zhipu_network_error", "zhipu", "error", "content", "finish", finish="network_error"),
    _lf("zhipu_1302", "zhipu", "rate_limit", "http", "http", json.dumps({"error": {
        "code": "1302", "message": "您当前使用该API的并发数过高，请降低并发，或联系客服增加限额。"}}), 429),
    _lf("zhipu_1000", "zhipu", "auth", "http", "http", json.dumps({"error": {
        "code": "1000", "message": "身份验证失败。"}}), 401),
    _lf("zhipu_500", "zhipu", "http_error", "http", "http", json.dumps({"error": {
        "code": "500", "message": "Internal Error"}}), 500),
    _lf("zhipu_1214", "zhipu", "invalid_request", "http", "http", json.dumps({"error": {
        "code": "1214", "message": "messages[2].content 参数非法。请检查文档。"}}), 400),
    # MiniMax: HTTP 200 with base_resp carrying the status.
    _lf("minimax_1002", "minimax", "rate_limit", "content", "body200", json.dumps({
        "id": "", "choices": None, "base_resp": {"status_code": 1002, "status_msg": "rate limit exceeded(RPM)"}})),
    _lf("minimax_1004", "minimax", "auth", "content", "body200", json.dumps({
        "id": "", "choices": None, "base_resp": {
            "status_code": 1004,
            "status_msg": "login fail: Please carry the API secret key in the 'Authorization' field of the "
                          "request header"}})),
    _lf("minimax_1013", "minimax", "error", "content", "body200", json.dumps({
        "id": "", "choices": None, "base_resp": {"status_code": 1013, "status_msg": "internal service error"}})),
    _lf("minimax_1027", "minimax", "content_filter", "content", "body200", json.dumps({
        "id": "", "choices": None, "base_resp": {"status_code": 1027, "status_msg": "output new_sensitive"}})),
    # Baidu Qianfan
    _lf("qianfan_rpm", "qianfan", "rate_limit", "http", "http", json.dumps({"error": {
        "code": "rpm_rate_limit_exceeded", "message": "Rpm limit exceeded", "type": "rate_limit_exceeded"},
        "id": "as-f6k2m9x1qa"}), 429),
    _lf("qianfan_iam", "qianfan", "auth", "http", "http", json.dumps({"error": {
        "code": "invalid_iam_token", "message": "IAM Certification failed", "type": "invalid_request_error"},
        "id": "as-f6k2m9x1qb"}), 401),
    _lf("qianfan_v1_qps", "qianfan", "rate_limit", "content", "body200", json.dumps({
        "error_code": 18, "error_msg": "Open api qps request limit reached"})),
    _lf("qianfan_v1_retry", "qianfan", "error", "content", "body200", json.dumps({
        "error_code": 336100, "error_msg": "try again later"})),
    # Portkey
    _lf("portkey_request_timeout", "portkey", "timeout", "http", "http", json.dumps({"error": {
        "message": "Request exceeded the timeout sent in the request: 8000ms", "type": "timeout_error",
        "param": None, "code": None}, "provider": "openai"}), 408,
        source="https://portkey.ai/docs/product/ai-gateway/request-timeouts"),
    _lf("portkey_guardrail", "portkey", "content_filter", "http", "http", json.dumps({"error": {
        "message": "The guardrail checks defined in the config failed. You can find more information in the "
                   "`hook_results` object.", "type": "hooks_failed", "param": None, "code": None},
        "hook_results": {"before_request_hooks": [], "after_request_hooks": [{"verdict": False,
                                                                              "id": "pg-pii-d1"}]}}), 446,
        source="https://portkey.ai/docs/product/guardrails"),
    _lf("portkey_502", "portkey", "http_error", "http", "http", json.dumps({"status": "failure",
        "message": "openai error: Bad gateway"}), 502),
    # Helicone: a cached reply served again.
    _lf("helicone_cache_hit", "helicone", "stale", "content", "stale"),
    _lf("helicone_429", "helicone", "rate_limit", "http", "http", json.dumps({
        "error": "Rate limit exceeded", "message": "You have exceeded the rate limit for this policy: 50;w=60"}), 429,
        source="https://docs.helicone.ai/features/advanced-usage/custom-rate-limits"),
    # Cloudflare Workers AI / AI Gateway
    _lf("workers_ai_3040", "workers_ai", "rate_limit", "http", "http", json.dumps({"errors": [{
        "message": "AiError: Capacity temporarily exceeded, please try again. (f1b2c3d4)", "code": 3040}],
        "success": False, "result": None, "messages": []}), 429),
    _lf("workers_ai_3007", "workers_ai", "timeout", "http", "http", json.dumps({"errors": [{
        "message": "AiError: Request timeout", "code": 3007}], "success": False, "result": None}), 408),
    _lf("cloudflare_502_page", "workers_ai", "http_error", "http", "http", CF_502, 502,
        source="https://developers.cloudflare.com/support/troubleshooting/http-status-codes/cloudflare-5xx-errors/"),
    _lf("cloudflare_520_page", "cf_ai_gateway", "http_error", "http", "http", CF_520, 520,
        source="https://developers.cloudflare.com/support/troubleshooting/http-status-codes/cloudflare-5xx-errors/"),
    _lf("cf_gateway_cache_hit", "cf_ai_gateway", "stale", "content", "stale"),
    # LiteLLM proxy
    _lf("litellm_rate", "litellm", "rate_limit", "http", "http", _e(
        "litellm.RateLimitError: AzureException RateLimitError - Requests to the ChatCompletions_Create Operation "
        "under Azure OpenAI API version 2024-10-21 have exceeded call rate limit.", "throttling_error", "429"), 429),
    _lf("litellm_internal", "litellm", "http_error", "http", "http", _e(
        "litellm.InternalServerError: AnthropicException - Overloaded. Handle with "
        "`litellm.InternalServerError`.", None, "500"), 500),
    _lf("litellm_context", "litellm", "invalid_request", "http", "http", _e(
        "litellm.ContextWindowExceededError: litellm.BadRequestError: This model's maximum context length is "
        "8192 tokens.", None, "400"), 400),
    _lf("litellm_auth", "litellm", "auth", "http", "http", _e(
        "Authentication Error, Invalid proxy server token passed. valid_token=None.", "auth_error", "401"), 401),
    _lf("litellm_timeout", "litellm", "timeout", "http", "http", _e(
        "litellm.Timeout: APITimeoutError - Request timed out. timeout_value=30.0s", None, "408"), 408),
    # Kong AI Gateway
    _lf("kong_rate", "kong", "rate_limit", "http", "http", json.dumps({"message": "API rate limit exceeded"}), 429,
        source="https://developer.konghq.com/plugins/ai-rate-limiting-advanced/"),
    _lf("kong_upstream_invalid", "kong", "http_error", "http", "http", json.dumps(
        {"message": "An invalid response was received from the upstream server"}), 502),
    _lf("kong_upstream_timeout", "kong", "timeout", "http", "http", json.dumps(
        {"message": "The upstream server is timing out"}), 504),
    _lf("kong_no_key", "kong", "auth", "http", "http", json.dumps({"message": "No API key found in request"}), 401),
    # DeepInfra, Novita, Hyperbolic
    _lf("deepinfra_500", "deepinfra", "http_error", "http", "http", json.dumps({"detail": {
        "error": "Internal server error"}}), 500),
    _lf("deepinfra_429", "deepinfra", "rate_limit", "http", "http", json.dumps({"detail": {
        "error": "Model is overloaded, please try again later"}}), 429,
        source="https://deepinfra.com/docs/advanced/rate-limits"),
    _lf("novita_429", "novita", "rate_limit", "http", "http", json.dumps({"code": 429, "reason":
        "RATE_LIMIT_EXCEEDED", "message": "rate limit exceeded, please try again later", "metadata": {}}), 429,
        source="https://novita.ai/docs/guides/llm-rate-limits"),
    _lf("novita_503", "novita", "http_error", "http", "http", json.dumps({"code": 503, "reason":
        "SERVICE_UNAVAILABLE", "message": "model service is unavailable", "metadata": {}}), 503),
    _lf("hyperbolic_context", "hyperbolic", "invalid_request", "http", "http", json.dumps({"object": "error",
        "message": "This model's maximum context length is 8192 tokens. However, you requested 9021 tokens.",
        "type": "BadRequestError", "param": None, "code": 400}), 400),
    # Generic transport and content forms (any provider).
    _lf("conn_reset_before_reply", "", "connection", "http", "drop", source=GENERIC),
    _lf("read_timeout", "", "timeout", "http", "sleep", source="https://github.com/openai/openai-python#timeouts"),
    _lf("stream_cut_no_done", "", "stream_cut", "stream", "cut",
        source="https://html.spec.whatwg.org/multipage/server-sent-events.html"),
    _lf("stream_cut_mid_event", "", "stream_cut", "stream", "cut_mid",
        source="https://html.spec.whatwg.org/multipage/server-sent-events.html"),
    _lf("args_cut_length", "", "truncate", "tool_calls", "args_cut", finish="length",
        source="https://platform.openai.com/docs/api-reference/chat/object"),
    _lf("content_length_stop", "", "truncate", "content", "finish", finish="length",
        source="https://platform.openai.com/docs/api-reference/chat/object"),
    _lf("args_replacement_chars", "", "corrupt", "tool_calls", "corrupt",
        source="https://www.unicode.org/charts/PDF/UFFF0.pdf"),
    _lf("args_stray_symbols", "", "corrupt", "tool_calls", "corrupt_text",
        source="https://www.unicode.org/charts/PDF/U2600.pdf"),
    _lf("empty_reply", "", "empty", "content", "empty", source="https://platform.openai.com/docs/api-reference/chat/object"),
    _lf("stale_repeat", "", "stale", "content", "stale", source="https://docs.helicone.ai/features/advanced-usage/caching"),
    _lf("error_object_as_content", "", "schema", "content", "schema_content",
        source="https://openrouter.ai/docs/api-reference/errors"),
    _lf("args_unknown_keys", "", "schema", "tool_calls", "schema_args",
        source="https://platform.openai.com/docs/guides/function-calling"),
    _lf("args_emptied", "", "error", "tool_calls", "args_empty",
        source="https://platform.openai.com/docs/guides/function-calling"),
    _lf("slow_reply_past_deadline", "", "latency", "http", "slow", source=GENERIC),
]
