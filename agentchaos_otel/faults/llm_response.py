"""Rewrites of an OpenAI chat-completions response body, one per response-body fault op.

Pure functions: a parsed body in, a new body out, randomness only from the ``random.Random``
passed in, so a plan plus a seed reproduces every rewrite. The input is never modified because
the injector still needs the provider's original for digests and for the stale-cache replay.

What an op rewrites follows AgentChaos exactly (``choices[0]`` only; tool-call ops hit the first
tool call unless ``params["all_calls"]`` is true) so results stay comparable with its published
numbers. Everything an op does not touch (id, model, usage, system_fingerprint, other choices)
is kept, with one deliberate exception: when an op replaces the content, ``choices[0].logprobs``
described tokens the agent no longer sees, so it is set to None. A truncation keeps the logprobs
of the tokens that lie entirely inside the kept prefix, as a real max_tokens cut would.

The string transforms are public because the Anthropic and stream rewrites reuse them.
"""

from __future__ import annotations

import copy
import json
import random
from typing import Any

from agentchaos_otel.faults import catalog as C
from agentchaos_otel.faults.catalog import FaultSpec


class FaultNotApplicable(Exception):
    """The op cannot change this response (nothing to rewrite); the reason is the message."""


# --- string transforms ------------------------------------------------------------------------
def truncate_text(text: str, ratio: float) -> str:
    """The first ``ratio`` of the text, at least one character (AgentChaos keeps one)."""
    if not text:
        return text
    return text[: max(1, int(len(text) * ratio))]


def _cp1252_table() -> list[str]:
    table = []
    for b in range(256):
        try:
            table.append(bytes([b]).decode("cp1252"))
        except UnicodeDecodeError:
            table.append(chr(b))  # the five holes of cp1252 read as Latin-1, like browsers do
    return table


_CP1252 = _cp1252_table()


def mojibake(text: str, encoding: str = "latin-1") -> str:
    """UTF-8 bytes read back as a single-byte charset: what a misconfigured proxy produces.

    Pure ASCII text has the same bytes in every charset and comes back unchanged; callers detect
    that as "no change" rather than inventing damage AgentChaos would not have caused.
    """
    raw = text.encode("utf-8", "surrogatepass")
    enc = encoding.lower().replace("_", "-")
    if enc in ("latin-1", "latin1", "iso-8859-1"):
        return raw.decode("latin-1")
    if enc in ("cp1252", "windows-1252"):
        return "".join(_CP1252[b] for b in raw)
    raise ValueError(f"unsupported mojibake encoding {encoding!r}; use latin-1 or cp1252")


def corrupt_symbols(text: str, rng: random.Random, fraction: float = 0.2, low: int = 0x2600,
                    high: int = 0x26FF) -> str:
    """Replace ``fraction`` of the characters (at least one) by random code points in [low, high].

    Positions are drawn without replacement, so the share is exact rather than "about".
    """
    if not text:
        return text
    chars = list(text)
    count = min(len(chars), max(1, int(len(chars) * fraction + 1e-9)))
    for i in sorted(rng.sample(range(len(chars)), count)):
        chars[i] = chr(rng.randint(low, high))
    return "".join(chars)


def map_strings(value: Any, fn: Any) -> Any:
    """Apply ``fn`` to every string value of a JSON value, recursively; keys are left alone."""
    if isinstance(value, str):
        return fn(value)
    if isinstance(value, dict):
        return {k: map_strings(v, fn) for k, v in value.items()}
    if isinstance(value, list):
        return [map_strings(v, fn) for v in value]
    return value


def _dumps_like(original: str, value: Any) -> str:
    """Serialize in the spacing style of the original so the rewrite is not given away by format."""
    spaced = '": ' in original or '", "' in original
    separators = (", ", ": ") if spaced else (",", ":")
    return json.dumps(value, ensure_ascii=False, separators=separators)


def transform_arguments(arguments: Any, fn: Any, placeholder: str) -> Any:
    """Rewrite every string value inside a JSON arguments text and re-serialize it (still valid).

    Arguments that are not valid JSON become ``placeholder`` (a small valid object, as AgentChaos
    does, so a framework parsing them does not crash on our account). Values that come out equal
    keep the original text byte for byte, so a no-op is seen as no change. Some OpenAI-compatible
    servers send the arguments as an object rather than a string; those stay an object.
    """
    if isinstance(arguments, dict | list):
        return map_strings(arguments, fn)
    if not isinstance(arguments, str):
        return placeholder
    try:
        parsed = json.loads(arguments)
    except (ValueError, TypeError):
        return placeholder
    rewritten = map_strings(parsed, fn)
    if rewritten == parsed:
        return arguments
    return _dumps_like(arguments, rewritten)


# --- body access ------------------------------------------------------------------------------
def _first_choice(body: dict[str, Any]) -> dict[str, Any]:
    choices = body.get("choices") if isinstance(body, dict) else None
    if not isinstance(choices, list) or not choices:
        raise FaultNotApplicable("response has no choices")
    choice = choices[0]
    if not isinstance(choice, dict) or not isinstance(choice.get("message"), dict):
        raise FaultNotApplicable("choices[0] has no message object")
    return choice


def has_tool_calls(body: dict[str, Any]) -> bool:
    try:
        calls = _first_choice(body)["message"].get("tool_calls")
    except FaultNotApplicable:
        return False
    return isinstance(calls, list) and len(calls) > 0


def guard_reason(spec: FaultSpec, tool_calls_present: bool) -> str | None:
    """Why the AgentChaos field guard skips this spec for a response, or None when it may fire."""
    if not spec.guard:
        return None
    if spec.target == "content" and tool_calls_present:
        return "content fault skipped: the response has tool calls"
    if spec.target == "tool_calls" and not tool_calls_present:
        return "tool-call fault skipped: the response has no tool calls"
    return None


def _tool_calls(message: dict[str, Any]) -> list[dict[str, Any]]:
    calls = message.get("tool_calls")
    if not isinstance(calls, list) or not calls:
        raise FaultNotApplicable("response has no tool calls")
    return calls


def _targets(spec: FaultSpec, calls: list[dict[str, Any]]) -> list[dict[str, Any]]:
    chosen = calls if spec.param("all_calls", False) else calls[:1]
    functions = [c.get("function") for c in chosen if isinstance(c, dict)]
    functions = [f for f in functions if isinstance(f, dict)]
    if not functions:
        raise FaultNotApplicable("tool call has no function object")
    return functions


def _set_content(choice: dict[str, Any], text: str | None) -> None:
    message = choice["message"]
    if message.get("content") != text:
        message["content"] = text
        if "logprobs" in choice:
            choice["logprobs"] = None


def _trim_logprobs(choice: dict[str, Any], kept_chars: int) -> None:
    logprobs = choice.get("logprobs")
    if not isinstance(logprobs, dict) or not isinstance(logprobs.get("content"), list):
        return
    kept, used = [], 0
    for entry in logprobs["content"]:
        token = entry.get("token", "") if isinstance(entry, dict) else ""
        if used + len(token) > kept_chars:
            break
        kept.append(entry)
        used += len(token)
    logprobs["content"] = kept


# --- ops --------------------------------------------------------------------------------------
def _op_set_content(spec: FaultSpec, choice: dict[str, Any], **_: Any) -> None:
    _set_content(choice, spec.param("text", ""))
    if spec.param("finish_reason"):
        choice["finish_reason"] = spec.param("finish_reason")


def _op_truncate_content(spec: FaultSpec, choice: dict[str, Any], **_: Any) -> None:
    content = choice["message"].get("content")
    if not isinstance(content, str):
        raise FaultNotApplicable(f"content is {type(content).__name__}, not text")
    if not content:
        raise FaultNotApplicable("content is empty, nothing to truncate")
    cut = truncate_text(content, float(spec.param("ratio", 0.3)))
    choice["message"]["content"] = cut
    _trim_logprobs(choice, len(cut))
    choice["finish_reason"] = spec.param("finish_reason", "length")


def corrupt_text(spec: FaultSpec, text: str, rng: random.Random) -> str:
    """Content corruption per the spec's mode; shared by the OpenAI, Anthropic and stream rewrites."""
    mode = spec.param("mode", "mojibake")
    if mode == "mojibake":
        out = mojibake(text, spec.param("encoding", "latin-1"))
        if out == text and spec.param("ascii_fallback", False):
            out = corrupt_symbols(text, rng, float(spec.param("fraction", 0.2)))
        return out
    if mode == "symbols":
        return corrupt_symbols(text, rng, float(spec.param("fraction", 0.2)),
                               int(spec.param("low", 0x2600)), int(spec.param("high", 0x26FF)))
    raise FaultNotApplicable(f"unknown corruption mode {mode!r}")


def _op_corrupt_content(spec: FaultSpec, choice: dict[str, Any], *, rng: random.Random, **_: Any) -> None:
    content = choice["message"].get("content")
    if not isinstance(content, str):
        raise FaultNotApplicable(f"content is {type(content).__name__}, not text")
    if not content:
        raise FaultNotApplicable("content is empty, nothing to corrupt")
    _set_content(choice, corrupt_text(spec, content, rng))


def _op_set_arguments(spec: FaultSpec, choice: dict[str, Any], **_: Any) -> None:
    for function in _targets(spec, _tool_calls(choice["message"])):
        function["arguments"] = spec.param("arguments", "{}")


def _op_truncate_arguments(spec: FaultSpec, choice: dict[str, Any], **_: Any) -> None:
    ratio = float(spec.param("ratio", 0.3))
    for function in _targets(spec, _tool_calls(choice["message"])):
        function["arguments"] = transform_arguments(function.get("arguments"),
                                                    lambda s: truncate_text(s, ratio),
                                                    '{"_fault_truncated": true}')


def _op_corrupt_arguments(spec: FaultSpec, choice: dict[str, Any], *, rng: random.Random, **_: Any) -> None:
    fraction = float(spec.param("fraction", 0.2))
    low, high = int(spec.param("low", 0x2600)), int(spec.param("high", 0x26FF))
    for function in _targets(spec, _tool_calls(choice["message"])):
        function["arguments"] = transform_arguments(function.get("arguments"),
                                                    lambda s: corrupt_symbols(s, rng, fraction, low, high),
                                                    '{"_fault_corrupted": true}')


def _op_drop_tool_calls(spec: FaultSpec, choice: dict[str, Any], **_: Any) -> None:
    """Tool calls := [] (when there are any), optionally new content and finish_reason.

    finish_reason stays as the provider sent it unless the spec says otherwise: AgentChaos's
    tool_timeout leaves ``tool_calls`` as the finish reason of a message that no longer has any.
    """
    message = choice["message"]
    had_calls = isinstance(message.get("tool_calls"), list) and bool(message["tool_calls"])
    if not had_calls and "text" not in spec.params:
        raise FaultNotApplicable("response has no tool calls to drop")
    if had_calls:
        message["tool_calls"] = []
    if "text" in spec.params:
        _set_content(choice, spec.params["text"])
    if spec.param("finish_reason"):
        choice["finish_reason"] = spec.param("finish_reason")


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
    """The body the agent sees under ``spec``; a deep copy, the input is left untouched.

    The field guard is the scheduler's job (it must count eligible calls); this only refuses
    with ``FaultNotApplicable`` when the op has nothing to work on. A result equal to the input
    is possible (mojibake of ASCII text, truncation of arguments with no strings) and means the
    fault fired without changing anything.
    """
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
    handler(spec, _first_choice(out), rng=rng)
    return out
