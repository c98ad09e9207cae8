"""Signals for the forms real failures take: meanings by words and codes, error shapes, bodies."""

from __future__ import annotations

from typing import Any

import pytest

from agentchaos_otel import attributes as A
from agentchaos_otel import signals


@pytest.mark.parametrize("result,meaning", [
    ("Rate exceeded", "rate_limit"),
    ("StatusCode.RESOURCE_EXHAUSTED: quota", "rate_limit"),
    ("context deadline exceeded", "timeout"),
    ("Error: connect ETIMEDOUT 10.0.0.1:443", "timeout"),
    ("ConnectionResetError: [Errno 104] Connection reset by peer", "connection"),
    ({"status": 503, "message": "Service Unavailable"}, "error"),
    ({"status": 504, "message": "Something went wrong"}, "timeout"),
    ({"status": 404, "message": "City not found"}, "not_found"),
    ({"status": 401, "message": "Bad token"}, "auth"),
    ({"status": 422, "message": "Unprocessable"}, "invalid_request"),
])
def test_tool_result_meanings_come_from_codes_and_published_texts(result: object, meaning: str) -> None:
    s = signals.tool_result_signals(result)
    assert s[A.TOOL_RESULT_IS_ERROR] is True and s[A.TOOL_RESULT_FAILURE] == meaning


@pytest.mark.parametrize("result,failure", [
    ({"ok": False, "error": "ratelimited"}, "rate_limit"),
    ({"success": False, "errors": [{"code": 10013, "message": "Rate limited."}]}, "rate_limit"),
    ({"status": "error", "message": "Upstream request timed out"}, "timeout"),
    ({"__type": "ThrottlingException", "message": "Rate exceeded"}, "rate_limit"),
    ({"type": "about:blank", "title": "Internal Server Error", "status": 500}, "error"),
    ({"data": None, "errors": [{"message": "boom", "extensions": {"code": "INTERNAL_SERVER_ERROR"}}]}, "error"),
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


@pytest.mark.parametrize("error_type,failure", [("overloaded_error", "error"), ("rate_limit_error", "rate_limit"),
                                                ("authentication_error", "auth")])
def test_an_anthropic_error_object_in_a_2xx_messages_body_is_a_body_error(error_type: str, failure: str) -> None:
    body = {"type": "error", "error": {"type": error_type, "message": "..."}}
    got = signals.messages_body_signals(body)
    assert got[A.RESPONSE_BODY_ERROR] is True and got[A.RESPONSE_FAILURE] == failure
    assert got[A.RESPONSE_ERROR_CODE] == error_type
    assert signals.messages_body_signals({"type": "message", "content": [], "stop_reason": "end_turn"}) == {}


def test_format_and_corruption_signals() -> None:
    assert signals.embedded_json('```json\n{"a": 1}\n```') and signals.embedded_json('Here: {"a": 1}. Bye')
    assert not signals.embedded_json('{"a": 1}') and not signals.embedded_json("plain {text}")
    assert signals.looks_cut('{"city": "Lis') and signals.looks_cut('[1, 2') and not signals.looks_cut('{"a": 1}}')
    c = signals.content_signals("The answer is 4\ufffd.")
    assert c[A.RESPONSE_REPLACEMENT_CHARS] == 1
    req = signals.request_format_signals({"response_format": {"type": "json_object"},
                                          "messages": [{"role": "user", "content": "Reply in JSON"}]})
    assert req == {A.REQUEST_RESPONSE_FORMAT: "json_object", A.REQUEST_ASKS_JSON: True}


@pytest.mark.parametrize("result,meaning", [
    ({"code": 14, "message": "connection error: connection refused", "details": []}, "connection"),
    ({"code": 3, "message": "bad field", "details": []}, "invalid_request"),
    ({"code": "42P01", "details": None, "hint": None, "message": "relation \"t\" does not exist"}, "not_found"),
    ("<_InactiveRpcError of RPC that terminated with:\n\tstatus = StatusCode.UNAUTHENTICATED\n>", "auth"),
    ("[Errno 104] Connection reset by peer", "connection"),
    ({"took": 5, "_shards": {"total": 5, "successful": 3, "failed": 2}, "hits": {"hits": [{"id": 1}]}}, "partial"),
    ({"total_count": 3, "incomplete_results": True, "items": [1, 2]}, "partial"),
    ({"timed_out": True, "hits": {"total": {"value": 0}, "hits": []}}, "timeout"),
])
def test_status_objects_reports_reprs_and_partial_answers(result: object, meaning: str) -> None:
    s = signals.tool_result_signals(result)
    assert s[A.TOOL_RESULT_FAILURE] == meaning
    assert s[A.TOOL_RESULT_IS_ERROR] is (meaning != "partial")


def test_a_json_body_behind_a_stray_line_is_json_like_and_an_errno_line_is_not() -> None:
    cut = signals.tool_result_signals('1f4\r\n{"order": {"id": 3, "total": 12')
    assert cut[A.TOOL_RESULT_JSON_LIKE] is True and cut[A.TOOL_RESULT_IS_ERROR] is False
    errno_line = signals.tool_result_signals("[Errno 111] Connection refused")
    assert errno_line[A.TOOL_RESULT_JSON_LIKE] is False and errno_line[A.TOOL_RESULT_FAILURE] == "connection"


def test_stream_error_events_null_bodies_and_garbled_arguments() -> None:
    events = ['{"choices": [{"delta": {"content": "Hel"}}]}', '{"error": {"code": 429, "message": "Rate limited"}}']
    assert signals.stream_event_signals(events)[A.RESPONSE_FAILURE] == "rate_limit"
    assert signals.stream_event_signals(['{"choices": []}', "[DONE]"]) == {}
    assert signals.body_signals(None) == {A.RESPONSE_CHOICE_COUNT: -1}
    call = [{"function": {"name": "t", "arguments": '{"subject": "Caf\u00c3\u00a9 order for Z\u00c3\u00bcrich"}'}}]
    assert signals.tool_call_signals(call, None)[A.RESPONSE_TOOL_ARGS_MOJIBAKE] > 0
