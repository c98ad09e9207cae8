"""Checks of one LLM response against the request that asked for it, independent of HTTP status.

A 200 response can still be unusable: cut off by the token limit, refused by a filter, empty,
or carrying tool calls whose arguments are not JSON or do not fit the tool's declared schema
(syntax alone lets a wrong type or a missing required key through). These functions are pure:
parsed request body and parsed response body in, a list of findings out, so each can be tested
on hand-built bodies and reused outside the transport. Both Chat Completions and Anthropic
Messages bodies are understood.

Value-level errors (a well-formed call about the wrong entity) are out of reach of any check
that only sees one response; these checks catch what is wrong in form.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import jsonschema
from jsonschema.exceptions import SchemaError

LENGTH = "length"
CONTENT_FILTER = "content_filter"
EMPTY_ANSWER = "empty_answer"
INVALID_ARGUMENTS = "invalid_arguments"
SCHEMA_MISMATCH = "schema_mismatch"
FORMAT_MISMATCH = "format_mismatch"
# In the order a caller should care about them: the first finding names the exception raised.
CHECK_KINDS = (LENGTH, CONTENT_FILTER, EMPTY_ANSWER, INVALID_ARGUMENTS, SCHEMA_MISMATCH, FORMAT_MISMATCH)

_MAX_DETAIL = 300


@dataclass(frozen=True)
class Finding:
    """One thing wrong with a response. ``choice`` is the choice index (0 for Messages)."""

    kind: str
    detail: str
    choice: int = 0
    tool: str | None = None
    call_id: str | None = None

    def line(self) -> str:
        where = f" (tool {self.tool})" if self.tool else ""
        return f"{self.kind}{where}: {self.detail}"[:_MAX_DETAIL]


def _short(text: str) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= 160 else text[:157] + "..."


# --- schemas from the request ------------------------------------------------------------------

def tool_schemas(request: Mapping[str, Any]) -> dict[str, Any]:
    """Tool name -> JSON Schema of its arguments, from an OpenAI or Anthropic request's ``tools``."""
    out: dict[str, Any] = {}
    for tool in request.get("tools") or []:
        if not isinstance(tool, Mapping):
            continue
        fn = tool.get("function")
        if isinstance(fn, Mapping) and fn.get("name"):  # Chat Completions
            out[str(fn["name"])] = fn.get("parameters")
        elif tool.get("name"):  # Messages (custom tools); server tools carry no input_schema
            out[str(tool["name"])] = tool.get("input_schema")
    return out


def schema_errors(instance: Any, schema: Any) -> list[str]:
    """Why ``instance`` does not fit ``schema`` (empty when it fits or the schema is unusable).

    A malformed schema in the request is the caller's mistake, not the model's, so it yields no
    finding rather than blaming the response.
    """
    if not isinstance(schema, Mapping) or not schema:
        return []
    try:
        cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
        cls.check_schema(schema)
        validator = cls(schema)
        errors = sorted(validator.iter_errors(instance), key=lambda e: list(e.absolute_path))
    except SchemaError:
        return []
    return [f"{'/'.join(str(p) for p in e.absolute_path) or '(root)'}: {_short(e.message)}" for e in errors]


def _parse_arguments(raw: Any) -> tuple[Any, str | None]:
    if isinstance(raw, Mapping):
        return dict(raw), None
    if raw is None or raw == "":
        return {}, None
    if not isinstance(raw, str):
        return None, f"arguments are a {type(raw).__name__}, not a JSON object"
    try:
        value = json.loads(raw)
    except ValueError as exc:
        return None, f"arguments are not valid JSON ({_short(str(exc))})"
    if not isinstance(value, dict):
        return None, f"arguments are JSON {type(value).__name__}, not an object"
    return value, None


def check_tool_call(name: str, raw_arguments: Any, schemas: Mapping[str, Any], *, choice: int = 0,
                    call_id: str | None = None) -> list[Finding]:
    """Arguments that do not parse, a tool the request never offered, or arguments off-schema."""
    args, problem = _parse_arguments(raw_arguments)
    if problem is not None:
        return [Finding(INVALID_ARGUMENTS, problem, choice, name, call_id)]
    if schemas and name not in schemas:
        return [Finding(SCHEMA_MISMATCH, f"tool {name!r} was not offered in the request", choice, name, call_id)]
    errors = schema_errors(args, schemas.get(name))
    if errors:
        return [Finding(SCHEMA_MISMATCH, "; ".join(errors[:3]), choice, name, call_id)]
    return []


# --- requested output format -------------------------------------------------------------------

def requested_format(request: Mapping[str, Any]) -> tuple[str, Any] | None:
    """('json_object', None) or ('json_schema', schema) when the request asks for JSON output.

    Chat Completions use ``response_format``; Anthropic structured outputs use ``output_format``
    (``{"type": "json_schema", "schema": ...}``).
    """
    fmt = request.get("response_format") or request.get("output_format")
    if not isinstance(fmt, Mapping):
        return None
    kind = fmt.get("type")
    if kind == "json_object":
        return ("json_object", None)
    if kind == "json_schema":
        spec = fmt.get("json_schema")
        schema = spec.get("schema") if isinstance(spec, Mapping) else fmt.get("schema")
        return ("json_schema", schema)
    return None


def check_format(text: str | None, fmt: tuple[str, Any] | None, *, choice: int = 0) -> list[Finding]:
    if fmt is None or text is None:
        return []
    try:
        value = json.loads(text)
    except ValueError as exc:
        return [Finding(FORMAT_MISMATCH, f"answer is not JSON as requested ({_short(str(exc))})", choice)]
    kind, schema = fmt
    if kind == "json_object" and not isinstance(value, dict):
        return [Finding(FORMAT_MISMATCH, f"answer is JSON {type(value).__name__}, not an object", choice)]
    errors = schema_errors(value, schema) if kind == "json_schema" else []
    if errors:
        return [Finding(FORMAT_MISMATCH, "; ".join(errors[:3]), choice)]
    return []


# --- whole responses ---------------------------------------------------------------------------

def _blank(text: Any) -> bool:
    return not isinstance(text, str) or not text.strip()


def check_chat_completion(request: Mapping[str, Any], response: Mapping[str, Any]) -> list[Finding]:
    """Every finding on a Chat Completions response, choice by choice."""
    schemas = tool_schemas(request)
    fmt = requested_format(request)
    choices = response.get("choices")
    if not isinstance(choices, list) or not choices:
        return [Finding(EMPTY_ANSWER, "the response has no choices")]
    out: list[Finding] = []
    for pos, choice in enumerate(choices):
        if not isinstance(choice, Mapping):
            out.append(Finding(EMPTY_ANSWER, "a choice is not an object", pos))
            continue
        index = choice.get("index", pos) if isinstance(choice.get("index", pos), int) else pos
        reason = choice.get("finish_reason")
        if reason == "length":
            out.append(Finding(LENGTH, "finish_reason is 'length': the answer was cut at the token limit", index))
        elif reason == "content_filter":
            out.append(Finding(CONTENT_FILTER, "finish_reason is 'content_filter'", index))
        message = choice.get("message") if isinstance(choice.get("message"), Mapping) else {}
        calls = [c for c in (message.get("tool_calls") or []) if isinstance(c, Mapping)]
        legacy = message.get("function_call") if isinstance(message.get("function_call"), Mapping) else None
        content = message.get("content")
        if message.get("refusal") and reason != "content_filter":
            out.append(Finding(CONTENT_FILTER, f"refusal: {_short(message['refusal'])}", index))
        filtered = reason == "content_filter" or bool(message.get("refusal"))
        if not calls and legacy is None and _blank(content) and not filtered and reason != "length":
            out.append(Finding(EMPTY_ANSWER, "no content and no tool calls", index))
        for call in calls:
            fn = call.get("function") if isinstance(call.get("function"), Mapping) else {}
            out.extend(check_tool_call(str(fn.get("name") or ""), fn.get("arguments"), schemas, choice=index,
                                       call_id=call.get("id")))
        if legacy is not None:
            out.extend(check_tool_call(str(legacy.get("name") or ""), legacy.get("arguments"), {}, choice=index))
        if not calls and reason != "length":  # a cut answer is already reported as such
            out.extend(check_format(content if isinstance(content, str) else None, fmt, choice=index))
    return out


def check_messages(request: Mapping[str, Any], response: Mapping[str, Any]) -> list[Finding]:
    """Every finding on an Anthropic Messages response."""
    schemas = tool_schemas(request)
    fmt = requested_format(request)
    out: list[Finding] = []
    reason = response.get("stop_reason")
    if reason == "max_tokens":
        out.append(Finding(LENGTH, "stop_reason is 'max_tokens': the answer was cut at the token limit"))
    elif reason == "refusal":
        out.append(Finding(CONTENT_FILTER, "stop_reason is 'refusal'"))
    blocks = [b for b in (response.get("content") or []) if isinstance(b, Mapping)]
    texts = [b.get("text") for b in blocks if b.get("type") == "text"]
    uses = [b for b in blocks if b.get("type") == "tool_use"]
    if not uses and all(_blank(t) for t in texts) and reason != "refusal":
        out.append(Finding(EMPTY_ANSWER, "no text and no tool use"))
    for b in uses:
        out.extend(check_tool_call(str(b.get("name") or ""), b.get("input"), schemas, call_id=b.get("id")))
    if not uses and reason != "max_tokens":
        out.extend(check_format("".join(t for t in texts if isinstance(t, str)) if texts else None, fmt))
    return out


def check_response(provider: str, request: Mapping[str, Any], response: Mapping[str, Any],
                   enabled: Iterable[str] = CHECK_KINDS) -> list[Finding]:
    """Findings for a parsed response of ``provider`` ('openai' or 'anthropic'), only of ``enabled`` kinds."""
    wanted = set(enabled)
    found = _CHECKS_BY_PROVIDER.get(provider, check_chat_completion)(request, response)
    return [f for f in found if f.kind in wanted]


# Anything not Anthropic's Messages API is read as chat completions (OpenAI-compatible servers).
_CHECKS_BY_PROVIDER: dict[str, Callable[[Mapping[str, Any], Mapping[str, Any]], list[Finding]]] = {
    "openai": check_chat_completion, "anthropic": check_messages}


def first(findings: Iterable[Finding]) -> Finding | None:
    """The finding that names the outcome: earliest in CHECK_KINDS order."""
    ranked = sorted(findings, key=lambda f: CHECK_KINDS.index(f.kind) if f.kind in CHECK_KINDS else 99)
    return ranked[0] if ranked else None
