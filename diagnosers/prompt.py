"""Compact text rendering of a blind episode for the LLM diagnoser, within a token budget.

One line per step with the observed signals only. When the episode does not fit the budget,
unremarkable steps in the middle are dropped first (with a note saying how many), because the
anomalous ones are what a diagnosis needs; the first and last steps are always kept.
"""

from __future__ import annotations

from diagnosers.observe import Observation
from diagnosers.taxonomy import FAULT_TYPES, NONE_FOUND, TARGETS
from diagnosers.view import EpisodeView

PROMPT_VERSION = "diagnose-v1"
CHARS_PER_TOKEN = 4

SYSTEM_PROMPT = f"""You diagnose why an LLM agent episode failed. You get one line per step
(LLM calls and tool executions, in order) with signals of what the agent observed; message content
itself is not shown. Name the single root-cause fault: the earliest step whose response or tool
result was damaged, and its fault type.
Fault types for LLM responses: error, timeout, empty, truncate, corrupt, schema, content_filter,
stale, wrong_value, latency, http_error, rate_limit, connection, stream_cut.
Fault types for tool results: timeout, rate_limit, empty, malformed_json, truncated, key_rename,
wrong_value. Use {NONE_FOUND} if nothing looks damaged.
Answer with one JSON object only, no prose:
{{"fault_type": one of {list(FAULT_TYPES) + [NONE_FOUND]},
 "target": one of {list(TARGETS)} or null,
 "step": the step number or null, "confidence": a number from 0 to 1,
 "evidence": one short sentence citing the signals}}"""


def _yn(v: object) -> str:
    return "?" if v is None else ("y" if v else "n")


def step_line(o: Observation, median_ms: float) -> str:
    head = f"s{o.step} {o.kind} {o.name} {o.duration_ms / 1000:.2f}s"
    if o.kind == "llm":
        parts = [head]
        if o.http_status and o.http_status != 200:
            parts.append(f"http={o.http_status}")
        if o.error_type:
            parts.append(f"error={o.error_type}")
        parts.append(f"finish={','.join(o.finish_reasons) or '-'}")
        parts.append(f"text={o.content_length if o.content_length is not None else '?'}ch")
        if o.markers:
            parts.append(f"error_forms={','.join(o.markers)}")
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
        if o.response_id:
            parts.append(f"resp_id={o.response_id[-8:]}")
        if o.stream:
            parts.append(f"stream done={_yn(o.stream_done)}")
            if o.max_chunk_gap_ms:
                parts.append(f"max_gap={o.max_chunk_gap_ms / 1000:.1f}s")
        if median_ms > 0 and o.duration_ms > 3 * median_ms:
            parts.append(f"slow(x{o.duration_ms / median_ms:.0f} median)")
        return " ".join(parts)
    parts = [head]
    if o.result_is_error:
        parts.append(f"ERROR({o.result_failure or 'app'})")
    if o.result_empty:
        parts.append("EMPTY")
    length = o.result_length if o.result_length is not None else "?"
    parts.append(f"json={_yn(o.result_is_json)} len={length}")
    if o.result_keys is not None:
        parts.append(f"keys=[{','.join(o.result_keys[:12])}]")
    if o.result_numeric_strings:
        parts.append(f"numeric_strings={o.result_numeric_strings}")
    if o.tool_args_digest:
        parts.append(f"args#{o.tool_args_digest[:6]}")
    if o.result_digest:
        parts.append(f"result#{o.result_digest[:6]}")
    return " ".join(parts)


def _remarkable(line: str) -> bool:
    return any(k in line for k in ("ERROR", "EMPTY", "json=n", "error", "finish=length", "finish=content",
                                   "finish=-", "mojibake", "odd_chars", "schema=n", "slow", "done=n",
                                   "http=", "problem", "numeric_strings"))


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
    header = f"episode task={ep.task_id or '-'} steps={len(view)} outcome=failed"
    lines = [step_line(o, view.llm_median_ms) for o in view.obs]
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
