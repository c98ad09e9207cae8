"""Compact text rendering of a blind episode for the LLM diagnoser, within a token budget.

One line per step with the observed signals only, in the same structured terms the rules use:
what a failure means with the published code it rests on, whether a retry absorbed it, the
model's own slips, and the taxonomy's rules in the system prompt. When the episode does not fit the budget,
unremarkable steps in the middle are dropped first (with a note saying how many), because the
anomalous ones are what a diagnosis needs; the first and last steps are always kept.
"""

from __future__ import annotations

from diagnosers.observe import Observation
from diagnosers.rules import args_emptied, args_slip
from diagnosers.taxonomy import FAULT_TYPES, NONE_FOUND, TARGETS
from diagnosers.view import EpisodeView

PROMPT_VERSION = "diagnose-v5"
CHARS_PER_TOKEN = 4

SYSTEM_PROMPT = f"""You diagnose why an LLM agent episode failed. You get one line per step
(LLM calls and tool executions, in order) with what the agent observed, reduced to signals; message
content itself is not shown. What a failure means has already been read from the codes the
systems publish (HTTP status, gRPC code, errno, exception class, vendor reason, finish reason):
it is given as meaning[evidence].
Name the single root cause: a fault type and the step where it happened, following these rules:
- A failure that reports a meaning takes that label: rate_limit, timeout, connection, auth,
  not_found, invalid_request, content_filter; a tool failure that says no more is error. The model
  API's HTTP status: 429 rate_limit, 401/403 auth, 404 not_found, 400/422 invalid_request, 408/504
  timeout, other 5xx http_error. A status written in a delivered reply's text takes the same
  meaning, except that a 5xx there is error. A JSON error or policy object delivered as the reply
  content is schema. Tool-call arguments emptied to {{}} (args_emptied) are error on tool_calls.
- A fault marked absorbed (a retry of the same call succeeded) is not the root cause, unless the
  line says the call was not idempotent and was repeated (it took effect twice).
- The model's own slips (marked slip: a parameter wrong or left out of a call it otherwise made,
  arguments that are not JSON, an unknown tool, prose where JSON was asked) are not faults;
  neither is a tool refusing such a call.
- A tool answer marked unlike_store(type: ...) breaks what that tool returns in nearly every clean
  result across the store (usual keys renamed, a third of them gone, or a count above the items it
  holds): that type, on that step.
- Weak signs alone (keys missing compared with other results, a value nowhere in the conversation,
  a slow call the agent went on from) do not name a root cause.
- When two faults changed the trajectory, the first is the root cause. A successful episode has
  none. If nothing qualifies, answer {NONE_FOUND}.
LLM-side types: error, timeout, empty, truncate, corrupt, schema, content_filter, stale, wrong_value,
latency, http_error, rate_limit, connection, stream_cut, auth, not_found, invalid_request.
Tool-side types: timeout, rate_limit, empty, malformed_json, truncated, key_rename, wrong_value,
connection, error, auth, not_found, invalid_request.
Give a confidence from the evidence: below 0.5 the answer counts as {NONE_FOUND}.
Answer with one JSON object only, no prose:
{{"fault_type": one of {list(FAULT_TYPES) + [NONE_FOUND]},
 "target": one of {list(TARGETS)} or null,
 "step": the step number or null, "confidence": a number from 0 to 1,
 "evidence": one short sentence citing the signals}}"""


def _yn(v: object) -> str:
    return "?" if v is None else ("y" if v else "n")


def _meaning(label: str, meaning: str, evidence: str) -> str:
    return f"{label}={meaning}" + (f"[{evidence}]" if evidence else "")


def _effect(o: Observation, view: EpisodeView) -> str:
    """What followed a step that looks failed: absorbed by a retry, repeated, or what the agent did."""
    if not view.failed(o):
        return ""
    eff = view.effect(o)
    if eff.double_applied:
        return f"retried at s{view.obs[eff.retried_at].step} (not idempotent: took effect twice)" \
            if eff.retried_at is not None else ""
    if eff.absorbed and eff.retry_ok_at is not None:
        return f"absorbed (retry at s{view.obs[eff.retry_ok_at].step} succeeded)"
    return f"then={eff.followed_by}"


def step_line(o: Observation, median_ms: float, view: EpisodeView | None = None) -> str:
    head = f"s{o.step} {o.kind} {o.name} {o.duration_ms / 1000:.2f}s"
    parts = [head]
    if o.kind == "llm":
        if o.http_status and o.http_status != 200:
            parts.append(f"http={o.http_status}")
        if o.error_type:
            parts.append(f"error={o.error_type}")
            if o.exception_failure:
                parts.append(_meaning("raised", o.exception_failure, o.exception_evidence))
        if o.failure:
            parts.append(_meaning("failure", o.failure, o.failure_evidence))
        parts.append(f"finish={','.join(o.finish_reasons) or '-'}")
        parts.append(f"text={o.content_length if o.content_length is not None else '?'}ch")
        if o.content_failure:
            parts.append(_meaning("reply_error", o.content_failure, o.content_failure_evidence))
        if o.content_is_json:
            parts.append("text_is_json")
        if o.mojibake:
            parts.append(f"mojibake={o.mojibake:.3f}")
        if o.unicode_anomaly:
            parts.append(f"odd_chars={o.unicode_anomaly:.3f}")
        if o.content_length == 0 and not o.tool_call_count:
            parts.append("EMPTY_REPLY")
        if o.tool_call_count:
            parts.append(f"tool_calls={o.tool_call_count}({','.join(o.tool_names)}) "
                         f"args_json={_yn(o.args_valid)} args_schema={_yn(o.args_schema_valid)}")
            if o.args_problem:
                parts.append(f"args_problem={o.args_problem}")
            if o.args_anomaly:
                parts.append(f"args_odd_chars={o.args_anomaly:.3f}")
            if o.args_cut_values:
                parts.append(f"args_cut_short={o.args_cut_values}")
            if o.args_ungrounded:
                parts.append(f"args_unmentioned={o.args_ungrounded}/{o.args_strings}")
            if args_emptied(o):
                parts.append("args_emptied")
            elif args_slip(o):
                parts.append("slip")
        if o.response_id:
            parts.append(f"resp_id={o.response_id[-8:]}")
        if o.stream:
            parts.append(f"stream done={_yn(o.stream_done)}")
        if median_ms > 0 and o.duration_ms > 3 * median_ms:
            parts.append(f"slow(x{o.duration_ms / median_ms:.0f} median)")
    else:
        if o.result_is_error or o.status_error:
            meaning = o.result_failure or o.exception_failure or "error"
            evidence = o.result_failure_evidence or o.exception_evidence
            parts.append(f"ERROR({meaning})" + (f"[{evidence}]" if evidence else ""))
        elif o.result_failure == "partial":
            parts.append("PARTIAL" + (f"[{o.result_failure_evidence}]" if o.result_failure_evidence else ""))
        if o.result_empty:
            parts.append("EMPTY")
        length = o.result_length if o.result_length is not None else "?"
        parts.append(f"json={_yn(o.result_is_json)} len={length}")
        if o.result_keys is not None:
            parts.append(f"keys=[{','.join(o.result_keys[:12])}]")
        if o.result_numeric_strings:
            parts.append(f"numeric_strings={o.result_numeric_strings}")
        if view is not None and view.norms is not None and (d := view.norms.deviation(o)) is not None:
            parts.append(f"unlike_store({d.brief()})")
        if o.tool_args_digest:
            parts.append(f"args#{o.tool_args_digest[:6]}")
        if o.result_digest:
            parts.append(f"result#{o.result_digest[:6]}")
    if view is not None:
        effect = _effect(o, view)
        if effect:
            parts.append(effect)
    return " ".join(parts)


def _remarkable(line: str) -> bool:
    return any(k in line for k in ("ERROR", "EMPTY", "PARTIAL", "json=n", "error", "failure=", "finish=length",
                                   "finish=content", "finish=-", "mojibake", "odd_chars", "schema=n", "slow",
                                   "done=n", "http=", "problem", "numeric_strings", "cut_short", "absorbed",
                                   "unlike_store", "raised="))


def _assemble(header: str, lines: list[str], keep: list[bool], width: int) -> str:
    out, dropped = [header], 0
    for i, line in enumerate(lines):
        if keep[i]:
            if dropped:
                out.append(f"... {dropped} step(s) omitted ...")
                dropped = 0
            out.append(line[:width])
        else:
            dropped += 1
    if dropped:
        out.append(f"... {dropped} step(s) omitted ...")
    return "\n".join(out)


def render_episode(view: EpisodeView, token_budget: int = 3000) -> str:
    ep = view.episode
    outcome = {True: "succeeded", False: "failed"}.get(ep.success, "unknown")  # type: ignore[arg-type]
    header = f"episode task={ep.task_id or '-'} steps={len(view)} outcome={outcome}"
    if view.episode_failure:
        header += f" agent_error={view.episode_failure}"
    lines = [step_line(o, view.llm_median_ms, view) for o in view.obs]
    budget = token_budget * CHARS_PER_TOKEN
    width = max(80, budget // 4)
    keep = [True] * len(lines)
    text = _assemble(header, lines, keep, width)
    if len(text) <= budget:
        return text
    # Unremarkable middle steps go first (latest first: root causes tend to be early), then
    # remarkable late ones; the first and last steps always stay.
    order = [i for i in range(len(lines) - 2, 0, -1) if not _remarkable(lines[i])]
    order += [i for i in range(len(lines) - 2, 0, -1) if _remarkable(lines[i])]
    note = len("... 9999 step(s) omitted ...") + 1
    total = len(text)
    for i in order:
        if total <= budget:
            break
        left = i > 0 and not keep[i - 1]
        right = i + 1 < len(keep) and not keep[i + 1]
        keep[i] = False
        total -= len(lines[i][:width]) + 1
        total += note if not (left or right) else (-note if left and right else 0)
    return _assemble(header, lines, keep, width)
