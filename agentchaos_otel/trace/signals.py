"""Observable-derived signals: what the agent saw, reduced to content-free numbers and labels.

Diagnosis needs to know that a response was empty, looked like an error page or was mojibake
even when message content is not captured, so these are computed at span time and stored as
attributes. Nothing here returns the content itself; digests are truncated SHA-256.
"""

from __future__ import annotations

import hashlib
import json
import re
import unicodedata
from typing import Any

from agentchaos_otel import attributes as A


def digest(data: str | bytes | None) -> str:
    if data is None:
        return ""
    if isinstance(data, str):
        data = data.encode("utf-8", "surrogatepass")
    return hashlib.sha256(data).hexdigest()[:16]


def canonical_json_digest(value: Any) -> str:
    return digest(json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False))


_ERROR_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("html_page", re.compile(r"<\s*(!doctype\s+html|html|head|body|title|center)\b", re.I)),
    ("http_status", re.compile(r"\bHTTP(/\d(\.\d)?)?\s*[45]\d\d\b|\b[45]\d\d\s+(bad gateway|internal server"
                               r" error|service unavailable|gateway time-?out|too many requests|bad request"
                               r"|forbidden|not found|unauthorized)\b", re.I)),
    ("provider_json", re.compile(r'^\s*\{\s*"(error|detail|message|type|code)"\s*:', re.I)),
    ("rate_limit", re.compile(r"rate[\s_-]?limit|too many requests|quota exceeded|throttl", re.I)),
    ("timeout", re.compile(r"timed?[\s_-]?out|deadline exceeded|connection (dropped|reset|closed|aborted)"
                           r"|did not respond|no response", re.I)),
    ("unavailable", re.compile(r"service unavailable|temporarily unavailable|overloaded|bad gateway"
                               r"|upstream|server error|internal error", re.I)),
    ("filtered", re.compile(r"content[\s_-]?(filter|policy)|has been filtered|flagged|moderation", re.I)),
    ("bracket_tag", re.compile(r"^\s*\[[A-Z][A-Z _-]{2,}\]")),
    ("error_word", re.compile(r"^\s*(error|exception|traceback|fatal)\b[:\s]", re.I)),
)


def error_marker(text: str | None) -> str:
    """Classify error-like text in its common real-world forms; '' when it looks normal."""
    if not text:
        return ""
    head = text[:2000]
    for label, pattern in _ERROR_PATTERNS:
        if pattern.search(head):
            return label
    return ""


_MOJIBAKE_RE = re.compile("[\u00c2\u00c3\u00c5\u00e2][\u0080-\u00bf\u2018-\u203a\u0152\u0153\u0160\u0161\u0178"
                          "\u017d\u017e\u0192\u02c6\u02dc\u20ac\u2122]")


def mojibake_score(text: str | None) -> float:
    """Share of characters that are part of UTF-8-read-as-Latin-1 sequences (0..1)."""
    if not text:
        return 0.0
    hits = len(_MOJIBAKE_RE.findall(text))
    return min(1.0, 2.0 * hits / max(1, len(text)))


def unicode_anomaly(text: str | None) -> float:
    """Share of characters that are symbols, private use, control or replacement characters."""
    if not text:
        return 0.0
    odd = 0
    for ch in text:
        if ch in "\n\r\t":
            continue
        cat = unicodedata.category(ch)
        if cat in ("So", "Co", "Cn", "Cc", "Cs") or ch == "\ufffd" or "\u2600" <= ch <= "\u27bf":
            odd += 1
    return odd / len(text)


def is_json(text: str | None) -> bool:
    if text is None:
        return False
    try:
        json.loads(text)
    except (ValueError, TypeError):
        return False
    return True


def content_signals(content: str | None) -> dict[str, Any]:
    """Signals of an assistant message's text content."""
    text = content or ""
    return {
        A.RESPONSE_CONTENT_LENGTH: len(text),
        A.RESPONSE_ERROR_MARKER: error_marker(text),
        A.RESPONSE_UNICODE_ANOMALY: round(unicode_anomaly(text), 6),
        A.RESPONSE_MOJIBAKE: round(mojibake_score(text), 6),
        A.RESPONSE_IS_JSON: bool(text.strip()) and is_json(text),
    }


def _schema_ok(args: Any, schema: dict[str, Any] | None) -> bool:
    """Check arguments against a JSON-schema object's properties/required (the part tools use)."""
    if not isinstance(args, dict):
        return False
    if not schema:
        return True
    props = schema.get("properties") or {}
    required = schema.get("required") or []
    if any(r not in args for r in required):
        return False
    if props and schema.get("additionalProperties", True) is not True:
        if any(k not in props for k in args):
            return False
    if props and any(k not in props for k in args):
        return False
    return True


def tool_call_signals(tool_calls: list[dict[str, Any]], request_tools: list[dict[str, Any]] | None
                      ) -> dict[str, Any]:
    """Signals of the tool calls in a response, checked against the tools declared in the request."""
    if not tool_calls:
        return {A.RESPONSE_TOOL_CALL_COUNT: 0}
    schemas: dict[str, dict[str, Any]] = {}
    for t in request_tools or []:
        fn = t.get("function") if isinstance(t, dict) else None
        if isinstance(fn, dict) and fn.get("name"):
            schemas[fn["name"]] = fn.get("parameters") or {}
        elif isinstance(t, dict) and t.get("name"):  # Anthropic shape
            schemas[t["name"]] = t.get("input_schema") or {}
    names, valid, schema_valid, arg_text = [], True, True, []
    for call in tool_calls:
        fn = call.get("function") or {}
        name = str(fn.get("name") or "")
        raw = fn.get("arguments")
        names.append(name)
        text = raw if isinstance(raw, str) else json.dumps(raw)
        arg_text.append(text or "")
        try:
            parsed = json.loads(text) if text else {}
        except (ValueError, TypeError):
            valid = schema_valid = False
            continue
        if name in schemas:
            schema_valid = schema_valid and _schema_ok(parsed, schemas[name])
        elif schemas:
            schema_valid = False
    joined = "\n".join(arg_text)
    return {
        A.RESPONSE_TOOL_CALL_COUNT: len(tool_calls),
        A.RESPONSE_TOOL_NAMES: names,
        A.RESPONSE_TOOL_ARGS_VALID: valid,
        A.RESPONSE_TOOL_ARGS_SCHEMA_VALID: schema_valid,
        A.RESPONSE_TOOL_ARGS_DIGEST: digest(joined),
        A.RESPONSE_TOOL_ARGS_LENGTH: len(joined),
        A.RESPONSE_TOOL_ARGS_ANOMALY: round(max(unicode_anomaly(joined), mojibake_score(joined)), 6),
    }
