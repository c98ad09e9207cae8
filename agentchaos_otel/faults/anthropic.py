"""The response-body fault ops on the Anthropic Messages API shape (``/v1/messages``).

Same ops and parameters as ``llm_response`` so one catalog serves both wire formats. Where the
shapes differ the rewrite follows what Anthropic itself would send:

- "content" is the text blocks; "tool calls" are the ``tool_use`` blocks and their ``input``
  object (already parsed, so argument rewrites cannot produce invalid JSON here);
- an empty content removes the text blocks instead of leaving ``{"type": "text", "text": ""}``,
  which the API never returns and refuses when an agent sends it back in the history;
- OpenAI finish reasons in ``params`` map to stop reasons (``length`` -> ``max_tokens``,
  ``content_filter`` -> ``refusal``);
- other blocks (thinking, server tool results) are never touched.
"""

from __future__ import annotations

import copy
import json
import random
from typing import Any

from agentchaos_otel.faults import catalog as C
from agentchaos_otel.faults.catalog import FaultSpec
from agentchaos_otel.faults.llm_response import (
    FaultNotApplicable,
    argument_corrupter,
    corrupt_text,
    map_strings,
    truncate_text,
)

STOP_REASON_OF_FINISH = {"length": "max_tokens", "content_filter": "refusal", "stop": "end_turn",
                         "tool_calls": "tool_use"}


def _blocks(body: dict[str, Any]) -> list[Any]:
    blocks = body.get("content") if isinstance(body, dict) else None
    if not isinstance(blocks, list):
        raise FaultNotApplicable("response has no content block list")
    return blocks


def _is(block: Any, kind: str) -> bool:
    return isinstance(block, dict) and block.get("type") == kind


def has_tool_use(body: dict[str, Any]) -> bool:
    try:
        return any(_is(b, "tool_use") for b in _blocks(body))
    except FaultNotApplicable:
        return False


def text_of(body: dict[str, Any]) -> str:
    """All text blocks joined, the Anthropic counterpart of ``message.content``."""
    try:
        return "".join(str(b.get("text", "")) for b in _blocks(body) if _is(b, "text"))
    except FaultNotApplicable:
        return ""


def _stop_reason(finish_reason: str) -> str:
    return STOP_REASON_OF_FINISH.get(finish_reason, finish_reason)


def _replace_text(body: dict[str, Any], text: str) -> None:
    """Text blocks become one block with ``text`` where the first one was (none when empty)."""
    blocks = _blocks(body)
    first = next((i for i, b in enumerate(blocks) if _is(b, "text")), 0)
    rest = [b for b in blocks if not _is(b, "text")]
    before = sum(1 for b in blocks[:first] if not _is(b, "text"))
    new = [{"type": "text", "text": text}] if text else []
    body["content"] = rest[:before] + new + rest[before:]


def _tool_blocks(spec: FaultSpec, body: dict[str, Any]) -> list[dict[str, Any]]:
    tools = [b for b in _blocks(body) if _is(b, "tool_use")]
    if not tools:
        raise FaultNotApplicable("response has no tool_use blocks")
    return tools if spec.param("all_calls", False) else tools[:1]


def _op_set_content(spec: FaultSpec, body: dict[str, Any], **_: Any) -> None:
    _replace_text(body, spec.param("text", ""))
    if spec.param("finish_reason"):
        body["stop_reason"] = _stop_reason(spec.param("finish_reason"))


def _op_truncate_content(spec: FaultSpec, body: dict[str, Any], **_: Any) -> None:
    """Keep blocks up to the cut point of the joined text; what follows was never generated."""
    total = text_of(body)
    if not total:
        raise FaultNotApplicable("content is empty, nothing to truncate")
    budget = len(truncate_text(total, float(spec.param("ratio", 0.3))))
    kept: list[Any] = []
    for block in _blocks(body):
        if budget <= 0:
            break
        if _is(block, "text"):
            text = str(block.get("text", ""))
            block["text"] = text[:budget]
            budget -= len(block["text"])
        kept.append(block)
    body["content"] = kept
    body["stop_reason"] = _stop_reason(spec.param("finish_reason", "length"))
    body["stop_sequence"] = None


def _op_corrupt_content(spec: FaultSpec, body: dict[str, Any], *, rng: random.Random, **_: Any) -> None:
    texts = [b for b in _blocks(body) if _is(b, "text") and b.get("text")]
    if not texts:
        raise FaultNotApplicable("content is empty, nothing to corrupt")
    for block in texts:
        block["text"] = corrupt_text(spec, str(block["text"]), rng)


def _op_set_arguments(spec: FaultSpec, body: dict[str, Any], **_: Any) -> None:
    raw = spec.param("arguments", "{}")
    try:
        value = json.loads(raw)
    except (ValueError, TypeError):
        value = {}
    for block in _tool_blocks(spec, body):
        block["input"] = copy.deepcopy(value)


def _op_truncate_arguments(spec: FaultSpec, body: dict[str, Any], **_: Any) -> None:
    ratio = float(spec.param("ratio", 0.3))
    for block in _tool_blocks(spec, body):
        block["input"] = map_strings(block.get("input", {}), lambda s: truncate_text(s, ratio))


def _op_corrupt_arguments(spec: FaultSpec, body: dict[str, Any], *, rng: random.Random, **_: Any) -> None:
    corrupt = argument_corrupter(spec, rng)
    for block in _tool_blocks(spec, body):
        block["input"] = map_strings(block.get("input", {}), corrupt)


def _op_drop_tool_calls(spec: FaultSpec, body: dict[str, Any], **_: Any) -> None:
    blocks = _blocks(body)
    had_tools = any(_is(b, "tool_use") for b in blocks)
    if not had_tools and "text" not in spec.params:
        raise FaultNotApplicable("response has no tool_use blocks to drop")
    body["content"] = [b for b in blocks if not _is(b, "tool_use")]
    if "text" in spec.params:
        _replace_text(body, spec.params["text"])
    if spec.param("finish_reason"):
        body["stop_reason"] = _stop_reason(spec.param("finish_reason"))


_OPS = {
    C.OP_SET_CONTENT: _op_set_content,
    C.OP_TRUNCATE_CONTENT: _op_truncate_content,
    C.OP_CORRUPT_CONTENT: _op_corrupt_content,
    C.OP_SET_ARGUMENTS: _op_set_arguments,
    C.OP_TRUNCATE_ARGUMENTS: _op_truncate_arguments,
    C.OP_CORRUPT_ARGUMENTS: _op_corrupt_arguments,
    C.OP_DROP_TOOL_CALLS: _op_drop_tool_calls,
}


def apply_response_fault(spec: FaultSpec, body: dict[str, Any], *, rng: random.Random,
                         previous_body: dict[str, Any] | None = None) -> dict[str, Any]:
    """The Messages body the agent sees under ``spec``; a deep copy, the input is left untouched."""
    if spec.op == C.OP_REPLAY_PREVIOUS:
        if not isinstance(previous_body, dict):
            raise FaultNotApplicable("no previous response to replay")
        return copy.deepcopy(previous_body)
    if spec.op == C.OP_DELAY:
        return copy.deepcopy(body)
    handler = _OPS.get(spec.op)
    if handler is None:
        raise FaultNotApplicable(f"op {spec.op!r} does not rewrite a response body")
    out = copy.deepcopy(body)
    _blocks(out)
    handler(spec, out, rng=rng)
    return out
