"""The labels a diagnosis can carry, and how response faults are kept apart from tool-result faults.

Several names exist on both sides (``timeout``, ``empty``, ``rate_limit``, ``wrong_value``): a
timeout message written into the model's reply and a tool that answered ``{"error": "timeout"}``
are different failures. A diagnosis therefore names a (type, target) pair; scores compare the type
as the ground truth vocabulary does, and the target says which side of the agent was hit.
"""

from __future__ import annotations

# docs/design.md 3.1 / 3.2 and docs/taxonomy.md: labels of faults in what the model API returned.
LLM_FAULT_TYPES: tuple[str, ...] = (
    "error", "timeout", "empty", "truncate", "corrupt", "schema", "content_filter", "stale",
    "wrong_value", "latency", "http_error", "rate_limit", "connection", "stream_cut",
    "auth", "not_found", "invalid_request",
)
# docs/design.md 3.3 and docs/taxonomy.md: kinds of faults in what a tool returned (the study's seven, and
# what an error a tool reports means).
TOOL_RESULT_KINDS: tuple[str, ...] = (
    "timeout", "rate_limit", "empty", "malformed_json", "truncated", "key_rename", "wrong_value",
    "connection", "error", "auth", "not_found", "invalid_request",
)
# A failure a reported error means, as the vocabulary names it -> the label on each side.
MEANING_LABEL_TOOL: dict[str, str] = {
    "rate_limit": "rate_limit", "timeout": "timeout", "connection": "connection", "auth": "auth",
    "not_found": "not_found", "invalid_request": "invalid_request", "partial": "truncated",
    "content_filter": "error", "length": "truncated", "error": "error",
}
MEANING_LABEL_LLM: dict[str, str] = {
    "rate_limit": "rate_limit", "timeout": "timeout", "connection": "connection", "auth": "auth",
    "not_found": "not_found", "invalid_request": "invalid_request", "content_filter": "content_filter",
    "length": "truncate", "partial": "truncate", "error": "error",
}
FAULT_TYPES: tuple[str, ...] = tuple(dict.fromkeys(LLM_FAULT_TYPES + TOOL_RESULT_KINDS))
NONE_FOUND = "none_found"

# Where a fault hit (agentchaos.fault.target); `tool_result` is the only tool-side target.
LLM_TARGETS: tuple[str, ...] = ("content", "tool_calls", "http", "stream")
TOOL_TARGET = "tool_result"
TARGETS: tuple[str, ...] = LLM_TARGETS + (TOOL_TARGET,)


def side(target: str | None) -> str:
    """'tool' for tool-result faults, 'llm' for everything the model API returned."""
    return "tool" if target == TOOL_TARGET else "llm"


def class_label(fault_type: str, target: str | None) -> str:
    """A label that keeps same-named types of the two sides apart, e.g. 'tool:timeout'."""
    return f"{side(target)}:{fault_type}"


def split_class_label(label: str) -> tuple[str, str]:
    """(type, target) from a class label; the LLM side reports the generic target 'llm'."""
    prefix, _, fault_type = label.partition(":")
    return fault_type, (TOOL_TARGET if prefix == "tool" else "llm")

# Episode categories of a label file (docs/taxonomy.md): false blame is reported for the last three.
FAULTED, CLEAN_SUCCESS, BENIGN_SUCCESS, UNFAULTED = ("faulted_failure", "clean_success", "benign_success",
                                                     "unfaulted_failure")
CATEGORIES: tuple[str, ...] = (FAULTED, CLEAN_SUCCESS, BENIGN_SUCCESS, UNFAULTED)
