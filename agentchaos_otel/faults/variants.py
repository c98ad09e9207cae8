"""The held-out variant set: faults the diagnosis rules were not written against.

Rules tuned on the catalog's own marker texts ("[API ERROR] ...", "[TIMEOUT] ...", 30% cuts,
Latin-1 mojibake) can score perfectly on the catalog and still miss the same failure worded the
way a real gateway, provider or server words it. These specs keep the catalog's label vocabulary
and targets but change everything a rule could have memorised: error wordings copied in form
from real outages and provider documentation, other truncation ratios, other corruption modes,
and real HTTP and stream failures with other statuses, bodies and chunk counts.

Every variant fires once (strategy ``single``), so a faulted episode has at most one root cause
and its ``fault_type`` is the ground truth. That label is what docs/taxonomy.md reads the variant's
form as (its table "How our fault catalog reads"), never only the family it was written for: a
gateway's 504 page is a timeout, Envoy's "upstream connect error ... reset" a lost connection, a
provider's JSON error object delivered as the message content ``schema`` (as AgentChaos's own
``llm_schema`` object is). An HTTP failure the SDK retries away is absorbed by the agent; the
label still says what was injected, and the root cause by effect (docs/taxonomy.md) decides
whether it counts. Content and tool-call variants keep AgentChaos's field guard like the matrix
entries they vary; HTTP, stream and content-filter variants, like their catalog counterparts, do
not.

This module holds data only, built from the vocabulary in ``faults/spec.py``; ``catalog``
registers the specs after its first 80 entries.
"""

from __future__ import annotations

from typing import Any

from agentchaos_otel.faults import spec as C
from agentchaos_otel.faults.spec import FaultSpec

# --- error pages and error objects written into a 200 response -------------------------------
# A page's status gives its label (504 timeout, other 5xx error); a JSON object as the content is
# schema (docs/taxonomy.md).
NGINX_504_HTML = ("<html>\r\n<head><title>504 Gateway Time-out</title></head>\r\n<body>\r\n"
                  "<center><h1>504 Gateway Time-out</h1></center>\r\n<hr><center>nginx</center>\r\n"
                  "</body>\r\n</html>\r\n")
CLOUDFLARE_520_HTML = (
    "<!DOCTYPE html>\n<html lang=\"en-US\">\n<head>\n"
    "<title>llm-gateway.example.com | 520: Web server is returning an unknown error</title>\n"
    "<meta charset=\"UTF-8\" />\n</head>\n<body>\n<div id=\"cf-wrapper\">\n<div id=\"cf-error-details\">\n"
    "<h1><span class=\"inline-block\">Web server is returning an unknown error</span> "
    "<span class=\"code-label\">Error code 520</span></h1>\n"
    "<p>There is an unknown connection issue between Cloudflare and the origin web server. "
    "As a result, the web page can not be displayed.</p>\n</div>\n"
    "<div class=\"cf-error-footer\"><span>Cloudflare Ray ID: <strong>8f3a1c2b9d4e5f60</strong></span> "
    "&bull; <span>Performance &amp; security by Cloudflare</span></div>\n</div>\n</body>\n</html>\n")
AZURE_ERROR_JSON = ('{"error":{"code":"InternalServerError","message":"Backend returned unexpected '
                    'response. Please contact Microsoft for help."}}')
ANTHROPIC_OVERLOADED_JSON = ('{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"},'
                             '"request_id":"req_011CUa7xKp3Lq9mZt2VwYb8R"}')
GEMINI_INTERNAL_JSON = ('{\n  "error": {\n    "code": 500,\n    "message": "An internal error has occurred. '
                        'Please retry or report in https://developers.generativeai.google/guide/'
                        'troubleshooting",\n    "status": "INTERNAL"\n  }\n}\n')
CUDA_OOM_TRACEBACK = (
    "Traceback (most recent call last):\n"
    "  File \"/usr/local/lib/python3.11/site-packages/starlette/middleware/errors.py\", line 165, in "
    "__call__\n    await self.app(scope, receive, _send)\n"
    "  File \"/srv/app/generate.py\", line 88, in generate\n"
    "    outputs = model.generate(**inputs, max_new_tokens=max_tokens)\n"
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity "
    "of 79.15 GiB of which 1.06 GiB is free. Of the allocated memory 74.31 GiB is allocated by PyTorch.")

# --- timeouts (label "timeout", but "connection" for Envoy's connect error and "schema" for a JSON
# object as the content) ----------------------------------------------------------------------
ENVOY_UPSTREAM_TIMEOUT = "upstream request timeout"
GRPC_DEADLINE_EXCEEDED = (
    "<_InactiveRpcError of RPC that terminated with:\n\tstatus = StatusCode.DEADLINE_EXCEEDED\n"
    "\tdetails = \"Deadline Exceeded\"\n\tdebug_error_string = \"UNKNOWN:Deadline Exceeded "
    "{grpc_status:4, created_time:\"2025-03-11T09:14:02.18117+00:00\"}\"\n>")
APIGW_TIMEOUT_JSON = '{"message": "Endpoint request timed out"}'
ENVOY_RESET_TIMEOUT = ("upstream connect error or disconnect/reset before headers. "
                       "reset reason: connection timeout")

# --- quota and rate limits in the body (label "rate_limit") -----------------------------------
OPENAI_QUOTA_TEXT = ("You exceeded your current quota, please check your plan and billing details. For "
                     "more information on this error, read the docs: "
                     "https://platform.openai.com/docs/guides/error-codes/api-errors.")
OPENAI_QUOTA_JSON = ('{\n    "error": {\n        "message": "' + OPENAI_QUOTA_TEXT + '",\n'
                     '        "type": "insufficient_quota",\n        "param": null,\n'
                     '        "code": "insufficient_quota"\n    }\n}\n')

# --- other shapes where prose or a tool call was expected (label "schema") --------------------
DETAIL_JSON = '{"detail": "Invalid request"}'
JSONRPC_ERROR_JSON = '{"jsonrpc": "2.0", "error": {"code": -32600, "message": "Invalid Request"}, "id": null}'
NESTED_ARGUMENTS = '{"input": {"args": [], "kwargs": {}}}'

# --- content filter (label "content_filter") --------------------------------------------------
AZURE_FILTER_TEXT = ("The response was filtered due to the prompt triggering Azure OpenAI's content "
                     "management policy. Please modify your prompt and retry. To learn more about our "
                     "content filtering policies please read our documentation: "
                     "https://go.microsoft.com/fwlink/?linkid=2198766")

# --- raw HTTP bodies --------------------------------------------------------------------------
PLAIN_500_BODY = "Internal Server Error"
ENVOY_OVERFLOW_BODY = "upstream connect error or disconnect/reset before headers. reset reason: overflow"
APIGW_502_JSON = '{"message": "Internal server error"}'


def build_variants() -> list[FaultSpec]:
    """The held-out specs in a fixed order (content, tool calls, HTTP, stream)."""
    def one(name: str, fault_type: str, target: str, op: str, description: str, *,
            guard: bool | None = None, delay_s: float = 0.0, **params: Any) -> C.FaultSpec:
        if guard is None:
            guard = target in ("content", "tool_calls")
        return C.FaultSpec(name=name, fault_type=fault_type, target=target, op=op, strategy="single",
                           family=C.VARIANT_FAMILY, description=description, guard=guard,
                           probability=1.0, max_fires=1, delay_s=delay_s, params=params)

    def content(name: str, fault_type: str, op: str, description: str, *, guard: bool | None = None,
            **params: Any) -> C.FaultSpec:
        return one(name, fault_type, "content", op, description, guard=guard, **params)

    def tool(name: str, fault_type: str, op: str, description: str, *, guard: bool | None = None,
            **params: Any) -> C.FaultSpec:
        return one(name, fault_type, "tool_calls", op, description, guard=guard, **params)

    def http(name: str, fault_type: str, op: str, description: str, *, guard: bool | None = None,
            **params: Any) -> C.FaultSpec:
        return one(name, fault_type, "http", op, description, guard=guard, **params)

    def stream(name: str, fault_type: str, op: str, description: str, *, guard: bool | None = None,
            **params: Any) -> C.FaultSpec:
        return one(name, fault_type, "stream", op, description, guard=guard, **params)

    set_text, drop = C.OP_SET_CONTENT, C.OP_DROP_TOOL_CALLS
    return [
        # -- error wordings in a 200 response
        content("v_timeout_nginx_504_html", C.TIMEOUT, set_text,
                "content replaced by nginx's 504 Gateway Time-out page", text=NGINX_504_HTML),
        content("v_error_cloudflare_520_html", C.ERROR, set_text,
                "content replaced by a Cloudflare 520 unknown-error page", text=CLOUDFLARE_520_HTML),
        content("v_schema_azure_error_json", C.SCHEMA, set_text,
                "content replaced by an Azure OpenAI InternalServerError object", text=AZURE_ERROR_JSON),
        content("v_schema_anthropic_overloaded_json", C.SCHEMA, set_text,
                "content replaced by Anthropic's overloaded_error object", text=ANTHROPIC_OVERLOADED_JSON),
        content("v_schema_gemini_internal_json", C.SCHEMA, set_text,
                "content replaced by a Google API INTERNAL error object (pretty-printed)",
                text=GEMINI_INTERNAL_JSON),
        content("v_error_python_traceback", C.ERROR, set_text,
                "content replaced by a self-hosted server's CUDA out-of-memory traceback",
                text=CUDA_OOM_TRACEBACK),
        # -- timeout wordings
        content("v_timeout_upstream_wording", C.TIMEOUT, set_text,
                "content replaced by Envoy's bare 'upstream request timeout'", text=ENVOY_UPSTREAM_TIMEOUT),
        content("v_timeout_deadline_exceeded", C.TIMEOUT, set_text,
                "content replaced by a gRPC DEADLINE_EXCEEDED error", text=GRPC_DEADLINE_EXCEEDED),
        content("v_schema_apigw_timeout_json", C.SCHEMA, set_text,
                "content replaced by AWS API Gateway's 'Endpoint request timed out' object",
                text=APIGW_TIMEOUT_JSON),
        tool("v_tool_connection_reset_wording", C.CONNECTION, drop,
             "tool calls dropped, content replaced by Envoy's connection-timeout reset message",
             text=ENVOY_RESET_TIMEOUT),
        # -- quota
        content("v_rate_limit_text", C.RATE_LIMIT, set_text,
                "content replaced by OpenAI's 'You exceeded your current quota' message",
                text=OPENAI_QUOTA_TEXT),
        # -- empty
        content("v_empty_whitespace", C.EMPTY, set_text, "content replaced by whitespace only", text="  \n"),
        content("v_empty_null_content", C.EMPTY, set_text,
                "content null with finish_reason stop and no tool calls", text=None, finish_reason="stop"),
        tool("v_tool_empty_finish_stop", C.EMPTY, drop,
             "tool calls stripped and finish_reason rewritten to stop", finish_reason="stop"),
        # -- truncation ratios
        content("v_truncate_10", C.TRUNCATE, C.OP_TRUNCATE_CONTENT,
                "content cut to 10% of its length, finish_reason=length", ratio=0.1, finish_reason="length"),
        content("v_truncate_50", C.TRUNCATE, C.OP_TRUNCATE_CONTENT,
                "content cut to 50% of its length, finish_reason=length", ratio=0.5, finish_reason="length"),
        content("v_truncate_70", C.TRUNCATE, C.OP_TRUNCATE_CONTENT,
                "content cut to 70% of its length, finish_reason=length", ratio=0.7, finish_reason="length"),
        content("v_truncate_silent_40", C.TRUNCATE, C.OP_TRUNCATE_CONTENT,
                "content cut to 40% by a proxy that keeps finish_reason=stop",
                ratio=0.4, finish_reason="stop"),
        tool("v_tool_truncate_50", C.TRUNCATE, C.OP_TRUNCATE_ARGUMENTS,
             "every string value of the first tool call's arguments cut to 50% (valid JSON)", ratio=0.5),
        # -- corruption modes
        content("v_corrupt_cp1252", C.CORRUPT, C.OP_CORRUPT_CONTENT,
                "content re-read as Windows-1252 mojibake (pure ASCII gets U+FFFD damage instead)",
                mode="mojibake", encoding="cp1252", ascii_fallback=True, fallback_mode="replacement",
                fraction=0.1),
        content("v_corrupt_symbols_content", C.CORRUPT, C.OP_CORRUPT_CONTENT,
                "10% of content characters replaced by box-drawing symbols U+2500-U+257F",
                mode="symbols", fraction=0.1, low=0x2500, high=0x257F),
        content("v_corrupt_replacement_chars", C.CORRUPT, C.OP_CORRUPT_CONTENT,
                "15% of content characters replaced by U+FFFD (lossy decode of damaged bytes)",
                mode="replacement", fraction=0.15),
        content("v_corrupt_zero_width", C.CORRUPT, C.OP_CORRUPT_CONTENT,
                "zero-width characters inserted after 30% of content characters (renders unchanged)",
                mode="zero_width", fraction=0.3),
        content("v_corrupt_homoglyph", C.CORRUPT, C.OP_CORRUPT_CONTENT,
                "half of the swappable Latin letters replaced by Cyrillic look-alikes",
                mode="homoglyph", fraction=0.5),
        tool("v_tool_corrupt_40pct", C.CORRUPT, C.OP_CORRUPT_ARGUMENTS,
             "40% of characters of every argument string replaced by U+2600-U+26FF symbols (valid JSON)",
             fraction=0.4, low=0x2600, high=0x26FF),
        tool("v_tool_corrupt_homoglyph", C.CORRUPT, C.OP_CORRUPT_ARGUMENTS,
             "Latin letters of every argument string swapped for Cyrillic look-alikes (valid JSON)",
             mode="homoglyph", fraction=0.5),
        # -- other shapes
        content("v_schema_detail_json", C.SCHEMA, set_text,
                "content replaced by a FastAPI-style {\"detail\": ...} object", text=DETAIL_JSON),
        content("v_schema_jsonrpc_error", C.SCHEMA, set_text,
                "content replaced by a JSON-RPC 2.0 error object", text=JSONRPC_ERROR_JSON),
        tool("v_tool_schema_nested", C.SCHEMA, C.OP_SET_ARGUMENTS,
             "first tool call's arguments wrapped in an unexpected {input: {args, kwargs}} object",
             arguments=NESTED_ARGUMENTS),
        tool("v_tool_error_empty_args", C.ERROR, C.OP_SET_ARGUMENTS,
             "first tool call's arguments replaced by an empty string (not JSON, parameters missing)",
             arguments=""),
        # -- content filter
        content("v_content_filter_azure", C.CONTENT_FILTER, drop,
                "Azure content filter: tool calls stripped, Azure's policy message, "
                "finish_reason=content_filter",
                guard=False, text=AZURE_FILTER_TEXT, finish_reason="content_filter"),
        content("v_content_filter_partial", C.CONTENT_FILTER, C.OP_TRUNCATE_CONTENT,
                "output filter stops the completion at 40%, finish_reason=content_filter",
                ratio=0.4, finish_reason="content_filter"),
        # -- real HTTP failures with other statuses and bodies
        http("v_http_500_plain_text", C.HTTP_ERROR, C.OP_HTTP_ERROR,
             "HTTP 500 with the ASGI server's bare 'Internal Server Error' text body",
             status=500, body=PLAIN_500_BODY),
        http("v_http_503_envoy_overflow", C.HTTP_ERROR, C.OP_HTTP_ERROR,
             "HTTP 503 from an Envoy sidecar: plain-text 'reset reason: overflow'",
             status=503, body=ENVOY_OVERFLOW_BODY, server="envoy"),
        http("v_http_529_overloaded", C.HTTP_ERROR, C.OP_HTTP_ERROR,
             "HTTP 529 Overloaded with the provider's error JSON and Retry-After", status=529, retry_after=1),
        http("v_http_502_apigw_json", C.HTTP_ERROR, C.OP_HTTP_ERROR,
             "HTTP 502 from an API gateway with {\"message\": \"Internal server error\"}",
             status=502, body=APIGW_502_JSON, request_id=False),
        http("v_http_429_insufficient_quota", C.RATE_LIMIT, C.OP_HTTP_ERROR,
             "HTTP 429 insufficient_quota (billing limit): no Retry-After or rate-limit headers",
             status=429, body=OPENAI_QUOTA_JSON),
        http("v_http_connect_timeout", C.TIMEOUT, C.OP_RAISE,
             "connect timeout: the TCP handshake never completes",
             exception="ConnectTimeout", message="timed out"),
        http("v_http_read_error_reset", C.CONNECTION, C.OP_RAISE,
             "connection reset by peer while reading the response",
             exception="ReadError", message="[Errno 104] Connection reset by peer"),
        # -- stream failures at other chunk counts
        stream("v_stream_cut_after_1", C.STREAM_CUT, C.OP_STREAM_CUT,
               "stream dies after 1 payload chunk without finish_reason or [DONE] (mid-stream read timeout)",
               after_chunks=1, done=False),
        stream("v_stream_cut_after_8", C.STREAM_CUT, C.OP_STREAM_CUT,
               "stream dies after 8 payload chunks without finish_reason or [DONE]",
               after_chunks=8, done=False),
        stream("v_stream_truncate_after_1", C.TRUNCATE, C.OP_STREAM_TRUNCATE,
               "content stops after 1 payload chunk, finish_reason=length, then [DONE]", after_chunks=1),
        stream("v_stream_corrupt_replacement", C.CORRUPT, C.OP_STREAM_CORRUPT,
               "15% of characters of every content delta replaced by U+FFFD",
               mode="replacement", fraction=0.15),
        stream("v_stream_stall_first_chunk", C.LATENCY, C.OP_STREAM_STALL,
               "3 s stall before the first payload chunk (slow time to first token)",
               before_chunk=1, seconds=3.0),
    ]


def held_out_names() -> list[str]:
    """The variant names in catalog order (the same list as ``fault_names("variant")``)."""
    return [spec.name for spec in build_variants()]
