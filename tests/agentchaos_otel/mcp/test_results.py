"""The seven tool-result faults in MCP's result shape, on wire objects (no SDK, no server).

Expected values come from ``faults/tool_result.apply_tool_fault`` applied to the value a wrapped
tool would have returned, with the same random stream: the MCP form must carry exactly that value.
"""

from __future__ import annotations

import json
import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentchaos_otel import attributes as A
from agentchaos_otel.faults.tool_result import (
    TOOL_FAULT_KINDS,
    EpisodeToolState,
    UntransformableResult,
    apply_tool_fault,
)
from agentchaos_otel.mcp import results

QUOTE = {"symbol": "NVDA", "price": 123.5, "as_of": "2026-03-01", "history": [120.0, 121.5, 119.25],
         "order_id": 4711}
# How FastMCP / MCPServer send a tool that returns an object, a string and a list.
OBJECT = {"content": [{"type": "text", "text": json.dumps(QUOTE, indent=2)}], "structuredContent": QUOTE,
          "isError": False}
TEXT = {"content": [{"type": "text", "text": "ordered 3 NVDA on 2026-03-01"}],
        "structuredContent": {"result": "ordered 3 NVDA on 2026-03-01"}, "isError": False}
LIST = {"content": [{"type": "text", "text": str(i)} for i in (5, 6, 7, 8)],
        "structuredContent": {"result": [5, 6, 7, 8]}, "isError": False}
PLAIN_JSON = {"content": [{"type": "text", "text": json.dumps(QUOTE)}], "isError": False}


def _shape(kind: str, wire: dict[str, Any], seed: int = 7) -> dict[str, Any]:
    return results.shape_fault(kind, wire, rng=random.Random(seed), state=EpisodeToolState(seed=3))


def _expected(kind: str, value: Any, seed: int = 7) -> Any:
    return apply_tool_fault(kind, value, rng=random.Random(seed), state=EpisodeToolState(seed=3))


def test_what_the_agent_reads() -> None:
    assert results.observed(OBJECT) == QUOTE
    assert results.observed(TEXT) == "ordered 3 NVDA on 2026-03-01"  # the wrapper is the SDK's, not the tool's
    assert results.observed(LIST) == [5, 6, 7, 8]
    assert results.observed(PLAIN_JSON) == json.dumps(QUOTE)
    error = {"content": [{"type": "text", "text": "Error executing tool x: boom"}], "isError": True}
    assert results.observed(error) == "Error executing tool x: boom"
    image = {"content": [{"type": "image", "data": "AAAA", "mimeType": "image/png"}], "isError": False}
    assert results.observed(image) == [{"type": "image", "mimeType": "image/png"}], "never the data"


@pytest.mark.parametrize("kind", ["timeout", "rate_limit"])
def test_content_free_errors_are_is_error_results(kind: str) -> None:
    shown = _shape(kind, OBJECT)
    assert shown["isError"] is True and "structuredContent" not in shown
    assert json.loads(shown["content"][0]["text"]) == _expected(kind, QUOTE)
    signals = results.result_signals(shown)
    assert signals[A.TOOL_RESULT_IS_ERROR] is True and signals[A.TOOL_RESULT_ERROR_MARKER] == kind


def test_empty_has_no_content() -> None:
    shown = _shape("empty", OBJECT)
    assert shown["content"] == [] and shown["structuredContent"] == {} and shown["isError"] is False
    assert results.result_signals(shown)[A.TOOL_RESULT_EMPTY] is True
    assert _shape("empty", PLAIN_JSON) == {"content": [], "isError": False}


@pytest.mark.parametrize("wire", [OBJECT, TEXT, PLAIN_JSON], ids=["object", "text", "plain-json"])
def test_malformed_json_is_cut_text_without_structured_content(wire: dict[str, Any]) -> None:
    shown = _shape("malformed_json", wire)
    assert "structuredContent" not in shown and len(shown["content"]) == 1
    text = shown["content"][0]["text"]
    whole = wire["content"][0]["text"]
    assert whole.startswith(text) and len(text) < len(whole)
    if wire is not TEXT:
        with pytest.raises(ValueError):
            json.loads(text)


@pytest.mark.parametrize("kind", ["truncated", "key_rename", "wrong_value"])
def test_content_kinds_change_structured_content_and_text_together(kind: str) -> None:
    shown = _shape(kind, OBJECT)
    assert shown["structuredContent"] == _expected(kind, QUOTE), "the same value as through wrap_tools"
    assert json.loads(shown["content"][0]["text"]) == shown["structuredContent"]
    assert shown["content"][0]["text"].startswith("{\n  "), "rendered as the server rendered it"
    assert shown["structuredContent"] != QUOTE


@pytest.mark.parametrize("kind", ["truncated", "key_rename", "wrong_value"])
def test_wrapped_values_are_faulted_as_the_tool_returned_them(kind: str) -> None:
    for wire, value in ((TEXT, "ordered 3 NVDA on 2026-03-01"), (LIST, [5, 6, 7, 8])):
        shown = _shape(kind, wire)
        expected = _expected(kind, value)
        assert shown["structuredContent"] == {"result": expected}
        assert results.observed(shown) == expected
        if isinstance(expected, list):
            assert [c["text"] for c in shown["content"]] == [str(v) for v in expected]
        else:
            assert shown["content"][0]["text"] == expected


def test_text_only_results_are_faulted_as_text() -> None:
    shown = _shape("key_rename", PLAIN_JSON)
    assert json.loads(shown["content"][0]["text"]) == _expected("key_rename", QUOTE)


def test_envelope_members_are_kept_and_the_input_is_never_changed() -> None:
    wire = {**OBJECT, "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "s"}}, "resultType": "complete"}
    before = json.dumps(wire, sort_keys=True)
    for kind in TOOL_FAULT_KINDS:
        shown = _shape(kind, wire)
        assert shown["_meta"] == wire["_meta"] and shown["resultType"] == "complete"
    assert json.dumps(wire, sort_keys=True) == before


def test_results_without_text_or_data_are_not_transformable() -> None:
    image = {"content": [{"type": "image", "data": "AAAA", "mimeType": "image/png"}], "isError": False}
    with pytest.raises(UntransformableResult):
        _shape("truncated", image)
    assert _shape("timeout", image)["isError"] is True


def test_error_signals_read_the_error_without_keeping_it() -> None:
    attrs = results.error_signals(-32001, "Request 'tools/call' timed out")
    assert attrs[A.TOOL_RESULT_IS_ERROR] is True and attrs[A.TOOL_RESULT_FAILURE] == "timeout"
    assert not any("Request 'tools/call'" in str(v) for v in attrs.values()), "derived values only"


_values = st.recursive(st.none() | st.booleans() | st.integers(-10**6, 10**6) | st.text(max_size=12),
                       lambda c: st.lists(c, max_size=4) | st.dictionaries(st.text(min_size=1, max_size=6), c,
                                                                            max_size=4), max_leaves=12)


@settings(max_examples=150, deadline=None)
@given(value=st.dictionaries(st.text(min_size=1, max_size=8), _values, min_size=1, max_size=5),
       kind=st.sampled_from(["truncated", "key_rename", "wrong_value"]), seed=st.integers(0, 2**16))
def test_structured_content_and_text_always_agree(value: dict[str, Any], kind: str, seed: int) -> None:
    wire = {"content": [{"type": "text", "text": json.dumps(value, indent=2)}], "structuredContent": value,
            "isError": False}
    shown = _shape(kind, wire, seed)
    assert json.loads(shown["content"][0]["text"]) == shown["structuredContent"] == _expected(kind, value, seed)
