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


def _positions(n: int, fraction: float, rng: random.Random) -> list[int]:
    """``fraction`` of ``n`` positions (at least one), drawn without replacement, in order."""
    count = min(n, max(1, int(n * fraction + 1e-9)))
    return sorted(rng.sample(range(n), count))


REPLACEMENT_CHAR = "\ufffd"


def corrupt_replacement(text: str, rng: random.Random, fraction: float = 0.15) -> str:
    """Replace ``fraction`` of the characters by U+FFFD, what a lossy decoder leaves of damaged bytes."""
    if not text:
        return text
    chars = list(text)
    for i in _positions(len(chars), fraction, rng):
        chars[i] = REPLACEMENT_CHAR
    return "".join(chars)


# ZERO WIDTH SPACE / NON-JOINER / JOINER, WORD JOINER, ZERO WIDTH NO-BREAK SPACE (BOM).
ZERO_WIDTH_CHARS = ("\u200b", "\u200c", "\u200d", "\u2060", "\ufeff")


def corrupt_zero_width(text: str, rng: random.Random, fraction: float = 0.3) -> str:
    """Insert an invisible format character after ``fraction`` of the characters.

    The text renders the same, yet every comparison, search and tokenizer sees different bytes:
    the damage a copy-paste path or a watermarking proxy does without anyone noticing.
    """
    if not text:
        return text
    chosen = set(_positions(len(text), fraction, rng))
    out = []
    for i, ch in enumerate(text):
        out.append(ch)
        if i in chosen:
            out.append(rng.choice(ZERO_WIDTH_CHARS))
    return "".join(out)


# Latin letters and the Cyrillic letters that render identically in common fonts.
HOMOGLYPHS = {
    "a": "\u0430", "c": "\u0441", "e": "\u0435", "i": "\u0456", "j": "\u0458", "o": "\u043e",
    "p": "\u0440", "s": "\u0455", "x": "\u0445", "y": "\u0443", "A": "\u0410", "B": "\u0412",
    "C": "\u0421", "E": "\u0415", "H": "\u041d", "I": "\u0406", "K": "\u041a", "M": "\u041c",
    "O": "\u041e", "P": "\u0420", "T": "\u0422", "X": "\u0425",
}


def corrupt_homoglyph(text: str, rng: random.Random, fraction: float = 0.5) -> str:
    """Swap ``fraction`` of the swappable Latin letters (at least one) for Cyrillic look-alikes.

    Text without such letters comes back unchanged: there is nothing a look-alike could replace.
    """
    candidates = [i for i, ch in enumerate(text) if ch in HOMOGLYPHS]
    if not candidates:
        return text
    chars = list(text)
    for k in _positions(len(candidates), fraction, rng):
        i = candidates[k]
        chars[i] = HOMOGLYPHS[chars[i]]
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


CORRUPTION_MODES = ("mojibake", "symbols", "replacement", "zero_width", "homoglyph")


def corrupt_string(mode: str, text: str, rng: random.Random, params: Any) -> str:
    """One corruption ``mode`` applied to ``text`` with its parameters read from ``params`` (a mapping).

    Each mode takes only the parameters that mean something for it; ``fraction`` defaults to the
    share the mode is usually seen at.
    """
    if mode == "mojibake":
        out = mojibake(text, params.get("encoding", "latin-1"))
        if out == text and params.get("ascii_fallback", False):
            fallback = params.get("fallback_mode", "symbols")
            if fallback == "mojibake":
                raise FaultNotApplicable("fallback_mode cannot be mojibake itself")
            out = corrupt_string(fallback, text, rng, {k: v for k, v in params.items() if k != "mode"})
        return out
    if mode == "symbols":
        return corrupt_symbols(text, rng, float(params.get("fraction", 0.2)),
                               int(params.get("low", 0x2600)), int(params.get("high", 0x26FF)))
    if mode == "replacement":
        return corrupt_replacement(text, rng, float(params.get("fraction", 0.15)))
    if mode == "zero_width":
        return corrupt_zero_width(text, rng, float(params.get("fraction", 0.3)))
    if mode == "homoglyph":
        return corrupt_homoglyph(text, rng, float(params.get("fraction", 0.5)))
    raise FaultNotApplicable(f"unknown corruption mode {mode!r}; "
                             f"expected one of {', '.join(CORRUPTION_MODES)}")


def corrupt_text(spec: FaultSpec, text: str, rng: random.Random) -> str:
    """Content corruption per the spec's mode; shared by the OpenAI, Anthropic and stream rewrites."""
    return corrupt_string(spec.param("mode", "mojibake"), text, rng, spec.params)


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


def argument_corrupter(spec: FaultSpec, rng: random.Random) -> Any:
    """The string transform a corrupt_arguments spec applies to each argument value.

    Without ``mode`` it is AgentChaos's symbol replacement (U+2600-U+26FF by default); a ``mode``
    selects any content corruption mode, so held-out variants can damage arguments differently.
    """
    if "mode" not in spec.params:
        fraction = float(spec.param("fraction", 0.2))
        low, high = int(spec.param("low", 0x2600)), int(spec.param("high", 0x26FF))
        return lambda s: corrupt_symbols(s, rng, fraction, low, high)
    mode = str(spec.params["mode"])
    if mode not in CORRUPTION_MODES:
        raise FaultNotApplicable(f"unknown corruption mode {mode!r}")
    return lambda s: corrupt_string(mode, s, rng, spec.params)


def _op_corrupt_arguments(spec: FaultSpec, choice: dict[str, Any], *, rng: random.Random, **_: Any) -> None:
    corrupt = argument_corrupter(spec, rng)
    for function in _targets(spec, _tool_calls(choice["message"])):
        function["arguments"] = transform_arguments(function.get("arguments"), corrupt,
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
