"""Every AgentChaos configuration's rewrite, pinned on realistic OpenAI and Anthropic bodies."""

from __future__ import annotations

import copy
import json
import random
from collections.abc import Callable
from typing import Any

import pytest
from openai.types.chat import ChatCompletion

from agentchaos_otel.faults import anthropic as anth
from agentchaos_otel.faults import catalog as C
from agentchaos_otel.faults.catalog import get_fault
from agentchaos_otel.faults.llm_response import (
    FaultNotApplicable,
    apply_response_fault,
    corrupt_symbols,
    guard_reason,
    has_tool_calls,
    mojibake,
    transform_arguments,
)

TEXT = "Paris is 25°C and sunny today — a perfect café-terrace afternoon. Bring sunglasses!"
TOKENS = ["Paris", " is", " ", "25", "°C", " and", " sunny", " today", " —", " a", " perfect", " café",
          "-terr", "ace", " afternoon", ".", " Bring", " sunglasses", "!"]
assert "".join(TOKENS) == TEXT

WEATHER_ARGS = {"location": "Paris, France", "unit": "celsius", "days": 3, "hourly": True,
                "filters": {"tags": ["rain", "wind"], "note": "outdoor café seating"}}
TIME_ARGS = {"timezone": "Europe/Paris"}


def _logprob(token: str, i: int) -> dict[str, Any]:
    alts = [token, token.upper() + "x", "the"]
    return {"token": token, "logprob": -0.01 * (i + 1), "bytes": list(token.encode()),
            "top_logprobs": [{"token": t, "logprob": -0.01 * (i + 1) - 2.0 * k, "bytes": list(t.encode())}
                             for k, t in enumerate(alts)]}


def _usage(prompt: int, completion: int) -> dict[str, Any]:
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion,
            "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
            "completion_tokens_details": {"reasoning_tokens": 0, "audio_tokens": 0,
                                          "accepted_prediction_tokens": 0, "rejected_prediction_tokens": 0}}


def text_body(content: str = TEXT, tokens: list[str] = TOKENS,
              rid: str = "chatcmpl-B9MBs8CjcvOU2jLn4n570S5qMJKcT") -> dict[str, Any]:
    return {
        "id": rid, "object": "chat.completion", "created": 1741569952, "model": "gpt-4o-2024-08-06",
        "choices": [{"index": 0,
                     "message": {"role": "assistant", "content": content, "refusal": None, "annotations": []},
                     "logprobs": {"content": [_logprob(t, i) for i, t in enumerate(tokens)], "refusal": None},
                     "finish_reason": "stop"}],
        "usage": _usage(41, len(tokens)), "service_tier": "default", "system_fingerprint": "fp_f9f4fb6dbf",
    }


def _compact(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def tool_body() -> dict[str, Any]:
    return {
        "id": "chatcmpl-C1tT0oLDoFT7k3cZ0xwKkYv9aNq2R", "object": "chat.completion", "created": 1741570001,
        "model": "gpt-4o-2024-08-06",
        "choices": [{"index": 0,
                     "message": {"role": "assistant", "content": None, "refusal": None, "annotations": [],
                                 "tool_calls": [
                                     {"id": "call_12345xyz", "type": "function",
                                      "function": {"name": "get_weather",
                                                   "arguments": _compact(WEATHER_ARGS)}},
                                     {"id": "call_67890abc", "type": "function",
                                      "function": {"name": "get_time",
                                                   "arguments": _compact(TIME_ARGS)}}]},
                     "logprobs": None, "finish_reason": "tool_calls"}],
        "usage": _usage(82, 41), "service_tier": "default", "system_fingerprint": "fp_f9f4fb6dbf",
    }


_EARLIER = "Earlier answer: the forecast for Lyon is 18°C."
PREVIOUS = text_body(_EARLIER, [_EARLIER], rid="chatcmpl-previous0001")


def msg(body: dict[str, Any]) -> dict[str, Any]:
    return body["choices"][0]["message"]


def choice(body: dict[str, Any]) -> dict[str, Any]:
    return body["choices"][0]


def args(body: dict[str, Any], i: int = 0) -> Any:
    return json.loads(msg(body)["tool_calls"][i]["function"]["arguments"])


def walk_strings(a: Any, b: Any, out: list[tuple[str, str]]) -> None:
    """Pairs of (original, rewritten) string values; fails if the JSON structure differs."""
    if isinstance(a, str):
        assert isinstance(b, str)
        out.append((a, b))
    elif isinstance(a, dict):
        assert isinstance(b, dict) and list(a) == list(b)
        for k in a:
            walk_strings(a[k], b[k], out)
    elif isinstance(a, list):
        assert isinstance(b, list) and len(a) == len(b)
        for x, y in zip(a, b, strict=True):
            walk_strings(x, y, out)
    else:
        assert a == b


# --- expectations per configuration (OpenAI) --------------------------------------------------
Check = Callable[[dict[str, Any], dict[str, Any]], None]


def set_content(text: str, finish: str | None = None) -> Check:
    def check(orig: dict[str, Any], out: dict[str, Any]) -> None:
        assert msg(out)["content"] == text
        assert choice(out)["finish_reason"] == (finish or choice(orig)["finish_reason"])
        assert msg(out).get("tool_calls") == msg(orig).get("tool_calls")
        if msg(orig)["content"] != text:
            assert choice(out)["logprobs"] is None
    return check


def truncate_content(ratio: float) -> Check:
    def check(orig: dict[str, Any], out: dict[str, Any]) -> None:
        content = msg(orig)["content"]
        cut = content[: int(len(content) * ratio)]
        assert msg(out)["content"] == cut and len(cut) < len(content)
        assert choice(out)["finish_reason"] == "length"
        kept = "".join(e["token"] for e in choice(out)["logprobs"]["content"])
        next_token = TOKENS[len(choice(out)["logprobs"]["content"])]
        assert cut.startswith(kept) and len(kept) + len(next_token) > len(cut)
    return check


def corrupt_content(orig: dict[str, Any], out: dict[str, Any]) -> None:
    assert msg(out)["content"] == TEXT.encode("utf-8").decode("latin-1") != TEXT
    assert "Â°C" in msg(out)["content"] and "cafÃ©" in msg(out)["content"]
    assert choice(out)["logprobs"] is None and choice(out)["finish_reason"] == "stop"


def set_args(text: str) -> Check:
    def check(orig: dict[str, Any], out: dict[str, Any]) -> None:
        assert msg(out)["tool_calls"][0]["function"]["arguments"] == text
        assert msg(out)["tool_calls"][0]["id"] == "call_12345xyz"
        assert msg(out)["tool_calls"][0]["function"]["name"] == "get_weather"
        assert msg(out)["tool_calls"][1] == msg(orig)["tool_calls"][1]
        assert choice(out)["finish_reason"] == "tool_calls"
    return check


def drop_tools(text: str | None, finish: str | None = None) -> Check:
    def check(orig: dict[str, Any], out: dict[str, Any]) -> None:
        if msg(orig).get("tool_calls"):
            assert msg(out)["tool_calls"] == []
        else:
            assert "tool_calls" not in msg(out)
        assert msg(out)["content"] == (text if text is not None else msg(orig)["content"])
        assert choice(out)["finish_reason"] == (finish or choice(orig)["finish_reason"])
    return check


def truncate_args(orig: dict[str, Any], out: dict[str, Any]) -> None:
    pairs: list[tuple[str, str]] = []
    walk_strings(args(orig), args(out), pairs)
    assert len(pairs) == 5
    for before, after in pairs:
        assert after == before[: max(1, int(len(before) * 0.3))]
    assert args(out)["days"] == 3 and args(out)["hourly"] is True
    assert msg(out)["tool_calls"][1] == msg(orig)["tool_calls"][1]


def corrupt_args(orig: dict[str, Any], out: dict[str, Any]) -> None:
    pairs: list[tuple[str, str]] = []
    walk_strings(args(orig), args(out), pairs)
    for before, after in pairs:
        assert len(after) == len(before)
        diff = [(x, y) for x, y in zip(before, after, strict=True) if x != y]
        assert len(diff) == max(1, int(len(before) * 0.2))
        assert all(0x2600 <= ord(y) <= 0x26FF for _, y in diff)
    assert msg(out)["tool_calls"][1] == msg(orig)["tool_calls"][1]


def unchanged(orig: dict[str, Any], out: dict[str, Any]) -> None:
    assert out == orig


OPENAI_EXPECT: dict[str, Check] = {
    "llm_error": set_content("[API ERROR] HTTP 500: Internal Server Error. The server encountered an "
                             "unexpected condition."),
    "llm_timeout": set_content("[TIMEOUT] The request timed out. The server did not respond within the "
                               "expected time."),
    "llm_empty": set_content(""),
    "llm_truncate": truncate_content(0.3),
    "llm_corrupt": corrupt_content,
    "llm_schema": set_content('{"error": "content_policy_violation", "message": "This response has been '
                              'filtered."}'),
    "tool_error": set_args("{}"),
    "tool_timeout": drop_tools("[TIMEOUT] Connection dropped. The server did not respond."),
    "tool_empty": drop_tools(None),
    "tool_truncate": truncate_args,
    "tool_corrupt": corrupt_args,
    "tool_schema": set_args('{"wrong_param": "unexpected_value"}'),
    "compound_api_degradation": set_content(C.SERVICE_UNAVAILABLE_TEXT),
    "compound_content_filter": drop_tools(C.CONTENT_FILTERED_TEXT, "content_filter"),
    "compound_max_tokens": truncate_content(0.5),
    "compound_proxy_html": set_content(C.PROXY_HTML_TEXT),
    "compound_stale_cache": lambda orig, out: None,  # checked separately (needs the previous body)
    "compound_stale_data": set_args('{"city": "Pyongyang"}'),
    "compound_wrong_entity": set_args('{"city": "Springfield"}'),
    "compound_slow_response": unchanged,
}


def base_of(name: str) -> str:
    if name.startswith("compound_"):
        return name
    if "_pos_" in name:
        return name.split("_pos_")[0]
    return name.rsplit("_", 1)[0]


def bodies_for(spec: C.FaultSpec) -> list[dict[str, Any]]:
    if not spec.guard:
        return [text_body(), tool_body()]
    return [tool_body()] if spec.target == "tool_calls" else [text_body()]


KEPT = ("id", "object", "created", "model", "usage", "service_tier", "system_fingerprint")


@pytest.mark.parametrize("name", C.agentchaos_names())
def test_each_agentchaos_configuration_rewrites_openai_body(name: str) -> None:
    spec = get_fault(name)
    check = OPENAI_EXPECT[base_of(name)]
    for body in bodies_for(spec):
        snapshot = copy.deepcopy(body)
        out = apply_response_fault(spec, body, rng=random.Random(7), previous_body=PREVIOUS)
        assert body == snapshot, "input must not be modified"
        if spec.op == C.OP_REPLAY_PREVIOUS:
            assert out == PREVIOUS and out is not PREVIOUS
            continue
        check(body, out)
        for key in KEPT:
            assert out[key] == body[key]
        assert msg(out)["role"] == "assistant" and msg(out)["annotations"] == []
        ChatCompletion.model_validate(out)  # still a valid chat completion for the SDK


def test_every_configuration_has_an_expectation() -> None:
    assert {base_of(n) for n in C.agentchaos_names()} == set(OPENAI_EXPECT)


@pytest.mark.parametrize("name", [n for n in C.agentchaos_names()
                                  if get_fault(n).op in (C.OP_CORRUPT_ARGUMENTS, C.OP_CORRUPT_CONTENT)])
def test_equal_seeds_give_equal_rewrites(name: str) -> None:
    spec = get_fault(name)
    body = bodies_for(spec)[0]
    a = apply_response_fault(spec, body, rng=random.Random(11))
    b = apply_response_fault(spec, body, rng=random.Random(11))
    assert a == b
    if spec.op == C.OP_CORRUPT_ARGUMENTS:
        c = apply_response_fault(spec, body, rng=random.Random(12))
        assert args(c) != args(a)


def test_positional_fault_ignores_guard_and_keeps_tool_calls() -> None:
    body = tool_body()
    out = apply_response_fault(get_fault("llm_timeout_pos_mid"), body, rng=random.Random(0))
    assert msg(out)["content"].startswith("[TIMEOUT] ")
    assert msg(out)["tool_calls"] == msg(body)["tool_calls"]


def test_tool_argument_rewrites_keep_valid_json_and_spacing_style() -> None:
    body = tool_body()
    spaced = copy.deepcopy(body)
    spaced["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"] = json.dumps(WEATHER_ARGS)
    for spec_name in ("tool_truncate_single", "tool_corrupt_single"):
        compact = msg(apply_response_fault(get_fault(spec_name), body, rng=random.Random(1)))
        loose = msg(apply_response_fault(get_fault(spec_name), spaced, rng=random.Random(1)))
        assert '": ' not in compact["tool_calls"][0]["function"]["arguments"]
        assert '": ' in loose["tool_calls"][0]["function"]["arguments"]
        assert json.loads(compact["tool_calls"][0]["function"]["arguments"]) == json.loads(
            loose["tool_calls"][0]["function"]["arguments"])


def test_invalid_arguments_become_a_valid_placeholder() -> None:
    body = tool_body()
    body["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"] = '{"location": "Par'
    t = apply_response_fault(get_fault("tool_truncate_single"), body, rng=random.Random(0))
    c = apply_response_fault(get_fault("tool_corrupt_single"), body, rng=random.Random(0))
    assert args(t) == {"_fault_truncated": True} and args(c) == {"_fault_corrupted": True}


def test_arguments_without_strings_are_left_byte_identical() -> None:
    original = '{ "a":1,\n  "b":[true,null] }'
    assert transform_arguments(original, str.upper, "{}") == original
    assert transform_arguments('{ "a":"x" }', str.upper, "{}") == '{"a":"X"}'


def test_arguments_sent_as_an_object_stay_an_object() -> None:
    body = tool_body()
    body["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"] = dict(TIME_ARGS)
    out = apply_response_fault(get_fault("tool_truncate_single"), body, rng=random.Random(0))
    assert msg(out)["tool_calls"][0]["function"]["arguments"] == {"timezone": "Eur"}


def test_only_the_first_choice_is_rewritten() -> None:
    body = text_body()
    second = copy.deepcopy(body["choices"][0])
    second["index"] = 1
    body["choices"].append(second)
    out = apply_response_fault(get_fault("llm_truncate_single"), body, rng=random.Random(0))
    assert out["choices"][1] == second and choice(out)["finish_reason"] == "length"


def test_custom_tool_calls_without_function_are_not_applicable() -> None:
    body = tool_body()
    body["choices"][0]["message"]["tool_calls"] = [{"id": "call_c", "type": "custom",
                                                   "custom": {"name": "sql", "input": "SELECT 1"}}]
    assert has_tool_calls(body)
    with pytest.raises(FaultNotApplicable, match="no function object"):
        apply_response_fault(get_fault("tool_error_single"), body, rng=random.Random(0))


def test_all_calls_variant_rewrites_every_tool_call() -> None:
    spec = get_fault("tool_error_single").variant("tool_error_all", params={"all_calls": True})
    out = apply_response_fault(spec, tool_body(), rng=random.Random(0))
    assert [c["function"]["arguments"] for c in msg(out)["tool_calls"]] == ["{}", "{}"]


def test_ascii_content_survives_mojibake_unless_fallback_requested() -> None:
    body = text_body("Plain ASCII answer.", ["Plain", " ASCII", " answer", "."])
    spec = get_fault("llm_corrupt_single")
    assert apply_response_fault(spec, body, rng=random.Random(0)) == body
    fallback = spec.variant("llm_corrupt_fallback", params={"ascii_fallback": True})
    out = apply_response_fault(fallback, body, rng=random.Random(0))
    assert msg(out)["content"] != "Plain ASCII answer." and len(msg(out)["content"]) == 19


def test_cp1252_mojibake_gives_the_classic_sequences() -> None:
    assert mojibake("don’t — café", "cp1252") == "donâ€™t â€” cafÃ©"
    assert mojibake("don’t", "latin-1") == "don\u00e2\u0080\u0099t"
    with pytest.raises(ValueError):
        mojibake("x", "utf-16")


def test_corrupt_symbols_replaces_exact_share_at_distinct_positions() -> None:
    text = "abcdefghijklmnopqrst"
    out = corrupt_symbols(text, random.Random(3))
    assert sum(1 for a, b in zip(text, out, strict=True) if a != b) == 4
    assert corrupt_symbols("", random.Random(3)) == ""
    assert sum(1 for a, b in zip("ab", corrupt_symbols("ab", random.Random(3)), strict=True) if a != b) == 1


@pytest.mark.parametrize("spec_name,body_fn,reason", [
    ("llm_truncate_single", lambda: text_body("", []), "empty"),
    ("llm_corrupt_single", lambda: tool_body(), "not text"),
    ("llm_truncate_single", lambda: tool_body(), "NoneType, not text"),
    ("tool_error_single", lambda: text_body(), "no tool calls"),
    ("tool_empty_single", lambda: text_body(), "no tool calls"),
    ("compound_stale_cache", lambda: text_body(), "no previous"),
    ("http_429", lambda: text_body(), "does not rewrite"),
    ("llm_error_single", lambda: {"id": "x", "choices": []}, "no choices"),
    ("llm_error_single", lambda: {"error": {"message": "boom"}}, "no choices"),
])
def test_not_applicable_is_explained(spec_name: str, body_fn: Callable[[], dict[str, Any]],
                                     reason: str) -> None:
    with pytest.raises(FaultNotApplicable, match=reason):
        apply_response_fault(get_fault(spec_name), body_fn(), rng=random.Random(0), previous_body=None)


def test_guard_metadata_and_helpers() -> None:
    assert has_tool_calls(tool_body()) and not has_tool_calls(text_body())
    assert not has_tool_calls({"choices": []}) and not has_tool_calls({})
    assert guard_reason(get_fault("llm_error_single"), True) is not None
    assert guard_reason(get_fault("llm_error_single"), False) is None
    assert guard_reason(get_fault("tool_error_single"), False) is not None
    assert guard_reason(get_fault("llm_error_pos_early"), True) is None


# --- Anthropic Messages shape -----------------------------------------------------------------
def a_text() -> dict[str, Any]:
    return {"id": "msg_01XFDUDYJgAACzvnptvVoYEL", "type": "message", "role": "assistant",
            "model": "claude-sonnet-4-5-20250929", "content": [{"type": "text", "text": TEXT}],
            "stop_reason": "end_turn", "stop_sequence": None,
            "usage": {"input_tokens": 2095, "output_tokens": 503, "cache_creation_input_tokens": 0,
                      "cache_read_input_tokens": 0, "service_tier": "standard"}}


def a_tool() -> dict[str, Any]:
    return {"id": "msg_01Aq9w938a90dw8q", "type": "message", "role": "assistant",
            "model": "claude-sonnet-4-5-20250929",
            "content": [{"type": "text", "text": "I'll check the weather and the time in Paris."},
                        {"type": "tool_use", "id": "toolu_01A09q90qw90lq917835lq9", "name": "get_weather",
                         "input": copy.deepcopy(WEATHER_ARGS)},
                        {"type": "tool_use", "id": "toolu_01B18r81rx81mr828746mr8", "name": "get_time",
                         "input": dict(TIME_ARGS)}],
            "stop_reason": "tool_use", "stop_sequence": None,
            "usage": {"input_tokens": 1200, "output_tokens": 96}}


def texts(body: dict[str, Any]) -> list[str]:
    return [b["text"] for b in body["content"] if b["type"] == "text"]


def tools(body: dict[str, Any]) -> list[dict[str, Any]]:
    return [b for b in body["content"] if b["type"] == "tool_use"]


def a_set_text(text: str, stop: str | None = None) -> Check:
    def check(orig: dict[str, Any], out: dict[str, Any]) -> None:
        assert texts(out) == ([text] if text else [])
        assert tools(out) == tools(orig)
        assert out["stop_reason"] == (stop or orig["stop_reason"])
    return check


def a_truncate(ratio: float) -> Check:
    def check(orig: dict[str, Any], out: dict[str, Any]) -> None:
        assert texts(out) == [TEXT[: int(len(TEXT) * ratio)]]
        assert out["stop_reason"] == "max_tokens"
    return check


def a_set_input(value: dict[str, Any]) -> Check:
    def check(orig: dict[str, Any], out: dict[str, Any]) -> None:
        assert tools(out)[0]["input"] == value and tools(out)[0]["id"] == tools(orig)[0]["id"]
        assert tools(out)[1] == tools(orig)[1] and texts(out) == texts(orig)
    return check


def a_drop(text: str | None, stop: str | None = None) -> Check:
    def check(orig: dict[str, Any], out: dict[str, Any]) -> None:
        assert tools(out) == []
        assert texts(out) == ([text] if text is not None else texts(orig))
        assert out["stop_reason"] == (stop or orig["stop_reason"])
    return check


def a_truncate_input(orig: dict[str, Any], out: dict[str, Any]) -> None:
    pairs: list[tuple[str, str]] = []
    walk_strings(tools(orig)[0]["input"], tools(out)[0]["input"], pairs)
    assert pairs and all(b == a[: max(1, int(len(a) * 0.3))] for a, b in pairs)


def a_corrupt_input(orig: dict[str, Any], out: dict[str, Any]) -> None:
    pairs: list[tuple[str, str]] = []
    walk_strings(tools(orig)[0]["input"], tools(out)[0]["input"], pairs)
    for a, b in pairs:
        assert sum(1 for x, y in zip(a, b, strict=True) if x != y) == max(1, int(len(a) * 0.2))


ANTHROPIC_EXPECT: dict[str, Check] = {
    "llm_error": a_set_text(C.API_ERROR_TEXT),
    "llm_timeout": a_set_text(C.TIMEOUT_TEXT),
    "llm_empty": a_set_text(""),
    "llm_truncate": a_truncate(0.3),
    "llm_corrupt": lambda o, out: texts(out) == [TEXT.encode().decode("latin-1")] or pytest.fail("mojibake"),
    "llm_schema": a_set_text(C.SCHEMA_CONTENT_TEXT),
    "tool_error": a_set_input({}),
    "tool_timeout": a_drop(C.TIMEOUT_DROPPED_TEXT),
    "tool_empty": a_drop(None),
    "tool_truncate": a_truncate_input,
    "tool_corrupt": a_corrupt_input,
    "tool_schema": a_set_input({"wrong_param": "unexpected_value"}),
    "compound_api_degradation": a_set_text(C.SERVICE_UNAVAILABLE_TEXT),
    "compound_content_filter": a_drop(C.CONTENT_FILTERED_TEXT, "refusal"),
    "compound_max_tokens": a_truncate(0.5),
    "compound_proxy_html": a_set_text(C.PROXY_HTML_TEXT),
    "compound_stale_cache": lambda o, out: None,
    "compound_stale_data": a_set_input({"city": "Pyongyang"}),
    "compound_wrong_entity": a_set_input({"city": "Springfield"}),
    "compound_slow_response": unchanged,
}


@pytest.mark.parametrize("name", C.agentchaos_names())
def test_each_agentchaos_configuration_rewrites_anthropic_body(name: str) -> None:
    spec = get_fault(name)
    bodies = ([a_text(), a_tool()] if not spec.guard else
              [a_tool()] if spec.target == "tool_calls" else [a_text()])
    previous = a_text()
    previous["id"] = "msg_previous"
    for body in bodies:
        snapshot = copy.deepcopy(body)
        out = anth.apply_response_fault(spec, body, rng=random.Random(5), previous_body=previous)
        assert body == snapshot
        if spec.op == C.OP_REPLAY_PREVIOUS:
            assert out == previous
            continue
        ANTHROPIC_EXPECT[base_of(name)](body, out)
        for key in ("id", "type", "role", "model", "usage"):
            assert out[key] == body[key]
        assert all(b["type"] != "text" or b["text"] for b in out["content"]), "no empty text blocks"


def test_anthropic_helpers_and_not_applicable() -> None:
    assert anth.has_tool_use(a_tool()) and not anth.has_tool_use(a_text()) and not anth.has_tool_use({})
    assert anth.text_of(a_tool()) == "I'll check the weather and the time in Paris."
    with pytest.raises(FaultNotApplicable, match="no tool_use"):
        anth.apply_response_fault(get_fault("tool_error_single"), a_text(), rng=random.Random(0))
    with pytest.raises(FaultNotApplicable, match="content block"):
        anth.apply_response_fault(get_fault("llm_error_single"), {"type": "error"}, rng=random.Random(0))
    empty = a_text()
    empty["content"] = []
    with pytest.raises(FaultNotApplicable, match="empty"):
        anth.apply_response_fault(get_fault("llm_truncate_single"), empty, rng=random.Random(0))


def test_anthropic_positional_replaces_text_in_place_before_tool_use() -> None:
    out = anth.apply_response_fault(get_fault("llm_error_pos_early"), a_tool(), rng=random.Random(0))
    assert [b["type"] for b in out["content"]] == ["text", "tool_use", "tool_use"]
    assert out["content"][0]["text"] == C.API_ERROR_TEXT
