"""Each response check on hand-built Chat Completions and Messages bodies, and the retry backoff."""

from __future__ import annotations

import pytest

from agentchaos_otel.guards import checks as C
from agentchaos_otel.guards.policy import GuardPolicy
from agentchaos_otel.guards.transport import decide
from tests.support.guards import ANTHROPIC_ORDER_TOOL, chat_request, completion, message, tool_call


def kinds(request: dict, response: dict, provider: str = "openai") -> list[str]:
    return [f.kind for f in C.check_response(provider, request, response)]


def test_a_good_tool_call_and_a_good_answer_have_no_findings() -> None:
    assert kinds(chat_request(), completion(tool_calls=[tool_call({"symbol": "NVDA", "amount": 3})],
                                            finish_reason="tool_calls")) == []
    assert kinds(chat_request(), completion("Bought 3 NVDA.")) == []


@pytest.mark.parametrize(("response", "expected"), [
    (completion("Bought 3 NV", finish_reason="length"), ["length"]),
    (completion(None, finish_reason="content_filter"), ["content_filter"]),
    (completion(None, refusal="I can't help with that"), ["content_filter"]),
    (completion(None), ["empty_answer"]),
    (completion("   \n"), ["empty_answer"]),
    (completion(tool_calls=[tool_call('{"symbol": "NVDA", "amount": 3')]), ["invalid_arguments"]),
    (completion(tool_calls=[tool_call("[1, 2]")]), ["invalid_arguments"]),
    (completion(tool_calls=[tool_call({"symbol": "NVDA", "amount": "3"})]), ["schema_mismatch"]),
    (completion(tool_calls=[tool_call({"symbol": "NVDA"})]), ["schema_mismatch"]),
    (completion(tool_calls=[tool_call({"symbol": "NVDA", "amount": 3, "side": "hold"})]), ["schema_mismatch"]),
    (completion(tool_calls=[tool_call({"ticker": "NVDA", "amount": 3})]), ["schema_mismatch"]),
    (completion(tool_calls=[tool_call({"symbol": "NVDA", "amount": 3}, name="cancel_order")]), ["schema_mismatch"]),
    ({"id": "x", "choices": []}, ["empty_answer"]),
])
def test_chat_completion_findings(response: dict, expected: list[str]) -> None:
    assert kinds(chat_request(), response) == expected


def test_schema_detail_names_the_offending_argument() -> None:
    found = C.check_response("openai", chat_request(),
                             completion(tool_calls=[tool_call({"symbol": "NVDA", "amount": "3"})]))
    assert found[0].tool == "place_order" and found[0].call_id == "call_1"
    assert "amount" in found[0].detail and "integer" in found[0].detail


def test_requested_response_format() -> None:
    as_object = chat_request(response_format={"type": "json_object"})
    assert kinds(as_object, completion('{"ok": true}')) == []
    assert kinds(as_object, completion("ok")) == ["format_mismatch"]
    assert kinds(as_object, completion("[1]")) == ["format_mismatch"]
    schema = {"type": "object", "properties": {"price": {"type": "number"}}, "required": ["price"]}
    with_schema = chat_request(response_format={"type": "json_schema",
                                                "json_schema": {"name": "p", "schema": schema}})
    assert kinds(with_schema, completion('{"price": 1.5}')) == []
    assert kinds(with_schema, completion('{"price": "high"}')) == ["format_mismatch"]
    # a cut answer is reported as cut, not also as badly formatted
    assert kinds(with_schema, completion('{"pri', finish_reason="length")) == ["length"]


def test_a_malformed_schema_in_the_request_blames_nobody() -> None:
    request = chat_request()
    request["tools"][0] = {"type": "function", "function": {"name": "place_order",
                                                            "parameters": {"type": "no-such-type"}}}
    assert kinds(request, completion(tool_calls=[tool_call({"symbol": "NVDA"})])) == []


def test_anthropic_messages_findings() -> None:
    request = {"model": "m", "max_tokens": 50, "messages": [], "tools": [ANTHROPIC_ORDER_TOOL]}
    use = {"type": "tool_use", "id": "tu_1", "name": "place_order", "input": {"symbol": "NVDA", "amount": 3}}
    assert kinds(request, message([use], "tool_use"), "anthropic") == []
    assert kinds(request, message([{"type": "text", "text": "Bought"}], "max_tokens"), "anthropic") == ["length"]
    assert kinds(request, message([{"type": "text", "text": ""}]), "anthropic") == ["empty_answer"]
    assert kinds(request, message([], "refusal"), "anthropic") == ["content_filter"]
    bad = {**use, "input": {"symbol": "NVDA", "amount": 0}}
    assert kinds(request, message([bad], "tool_use"), "anthropic") == ["schema_mismatch"]
    as_string = {**use, "input": '{"symbol": '}
    assert kinds(request, message([as_string], "tool_use"), "anthropic") == ["invalid_arguments"]


def test_enabled_checks_filter_findings_and_the_first_names_the_outcome() -> None:
    response = completion(tool_calls=[tool_call({"symbol": "NVDA"})], finish_reason="length")
    assert [f.kind for f in C.check_response("openai", chat_request(), response)] == ["length", "schema_mismatch"]
    only = C.check_response("openai", chat_request(), response, enabled=["schema_mismatch"])
    assert [f.kind for f in only] == ["schema_mismatch"]
    assert C.first(C.check_response("openai", chat_request(), response)).kind == "length"


def test_decisions_by_policy() -> None:
    import json

    bad = json.dumps(completion(None)).encode()
    good = json.dumps(completion("fine")).encode()
    req = chat_request()
    assert decide(GuardPolicy(), "openai", req, 200, good, 0).action == "pass"
    assert decide(GuardPolicy(), "openai", req, 200, bad, 0).action == "raise"
    assert decide(GuardPolicy(action="annotate"), "openai", req, 200, bad, 0).action == "annotate"
    retry = GuardPolicy(action="retry", max_retries=2)
    assert [decide(retry, "openai", req, 200, bad, a).action for a in range(3)] == ["retry", "retry", "raise"]
    assert decide(GuardPolicy(action="retry", then="annotate", max_retries=0), "openai", req, 200, bad,
                  0).action == "annotate"
    skipped = decide(GuardPolicy(), "openai", req, 500, bad, 0)
    assert skipped.action == "pass" and skipped.skipped == "status 500"
    assert decide(GuardPolicy(), "openai", req, 200, b"<html>", 0).skipped == "response body is not JSON"


def test_backoff_is_exponential_capped_and_reproducible_from_the_seed() -> None:
    p = GuardPolicy(action="retry", backoff=1.0, multiplier=2.0, max_backoff=3.0, jitter=0.2, seed=7)
    delays = [p.delay(k, b"req") for k in (1, 2, 3, 4)]
    assert delays == [p.delay(k, b"req") for k in (1, 2, 3, 4)]
    for d, base in zip(delays, (1.0, 2.0, 3.0, 3.0), strict=True):
        assert base * 0.8 <= d <= base * 1.2
    assert delays != [GuardPolicy(action="retry", backoff=1.0, max_backoff=3.0, jitter=0.2, seed=8).delay(k, b"req")
                      for k in (1, 2, 3, 4)]
    assert GuardPolicy(jitter=0.0, backoff=0.5).delay(3) == 2.0


def test_bad_policies_are_refused() -> None:
    with pytest.raises(ValueError, match="action"):
        GuardPolicy(action="ignore")
    with pytest.raises(ValueError, match="unknown check"):
        GuardPolicy(checks=("length", "spelling"))
