"""The chat-completions protocol of the simulated model, without HTTP: validate, generate, encode.

A request body goes in, a completion comes out (a function of the server seed and the request's
generation-relevant fields only), encoded as one JSON body or as SSE chunks. ``server.py`` puts
this behind real HTTP; ``messages_api.py`` encodes the same completion as Anthropic Messages.
Everything produced here is labelled simulated (model ids ``sim-...``, ``system_fingerprint``
``"simulated"``).
"""

from __future__ import annotations

import hashlib
import json
import random
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from agentchaos_otel.seeds import derive_seed
from agentchaos_otel.sim.logprobs import MAX_TOP_LOGPROBS, count_tokens, token_logprobs, tokenize
from agentchaos_otel.sim.policy import Policy, Turn, message_text

SIMULATED_FINGERPRINT = "simulated"
SIMULATED_HEADER = "x-agentchaos-simulated"
SIM_MODEL_PREFIX = "sim-"
MAX_CHOICES = 8
MAX_BODY_BYTES = 32 * 1024 * 1024

# Fields that decide what the simulated model says. Transport options (stream, logprobs,
# max_tokens, ...) are left out so that e.g. a streamed and a non-streamed request with the same
# conversation get the same answer, which is what fault-injection comparisons need.
_GENERATION_FIELDS = ("model", "messages", "tools", "tool_choice", "seed", "temperature", "top_p",
                      "response_format", "functions", "function_call")


class RequestError(Exception):
    """A request the server refuses, rendered as an OpenAI-shaped error body."""

    def __init__(self, status: int, message: str, *, param: str | None = None, code: str | None = None,
                 type_: str = "invalid_request_error") -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.param = param
        self.code = code
        self.type = type_

    def body(self) -> dict[str, Any]:
        return {"error": {"message": self.message, "type": self.type, "param": self.param,
                          "code": self.code}}



def request_digest(request: dict[str, Any]) -> str:
    """Digest of the generation-relevant part of a request body."""
    relevant = {k: request.get(k) for k in _GENERATION_FIELDS if k in request}
    text = json.dumps(relevant, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def response_model(requested: str) -> str:
    return requested if requested.startswith(SIM_MODEL_PREFIX) else SIM_MODEL_PREFIX + requested


def prompt_tokens(request: dict[str, Any]) -> int:
    """Prompt size under the simulated tokenizer, with a small per-message overhead like real chat formats."""
    total = 0
    for m in request.get("messages") or []:
        if not isinstance(m, dict):
            continue
        total += 4 + count_tokens(message_text(m)) + count_tokens(str(m.get("name") or ""))
        for call in m.get("tool_calls") or []:
            fn = call.get("function") if isinstance(call, dict) else None
            if isinstance(fn, dict):
                total += count_tokens(str(fn.get("name") or ""))
                total += count_tokens(str(fn.get("arguments") or ""))
    if request.get("tools"):
        total += count_tokens(json.dumps(request["tools"], default=str))
    return total + 3


# --- Generation --------------------------------------------------------------------------------


@dataclass
class _Call:
    id: str
    name: str
    arguments: str
    name_tokens: list[str]
    arg_tokens: list[str]


@dataclass
class _Choice:
    index: int
    content: str | None
    content_tokens: list[str]
    calls: list[_Call]
    finish_reason: str
    uncertainty: float
    logprobs: list[dict[str, Any]] | None = None

    @property
    def completion_tokens(self) -> int:
        return len(self.content_tokens) + sum(len(c.name_tokens) + len(c.arg_tokens) for c in self.calls)


@dataclass
class Completion:
    id: str
    created: int
    model: str
    choices: list[_Choice]
    prompt_tokens: int
    options: dict[str, Any] = field(default_factory=dict)

    @property
    def usage(self) -> dict[str, Any]:
        completion = sum(c.completion_tokens for c in self.choices)
        return {"prompt_tokens": self.prompt_tokens, "completion_tokens": completion,
                "total_tokens": self.prompt_tokens + completion,
                "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
                "completion_tokens_details": {"reasoning_tokens": 0, "audio_tokens": 0,
                                              "accepted_prediction_tokens": 0,
                                              "rejected_prediction_tokens": 0}}


def _int_option(request: dict[str, Any], name: str, lo: int, hi: int | None) -> int | None:
    value = request.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < lo or (hi is not None and value > hi):
        bound = f" and {hi}" if hi is not None else ""
        raise RequestError(400, f"Invalid value for '{name}': expected an integer between {lo}{bound}, "
                                f"got {value!r}.", param=name, code="invalid_value")
    return value


def validate(request: Any) -> dict[str, Any]:
    """Check the fields the simulation relies on, rejecting what the real API would reject."""
    if not isinstance(request, dict):
        raise RequestError(400, "The request body must be a JSON object.")
    model = request.get("model")
    if not isinstance(model, str) or not model:
        raise RequestError(400, "you must provide a model parameter", param="model",
                           code="missing_required_parameter")
    messages = request.get("messages")
    if not isinstance(messages, list) or not messages:
        raise RequestError(400, "'messages' must be a non-empty array.", param="messages",
                           code="invalid_value")
    if any(not isinstance(m, dict) or not isinstance(m.get("role"), str) for m in messages):
        raise RequestError(400, "Each message must be an object with a 'role'.", param="messages",
                           code="invalid_value")
    tools = request.get("tools")
    if tools is not None and not isinstance(tools, list):
        raise RequestError(400, "'tools' must be an array.", param="tools", code="invalid_type")
    stream = bool(request.get("stream"))
    if request.get("stream_options") is not None and not stream:
        raise RequestError(400, "The 'stream_options' parameter is only allowed when 'stream' is enabled.",
                           param="stream_options", code="invalid_value")
    top = _int_option(request, "top_logprobs", 0, MAX_TOP_LOGPROBS)
    if top and not request.get("logprobs"):
        raise RequestError(400, "'logprobs' must be set to true when 'top_logprobs' is used.",
                           param="logprobs", code="invalid_value")
    n = _int_option(request, "n", 1, MAX_CHOICES) or 1
    max_tokens = _int_option(request, "max_completion_tokens", 1, None)
    if max_tokens is None:
        max_tokens = _int_option(request, "max_tokens", 1, None)
    stop = request.get("stop")
    stops = [stop] if isinstance(stop, str) else [s for s in stop or [] if isinstance(s, str) and s]
    opts = request.get("stream_options") if isinstance(request.get("stream_options"), dict) else {}
    return {"model": model, "stream": stream, "n": n, "max_tokens": max_tokens, "stops": stops,
            "logprobs": bool(request.get("logprobs")), "top_logprobs": top or 0,
            "include_usage": bool(opts.get("include_usage"))}


def _normalise_turn(turn: Any) -> Turn:
    """Accept what a sloppy policy returns without letting it crash the handler."""
    if not isinstance(turn, Turn):
        raise TypeError(f"policy returned {type(turn).__name__}, expected Turn")
    content = turn.content if turn.content is None or isinstance(turn.content, str) else str(turn.content)
    calls = [(str(name), args if isinstance(args, dict) else {}) for name, args in turn.tool_calls]
    return Turn(content=content, tool_calls=calls, finish_reason=turn.finish_reason,
                uncertainty=float(turn.uncertainty))


def _apply_limits(choice: _Choice, stops: list[str], max_tokens: int | None) -> None:
    """Cut at stop sequences, then at the token budget, as a real server does while generating."""
    if stops and choice.content:
        cut = min((i for i in (choice.content.find(s) for s in stops) if i >= 0), default=-1)
        if cut >= 0:
            choice.content = choice.content[:cut]
            choice.content_tokens = tokenize(choice.content)
            choice.calls = []
            choice.finish_reason = "stop"
    if max_tokens is None or choice.completion_tokens <= max_tokens:
        return
    budget = max_tokens
    if len(choice.content_tokens) >= budget:
        choice.content_tokens = choice.content_tokens[:budget]
        choice.content = "".join(choice.content_tokens)
        choice.calls = []
    else:
        budget -= len(choice.content_tokens)
        kept: list[_Call] = []
        for call in choice.calls:
            if budget <= len(call.name_tokens):
                break
            budget -= len(call.name_tokens)
            if len(call.arg_tokens) > budget:
                call.arg_tokens = call.arg_tokens[:budget]
                call.arguments = "".join(call.arg_tokens)
                kept.append(call)
                break
            budget -= len(call.arg_tokens)
            kept.append(call)
        choice.calls = kept
    choice.finish_reason = "length"


def generate(policy: Policy, request: dict[str, Any], seed: int) -> Completion:
    """The whole simulated completion for a validated request; deterministic in (seed, request)."""
    opts = validate(request)
    digest = request_digest(request)
    choices = []
    for index in range(opts["n"]):
        rng = random.Random(derive_seed("policy", seed, digest, index))
        turn = _normalise_turn(policy.respond(request, rng))
        id_rng = random.Random(derive_seed("ids", seed, digest, index))
        calls = []
        for name, args in turn.tool_calls:
            arguments = json.dumps(args, ensure_ascii=False, default=str)
            calls.append(_Call(f"call_{id_rng.getrandbits(96):024x}", name, arguments,
                               tokenize(name), tokenize(arguments)))
        content = turn.content
        if content is None and not calls:
            content = ""
        choice = _Choice(index, content, tokenize(content), calls, turn.resolved_finish_reason,
                         min(1.0, max(0.0, turn.uncertainty)))
        _apply_limits(choice, opts["stops"], opts["max_tokens"])
        if opts["logprobs"]:
            tokens = choice.content_tokens + [t for c in choice.calls for t in c.name_tokens + c.arg_tokens]
            lp_rng = random.Random(derive_seed("logprobs", seed, digest, index))
            choice.logprobs = token_logprobs(tokens, choice.uncertainty, lp_rng, opts["top_logprobs"])
        choices.append(choice)
    return Completion(id=f"chatcmpl-sim{digest[:8]}{derive_seed('id', seed, digest) & (2**64 - 1):016x}",
                       created=int(time.time()), model=response_model(opts["model"]), choices=choices,
                       prompt_tokens=prompt_tokens(request), options=opts)


def _tool_call_json(call: _Call) -> dict[str, Any]:
    return {"id": call.id, "type": "function", "function": {"name": call.name, "arguments": call.arguments}}


def completion_body(c: Completion) -> dict[str, Any]:
    """The non-streaming ``chat.completion`` object."""
    choices = []
    for ch in c.choices:
        message: dict[str, Any] = {"role": "assistant", "content": ch.content if (ch.content or not ch.calls)
                                   else None, "refusal": None, "annotations": []}
        if ch.calls:
            message["tool_calls"] = [_tool_call_json(call) for call in ch.calls]
        logprobs = {"content": ch.logprobs, "refusal": None} if ch.logprobs is not None else None
        choices.append({"index": ch.index, "message": message, "logprobs": logprobs,
                        "finish_reason": ch.finish_reason})
    return {"id": c.id, "object": "chat.completion", "created": c.created, "model": c.model,
            "system_fingerprint": SIMULATED_FINGERPRINT, "service_tier": "default",
            "choices": choices, "usage": c.usage}


def completion_chunks(c: Completion) -> Iterator[dict[str, Any]]:
    """The ``chat.completion.chunk`` objects of a streamed response, in order, without ``[DONE]``."""
    include_usage = c.options.get("include_usage", False)

    def chunk(index: int, delta: dict[str, Any], *, finish: str | None = None,
              logprobs: list[dict[str, Any]] | None = None) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": c.id, "object": "chat.completion.chunk", "created": c.created, "model": c.model,
            "system_fingerprint": SIMULATED_FINGERPRINT, "service_tier": "default",
            "choices": [{"index": index, "delta": delta,
                         "logprobs": {"content": logprobs, "refusal": None} if logprobs is not None else None,
                         "finish_reason": finish}]}
        if include_usage:
            out["usage"] = None
        return out

    for ch in c.choices:
        pos = 0

        def take(n: int, _ch: _Choice = ch) -> list[dict[str, Any]] | None:
            nonlocal pos
            if _ch.logprobs is None:
                return None
            part = _ch.logprobs[pos:pos + n]
            pos += n
            return part

        yield chunk(ch.index, {"role": "assistant", "content": "" if ch.content is not None else None,
                               "refusal": None})
        for token in ch.content_tokens:
            yield chunk(ch.index, {"content": token}, logprobs=take(1))
        for i, call in enumerate(ch.calls):
            yield chunk(ch.index, {"tool_calls": [{"index": i, "id": call.id, "type": "function",
                                                   "function": {"name": call.name, "arguments": ""}}]},
                        logprobs=take(len(call.name_tokens)))
            for start in range(0, len(call.arg_tokens), 3):
                piece = call.arg_tokens[start:start + 3]
                delta = {"tool_calls": [{"index": i, "function": {"arguments": "".join(piece)}}]}
                yield chunk(ch.index, delta, logprobs=take(len(piece)))
        yield chunk(ch.index, {}, finish=ch.finish_reason)
    if include_usage:
        yield {"id": c.id, "object": "chat.completion.chunk", "created": c.created, "model": c.model,
               "system_fingerprint": SIMULATED_FINGERPRINT, "service_tier": "default", "choices": [],
               "usage": c.usage}
