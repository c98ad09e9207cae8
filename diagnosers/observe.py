"""What the agent observed at each step, in one shape whichever instrumentation wrote the trace.

Our transport records content-free signals (``agentchaos.response.*``, ``agentchaos.tool.*``).
Traces from other GenAI or OpenInference instrumentations carry only standard attributes and,
when content capture was on, the messages themselves; ``trace/foreign.py`` maps those onto our
names and derives the same signals from the captured content, so every diagnoser reads one
``Observation`` per step. Only attributes the agent could observe are read: nothing under the
ground-truth prefixes. Comparisons across the steps of an episode are ``diagnosers/view.py``;
key naming conventions are ``diagnosers/key_style.py``.
"""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass, field
from typing import Any

from agentchaos_otel import attributes as A
from agentchaos_otel import vocabulary
from agentchaos_otel.records import StepRecord
from agentchaos_otel.trace import foreign


@dataclass(slots=True)
class Observation:
    """One step as the agent saw it. ``None`` means the trace does not say."""

    index: int  # position in the episode's step list
    step: int
    span_id: str
    kind: str  # "llm" | "tool"
    name: str
    duration_ms: float
    status_error: bool = False
    error_type: str | None = None
    http_status: int | None = None
    # LLM response
    finish_reasons: tuple[str, ...] = ()
    content_length: int | None = None
    content_blank: bool = False  # whitespace only
    markers: tuple[str, ...] = ()
    unicode_anomaly: float = 0.0
    mojibake: float = 0.0
    content_is_json: bool = False
    tool_call_count: int | None = None
    tool_names: tuple[str, ...] = ()
    args_valid: bool | None = None
    args_schema_valid: bool | None = None
    args_empty: int = 0
    args_problem: str = ""
    args_anomaly: float = 0.0
    args_mojibake: float = 0.0
    args_digest: str | None = None
    args_strings: int | None = None  # string argument values of 3+ characters
    args_ungrounded: int | None = None  # ... of which the request's messages never mention
    response_id: str | None = None
    response_digest: str | None = None
    request_digest: str | None = None
    output_tokens: int | None = None
    stream: bool = False
    replacement_chars: int = 0
    json_embedded: bool = False
    response_format: str | None = None
    asks_json: bool = False
    body_error: bool = False
    choice_count: int | None = None
    message_null: bool = False
    refusal: bool = False
    error_code: str | None = None
    max_tokens: int | None = None
    stream_done: bool | None = None
    max_chunk_gap_ms: float | None = None
    failure: str = ""  # what the response body or error body reports (vocabulary meaning)
    failure_evidence: str = ""
    content_failure: str = ""  # the reply text (or JSON) is an error report of this meaning
    content_failure_evidence: str = ""
    args_cut_values: int | None = None  # argument values the conversation holds only as a longer word's start
    args_short_cut_values: int | None = None  # ... of one or two characters
    request_messages: int | None = None
    # Either kind: what a raised exception says (vocabulary meaning of its class, errno, message)
    exception_failure: str = ""
    exception_evidence: str = ""
    # Tool result
    tool_name: str | None = None
    result_length: int | None = None
    result_is_json: bool | None = None
    result_json_like: bool = False
    result_empty: bool = False
    result_is_error: bool = False
    result_failure: str = ""  # what a failed or partial result reports (vocabulary meaning)
    result_failure_evidence: str = ""
    idempotent: bool | None = None  # declared by the tool (MCP annotations, the idempotency guard)
    suppressed: bool = False  # the idempotency guard did not run this repeat
    result_markers: tuple[str, ...] = ()
    result_keys: tuple[str, ...] | None = None
    result_record_keys: tuple[str, ...] = ()  # keys of the records a listing carries
    result_shape: str | None = None
    result_key_count: int | None = None
    result_item_count: int | None = None
    result_numeric_strings: int | None = None
    result_digest: str | None = None
    tool_args_digest: str | None = None
    echo_mismatch: tuple[str, ...] = ()
    result_count_above: str = ""  # a count member above the items of the result's one list
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def result_null(self) -> bool:
        """A JSON ``null`` result: the way a function with no return value answers."""
        return self.result_empty and bool(self.result_is_json) and self.result_length == 4

    @property
    def has_response(self) -> bool:
        """An LLM step that returned a body the agent read (not a transport failure)."""
        return self.kind == "llm" and not self.transport_failed

    @property
    def transport_failed(self) -> bool:
        return (self.http_status is not None and self.http_status >= 400) or (
            self.status_error and self.error_type is not None and self.content_length in (None, 0)
            and not self.tool_call_count)


def _int(v: Any) -> int | None:
    if type(v) is int:  # the usual case first: this runs for a dozen attributes of every step
        return v
    if v is None or isinstance(v, bool):
        return None
    if isinstance(v, int):
        return v
    if isinstance(v, str) and v.strip().lstrip("-").isdigit():
        return int(v)
    return None


def _float(v: Any, default: float = 0.0) -> float:
    t = type(v)
    if t is float or t is int:  # the usual cases first, without building ``int | float`` per call
        return float(v)
    return float(v) if isinstance(v, int | float) and not isinstance(v, bool) else default


def _strs(v: Any) -> tuple[str, ...]:
    if v is None:
        return ()
    if type(v) is list:
        return tuple(map(str, v))
    if isinstance(v, str):
        if not v.startswith("["):  # a plain value; stores that keep lists as JSON text start with [
            return (v,) if v else ()
        try:
            parsed = json.loads(v)
        except ValueError:
            return (v,)
        return _strs(parsed) if isinstance(parsed, list) else (v,)
    if isinstance(v, list | tuple):
        return tuple(str(x) for x in v)
    return (str(v),)


def _first_strs(a: dict[str, Any], names: tuple[str, ...]) -> tuple[str, ...]:
    """The first non-empty list among ``names`` (finish reasons: GenAI's list, OpenInference's one)."""
    for name in names:
        out = _strs(a.get(name))
        if out:
            return out
    return ()


def exception_reading(s: StepRecord) -> vocabulary.Reading:
    """What the exception recorded on a failed step says it was: its recorded class name and
    message read with the published vocabulary (the same reading the span-time signals use)."""
    if s.status_code != "ERROR":
        return vocabulary.NOTHING
    for e in s.events:
        if e.get("name") == "exception":
            attrs = e.get("attributes") or {}
            return _read_exception(str(attrs.get(A.EXCEPTION_TYPE) or ""),
                                   str(attrs.get(A.EXCEPTION_MESSAGE) or "")[:2000])
    if s.error_type and not s.error_type.isdigit():
        return _read_exception(s.error_type, "")
    return vocabulary.NOTHING


@functools.lru_cache(maxsize=4096)
def _read_exception(name: str, message: str) -> vocabulary.Reading:
    """An episode store repeats the same few exceptions: each (class, message) is read once."""
    return vocabulary.read_exception_names([name], message)


# The error forms the span-time markers named before replies were read with the vocabulary, and
# what each said; forms that also occur in ordinary prose (a word anywhere near the start) are
# not among them.
_LEGACY_FORMS = ("html_page", "http_status", "provider_json", "bracket_tag", "error_word")
_LEGACY_MEANINGS = (("filtered", "content_filter"), ("rate_limit", "rate_limit"), ("timeout", "timeout"))


def legacy_reply_reading(markers: tuple[str, ...]) -> tuple[str, str]:
    """What a reply recorded by an earlier version (error markers, no meaning) reports: an error
    report when one of its markers is an error form, of the meaning a marker names, else ``error``."""
    forms = [m for m in markers if m in _LEGACY_FORMS]
    if not forms:
        return "", ""
    meaning = next((m for marker, m in _LEGACY_MEANINGS if marker in markers), "error")
    return meaning, f"{forms[0]} (error markers of an earlier recording)"


_NOT_IDEMPOTENT_RE = re.compile(r"\b(?:not|non)[- ]idempotent\b", re.IGNORECASE)
_READ_ONLY_RE = re.compile(r"\bread[- ]only\b|\bidempotent\b|\b(?:does|will) not (?:modify|change|write)\b",
                           re.IGNORECASE)


def declared_idempotent(a: dict[str, Any]) -> bool | None:
    """Whether the tool says repeating a call is harmless: MCP ``idempotentHint`` /
    ``readOnlyHint`` / ``destructiveHint``, the idempotency guard's declaration, or the tool's
    description to the model (a function tool's only declaration: "Run a read-only SQL statement")."""
    if a.get(A.MCP_TOOL_READ_ONLY) is True or a.get(A.MCP_TOOL_IDEMPOTENT) is True:
        return True
    if a.get(A.MCP_TOOL_IDEMPOTENT) is False or a.get(A.MCP_TOOL_DESTRUCTIVE) is True:
        return False
    declared = a.get(A.GUARD_IDEMPOTENT)
    if isinstance(declared, bool):
        return declared
    described = foreign.first_truthy(a, foreign.TOOL_DESCRIPTION)
    if isinstance(described, str):
        if _NOT_IDEMPOTENT_RE.search(described):
            return False
        if _READ_ONLY_RE.search(described):
            return True
    return None


def observe_step(s: StepRecord, index: int) -> Observation:
    attrs = s.attributes
    error_type = s.error_type or attrs.get(A.ERROR_TYPE)
    http_status = _int(foreign.first_present(attrs, foreign.HTTP_STATUS))
    status_error = s.status_code == "ERROR"
    exc = exception_reading(s)
    if s.kind == "tool":
        a = foreign.derive_tool(attrs)
        get = a.get
        keys = get(A.TOOL_RESULT_KEYS)
        return Observation(
            index=index, step=s.step, span_id=s.span_id, kind=s.kind, name=s.name, duration_ms=s.duration_ms,
            status_error=status_error, error_type=error_type, http_status=http_status,
            tool_name=foreign.first_truthy(a, foreign.TOOL_NAME) or s.name.split(" ")[-1],
            result_length=_int(get(A.TOOL_RESULT_LENGTH)),
            result_is_json=get(A.TOOL_RESULT_IS_JSON),
            result_json_like=bool(get(A.TOOL_RESULT_JSON_LIKE, False)),
            result_empty=bool(get(A.TOOL_RESULT_EMPTY, False)),
            result_is_error=bool(get(A.TOOL_RESULT_IS_ERROR, False)),
            result_failure=str(get(A.TOOL_RESULT_FAILURE) or ""),
            result_failure_evidence=str(get(A.TOOL_RESULT_FAILURE_EVIDENCE) or ""),
            exception_failure=exc.meaning, exception_evidence=f"{exc.form} {exc.evidence}".strip(),
            idempotent=declared_idempotent(a), suppressed=bool(get(A.GUARD_SUPPRESSED, False)),
            result_markers=(_strs(get(A.TOOL_RESULT_ERROR_MARKERS))
                            or _strs(get(A.TOOL_RESULT_ERROR_MARKER))),
            result_keys=_strs(keys) if keys is not None else None,
            result_record_keys=_strs(get(A.TOOL_RESULT_RECORD_KEYS)),
            result_shape=get(A.TOOL_RESULT_SHAPE_DIGEST),
            result_key_count=_int(get(A.TOOL_RESULT_KEY_COUNT)),
            result_item_count=_int(get(A.TOOL_RESULT_ITEM_COUNT)),
            result_numeric_strings=_int(get(A.TOOL_RESULT_NUMERIC_STRINGS)),
            result_digest=get(A.TOOL_RESULT_DIGEST),
            tool_args_digest=get(A.TOOL_ARGS_DIGEST),
            echo_mismatch=_strs(get(A.TOOL_RESULT_ECHO_MISMATCH)),
            result_count_above=str(get(A.TOOL_RESULT_COUNT_ABOVE) or ""),
        )
    a = foreign.derive_llm(attrs)
    get = a.get
    done = get(A.RESPONSE_STREAM_DONE)
    gap = get(A.RESPONSE_MAX_CHUNK_GAP_MS)
    response_format = get(A.REQUEST_RESPONSE_FORMAT)
    error_code = get(A.RESPONSE_ERROR_CODE)
    markers = _strs(get(A.RESPONSE_ERROR_MARKERS)) or _strs(get(A.RESPONSE_ERROR_MARKER))
    content_failure = get(A.RESPONSE_CONTENT_FAILURE)
    if content_failure is None:  # recorded before replies were read with the vocabulary
        content_failure, content_evidence = legacy_reply_reading(markers)
    else:
        content_failure = str(content_failure)
        content_evidence = str(get(A.RESPONSE_CONTENT_FAILURE_EVIDENCE) or "")
    return Observation(
        index=index, step=s.step, span_id=s.span_id, kind=s.kind, name=s.name, duration_ms=s.duration_ms,
        status_error=status_error, error_type=error_type, http_status=http_status,
        finish_reasons=tuple(f.lower() for f in _first_strs(a, foreign.FINISH_REASONS)),
        content_length=_int(get(A.RESPONSE_CONTENT_LENGTH)),
        content_blank=bool(get(A.RESPONSE_CONTENT_BLANK, False)),
        markers=markers,
        unicode_anomaly=_float(get(A.RESPONSE_UNICODE_ANOMALY)),
        mojibake=_float(get(A.RESPONSE_MOJIBAKE)),
        content_is_json=bool(get(A.RESPONSE_IS_JSON, False)),
        tool_call_count=_int(get(A.RESPONSE_TOOL_CALL_COUNT)),
        tool_names=_strs(get(A.RESPONSE_TOOL_NAMES)),
        args_valid=get(A.RESPONSE_TOOL_ARGS_VALID),
        args_schema_valid=get(A.RESPONSE_TOOL_ARGS_SCHEMA_VALID),
        args_empty=_int(get(A.RESPONSE_TOOL_ARGS_EMPTY)) or 0,
        args_problem=str(get(A.RESPONSE_TOOL_ARGS_PROBLEM) or ""),
        args_anomaly=_float(get(A.RESPONSE_TOOL_ARGS_ANOMALY)),
        args_mojibake=_float(get(A.RESPONSE_TOOL_ARGS_MOJIBAKE)),
        args_digest=get(A.RESPONSE_TOOL_ARGS_DIGEST),
        args_strings=_int(get(A.RESPONSE_TOOL_ARGS_STRINGS)),
        args_ungrounded=_int(get(A.RESPONSE_TOOL_ARGS_UNGROUNDED)),
        response_id=get(A.GEN_AI_RESPONSE_ID),
        response_digest=get(A.RESPONSE_DIGEST),
        request_digest=get(A.REQUEST_DIGEST),
        output_tokens=_int(foreign.first_present(a, foreign.OUTPUT_TOKENS)),
        stream=bool(get(A.GEN_AI_REQUEST_STREAM, False)),
        replacement_chars=_int(get(A.RESPONSE_REPLACEMENT_CHARS)) or 0,
        json_embedded=bool(get(A.RESPONSE_JSON_EMBEDDED, False)),
        response_format=response_format if isinstance(response_format, str) else None,
        asks_json=bool(get(A.REQUEST_ASKS_JSON, False)),
        body_error=bool(get(A.RESPONSE_BODY_ERROR, False)),
        choice_count=_int(get(A.RESPONSE_CHOICE_COUNT)),
        message_null=bool(get(A.RESPONSE_MESSAGE_NULL, False)),
        refusal=bool(get(A.RESPONSE_REFUSAL, False)),
        error_code=str(error_code) if error_code is not None else None,
        max_tokens=_int(get(A.GEN_AI_REQUEST_MAX_TOKENS)),
        stream_done=done if isinstance(done, bool) else None,
        max_chunk_gap_ms=_float(gap) if isinstance(gap, int | float) else None,
        failure=str(get(A.RESPONSE_FAILURE) or ""),
        failure_evidence=str(get(A.RESPONSE_FAILURE_EVIDENCE) or ""),
        content_failure=content_failure,
        content_failure_evidence=content_evidence,
        args_cut_values=_int(get(A.RESPONSE_TOOL_ARGS_CUT_VALUES)),
        args_short_cut_values=_int(get(A.RESPONSE_TOOL_ARGS_SHORT_CUT_VALUES)),
        request_messages=_int(get(A.REQUEST_MESSAGE_COUNT)),
        exception_failure=exc.meaning, exception_evidence=f"{exc.form} {exc.evidence}".strip(),
    )
