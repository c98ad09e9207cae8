"""Observable signals of a tool call: what the agent was shown, reduced to content-free values.

A diagnoser has to tell a timeout from an empty answer or a renamed schema even when result
content is not captured, so these are computed from the *shown* result at span time; what the
tool really returned never goes through here. The per-result signals themselves are defined once
in ``trace.signals.tool_result_signals`` (diagnosers recompute them from captured content of
foreign traces), so spans we write and traces we read agree by construction.
"""

from __future__ import annotations

import json
from typing import Any

from agentchaos_otel import attributes as A
from agentchaos_otel import signals, vocabulary


def result_text(result: Any) -> str:
    """The result as the agent reads it: strings verbatim, everything else as JSON.

    Agent loops (BFCL's among them) put strings into the conversation unchanged and serialise
    the rest; unknown objects fall back to ``str`` so this never raises.
    """
    if isinstance(result, str):
        return result
    if isinstance(result, bytes | bytearray):
        return bytes(result).decode("utf-8", "replace")
    try:
        return json.dumps(result, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return str(result)


def parsed_result(result: Any) -> Any:
    """The structured value behind a result: JSON text is parsed, anything else is kept."""
    if isinstance(result, str):
        try:
            return json.loads(result)
        except ValueError:
            return result
    return result


def args_digest(arguments: Any) -> str:
    """Digest of the call's arguments, key order ignored, so identical retries match."""
    try:
        return signals.canonical_json_digest(arguments)
    except (TypeError, ValueError):
        return signals.digest(repr(arguments))


def tool_result_signals(result: Any) -> dict[str, Any]:
    """Span attributes describing the result the agent was shown (see ``trace.signals``)."""
    attrs = signals.tool_result_signals(result)
    # Keys and numbers-as-strings are defined for every result, not only JSON ones, so a
    # missing attribute never has to be told apart from "none".
    attrs.setdefault(A.TOOL_RESULT_KEYS, [])
    attrs.setdefault(A.TOOL_RESULT_RECORD_KEYS, [])
    attrs.setdefault(A.TOOL_RESULT_NUMERIC_STRINGS, 0)
    return attrs


def flagged_error_signals(attrs: dict[str, Any], result: Any) -> dict[str, Any]:
    """``attrs`` of a result its sender flagged as an error (MCP ``isError``) with what the result
    says: the error is certain, so its words are read for a meaning even when its text has no
    error form of its own (``vocabulary.read_flagged_text``)."""
    attrs[A.TOOL_RESULT_IS_ERROR] = True
    if attrs.get(A.TOOL_RESULT_FAILURE) in (None, "", vocabulary.GENERIC):
        reading = vocabulary.read_flagged_text(result_text(result))
        if reading.meaning and reading.meaning != vocabulary.GENERIC:
            attrs[A.TOOL_RESULT_FAILURE] = reading.meaning
            attrs[A.TOOL_RESULT_FAILURE_EVIDENCE] = signals.evidence_of(reading)
    return attrs


def exception_signals(exc: BaseException) -> dict[str, Any]:
    """Attributes of a tool call that raised: an error, and what its class hierarchy, errno, status
    and message say it was (``vocabulary.read_exception``); content-free like the result signals."""
    reading = vocabulary.read_exception(exc)
    return {A.TOOL_RESULT_IS_ERROR: True, A.TOOL_RESULT_FAILURE: reading.meaning or vocabulary.GENERIC,
            A.TOOL_RESULT_FAILURE_EVIDENCE: signals.evidence_of(reading)}


def call_signals(arguments: Any) -> dict[str, Any]:
    """Attributes known when the call starts, before the tool runs."""
    return {A.TOOL_ARGS_DIGEST: args_digest(arguments)}
