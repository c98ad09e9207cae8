"""Signals for the forms real failures take: meanings by words and codes, error shapes, bodies."""

from __future__ import annotations

from typing import Any

import pytest

from agentchaos_otel import attributes as A
from agentchaos_otel import signals


@pytest.mark.parametrize("text,status,meaning", [
    ("Rate exceeded", None, "rate_limit"),
    ("RESOURCE_EXHAUSTED", None, "rate_limit"),
    ("context deadline exceeded", None, "timeout"),
    ("connect ETIMEDOUT 10.0.0.1:443", None, "timeout"),
    ("[Errno 104] Connection reset by peer", None, "connection"),
    ("Service Unavailable", 503, "server"),
    ("Something went wrong", 504, "timeout"),
    ("City not found", 404, "client"),
    ("all good", None, ""),
])
def test_failure_meaning(text: str, status: int | None, meaning: str) -> None:
    assert signals.failure_meaning(text, status) == meaning


@pytest.mark.parametrize("result,failure", [
    ({"ok": False, "error": "ratelimited"}, "rate_limit"),
    ({"success": False, "errors": [{"code": 10013, "message": "Rate limited."}]}, "rate_limit"),
    ({"status": "error", "message": "Upstream request timed out"}, "timeout"),
    ({"__type": "ThrottlingException", "message": "Rate exceeded"}, "rate_limit"),
    ({"type": "about:blank", "title": "Internal Server Error", "status": 500}, "server"),
    ({"data": None, "errors": [{"message": "boom", "extensions": {"code": "INTERNAL_SERVER_ERROR"}}]}, "server"),
    ({"message": "You have exceeded a secondary rate limit.", "documentation_url": "https://x"}, "rate_limit"),
])
def test_tool_results_that_report_failure_in_common_shapes(result: dict[str, Any], failure: str) -> None:
    s = signals.tool_result_signals(result)
    assert s[A.TOOL_RESULT_IS_ERROR] is True and s[A.TOOL_RESULT_FAILURE] == failure


@pytest.mark.parametrize("result", [{"message": "Order shipped", "order_id": "A-1"}, {"status": "ok", "n": 3},
                                    {"message": "Welcome back"}])
def test_healthy_results_with_message_or_status_are_not_failures(result: dict[str, Any]) -> None:
    assert signals.tool_result_signals(result)[A.TOOL_RESULT_IS_ERROR] is False


def test_body_signals_see_error_objects_missing_choices_null_message_and_refusals() -> None:
    err = signals.body_signals({"error": {"message": "Internal error", "code": "500"}})
    assert err[A.RESPONSE_BODY_ERROR] is True and err[A.RESPONSE_CHOICE_COUNT] == -1
    assert signals.body_signals({"choices": []})[A.RESPONSE_CHOICE_COUNT] == 0
    assert signals.body_signals({"choices": [{"message": None}]})[A.RESPONSE_MESSAGE_NULL] is True
    ref = signals.body_signals({"choices": [{"message": {"content": None, "refusal": "I can't."}}]})
    assert ref[A.RESPONSE_REFUSAL] is True
    ok = signals.body_signals({"choices": [{"message": {"content": "hi"}}]})
    assert ok == {A.RESPONSE_CHOICE_COUNT: 1, A.RESPONSE_MESSAGE_NULL: False}
    azure = signals.error_body_signals({"error": {"code": "content_filter", "message": "filtered by policy"}})
    assert azure[A.RESPONSE_ERROR_CODE] == "content_filter" and "filtered" in azure[A.RESPONSE_ERROR_MARKERS]


def test_format_and_corruption_signals() -> None:
    assert signals.embedded_json('```json\n{"a": 1}\n```') and signals.embedded_json('Here: {"a": 1}. Bye')
    assert not signals.embedded_json('{"a": 1}') and not signals.embedded_json("plain {text}")
    assert signals.looks_cut('{"city": "Lis') and signals.looks_cut('[1, 2') and not signals.looks_cut('{"a": 1}}')
    c = signals.content_signals("The answer is 4\ufffd.")
    assert c[A.RESPONSE_REPLACEMENT_CHARS] == 1
    req = signals.request_format_signals({"response_format": {"type": "json_object"},
                                          "messages": [{"role": "user", "content": "Reply in JSON"}]})
    assert req == {A.REQUEST_RESPONSE_FORMAT: "json_object", A.REQUEST_ASKS_JSON: True}
