"""Observable signals the diagnosers depend on, on real-world error forms and healthy text."""

from __future__ import annotations

import json

import pytest

from agentchaos_otel import attributes as A
from agentchaos_otel import signals
from diagnosers.key_style import key_style


@pytest.mark.parametrize("text,marker", [
    ("HTTP/1.1 503 Service Unavailable", "http_status"),
    ('{"error": {"message": "Rate limit reached for gpt-4o", "type": "requests"}}', "provider_json"),
    ("<html><head><title>504 Gateway Time-out</title></head></html>", "html_page"),
    ("Request timed out.", "timeout"),
    ("Quota exceeded for requests per minute on this project", "rate_limit"),
    ("The engine is currently overloaded, please try again later", "unavailable"),
])
def test_error_forms_are_recognised(text: str, marker: str) -> None:
    assert marker in signals.error_markers(text)


def test_prose_mentioning_errors_late_is_not_an_error() -> None:
    prose = ("Here is a summary of the deployment guide. " * 10
             + "If you see a rate limit or a request timed out, retry later.")
    assert signals.error_markers(prose) == []
    assert signals.content_signals(prose)[A.RESPONSE_ERROR_MARKER] == ""


def test_provider_error_body_keeps_every_form() -> None:
    s = signals.content_signals('{"error": "rate_limit_exceeded", "message": "Too many requests"}')
    assert s[A.RESPONSE_ERROR_MARKERS][:2] == ["provider_json", "rate_limit"]
    assert s[A.RESPONSE_IS_JSON] is True


def test_unicode_anomaly_ascii_fast_path_matches_slow_path() -> None:
    assert signals.unicode_anomaly("plain text") == 0.0
    assert signals.unicode_anomaly("ab\x07d") == pytest.approx(0.25)
    assert signals.unicode_anomaly("a\u2603") == pytest.approx(0.5)


SCHEMA = {"type": "object", "properties": {"city": {"type": "string"},
                                           "unit": {"type": "string", "enum": ["c", "f"]},
                                           "days": {"type": "integer"}}, "required": ["city"]}


@pytest.mark.parametrize("args,problem", [
    ({"city": "Oslo"}, ""),
    ({"wrong_param": "x"}, "no_declared_key"),
    ({"city": "Oslo", "wrong_param": "x"}, "unknown_key"),
    ({"unit": "c"}, "missing_required"),
    ({"city": "Oslo", "days": "3"}, "wrong_type"),
    ({"city": "Oslo", "days": True}, "wrong_type"),
    ({"city": "Oslo", "unit": ""}, "enum"),
    ({"city": ""}, "empty_value"),
])
def test_schema_problem_kinds(args: dict, problem: str) -> None:
    assert signals.schema_problem(args, SCHEMA) == problem


def test_tool_call_signals_report_problem_and_empty_args() -> None:
    tools = [{"type": "function", "function": {"name": "w", "parameters": SCHEMA}}]
    s = signals.tool_call_signals([{"function": {"name": "w", "arguments": "{}"}}], tools)
    assert s[A.RESPONSE_TOOL_ARGS_EMPTY] == 1
    assert s[A.RESPONSE_TOOL_ARGS_SCHEMA_VALID] is False
    assert s[A.RESPONSE_TOOL_ARGS_PROBLEM] == "missing_required"
    cut = signals.tool_call_signals([{"function": {"name": "w", "arguments": '{"city": "Os'}}], tools)
    assert cut[A.RESPONSE_TOOL_ARGS_VALID] is False and cut[A.RESPONSE_TOOL_ARGS_PROBLEM] == "cut"
    bad = signals.tool_call_signals([{"function": {"name": "w", "arguments": '{"city": Oslo}'}}], tools)
    assert bad[A.RESPONSE_TOOL_ARGS_VALID] is False and bad[A.RESPONSE_TOOL_ARGS_PROBLEM] == "invalid_json"


@pytest.mark.parametrize("result,kind", [
    ({"error": "timeout"}, "timeout"),
    ({"error": "Request timed out after 30s"}, "timeout"),
    ({"error": "rate_limit", "status": 429}, "rate_limit"),
    ({"status": 429, "detail": "slow down"}, "rate_limit"),
    ("HTTP 429 Too Many Requests", "rate_limit"),
])
def test_tool_result_transient_errors(result: object, kind: str) -> None:
    s = signals.tool_result_signals(result)
    assert s[A.TOOL_RESULT_IS_ERROR] is True
    assert kind in s[A.TOOL_RESULT_ERROR_MARKERS]


def test_tool_result_shape_and_counts() -> None:
    good = signals.tool_result_signals({"price": 12.5, "items": [1, 2, 3], "meta": {"a": 1}})
    renamed = signals.tool_result_signals({"PRICE": "12.5", "items": ["1", "2", "3"], "meta": {"a": "1"}})
    assert good[A.TOOL_RESULT_KEYS] == ["items", "meta", "price"]
    assert good[A.TOOL_RESULT_NUMERIC_STRINGS] == 0 and renamed[A.TOOL_RESULT_NUMERIC_STRINGS] == 5
    assert good[A.TOOL_RESULT_SHAPE_DIGEST] != renamed[A.TOOL_RESULT_SHAPE_DIGEST]
    same_shape = signals.tool_result_signals({"price": 99.0, "items": [7], "meta": {"a": 2}})
    assert same_shape[A.TOOL_RESULT_SHAPE_DIGEST] == good[A.TOOL_RESULT_SHAPE_DIGEST]
    assert good[A.TOOL_RESULT_ITEM_COUNT] == 3 and good[A.TOOL_RESULT_KEY_COUNT] == 4


@pytest.mark.parametrize("result,empty,is_json,json_like", [
    ({}, True, True, True), ("", True, False, False), ('{"a": [1, 2', False, False, True),
    ("plain text answer", False, False, False), ([], True, True, True),
])
def test_tool_result_empty_and_malformed(result: object, empty: bool, is_json: bool, json_like: bool) -> None:
    s = signals.tool_result_signals(result)
    assert (s[A.TOOL_RESULT_EMPTY], s[A.TOOL_RESULT_IS_JSON], s[A.TOOL_RESULT_JSON_LIKE]) == (empty, is_json,
                                                                                              json_like)
    assert s[A.TOOL_RESULT_IS_ERROR] is False


def test_tool_result_huge_structure_is_bounded() -> None:
    s = signals.tool_result_signals({"rows": [{"v": str(i)} for i in range(100_000)]})
    assert s[A.TOOL_RESULT_IS_JSON] is True
    assert s[A.TOOL_RESULT_NUMERIC_STRINGS] < 100_000  # walk stopped at its budget


@pytest.mark.parametrize("args,result,keys", [
    ({"flight_id": 4012}, {"flight_id": 4013, "status": "ok"}, ["flight_id"]),
    ({"flight_id": 4012}, {"flight_id": "4012"}, []),
    ('{"bookingId": "A1", "date": "2026-04-12"}', '{"bookingId": "a1", "date": "2026-04-13"}', ["date"]),
    ({"value": 21, "unit": "f"}, {"value": 69.8, "unit": "f"}, []),  # converted values may differ
    ({"id": 3}, "not json", []),
])
def test_echo_mismatches(args: object, result: object, keys: list[str]) -> None:
    assert signals.echo_mismatches(args, result) == keys


def test_argument_grounding_counts_values_the_conversation_never_mentioned() -> None:
    calls = [{"function": {"name": "get_weather", "arguments": '{"city": "Springfield", "unit": "c"}'}},
             {"function": {"name": "get_time", "arguments": '{"city": "oslo"}'}}]
    messages = [{"role": "user", "content": "Weather and time in Oslo?"}]
    out = signals.argument_grounding(calls, messages)
    # "c" is too short to judge; "oslo" is grounded (case-insensitive); "Springfield" is not.
    assert out == {A.RESPONSE_TOOL_ARGS_STRINGS: 2, A.RESPONSE_TOOL_ARGS_UNGROUNDED: 1,
                   A.RESPONSE_TOOL_ARGS_CUT_VALUES: 0, A.RESPONSE_TOOL_ARGS_SHORT_CUT_VALUES: 0}
    earlier_call = messages + [{"role": "assistant", "content": None, "tool_calls": [calls[0]]}]
    assert signals.argument_grounding(calls, earlier_call)[A.RESPONSE_TOOL_ARGS_UNGROUNDED] == 0
    assert signals.argument_grounding([], messages) == {}


def test_text_the_model_composed_is_not_an_ungrounded_reference() -> None:
    messages = [{"role": "user", "content": "Tell Mei Chen (mei@example.com) her refund for ORD-3451 is done"}]
    calls = [{"function": {"name": "send_email", "arguments": json.dumps({
        "to": "mei@example.com", "subject": "Refund for order ORD-3451",
        "body": "Hi Mei Chen, your refund is on its way and should arrive within five days."})}}]
    out = signals.argument_grounding(calls, messages)
    # the subject and the body are new text by nature: only the address is a reference, and it is grounded
    assert out[A.RESPONSE_TOOL_ARGS_STRINGS] == 1 and out[A.RESPONSE_TOOL_ARGS_UNGROUNDED] == 0
    invented = [{"function": {"name": "send_email", "arguments": json.dumps({"to": "noah@example.com",
                                                                          "subject": "Refund for order ORD-3451"})}}]
    assert signals.argument_grounding(invented, messages)[A.RESPONSE_TOOL_ARGS_UNGROUNDED] == 1


def test_argument_values_cut_short_are_counted_apart_from_invented_ones() -> None:
    messages = [{"role": "user", "content": "Flights from Lisbon to San Francisco on 2026-04-12, in C please"}]
    cut = [{"function": {"name": "f", "arguments": '{"origin": "Lis", "destination": "San F", "date": "2026-04"}'}}]
    out = signals.argument_grounding(cut, messages)
    # "Lis" and "San F" only start longer words; "2026-04" starts "2026-04-12" too
    assert out[A.RESPONSE_TOOL_ARGS_CUT_VALUES] == 3 and out[A.RESPONSE_TOOL_ARGS_UNGROUNDED] == 0
    whole = [{"function": {"name": "f", "arguments": '{"origin": "Lisbon", "unit": "c", "to": "Paris"}'}}]
    out = signals.argument_grounding(whole, messages)
    assert out[A.RESPONSE_TOOL_ARGS_CUT_VALUES] == 0 and out[A.RESPONSE_TOOL_ARGS_UNGROUNDED] == 1
    short = [{"function": {"name": "f", "arguments": '{"origin": "Li", "unit": "F", "currency": "EUR"}'}}]
    out = signals.argument_grounding(short, messages + [{"role": "user", "content": "in euros"}])
    # "Li" starts "Lisbon", "F" starts "Flights": short, counted apart (weak); "EUR" for "euros" is an
    # abbreviation in another case, not a cut value
    assert out[A.RESPONSE_TOOL_ARGS_SHORT_CUT_VALUES] == 2 and out[A.RESPONSE_TOOL_ARGS_CUT_VALUES] == 0
    code = [{"function": {"name": "f", "arguments": '{"symbol": "NVD"}'}}]
    assert signals.argument_grounding(code, [{"role": "user", "content": "Price of NVDA?"}])[
        A.RESPONSE_TOOL_ARGS_CUT_VALUES] == 1  # a code cut short keeps the code's case


@pytest.mark.parametrize("key,style", [
    ("rslt", "abbrev"), ("fl_cntnt", "abbrev"), ("utc_offst", "abbrev"), ("FILE_CONTENT", "upper"),
    ("ID", "other"), ("MA(20)", "other"), ("html_page", "snake"), ("wind_kph", "snake"), ("add", "snake"),
    ("arch", "snake"), ("lockStatus", "camel"), ("shop-location", "kebab"),
])
def test_key_naming_conventions(key: str, style: str) -> None:
    assert key_style(key) == style


@pytest.mark.parametrize("text,marker", [
    ("You exceeded your current quota, please check your plan and billing details.", "rate_limit"),
    ('{"jsonrpc": "2.0", "error": {"code": -32600, "message": "Invalid Request"}, "id": null}',
     "provider_json"),
    ('{"error":{"code":"InternalServerError","message":"Backend returned unexpected response."}}',
     "unavailable"),
])
def test_more_real_world_error_forms(text: str, marker: str) -> None:
    assert marker in signals.error_markers(text)


def test_invisible_and_look_alike_characters_are_anomalous_but_other_scripts_are_not() -> None:
    assert signals.unicode_anomaly("he\u200bllo\u200b wo\u200brld") > 0.1
    assert signals.unicode_anomaly("The weather in \u041esl\u043e is fine, \u0430nd w\u0430rm") > 0.05
    for healthy in ("Привет, мир! Hello", "Café in Zürich, naïve", "Καλημέρα κόσμε", "a\u200db"):
        assert signals.unicode_anomaly(healthy) < 0.05, healthy


def test_whitespace_only_reply_is_blank() -> None:
    assert signals.content_signals("  \n")[A.RESPONSE_CONTENT_BLANK] is True
    assert signals.content_signals("ok")[A.RESPONSE_CONTENT_BLANK] is False
    assert signals.content_signals(None)[A.RESPONSE_CONTENT_BLANK] is False
