"""The fault vocabulary: label types, targets, rewrite operations, marker texts and ``FaultSpec``.

Kept apart from the catalog so that the catalog and the held-out variants can both build specs
from it without importing each other.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

LOOP_GUARD_CALLS = 100

# --- label vocabulary -------------------------------------------------------------------------
ERROR = "error"
TIMEOUT = "timeout"
EMPTY = "empty"
TRUNCATE = "truncate"
CORRUPT = "corrupt"
SCHEMA = "schema"
CONTENT_FILTER = "content_filter"
STALE = "stale"
WRONG_VALUE = "wrong_value"
LATENCY = "latency"
HTTP_ERROR = "http_error"
RATE_LIMIT = "rate_limit"
CONNECTION = "connection"
STREAM_CUT = "stream_cut"

AGENTCHAOS_TYPES = (ERROR, TIMEOUT, EMPTY, TRUNCATE, CORRUPT, SCHEMA)
RESPONSE_FAULT_TYPES = AGENTCHAOS_TYPES + (CONTENT_FILTER, STALE, WRONG_VALUE, LATENCY, HTTP_ERROR,
                                           RATE_LIMIT, CONNECTION, STREAM_CUT)
# Tool-result kinds (docs/design.md 3.3); "timeout", "rate_limit", "empty" and "wrong_value" are shared.
TOOL_RESULT_FAULT_TYPES = ("timeout", "rate_limit", "empty", "malformed_json", "truncated", "key_rename",
                           "wrong_value")

TARGETS = ("content", "tool_calls", "http", "stream")
STRATEGIES = ("single", "persistent", "intermittent", "burst", "positional")
VARIANT_FAMILY = "variant"  # the held-out set (faults/variants.py); never part of a default listing
FAMILIES = ("agentchaos", "compound", "positional", "http", "stream", VARIANT_FAMILY)

# --- op names ---------------------------------------------------------------------------------
# Response-body ops (llm_response.py / anthropic.py)
OP_SET_CONTENT = "set_content"              # params: text, [finish_reason]
OP_TRUNCATE_CONTENT = "truncate_content"    # params: ratio, finish_reason
OP_CORRUPT_CONTENT = "corrupt_content"      # params: mode (llm_response.CORRUPTION_MODES), encoding, fraction
OP_SET_ARGUMENTS = "set_arguments"          # params: arguments (JSON text)
OP_TRUNCATE_ARGUMENTS = "truncate_arguments"  # params: ratio
OP_CORRUPT_ARGUMENTS = "corrupt_arguments"  # params: fraction, low, high, [mode]
OP_DROP_TOOL_CALLS = "drop_tool_calls"      # params: [text], [finish_reason]
OP_REPLAY_PREVIOUS = "replay_previous"      # no params; needs the previous response
OP_DELAY = "delay"                          # body unchanged; delay_s says how long
# HTTP ops (http.py)
OP_HTTP_ERROR = "http_error"                # params: status, [retry_after], [server], [body, content_type]
OP_RAISE = "raise"                          # params: exception (httpx class name), [message]
# Stream ops (stream.py)
OP_STREAM_CUT = "stream_cut"                # params: after_chunks, done
OP_STREAM_TRUNCATE = "stream_truncate"      # params: after_chunks
OP_STREAM_CORRUPT = "stream_corrupt"        # params: mode, fraction, every
OP_STREAM_DROP_TOOL_CALLS = "stream_drop_tool_calls"
OP_STREAM_EMPTY = "stream_empty"            # params: done
OP_STREAM_STALL = "stream_stall"            # params: before_chunk, seconds

RESPONSE_OPS = (OP_SET_CONTENT, OP_TRUNCATE_CONTENT, OP_CORRUPT_CONTENT, OP_SET_ARGUMENTS,
                OP_TRUNCATE_ARGUMENTS, OP_CORRUPT_ARGUMENTS, OP_DROP_TOOL_CALLS, OP_REPLAY_PREVIOUS,
                OP_DELAY)
HTTP_OPS = (OP_HTTP_ERROR, OP_RAISE, OP_DELAY)
STREAM_OPS = (OP_STREAM_CUT, OP_STREAM_TRUNCATE, OP_STREAM_CORRUPT, OP_STREAM_DROP_TOOL_CALLS,
              OP_STREAM_EMPTY, OP_STREAM_STALL)

# --- the marker texts AgentChaos writes into a 200 response -----------------------------------
API_ERROR_TEXT = ("[API ERROR] HTTP 500: Internal Server Error. "
                  "The server encountered an unexpected condition.")
TIMEOUT_TEXT = ("[TIMEOUT] The request timed out. "
                "The server did not respond within the expected time.")
TIMEOUT_DROPPED_TEXT = "[TIMEOUT] Connection dropped. The server did not respond."
SCHEMA_CONTENT_TEXT = '{"error": "content_policy_violation", "message": "This response has been filtered."}'
SCHEMA_ARGUMENTS = '{"wrong_param": "unexpected_value"}'
SERVICE_UNAVAILABLE_TEXT = ("[SERVICE UNAVAILABLE] HTTP 503: The server is temporarily unable to handle "
                            "the request due to maintenance or overload.")
CONTENT_FILTERED_TEXT = "[CONTENT FILTERED] This response has been blocked by the content safety filter."
PROXY_HTML_TEXT = ("<!DOCTYPE html>\n<html><head><title>502 Bad Gateway</title></head>\n"
                   "<body><center><h1>502 Bad Gateway</h1></center><hr><center>nginx/1.24.0</center>"
                   "</body></html>")
STALE_DATA_ARGUMENTS = '{"city": "Pyongyang"}'
WRONG_ENTITY_ARGUMENTS = '{"city": "Springfield"}'


@dataclass(frozen=True)
class FaultSpec:
    """One named fault configuration; immutable so plans and threads can share it."""

    name: str
    fault_type: str
    target: str
    op: str
    strategy: str
    family: str
    description: str
    guard: bool = True
    probability: float = 1.0
    max_fires: int | None = None
    on_call: int | None = None
    delay_s: float = 0.0
    # Excluded from the hash (a dict is unhashable); never mutate it, build a variant instead.
    params: Mapping[str, Any] = field(default_factory=dict, hash=False)

    @property
    def is_agentchaos(self) -> bool:
        return self.family in ("agentchaos", "compound", "positional")

    def param(self, key: str, default: Any = None) -> Any:
        return self.params.get(key, default)

    def variant(self, name: str, *, params: Mapping[str, Any] | None = None, **changes: Any) -> FaultSpec:
        """A new spec that differs in name and the given fields; ``params`` are merged, not replaced."""
        merged = {**self.params, **(params or {})}
        return replace(self, name=name, params=merged, **changes)


class UnknownFaultError(ValueError):
    """A fault name that is not in the catalog; the message suggests the closest names."""
