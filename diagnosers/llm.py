"""LLM-based diagnosis through any OpenAI-compatible endpoint.

The model gets the compact rendering of a blind episode (``prompt.render_episode``: the same
structured observations the rules read, with the taxonomy's rules in the system prompt) and must
answer with one JSON object; its confidence is abstained on with the same threshold as the rules.
An answer that does not validate is sent back once with the validation error, and a second
failure becomes ``none_found`` with the reason as evidence. A successful episode costs no call
(it has no root cause). Answers are cached in the trace file, keyed by a digest of the rendered
trace, the prompt version and the model, so re-running costs nothing; calls run with bounded
concurrency and the tokens used are counted for a cost line.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import openai

from agentchaos_otel.records import EpisodeTrace
from agentchaos_otel.signals import digest
from agentchaos_otel.store.database.connect import StoreError, open_store, write_rows
from diagnosers.base import Diagnosis, none_found
from diagnosers.norms import ToolNorms
from diagnosers.prompt import PROMPT_VERSION, SYSTEM_PROMPT, render_episode
from diagnosers.taxonomy import FAULT_TYPES, NONE_FOUND, TARGETS
from diagnosers.view import EpisodeView

CACHE_TABLE = "diagnosis_llm_cache"
CACHE_DDL = ("key VARCHAR, prompt_version VARCHAR, model VARCHAR, answer VARCHAR, input_tokens BIGINT, "
             "output_tokens BIGINT, created_ns BIGINT")


class AnswerError(ValueError):
    """An answer that does not match the required JSON object."""


def parse_answer(text: str | None, step_numbers: set[int]) -> dict[str, Any]:
    """Validate the model's answer against the answer schema; raises AnswerError with the reason."""
    if not text or not text.strip():
        raise AnswerError("empty answer")
    body = text.strip()
    if body.startswith("```"):
        body = body.strip("`")
        body = body[body.find("{"):] if "{" in body else body
    start, end = body.find("{"), body.rfind("}")
    if start < 0 or end < start:
        raise AnswerError("no JSON object in the answer")
    try:
        obj = json.loads(body[start:end + 1])
    except ValueError as exc:
        raise AnswerError(f"invalid JSON: {exc}") from None
    if not isinstance(obj, dict):
        raise AnswerError("the answer must be a JSON object")
    ftype = obj.get("fault_type")
    if ftype not in FAULT_TYPES and ftype != NONE_FOUND:
        raise AnswerError(f"fault_type {ftype!r} is not one of the allowed types")
    target = obj.get("target")
    if target is not None and target not in TARGETS:
        raise AnswerError(f"target {target!r} is not one of {list(TARGETS)} or null")
    step = obj.get("step")
    if isinstance(step, str) and step.strip().lstrip("s").isdigit():
        step = int(step.strip().lstrip("s"))
    if step is not None and (not isinstance(step, int) or isinstance(step, bool) or step not in step_numbers):
        raise AnswerError(f"step {obj.get('step')!r} is not a step of this episode")
    conf = obj.get("confidence", 0.5)
    if not isinstance(conf, int | float) or isinstance(conf, bool) or not 0 <= conf <= 1:
        raise AnswerError("confidence must be a number between 0 and 1")
    evidence = obj.get("evidence", "")
    if not isinstance(evidence, str):
        raise AnswerError("evidence must be a string")
    if ftype != NONE_FOUND and step is None:
        raise AnswerError("a fault needs the step it happened at")
    return {"fault_type": ftype, "target": target, "step": step, "confidence": float(conf),
            "evidence": " ".join(evidence.split())[:300]}


@dataclass
class Usage:
    calls: int = 0
    cached: int = 0
    retries: int = 0
    failures: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cache_error: str = ""

    def line(self, model: str) -> str:
        note = f" (answers not cached: {self.cache_error})" if self.cache_error else ""
        return (f"LLM diagnoser ({model}): {self.calls} call(s), {self.retries} retry(ies), {self.cached} "
                f"cached, {self.failures} failed; tokens used: {self.input_tokens} input + "
                f"{self.output_tokens} output = {self.input_tokens + self.output_tokens}{note}")


class LLMDiagnoser:
    name = "llm"

    def __init__(self, base_url: str, model: str, *, api_key: str | None = None,
                 cache_path: str | None = None, concurrency: int = 4, token_budget: int = 3000,
                 timeout_s: float = 60.0, max_output_tokens: int = 300, client: openai.OpenAI | None = None,
                 norms: ToolNorms | None = None):
        self.model = model
        self.norms = norms  # the store's per-tool answer norms, shown on the steps that break them
        self.cache_path = cache_path
        self.concurrency = max(1, int(concurrency))
        self.token_budget = token_budget
        self.max_output_tokens = max_output_tokens
        self.client = client or openai.OpenAI(base_url=base_url, api_key=api_key or "unused",
                                              timeout=timeout_s, max_retries=1)
        self.usage = Usage()
        self._lock = threading.Lock()

    # -- cache ---------------------------------------------------------------------------------
    def _cache_key(self, rendered: str) -> str:
        return digest(f"{PROMPT_VERSION}\n{self.model}\n{rendered}")

    def _read_cache(self, keys: list[str]) -> dict[str, dict[str, Any]]:
        if not self.cache_path or not keys or not os.path.exists(self.cache_path):
            return {}
        try:
            with open_store(self.cache_path) as conn:
                tables = {r[0] for r in conn.execute("SELECT table_name FROM information_schema.tables")
                          .fetchall()}
                if CACHE_TABLE not in tables:
                    return {}
                rows = conn.execute(f"SELECT key, answer FROM {CACHE_TABLE} WHERE list_contains(?, key) "
                                    "AND prompt_version = ? AND model = ?",
                                    [keys, PROMPT_VERSION, self.model]).fetchall()
        except StoreError:
            return {}
        return {k: json.loads(a) for k, a in rows}

    def _write_cache(self, rows: list[dict[str, Any]]) -> None:
        """Best effort: a busy or read-only trace file costs a re-run, never the diagnoses."""
        if not self.cache_path or not rows:
            return
        try:
            write_rows(self.cache_path, CACHE_TABLE, rows, CACHE_DDL, key=("key", "prompt_version", "model"))
        except StoreError as exc:
            self.usage.cache_error = str(exc)

    # -- calls ---------------------------------------------------------------------------------
    def _chat(self, messages: list[dict[str, str]]) -> str:
        resp = self.client.chat.completions.create(
            model=self.model, messages=messages,  # type: ignore[arg-type]
            temperature=0, max_tokens=self.max_output_tokens)
        with self._lock:
            self.usage.calls += 1
            if resp.usage is not None:
                self.usage.input_tokens += resp.usage.prompt_tokens or 0
                self.usage.output_tokens += resp.usage.completion_tokens or 0
        return (resp.choices[0].message.content or "") if resp.choices else ""

    def _ask(self, rendered: str, steps: set[int]) -> tuple[dict[str, Any] | None, str]:
        messages = [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": rendered}]
        text = self._chat(messages)
        try:
            return parse_answer(text, steps), ""
        except AnswerError as first:
            with self._lock:
                self.usage.retries += 1
            messages += [{"role": "assistant", "content": text},
                         {"role": "user", "content": f"That answer was invalid ({first}). Reply with "
                                                     "the JSON object only, exactly in the required form."}]
            text = self._chat(messages)
            try:
                return parse_answer(text, steps), ""
            except AnswerError as second:
                return None, str(second)

    def _to_diagnosis(self, ep: EpisodeTrace, answer: dict[str, Any]) -> Diagnosis:
        if answer["fault_type"] == NONE_FOUND:
            return none_found(ep, self.name, answer["evidence"] or "model found no damaged step")
        span = next((s.span_id for s in ep.steps if s.step == answer["step"]), None)
        return Diagnosis(ep.trace_id, ep.task_id, self.name, answer["fault_type"], answer["target"],
                         answer["step"], span, answer["confidence"], answer["evidence"] or "-",
                         PROMPT_VERSION)

    def diagnose(self, episode: EpisodeTrace) -> Diagnosis:
        return self.diagnose_many([episode])[0]

    def diagnose_many(self, episodes: Sequence[EpisodeTrace]) -> list[Diagnosis]:
        rendered = [render_episode(EpisodeView(ep, self.norms), self.token_budget) for ep in episodes]
        keys = [self._cache_key(r) for r in rendered]
        cached = self._read_cache(sorted(set(keys)))
        results: list[Diagnosis | None] = [None] * len(episodes)
        todo = []
        for i, (ep, key) in enumerate(zip(episodes, keys, strict=True)):
            if ep.success is True:  # the taxonomy's rule, as for the rules: no call needed
                results[i] = none_found(ep, self.name, "the episode succeeded: no root cause")
            elif key in cached:
                self.usage.cached += 1
                results[i] = self._to_diagnosis(ep, cached[key])
            else:
                todo.append(i)
        new_rows: list[dict[str, Any]] = []
        before = (self.usage.input_tokens, self.usage.output_tokens)

        def work(i: int) -> None:
            ep = episodes[i]
            try:
                answer, why = self._ask(rendered[i], {s.step for s in ep.steps})
            except openai.OpenAIError as exc:
                reason = " ".join(str(exc).split())[:160]
                answer, why = None, f"LLM call failed: {type(exc).__name__}: {reason}"
            if answer is None:
                with self._lock:
                    self.usage.failures += 1
                results[i] = none_found(ep, self.name, f"no valid answer ({why})")
                return
            results[i] = self._to_diagnosis(ep, answer)
            with self._lock:
                new_rows.append({"key": keys[i], "prompt_version": PROMPT_VERSION, "model": self.model,
                                 "answer": json.dumps(answer), "created_ns": time.time_ns()})

        if todo:
            with ThreadPoolExecutor(max_workers=min(self.concurrency, len(todo))) as pool:
                list(pool.map(work, todo))
        if new_rows:
            spent_in = self.usage.input_tokens - before[0]
            spent_out = self.usage.output_tokens - before[1]
            for r in new_rows:  # tokens are attributed evenly; the cost line has the exact total
                r["input_tokens"] = spent_in // len(new_rows)
                r["output_tokens"] = spent_out // len(new_rows)
            self._write_cache(new_rows)
        return [r for r in results if r is not None]
