"""Failure forms kept out of rule development: written after the rules were fixed on the
development split of ``forms``, scored once, never tuned on (then fixed against, so no longer held
out: docs/diagnosis.md says so). Same labelling choices as ``forms`` (documented there; relabelled
with it to docs/taxonomy.md: a 400 is ``invalid_request``, Envoy's reset before headers inside a 200
is ``connection``, an error event inside a stream is an error of what it reports, prose where
JSON was asked is the model's own slip, no longer a form);
``refusal`` (OpenAI's ``message.refusal``) is labelled ``content_filter``.
"""

from __future__ import annotations

import json
from typing import Any

from benchmarks.corpora.misbehaving.forms import Form

HELDOUT_LLM_FORMS: tuple[Form, ...] = (
    Form("vllm_400_context_length", "invalid_request", "http", "http"),
    Form("gateway_429_no_retry_after", "rate_limit", "http", "http"),
    Form("cloudflare_520_html", "http_error", "http", "http"),
    Form("finish_null_at_max_tokens", "truncate", "content", "length"),
    Form("envoy_error_string_in_200", "connection", "content", "body"),
    Form("message_without_content", "empty", "content", "body"),
    Form("stream_error_event", "error", "stream", "stream", needs_stream=True),
    Form("control_chars_in_digits", "corrupt", "content", "corrupt"),
    Form("refusal", "content_filter", "content", "filter"),
)

HELDOUT_TOOL_FORMS: tuple[Form, ...] = (
    Form("stripe_rate_limit", "rate_limit", "tool_result", "tool_error"),
    Form("github_secondary_rate_limit", "rate_limit", "tool_result", "tool_error"),
    Form("jsonrpc_timed_out", "timeout", "tool_result", "tool_error"),
    Form("twilio_20429", "rate_limit", "tool_result", "tool_error"),
    Form("html_503_page", "error", "tool_result", "tool_error"),
    Form("python_traceback", "error", "tool_result", "tool_error"),
    Form("raises_network_unreachable", "connection", "tool_result", "tool_connection"),
    Form("raises_read_timeout", "timeout", "tool_result", "tool_error"),
    Form("body_cut_array", "malformed_json", "tool_result", "tool_data"),
    Form("null_result", "empty", "tool_result", "tool_data"),
)


class ReadTimeout(Exception):  # noqa: N818 - the name an HTTP library gives it
    """Raised as ``requests`` raises a read timeout."""


def heldout_tool_failure(form: str, tool: str, value: Any) -> Any:
    if form == "stripe_rate_limit":
        return {"error": {"code": "rate_limit", "message": "Too many requests hit the API too quickly. We "
                          "recommend an exponential backoff of your requests.", "type": "invalid_request_error"}}
    if form == "github_secondary_rate_limit":
        return {"message": "You have exceeded a secondary rate limit. Please wait a few minutes before you try "
                           "again.", "documentation_url": "https://docs.github.com/rest/overview/rate-limits"}
    if form == "jsonrpc_timed_out":
        return {"jsonrpc": "2.0", "id": 7, "error": {"code": -32603, "message": "Request timed out"}}
    if form == "twilio_20429":
        return {"code": 20429, "message": "Too Many Requests", "more_info": "https://www.twilio.com/docs/errors/20429",
                "status": 429}
    if form == "html_503_page":
        return ("<html><head><title>503 Service Unavailable</title></head><body><h1>Service Unavailable</h1>"
                "<p>The server is temporarily unable to service your request.</p></body></html>")
    if form == "python_traceback":
        return ("Traceback (most recent call last):\n  File \"/srv/app/fetch.py\", line 41, in fetch\n"
                "    return payload[\"data\"][0]\nKeyError: 'data'")
    if form == "raises_network_unreachable":
        raise OSError(101, "Network is unreachable")
    if form == "raises_read_timeout":
        raise ReadTimeout("HTTPSConnectionPool(host='api.example.com', port=443): Read timed out. (read timeout=10)")
    if form == "body_cut_array":
        text = json.dumps([value, value])
        return text[: len(text) * 2 // 3]
    if form == "null_result":
        return None
    raise ValueError(f"no held-out tool form {form!r}")


def heldout_llm_failure(form: str, request: dict[str, Any], body: dict[str, Any]) -> tuple[int, Any, str] | None:
    """(status, body, content type) for a non-streamed held-out form; None for streamed ones."""
    choice = body["choices"][0]
    msg = choice["message"]
    if form == "vllm_400_context_length":
        return 400, {"object": "error", "message": "This model's maximum context length is 4096 tokens. However, "
                     "you requested 5120 tokens.", "type": "BadRequestError", "param": None, "code": 400}, "json"
    if form == "gateway_429_no_retry_after":
        return 429, {"message": "Too many requests, please wait before trying again."}, "json"
    if form == "cloudflare_520_html":
        return 520, ("<!DOCTYPE html><html><head><title>api.example.com | 520: Web server is returning an unknown "
                     "error</title></head><body><h1>Web server is returning an unknown error</h1><span>Error code "
                     "520</span></body></html>"), "html"
    if form == "finish_null_at_max_tokens":
        text = msg.get("content") or ""
        choice["message"] = {"role": "assistant", "content": text[: max(1, len(text) * 2 // 5)]}
        choice["finish_reason"] = None
        body["usage"]["completion_tokens"] = int(request.get("max_tokens") or 256)
        return 200, body, "json"
    if form == "envoy_error_string_in_200":
        return 200, {"error": "upstream connect error or disconnect/reset before headers. reset reason: "
                              "connection failure"}, "json"
    if form == "message_without_content":
        choice["message"] = {"role": "assistant"}
        choice["finish_reason"] = "stop"
        return 200, body, "json"
    if form == "control_chars_in_digits":
        text = msg.get("content") or ""
        # before every digit; in a text with none, before every tenth character (the label says
        # the content was damaged, so it must be)
        bite = any(ch.isdigit() for ch in text)
        msg["content"] = "".join("\x00" + ch if (ch.isdigit() if bite else i % 10 == 9) else ch
                                 for i, ch in enumerate(text))
        return 200, body, "json"
    if form == "refusal":
        choice["message"] = {"role": "assistant", "content": None,
                             "refusal": "I'm sorry, I cannot assist with that request."}
        choice["finish_reason"] = "stop"
        return 200, body, "json"
    return None
