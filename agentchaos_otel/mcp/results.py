"""MCP tool results as the agent reads them, and the seven tool-result faults in MCP's result shape.

Everything here works on the wire form of a ``CallToolResult`` (the camelCase JSON object the
server sent: ``content``, ``structuredContent``, ``isError``, ``_meta``), so it is the same for
every major version of the SDK and never imports it.

What the agent reads from a result is its *value*: the structured content when the server sent
some, else the text. FastMCP / MCPServer wrap a tool's return value that is not an object as
``{"result": value}`` (with the value's text beside it); the value is then the unwrapped one, which
is exactly what the same function returns through ``wrap_tools``. The faults of
``faults/tool_result.py`` are applied to that value (with the injector's random stream and the
episode's key renames) and the result is rebuilt around it, the text kept consistent with the
structured content:

- ``timeout`` / ``rate_limit``: an ``isError`` result whose text is the study's error object;
- ``empty``: no content (and ``{}`` as structured content when there was some);
- ``malformed_json``: the value's text cut part-way, no structured content;
- ``truncated`` / ``key_rename`` / ``wrong_value``: the transformed value as structured content
  and as text.
"""

from __future__ import annotations

import copy
import json
import random
from collections.abc import Mapping
from typing import Any

from agentchaos_otel import attributes as A
from agentchaos_otel import signals, tool_signals
from agentchaos_otel.faults.tool_result import (
    EpisodeToolState,
    UntransformableResult,
    apply_tool_fault,
)

CONTENT = "content"
STRUCTURED = "structuredContent"
IS_ERROR = "isError"
TEXT = "text"
WRAPPER_KEY = "result"  # FastMCP / MCPServer wrap a non-object return value under this key
# Members of a result that belong to the protocol, not to the tool's answer; kept as they were.
_ENVELOPE = ("_meta", "resultType")


def text_blocks(wire: Mapping[str, Any]) -> list[str]:
    """The texts of the result's text content blocks, in order."""
    return [str(c.get(TEXT, "")) for c in wire.get(CONTENT) or () if isinstance(c, Mapping) and c.get("type") == TEXT]


def _parses_to(text: str, value: Any) -> bool:
    try:
        return bool(json.loads(text) == value)
    except ValueError:
        return False


def _renders(texts: list[str], value: Any) -> bool:
    """Whether the text blocks are the server's rendering of ``value`` (one block, or one per item)."""
    if len(texts) == 1:
        return texts[0] == value if isinstance(value, str) else _parses_to(texts[0], value)
    if isinstance(value, list) and len(texts) == len(value) and texts:
        return all(t == v if isinstance(v, str) else _parses_to(t, v) for t, v in zip(texts, value, strict=True))
    return False


def wrapped_value(wire: Mapping[str, Any]) -> tuple[bool, Any]:
    """(True, value) when the structured content is the SDK's ``{"result": value}`` wrapper."""
    sc = wire.get(STRUCTURED)
    if isinstance(sc, Mapping) and list(sc) == [WRAPPER_KEY]:
        value = sc[WRAPPER_KEY]
        texts = text_blocks(wire)
        if not texts or _renders(texts, value):
            return True, value
    return False, None


def observed(wire: Mapping[str, Any]) -> Any:
    """The value the agent reads from a result: its (unwrapped) structured content, else its text.

    An error result is read as its text. Content that is not text (images, audio, resources) is
    described by type and MIME type, never by its data.
    """
    texts = text_blocks(wire)
    if not wire.get(IS_ERROR) and wire.get(STRUCTURED) is not None:
        wrapped, value = wrapped_value(wire)
        return value if wrapped else wire[STRUCTURED]
    blocks = [c for c in wire.get(CONTENT) or () if isinstance(c, Mapping)]
    if blocks and len(texts) == len(blocks):
        return texts[0] if len(texts) == 1 else "\n".join(texts)
    if not blocks:
        return ""
    return [{"type": c.get("type"), **({"mimeType": c["mimeType"]} if "mimeType" in c else {})}
            if c.get("type") != TEXT else {"type": TEXT, TEXT: c.get(TEXT, "")} for c in blocks]


def result_signals(wire: Mapping[str, Any]) -> dict[str, Any]:
    """The tool-result signals of ``tool_signals`` for what the agent read; ``isError`` is an error."""
    shown = observed(wire)
    attrs = tool_signals.tool_result_signals(shown)
    if wire.get(IS_ERROR):
        tool_signals.flagged_error_signals(attrs, shown)
    return attrs


def error_signals(code: int | None, message: str) -> dict[str, Any]:
    """The same signals for a JSON-RPC error (or another exception) the agent got instead of a result.

    Computed from an error object as the agent's code would see it; only derived values (markers,
    meaning, lengths, digests) reach the span, never the message itself.
    """
    error: dict[str, Any] = {"message": message}
    if code is not None:
        error["code"] = code
    attrs = tool_signals.tool_result_signals({"error": error})
    attrs[A.TOOL_RESULT_IS_ERROR] = True
    return attrs


def wire_digest(wire: Mapping[str, Any]) -> str:
    """Digest of a whole result (content, structured content, error flag), key order ignored."""
    return signals.canonical_json_digest(dict(wire))


def observed_text(wire: Mapping[str, Any]) -> str:
    """The value the agent reads, as text (content capture)."""
    return tool_signals.result_text(observed(wire))


# --- faults ---------------------------------------------------------------------------------------
def _render(value: Any, like: str | None) -> str:
    """``value`` as the server renders it: strings as they are, the rest as JSON (indented like ``like``)."""
    if isinstance(value, str):
        return value
    indent = 2 if like is not None and "\n" in like else None
    return json.dumps(value, ensure_ascii=False, indent=indent, default=str)


def _text_content(texts: list[str]) -> list[dict[str, Any]]:
    return [{"type": TEXT, TEXT: t} for t in texts]


def _envelope(wire: Mapping[str, Any]) -> dict[str, Any]:
    return {k: copy.deepcopy(wire[k]) for k in _ENVELOPE if k in wire}


def _rebuilt(wire: Mapping[str, Any], texts: list[str], value: Any) -> list[dict[str, Any]]:
    """Text content for a transformed ``value``: one block, or one per item when there was one per item."""
    if len(texts) > 1 and isinstance(value, list):
        return _text_content([_render(v, texts[0]) for v in value])
    return _text_content([_render(value, texts[0] if texts else None)])


def shape_fault(kind: str, wire: Mapping[str, Any], *, rng: random.Random, state: EpisodeToolState) -> dict[str, Any]:
    """The result the agent is shown under tool-result fault ``kind`` (a new wire object).

    ``rng`` and ``state`` are the injector's (``faults/tool_result.apply_tool_fault``), so a value
    gets the same cut, shift or rename through MCP as through ``wrap_tools``. A result with nothing
    a content-carrying kind can read (no text, no structured content) raises
    ``UntransformableResult``.
    """
    out = _envelope(wire)
    if kind in ("timeout", "rate_limit"):
        out.update({CONTENT: _text_content([apply_tool_fault(kind, "", rng=rng, state=state)]), IS_ERROR: True})
        return out
    texts = text_blocks(wire)
    sc = None if wire.get(IS_ERROR) else wire.get(STRUCTURED)
    if kind == "empty":
        out.update({CONTENT: [], IS_ERROR: bool(wire.get(IS_ERROR))})
        if sc is not None:
            out[STRUCTURED] = apply_tool_fault(kind, sc, rng=rng, state=state)
        return out
    wrapped, inner = wrapped_value(wire)
    if sc is None and not texts:
        raise UntransformableResult(f"{kind} needs text or structured content; the result has neither")
    if kind == "malformed_json":
        value = inner if wrapped else (sc if sc is not None else "\n".join(texts) if len(texts) > 1 else texts[0])
        shown = _render(value, texts[0] if texts else None)
        out.update({CONTENT: _text_content([apply_tool_fault(kind, shown, rng=rng, state=state)]),
                    IS_ERROR: bool(wire.get(IS_ERROR))})
        return out
    if wrapped:
        value = apply_tool_fault(kind, inner, rng=rng, state=state)
        out.update({CONTENT: _rebuilt(wire, texts, value), STRUCTURED: {WRAPPER_KEY: value}, IS_ERROR: False})
        return out
    if sc is not None:
        value = apply_tool_fault(kind, sc, rng=rng, state=state)
        content = []
        for block in wire.get(CONTENT) or ():
            if isinstance(block, Mapping) and block.get("type") == TEXT and _parses_to(str(block.get(TEXT, "")), sc):
                block = {**block, TEXT: _render(value, str(block.get(TEXT, "")))}
            content.append(copy.deepcopy(block))
        out.update({CONTENT: content, STRUCTURED: value, IS_ERROR: False})
        return out
    content = []
    for block in wire.get(CONTENT) or ():
        if isinstance(block, Mapping) and block.get("type") == TEXT:
            block = {**block, TEXT: apply_tool_fault(kind, str(block.get(TEXT, "")), rng=rng, state=state)}
        content.append(copy.deepcopy(block))
    out.update({CONTENT: content, IS_ERROR: bool(wire.get(IS_ERROR))})
    return out
