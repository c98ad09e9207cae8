"""Failure forms: how real providers, gateways and backends publish their errors.

Each form has a taxonomy label, a target, a family, the system it imitates and a public source
(see README.md for the table). LLM forms are rendered by the loopback provider (provider.py)
through a small context API; tool forms turn a tool call into the text the agent is shown.
Wording of free-form messages is ours; structure, codes and headers follow the sources.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass
class Form:
    name: str
    side: str  # "llm" | "tool"
    label: str
    target: str  # content | tool_calls | http | stream | tool_result
    family: str
    system: str  # the system imitated
    source: str
    render: Callable[..., Any]
    when: str = "any"  # llm: any | final | call
    stream: str = "any"  # llm: any | only | never
    sdk_retry: bool = False  # the openai SDK retries this status / error
    tools: tuple[str, ...] | None = None
    executes: bool = False  # tool: the real call ran (and took effect) before the failure was reported
    raises: bool = False  # tool: the tool raises (the agent formats the exception)
    needs: str = ""  # extra requirement: nonascii_final | nonascii_args | id_arg | nonidem | toolturn_before | harness
    absorbable: bool = False  # the scripted model copes with it (benign use only)
    note: str = ""


LLM_FORMS: list[Form] = []
TOOL_FORMS: list[Form] = []


def llm(name, label, target, family, system, source, **kw):
    def deco(fn):
        LLM_FORMS.append(Form(name, "llm", label, target, family, system, source, fn, **kw))
        return fn

    return deco


def tool(name, label, family, system, source, **kw):
    def deco(fn):
        TOOL_FORMS.append(Form(name, "tool", label, "tool_result", family, system, source, fn, **kw))
        return fn

    return deco


def hid(*parts: Any, n: int = 32) -> str:
    return hashlib.sha256(":".join(map(str, parts)).encode()).hexdigest()[:n]


def mojibake(s: str) -> str:
    """UTF-8 bytes re-read as Windows-1252 (Latin-1 where cp1252 has no character)."""
    out = []
    for b in s.encode("utf-8"):
        try:
            out.append(bytes([b]).decode("cp1252"))
        except UnicodeDecodeError:
            out.append(bytes([b]).decode("latin-1"))
    return "".join(out)


NGINX = (
    "<html>\r\n<head><title>{code} {text}</title></head>\r\n<body>\r\n<center><h1>{code} {text}</h1></center>\r\n"
    "<hr><center>nginx/1.25.3</center>\r\n</body>\r\n</html>\r\n"
)
ALB504 = (
    "<html>\r\n<head><title>504 Gateway Time-out</title></head>\r\n<body>\r\n<center><h1>504 Gateway "
    "Time-out</h1></center>\r\n"
    "</body>\r\n</html>\r\n"
)


def cloudflare_page(code: int, title: str, host: str, ray: str) -> str:
    landing = f"https://www.cloudflare.com/5xx-error-landing?utm_source=errorcode_{code}&utm_campaign={host}"
    h1 = "inline-block sm:block sm:mb-2 font-light text-60 lg:text-4xl text-black-dark leading-tight mr-2"
    footer = (
        "cf-error-footer cf-wrapper w-240 lg:w-full py-10 sm:py-4 sm:px-8 mx-auto text-center sm:text-left "
        "border-solid border-0 border-t border-gray-300"
    )
    lines = [
        "<!DOCTYPE html>",
        '<!--[if lt IE 7]> <html class="no-js ie6 oldie" lang="en-US"> <![endif]-->',
        '<!--[if gt IE 8]><!--> <html class="no-js" lang="en-US"> <!--<![endif]-->',
        "<head>",
        f"<title>{host} | {code}: {title}</title>",
        '<meta charset="UTF-8" />',
        '<meta http-equiv="Content-Type" content="text/html; charset=UTF-8" />',
        '<meta name="robots" content="noindex, nofollow" />',
        '<link rel="stylesheet" id="cf_styles-css" href="/cdn-cgi/styles/main.css" />',
        "</head>",
        "<body>",
        '<div id="cf-wrapper">',
        '    <div id="cf-error-details" class="p-0">',
        '        <header class="mx-auto pt-10 lg:pt-6 lg:px-8 w-240 lg:w-full mb-8">',
        f'            <h1 class="{h1}">',
        f'              <span class="inline-block">{title}</span>',
        f'              <span class="code-label">Error code {code}</span>',
        "            </h1>",
        "            <div>",
        f'               Visit <a href="{landing}" target="_blank" rel="noopener noreferrer">cloudflare.com</a>'
        " for more information.",
        "            </div>",
        "        </header>",
        "    </div>",
        f'    <div class="{footer}">',
        '      <p class="text-13">',
        '        <span class="cf-footer-item sm:block sm:mb-1">Cloudflare Ray ID: '
        f'<strong class="font-semibold">{ray}</strong></span>',
        "      </p>",
        "    </div>",
        "</div>",
        "</body>",
        "</html>",
        "",
    ]
    return "\n".join(lines)


# ================================================================================ LLM: HTTP status

U = {
    "openai_rl": "https://github.com/openai/openai-dotnet/issues/404",
    "openai_quota": "https://dev.to/sublynow/your-openai-api-429-is-not-always-a-rate-limit-reading-insufficientquota-by-errorcode-1mbl",
    "azure_429": "https://github.com/langchain-ai/langchain/issues/14339",
    "gemini_429": "https://github.com/n4ze3m/page-assist/issues/406",
    "bedrock_429": "https://github.com/aws-samples/amazon-bedrock-client-for-mac/issues/99",
    "openrouter": "https://openrouter.ai/docs/api/reference/errors-and-debugging",
    "fastllm": "https://github.com/azrtydxb/Fastllm-proxy/issues/28",
    "openai_401": "https://github.com/chatanywhere/GPT_API_free/issues/62",
    "azure_401": "https://github.com/SciSharp/BotSharp/issues/386",
    "gemini_403": "https://github.com/google/generative-ai-docs/issues/356",
    "azure_404": "https://github.com/chatboxai/chatbox/issues/861",
    "ollama_404": "https://github.com/netease-youdao/QAnything/issues/555",
    "openai_codes": "https://community.openai.com/t/create-a-website-chat-bring-me-api-error/968465/4",
    "vllm_ctx": "https://github.com/ogx-ai/ogx/issues/4534",
    "vllm_ctx_code": "https://github.com/vllm-project/vllm/pull/37011",
    "fastapi_422": "https://github.com/microsoft/autogen/issues/1829",
    "openai_500": "https://github.com/BerriAI/liteLLM-proxy/issues/24",
    "nginx_502": "https://github.com/QwenLM/qwen-code/issues/383",
    "envoy_503": "https://github.com/knative-extensions/net-contour/issues/237",
    "anthropic_529": "https://github.com/anthropics/anthropic-sdk-typescript/issues/616",
    "litellm_500": "https://github.com/BerriAI/litellm/issues/2487",
    "cf_524": "https://github.com/anthropics/claude-code/issues/16737",
    "alb_504": "https://www.repost.aws/knowledge-center/eks-http-504-errors",
    "azure_cf400": "https://www.developersdigest.tech/errors/api/azure-openai/400-content-filter",
    "azure_cf200": "https://www.developersdigest.tech/errors/api/azure-openai/200-finish-reason-content-filter",
    "read_timeout": "https://github.com/openai/openai-node/issues/110",
    "disconnect": "https://github.com/aio-libs/aiohttp/issues/394",
    "reset": "https://github.com/openai/openai-python/issues/2065",
    "refused": "https://github.com/rM-self-serve/webinterface-wifi/issues/6",
    "gemini_finish": "https://github.com/epam/ai-dial-adapter-vertexai/issues/85",
    "recitation": "https://github.com/bespokelabsai/curator/issues/261",
    "guardrail": "https://github.com/BerriAI/litellm/issues/13321",
    "len_content": "https://github.com/nexpeakcore/deepseek-harness-pr-review/pull/20",
    "len_args": "https://github.com/XpressAI/xaibo/pull/33",
    "vllm_toolcut": "https://github.com/vllm-project/vllm/issues/58228",
    "gemini_empty": "https://github.com/BerriAI/litellm/pull/24462",
    "owui_null": "https://github.com/open-webui/open-webui/issues/28938",
    "mojibake": "https://github.com/Miosa-osa/OSA/pull/137",
    "fffd": "https://github.com/ggml-org/llama.cpp/issues/4036",
    "hermes": "https://github.com/Eynzof/Hermes-CN-Desktop/issues/554",
    "parameters": "https://github.com/ahwurm/localharness/issues/104",
    "oneapi": "https://github.com/songquanpeng/one-api/issues/817",
    "cache_prefix": "https://github.com/headroomlabs-ai/headroom/pull/2022",
    "cache_semantic": "https://github.com/BerriAI/litellm/issues/12234",
    "crosstalk": "https://openai.com/blog/march-20-chatgpt-outage",
    "or_finish_err": "https://github.com/nodetool-ai/nodetool/pull/5755",
    "latency": "https://github.com/openai/openai-node/issues/89",
    "chunked": "https://github.com/openai/openai-python/issues/2065",
    "nofinish": "https://github.com/earendil-works/pi/issues/8460",
    "midevent": "https://github.com/vercel/ai/issues/19165",
    "stall": "https://github.com/bytedance/deer-flow/issues/1923",
    "stream_err": "https://gitea.wtr.qzz.io/shishantbiswas/coder/raw/commit/e00e85765bce84481d0f7337c5ecc7a86a7d0fcc/aibridge/fixtures/openai/chatcompletions/stream_error.txtar",
}


@llm("openai-429-rpm", "rate_limit", "http", "llm-http", "OpenAI API", U["openai_rl"], sdk_retry=True)
def _(ctx):
    m = ctx.model
    ctx.send_json(
        429,
        {
            "error": {
                "message": f"Rate limit reached for {m} in organization org-k3Yc9QhLwP2vXs1T on requests per min "
                f"(RPM): "
                "Limit 500, Used 500, Requested 1. Please try again in 120ms. Visit "
                "https://platform.openai.com/account/rate-limits to learn more.",
                "type": "requests",
                "param": None,
                "code": "rate_limit_exceeded",
            }
        },
        {
            "x-ratelimit-limit-requests": "500",
            "x-ratelimit-remaining-requests": "0",
            "x-ratelimit-reset-requests": "120ms",
            "retry-after-ms": "30",
        },
    )


@llm("openai-429-tpm", "rate_limit", "http", "llm-http", "OpenAI API", U["openai_rl"], sdk_retry=True)
def _(ctx):
    ctx.send_json(
        429,
        {
            "error": {
                "message": f"Rate limit reached for {ctx.model} in organization org-k3Yc9QhLwP2vXs1T on tokens per "
                f"min (TPM): "
                "Limit 200000, Used 199412, Requested 3127. Please try again in 762ms. Visit "
                "https://platform.openai.com/account/rate-limits to learn more.",
                "type": "tokens",
                "param": None,
                "code": "rate_limit_exceeded",
            }
        },
        {
            "x-ratelimit-limit-tokens": "200000",
            "x-ratelimit-remaining-tokens": "588",
            "x-ratelimit-reset-tokens": "762ms",
            "retry-after-ms": "40",
        },
    )


@llm(
    "openai-429-insufficient-quota",
    "rate_limit",
    "http",
    "llm-http",
    "OpenAI API",
    U["openai_quota"],
    sdk_retry=True,
    note="quota exhausted is 'over quota' in the taxonomy's rate_limit meaning",
)
def _(ctx):
    ctx.send_json(
        429,
        {
            "error": {
                "message": "You exceeded your current quota, please check your plan and billing details. For more "
                "information on this error, read the docs: "
                "https://platform.openai.com/docs/guides/error-codes/api-errors.",
                "type": "insufficient_quota",
                "param": None,
                "code": "insufficient_quota",
            }
        },
        {"retry-after-ms": "25"},
    )


@llm("azure-429-token-rate", "rate_limit", "http", "llm-http", "Azure OpenAI", U["azure_429"], sdk_retry=True)
def _(ctx):
    ctx.send_json(
        429,
        {
            "error": {
                "code": "429",
                "message": "Requests to the ChatCompletions_Create Operation under Azure OpenAI API version "
                "2024-08-01-preview have exceeded "
                "token rate limit of your current OpenAI S0 pricing tier. Please retry after 1 second. Please go "
                "here: "
                "https://aka.ms/oai/quotaincrease if you would like to further increase the default rate limit.",
            }
        },
        {
            "retry-after": "1",
            "retry-after-ms": "45",
            "x-ratelimit-remaining-requests": "0",
            "x-ratelimit-remaining-tokens": "0",
        },
    )


@llm(
    "gemini-compat-429-list",
    "rate_limit",
    "http",
    "llm-http",
    "Gemini OpenAI-compatible endpoint",
    U["gemini_429"],
    sdk_retry=True,
)
def _(ctx):
    ctx.send_json(
        429,
        [
            {
                "error": {
                    "code": 429,
                    "message": "Resource has been exhausted (e.g. check quota).",
                    "status": "RESOURCE_EXHAUSTED",
                }
            }
        ],
    )


@llm(
    "bedrock-429-throttling",
    "rate_limit",
    "http",
    "llm-http",
    "AWS Bedrock behind a pass-through gateway",
    U["bedrock_429"],
    sdk_retry=True,
)
def _(ctx):
    ctx.send_json(
        429,
        {"message": "Too many tokens, please wait before trying again."},
        {
            "x-amzn-ErrorType": "ThrottlingException:http://internal.amazon.com/coral/com.amazon.bedrock/",
            "x-amzn-RequestId": ctx.uuid(),
        },
    )


@llm("openrouter-429-upstream", "rate_limit", "http", "llm-http", "OpenRouter", U["fastllm"], sdk_retry=True)
def _(ctx):
    ctx.send_json(
        429,
        {
            "error": {
                "message": "Provider returned error",
                "code": 429,
                "metadata": {
                    "raw": f"{ctx.model}:free is temporarily rate-limited upstream. Please retry shortly, or add "
                    f"your own key to accumulate your rate limits.",
                    "provider_name": "Chutes",
                },
            }
        },
        {"retry-after-ms": "35"},
    )


@llm("openai-401-invalid-key", "auth", "http", "llm-http", "OpenAI API", U["openai_401"])
def _(ctx):
    ctx.send_json(
        401,
        {
            "error": {
                "message": "Incorrect API key provided: sk-proj-********************************************a1Qz. "
                "You can find your API key at https://platform.openai.com/account/api-keys.",
                "type": "invalid_request_error",
                "param": None,
                "code": "invalid_api_key",
            }
        },
    )


@llm("azure-401-access-denied", "auth", "http", "llm-http", "Azure OpenAI", U["azure_401"])
def _(ctx):
    ctx.send_json(
        401,
        {
            "error": {
                "code": "401",
                "message": "Access denied due to invalid subscription key or wrong API endpoint. "
                "Make sure to provide a valid key for an active subscription and use a correct regional API endpoint "
                "for your resource.",
            }
        },
        {"apim-request-id": ctx.uuid()},
    )


@llm("gemini-compat-403-suspended", "auth", "http", "llm-http", "Gemini OpenAI-compatible endpoint", U["gemini_403"])
def _(ctx):
    key = "AIzaSy" + hid(ctx.run.task_id, "k", n=28)
    ctx.send_json(
        403,
        [
            {
                "error": {
                    "code": 403,
                    "message": f"Permission denied: Consumer 'api_key:{key}' has been suspended.",
                    "status": "PERMISSION_DENIED",
                    "details": [
                        {
                            "@type": "type.googleapis.com/google.rpc.ErrorInfo",
                            "reason": "CONSUMER_SUSPENDED",
                            "domain": "googleapis.com",
                            "metadata": {
                                "service": "generativelanguage.googleapis.com",
                                "consumer": "projects/578829824020",
                            },
                        }
                    ],
                }
            }
        ],
    )


@llm("azure-404-deployment", "not_found", "http", "llm-http", "Azure OpenAI", U["azure_404"])
def _(ctx):
    ctx.send_json(
        404,
        {
            "error": {
                "code": "DeploymentNotFound",
                "message": "The API deployment for this resource does not exist. "
                "If you created the deployment within the last 5 minutes, please wait a moment and try again.",
            }
        },
        {"apim-request-id": ctx.uuid()},
    )


@llm("ollama-404-model", "not_found", "http", "llm-http", "Ollama OpenAI-compatible API", U["ollama_404"])
def _(ctx):
    ctx.send_json(
        404,
        {
            "error": {
                "message": f'model "{ctx.model}" not found, try pulling it first',
                "type": "api_error",
                "param": None,
                "code": None,
            }
        },
    )


@llm("openai-404-model-not-found", "not_found", "http", "llm-http", "OpenAI API", U["openai_codes"])
def _(ctx):
    ctx.send_json(
        404,
        {
            "error": {
                "message": f"The model `{ctx.model}` does not exist or you do not have access to it.",
                "type": "invalid_request_error",
                "param": None,
                "code": "model_not_found",
            }
        },
    )


@llm("vllm-400-context-length", "invalid_request", "http", "llm-http", "vLLM OpenAI-compatible server", U["vllm_ctx"])
def _(ctx):
    n = 8192
    req = n + 200 + ctx.idx * 37
    ctx.send_json(
        400,
        {
            "object": "error",
            "message": f"This model's maximum context length is {n} tokens. However, you requested "
            f"{req} tokens ({req - 1024} in the messages, 1024 in the completion). Please reduce the length of the "
            f"messages or completion.",
            "type": "BadRequestError",
            "param": None,
            "code": 400,
        },
    )


@llm("openai-400-context-length-exceeded", "invalid_request", "http", "llm-http", "OpenAI API", U["vllm_ctx_code"])
def _(ctx):
    ctx.send_json(
        400,
        {
            "error": {
                "message": "This model's maximum context length is 128000 tokens. However, your messages resulted in "
                f"{128000 + 311 + 7 * ctx.idx} tokens (in the messages and the functions). Please reduce the length "
                f"of the messages or functions.",
                "type": "invalid_request_error",
                "param": "messages",
                "code": "context_length_exceeded",
            }
        },
    )


@llm(
    "fastapi-422-none-content",
    "invalid_request",
    "http",
    "llm-http",
    "OpenAI-compatible FastAPI server (pydantic validation)",
    U["fastapi_422"],
    needs="toolturn_before",
)
def _(ctx):
    k = (
        max(i for i, m in enumerate(ctx.body.get("messages", [])) if m.get("role") == "assistant")
        if any(m.get("role") == "assistant" for m in ctx.body.get("messages", []))
        else 2
    )
    ctx.send_json(
        422,
        {
            "detail": [
                {
                    "loc": ["body", "messages", k, "content"],
                    "msg": "none is not an allowed value",
                    "type": "type_error.none.not_allowed",
                }
            ]
        },
        {"server": "uvicorn"},
    )


@llm("openai-500-server-error", "http_error", "http", "llm-http", "OpenAI API", U["openai_500"], sdk_retry=True)
def _(ctx):
    ctx.send_json(
        500,
        {
            "error": {
                "message": "The server had an error while processing your request. Sorry about that!",
                "type": "server_error",
                "param": None,
                "code": None,
            }
        },
    )


@llm(
    "nginx-502-bad-gateway",
    "http_error",
    "http",
    "llm-http",
    "nginx reverse proxy in front of a model server",
    U["nginx_502"],
    sdk_retry=True,
)
def _(ctx):
    ctx.send_bytes(502, NGINX.format(code=502, text="Bad Gateway").encode(), "text/html", {"server": "nginx/1.25.3"})


@llm(
    "envoy-503-upstream-reset",
    "http_error",
    "http",
    "llm-http",
    "Envoy / Istio ingress",
    U["envoy_503"],
    sdk_retry=True,
    note="the text says connection failure but the model API answered with a 503 page: the status table wins "
    "(http_error)",
)
def _(ctx):
    ctx.send_bytes(
        503,
        b"upstream connect error or disconnect/reset before headers. reset reason: connection failure",
        "text/plain",
        {"server": "envoy", "x-envoy-upstream-service-time": "3"},
    )


@llm(
    "anthropic-529-overloaded",
    "http_error",
    "http",
    "llm-http",
    "Anthropic API (OpenAI-compatible route)",
    U["anthropic_529"],
    sdk_retry=True,
)
def _(ctx):
    ctx.send_json(
        529,
        {
            "type": "error",
            "error": {"type": "overloaded_error", "message": "Overloaded"},
            "request_id": "req_" + hid(ctx.run.task_id, ctx.idx, n=24),
        },
        {"x-should-retry": "true", "request-id": "req_" + hid(ctx.run.task_id, ctx.idx, n=24), "server": "cloudflare"},
    )


@llm(
    "litellm-500-no-models",
    "http_error",
    "http",
    "llm-http",
    "LiteLLM proxy (router)",
    U["litellm_500"],
    sdk_retry=True,
)
def _(ctx):
    ctx.send_json(
        500,
        {
            "error": {
                "message": "No models available\n\nTraceback (most recent call last):\n  File "
                '"/usr/local/lib/python3.11/site-packages/litellm/proxy/proxy_server.py", line 3211, in '
                "chat_completion\n    responses = await asyncio.gather(\n  File "
                '"/usr/local/lib/python3.11/site-packages/litellm/router.py", line 534, in acompletion\n  '
                "  raise e\nValueError: No models available",
                "type": None,
                "param": None,
                "code": 500,
            }
        },
        {"x-litellm-version": "1.35.8"},
    )


@llm(
    "cloudflare-524-timeout-page",
    "http_error",
    "http",
    "llm-http",
    "Cloudflare in front of an OpenAI-compatible endpoint",
    U["cf_524"],
    sdk_retry=True,
    note="524 says 'A timeout occurred' but it is a gateway's 5xx page other than 504: http_error per the status table",
)
def _(ctx):
    ray = hid(ctx.run.task_id, ctx.idx, n=16) + "-AMS"
    ctx.send_bytes(
        524,
        cloudflare_page(524, "A timeout occurred", "llm.example-gw.net", ray).encode(),
        "text/html; charset=UTF-8",
        {"server": "cloudflare", "cf-ray": ray},
    )


@llm(
    "alb-504-gateway-timeout",
    "timeout",
    "http",
    "llm-http",
    "AWS Application Load Balancer",
    U["alb_504"],
    sdk_retry=True,
)
def _(ctx):
    ctx.send_bytes(504, ALB504.encode(), "text/html", {"server": "awselb/2.0"})


@llm("openrouter-408-timeout", "timeout", "http", "llm-http", "OpenRouter", U["openrouter"], sdk_retry=True)
def _(ctx):
    ctx.send_json(408, {"error": {"code": 408, "message": "Request timed out waiting for the provider to respond"}})


@llm(
    "azure-400-content-filter",
    "content_filter",
    "http",
    "llm-http",
    "Azure OpenAI (prompt filter)",
    U["azure_cf400"],
    note="a 400 would be invalid_request by the status table, but the body says a policy filter blocked the call; "
    "the more specific meaning is taken",
)
def _(ctx):
    ctx.send_json(
        400,
        {
            "error": {
                "message": "The response was filtered due to the prompt triggering Azure OpenAI's content management "
                "policy. "
                "Please modify your prompt and retry. To learn more about our content filtering policies please read "
                "our documentation: https://go.microsoft.com/fwlink/?linkid=2198766",
                "type": None,
                "param": "prompt",
                "code": "content_filter",
                "status": 400,
                "innererror": {
                    "code": "ResponsibleAIPolicyViolation",
                    "content_filter_result": {
                        "hate": {"filtered": False, "severity": "safe"},
                        "self_harm": {"filtered": False, "severity": "safe"},
                        "sexual": {"filtered": False, "severity": "safe"},
                        "violence": {"filtered": True, "severity": "medium"},
                    },
                },
            }
        },
        {"apim-request-id": ctx.uuid()},
    )


# ================================================================================ LLM: connection level


@llm(
    "client-read-timeout",
    "timeout",
    "http",
    "llm-conn",
    "slow upstream; the client's read timeout fires",
    U["read_timeout"],
    sdk_retry=True,
)
def _(ctx):
    ctx.sleep(ctx.run.client_timeout + 0.6)
    ctx.send_completion(ctx.action)  # too late: the client has gone


@llm(
    "server-disconnect-no-response",
    "connection",
    "http",
    "llm-conn",
    "model server closing the connection (worker restart)",
    U["disconnect"],
    sdk_retry=True,
)
def _(ctx):
    ctx.disconnect()


@llm(
    "tcp-reset",
    "connection",
    "http",
    "llm-conn",
    "load balancer resetting the connection (RST)",
    U["reset"],
    sdk_retry=True,
)
def _(ctx):
    ctx.reset()


@llm(
    "gateway-connection-refused",
    "connection",
    "http",
    "llm-conn",
    "self-hosted gateway process down (nothing listening)",
    U["refused"],
    sdk_retry=True,
    needs="harness",
)
def _(ctx):  # never rendered: the harness stops the gateway before the attempt
    ctx.reset()


# ================================================================================ LLM: body


@llm(
    "azure-finish-content-filter",
    "content_filter",
    "content",
    "llm-body",
    "Azure OpenAI (completion filter)",
    U["azure_cf200"],
)
def _(ctx):
    cfr = {
        "hate": {"filtered": False, "severity": "safe"},
        "self_harm": {"filtered": False, "severity": "safe"},
        "sexual": {"filtered": False, "severity": "safe"},
        "violence": {"filtered": True, "severity": "medium"},
    }
    ctx.send_completion(
        ctx.blank(),
        finish="content_filter",
        choice_extra={"content_filter_results": cfr},
        top_extra={
            "prompt_filter_results": [
                {"prompt_index": 0, "content_filter_results": {k: {"filtered": False, "severity": "safe"} for k in cfr}}
            ]
        },
    )


@llm(
    "gemini-raw-finish-safety",
    "content_filter",
    "content",
    "llm-body",
    "Gemini behind a gateway that forwards the native finishReason",
    U["gemini_finish"],
)
def _(ctx):
    ctx.send_completion(ctx.blank(), finish="SAFETY")


@llm(
    "litellm-recitation-content-filter",
    "content_filter",
    "content",
    "llm-body",
    "LiteLLM proxy over Gemini (RECITATION mapped)",
    U["recitation"],
)
def _(ctx):
    ctx.send_completion(ctx.blank(content=""), finish="content_filter")


@llm(
    "bedrock-guardrail-intervened",
    "content_filter",
    "content",
    "llm-body",
    "AWS Bedrock Guardrails via LiteLLM",
    U["guardrail"],
)
def _(ctx):
    ctx.send_completion(
        ctx.blank(content="Sorry, the model cannot answer this question."), finish="guardrail_intervened"
    )


@llm(
    "finish-length-content",
    "truncate",
    "content",
    "llm-body",
    "any provider: max_tokens reached on the answer",
    U["len_content"],
    when="final",
)
def _(ctx):
    a = ctx.action
    cut = max(6, int(len(a.content) * 0.3))
    ctx.send_completion(ctx.blank(content=a.content[:cut]), finish="length")


@llm(
    "finish-length-tool-args",
    "truncate",
    "tool_calls",
    "llm-body",
    "any provider: max_tokens reached inside tool-call arguments",
    U["len_args"],
    when="call",
)
def _(ctx):
    a = ctx.action_copy()
    tc = a.tool_calls[0]
    tc["arguments"] = tc["arguments"][: max(3, len(tc["arguments"]) // 2)]
    a.tool_calls = a.tool_calls[:1]
    ctx.send_completion(a, finish="length")


@llm(
    "vllm-tool-args-cut-finish-tool-calls",
    "truncate",
    "tool_calls",
    "llm-body",
    "vLLM tool parser (length stop relabelled tool_calls)",
    U["vllm_toolcut"],
    when="call",
)
def _(ctx):
    a = ctx.action_copy()
    tc = a.tool_calls[0]
    tc["arguments"] = tc["arguments"][: max(3, int(len(tc["arguments"]) * 0.6))]
    a.tool_calls = a.tool_calls[:1]
    ctx.send_completion(a, finish="tool_calls")


@llm(
    "empty-stop",
    "empty",
    "content",
    "llm-body",
    "Gemini via OpenAI-compatible layer: STOP with no parts",
    U["gemini_empty"],
)
def _(ctx):
    ctx.send_completion(ctx.blank(content=""), finish="stop")


@llm(
    "open-webui-200-null",
    "empty",
    "content",
    "llm-body",
    "Open WebUI API path swallowing an upstream error",
    U["owui_null"],
    stream="never",
)
def _(ctx):
    ctx.send_bytes(200, b"null", "application/json")


@llm(
    "mojibake-answer",
    "corrupt",
    "content",
    "llm-body",
    "backend re-encoding UTF-8 as Windows-1252",
    U["mojibake"],
    when="final",
    needs="nonascii_final",
)
def _(ctx):
    ctx.send_completion(ctx.blank(content=mojibake(ctx.action.content)), finish="stop")


@llm(
    "fffd-split-multibyte",
    "corrupt",
    "content",
    "llm-body",
    "llama.cpp-style server emitting U+FFFD for split multibyte tokens",
    U["fffd"],
    when="final",
    stream="only",
    needs="nonascii_final",
)
def _(ctx):
    txt = "".join(ch if ord(ch) < 128 else "\ufffd\ufffd" for ch in ctx.action.content)
    ctx.send_completion(ctx.blank(content=txt), finish="stop")


@llm(
    "mojibake-tool-args",
    "corrupt",
    "tool_calls",
    "llm-body",
    "gateway re-encoding UTF-8 tool arguments as Windows-1252",
    U["mojibake"],
    when="call",
    needs="nonascii_args",
)
def _(ctx):
    a = ctx.action_copy()
    for tc in a.tool_calls:
        tc["arguments"] = mojibake(tc["arguments"])
    ctx.send_completion(a)


@llm(
    "hermes-nested-arguments",
    "schema",
    "tool_calls",
    "llm-body",
    "Hermes-style tool parser wrapping the call inside the arguments",
    U["hermes"],
    when="call",
)
def _(ctx):
    a = ctx.action_copy()
    for tc in a.tool_calls:
        tc["arguments"] = json.dumps({"name": tc["name"], "arguments": json.loads(tc["arguments"])}, ensure_ascii=False)
    ctx.send_completion(a)


@llm(
    "parameters-wrapper-arguments",
    "schema",
    "tool_calls",
    "llm-body",
    'tool parser emitting {"parameters": {...}}',
    U["parameters"],
    when="call",
)
def _(ctx):
    a = ctx.action_copy()
    for tc in a.tool_calls:
        tc["arguments"] = json.dumps({"parameters": json.loads(tc["arguments"])}, ensure_ascii=False)
    ctx.send_completion(a)


@llm(
    "error-object-as-content",
    "schema",
    "content",
    "llm-body",
    "relay gateway serialising an upstream error into the message content",
    U["oneapi"],
    when="final",
    note="shape per the taxonomy's 'error or policy object returned as the message content'; no public capture of "
    "this exact body was found",
)
def _(ctx):
    ctx.send_completion(
        ctx.blank(
            content=json.dumps(
                {
                    "error": {
                        "message": "upstream request failed with status 503",
                        "type": "upstream_error",
                        "code": "bad_response_status_code",
                    }
                }
            )
        ),
        finish="stop",
    )


@llm(
    "prefix-keyed-cache-replay",
    "stale",
    "tool_calls",
    "llm-body",
    "response cache keyed by the last user message",
    U["cache_prefix"],
    when="call",
)
def _(ctx):
    ctx.send_stale(0, {"x-cache": "HIT", "x-litellm-cache-key": hid(ctx.run.task_id, "cache", n=40)})


@llm(
    "semantic-cache-replay-previous",
    "stale",
    "tool_calls",
    "llm-body",
    "semantic cache returning the previous answer again",
    U["cache_semantic"],
    needs="nonidem",
)
def _(ctx):
    ctx.send_stale(-1, {"x-cache": "HIT"})


@llm(
    "crosstalk-other-entity-args",
    "wrong_value",
    "tool_calls",
    "llm-body",
    "serving-side cache mix-up delivering another request's answer",
    U["crosstalk"],
    when="call",
    needs="id_arg",
)
def _(ctx):
    a = ctx.action_copy()
    tc = a.tool_calls[0]
    args = json.loads(tc["arguments"])
    for k in ("order_id", "customer_id", "sku"):
        if k in args:
            args[k] = ctx.run.other_id(k, args[k])
            break
    tc["arguments"] = json.dumps(args, ensure_ascii=False)
    ctx.send_completion(a)


@llm(
    "proxy-200-upstream-error",
    "error",
    "content",
    "llm-body",
    "OpenAI-compatible proxy returning upstream failures as HTTP 200",
    U["fastllm"],
)
def _(ctx):
    ctx.send_json(
        200,
        {
            "error": {
                "message": "Upstream error from Together: upstream returned 500 Internal Server Error",
                "code": 502,
            }
        },
    )


@llm(
    "proxy-200-upstream-resource-exhausted",
    "rate_limit",
    "content",
    "llm-body",
    "OpenAI-compatible proxy returning upstream failures as HTTP 200",
    U["fastllm"],
    note="body says ResourceExhausted / request limit reached: the meaning (throttled) wins over the code 502 inside",
)
def _(ctx):
    ctx.send_json(
        200,
        {
            "error": {
                "message": "Upstream error from Nvidia: ResourceExhausted: "
                "Worker local total request limit reached (1)",
                "code": 502,
            }
        },
    )


@llm(
    "openrouter-finish-error",
    "error",
    "content",
    "llm-body",
    "OpenRouter (error inside a 200 choice)",
    U["or_finish_err"],
)
def _(ctx):
    ctx.send_completion(
        ctx.blank(content=""),
        finish="error",
        choice_extra={
            "error": {"code": 502, "message": "Provider returned error", "metadata": {"provider_name": "DeepInfra"}},
            "native_finish_reason": "error",
        },
    )


@llm("slow-response", "latency", "http", "llm-body", "provider latency spike", U["latency"])
def _(ctx):
    ctx.sleep(ctx.run.slow_s)
    ctx.send_completion(ctx.action)


# ================================================================================ LLM: streams


@llm(
    "stream-incomplete-chunked-read",
    "stream_cut",
    "stream",
    "llm-stream",
    "connection dropped mid-stream by an intermediary",
    U["chunked"],
    stream="only",
)
def _(ctx):
    ch = ctx.chunks(ctx.action)
    ctx.sse_begin()
    for c in ch[: max(2, len(ch) // 2)]:
        ctx.sse_chunk(c)
    ctx.abort()


@llm(
    "stream-eof-without-finish",
    "stream_cut",
    "stream",
    "llm-stream",
    "gateway closing the stream cleanly before the final chunk",
    U["nofinish"],
    stream="only",
)
def _(ctx):
    ch = ctx.chunks(ctx.action)
    ctx.sse_begin()
    for c in ch[: max(2, len(ch) // 2)]:
        ctx.sse_chunk(c)
    ctx.sse_end()


@llm(
    "stream-cut-mid-event",
    "stream_cut",
    "stream",
    "llm-stream",
    "stream truncated inside an SSE event",
    U["midevent"],
    stream="only",
)
def _(ctx):
    ch = ctx.chunks(ctx.action)
    ctx.sse_begin()
    k = max(2, len(ch) // 2)
    for c in ch[:k]:
        ctx.sse_chunk(c)
    raw = ("data: " + json.dumps(ch[k] if k < len(ch) else ch[-1])).encode()
    ctx.sse_raw(raw[: len(raw) // 2])
    ctx.sse_end()


@llm(
    "stream-stall",
    "stream_cut",
    "stream",
    "llm-stream",
    "stream stalls; the client's read timeout fires",
    U["stall"],
    stream="only",
)
def _(ctx):
    ch = ctx.chunks(ctx.action)
    ctx.sse_begin()
    for c in ch[: max(2, len(ch) // 3)]:
        ctx.sse_chunk(c)
    ctx.sleep(ctx.run.client_timeout + 0.6)
    ctx.abort()


@llm(
    "stream-server-error-event",
    "error",
    "stream",
    "llm-stream",
    "OpenAI API (error event mid-stream)",
    U["stream_err"],
    stream="only",
)
def _(ctx):
    ch = ctx.chunks(ctx.action)
    ctx.sse_begin()
    for c in ch[: max(2, len(ch) // 2)]:
        ctx.sse_chunk(c)
    ctx.sse_raw(
        b'data: {"error": {"message": "The server had an error while processing your request. Sorry about that!", '
        b'"type": "server_error"}}\n\n'
    )
    ctx.sse_end()


@llm(
    "openrouter-stream-error-429",
    "rate_limit",
    "stream",
    "llm-stream",
    "OpenRouter (error as an SSE data event after HTTP 200)",
    U["openrouter"],
    stream="only",
)
def _(ctx):
    ch = ctx.chunks(ctx.action)
    ctx.sse_begin()
    ctx.sse_raw(b": OPENROUTER PROCESSING\n\n")
    for c in ch[:2]:
        ctx.sse_chunk(c)
    err = dict(ch[0])
    err["choices"] = [{"index": 0, "delta": {"content": ""}, "finish_reason": "error"}]
    err["error"] = {"code": 429, "message": "Rate limit exceeded: free-models-per-min. Retry shortly."}
    ctx.sse_chunk(err)
    ctx.sse_end()


@llm(
    "stream-length-stop",
    "truncate",
    "content",
    "llm-stream",
    "any provider: max_tokens reached while streaming the answer",
    U["len_content"],
    when="final",
    stream="only",
)
def _(ctx):
    a = ctx.action
    ctx.send_completion(ctx.blank(content=a.content[: max(6, int(len(a.content) * 0.3))]), finish="length")


# ================================================================================ tools

T = {
    "pg_timeout": "https://github.com/conbench/conbench/issues/1009",
    "pg_23505": "https://github.com/tgdrive/teldrive/issues/212",
    "pg_42P01": "https://github.com/jackc/pgx/issues/621",
    "supabase": "https://github.com/mckaywrigley/paul-graham-gpt/issues/5",
    "pg_refused": "https://github.com/tines/rails-pg-adapter/pull/15",
    "pg_auth": "https://github.com/tines/rails-pg-adapter/pull/15",
    "mysql_1205": "https://github.com/meetbill/butterfly/issues/4",
    "mysql_codes": "https://github.com/beego/beego/issues/4238",
    "sqlite": "https://github.com/medialab/minet/issues/867",
    "grpc_py": "https://github.com/dgraph-io/pydgraph/issues/126",
    "grpc_go": "https://github.com/etcd-io/etcd/issues/10931",
    "grpc_re": "https://github.com/kolide/launcher/issues/109",
    "grpc_gw": "https://github.com/envoyproxy/envoy/issues/2853",
    "java_sto": "https://github.com/searchbox-io/Jest/issues/476",
    "node_refused": "https://github.com/csfloat/inspect/issues/172",
    "dotnet_dns": "https://github.com/gwdevhub/Daybreak/issues/1042",
    "rust": "https://github.com/emmatyping/apt.cli.rs/issues/9",
    "py_rt": "https://github.com/aristanetworks/cvprac/issues/4",
    "langgraph": "https://github.com/langchain-ai/langgraph/pull/1667",
    "aiohttp": "https://github.com/kiliczsh/sandik/issues/8",
    "go_dns": "https://github.com/cloudfoundry-incubator/kubecf/issues/61",
    "k8s": "https://github.com/kubernetes-client/python/issues/1045",
    "k8s_forbidden": "https://github.com/kubernetes/minikube/issues/5569",
    "dynamo": "https://github.com/brendanhay/amazonka/issues/849",
    "s3": "https://github.com/frostealth/yii2-aws-s3/issues/25",
    "azure_authz": "https://github.com/cloudquery/cloudquery/issues/16133",
    "gcp": "https://github.com/n4ze3m/page-assist/issues/406",
    "soap": "https://github.com/tiaguinho/gosoap/issues/18",
    "soap_client": "https://github.com/KDAB/KDSoap/issues/256",
    "jsonrpc": "https://github.com/godwokenrises/godwoken-web3/pull/20",
    "graphql": "https://github.com/apollographql/apollo-server/issues/3600",
    "graphql_rl": "https://docs.github.com/rest/reference/search",
    "mcp": "https://github.com/lanl/ursa/pull/171",
    "nginx": "https://github.com/judif/mtls-nginx-nodejs-example/issues/3",
    "envoy": "https://github.com/vllm-project/aibrix/issues/1103",
    "rate_json": "https://github.com/Azure-Samples/azure-search-openai-demo/issues/177",
    "cf524": "https://github.com/langgenius/dify/issues/12276",
    "slack": "https://github.com/maxim-mityutko/slack-extendable-bot/issues/1",
    "stripe": "https://github.com/marcinusx/flutter_stripe_demo/issues/4",
    "es_partial": "https://github.com/opensearch-project/OpenSearch/issues/21087",
    "es_rejected": "https://github.com/elastic/elasticsearch/issues/23059",
    "gh_incomplete": "https://docs.github.com/rest/reference/search",
    "cut_json": "https://github.com/philippelt/netatmo-api-python/issues/11",
    "chunk_leak": "https://github.com/honeinc/woden/issues/11",
    "rename": "https://github.com/onetimesecret/onetimesecret/issues/2617",
    "proto3": "https://github.com/tiziano88/elm-protobuf/pull/12",
    "stale_read": "https://docs.amazonaws.cn/en_us/amazondynamodb/latest/developerguide/HowItWorks.ReadConsistency.md",
    "tz": "https://github.com/fbuchner/meerkat-crm/issues/104",
    "owui_null": "https://github.com/open-webui/open-webui/issues/28938",
}


def j(o: Any) -> str:
    return json.dumps(o)


def _id_of(tc) -> str:
    for k in ("order_id", "customer_id", "sku", "name"):
        if k in tc.args:
            return str(tc.args[k])
    return "?"


# ---- databases


@tool(
    "pg-statement-timeout",
    "timeout",
    "tool-db",
    "PostgreSQL via psycopg2 (statement_timeout)",
    T["pg_timeout"],
    tools=("lookup_order", "create_ticket", "get_invoice"),
)
def _(tc):
    return (
        "Traceback (most recent call last):\n"
        '  File "/app/orders/repo.py", line 88, in fetch_order\n'
        "    cur.execute(ORDER_SQL, (order_id,))\n"
        "psycopg2.errors.QueryCanceled: canceling statement due to statement timeout\n"
    )


@tool(
    "pg-unique-violation-23505",
    "invalid_request",
    "tool-db",
    "PostgreSQL via pgx/gorm (unique violation)",
    T["pg_23505"],
    tools=("create_ticket", "issue_refund"),
)
def _(tc):
    tbl = "tickets" if tc.tool == "create_ticket" else "refunds"
    return (
        f"2024/09/02 10:14:03 /app/internal/{tbl}/store.go:142 ERROR: duplicate key value violates unique constraint "
        f'"{tbl}_dedup_key" (SQLSTATE 23505)\n[3.812ms] [rows:0] INSERT INTO "{tbl}" (...) VALUES (...)'
    )


@tool(
    "pg-relation-missing-42P01",
    "not_found",
    "tool-db",
    "PostgreSQL via pgx (missing relation after a migration)",
    T["pg_42P01"],
    tools=("lookup_order", "create_ticket", "list_shipments"),
)
def _(tc):
    rel = {"lookup_order": "orders_v2", "create_ticket": "support_tickets", "list_shipments": "shipment_events"}[
        tc.tool
    ]
    return f'ERROR: relation "{rel}" does not exist (SQLSTATE 42P01)'


@tool(
    "supabase-postgrest-42P01",
    "not_found",
    "tool-db",
    "Supabase / PostgREST error object",
    T["supabase"],
    tools=("get_customer", "get_invoice"),
)
def _(tc):
    rel = "customer_profiles" if tc.tool == "get_customer" else "invoices"
    return j({"code": "42P01", "details": None, "hint": None, "message": f'relation "public.{rel}" does not exist'})


@tool(
    "pg-password-auth-failed",
    "auth",
    "tool-db",
    "PostgreSQL (psycopg2 OperationalError, 28P01)",
    T["pg_auth"],
    tools=("lookup_order", "create_ticket"),
)
def _(tc):
    return (
        'psycopg2.OperationalError: connection to server at "orders-db.internal" (10.0.3.12), port 5432 failed: '
        'FATAL:  password authentication failed for user "svc_orders_ro"\n'
    )


@tool(
    "pg-connection-refused",
    "connection",
    "tool-db",
    "PostgreSQL (server not accepting connections)",
    T["pg_refused"],
    tools=("lookup_order", "create_ticket", "get_invoice"),
)
def _(tc):
    return (
        'psycopg2.OperationalError: connection to server at "10.0.3.12", port 5432 failed: Connection refused\n'
        "\tIs the server running on that host and accepting TCP/IP connections?\n"
    )


@tool(
    "mysql-lock-wait-timeout-1205",
    "timeout",
    "tool-db",
    "MySQL via PyMySQL (InnoDB lock wait)",
    T["mysql_1205"],
    tools=("check_inventory",),
)
def _(tc):
    return "pymysql.err.InternalError: (1205, 'Lock wait timeout exceeded; try restarting transaction')"


@tool(
    "mysql-access-denied-1045", "auth", "tool-db", "MySQL (access denied)", T["mysql_codes"], tools=("check_inventory",)
)
def _(tc):
    return (
        "pymysql.err.OperationalError: (1045, \"Access denied for user 'wms_reader'@'10.2.7.14' (using password: "
        'YES)")'
    )


@tool(
    "mysql-lost-connection-2013",
    "connection",
    "tool-db",
    "MySQL (connection lost mid-query)",
    T["mysql_codes"],
    tools=("check_inventory",),
)
def _(tc):
    return "pymysql.err.OperationalError: (2013, 'Lost connection to MySQL server during query')"


@tool("sqlite-no-such-table", "not_found", "tool-db", "SQLite invoice cache", T["sqlite"], tools=("get_invoice",))
def _(tc):
    return (
        'Traceback (most recent call last):\n  File "/srv/invoice_cache.py", line 41, in get\n'
        '    row = conn.execute("SELECT body FROM invoice_cache WHERE order_id = ?", (oid,)).fetchone()\n'
        "sqlite3.OperationalError: no such table: invoice_cache\n"
    )


# ---- RPC


@tool(
    "grpc-python-unavailable-connect",
    "connection",
    "tool-rpc",
    "gRPC Python client (UNAVAILABLE: failed to connect)",
    T["grpc_py"],
    tools=("get_customer", "get_exchange_rate", "check_inventory"),
    note="UNAVAILABLE whose details say the channel could not connect: connection",
)
def _(tc):
    return (
        "<_InactiveRpcError of RPC that terminated with:\n\tstatus = StatusCode.UNAVAILABLE\n"
        '\tdetails = "failed to connect to all addresses; last error: UNKNOWN: ipv4:10.4.1.22:50051: Failed to '
        'connect to remote host: Connection refused"\n'
        '\tdebug_error_string = "UNKNOWN:failed to connect to all addresses; last error: UNKNOWN: '
        "ipv4:10.4.1.22:50051: "
        "Failed to connect to remote host: Connection refused {grpc_status:14, "
        'created_time:\\"2024-09-02T10:14:03.218+00:00\\"}"\n>'
    )


@tool(
    "grpc-go-deadline-exceeded",
    "timeout",
    "tool-rpc",
    "gRPC Go client (DeadlineExceeded)",
    T["grpc_go"],
    tools=("get_customer", "lookup_order", "get_exchange_rate"),
)
def _(tc):
    return "rpc error: code = DeadlineExceeded desc = context deadline exceeded"


@tool(
    "grpc-go-resource-exhausted",
    "rate_limit",
    "tool-rpc",
    "gRPC Go client (ResourceExhausted from a rate limiter)",
    T["grpc_re"],
    tools=("get_customer", "get_exchange_rate"),
)
def _(tc):
    svc = "crm.v1.CustomerService/GetCustomer" if tc.tool == "get_customer" else "fx.v1.Rates/GetRate"
    return f'rpc error: code = ResourceExhausted desc = quota exceeded for "{svc}": 50 requests per second'


@tool(
    "grpc-go-permission-denied",
    "auth",
    "tool-rpc",
    "gRPC Go client (PermissionDenied from an authz interceptor)",
    T["grpc_go"],
    tools=("get_customer", "lookup_order"),
)
def _(tc):
    return (
        'rpc error: code = PermissionDenied desc = principal "spiffe://shop.internal/ns/agents/sa/tool-runner" '
        "is not allowed to call crm.v1.CustomerService/GetCustomer"
    )


@tool(
    "grpc-python-unauthenticated",
    "auth",
    "tool-rpc",
    "gRPC Python client (UNAUTHENTICATED)",
    T["grpc_py"],
    tools=("get_customer", "get_exchange_rate"),
)
def _(tc):
    return (
        "<_InactiveRpcError of RPC that terminated with:\n\tstatus = StatusCode.UNAUTHENTICATED\n"
        '\tdetails = "Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or '
        'other valid authentication credential."\n'
        '\tdebug_error_string = "UNKNOWN:Error received from peer  {grpc_status:16}"\n>'
    )


@tool(
    "grpc-go-not-found",
    "not_found",
    "tool-rpc",
    "gRPC Go service (NotFound from a lagging replica)",
    T["grpc_go"],
    tools=("get_customer", "lookup_order"),
)
def _(tc):
    kind = "customer" if tc.tool == "get_customer" else "order"
    return f'rpc error: code = NotFound desc = {kind} "{_id_of(tc)}" not found'


@tool(
    "grpc-go-internal",
    "error",
    "tool-rpc",
    "gRPC Go service (Internal)",
    T["grpc_go"],
    tools=("get_customer", "lookup_order", "get_exchange_rate"),
)
def _(tc):
    return "rpc error: code = Internal desc = grpc: error while marshaling: proto: Marshal called with nil"


@tool(
    "grpc-gateway-invalid-argument",
    "invalid_request",
    "tool-rpc",
    "grpc-gateway JSON error (code 3)",
    T["grpc_gw"],
    tools=("get_customer", "lookup_order", "check_inventory"),
)
def _(tc):
    return j(
        {
            "code": 3,
            "message": f"invalid {next(iter(tc.args), 'id')}: value does not match regex pattern "
            f'"^[A-Z]{{3}}-[0-9]{{4,5}}$"',
            "details": [],
        }
    )


@tool(
    "grpc-gateway-unavailable-json",
    "connection",
    "tool-rpc",
    "grpc-gateway JSON error (code 14, upstream reset)",
    T["grpc_gw"],
    tools=("get_customer", "lookup_order", "check_inventory"),
    note="code 14 (UNAVAILABLE) with a connection-reset message: connection",
)
def _(tc):
    return j(
        {
            "code": 14,
            "message": "upstream connect error or disconnect/reset before headers. reset reason: connection "
            "termination",
            "details": [],
        }
    )


# ---- runtimes


@tool(
    "java-socket-timeout-trace",
    "timeout",
    "tool-runtime",
    "Java service (Apache HttpClient read timeout)",
    T["java_sto"],
    tools=("get_exchange_rate",),
)
def _(tc):
    return (
        "java.net.SocketTimeoutException: Read timed out\n"
        "\tat java.base/sun.nio.ch.NioSocketImpl.timedRead(NioSocketImpl.java:288)\n"
        "\tat java.base/sun.nio.ch.NioSocketImpl.implRead(NioSocketImpl.java:314)\n"
        "\tat org.apache.http.impl.io.SessionInputBufferImpl.streamRead(SessionInputBufferImpl.java:137)\n"
        "\tat org.apache.http.impl.conn.DefaultHttpResponseParser.parseHead(DefaultHttpResponseParser.java:138)\n"
        "\tat com.acme.fx.RateClient.fetch(RateClient.java:77)\n"
    )


@tool(
    "spring-boot-500-npe",
    "error",
    "tool-runtime",
    "Spring Boot default error body (NullPointerException)",
    T["java_sto"],
    tools=("get_exchange_rate",),
)
def _(tc):
    return j(
        {
            "timestamp": "2024-09-02T10:14:03.221+00:00",
            "status": 500,
            "error": "Internal Server Error",
            "trace": "java.lang.NullPointerException: Cannot invoke "
            '"java.math.BigDecimal.divide(java.math.BigDecimal, java.math.RoundingMode)" because "mid" is '
            "null\n\tat com.acme.fx.RateService.cross(RateService.java:54)",
            "message": 'Cannot invoke "java.math.BigDecimal.divide(java.math.BigDecimal, java.math.RoundingMode)" '
            'because "mid" is null',
            "path": "/v1/rates",
        }
    )


@tool(
    "node-econnrefused",
    "connection",
    "tool-runtime",
    "Node.js HTTP client (ECONNREFUSED)",
    T["node_refused"],
    tools=("list_shipments",),
)
def _(tc):
    return (
        "Error: connect ECONNREFUSED 10.0.12.7:8443\n    at TCPConnectWrap.afterConnect [as oncomplete] "
        "(node:net:1555:16) {\n"
        "  errno: -111,\n  code: 'ECONNREFUSED',\n  syscall: 'connect',\n  address: '10.0.12.7',\n  port: 8443\n}"
    )


@tool(
    "node-socket-hang-up",
    "connection",
    "tool-runtime",
    "Node.js HTTP client (socket hang up / ECONNRESET)",
    T["node_refused"],
    tools=("list_shipments",),
)
def _(tc):
    return (
        "Error: socket hang up\n    at connResetException (node:internal/errors:720:14)\n"
        "    at TLSSocket.socketOnEnd (node:_http_client:525:23)\n    at TLSSocket.emit (node:events:529:35) {\n  "
        "code: 'ECONNRESET'\n}"
    )


@tool(
    "dotnet-no-such-host",
    "connection",
    "tool-runtime",
    ".NET HttpClient (DNS failure)",
    T["dotnet_dns"],
    tools=("get_exchange_rate", "get_invoice"),
)
def _(tc):
    return (
        "System.Net.Http.HttpRequestException: No such host is known. (fx-rates.internal.acme:443)\n"
        " ---> System.Net.Sockets.SocketException (11001): No such host is known.\n"
        "   at System.Net.Sockets.Socket.AwaitableSocketAsyncEventArgs.ThrowException(SocketError error, "
        "CancellationToken cancellationToken)\n"
        "   at System.Net.Http.HttpConnectionPool.ConnectToTcpHostAsync(String host, Int32 port, HttpRequestMessage "
        "initialRequest, Boolean async, CancellationToken cancellationToken)\n"
        "   --- End of inner exception stack trace ---"
    )


@tool(
    "rust-reqwest-connect-refused",
    "connection",
    "tool-runtime",
    "Rust reqwest/hyper client (connection refused)",
    T["rust"],
    tools=("get_invoice", "get_deployment"),
)
def _(tc):
    return (
        "error sending request for url (http://invoice-store.internal:9000/v1/invoices): error trying to connect: "
        "tcp connect error: Connection refused (os error 111)\n\nCaused by:\n    0: error trying to connect: tcp "
        "connect error: Connection refused (os error 111)\n"
        "    1: tcp connect error: Connection refused (os error 111)\n    2: Connection refused (os error 111)"
    )


@tool(
    "python-requests-read-timeout",
    "timeout",
    "tool-runtime",
    "Python requests (read timeout)",
    T["py_rt"],
    tools=("issue_refund", "create_ticket", "get_exchange_rate", "lookup_order"),
)
def _(tc):
    host = {"issue_refund": "api.payments.example.com", "create_ticket": "helpdesk.example.com"}.get(
        tc.tool, "orders-api.internal"
    )
    return (
        f"requests.exceptions.ReadTimeout: HTTPSConnectionPool(host='{host}', port=443): Read timed out. (read "
        f"timeout=10)"
    )


@tool(
    "python-requests-read-timeout-after-commit",
    "timeout",
    "tool-runtime",
    "Python requests (read timeout after the server committed)",
    T["py_rt"],
    tools=("issue_refund", "create_ticket"),
    executes=True,
    needs="nonidem",
    note="the backend applied the call before the client timed out; a retry applies it again",
)
def _(tc):
    host = "api.payments.example.com" if tc.tool == "issue_refund" else "helpdesk.example.com"
    return (
        f"requests.exceptions.ReadTimeout: HTTPSConnectionPool(host='{host}', port=443): Read timed out. (read "
        f"timeout=10)"
    )


@tool(
    "nginx-504-after-commit",
    "timeout",
    "tool-http",
    "nginx 504 while the upstream finished the write",
    T["nginx"],
    tools=("create_ticket", "issue_refund"),
    executes=True,
    needs="nonidem",
    note="a tool's 504 page: the text means timeout (taxonomy: a text that is an error is an error of its meaning)",
)
def _(tc):
    return NGINX.format(code=504, text="Gateway Time-out")


@tool(
    "python-keyerror-traceback",
    "error",
    "tool-runtime",
    "Python service traceback (KeyError)",
    T["py_rt"],
    tools=("lookup_order", "get_customer"),
)
def _(tc):
    return (
        'Traceback (most recent call last):\n  File "/srv/app/handlers.py", line 57, in handle\n    return '
        "serialize(record)\n"
        '  File "/srv/app/serializers.py", line 23, in serialize\n    "shipping": '
        'record["shipping_address"]["country"],\n'
        "KeyError: 'shipping_address'\n"
    )


@tool(
    "raise-connection-reset",
    "connection",
    "tool-runtime",
    "tool raising ConnectionResetError (shown LangGraph ToolNode-style)",
    T["langgraph"],
    raises=True,
)
def _(tc):
    raise ConnectionResetError(104, "Connection reset by peer")


@tool(
    "raise-httpx-connect-error",
    "connection",
    "tool-runtime",
    "tool raising httpx.ConnectError (shown LangGraph ToolNode-style)",
    T["langgraph"],
    raises=True,
)
def _(tc):
    import httpx

    raise httpx.ConnectError("[Errno 111] Connection refused")


@tool(
    "raise-timeout-error",
    "timeout",
    "tool-runtime",
    "tool raising TimeoutError (shown LangGraph ToolNode-style)",
    T["langgraph"],
    raises=True,
)
def _(tc):
    raise TimeoutError("timed out")


@tool(
    "aiohttp-server-disconnected",
    "connection",
    "tool-runtime",
    "aiohttp client (ServerDisconnectedError)",
    T["aiohttp"],
    tools=("search_products", "list_shipments", "get_exchange_rate"),
)
def _(tc):
    return "aiohttp.client_exceptions.ServerDisconnectedError: Server disconnected"


@tool(
    "go-dns-no-such-host",
    "connection",
    "tool-runtime",
    "Go net/http in Kubernetes (service DNS lookup failed)",
    T["go_dns"],
    tools=("lookup_order", "get_customer", "list_shipments"),
)
def _(tc):
    svc = {"lookup_order": "orders-api", "get_customer": "crm-api", "list_shipments": "carrier-hub"}[tc.tool]
    return (
        f'Get "http://{svc}.shop-prod.svc.cluster.local:8080/v1/{_id_of(tc)}": dial tcp: lookup '
        f"{svc}.shop-prod.svc.cluster.local "
        "on 10.96.0.10:53: no such host"
    )


@tool("posix-eacces", "auth", "tool-runtime", "local file cache (EACCES)", T["sqlite"], tools=("get_invoice",))
def _(tc):
    return f"PermissionError: [Errno 13] Permission denied: '/var/cache/invoices/2024/09/{_id_of(tc)}.json'"


@tool("posix-enoent", "not_found", "tool-runtime", "local file cache (ENOENT)", T["sqlite"], tools=("get_invoice",))
def _(tc):
    return f"FileNotFoundError: [Errno 2] No such file or directory: '/var/cache/invoices/2024/09/{_id_of(tc)}.json'"


@tool(
    "posix-econnreset-plain",
    "connection",
    "tool-runtime",
    "socket error text (ECONNRESET)",
    T["aiohttp"],
    tools=("search_products", "check_inventory", "lookup_order"),
)
def _(tc):
    return "[Errno 104] Connection reset by peer"


# ---- cloud APIs


def k8s_status(reason: str, code: int, message: str, details: dict | None = None) -> str:
    return j(
        {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": message,
            "reason": reason,
            "details": details or {},
            "code": code,
        }
    )


@tool(
    "k8s-status-forbidden",
    "auth",
    "tool-cloud",
    "Kubernetes API server (RBAC)",
    T["k8s_forbidden"],
    tools=("get_deployment",),
)
def _(tc):
    ns, name = tc.args.get("namespace"), tc.args.get("name")
    return k8s_status(
        "Forbidden",
        403,
        f'deployments.apps "{name}" is forbidden: User "system:serviceaccount:agents:tool-runner" cannot get '
        f'resource "deployments" in API group "apps" in the namespace "{ns}"',
        {"name": name, "group": "apps", "kind": "deployments"},
    )


@tool(
    "k8s-status-notfound",
    "not_found",
    "tool-cloud",
    "Kubernetes API server (wrong context / cluster)",
    T["k8s"],
    tools=("get_deployment",),
)
def _(tc):
    name = tc.args.get("name")
    return k8s_status(
        "NotFound", 404, f'deployments.apps "{name}" not found', {"name": name, "group": "apps", "kind": "deployments"}
    )


@tool(
    "k8s-status-too-many-requests",
    "rate_limit",
    "tool-cloud",
    "Kubernetes API server (API priority and fairness)",
    T["k8s"],
    tools=("get_deployment",),
)
def _(tc):
    return k8s_status(
        "TooManyRequests",
        429,
        "the server has received too many requests and has asked us to try again later",
        {"retryAfterSeconds": 1},
    )


@tool(
    "k8s-status-timeout",
    "timeout",
    "tool-cloud",
    "Kubernetes API server (Timeout)",
    T["k8s"],
    tools=("get_deployment",),
)
def _(tc):
    name = tc.args.get("name")
    return k8s_status(
        "Timeout",
        504,
        f"the server was unable to return a response in the time allotted, but may still be processing the request "
        f"(get deployments.apps {name})",
        {"name": name, "group": "apps", "kind": "deployments"},
    )


@tool(
    "k8s-status-internal-error",
    "error",
    "tool-cloud",
    "Kubernetes API server (InternalError)",
    T["k8s"],
    tools=("get_deployment",),
)
def _(tc):
    name = tc.args.get("name")
    return k8s_status(
        "InternalError",
        500,
        f'an error on the server ("unknown") has prevented the request from succeeding (get deployments.apps {name})',
        {
            "name": name,
            "group": "apps",
            "kind": "deployments",
            "causes": [{"reason": "UnexpectedServerResponse", "message": "unknown"}],
        },
    )


@tool(
    "dynamodb-throughput-exceeded",
    "rate_limit",
    "tool-cloud",
    "AWS DynamoDB (ProvisionedThroughputExceededException)",
    T["dynamo"],
    tools=("get_customer",),
)
def _(tc):
    return j(
        {
            "__type": "com.amazonaws.dynamodb.v20120810#ProvisionedThroughputExceededException",
            "message": "The level of configured provisioned throughput for the table was exceeded. Consider "
            "increasing your provisioning level with the UpdateTable API.",
        }
    )


@tool(
    "dynamodb-resource-not-found",
    "not_found",
    "tool-cloud",
    "AWS DynamoDB (ResourceNotFoundException)",
    T["dynamo"],
    tools=("get_customer",),
)
def _(tc):
    return j(
        {
            "__type": "com.amazonaws.dynamodb.v20120810#ResourceNotFoundException",
            "message": "Requested resource not found: Table: customer-profiles-v2 not found",
        }
    )


def s3_error(code: str, message: str, key: str) -> str:
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        f"<Error><Code>{code}</Code><Message>{message}</Message><Key>{key}</Key>"
        f"<RequestId>{hid(key, code, n=16).upper()}</RequestId>"
        f"<HostId>{hid(key, 'host', n=56)}=</HostId></Error>"
    )


@tool("s3-nosuchkey", "not_found", "tool-cloud", "Amazon S3 (NoSuchKey)", T["s3"], tools=("get_invoice",))
def _(tc):
    return s3_error("NoSuchKey", "The specified key does not exist.", f"2024/09/{_id_of(tc)}.json")


@tool("s3-access-denied", "auth", "tool-cloud", "Amazon S3 (AccessDenied)", T["s3"], tools=("get_invoice",))
def _(tc):
    return s3_error("AccessDenied", "Access Denied", f"2024/09/{_id_of(tc)}.json")


@tool(
    "s3-slowdown",
    "rate_limit",
    "tool-cloud",
    "Amazon S3 (503 SlowDown)",
    T["s3"],
    tools=("get_invoice",),
    note="S3 sends SlowDown with HTTP 503; the text asks to reduce the request rate, so the meaning (rate_limit) is "
    "taken over 'a tool's 5xx is error'",
)
def _(tc):
    return s3_error("SlowDown", "Please reduce your request rate.", f"2024/09/{_id_of(tc)}.json")


@tool(
    "azure-arm-authorization-failed",
    "auth",
    "tool-cloud",
    "Azure Resource Manager (AuthorizationFailed)",
    T["azure_authz"],
    tools=("get_deployment",),
)
def _(tc):
    return j(
        {
            "error": {
                "code": "AuthorizationFailed",
                "message": "The client '7f1c2a9e-4b0d-4c3e-9a51-2d6e8f0b1c44' with object id "
                "'7f1c2a9e-4b0d-4c3e-9a51-2d6e8f0b1c44' does not have "
                "authorization to perform action "
                "'Microsoft.ContainerService/managedClusters/listClusterUserCredential/action' over scope "
                "'/subscriptions/3b1d.../resourceGroups/shop-prod/providers/Microsoft.ContainerService/"
                "managedClusters/shop-aks' or the scope is invalid. "
                "If access was recently granted, please refresh your credentials.",
            }
        }
    )


@tool(
    "google-api-quota-429",
    "rate_limit",
    "tool-cloud",
    "Google API error object (RESOURCE_EXHAUSTED)",
    T["gcp"],
    tools=("get_exchange_rate", "search_products"),
)
def _(tc):
    return j(
        {
            "error": {
                "code": 429,
                "message": "Quota exceeded for quota metric 'Read requests' and limit 'Read requests per minute per "
                "user' "
                "of service 'sheets.googleapis.com' for consumer 'project_number:578829824020'.",
                "status": "RESOURCE_EXHAUSTED",
            }
        }
    )


@tool(
    "google-api-internal-500",
    "error",
    "tool-cloud",
    "Google API error object (INTERNAL)",
    T["gcp"],
    tools=("get_exchange_rate",),
)
def _(tc):
    return j({"error": {"code": 500, "message": "Internal error encountered.", "status": "INTERNAL"}})


# ---- protocols


def soap_fault(code: str, msg: str) -> str:
    return (
        '<?xml version="1.0" encoding="utf-8"?><soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/" '
        'xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" '
        'xmlns:xsd="http://www.w3.org/2001/XMLSchema"><soap:Body><soap:Fault>'
        f"<faultcode>{code}</faultcode><faultstring>{msg}</faultstring><detail "
        f"/></soap:Fault></soap:Body></soap:Envelope>"
    )


@tool(
    "soap-server-fault",
    "error",
    "tool-protocol",
    "ASMX/WCF SOAP 1.1 warehouse service (soap:Server)",
    T["soap"],
    tools=("check_inventory",),
)
def _(tc):
    return soap_fault(
        "soap:Server",
        "Server was unable to process request. ---&gt; Object reference not set to an instance of an object.",
    )


@tool(
    "soap-client-fault",
    "invalid_request",
    "tool-protocol",
    "SOAP 1.1 warehouse service (soap:Client)",
    T["soap_client"],
    tools=("check_inventory",),
)
def _(tc):
    return soap_fault(
        "soap:Client",
        f"Server was unable to read request. ---&gt; Invalid value '{tc.args.get('warehouse')}' for element "
        f"'WarehouseCode'.",
    )


@tool(
    "jsonrpc-invalid-params",
    "invalid_request",
    "tool-protocol",
    "JSON-RPC 2.0 service (-32602)",
    T["jsonrpc"],
    tools=("check_inventory",),
)
def _(tc):
    return j(
        {
            "jsonrpc": "2.0",
            "error": {"code": -32602, "message": "Invalid params", "data": "sku: expected 8-character catalogue code"},
            "id": 7,
        }
    )


@tool(
    "jsonrpc-internal-error",
    "error",
    "tool-protocol",
    "JSON-RPC 2.0 service (-32603)",
    T["jsonrpc"],
    tools=("check_inventory",),
)
def _(tc):
    return j({"jsonrpc": "2.0", "error": {"code": -32603, "message": "Internal error"}, "id": 7})


@tool(
    "graphql-unauthenticated",
    "auth",
    "tool-protocol",
    "Apollo GraphQL CRM (UNAUTHENTICATED)",
    T["graphql"],
    tools=("get_customer",),
)
def _(tc):
    return j(
        {
            "errors": [{"message": "Context creation failed: jwt expired", "extensions": {"code": "UNAUTHENTICATED"}}],
            "data": None,
        }
    )


@tool(
    "graphql-rate-limited",
    "rate_limit",
    "tool-protocol",
    "GraphQL API (RATE_LIMITED, GitHub style)",
    T["graphql_rl"],
    tools=("get_customer",),
)
def _(tc):
    return j({"errors": [{"type": "RATE_LIMITED", "message": "API rate limit exceeded for installation ID 3187521."}]})


@tool(
    "graphql-internal-error",
    "error",
    "tool-protocol",
    "Apollo GraphQL CRM (INTERNAL_SERVER_ERROR)",
    T["graphql"],
    tools=("get_customer",),
)
def _(tc):
    return j(
        {
            "errors": [
                {
                    "message": "Cannot return null for non-nullable field Customer.email.",
                    "path": ["customer", "email"],
                    "extensions": {"code": "INTERNAL_SERVER_ERROR"},
                }
            ],
            "data": {"customer": None},
        }
    )


@tool("mcp-iserror-503", "error", "tool-protocol", "MCP server tool result (isError)", T["mcp"])
def _(tc):
    return j(
        {
            "content": [
                {"type": "text", "text": f"Error executing tool {tc.tool}: upstream returned 503 Service Unavailable"}
            ],
            "isError": True,
        }
    )


# ---- HTTP


@tool(
    "nginx-504-gateway-timeout",
    "timeout",
    "tool-http",
    "nginx in front of a backend (504)",
    T["nginx"],
    tools=("lookup_order", "list_shipments", "get_invoice"),
    note="a tool's 504 page: labelled by meaning (timeout); "
    "'a tool's 5xx is error' read as the catch-all for other 5xx",
)
def _(tc):
    return NGINX.format(code=504, text="Gateway Time-out")


@tool(
    "nginx-502-upstream-page",
    "error",
    "tool-http",
    "nginx in front of a backend (502)",
    T["nginx"],
    tools=("lookup_order", "list_shipments"),
)
def _(tc):
    return NGINX.format(code=502, text="Bad Gateway")


@tool(
    "envoy-503-no-healthy-upstream",
    "error",
    "tool-http",
    "Envoy (503 no healthy upstream)",
    T["envoy"],
    tools=("lookup_order", "get_customer", "search_products"),
)
def _(tc):
    return j({"status": 503, "error": "Service Unavailable", "message": "no healthy upstream"})


@tool(
    "rest-429-json",
    "rate_limit",
    "tool-http",
    "REST API rate limiter (429 JSON)",
    T["rate_json"],
    tools=("lookup_order", "list_shipments", "get_invoice"),
)
def _(tc):
    return j({"error": {"code": "429", "message": "Rate limit is exceeded. Try again in 2 seconds."}})


@tool(
    "rest-401-token-expired",
    "auth",
    "tool-http",
    "REST API (401 expired bearer token)",
    T["rate_json"],
    tools=("lookup_order", "list_shipments", "get_invoice"),
)
def _(tc):
    return j({"status": 401, "error": "Unauthorized", "message": "Bearer token expired at 2024-09-02T10:00:00Z"})


@tool(
    "nginx-404-misrouted",
    "not_found",
    "tool-http",
    "nginx ingress 404 (request routed to the wrong backend)",
    T["nginx"],
    tools=("lookup_order", "get_invoice"),
)
def _(tc):
    return NGINX.format(code=404, text="Not Found")


@tool(
    "stripe-idempotency-conflict",
    "invalid_request",
    "tool-http",
    "Stripe-style payments API (idempotency_error)",
    T["stripe"],
    tools=("issue_refund",),
)
def _(tc):
    return j(
        {
            "error": {
                "type": "idempotency_error",
                "message": "Keys for idempotent requests can only be used with the same parameters they were first "
                "used with. "
                "Try using a key other than 'refund-" + _id_of(tc) + "' if you meant to execute a different request.",
            }
        }
    )


# ---- in-band flags and vendor envelopes


@tool(
    "inband-status-throttled",
    "rate_limit",
    "tool-inband",
    "internal API with an in-band throttle flag",
    T["rate_json"],
    tools=("lookup_order", "search_products", "get_invoice"),
)
def _(tc):
    return j({"status": "throttled", "retry_after_ms": 1500, "message": "request quota for tenant acme-eu exceeded"})


@tool(
    "slack-ok-false-ratelimited",
    "rate_limit",
    "tool-inband",
    "Slack Web API (ok:false ratelimited)",
    T["slack"],
    tools=("create_ticket",),
)
def _(tc):
    return j({"ok": False, "error": "ratelimited"})


@tool(
    "slack-ok-false-invalid-auth",
    "auth",
    "tool-inband",
    "Slack Web API (ok:false invalid_auth)",
    T["slack"],
    tools=("create_ticket",),
)
def _(tc):
    return j({"ok": False, "error": "invalid_auth"})


@tool(
    "stripe-resource-missing",
    "not_found",
    "tool-inband",
    "Stripe-style payments API (resource_missing)",
    T["stripe"],
    tools=("issue_refund",),
)
def _(tc):
    return j(
        {
            "error": {
                "code": "resource_missing",
                "doc_url": "https://stripe.com/docs/error-codes/resource-missing",
                "message": f"No such charge: 'ch_3Pq{hid(_id_of(tc), n=18)}'",
                "param": "charge",
                "type": "invalid_request_error",
            }
        }
    )


@tool(
    "stripe-rate-limit",
    "rate_limit",
    "tool-inband",
    "Stripe-style payments API (rate_limit)",
    T["stripe"],
    tools=("issue_refund",),
)
def _(tc):
    return j(
        {
            "error": {
                "code": "rate_limit",
                "message": "Too many requests hit the API too quickly. We recommend an exponential backoff of your "
                "requests.",
                "type": "invalid_request_error",
            }
        }
    )


@tool(
    "es-rejected-execution-429",
    "rate_limit",
    "tool-inband",
    "Elasticsearch (es_rejected_execution_exception, 429)",
    T["es_rejected"],
    tools=("search_products",),
)
def _(tc):
    return j(
        {
            "error": {
                "root_cause": [
                    {
                        "type": "es_rejected_execution_exception",
                        "reason": "rejected execution of "
                        "org.elasticsearch.common.util.concurrent.TimedRunnable@5f83d265 on "
                        "EsThreadPoolExecutor[name = es-node-2/search, queue capacity = 1000, active threads = 13, "
                        "queued tasks = 1000]",
                    }
                ],
                "type": "search_phase_execution_exception",
                "reason": "all shards failed",
                "phase": "query",
            },
            "status": 429,
        }
    )


def es_partial(tc, keep_target: bool, keep: int) -> dict[str, Any]:
    res = dict(tc.real)
    hits = list(res["hits"]["hits"])
    want = tc.args.get("query", "").lower()
    if not keep_target:
        hits = [h for h in hits if h["_source"]["name"].lower() != want]
    hits = hits[:keep]
    res["hits"] = {
        "total": {"value": len(hits), "relation": "gte"},
        "max_score": hits[0]["_score"] if hits else None,
        "hits": hits,
    }
    res["timed_out"] = True
    res["took"] = 30001
    return res


@tool(
    "es-timed-out-partial-hits",
    "truncated",
    "tool-inband",
    "Elasticsearch (timed_out: true with partial hits)",
    T["es_partial"],
    tools=("search_products",),
    needs="distractor",
)
def _(tc):
    return j(es_partial(tc, keep_target=tc.params.get("keep_target", False), keep=3))


@tool(
    "es-timed-out-no-hits",
    "timeout",
    "tool-inband",
    "Elasticsearch (timed_out: true, nothing collected)",
    T["es_partial"],
    tools=("search_products",),
)
def _(tc):
    return j(es_partial(tc, keep_target=False, keep=0))


@tool(
    "es-shard-failures-partial",
    "truncated",
    "tool-inband",
    "Elasticsearch (some shards failed, partial hits)",
    T["es_rejected"],
    tools=("search_products",),
    needs="distractor",
)
def _(tc):
    res = es_partial(tc, keep_target=tc.params.get("keep_target", False), keep=3)
    res["timed_out"] = False
    res["_shards"] = {
        "total": 3,
        "successful": 1,
        "skipped": 0,
        "failed": 2,
        "failures": [
            {
                "shard": 1,
                "index": "products-v3",
                "node": "dqqZ8_s7Q7CKzABoyJjLAg",
                "reason": {
                    "type": "node_not_connected_exception",
                    "reason": "[es-node-3][10.1.4.21:9300] Node not connected",
                },
            }
        ],
    }
    return j(res)


@tool(
    "github-style-incomplete-results",
    "truncated",
    "tool-inband",
    "search envelope with incomplete_results (GitHub search style)",
    T["gh_incomplete"],
    tools=("list_shipments",),
)
def _(tc):
    res = dict(tc.real)
    items = sorted(res["items"], key=lambda s: s["eta"])[:-1]
    return j({"total_count": res["total_count"], "incomplete_results": True, "items": items})


@tool(
    "partial-flag-list",
    "truncated",
    "tool-inband",
    "internal API returning partial:true",
    T["es_partial"],
    tools=("list_shipments",),
)
def _(tc):
    res = dict(tc.real)
    items = sorted(res["items"], key=lambda s: s["eta"])[:-1]
    return j({"partial": True, "next_cursor": "eyJvZmZzZXQiOjJ9", "items": items})


@tool(
    "array-cut-no-flag",
    "truncated",
    "tool-data",
    "list cut by a response-size limit without a flag",
    T["cut_json"],
    tools=("list_shipments",),
)
def _(tc):
    res = dict(tc.real)
    items = sorted(res["items"], key=lambda s: s["eta"])
    return j(
        {"total_count": res["total_count"], "incomplete_results": False, "items": items[: max(1, len(items) // 2)]}
    )


@tool(
    "object-keys-dropped",
    "truncated",
    "tool-data",
    "object with its latter fields dropped by a field-mask bug",
    T["cut_json"],
    tools=("lookup_order", "check_inventory", "get_invoice", "get_deployment"),
)
def _(tc):
    keys = list(tc.real)
    keep = keys[: max(1, len(keys) // 2)]
    cut = tc.params.get("cut_before")
    if cut in keys:
        keep = keys[: max(1, min(len(keep), keys.index(cut)))]
    if tc.tool == "check_inventory":
        keep = [k for k in keys if k not in ("on_hand", "reserved")]
    if tc.tool == "get_deployment":
        keep = [k for k in keys if k not in ("replicas", "ready_replicas", "updated_replicas")]
    return j({k: tc.real[k] for k in keep})


# ---- empty, cut, renamed, wrong


@tool("empty-json-array", "empty", "tool-data", "backend returning [] for a found entity", T["owui_null"])
def _(tc):
    return "[]"


@tool("empty-json-object", "empty", "tool-data", "backend returning {} for a found entity", T["owui_null"])
def _(tc):
    return "{}"


@tool("empty-body-204", "empty", "tool-data", "HTTP 204 No Content passed through as an empty string", T["owui_null"])
def _(tc):
    return ""


@tool("json-null", "empty", "tool-data", "backend returning null", T["owui_null"])
def _(tc):
    return "null"


@tool(
    "es-zero-hits",
    "empty",
    "tool-data",
    "Elasticsearch reading a stale alias (0 hits for an existing product)",
    T["es_partial"],
    tools=("search_products",),
    note="a well-formed search envelope with no hits where the product exists: read as 'nothing came back' (empty)",
)
def _(tc):
    return j(es_partial(tc, keep_target=False, keep=0) | {"timed_out": False, "took": 3})


def _cut_before(text: str, field_name: str | None, rng: random.Random) -> str:
    if field_name and f'"{field_name}"' in text:
        pos = text.index(f'"{field_name}"')
        return text[: max(8, pos - rng.randint(1, 6))]
    return text[: max(8, int(len(text) * rng.uniform(0.3, 0.6)))]


@tool(
    "json-cut-buffer-limit",
    "malformed_json",
    "tool-data",
    "client reading a fixed-size buffer (JSON cut part-way)",
    T["cut_json"],
    tools=("lookup_order", "get_customer", "list_shipments", "check_inventory", "get_invoice"),
)
def _(tc):
    return _cut_before(tc.text, tc.params.get("cut_before"), tc.rng)


@tool(
    "json-cut-with-chunk-size-leak",
    "malformed_json",
    "tool-data",
    "proxy leaking a chunked-encoding size line into a cut body",
    T["chunk_leak"],
    tools=("lookup_order", "get_customer", "get_invoice"),
)
def _(tc):
    body = _cut_before(tc.text, tc.params.get("cut_before"), tc.rng)
    return f"{len(tc.text):x}\r\n{body}"


@tool(
    "json-cut-midway-readable",
    "malformed_json",
    "tool-data",
    "JSON cut after the fields the caller needs",
    T["cut_json"],
    tools=("lookup_order", "get_customer", "check_inventory"),
    absorbable=True,
)
def _(tc):
    t = tc.text
    return t[: len(t) - max(2, len(t) // 8)]


RENAMES = {
    "lookup_order": (
        {"customer_id": "customer_ref", "total": "amount_total", "currency": "currency_code"},
        {"item_count": None},
    ),
    "check_inventory": ({"on_hand": "qty_physical", "reserved": "qty_allocated"}, {"bin_count": 3}),
    "get_invoice": ({"amount_due": "balance", "currency": "currency_code"}, {"line_count": 2}),
    "get_customer": ({"email": "contact_email", "name": "display_name"}, {}),
    "get_deployment": ({"ready_replicas": "available", "replicas": "desired"}, {"generation": 14}),
    "get_exchange_rate": ({"rate": "mid"}, {"precision": 6}),
}


@tool(
    "api-v2-field-rename",
    "key_rename",
    "tool-data",
    "backend upgraded to a v2 response vocabulary (renamed fields)",
    T["rename"],
    tools=tuple(RENAMES),
)
def _(tc):
    ren, extra = RENAMES[tc.tool]
    out: dict[str, Any] = {}
    for k, v in extra.items():
        out[k] = len(tc.real.get("items", [])) if v is None else v
    for k, v in tc.real.items():
        out[ren.get(k, k)] = v
    return j(out)


def camel(s: str) -> str:
    a, *b = s.split("_")
    return a + "".join(x.title() for x in b)


@tool(
    "proto3-json-camelcase-int64",
    "key_rename",
    "tool-data",
    "gRPC-JSON transcoding (lowerCamelCase, int64 as strings)",
    T["proto3"],
    tools=("lookup_order", "check_inventory", "get_deployment", "get_customer"),
    absorbable=True,
)
def _(tc):
    def conv(v):
        if isinstance(v, dict):
            return {camel(k): conv(x) for k, x in v.items()}
        if isinstance(v, list):
            return [conv(x) for x in v]
        if isinstance(v, int) and not isinstance(v, bool):
            return str(v)
        return v

    return j(conv(tc.real))


@tool(
    "stale-replica-read",
    "wrong_value",
    "tool-data",
    "eventually consistent read from a lagging replica (older values)",
    T["stale_read"],
    tools=("lookup_order", "check_inventory", "get_invoice", "get_deployment"),
)
def _(tc):
    r = dict(tc.real)
    if tc.tool == "lookup_order":
        items = r["items"]
        r["total"] = round(r["total"] + items[0]["unit_price"], 2)  # before a line was reduced
        r["status"] = "processing"
    elif tc.tool == "check_inventory":
        r["on_hand"] = r["on_hand"] + 17 + tc.rng.randint(1, 40)
    elif tc.tool == "get_invoice":
        r["amount_due"] = round(r["amount_due"] * 1.08, 2)
    else:
        r["ready_replicas"] = max(0, r["replicas"] - 1) if r["ready_replicas"] == r["replicas"] else r["replicas"]
    return j(r)


@tool(
    "utc-midnight-date-shift",
    "wrong_value",
    "tool-data",
    "date-only field serialised through UTC midnight (one day early)",
    T["tz"],
    tools=("list_shipments",),
)
def _(tc):
    r = json.loads(tc.text)
    for s in r["items"]:
        d = dt.date.fromisoformat(s["eta"])
        s["eta"] = (d - dt.timedelta(days=1)).isoformat()
    return j(r)


@tool(
    "neighbouring-record-id",
    "wrong_value",
    "tool-data",
    "off-by-one row join returning the neighbouring record's id",
    T["stale_read"],
    tools=("lookup_order",),
)
def _(tc):
    r = dict(tc.real)
    r["customer_id"] = tc.params["other_customer"]
    return j(r)


@tool(
    "minor-units-as-major",
    "wrong_value",
    "tool-data",
    "amount in minor units (cents) where major units are documented",
    T["stripe"],
    tools=("lookup_order", "get_invoice"),
)
def _(tc):
    r = dict(tc.real)
    key = "total" if tc.tool == "lookup_order" else "amount_due"
    r[key] = int(round(r[key] * 100))
    return j(r)


@tool(
    "fx-rate-inverted",
    "wrong_value",
    "tool-data",
    "FX feed returning the inverse quote (quote/base)",
    T["stale_read"],
    tools=("get_exchange_rate",),
)
def _(tc):
    r = dict(tc.real)
    r["rate"] = round(1 / r["rate"], 6)
    return j(r)


@tool(
    "numbers-as-strings",
    "key_rename",
    "tool-data",
    "backend serialising numbers as strings",
    T["proto3"],
    tools=("check_inventory", "lookup_order", "get_invoice"),
    absorbable=True,
)
def _(tc):
    return j(
        {k: (str(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else v) for k, v in tc.real.items()}
    )


LLM_BY_NAME = {f.name: f for f in LLM_FORMS}
TOOL_BY_NAME = {f.name: f for f in TOOL_FORMS}
