"""Rule-based diagnosis: ordered, documented checks over what the agent observed.

Each rule looks at one step (and, where it needs a norm, at other steps of the same episode) and
either says nothing or names a (type, target) with evidence. Rules are general, not keyed to the
marker strings our injectors write: a finish_reason of ``length``, a provider error body, an
nginx error page, a tool that suddenly returns fewer keys than it did before, are what real
outages look like too.

Root cause = the earliest step with a *strong* finding; *weak* findings (signals that also occur
in healthy runs, such as a slow call or a tool rejecting arguments) are used only when nothing
strong was seen, the most confident one first. Within a step the first strong finding in ``RULES``
order wins, else the first weak one.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

from agentchaos_otel.records import EpisodeTrace
from diagnosers.base import Diagnosis, none_found
from diagnosers.key_style import key_style, odd_style_keys
from diagnosers.observe import CONNECTION_ERRORS, TIMEOUT_ERRORS, Observation
from diagnosers.view import EpisodeView

# Thresholds, named so the report can print them.
MOJIBAKE_MIN = 0.0  # any UTF-8-read-as-Latin-1 sequence: healthy text never contains them
CONTENT_ANOMALY_MIN = 0.05  # share of symbol/control characters in reply text
ARGS_ANOMALY_MIN = 0.02  # argument JSON normally has no symbol characters at all
LATENCY_RATIO = 3.0  # times the episode's median LLM call
LATENCY_EXCESS_MS = 1000.0
LATENCY_STRONG_RATIO = 10.0
LATENCY_STRONG_EXCESS_MS = 1500.0
STREAM_GAP_MS = 2000.0
UNGROUNDED_MAX_STEPS = 1  # more steps with invented argument values than this is the episode's habit

# Schema problems where the parameter names are right but values were damaged (cut short).
_DAMAGED_VALUE = frozenset({"enum", "empty_value"})
_ERROR_FORMS = frozenset({"html_page", "http_status", "unavailable", "bracket_tag", "error_word",
                          "provider_json"})


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


def text_error_type(markers: tuple[str, ...] | list[str], is_json: bool) -> str | None:
    """The fault type an error-like reply text points to, most specific form first."""
    m = set(markers)
    if not m:
        return None
    if "rate_limit" in m:
        return "rate_limit"
    if "html_page" in m:
        return "error"  # a proxy's error page, whatever its status says (502, 504 Gateway Time-out)
    if "timeout" in m:
        return "timeout"
    if is_json and "provider_json" in m and "unavailable" in m:
        return "error"  # the provider's own server-failure body (InternalServerError, overloaded)
    if is_json and "provider_json" in m:
        return "schema"  # an error object delivered where prose was expected
    if "filtered" in m:
        return "content_filter"
    if m & _ERROR_FORMS:
        return "error"
    return None


# --- LLM step rules ---------------------------------------------------------------------------

def _transport(o: Observation, v: EpisodeView) -> Finding | None:
    """The call failed at the HTTP layer: an error status or an exception reached the client.
    A socket reset or a body shorter than announced is ``connection`` whatever status line came
    first; HTTP 429 is ``rate_limit``; a provider's content-filter refusal (Azure's HTTP 400 with
    code ``content_filter``) is ``content_filter``; any other error status is ``http_error``."""
    failed_status = o.http_status is not None and o.http_status >= 400
    if not failed_status and not (o.status_error and o.error_type):
        return None
    et = o.error_type or ""
    if not failed_status and et in TIMEOUT_ERRORS:
        return Finding("timeout", "http", 0.9, f"{_where(o)}: {et} raised, no response")
    if not failed_status and et in CONNECTION_ERRORS:
        return Finding("connection", "http", 0.9, f"{_where(o)}: {et} raised, connection failed"
                       + (f" after HTTP {o.http_status}" if o.http_status else ""))
    if o.http_status == 429 or (failed_status and "rate_limit" in o.markers):
        return Finding("rate_limit", "http", 0.95, f"{_where(o)}: HTTP {o.http_status or 429} rate limited")
    code = (o.error_code or "").lower()
    if failed_status and ("content_filter" in code or "content_policy" in code or "filtered" in o.markers):
        return Finding("content_filter", "http", 0.85, f"{_where(o)}: HTTP {o.http_status} refusal by the "
                       f"provider's content filter ({o.error_code or 'filtered'})")
    if failed_status:
        return Finding("http_error", "http", 0.9, f"{_where(o)}: HTTP {o.http_status} error response"
                       + (f" ({o.error_code})" if o.error_code else ""))
    if o.content_length in (None, 0) and not o.tool_call_count:
        return Finding("error", "http", 0.5, f"{_where(o)}: call failed with {et}", strong=False)
    return None


def _no_answer(o: Observation, v: EpisodeView) -> Finding | None:
    """A 2xx body without a usable answer: an error object where the completion belongs (some
    gateways answer 200 with ``{"error": ...}``), no ``choices`` or an empty list, a null message."""
    if o.body_error:
        return Finding("error", "content", 0.85, f"{_where(o)}: HTTP {o.http_status or 200} body is an error "
                       f"object ({o.error_code or 'no code'}), no completion")
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


def _content_filter(o: Observation, v: EpisodeView) -> Finding | None:
    """finish_reason content_filter, or a refusal in place of content: the reply was withheld."""
    if "content_filter" in o.finish_reasons:
        return Finding("content_filter", "content", 0.95, f"{_where(o)}: finish_reason=content_filter")
    if o.refusal:
        return Finding("content_filter", "content", 0.85, f"{_where(o)}: the model refused (message.refusal)")
    return None


def _error_text(o: Observation, v: EpisodeView) -> Finding | None:
    """Reply text that reads like an error: status line, provider error JSON, HTML error page,
    rate-limit / timed-out / service-unavailable wording."""
    ftype = text_error_type(o.markers, o.content_is_json)
    if ftype is None:
        return None
    forms = ", ".join(o.markers)
    return Finding(ftype, _text_target(o), 0.85,
                   f"{_where(o)}: reply text looks like an error ({forms}), {o.content_length} chars")


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
    """finish_reason length, or output tokens reaching the request's max_tokens whatever the
    finish_reason says (some servers report ``stop``): the reply was cut at a token limit."""
    target = "tool_calls" if o.tool_call_count else _text_target(o)
    if "length" in o.finish_reasons or "max_tokens" in o.finish_reasons:
        return Finding("truncate", target, 0.9,
                       f"{_where(o)}: finish_reason=length, reply cut at {o.content_length} chars")
    if o.max_tokens and o.output_tokens is not None and o.output_tokens >= o.max_tokens:
        return Finding("truncate", target, 0.8, f"{_where(o)}: {o.output_tokens} output tokens = max_tokens "
                       f"{o.max_tokens} (finish_reason {', '.join(o.finish_reasons) or 'none'})")
    return None


def _format(o: Observation, v: EpisodeView) -> Finding | None:
    """A reply not in the format the request asked for: ``response_format`` JSON (or a prompt
    asking for JSON) answered with JSON wrapped in a markdown fence or in prose, or with no JSON."""
    if o.tool_call_count or not o.content_length or o.content_is_json or o.content_blank:
        return None
    if o.response_format in ("json_object", "json_schema"):
        how = "JSON inside a fence or prose" if o.json_embedded else "text that is not JSON"
        return Finding("schema", _text_target(o), 0.8, f"{_where(o)}: response_format {o.response_format} "
                       f"answered with {how}")
    if o.asks_json and o.json_embedded:
        return Finding("schema", _text_target(o), 0.55, f"{_where(o)}: the prompt asks for JSON; the reply "
                       "wraps it in a fence or prose")
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


def _args(o: Observation, v: EpisodeView) -> Finding | None:
    """Tool-call arguments that are invalid JSON, garbled, empty, or not matching the declared schema."""
    if not o.tool_call_count:
        return None
    if o.args_valid is False and o.args_problem == "cut":
        return Finding("truncate", "tool_calls", 0.85, f"{_where(o)}: tool arguments end part-way (open "
                       "string or brackets)")
    if o.args_valid is False:
        return Finding("schema", "tool_calls", 0.75, f"{_where(o)}: tool arguments are not valid JSON")
    if o.args_anomaly >= ARGS_ANOMALY_MIN:
        return Finding("corrupt", "tool_calls", 0.85,
                       f"{_where(o)}: {o.args_anomaly:.0%} of tool-argument characters are symbols")
    if o.args_schema_valid is False and o.args_empty:
        return Finding("error", "tool_calls", 0.8,
                       f"{_where(o)}: tool called with empty arguments, required parameters missing")
    if o.args_schema_valid is False and o.args_problem in _DAMAGED_VALUE:
        return Finding("truncate", "tool_calls", 0.6, f"{_where(o)}: known parameters but damaged values "
                       f"({o.args_problem.replace('_', ' ')})")
    if o.args_schema_valid is False:
        detail = f" ({o.args_problem.replace('_', ' ')})" if o.args_problem else ""
        return Finding("schema", "tool_calls", 0.8,
                       f"{_where(o)}: tool arguments do not match the declared parameters{detail}")
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
    """A call much slower than the episode's median call, or a long stall between stream chunks."""
    if o.max_chunk_gap_ms is not None and o.max_chunk_gap_ms >= STREAM_GAP_MS:
        return Finding("latency", "stream", 0.75, f"{_where(o)}: {o.max_chunk_gap_ms / 1000:.1f} s stall "
                       "between stream chunks")
    med = v.llm_median_ms
    excess = o.duration_ms - med
    if med <= 0 or excess < LATENCY_EXCESS_MS or o.duration_ms < LATENCY_RATIO * med:
        return None
    strong = o.duration_ms >= LATENCY_STRONG_RATIO * med and excess >= LATENCY_STRONG_EXCESS_MS
    return Finding("latency", "http", 0.75 if strong else 0.4,
                   f"{_where(o)}: {o.duration_ms / 1000:.2f} s vs median {med / 1000:.2f} s", strong=strong)


def _empty_args_weak(o: Observation, v: EpisodeView) -> Finding | None:
    """Empty arguments where the schema is unknown: suspicious but also legitimate for some tools."""
    if o.tool_call_count and o.args_empty and o.args_schema_valid is None:
        return Finding("error", "tool_calls", 0.35, f"{_where(o)}: tool called with empty arguments",
                       strong=False)
    return None


# --- Tool step rules --------------------------------------------------------------------------

def _tool_transient(o: Observation, v: EpisodeView) -> Finding | None:
    """The tool answered with a rate-limit, timeout or connection failure: by its words, codes
    and statuses in any common shape (error objects, problem+json, GraphQL errors, ok/success
    flags, plain text), or by the exception it raised."""
    m = set(o.result_markers)
    et = o.error_type or ""
    if not (o.result_is_error or o.status_error):
        return None
    meaning = o.result_failure or o.exception_failure
    if "rate_limit" in m or meaning == "rate_limit":
        return Finding("rate_limit", "tool_result", 0.9, f"{_where(o)}: tool returned a rate-limit error")
    if "timeout" in m or meaning == "timeout" or et in TIMEOUT_ERRORS:
        return Finding("timeout", "tool_result", 0.9, f"{_where(o)}: tool returned a timeout error"
                       + (f" ({et})" if et else ""))
    if meaning == "connection" or (o.status_error and et in CONNECTION_ERRORS):
        return Finding("connection", "tool_result", 0.85, f"{_where(o)}: tool call lost its connection"
                       + (f" ({et})" if et else ""))
    if meaning == "server":
        return Finding("error", "tool_result", 0.7, f"{_where(o)}: tool reported a server-side failure")
    return None


def _tool_empty(o: Observation, v: EpisodeView) -> Finding | None:
    """An empty result ({} or ''), strong when the same tool returned content elsewhere."""
    if not o.result_empty:
        return None
    ref = v.tool_reference(o)
    if o.result_null:  # no return value is normal for an action tool; odd only if it returns data elsewhere
        strong = ref is not None and ref.nonempty_results > 0
    else:
        strong = ref is None or ref.nonempty_results > 0
    return Finding("empty", "tool_result", 0.8 if strong else 0.3,
                   f"{_where(o)}: tool returned an empty result", strong=strong)


def _tool_malformed(o: Observation, v: EpisodeView) -> Finding | None:
    """A result that starts like JSON but does not parse, or text where the tool returns JSON."""
    if o.result_is_json is not False or o.result_empty:
        return None
    ref = v.tool_reference(o)
    if o.result_json_like or (ref is not None and ref.json_results > 0 and ref.text_results == 0):
        return Finding("malformed_json", "tool_result", 0.85,
                       f"{_where(o)}: tool result is not valid JSON ({o.result_length} chars)")
    return None


def _tool_keys(o: Observation, v: EpisodeView) -> Finding | None:
    """Key set or value types changed against the other results of the same tool."""
    if not o.result_is_json or o.result_is_error or o.result_keys is None:
        return None
    ref = v.tool_reference(o)
    if ref is None or ref.keys is None:
        if o.result_numeric_strings:
            return Finding("key_rename", "tool_result", 0.3,
                           f"{_where(o)}: numbers delivered as strings", strong=False)
        return None
    mine, theirs = set(o.result_keys), set(ref.keys)
    if mine and mine < theirs:
        lost = ", ".join(sorted(theirs - mine)[:4])
        return Finding("truncated", "tool_result", 0.8, f"{_where(o)}: result lost keys ({lost}) "
                       f"vs other results of `{o.tool_name}`")
    if mine != theirs and (theirs - mine) and (mine - theirs):
        mine_num, ref_num = o.result_numeric_strings or 0, ref.numeric_strings or 0
        mine_odd = odd_style_keys(o.result_keys, Counter(key_style(k) for k in ref.keys))
        ref_odd = odd_style_keys(ref.keys, Counter(key_style(k) for k in o.result_keys))
        looks_renamed = bool(mine_odd) or mine_num > ref_num
        if ref.from_later and not looks_renamed:
            return None  # the later calls are the odd ones; each is judged against this one
        new = ", ".join(sorted(mine - theirs)[:4])
        if not looks_renamed and (ref_odd or ref_num > mine_num):  # the norm looks like the renamed one
            return Finding("key_rename", "tool_result", 0.3, f"{_where(o)}: keys differ ({new}) from an "
                           f"earlier result of `{o.tool_name}`", strong=False)
        return Finding("key_rename", "tool_result", 0.8, f"{_where(o)}: unfamiliar keys ({new}) "
                       f"vs other results of `{o.tool_name}`")
    if (o.result_numeric_strings or 0) > (ref.numeric_strings or 0) and o.result_shape != ref.shape:
        return Finding("key_rename", "tool_result", 0.7, f"{_where(o)}: numbers turned into strings "
                       f"vs other results of `{o.tool_name}`")
    if (ref.key_count and o.result_key_count is not None and o.result_key_count < ref.key_count
            and o.result_shape != ref.shape):
        return Finding("truncated", "tool_result", 0.5,
                       f"{_where(o)}: nested keys lost ({o.result_key_count} vs {ref.key_count})",
                       strong=False)
    if mine and mine > theirs:
        return Finding("key_rename", "tool_result", 0.3, f"{_where(o)}: extra keys vs other results",
                       strong=False)
    return None


def _tool_key_style(o: Observation, v: EpisodeView) -> Finding | None:
    """Keys in a naming convention (UPPER_CASE, camelCase) that no other result of the episode
    uses: an API keeps one convention, so a result that breaks it was rewritten on the way."""
    if not o.result_is_json or o.result_is_error or not o.result_keys:
        return None
    norm, _ = v.style_norm(o)
    seen = sum(norm.values())
    if seen < 1:
        return None
    odd = odd_style_keys(o.result_keys, norm)
    if seen < 3:  # a thin norm: only conventions that are rare in any API (SHOUTING, vowel-free) count
        odd = [k for k in odd if key_style(k) in ("upper", "abbrev")]
    if not odd:
        return None
    rare = [k for k in odd if key_style(k) != "camel"]  # camelCase is many APIs' own convention
    # Numbers turned into strings alongside an odd key: the other half of a rename.
    numbers = bool(o.result_numeric_strings) and v.numeric_strings_before(o) == 0
    strong = ((len(odd) >= 2 and len(odd) >= 0.3 * len(o.result_keys))
              or (seen >= 3 and len(rare) >= 0.5 * len(o.result_keys)) or numbers)
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


def _tool_rejected(o: Observation, v: EpisodeView) -> Finding | None:
    """The tool rejected the call (an application error, not a transient one): the arguments the
    model produced at the preceding LLM step were probably damaged. Weak: healthy models also
    make bad calls."""
    if not (o.result_is_error or o.status_error):
        return None
    prev = v.previous_llm(o)
    if prev is None:
        return None
    return Finding("truncate", "tool_calls", 0.3,
                   f"{_where(o)}: tool rejected the arguments produced at step {prev.step}",
                   strong=False, blame_index=prev.index)


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
    Rule("answer_format", "llm", _format.__doc__ or "", _format),
    Rule("tool_arguments", "llm", _args.__doc__ or "", _args),
    Rule("ungrounded_arguments", "llm", _ungrounded_args.__doc__ or "", _ungrounded_args),
    Rule("replayed_response", "llm", _replayed.__doc__ or "", _replayed),
    Rule("latency_outlier", "llm", _latency.__doc__ or "", _latency),
    Rule("empty_arguments", "llm", _empty_args_weak.__doc__ or "", _empty_args_weak),
    Rule("tool_failure", "tool", _tool_transient.__doc__ or "", _tool_transient),
    Rule("tool_empty_result", "tool", _tool_empty.__doc__ or "", _tool_empty),
    Rule("tool_malformed_json", "tool", _tool_malformed.__doc__ or "", _tool_malformed),
    Rule("tool_key_style", "tool", _tool_key_style.__doc__ or "", _tool_key_style),
    Rule("tool_key_change", "tool", _tool_keys.__doc__ or "", _tool_keys),
    Rule("tool_envelope_keys", "tool", _tool_envelope.__doc__ or "", _tool_envelope),
    Rule("tool_echo_mismatch", "tool", _tool_echo.__doc__ or "", _tool_echo),
    Rule("tool_inconsistent_values", "tool", _tool_inconsistent.__doc__ or "", _tool_inconsistent),
    Rule("tool_rejected_call", "tool", _tool_rejected.__doc__ or "", _tool_rejected),
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


class RuleDiagnoser:
    """Earliest strong anomaly wins; weak anomalies only when nothing strong was observed."""

    name = "rule"

    def __init__(self, rules: tuple[Rule, ...] = RULES):
        self.rules = rules

    def diagnose(self, episode: EpisodeTrace) -> Diagnosis:
        view = EpisodeView(episode)
        found = step_findings(view, self.rules)
        strong = [f for f in found if f.finding.strong]
        if strong:
            first = min(strong, key=lambda f: f.index)
            # A weak sign of the same fault earlier (a rename seen first on a result with no norm
            # to compare with) is where it started: the strong one is the same fault persisting.
            kind = (first.finding.fault_type, first.finding.target)
            same = [f for f in found if not f.finding.strong and f.index < first.index
                    and (f.finding.fault_type, f.finding.target) == kind]
            pick: StepFinding | None = min(same, key=lambda f: f.index) if same else first
        else:  # weak signals: the most telling one, earliest on ties
            pick = min(found, key=lambda f: (-f.finding.confidence, f.index), default=None)
        if pick is None:
            return none_found(episode, self.name)
        o = view.obs[pick.index]
        f = pick.finding
        more = len(strong) - (1 if f.strong else 0) if strong else len(found) - 1
        evidence = f.evidence + (f"; {more} later anomalous step(s)" if more > 0 else "")
        return Diagnosis(episode.trace_id, episode.task_id, self.name, f.fault_type, f.target, o.step,
                         o.span_id, f.confidence, evidence, pick.rule)
