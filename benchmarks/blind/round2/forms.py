"""The failure forms: how real vendors, gateways, back ends and runtimes publish their errors.

Each form names the label it takes under docs/taxonomy.md, the side it hits, the family of systems it imitates,
the system and a public source for the shape. Bodies are written the way those systems emit them; free text is
our own wording. Placeholders in bodies: ``{rid}`` a request id, ``{model}`` the requested model, ``{svc}``,
``{tool}``, ``{host}`` filled per call.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Form:
    name: str
    side: str            # "llm" or "tool"
    label: str
    target: str          # content | tool_calls | http | stream | tool_result
    family: str
    system: str
    source: str
    kind: str
    provider: str = "both"          # llm: openai | anthropic | both
    needs: str = "any"              # llm: any | call | final ; tool: tools listed below
    tools: tuple[str, ...] = ()     # tool forms: the tools whose back end can answer this way
    transport: str = "both"         # tool forms: plain | mcp | both
    executes: bool = False          # tool forms on mutating tools: the effect happened before the answer
    params: dict[str, Any] = field(default_factory=dict)
    note: str = ""


L: list[Form] = []
T: list[Form] = []


def llm(name: str, label: str, target: str, family: str, system: str, source: str, kind: str, **kw: Any) -> None:
    L.append(Form(name, "llm", label, target, family, system, source, kind, **kw))


def tool(name: str, label: str, family: str, system: str, source: str, kind: str, tools: tuple[str, ...],
         **kw: Any) -> None:
    T.append(Form(name, "tool", label, "tool_result", family, system, source, kind, tools=tools, **kw))


ANY_TOOL = ("list_alerts", "get_service_status", "query_metrics", "search_logs", "get_runbook", "get_oncall",
            "restart_service", "scale_service", "rollback_deploy", "page_oncall", "create_incident")
READS = ("list_alerts", "get_service_status", "query_metrics", "search_logs", "get_runbook", "get_oncall")
WRITES = ("restart_service", "scale_service", "rollback_deploy", "page_oncall", "create_incident")

# =====================================================================================  LLM: HTTP statuses
llm("azure_openai_429_tpm", "rate_limit", "http", "llm-vendor", "Azure OpenAI (Foundry) token-rate 429",
    "https://www.dotnetstudioai.com/hospital/fix-429-rate-limit-exceeded-azure-openai-dotnet", "http",
    provider="openai", params={
        "status": 429, "ctype": "application/json",
        "headers": {"retry-after": "6", "retry-after-ms": "{retry_ms}", "x-ratelimit-remaining-tokens": "0",
                    "x-ratelimit-remaining-requests": "14", "apim-request-id": "{rid}"},
        "body": {"error": {"code": "429", "message": (
            "Requests to the ChatCompletions_Create Operation under Azure OpenAI API version 2024-10-21 have "
            "exceeded token rate limit of your current OpenAI S0 pricing tier. Please retry after 6 seconds. "
            "Please go here: https://aka.ms/oai/quotaincrease if you would like to further increase the default "
            "rate limit.")}}})
llm("deepseek_402_balance", "rate_limit", "http", "llm-vendor", "DeepSeek 402 Insufficient Balance",
    "https://api-docs.deepseek.com/quick_start/error_codes", "http", provider="openai",
    note="402 is not in the taxonomy's status list; an exhausted balance is 'over quota' (rate_limit), as "
         "OpenAI's insufficient_quota 429 is.",
    params={"status": 402, "ctype": "application/json", "headers": {"x-ds-trace-id": "{rid}"},
            "body": {"error": {"message": "Insufficient Balance", "type": "unknown_error", "param": None,
                               "code": "invalid_request_error"}}})
llm("deepseek_503_overloaded", "http_error", "http", "llm-vendor", "DeepSeek 503 Server Overloaded",
    "https://api-docs.deepseek.com/quick_start/error_codes", "http", provider="openai",
    params={"status": 503, "ctype": "application/json", "headers": {"x-ds-trace-id": "{rid}"},
            "body": {"error": {"message": "Server overloaded, please retry shortly.", "type": "server_error",
                               "param": None, "code": "server_overloaded"}}})
llm("ollama_404_model", "not_found", "http", "local-inference", "Ollama OpenAI-compatible endpoint, model not pulled",
    "https://github.com/netease-youdao/QAnything/issues/555", "http", provider="openai",
    params={"status": 404, "ctype": "application/json", "headers": {},
            "body": {"error": {"message": 'model "{model}" not found, try pulling it first', "type": "api_error",
                               "param": None, "code": None}}})
llm("llamacpp_400_context", "invalid_request", "http", "local-inference",
    "llama.cpp llama-server exceed_context_size_error", "https://github.com/ggml-org/llama.cpp/issues/19774",
    "http", provider="openai",
    params={"status": 400, "ctype": "application/json; charset=utf-8", "headers": {"server": "llama.cpp"},
            "body": {"error": {"code": 400, "message": "request (9214 tokens) exceeds the available context size "
                               "(8192 tokens), try increasing it", "type": "exceed_context_size_error",
                               "n_prompt_tokens": 9214, "n_ctx": 8192}}})
llm("llamacpp_503_loading", "http_error", "http", "local-inference", "llama.cpp llama-server still loading the model",
    "https://github.com/mostlygeek/llama-swap/issues/146", "http", provider="openai",
    params={"status": 503, "ctype": "application/json; charset=utf-8", "headers": {"server": "llama.cpp"},
            "body": {"error": {"code": 503, "message": "Loading model", "type": "unavailable_error"}}})
llm("vllm_500_internal", "http_error", "http", "local-inference", "vLLM OpenAI server ErrorResponse 500",
    "https://github.com/block/goose/pull/8031", "http", provider="openai",
    params={"status": 500, "ctype": "application/json", "headers": {},
            "body": {"object": "error", "message": "EngineCore encountered an issue. See stack trace for the "
                     "root cause.", "type": "InternalServerError", "param": None, "code": 500}})
llm("mistral_401", "auth", "http", "llm-vendor", "Mistral La Plateforme 401 Unauthorized",
    "https://docs.mistral.ai/api/", "http",
    provider="openai",
    params={"status": 401, "ctype": "application/json", "headers": {"x-kong-request-id": "{rid}"},
            "body": {"message": "Unauthorized", "request_id": "{rid}"}})
llm("gemini_compat_429_list", "rate_limit", "http", "llm-vendor",
    "Gemini/Vertex OpenAI-compatibility 429 RESOURCE_EXHAUSTED (error wrapped in a list)",
    "https://ai.google.dev/gemini-api/docs/troubleshooting",
    "http", provider="openai",
    params={"status": 429, "ctype": "application/json; charset=UTF-8", "headers": {},
            "body": [{"error": {"code": 429, "message": "Resource exhausted. Please try again later. Please refer "
                                "to https://cloud.google.com/vertex-ai/generative-ai/docs/error-code-429 for more "
                                "details.", "status": "RESOURCE_EXHAUSTED"}}]})
llm("kong_429", "rate_limit", "http", "api-gateway", "Kong Gateway rate-limiting plugin",
    "https://developer.konghq.com/plugins/rate-limiting/", "http",
    params={"status": 429, "ctype": "application/json; charset=utf-8",
            "headers": {"x-ratelimit-limit-minute": "60", "x-ratelimit-remaining-minute": "0",
                        "ratelimit-limit": "60", "ratelimit-remaining": "0", "ratelimit-reset": "17",
                        "retry-after": "17", "x-kong-response-latency": "0", "server": "kong/3.7.1"},
            "body": {"message": "API rate limit exceeded", "request_id": "{rid}"}})
llm("kong_502_upstream", "http_error", "http", "api-gateway", "Kong Gateway invalid upstream response",
    "https://github.com/Kong/kong/issues/4661", "http",
    params={"status": 502, "ctype": "application/json; charset=utf-8",
            "headers": {"server": "kong/3.7.1", "x-kong-response-latency": "2"},
            "body": {"message": "An invalid response was received from the upstream server", "request_id": "{rid}"}})
llm("apigee_504_target_timeout", "timeout", "http", "api-gateway", "Apigee X TARGET_READ_TIMEOUT",
    "https://cloud.google.com/apigee/docs/api-platform/troubleshoot/playbooks/runtime/504-target-read-timeout?hl=de",
    "http", params={"status": 504, "ctype": "application/json", "headers": {},
                    "body": {"fault": {"faultstring": "Gateway Timeout", "detail": {
                        "errorcode": "messaging.adaptors.http.flow.GatewayTimeout", "reason": "TARGET_READ_TIMEOUT"}}}})
llm("aws_apigw_504", "timeout", "http", "api-gateway", "Amazon API Gateway integration timeout",
    "https://repost.aws/knowledge-center/api-gateway-504-errors", "http",
    params={"status": 504, "ctype": "application/json",
            "headers": {"x-amzn-requestid": "{rid}", "x-amzn-errortype": "InternalServerErrorException"},
            "body": {"message": "Endpoint request timed out"}})
llm("aws_apigw_403", "auth", "http", "api-gateway", "Amazon API Gateway 403 (API key / authorizer refusal)",
    "https://repost.aws/knowledge-center/api-gateway-troubleshoot-403-forbidden", "http",
    params={"status": 403, "ctype": "application/json",
            "headers": {"x-amzn-requestid": "{rid}", "x-amzn-errortype": "ForbiddenException"},
            "body": {"message": "Forbidden"}})
llm("haproxy_503_html", "http_error", "http", "load-balancer", "HAProxy built-in 503 page (no backend up)",
    "https://www.simplified.guide/haproxy/http-503-troubleshoot-backend-errors", "http",
    params={"status": 503, "ctype": "text/html", "headers": {"cache-control": "no-cache"},
            "body": "<html><body><h1>503 Service Unavailable</h1>\nNo server is available to handle this request.\n"
                    "</body></html>\n"})
llm("envoy_503_reset", "http_error", "http", "service-mesh", "Envoy/Istio 503 upstream reset before headers",
    "https://github.com/envoyproxy/envoy/issues/24812", "http",
    note="The text says the upstream connection failed, but the model API answered with a 5xx status: "
         "http_error by the status rule (a connection label needs no conversation with the API at all).",
    params={"status": 503, "ctype": "text/plain", "headers": {"server": "envoy", "x-envoy-upstream-service-time": "3"},
            "body": "upstream connect error or disconnect/reset before headers. reset reason: connection failure"})
llm("envoy_429_local", "rate_limit", "http", "service-mesh", "Envoy local rate limit filter",
    "https://www.envoyproxy.io/docs/envoy/v1.17.2/configuration/http/http_filters/local_rate_limit_filter", "http",
    params={"status": 429, "ctype": "text/plain", "headers": {"server": "envoy", "x-envoy-ratelimited": "true",
                                                              "x-local-rate-limit": "true"},
            "body": "local_rate_limited"})
llm("traefik_502", "http_error", "http", "load-balancer", "Traefik proxy 502 Bad Gateway",
    "https://doc.traefik.io/traefik/routing/services/", "http",
    params={"status": 502, "ctype": "text/plain; charset=utf-8", "headers": {}, "body": "Bad Gateway"})
llm("gfe_502_html", "http_error", "http", "load-balancer", "Google Front End 502 error page",
    "https://github.com/OpenYiff/Kemono/issues/48", "http",
    params={"status": 502, "ctype": "text/html; charset=UTF-8", "headers": {"server": "GFE/2.0"},
            "body": "<!DOCTYPE html>\n<html lang=en>\n  <meta charset=utf-8>\n  <title>Error 502 (Server Error)!!1"
                    "</title>\n  <p><b>502.</b> <ins>That's an error.</ins>\n  <p>The server encountered a temporary "
                    "error and could not complete your request.<p>Please try again in 30 seconds.  <ins>That's all "
                    "we know.</ins>\n"})
llm("nginx_504_html", "timeout", "http", "load-balancer", "nginx 504 Gateway Time-out page",
    "https://docs.apigee.com/api-platform/troubleshoot/runtime/504-gateway-timeout-router-timing-out.md.txt", "http",
    params={"status": 504, "ctype": "text/html", "headers": {"server": "nginx/1.25.4"},
            "body": "<html>\r\n<head><title>504 Gateway Time-out</title></head>\r\n<body>\r\n<center><h1>504 Gateway "
                    "Time-out</h1></center>\r\n<hr><center>nginx/1.25.4</center>\r\n</body>\r\n</html>\r\n"})
llm("azure_400_content_filter", "content_filter", "http", "llm-vendor", "Azure OpenAI prompt filtered (400)",
    "https://www.developersdigest.tech/errors/api/azure-openai/400-content-filter", "http", provider="openai",
    note="HTTP 400, but the body says a content filter blocked it: content_filter, the more specific meaning.",
    params={"status": 400, "ctype": "application/json", "headers": {"apim-request-id": "{rid}"},
            "body": {"error": {"message": "The response was filtered due to the prompt triggering Azure OpenAI's "
                               "content management policy. Please modify your prompt and retry.", "type": None,
                               "param": "prompt", "code": "content_filter", "status": 400, "innererror": {
                                   "code": "ResponsibleAIPolicyViolation", "content_filter_result": {
                                       "hate": {"filtered": False, "severity": "safe"},
                                       "jailbreak": {"filtered": True, "detected": True},
                                       "self_harm": {"filtered": False, "severity": "safe"},
                                       "sexual": {"filtered": False, "severity": "safe"},
                                       "violence": {"filtered": True, "severity": "medium"}}}}}})

# Anthropic Messages API statuses
ANTH_ERR = "https://platform.claude.com/docs/en/api/errors"
for _n, _st, _typ, _msg, _lab, _hdr in [
    ("anthropic_529_overloaded", 529, "overloaded_error", "Overloaded", "http_error", {}),
    ("anthropic_429_rate_limit", 429, "rate_limit_error", "This request would exceed the rate limit for your "
     "organization of 50,000 input tokens per minute. For details, refer to: https://docs.claude.com/en/api/rate-"
     "limits. You can see the response headers for current usage.", "rate_limit",
     {"retry-after": "{retry_s}", "anthropic-ratelimit-input-tokens-limit": "50000",
      "anthropic-ratelimit-input-tokens-remaining": "0",
      "anthropic-ratelimit-input-tokens-reset": "2026-03-29T10:01:00Z"}),
    ("anthropic_401_auth", 401, "authentication_error", "invalid x-api-key", "auth", {}),
    ("anthropic_403_permission", 403, "permission_error", "Your API key does not have permission to use the "
     "specified resource.", "auth", {}),
    ("anthropic_404_model", 404, "not_found_error", "model: {model}", "not_found", {}),
    ("anthropic_400_prompt_too_long", 400, "invalid_request_error", "prompt is too long: 204118 tokens > 200000 "
     "maximum", "invalid_request", {}),
    ("anthropic_413_too_large", 413, "request_too_large", "Request exceeds the maximum allowed number of bytes.",
     "invalid_request", {}),
    ("anthropic_500_api_error", 500, "api_error", "Internal server error", "http_error", {}),
    ("anthropic_504_timeout_error", 504, "timeout_error", "Request timed out", "timeout", {}),
]:
    llm(_n, _lab, "http", "llm-vendor", f"Anthropic Messages API {_st} {_typ}", ANTH_ERR, "http",
        provider="anthropic",
        note="413 is not in the taxonomy's status list: the API rejected the call as invalid (invalid_request)."
        if _st == 413 else "",
        params={"status": _st, "ctype": "application/json",
                "headers": {"request-id": "{rid}", "x-should-retry": "true" if _st >= 500 or _st == 429 else "false",
                            **_hdr},
                "body": {"type": "error", "error": {"type": _typ, "message": _msg}, "request_id": "{rid}"}})

# =====================================================================================  LLM: transport
llm("conn_reset", "connection", "http", "transport", "TCP reset by an idle-timeout middlebox (ECONNRESET)",
    "https://dev-error-db.com/categories/anthropic-api/", "reset")
llm("server_disconnect", "connection", "http", "transport", "Upstream closed the keep-alive connection before "
    "answering (httpx RemoteProtocolError)", "https://github.com/envoyproxy/envoy/issues/2853", "disconnect")
llm("client_read_timeout", "timeout", "http", "transport", "No answer within the SDK's timeout (APITimeoutError)",
    "https://www.smplogs.com/patterns/apigateway/integration-timeout", "hang", params={"delay": 5.0})
llm("slow_answer", "latency", "http", "transport", "A complete answer that took far longer than the others",
    "https://docs.llmgateway.io/troubleshooting/anthropic-529-overloaded", "slow", params={"delay": 2.6})

# =====================================================================================  LLM: bodies (200)
llm("finish_length_text", "truncate", "content", "stop-reason", "OpenAI-compatible finish_reason=length",
    "https://github.com/openai/openai-python/commit/f10c757d831d90407ba47b4659d9cd34b1a35b1d", "truncate_text",
    provider="openai", needs="final")
llm("finish_length_args", "truncate", "tool_calls", "stop-reason",
    "OpenAI-compatible finish_reason=length inside tool-call arguments",
    "https://github.com/openai/openai-python/commit/f10c757d831d90407ba47b4659d9cd34b1a35b1d", "truncate_args",
    provider="openai", needs="call")
llm("mistral_model_length", "truncate", "content", "stop-reason", "Mistral finish_reason=model_length",
    "https://docs.rs/crate/mistral-openapi-client/latest/source/src/models/chat_completion_choice.rs",
    "truncate_text", provider="openai", needs="final", params={"finish": "model_length"})
llm("anthropic_max_tokens", "truncate", "content", "stop-reason", "Anthropic stop_reason=max_tokens",
    "https://dev.to/gabrielanhaia/anthropic-stop-reasons-in-production-5-cases-that-need-different-reactions-5h49",
    "truncate_text", provider="anthropic", needs="final")
llm("anthropic_max_tokens_tool_use", "truncate", "tool_calls", "stop-reason",
    "Anthropic stop_reason=max_tokens with an incomplete tool_use block",
    "https://github.com/google/adk-python/issues/5394", "truncate_args", provider="anthropic", needs="call")
llm("anthropic_context_window_exceeded", "truncate", "content", "stop-reason",
    "Anthropic stop_reason=model_context_window_exceeded",
    "https://app.unpkg.com/@ai-sdk/anthropic@3.0.58/files/src/map-anthropic-stop-reason.ts", "truncate_text",
    provider="anthropic", needs="final", params={"finish": "model_context_window_exceeded"})
llm("azure_finish_content_filter", "content_filter", "content", "safety-filter",
    "Azure OpenAI completion filtered: finish_reason=content_filter, no content",
    "https://www.developersdigest.tech/errors/api/azure-openai/200-finish-reason-content-filter", "filter",
    provider="openai")
llm("anthropic_refusal", "content_filter", "content", "safety-filter", "Anthropic stop_reason=refusal",
    "https://github.com/AgentWorkforce/burn/issues/437", "filter", provider="anthropic",
    params={"finish": "refusal"})
llm("bedrock_guardrail_passthrough", "content_filter", "content", "safety-filter",
    "Bedrock guardrail intervention passed through a Messages-API proxy (stop_reason=guardrail_intervened)",
    "https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_MessageStopEvent.html", "filter",
    provider="anthropic", params={"finish": "guardrail_intervened",
                                  "text": "Sorry, the model cannot answer this question."})
llm("empty_stop", "empty", "content", "empty-answer", "OpenAI-compatible: content '' with finish_reason=stop",
    "https://dev.to/mohammadhasankaman/why-is-my-llm-stream-empty-a-field-guide-to-broken-sse-responses-4l0k",
    "empty", provider="openai")
llm("anthropic_empty_end_turn", "empty", "content", "empty-answer", "Anthropic end_turn with an empty content list",
    "https://dev.to/gabrielanhaia/anthropic-stop-reasons-in-production-5-cases-that-need-different-reactions-5h49",
    "empty", provider="anthropic")
llm("proxy_mojibake", "corrupt", "content", "transit-corruption",
    "A re-encoding proxy decoding UTF-8 as Windows-1252", "https://github.com/continuedev/continue/issues/12713",
    "mojibake", needs="final")
llm("replacement_chars_args", "corrupt", "tool_calls", "transit-corruption",
    "U+FFFD replacement characters in tool-call arguments after a lossy transcoding hop",
    "https://github.com/continuedev/continue/issues/12713", "replacement_args", needs="call")
llm("symbol_noise_args", "corrupt", "tool_calls", "transit-corruption",
    "Random symbols inside argument strings from a buggy streaming re-assembler",
    "https://github.com/block/goose/pull/8031", "symbols_args", needs="call")
llm("cache_replay", "stale", "content", "cache", "A response cache keyed too coarsely replays the previous answer",
    "https://dev-error-db.com/categories/anthropic-api/", "stale", needs="call")
llm("semantic_cache_hit", "wrong_value", "tool_calls", "cache",
    "Semantic cache (e.g. Kong AI Semantic Cache) serving a near-match prompt's tool call",
    "https://developer.konghq.com/mesh/policies/meshratelimit/examples/limit-requests-per-interval/", "wrong_args",
    needs="call")
llm("gateway_error_object_as_content", "schema", "content", "gateway-shape",
    "A gateway that wraps the upstream's error JSON into the assistant message",
    "https://openrouter.ai/docs/errors", "schema_content", needs="any",
    params={"obj": {"error": {"message": "The server had an error while processing your request. Sorry about that!",
                              "type": "server_error", "param": None, "code": None}}})
llm("anthropic_error_json_as_text", "schema", "content", "gateway-shape",
    "A Messages-API proxy that returns the upstream error event as a text block",
    "https://dev-error-db.com/errors/anthropic-api-overloadederror-status-code-200-should-be-529-in-mid-stream-sse-"
    "error-handling/", "schema_content", provider="anthropic",
    params={"obj": {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}})
llm("llama_parameters_wrapper", "schema", "tool_calls", "gateway-shape",
    "Tool-call arguments nested under 'parameters' by an OpenAI-compat translation layer",
    "https://github.com/abi/screenshot-to-code/issues/354", "schema_args", needs="call", params={"wrap": "parameters"})
llm("openrouter_finish_error", "error", "content", "error-in-200",
    "OpenRouter: error emitted in a 200 body, choice finish_reason=error",
    "https://openrouter.ai/docs/errors", "finish_error", provider="openai")
llm("gateway_error_200_no_choices", "error", "content", "error-in-200",
    "OpenAI-compatible relay answering 200 with only an error object", "https://openrouter.ai/docs/api/errors",
    "error_in_200", provider="openai")
llm("deepseek_insufficient_resource", "error", "content", "stop-reason",
    "DeepSeek finish_reason=insufficient_system_resource",
    "https://docs.rs/crate/ds-api/latest/source/src/raw/response/non_streaming/finish_reason.rs", "truncate_text",
    provider="openai", needs="final", params={"finish": "insufficient_system_resource"},
    note="The output is cut, but the finish reason says the provider's system failed: error (a failure of "
         "the other side reported inside a delivered answer), not truncate.")

# =====================================================================================  LLM: streams
llm("sse_cut_no_done", "stream_cut", "stream", "stream", "SSE body ends cleanly without finish_reason or [DONE]",
    "https://github.com/anomalyco/opencode/pull/40061", "stream_cut", provider="openai")
llm("sse_cut_mid_event", "stream_cut", "stream", "stream", "Connection dropped in the middle of a data: line",
    "https://dev-error-db.com/categories/anthropic-api/", "stream_cut_mid")
llm("sse_stall", "stream_cut", "stream", "stream", "Stream stalls between chunks until the read timeout",
    "https://github.com/anomalyco/opencode/pull/40032", "stream_stall", params={"delay": 5.0})
llm("anthropic_no_message_stop", "stream_cut", "stream", "stream",
    "Anthropic SSE ends after content deltas with no message_delta/message_stop",
    "https://github.com/google/adk-python/issues/5394", "stream_cut", provider="anthropic")
llm("openrouter_midstream_error", "error", "stream", "error-in-200",
    "OpenRouter mid-stream error event (HTTP 200 already sent)", "https://openrouter.ai/docs/api-reference/streaming",
    "stream_error", provider="openai",
    params={"obj": {"error": {"code": 502, "message": "Provider returned error",
                              "metadata": {"provider_name": "Fireworks", "raw": "upstream connect error"}}}})
llm("anthropic_midstream_overloaded", "error", "stream", "error-in-200",
    "Anthropic SSE event: error overloaded_error after a 200", ANTH_ERR, "stream_error", provider="anthropic",
    params={"obj": {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}},
    note="Overloaded inside a 200 stream: the other side failed and said so inside a delivered answer (error); "
         "http_error is kept for 5xx statuses.")

# =====================================================================================  TOOL forms
R = "redis.exceptions"
tool("redis_conn_refused", "connection", "datastore", "redis-py ConnectionError (roster cache)",
     "https://redis.readthedocs.io/en/stable/exceptions.html", "raise", ("get_oncall", "page_oncall"),
     params={"exc": (R, "ConnectionError"), "msg": "Error 111 connecting to oncall-cache.internal:6379. "
             "Connection refused."})
tool("redis_oom", "error", "datastore", "Redis OOM error "
  "reply", "https://redis.io/docs/latest/develop/reference/eviction/",
     "text", ("get_oncall", "create_incident", "page_oncall"),
     params={"text": "OOM command not allowed when used memory > 'maxmemory'."})
tool("redis_loading", "error", "datastore", "Redis LOADING reply while the dataset loads",
     "https://redis.readthedocs.io/en/stable/exceptions.html", "raise", ("get_oncall", "list_alerts"),
     params={"exc": (R, "BusyLoadingError"), "msg": "Redis is loading the dataset in memory"})
tool("redis_nil", "empty", "datastore", "Redis GET of an evicted key: nil rendered as null",
     "https://redis.io/docs/latest/commands/get/", "data:null", ("get_oncall", "get_runbook"))
tool("mongo_unauthorized", "auth", "datastore", "MongoDB command error code 13 Unauthorized",
     "https://www.mongodb.com/docs/manual/reference/error-codes/",
     "text", ("get_runbook", "create_incident", "search_logs"),
     params={"json": {"ok": 0, "errmsg": "not authorized on ops to execute command { find: \"runbooks\", filter: "
                      "{ alert: \"{alert}\" }, limit: 1, $db: \"ops\" }", "code": 13, "codeName": "Unauthorized"}})
tool("mongo_dup_key", "invalid_request", "datastore", "MongoDB E11000 duplicate key on insert",
     "https://www.mongodb.com/docs/manual/reference/error-codes/", "text", ("create_incident",),
     params={"json": {"ok": 0, "errmsg": "E11000 duplicate key error collection: ops.incidents index: "
                      "dedupe_key_1 dup key: { dedupe_key: \"{svc}:sev2\" }", "code": 11000,
                      "codeName": "DuplicateKey"}})
tool("cassandra_read_timeout", "timeout", "datastore", "Cassandra/Scylla ReadTimeout (code=1200)",
     "https://github.com/scylladb/scylladb/issues/20235", "raise", ("query_metrics", "list_alerts", "search_logs"),
     params={"exc": ("cassandra", "ReadTimeout"), "msg": "Error from server: code=1200 [Coordinator node timed out "
             "waiting for replica nodes' responses] message=\"Operation timed out - received only 1 responses.\" "
             "info={'consistency': 'QUORUM', 'required_responses': 2, 'received_responses': 1}"})
tool("dynamodb_throughput", "rate_limit", "datastore", "DynamoDB ProvisionedThroughputExceededException",
     "https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Programming.Errors.html", "text",
     ("get_oncall", "create_incident", "get_runbook"),
     params={"json": {"__type": "com.amazonaws.dynamodb.v20120810#ProvisionedThroughputExceededException",
                      "message": "The level of configured provisioned throughput for the table was exceeded. "
                      "Consider increasing your provisioning level with the UpdateTable API."}})
tool("dynamodb_empty_item", "empty", "datastore", "DynamoDB GetItem with no Item: {}",
     "https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_GetItem.html", "data:empty_obj",
     ("get_oncall", "get_runbook", "get_service_status"))
tool("dynamodb_table_missing", "not_found", "datastore", "DynamoDB ResourceNotFoundException",
     "https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Programming.Errors.html", "text",
     ("get_oncall", "get_runbook"),
     params={"json": {"__type": "com.amazonaws.dynamodb.v20120810#ResourceNotFoundException",
                      "message": "Requested resource not found: Table: oncall-roster-2026 not found"}})
tool("es_index_not_found", "not_found", "search-engine", "Elasticsearch index_not_found_exception",
     "https://www.elastic.co/guide/en/elasticsearch/guide/current/empty-search.html", "text",
     ("search_logs", "list_alerts"),
     params={"json": {"error": {"root_cause": [{"type": "index_not_found_exception", "reason": "no such index "
                      "[logs-{svc}-2026.03.29]", "index": "logs-{svc}-2026.03.29"}],
                      "type": "index_not_found_exception",
                      "reason": "no such index [logs-{svc}-2026.03.29]", "index": "logs-{svc}-2026.03.29"},
                      "status": 404}})
tool("es_rejected_429", "rate_limit", "search-engine", "Elasticsearch es_rejected_execution_exception (429)",
     "https://www.elastic.co/pt/guide/en/elasticsearch/reference/7.3/search-search.html", "text",
     ("search_logs", "list_alerts"),
     params={"json": {"error": {"root_cause": [{"type": "es_rejected_execution_exception", "reason": "rejected "
                      "execution of coordinating operation [shard_detail=[logs][2][P], search queue capacity = 1000]"}],
                      "type": "es_rejected_execution_exception", "reason": "rejected execution of coordinating "
                      "operation"}, "status": 429}})
tool("es_timed_out_partial", "truncated", "search-engine", "Elasticsearch partial results: timed_out with shards "
     "failed", "https://docs.rs/flusso-query/latest/flusso_query/struct.SearchResponse.html", "data:es_partial",
     ("search_logs", "list_alerts"))
tool("snowflake_object_missing", "not_found", "warehouse", "Snowflake 002003 (42S02) object does not exist",
     "https://docs.snowflake.com/en/user-guide/dynamic-tables/troubleshoot-permissions", "raise",
     ("search_logs", "query_metrics"),
     note="'does not exist or not authorized' names both; SQLSTATE 42S02 (base table not found) decides: not_found.",
     params={"exc": ("snowflake.connector.errors", "ProgrammingError"), "msg": "002003 (42S02): SQL compilation "
             "error:\nObject 'OPS.PUBLIC.DEPLOY_EVENTS' does not exist or not authorized."})
tool("bigquery_rate_limit_403", "rate_limit", "warehouse", "BigQuery 403 rateLimitExceeded",
     "https://cloud.google.com/bigquery/docs/error-messages",
     "text", ("query_metrics", "search_logs"),
     note="HTTP-like code 403, but the reason is rateLimitExceeded: a text that is an error takes its meaning.",
     params={"json": {"error": {"code": 403, "message": "Exceeded rate limits: too many concurrent queries for this "
                      "project_and_region. For more information, see https://cloud.google.com/bigquery/docs/"
                      "troubleshoot-quotas", "errors": [{"message": "Exceeded rate limits: too many concurrent "
                      "queries for this project_and_region.", "domain": "usageLimits", "reason": "rateLimitExceeded"}],
                      "status": "PERMISSION_DENIED"}}})
tool("prometheus_bad_data", "invalid_request", "observability", "Prometheus HTTP API errorType bad_data",
     "https://blog.csdn.net/xtayfjpk/article/details/103191970", "text", ("query_metrics",),
     params={"json": {"status": "error", "errorType": "bad_data", "error": "invalid parameter \"query\": 1:38: parse "
                      "error: unexpected character inside braces: '\\''"}})
tool("prometheus_timeout", "timeout", "observability", "Prometheus HTTP API errorType timeout",
     "https://cnblogs.com/zhoujinyi/p/11955131.html", "text", ("query_metrics",),
     params={"json": {"status": "error", "errorType": "timeout", "error": "query timed out in expression evaluation"}})
tool("prometheus_empty_vector", "empty", "observability", "Prometheus success with an empty result vector",
     "https://github.com/bingohuang/prometheus-book/blob/master/promql/prometheus-promql-with-http-api.md",
     "data:prom_empty", ("query_metrics",),
     note="The envelope says success but the data is []: nothing came back where data was expected (empty).")
tool("kafka_metadata_timeout", "timeout", "messaging", "kafka-python KafkaTimeoutError",
     "https://kafka-python.readthedocs.io/en/master/apidoc/KafkaProducer.html", "raise",
     ("page_oncall", "create_incident", "list_alerts"),
     params={"exc": ("kafka.errors", "KafkaTimeoutError"), "msg": "KafkaTimeoutError: Failed to update metadata "
             "after 60.0 secs."})
tool("rabbitmq_no_queue", "not_found", "messaging", "RabbitMQ channel close 404 NOT_FOUND",
     "https://www.rabbitmq.com/docs/channels", "raise", ("page_oncall",),
     params={"exc": ("pika.exceptions", "ChannelClosedByBroker"), "msg": "(404, \"NOT_FOUND - no queue "
             "'pager.dispatch.v2' in vhost '/ops'\")"})
tool("nats_no_responders", "connection", "messaging", "NATS request with no responders",
     "https://docs.nats.io/nats-concepts/core-nats/reqreply", "raise", ("restart_service", "scale_service"),
     note="Nobody was there to answer: no conversation with the other side (connection).",
     params={"exc": ("nats.errors", "NoRespondersError"), "msg": "nats: no responders available for request"})
tool("twilio_21211", "invalid_request", "saas-api", "Twilio error 21211 invalid 'To' number",
     "https://www.twilio.com/docs/errors/21211", "text",
     ("page_oncall",),
     params={"json": {"code": 21211, "message": "The 'To' number +1555010{n} is not a valid phone number.",
                      "more_info": "https://www.twilio.com/docs/errors/21211", "status": 400}})
tool("twilio_20429", "rate_limit", "saas-api", "Twilio 20429 Too Many Requests",
     "https://www.twilio.com/docs/errors/20429", "text", ("page_oncall",),
     params={"json": {"code": 20429, "message": "Too Many Requests", "more_info":
                      "https://www.twilio.com/docs/errors/20429", "status": 429}})
tool("slack_ratelimited", "rate_limit", "saas-api", "Slack Web API ok:false ratelimited",
     "https://docs.slack.dev/tools/node-slack-sdk/reference/web-api/interfaces/WebAPIRateLimitedError", "text",
     ("page_oncall", "create_incident"), params={"json": {"ok": False, "error": "ratelimited"}})
tool("slack_channel_not_found", "not_found", "saas-api", "Slack Web API ok:false channel_not_found",
     "https://raw.githubusercontent.com/api-evangelist/slack/refs/heads/main/json-schema/slack-web-error-response-"
     "schema.json", "text", ("page_oncall", "create_incident"),
     params={"json": {"ok": False, "error": "channel_not_found"}})
tool("slack_invalid_auth", "auth", "saas-api", "Slack Web API ok:false invalid_auth",
     "https://docs.rs/crate/archive_bot/latest/source/src/error.rs", "text", ("page_oncall", "create_incident"),
     params={"json": {"ok": False, "error": "invalid_auth"}})
tool("github_secondary_rate_limit", "rate_limit", "saas-api", "GitHub REST secondary rate limit (403)",
     "https://docs.github.com/en/rest/using-the-rest-api/rate-limits-for-the-rest-api",
     "text", ("search_logs", "rollback_deploy"),
     note="HTTP-like 403, but the message says rate limit: rate_limit by meaning.",
     params={"json": {"message": "You have exceeded a secondary rate limit. Please wait a few minutes before you try "
                      "again. If you reach out to GitHub Support for help, please include the request ID "
                      "C5A2:3B1F:9E0D12:A41B77:6627E0F1.", "documentation_url": "https://docs.github.com/rest/"
                      "overview/rate-limits-for-the-rest-api#about-secondary-rate-limits", "status": "403"}})
tool("github_search_incomplete", "truncated", "saas-api", "GitHub search API incomplete_results=true",
     "https://docs.github.com/rest/search/search", "data:incomplete", ("search_logs",))
tool("github_graphql_not_found", "not_found", "saas-api", "GitHub GraphQL NOT_FOUND error with null data",
     "https://docs.github.com/en/graphql/guides/forming-calls-with-graphql", "text", ("search_logs", "rollback_deploy"),
     params={"json": {"data": {"repository": None}, "errors": [{"type": "NOT_FOUND", "path": ["repository"],
                      "locations": [{"line": 2, "column": 3}], "message": "Could not resolve to a Repository with "
                      "the name 'infra/{svc}-deploy'."}]}})
tool("jira_issue_missing", "not_found", "saas-api", "Jira REST 404 errorMessages",
     "https://developer.atlassian.com/cloud/jira/platform/rest/v3/intro/", "text", ("create_incident", "get_runbook"),
     params={"json": {"errorMessages": ["Issue does not exist or you do not have permission to see it."],
                      "errors": {}}})
tool("jira_field_invalid", "invalid_request", "saas-api", "Jira REST 400 field validation errors",
     "https://developer.atlassian.com/cloud/jira/platform/rest/v3/intro/", "text", ("create_incident",),
     params={"json": {"errorMessages": [], "errors": {"priority": "Specify a valid priority id or name.",
                                                      "customfield_10042": "Service must be one of the "
                                                      "catalogued components."}}})
tool("salesforce_invalid_session", "auth", "saas-api", "Salesforce REST INVALID_SESSION_ID",
     "https://developer.salesforce.com/docs/atlas.en-us.api_rest.meta/api_rest/errorcodes.htm",
     "text", ("get_oncall", "create_incident"),
     params={"json": [{"message": "Session expired or invalid", "errorCode": "INVALID_SESSION_ID"}]})
tool("google_401_unauthenticated", "auth", "saas-api", "Google API 401 UNAUTHENTICATED (Calendar on-call rota)",
     "https://cloud.google.com/apis/design/errors", "text", ("get_oncall",),
     params={"json": {"error": {"code": 401, "message": "Request had invalid authentication credentials. Expected "
                      "OAuth 2 access token, login cookie or other valid authentication credential.", "errors": [
                          {"message": "Invalid Credentials", "domain": "global", "reason": "authError",
                           "location": "Authorization", "locationType": "header"}], "status": "UNAUTHENTICATED"}}})
tool("shopify_graphql_throttled", "rate_limit", "saas-api", "GraphQL cost-based THROTTLED error (Shopify shape)",
     "https://shopify.dev/docs/api/usage/rate-limits", "text", ("list_alerts", "get_runbook"),
     params={"json": {"errors": [{"message": "Throttled", "extensions": {"code": "THROTTLED", "documentation":
                      "https://shopify.dev/api/usage/rate-limits"}}], "extensions": {"cost": {
                          "requestedQueryCost": 252, "actualQueryCost": None, "throttleStatus": {
                              "maximumAvailable": 1000.0, "currentlyAvailable": 38, "restoreRate": 50.0}}}}})
tool("grpc_deadline_exceeded", "timeout", "rpc", "grpcio _InactiveRpcError DEADLINE_EXCEEDED",
     "https://grpc.io/docs/guides/error/", "raise",
     ("get_service_status", "restart_service", "scale_service"),
     params={"exc": ("grpc._channel", "_InactiveRpcError"), "msg": "<_InactiveRpcError of RPC that terminated with:"
             "\n\tstatus = StatusCode.DEADLINE_EXCEEDED\n\tdetails = \"Deadline Exceeded\"\n\tdebug_error_string = "
             "\"UNKNOWN:Error received from peer ipv4:10.4.2.17:50051 {grpc_message:\"Deadline Exceeded\", "
             "grpc_status:4, created_time:\"2026-03-29T09:55:02.1+00:00\"}\"\n>"})
tool("grpc_unavailable", "connection", "rpc", "grpcio UNAVAILABLE failed to connect",
     "https://grpc.io/docs/guides/error/", "raise", ("get_service_status", "restart_service"),
     params={"exc": ("grpc._channel", "_InactiveRpcError"), "msg": "<_InactiveRpcError of RPC that terminated with:"
             "\n\tstatus = StatusCode.UNAVAILABLE\n\tdetails = \"failed to connect to all addresses; last error: "
             "UNKNOWN: ipv4:10.4.2.17:50051: Failed to connect to remote host: Connection refused\"\n>"})
tool("grpc_rich_quota", "rate_limit", "rpc", "gRPC RESOURCE_EXHAUSTED with google.rpc ErrorInfo + RetryInfo",
     "https://cloud.google.com/apis/design/errors#error_details", "text", ("get_service_status", "query_metrics"),
     params={"json": {"code": 8, "message": "Quota exceeded for quota metric 'Status reads' and limit 'Status reads "
                      "per minute' of service 'fleet.internal'.", "details": [
                          {"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "RATE_LIMIT_EXCEEDED",
                           "domain": "fleet.internal", "metadata": {"quota_limit_value": "600"}},
                          {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "32s"}]}})
tool("problem_503_maintenance", "error", "http-api", "RFC 9457 problem+json 503",
     "https://www.rfc-editor.org/rfc/rfc9457",
     "text", ("page_oncall", "create_incident", "scale_service"),
     params={"json": {"type": "about:blank", "title": "Service Unavailable", "status": 503,
                      "detail": "The paging backend is in a maintenance window.", "instance": "/v2/pages/{rid}"}})
tool("problem_422_invalid", "invalid_request", "http-api", "RFC 9457 problem+json 422 with invalid-params",
     "https://www.rfc-editor.org/rfc/rfc9457",
     "text", ("page_oncall", "scale_service"),
     params={"json": {"type": "https://pager.example.net/probs/validation", "title": "Your request parameters "
                      "didn't validate.", "status": 422, "invalid-params": [{"name": "urgency", "reason":
                      "must be one of high, low"}]}})
tool("java_socket_timeout", "timeout", "runtime", "JVM java.net.SocketTimeoutException stack trace",
     "https://docs.oracle.com/en/java/javase/21/docs/api/java.base/java/net/SocketTimeoutException.html",
     "text", ("get_runbook", "search_logs", "restart_service"),
     executes=True,
     params={"text": "java.net.SocketTimeoutException: Read timed out\n\tat java.base/sun.nio.ch.NioSocketImpl.timed"
             "Read(NioSocketImpl.java:288)\n\tat java.base/sun.nio.ch.NioSocketImpl.implRead(NioSocketImpl.java:314)"
             "\n\tat java.base/java.net.Socket$SocketInputStream.read(Socket.java:1099)\n\tat org.apache.hc.core5."
             "http.impl.io.SessionInputBufferImpl.fillBuffer(SessionInputBufferImpl.java:149)\n\t... 41 more"})
tool("hikari_pool_timeout", "timeout", "runtime", "HikariCP pool exhaustion SQLTransientConnectionException",
     "https://github.com/brettwooldridge/HikariCP", "text", ("create_incident", "get_runbook"),
     params={"text": "java.sql.SQLTransientConnectionException: HikariPool-1 - Connection is not available, request "
             "timed out after 30000ms (total=20, active=20, idle=0, waiting=13)"})
tool("dotnet_no_such_host", "connection", "runtime", ".NET HttpRequestException: No such host is known",
     "https://learn.microsoft.com/en-us/dotnet/api/system.net.http.httprequestexception",
     "text", ("get_runbook", "get_oncall"),
     params={"text": "System.Net.Http.HttpRequestException: No such host is known. (runbooks.ops.internal:443)\n ---> "
             "System.Net.Sockets.SocketException (11001): No such host is known.\n   at System.Net.Http."
             "ConnectHelper.ConnectAsync(Func`3 callback, DnsEndPoint endPoint, HttpRequestMessage requestMessage, "
             "CancellationToken cancellationToken)\n   --- End of inner exception stack trace ---"})
tool("go_dial_refused", "connection", "runtime", "Go net/http dial tcp connect: connection refused",
     "https://pkg.go.dev/net", "text", ("query_metrics", "get_service_status"),
     params={"text": "Get \"http://metrics-gw.internal:9090/api/v1/query?query=avg_over_time(...)\": dial tcp "
             "10.20.0.14:9090: connect: connection refused"})
tool("go_client_timeout", "timeout", "runtime", "Go net/http Client.Timeout exceeded while awaiting headers",
     "https://pkg.go.dev/net/http#Client", "text",
     ("query_metrics", "scale_service", "get_service_status"), executes=True,
     params={"text": "Post \"http://fleet-api.internal/v1/services/{svc}:scale\": context deadline exceeded "
             "(Client.Timeout exceeded while awaiting headers)"})
tool("node_econnrefused", "connection", "runtime", "Node.js connect ECONNREFUSED error object",
     "https://nodejs.org/api/errors.html#common-system-errors", "text", ("create_incident", "list_alerts"),
     params={"text": "Error: connect ECONNREFUSED 10.0.7.3:5432\n    at TCPConnectWrap.afterConnect [as oncomplete] "
             "(node:net:1607:16) {\n  errno: -111,\n  code: 'ECONNREFUSED',\n  syscall: 'connect',\n  address: "
             "'10.0.7.3',\n  port: 5432\n}"})
tool("ruby_net_read_timeout", "timeout", "runtime", "Ruby "
  "Net::ReadTimeout", "https://docs.ruby-lang.org/en/3.3/Net/ReadTimeout.html",
     "text", ("page_oncall", "get_oncall"), executes=True,
     params={"text": "Net::ReadTimeout: Net::ReadTimeout with #<TCPSocket:(closed)>\n/usr/lib/ruby/3.3.0/net/"
             "protocol.rb:229:in `rbuf_fill'"})
tool("ruby_record_not_found", "not_found", "runtime", "Rails ActiveRecord::RecordNotFound",
     "https://api.rubyonrails.org/classes/ActiveRecord/RecordNotFound.html", "text", ("get_runbook", "get_oncall"),
     params={"text": "ActiveRecord::RecordNotFound: Couldn't find Runbook with 'slug'=\"{alert}\""})
tool("php_pdo_refused", "connection", "runtime", "PHP PDOException SQLSTATE[HY000] [2002] Connection refused",
     "https://www.php.net/manual/en/class.pdoexception.php", "text", ("create_incident", "get_oncall"),
     params={"text": "PHP Fatal error:  Uncaught PDOException: SQLSTATE[HY000] [2002] Connection refused in "
             "/srv/oncall/src/Db.php:41\nStack trace:\n#0 /srv/oncall/src/Db.php(41): PDO->__construct()\n#1 {main}\n"
             "  thrown in /srv/oncall/src/Db.php on line 41"})
tool("elixir_genserver_timeout", "timeout", "runtime", "Elixir GenServer.call exit: time out",
     "https://hexdocs.pm/elixir/GenServer.html#call/3", "text", ("page_oncall",), executes=True,
     params={"text": "** (exit) exited in: GenServer.call(Pager.Dispatcher, {:page, \"{handle}\"}, 5000)\n    ** "
       "(EXIT) "
             "time out\n    (elixir 1.16.2) lib/gen_server.ex:1114: GenServer.call/3"})
tool("rust_panic_permission", "auth", "runtime", "Rust panic on unwrap of Os PermissionDenied",
     "https://doc.rust-lang.org/std/io/enum.ErrorKind.html", "text", ("restart_service", "rollback_deploy"),
     params={"text": "thread 'tokio-runtime-worker' panicked at src/restart.rs:88:41:\ncalled `Result::unwrap()` on an "
             "`Err` value: Os { code: 13, kind: PermissionDenied, message: \"Permission denied\" }\nnote: run with "
             "`RUST_BACKTRACE=1` environment variable to display a backtrace"})
tool("python_zero_division", "error", "runtime", "Python traceback from the tool's own aggregator",
     "https://docs.python.org/3/library/exceptions.html#ZeroDivisionError", "text", ("query_metrics", "list_alerts"),
     params={"text": "Traceback (most recent call last):\n  File \"/app/metrics/agg.py\", line 57, in window_avg\n    "
             "return sum(points) / len(points)\nZeroDivisionError: division by zero"})
tool("winsock_10061", "connection", "os-errno", "Windows WSAECONNREFUSED (WinError 10061)",
     "https://learn.microsoft.com/en-us/windows/win32/winsock/windows-sockets-error-codes-2",
     "raise", ("get_runbook", "search_logs"),
     params={"exc": ("builtins", "ConnectionRefusedError"), "msg": "[WinError 10061] No connection could be made "
             "because the target machine actively refused it"})
tool("winsock_10060", "timeout", "os-errno", "Windows WSAETIMEDOUT (WinError 10060)",
     "https://learn.microsoft.com/en-us/windows/win32/winsock/windows-sockets-error-codes-2",
     "raise", ("get_runbook", "search_logs"),
     note="The connect attempt itself timed out; the text is about a deadline passing with no answer: timeout.",
     params={"exc": ("builtins", "TimeoutError"), "msg": "[WinError 10060] A connection attempt failed because the "
             "connected party did not properly respond after a period of time, or established connection failed "
             "because connected host has failed to respond"})
tool("errno_113", "connection", "os-errno", "Linux EHOSTUNREACH (errno "
  "113)", "https://man7.org/linux/man-pages/man3/errno.3.html",
     "raise", ("restart_service", "query_metrics"),
     params={"exc": ("builtins", "OSError"), "msg": "[Errno 113] No route to host"})
tool("errno_28", "error", "os-errno", "Linux ENOSPC (errno 28) writing the incident file",
     "https://man7.org/linux/man-pages/man3/errno.3.html", "raise", ("create_incident",),
     params={"exc": ("builtins", "OSError"), "msg": "[Errno 28] No space left on device: "
             "'/var/lib/incidents/spool/inc.json.tmp'"})
tool("errno_13", "auth", "os-errno", "Linux EACCES (errno 13) on the deploy "
  "lock", "https://man7.org/linux/man-pages/man3/errno.3.html",
     "raise", ("rollback_deploy", "restart_service"),
     params={"exc": ("builtins", "PermissionError"), "msg": "[Errno 13] Permission denied: '/var/run/deployctl/"
             "{svc}.lock'"})
tool("errno_2", "not_found", "os-errno", "Linux ENOENT (errno 2) reading a runbook file",
     "https://man7.org/linux/man-pages/man3/errno.3.html", "raise", ("get_runbook",),
     params={"exc": ("builtins", "FileNotFoundError"), "msg": "[Errno 2] No such file or directory: "
             "'/etc/runbooks/{alert}.md'"})
tool("s3_no_such_key", "not_found", "object-storage", "Amazon S3 NoSuchKey XML error",
     "https://docs.aws.amazon.com/AmazonS3/latest/API/ErrorResponses.html", "text", ("get_runbook",),
     params={"text": "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>NoSuchKey</Code><Message>The specified "
             "key does not exist.</Message><Key>runbooks/{alert}.json</Key><RequestId>4Q2M8ZJ0R7C1X9VB</RequestId>"
             "<HostId>qjH4s1cS2b8R0kq6v9o1pTtE+0yq2m3n4k5l6p7q8r9s0t1u2v3w4x5y6z7A8B9C0=</HostId></Error>"})
tool("s3_slow_down", "rate_limit", "object-storage", "Amazon S3 503 SlowDown XML error",
     "https://docs.aws.amazon.com/AmazonS3/latest/API/ErrorResponses.html", "text", ("get_runbook",),
     note="A 503 from a tool is error by the code rule, but the text says 'reduce your request rate': rate_limit.",
     params={"text": "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>SlowDown</Code><Message>Please "
       "reduce your "
             "request rate.</Message><RequestId>7TQ2WZ9K1M4PB3XD</RequestId><HostId>aB3dE5fG7hI9jK1lM3nO5pQ7rS9tU1vW"
             "3xY5zA7bC9dE1fG3hI5jK7lM9nO=</HostId></Error>"})
tool("s3_expired_token", "auth", "object-storage", "Amazon S3 ExpiredToken XML error",
     "https://docs.aws.amazon.com/AmazonS3/latest/API/ErrorResponses.html", "text",
     ("get_runbook", "search_logs"),
     params={"text": "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>ExpiredToken</Code><Message>The "
       "provided "
             "token has expired.</Message><Token-0>FwoGZXIvYXdzEJr//////////wEaDL...</Token-0><RequestId>"
             "9ZK2M4Q1B7X3C8VD</RequestId></Error>"})
tool("azure_blob_not_found", "not_found", "object-storage", "Azure Blob Storage BlobNotFound XML",
     "https://learn.microsoft.com/en-us/rest/api/storageservices/blob-service-error-codes", "text", ("get_runbook",),
     params={"text": "\ufeff<?xml version=\"1.0\" encoding=\"utf-8\"?><Error><Code>BlobNotFound</Code><Message>The "
       "specified "
             "blob does not exist.\nRequestId:3f2a9c1e-601e-0042-4b7a-81e3c4000000\nTime:2026-03-29T09:55:12.4417206Z"
             "</Message></Error>"})
tool("gcs_404", "not_found", "object-storage", "Google Cloud Storage JSON API 404 No such object",
     "https://cloud.google.com/storage/docs/json_api/v1/status-codes",
     "text", ("get_runbook",),
     params={"json": {"error": {"code": 404, "message": "No such object: ops-runbooks/{alert}.json", "errors": [
         {"message": "No such object: ops-runbooks/{alert}.json", "domain": "global", "reason": "notFound"}]}}})
tool("ldap_invalid_credentials", "auth", "identity", "LDAP bind 49 invalidCredentials (AD data 52e)",
     "https://ldapwiki.com/wiki/Wiki.jsp?page=Common%20Active%20Directory%20Bind%20Errors", "raise", ("get_oncall",),
     params={"exc": ("ldap3.core.exceptions", "LDAPInvalidCredentialsResult"), "msg": "LDAPInvalidCredentialsResult - "
             "49 - invalidCredentials - None - 80090308: LdapErr: DSID-0C09044E, comment: AcceptSecurityContext "
             "error, data 52e, v4563 - bindResponse - None"})
tool("kerberos_clock_skew", "auth", "identity", "Kerberos KRB_AP_ERR_SKEW from kinit",
     "https://web.mit.edu/kerberos/krb5-latest/doc/admin/troubleshoot.html", "text",
     ("restart_service", "rollback_deploy"),
     params={"text": "kinit: Clock skew too great while getting initial credentials\n(exit status 1)"})
tool("oauth_invalid_grant", "auth", "identity", "OAuth 2.0 token endpoint invalid_grant (RFC 6749 5.2)",
     "https://datatracker.ietf.org/doc/html/rfc6749#section-5.2", "text",
     ("get_oncall", "page_oncall", "search_logs"),
     params={"json": {"error": "invalid_grant", "error_description": "Token has been expired or revoked."}})
tool("oauth_temporarily_unavailable", "error", "identity", "OAuth 2.0 temporarily_unavailable (RFC 6749 4.1.2.1)",
     "https://datatracker.ietf.org/doc/html/rfc6749#section-4.1.2.1", "text",
     ("get_oncall", "page_oncall"),
     params={"json": {"error": "temporarily_unavailable", "error_description": "The authorization server is "
                      "currently unable to handle the request due to maintenance."}})
tool("sso_login_page", "auth", "format-mismatch", "An SSO sign-in HTML page where JSON was expected",
     "https://developer.okta.com/docs/concepts/redirect-vs-embedded/", "text",
     ("get_runbook", "search_logs", "get_oncall"),
     note="Not JSON, but an error in meaning: the session expired and the back end asks to sign in (auth).",
     params={"text": "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>Sign In</title>\n<meta "
             "name=\"robots\" content=\"noindex,nofollow\"></head>\n<body class=\"auth okta-container\">\n<div id=\""
             "signin-container\"><h2>Sign in to ops-portal</h2>\n<form method=\"post\" action=\"/login/do-login\">"
             "<input name=\"username\" type=\"text\"><input name=\"password\" type=\"password\">\n<input "
               "type=\"submit\" "
             "value=\"Sign In\"></form></div>\n<script>var redirectUri = '/oauth2/v1/authorize?client_id=0oa4...';"
             "</script></body></html>"})
tool("nginx_502_tool", "error", "format-mismatch", "nginx 502 Bad Gateway page from the tool's back end",
     "https://github.com/alibaba/tengine/issues/1643", "text", ("query_metrics", "get_service_status", "list_alerts"),
     params={"text": "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway"
             "</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n"})
tool("k8s_status_yaml_not_found", "not_found", "format-mismatch", "Kubernetes Status object (YAML) NotFound",
     "https://kubernetes.io/docs/reference/using-api/api-concepts/", "text",
     ("get_service_status", "scale_service", "restart_service"),
     params={"text": "apiVersion: v1\nkind: Status\nmetadata: {}\nstatus: Failure\nmessage: deployments.apps \"{svc}\" "
             "not found\nreason: NotFound\ndetails:\n  name: {svc}\n  group: apps\n  kind: deployments\ncode: 404\n"})
tool("kubectl_forbidden", "auth", "shell", "kubectl Forbidden (RBAC) on stderr, exit 1",
     "https://kubernetes.io/docs/reference/access-authn-authz/rbac/", "text",
     ("restart_service", "scale_service", "rollback_deploy"),
     params={"json": {"exit_code": 1, "stdout": "", "stderr": "Error from server (Forbidden): deployments.apps "
       "\"{svc}\" "
                      "is forbidden: User \"system:serviceaccount:ops:incident-bot\" cannot patch resource "
                      "\"deployments\" in API group \"apps\" in the namespace \"prod\""}})
tool("kubectl_unauthorized", "auth", "shell", "kubectl 'You must be logged in to the server (Unauthorized)'",
     "https://kubernetes.io/docs/reference/access-authn-authz/authentication/", "text",
     ("restart_service", "rollback_deploy", "get_service_status"),
     params={"json": {"exit_code": 1, "stdout": "", "stderr": "error: You must be logged in to the server "
                      "(Unauthorized)"}})
tool("shell_oom_killed", "error", "shell", "Command killed by the OOM killer (exit 137)",
     "https://kubernetes.io/docs/concepts/workloads/pods/pod-lifecycle/", "text", ("search_logs", "rollback_deploy"),
     params={"json": {"exit_code": 137, "stdout": "", "stderr": "Killed"}})
tool("csv_partial_export", "truncated", "format-mismatch", "CSV export where JSON was expected, flagged as cut",
     "https://42forms-docs.pages.dev/reference/sql-api-errors-troubleshooting/", "data:csv_partial",
     ("search_logs", "list_alerts"),
     note="Not JSON, but data the tool itself flags as incomplete: truncated (never malformed_json).")

# MCP protocol forms
tool("mcp_rpc_internal_error", "error", "mcp-protocol", "MCP JSON-RPC error -32603 Internal error",
     "https://www.jsonrpc.org/specification#error_object", "rpc", ANY_TOOL, transport="mcp",
     params={"code": -32603, "message": "Internal error: tool handler crashed (worker pool exhausted)"})
tool("mcp_rpc_invalid_params", "invalid_request", "mcp-protocol",
     "MCP JSON-RPC error -32602 from a server whose deployed schema drifted",
     "https://www.jsonrpc.org/specification#error_object", "rpc", READS, transport="mcp",
     params={"code": -32602, "message": "Invalid params: unexpected property 'window_minutes'; server schema "
             "version 2026-02 expects 'window'"})
tool("mcp_rpc_resource_not_found", "not_found", "mcp-protocol", "MCP JSON-RPC error -32002 Resource not found",
     "https://modelcontextprotocol.io/specification/2025-06-18/server/resources#error-handling",
     "rpc", ("get_runbook", "search_logs"), transport="mcp",
     params={"code": -32002, "message": "Resource not found", "data": {"uri": "runbook://{alert}"}})
tool("mcp_gateway_429", "rate_limit", "mcp-protocol", "HTTP 429 with Retry-After from a gateway in front of "
     "a Streamable HTTP MCP server",
     "https://www.envoyproxy.io/docs/envoy/v1.17.2/configuration/http/http_filters/local_rate_limit_filter",
     "mcp_http", ANY_TOOL, transport="mcp",
     params={"status": 429, "ctype": "text/plain", "headers": {"retry-after": "20", "x-envoy-ratelimited": "true"},
             "body": "local_rate_limited"})
tool("mcp_gateway_503", "error", "mcp-protocol", "HTTP 503 from the MCP server's load balancer",
     "https://www.simplified.guide/haproxy/http-503-troubleshoot-backend-errors", "mcp_http", ANY_TOOL,
     transport="mcp",
     params={"status": 503, "ctype": "text/html", "headers": {"cache-control": "no-cache"},
             "body": "<html><body><h1>503 Service Unavailable</h1>\nNo server is available to handle this request.\n"
                     "</body></html>\n"})

# data-shape forms
tool("proxy_buffer_cut", "malformed_json", "data-shape", "JSON body cut at a proxy buffer boundary",
     "https://github.com/anomalyco/opencode/pull/40032", "data:cut", READS + ("create_incident", "page_oncall"))
tool("concat_serializer_unbalanced", "malformed_json", "data-shape",
     "Hand-rolled serializer leaving an unbalanced brace", "https://github.com/block/goose/pull/8031",
     "data:unbalanced", READS)
tool("total_count_mismatch", "truncated", "data-shape", "List cut at a page limit, total still counting all",
     "https://kubernetes.io/docs/reference/kubernetes-api/common-definitions/list-meta", "data:half_list",
     ("list_alerts", "search_logs"))
tool("k8s_continue_token", "truncated", "data-shape", "Kubernetes-style list with metadata.continue and "
     "remainingItemCount", "https://kubernetes.io/docs/reference/kubernetes-api/common-definitions/list-meta",
     "data:k8s_continue", ("list_alerts",))
tool("proto3_json_mapping", "key_rename", "data-shape", "proto3 JSON mapping: lowerCamelCase keys, int64 as strings",
     "https://cnblogs.com/itheo/p/14273567.html", "data:proto3",
     ("create_incident", "page_oncall", "restart_service", "rollback_deploy"))
tool("api_v2_field_rename", "key_rename", "data-shape", "Back end upgraded to v2 field names, numbers as strings",
     "https://pub.dev/documentation/ball_protobuf/0.3.0/json_codec/", "data:v2rename",
     ("get_service_status", "query_metrics", "get_oncall", "get_runbook"))
tool("replica_lag_roster", "wrong_value", "data-shape", "Read replica lagging a rota change: last shift's on-call",
     "https://www.postgresql.org/docs/current/hot-standby.html", "data:roster_lag",
     ("get_oncall",))
tool("primary_secondary_swapped", "wrong_value", "data-shape", "Primary and secondary swapped by a rota sync job",
     "https://www.postgresql.org/docs/current/hot-standby.html", "data:swap_roster",
     ("get_oncall",))
tool("adjacent_window_metrics", "wrong_value", "data-shape", "Metric averaged over a neighbouring window",
     "https://prometheus.io/docs/prometheus/latest/querying/api/", "data:shift_numbers", ("query_metrics",))
tool("stale_status_cache", "wrong_value", "data-shape", "Status served from a stale health cache (values of an "
     "earlier, healthy scrape)", "https://kubernetes.io/docs/reference/using-api/api-concepts/", "data:stale_healthy",
     ("get_service_status",))
tool("neighbour_version_ids", "wrong_value", "data-shape", "Deploy log indexer off by one release",
     "https://github.com/elastic/elasticsearch-specification/pull/3674.diff", "data:version_shift", ("search_logs",))
tool("wrong_runbook_entity", "wrong_value", "data-shape", "Runbook CMS returning the neighbouring alert's page",
     "https://www.postgresql.org/docs/current/hot-standby.html", "data:runbook_swap",
     ("get_runbook",))
tool("empty_list_body", "empty", "data-shape", "A proxy answering [] for a list "
  "endpoint", "https://github.com/anomalyco/opencode/pull/40061",
     "data:empty_list", ("list_alerts", "search_logs"))
tool("empty_string_body", "empty", "data-shape", "A 204 No Content rendered as an empty "
  "string", "https://github.com/anomalyco/opencode/pull/40061",
     "data:empty_str", READS)

FORMS: dict[str, Form] = {f.name: f for f in L + T}
assert len(FORMS) == len(L) + len(T), "duplicate form names"
