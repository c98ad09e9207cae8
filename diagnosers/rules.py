"""Rule-based diagnosis: ordered, documented checks over what the agent observed, then root cause by effect.

Each rule looks at one step (and, where it needs a norm, at other steps of the same episode) and
either says nothing or names a (type, target) with evidence and a confidence. What a failure
*means* comes from the published error vocabulary, read at span time into content-free
attributes (``agentchaos_otel.vocabulary``): an HTTP status, a gRPC or vendor code, an exception
class, a finish reason, an error member of a tool result. Rules never match wordings of their own.

*Strong* findings are explicit (a status, a code, an error report, a length stop, garbled text, a
cut argument, an answer unlike what its tool returns in nearly every result across the store);
*weak* ones are comparisons that normal variation also produces (keys absent compared with a few
other results, a value mentioned nowhere, a slow call) and never name a root cause alone. The
root cause is the earliest strong finding whose fault the agent did not absorb: a failure
followed by a successful retry of the same call (an SDK retry, the same tool call again) is not
a root cause, unless the retried call was not idempotent and may have taken effect twice.
A call the model got wrong by itself (unknown tool, missing or wrong parameters, arguments that
are not JSON although not cut, prose where JSON was asked) is its own slip, not a fault, and so
is a tool's refusal of such a call. A successful episode has no root cause.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

from agentchaos_otel import vocabulary
from agentchaos_otel.records import EpisodeTrace
from diagnosers.base import Diagnosis, none_found
from diagnosers.key_style import key_style, odd_style_keys
from diagnosers.norms import RARE, ToolNorms
from diagnosers.observe import Observation
from diagnosers.taxonomy import MEANING_LABEL_LLM, MEANING_LABEL_TOOL
from diagnosers.view import Effect, EpisodeView, named_keys

# Thresholds, named so the report can print them. None is a clock: latency is a ratio to the
# episode's own calls.
MOJIBAKE_MIN = 0.0  # any UTF-8-read-as-Latin-1 sequence: healthy text never contains them
CONTENT_ANOMALY_MIN = 0.05  # share of symbol/control characters in reply text
ARGS_ANOMALY_MIN = 0.02  # argument JSON normally has no symbol characters at all
LATENCY_RATIO = 10.0  # times the median of the episode's other LLM calls
LATENCY_OVER_MAX = 3.0  # ... and times the slowest of them
LATENCY_MIN_CALLS = 1  # other calls needed before a norm exists
UNGROUNDED_MAX_STEPS = 1  # more steps with invented argument values than this is the episode's habit
KEYS_LOST_SHARE = 0.5  # a result that lost this share of its tool's usual keys ...
KEYS_SUPPORT = 2  # ... that this many earlier results agreed on
NUMBERS_TURNED = 2  # numbers an answer delivers as strings beyond its tool's other answers: a conversion
# An answer unlike its tool's store-wide norm (diagnosers/norms.py): strong, below an explicit report.
NORM_CONFIDENCE = {"key_rename": 0.6, "truncated": 0.55}

# The model's own slips (docs/taxonomy.md, "Format slips"): no fault of the API or the tools.
SLIP_PROBLEMS = frozenset({"unknown_key", "missing_required", "wrong_type", "enum", "empty_value",
                           "invalid_json", "unknown_tool"})
# Failures a call the model got wrong cannot explain (the other side's own state or capacity).
_TRANSIENT = frozenset({"rate_limit", "timeout", "connection", "auth"})
_CONF_TOOL = {"rate_limit": 0.9, "timeout": 0.9, "connection": 0.9, "auth": 0.9, "not_found": 0.8,
              "invalid_request": 0.8, "truncated": 0.8, "error": 0.75}


@dataclass(frozen=True)
class Finding:
    fault_type: str
    target: str
    confidence: float
    evidence: str
    strong: bool = True
    blame_index: int | None = None  # the step the fault is attributed to, when not this one


@dataclass(frozen=True)
class Rule:
    name: str
    kind: str  # "llm" | "tool"
    doc: str
    check: Callable[[Observation, EpisodeView], Finding | None]


def _where(o: Observation) -> str:
    return f"step {o.step} `{o.name}`"


def _text_target(o: Observation) -> str:
    return "stream" if o.stream else "content"


def _cite(evidence: str) -> str:
    return f" [{evidence}]" if evidence else ""


def reply_error_type(o: Observation) -> str | None:
    """The label a reply that is itself an error report takes: its meaning, or ``schema`` for an
    error or policy object delivered as the message content (docs/taxonomy.md)."""
    if not o.content_failure or o.content_failure == "partial":
        return None
    if o.content_is_json:
        return "schema"
    return MEANING_LABEL_LLM.get(o.content_failure, "error")


def http_label(o: Observation) -> str:
    """The label of a failed HTTP status of the model API (docs/taxonomy.md): what the error body
    says when that is a rate limit or a content filter, else 429 rate_limit, 408/504 timeout,
    other 5xx http_error, and a 4xx by its published meaning (auth, not_found, invalid_request),
    refined by the body's."""
    status = o.http_status or 0
    body = o.failure
    if body in ("rate_limit", "content_filter"):
        return body
    if status == 429:
        return "rate_limit"
    if status in (408, 504):
        return "timeout"
    if status >= 500:
        return "http_error"
    hit = vocabulary.http_status_meaning(status)
    meaning = hit.meaning if hit is not None else "invalid_request"
    # The body refines a status, but the most specific meaning wins: a status that says over quota
    # (402 where credits ran out) stays a rate limit, and a 403 stays an authorization failure,
    # whatever catch-all type the body names (``invalid_request_error``).
    if (body in ("auth", "not_found", "invalid_request", "timeout")
            and vocabulary.MEANINGS.index(body) <= vocabulary.MEANINGS.index(meaning)):
        meaning = body
    return MEANING_LABEL_LLM.get(meaning, "invalid_request")


# --- LLM step rules ---------------------------------------------------------------------------

def _transport(o: Observation, v: EpisodeView) -> Finding | None:
    """The call failed at the HTTP layer: an error status (read as docs/taxonomy.md says: 429
    rate_limit, 401/403 auth, 404 not_found, 400/422 invalid_request, 408/504 timeout, other 5xx
    http_error, with what the error body says about rate limits and content filters), or an
    exception that reached the client, read for its meaning (class hierarchy, errno, message)."""
    failed_status = o.http_status is not None and o.http_status >= 400
    if failed_status:
        label = http_label(o)
        return Finding(label, "http", 0.95 if label == "rate_limit" else 0.9,
                       f"{_where(o)}: HTTP {o.http_status} error response" + (
                           f" ({o.error_code})" if o.error_code else "") + _cite(o.failure_evidence))
    if not (o.status_error and o.error_type):
        return None
    if o.stream and o.http_status is not None and o.http_status < 400:
        # the stream had begun: an answer that ended before its end, whatever ended it (a reset, a
        # read timeout during a stall)
        return Finding("stream_cut", "stream", 0.85, f"{_where(o)}: the stream broke off ({o.error_type})"
                       + _cite(o.exception_evidence))
    meaning = o.exception_failure
    if meaning and meaning != vocabulary.GENERIC:
        return Finding(MEANING_LABEL_LLM.get(meaning, "error"), "http", 0.9,
                       f"{_where(o)}: {o.error_type} raised" + _cite(o.exception_evidence))
    if o.content_length in (None, 0) and not o.tool_call_count:
        return Finding("error", "http", 0.5, f"{_where(o)}: call failed with {o.error_type}", strong=False)
    return None


def _no_answer(o: Observation, v: EpisodeView) -> Finding | None:
    """A 2xx body without a usable answer: an error object where the completion belongs (read for
    its meaning; some gateways answer 200 with ``{"error": ...}``), an error inside the choice, a
    safety block, no ``choices`` or an empty list, a null message."""
    if o.body_error or o.failure:
        label = MEANING_LABEL_LLM.get(o.failure, "error") if o.failure else "error"
        what = "body is an error object" if o.body_error else "the answer reports a failure"
        return Finding(label, _text_target(o), 0.85, f"{_where(o)}: HTTP {o.http_status or 200} {what}"
                       + (f" ({o.error_code})" if o.error_code else "") + _cite(o.failure_evidence))
    if o.choice_count is not None and o.choice_count <= 0:
        what = "no `choices`" if o.choice_count < 0 else "empty `choices`"
        return Finding("empty", _text_target(o), 0.85, f"{_where(o)}: response with {what}")
    if o.message_null:
        return Finding("empty", _text_target(o), 0.85, f"{_where(o)}: choices[0].message is null")
    return None


def _stream_cut(o: Observation, v: EpisodeView) -> Finding | None:
    """A streamed reply that ended without [DONE] or without any finish_reason."""
    if not o.stream:
        return None
    if o.stream_done is False:
        return Finding("stream_cut", "stream", 0.9, f"{_where(o)}: stream ended without [DONE]")
    if not o.finish_reasons and o.content_length is not None:
        return Finding("stream_cut", "stream", 0.85, f"{_where(o)}: stream ended without a finish_reason")
    return None



def _finish_meanings(o: Observation) -> list[tuple[str, str]]:
    out = []
    for f in o.finish_reasons:
        hit = vocabulary.finish_reason_meaning(f)
        if hit is not None:
            out.append((hit.meaning, hit.evidence))
    return out


def _content_filter(o: Observation, v: EpisodeView) -> Finding | None:
    """A finish reason that says a safety filter or guardrail stopped the answer (``content_filter``,
    ``SAFETY``, ``RECITATION``, ``guardrail_intervened``, ``refusal``, ...), or a refusal in place of
    content; a finish reason ``error`` (the provider failed mid-answer)."""
    for meaning, evidence in _finish_meanings(o):
        if meaning == "content_filter":
            return Finding("content_filter", "content", 0.95, f"{_where(o)}: the answer was blocked"
                           + _cite(evidence))
        if meaning == "error":
            return Finding("error", "content", 0.85, f"{_where(o)}: the answer stopped with an error"
                           + _cite(evidence))
    if o.refusal:
        return Finding("content_filter", "content", 0.85, f"{_where(o)}: the model refused (message.refusal)")
    return None


def _error_text(o: Observation, v: EpisodeView) -> Finding | None:
    """Reply text that is an error report (a status line, an error page, a bracketed tag, an
    exception, an error text at its start) takes the label of what it reports; an error or policy
    object delivered as the message content is ``schema``."""
    ftype = reply_error_type(o)
    if ftype is None:
        return None
    what = "an error object as the message content" if ftype == "schema" else "an error report"
    return Finding(ftype, _text_target(o), 0.85, f"{_where(o)}: reply text is {what}"
                   + _cite(o.content_failure_evidence))


def _promised_tool_calls(o: Observation, v: EpisodeView) -> Finding | None:
    """finish_reason tool_calls but no tool call in the message: the calls were lost."""
    if "tool_calls" in o.finish_reasons and o.tool_call_count == 0:
        return Finding("empty", "tool_calls", 0.85,
                       f"{_where(o)}: finish_reason=tool_calls with no tool call")
    return None


def _empty(o: Observation, v: EpisodeView) -> Finding | None:
    """Neither text nor tool calls (or zero output tokens when the trace has no content signals)."""
    no_calls = not o.tool_call_count
    if o.content_blank and no_calls:
        return Finding("empty", _text_target(o), 0.85, f"{_where(o)}: reply is whitespace only, no tool call")
    if o.content_length == 0 and no_calls:
        return Finding("empty", _text_target(o), 0.9, f"{_where(o)}: empty reply, no text and no tool call")
    if o.content_length is None and o.output_tokens == 0 and no_calls:
        return Finding("empty", _text_target(o), 0.7, f"{_where(o)}: 0 output tokens")
    return None


def _length(o: Observation, v: EpisodeView) -> Finding | None:
    """A finish reason that says generation stopped at a limit (``length``, ``max_tokens``,
    ``MAX_TOKENS``, ``model_length``, ...), or output tokens reaching the request's max_tokens
    whatever the finish reason says (some servers report ``stop``): the reply was cut."""
    target = "tool_calls" if o.tool_call_count else _text_target(o)
    for meaning, evidence in _finish_meanings(o):
        if meaning == "length":
            return Finding("truncate", target, 0.9, f"{_where(o)}: generation stopped at a limit, reply cut at "
                           f"{o.content_length} chars" + _cite(evidence))
    if o.max_tokens and o.output_tokens is not None and o.output_tokens >= o.max_tokens:
        return Finding("truncate", target, 0.8, f"{_where(o)}: {o.output_tokens} output tokens = max_tokens "
                       f"{o.max_tokens} (finish_reason {', '.join(o.finish_reasons) or 'none'})")
    return None


def _corrupt_text(o: Observation, v: EpisodeView) -> Finding | None:
    """Mojibake or a high share of symbol/control characters in the reply text."""
    if o.replacement_chars:
        return Finding("corrupt", _text_target(o), 0.8, f"{_where(o)}: {o.replacement_chars} replacement "
                       "character(s) U+FFFD in reply")
    if o.mojibake > MOJIBAKE_MIN:
        return Finding("corrupt", _text_target(o), 0.85, f"{_where(o)}: mojibake in reply ({o.mojibake:.3f})")
    if o.unicode_anomaly >= CONTENT_ANOMALY_MIN:
        return Finding("corrupt", _text_target(o), 0.8,
                       f"{_where(o)}: {o.unicode_anomaly:.0%} of reply characters are symbols/control")
    return None


def args_emptied(o: Observation) -> bool:
    """Tool-call arguments emptied to ``{}`` (or to nothing) for a tool that requires parameters:
    the model API's tool call came back with its arguments gone (docs/taxonomy.md, "Format slips"),
    which is not the model leaving one parameter out of a call it otherwise made."""
    return (bool(o.tool_call_count) and o.args_empty > 0 and o.args_schema_valid is False
            and o.args_problem == "missing_required")


def args_slip(o: Observation) -> str:
    """The model's own slip in its tool call (docs/taxonomy.md), or '': arguments not JSON although
    not cut, an unknown tool, a declared parameter missing, wrong or out of its enum (arguments
    emptied altogether are not a slip: ``args_emptied``)."""
    if not o.tool_call_count or (o.args_cut_values or 0) > 0 or (o.args_short_cut_values or 0) > 0:
        return ""
    if args_emptied(o):
        return ""
    if o.args_valid is False and o.args_problem != "cut":
        return "arguments that are not valid JSON"
    if o.args_schema_valid is False and o.args_problem in SLIP_PROBLEMS:
        return {"unknown_tool": "a call of a tool that does not exist"}.get(
            o.args_problem, f"a call with a parameter wrong or missing ({o.args_problem})")
    return ""


def _args(o: Observation, v: EpisodeView) -> Finding | None:
    """Tool-call arguments damaged on the way: cut part-way (open string or brackets, or values
    the conversation holds only as the start of a longer word), garbled, replaced by arguments
    none of whose names the tool declares (``schema``), or emptied to ``{}`` for a tool that
    requires parameters (``error``, AgentChaos's ``tool_error``). A call the model got wrong by
    itself (a declared parameter wrong or left out of a call it otherwise made) is its slip, not a
    fault (``args_slip``)."""
    if not o.tool_call_count:
        return None
    if o.args_valid is False and o.args_problem == "cut":
        return Finding("truncate", "tool_calls", 0.85, f"{_where(o)}: tool arguments end part-way (open "
                       "string or brackets)")
    if o.args_anomaly >= ARGS_ANOMALY_MIN or o.args_mojibake > MOJIBAKE_MIN:
        what = "UTF-8 read as Latin-1" if o.args_mojibake > MOJIBAKE_MIN else (
            f"{o.args_anomaly:.0%} of the characters symbols")
        return Finding("corrupt", "tool_calls", 0.85, f"{_where(o)}: tool arguments garbled ({what})")
    if o.args_cut_values:
        return Finding("truncate", "tool_calls", 0.75, f"{_where(o)}: {o.args_cut_values} argument value(s) "
                       "the conversation holds only as the start of a longer word (cut short)")
    if o.args_short_cut_values and any(c.result_is_error or c.status_error for c in v.next_tool_results(o)):
        return Finding("truncate", "tool_calls", 0.7, f"{_where(o)}: a one- or two-letter argument value that "
                       "only starts longer words of the conversation, and the tool refused the call")
    if o.args_schema_valid is False and o.args_problem == "no_declared_key":
        return Finding("schema", "tool_calls", 0.8, f"{_where(o)}: tool arguments name none of the "
                       "tool's declared parameters")
    if args_emptied(o):
        return Finding("error", "tool_calls", 0.8, f"{_where(o)}: tool-call arguments emptied to {{}} for a "
                       "tool that requires parameters")
    return None


def _ungrounded_args(o: Observation, v: EpisodeView) -> Finding | None:
    """A tool argument names something (a city, a person, an id) that appears nowhere in the
    conversation: the call is about an entity nobody asked for. Weak, because models also fill in
    values of their own; weaker still when the episode does so at several steps (its habit)."""
    if not o.tool_call_count or not o.args_ungrounded or not o.args_strings:
        return None
    if o.args_valid is False or o.args_anomaly >= ARGS_ANOMALY_MIN:
        return None  # damaged arguments are a different fault and are reported by tool_arguments
    habitual = v.ungrounded_steps() > UNGROUNDED_MAX_STEPS
    # After a failed call agents improvise (another spelling, a guessed id): the failure explains it.
    after_failure = any(c.kind == "tool" and (c.result_is_error or c.status_error) for c in v.obs[:o.index])
    share = o.args_ungrounded / o.args_strings
    # Always below the abstention threshold: on our own corpus it blamed clean episodes that failed
    # for other reasons; alone it never names a root cause.
    conf = 0.25 if habitual or after_failure else (0.45 if share >= 0.5 else 0.4)
    return Finding("wrong_value", "tool_calls", conf,
                   f"{_where(o)}: {o.args_ungrounded} of {o.args_strings} string argument(s) mentioned "
                   "nowhere in the conversation", strong=False)


def _replayed(o: Observation, v: EpisodeView) -> Finding | None:
    """The same response id as an earlier reply: a cached/replayed response."""
    if v.response_seen_before(o):
        return Finding("stale", "content", 0.9, f"{_where(o)}: response id {o.response_id} seen before")
    prev = v.previous_llm(o)
    # Without a response id only a repeated *text* reply counts: agents legitimately repeat a tool call.
    if (prev is not None and not o.tool_call_count and o.content_length
            and o.response_digest and o.response_digest == prev.response_digest
            and o.request_digest and prev.request_digest and o.request_digest != prev.request_digest
            and not any(c.result_is_error for c in v.obs[prev.index + 1:o.index])):
        return Finding("stale", "content", 0.3,
                       f"{_where(o)}: identical reply to step {prev.step} although the request changed",
                       strong=False)
    return None


def _latency(o: Observation, v: EpisodeView) -> Finding | None:
    """A call far slower than the episode's own other calls (``LATENCY_RATIO`` times their median
    and ``LATENCY_OVER_MAX`` times the slowest, with at least ``LATENCY_MIN_CALLS`` of them); on the
    stream when most of the wait was one stall between chunks. Never a clock: a loaded machine
    slows every call, and one call of many can stall. So a slow call is weak evidence unless the
    agent abandoned it: the episode ended there with the tool calls it asked for never run, or with
    the agent's own error saying a deadline passed (the episode's recorded error)."""
    ratio, over_max, n = v.latency_ratio(o)
    if n < LATENCY_MIN_CALLS or ratio < LATENCY_RATIO or over_max < LATENCY_OVER_MAX:
        return None
    # Abandoned: the tool calls it asked for never ran, or the agent ended the episode right after
    # it with an error that says a deadline passed.
    ended = v.effect(o).followed_by == "end" and (bool(o.tool_call_count) or v.episode_failure == "timeout")
    stalled = o.max_chunk_gap_ms is not None and o.max_chunk_gap_ms >= 0.5 * o.duration_ms
    return Finding("latency", "stream" if stalled else "http", 0.7 if ended else 0.35,
                   f"{_where(o)}: {ratio:.0f}x the median of the episode's other calls"
                   + (", most of it one stall between stream chunks" if stalled else "")
                   + (", and the agent gave up there" if ended else ""), strong=ended)


def _empty_args_weak(o: Observation, v: EpisodeView) -> Finding | None:
    """Empty arguments where the schema is unknown: suspicious but also legitimate for some tools."""
    if o.tool_call_count and o.args_empty and o.args_schema_valid is None:
        return Finding("error", "tool_calls", 0.35, f"{_where(o)}: tool called with empty arguments",
                       strong=False)
    return None


# --- Tool step rules --------------------------------------------------------------------------

def _slip_behind(o: Observation, v: EpisodeView) -> str:
    """The model's slip in the call a tool refused, if the refusal is explained by it."""
    prev = v.previous_llm(o)
    if prev is None:
        return ""
    slip = args_slip(prev)
    if slip:
        return f"the model's own call at step {prev.step} ({slip})"
    # A value the conversation never mentioned explains a "not found", unless the episode's calls
    # carry such values at many steps (its habit, or a conversation the trace cannot see whole).
    if prev.args_ungrounded and o.result_failure == "not_found" and v.ungrounded_steps() <= UNGROUNDED_MAX_STEPS:
        return f"the model's own call at step {prev.step} (a value the conversation never mentioned)"
    return ""


def _tool_failure(o: Observation, v: EpisodeView) -> Finding | None:
    """The tool reported a failure, in any shape (an error member, a status object, a flag, an
    XML fault, an error text, a traceback), or raised: labelled by what it reports (rate_limit,
    timeout, connection, auth, not_found, invalid_request, or ``error`` when it does not say).
    The failure of a call the model got wrong by itself (a refusal, an exception in the tool) is
    its slip, unless it is about the other side's capacity or reach (a rate limit, a timeout, a
    lost connection, an authorization refused)."""
    if not (o.result_is_error or o.status_error):
        return None
    meaning = o.result_failure if o.result_is_error and o.result_failure else (
        o.exception_failure or o.result_failure or vocabulary.GENERIC)
    label = MEANING_LABEL_TOOL.get(meaning, "error")
    if label not in _TRANSIENT and _slip_behind(o, v):
        return None
    evidence = o.result_failure_evidence if o.result_is_error else o.exception_evidence
    what = f"raised {o.error_type}" if o.status_error and not o.result_is_error else "reported a failure"
    return Finding(label, "tool_result", _CONF_TOOL.get(label, 0.75), f"{_where(o)}: tool {what}"
                   + _cite(evidence))


def _tool_partial(o: Observation, v: EpisodeView) -> Finding | None:
    """A result that flags itself partial or incomplete (``partial``, ``timed_out`` with data,
    ``incomplete``, Kubernetes ``remainingItemCount``, a ``total`` above the items it holds with no
    way offered to the rest, a trailer line saying the output was cut): a truncated result, by the
    tool's own word."""
    if o.result_failure == "partial" and not o.result_is_error:
        return Finding("truncated", "tool_result", 0.8, f"{_where(o)}: the result says it is partial"
                       + _cite(o.result_failure_evidence))
    return None


def _tool_empty(o: Observation, v: EpisodeView) -> Finding | None:
    """An empty result where data was expected: ``{}`` or ``""`` (nothing at all), strong unless the
    same tool answers that way elsewhere; ``[]`` or ``null`` only when the same tool returned
    data elsewhere in the episode (no hits and no return value are ordinary answers), or, for
    ``null``, when the tool is a read (its name's verb is a safe method: a read returns what it
    read) and the agent answered on it without another call; any of them when the tool almost
    never answers empty across the store (``diagnosers/norms.py``)."""
    if not o.result_empty:
        return None
    ref = v.tool_reference(o)
    if o.result_null or v.is_empty_list(o):
        strong = ref is not None and ref.nonempty_results > 0
        if not strong and o.result_null and ref is None and vocabulary.method_kind(o.tool_name) == "safe":
            strong = v.effect(o).followed_by in ("answer", "end")
    else:
        strong = ref is None or ref.nonempty_results > 0
    seen = v.norms.rarely_empty(o) if v.norms is not None else 0
    if seen and not strong:
        return Finding("empty", "tool_result", 0.7, f"{_where(o)}: tool returned an empty result, which its "
                       f"answers are in at most {RARE:.0%} of {seen} across the store")
    return Finding("empty", "tool_result", 0.8 if strong else 0.3,
                   f"{_where(o)}: tool returned an empty result", strong=strong)


def _tool_malformed(o: Observation, v: EpisodeView) -> Finding | None:
    """A result that starts like JSON and does not parse, and is not an error report
    (``malformed_json``); a plain text, not an error report either, where the tool answers in JSON
    elsewhere (a generic tool ``error``: a text that is an error is never "invalid JSON")."""
    if o.result_is_json is not False or o.result_empty or o.result_is_error:
        return None
    if o.result_failure == "partial":  # the text says itself that it was cut: partial, not broken
        return None
    if o.result_json_like:
        return Finding("malformed_json", "tool_result", 0.85,
                       f"{_where(o)}: tool result is not valid JSON ({o.result_length} chars)")
    ref = v.tool_reference(o)
    if ref is not None and ref.json_results > 0 and ref.text_results == 0:
        return Finding("error", "tool_result", 0.6, f"{_where(o)}: text where the tool answers in JSON "
                       "elsewhere")
    return None


def _tool_keys(o: Observation, v: EpisodeView) -> Finding | None:
    """Key set or value types changed against the other results of the same tool."""
    if not o.result_is_json or o.result_is_error or o.result_keys is None:
        return None
    ref = v.tool_reference(o)
    if ref is None or ref.keys is None:
        # A first answer with numbers as strings: weak, and nothing when the tool writes them so in
        # half its answers across the store (zip codes, Amadeus's prices).
        if o.result_numeric_strings and not _strings_usual(o, v):
            return Finding("key_rename", "tool_result", 0.3,
                           f"{_where(o)}: numbers delivered as strings", strong=False)
        return None
    mine, theirs = set(o.result_keys), set(ref.keys)
    if mine and mine < theirs:
        lost = theirs - mine - _optional(o, v, theirs - mine)
        if not lost:
            return None
        # Optional members come and go in healthy answers: only a result that lost a large share
        # of what several earlier answers agreed on is strong.
        # Later answers count as the norm too when several agree: then this first one is the odd one.
        strong = len(lost) >= KEYS_LOST_SHARE * len(theirs) and ref.support >= KEYS_SUPPORT
        return Finding("truncated", "tool_result", 0.6 if strong else 0.35, f"{_where(o)}: result lost keys "
                       f"({', '.join(sorted(lost)[:4])}) vs other results of `{o.tool_name}`", strong=strong)
    if mine != theirs and (theirs - mine) and (mine - theirs):
        if (mine - theirs) <= _familiar(o, v):
            return None  # keys the tool returns in half its answers across the store: its own variation
        mine_num, ref_num = o.result_numeric_strings or 0, ref.numeric_strings or 0
        mine_odd = odd_style_keys(o.result_keys, Counter(key_style(k) for k in ref.keys))
        ref_odd = odd_style_keys(ref.keys, Counter(key_style(k) for k in o.result_keys))
        looks_renamed = bool(mine_odd) or mine_num > ref_num
        # A key of this answer that spells one of the norm's (amount_due / amount, remittanceEmail /
        # remittance_email), where several later answers agree on the norm: this one was renamed.
        paired = ref.support >= KEYS_SUPPORT and any(
            a and b and (a in b or b in a)
            for a in map(_norm_key, mine - theirs) for b in map(_norm_key, theirs - mine))
        if ref.from_later and not (looks_renamed or paired):
            return None  # the later calls are the odd ones; each is judged against this one
        new = ", ".join(sorted(mine - theirs)[:4])
        if not (looks_renamed or paired) and (ref_odd or ref_num > mine_num):  # the norm looks renamed
            return Finding("key_rename", "tool_result", 0.3, f"{_where(o)}: keys differ ({new}) from an "
                           f"earlier result of `{o.tool_name}`", strong=False)
        return Finding("key_rename", "tool_result", 0.8, f"{_where(o)}: unfamiliar keys ({new}) "
                       f"vs other results of `{o.tool_name}`")
    gained = (o.result_numeric_strings or 0) - (ref.numeric_strings or 0)
    if gained > 0 and o.result_shape != ref.shape:
        # One more digit string is one record's own data (a phone number, a postal code, an id
        # another record lacks); a conversion of the answer's numbers changes several at once.
        strong = gained >= NUMBERS_TURNED
        return Finding("key_rename", "tool_result", 0.7 if strong else 0.3, f"{_where(o)}: numbers turned into "
                       f"strings vs other results of `{o.tool_name}`", strong=strong)
    if (ref.key_count and o.result_key_count is not None and o.result_key_count < ref.key_count
            and o.result_shape != ref.shape):
        return Finding("truncated", "tool_result", 0.35,
                       f"{_where(o)}: nested keys lost ({o.result_key_count} vs {ref.key_count})",
                       strong=False)
    if mine and mine > theirs:
        return Finding("key_rename", "tool_result", 0.3, f"{_where(o)}: extra keys vs other results",
                       strong=False)
    return None


def _familiar(o: Observation, v: EpisodeView) -> frozenset[str]:
    """Keys of o's answer its tool returns in half its answers across the store, when that is known."""
    return v.norms.familiar(o) if v.norms is not None else frozenset()


def _strings_usual(o: Observation, v: EpisodeView) -> bool:
    """Whether o's tool delivers numbers as strings in half its answers across the store."""
    return v.norms is not None and v.norms.writes_numbers_as_strings(o)


def _optional(o: Observation, v: EpisodeView, keys: set[str]) -> frozenset[str]:
    """Of keys missing from o's answer, those its tool leaves out often across the store."""
    return v.norms.optional(o, keys) if v.norms is not None else frozenset()


def _tool_key_style(o: Observation, v: EpisodeView) -> Finding | None:
    """Keys in a naming convention (UPPER_CASE, camelCase) that no other result of the episode
    uses: an API keeps one convention, so a result that breaks it was rewritten on the way. An
    agent's tools are often different APIs, though: keys the tool itself returns in half its
    answers across the store are its own convention, not a rewrite."""
    keys = named_keys(o)
    if not o.result_is_json or o.result_is_error or not keys:
        return None
    norm, _ = v.style_norm(o)
    seen = sum(norm.values())
    if seen < 1:
        return None
    own = _familiar(o, v)
    odd = [k for k in odd_style_keys(keys, norm) if k not in own]
    if seen < 3:  # a thin norm: only conventions that are rare in any API (SHOUTING, vowel-free) count
        odd = [k for k in odd if key_style(k) in ("upper", "abbrev")]
    if not odd:
        return None
    rare = [k for k in odd if key_style(k) != "camel"]  # camelCase is many APIs' own convention
    # Numbers turned into strings alongside an odd key: the other half of a rename.
    numbers = bool(o.result_numeric_strings) and v.numeric_strings_before(o) == 0
    # Shares are taken per level: the result's own keys, and its records' keys.
    levels = [g for g in (o.result_keys or (), o.result_record_keys) if g]
    strong = numbers or any(
        (len(odd_g := [k for k in g if k in odd]) >= 2 and len(odd_g) >= 0.3 * len(g))
        or (seen >= 3 and sum(k in rare for k in g) >= 0.5 * len(g)) for g in levels)
    return Finding("key_rename", "tool_result", 0.7 if strong else 0.35,
                   f"{_where(o)}: key naming ({', '.join(odd[:3])}) unlike every other result in the episode",
                   strong=strong)


def _norm_key(key: str) -> str:
    return "".join(c for c in key.lower() if c.isalnum())


def _tool_envelope(o: Observation, v: EpisodeView) -> Finding | None:
    """A key every earlier result of every tool carried (the API's envelope) is missing: present
    under another spelling means renamed, absent altogether means the result was cut."""
    if not o.result_is_json or o.result_is_error or not o.result_keys:
        return None
    missing = v.shared_keys(o) - set(o.result_keys)
    missing -= _optional(o, v, missing)
    if not missing:
        return None
    norms = [_norm_key(k) for k in o.result_keys]
    renamed = [m for m in missing if _norm_key(m) and any(_norm_key(m) in n for n in norms)]
    if renamed:
        return Finding("key_rename", "tool_result", 0.65, f"{_where(o)}: shared key "
                       f"`{sorted(renamed)[0]}` appears under another spelling")
    # A key the tool's other answers lack too is simply not part of this tool's answer.
    others = [c for c in v.calls_of(o) if c is not o and v.is_clean(c) and c.result_keys is not None]
    missing = {m for m in missing if not any(m not in (c.result_keys or ()) for c in others)}
    if not missing:
        return None
    # Below a rejected call (0.3): a key missing from a first answer is the less direct sign.
    return Finding("truncated", "tool_result", 0.28, f"{_where(o)}: shared key `{sorted(missing)[0]}` "
                   "missing from the result", strong=False)


def _tool_store_norm(o: Observation, v: EpisodeView) -> Finding | None:
    """The answer breaks what its tool returns in nearly every clean result across the store
    (``diagnosers/norms.py``): usual keys gone and keys the tool almost never returns in their
    place (renamed), or half the usual keys gone (cut). The store's many answers are the norm a
    first answer lacks inside its episode; an optional member is never usual, so leaving it out
    is no deviation."""
    d = v.norms.deviation(o) if v.norms is not None else None
    if d is None:
        return None
    return Finding(d.fault_type, "tool_result", NORM_CONFIDENCE[d.fault_type], f"{_where(o)}: {d.describe()}")


def _tool_echo(o: Observation, v: EpisodeView) -> Finding | None:
    """The result echoes an identifier or date with another value than the call asked for: the
    answer is about a neighbouring entity, values kept their types (a wrong value)."""
    if o.echo_mismatch and not o.result_is_error:
        return Finding("wrong_value", "tool_result", 0.6, f"{_where(o)}: result echoes "
                       f"`{o.echo_mismatch[0]}` with a different value than requested")
    return None


def _tool_inconsistent(o: Observation, v: EpisodeView) -> Finding | None:
    """The same call with the same arguments returned different values of the same shape."""
    prev = v.same_call_earlier(o)
    if (prev is not None and o.result_is_json and not o.result_is_error
            and prev.result_shape == o.result_shape and prev.result_digest != o.result_digest):
        return Finding("wrong_value", "tool_result", 0.25,
                       f"{_where(o)}: same call as step {prev.step} returned different values", strong=False)
    return None


RULES: tuple[Rule, ...] = (
    Rule("transport_error", "llm", _transport.__doc__ or "", _transport),
    Rule("no_answer_in_body", "llm", _no_answer.__doc__ or "", _no_answer),
    Rule("stream_cut", "llm", _stream_cut.__doc__ or "", _stream_cut),
    Rule("finish_content_filter", "llm", _content_filter.__doc__ or "", _content_filter),
    Rule("error_text", "llm", _error_text.__doc__ or "", _error_text),
    Rule("promised_tool_calls", "llm", _promised_tool_calls.__doc__ or "", _promised_tool_calls),
    Rule("empty_reply", "llm", _empty.__doc__ or "", _empty),
    Rule("finish_length", "llm", _length.__doc__ or "", _length),
    Rule("corrupt_text", "llm", _corrupt_text.__doc__ or "", _corrupt_text),
    Rule("tool_arguments", "llm", _args.__doc__ or "", _args),
    Rule("ungrounded_arguments", "llm", _ungrounded_args.__doc__ or "", _ungrounded_args),
    Rule("replayed_response", "llm", _replayed.__doc__ or "", _replayed),
    Rule("latency_outlier", "llm", _latency.__doc__ or "", _latency),
    Rule("empty_arguments", "llm", _empty_args_weak.__doc__ or "", _empty_args_weak),
    Rule("tool_failure", "tool", _tool_failure.__doc__ or "", _tool_failure),
    Rule("tool_partial_result", "tool", _tool_partial.__doc__ or "", _tool_partial),
    Rule("tool_empty_result", "tool", _tool_empty.__doc__ or "", _tool_empty),
    Rule("tool_malformed_json", "tool", _tool_malformed.__doc__ or "", _tool_malformed),
    Rule("tool_key_style", "tool", _tool_key_style.__doc__ or "", _tool_key_style),
    Rule("tool_key_change", "tool", _tool_keys.__doc__ or "", _tool_keys),
    Rule("tool_envelope_keys", "tool", _tool_envelope.__doc__ or "", _tool_envelope),
    Rule("tool_store_norm", "tool", _tool_store_norm.__doc__ or "", _tool_store_norm),
    Rule("tool_echo_mismatch", "tool", _tool_echo.__doc__ or "", _tool_echo),
    Rule("tool_inconsistent_values", "tool", _tool_inconsistent.__doc__ or "", _tool_inconsistent),
)


@dataclass(frozen=True)
class StepFinding:
    index: int  # the step the fault is attributed to
    rule: str
    finding: Finding


def step_findings(view: EpisodeView, rules: tuple[Rule, ...] = RULES) -> list[StepFinding]:
    """Per step, the first rule with a strong finding, else the first with a weak one; step order."""
    out: list[StepFinding] = []
    by_kind: dict[str, list[Rule]] = {}
    for rule in rules:
        by_kind.setdefault(rule.kind, []).append(rule)
    for o in view.obs:
        weak: StepFinding | None = None
        for rule in by_kind.get(o.kind, ()):
            f = rule.check(o, view)
            if f is None:
                continue
            found = StepFinding(f.blame_index if f.blame_index is not None else o.index, rule.name, f)
            if f.strong:
                out.append(found)
                weak = None
                break
            weak = weak or found  # a later rule may still see something strong at this step
        if weak is not None:
            out.append(weak)
    return out


ABSORBED_CONFIDENCE = 0.3  # an absorbed fault alone: below any sensible abstention threshold


def _slips(view: EpisodeView) -> list[str]:
    return [f"step {o.step}: {s}" for o in view.obs if o.kind == "llm" and (s := args_slip(o))]


class RuleDiagnoser:
    """Root cause by effect: the earliest strong finding the agent did not absorb; a successful
    episode has none; weak and absorbed findings keep a confidence below the abstention threshold,
    so alone they name no root cause but still show in the evidence (and the reliability table)."""

    name = "rule"

    def __init__(self, rules: tuple[Rule, ...] = RULES, norms: ToolNorms | None = None):
        self.rules = rules
        self.norms = norms  # the store's per-tool answer norms; without them that rule is silent

    def diagnose(self, episode: EpisodeTrace) -> Diagnosis:
        view = EpisodeView(episode, self.norms)
        found = step_findings(view, self.rules)
        if episode.success is True:
            seen = "; ".join(f.finding.evidence for f in found[:3])
            return none_found(episode, self.name, "the episode succeeded: no root cause"
                              + (f" (met on the way: {seen})" if seen else ""))
        candidates: list[tuple[StepFinding, float, str]] = []  # (finding, confidence, effect note)
        strong_at = {f.index: f.finding.fault_type for f in found if f.finding.strong}
        for f in found:
            o = view.obs[f.index]
            eff = view.effect(view.obs[f.finding.blame_index] if f.finding.blame_index is not None else o)
            if eff.absorbed and eff.retry_ok_at in strong_at:  # the retry met the same damage
                eff = Effect(eff.retried_at, None, False, False, "repeat")
            if f.finding.strong and not eff.absorbed and eff.retried_at is not None:
                # Retried without success: if the retries met another failure that persisted to the
                # end, this one went away on retry (absorbed); the persisting one is what mattered.
                last = view.retry_chain(o)[-1]
                if strong_at.get(last.index, f.finding.fault_type) != f.finding.fault_type:
                    eff = Effect(eff.retried_at, last.index, True, False, "retry")
            if not f.finding.strong:
                candidates.append((f, f.finding.confidence, ""))
            elif eff.double_applied:
                candidates.append((f, max(f.finding.confidence, 0.8), eff.describe()))
            elif eff.absorbed:
                candidates.append((f, min(f.finding.confidence, ABSORBED_CONFIDENCE), eff.describe()))
            else:
                candidates.append((f, f.finding.confidence, eff.describe()))
        roots = [c for c in candidates if c[0].finding.strong and c[1] > ABSORBED_CONFIDENCE]
        if roots:
            first = min(roots, key=lambda c: c[0].index)
            # A weak sign of the same fault earlier, on the same tool (a rename seen first on a
            # result with no norm to compare with), is where it started: the strong one is the
            # same fault persisting. Another tool's sign is another tool's matter.
            def origin(sf: StepFinding) -> tuple[str, str, str | None]:
                return sf.finding.fault_type, sf.finding.target, view.obs[sf.index].tool_name

            kind = origin(first[0])
            same = [c for c in candidates if not c[0].finding.strong and c[0].index < first[0].index
                    and origin(c[0]) == kind]
            pick = min(same, key=lambda c: c[0].index) if same else first
            conf = first[1]
        else:  # weak or absorbed signs only: the most telling one, earliest on ties (below threshold)
            pick = min(candidates, key=lambda c: (-c[1], c[0].index), default=None)
            conf = pick[1] if pick is not None else 0.0
        if pick is None:
            slips = _slips(view)
            return none_found(episode, self.name, "no fault observed" + (
                f"; the model's own slip(s): {', '.join(slips[:3])}" if slips else ""))
        sf, _, note = pick
        o = view.obs[sf.index]
        f = sf.finding
        absorbed = [c for c in candidates if c is not pick and c[2].startswith("absorbed")]
        more = len([c for c in roots if c is not pick]) if roots else len(candidates) - 1
        evidence = f.evidence + (f"; then {note}" if note else "")
        if absorbed:
            evidence += f"; {len(absorbed)} absorbed fault(s) elsewhere"
        if more > 0:
            evidence += f"; {more} later anomalous step(s)"
        return Diagnosis(episode.trace_id, episode.task_id, self.name, f.fault_type, f.target, o.step,
                         o.span_id, round(conf, 4), evidence, sf.rule)
