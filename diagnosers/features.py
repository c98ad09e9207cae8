"""Per-step features of what the agent observed, for the learned diagnoser.

Each step becomes one numeric vector: its own signals plus comparisons with the rest of the
episode (latency against the median call, key sets against other results of the same tool,
replayed responses), because a fault is often only visible as a departure from the episode's norm.
The names are saved with a trained model so a model never silently meets a different layout.
"""

from __future__ import annotations

import math

from diagnosers.key_style import abbreviated_words, odd_style_keys
from diagnosers.observe import Observation
from diagnosers.view import EpisodeView

FEATURE_VERSION = 6
MARKERS = ("html_page", "http_status", "provider_json", "rate_limit", "timeout", "unavailable", "filtered",
           "bracket_tag", "error_word")
ARG_PROBLEMS = ("no_declared_key", "unknown_key", "missing_required", "wrong_type", "enum", "empty_value",
                "invalid_json", "unknown_tool", "cut")
FAILURES = ("rate_limit", "timeout", "connection", "auth", "not_found", "invalid_request", "partial", "error")

FEATURE_NAMES: tuple[str, ...] = (
    "is_llm", "is_tool", "rel_pos", "index", "dur_ratio", "dur_excess_s",
    "status_error", "http_4xx", "http_429", "http_5xx", "exc_timeout", "exc_connection", "exc_other",
    "fr_length", "fr_content_filter", "fr_tool_calls", "fr_stop", "fr_missing",
    "content_len_log", "content_empty", "content_unknown",
    *(f"marker_{m}" for m in MARKERS),
    "unicode_anomaly", "mojibake", "content_is_json",
    "tool_call_count", "args_invalid", "args_schema_invalid", "args_empty", "args_anomaly",
    *(f"args_{p}" for p in ARG_PROBLEMS),
    "response_id_repeat", "digest_repeat_prev", "stream", "stream_not_done", "chunk_gap_s",
    "next_tool_error",
    "result_empty", "result_json", "result_not_json", "result_json_like", "result_error",
    "result_rate_limit", "result_timeout", "result_len_log",
    "ref_present", "keys_subset", "keys_renamed", "keys_superset", "numeric_strings_up",
    "key_count_ratio", "item_count_ratio", "shape_differs", "same_call_diff", "numeric_strings",
    "odd_style_keys", "odd_style_share", "envelope_missing", "envelope_renamed", "numeric_strings_new",
    "echo_mismatch", "prior_errors",
    "args_ungrounded", "args_ungrounded_share", "episode_ungrounded_steps", "ungrounded_after_failure",
    "result_null", "abbrev_keys", "tool_first_call", "content_blank",
    "replacement_chars", "json_embedded", "asked_json_format", "asks_json", "body_error", "no_choices",
    "message_null", "error_code_filter", "at_max_tokens", "http_2xx_then_exc",
    *(f"result_failure_{x}" for x in FAILURES), "exc_connection_tool",
)


def _b(x: object) -> float:
    return 1.0 if x else 0.0


def _transient(o: Observation) -> bool:
    m = set(o.result_markers)
    return "rate_limit" in m or "timeout" in m or o.exception_failure in ("timeout", "rate_limit")


def step_features(view: EpisodeView, o: Observation, prior_errors: int) -> list[float]:
    n = max(1, len(view))
    med = view.llm_median_ms
    et = o.error_type or ""
    fr = set(o.finish_reasons)
    m = set(o.markers)
    llm = o.kind == "llm"
    f: list[float] = [
        _b(llm), _b(not llm), o.index / n, float(min(o.index, 50)),
        (o.duration_ms / med) if llm and med > 0 else 1.0,
        max(0.0, (o.duration_ms - med) / 1000) if llm else 0.0,
        _b(o.status_error), _b(o.http_status and 400 <= o.http_status < 500 and o.http_status != 429),
        _b(o.http_status == 429), _b(o.http_status and o.http_status >= 500),
        _b(o.exception_failure == "timeout"), _b(o.exception_failure == "connection"),
        _b(et and o.exception_failure not in ("timeout", "connection")),
        _b("length" in fr), _b("content_filter" in fr), _b("tool_calls" in fr), _b("stop" in fr),
        _b(llm and not fr),
        math.log1p(o.content_length or 0), _b(o.content_length == 0), _b(o.content_length is None),
        *(_b(x in m) for x in MARKERS),
        o.unicode_anomaly, o.mojibake, _b(o.content_is_json),
        float(o.tool_call_count or 0), _b(o.args_valid is False), _b(o.args_schema_valid is False),
        float(o.args_empty), o.args_anomaly,
        *(_b(o.args_problem == p) for p in ARG_PROBLEMS),
    ]
    rid_repeat = llm and view.response_seen_before(o)
    prev = view.previous_llm(o) if llm else None
    digest_repeat = bool(prev and o.response_digest and prev.response_digest == o.response_digest)
    # A rejection (not a transient timeout / rate limit) of the call this reply made.
    next_err = llm and any((c.result_is_error or c.status_error) and not _transient(c)
                           for c in view.next_tool_results(o))
    f += [_b(rid_repeat), _b(digest_repeat), _b(o.stream), _b(o.stream_done is False),
          (o.max_chunk_gap_ms or 0.0) / 1000, _b(next_err)]
    rm = set(o.result_markers)
    f += [_b(o.result_empty), _b(o.result_is_json is True), _b(o.result_is_json is False),
          _b(o.result_json_like), _b(o.result_is_error), _b("rate_limit" in rm), _b("timeout" in rm),
          math.log1p(o.result_length or 0)]
    ref = view.tool_reference(o) if not llm else None
    subset = renamed = superset = num_up = shape_diff = same_diff = 0.0
    kc_ratio = ic_ratio = 1.0
    if ref is not None and ref.keys is not None and o.result_keys is not None and o.result_is_json:
        mine, theirs = set(o.result_keys), set(ref.keys)
        subset = _b(mine < theirs)
        renamed = _b((theirs - mine) and (mine - theirs))
        superset = _b(mine > theirs)
        num_up = _b((o.result_numeric_strings or 0) > (ref.numeric_strings or 0))
        kc_ratio = (o.result_key_count or 0) / ref.key_count if ref.key_count else 1.0
        ic_ratio = (o.result_item_count or 0) / ref.item_count if ref.item_count else 1.0
        shape_diff = _b(o.result_shape != ref.shape)
    if not llm:
        same = view.same_call_earlier(o)
        same_diff = _b(same is not None and same.result_digest != o.result_digest)
    odd = env_missing = env_renamed = num_new = 0.0
    odd_share = 0.0
    if not llm and o.result_is_json and o.result_keys:
        norm, _ = view.style_norm(o)
        odd = float(len(odd_style_keys(o.result_keys, norm))) if sum(norm.values()) >= 3 else 0.0
        odd_share = odd / len(o.result_keys)
        missing = view.shared_keys(o) - set(o.result_keys)
        env_missing = float(len(missing))
        norms = ["".join(c for c in k.lower() if c.isalnum()) for k in o.result_keys]
        env_renamed = float(sum(1 for m in missing
                                if any("".join(c for c in m.lower() if c.isalnum()) in n for n in norms)))
        num_new = _b(o.result_numeric_strings and view.numeric_strings_before(o) == 0)
    f += [_b(ref is not None), subset, renamed, superset, num_up, kc_ratio, ic_ratio, shape_diff, same_diff,
          float(o.result_numeric_strings or 0), odd, odd_share, env_missing, env_renamed, num_new,
          float(len(o.echo_mismatch)), float(prior_errors)]
    ung = float(o.args_ungrounded or 0) if llm else 0.0
    after_failure = llm and ung > 0 and any(c.kind == "tool" and (c.result_is_error or c.status_error)
                                            for c in view.obs[:o.index])
    f += [ung, ung / o.args_strings if o.args_strings else 0.0, float(view.ungrounded_steps()),
          _b(after_failure), _b(o.result_null),
          float(sum(1 for k in o.result_keys or () if abbreviated_words(k))) if not llm else 0.0,
          _b(ref is None or ref.from_later) if not llm else 0.0, _b(o.content_blank)]
    code = (o.error_code or "").lower()
    f += [float(min(o.replacement_chars, 20)), _b(o.json_embedded),
          _b(o.response_format in ("json_object", "json_schema")), _b(o.asks_json), _b(o.body_error),
          _b(o.choice_count is not None and o.choice_count <= 0), _b(o.message_null),
          _b("content_filter" in code or "content_policy" in code),
          _b(bool(o.max_tokens) and o.output_tokens is not None and o.output_tokens >= (o.max_tokens or 0)),
          _b(llm and o.http_status is not None and o.http_status < 400 and bool(et)),
          *(_b(o.result_failure == x) for x in FAILURES),
          _b(not llm and o.exception_failure == "connection")]
    return f


def _looks_wrong(o: Observation) -> bool:
    return bool(o.status_error or o.markers or o.result_is_error or o.result_empty
                or o.result_is_json is False or (o.kind == "llm" and o.content_length == 0
                                                  and not o.tool_call_count))


def episode_features(view: EpisodeView) -> list[list[float]]:
    rows, prior = [], 0
    for o in view.obs:
        rows.append(step_features(view, o, prior))
        prior += _looks_wrong(o)
    return rows
